"""Precomputed kernels at the edges (issue 30, items 3, 4 and 15): symmetry of the
landmark block, indefinite kernels treated alike on the named and precomputed paths,
and k(X, landmarks) (n × m) accepted where only the landmark columns are read."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.kernel_approximation import Nystroem as SkNystroem
from sklearn.metrics.pairwise import pairwise_kernels

import lorak


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    return rng.standard_normal((60, 5)), rng.standard_normal((9, 5))


def _rel(A, B):
    return np.linalg.norm(A - B) / np.linalg.norm(B)


# ---------------------------------------------------------------- item 3: symmetry
def test_non_symmetric_precomputed_kernel_is_refused(data):
    X, _ = data
    K = pairwise_kernels(X, metric="rbf", gamma=0.3)
    bad = K + np.triu(np.full_like(K, 0.1), 1)  # K·sym(K)⁻¹·Kᵀ at m = n, silently
    for est in (
        lorak.Nystroem(kernel="precomputed", n_components=60),
        lorak.Nystroem(kernel="precomputed", n_components=10, random_state=0),
        lorak.Nystroem(kernel="precomputed", landmarks=np.arange(0, 60, 3)),
        lorak.IncompleteCholesky(kernel="precomputed", n_components=10),
    ):
        with pytest.raises(ValueError, match=r"symmetric.*max\|W − Wᵀ\|.*tolerance"):
            est.fit(bad)
    with pytest.raises(ValueError, match="symmetric"):
        lorak.CSI(kernel="precomputed", n_components=10, random_state=0).fit(
            bad, (X[:, 0] > 0).astype(int)
        )
    # round-off far below the stated tolerance √eps·max|W| is accepted, as is float32
    noisy = K + 1e-13 * np.random.default_rng(1).standard_normal(K.shape)
    lorak.Nystroem(kernel="precomputed", n_components=60).fit(noisy)
    lorak.IncompleteCholesky(kernel="precomputed", n_components=10).fit(noisy)
    K32 = (K + 1e-6 * np.random.default_rng(2).standard_normal(K.shape)).astype(np.float32)
    lorak.Nystroem(kernel="precomputed", n_components=20, random_state=0).fit(K32)


# ---------------------------------------------------------------- item 4: indefinite W
@pytest.mark.parametrize("m", [20, 60])
def test_precomputed_and_named_sigmoid_agree_and_match_sklearn(data, m):
    X, Xn = data
    K = pairwise_kernels(X, metric="sigmoid")
    Kn = pairwise_kernels(Xn, X, metric="sigmoid")
    sk = SkNystroem(kernel="sigmoid", n_components=m, random_state=0).fit(X)
    idx = sk.component_indices_
    pre = lorak.Nystroem(kernel="precomputed", landmarks=idx).fit(K)
    named = lorak.Nystroem(kernel="sigmoid", landmarks=idx).fit(X)
    # the same function on the same W: the same factor, not only the same G Gᵀ
    np.testing.assert_allclose(pre.normalization_, named.normalization_, atol=1e-10)
    G, Gs = pre.transform(K), sk.transform(X)
    assert _rel(G @ G.T, Gs @ Gs.T) < 1e-10
    assert _rel(named.transform(X) @ G.T, Gs @ Gs.T) < 1e-10
    Gn = pre.transform(Kn)
    assert _rel(Gn @ G.T, sk.transform(Xn) @ Gs.T) < 1e-10


def test_precomputed_psd_kernel_keeps_its_fast_path(data):
    X, _ = data
    K = pairwise_kernels(X, metric="rbf", gamma=0.3)
    est = lorak.Nystroem(kernel="precomputed", n_components=20, random_state=0).fit(K)
    ref = lorak.Nystroem(gamma=0.3, landmarks=est.component_indices_).fit(X)
    assert est.normalization_is_upper_ and ref.normalization_is_upper_
    G, Gr = est.transform(K), ref.transform(X)
    assert _rel(G @ G.T, Gr @ Gr.T) < 1e-10


# ---------------------------------------------------------------- item 15: n × m forms
def test_precomputed_transform_takes_the_landmark_columns(data):
    X, Xn = data
    gamma = 0.4
    K = pairwise_kernels(X, metric="rbf", gamma=gamma)
    est = lorak.Nystroem(kernel="precomputed", n_components=15, random_state=0).fit(K)
    idx = est.component_indices_
    Kn_all = pairwise_kernels(Xn, X, metric="rbf", gamma=gamma)  # n' × n, today's form
    Kn_m = pairwise_kernels(Xn, X[idx], metric="rbf", gamma=gamma)  # n' × m
    np.testing.assert_allclose(est.transform(Kn_m), est.transform(Kn_all), rtol=1e-12)
    ref = lorak.Nystroem(gamma=gamma, landmarks=idx).fit(X)
    Gr = ref.transform(Xn)
    assert _rel(est.transform(Kn_m) @ est.transform(Kn_m).T, Gr @ Gr.T) < 1e-10
    # the same for the pivots of an incomplete Cholesky factor
    icd = lorak.IncompleteCholesky(kernel="precomputed", n_components=12).fit(K)
    Kp = pairwise_kernels(Xn, X[icd.component_indices_], metric="rbf", gamma=gamma)
    np.testing.assert_allclose(icd.transform(Kp), icd.transform(Kn_all), rtol=1e-12)
    y = (X[:, 0] > 0).astype(int)
    csi = lorak.CSI(kernel="precomputed", n_components=12, random_state=0).fit(K, y)
    Kc = pairwise_kernels(Xn, X[csi.component_indices_], metric="rbf", gamma=gamma)
    np.testing.assert_allclose(csi.transform(Kc), csi.transform(Kn_all), rtol=1e-12)
    # any other width: the error names both shapes
    with pytest.raises(ValueError, match=r"\(n_new, 60\).*\(n_new, 15\).*got shape \(9, 7\)"):
        est.transform(Kn_all[:, :7])


def test_precomputed_fit_on_k_of_x_and_landmarks(data):
    X, Xn = data
    gamma = 0.4
    idx = np.array([3, 7, 11, 20, 31, 42, 50, 58])
    K = pairwise_kernels(X, metric="rbf", gamma=gamma)
    C = K[:, idx]  # k(X, landmarks): n × m, all that a fit with given landmarks reads
    square = lorak.Nystroem(kernel="precomputed", landmarks=idx).fit(K)
    cols = lorak.Nystroem(kernel="precomputed", landmarks=idx).fit(C)
    np.testing.assert_allclose(cols.normalization_, square.normalization_, rtol=1e-12)
    np.testing.assert_allclose(cols.transform(C), square.transform(K), rtol=1e-12)
    np.testing.assert_allclose(cols.fit_transform(C), square.transform(K), rtol=1e-12)
    # both transform forms work after either fit
    Kn = pairwise_kernels(Xn, X, metric="rbf", gamma=gamma)
    np.testing.assert_allclose(cols.transform(Kn), cols.transform(Kn[:, idx]), rtol=1e-12)
    assert cols.n_features_in_ == 60
    # an n × m matrix needs the landmarks as m row indices
    with pytest.raises(ValueError, match=r"k\(X, landmarks\) of shape \(n, m\).*got shape"):
        lorak.Nystroem(kernel="precomputed", n_components=8).fit(C)
    with pytest.raises(ValueError, match="with 7 landmark indices"):
        lorak.Nystroem(kernel="precomputed", landmarks=idx[:7]).fit(C)
    # a non-symmetric landmark block is refused in this form too
    bad = C.copy()
    bad[7, 0] += 0.2  # W[1, 0]: row 7 is the second landmark
    with pytest.raises(ValueError, match="symmetric"):
        lorak.Nystroem(kernel="precomputed", landmarks=idx).fit(bad)

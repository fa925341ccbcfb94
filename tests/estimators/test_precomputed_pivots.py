"""``kernel="precomputed"`` for the pivoted factors (IncompleteCholesky, CSI; issue 21,
item 2): the n × n kernel or its columns on demand give the factor the feature-space
kernel gives."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import lorak
from lorak.kernels import KernelColumns
from lorak.models import LSSVC


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 4))
    y = (X[:, 0] + X[:, 1] ** 2 > 1).astype(int)
    Xnew = rng.standard_normal((40, 4))
    return X, y, Xnew


def _kernel(X):
    # a polynomial kernel: distinct diagonal entries, so no tie for the first pivot
    return lorak.IncompleteCholesky(kernel="poly", gamma=0.5, coef0=1.0, degree=2).fit(X).kernel_


def _columns(k, X, calls):
    def columns(idx):
        calls.extend(np.asarray(idx).tolist())
        return k(X, X[idx])

    return KernelColumns(columns, diag=k.diag(X))


def _close(a, b, scale):
    np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10 * scale)


def test_icd_precomputed_equals_the_feature_space_factor(data):
    X, _, Xnew = data
    k = _kernel(X)
    ref = lorak.IncompleteCholesky(kernel="poly", gamma=0.5, coef0=1.0, degree=2, n_components=12)
    ref.fit(X)
    K, Knew = k(X), k(Xnew, X)
    pre = lorak.IncompleteCholesky(kernel="precomputed", n_components=12).fit(K)
    np.testing.assert_array_equal(pre.pivots_, ref.pivots_)
    s = np.abs(ref.G_).max()
    _close(pre.G_, ref.G_, s)
    _close(pre.transform(Knew), ref.transform(Xnew), s)
    _close(pre.transform(K), pre.G_, s)  # the training rows reproduce G_
    assert pre.n_features_in_ == X.shape[0]
    assert pre.__sklearn_tags__().input_tags.pairwise

    calls = []
    lazy = lorak.IncompleteCholesky(kernel="precomputed", n_components=12)
    lazy.fit(_columns(k, X, calls))
    np.testing.assert_array_equal(lazy.pivots_, pre.pivots_)
    _close(lazy.G_, pre.G_, s)
    assert sorted(calls) == sorted(lazy.pivots_.tolist())  # only the pivots' columns
    assert lazy.components_ is None
    _close(lazy.transform(Knew), pre.transform(Knew), s)


def test_transform_reads_only_the_pivot_columns(data):
    X, _, Xnew = data
    k = _kernel(X)
    pre = lorak.IncompleteCholesky(kernel="precomputed", n_components=8).fit(k(X))
    Knew = k(Xnew, X)
    other = np.zeros_like(Knew)  # every column but the pivots' zeroed: same rows
    other[:, pre.pivots_] = Knew[:, pre.pivots_]
    np.testing.assert_array_equal(pre.transform(other), pre.transform(Knew))


def test_csi_precomputed_equals_the_feature_space_factor(data):
    X, y, Xnew = data
    k = _kernel(X)
    kw = dict(n_components=10, kappa=0.9, lookahead=4, random_state=0)
    ref = lorak.CSI(kernel="poly", gamma=0.5, coef0=1.0, degree=2, **kw).fit(X, y)
    K, Knew = k(X), k(Xnew, X)
    pre = lorak.CSI(kernel="precomputed", **kw).fit(K, y)
    np.testing.assert_array_equal(pre.pivots_, ref.pivots_)
    s = np.abs(ref.G_).max()
    _close(pre.G_, ref.G_, s)
    _close(pre.transform(Knew), ref.transform(Xnew), s)
    calls = []
    lazy = lorak.CSI(kernel="precomputed", **kw).fit(_columns(k, X, calls), y)
    np.testing.assert_array_equal(lazy.pivots_, ref.pivots_)
    _close(lazy.transform(Knew), ref.transform(Xnew), s)
    assert len(set(calls)) == lazy.n_kernel_columns_ < X.shape[0]


def test_a_downstream_model_on_a_precomputed_factor(data):
    X, y, Xnew = data
    k = _kernel(X)
    ref = LSSVC(
        lorak.IncompleteCholesky(kernel="poly", gamma=0.5, coef0=1.0, degree=2, n_components=15),
        C=10.0,
    ).fit(X, y)
    pre = LSSVC(lorak.IncompleteCholesky(kernel="precomputed", n_components=15), C=10.0)
    pre.fit(k(X), y)
    d = ref.decision_function(Xnew)
    np.testing.assert_allclose(
        pre.decision_function(k(Xnew, X)), d, rtol=1e-7, atol=1e-9 * np.abs(d).max()
    )


def test_graph_kernel_by_columns():
    # a diffusion-like kernel on a ring graph, (I + L)⁻¹, given only by its columns
    n = 60
    A = np.zeros((n, n))
    i = np.arange(n)
    A[i, (i + 1) % n] = A[(i + 1) % n, i] = 1.0
    K = np.linalg.inv(np.eye(n) + np.diag(A.sum(1)) - A)
    icd = lorak.IncompleteCholesky(kernel="precomputed", n_components=n, tol=1e-10)
    G = icd.fit_transform(KernelColumns(lambda idx: K[:, idx], diag=np.diag(K)))
    np.testing.assert_allclose(G @ G.T, K, atol=1e-8)


def test_precomputed_errors(data):
    X, y, _ = data
    K = X @ X.T
    for est in (lorak.IncompleteCholesky, lorak.CSI):
        with pytest.raises(ValueError, match="no kernel parameters"):
            est(kernel="precomputed", gamma=1.0).fit(K, y)
        with pytest.raises(ValueError, match="square"):
            est(kernel="precomputed").fit(K[:, :10], y)
        with pytest.raises(TypeError, match="sparse"):
            est(kernel="precomputed").fit(sp.csr_matrix(K), y)
    icd = lorak.IncompleteCholesky(kernel="precomputed", n_components=5).fit(K)
    with pytest.raises(ValueError, match="features"):
        icd.transform(K[:, :10])
    bad = KernelColumns(lambda idx: np.ones((3, len(idx))), diag=np.ones(5))
    with pytest.raises(ValueError, match="shape"):
        lorak.IncompleteCholesky(kernel="precomputed", n_components=2).fit(bad)
    with pytest.raises(TypeError, match="callable"):
        KernelColumns(np.eye(3), diag=np.ones(3))

"""scikit-learn's kernel names, real degrees, callables and precomputed kernels."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics.pairwise import PAIRWISE_KERNEL_FUNCTIONS, pairwise_kernels

import lorak
from lorak.kernels import KERNELS, Polynomial, make_kernel


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    return rng.random((40, 5)), rng.random((7, 5))


@pytest.mark.parametrize("name", sorted(PAIRWISE_KERNEL_FUNCTIONS))
def test_every_sklearn_kernel_name_is_known(name):
    assert name in KERNELS


@pytest.mark.parametrize("name", ["chi2", "additive_chi2", "sigmoid", "cosine"])
def test_pairwise_kernels_match_sklearn(name, data):
    X, Z = data
    k = make_kernel(name).resolve(X)
    np.testing.assert_allclose(k(X, Z), pairwise_kernels(X, Z, metric=name), rtol=1e-12)
    np.testing.assert_allclose(k.diag(X), np.diag(pairwise_kernels(X, metric=name)), atol=1e-12)
    assert k(X.astype(np.float32), Z.astype(np.float32)).dtype == np.float32


def test_pairwise_kernel_parameters(data):
    X, Z = data
    k = make_kernel("chi2", gamma=0.3)
    np.testing.assert_allclose(k(X, Z), pairwise_kernels(X, Z, metric="chi2", gamma=0.3))
    k = make_kernel("sigmoid", gamma=0.2, coef0=-0.5)
    np.testing.assert_allclose(
        k(X, Z), pairwise_kernels(X, Z, metric="sigmoid", gamma=0.2, coef0=-0.5)
    )
    with pytest.raises(ValueError, match="does not take"):
        make_kernel("cosine", gamma=1.0)


def test_real_degree(data):
    X, Z = data
    k = Polynomial(degree=3.1, gamma=0.5, coef0=0.1)
    np.testing.assert_allclose(
        k(X, Z), pairwise_kernels(X, Z, metric="poly", degree=3.1, gamma=0.5, coef0=0.1)
    )
    assert Polynomial(degree=2.0).degree == 2 and isinstance(Polynomial(degree=2.0).degree, int)
    for bad in (0, -1.5, float("inf")):
        with pytest.raises(ValueError, match="degree"):
            Polynomial(degree=bad)


def test_callable_gram_evaluates_each_pair_once(data):
    X, _ = data
    calls = []

    def f(x, z):
        calls.append(1)
        return float(np.minimum(x, z).sum())

    k = make_kernel(f)
    K = k(X[:9])
    assert len(calls) == 9 * 8 // 2 + 9
    np.testing.assert_allclose(K, pairwise_kernels(X[:9], metric=f))
    # a block function is still called once per block
    kb = make_kernel(lambda A, B: A @ B.T)
    np.testing.assert_allclose(kb(X), X @ X.T)


def test_nystroem_with_indefinite_kernel_keeps_m_columns(data):
    X, _ = data
    G = lorak.Nystroem(kernel="additive_chi2", n_components=6, random_state=0).fit_transform(X)
    assert G.shape == (40, 6)
    assert np.all(np.isfinite(G))


def test_precomputed_with_fewer_landmarks_than_rows(data):
    X, Xn = data
    gamma = 0.7
    K = pairwise_kernels(X, metric="rbf", gamma=gamma)
    Kn = pairwise_kernels(Xn, X, metric="rbf", gamma=gamma)
    pre = lorak.Nystroem(kernel="precomputed", n_components=12, random_state=3).fit(K)
    ref = lorak.Nystroem(gamma=gamma, n_components=12, landmarks=pre.component_indices_).fit(X)
    # same landmarks, same factor up to a rotation: compare G Gᵀ
    G, Gr = pre.transform(K), ref.transform(X)
    np.testing.assert_allclose(G @ G.T, Gr @ Gr.T, atol=1e-8)
    Gn, Gnr = pre.transform(Kn), ref.transform(Xn)
    np.testing.assert_allclose(Gn @ G.T, Gnr @ Gr.T, atol=1e-8)
    assert pre.__sklearn_tags__().input_tags.pairwise
    assert not lorak.Nystroem().__sklearn_tags__().input_tags.pairwise
    with pytest.raises(ValueError, match="square"):
        lorak.Nystroem(kernel="precomputed", n_components=3).fit(K[:, :20])
    with pytest.raises(ValueError, match="landmarks must be"):
        lorak.Nystroem(kernel="precomputed", n_components=3, landmarks="kmeans").fit(K)
    with pytest.raises(ValueError, match="Don't pass gamma"):
        lorak.Nystroem(kernel="precomputed", n_components=3, gamma=1.0).fit(K)


def test_partial_fit_with_fixed_landmarks_equals_one_shot(data):
    X, _ = data
    Z = X[[1, 5, 9, 17, 30]]
    one = lorak.Nystroem(n_components=5, landmarks=Z, gamma=0.5).fit(X)
    est = lorak.Nystroem(n_components=5, landmarks=Z, gamma=0.5)
    for batch in np.array_split(X, 4):
        est.partial_fit(batch)
    np.testing.assert_allclose(est.transform(X), one.transform(X), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="features"):
        est.partial_fit(X[:, :3])

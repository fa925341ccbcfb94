"""Kernel PCA on a factor: Prop. 4 against dense eigh, scikit-learn's KernelPCA and PCA."""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.decomposition import PCA, KernelPCA
from sklearn.metrics.pairwise import rbf_kernel

from conftest import readonly
from lorak import ExactEigen, IncompleteCholesky, Nystroem, config_context
from lorak.models import LowRankKernelPCA, factor_kpca, kpca_eigenvectors, kpca_scores


@pytest.fixture
def data(rng):
    X = rng.standard_normal((90, 4)) * np.array([2.0, 1.0, 0.5, 0.2])
    return X, rng.standard_normal((15, 4))


def assert_equal_up_to_sign(A, B, **tol):
    A, B = np.atleast_2d(A), np.atleast_2d(B)
    signs = np.sign(np.sum(A * B, axis=0))
    signs[signs == 0] = 1
    np.testing.assert_allclose(A * signs, B, **tol)
    return signs


def test_prop4_eigenvectors_of_the_centered_factor_kernel(rng):
    G = rng.standard_normal((120, 10)) @ np.diag(np.linspace(3, 0.2, 10)) + 1.0
    res = factor_kpca(readonly(G), 4)
    U = kpca_eigenvectors(G, res)
    np.testing.assert_allclose(U.T @ U, np.eye(4), atol=1e-10)
    H = np.eye(120) - 1 / 120
    lam, W = np.linalg.eigh(H @ G @ G.T @ H)
    np.testing.assert_allclose(res.eigenvalues, lam[::-1][:4], rtol=1e-10)
    assert_equal_up_to_sign(U, W[:, ::-1][:, :4], atol=1e-8)
    np.testing.assert_allclose(kpca_scores(G, res), U * np.sqrt(res.eigenvalues), atol=1e-10)
    np.testing.assert_allclose(res.total, np.trace(H @ G @ G.T @ H), rtol=1e-10)


def test_exact_factor_matches_sklearn_kernel_pca(data):
    X, Xn = data
    gamma = 0.3
    ours = LowRankKernelPCA(ExactEigen(gamma=gamma, n_components=90), n_components=5)
    Z = ours.fit_transform(X)
    sk = KernelPCA(n_components=5, kernel="rbf", gamma=gamma, eigen_solver="dense")
    Zs = sk.fit_transform(X)
    np.testing.assert_allclose(ours.eigenvalues_, sk.eigenvalues_, rtol=1e-8)
    signs = assert_equal_up_to_sign(Z, Zs, rtol=1e-6, atol=1e-8)
    # new points: the same directions, the same signs
    np.testing.assert_allclose(ours.transform(Xn) * signs, sk.transform(Xn), rtol=1e-6, atol=1e-7)
    # and the eigenvalues are those of the centered dense kernel
    K = rbf_kernel(X, gamma=gamma)
    H = np.eye(90) - 1 / 90
    np.testing.assert_allclose(
        ours.eigenvalues_, np.linalg.eigvalsh(H @ K @ H)[::-1][:5], rtol=1e-8
    )


def test_linear_factor_is_pca(data):
    X, Xn = data
    ours = LowRankKernelPCA(n_components=3).fit(X)
    pca = PCA(n_components=3, svd_solver="full").fit(X)
    np.testing.assert_allclose(ours.explained_variance_, pca.explained_variance_, rtol=1e-10)
    np.testing.assert_allclose(
        ours.explained_variance_ratio_, pca.explained_variance_ratio_, rtol=1e-10
    )
    assert_equal_up_to_sign(ours.transform(Xn), pca.transform(Xn), rtol=1e-9, atol=1e-10)
    full = LowRankKernelPCA().fit(X)
    assert full.n_components_ == 4
    np.testing.assert_allclose(full.explained_variance_ratio_.sum(), 1.0)


@pytest.mark.parametrize(
    "factor",
    [
        Nystroem(gamma=0.3, n_components=30, landmarks="kmeans", random_state=0),
        IncompleteCholesky(gamma=0.3, n_components=30),
    ],
)
def test_transform_consistent_with_training_embedding(data, factor):
    X, Xn = data
    est = LowRankKernelPCA(factor, n_components=4)
    Z = est.fit_transform(X)
    np.testing.assert_allclose(est.transform(X), Z, rtol=1e-7, atol=1e-9)
    assert np.all(np.diff(est.eigenvalues_) <= 0)
    np.testing.assert_allclose(Z.mean(axis=0), 0, atol=1e-10)
    np.testing.assert_allclose(Z.T @ Z, np.diag(est.eigenvalues_), atol=1e-8)
    assert est.transform(Xn).shape == (15, 4)
    assert 0 < est.explained_variance_ratio_.sum() <= 1 + 1e-12
    assert list(est.get_feature_names_out()) == [f"lowrankkernelpca{i}" for i in range(4)]


def test_rank_deficient_factor_and_n_components(rng):
    B = rng.standard_normal((50, 3))
    G = np.column_stack([B, B, np.zeros(50)])  # rank 3 of 7 columns
    est = LowRankKernelPCA().fit(G)
    assert est.n_components_ == 3
    Z = LowRankKernelPCA(n_components=7).fit_transform(G)
    assert Z.shape == (50, 7) and np.all(np.isfinite(Z))
    np.testing.assert_allclose(Z[:, 3:], 0, atol=1e-10)
    with pytest.raises(ValueError, match="n_components=8 exceeds the factor's 7 columns"):
        LowRankKernelPCA(n_components=8).fit(G)
    with pytest.raises(ValueError, match="n_components must be >= 1"):
        LowRankKernelPCA(n_components=0).fit(G)
    with pytest.raises(TypeError, match="n_components must be an integer"):
        LowRankKernelPCA(n_components=2.5).fit(G)


def test_sparse_rows_equal_dense(rng):
    G = sp.random(60, 9, density=0.4, random_state=1, format="csr")
    a = LowRankKernelPCA(n_components=3).fit(G)
    b = LowRankKernelPCA(n_components=3).fit(G.toarray())
    np.testing.assert_allclose(a.transform(G), b.transform(G.toarray()), atol=1e-10)


def test_never_allocates_n_by_n(rng):
    n = 20000
    X = rng.standard_normal((n, 5))
    est = LowRankKernelPCA(Nystroem(gamma=0.2, n_components=50, random_state=0), n_components=3)
    with config_context(memory_budget=2**22):
        tracemalloc.start()
        try:
            est.fit_transform(X)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 12 * n * 50 * 8  # an n × n float64 array would be 3.2 GB

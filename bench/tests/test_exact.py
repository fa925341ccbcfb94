"""The benchmark's exact references (lorak_bench._exact)."""

import numpy as np
from sklearn.metrics.pairwise import rbf_kernel

from lorak.models import lssvm_fit_factor
from lorak_bench._exact import exact_kernel_pca, exact_lp_mkl, lssvm_prefix_decisions
from lorak_bench.experiments import csi_rank


def _blobs():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 4))
    y = (X[:, 0] ** 2 + X[:, 1] > 1).astype(int) + (X[:, 2] > 1)
    return X, y


def test_prefix_lssvm_matches_separate_fits():
    X, y = _blobs()
    rng = np.random.default_rng(0)
    G = rng.standard_normal((300, 12))
    Gt = rng.standard_normal((40, 12))
    T = csi_rank._targets(y, np.unique(y))
    D = lssvm_prefix_decisions(G, T, Gt, C=3.0)
    for r in (1, 5, 12):
        sol = lssvm_fit_factor(G[:, :r], T, 3.0)
        np.testing.assert_allclose(D[:, r - 1], Gt[:, :r] @ sol.coef + sol.intercept, atol=1e-9)


def test_exact_kernel_pca_is_the_top_of_the_centred_spectrum():
    X, _ = _blobs()
    K = rbf_kernel(X, gamma=0.5)
    H = np.eye(300) - 1.0 / 300
    lam_ref, V_ref = np.linalg.eigh(H @ K @ H)
    U, lam = exact_kernel_pca(K.copy(), n_components=3)  # Lanczos: n > 8 (k + 1)
    np.testing.assert_allclose(lam, lam_ref[::-1][:4], rtol=1e-8)
    np.testing.assert_allclose(np.abs(U.T @ V_ref[:, ::-1][:, :3]), np.eye(3), atol=1e-6)


def test_exact_lp_mkl_weights_and_decisions():
    X, y = _blobs()
    yb = np.where(y > 0, 1.0, -1.0)
    dec, res = exact_lp_mkl(X[:200], yb[:200], X[200:], [0.5, 2.0, 8.0], C=10.0, p=2.0)
    assert dec.shape == (100,)
    assert np.all(res.d >= 0) and np.isclose(np.linalg.norm(res.d, 2), 1.0)
    assert np.mean(np.sign(dec) == yb[200:]) > 0.8

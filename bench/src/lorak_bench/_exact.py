"""Exact references the low-rank models are measured against (the benchmark's own:
the ``kpca``, ``csi-rank`` and ``lpmkl`` experiments use them, nothing in the library).

- :func:`exact_kernel_pca` — the top eigenvectors of the centred kernel matrix H K H
  (kernel PCA without any approximation; what a factor's kernel PCA is compared to);
- :func:`lssvm_prefix_decisions` — the LS-SVM on every prefix G[:, :r] of a greedy
  factor (incomplete Cholesky, CSI) at once: the error-against-rank curve of one
  decomposition from a single Cholesky factorization;
- :func:`exact_lp_mkl` — ℓp-norm MKL on the full Gaussian kernels (Algorithm 1 with an
  SVC on Σ d_k K_k), the reference the low-rank MKL approaches.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse.linalg

from lorak.learn import GaussianGrams, lp_mkl_full_kernel

__all__ = ["exact_kernel_pca", "exact_lp_mkl", "lssvm_prefix_decisions"]


def exact_kernel_pca(K, n_components: int = 3):
    """Top unit eigenvectors and eigenvalues of H K H (dense; ``K`` is overwritten).

    Lanczos (ARPACK, seeded start vector, tolerance 0 = machine precision) on the
    centred matrix: O(n²) per iteration instead of a dense O(n³) eigensolver (a dense
    solver for n ≤ 8 (n_components + 1)). Returns ``(U, eigenvalues)``: U is
    n × n_components, and there are ``n_components + 1`` eigenvalues, decreasing (the
    extra one gives the eigengap λ_k / λ_{k+1}).
    """
    n = K.shape[0]
    col = K.mean(axis=0)
    K -= col[None, :]
    K -= col[:, None]
    K += col.mean()
    k = min(n_components + 1, n)
    if n <= 8 * k:
        lam, V = scipy.linalg.eigh(K, subset_by_index=[n - k, n - 1], check_finite=False)
    else:
        v0 = np.random.default_rng(0).uniform(-1.0, 1.0, n)
        lam, V = scipy.sparse.linalg.eigsh(K, k=k, which="LA", v0=v0, tol=0.0)
    order = np.argsort(lam)[::-1]
    lam, V = lam[order], V[:, order]
    return np.ascontiguousarray(V[:, :n_components]), lam


def lssvm_prefix_decisions(G, T, G_test, C: float) -> np.ndarray:
    """LS-SVM decisions on ``G_test`` for every prefix rank r = 1..R of the factor G.

    The LS-SVM on the first r columns is ridge regression with a free intercept
    (:func:`lorak.models.lssvm_fit_factor`, eq. 3): w_r = (νI + Ḡ_rᵀḠ_r)⁻¹ Ḡ_rᵀ T̄,
    ν = 1/C, Ḡ and T̄ centred. With νI + ḠᵀḠ = L Lᵀ, the leading r × r block of L is
    the Cholesky factor of the rank-r system, so z = L⁻¹ḠᵀT̄ and H = (G_test − ḡ) L⁻ᵀ
    serve every rank: f_r = H[:, :r] z[:r] + t̄ — O((n + n_test) R²) for all R ranks.
    Returns the (n_test, R, k) decisions (k: columns of the targets T).
    """
    G = np.asarray(G, dtype=np.float64)
    Gt = np.asarray(G_test, dtype=np.float64)
    T = np.asarray(T, dtype=np.float64)
    g_mean = G.mean(axis=0)
    t_mean = T.mean(axis=0)
    Gc = G - g_mean
    S = Gc.T @ Gc
    S[np.diag_indices_from(S)] += 1.0 / C
    L = scipy.linalg.cholesky(S, lower=True, check_finite=False)
    z = scipy.linalg.solve_triangular(L, Gc.T @ (T - t_mean), lower=True, check_finite=False)
    H = scipy.linalg.solve_triangular(L, (Gt - g_mean).T, lower=True, check_finite=False).T
    D = np.cumsum(H[:, :, None] * z[None, :, :], axis=1)
    D += t_mean
    return D


def _sqdist32(A, B):
    D = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * A @ B.T
    return np.maximum(D, 0.0).astype(np.float32)


def exact_lp_mkl(X, y, X_test, bandwidths, C: float, p: float, *, max_iter: int = 100):
    """ℓp-norm MKL on the full Gaussian kernels exp(−‖x − y‖²/b_k): the reference.

    Algorithm 1 of Rakotomamonjy & Chanda with scikit-learn's SVC on the n × n
    Σ_k d_k K_k (``lorak.learn`` ``lp_mkl_full_kernel``; squared distances held in
    float32), then the decision values on ``X_test`` from the support vectors only.
    ``y`` holds ±1 labels. O(n²) memory: small n only (the low-rank MKL exists for the
    rest). Returns ``(decision_values, result)`` (result: weights ``d``, ``n_iter``,
    ``inner_iter``, ``converged``).
    """
    X = np.asarray(X, dtype=np.float64)
    X_test = np.asarray(X_test, dtype=np.float64)
    res, svc = lp_mkl_full_kernel(
        GaussianGrams(_sqdist32(X, X), bandwidths), y, C, p, max_iter=max_iter
    )
    grams = GaussianGrams(_sqdist32(X_test, X[svc.support_]), bandwidths)
    dec = grams.weighted(res.d) @ svc.dual_coef_[0] + svc.intercept_[0]
    return dec, res

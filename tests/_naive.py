"""Brute-force references: dense kernels and decompositions for small n."""

import numpy as np


def gaussian_dense(X, Z, b):
    d = ((X[:, None, :] - Z[None, :, :]) ** 2).sum(-1)
    return np.exp(-d / b)


def laplacian_dense(X, Z, sigma, norm="l2"):
    diff = X[:, None, :] - Z[None, :, :]
    d = np.abs(diff).sum(-1) if norm == "l1" else np.sqrt((diff**2).sum(-1))
    return np.exp(-d / sigma)


def inverse_distance_dense(X, Z, sigma, eps):
    d = np.sqrt(((X[:, None, :] - Z[None, :, :]) ** 2).sum(-1))
    return 1.0 / (eps + d / sigma)


def mean_pairwise_sq_dist(X):
    d = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    return d.mean()


def nystrom_dense(K, idx):
    """E W^+ E^T from a dense K and landmark row indices."""
    E = K[:, idx]
    W = K[np.ix_(idx, idx)]
    return E @ np.linalg.pinv(W, rcond=1e-10, hermitian=True) @ E.T


def icd_dense(K, rank):
    """Textbook pivoted Cholesky on a dense K (reference for the streaming version)."""
    n = K.shape[0]
    R = K.astype(float).copy()
    G = np.zeros((n, rank))
    piv = []
    for k in range(rank):
        i = int(np.argmax(np.diag(R)))
        if R[i, i] <= 1e-14:
            return G[:, :k], piv
        G[:, k] = R[:, i] / np.sqrt(R[i, i])
        R -= np.outer(G[:, k], G[:, k])
        piv.append(i)
    return G, piv


def kernel_ridge_with_bias_dense(K, y, C):
    """Dual of ½‖f‖² + (C/2)Σ(yᵢ − f(xᵢ) − b)² with an unregularized bias: (α, b).

    [K + I/C, 1; 1ᵀ, 0] [α; b] = [y; 0], and f = K α.
    """
    n = K.shape[0]
    A = np.block([[K + np.eye(n) / C, np.ones((n, 1))], [np.ones((1, n)), np.zeros((1, 1))]])
    sol = np.linalg.solve(A, np.r_[y, 0.0])
    return sol[:n], float(sol[n])


def gen_nystrom_unconstrained_dense(El, W, K, lam, beta=1.0):
    """The stationary point of λ‖S − βW⁺‖² + ‖E_l S E_lᵀ − K‖² by one dense solve.

    ∂/∂S = 0: λS + A S A = λβW⁺ + E_lᵀ K E_l with A = E_lᵀE_l, solved as the m² × m²
    system (λI + A ⊗ A) vec S = vec(RHS). Equals the constrained optimum (S ⪰ 0) when
    it is PSD.
    """
    m = El.shape[1]
    A = El.T @ El
    rhs = lam * beta * np.linalg.pinv(W, hermitian=True) + El.T @ K @ El
    S = np.linalg.solve(lam * np.eye(m * m) + np.kron(A, A), rhs.ravel()).reshape(m, m)
    return 0.5 * (S + S.T)


def regression_target_dense(y):
    """K*ᵢⱼ = zᵢzⱼ with z = (y − mean y)/std y (population std), entry by entry."""
    y = np.asarray(y, dtype=float)
    z = (y - y.mean()) / y.std()
    return np.array([[zi * zj for zj in z] for zi in z])

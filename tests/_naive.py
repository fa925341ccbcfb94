"""Brute-force references for small n, shared by the test folders: dense kernels and
decompositions, textbook forms of the papers' algorithms, and QP solutions by cvxpy
(skipped where cvxpy is missing). Nothing here imports lorak's math.
"""

import itertools

import numpy as np
import pytest


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


def brute_force_cabmkl(Ks, y):
    """max over μ ≥ 0 of the centered alignment, by the QP of Cortes et al. solved by
    cvxpy on explicitly centered kernel matrices (no shared code with the library)."""
    l = y.size
    H = np.eye(l) - 1.0 / l
    Kc = [H @ K @ H for K in Ks]
    Y = (y[:, None] == np.unique(y)[None, :]).astype(float)
    Ystar = H @ Y @ Y.T @ H
    M = np.array([[np.sum(A * B) for B in Kc] for A in Kc])
    a = np.array([np.sum(A * Ystar) for A in Kc])
    v = nonnegative_qp(M, a)
    v = np.clip(v, 0, None)
    return v / v.sum(), M, a


def exact_factor(K):
    """G with G Gᵀ = K to round-off (all eigenpairs, none dropped)."""
    lam, U = np.linalg.eigh(K)
    assert lam.min() > 1e-8 * lam.max()  # the tests below need every direction
    return U * np.sqrt(lam)


def gfb_dense_algorithm2(blocks, y, d, C, n_iter):
    """Algorithm 2 with M + 2 full copies Z_i of z = [γ₁; …; γ_M; α], ζ = λ = 1.

    Line 20 of the paper's listing reads Z_{m+2} ← P_box(z'); Proposition 1 (the GFB
    of Raguet et al.) gives Z_{m+2} ← Z_{m+2} + λ(P_box(z') − z), used here as in the
    solver.
    """
    M = len(blocks)
    ranks = [b.shape[1] for b in blocks]
    off = np.concatenate([[0], np.cumsum(ranks)])
    R, n = off[-1], y.size
    A = []
    for k, V in enumerate(blocks):
        Ak = np.zeros((ranks[k], R + n))
        Ak[:, off[k] : off[k + 1]] = np.eye(ranks[k])
        Ak[:, R:] = -np.sqrt(d[k]) * V.T * y[None, :]
        A.append(Ak)
    Ay = np.zeros((1, R + n))
    Ay[0, R:] = y
    A.append(Ay)
    projs = [Ak.T @ np.linalg.solve(Ak @ Ak.T, Ak) for Ak in A]
    z = np.zeros(R + n)
    Zs = [z.copy() for _ in range(M + 2)]
    alphas = []
    for _ in range(n_iter):
        grad = np.concatenate([z[:R], -np.ones(n)])
        for i in range(M + 1):
            v = 2 * z - Zs[i] - grad
            Zs[i] = Zs[i] + (v - projs[i] @ v) - z
        v = 2 * z - Zs[M + 1] - grad
        v[R:] = np.clip(v[R:], 0, C)
        Zs[M + 1] = Zs[M + 1] + v - z
        z = sum(Zs) / (M + 2)
        alphas.append(z[R:].copy())
    return alphas


def kernel_kmeans_dense(K, labels, k, max_iter=100):
    """Lloyd's iterations written with the kernel matrix only (the O(n²) textbook form)."""
    labels = labels.copy()
    diag = np.diag(K)
    for _ in range(max_iter):
        D = np.empty((K.shape[0], k))
        for c in range(k):
            idx = labels == c
            nc = idx.sum()
            D[:, c] = diag - 2 * K[:, idx].sum(1) / nc + K[np.ix_(idx, idx)].sum() / nc**2
        new = D.argmin(1)
        if np.array_equal(new, labels):
            break
        labels = new
    return labels, D[np.arange(len(labels)), labels].sum()


def naive_csi(K, Y, m, *, kappa, delta, centering=True, labeled=None):
    """CSI straight from the definitions (Sections 3–5), O(n³) per step.

    Keeps only the pivot *sets*: L_{k−1} and Ladv are the Nyström approximations on
    I_{k−1} and I_{k−1} ∪ H_k (Proposition 1), the approximate gains are Eqs. (9)–(10)
    with (Ladv − L)(:, i) as the stand-in for the unknown residual column, the true gain
    is λ‖g‖² + μ‖Yᵀq‖². Returns pivots, predicted and true gains.
    """
    n = K.shape[0]
    rows = np.arange(n) if labeled is None else np.flatnonzero(labeled)
    Yl = np.asarray(Y, float)[rows]
    Yl = Yl - Yl.mean(0) if centering else Yl
    lam_k = (1 - kappa) / np.trace(K)
    lam_y = kappa / (Yl**2).sum()
    floor = n * np.finfo(float).eps * np.diag(K).max()
    ymax = np.linalg.eigvalsh(Yl.T @ Yl)[-1]
    nl = rows.size
    Pi = np.eye(nl) - (np.ones((nl, nl)) / nl if centering else 0)

    def nys(S):
        if not S:
            return np.zeros_like(K)
        return K[:, S] @ np.linalg.pinv(K[np.ix_(S, S)]) @ K[S, :]

    pivots, H = [], []
    for _ in range(delta):
        d = np.diag(K - nys(H)).copy()
        d[H] = -1
        j = int(np.argmax(d))
        if d[j] <= floor:
            break
        H.append(j)
    pred, true = [], []
    for k in range(m):
        L, La = nys(pivots), nys(pivots + H)
        D, Da = np.diag(K - L).copy(), np.diag(K - La).copy()
        D[pivots] = 0
        Da[pivots + H] = 0
        if pivots:
            U, s, _ = np.linalg.svd(Pi @ K[np.ix_(rows, pivots)], full_matrices=False)
            Qb = U[:, s > 1e-10 * s.max()]
        else:
            Qb = np.zeros((nl, 0))
        Pp = np.eye(nl) - Qb @ Qb.T
        gains = np.full(n, -np.inf)
        for i in range(n):
            if i in pivots or D[i] <= floor or (i not in H and Da[i] <= floor):
                continue
            u = (La - L)[:, i]
            w = Pp @ Pi @ u[rows]
            B, C = w @ w, ((Yl.T @ w) ** 2).sum()
            djy = 0.0 if B <= 1e-11 * max(u @ u, 1e-300) else min(C / B, ymax)
            gains[i] = lam_k * (u @ u + D[i] ** 2 - (D[i] - Da[i]) ** 2) / D[i] + lam_y * djy
        i = int(np.argmax(gains))
        if not np.isfinite(gains[i]):
            break
        pred.append(gains[i])
        g = (K - L)[:, i] / np.sqrt(D[i])
        w = Pp @ Pi @ g[rows]
        nw = np.linalg.norm(w)
        q = w / nw if nw > 1e-10 * np.linalg.norm(g[rows]) else 0 * w
        true.append(lam_k * g @ g + lam_y * ((Yl.T @ q) ** 2).sum())
        if i in H:
            H.remove(i)
            d = np.diag(K - nys([*pivots, i, *H])).copy()
            d[[*pivots, i, *H]] = -1
            j = int(np.argmax(d))
            if k + 1 < m and d[j] > floor:
                H.append(j)
        pivots.append(i)
    return np.array(pivots), np.array(pred), np.array(true)


def nonnegative_qp(M, a):
    """min vᵀMv − 2aᵀv over v ≥ 0 (cvxpy)."""
    cp = pytest.importorskip("cvxpy")
    v = cp.Variable(a.size)
    L = np.linalg.cholesky(M + 1e-12 * np.eye(a.size))
    prob = cp.Problem(cp.Minimize(cp.sum_squares(L.T @ v) - 2 * a @ v), [v >= 0])
    prob.solve()
    return np.asarray(v.value)


def pairwise_accuracy_naive(a, b):
    """The SimpleNPKL definition over all n(n−1)/2 pairs."""
    a, b = np.asarray(a), np.asarray(b)
    n = len(a)
    agree = sum((a[i] == a[j]) == (b[i] == b[j]) for i, j in itertools.combinations(range(n), 2))
    return agree / (n * (n - 1) / 2)


def paper_lssvm(K, y, C):
    """Zhang et al. 2008 §4.3 literally: M = Y(K + I/C)Y, b = yᵀM⁻¹1/yᵀM⁻¹y, α = M⁻¹(1 − by)."""
    n = len(y)
    Y = np.diag(y.astype(float))
    Minv = np.linalg.inv(Y @ (K + np.eye(n) / C) @ Y)
    one = np.ones(n)
    b = (y @ Minv @ one) / (y @ Minv @ y)
    alpha = Minv @ (one - b * y)
    return alpha, b


def ridge_leverage_scores_dense(kernel, X, lam):
    """diag(K (K + λI)⁻¹), the exact ridge leverage scores."""
    K = kernel(X)
    return np.diag(np.linalg.solve(K + lam * np.eye(len(X)), K))


def svm_dual_qp(blocks, y, d, C, eta=0.0):
    """min ½αᵀY K_d Yα − 1ᵀα + ½η‖α‖², yᵀα = 0, 0 ≤ α ≤ C by Clarabel (cvxpy)."""
    cp = pytest.importorskip("cvxpy")
    U = np.hstack([np.sqrt(dk) * b for dk, b in zip(d, blocks, strict=True)]) * y[:, None]
    a = cp.Variable(y.size)
    obj = 0.5 * cp.sum_squares(U.T @ a) - cp.sum(a) + 0.5 * eta * cp.sum_squares(a)
    prob = cp.Problem(cp.Minimize(obj), [y @ a == 0, a >= 0, a <= C])
    prob.solve(solver="CLARABEL")
    return prob.value, a.value


def svr_dual_qp(K, y, C, eps):
    """ε-SVR dual by a QP solver (cvxpy): max −½αᵀKα + αᵀy − ε‖α‖₁, Σα = 0, |α| ≤ C."""
    cp = pytest.importorskip("cvxpy")
    n = y.size
    lam, U = np.linalg.eigh(K)
    R = U * np.sqrt(np.clip(lam, 0, None))
    a = cp.Variable(n)
    obj = cp.Maximize(-0.5 * cp.sum_squares(R.T @ a) + y @ a - eps * cp.norm1(a))
    prob = cp.Problem(obj, [cp.sum(a) == 0, cp.abs(a) <= C])
    prob.solve()
    return prob.value

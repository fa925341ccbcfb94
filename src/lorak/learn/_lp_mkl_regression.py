"""ℓp-norm multiple kernel learning for regression, on low-rank factors.

The math of :class:`lorak.LowRankMKLRegressor`: :ref:`guide-lpmkl-solvers`, section
"Regression: the exact ridge solve".
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import LinAlgError, cholesky, eigh, lu_factor, lu_solve

from .._core.validation import check_bound
from ..decompose import nystrom_normalization
from ..kernels import KernelBank, kernel_block
from ..solvers import FactorStack
from ._lp_mkl import (
    block_sums,
    kernel_norms,
    landmark_points,
    outer_loop,
    shared_landmarks,
    start_weights,
    uniform_weights,
)

__all__ = [
    "LOSSES",
    "RANK_GAIN",
    "LpMKLRegressionFit",
    "LpMKLRidgeResult",
    "SVRNewtonResult",
    "check_regression_options",
    "double_rank",
    "fit_lp_mkl_regression",
    "gcv_scores",
    "lp_mkl_ridge",
    "lp_mkl_svr",
    "regression_bank",
    "ridge_moments",
    "select_ridge_weights",
    "svr_newton",
    "target_standardization",
    "weighted_ridge",
]

logger = logging.getLogger(__name__)


@dataclass
class LpMKLRidgeResult:
    """The outcome of :func:`lp_mkl_ridge`.

    Attributes
    ----------
    d : (M,) kernel weights of the returned model (‖d‖_p = 1, d ≥ 0).
    coef : (Σ r_k,) weights of the stacked factor columns: f(x) = V(x) coef + b.
    b : float, the bias.
    alpha : (ℓ,) dual variables C·(y − f − b).
    n_iter : int, outer iterations.
    converged : bool, whether max |Δd_k| < tol was reached.
    d_history : list of (M,) arrays.
    objective_history : list of float, the primal objective after each inner solve.
    """

    d: np.ndarray
    coef: np.ndarray
    b: float
    alpha: np.ndarray
    n_iter: int
    converged: bool
    d_history: list = field(default_factory=list)
    objective_history: list = field(default_factory=list)
    info: dict = field(default_factory=dict)


class _Moments:
    """AᵀA, Aᵀy, Aᵀ1, ℓ, ȳ and ‖y‖² of the stored matrix A (float64), formed once."""

    def __init__(self, F: FactorStack, y):
        A = F.V if F.V is not None else F.basis
        self.explicit = F.V is not None
        self.S = None if self.explicit else F.coef
        self.AtA = F.gram() if self.explicit else F.basis_gram()
        self.Aty = F.rmatvec(y) if self.explicit else _basis_rmatvec(A, y)
        self.At1 = (
            F.rmatvec(np.ones(F.n_samples))
            if self.explicit
            else _basis_rmatvec(A, np.ones(F.n_samples))
        )
        self.n = F.n_samples
        self.ybar = float(y.mean())
        self.yy = float(y @ y)
        # centred moments: Φcᵀ Φc = Lᵀ Gc L and Φcᵀ yc = Lᵀ g for any root L
        self.Gc = self.AtA - np.outer(self.At1, self.At1) / self.n
        self.Gc = 0.5 * (self.Gc + self.Gc.T)
        self.g = self.Aty - self.At1 * self.ybar
        # per-kernel S_k S_kᵀ, so that H(d) = Σ_k d_k S_k S_kᵀ costs M r² per outer
        # iteration instead of r² Σ r_k (kept when it fits in 256 MB)
        self.Hk = None
        if not self.explicit:
            r = self.S.shape[0]
            if F.n_kernels * r * r * 8 <= 2**28:
                self.Hk = np.stack(
                    [self.S[:, F.block(k)] @ self.S[:, F.block(k)].T for k in range(F.n_kernels)]
                )

    def weighted(self, F: FactorStack, d):
        """H(d) = S D Sᵀ (r × r), or the vector dcol when S = I (explicit factors)."""
        if self.explicit:
            return np.repeat(d, F.ranks)
        if self.Hk is not None:
            H = np.tensordot(d, self.Hk, axes=1)
        else:
            H = (self.S * np.repeat(d, F.ranks)) @ self.S.T
        return 0.5 * (H + H.T)

    def root(self, F: FactorStack, d) -> np.ndarray:
        """L with L Lᵀ = S D Sᵀ (diag(√d) repeated over the blocks when S = I)."""
        dcol = np.repeat(d, F.ranks)
        if self.explicit:
            return np.sqrt(dcol)  # a diagonal, kept as a vector
        if np.count_nonzero(d) == 1:  # one kernel: L = √d_k S_k, no eigendecomposition
            k = int(np.flatnonzero(d)[0])
            return self.S[:, F.block(k)] * np.sqrt(d[k])
        H = self.weighted(F, d)
        try:  # H = S D Sᵀ is positive definite when S has full row rank and d > 0
            return cholesky(H, lower=True, check_finite=False)
        except LinAlgError:
            pass
        lam, U = eigh(H, check_finite=False)
        return U * np.sqrt(np.clip(lam, 0.0, None))


def ridge_moments(F: FactorStack, y) -> _Moments:
    """The d-independent moments of the factors and target (one O(ℓ r²) pass)."""
    return _Moments(F, np.asarray(y, dtype=np.float64))


def _basis_rmatvec(A, u):
    return (A.T @ u.astype(A.dtype, copy=False)).astype(np.float64, copy=False)


def _ridge(mom: _Moments, H, C: float):
    """u, b, Aᵀα and the objective of the ridge problem with kernel A H Aᵀ.

    With β = Aᵀα the model is f = A u + b, u = H β, and stationarity gives
    α = C (y − A u − b), 1ᵀα = 0, hence b = ȳ − 1ᵀA u / ℓ and (I + C Gc H) β = C g with the
    centred moments Gc, g: one r × r LU solve, no root of H. ½‖w‖² = ½ βᵀ H β.
    """
    if H.ndim == 1:  # diagonal H (explicit factors)
        M = C * (mom.Gc * H[None, :])
    else:
        M = C * (mom.Gc @ H)
    M[np.diag_indices_from(M)] += 1.0
    try:
        beta = lu_solve(lu_factor(M, check_finite=False), C * mom.g, check_finite=False)
    except (LinAlgError, ValueError):  # a singular M needs a non-finite input
        beta = np.linalg.lstsq(M, C * mom.g, rcond=None)[0]
    u = H * beta if H.ndim == 1 else H @ beta
    b = mom.ybar - float(mom.At1 @ u) / mom.n
    # ‖r‖² = ‖y‖² − 2 yᵀ(A u + b) + ‖A u + b‖², all from the moments
    fit2 = float(u @ mom.AtA @ u) + 2.0 * b * float(mom.At1 @ u) + mom.n * b * b
    r2 = mom.yy - 2.0 * (float(mom.Aty @ u) + b * mom.ybar * mom.n) + fit2
    objective = 0.5 * float(beta @ u) + 0.5 * C * max(r2, 0.0)
    return u, b, beta, objective


def _features_moments(mom: _Moments, L):
    """Φcᵀ Φc and Φcᵀ yc of the centred features Φ = A L (from the moments only)."""
    if L.ndim == 1:
        return mom.Gc * np.outer(L, L), L * mom.g
    return L.T @ mom.Gc @ L, L.T @ mom.g


def gcv_scores(mom: _Moments, L, Cs) -> np.ndarray:
    """Generalized cross-validation n‖r‖² / (n − tr H)² of the ridge fit for each C.

    H is the hat matrix of the ridge with an unregularized bias, tr H = 1 + Σ_j σ_j/(σ_j + λ)
    over the eigenvalues σ of Φcᵀ Φc (λ = 1/C), and with z = Uᵀ Φcᵀ yc the residual is
    ‖r‖² = ‖yc‖² − Σ_j z_j² (2/(σ_j + λ) − σ_j/(σ_j + λ)²) = ‖yc‖² − Σ_j z_j² (σ_j + 2λ)/(σ_j + λ)²:
    one r × r eigendecomposition serves every C, and no pass over the rows is needed.
    """
    G, g = _features_moments(mom, L)
    sig, U = eigh(0.5 * (G + G.T), check_finite=False)
    sig = np.clip(sig, 0.0, None)
    z2 = (U.T @ g) ** 2
    yc2 = max(mom.yy - mom.n * mom.ybar**2, 0.0)
    out = np.empty(len(Cs))
    for i, C in enumerate(Cs):
        lam = 1.0 / float(C)
        r2 = yc2 - float(np.sum(z2 * (sig + 2.0 * lam) / (sig + lam) ** 2))
        # the residual is a sum of squares: clip the round-off of the subtraction at the
        # size of its terms
        r2 = max(r2, 1e-14 * yc2)
        dof = mom.n - 1.0 - float(np.sum(sig / (sig + lam)))
        out[i] = mom.n * r2 / dof**2 if dof > 0 else np.inf
    return out


def lp_mkl_ridge(
    F: FactorStack, y, C: float, p: float, *, d0=None, tol: float = 1e-4, max_iter: int = 100,
    warn: bool = True,
) -> LpMKLRidgeResult:  # fmt: skip
    """ℓp-norm MKL regression (squared loss) on low-rank factors, exact inner solves.

    Parameters
    ----------
    F : FactorStack
        Factors of the M base kernels (stacked, or compressed to a shared basis).
    y : (ℓ,) array of real targets.
    C : float > 0
        Weight of the squared loss (C = 1/λ of kernel ridge regression).
    p : float ≥ 1
        The norm of the kernel weights; p = 1 gives sparse weights.
    d0 : (M,) array, optional
        Starting weights (rescaled to ‖d‖_p = 1); default M^{-1/p} each.
    tol : float, default=1e-4
        Stop when max_k |Δd_k| < tol.
    max_iter : int, default=100
        Outer iterations (each one O(r³ + r Σ r_k), no pass over the rows).
    warn : bool
        Emit a ConvergenceWarning when ``max_iter`` is reached.

    Returns
    -------
    LpMKLRidgeResult
        The returned d is the one the returned coefficients were computed with.
    """
    y, d = _check_ridge(F, y, C, p, d0)
    mom = _Moments(F, y)
    if np.ptp(y) <= 8 * np.finfo(np.float64).eps * max(abs(mom.ybar), np.finfo(float).tiny):
        # a constant target: f = 0, b = ȳ for every d (α = 0 tells the weights nothing)
        return LpMKLRidgeResult(d=d, coef=np.zeros(F.total_rank), b=mom.ybar,
                                alpha=np.zeros(F.n_samples), n_iter=0, converged=True,
                                d_history=[d.copy()], objective_history=[0.0])  # fmt: skip

    def step(d, last):
        q, _, objective = _ridge_fit(mom, F, d, C)
        return None, d**2 * block_sums(F, q), objective, 0

    run = outer_loop(step, d, p, tol=tol, max_iter=max_iter, warn=warn, name="ℓp-MKL ridge")
    q, b, _ = _ridge_fit(mom, F, run.d, C)
    coef = np.repeat(run.d, F.ranks) * q
    return LpMKLRidgeResult(coef=coef, b=float(b), alpha=C * (y - F.matvec(coef) - b),
                            **run.record())  # fmt: skip


def _check_ridge(F: FactorStack, y, C, p, d0):
    """y (float64) and the starting weights (‖d‖_p = 1) of :func:`lp_mkl_ridge` and
    :func:`lp_mkl_svr`, checked."""
    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 1 or y.shape[0] != F.n_samples:
        raise ValueError(f"y must have shape ({F.n_samples},); got {y.shape}")
    if not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinity")
    if not (isinstance(C, (int, float, np.floating, np.integer)) and 0 < C < math.inf):
        raise ValueError(f"C must be a positive finite number; got {C!r}")
    if not (isinstance(p, (int, float, np.floating, np.integer)) and 1 <= p < math.inf):
        raise ValueError(f"p must be a number ≥ 1; got {p!r}")
    return y, start_weights(F.n_kernels, p, d0)


def _ridge_fit(mom, F: FactorStack, d, C):
    """The ridge fit at the weights d: Vᵀα (stacked over the kernels), b, the objective."""
    _, b, Atalpha, objective = _ridge(mom, mom.weighted(F, d), float(C))
    return (Atalpha if mom.explicit else mom.S.T @ Atalpha), b, objective


def weighted_ridge(F: FactorStack, y, d, C: float, *, mom: _Moments | None = None):
    """Kernel ridge regression on the fixed combination Σ_k d_k K_k (no weight update).

    The inner solve of :func:`lp_mkl_ridge` once, at the given weights: a
    :class:`LpMKLRidgeResult` with ``n_iter=0`` and ``d`` as given (not rescaled).
    """
    y = np.asarray(y, dtype=np.float64)
    mom = _Moments(F, y) if mom is None else mom
    d = np.asarray(d, dtype=np.float64)
    q, b, obj = _ridge_fit(mom, F, d, C)
    coef = np.repeat(d, F.ranks) * q
    return LpMKLRidgeResult(
        d=d.copy(),
        coef=coef,
        b=float(b),
        alpha=C * (y - F.matvec(coef) - b),
        n_iter=0,
        converged=True,
        d_history=[d.copy()],
        objective_history=[obj],
    )


def select_ridge_weights(mom: _Moments, F: FactorStack, learned, Cs, *, uniform=None, known=None):
    """The kernel weights with the lowest GCV among the learned ones and the bank's own.

    Candidates: ``learned`` (the ℓp-MKL weights), the uniform weights and each base
    kernel alone; for each, the GCV of the ridge fit at fixed weights over the grid
    ``Cs`` (:func:`gcv_scores`: one eigendecomposition per candidate, of size r, or
    r_k for a single kernel). The GCV of the learned weights ignores that they were fitted
    to the same rows, which favours them slightly; when a single kernel or the uniform
    sum still scores lower, the learned weights have fitted the training rows at the
    expense of new ones. Returns ``(name, d, C, table)`` with table the minimum GCV per
    candidate ("mkl", "uniform", "kernel k").

    ``uniform``: the uniform weight vector to use (any positive multiple of 1 gives the
    same kernels up to a rescaling of C; default 1/M each). ``known``: GCV arrays over
    ``Cs`` already computed for some candidates (by name), which are not recomputed.
    Why: :ref:`guide-lpmkl`, section "Regression".
    """
    M = F.n_kernels
    uni = np.full(M, 1.0 / M) if uniform is None else np.asarray(uniform, dtype=np.float64)
    known = {} if known is None else known
    cands = [("mkl", np.asarray(learned, dtype=np.float64)), ("uniform", uni)]
    for k in range(M):
        if F.ranks[k] > 0:
            e = np.zeros(M)
            e[k] = 1.0
            cands.append((f"kernel {k}", e))
    table = {}
    best = None
    for name, d in cands:
        scores = known.get(name)
        if scores is None:
            scores = gcv_scores(mom, mom.root(F, d), Cs)
        i = int(np.argmin(scores))
        table[name] = float(scores[i])
        # ties (to round-off) keep the earlier candidate: the learned weights first
        if best is None or scores[i] < best[0] * (1 - 1e-9):
            best = (float(scores[i]), name, d, float(Cs[i]))
    return best[1], best[2], best[3], table


# --------------------------------------------------------------------------- ε-insensitive


@dataclass
class SVRNewtonResult:
    """Primal solution (w, b), dual α and the relative duality gap of an ε-SVR solve."""

    w: np.ndarray
    b: float
    alpha: np.ndarray
    gap: float
    n_iter: int
    converged: bool
    h: float


def _huber_eps(t, eps, h):
    """ψ_h(|t| − ε) and its derivative in t: 0 inside the tube, u²/(2h) for 0 < u < h,
    u − h/2 beyond (u = |t| − ε)."""
    u = np.abs(t) - eps
    val = np.where(u <= 0, 0.0, np.where(u < h, u * u / (2.0 * h), u - 0.5 * h))
    dpsi = np.clip(u / h, 0.0, 1.0)
    return val, dpsi * np.sign(t), (u > 0) & (u < h)


def _svr_gap(Phi, y, C, eps, w, b, alpha):
    """Relative duality gap (P − D)/|P| of the unsmoothed ε-SVR for a feasible-made α."""
    t = y - Phi @ w - b
    P = 0.5 * float(w @ w) + C * float(np.sum(np.maximum(np.abs(t) - eps, 0.0)))
    a = np.clip(alpha - alpha.mean(), -C, C)
    v = Phi.T @ a
    D = -0.5 * float(v @ v) + float(a @ y) - eps * float(np.abs(a).sum())
    return (P - D) / max(abs(P), np.finfo(float).tiny), P


def _svr_newton_step(Phi, y, C, eps, h, w, b):
    """The Newton direction of the smoothed ε-SVR at (w, b): the (q + 1)² system over
    the rows in the quadratic zone (a gradient step where it is singular), and the
    directional derivative along it."""
    q = Phi.shape[1]
    t = y - Phi @ w - b
    _, g, quad = _huber_eps(t, eps, h)
    alpha = C * g
    grad_w = w - Phi.T @ alpha
    grad_b = -float(alpha.sum())
    PQ = Phi[quad]
    H = np.empty((q + 1, q + 1))
    H[:q, :q] = (C / h) * (PQ.T @ PQ)
    H[:q, :q][np.diag_indices(q)] += 1.0
    H[:q, q] = H[q, :q] = (C / h) * PQ.sum(axis=0)
    H[q, q] = (C / h) * quad.sum() + 1e-12 * (1.0 + C)
    try:
        step = -np.linalg.solve(H, np.r_[grad_w, grad_b])
    except np.linalg.LinAlgError:
        step = -np.r_[grad_w, grad_b]
    return step, float(np.r_[grad_w, grad_b] @ step)


def svr_newton(
    Phi,
    y,
    C: float,
    eps: float,
    *,
    w0=None,
    b0=None,
    tol: float = 1e-3,
    max_iter: int = 200,
    h0: float | None = None,
    h_factor: float = 0.1,
) -> SVRNewtonResult:
    """Linear ε-SVR min ½‖w‖² + C Σ max(0, |yᵢ − φᵢᵀw − b| − ε) by primal Newton.

    The loss is Huber-smoothed at width h; each Newton step solves the (q + 1)² system
    over the rows in the quadratic zone, with a backtracking line search. While the
    relative duality gap of the unsmoothed SVR (at α = C ψ′_h, made feasible) is above
    ``tol``, the width shrinks by ``h_factor`` and Newton continues.
    """
    Phi = np.asarray(Phi, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n, q = Phi.shape
    w = np.zeros(q) if w0 is None else np.asarray(w0, dtype=np.float64).copy()
    b = float(np.median(y)) if b0 is None else float(b0)
    h = float(h0) if h0 is not None else max(float(np.std(y)), np.finfo(float).tiny)
    h_min = 1e-8 * max(float(np.abs(y).max()), np.finfo(float).tiny)
    n_iter = 0
    converged = False
    gap = math.inf
    alpha = np.zeros(n)

    def smoothed(w, b, h):
        val, _, _ = _huber_eps(y - Phi @ w - b, eps, h)
        return 0.5 * float(w @ w) + C * float(val.sum())

    while n_iter < max_iter:
        # Newton on the smoothed problem at width h
        f = smoothed(w, b, h)
        while n_iter < max_iter:
            n_iter += 1
            step, slope = _svr_newton_step(Phi, y, C, eps, h, w, b)
            if slope >= 0:  # not a descent direction at working precision
                break
            a = 1.0
            while True:
                fn = smoothed(w + a * step[:q], b + a * step[q], h)
                if fn <= f + 1e-4 * a * slope or a < 1e-10:
                    break
                a *= 0.5
            w, b = w + a * step[:q], b + a * step[q]
            decrease = f - fn
            f = fn
            if decrease <= 1e-12 * max(abs(f), 1.0) or -slope <= 1e-14 * max(abs(f), 1.0):
                break
        t = y - Phi @ w - b
        alpha = C * _huber_eps(t, eps, h)[1]
        gap, _ = _svr_gap(Phi, y, C, eps, w, b, alpha)
        if gap <= tol:
            converged = True
            break
        if h <= h_min:
            break
        h *= h_factor
    return SVRNewtonResult(w=w, b=b, alpha=alpha, gap=gap, n_iter=n_iter, converged=converged, h=h)


def _stack_features(F: FactorStack, L) -> np.ndarray:
    """Φ = A L (ℓ × q, float64): the explicit features of Σ_k d_k V_k V_kᵀ."""
    A = F.V if F.V is not None else F.basis
    if L.ndim == 1:
        return A.astype(np.float64, copy=False) * L
    return (A @ L.astype(A.dtype, copy=False)).astype(np.float64, copy=False)


def lp_mkl_svr(
    F: FactorStack, y, C: float, p: float, epsilon: float, *, d0=None, tol: float = 1e-4,
    max_iter: int = 100, inner_tol: float = 1e-3, inner_max_iter: int = 200, warn: bool = True,
) -> LpMKLRidgeResult:  # fmt: skip
    """ℓp-norm MKL regression with the ε-insensitive loss on low-rank factors.

    The outer loop of :func:`lp_mkl_ridge` with :func:`svr_newton` as the inner solver on
    the explicit features Φ = A L of Σ_k d_k V_k V_kᵀ (formed per outer iteration),
    warm-started from the previous α; ‖f_k‖² = d_k² ‖V_kᵀα‖².
    ``info`` of the result holds the last inner duality gap. C carries the units of
    1/y: pass standardized targets for a C free of them, as
    :class:`lorak.LowRankMKLRegressor` does (:ref:`guide-lpmkl`, section "Regression").
    """
    y, d = _check_ridge(F, y, C, p, d0)
    if not (isinstance(epsilon, (int, float, np.floating, np.integer)) and 0 <= epsilon < math.inf):
        raise ValueError(f"epsilon must be a non-negative finite number; got {epsilon!r}")
    mom = _Moments(F, y)  # only for root(); the SVR needs no moments
    C, epsilon = float(C), float(epsilon)

    def step(d, last):
        Phi = _stack_features(F, mom.root(F, d))
        w0, b0 = (None, None) if last is None else (Phi.T @ last.alpha, last.b)
        res = svr_newton(Phi, y, C, epsilon, w0=w0, b0=b0, tol=inner_tol, max_iter=inner_max_iter)
        objective = _svr_gap(Phi, y, C, epsilon, res.w, res.b, res.alpha)[1]
        return res, kernel_norms(F, 1.0, res.alpha, d), objective, res.n_iter

    run = outer_loop(step, d, p, tol=tol, max_iter=max_iter, warn=warn, name="ℓp-MKL ε-SVR")
    res = run.last
    return LpMKLRidgeResult(
        coef=np.repeat(run.d, F.ranks) * F.rmatvec(res.alpha),
        b=float(res.b),
        alpha=res.alpha,
        info={"inner_gap": res.gap, "inner_converged": res.converged, "h": res.h},
        **run.record(),
    )


# --------------------------------------------------------------------------- the fit


def regression_bank(n_kernels: int = 12, factor_range=(2.0**-6, 2.0**5)) -> KernelBank:
    """Scale-free Gaussians exp(−‖x−y‖²/b), b log-spaced over ``factor_range`` times the
    mean pairwise squared distance of the training rows (X and c·X give the same model)."""
    lo, hi = factor_range
    return KernelBank.gaussian(factors=np.geomspace(lo, hi, n_kernels), base="mean_pairwise")


#: ``rank="auto"``: the least relative drop of the GCV error that a doubling of the
#: rank must buy to be kept
RANK_GAIN = 0.02


def target_standardization(y) -> tuple[float, float]:
    """(mean, scale) with which :func:`fit_lp_mkl_regression` standardizes its targets.

    Both losses are fitted on z = (y − mean) / scale and the model mapped back
    (coefficients × scale, bias × scale + mean), so that a fit of s·y + t predicts
    s·f + t for every unit s ≠ 0 and offset t. A constant y is left as it is: (0, 1).
    Why: :ref:`guide-lpmkl`, section "Regression".
    """
    mu = float(np.mean(y))
    sd = float(np.std(y))
    tiny = np.finfo(np.float64).tiny
    if not (np.isfinite(sd) and sd > 0) or np.ptp(y) <= 8 * np.finfo(np.float64).eps * max(
        abs(mu), tiny
    ):
        return 0.0, 1.0
    return mu, sd


@dataclass
class LpMKLRegressionFit:
    """The outcome of :func:`fit_lp_mkl_regression`, in the units of y.

    Attributes
    ----------
    kernel_weights : (M,) the weights d of the model (learned or selected).
    intercept : float; C : float, the C used (on the standardized targets).
    n_iter : int, outer iterations of the final fit; converged : bool.
    weights_choice : "mkl", "uniform" or "kernel k"; weights_gcv : dict or None, the
        lowest GCV of each candidate (``weights="select"``).
    gcv : (n_C,) GCV scores of the last C selection, or None; C_grid : its grid, or None.
    rank : int, the landmarks of the model; rank_path : list of (R, GCV) pairs.
    components : (R, d) landmarks; normalizations : list of (R, r_k) arrays (one
        (R, r) array of the fixed combination after a rank doubling).
    landmark_coef : (M, R) β_k with predict(x) = Σ_k k_k(x, Z) β_k + b.
    """

    kernel_weights: np.ndarray
    intercept: float
    C: float
    n_iter: int
    converged: bool
    weights_choice: str
    weights_gcv: dict | None
    gcv: np.ndarray | None
    C_grid: np.ndarray | None
    rank: int
    rank_path: list
    components: np.ndarray
    normalizations: list
    landmark_coef: np.ndarray


def _C_grid(C_range, n_C: int, n: int) -> np.ndarray:
    """The GCV grid of C, in units of 1/n (C·n spans ``C_range``)."""
    lo, hi = C_range
    return np.geomspace(lo, hi, int(n_C)) / n


def _best_gcv(mom, F, d, Cs) -> float:
    return float(np.min(gcv_scores(mom, mom.root(F, d), Cs)))


def _choose_C(mom, F, y, p, Cs, kw, known):
    """Stage ``C="gcv"``: C by GCV at uniform weights, ℓp-MKL there, and again at the
    learned weights (refitting when the choice moves); returns (C, fit, scores)."""
    scores = gcv_scores(mom, mom.root(F, uniform_weights(F.n_kernels, p)), Cs)
    known["uniform"] = scores
    C = float(Cs[int(np.argmin(scores))])
    res = lp_mkl_ridge(F, y, C, p, **kw)
    scores = gcv_scores(mom, mom.root(F, res.d), Cs)
    C2 = float(Cs[int(np.argmin(scores))])
    if C2 != C:
        C = C2
        res = lp_mkl_ridge(F, y, C, p, d0=res.d, **kw)
        # the refit moved d: its GCV is recomputed by the weight selection
    else:
        known["mkl"] = scores
    return C, res, scores


def _select_stage(mom, F, z, res, C, Cs, uniform, known):
    """Stage 2 with ``weights="select"``: the weights with the lowest GCV
    (:func:`select_ridge_weights`), refitted when they are not the learned ones;
    returns (fit, C, choice, table)."""
    grid = np.array([C]) if Cs is None else Cs
    choice, d, C_sel, table = select_ridge_weights(
        mom, F, res.d, grid, uniform=uniform, known=known
    )
    if choice != "mkl":
        C = C_sel
        res = weighted_ridge(F, z, d, C, mom=mom)
    return res, C, choice, table


def _factor_width(F: FactorStack, d) -> int:
    """The first stage's factor width for the kernels in use: one block per kernel, Σ_k
    r_k columns (at most the compressed rank), where the doubling starts."""
    width = int(np.sum(F.ranks[d > 0]))
    if F.V is None:
        width = min(width, F.basis.shape[1])
    return width


def _model(factors, res, refined, C):
    """(Z, normalizations, b, C, β) of the model — the refined rank's when there is
    one — with predict(x) = Σ_k k_k(x, Z) β_k + b."""
    if refined is None:
        Z = factors.bank.points
        beta = _block_coefficients(factors, res.coef, Z.shape[0])
        return Z, list(factors.normalizations), float(res.b), C, beta
    Z, N, coef, b, C = refined
    # Σ_k d_k k_k(x, Z) N coef: β_k = d_k · N coef
    return Z, [N], b, C, np.outer(res.d, N @ coef)


def _block_coefficients(factors, coef, m: int) -> np.ndarray:
    """β_k = N_k · (coefficients of block k): predict(x) = Σ_k k_k(x, Z) β_k + b."""
    F = factors.stack
    beta = np.zeros((F.n_kernels, m))
    for k in range(F.n_kernels):
        beta[k] = factors.normalizations[k] @ coef[F.block(k)]
    return beta


def double_rank(X, y, bank, d, C, gcv, *, rank, width, landmarks, rng, max_rank, rtol, Cs):
    """Stage ``rank="auto"``: the fixed combination Σ_k d_k k_k on 2w, 4w, … landmarks
    (w = the first stage's factor width, R for one kernel, up to M·R for a combination)
    while the GCV (over ``Cs``, or at C) drops by ≥ :data:`RANK_GAIN`: the rank path and
    (Z, N, coef, b, C) of the last accepted rank, or None (:ref:`guide-lpmkl`)."""
    n = X.shape[0]
    path = [(rank, gcv)]
    R = max(rank, int(width))
    best = None
    active = [k for k in range(len(bank)) if d[k] > 0]
    while R < min(n, int(max_rank)):
        R = min(2 * R, n, int(max_rank))
        lm = shared_landmarks(landmarks, X, R, bank, rng)
        Z = landmark_points(lm)
        W = sum(d[k] * kernel_block(bank[k], Z, Z) for k in active)
        N = nystrom_normalization(W, weights=lm.weights, rtol=rtol).N
        E = np.zeros((n, Z.shape[0]))
        for k in active:  # one n × R block at a time: memory n·R
            E += d[k] * kernel_block(bank[k], X, Z)
        F1 = FactorStack.from_blocks([E @ N])
        del E
        mom1 = ridge_moments(F1, y)
        grid = np.array([C]) if Cs is None else Cs
        scores = gcv_scores(mom1, mom1.root(F1, np.ones(1)), grid)
        i = int(np.argmin(scores))
        path.append((Z.shape[0], float(scores[i])))
        if not scores[i] < (1.0 - RANK_GAIN) * gcv:
            break
        gcv = float(scores[i])
        fit = weighted_ridge(F1, y, np.ones(1), float(grid[i]), mom=mom1)
        best = (Z, N, fit.coef, fit.b, float(grid[i]))
    return path, best


LOSSES = ("squared", "epsilon_insensitive")


def check_regression_options(loss, *, weights, epsilon, C, C_range, n_C) -> None:
    """Refuse options :func:`fit_lp_mkl_regression` does not take (the parameters of
    :class:`lorak.LowRankMKLRegressor`), with a message naming the parameter."""
    if loss not in LOSSES:
        raise ValueError(f"unknown loss {loss!r}; valid names are {list(LOSSES)}")
    if weights not in ("select", "mkl"):
        raise ValueError(f"weights must be 'select' or 'mkl'; got {weights!r}")
    check_bound(epsilon, "epsilon", low=0, strict=False)
    if not isinstance(C, str):
        check_bound(C, "C", low=0)
        return
    if C != "gcv":
        raise ValueError(f"C must be a positive number or 'gcv'; got {C!r}")
    check_bound(n_C, "n_C", low=1, strict=False, integer=True)
    try:
        lo, hi = C_range
    except (TypeError, ValueError):
        raise ValueError(f"C_range must be (low, high); got {C_range!r}") from None
    check_bound(lo, "C_range[0]", low=0)
    check_bound(hi, "C_range[1]", low=0)
    if lo > hi:
        raise ValueError(f"C_range must be (low, high) with low <= high; got {C_range!r}")


def fit_lp_mkl_regression(
    factors,
    X,
    y,
    *,
    loss: str = "squared",
    epsilon: float = 0.1,
    p: float = 2.0,
    weights: str = "select",
    C="gcv",
    C_range=(1e-2, 1e6),
    n_C: int = 17,
    tol: float = 1e-4,
    max_iter: int = 200,
    auto_rank: bool = False,
    max_rank: int = 2000,
    landmarks="kmeans",
    rtol=None,
    rng: np.random.Generator | None = None,
    verbose: bool = False,
) -> LpMKLRegressionFit:
    """ℓp-MKL regression on the factors of a bank (:func:`lorak.learn.lp_mkl_factors`
    of the rows X), in named stages, on standardized targets
    (``target_standardization``; the record is mapped back to the units of y):

    1. C (``"gcv"``: generalized cross-validation over ``n_C`` values of C·n
       log-spaced in ``C_range``, at uniform and at the learned weights);
    2. the weights: ℓp-MKL (``lp_mkl_ridge`` or, ``loss="epsilon_insensitive"``,
       ``lp_mkl_svr`` with the tube ``epsilon`` in units of std y), then
       (``weights="select"``, squared loss) the lowest GCV among the learned weights,
       the uniform sum and each kernel alone (``select_ridge_weights``);
    3. ``auto_rank`` (squared loss; the caller sets it when the first stage's landmarks
       were fewer than n and ``max_rank``): the chosen combination refitted on doubling
       landmark sets (strategy ``landmarks``, up to ``max_rank``) while the GCV drops
       (``double_rank``).
    """
    y = np.asarray(y, dtype=np.float64)
    y_mean, y_scale = target_standardization(y)
    z = (y - y_mean) / y_scale
    F, bank = factors.stack, factors.bank
    kw = {"tol": tol, "max_iter": int(max_iter)}
    uniform = uniform_weights(F.n_kernels, p)
    known = {}  # GCV arrays over the C grid already computed, by candidate
    gcv = Cs = res = mom = None
    if C == "gcv":  # stage 1
        mom = ridge_moments(F, z)
        Cs = _C_grid(C_range, n_C, mom.n)
        C, res, gcv = _choose_C(mom, F, z, p, Cs, kw, known)
    else:
        C = float(C)
    choice, table = "mkl", None
    if loss == "squared":  # stage 2
        if res is None:
            res = lp_mkl_ridge(F, z, C, p, **kw)
        if weights == "select":
            mom = ridge_moments(F, z) if mom is None else mom
            res, C, choice, table = _select_stage(mom, F, z, res, C, Cs, uniform, known)
    else:
        # z is standardized: ε in units of std(y) is ε itself
        d0 = None if res is None else res.d
        res = lp_mkl_svr(F, z, C, p, float(epsilon) * float(np.std(z)), d0=d0, **kw)
    path, refined = [], None
    if auto_rank and loss == "squared":  # stage 3
        mom = ridge_moments(F, z) if mom is None else mom  # (the select stage's, if any)
        grid = np.array([C]) if Cs is None else Cs
        gcv0 = table[choice] if table is not None else _best_gcv(mom, F, res.d, grid)
        path, refined = double_rank(
            X, z, bank.kernels, res.d, C, gcv0, rank=bank.points.shape[0],
            width=_factor_width(F, res.d), landmarks=landmarks, rng=rng, max_rank=max_rank,
            rtol=rtol, Cs=Cs,
        )  # fmt: skip
    if verbose:
        logger.info("lp-mkl regression: C = %.3g, %d outer iterations", C, res.n_iter)
    Z, normalizations, b, C, beta = _model(factors, res, refined, C)
    rank = Z.shape[0]
    # back to the units of y: f = scale·f_z, b = scale·b_z + mean; GCV ∝ scale²
    s2 = y_scale**2
    return LpMKLRegressionFit(
        kernel_weights=res.d,
        intercept=float(y_mean + y_scale * float(b)),
        C=C,
        n_iter=int(res.n_iter),
        converged=bool(res.converged),
        weights_choice=choice,
        weights_gcv=None if table is None else {k: v * s2 for k, v in table.items()},
        gcv=None if gcv is None else gcv * s2,
        C_grid=Cs,
        rank=int(rank),
        rank_path=[(r, g * s2) for r, g in path],
        components=Z,
        normalizations=normalizations,
        landmark_coef=beta * y_scale,
    )

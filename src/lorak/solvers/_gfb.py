"""Generalized forward–backward splitting for the SVM with a sum of low-rank kernels.

Rakotomamonjy & Chanda, §3, Algorithm 2 and its merged variant: :ref:`guide-lpmkl-solvers`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve, cholesky, eigh, solve_triangular
from scipy.linalg.blas import dsyrk

__all__ = [
    "FactorStack",
    "GFBResult",
    "best_bias",
    "duality_gap",
    "gfb_naive",
    "gfb_split",
    "project_feasible",
    "svm_dual_objective",
]


# --------------------------------------------------------------------------- factors


class FactorStack:
    """The factors V_k (ℓ × r_k) of M base kernels, K_k ≈ V_k V_kᵀ, as one operator.

    Stored either explicitly as the stacked V = [V₁ … V_M] (ℓ × Σ r_k) or through a
    shared basis, V = B S with B (ℓ × r) and S (r × Σ r_k).

    Parameters
    ----------
    V : (ℓ, Σ r_k) array, optional
        The stacked factors (float32 or float64). Give either V or ``basis`` + ``coef``.
    ranks : sequence of int
        r_k, the number of columns of each block, in order.
    basis : (ℓ, r) array, optional
    coef : (r, Σ r_k) array, optional

    Notes
    -----
    Products are computed in the storage dtype and returned in float64.
    """

    def __init__(self, V=None, ranks=None, *, basis=None, coef=None):
        if (V is None) == (basis is None):
            raise ValueError("give either V (stacked factors) or basis and coef")
        if V is not None:
            V = np.asarray(V)
            if V.ndim != 2:
                raise ValueError(f"V must be 2-D (ℓ × Σ r_k); got shape {V.shape}")
            total = V.shape[1]
            self.n_samples = V.shape[0]
        else:
            basis = np.asarray(basis)
            coef = np.asarray(coef, dtype=np.float64)
            if basis.ndim != 2 or coef.ndim != 2 or coef.shape[0] != basis.shape[1]:
                raise ValueError(
                    f"basis (ℓ × r) and coef (r × Σ r_k) do not match: {basis.shape}, {coef.shape}"
                )
            total = coef.shape[1]
            self.n_samples = basis.shape[0]
        ranks = np.asarray([total] if ranks is None else ranks, dtype=np.intp)
        if ranks.ndim != 1 or ranks.size == 0 or np.any(ranks < 0) or ranks.sum() != total:
            raise ValueError(
                f"ranks must be non-negative block widths summing to {total}; got {ranks.tolist()}"
            )
        self.V = V
        self.basis = basis
        self.coef = coef
        self.ranks = ranks
        self.offsets = np.concatenate([[0], np.cumsum(ranks)])
        self._gram = None
        self._basis_gram = None

    @classmethod
    def from_blocks(cls, blocks, dtype=None) -> FactorStack:
        """Stack a list of (ℓ × r_k) arrays (copies them)."""
        blocks = [np.asarray(b) for b in blocks]
        if not blocks:
            raise ValueError("need at least one factor block; got none")
        n = {b.shape[0] for b in blocks}
        if len(n) != 1:
            raise ValueError(f"factor blocks must all have ℓ rows; got {sorted(n)}")
        dtype = np.result_type(*blocks) if dtype is None else dtype
        V = np.concatenate([b.astype(dtype, copy=False) for b in blocks], axis=1)
        return cls(V, [b.shape[1] for b in blocks])

    # ------------------------------------------------------------------ properties
    @property
    def n_kernels(self) -> int:
        return int(self.ranks.size)

    @property
    def total_rank(self) -> int:
        return int(self.offsets[-1])

    @property
    def dtype(self):
        return (self.V if self.V is not None else self.basis).dtype

    @property
    def nbytes(self) -> int:
        if self.V is not None:
            return int(self.V.nbytes)
        return int(self.basis.nbytes + self.coef.nbytes)

    def block(self, k: int) -> slice:
        return slice(int(self.offsets[k]), int(self.offsets[k + 1]))

    # ------------------------------------------------------------------ products
    def rmatvec(self, U) -> np.ndarray:
        """Vᵀ U for U of shape (ℓ,) or (ℓ, c), in float64.

        Column by column: with OpenBLAS, c matrix–vector products are faster than one
        skinny matrix–matrix product, and a Fortran-ordered V or B faster than a
        C-ordered one.
        """
        A = self.V if self.V is not None else self.basis
        U = np.asarray(U)
        if U.ndim == 2:
            out = np.empty((A.shape[1], U.shape[1]))
            for j in range(U.shape[1]):
                out[:, j] = A.T @ np.ascontiguousarray(U[:, j], dtype=A.dtype)
        else:
            out = (A.T @ U.astype(A.dtype, copy=False)).astype(np.float64, copy=False)
        if self.V is None:
            out = self.coef.T @ out
        return out

    def matvec(self, s) -> np.ndarray:
        """V s for s of shape (Σ r_k,), in float64."""
        s = np.asarray(s, dtype=np.float64)
        if self.V is None:
            s = self.coef @ s
            A = self.basis
        else:
            A = self.V
        return (A @ s.astype(A.dtype, copy=False)).astype(np.float64, copy=False)

    def basis_gram(self) -> np.ndarray:
        """BᵀB (r × r, float64); the identity for an orthonormal basis up to round-off."""
        if self._basis_gram is None:
            B = self.basis.astype(np.float64, copy=False)
            self._basis_gram = B.T @ B
        return self._basis_gram

    def gram(self) -> np.ndarray:
        """VᵀV (Σ r_k × Σ r_k, float64), cached. O(ℓ (Σ r_k)²) for stacked V."""
        if self._gram is None:
            if self.V is not None:
                V = self.V.astype(np.float64, copy=False)
                self._gram = V.T @ V
            else:
                self._gram = self.coef.T @ self.basis_gram() @ self.coef
        return self._gram

    def gram_blocks(self) -> list[np.ndarray]:
        """[V_kᵀ V_k] (float64): O(ℓ Σ r_k²) for stacked V, never the cross blocks."""
        if self._gram is not None:
            return [self._gram[self.block(k), self.block(k)] for k in range(self.n_kernels)]
        out = []
        if self.V is not None:
            for k in range(self.n_kernels):
                Vk = self.V[:, self.block(k)].astype(np.float64)
                out.append(Vk.T @ Vk)
        else:
            BtB = self.basis_gram()
            for k in range(self.n_kernels):
                Sk = self.coef[:, self.block(k)]
                out.append(Sk.T @ BtB @ Sk)
        return out

    def weighted_root(self, d, rank_rtol: float | None = None) -> np.ndarray:
        """L (r × q, float64) with L Lᵀ = S D Sᵀ (D = the weights d_k repeated over each
        block), for a shared basis: Σ_k d_k V_k V_kᵀ = (B L)(B L)ᵀ. From the
        eigendecomposition of the r × r matrix: eigenvalues clipped at 0
        (``rank_rtol=None``, q = r) or those ≤ rank_rtol · λ_max dropped."""
        if self.basis is None:
            raise ValueError("weighted_root needs factors with a shared basis")
        dcol = np.repeat(np.asarray(d, dtype=np.float64), self.ranks)
        # H = W Wᵀ with W = S D^{1/2}: a symmetric rank-k update (half a GEMM's flops,
        # the upper triangle only), read by eigh from that triangle
        W = np.asarray(self.coef, dtype=np.float64) * np.sqrt(dcol)
        H = dsyrk(1.0, W.T, trans=1)
        lam, U = eigh(H, lower=False, check_finite=False)
        if rank_rtol is None:
            return U * np.sqrt(np.clip(lam, 0.0, None))
        keep = lam > rank_rtol * max(float(lam[-1]), 0.0)
        return U[:, keep] * np.sqrt(lam[keep])

    def subset(self, kernels) -> FactorStack:
        """The stack of the chosen kernels only (copies V's columns when stacked)."""
        kernels = np.asarray(kernels, dtype=np.intp)
        cols = np.concatenate([np.arange(*self.block(k).indices(self.total_rank)) for k in kernels])
        ranks = self.ranks[kernels]
        if self.V is not None:
            out = FactorStack(np.asfortranarray(self.V[:, cols]), ranks)
        else:
            out = FactorStack(ranks=ranks, basis=self.basis, coef=self.coef[:, cols])
            out._basis_gram = self._basis_gram
        if self._gram is not None:
            out._gram = self._gram[np.ix_(cols, cols)]
        return out


# --------------------------------------------------------------------------- helpers


def svm_dual_objective(F: FactorStack, y, d, alpha, eta: float = 0.0) -> float:
    """½ αᵀY(Σ d_k V_kV_kᵀ)Yα − 1ᵀα + η/2 ‖α‖², the objective of (4) (and of (6))."""
    dcol = np.repeat(np.asarray(d, dtype=np.float64), F.ranks)
    return float(_objective(dcol, F.rmatvec(y * alpha), alpha, eta))


class _Blocks:
    """Batched small linear algebra on the per-kernel blocks of a stacked R-vector.

    Blocks of unequal width are zero-padded to the widest, so that M products with
    r_k × r_k matrices are one ``matmul`` call instead of a Python loop.
    """

    def __init__(self, ranks):
        self.ranks = np.asarray(ranks, dtype=np.intp)
        self.M = self.ranks.size
        self.r = int(self.ranks.max()) if self.M else 0
        self.uniform = bool(np.all(self.ranks == self.r))
        if not self.uniform:
            k = np.repeat(np.arange(self.M), self.ranks)
            j = np.concatenate([np.arange(r) for r in self.ranks])
            self.flat = k * self.r + j

    def pad(self, x):
        if self.uniform:
            return x.reshape(self.M, self.r)
        out = np.zeros(self.M * self.r)
        out[self.flat] = x
        return out.reshape(self.M, self.r)

    def unpad(self, P):
        if self.uniform:
            return P.reshape(-1)
        return P.reshape(-1)[self.flat]

    def stack_matrices(self, mats, diag=0.0):
        out = np.zeros((self.M, self.r, self.r))
        for k, A in enumerate(mats):
            rk = A.shape[0]
            out[k, :rk, :rk] = A
            if rk < self.r:
                out[k, rk:, rk:] = np.eye(self.r - rk) * diag
        return out

    def apply(self, stacked, x):
        """[A_k x_k] for stacked (M, r, r) and a stacked vector x (Σ r_k,)."""
        return self.unpad(np.matmul(stacked, self.pad(x)[:, :, None])[:, :, 0])


def _spd_inverse(A):
    """Inverse of a symmetric positive definite matrix through its Cholesky factor.

    The matrices inverted here are I + d_k V_kᵀV_k, whose eigenvalues are ≥ 1: the
    explicit inverse is as accurate as a triangular solve and lets the M solves of an
    iteration be one batched product.
    """
    L = cholesky(A, lower=True, check_finite=False)
    Li = solve_triangular(L, np.eye(A.shape[0]), lower=True, check_finite=False)
    return Li.T @ Li


def _psd_solver(A, rtol: float = 1e-12):
    """x ↦ A⁺x for the symmetric positive semidefinite A = AAᵀ of the merged constraints.

    Cholesky when A is numerically positive definite (its Schur complement can cancel
    for wide Gaussians at ``scale`` < 1), else the pseudo-inverse, eigenvalues below
    rtol·λ_max dropped; the prox stays exact either way.
    """
    try:
        cf = cho_factor(A, lower=True, check_finite=False)
    except LinAlgError:
        lam, U = np.linalg.eigh(A)
        keep = lam > rtol * max(float(lam[-1]), 0.0)
        Uk = U[:, keep]
        inv = 1.0 / lam[keep]
        return lambda x: Uk @ (inv * (Uk.T @ x))
    return lambda x: cho_solve(cf, x, check_finite=False)


@dataclass
class InnerSVMResult:
    """The record every inner SVM solver of the ℓp-MKL outer loop returns: the dual
    variables, the kernels' γ, the objective, the iterations, convergence, history,
    solver details and a warm-start state (see each solver's record for their
    meaning there)."""

    alpha: np.ndarray
    gamma: np.ndarray
    objective: float
    n_iter: int
    converged: bool
    history: np.ndarray
    info: dict = field(default_factory=dict)
    state: dict | None = None


@dataclass
class GFBResult(InnerSVMResult):
    """What the inner solvers return.

    Attributes
    ----------
    alpha : (ℓ,) ndarray
        Dual variables: the Euclidean projection of the averaged iterate onto
        {0 ≤ α ≤ C, yᵀα = 0} (which the iterate satisfies only in the limit).
    gamma : (Σ r_k,) ndarray
        γ_k = √d_k V_kᵀYα, stacked (0 for kernels with d_k = 0).
    objective : float
        Objective (4) (+ η/2‖α‖²) at ``alpha``.
    n_iter : int
    converged : bool
        Whether the relative objective change fell below ``tol`` before ``max_iter``.
    history : ndarray
        Objective (4) at the averaged iterate, one value per iteration.
    info : dict
        ``raw_alpha`` (the averaged iterate), ``raw_equality_residual`` |yᵀα|/(C√ℓ)
        and ``projection_distance`` of it, ``relative_gap``, ``primal`` and ``bias``
        (the duality gap at ``alpha`` and the bias minimizing the primal; η = 0 only),
        ``gaps`` (the gap checks of ``criterion="gap"``), timings
        (``setup_seconds``, ``iter_seconds``), ``method``, ``step``, ``scale``.
    state : dict or None
        The GFB auxiliary variables, to warm-start a next call with the same factors.
    """


def _check_factors(F, y, d):
    """(y, d) as float64 vectors for the factors F (a :class:`FactorStack`): y one entry
    per row, d one finite weight ≥ 0 per kernel; what every inner solver checks first."""
    if not isinstance(F, FactorStack):
        raise TypeError(f"F must be a FactorStack; got {type(F).__name__}")
    y = np.asarray(y, dtype=np.float64).ravel()
    if y.shape[0] != F.n_samples:
        raise ValueError(f"y has {y.shape[0]} entries, but the factors have {F.n_samples} rows")
    d = np.asarray(d, dtype=np.float64).ravel()
    if d.shape[0] != F.n_kernels:
        raise ValueError(f"d has {d.shape[0]} weights, but there are {F.n_kernels} kernels")
    if np.any(d < 0) or not np.all(np.isfinite(d)):
        raise ValueError(f"kernel weights d must be finite and >= 0; got {d}")
    return y, d


def _check_common(F, y, d, C, eta, step, relax, scale):
    y, d = _check_factors(F, y, d)
    if not C > 0:
        raise ValueError(f"C must be > 0; got {C!r}")
    if eta < 0:
        raise ValueError(f"eta must be >= 0; got {eta!r}")
    if not 0 < relax <= 1:
        raise ValueError(f"relax must be in (0, 1]; got {relax!r}")
    if not 0 < step < 2:
        raise ValueError(f"step must be in (0, 2) (ζ = step / L); got {step!r}")
    if not scale > 0:
        raise ValueError(f"scale must be > 0; got {scale!r}")
    return y, d


def _relative_change(prev, cur) -> float:
    return abs(cur - prev) / max(abs(cur), abs(prev), 1e-300)


def project_feasible(alpha, y, C: float) -> np.ndarray:
    """Euclidean projection onto {0 ≤ α ≤ C, yᵀα = 0}.

    clip(α − t y, 0, C) for the root t of the piecewise-linear yᵀclip(α − t y, 0, C),
    by safeguarded Newton steps (a few O(ℓ) passes).
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)

    def phi(t):
        a = alpha - t * y
        inside = (a > 0.0) & (a < C)
        return float(np.dot(y, np.clip(a, 0.0, C))), int(inside.sum())

    f, slope = phi(0.0)
    if f == 0.0:
        return np.clip(alpha, 0.0, C)
    span = float(np.max(np.abs(alpha))) + C
    lo, hi = (0.0, span) if f > 0 else (-span, 0.0)
    if phi(lo)[0] < 0 or phi(hi)[0] > 0:  # a single class: the set is {0}
        return np.zeros_like(alpha)
    t = 0.0
    tol = 1e-13 * span
    for _ in range(100):
        if f > 0:
            lo = t
        else:
            hi = t
        t_new = t + f / slope if slope > 0 else 0.5 * (lo + hi)
        if not lo < t_new < hi:
            t_new = 0.5 * (lo + hi)
        t = t_new
        f, slope = phi(t)
        if f == 0.0 or hi - lo <= tol or abs(f) <= 1e-13 * C * (slope + 1):
            break
    return np.clip(alpha - t * y, 0.0, C)


def best_bias(f, y, C: float):
    """argmin_b C Σ max(0, 1 − y_i(f_i + b)) and its value (piecewise linear in b)."""
    # the hinge of example i bends at b_i = y_i − f_i (y_i = ±1); the slope at b is
    # −C·#{y=+1, b < b_i} + C·#{y=−1, b > b_i}: a weighted-median problem, O(ℓ log ℓ)
    bp = y - f
    order = np.argsort(bp, kind="stable")
    ys = y[order]
    # slope just right of the j-th sorted breakpoint
    n_pos_right = np.sum(ys > 0) - np.cumsum(ys > 0)
    n_neg_left = np.cumsum(ys < 0)
    slope = -n_pos_right + n_neg_left
    j = int(np.searchsorted(slope, 0, side="left"))
    b = float(bp[order[min(j, len(bp) - 1)]])
    loss = C * float(np.maximum(0.0, 1.0 - y * (f + b)).sum())
    return b, loss


def duality_gap(F: FactorStack, y, d, alpha, C: float, q=None):
    """Duality gap of the SVM (4) at a feasible α (η = 0), and the best bias.

    The dual value is D(α) = 1ᵀα − ½αᵀQα (the negated objective of (4)); the primal
    point is f = K_d Yα = Σ_k d_k V_k V_kᵀYα with the bias that minimizes
    P(f, b) = ½‖f‖²_K + C Σ max(0, 1 − y_i(f_i + b)). P − D ≥ 0, and
    P − D ≤ ε|D| certifies that α is within a relative ε of the optimal objective.

    Returns ``(gap, primal, dual, b)``.
    """
    dcol = np.repeat(np.asarray(d, dtype=np.float64), F.ranks)
    if q is None:
        q = F.rmatvec(y * alpha)
    dq = dcol * q
    quad = float(np.dot(dq, q))
    f = F.matvec(dq)
    b, loss = best_bias(f, y, C)
    primal = 0.5 * quad + loss
    dual = float(alpha.sum()) - 0.5 * quad
    return primal - dual, primal, dual, b


class _Monitor:
    """Stopping rules shared by the GFB variants."""

    def __init__(self, F, y, d, C, eta, tol, criterion, check_every, min_iter):
        if criterion not in ("objective", "gap"):
            raise ValueError(f"unknown criterion {criterion!r}; valid names are 'gap', 'objective'")
        if criterion == "gap" and eta > 0:
            raise ValueError("criterion='gap' needs eta=0 (the gap is that of the plain SVM)")
        if not tol >= 0:
            raise ValueError(f"tol must be >= 0; got {tol!r}")
        self.F, self.y, self.d, self.C = F, y, d, C
        self.tol, self.criterion = tol, criterion
        self.check_every = max(1, int(check_every))
        self.min_iter = min_iter
        self.history: list[float] = []
        self.gaps: list[tuple[int, float]] = []

    def done(self, n, f, alpha) -> bool:
        """Record f (objective at the averaged iterate); True to stop."""
        hist = self.history
        stop = False
        if self.criterion == "objective":
            stop = bool(hist) and n > self.min_iter and _relative_change(hist[-1], f) <= self.tol
        elif n > self.min_iter and n % self.check_every == 0:
            a = project_feasible(alpha, self.y, self.C)
            gap, _, dual, _ = duality_gap(self.F, self.y, self.d, a, self.C)
            rel = gap / max(abs(dual), 1e-300)
            self.gaps.append((n, rel))
            stop = rel <= self.tol
        hist.append(f)
        return stop


def _gfb_result(F, Fa, active, y, d, C, eta, alpha, n, converged, monitor, info, state=None):
    """The result record: α projected onto the feasible set, γ, objective, gap."""
    alpha_f = project_feasible(alpha, y, C)
    dcol = np.repeat(d[active], Fa.ranks)
    q = Fa.rmatvec(y * alpha_f)
    obj = float(_objective(dcol, q, alpha_f, eta))
    gamma = np.zeros(F.total_rank)
    cols = np.concatenate([np.arange(F.offsets[k], F.offsets[k + 1]) for k in active])
    gamma[cols.astype(np.intp)] = np.sqrt(dcol) * q
    info = dict(info)
    info["raw_alpha"] = alpha
    info["raw_equality_residual"] = abs(float(np.dot(y, alpha))) / (C * math.sqrt(y.size))
    info["projection_distance"] = float(np.linalg.norm(alpha_f - alpha)) / (C * math.sqrt(y.size))
    info["active_kernels"] = active
    info["gaps"] = monitor.gaps
    if eta == 0:
        gap, primal, dual, b = duality_gap(Fa, y, d[active], alpha_f, C, q=q)
        info.update(relative_gap=gap / max(abs(dual), 1e-300), primal=primal, bias=b)
    return GFBResult(
        alpha=alpha_f,
        gamma=gamma,
        objective=obj,
        n_iter=n,
        converged=converged,
        history=np.asarray(monitor.history),
        info=info,
        state=state,
    )


def _active(F, d):
    active = np.flatnonzero(d > 0)
    if active.size == 0:
        raise ValueError("every kernel weight is 0: the SVM has no kernel")
    Fa = F if active.size == F.n_kernels else F.subset(active)
    return active, Fa


# --------------------------------------------------------------------------- split GFB

WEIGHTS = ("uniform", "blockwise")


def gfb_split(
    F: FactorStack,
    y,
    d,
    C: float,
    *,
    eta: float = 0.0,
    tol: float = 1e-4,
    max_iter: int = 3000,
    criterion: str = "objective",
    check_every: int = 10,
    step: float = 1.0,
    relax: float = 1.0,
    scale: float = 1.0,
    weights: str = "uniform",
    alpha0=None,
    state: dict | None = None,
    min_iter: int = 2,
) -> GFBResult:
    """Solve (6) by GFB with the equality constraints split per kernel (Algorithm 2).

    Parameters
    ----------
    F : FactorStack
        The factors V_k.
    y : (ℓ,) array of ±1
    d : (M,) array, kernel weights d_k ≥ 0. Kernels with d_k = 0 drop out (γ_k = 0).
    C : float, upper bound of the box.
    eta : float, default=0
        Adds η/2 ‖α‖² (Remark 1: strong convexity in α, a slightly perturbed problem).
    tol : float, default=1e-4
        Tolerance of the stopping ``criterion``.
    max_iter : int, default=3000
    criterion : {"objective", "gap"}, default="objective"
        ``"objective"`` (the paper): stop when |f_n − f_{n−1}| ≤ tol·|f_n| for the
        objective f of (4) at the averaged iterate. ``"gap"``: stop when the relative
        duality gap (:func:`duality_gap`) at the feasible projection of the iterate is
        ≤ tol, checked every ``check_every`` iterations (one more product with V; a
        certificate, where the objective change can stall far from the optimum).
    step, relax, scale : float
        ζ = step / L (step ∈ (0, 2)), relaxation λ ∈ (0, 1], metric scale c (see
        :ref:`guide-lpmkl-solvers`). Paper: 1, 1, 1.
    weights : {"uniform", "blockwise"}, default="uniform"
        ``"uniform"`` is Algorithm 2: every copy weighs 1/(M + 2) on every coordinate.
        ``"blockwise"`` is the preconditioned GFB of Raguet & Landrieu (2015): γ_k
        belongs to its affine copy alone (weight 1); on α the M affine copies weigh
        1/(3M) each, the copies of {yᵀα = 0} and of the box 1/3 each (the same cost
        per iteration, several times fewer iterations).
    alpha0 : (ℓ,) array, optional
        Starting α (clipped to the box); the copies start at the consistent point
        z₀ = [√d_k V_kᵀYα₀; α₀]. Default 0.
    state : dict, optional
        ``GFBResult.state`` of a previous call with the same factors, active kernels
        and ``weights`` (the weights d may differ): continues from its auxiliary
        variables.
    min_iter : int, default=2
        Iterations before the stopping test applies.

    Returns
    -------
    GFBResult
        ``alpha`` is the Euclidean projection of the averaged iterate onto
        {0 ≤ α ≤ C, yᵀα = 0} (:func:`project_feasible`).
    """
    t0 = time.perf_counter()
    y, d = _check_common(F, y, d, C, eta, step, relax, scale)
    if weights not in WEIGHTS:
        raise ValueError(f"unknown weights {weights!r}; valid names are {WEIGHTS}")
    active, Fa = _active(F, d)
    C = float(C)
    gfb = _SplitCopies(
        Fa, y, d[active], eta=eta, step=step, relax=relax, scale=scale, weights=weights
    )
    monitor = _Monitor(Fa, y, d[active], C, eta, tol, criterion, check_every, min_iter)
    t_setup = time.perf_counter() - t0
    alpha, gam = gfb.start(alpha0, state, active, C)
    converged = False
    n = 0
    U = np.empty((F.n_samples, 2), order="F")
    t1 = time.perf_counter()
    for n in range(1, max_iter + 1):
        base = alpha - gfb.zeta * (eta * alpha - 1.0)  # α − ζ∇_α F0
        np.multiply(y, base + alpha - gfb.a, out=U[:, 0])  # y∘(2α − ζ∇_α − a)
        np.multiply(y, alpha, out=U[:, 1])
        P = Fa.rmatvec(U)
        if monitor.done(n, _objective(gfb.dcol, P[:, 1], alpha, eta), alpha):
            converged = True
            break
        gfb.update(alpha, gam, base, P[:, 0], C)
        alpha, gam = gfb.average()  # line 22
    t_iter = time.perf_counter() - t1
    info = _run_info("split", criterion, t_setup, t_iter, gfb.zeta, scale, gfb.lam)
    info["weights"] = weights
    state = gfb.state(active)
    return _gfb_result(F, Fa, active, y, d, C, eta, alpha, n, converged, monitor, info, state)


def _run_info(method, criterion, t_setup, t_iter, zeta, scale, lam) -> dict:
    """The ``info`` entries both GFB variants report."""
    return {
        "method": method,
        "criterion": criterion,
        "setup_seconds": t_setup,
        "iter_seconds": t_iter,
        "step": zeta,
        "scale": scale,
        "relax": lam,
    }


def _objective(dcol, q, alpha, eta):
    """The objective of (4) (+ η/2‖α‖²) at α, from q = Vᵀ(y∘α)."""
    return 0.5 * np.dot(dcol * q, q) - alpha.sum() + 0.5 * eta * np.dot(alpha, alpha)


class _SplitCopies:
    """The auxiliary variables of Algorithm 2 and the constants of their updates.

    The M affine copies share the form Z_k,α = a + Y V_k s_k (user guide): ``a``,
    the stacked ``s``, and their γ parts — ``gdiag`` (γ_k of the k-th copy) and, with
    uniform weights, ``goff`` (γ_k of the other copies, all equal); ``zeq`` and
    ``zbox`` are the α parts of the copies of {yᵀα = 0} and of the box.
    """

    def __init__(self, Fa, y, da, *, eta, step, relax, scale, weights):
        self.Fa, self.y, self.weights = Fa, y, weights
        self.M = M = Fa.n_kernels
        self.blocks = _Blocks(Fa.ranks)
        c2 = float(scale) ** 2
        self.sq = np.repeat(np.sqrt(da) / scale, Fa.ranks)  # √d_k / c per stacked column
        self.dcol = np.repeat(da, Fa.ranks)
        self.zeta = step / max(c2, eta)  # ∇F0 is max(c², η)-Lipschitz
        self.lam = float(relax)
        self.kappa = self.zeta * c2  # ζ times the curvature of the γ' part of F0
        if weights == "uniform":  # every copy 1/(M + 2) on every coordinate
            self.w_aff = self.w_eq = self.w_box = 1.0 / (M + 2)
        else:  # α: a third to the M affine copies together, a third each to the others
            self.w_aff, self.w_eq, self.w_box = 1.0 / (3 * M), 1.0 / 3, 1.0 / 3
        # metric weight of α relative to γ_k in the k-th projection
        self.omega = omega = 1.0 if weights == "uniform" else self.w_aff
        G = Fa.gram_blocks()
        self.Gst = self.blocks.stack_matrices(G)
        # (A_k A_kᵀ)⁻¹ = (ω I + (d_k/c²) V_kᵀV_k)⁻¹, once per call (Algorithm 2, line 6)
        self.Minv = self.blocks.stack_matrices(
            [
                _spd_inverse(omega * np.eye(g.shape[0]) + (dk / c2) * g)
                for g, dk in zip(G, da, strict=True)
            ],
            diag=1.0,
        )

    _STATE = ("a", "s", "gdiag", "goff", "zeq", "zbox")

    def start(self, alpha0, state, active, C):
        """The copies from ``state`` (same kernels and weights), else all at the
        consistent point z₀ = [√d_k V_kᵀYα₀; α₀]; returns their average (α, γ)."""
        if (
            state is not None
            and np.array_equal(state.get("kernels"), active)
            and state.get("weights") == self.weights
        ):
            for k in self._STATE:
                setattr(self, k, state[k].copy())
            return self.average()
        ell, R = self.Fa.n_samples, self.Fa.total_rank
        alpha = np.zeros(ell) if alpha0 is None else np.clip(np.asarray(alpha0, float), 0, C)
        gam = self.sq * self.Fa.rmatvec(self.y * alpha) if alpha.any() else np.zeros(R)
        self.a = alpha.copy()
        self.s = np.zeros(R)
        self.gdiag = gam.copy()
        self.goff = gam.copy()
        self.zeq = alpha.copy()
        self.zbox = alpha.copy()
        return alpha, gam

    def average(self):
        """The weighted average (α, γ) of the copies."""
        w_aff, M = self.w_aff, self.M
        alpha = (
            w_aff * (M * self.a + self.y * self.Fa.matvec(self.s))
            + self.w_eq * self.zeq
            + self.w_box * self.zbox
        )
        if self.weights == "blockwise":
            return alpha, self.gdiag
        return alpha, w_aff * ((M + 1) * self.goff + self.gdiag)

    def update(self, alpha, gam, base, p, C):
        """Lines 11–20 of Algorithm 2: every copy moves by λ towards its prox; ``base``
        is α − ζ∇_α F0 and p = Vᵀ(y∘(base + α − a))."""
        lam, kappa, y = self.lam, self.kappa, self.y
        # affine copies k = 1..M (lines 11–14): r_k = A_k v, w_k = (A_kA_kᵀ)⁻¹ r_k
        r = (2.0 - kappa) * gam - self.gdiag - self.sq * (p - self.blocks.apply(self.Gst, self.s))
        w = self.blocks.apply(self.Minv, r)
        self.a *= 1.0 - lam
        self.a += lam * base
        self.s = (1.0 - lam) * self.s + lam * (self.sq * w)
        self.gdiag = (1.0 - lam) * self.gdiag + lam * ((1.0 - kappa) * gam - self.omega * w)
        if self.weights == "uniform":
            self.goff = (1.0 - lam) * self.goff + lam * (1.0 - kappa) * gam
        # the copy of {yᵀα = 0} (lines 16–17)
        v = base + alpha - self.zeq
        self.zeq += lam * (v - y * (np.dot(y, v) / y.size) - alpha)
        # the box copy (lines 19–20)
        v = base + alpha - self.zbox
        np.clip(v, 0.0, C, out=v)
        self.zbox += lam * (v - alpha)

    def state(self, active) -> dict:
        out = {"kernels": active, "weights": self.weights}
        out.update((k, getattr(self, k)) for k in self._STATE)
        return out


# --------------------------------------------------------------------------- naive GFB


def gfb_naive(
    F: FactorStack,
    y,
    d,
    C: float,
    *,
    eta: float = 0.0,
    tol: float = 1e-4,
    max_iter: int = 3000,
    criterion: str = "objective",
    check_every: int = 10,
    step: float = 1.0,
    relax: float = 1.0,
    scale: float = 1.0,
    alpha0=None,
    min_iter: int = 2,
) -> GFBResult:
    """Solve (6) by GFB with all equality constraints in one affine set (§5.4).

    Two proximal operators, the box and the projection onto {A z = 0} with A the
    (Σ r_k + 1) × (Σ r_k + ℓ) matrix of all equality constraints:
    prox(v) = v − Aᵀ(AAᵀ)⁻¹Av, with

        AAᵀ = [[I + D̃ VᵀV D̃, −D̃ Vᵀ1], [−1ᵀV D̃, ℓ]],  D̃ = diag(√d_k / c),

    factored once (Cholesky, O((Σ r_k)³)) after forming the full Gram VᵀV
    (O(ℓ (Σ r_k)²)). Same parameters, stopping rules and result as
    :func:`gfb_split`; the comparison path of the paper's Fig. 7.
    """
    t0 = time.perf_counter()
    y, d = _check_common(F, y, d, C, eta, step, relax, scale)
    ell = F.n_samples
    active, Fa = _active(F, d)
    da = d[active]
    c2 = float(scale) ** 2
    sq = np.repeat(np.sqrt(da) / scale, Fa.ranks)
    dcol = np.repeat(da, Fa.ranks)
    zeta = step / max(c2, eta)
    lam = float(relax)
    C = float(C)
    R = Fa.total_rank
    monitor = _Monitor(Fa, y, da, C, eta, tol, criterion, check_every, min_iter)
    solve_aat = _psd_solver(_merged_gram(Fa, sq))
    t_setup = time.perf_counter() - t0

    alpha = np.zeros(ell) if alpha0 is None else np.clip(np.asarray(alpha0, float), 0, C)
    gam = sq * Fa.rmatvec(y * alpha) if alpha.any() else np.zeros(R)
    Z1g, Z1a = gam.copy(), alpha.copy()  # the copy of the affine set
    Z2g, Z2a = gam.copy(), alpha.copy()  # the copy of the box
    converged = False
    n = 0
    U = np.empty((ell, 2), order="F")
    Av = np.empty(R + 1)
    t1 = time.perf_counter()
    for n in range(1, max_iter + 1):
        ga = eta * alpha - 1.0
        vg = (2.0 - zeta * c2) * gam - Z1g
        va = 2.0 * alpha - Z1a - zeta * ga
        np.multiply(y, va, out=U[:, 0])
        np.multiply(y, alpha, out=U[:, 1])
        P = Fa.rmatvec(U)
        if monitor.done(n, _objective(dcol, P[:, 1], alpha, eta), alpha):
            converged = True
            break
        # projection onto {Az = 0}: w = (AAᵀ)⁻¹Av, prox = v − Aᵀw
        Av[:R] = vg - sq * P[:, 0]
        Av[R] = np.dot(y, va)
        w = solve_aat(Av)
        pg = vg - w[:R]
        pa = va + y * (Fa.matvec(sq * w[:R]) - w[R])
        Z1g += lam * (pg - gam)
        Z1a += lam * (pa - alpha)
        # the box leaves γ free: its prox is the identity on γ
        vg2 = (2.0 - zeta * c2) * gam - Z2g
        va2 = np.clip(2.0 * alpha - Z2a - zeta * ga, 0.0, C)
        Z2g += lam * (vg2 - gam)
        Z2a += lam * (va2 - alpha)
        gam = 0.5 * (Z1g + Z2g)
        alpha = 0.5 * (Z1a + Z2a)
    t_iter = time.perf_counter() - t1

    info = _run_info("naive", criterion, t_setup, t_iter, zeta, scale, lam)
    return _gfb_result(F, Fa, active, y, d, C, eta, alpha, n, converged, monitor, info)


def _merged_gram(Fa, sq):
    """AAᵀ of the merged equality constraints (see :func:`gfb_naive`), D̃ = diag(sq)."""
    ell, R = Fa.n_samples, Fa.total_rank
    G = Fa.gram()
    AAt = np.empty((R + 1, R + 1))
    AAt[:R, :R] = sq[:, None] * G * sq[None, :]
    AAt[np.arange(R), np.arange(R)] += 1.0
    v1 = sq * Fa.rmatvec(np.ones(ell))  # D̃ Vᵀ Y y = D̃ Vᵀ 1
    AAt[:R, R] = -v1
    AAt[R, :R] = -v1
    AAt[R, R] = ell
    return AAt

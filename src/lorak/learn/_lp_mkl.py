"""ℓp-norm multiple kernel learning with low-rank kernels, as pure functions.

The math of :class:`lorak.LowRankMKLClassifier` (Rakotomamonjy & Chanda): the
alternation, the shared basis and the inner solvers, :ref:`guide-lpmkl-solvers`.
"""

from __future__ import annotations

import logging
import math
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import eigh, solve_triangular
from scipy.linalg.blas import dsymv, dsyrk
from scipy.linalg.lapack import dpstrf
from scipy.sparse.linalg import LinearOperator, eigsh
from sklearn.exceptions import ConvergenceWarning

from .._core.validation import as_float64, check_bound
from ..decompose import FactorBank
from ..kernels import KernelBank, chunk_rows
from ..landmarks import Landmarks, select_landmarks
from ..solvers import WEIGHTS, FactorStack, best_bias, gfb_naive, gfb_split, svm_newton

__all__ = [
    "BankFactors",
    "GaussianGrams",
    "LpMKLFit",
    "LpMKLResult",
    "bank_decision",
    "bank_factors",
    "check_inner_options",
    "default_bank",
    "fit_lp_mkl",
    "kernel_norms",
    "kkt_bias",
    "lp_mkl",
    "lp_mkl_factors",
    "lp_mkl_full_kernel",
    "lp_norm_weights",
    "shared_basis_factor",
    "shared_landmarks",
    "uniform_weights",
]

logger = logging.getLogger(__name__)

SOLVERS = {"split": gfb_split, "naive": gfb_naive, "shared": gfb_naive, "newton": svm_newton}


def shared_basis_factor(F: FactorStack, d) -> FactorStack:
    """One factor of Σ_k d_k V_k V_kᵀ in the shared basis: B L with L Lᵀ = S D Sᵀ.

    With V = B S (:func:`bank_factors`) the weighted sum of the M kernels is the single
    rank-r kernel B (Σ_k d_k S_k S_kᵀ) Bᵀ, which the naive GFB handles with an (r + 1)²
    system (``solver="shared"``); L from the clipped eigendecomposition.
    """
    if F.basis is None:
        raise ValueError(
            "solver='shared' needs factors with a shared basis (compress=True); got "
            "explicit stacked factors"
        )
    L = F.weighted_root(d)
    out = FactorStack(ranks=[L.shape[1]], basis=F.basis, coef=L)
    out._basis_gram = F.basis_gram()
    return out


# --------------------------------------------------------------------------- weights


def uniform_weights(n_kernels: int, p: float = 1.0) -> np.ndarray:
    """d_k = M^{-1/p}: equal weights on the unit ℓp sphere (ℓp-MKL's usual start; with
    p = 1 the uniform kernel sum's μ_j = 1/M)."""
    if n_kernels < 1:
        raise ValueError(f"n_kernels must be >= 1; got {n_kernels}")
    if p == 1:
        return np.full(n_kernels, 1.0 / n_kernels)
    return np.full(n_kernels, float(n_kernels) ** (-1.0 / p))


def lp_norm_weights(fnorm2, p: float) -> np.ndarray | None:
    """Closed-form ℓp-MKL weights (3) from the squared RKHS norms ‖f_k‖².

    d_k = ‖f_k‖^{2/(p+1)} / (Σ_j ‖f_j‖^{2p/(p+1)})^{1/p}, so that d ≥ 0 and ‖d‖_p = 1.
    Returns None when every ‖f_k‖ is 0 (α = 0: no information; keep the weights).
    """
    f2 = np.maximum(np.asarray(fnorm2, dtype=np.float64), 0.0)
    top = f2.max() if f2.size else 0.0
    if not top > 0 or not np.isfinite(top):
        return None
    # scale-free: the formula is homogeneous of degree 0 in ‖f‖, so divide by the
    # largest norm first (α ~ C = 1000 gives ‖f‖² ~ 1e10 and powers thereof)
    g = f2 / top
    num = g ** (1.0 / (p + 1.0))
    den = np.sum(g ** (p / (p + 1.0))) ** (1.0 / p)
    d = num / den
    return d / np.linalg.norm(d, ord=p)  # ‖d‖_p = 1 up to the last ulp


def start_weights(n_kernels: int, p: float, d0=None) -> np.ndarray:
    """The outer loop's first weights: ``d0`` clipped at 0 and rescaled to ‖d‖_p = 1, or
    :func:`uniform_weights` when it is None."""
    if d0 is None:
        return uniform_weights(n_kernels, p)
    d = np.maximum(np.asarray(d0, dtype=np.float64), 0.0)
    if d.shape != (n_kernels,) or not np.linalg.norm(d, ord=p) > 0:
        raise ValueError(f"d0 must be {n_kernels} non-negative weights, not all zero")
    return d / np.linalg.norm(d, ord=p)


def block_sums(F: FactorStack, q) -> np.ndarray:
    """Σ_j q_j² over each kernel's block of the stacked q (0 for a kernel of rank 0)."""
    sums = np.add.reduceat(q * q, F.offsets[:-1]) if F.total_rank else np.zeros(F.n_kernels)
    sums[F.ranks == 0] = 0.0
    return sums


def kernel_norms(F: FactorStack, y, alpha, d) -> np.ndarray:
    """‖f_k‖² = d_k² ‖V_kᵀ(y∘α)‖² for every kernel (eq. 5 with d_k², see above)."""
    return np.asarray(d, dtype=np.float64) ** 2 * block_sums(F, F.rmatvec(y * alpha))


def kkt_bias(f, y, alpha, C: float, *, rtol: float = 1e-3) -> float:
    """Bias from the KKT conditions: b = mean(y_i − f_i) over the free support vectors.

    ``f`` = (K_d Yα)_i, the decision values without bias. Free means
    rtol·C < α_i < (1 − rtol)·C (an inexact solver never lands exactly on a bound).
    Without free vectors, the midpoint of the interval of b allowed by the bounded
    ones (as LIBSVM does): α_i = 0 needs y_i(f_i + b) ≥ 1, α_i = C needs ≤ 1.
    """
    f = np.asarray(f, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    free = (alpha > rtol * C) & (alpha < (1.0 - rtol) * C)
    if free.any():
        return float(np.mean(y[free] - f[free]))
    r = y - f  # y_i b ≥ y_i r_i at the lower bound, ≤ at the upper bound
    low = alpha <= rtol * C
    lo = np.concatenate([r[low & (y > 0)], r[~low & (y < 0)]])
    hi = np.concatenate([r[low & (y < 0)], r[~low & (y > 0)]])
    lb = lo.max() if lo.size else -np.inf
    ub = hi.min() if hi.size else np.inf
    if np.isfinite(lb) and np.isfinite(ub):
        return float(0.5 * (lb + ub))
    return float(lb if np.isfinite(lb) else (ub if np.isfinite(ub) else 0.0))


# --------------------------------------------------------------------------- outer loop


@dataclass
class OuterRun:
    """What :func:`outer_loop` hands back: the weights d the last inner step was solved
    with (the update that stopped the loop is in ``d_history`` only), that step's own
    result ``last``, and the history of the loop (see :class:`LpMKLResult`)."""

    d: np.ndarray
    last: object
    n_iter: int
    converged: bool
    d_history: list
    objective_history: list
    inner_iter: list

    def record(self) -> dict:
        """The fields every ℓp-MKL result shares with the loop."""
        names = ("d", "n_iter", "converged", "d_history", "objective_history")
        return {name: getattr(self, name) for name in names}


def outer_loop(step, d, p: float, *, tol: float, max_iter: int, warn: bool, name: str):
    """Algorithm 1's outer loop, one for every ℓp-MKL flavour (:ref:`guide-lpmkl-solvers`).

    ``step(d, last)`` solves the inner problem at the weights d, warm-started from the
    previous step's result ``last`` (None at first), and returns ``(result, scores,
    objective, inner_iter)`` with ``scores`` the d_k² ‖f_k‖². The weights then move by
    eq. (3) (:func:`lp_norm_weights`) until max_k |Δd_k| < tol, or until α = 0 leaves
    them nothing to move by; on a stop d is kept, so that it and ``last`` are one
    consistent model. ``warn``: a ConvergenceWarning naming ``name`` when ``max_iter``
    outer iterations are reached. Returns an :class:`OuterRun`.
    """
    history, objectives, inner_iter = [d.copy()], [], []
    last, converged, n, delta = None, False, 0, math.inf
    for n in range(1, max_iter + 1):
        last, scores, objective, iters = step(d, last)
        objectives.append(objective)
        inner_iter.append(iters)
        d_new = lp_norm_weights(scores, p)
        if d_new is not None:
            delta = float(np.max(np.abs(d_new - d)))
            history.append(d_new.copy())
        logger.debug("%s outer %d: max|Δd| = %.3g, objective %.6g, inner iterations %s",
                     name, n, delta, objective, iters)  # fmt: skip
        if d_new is None or delta < tol:  # α = 0: no information, the weights stay
            converged = True
            break
        d = d_new
    if not converged and warn:
        warnings.warn(
            f"{name}: max_iter={max_iter} outer iterations reached (max |Δd_k| = "
            f"{delta:.2e} > tol={tol:g}); increase max_iter or tol",
            ConvergenceWarning,
            stacklevel=3,
        )
    return OuterRun(d, last, n, converged, history, objectives, inner_iter)


@dataclass
class LpMKLResult:
    """The outcome of the outer loop ``lp_mkl`` (and of :func:`lp_mkl_full_kernel`).

    Attributes
    ----------
    d : (M,) kernel weights used by the returned SVM (‖d‖_p = 1, d ≥ 0).
    alpha : (ℓ,) dual variables of the SVM with kernel Σ d_k K_k.
    b : float, the bias.
    n_iter : int, outer iterations (inner SVM solves).
    converged : bool, whether max |Δd_k| < tol was reached.
    d_history : list of (M,) arrays, the weights before each solve and after the last
        update.
    objective_history : list of float, the inner objective (4) after each solve.
    inner_iter : list of int, inner iterations of each solve.
    info : dict, solver specific (last inner result's info, timings).
    """

    d: np.ndarray
    alpha: np.ndarray
    b: float
    n_iter: int
    converged: bool
    d_history: list = field(default_factory=list)
    objective_history: list = field(default_factory=list)
    inner_iter: list = field(default_factory=list)
    info: dict = field(default_factory=dict)


def lp_mkl(
    F: FactorStack,
    y,
    C: float,
    p: float,
    *,
    d0=None,
    tol: float = 1e-4,
    max_iter: int = 100,
    solver: str = "split",
    inner: dict | None = None,
    warm_start: bool = True,
    bias: str = "primal",
    bias_rtol: float = 1e-3,
    warn: bool = True,
) -> LpMKLResult:
    """ℓp-norm MKL on low-rank factors: Algorithm 1 with the GFB inner solver.

    Parameters
    ----------
    F : FactorStack
        Factors of the M base kernels.
    y : (ℓ,) array of ±1
    C : float > 0
    p : float ≥ 1
        p = 1 gives sparse weights (a weight that reaches 0 stays 0).
    d0 : (M,) array, optional
        Starting weights (rescaled to ‖d‖_p = 1); default M^{-1/p} each.
    tol : float, default=1e-4
        Stop when max_k |Δd_k| < tol (the paper's outer criterion).
    max_iter : int, default=100
        Outer iterations.
    solver : {"split", "naive", "shared", "newton"}
        The inner SVM solver: :func:`gfb_split` (Algorithm 2), :func:`gfb_naive` (all
        Σ r_k + 1 constraints merged), ``"shared"`` (the naive GFB on the shared-basis
        factor of :func:`shared_basis_factor`; needs compressed factors) or
        ``"newton"`` (:func:`lorak.solvers._newton.svm_newton`, primal Newton on the
        explicit features; not the paper's solver).
    inner : dict, optional
        Keyword arguments of the inner solver (``tol``, ``max_iter``, ``criterion``,
        ``weights``, ``step``, ``scale``, ``eta``, … for the GFB; ``tol``,
        ``max_iter``, ``h0``, ``h_factor``, … for Newton).
    warm_start : bool, default=True
        Start each inner solve from the previous one's auxiliary variables (split),
        α (naive, shared), or α and the bias and Huber width (newton).
    bias : {"primal", "kkt"}, default="primal"
        How b is chosen for the final α. ``"primal"``: the b minimizing the primal
        hinge loss C Σ max(0, 1 − y_i(f_i + b)) for the decision values f = K_d Yα
        (a weighted median, O(ℓ log ℓ)); ``"kkt"``: :func:`kkt_bias`, the mean over
        the free support vectors, which can be far off for an inexact α.
    bias_rtol : float
        Free-support-vector tolerance of :func:`kkt_bias` (``bias="kkt"``).
    warn : bool
        Emit a ConvergenceWarning when ``max_iter`` is reached.

    Returns
    -------
    LpMKLResult
        The returned d is the one the returned α was computed with (the last update
        is in ``d_history`` only), so (d, α, b) is one consistent SVM.
    """
    if solver not in SOLVERS:
        raise ValueError(f"unknown solver {solver!r}; valid names are {sorted(SOLVERS)}")
    if bias not in ("primal", "kkt"):
        raise ValueError(f"unknown bias {bias!r}; valid names are 'kkt', 'primal'")
    inner = dict(inner or {})
    solve = SOLVERS[solver]
    y = np.asarray(y, dtype=np.float64)
    t0 = time.perf_counter()

    def step(d, last):
        kw = dict(inner)
        if warm_start and last is not None:
            kw["alpha0"] = last.alpha
            if solver in ("split", "newton"):
                kw["state"] = last.state
        res, fnorm2 = _svm_step(solve, solver, F, y, d, C, kw)
        return res, fnorm2, res.objective, res.n_iter

    run = outer_loop(step, start_weights(F.n_kernels, p, d0), p, tol=tol, max_iter=max_iter,
                     warn=warn, name="ℓp-MKL")  # fmt: skip
    res = run.last
    b = _final_bias(F, y, run.d, res.alpha, C, bias, bias_rtol)
    info = dict(res.info, seconds=time.perf_counter() - t0, inner_converged_last=res.converged)
    return LpMKLResult(alpha=res.alpha, b=b, inner_iter=run.inner_iter, info=info, **run.record())


def _svm_step(solve, solver, F, y, d, C, kw):
    """The SVM for the weights d by the inner solver, and ‖f_k‖² from its result."""
    if solver == "shared":
        res = solve(shared_basis_factor(F, d), y, [1.0], C, **kw)
        return res, kernel_norms(F, y, res.alpha, d)
    res = solve(F, y, d, C, **kw)
    # ‖f_k‖² = d_k ‖γ_k‖², γ_k = √d_k V_kᵀYα (from the solver, no extra product)
    return res, d * block_sums(F, res.gamma)


def _final_bias(F, y, d, alpha, C, bias, bias_rtol) -> float:
    """b for the final (d, α): the primal hinge minimizer or the KKT mean."""
    dq = np.repeat(d, F.ranks) * F.rmatvec(y * alpha)
    f = F.matvec(dq)
    if bias == "primal":
        return best_bias(f, y, C)[0]
    return kkt_bias(f, y, alpha, C, rtol=bias_rtol)


# --------------------------------------------------------------------------- factors


@dataclass
class BankFactors:
    """Factors of a kernel bank on shared landmarks (see :func:`bank_factors`).

    Attributes
    ----------
    stack : FactorStack
        V = [V₁ … V_M] (explicit) or V = B S (compressed).
    normalizations : list of (m, r_k) arrays
        N_k with V_k = k_k(X, Z) N_k (float64).
    info : dict
        ``ranks`` (r_k), ``compressed_rank`` r, ``pivots`` (the pivoted Cholesky's
        rank), ``compression_error`` (relative squared Frobenius error of B S against
        V, on the rows used for the basis), ``compression_error_other`` (the same on a
        sample of the other rows, when the basis used a sample), timings.
    bank : FactorBank
        The kernels, the shared landmarks and the normalizations the factors come from
        (what a prediction needs: :func:`bank_decision`).
    """

    stack: FactorStack
    normalizations: list
    info: dict = field(default_factory=dict)
    bank: FactorBank | None = None


#: the pivoted Cholesky factor of the Gram runs down to pivots of PIVOT_RTOL ·
#: compress_rtol · λ_max, so that what it leaves out is small beside what the eigenvalue
#: cut-off then drops inside its span, and the rank after the cut-off is that of the
#: eigendecomposition of the whole Gram (the user guide's ℓp-MKL page has the figures)
PIVOT_RTOL = 1e-3
#: rows outside the basis sample on which ``compression_error_other`` is computed
ERROR_ROWS = 2000


def _largest_eigenvalue(G) -> float:
    """λ_max of the symmetric G from its upper triangle (Lanczos, 0.1 % accuracy)."""
    N = G.shape[0]
    if N <= 256:
        return float(eigh(G, lower=False, eigvals_only=True, check_finite=False)[-1]) if N else 0.0
    op = LinearOperator((N, N), matvec=lambda x: dsymv(1.0, G, np.ravel(x)), dtype=np.float64)
    v0 = np.sqrt(np.clip(np.diag(G), 0.0, None)) + 1e-300  # Gaussian columns: mostly aligned
    return float(eigsh(op, k=1, which="LA", tol=1e-3, v0=v0, return_eigenvectors=False)[0])


def _pivoted_cholesky(G, rtol: float):
    """Pivoted Cholesky factor of the PSD G (upper triangle, overwritten): the pivot
    order P (the k pivots first) and U (k × N, upper trapezoidal in pivot order) with
    G[P][:, P] ≈ UᵀU, down to pivots of PIVOT_RTOL · rtol · λ_max(G) (LAPACK ``pstrf``).
    The part left out has trace trace(G) − ‖U‖²_F."""
    lmax = _largest_eigenvalue(G)
    if not lmax > 0:
        return np.arange(G.shape[0]), np.zeros((0, G.shape[0]))
    c, piv, rank, info = dpstrf(G, tol=PIVOT_RTOL * rtol * lmax, lower=0, overwrite_a=1)
    if info < 0:  # pragma: no cover - an argument error of the LAPACK call
        raise RuntimeError(f"pstrf failed (info = {info})")
    return (piv - 1).astype(np.intp), np.triu(c[:rank])


def bank_factors(
    bank,
    X,
    Z,
    *,
    landmark_weights=None,
    rtol=None,
    dtype=np.float64,
    compress: bool = True,
    compress_rtol: float = 1e-10,
    compress_rows: int | None = 20000,
    rng: np.random.Generator | None = None,
    budget: int | None = None,
) -> BankFactors:
    """Nyström factors V_k = k_k(X, Z) N_k of every kernel of a bank, shared landmarks.

    Parameters
    ----------
    bank : resolved :class:`lorak.kernels.KernelBank`
    X : (ℓ, d) array or CSR
    Z : (m, d) landmarks, shared by all kernels
    landmark_weights : (m,) array, optional (Drineas–Mahoney column weights)
    rtol : float, optional
        Eigenvalue cut-off of each W_k (see :func:`lorak.decompose.nystrom_normalization`).
        Wide kernels have nearly rank-deficient W_k: their r_k < m.
    dtype : float32 or float64
        Storage of V (or of the basis B); the normalizations and S stay float64.
    compress : bool, default=True
        Return V = B S through an orthonormal basis of the leading eigenspace of VᵀV
        (:ref:`guide-lpmkl-solvers`).
    compress_rtol : float, default=1e-10
        Eigenvalues of VᵀV at or below compress_rtol · λ_max are dropped.
    compress_rows : int or None, default=20000
        Rows used to form VᵀV (a uniform sample when ℓ is larger; None: all rows). With a
        sample, ``compression_error`` is exact on it and ``compression_error_other`` is
        computed on up to ``ERROR_ROWS`` of the other rows.
    rng : Generator, for the row sample.
    budget : int, optional, bytes per chunk (default: the library's memory budget).

    Memory: the output (ℓ × Σ r_k, or ℓ × r) plus one chunk.
    """
    t0 = time.perf_counter()
    Z64 = Z.toarray() if hasattr(Z, "toarray") else np.asarray(Z, dtype=np.float64)
    factors = FactorBank.nystrom(bank, Z64, landmark_weights=landmark_weights, rtol=rtol)
    Xf = X if hasattr(X, "toarray") else np.asarray(X)
    Ns = list(factors.normalizations)
    ranks = factors.ranks
    total = int(ranks.sum())
    n = Xf.shape[0]
    step = chunk_rows(len(Ns) * factors.points.shape[0] + total, 8, budget, n)
    chunks = _FactorChunks(factors.block, Xf, step)
    info = {"ranks": ranks.tolist(), "total_rank": total}
    if not compress:
        V = np.empty((n, total), dtype=dtype, order="F")  # faster products (see FactorStack)
        for s, e, Vc in chunks(None):
            V[s:e] = Vc
        info["seconds"] = time.perf_counter() - t0
        return BankFactors(FactorStack(V, ranks), Ns, info, factors)

    # pass 1: the Gram of V on all rows or a sample, its pivoted Cholesky factor, and
    # the eigenvectors inside the pivots' span
    rows, rng = _basis_rows(n, compress_rows, rng)
    n_basis = n if rows is None else int(rows.size)
    by_rows = n_basis < total
    G, Vs = _factor_gram(chunks, rows, total, by_rows)
    trace = float(np.trace(G))
    perm, U = _pivoted_cholesky(G, compress_rtol)  # G ≈ UᵀU in pivot order; G consumed
    del G
    k = U.shape[0]
    mu, W, keep = _span_eigen(U, compress_rtol)
    info.update(compressed_rank=int(keep.sum()), compression_rows=n_basis, pivots=k)
    B = np.empty((n, int(keep.sum())), dtype=dtype, order="F")  # faster products
    if by_rows:
        Bs, S, T, err = _basis_by_rows(U, perm, W[:, keep], mu[keep], Vs, trace, rows)
        if Bs is not None:
            B[:] = Bs
        del Vs, Bs
    else:
        S, T, err = _basis_by_columns(U, perm, W[:, keep], mu, keep, trace, total)
    del U, W
    info["compression_error"] = max(err, 0.0) / trace if trace > 0 else 0.0
    # pass 2: B on all rows (unless known from the row Gram)
    if T is not None:
        cols = None if by_rows else perm[:k]
        for s, e, Vc in chunks(None):
            B[s:e] = (Vc if cols is None else Vc[:, cols]) @ T
    if rows is not None:
        info["compression_error_other"] = _other_rows_error(chunks, B, S, rows, n, rng)
    info["seconds"] = time.perf_counter() - t0
    # BᵀB is I up to round-off (exactly so only on the rows used for the basis): the
    # solver uses the computed BᵀB (O(ℓ r²) once) rather than assuming I
    return BankFactors(FactorStack(ranks=ranks, basis=B, coef=S), Ns, info, factors)


class _FactorChunks:
    """``chunks(rows)``: (start, end, V rows as float64) over X's row chunks (all rows
    when ``rows`` is None, else those indices); one distance GEMM per chunk shared by
    all kernels."""

    def __init__(self, block, Xf, step):
        self.block, self.Xf, self.step = block, Xf, step

    def __call__(self, rows):
        n, step, Xf = self.Xf.shape[0], self.step, self.Xf
        for s in range(0, rows.shape[0] if rows is not None else n, step):
            if rows is None:
                e = min(s + step, n)
                yield s, e, self.block(as_float64(Xf[s:e]))
            else:
                idx = rows[s : s + step]
                yield s, s + idx.size, self.block(as_float64(Xf[idx]))


def _basis_rows(n, compress_rows, rng):
    """The sorted rows the basis is computed on (None: all) and the Generator drawing
    them (a fixed one when none is given)."""
    if compress_rows is None or n <= compress_rows:
        return None, rng
    rng = np.random.default_rng(0) if rng is None else rng
    return np.sort(rng.choice(n, size=compress_rows, replace=False)), rng


def _factor_gram(chunks, rows, total, by_rows):
    """The Gram of V (float64, upper triangle, by symmetric rank-k updates) on
    ``rows``: V Vᵀ when ``by_rows`` (fewer rows than columns; the rows Vs returned too),
    else VᵀV (Vs None)."""
    if by_rows:
        Vs = np.concatenate([Vc for _, _, Vc in chunks(rows)], axis=0)
        return dsyrk(1.0, Vs.T, trans=1), Vs  # Vs Vsᵀ: Vs.T is Fortran-ordered, no copy
    G = np.zeros((total, total), order="F")
    for _, _, Vc in chunks(rows):
        G = dsyrk(1.0, Vc.T, beta=1.0, c=G, overwrite_c=1)  # G += VcᵀVc
    return G, None


def _span_eigen(U, compress_rtol):
    """The eigenpairs (μ decreasing, W) of U Uᵀ — the Gram inside the pivots' span —
    and the mask of those above compress_rtol · μ_max."""
    k = U.shape[0]
    if not k:  # V = 0
        return np.zeros(0), np.zeros((0, 0)), np.zeros(0, dtype=bool)
    mu, W = eigh(dsyrk(1.0, U.T, trans=1), lower=False, check_finite=False)
    mu, W = mu[::-1], W[:, ::-1]
    return mu, W, mu > compress_rtol * mu[0]


def _basis_by_rows(U, perm, Wk, mk, Vs, trace, rows):
    """From V Vᵀ ≈ L Lᵀ (L = Uᵀ in row order): B = L W μ^{-1/2}, orthonormal on the
    basis rows, and S = BᵀV the projection of V on it. Returns (B on the basis rows
    when they are all rows, else None; S; T with B = V T on every row, or None; the
    squared error ‖V − B BᵀV‖²)."""
    L = np.empty((Vs.shape[0], U.shape[0]))
    L[perm] = U.T
    Bs = (L @ Wk) / np.sqrt(mk)
    del L
    S = np.ascontiguousarray(Bs.T @ Vs)
    err = trace - float(np.einsum("ij,ij->", S, S))  # ‖V − B BᵀV‖² (B orthonormal)
    if rows is None:
        return Bs, S, None, err
    # B = V T on every row, T = S⁺ (S has r independent rows)
    return None, S, np.linalg.solve(S @ S.T, S).T, err


def _basis_by_columns(U, perm, Wk, mu, keep, trace, total):
    """From VᵀV ≈ UᵀU: V ≈ Q R with Q = V_P U₁₁⁻¹ orthonormal (V_P the pivot columns),
    R = U in column order; B = Q W = V_P T needs only the pivot columns of V, S = WᵀR.
    Returns (S, T, the squared error: outside the pivots' span plus the eigenvalues
    dropped inside it)."""
    k = U.shape[0]
    R = np.empty((k, total))
    R[:, perm] = U
    S = np.ascontiguousarray(Wk.T @ R)
    T = solve_triangular(U[:, :k], Wk, check_finite=False)
    err = (trace - float(np.einsum("ij,ij->", U, U))) + float(mu[~keep].sum())
    return S, T, err


def _other_rows_error(chunks, B, S, rows, n, rng) -> float:
    """The relative squared error of B S on up to :data:`ERROR_ROWS` rows outside the
    basis sample (the basis is exact on the rows it was computed from)."""
    other = np.setdiff1d(np.arange(n), rows)
    pick = np.sort(rng.choice(other, size=min(other.size, ERROR_ROWS), replace=False))
    e2 = t2 = 0.0
    for j, _, Vc in chunks(pick):
        Rc = Vc - B[pick[j : j + Vc.shape[0]]].astype(np.float64) @ S
        e2 += float(np.einsum("ij,ij->", Rc, Rc))
        t2 += float(np.einsum("ij,ij->", Vc, Vc))
    return e2 / t2 if t2 > 0 else 0.0


# --------------------------------------------------------------------------- the fit


def default_bank(n_kernels: int = 50, sigma_range=(1.0, 100.0)) -> KernelBank:
    """The paper's bank: Gaussians exp(−‖x−y‖²/(2σ²)), σ log-spaced over ``sigma_range``."""
    lo, hi = sigma_range
    return KernelBank.gaussian_sigmas(np.logspace(np.log10(lo), np.log10(hi), n_kernels))


def shared_landmarks(landmarks, X, n_landmarks, bank, rng) -> Landmarks:
    """The landmark set all kernels of a bank share, chosen with its middle kernel.

    (Only kernel-dependent strategies such as ``"column_norm"`` look at the kernel;
    the middle of a bandwidth grid is its typical width.)
    """
    return select_landmarks(landmarks, X, n_landmarks, rng=rng, kernel=bank[len(bank) // 2])


def landmark_points(lm: Landmarks) -> np.ndarray:
    """The landmark rows as a dense float64 array (k-means centres of sparse X are sparse)."""
    Z = lm.points.toarray() if hasattr(lm.points, "toarray") else lm.points
    return np.asarray(Z, dtype=np.float64)


def lp_mkl_factors(
    bank,
    X,
    n_landmarks,
    *,
    landmarks="uniform",
    rng: np.random.Generator,
    rtol=None,
    dtype=None,
    compress: bool = True,
    compress_rtol: float = 1e-10,
) -> BankFactors:
    """The factor stage of an ℓp-MKL fit: landmarks shared by the resolved ``bank``
    (``shared_landmarks``, strategy ``landmarks``; ``n_landmarks`` is ignored for
    given points), then every kernel factored on them (:func:`bank_factors`; ``dtype``
    None follows X). Its ``bank`` (a :class:`lorak.decompose.FactorBank`) holds the
    kernels, the landmarks and the normalizations; :func:`fit_lp_mkl` takes the result.
    """
    lm = shared_landmarks(landmarks, X, n_landmarks, bank, rng)
    return bank_factors(
        bank,
        X,
        landmark_points(lm),
        landmark_weights=lm.weights,
        rtol=rtol,
        dtype=X.dtype if dtype is None else np.dtype(dtype),
        compress=compress,
        compress_rtol=compress_rtol,
        rng=rng,
    )


@dataclass
class LpMKLFit:
    """The outcome of :func:`fit_lp_mkl`: one binary ℓp-MKL problem per row (one for
    two classes, one-vs-rest for more).

    Attributes
    ----------
    classes : (n_classes,) the sorted labels.
    kernel_weights : (P, M) d of each problem.
    dual_coef : (P, n) y_i α_i of each problem's SVM.
    intercept : (P,) biases.
    landmark_coef : (P, M, R) β_k with decision(x) = Σ_k k_k(x, Z) β_k + b.
    n_iter : (P,) outer iterations; converged : (P,) bool.
    duality_gap : (P,) relative gap of the last inner solve (NaN where the solver
        reports none).
    inner_iter, objective_history : one list per problem (see :class:`LpMKLResult`).
    not_converged : the classes whose outer loop reached ``max_iter``.
    """

    classes: np.ndarray
    kernel_weights: np.ndarray
    dual_coef: np.ndarray
    intercept: np.ndarray
    landmark_coef: np.ndarray
    n_iter: np.ndarray
    converged: np.ndarray
    duality_gap: np.ndarray
    inner_iter: list = field(default_factory=list)
    objective_history: list = field(default_factory=list)
    not_converged: list = field(default_factory=list)


def check_inner_options(
    solver: str,
    *,
    compress: bool = True,
    inner_tol=None,
    inner_max_iter: int = 3000,
    inner_criterion: str = "gap",
    eta: float = 0.0,
    gfb_scale: float = 1.0,
    gfb_weights: str = "blockwise",
) -> dict:
    """The keyword arguments of the inner SVM solver (``inner`` of :func:`lp_mkl`) from
    the parameters of :class:`lorak.LowRankMKLClassifier`; ``inner_tol`` None: 1e-3 for
    ``"newton"``, 1e-2 for the GFB solvers. Refuses an inner solver with options it does
    not take, with a message naming the parameter and the fix."""
    if inner_tol is not None:
        check_bound(inner_tol, "inner_tol", low=0, strict=False)
    check_bound(inner_max_iter, "inner_max_iter", low=1, strict=False, integer=True)
    check_bound(eta, "eta", low=0, strict=False)
    check_bound(gfb_scale, "gfb_scale", low=0)
    if solver not in SOLVERS:
        raise ValueError(f"unknown solver {solver!r}; valid names are {sorted(SOLVERS)}")
    if gfb_weights not in WEIGHTS:
        raise ValueError(f"unknown gfb_weights {gfb_weights!r}; valid names are {list(WEIGHTS)}")
    if inner_criterion not in ("objective", "gap"):
        raise ValueError(
            f"unknown inner_criterion {inner_criterion!r}; valid names are 'gap', 'objective'"
        )
    if solver in ("shared", "newton") and not compress:
        raise ValueError(
            f"solver={solver!r} works in the shared basis of the factors: it needs "
            "compress=True (or choose solver='split' or 'naive')"
        )
    if solver == "newton" and eta != 0:
        raise ValueError(
            f"eta={eta!r} is a GFB option (the paper's Remark 1); solver='newton' "
            "solves the plain SVM: use eta=0"
        )
    if solver == "newton" and inner_criterion != "gap":
        raise ValueError(
            f"inner_criterion={inner_criterion!r} is a GFB option; solver='newton' "
            "stops on the duality gap: use inner_criterion='gap'"
        )
    if inner_tol is None:
        inner_tol = 1e-3 if solver == "newton" else 1e-2
    if solver == "newton":
        return {"tol": inner_tol, "max_iter": inner_max_iter}
    inner = {"tol": inner_tol, "max_iter": inner_max_iter, "criterion": inner_criterion,
             "eta": eta, "scale": gfb_scale}  # fmt: skip
    if solver == "split":
        inner["weights"] = gfb_weights
    return inner


def fit_lp_mkl(
    factors: BankFactors,
    y,
    *,
    C: float = 1.0,
    p: float = 2.0,
    tol: float = 1e-4,
    max_iter: int = 50,
    solver: str = "newton",
    verbose: bool = False,
    **inner,
) -> LpMKLFit:
    """ℓp-MKL classification on the factors of a bank (:func:`lp_mkl_factors`).

    For each binary problem (one-vs-rest beyond two classes): the outer loop ``lp_mkl``
    with the inner solver ``solver`` and the options ``inner`` (checked and completed by
    ``check_inner_options``), then the landmark coefficients β_k = d_k N_k V_kᵀ(y∘α)
    of its decision function. One ConvergenceWarning names the classes whose outer loop
    reached ``max_iter``.
    """
    classes, y_idx = np.unique(y, return_inverse=True)
    F, normalizations = factors.stack, factors.normalizations
    problems = [1] if classes.size == 2 else list(range(classes.size))
    opts = check_inner_options(solver, **inner)
    P, M, n = len(problems), F.n_kernels, F.n_samples
    R = normalizations[0].shape[0] if normalizations else 0
    out = LpMKLFit(
        classes=classes,
        kernel_weights=np.empty((P, M)),
        dual_coef=np.empty((P, n)),
        intercept=np.empty(P),
        landmark_coef=np.zeros((P, M, R)),
        n_iter=np.empty(P, dtype=int),
        converged=np.empty(P, dtype=bool),
        duality_gap=np.full(P, np.nan),
    )
    for j, cls in enumerate(problems):
        yb = np.where(y_idx == cls, 1.0, -1.0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            res = lp_mkl(F, yb, float(C), float(p), tol=tol, max_iter=max_iter, solver=solver,
                         inner=opts)  # fmt: skip
        if any(issubclass(w.category, ConvergenceWarning) for w in caught):
            out.not_converged.append(classes[cls])
        out.kernel_weights[j] = res.d
        out.dual_coef[j] = yb * res.alpha
        out.intercept[j] = res.b
        out.n_iter[j] = res.n_iter
        out.converged[j] = res.converged
        out.duality_gap[j] = res.info.get("relative_gap", np.nan)
        out.inner_iter.append(res.inner_iter)
        out.objective_history.append(res.objective_history)
        # β_k = d_k N_k V_kᵀ(y∘α): decision(x) = Σ_k k_k(x, Z) β_k + b
        q = F.rmatvec(out.dual_coef[j])
        for k in range(M):
            out.landmark_coef[j, k] = res.d[k] * (normalizations[k] @ q[F.block(k)])
        if verbose:
            logger.info(
                "lp-mkl problem %d/%d: %d outer iterations, %d inner, d = %s",
                j + 1, P, res.n_iter, sum(res.inner_iter), np.round(res.d, 4),
            )  # fmt: skip
    if out.not_converged:
        warnings.warn(
            f"ℓp-MKL did not converge within max_iter={max_iter} outer iterations "
            f"(tol={tol:g}) for class(es) {out.not_converged}; increase max_iter or tol",
            ConvergenceWarning,
            stacklevel=3,
        )
    return out


def bank_decision(kernels, Z, landmark_coef, intercept, X) -> np.ndarray:
    """Σ_k k_k(x, Z) β_k + b for every row of X, chunked: (n, P) for P problems
    (``landmark_coef`` (P, M, R), ``intercept`` (P,))."""
    n = X.shape[0]
    P, M, R = landmark_coef.shape
    out = np.empty((n, P))
    coef = landmark_coef.transpose(1, 2, 0)  # (M, R, P)
    step = chunk_rows(M * R, 8, None, n)
    for s in range(0, n, step):
        e = min(s + step, n)
        acc = np.zeros((e - s, P))
        for k, B in enumerate(kernels.blocks(as_float64(X[s:e]), Z)):
            acc += B @ coef[k]
        out[s:e] = acc + intercept[None, :]
    return out


# --------------------------------------------------------------------------- full kernel


class GaussianGrams:
    """Σ_k d_k K_k and αᵀY K_k Yα for Gaussian kernels from one squared-distance matrix.

    Parameters
    ----------
    sqdist : (n, n) array of ‖x_i − x_j‖² (float32 halves the memory).
    bandwidths : (M,) b_k of exp(−‖x − y‖² / b_k).

    Both methods sweep the distances in cache-sized row blocks of about ``BLOCK``
    entries (the same arithmetic as whole-matrix passes, several times faster: the
    user guide's ℓp-MKL page, "The inner solvers, measured").
    """

    #: entries of a row block (256 KiB of float32 distances: stays in a core's L2)
    BLOCK = 1 << 16

    def __init__(self, sqdist, bandwidths):
        self.D = sqdist
        self.b = np.asarray(bandwidths, dtype=np.float64)

    @property
    def n_kernels(self) -> int:
        return int(self.b.size)

    def _blocks(self, D, dtypes):
        """(row slice, distances of the block, one buffer of its shape per dtype)."""
        rows = max(1, self.BLOCK // max(D.shape[1], 1))
        bufs = [np.empty((min(rows, D.shape[0]), D.shape[1]), dtype=t) for t in dtypes]
        for i in range(0, D.shape[0], rows):
            sl = slice(i, min(i + rows, D.shape[0]))
            yield sl, D[sl], [b[: sl.stop - sl.start] for b in bufs]

    def weighted(self, d, rows=None, cols=None) -> np.ndarray:
        """Σ_k d_k exp(−D/b_k) (float64), optionally on a sub-block."""
        D = self.D if rows is None else self.D[rows]
        if cols is not None:
            D = D[:, cols]
        live = [(D.dtype.type(-1.0 / bk), dk) for dk, bk in zip(d, self.b, strict=True) if dk > 0]
        out = np.zeros(D.shape)
        if not live or out.size == 0:
            return out
        for sl, Db, (tmp, prod) in self._blocks(D, (D.dtype, np.float64)):
            acc = out[sl]
            for scale, dk in live:
                np.multiply(Db, scale, out=tmp)
                np.exp(tmp, out=tmp)
                np.multiply(tmp, dk, out=prod)  # d_k K_k in float64, as Σ accumulates
                acc += prod
        return out

    def quad_forms(self, v, support) -> np.ndarray:
        """[vᵀ K_k v] over the rows/cols ``support`` (v given on the support)."""
        D = self.D[np.ix_(support, support)]
        v = np.asarray(v, dtype=np.float64)
        out = np.zeros(self.n_kernels)
        scales = [D.dtype.type(-1.0 / bk) for bk in self.b]
        for sl, Db, (tmp,) in self._blocks(D, (D.dtype,)):
            vb = v[sl]
            for k, scale in enumerate(scales):
                np.multiply(Db, scale, out=tmp)
                np.exp(tmp, out=tmp)
                out[k] += float(vb @ (tmp @ v))
        return out


def lp_mkl_full_kernel(
    grams,
    y,
    C: float,
    p: float,
    *,
    d0=None,
    tol: float = 1e-4,
    max_iter: int = 100,
    svc_tol: float = 1e-3,
    cache_size: float = 500,
    warn: bool = True,
) -> tuple[LpMKLResult, object]:
    """The full-kernel ℓp-MKL reference: Algorithm 1 with scikit-learn's SVC.

    Each outer iteration fits ``SVC(kernel="precomputed", C=C)`` on the n × n
    Σ_k d_k K_k and updates d by eq. (3) with ‖f_k‖² = d_k² (yα)ᵀK_k(yα) over the
    support vectors. ``grams`` provides ``weighted(d)``, ``quad_forms(v, support)`` and
    ``n_kernels`` (e.g. :class:`GaussianGrams`). O(n²) memory: small n only.

    Returns ``(result, svc)`` — the last fitted SVC (its ``support_``, ``dual_coef_``,
    ``intercept_`` with the returned weights).
    """
    from sklearn.svm import SVC

    y = np.asarray(y, dtype=np.float64)
    t0 = time.perf_counter()

    def step(d, last):
        K = grams.weighted(d)
        svc = SVC(C=C, kernel="precomputed", tol=svc_tol, cache_size=cache_size).fit(K, y)
        sv = svc.support_
        v = svc.dual_coef_[0]  # y_i α_i on the support vectors (classes_ = [-1, 1])
        objective = 0.5 * float(v @ (K[np.ix_(sv, sv)] @ v)) - float(np.abs(v).sum())
        return svc, d**2 * grams.quad_forms(v, sv), objective, int(np.sum(svc.n_iter_))

    run = outer_loop(step, start_weights(grams.n_kernels, p, d0), p, tol=tol,
                     max_iter=max_iter, warn=warn, name="full-kernel ℓp-MKL")  # fmt: skip
    svc = run.last
    alpha = np.zeros(y.size)
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    res = LpMKLResult(alpha=alpha, b=float(svc.intercept_[0]), inner_iter=run.inner_iter,
                      info={"seconds": time.perf_counter() - t0}, **run.record())  # fmt: skip
    return res, svc

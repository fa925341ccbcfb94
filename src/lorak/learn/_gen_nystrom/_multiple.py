"""Generalized Nyström with multiple kernels (Zhang et al. 2017, §4), pure functions.

Blocks T^(j) = α_j S^(j) and weights α of objective (17) by alternating minimization,
with an exact subspace step after each alternation (``rescale=True``). The algorithm
and its decisions: :ref:`guide-gnys-solver`, section "Many kernels: the alternation in
detail".
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import nnls

from ..._core.linalg import symmetrize as _sym
from ..._core.validation import check_float_array
from ._path import DEFAULT_LAMBDA_GRID, lambda_path
from ._problem import (
    GenNystromProblem,
    check_options,
    kept_eigenpairs,
    prior_factor,
    projection_dtype,
    solve_gen_nystrom,
)

__all__ = [
    "BlockState",
    "MKGenNystromFit",
    "MKGenNystromProblem",
    "alternate_blocks",
    "check_bank_blocks",
    "mk_alignment_lambda_path",
    "mk_prior_fit",
    "uniform_prior_factors",
]

_TINY = np.finfo(np.float64).tiny


@dataclass
class MKGenNystromProblem:
    """Pieces of objective (17) shared by every λ.

    ``blocks[j]`` is the single-kernel :class:`GenNystromProblem` of kernel j built on
    the (possibly compressed) labeled rows with target K̂; its ``M`` (r × m̃, = Ê_l V_j,
    with MᵀM = diag(a_j)) maps block j's V-basis variable X_j = V_jᵀ T^(j) V_j to the
    labeled-row kernel M X_j Mᵀ. ``K_hat`` is the (compressed) target, ``c0`` the
    constant ‖K*‖² − ‖K̂‖², ``Kc`` the centered target HK*H in the same coordinates,
    ``q`` = Qᵀ1/√l (so that QᵀHQ = I − q qᵀ).
    """

    blocks: list
    K_hat: np.ndarray
    c0: float
    Kc: np.ndarray
    Kc_norm: float
    q: np.ndarray
    compressed: bool

    @classmethod
    def from_blocks(cls, Els, Ws, Y, *, rtol: float = 1e-10) -> MKGenNystromProblem:
        """From E_l^(j) (l × m̃ each), W_j (m̃ × m̃ each) and Y with K* = Y Yᵀ (l × c)."""
        Els, Ws = check_bank_blocks(Els, Ws)
        l, mt = Els[0].shape
        Y = check_float_array(
            Y, "Y", shape=(l, None), what="a target factor, one row per row of E_l"
        )
        Yc = Y - Y.mean(axis=0)
        K_norm2 = float(np.sum((Y.T @ Y) ** 2))
        Kc_norm = float(np.linalg.norm(Yc.T @ Yc))
        ones = np.full(l, 1.0 / math.sqrt(l))
        compressed = l > len(Els) * mt
        if compressed:
            Q, _ = np.linalg.qr(np.hstack(Els), mode="reduced")
            Els = [Q.T @ E for E in Els]
            Yq, Ycq, q = Q.T @ Y, Q.T @ Yc, Q.T @ ones
        else:
            Yq, Ycq, q = Y, Yc, ones
        K_hat = Yq @ Yq.T
        blocks = [
            GenNystromProblem.from_blocks(E, W, K_hat, rtol=rtol)
            for E, W in zip(Els, Ws, strict=True)
        ]
        return cls(
            blocks=blocks,
            K_hat=K_hat,
            c0=max(K_norm2 - float(np.sum(K_hat * K_hat)), 0.0),
            Kc=Ycq @ Ycq.T,
            Kc_norm=Kc_norm,
            q=q,
            compressed=compressed,
        )

    @property
    def n_kernels(self) -> int:
        return len(self.blocks)

    # ------------------------------------------------------------ pieces of J
    def block_kernel(self, j, X) -> np.ndarray:
        """E_l^(j) T^(j) E_l^(j)ᵀ in the (compressed) labeled-row coordinates."""
        Mj = self.blocks[j].M
        return _sym(Mj @ X @ Mj.T)

    def stack(self, Xs) -> np.ndarray:
        """A = Σ_j E_l^(j) T^(j) E_l^(j)ᵀ (compressed coordinates)."""
        A = np.zeros_like(self.K_hat)
        for j, X in enumerate(Xs):
            A += self.block_kernel(j, X)
        return A

    def prior_terms(self, Xs, alphas) -> np.ndarray:
        """‖T^(j) − α_j S₀^(j)‖²_F per block."""
        out = np.empty(len(Xs))
        for j, (X, a) in enumerate(zip(Xs, alphas, strict=True)):
            D = X - a * self.blocks[j].P_t
            out[j] = float(np.vdot(D, D))
        return out

    def data_term(self, A) -> float:
        R = self.K_hat - A
        return float(np.vdot(R, R)) + self.c0

    def objective(self, Xs, alphas, lam: float, A=None) -> float:
        """J of eq. (17)."""
        A = self.stack(Xs) if A is None else A
        return lam * float(self.prior_terms(Xs, alphas).sum()) + self.data_term(A)

    def residual_problem(self, j, A_minus_j) -> GenNystromProblem:
        """Block j's single-kernel problem with target K̂ − Σ_{k≠j} (the residual)."""
        b = self.blocks[j]
        R = self.K_hat - A_minus_j
        B_t = _sym(b.M.T @ R @ b.M)
        return dataclasses.replace(b, B_t=B_t, K_norm2=float(np.vdot(R, R)) + self.c0)

    def alpha(self, j, X) -> float:
        """Eq. (19): α_j = max(⟨T^(j), S₀^(j)⟩ / ‖S₀^(j)‖², 0)."""
        b = self.blocks[j]
        return max(float(np.vdot(X, b.P_t)) / b.P_norm2, 0.0) if b.P_norm2 > 0 else 0.0

    # ------------------------------------------------------------ criterion
    def target_alignment(self, A) -> float:
        """ρ[Σ_j E_l^(j) T^(j) E_l^(j)ᵀ, K*] (centered, eq. 14) from the compressed A."""
        q = self.q
        Aq = A @ q
        na2 = float(np.vdot(A, A) - 2.0 * (Aq @ Aq) + (q @ Aq) ** 2)
        den = math.sqrt(max(na2, 0.0)) * self.Kc_norm
        return float(np.vdot(A, self.Kc)) / den if den > 0 else 0.0

    def criterion(self, Xs, A=None, kind: str = "paper"):
        """(score, per-block prior factors (M,), target factor) of the §6.2 criterion."""
        A = self.stack(Xs) if A is None else A
        rho = np.ones(len(Xs))
        for j, X in enumerate(Xs):
            if np.any(X):
                rho[j] = self.blocks[j].criterion(X, kind)[1]
            else:
                rho[j] = np.nan  # a zero block is not part of the kernel
        t = self.target_alignment(A)
        return float(np.nanprod(rho)) * t, rho, t


@dataclass
class MKGenNystromFit:
    """Result of :func:`~lorak.learn.fit_mk_generalized_nystroem` (and of its λ path,
    ``mk_alignment_lambda_path``).

    Attributes
    ----------
    T : list of (m̃, m̃) learned blocks T^(j) = α_j S^(j) (landmark basis), PSD.
    S0 : list of (m̃, m̃) priors W_j⁺.
    alphas : (M,) weights α.
    lam : λ of the solution; lam_grid : (g,) λ values tried (ascending).
    scores : (g,) the criterion per λ; rho_blocks : (g, M) its per-block factors (NaN
        for a zero block); rho_target : (g,) its target factor.
    path_n_iter : (g,) alternations per λ on the path; n_iter : alternations in total.
    n_solves : inner ADMM iterations in total.
    objective : J at the solution; objective_history : J after each alternation at λ*
        (its path alternations, then the refinement), starting from the initial point.
    converged : whether the final alternations met ``tol``.
    problem : the problem (17) (``MKGenNystromProblem``); Xs : the blocks in their V
        bases.
    F : list of (m̃, r_j) factors with F_j F_jᵀ = T^(j) in W_j's metric, or None
        (:func:`~lorak.learn.fit_mk_generalized_nystroem` sets them).
    criterion : the criterion that chose λ (None for a given λ); cv : the
        :class:`~lorak.learn.LambdaCV` of a cross-validated λ, else None.
    """

    T: list
    S0: list
    alphas: np.ndarray
    lam: float
    lam_grid: np.ndarray
    scores: np.ndarray
    rho_blocks: np.ndarray
    rho_target: np.ndarray
    path_n_iter: np.ndarray
    n_iter: int
    n_solves: int
    objective: float
    objective_history: list
    converged: bool
    problem: MKGenNystromProblem
    Xs: list
    F: list | None = None
    criterion: str | None = None
    cv: object | None = None


@dataclass
class BlockState:
    """Iterate: blocks X_j (V bases), weights, block kernels B_j = E_j T^(j) E_jᵀ
    (compressed coordinates) and their sum A, ADMM restarts per block."""

    Xs: list
    alphas: np.ndarray
    Bs: list
    restarts: list
    lam: float | None = None

    @property
    def A(self):
        return np.sum(self.Bs, axis=0)

    def copy(self):
        return BlockState(
            list(self.Xs), self.alphas.copy(), list(self.Bs), list(self.restarts), self.lam
        )


def _prior_kernels(problem):
    """E_j S₀^(j) E_jᵀ per block and their Gram matrix (cached on the problem)."""
    cache = problem.__dict__.get("_prior_cache")
    if cache is None:
        C = [problem.block_kernel(j, b.P_t) for j, b in enumerate(problem.blocks)]
        M = len(C)
        G = np.empty((M, M))
        for i in range(M):
            for k in range(i, M):
                G[i, k] = G[k, i] = float(np.vdot(C[i], C[k]))
        rhs = np.array([float(np.vdot(Ci, problem.K_hat)) for Ci in C])
        cache = problem.__dict__["_prior_cache"] = (C, G, rhs)
    return cache


def _subspace_step(problem, st, lam):
    """Exact minimization of J over T^(j) ← c_j T^(j) + e_j S₀^(j), c, e ≥ 0, α by eq. 19.

    With α eliminated (eq. 19), J = λ Σ_j ‖Π⊥_j T^(j)‖² + ‖K̂ − Σ_j E_j T^(j) E_jᵀ‖²
    (Π⊥_j removes the direction of S₀^(j)); on the 2M directions this is a
    nonnegative least-squares problem. Returns the new (Xs, alphas, Bs) or None.
    """
    M = problem.n_kernels
    C, GC, rhsC = _prior_kernels(problem)
    B = st.Bs
    n = 2 * M
    G = np.empty((n, n))
    for i in range(M):
        for k in range(i, M):
            G[i, k] = G[k, i] = float(np.vdot(B[i], B[k]))
        for k in range(M):
            G[i, M + k] = G[M + k, i] = float(np.vdot(B[i], C[k]))
    G[M:, M:] = GC
    perp = np.empty(M)
    for j, (X, b) in enumerate(zip(st.Xs, problem.blocks, strict=True)):
        c = float(np.vdot(X, b.P_t))
        perp[j] = max(float(np.vdot(X, X)) - (c * c / b.P_norm2 if b.P_norm2 > 0 else 0.0), 0.0)
    G[np.arange(M), np.arange(M)] += lam * perp
    rhs = np.concatenate([[float(np.vdot(Bi, problem.K_hat)) for Bi in B], rhsC])
    ev, U = np.linalg.eigh(G)
    top = ev[-1] if ev.size else 0.0
    if not top > 0:
        return None
    keep = ev > 1e-12 * top
    sq = np.sqrt(ev[keep])
    Cm = sq[:, None] * U[:, keep].T  # CmᵀCm = G on the kept part
    coef, _ = nnls(Cm, (U[:, keep].T @ rhs) / sq)
    Xs, Bs = [], []
    for j, b in enumerate(problem.blocks):
        Xs.append(coef[j] * st.Xs[j] + coef[M + j] * b.P_t)
        Bs.append(coef[j] * B[j] + coef[M + j] * C[j])
    alphas = np.array([problem.alpha(j, X) for j, X in enumerate(Xs)])
    return Xs, alphas, Bs


def alternate_blocks(
    problem, st, lam, *, tol, max_sweeps, inner_max_iter, solver, rescale, history
):
    """Alternations at one λ from the state ``st`` (updated in place).

    Returns (alternations, inner iterations, converged, J).
    """
    M = problem.n_kernels
    eig_dtype = projection_dtype(tol)
    if st.lam != lam:
        st.restarts = [None] * M
        st.lam = lam
    A = st.A
    J = problem.objective(st.Xs, st.alphas, lam, A)
    if history is not None:
        history.append(J)
    n_inner = 0
    converged = False
    sweeps = 0
    for sweeps in range(1, max_sweeps + 1):  # noqa: B007
        J_old = J
        for j in range(M):
            X = st.Xs[j]
            A_mj = A - st.Bs[j]
            prob = problem.residual_problem(j, A_mj)
            f_old = prob.objective(X, lam, st.alphas[j])
            res = solve_gen_nystrom(
                prob,
                lam,
                float(st.alphas[j]),
                x0=X,
                solver=solver,
                tol=tol,
                max_iter=inner_max_iter,
                history=False,
                restart=st.restarts[j],
                eig_dtype=eig_dtype,
            )
            n_inner += res.n_iter
            if res.info["objective"] < f_old:
                st.Xs[j] = res.x
                st.Bs[j] = problem.block_kernel(j, res.x)
                A = A_mj + st.Bs[j]
                st.restarts[j] = res.info if res.info.get("solver") == "admm" else None
        st.alphas = np.array([problem.alpha(j, X) for j, X in enumerate(st.Xs)])
        J = problem.objective(st.Xs, st.alphas, lam, A)
        if rescale:
            step = _subspace_step(problem, st, lam)
            if step is not None:
                Xs, alphas, Bs = step
                A_c = np.sum(Bs, axis=0)
                J_c = problem.objective(Xs, alphas, lam, A_c)
                if J_c < J:
                    st.Xs, st.alphas, st.Bs, A, J = Xs, alphas, Bs, A_c, J_c
                    # a rescaled block starts a new ADMM run (the multiplier scales too,
                    # but its penalty ρ was balanced for the old iterate)
                    st.restarts = [None] * M
        A = st.A  # re-summed: no drift from the incremental updates
        J = problem.objective(st.Xs, st.alphas, lam, A)
        if history is not None:
            history.append(J)
        if J_old - J <= tol * max(abs(J), _TINY):
            converged = True
            break
    return sweeps, n_inner, converged, J


def mk_alignment_lambda_path(
    Els,
    Ws,
    Y,
    *,
    lam="auto",
    lam_grid=DEFAULT_LAMBDA_GRID,
    solver: str = "auto",
    tol: float = 1e-4,
    path_tol: float | None = None,
    max_iter: int = 100,
    inner_max_iter: int = 500,
    path_inner_max_iter: int = 1,
    rtol: float = 1e-10,
    criterion: str = "paper",
    rescale: bool = True,
    problem: MKGenNystromProblem | None = None,
) -> MKGenNystromFit:
    """Learn T^(1..M) and α of eq. (17), choosing λ on a grid when ``lam="auto"``.

    Parameters
    ----------
    Els : list of (l, m̃) kernel blocks between the labeled rows and the shared landmarks.
    Ws : list of (m̃, m̃) landmark kernels.
    Y : (l, c) factor of the target, K* = Y Yᵀ (e.g. the centered class indicator).
    lam : "auto" or a positive number.
    lam_grid : λ values searched (default 10⁻⁵ … 10⁵).
    solver : inner solver of the block problems ("auto", "admm", "fista", "pg").
    tol : relative objective decrease per alternation that stops the final λ, and the
        inner tolerance there.
    path_tol : the same along the λ path (default max(tol, 1e-3)).
    max_iter : alternations per λ.
    inner_max_iter : iteration cap of each block solve.
    path_inner_max_iter : the same along the λ path (default 1: each block visit is one
        warm-started ADMM iteration — inexact block minimization, still monotone).
    rtol : eigenvalue cut-off of W_j⁺.
    criterion : "paper" or "kernel": the per-block prior factor of the λ criterion.
    rescale : add the exact scaling step to each alternation (see the module docstring).
    problem : a prebuilt :class:`MKGenNystromProblem` (then Els, Ws, Y are ignored).
    """
    check_options(
        solver=solver,
        tol=tol,
        path_tol=path_tol,
        max_iter=max_iter,
        inner_max_iter=inner_max_iter,
        path_inner_max_iter=path_inner_max_iter,
        rtol=rtol,
    )
    grid = lambda_path(lam, lam_grid, criterion)
    if problem is None:
        problem = MKGenNystromProblem.from_blocks(Els, Ws, Y, rtol=rtol)
    ptol = max(tol, 1e-3) if path_tol is None else path_tol

    def run(state, lam_, tol_, hist, inner):
        return alternate_blocks(
            problem,
            state,
            lam_,
            tol=tol_,
            max_sweeps=max_iter,
            inner_max_iter=inner,
            solver=solver,
            rescale=rescale,
            history=hist,
        )

    single = grid.size == 1
    path = _mk_walk_path(
        problem,
        grid,
        criterion,
        run,
        tol if single else ptol,
        inner_max_iter if single else min(path_inner_max_iter, inner_max_iter),
    )
    if not single and ptol > tol:
        _mk_refine(grid, path, run, tol, inner_max_iter)
    return _mk_path_fit(problem, grid, path)


@dataclass
class _MKPath:
    """The λ path so far: per λ the criterion, its factors and the alternations; the
    best λ's index and state copy, its history, convergence and J; the counts."""

    scores: np.ndarray
    rho_blocks: np.ndarray
    rho_target: np.ndarray
    n_iter: np.ndarray
    n_solves: int
    best: int
    state: BlockState
    history: list
    converged: bool
    J: float
    total: int


def _mk_walk_path(problem, grid, criterion, run, path_tol, inner):
    """From §4.1's start (α_j = 1/M, T^(j) = α_j S₀^(j)) the grid from the largest λ
    down, each λ warm-started from the last; score each by ``criterion``, keep the best."""
    M = problem.n_kernels
    alphas = np.full(M, 1.0 / M)  # §4.1: α_j = 1/M, T^(j) = α_j S₀^(j)
    Xs = [a * b.P_t for a, b in zip(alphas, problem.blocks, strict=True)]
    Bs = [problem.block_kernel(j, X) for j, X in enumerate(Xs)]
    st = BlockState(Xs=Xs, alphas=alphas, Bs=Bs, restarts=[None] * M)
    g = grid.size
    scores = np.full(g, np.nan)
    rho_b = np.full((g, M), np.nan)
    rho_t = np.full(g, np.nan)
    n_path = np.zeros(g, dtype=int)
    n_solves = 0
    best = None  # (index, state copy, history, converged, J)
    for i in range(g - 1, -1, -1):  # largest λ first
        hist = []
        sweeps, n_in, conv, J = run(st, float(grid[i]), path_tol, hist, inner)
        n_path[i] = sweeps
        n_solves += n_in
        scores[i], rho_b[i], rho_t[i] = problem.criterion(st.Xs, st.A, criterion)
        if best is None or scores[i] > scores[best[0]]:
            snap = st.copy()
            best = (i, snap, hist, conv, J)
    i_best, st_b, history, conv, J = best
    total = int(n_path.sum())
    return _MKPath(scores, rho_b, rho_t, n_path, n_solves, i_best, st_b, history, conv, J, total)


def _mk_refine(grid, path, run, tol, inner_max_iter):
    """Alternate again at λ* to ``tol`` from its path state (``path`` updated)."""
    hist = []
    sweeps, n_in, conv, J = run(path.state, float(grid[path.best]), tol, hist, inner_max_iter)
    path.history = path.history + hist[1:]
    path.total += sweeps
    path.n_solves += n_in
    path.converged, path.J = conv, J


def _mk_path_fit(problem, grid, path) -> MKGenNystromFit:
    """The fit record of the path's chosen λ."""
    st_b = path.state
    T = [b.to_landmark_basis(X) for b, X in zip(problem.blocks, st_b.Xs, strict=True)]
    return MKGenNystromFit(
        T=T,
        S0=[b.Wp for b in problem.blocks],
        alphas=st_b.alphas.copy(),
        lam=float(grid[path.best]),
        lam_grid=grid,
        scores=path.scores,
        rho_blocks=path.rho_blocks,
        rho_target=path.rho_target,
        path_n_iter=path.n_iter,
        n_iter=path.total,
        n_solves=path.n_solves,
        objective=float(path.J),
        objective_history=path.history,
        converged=bool(path.converged),
        problem=problem,
        Xs=list(st_b.Xs),
    )


def check_bank_blocks(Els, Ws):
    """(Els, Ws) as lists of finite float64 arrays: one E_l (l × m̃) and one W (m̃ × m̃)
    per kernel, every kernel on the same labeled rows and shared landmarks; else an
    error naming the block."""
    for name, seq in (("Els", Els), ("Ws", Ws)):
        if seq is None or isinstance(seq, (str, bytes)) or not hasattr(seq, "__len__"):
            raise TypeError(f"{name} must be a sequence of 2-D arrays, one per kernel; got {seq!r}")
    if len(Els) == 0:
        raise ValueError("the kernel bank is empty (Els holds no block): give at least one kernel")
    if len(Els) != len(Ws):
        raise ValueError(f"Els holds {len(Els)} blocks but Ws {len(Ws)}: one of each per kernel")
    Els = [check_float_array(E, f"Els[{j}]") for j, E in enumerate(Els)]
    Ws = [check_float_array(W, f"Ws[{j}]") for j, W in enumerate(Ws)]
    l, mt = Els[0].shape
    for j, (E, W) in enumerate(zip(Els, Ws, strict=True)):
        if E.shape != (l, mt):
            raise ValueError(
                f"kernel {j}: E_l (Els[{j}]) is {E.shape}, expected {(l, mt)}: every kernel "
                f"must use the same {mt} shared landmarks and the same {l} labeled rows"
            )
        if W.shape != (mt, mt):
            raise ValueError(f"kernel {j}: W (Ws[{j}]) is {W.shape}, expected {(mt, mt)}")
    return Els, Ws


def uniform_prior_factors(Ws, rtol: float = 1e-10) -> list:
    """F_j with F_j F_jᵀ = W_j⁺ / M: the uniform kernel sum's Nyström factors (λ = ∞)."""
    M = len(Ws)
    return [prior_factor(kept_eigenpairs(W, rtol), 1.0 / M) for W in Ws]


def mk_prior_fit(Els, Ws, Y, *, rtol: float = 1e-10):
    """The λ = ∞ candidate of the multiple-kernel method: the uniform kernel sum,
    T^(j) = W_j⁺ / M, α_j = 1/M (its Nyström factors on the shared landmarks)."""
    problem = MKGenNystromProblem.from_blocks(Els, Ws, Y, rtol=rtol)  # checks the blocks
    M = problem.n_kernels
    Fs = uniform_prior_factors(Ws, rtol)
    T = [_sym(F @ F.T) for F in Fs]
    Xs = [b.from_landmark_basis(Tj) for b, Tj in zip(problem.blocks, T, strict=True)]
    alphas = np.full(M, 1.0 / M)
    nan = np.full(1, np.nan)
    return MKGenNystromFit(
        T=T,
        S0=[b.Wp for b in problem.blocks],
        alphas=alphas,
        lam=math.inf,
        lam_grid=np.array([math.inf]),
        scores=nan,
        rho_blocks=np.full((1, M), np.nan),
        rho_target=nan.copy(),
        path_n_iter=np.zeros(1, dtype=int),
        n_iter=0,
        n_solves=0,
        objective=problem.data_term(problem.stack(Xs)),
        objective_history=[],
        converged=True,
        problem=problem,
        Xs=Xs,
    )

"""The λ path of generalized Nyström: λ chosen by the alignment criterion (eq. 14–15),
and the λ = ∞ end of the path, the prior itself.

The decisions: :ref:`guide-gnys-solver`, section "Eq. 15 along the λ path".
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from ..._core.linalg import symmetrize as _sym
from ..._core.validation import check_number_sequence
from ._problem import (
    GenNystromProblem,
    check_beta,
    check_options,
    kept_eigenpairs,
    optimal_beta_unconstrained,
    prior_factor,
    projection_dtype,
    psd_factor,
    solve_gen_nystrom,
)

__all__ = [
    "DEFAULT_LAMBDA_GRID",
    "GenNystromFit",
    "alignment_lambda_path",
    "lambda_path",
    "path_solve",
    "prior_fit",
    "starting_beta",
]

DEFAULT_LAMBDA_GRID = tuple(10.0**k for k in range(-5, 6))


@dataclass
class GenNystromFit:
    """Result of :func:`~lorak.learn.fit_generalized_nystroem` (and of the λ path it
    runs, :func:`~lorak.learn.alignment_lambda_path`).

    Attributes
    ----------
    S : (m, m) learned inverse dictionary kernel (landmark basis), PSD.
    S0 : (m, m) prior β W⁺.
    beta, lam : the β and λ of the returned solution.
    lam_grid : (g,) the λ values tried (ascending), or (1,) the given λ.
    scores, rho_prior, rho_target : (g,) eq. (15) and its two factors per λ.
    betas : (g,) β per λ (differs only with β optimized).
    path_n_iter : (g,) solver iterations per λ on the path.
    n_iter : total solver iterations (path and refinement).
    objective : J at the solution; objective_history : J per iteration at λ*
        (its path iterations, then the refinement).
    converged : whether the final solve met ``tol``.
    info : the final solver's diagnostics.
    problem : the :class:`GenNystromProblem` (E_l, W⁺, eigenbasis, …).
    X : the solution in the V basis.
    F : (m, r) factor with F Fᵀ = S over the spectrum kept in W's metric
        (:func:`psd_factor`), largest first; None where S was formed otherwise
        (:func:`~lorak.learn.fit_generalized_nystroem` always sets it).
    criterion : the criterion that chose λ ("cv", "paper" or "kernel"; None for a
        given λ) — set by :func:`~lorak.learn.fit_generalized_nystroem`.
    cv : the :class:`~lorak.learn.LambdaCV` of a cross-validated λ, else None.
    prior_gamma_cv : the :class:`~lorak.learn.PriorGammaCV` of a prior's graph weight
        chosen with λ (``prior_gammas`` of
        :func:`~lorak.learn.fit_generalized_nystroem`), else None.
    """

    S: np.ndarray
    S0: np.ndarray
    beta: float
    lam: float
    lam_grid: np.ndarray
    scores: np.ndarray
    rho_prior: np.ndarray
    rho_target: np.ndarray
    betas: np.ndarray
    path_n_iter: np.ndarray
    n_iter: int
    objective: float
    objective_history: list
    converged: bool
    info: dict
    problem: GenNystromProblem
    X: np.ndarray
    F: np.ndarray | None = None
    criterion: str | None = None
    cv: object | None = None
    prior_gamma_cv: object | None = None


def lambda_path(lam, lam_grid, criterion) -> np.ndarray:
    """The sorted λ values a fit visits (``lam="auto"``: the grid; else ``[lam]``), after
    checking ``criterion`` — shared by the single- and multiple-kernel fits."""
    if criterion not in ("paper", "kernel"):
        raise ValueError(f"unknown criterion {criterion!r}; valid names are 'paper', 'kernel'")
    if isinstance(lam, str):
        if lam != "auto":
            raise ValueError(f"unknown lam {lam!r}; give 'auto' or a positive number")
        return np.unique(check_number_sequence(lam_grid, "lam_grid"))  # finite, > 0
    if isinstance(lam, bool) or not isinstance(lam, numbers.Real) or not 0 < lam < math.inf:
        raise ValueError(f"lam must be 'auto' or a positive number; got {lam!r}")
    return np.array([float(lam)])


def alignment_lambda_path(
    El,
    W,
    K,
    *,
    mask=None,
    lam="auto",
    lam_grid=DEFAULT_LAMBDA_GRID,
    beta="heuristic",
    solver: str = "auto",
    tol: float = 1e-4,
    path_tol: float | None = None,
    max_iter: int = 500,
    rtol: float = 1e-10,
    criterion: str = "paper",
    problem: GenNystromProblem | None = None,
) -> GenNystromFit:
    """Learn S of eq. (7), choosing λ on a grid by eq. (15) when ``lam="auto"``.

    Parameters
    ----------
    El : (l, m) kernel between labeled rows and landmarks.
    W : (m, m) landmark kernel.
    K : (l, l) target (ideal kernel, eq. 6, possibly centered; or must-link target).
    mask : (l, l) or None, the must-link mask T of §3.3.
    lam : "auto" or a positive number.
    lam_grid : λ values searched by eq. (15) (default 10⁻⁵ … 10⁵, 11 values).
    beta : "heuristic" (eq. 8), "optimize" (Appendix A) or a positive number.
    solver : "auto", "admm", "fista" or "pg" (see :ref:`guide-gnys-solver`).
    tol : relative tolerance of the final solve.
    path_tol : tolerance along the λ path (default max(tol, 1e-2)).
    max_iter : iteration cap per solve.
    rtol : relative eigenvalue cut-off of W⁺.
    criterion : "paper" (ρ[S, S₀] · ρ[E_l S E_lᵀ, K*], eq. 15) or "kernel"
        (ρ[W S W, W] · ρ[E_l S E_lᵀ, K*]); see :meth:`GenNystromProblem.criterion`.
    problem : a prebuilt :class:`GenNystromProblem` (then El, W, K, mask are ignored).
    """
    beta = check_beta(beta)
    check_options(solver=solver, tol=tol, path_tol=path_tol, max_iter=max_iter, rtol=rtol)
    grid = lambda_path(lam, lam_grid, criterion)
    if problem is None:
        problem = GenNystromProblem.from_blocks(El, W, K, mask=mask, rtol=rtol)
    optimize = beta == "optimize"
    ptol = max(tol, 1e-2) if path_tol is None else path_tol
    options = {"solver": solver, "optimize_beta": optimize, "max_iter": max_iter}
    path = _walk_path(
        problem,
        grid,
        starting_beta(problem, beta, grid),
        criterion,
        options,
        tol if grid.size == 1 else ptol,
    )
    # refine λ* unless its path solve already certifies tol (duality gap); with β
    # optimized the gap certifies only the last fixed-β solve, not β, which the path
    # found to ``ptol``: always refine then
    certified = not optimize and path.res.info.get("duality_gap", np.inf) <= tol
    if grid.size > 1 and ptol > tol and not certified:
        _refine(problem, grid, path, options, tol)
    return _path_fit(problem, grid, path, W, rtol)


def starting_beta(problem, beta, grid):
    """β of the first (largest-λ) solve: Appendix A's unconstrained optimum at that λ
    for "optimize" (eq. 8 when it has none), eq. 8 for "heuristic", else the number."""
    if beta == "optimize":
        return optimal_beta_unconstrained(problem, float(grid[-1])) or problem.beta_heuristic()
    if beta == "heuristic":
        return problem.beta_heuristic()
    return beta


def path_solve(problem, lam, beta, x0, options, tol, **extra):
    """One warm-started solve of (7) on a λ path: ``options`` (solver, optimize_beta,
    max_iter) and ``extra`` passed on, tolerance ``tol`` with its projection dtype."""
    return solve_gen_nystrom(
        problem, lam, beta, x0=x0, tol=tol, eig_dtype=projection_dtype(tol), **options, **extra
    )


@dataclass
class _Path:
    """The λ path so far: per λ the criterion, its two factors, β and the iterations;
    the best λ's index and solve, the iteration history and count of the fit."""

    scores: np.ndarray
    rho_prior: np.ndarray
    rho_target: np.ndarray
    betas: np.ndarray
    n_iter: np.ndarray
    best: int
    res: object
    history: list
    total: int


def _walk_path(problem, grid, beta0, criterion, options, path_tol):
    """Solve the grid from the largest λ down, each solve warm-started from the last;
    score each by ``criterion`` and keep the best."""
    g = grid.size
    scores = np.full(g, np.nan)
    rp = np.full(g, np.nan)
    rt = np.full(g, np.nan)
    betas = np.full(g, beta0)
    n_path = np.zeros(g, dtype=int)
    x = None
    best = None  # (index, SolverResult)
    b = beta0
    for i in range(g - 1, -1, -1):  # largest λ first: its solution is nearly the prior
        res = path_solve(problem, float(grid[i]), b, x, options, path_tol)
        x = res.x
        b = res.info["beta"]
        betas[i] = b
        n_path[i] = res.n_iter
        scores[i], rp[i], rt[i] = problem.criterion(x, criterion)
        if best is None or scores[i] > scores[best[0]]:
            best = (i, res)
    i_best, res = best
    return _Path(scores, rp, rt, betas, n_path, i_best, res, list(res.history), int(n_path.sum()))


def _refine(problem, grid, path, options, tol):
    """Solve λ* again to ``tol`` from its path solution and dual (``path`` updated)."""
    i_best, res = path.best, path.res
    res = path_solve(
        problem, float(grid[i_best]), path.betas[i_best], res.x, options, tol, restart=res.info
    )
    path.history += res.history[1:]
    path.total += res.n_iter
    path.betas[i_best] = res.info["beta"]
    path.res = res


def _path_fit(problem, grid, path, W, rtol) -> GenNystromFit:
    """The fit record of the path's chosen λ."""
    res = path.res
    X = res.x
    res.info.pop("u", None)
    beta_f = float(res.info["beta"])
    # The solver's iterate is PSD to the precision of its projections (float32 ones at
    # loose tolerances): clean it in float64 so that S is PSD to round-off and its
    # rank does not depend on that noise (the factor F Fᵀ = S over the kept spectrum).
    F = psd_factor(problem.to_landmark_basis(X), rtol, metric=W)
    return GenNystromFit(
        S=_sym(F @ F.T),
        S0=beta_f * problem.Wp,
        beta=beta_f,
        lam=float(grid[path.best]),
        lam_grid=grid,
        scores=path.scores,
        rho_prior=path.rho_prior,
        rho_target=path.rho_target,
        betas=path.betas,
        path_n_iter=path.n_iter,
        n_iter=path.total,
        objective=float(res.info["objective"]),
        objective_history=path.history,
        converged=bool(res.converged),
        info=dict(res.info),
        problem=problem,
        X=X,
        F=F,
    )


def prior_fit(El, W, K, *, beta=1.0, mask=None, rtol: float = 1e-10) -> GenNystromFit:
    """The λ = ∞ solution of (7): S = β W⁺ exactly — the plain Nyström kernel.

    β: the number given; eq. 8 for "heuristic"; for "optimize" the β that minimizes
    the data term over S = β W⁺ (the limit of Appendix A as λ → ∞). W⁺ is formed from
    the eigenpairs kept by :func:`~lorak.learn.pinv_psd`, so that E S Eᵀ equals plain
    Nyström's E W⁺ Eᵀ on the same landmarks.
    """
    beta = check_beta(beta)
    problem = GenNystromProblem.from_blocks(El, W, K, mask=mask, rtol=rtol)
    if beta == "heuristic":
        b = problem.beta_heuristic()
    elif beta == "optimize":
        P = problem.P_t
        den = float(np.sum(problem.aa * P * P))
        b = max(float(np.sum(problem.B_t * P)) / den, 0.0) if den > 0 else 0.0
        b = b or 1.0
    else:
        b = float(beta)
    F = prior_factor(kept_eigenpairs(W, rtol), b)
    S = _sym(F @ F.T)
    X = problem.from_landmark_basis(S)
    nan = np.full(1, np.nan)
    return GenNystromFit(
        S=S,
        S0=b * problem.Wp,
        beta=b,
        lam=math.inf,
        lam_grid=np.array([math.inf]),
        scores=nan,
        rho_prior=nan.copy(),
        rho_target=nan.copy(),
        betas=np.array([b]),
        path_n_iter=np.zeros(1, dtype=int),
        n_iter=0,
        objective=problem.data_term(X),
        objective_history=[],
        converged=True,
        info={"solver": "none (lam = inf: S = beta W+)"},
        problem=problem,
        X=X,
    )

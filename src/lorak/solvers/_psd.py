"""Numerics over the cone of positive semidefinite (PSD) matrices.

:func:`admm_psd`, :func:`fista_psd` and :func:`armijo_projected_gradient` for
min f(X) s.t. X ⪰ 0 on symmetric m × m arrays, each returning a :class:`SolverResult`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import eigh

from .._core.linalg import symmetrize as _sym

__all__ = [
    "SolverResult",
    "admm_psd",
    "armijo_projected_gradient",
    "fista_psd",
    "psd_projection",
    "scaled_psd_projection",
    "weighted_nearest_psd",
]


@dataclass
class SolverResult:
    """What every solver returns.

    Attributes
    ----------
    x : ndarray
        The final (feasible) iterate.
    n_iter : int
        Iterations performed (PSD projections, up to one or two extra).
    converged : bool
        Whether the stopping test was met before ``max_iter``.
    history : list of float
        Objective value after each iteration (empty when no objective was given).
    info : dict
        Solver specific: final residuals, ρ, the multiplier, the reason for stopping.
    """

    x: np.ndarray
    n_iter: int
    converged: bool
    history: list = field(default_factory=list)
    info: dict = field(default_factory=dict)


def psd_projection(M, *, return_eigenvalues=False, eig_dtype=np.float64):
    """Nearest PSD matrix in Frobenius norm: eigenvalues clipped at 0 (eq. 11 of the paper).

    ``M`` is symmetrized first; one symmetric eigendecomposition, the result assembled
    from whichever of the negative or the non-negative eigenpairs are fewer.
    ``eig_dtype=np.float32`` computes the eigendecomposition in single precision and
    assembles the result in float64: PSD and optimal only to ~1e-7 relative, for the
    loose solves along a regularization path.

    Returns ``X`` or, with ``return_eigenvalues``, ``(X, eigenvalues of M)``.
    """
    M = _sym(np.asarray(M, dtype=np.float64))
    lam, U = eigh(M.astype(eig_dtype, copy=False), driver="evd", check_finite=False)
    lam, U = lam.astype(np.float64, copy=False), U.astype(np.float64, copy=False)
    neg = lam < 0
    k = int(neg.sum())
    if k == 0:
        X = M
    elif 2 * k <= lam.size:
        Un = U[:, :k]  # eigh sorts ascending: the negative ones come first
        X = _sym(M - (Un * lam[:k]) @ Un.T)
    else:
        Up = U[:, k:]
        X = _sym((Up * lam[k:]) @ Up.T)
    return (X, lam) if return_eigenvalues else X


def _scale_matrix(d):
    if d is None:
        return None
    d = np.asarray(d, dtype=np.float64)
    if d.ndim != 1 or not np.all(d > 0) or not np.all(np.isfinite(d)):
        raise ValueError("the metric d must be a 1-D array of positive finite numbers")
    r = np.sqrt(d)
    return np.outer(r, r)


def scaled_psd_projection(M, d=None):
    """argmin_{X⪰0} Σᵢⱼ dᵢ dⱼ (Xᵢⱼ − Mᵢⱼ)²  =  D^{-1/2} Π(D^{1/2} M D^{1/2}) D^{-1/2}.

    With ``d=None`` this is :func:`psd_projection`. The congruence by D^{±1/2} keeps
    the cone, so the answer is exactly PSD (up to round-off).
    """
    s = _scale_matrix(d)
    if s is None:
        return psd_projection(M)
    return psd_projection(np.asarray(M, dtype=np.float64) * s) / s


def _weighted_fro(A, s=None):
    return float(np.linalg.norm(A if s is None else A * s))


def admm_psd(
    prox: Callable[[np.ndarray, float], np.ndarray],
    z0,
    *,
    d=None,
    u0=None,
    objective: Callable[[np.ndarray], float] | None = None,
    lower_bound: Callable[[np.ndarray], float] | None = None,
    rho: float = 1.0,
    alpha: float = 1.6,
    tol: float = 1e-4,
    max_iter: int = 500,
    balance: float = 10.0,
    rho_factor: float = 2.0,
    eig_dtype=np.float64,
    project_start: bool = True,
    residual_gap_cap: float = math.inf,
) -> SolverResult:
    """minimize f(X) s.t. X ⪰ 0 by ADMM on X = Z, in the metric ‖H‖²_d = Σ dᵢdⱼHᵢⱼ².

    Iteration (scaled form, over-relaxation α, Boyd et al. 2011 §3.4.3)::

        X ← prox(Z − U, ρ)           = argmin_X f(X) + (ρ/2)‖X − (Z − U)‖²_d
        X̂ ← α X + (1 − α) Z
        Z ← Π_d(X̂ + U)               (PSD projection in the metric, one eigh)
        U ← U + X̂ − Z

    ρ is rebalanced (×/÷ ``rho_factor``) when the primal residual r = ‖X − Z‖_d and the
    dual residual s = ρ‖Z − Z_prev‖_d differ by more than ``balance`` (U rescaled to
    match).

    Stopping, whichever comes first:

    - a certified duality gap (needs ``lower_bound`` and ``objective``): Λ = −ρ D U D
      is a PSD multiplier for X ⪰ 0, so g(Λ) = min_X f(X) − ⟨Λ, X⟩ bounds the optimum
      from below; stop when f(Z) − g(Λ) ≤ tol · |f(Z)| (``info["duality_gap"]``);
    - small residuals: r ≤ tol · max(‖X‖_d, ‖Z‖_d) and s ≤ tol · max(‖ρU‖_d, ‖Z‖_d),
      provided the relative gap is ≤ ``residual_gap_cap`` (after a warm start far from
      the optimum the residuals can be small while low-weight directions are still
      far off; the cap rejects such stops).

    Parameters
    ----------
    prox : callable ``prox(V, rho) -> X``
        The proximal map of f in the metric d (see above).
    z0 : (m, m) array
        Starting point; projected onto the cone first.
    d : (m,) array or None
        Metric weights (None: Frobenius).
    u0 : (m, m) array, optional
        Starting scaled dual U (``info["u"]`` of a previous run on the same problem, with
        its ``info["rho"]`` as ``rho``): a restart that keeps the multiplier, instead of
        U = 0 which makes the first iterations undo progress.
    objective : callable, optional
        f, evaluated at each feasible iterate Z for ``history``.
    lower_bound : callable ``lower_bound(Lam) -> float``, optional
        The Lagrange dual function g(Λ) = min_X f(X) − ⟨Λ, X⟩ for PSD Λ (Frobenius
        coordinates); enables the duality-gap stopping test.
    eig_dtype : dtype, default float64
        Precision of the eigendecompositions in the projections (see
        :func:`psd_projection`); float32 only for loose tolerances (≥ 1e-4).
    project_start : bool, default True
        False when ``z0`` is known to be PSD (a previous solution): saves one
        eigendecomposition per warm start.
    residual_gap_cap : float, default inf
        With ``lower_bound``: the largest relative duality gap at which the residual
        test may stop the iteration (inf: the residual test alone suffices).
    rho, alpha, tol, max_iter, balance, rho_factor : see above.

    Returns
    -------
    SolverResult
        ``x`` = Z (PSD). ``info``: ``primal_residual``, ``dual_residual`` (relative),
        ``rho`` and ``u`` (the final scaled dual, for a warm restart with ``u0``).
    """
    # Iterates are kept in the scaled coordinates Y = D^{1/2} X D^{1/2} (entrywise
    # s∘X, s = √(d dᵀ)), where the metric is the Frobenius norm and the projection a
    # plain eigenvalue clip; only the prox and the objective see X-space.
    s = _scale_matrix(d)
    one = s is None

    def proj(M):
        return psd_projection(M, eig_dtype=eig_dtype)

    Z, U = _admm_start(z0, u0, s, proj if project_start else None)
    history = [] if objective is None else [float(objective(Z if one else Z / s))]
    use_gap = lower_bound is not None and objective is not None
    tiny = np.finfo(float).tiny
    r_rel = s_rel = gap = math.inf
    # floors that floating point can reach (see fista_psd)
    eps = np.finfo(np.float64).eps
    res_tol = max(tol, 4.0 * Z.shape[0] * eps)
    gap_tol = max(tol, 16.0 * eps)
    converged = False
    k = 0
    for k in range(1, max_iter + 1):  # noqa: B007 - k counts the iterations done
        V = Z - U
        X = prox(V if one else V / s, rho)
        if not one:
            X = X * s
        Xh = alpha * X + (1.0 - alpha) * Z if alpha != 1.0 else X
        Z_old = Z
        Z = proj(Xh + U)
        U += Xh
        U -= Z
        r, sd, r_rel, s_rel = _admm_residuals(X, Z, Z_old, U, rho)
        if objective is not None:
            history.append(float(objective(Z if one else Z / s)))
        if use_gap:
            # Λ = −ρ D U_X D with U_X = U/s entrywise, i.e. −ρ s∘U
            Lam = -rho * (U if one else U * s)
            fz = history[-1]
            gap = (fz - float(lower_bound(_sym(Lam)))) / max(abs(fz), tiny)
        if gap <= gap_tol or (r_rel <= res_tol and s_rel <= res_tol and gap <= residual_gap_cap):
            converged = True
            break
        rho = _rebalance(rho, U, r, sd, balance, rho_factor)
    if not one:
        Z = Z / s
        U = U / s
    return SolverResult(
        x=Z,
        n_iter=k,
        converged=converged,
        history=history,
        info={
            "primal_residual": r_rel,
            "dual_residual": s_rel,
            "duality_gap": gap,
            "rho": rho,
            "u": U,
            "solver": "admm",
        },
    )


def _admm_start(z0, u0, s, proj):
    """(Z, U) in the scaled coordinates: z0 (projected by ``proj`` unless None) and u0
    (0 when None)."""
    z0 = np.asarray(z0, dtype=np.float64)
    Z = z0.copy() if s is None else z0 * s
    if proj is not None:
        Z = proj(Z)
    if u0 is None:
        return Z, np.zeros_like(Z)
    if s is None:
        return Z, np.array(u0, dtype=np.float64)
    return Z, np.asarray(u0, dtype=np.float64) * s


def _admm_residuals(X, Z, Z_old, U, rho):
    """The primal residual r = ‖X − Z‖ and dual residual s = ρ‖Z − Z_prev‖, absolute and
    relative to the norms they are compared with (see :func:`admm_psd`)."""
    tiny = np.finfo(float).tiny
    r = float(np.linalg.norm(X - Z))
    sd = rho * float(np.linalg.norm(Z - Z_old))
    nz = float(np.linalg.norm(Z))
    r_rel = r / max(nz, float(np.linalg.norm(X)), tiny)
    s_rel = sd / max(rho * float(np.linalg.norm(U)), nz, tiny)
    return r, sd, r_rel, s_rel


def _rebalance(rho, U, r, sd, balance, rho_factor):
    """ρ multiplied (divided) by ``rho_factor`` when the primal residual exceeds the dual
    one (or the reverse) ``balance`` times; the scaled dual U rescaled in place."""
    if r > balance * sd:
        U /= rho_factor
        return rho * rho_factor
    if sd > balance * r:
        U *= rho_factor
        return rho / rho_factor
    return rho


def weighted_nearest_psd(
    T,
    w,
    *,
    d=None,
    x0=None,
    rho: float = 1.0,
    alpha: float = 1.6,
    tol: float = 1e-4,
    max_iter: int = 500,
    objective=None,
) -> SolverResult:
    """minimize Σᵢⱼ wᵢⱼ (Xᵢⱼ − Tᵢⱼ)² s.t. X ⪰ 0 (elementwise weights w > 0), by ADMM.

    The prox in the metric d is elementwise:
    X = (2 w∘T + ρ s∘V) / (2 w + ρ s) with s = d dᵀ. Default metric dᵢ = √wᵢᵢ, which
    makes the problem's diagonal weights 1 (see the module docstring). Starts from
    ``x0`` or from Π(T) (projection in the metric).
    """
    T = np.asarray(T, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    if d is None:
        d = np.sqrt(np.diag(w))
    dd = np.outer(d, d)
    wT2 = 2.0 * w * T
    w2 = 2.0 * w

    def prox(V, r):
        return (wT2 + r * dd * V) / (w2 + r * dd)

    if objective is None:

        def objective(X):
            return float(np.sum(w * (X - T) ** 2))

    return admm_psd(
        prox,
        T if x0 is None else x0,
        d=d,
        objective=objective,
        rho=rho,
        alpha=alpha,
        tol=tol,
        max_iter=max_iter,
    )


def fista_psd(
    f: Callable[[np.ndarray], float],
    grad: Callable[[np.ndarray], np.ndarray],
    x0,
    *,
    d=None,
    L: float = 1.0,
    tol: float = 1e-6,
    max_iter: int = 1000,
    restart: bool = True,
) -> SolverResult:
    """minimize f(X) s.t. X ⪰ 0 by accelerated projected gradient in the metric d.

    Requires f(X + H) ≤ f(X) + ⟨∇f(X), H⟩ + (L/2) Σᵢⱼ dᵢdⱼ Hᵢⱼ² (L-smooth in the
    metric). Step: X⁺ = Π_d(Y − (1/L) D⁻¹ ∇f(Y) D⁻¹), Nesterov momentum on Y, momentum
    reset whenever f increases beyond rounding (adaptive restart). Stops when the
    gradient-mapping residual ‖X⁺ − Y‖_d ≤ tol · ‖X⁺‖_d and the relative decrease of f
    is ≤ tol, each tolerance floored at what floating point resolves (4·m·eps for the
    residual of an eigensolver's projection, 16·eps for f) so the test stays reachable.
    """
    s = _scale_matrix(d)
    dd = None if s is None else s * s
    proj = (lambda M: psd_projection(M * s) / s) if s is not None else psd_projection
    X = proj(np.asarray(x0, dtype=np.float64))
    fx = float(f(X))
    history = [fx]
    Y = X
    t = 1.0
    converged = False
    res = math.inf
    # What floating point can resolve: f is known to a few ulps of its size, and the
    # residual of a projection computed by an eigensolver to about n·eps. A stop test
    # below these floors would never pass, however close the iterate is.
    eps = np.finfo(np.float64).eps
    res_tol = max(tol, 4.0 * X.shape[0] * eps)
    dec_tol = max(tol, 16.0 * eps)
    k = 0
    for k in range(1, max_iter + 1):  # noqa: B007 - k counts the iterations done
        g = grad(Y)
        step = g / L if dd is None else g / (L * dd)
        Xn = proj(Y - step)
        fn = float(f(Xn))
        res = _weighted_fro(Xn - Y, s) / max(_weighted_fro(Xn, s), np.finfo(float).tiny)
        rounding = 16.0 * eps * max(abs(fx), abs(fn))
        if restart and fn > fx + rounding:
            if Y is X and res <= res_tol:
                # a plain projected-gradient step from the accepted point does not move
                # it (the gradient-mapping residual at X itself): X is optimal to working
                # precision, and f's last digits are the projection's round-off
                converged = True
                break
            # momentum overshot: restart from the last accepted point
            Y = X
            t = 1.0
            history.append(fx)
            continue
        tn = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        Y = Xn + ((t - 1.0) / tn) * (Xn - X)
        decrease = max(fx - fn, 0.0) / max(abs(fn), np.finfo(float).tiny)
        X, fx, t = Xn, fn, tn
        history.append(fx)
        if res <= res_tol and decrease <= dec_tol:
            converged = True
            break
    return SolverResult(
        x=X,
        n_iter=k,
        converged=converged,
        history=history,
        info={"gradient_mapping_residual": res, "solver": "fista"},
    )


def armijo_projected_gradient(
    f: Callable[[np.ndarray], float],
    grad: Callable[[np.ndarray], np.ndarray],
    x0,
    *,
    a0: float = 1e-3,
    factor: float = 2.0,
    tol: float = 1e-6,
    max_iter: int = 1000,
) -> SolverResult:
    """Gradient mapping with Armijo–Goldstein backtracking, Frobenius metric.

    Per iteration, starting from a = max(a0, a_prev / factor), compute
    B = Π(S − ∇f(S)/a) (eq. 10 of Zhang et al. 2017: the PSD matrix nearest to the
    gradient step) and accept if f(B) ≤ f(S) + ⟨∇f(S), B − S⟩ + (a/2)‖B − S‖²_F,
    otherwise a ← a · factor. The step is S − η∇ with η = 1/a (the paper's eq. 9 has
    a sign typo, S + η∇). Stops when ‖B − S‖_F ≤ tol · ‖B‖_F and the relative
    decrease of f is ≤ tol.
    """
    S = psd_projection(np.asarray(x0, dtype=np.float64))
    fs = float(f(S))
    history = [fs]
    eps = np.finfo(np.float64).eps
    a = a0
    converged = False
    res = math.inf
    n_backtrack = 0
    k = 0
    for k in range(1, max_iter + 1):  # noqa: B007 - k counts the iterations done
        g = grad(S)
        a = max(a0, a / factor)
        while True:
            B = psd_projection(S - g / a)
            D = B - S
            fb = float(f(B))
            if fb <= fs + float(np.sum(g * D)) + 0.5 * a * float(np.sum(D * D)) + 1e-12 * abs(fs):
                break
            a *= factor
            n_backtrack += 1
        res = _weighted_fro(D) / max(_weighted_fro(B), np.finfo(float).tiny)
        decrease = abs(fs - fb) / max(abs(fb), np.finfo(float).tiny)
        S, fs = B, fb
        history.append(fs)
        # the floors are what floating point resolves (see fista_psd)
        if res <= max(tol, 4.0 * S.shape[0] * eps) and decrease <= max(tol, 16.0 * eps):
            converged = True
            break
    return SolverResult(
        x=S,
        n_iter=k,
        converged=converged,
        history=history,
        info={"step_residual": res, "a": a, "backtracks": n_backtrack, "solver": "pg"},
    )

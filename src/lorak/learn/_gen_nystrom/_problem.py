"""Objective (7) of generalized Nyström and its solvers: one λ, β heuristic or optimized.

In the eigenbasis of A = E_lᵀE_l the objective is a weighted nearest PSD matrix
problem, solved by ADMM in the diagonal metric and stopped on a certified duality gap;
β by the heuristic (8) or optimized (Appendix A). The derivation and the decisions:
:ref:`guide-gnys-solver`, section "The objective in one eigenbasis" and after.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import eigh

from ..._core.linalg import spectral_keep
from ..._core.linalg import symmetrize as _sym
from ..._core.validation import (
    check_bound,
    check_float_array,
    check_number_sequence,
    check_rtol,
    check_square_matrix,
)
from ...solvers import (
    SolverResult,
    admm_psd,
    armijo_projected_gradient,
    fista_psd,
    psd_projection,
)

__all__ = [
    "SOLVERS",
    "GenNystromProblem",
    "check_beta",
    "check_blocks",
    "check_labels",
    "check_options",
    "closed_form",
    "kept_eigenpairs",
    "optimal_beta_unconstrained",
    "pinv_psd",
    "prior_factor",
    "projection_dtype",
    "psd_factor",
    "solve_gen_nystrom",
]

SOLVERS = ("auto", "admm", "fista", "pg")
# Initial ADMM penalty in the metric (where the Hessian weights lie in (0, 1], 1 on the
# diagonal): the fewest iterations in the worst case of 0.3, 1 and 3 (figures: the
# generalized Nyström guide, "Inside the fit").
RHO0 = 0.3
_TINY = np.finfo(np.float64).tiny


def pinv_psd(W, rtol: float = 1e-10):
    """W⁺ of a symmetric PSD matrix over the eigenvalues kept by ``spectral_keep``; (W⁺, rank).

    The cut is at least rtol·λ_max and above the round-off that negative eigenvalues
    show, placed at a gap of the spectrum so that it does not flip on rounding.
    """
    W = check_square_matrix(W, "W")
    check_rtol(rtol)
    lam, U = eigh(_sym(W), driver="evd", check_finite=False)
    top = lam[-1] if lam.size else 0.0
    if not top > 0:
        raise ValueError(
            "the landmark kernel matrix W has no positive eigenvalue; the kernel is zero "
            "on the landmarks"
        )
    keep = spectral_keep(lam, rtol)
    Uk = U[:, keep]
    return _sym((Uk / lam[keep]) @ Uk.T), int(keep.sum())


def kept_eigenpairs(W, rtol: float = 1e-10):
    """The eigenpairs (values, vectors) of W kept by :func:`spectral_keep`: the spectrum
    that :func:`pinv_psd` inverts."""
    lam, U = eigh(_sym(np.asarray(W, dtype=np.float64)), driver="evd", check_finite=False)
    keep = spectral_keep(lam, rtol)
    return lam[keep], U[:, keep]


def prior_factor(Wp_eig, beta: float = 1.0) -> np.ndarray:
    """F with F Fᵀ = β W⁺ from W⁺'s kept eigenpairs ``(values, vectors)`` of W, exactly
    the spectrum that :func:`pinv_psd` inverts (largest 1/λ first)."""
    lam, U = Wp_eig
    return (U / np.sqrt(lam))[:, ::-1] * math.sqrt(beta)


def closed_form(El, K, S0, lam: float, *, project: bool = False) -> np.ndarray:
    """The unconstrained minimizer of (7), written as the paper does (eq. 12–13).

    ∂J/∂S = 0 gives λS + E_lᵀE_l S E_lᵀE_l = E_lᵀK*E_l + λS₀, i.e. S + PSPᵀ = Q with
    P = E_lᵀE_l/√λ = UΛUᵀ and Q = S₀ + E_lᵀK*E_l/λ; then S̃ᵢⱼ = Q̃ᵢⱼ/(1 + ΛᵢᵢΛⱼⱼ)
    (Q̃ = UᵀQU) and S = U S̃ Uᵀ. With ``project`` the result is clipped to the PSD cone
    (eq. 11) — the paper's initialization, which is far from the constrained optimum at
    small λ (figures: the generalized Nyström guide, "Inside the fit").
    """
    El, _, K, _ = check_blocks(El, K=K)
    m = El.shape[1]
    S0 = check_float_array(S0, "S0", shape=(m, m), what="one row and column per column of El")
    check_bound(lam, "lam")
    P = (El.T @ El) / math.sqrt(lam)
    ev, U = eigh(_sym(P), driver="evd", check_finite=False)
    Q = S0 + (El.T @ K @ El) / lam
    Qt = U.T @ Q @ U
    St = Qt / (1.0 + np.outer(ev, ev))
    S = _sym(U @ St @ U.T)
    return psd_projection(S) if project else S


def psd_factor(S, rtol: float = 1e-10, *, metric=None) -> np.ndarray:
    """F with F Fᵀ ≈ S (m × r) over the kept spectrum (``spectral_keep``).

    Without ``metric``: F = U Λ^{1/2} over the eigenvalues of S kept relative to λ_max(S).
    With ``metric`` = W, the landmark kernel matrix: the spectrum is that of the learned
    kernel on the landmarks, T = W^{1/2} S W^{1/2} (over W's kept range), and
    F = Q Λ_W^{-1/2} V μ^{1/2}. This is the scale that matters for S: the learned kernel
    is e(x)ᵀ S e(x') with e(x) in W's range, where S ≈ W⁺ has eigenvalues from 1/λ_max(W)
    to 1/λ_min(W) — a cut relative to λ_max(S) (or to the round-off of its largest
    directions) would drop the directions of W's largest eigenvalues, the ones the data
    use most.
    """
    S = check_square_matrix(S, "S")
    check_rtol(rtol)
    if metric is not None:
        m = S.shape[0]
        metric = check_float_array(metric, "metric", shape=(m, m), what="the shape of S")
        lw, Q = eigh(_sym(metric), driver="evd", check_finite=False)
        kw = spectral_keep(lw, rtol)
        if not kw.any():
            return np.zeros((lw.size, 0))
        R = Q[:, kw] * np.sqrt(lw[kw])  # W^{1/2} on its kept range: T = Rᵀ S R
        T = _sym(R.T @ S @ R)
        mu, V = eigh(T, driver="evd", check_finite=False)
        if not (mu.size and mu[-1] > 0):
            return np.zeros((lw.size, 0))
        keep = spectral_keep(mu, rtol)
        F = (Q[:, kw] / np.sqrt(lw[kw])) @ (V[:, keep] * np.sqrt(mu[keep]))
        return F[:, ::-1]
    lam, U = eigh(_sym(S), driver="evd", check_finite=False)
    top = lam[-1] if lam.size else 0.0
    if not top > 0:
        return np.zeros((lam.size, 0))
    keep = spectral_keep(lam, rtol)
    # largest first, like every other factor in lorak
    return (U[:, keep] * np.sqrt(lam[keep]))[:, ::-1]


def _center(K):
    return K - K.mean(axis=0, keepdims=True) - K.mean(axis=1, keepdims=True) + K.mean()


def _cos(A, B):
    na, nb = np.linalg.norm(A), np.linalg.norm(B)
    return float(np.sum(A * B) / (na * nb)) if na > 0 and nb > 0 else 0.0


@dataclass
class GenNystromProblem:
    """Pieces of objective (7) shared by every λ and β, in the eigenbasis V of E_lᵀE_l.

    Build with :meth:`from_blocks`. Matrices named ``*_t`` live in the V basis; ``X``
    always denotes Vᵀ S V.
    """

    El: np.ndarray
    K: np.ndarray
    mask: np.ndarray | None
    Wp: np.ndarray
    rank_W: int
    a: np.ndarray
    V: np.ndarray
    M: np.ndarray
    B_t: np.ndarray
    P_t: np.ndarray
    P_norm2: float
    K_norm2: float
    Kc: np.ndarray
    Pc_t: np.ndarray
    Pc_norm: float
    v: np.ndarray
    aa: np.ndarray = field(repr=False)
    WV: np.ndarray | None = field(default=None, repr=False)
    Wc: np.ndarray | None = field(default=None, repr=False)

    @classmethod
    def from_blocks(
        cls, El, W, K, *, mask=None, rtol: float = 1e-10, pinv=None, kernel_criterion=True
    ) -> GenNystromProblem:
        """From E_l (l × m), W (m × m), the target K* (l × l) and an optional mask T.

        ``pinv``: (W⁺, rank) of :func:`pinv_psd` when already factored (the folds of a
        cross-validation share it). ``kernel_criterion=False`` leaves out the pieces of
        ``criterion(kind="kernel")`` (W V and the centred W), which a fold never scores.
        """
        El, W, K, mask = check_blocks(El, W, K, mask=mask)
        El = np.ascontiguousarray(El)
        K = _sym(K)
        m = El.shape[1]
        if mask is not None:
            K = mask * K
        Wp, rank_W = pinv_psd(W, rtol) if pinv is None else pinv
        a, V = eigh(_sym(El.T @ El), driver="evd", check_finite=False)
        a = np.maximum(a, 0.0)  # E_lᵀE_l is PSD; clip round-off negatives
        M = El @ V
        B_t = _sym(M.T @ K @ M)
        P_t = _sym(V.T @ Wp @ V)
        v = V.T @ np.full(m, 1.0 / math.sqrt(m))
        Pv = P_t @ v
        Pc_t = P_t - np.outer(v, Pv) - np.outer(Pv, v) + float(v @ Pv) * np.outer(v, v)
        Kt = K if mask is None else mask * K
        if kernel_criterion:
            W = _sym(np.asarray(W, dtype=np.float64))
        return cls(
            El=El,
            K=K,
            mask=mask,
            Wp=Wp,
            rank_W=rank_W,
            a=a,
            V=V,
            M=M,
            B_t=B_t,
            P_t=P_t,
            P_norm2=float(np.sum(P_t * P_t)),
            K_norm2=float(np.sum(K * K)),
            Kc=_center(Kt),
            Pc_t=Pc_t,
            Pc_norm=float(np.linalg.norm(Pc_t)),
            v=v,
            aa=np.outer(a, a),
            WV=W @ V if kernel_criterion else None,
            Wc=_center(W) if kernel_criterion else None,
        )

    @property
    def n_landmarks(self) -> int:
        return self.El.shape[1]

    @property
    def n_labeled(self) -> int:
        return self.El.shape[0]

    # ------------------------------------------------------------ objective (7)
    def weights(self, lam: float) -> np.ndarray:
        """w = λ11ᵀ + aaᵀ: the Hessian of J/2 in the V basis (unmasked)."""
        return lam + self.aa

    def metric(self, lam: float) -> np.ndarray:
        """dᵢ = √(λ + aᵢ²): the diagonal of w, and a metric with dᵢdⱼ ≥ wᵢⱼ."""
        return np.sqrt(lam + self.a * self.a)

    def unconstrained(self, lam: float, beta: float) -> np.ndarray:
        """The minimizer of (7) without S ⪰ 0, in the V basis (eq. 12–13); unmasked only."""
        return (lam * beta * self.P_t + self.B_t) / self.weights(lam)

    def data_residual(self, X) -> np.ndarray:
        """E_l S E_lᵀ − K* (masked by T when given), l × l."""
        R = self.M @ X @ self.M.T - self.K
        return R if self.mask is None else self.mask * R

    def data_term(self, X) -> float:
        """‖E_l S E_lᵀ − K*‖²_F (or its masked version)."""
        if self.mask is None:
            # Σ aᵢaⱼXᵢⱼ² − 2⟨B̃, X⟩ + ‖K*‖²: O(m²), no l × l product
            val = np.vdot(self.aa * X, X) - 2.0 * np.vdot(self.B_t, X) + self.K_norm2
            return max(float(val), 0.0)
        R = self.data_residual(X)
        return float(np.sum(R * R))

    def objective(self, X, lam: float, beta: float) -> float:
        """J(S) of eq. (7) (masked data term with must-link groups)."""
        D = X - beta * self.P_t
        return lam * float(np.vdot(D, D)) + self.data_term(X)

    def gradient(self, X, lam: float, beta: float) -> np.ndarray:
        """∇J = 2λ(S − S₀) + 2E_lᵀ(E_l S E_lᵀ − K*)E_l, in the V basis."""
        g = 2.0 * lam * (X - beta * self.P_t)
        if self.mask is None:
            g += 2.0 * (self.aa * X - self.B_t)
        else:
            g += 2.0 * (self.M.T @ self.data_residual(X) @ self.M)
        return _sym(g)

    def projected_gradient_residual(self, X, lam: float, beta: float) -> float:
        """‖S − Π(S − ∇J/L')‖_F / ‖S‖_F in the metric d (L' = 2): 0 exactly at the optimum."""
        d = self.metric(lam)
        dd = np.outer(d, d)
        s = np.sqrt(dd)
        G = self.gradient(X, lam, beta)
        Xn = psd_projection((X - G / (2.0 * dd)) * s) / s
        return float(np.linalg.norm((Xn - X) * s) / max(np.linalg.norm(X * s), _TINY))

    # ------------------------------------------------------------ bases
    def to_landmark_basis(self, X) -> np.ndarray:
        """S = V X Vᵀ."""
        return _sym(self.V @ X @ self.V.T)

    def from_landmark_basis(self, S) -> np.ndarray:
        """X = Vᵀ S V."""
        return _sym(self.V.T @ np.asarray(S, dtype=np.float64) @ self.V)

    # ------------------------------------------------------------ β and λ
    def beta_heuristic(self) -> float:
        """β of eq. (8): ‖E_l⁺ K* (E_lᵀ)⁺‖_F / ‖W⁺‖_F.

        E_l⁺ from the SVD of E_l (not from the eigenvalues of E_lᵀE_l, whose null-space
        round-off ~eps·‖E_l‖² would otherwise pass a σ-relative cut-off), with singular
        values ≤ max(l, m)·eps·σ_max dropped as MATLAB's and numpy's ``pinv`` do. With
        E_l = U Σ Vᵀ the norm is ‖Σ⁻¹ (Uᵀ K* U) Σ⁻¹‖_F.
        """
        l, m = self.El.shape
        U, sv, _ = np.linalg.svd(self.El, full_matrices=False)
        if not sv.size or not sv[0] > 0:
            raise ValueError("E_l is zero: the labeled rows are far from every landmark")
        keep = sv > max(l, m) * np.finfo(np.float64).eps * sv[0]
        Uk = U[:, keep]
        inv = 1.0 / sv[keep]
        C = (Uk.T @ self.K @ Uk) * np.outer(inv, inv)
        return float(np.linalg.norm(C)) / math.sqrt(self.P_norm2)

    def criterion(self, X, kind: str = "paper") -> tuple[float, float, float]:
        """Eq. (15): (score, prior factor, ρ[E_l S E_lᵀ, K*]) with centered alignment (14).

        ``kind="paper"``: the prior factor is ρ[S, S₀], the alignment of the m × m
        inverse dictionary kernels, as eq. (15) writes it. ``kind="kernel"``: it is
        ρ[W S W, W S₀ W] = ρ[W S W, W], the alignment of the learned and the original
        kernel on the landmarks — the "structure of the original kernel" that §3.2 asks
        the prior to preserve. The two differ where W is ill-conditioned: ρ[S, S₀] is
        dominated by W⁺'s largest entries, directions the data hardly reach, and then
        stays near 1 for every λ (see the issue-#4 report).
        """
        if kind == "kernel":
            G = self.WV @ X @ self.WV.T
            rho_prior = _cos(_center(G), self.Wc)
        elif kind == "paper":
            v = self.v
            Xv = X @ v
            cx = float(np.sum(X * X) - 2.0 * (Xv @ Xv) + (v @ Xv) ** 2)
            nx = math.sqrt(max(cx, 0.0))
            den = nx * self.Pc_norm
            rho_prior = float(np.sum(X * self.Pc_t) / den) if den > 0 else 0.0
        else:
            raise ValueError(f"unknown criterion {kind!r}; valid names are 'paper', 'kernel'")
        G = self.M @ X @ self.M.T
        if self.mask is not None:
            G = self.mask * G
        rho_target = _cos(_center(G), self.Kc)
        return rho_prior * rho_target, rho_prior, rho_target


def check_beta(beta):
    if isinstance(beta, str):
        if beta not in ("heuristic", "optimize"):
            raise ValueError(
                f"unknown beta {beta!r}; valid values are 'heuristic', 'optimize' or a "
                "positive number"
            )
        return beta
    if isinstance(beta, bool) or not isinstance(beta, (int, float, np.integer, np.floating)):
        raise TypeError(f"beta must be 'heuristic', 'optimize' or a number; got {beta!r}")
    if not (np.isfinite(beta) and beta > 0):
        raise ValueError(f"beta must be > 0; got {beta!r}")
    return float(beta)


def check_blocks(El, W=None, K=None, *, mask=None):
    """(El, W, K, mask) as float64 arrays, finite and of matching shapes — El (l × m),
    W (m × m), K and mask (l × l) — else an error naming the argument; None stays None.
    The solvers' eigendecompositions skip the finiteness check (``check_finite=False``):
    a NaN here would come back as "SVD did not converge" or as garbage."""
    El = check_float_array(El, "El")
    l, m = El.shape
    if W is not None:
        W = check_float_array(W, "W", shape=(m, m), what="one row and column per column of El")
    if K is not None:
        K = check_float_array(K, "K", shape=(l, l), what="one row and column per row of El")
    if mask is not None:
        mask = check_float_array(mask, "mask", shape=(l, l), what="one per pair of rows of El")
    return El, W, K, mask


def check_labels(y, l: int, target: str = "classification", *, rows: str = "El") -> np.ndarray:
    """``y`` as a 1-D array of ``l`` labels (class labels, or finite responses for a
    regression ``target``), one per row of ``rows``; else an error naming y."""
    if y is None:
        raise ValueError(f"y is required: one label or response per row of {rows}")
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D (one label per row of {rows}); got shape {y.shape}")
    if y.shape[0] != l:
        raise ValueError(f"y has {y.shape[0]} entries, but {rows} has {l} rows: one per row")
    if target == "regression":
        if y.dtype.kind not in "biuf":
            raise ValueError(f"y must hold real-valued responses; got dtype {y.dtype}")
        if not np.all(np.isfinite(y)):
            raise ValueError("y holds NaN or infinity: every labeled row needs a finite response")
    else:
        if y.dtype.kind in "fc" and np.isnan(y).any():
            raise ValueError("y holds NaN: class labels must be NaN-free (the labeled rows only)")
        if np.unique(y).size < 2:
            raise ValueError(
                f"y has one class ({y[0]!r}) among its {l} rows: the labels must hold at "
                "least two classes"
            )
    return y


def _check_lam(lam, name):
    if isinstance(lam, str):
        if lam != "auto":
            raise ValueError(f"{name} must be 'auto' or a number > 0; got {lam!r}")
    elif isinstance(lam, bool) or not isinstance(lam, numbers.Real) or not lam > 0:
        raise ValueError(f"{name} must be 'auto' or a number > 0; got {lam!r}")


def _check_choice(choices):
    def check(value, name):
        if not isinstance(value, str) or value not in choices:
            valid = ", ".join(repr(c) for c in choices)
            raise ValueError(f"unknown {name} {value!r}; valid values are {valid}")

    return check


def _check_count(low):
    def check(value, name):
        check_bound(value, name, low=low, strict=False, integer=True)

    return check


_OPTION_CHECKS = {
    "lam": _check_lam,
    # λ = ∞ in a grid is the prior, scored anyway; an empty grid leaves only the prior
    "lam_grid": lambda v, n: check_number_sequence(v, n, allow_inf=True, empty=True),
    "C_grid": lambda v, n: v is None or check_number_sequence(v, n),
    "beta": lambda v, n: check_beta(v),
    "tol": lambda v, n: check_bound(v, n),
    "path_tol": lambda v, n: v is None or check_bound(v, n),
    "max_iter": _check_count(1),
    "inner_max_iter": _check_count(1),
    "path_inner_max_iter": _check_count(1),
    "n_splits": _check_count(2),
    "rtol": lambda v, n: check_rtol(v),
    "solver": _check_choice(SOLVERS),
    "target": _check_choice(("classification", "regression")),
}


def check_options(**options) -> None:
    """Check the named options shared by the fits (λ, its grid, β, the tolerances, the
    counts, the solver, the target), each by its own rule; an error names the option."""
    for name, value in options.items():
        _OPTION_CHECKS[name](value, name)


def projection_dtype(tol):
    """Single-precision projections for tolerances ≥ 1e-5 (2–3× cheaper; their ~1e-7
    relative error is far below such a tolerance), double precision below."""
    return np.float32 if tol >= 1e-5 else np.float64


def optimal_beta_unconstrained(problem: GenNystromProblem, lam: float) -> float:
    """Root of ⟨X(β), P̃⟩ = β‖P̃‖² with X(β) the unconstrained minimizer (a starting β)."""
    w = problem.weights(lam)
    P = problem.P_t
    num = float(np.sum(problem.B_t * P / w))
    den = float(np.sum(problem.aa * P * P / w))
    return max(num / den, 0.0) if den > 0 else 0.0


def solve_gen_nystrom(
    problem: GenNystromProblem,
    lam: float,
    beta: float,
    *,
    x0=None,
    solver: str = "auto",
    optimize_beta: bool = False,
    tol: float = 1e-4,
    max_iter: int = 500,
    history: bool = True,
    restart: dict | None = None,
    eig_dtype=np.float64,
) -> SolverResult:
    """Solve (7) at one λ (in the V basis). ``x`` of the result is X = VᵀSV.

    ``info["beta"]`` is the β used (the optimized one with ``optimize_beta``);
    ``info["objective"]`` is J at the returned point. ``restart``: the ``info`` of an
    earlier ADMM run at the same λ (its dual ``u`` and ``rho`` are reused).
    ``eig_dtype``: precision of the ADMM projections (float32 for loose path solves).
    """
    check_bound(lam, "lam")
    check_bound(beta, "beta", strict=False)  # 0: a block of weight 0 (several kernels)
    check_options(solver=solver, tol=tol, max_iter=max_iter)
    if solver == "auto":
        solver = "admm" if problem.mask is None else "fista"
    if solver == "admm" and problem.mask is not None:
        raise ValueError(
            "solver='admm' needs the closed-form step of the unmasked objective; with "
            "must-link groups use solver='fista' (or 'auto')"
        )
    solve = _optimize_beta if optimize_beta else _solve_fixed
    res = solve(problem, lam, float(beta), x0, solver, tol, max_iter, restart or {}, eig_dtype)
    if not history:
        res.history = []
    res.info["objective"] = problem.objective(res.x, lam, res.info["beta"])
    res.info["lam"] = lam
    return res


def _solve_fixed(problem, lam, beta, x0, solver, tol, max_iter, restart, eig_dtype):
    """One solve of (7) at fixed λ and β with the named solver."""
    if solver == "admm":
        return _solve_admm(problem, lam, beta, x0, tol, max_iter, restart, eig_dtype)
    if x0 is None:
        # the unconstrained minimizer (projected by the solver), or the prior (PSD)
        # when a mask makes the closed form invalid
        x0 = problem.unconstrained(lam, beta) if problem.mask is None else beta * problem.P_t

    def f(X):
        return problem.objective(X, lam, beta)

    def g(X):
        return problem.gradient(X, lam, beta)

    if solver == "fista":
        res = fista_psd(f, g, x0, d=problem.metric(lam), L=2.0, tol=tol, max_iter=max_iter)
    else:
        res = armijo_projected_gradient(f, g, x0, a0=2.0 * lam, tol=tol, max_iter=max_iter)
    res.info["beta"] = beta
    return res


def _solve_admm(problem, lam, beta, x0, tol, max_iter, restart, eig_dtype):
    w = problem.weights(lam)
    d = problem.metric(lam)
    dd = np.outer(d, d)
    w2 = 2.0 * w
    P = problem.P_t
    lbP = lam * beta * P + problem.B_t
    lbP2 = 2.0 * lbP

    def prox(Vm, rho):
        # the closed form of eq. 12–13 with the weights shifted by ρ dᵢdⱼ, entrywise
        return (lbP2 + rho * dd * Vm) / (w2 + rho * dd)

    def objective(X):
        return problem.objective(X, lam, beta)

    def lower_bound(Lam):
        # g(Λ) = min_X J(X) − ⟨Λ, X⟩, attained at X = (λβP̃ + B̃ + Λ/2)/w; evaluated
        # through J itself (no cancellation between large constants)
        Xl = (lbP + 0.5 * Lam) / w
        return problem.objective(Xl, lam, beta) - float(np.vdot(Lam, Xl))

    z0 = problem.unconstrained(lam, beta) if x0 is None else x0
    res = admm_psd(
        prox,
        z0,
        d=d,
        u0=restart.get("u"),
        rho=restart.get("rho", RHO0),
        objective=objective,
        lower_bound=lower_bound,
        tol=tol,
        max_iter=max_iter,
        eig_dtype=eig_dtype,
        # a warm start is a previous ADMM iterate Z, PSD by construction
        project_start=x0 is None,
    )
    res.info["beta"] = beta
    return res


def _optimize_beta(problem, lam, beta, x0, solver, tol, max_iter, restart, eig_dtype):
    """min over β ≥ 0 and S ⪰ 0 of (7) with S₀ = βW⁺ (Appendix A).

    φ(β) = min_S J(S; β) is convex (partial minimization of a jointly convex function)
    with φ'(β) = −2λ h(β), h(β) = ⟨S(β), W⁺⟩ − β‖W⁺‖², decreasing, h(0) ≥ 0. The root
    of h is bracketed by Newton steps with the unconstrained slope (the flattest h can
    be, so each step reaches or passes the root) and refined by Illinois regula falsi;
    every evaluation is a fixed-β solve warm-started from the previous one (its
    solution and, for ADMM, its dual) — 3–8 solves, most of them a few iterations.

    The alternative, ADMM on the joint (S, β) step (still closed form, X affine in β),
    needs hundreds of times the iterations of a fixed-β solve at large λ: the direction
    S = βW⁺ has curvature from the data term only, invisible to the metric.
    """
    root = _BetaRoot(problem, lam, beta, x0, solver, tol, max_iter, restart, eig_dtype)
    b = max(float(beta), _TINY)
    hb = root.h(b)
    br = _Bracket(*((b, hb, None, None) if hb > 0 else (None, None, b, hb)))
    b, hb, converged = _bracket_root(root, br, b, hb)
    b, converged = _regula_falsi(root, br, b, converged)
    res = root.res
    res.n_iter = root.n_iter
    res.history = root.history
    res.converged = bool(res.converged and converged)
    res.info["beta"] = b
    return res


class _BetaRoot:
    """h(β) = ⟨S(β), W⁺⟩ − β‖W⁺‖² of :func:`_optimize_beta`, each value a fixed-β solve
    warm-started from the last one (its solution and, for ADMM, its dual), and the
    stopping test on β."""

    def __init__(self, problem, lam, beta, x0, solver, tol, max_iter, restart, eig_dtype):
        self.problem, self.lam, self.solver, self.tol = problem, lam, solver, tol
        self.max_iter, self.eig_dtype = max_iter, eig_dtype
        P = problem.P_t
        # |h'| of the unconstrained problem, Σ aᵢaⱼ P̃ᵢⱼ² / wᵢⱼ: the scale on which h
        # moves with β (at large λ, S follows βW⁺ closely and h is small for every β)
        self.slope = max(float(np.sum(problem.aa * P * P / problem.weights(lam))), _TINY)
        self.x = x0
        self.b = None if x0 is None else float(beta)
        self.n_iter = 0
        self.history = []
        self.res = None
        self.restart = dict(restart)

    def h(self, b):
        budget = max(1, self.max_iter - self.n_iter)
        x, restart_b = self.x, self.restart
        if x is not None and self.b and b > 0 and b != self.b:
            # warm start scaled by b/b_prev: still PSD, and exact where the prior
            # dominates (S ≈ βW⁺ at large λ). An unscaled start after a large β step
            # left ADMM far off in the prior directions while its residuals (dominated by
            # the data directions' weights) were already small: a large relative gap at
            # "convergence", and β brackets built on wrong signs of h.
            ratio = b / self.b
            x = ratio * x
            if "u" in restart_b:
                restart_b = dict(restart_b, u=ratio * restart_b["u"])
        res = _solve_fixed(
            self.problem, self.lam, b, x, self.solver, self.tol, budget, restart_b, self.eig_dtype
        )
        self.n_iter += res.n_iter
        self.history.extend(res.history)
        self.x = res.x
        self.b = b
        self.res = res
        self.restart = res.info if self.solver == "admm" else {}
        return float(np.vdot(res.x, self.problem.P_t)) - b * self.problem.P_norm2

    def done(self, b, hb, lo, hi):
        tol = self.tol
        close = lo is not None and hi is not None and (hi - lo) <= tol * max(b, _TINY)
        return close or abs(hb) <= tol * max(b, _TINY) * self.slope


@dataclass
class _Bracket:
    """β with h > 0 (``lo``) and with h ≤ 0 (``hi``), and h there; None until found."""

    lo: float | None
    hlo: float | None
    hi: float | None
    hhi: float | None


def _bracket_root(root, br, b, hb):
    """Newton steps with the flattest slope until the root of h is bracketed (or β
    has converged); ``(b, h(b), converged)``."""
    converged = root.done(b, hb, br.lo, br.hi)
    while not converged and (br.lo is None or br.hi is None) and root.n_iter < root.max_iter:
        # h' lies in [-‖P̃‖², -slope]: the unconstrained problem has the flattest h
        # (the PSD projection only steepens it), so a Newton step with ``slope`` lands
        # at or past the root — a bracket in one step where ×4 steps needed several
        if br.hi is None:
            b = b + max(hb / root.slope, 1e-2 * b)
        else:
            b = b + hb / root.slope
            if b < 1e-12 * br.hi:
                b = 0.0
        hb = root.h(b)
        if hb > 0 or b == 0.0:
            br.lo, br.hlo = b, hb
        else:
            br.hi, br.hhi = b, hb
        converged = root.done(b, hb, br.lo, br.hi)
    return b, hb, converged


def _regula_falsi(root, br, b, converged):
    """Illinois regula falsi inside the bracket; ``(b, converged)``."""
    side = 0
    while not converged and root.n_iter < root.max_iter:
        b = (br.lo * br.hhi - br.hi * br.hlo) / (br.hhi - br.hlo)
        hb = root.h(b)
        if hb > 0:
            br.lo, br.hlo = b, hb
            if side == 1:
                br.hhi *= 0.5
            side = 1
        else:
            br.hi, br.hhi = b, hb
            if side == -1:
                br.hlo *= 0.5
            side = -1
        converged = root.done(b, hb, br.lo, br.hi)
    return b, converged

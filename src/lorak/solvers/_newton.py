"""Primal Newton solver of the SVM with a sum of low-rank kernels (explicit features).

A Huber-smoothed linear SVM on the shared-basis features, by Newton's method with
continuation in the smoothing width (Chapelle 2007): :ref:`guide-lpmkl-solvers`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve

from ._gfb import FactorStack, InnerSVMResult, _check_factors, best_bias, project_feasible

__all__ = ["NewtonResult", "svm_newton"]

_CHUNK = 8192  # rows per float64 block of the Hessian updates
_SYSTEMS = ("auto", "primal", "zone")


def _gram_rows(A, idx):
    """(A_Iᵀ A_I, A_Iᵀ 1) in float64 over the rows idx, in chunks (no ℓ × r copy)."""
    p = A.shape[1]
    G = np.zeros((p, p))
    s = np.zeros(p)
    for j in range(0, idx.size, _CHUNK):
        Ac = A[idx[j : j + _CHUNK]].astype(np.float64, copy=False)
        G += Ac.T @ Ac
        s += Ac.sum(axis=0)
    return G, s


class _Features:
    """Φ = A L as an operator: A the stored factors (ℓ × p), L (p × q) float64."""

    def __init__(self, F: FactorStack, d, rank_rtol: float):
        if F.basis is not None:
            self.A = F.basis
            self.L = F.weighted_root(d, rank_rtol)
        else:  # stacked V: Φ = V D^{1/2} on the columns with d_k > 0
            self.A = F.V
            dcol = np.repeat(d, F.ranks)
            nz = np.flatnonzero(dcol > 0)
            self.L = np.zeros((F.total_rank, nz.size))
            self.L[nz, np.arange(nz.size)] = np.sqrt(dcol[nz])
        self.dtype = self.A.dtype

    @property
    def q(self) -> int:
        return int(self.L.shape[1])

    def matvec(self, w):
        """Φ w (float64)."""
        z = (self.L @ w).astype(self.dtype, copy=False)
        return (self.A @ z).astype(np.float64, copy=False)

    def rows(self, idx):
        """Φ_I = A_I L (float64) for the row indices idx, in chunks."""
        out = np.empty((idx.size, self.q))
        for j in range(0, idx.size, _CHUNK):
            sel = idx[j : j + _CHUNK]
            out[j : j + sel.size] = self.A[sel].astype(np.float64, copy=False) @ self.L
        return out

    def rmatvec_A(self, v):
        """Aᵀ v (float64, p-vector)."""
        return (self.A.T @ v.astype(self.dtype, copy=False)).astype(np.float64, copy=False)


def _check(F, y, d, C, tol, max_iter, h0, h_min, h_factor, warm_widen, system):
    y, d = _check_factors(F, y, d)
    if not np.all(np.abs(y) == 1):
        raise ValueError("y must contain only the labels -1 and +1")
    if np.all(y == y[0]):
        raise ValueError("y has a single class: the SVM needs both labels -1 and +1")
    if not np.any(d > 0):
        raise ValueError("every kernel weight is 0: the SVM has no kernel")
    number = isinstance(C, (int, float, np.floating, np.integer)) and not isinstance(C, bool)
    if not (number and C > 0 and math.isfinite(C)):
        raise ValueError(f"C must be a finite number > 0; got {C!r}")
    if not tol >= 0:
        raise ValueError(f"tol must be >= 0; got {tol!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"max_iter must be an integer >= 1; got {max_iter!r}")
    if not 0 < h_min <= h0:
        raise ValueError(f"need 0 < h_min <= h0; got h_min={h_min!r}, h0={h0!r}")
    if not warm_widen >= 1:
        raise ValueError(f"warm_widen must be >= 1; got {warm_widen!r}")
    if not 0 < h_factor < 1:
        raise ValueError(f"h_factor must be in (0, 1); got {h_factor!r}")
    if system not in _SYSTEMS:
        raise ValueError(f"system must be one of {_SYSTEMS}; got {system!r}")
    return y, d


@dataclass
class NewtonResult(InnerSVMResult):
    """What :func:`svm_newton` returns (the fields every inner solver's record shares, so
    that the ℓp-MKL outer loop takes either solver's record).

    Attributes
    ----------
    alpha : (ℓ,) ndarray
        Dual variables, feasible: the projection of the smoothed optimum's α onto
        {0 ≤ α ≤ C, yᵀα = 0}.
    gamma : (Σ r_k,) ndarray
        γ_k = √d_k V_kᵀYα, stacked (0 for kernels with d_k = 0).
    objective : float
        Objective (4) at ``alpha``.
    n_iter : int
        Newton steps, over all widths.
    converged : bool
        Whether the relative duality gap reached ``tol``.
    history : ndarray
        Objective (4) after each width.
    info : dict
        See :func:`svm_newton`.
    state : dict
        {``b``, ``h``}: the bias and the last width, for a warm start.
    """


def svm_newton(
    F: FactorStack,
    y,
    d,
    C: float,
    *,
    tol: float = 1e-3,
    max_iter: int = 500,
    h0: float = 1.0,
    h_min: float = 1e-7,
    h_factor: float = 0.1,
    newton_tol: float = 1e-8,
    alpha0=None,
    state: dict | None = None,
    rank_rtol: float = 1e-12,
    criterion: str = "gap",
    warm_widen: float = 10.0,
    system: str = "auto",
) -> NewtonResult:
    """Solve the SVM (4) with kernel Σ_k d_k V_k V_kᵀ by primal Newton (:ref:`guide-lpmkl-solvers`).

    Parameters
    ----------
    F : FactorStack
        The factors V_k, with a shared basis (V = B S: the features Φ = B L have the
        basis' r columns) or stacked (Φ = V D^{1/2}: Σ r_k columns, a (Σ r_k + 1)²
        Newton system — fine for small stacks only).
    y : (ℓ,) array of ±1
    d : (M,) kernel weights d_k ≥ 0 (kernels with d_k = 0 drop out).
    C : float > 0
    tol : float, default=1e-3
        Stop when the relative duality gap (P − D)/|D| of the *unsmoothed* SVM at the
        returned α is ≤ tol (checked after each width).
    max_iter : int, default=500
        Newton steps in all (over all widths).
    h0, h_min, h_factor : float
        Huber width: start (cold start), smallest, and the factor between widths.
    newton_tol : float, default=1e-8
        A width h is solved when the Newton decrement gᵀH⁻¹g ≤ newton_tol·h·(1 + |J|)
        (J the smoothed objective, which the smoothing changes by a relative O(h)), when
        a full step leaves the quadratic zone unchanged, or when the direction is no
        longer one of descent at working precision.
    alpha0 : (ℓ,) array, optional
        Warm start: w₀ = Φᵀ(y∘α₀) (the representer form, meaningful when d changed),
        b₀ from ``state`` or the best bias for w₀.
    state : dict, optional
        ``state`` of a previous call's result (``b``, the last width ``h``): the warm
        start begins at width min(h0, ``warm_widen``·h).
    rank_rtol : float
        Eigenvalues of H = S D Sᵀ below rank_rtol·λ_max are dropped (q ≤ r features).
    criterion : {"gap"}
        Only the duality-gap rule (accepted for interface compatibility with the GFB).
    warm_widen : float ≥ 1, default=10
        See ``state``.
    system : {"auto", "primal", "zone"}, default="auto"
        The form of the Newton system: ``"auto"`` takes, at each step, the one with
        fewer flops (the zone form only while the zone holds at most q/2 rows);
        ``"primal"`` always the (q + 1)² Hessian in feature space, ``"zone"`` always
        the system through the zone rows (the same steps up to round-off).

    Returns
    -------
    NewtonResult
        ``alpha`` feasible (projected), ``gamma`` = √d_k V_kᵀYα stacked, ``objective``
        the objective (4) at α, ``n_iter`` Newton steps, ``converged`` whether the gap
        reached ``tol``, ``history`` the objective (4) after each width. When the gap
        stops shrinking (two widths without progress: round-off, e.g. float32
        factors at h ≲ 1e-5) the continuation ends and the width with the smallest gap
        is returned. ``info``:
        ``relative_gap``, ``primal`` (hinge primal at (w, b)), ``dual``, ``bias`` (b),
        ``h`` (last width), ``widths`` (one (h, steps, relative gap) per width),
        ``n_features`` q, ``u`` = Aᵀ(y∘α) (A = B or V), ``w``, ``setup_seconds``,
        ``iter_seconds``, ``hessian_rows`` (rows summed into Hessians, in all),
        ``newton_systems`` (how many Newton systems each form solved).
        ``state`` = {``b``, ``h``} for a warm start.
    """
    if criterion != "gap":
        raise ValueError(
            f"the Newton solver stops on the duality gap only: criterion must be 'gap'; "
            f"got {criterion!r}"
        )
    t0 = time.perf_counter()
    y, d = _check(F, y, d, C, tol, max_iter, h0, h_min, h_factor, warm_widen, system)
    C = float(C)
    phi = _Features(F, d, rank_rtol)
    w, b, h = _start(phi, y, C, alpha0, state, h0, h_min, warm_widen)
    t_setup = time.perf_counter() - t0

    t1 = time.perf_counter()
    newton = _NewtonSystem(phi, system)
    path = _WidthPath()
    n = 0
    converged = False
    while True:  # continuation: h → h·h_factor until the hinge gap is below tol
        w, b, o, n, steps = _solve_width(phi, newton, y, C, h, w, b, n, max_iter, newton_tol)
        path.record(_hinge_gap(phi, y, C, w, b, o, h), w, b, h, steps)
        if path.rel <= tol:
            converged = True
            break
        if n >= max_iter or h <= h_min or path.worse >= 2:
            break
        h = max(h * h_factor, h_min)
    t_iter = time.perf_counter() - t1
    return _result(F, d, phi, path, newton, n, converged, t_setup, t_iter)


def _start(phi: _Features, y, C, alpha0, state, h0, h_min, warm_widen):
    """The starting point (w, b) and width h: w = 0 (cold) or the representer form of
    ``alpha0`` with the bias and width of ``state`` (warm)."""
    h = float(h0)
    b = 0.0
    if alpha0 is None:
        return np.zeros(phi.q), b, max(h, h_min)
    a0 = np.clip(np.asarray(alpha0, dtype=np.float64).ravel(), 0.0, C)
    if a0.shape[0] != y.size:
        raise ValueError(f"alpha0 has {a0.shape[0]} entries, expected {y.size}")
    w = phi.L.T @ phi.rmatvec_A(y * a0)
    if state is not None and "b" in state and np.isfinite(state["b"]):
        b = float(state["b"])
        if "h" in state and state["h"] > 0:
            h = min(float(h0), float(warm_widen) * float(state["h"]))
    else:
        b = best_bias(phi.matvec(w), y, C)[0]
    return w, b, max(h, h_min)


def _solve_width(phi: _Features, newton, y, C, h, w, b, n, max_iter, newton_tol):
    """Newton's method on the SVM smoothed at width h, from (w, b), with the exact line
    search; n counts the steps over all widths. Returns (w, b, o = Φw, n, steps)."""
    steps = 0
    newton.new_width()
    o = phi.matvec(w)  # refresh (the updates o += tΦΔw accumulate round-off)
    while n < max_iter:
        m, alpha, zone, J = _huber(y, o, b, w, h, C)
        gw = w - phi.L.T @ phi.rmatvec_A(y * alpha)
        gb = -float(y @ alpha)
        g = np.concatenate([gw, [gb]])
        step = newton.solve(zone, gw, gb, g, C / (2.0 * h))
        dec = -float(g @ step)
        if not dec > newton_tol * h * (1.0 + abs(J)):
            break
        dw, db = step[: phi.q], float(step[phi.q])
        pdw = phi.matvec(dw)
        t = _line_search(w, dw, m, y * (pdw + db), h, C)
        if t == 0.0:  # not a descent direction at working precision: solved
            break
        n += 1
        steps += 1
        w = w + t * dw
        b += t * db
        o += t * pdw
        # a full step that leaves the zone set unchanged is the exact minimizer
        if t == 1.0:
            sn = _scaled_margins(y, o, b, h)[1]
            if np.array_equal((sn > 0.0) & (sn <= 1.0), zone):
                break
    return w, b, o, n, steps


def _huber(y, o, b, w, h, C):
    """At the decision values o + b: the margins m, α = C·clip((1 + h − m)/(2h), 0, 1),
    the quadratic zone (0 < (1 + h − m)/(2h) ≤ 1) and the smoothed objective J."""
    m, sraw = _scaled_margins(y, o, b, h)
    alpha = C * np.clip(sraw, 0.0, 1.0)
    zone = (sraw > 0.0) & (sraw <= 1.0)
    loss = np.where(sraw >= 1.0, 1.0 - m, h * np.clip(sraw, 0.0, None) ** 2)
    J = 0.5 * float(w @ w) + C * float(loss.sum())
    return m, alpha, zone, J


def _scaled_margins(y, o, b, h):
    """The margins m = y∘(o + b) and (1 + h − m)/(2h), whose clip to [0, 1] is α/C."""
    m = y * (o + b)
    return m, (1.0 + h - m) / (2.0 * h)


class _NewtonSystem:
    """The generalized Hessian system of a Newton step in its two forms (user guide),
    each kept up to date between steps: the primal Hessian in feature space
    (Hφ = Φ_SᵀΦ_S, sφ = Φ_Sᵀ1, updated with the rows that entered or left the zone) and
    the zone rows with their Gram matrix (:class:`_ZoneRows`)."""

    def __init__(self, phi: _Features, system: str):
        self.phi = phi
        self.system = system
        self.zone_prev = None
        self.Hphi = self.sphi = None
        self.zone_rows = _ZoneRows(phi)
        self.systems = {"primal": 0, "zone": 0}
        self.hess_rows = 0

    def new_width(self):
        self.zone_prev = None  # a fresh Hessian per width (bounds the update round-off)

    def solve(self, zone, gw, gb, g, c):
        """The Newton step −H⁻¹g, H the generalized Hessian at curvature c = C/(2h)."""
        zidx = np.flatnonzero(zone)
        changed = self._changed(zone)
        if self._form(zidx, changed) == "zone":
            zrows, K, fresh = self.zone_rows.get(zidx)
            self.hess_rows += fresh
            self.systems["zone"] += 1
            return -_zone_solve(zrows, K, gw, gb, c)
        self._update_primal(zone, zidx, changed)
        self.systems["primal"] += 1
        return -_primal_solve(self.Hphi, self.sphi, zidx.size, g, c)

    def _changed(self, zone):
        """(rows that entered, rows that left) the zone since the primal Hessian was
        formed, or None when forming it afresh is cheaper."""
        if self.zone_prev is None:
            return None
        add = np.flatnonzero(zone & ~self.zone_prev)
        rem = np.flatnonzero(self.zone_prev & ~zone)
        return None if add.size + rem.size >= int(zone.sum()) else (add, rem)

    def _form(self, zidx, changed) -> str:
        """``system``, or under "auto" the form with fewer flops for this step."""
        if self.system != "auto":
            return self.system
        q, r_A, nzone = self.phi.q, self.phi.A.shape[1], zidx.size
        if changed is None:  # a fresh A_SᵀA_S, then LᵀGL
            cost_primal = nzone * r_A * r_A + 4.0 * r_A * q * q
        else:
            cost_primal = (changed[0].size + changed[1].size) * (r_A * q + q * q)
        cost_primal += q**3 / 3.0
        if 2 * nzone > q:  # rows of P near dependent: see the user guide
            cost_zone = math.inf
        else:
            cost_zone = self.zone_rows.missing(zidx) * (r_A * q + nzone * q) + nzone**3 / 3.0
        return "zone" if cost_zone < cost_primal else "primal"

    def _update_primal(self, zone, zidx, changed):
        phi = self.phi
        if changed is None:
            G, s1 = _gram_rows(phi.A, zidx)
            self.Hphi, self.sphi = phi.L.T @ G @ phi.L, phi.L.T @ s1
            self.hess_rows += zidx.size
        else:
            Pa, Pr = phi.rows(changed[0]), phi.rows(changed[1])
            self.Hphi += Pa.T @ Pa - Pr.T @ Pr
            self.sphi += Pa.sum(axis=0) - Pr.sum(axis=0)
            self.hess_rows += changed[0].size + changed[1].size
        self.zone_prev = zone


def _primal_solve(Hphi, sphi, nzone: int, g, c: float):
    """x solving [[I + c Hφ, c sφ], [c sφᵀ, c·max(s, 1)]] x = g by Cholesky (no zone row:
    a unit curvature for b)."""
    q = Hphi.shape[0]
    Hm = np.empty((q + 1, q + 1))
    Hm[:q, :q] = c * Hphi
    Hm[np.arange(q), np.arange(q)] += 1.0
    Hm[:q, q] = Hm[q, :q] = c * sphi
    Hm[q, q] = c * max(nzone, 1)
    try:
        return cho_solve(cho_factor(Hm, lower=True, check_finite=False), g)
    except LinAlgError:  # round-off in the updated Hφ: the symmetric part
        return np.linalg.lstsq(0.5 * (Hm + Hm.T), g, rcond=None)[0]


class _WidthPath:
    """The widths solved so far and the best certificate among them (round-off can
    stall tiny widths: the continuation stops after two widths without progress)."""

    def __init__(self):
        self.widths = []
        self.history = []
        self.rel = math.inf
        self.gap = None
        self.best = None
        self.worse = 0

    def record(self, gap: dict, w, b, h, steps):
        rel_h = gap["relative_gap"]
        self.history.append(-gap["dual"])
        self.widths.append((h, steps, rel_h))
        if rel_h < self.rel or self.best is None:
            self.rel, self.gap, self.best = rel_h, gap, (w.copy(), b, h)
            self.worse = 0
        else:
            self.worse += 1


def _result(F, d, phi, path, newton, n, converged, t_setup, t_iter) -> NewtonResult:
    """The record of the width with the smallest duality gap."""
    w, b, h = path.best
    gap = path.gap
    alpha_f, u, dual = gap["alpha"], gap["u"], gap["dual"]
    quad = 2.0 * (float(alpha_f.sum()) - dual)
    gamma = np.sqrt(np.repeat(d, F.ranks)) * (F.coef.T @ u if F.basis is not None else u)
    info = {
        "method": "newton",
        "criterion": "gap",
        "relative_gap": path.rel,
        "primal": gap["primal"],
        "dual": dual,
        "bias": gap["bias"],
        "newton_bias": b,
        "h": h,
        "widths": path.widths,
        "n_features": phi.q,
        "u": u,
        "w": w,
        "hessian_rows": newton.hess_rows,
        "newton_systems": newton.systems,
        "setup_seconds": t_setup,
        "iter_seconds": t_iter,
        "active_kernels": np.flatnonzero(d > 0),
    }
    return NewtonResult(
        alpha=alpha_f,
        gamma=gamma,
        objective=0.5 * quad - float(alpha_f.sum()),
        n_iter=n,
        converged=converged,
        history=np.asarray(path.history),
        info=info,
        state={"b": b, "h": h},
    )


class _ZoneRows:
    """The rows P = Φ_S = A_S L of the quadratic zone and their Gram PPᵀ, kept between
    Newton steps: a step computes only the rows that entered the zone (O(r q) each)
    and their inner products with the others (O(s q) each)."""

    def __init__(self, phi: _Features):
        self.phi = phi
        self.idx = np.empty(0, dtype=np.intp)
        self.rows = np.empty((0, phi.q))
        self.K = np.empty((0, 0))

    def _locate(self, idx):
        have = np.zeros(idx.size, dtype=bool)
        pos = np.zeros(idx.size, dtype=np.intp)
        if self.idx.size:
            pos = np.searchsorted(self.idx, idx)
            inside = pos < self.idx.size
            have[inside] = self.idx[pos[inside]] == idx[inside]
        return have, pos

    def missing(self, idx) -> int:
        """How many of the sorted row indices idx are not kept."""
        return int(idx.size - self._locate(idx)[0].sum())

    def get(self, idx):
        """(P, PPᵀ, the number of rows computed afresh) for the sorted indices idx."""
        have, pos = self._locate(idx)
        old = pos[have]
        miss = np.flatnonzero(~have)
        rows = np.empty((idx.size, self.phi.q))
        rows[have] = self.rows[old]
        rows[miss] = self.phi.rows(idx[miss])
        K = np.empty((idx.size, idx.size))
        keep = np.flatnonzero(have)
        K[np.ix_(keep, keep)] = self.K[np.ix_(old, old)]
        if miss.size:
            Kn = rows[miss] @ rows.T
            K[miss, :] = Kn
            K[:, miss] = Kn.T
        self.idx, self.rows, self.K = idx, rows, K
        return rows, K, int(miss.size)


def _zone_solve(P, K, gw, gb, c: float):
    """x solving the generalized Hessian system [[I + cPᵀP, cPᵀ1], [c1ᵀP, cs]] x = (gw, gb)
    through the s zone rows P = Φ_S (s × q), with K = PPᵀ, instead of the (q + 1)²
    matrix.

    With z = c(P x_w + 1 x_b): x_w = g_w − Pᵀz, 1ᵀz = g_b and (PPᵀ + I/c) z = P g_w + 1 x_b,
    so with K_c = PPᵀ + I/c (s × s, SPD): z = K_c⁻¹P g_w + x_b K_c⁻¹1 and x_b follows from
    1ᵀz = g_b. No zone row (s = 0): x = (g_w, g_b / c), the primal system's unit curvature
    for b.
    """
    s = P.shape[0]
    if s == 0:
        return np.concatenate([gw, [gb / c]])
    Kc = K.copy()
    Kc[np.arange(s), np.arange(s)] += 1.0 / c
    try:
        fac = cho_factor(Kc, lower=True, check_finite=False)

        def solve(B):
            return cho_solve(fac, B, check_finite=False)

    except LinAlgError:  # round-off: the symmetric part by least squares
        Ks = 0.5 * (Kc + Kc.T)

        def solve(B):
            return np.linalg.lstsq(Ks, B, rcond=None)[0]

    k1 = solve(np.ones(s))
    k1sum = float(k1.sum())

    def apply_inverse(rw, rb):
        p1 = solve(P @ rw)
        xb = (rb - float(p1.sum())) / k1sum
        return rw - P.T @ (p1 + xb * k1), xb

    # one step of iterative refinement on the (q + 1)² system (the elimination loses
    # digits when c‖P‖² is large, i.e. at small widths)
    xw, xb = apply_inverse(gw, gb)
    v = c * (P @ xw + xb)
    dw, db = apply_inverse(gw - xw - P.T @ v, gb - float(v.sum()))
    return np.concatenate([xw + dw, [xb + db]])


def _line_search(w, dw, m, delta, h, C, max_trials: int = 60) -> float:
    """argmin_t J(w + tΔw, b + tΔb): the root of the piecewise-linear φ'(t).

    φ'(t) = wᵀΔw + t‖Δw‖² − Σ δ_i α_i(m_i + tδ_i), non-decreasing, φ'(0) < 0 along a
    descent direction; φ''(t) = ‖Δw‖² + (C/2h) Σ_{zone(t)} δ_i². Newton on φ' lands on
    the root of a linear piece in one step; bisection keeps it bracketed.
    """
    wdw = float(w @ dw)
    dwdw = float(dw @ dw)
    c = C / (2.0 * h)

    def deriv(t):
        s = (1.0 + h - (m + t * delta)) / (2.0 * h)
        a = C * np.clip(s, 0.0, 1.0)
        zone = (s > 0.0) & (s < 1.0)
        dz = delta[zone]
        return wdw + t * dwdw - float(delta @ a), dwdw + c * float(dz @ dz)

    lo, hi = 0.0, math.inf
    f0, _ = deriv(0.0)
    if not f0 < 0:
        return 0.0
    scale = abs(f0)
    t = 1.0
    for _ in range(max_trials):
        f, f2 = deriv(t)
        if abs(f) <= 1e-13 * scale:
            return t
        if f < 0:
            lo = t
        else:
            hi = t
        t_new = t - f / f2 if f2 > 0 else math.nan
        if not lo < t_new < hi:
            t_new = 0.5 * (lo + hi) if math.isfinite(hi) else 2.0 * max(t, lo)
        if math.isfinite(hi) and hi - lo <= 1e-14 * hi:
            return lo
        t = t_new
    return lo if lo > 0 else t


def _hinge_gap(phi: _Features, y, C, w, b, o, h):
    """Duality gap of the unsmoothed SVM at the smoothed α of width h."""
    m, sraw = _scaled_margins(y, o, b, h)
    alpha_f = project_feasible(C * np.clip(sraw, 0.0, 1.0), y, C)
    u = phi.rmatvec_A(y * alpha_f)
    v = phi.L.T @ u
    dual = float(alpha_f.sum()) - 0.5 * float(v @ v)
    loss_b = C * float(np.maximum(0.0, 1.0 - m).sum())
    b_best, loss_best = best_bias(o, y, C)
    if loss_b <= loss_best:
        b_best, loss_best = b, loss_b
    primal = 0.5 * float(w @ w) + loss_best
    rel = (primal - dual) / max(abs(dual), 1e-300)
    return {
        "alpha": alpha_f,
        "u": u,
        "dual": dual,
        "primal": primal,
        "bias": b_best,
        "relative_gap": rel,
    }

"""Cholesky with Side Information (CSI): predictive low-rank decomposition.

The math of :class:`lorak.CSI` (Bach & Jordan 2005). The steps, where the arrays named
below (Gadv, Gl, u_i, D, Dadv, A, B, C) are defined: :ref:`guide-csi-algorithm`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
from scipy.linalg import solve_triangular
from scipy.linalg.blas import drot, dscal

from .._core.validation import check_bool, check_bound, check_float_array

__all__ = ["CSIResult", "csi", "csi_q", "fit_csi"]

_QR_RTOL = 1e-10  # a centred column with a residual below this × its norm adds no direction
_B_RTOL = 1e-11  # B(i) below this × max A: no new direction for the prediction term
_GRAM_RTOL = 1e-7  # Gram-based R: residuals below this × ‖Πa‖ are round-off
_REORTH = 1.0 / math.sqrt(2.0)


@dataclass
class CSIResult:
    """Output of :func:`csi`.

    Attributes
    ----------
    G : (n, r) Fortran-ordered factor, lower triangular on ``G[pivots]``.
    pivots : (r,) rows in the order chosen.
    Q, R : QR decomposition of ΠG (of Π_L G[L] with a labeled subset): Q (n_L × r)
        with orthonormal or zero columns — None when the run kept Q implicit (all
        rows labeled; ``csi_q`` forms it) — and R (r × r) upper triangular with a
        non-negative diagonal.
    approx_error : (r + 1,) tr(K − G_kG_kᵀ)/tr K, k = 0..r.
    prediction_error : (r + 1,) ‖Y − Q_kQ_kᵀY‖²/‖Y‖², k = 0..r (Y centred if centering).
    objective : (r + 1,) (1 − κ)·approx_error + κ·prediction_error, i.e. J of Eq. (2).
    predicted_gain, true_gain : (r,) the approximate gain (9)–(10) of the chosen pivot
        and the exact decrease of J after its step.
    lookahead_hit : (r,) bool, whether the pivot was in the look-ahead set (then the
        predicted gain is exact).
    kernel_columns : (c,) rows whose kernel column was computed, in order (c ≤ r + δ).
    stop_reason : "tol", "max_rank" or "exhausted" (no pivot with positive residual).
    """

    G: np.ndarray
    pivots: np.ndarray
    Q: np.ndarray | None
    R: np.ndarray
    approx_error: np.ndarray
    prediction_error: np.ndarray
    objective: np.ndarray
    predicted_gain: np.ndarray
    true_gain: np.ndarray
    lookahead_hit: np.ndarray
    kernel_columns: np.ndarray
    stop_reason: str


def csi(
    diag: np.ndarray,
    column: Callable[[int], np.ndarray],
    Y: np.ndarray,
    max_rank: int,
    *,
    kappa: float = 0.99,
    lookahead: int = 40,
    tol: float = 1e-4,
    centering: bool = True,
    labeled: np.ndarray | None = None,
    refresh: int = 64,
    selection: str = "argmax",
    qr: str = "auto",
) -> CSIResult:
    """Cholesky with side information from diag(K), kernel columns and targets Y.

    Greedily builds K ≈ GGᵀ minimizing J(G) = (1−κ) tr(K−GGᵀ)/tr K +
    κ ‖Y − QQᵀY‖²/‖Y‖² (Bach & Jordan 2005, Eq. 2): :ref:`guide-csi-algorithm`.

    Parameters
    ----------
    diag : (n,) diag(K).
    column : callable, ``column(i)`` → K(:, i) as an (n,) array.
    Y : (n, d) targets (one-hot classes or responses); rows outside ``labeled`` are
        ignored.
    max_rank : int, at most this many columns.
    kappa : float in [0, 1], weight of the prediction term.
    lookahead : int ≥ 0, δ.
    tol : float ≥ 0, stop after a step whose true gain is below ``tol``.
    centering : bool, centre Y and the columns of G in the prediction term (an
        intercept is free, Section 5.4).
    labeled : (n,) bool mask, optional; rows that carry a target.
    refresh : int ≥ 1, recompute the approximate-gain sums exactly every ``refresh``
        steps.
    selection : "argmax" (default) or "reference" (the reference code's scan).
    qr : "auto" (default: implicit Q from the Gram matrix when every row is labeled,
        explicit Gram–Schmidt otherwise), "gram" or "cgs2".

    Returns
    -------
    CSIResult
    """
    diag, Y, labeled = _check_csi(
        diag, column, Y, (max_rank, "max_rank"), kappa, lookahead, tol, centering, labeled
    )
    check_bound(refresh, "refresh", low=1, strict=False, integer=True)
    for name, value, valid in (
        ("selection", selection, ("argmax", "reference")),
        ("qr", qr, ("auto", "gram", "cgs2")),
    ):
        if not isinstance(value, str) or value not in valid:
            raise ValueError(
                f"unknown {name} {value!r}; valid values are {', '.join(map(repr, valid))}"
            )
    return _CSI(
        diag, column, Y, max_rank, kappa, lookahead, tol, centering, labeled, refresh, selection, qr
    ).run()


def _check_csi(diag, column, Y, rank, kappa, lookahead, tol, centering, labeled):
    """CSI's inputs checked, each error naming its argument: diag (n,) finite; column
    callable; Y (n,) or (n, d), finite on the labeled rows; labeled None or an (n,)
    boolean mask with a row; the rank (``(value, name)``) ≥ 1 and lookahead ≥ 0
    integers; kappa in [0, 1]; tol ≥ 0; centering a bool. Returns (diag, Y, labeled)
    as arrays."""
    diag = check_float_array(diag, "diag", ndim=1)
    n = diag.shape[0]
    if not callable(column):
        raise TypeError(f"column must be callable: i -> K[:, i]; got {column!r}")
    if Y is None or isinstance(Y, (str, bytes)):
        raise TypeError(f"Y must be an (n, d) array of targets; got {Y!r}")
    try:
        Ya = np.asarray(Y, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"Y must be an array of numbers: {exc}") from None
    if Ya.ndim not in (1, 2) or Ya.shape[0] != n:
        raise ValueError(f"Y must be (n,) or (n, d) with n = {n} rows, as diag; got {Ya.shape}")
    if labeled is not None:
        mask = np.asarray(labeled)
        if mask.dtype != bool or mask.shape != (n,):
            raise ValueError(
                f"labeled must be a boolean mask of the {n} rows; got {mask.dtype} of shape "
                f"{mask.shape}"
            )
        if not mask.any():
            raise ValueError("labeled marks no row: at least one row must carry a target")
        labeled = mask
    rows = Ya if labeled is None else Ya[labeled]
    if not np.all(np.isfinite(rows)):
        raise ValueError("Y holds NaN or infinity on the labeled rows")
    check_bound(rank[0], rank[1], low=1, strict=False, integer=True)
    check_bound(lookahead, "lookahead", low=0, strict=False, integer=True)
    check_bound(kappa, "kappa", low=0, strict=False)
    if kappa > 1:
        raise ValueError(f"kappa must be in [0, 1]; got {kappa!r}")
    check_bound(tol, "tol", low=0, strict=False)
    check_bool(centering, "centering")
    return diag, Ya, labeled


def csi_q(
    G: np.ndarray, R: np.ndarray, *, labeled: np.ndarray | None = None, centering: bool = True
) -> np.ndarray:
    """Q of the QR decomposition ΠG(L, :) = QR given G and R: Q = ΠG(L, :) R⁻¹.

    Columns where R has a zero row (ΠG lost rank there) are zero. O(n r²).
    """
    Gc = check_float_array(G, "G")
    r = Gc.shape[1]
    R = check_float_array(R, "R")
    if R.shape[0] != R.shape[1] or R.shape[0] < r:
        raise ValueError(f"R must be square with at least {r} rows (G's columns); got {R.shape}")
    check_bool(centering, "centering")
    if labeled is not None:
        mask = np.asarray(labeled)
        if mask.dtype != bool or mask.shape != (Gc.shape[0],):
            raise ValueError(
                f"labeled must be a boolean mask of G's {Gc.shape[0]} rows; got {mask.dtype} "
                f"of shape {mask.shape}"
            )
        Gc = Gc[mask]
    if centering:
        Gc = Gc - Gc.mean(axis=0)
    Q = np.zeros(Gc.shape, order="F")
    nz = np.flatnonzero(np.diag(R)[:r] != 0)
    if nz.size:
        Rn = np.asarray(R, dtype=np.float64)[np.ix_(nz, nz)]
        Q[:, nz] = solve_triangular(Rn, Gc[:, nz].T, trans="T", check_finite=False).T
    return Q


def fit_csi(
    diag: np.ndarray,
    column: Callable[[int], np.ndarray],
    Y: np.ndarray,
    n_components: int,
    *,
    kappa: float = 0.99,
    lookahead: int = 40,
    tol: float = 1e-4,
    centering: bool = True,
    labeled: np.ndarray | None = None,
) -> CSIResult:
    """CSI's one entry (:class:`lorak.CSI`): refuses a prediction term that is undefined
    (κ > 0 with Y zero, or constant when centred, on the ``labeled`` rows: ‖Y‖ = 0),
    then :func:`csi` to rank at most ``n_components``."""
    diag, Y, labeled = _check_csi(
        diag, column, Y, (n_components, "n_components"), kappa, lookahead, tol, centering, labeled
    )
    if Y.ndim == 1:
        Y = Y[:, None]
    if kappa > 0:
        Yl = Y if labeled is None else Y[labeled]
        if centering:
            Yl = Yl - Yl.mean(axis=0)
        if not np.any(Yl):
            what = "constant" if centering else "zero"
            raise ValueError(
                f"y is {what} on the labeled rows, so the prediction term of CSI is "
                "undefined (‖Y‖ = 0); pass varying targets, or kappa=0 for the "
                "approximation term alone"
            )
    return csi(
        diag, column, Y, n_components, kappa=kappa, lookahead=lookahead, tol=tol,
        centering=centering, labeled=labeled,
    )  # fmt: skip


class _CSI:
    """State of one CSI run (arrays named as in the user guide, "CSI step by step")."""

    def __init__(
        self, diag, column, Y, max_rank, kappa, lookahead, tol, centering, labeled, refresh, sel, qr
    ):
        d0 = np.array(diag, dtype=np.float64)
        n = d0.shape[0]
        self.n = n
        self.column = column
        self.m = min(int(max_rank), n)
        self.delta = int(lookahead)
        self.tol = float(tol)
        self.refresh_every = max(1, int(refresh))
        self.reference = sel == "reference"
        self.trK = float(d0.sum())
        if not self.trK > 0:
            raise ValueError("diag(K) sums to zero: the kernel is zero on the data")
        if self.reference:
            self.floor = self.dfloor = 1e-12
        else:
            self.floor = n * np.finfo(np.float64).eps * float(d0.max())
            self.dfloor = self.floor

        self._targets(Y, labeled, centering, kappa)
        self._allocate(d0, qr)
        if self.reference:
            self.order = np.arange(n, dtype=np.intp)  # the reference code's permutation

    def _targets(self, Y, labeled, centering, kappa):
        """The labeled rows L, the (centred) targets Y_L and the weights λ, μ."""
        Y = np.asarray(Y, dtype=np.float64)
        if Y.ndim == 1:
            Y = Y[:, None]
        if labeled is None:
            self.L = None
            Yl = Y.copy()
        else:
            self.L = np.flatnonzero(np.asarray(labeled, dtype=bool))
            Yl = Y[self.L].copy()
        self.centering = bool(centering)
        if self.centering:
            Yl -= Yl.mean(axis=0)
        self.Y = np.ascontiguousarray(Yl)
        self.sumY2 = float(np.einsum("ij,ij->", Yl, Yl))
        kappa = float(kappa)
        self.kappa = kappa
        self.lamK = (1.0 - kappa) / self.trK
        self.lamY = kappa / self.sumY2 if (kappa > 0 and self.sumY2 > 0) else 0.0
        # the largest ‖Yᵀq‖² over unit vectors q: σ_max(Y)²
        self.ymax = float(np.linalg.eigvalsh(Yl.T @ Yl)[-1]) if Yl.size else 0.0

    def _allocate(self, d0, qr):
        """Gadv, its QR (Q explicit or implicit), the small blocks and the gain sums."""
        n = self.n
        self.cap = min(self.m + self.delta, n)
        nL = n if self.L is None else self.L.size
        dY = self.Y.shape[1]
        self.G = np.zeros((n, self.cap), order="F")
        # explicit Q (Gram–Schmidt) for a labeled subset, where n_L is small and ΠG(L, :)
        # often loses rank; otherwise R alone from the Gram matrix (Q = ΠG R⁻¹)
        self.explicit_q = self.L is not None if qr == "auto" else qr == "cgs2"
        if self.explicit_q:
            self.Q = np.zeros((nL, self.cap), order="F")
        self.R = np.zeros((self.cap, self.cap))
        self.QtY = np.zeros((self.cap, dY))
        self.GtG = np.zeros((self.cap, self.cap))  # look-ahead block only
        self.colsum = np.zeros(self.cap)  # 1ᵀG
        self.piv = np.empty(self.cap, dtype=np.intp)
        self.pos = np.full(n, -1, dtype=np.intp)  # position of a row in Gadv, -1 if none
        self.D = d0.copy()
        self.Dadv = d0.copy()
        self.A = np.zeros(n)
        self.B = np.zeros(n)
        self.C = np.zeros((dY, n))  # c_i = Yᵀw_i as columns: rows contiguous in n
        self.k = 0
        self.kadv = 0
        self.visited: list[int] = []

    # ------------------------------------------------------------ Cholesky + QR step

    def _swap_order(self, p1, p2):
        o = self.order
        o[p1], o[p2] = o[p2], o[p1]

    def _add_column(self, j: int) -> None:
        """One Cholesky step (Section 2.1) and one QR step (4.1) with pivot j at kadv."""
        k, t = self.k, self.kadv
        G = self.G
        if self.reference:
            self._swap_order(t, int(np.flatnonzero(self.order == j)[0]))
        s = math.sqrt(self.Dadv[j])
        kcol = np.asarray(self.column(j), dtype=np.float64).reshape(-1)
        if kcol.shape[0] != self.n:
            raise ValueError(f"column({j}) returned {kcol.shape[0]} values; expected {self.n}")
        if not np.all(np.isfinite(kcol)):
            raise ValueError(f"column({j}) returned NaN or infinity: the kernel must be finite")
        self.visited.append(j)
        col = kcol - G[:, :t] @ G[j, :t] if t else kcol.copy()  # never write into kcol
        col /= s
        col[self.piv[:t]] = 0.0  # exact zeros on the earlier pivot rows
        col[j] = s
        G[:, t] = col
        self.Dadv -= col * col
        self.Dadv[j] = 0.0
        np.maximum(self.Dadv, 0.0, out=self.Dadv)
        # QR step on the centred (labeled) column, and the Gram matrix of the
        # look-ahead block (uncentred, for A): one pass over G for both when possible
        v = col if self.L is None else col[self.L]
        scale = float(np.linalg.norm(v))
        v = v - v.mean() if self.centering else v.copy()
        c = None
        if t > k or (t and not self.explicit_q):
            if self.explicit_q:
                ga = G[:, k:t].T @ col
            elif self.L is None:
                # one gemv: Gᵀcol = GᵀΠcol + mean(col)·Gᵀ1 (a GEMM with two right-hand
                # sides is several times slower than a gemv in OpenBLAS at this shape)
                c = G[:, :t].T @ v
                ga = c[k:] + (col.mean() * self.colsum[k:t]) if self.centering else c[k:]
            else:
                ga = G[:, k:t].T @ col
                c = G[self.L, :t].T @ v
            self.GtG[k:t, t] = ga
            self.GtG[t, k:t] = ga
        self.GtG[t, t] = col @ col
        self.colsum[t] = col.sum()
        if self.explicit_q:
            self._qr_cgs2(v, scale, t)
        else:
            self._qr_gram(v, c, scale, t)
        self.piv[t] = j
        self.pos[j] = t
        self.kadv = t + 1

    def _qr_cgs2(self, v, scale, t):
        """QR step with explicit Q: classical Gram–Schmidt, re-orthogonalized once."""
        Q, R = self.Q, self.R
        nv0 = float(np.linalg.norm(v))
        if t:
            Qa = Q[:, :t]
            r = Qa.T @ v
            v -= Qa @ r
            nv = float(np.linalg.norm(v))
            if nv < _REORTH * nv0:
                r2 = Qa.T @ v
                v -= Qa @ r2
                r += r2
                nv = float(np.linalg.norm(v))
            R[:t, t] = r
        else:
            nv = nv0
        if nv > _QR_RTOL * scale and nv > 0:
            v /= nv
            Q[:, t] = v
            R[t, t] = nv
            self.QtY[t] = v @ self.Y
        else:  # ΠG lost rank: a zero Q column and R row keep ΠG = QR exact
            Q[:, t] = 0.0
            R[t, t:] = 0.0
            self.QtY[t] = 0.0

    def _qr_gram(self, v, c, scale, t):
        """QR step without Q: R(:t, t) = R⁻ᵀ (ΠG)ᵀΠa, R(t, t)² = ‖Πa‖² − ‖R(:t, t)‖².

        ``c`` = (ΠG)ᵀΠa = GᵀΠa (Π symmetric and idempotent) costs one pass over G
        instead of four over Q; Q = ΠG R⁻¹ stays implicit. Q's rows of zero R rows are zero, so
        those entries of the triangular solve are set to zero.
        """
        R = self.R
        nv2 = float(v @ v)
        if t:
            Rt = R[:t, :t]
            dz = np.diag(Rt) == 0
            if dz.any():
                Rt = Rt.copy()
                Rt[dz, dz] = 1.0
            r = solve_triangular(Rt, c, trans="T", check_finite=False)
            r[dz] = 0.0
            R[:t, t] = r
            rho2 = nv2 - float(r @ r)
            yv = v @ self.Y - r @ self.QtY[:t]
        else:
            rho2 = nv2
            yv = v @ self.Y
        rho = math.sqrt(rho2) if rho2 > 0 else 0.0
        # the semi-normal residual carries ~√eps·‖Πa‖ of round-off
        if rho > _GRAM_RTOL * math.sqrt(nv2) and rho > _QR_RTOL * scale:
            R[t, t] = rho
            self.QtY[t] = yv / rho
        else:
            R[t, t:] = 0.0
            self.QtY[t] = 0.0

    # ------------------------------------------------------------ look-ahead pivots

    def _next_lookahead(self) -> int | None:
        """Incomplete-Cholesky pivot rule on Dadv (Section 2.2) among non-pivots."""
        if self.kadv >= self.n:
            return None
        if self.reference:
            rows = self.order[self.kadv :]
            pos = _hysteresis_argmax(self.Dadv[rows], np.ones(rows.size, bool), 1e-12, 0.99)
            return None if pos is None else int(rows[pos])
        vals = np.where(self.pos < 0, self.Dadv, -1.0)
        j = int(np.argmax(vals))
        return j if vals[j] > self.dfloor else None

    def _initial_lookahead(self) -> None:
        for _ in range(min(self.delta, self.cap)):
            if self.reference:
                rows = self.order[self.kadv :]
                vals = self.Dadv[rows]
                pos = _hysteresis_argmax(vals, np.ones(rows.size, bool), vals[0], 0.99)
                pos = 0 if pos is None else pos
                if vals[pos] < 1e-12:
                    break
                j = int(rows[pos])
            else:
                j = self._next_lookahead()
                if j is None:
                    break
            self._add_column(j)

    # ------------------------------------------------------------ approximate gains

    def _refresh(self) -> None:
        """Exact A, B, C and GlᵀGl from the look-ahead block (O(δ²n))."""
        k, t = self.k, self.kadv
        self.since_refresh = 0
        if t <= k:
            self.A[:] = 0.0
            self.B[:] = 0.0
            self.C[:] = 0.0
            return
        Gl = self.G[:, k:t]
        M = Gl.T @ Gl
        self.GtG[k:t, k:t] = M
        self.A = np.einsum("ij,ij->i", Gl @ M, Gl)
        T = Gl @ self.R[k:t, k:t].T
        self.B = np.einsum("ij,ij->i", T, T)
        self.C = self.QtY[k:t].T @ T.T

    def _select(self):
        """The pivot with the largest approximate gain (9)–(10), and that gain."""
        k = self.k
        D, Dadv, A = self.D, self.Dadv, self.A
        # candidates: residual > 0 (committed pivots have D = 0), and either in the
        # look-ahead set or with a Cholesky column that Gadv can still take (Dadv > 0)
        ok = Dadv > self.dfloor
        ok |= self.pos >= k
        ok &= D > self.floor
        if not ok.any():
            return None
        num = 2.0 * D
        num -= Dadv
        num *= Dadv
        num += A
        num *= self.lamK  # λ (A + D² − (D − Dadv)²), divided by D below
        gain = np.full(self.n, -np.inf)
        np.divide(num, D, out=gain, where=ok)
        use_y = self.lamY > 0 and (self.kadv > k + 1 if self.reference else self.kadv > k)
        if use_y:
            B = self.B
            if self.reference:
                good = B >= 1e-12
            else:
                Amax = float(np.maximum.reduce(A, where=ok, initial=0.0))
                good = B > _B_RTOL * max(Amax, np.finfo(np.float64).tiny)
            dJY = np.einsum("ij,ij->j", self.C, self.C)
            np.divide(dJY, B, out=dJY, where=good)
            dJY[~good] = 0.0
            np.clip(dJY, 0.0, self.ymax, out=dJY)
            dJY *= self.lamY
            gain += dJY
        if self.reference:
            rows = self.order[k:]
            p = _hysteresis_argmax(gain[rows], ok[rows], -1.0, 0.9)
            if p is None:
                return None
            i = int(rows[p])
        else:
            i = int(np.argmax(gain))
        return i, float(gain[i])

    # ------------------------------------------------------------ Appendix A

    def _transpositions(self, q: int):
        """Move the pivot at position q to k by successive transpositions (Appendix A).

        For P = (s, s+1), s = q−1, …, k: the rotation Q₁ that makes G(P,P) lower
        triangular again only depends on the moving pivot's row (x = G(π, s) and the
        entry y it carries in column s+1), so it is computed from that row alone;
        R(:,P) ← R(:,P)Q₁ and the Givens rotation Q₂ with R(P,P) = Q₂R₂ are applied to
        the small (q−k+1)² block of R. Returns the final pivot entry of the moving row,
        the new R block, the accumulated O₁ (columns of G) and O₂ (columns of Q), both
        products of the rotations, and the rotations for the n-sized columns.

        All rotations use BLAS ``drot``'s convention [x, y] ← [c x + s y, c y − s x],
        called positionally on flat views (keyword parsing costs more than the work
        on these small blocks).
        """
        k = self.k
        b = q - k + 1
        piv, pos = self.piv, self.pos
        row = self.G[piv[q], k : q + 1].tolist()
        Rb = np.array(self.R[k : q + 1, k : q + 1], order="F")
        rf = Rb.reshape(-1, order="F")  # a view: entry (i, j) at i + j·b
        c1s, s1s, c2s, s2s = [0.0] * (b - 1), [0.0] * (b - 1), [0.0] * (b - 1), [0.0] * (b - 1)
        y = row[b - 1]
        for s in range(q - 1, k - 1, -1):
            t = s - k
            # 1. permute the pivots s and s+1 (their rows in G and Q are relabelled)
            ps, ps1 = piv[s + 1], piv[s]
            piv[s], piv[s + 1] = ps, ps1
            pos[ps], pos[ps1] = s, s + 1
            if self.reference:
                self._swap_order(s, s + 1)
            # 2. Q₁ zeroes the moving row's entry in column s+1: G(P,P) lower triangular
            x = row[t]
            h = math.hypot(x, y)
            c1, s1 = x / h, y / h
            y = h
            # 3. R(:,P) ← R(:,P) Q₁ (rows 0..t+1 of the block; the rest are zero)
            drot(rf, rf, c1, s1, t + 2, t * b, 1, (t + 1) * b, 1, 1, 1)
            # 4. R(P,P) = Q₂R₂, R(P,:) ← Q₂ᵀR(P,:) (a Givens rotation of rows t, t+1)
            al, ga = rf.item(t + t * b), rf.item(t + 1 + t * b)
            h2 = math.hypot(al, ga)
            c2, s2 = (al / h2, ga / h2) if h2 > 0 else (1.0, 0.0)
            drot(rf, rf, c2, s2, b - t, t + t * b, b, t + 1 + t * b, b, 1, 1)
            rf[t + 1 + t * b] = 0.0
            c1s[t], s1s[t], c2s[t], s2s[t] = c1, s1, c2, s2
        O1 = _rotation_product(c1s, s1s)
        O2 = _rotation_product(c2s, s2s)
        rots = list(zip(range(k, q), c1s, s1s, c2s, s2s, strict=True))[::-1]
        return y, Rb, O1, O2, rots

    def _apply_rotations(self, rots) -> None:
        """Apply the transpositions' rotations to the n-sized columns (O(n) each)."""
        n = self.n
        Gf = self.G.reshape(-1, order="F")  # a view (G is Fortran-ordered)
        for s, c1, s1, _, _ in rots:
            drot(Gf, Gf, c1, s1, n, s * n, 1, (s + 1) * n, 1, 1, 1)
        if self.explicit_q:
            nq = self.Q.shape[0]
            Qf = self.Q.reshape(-1, order="F")
            for s, _, _, c2, s2 in rots:
                drot(Qf, Qf, c2, s2, nq, s * nq, 1, (s + 1) * nq, 1, 1, 1)

    # ------------------------------------------------------------ one step

    def _step(self, i: int) -> tuple[float, bool]:
        """Commit pivot i at position k; returns (true gain, look-ahead hit)."""
        k = self.k
        t_old = self.kadv  # end of the look-ahead block before this step
        hit, q, added = self._extend(i)
        old = self._old_blocks(k, t_old, q, added)
        h, Rb, O1, O2, rots = self._transpositions(q)  # c. on the small blocks
        up = self._gain_coefficients(old, O1[:, 0].copy(), O2[:, 0], q - k + 1)
        self._apply_rotations(rots)  # the permutation: n-sized columns, then small
        self._permute_small(k, q, h, Rb, O1, O2)
        if self.G[self.piv[k], k] < 0:
            # positive pivot entry (rotations may leave a look-ahead one < 0)
            dscal(-1.0, self.G[:, k])
            self.R[: k + 1, k] *= -1.0
            self.colsum[k] *= -1.0
            up.P[1] *= -1.0
            up.ag = -up.ag
        g = self.G[:, k]
        gnorm2 = self._update_gains(g, old, up)
        self._commit(i, g)
        self.last = (gnorm2, float(up.yq @ up.yq))
        return self.lamK * gnorm2 + self.lamY * float(up.yq @ up.yq), hit

    def _extend(self, i: int):
        """b. The column of pivot i into Gadv, or (a look-ahead hit) the look-ahead
        refilled by one incomplete-Cholesky step: (hit, i's position q, whether a
        column was added)."""
        k = self.k
        if self.pos[i] < k:
            q = self.kadv
            self._add_column(i)
            return False, q, True
        q = int(self.pos[i])
        if k + 1 < self.m and self.kadv < self.cap:
            j = self._next_lookahead()
            if j is not None:
                self._add_column(j)
                return True, q, True
        return True, q, False

    def _old_blocks(self, k, t_old, q, added):
        """Copies of the look-ahead blocks before the transpositions, which the gain
        updates need: Rl, QᵀY, GlᵀG, and for an added column a its column, Gram and R
        entries."""
        old = SimpleNamespace(dl=t_old - k, added=added, t_old=t_old)
        old.Rl = self.R[k:t_old, k:t_old].copy()
        if added:
            old.a = self.G[:, t_old].copy()
            old.ga = self.GtG[k:t_old, t_old].copy()
            old.anorm2 = float(self.GtG[t_old, t_old])
            old.v = self.R[k : t_old + 1, t_old].copy()
            old.QtYx = self.QtY[k : t_old + 1].copy()
        else:
            old.QtYx = self.QtY[k:t_old].copy()
        old.GtGx = self.GtG[k : self.kadv, k : q + 1].copy()
        return old

    def _gain_coefficients(self, old, o, z, b):
        """The coefficients of the gain updates (user guide) from the old blocks and
        the first columns o, z of the transpositions' Q₁, Q₂: P = Wᵀ Glᵀ (4 × n), aᵀg,
        Yᵀq_k, and for an added column ‖â‖² and Yᵀâ."""
        dl, k = old.dl, self.k
        up = SimpleNamespace()
        gg = old.GtGx[:dl] @ o  # Glᵀ g
        up.ag = float(old.GtGx[dl] @ o) if old.added else 0.0  # aᵀ g
        zt = np.zeros(old.QtYx.shape[0])
        zt[:b] = z
        up.yq = old.QtYx.T @ zt  # Yᵀ q_k
        W = np.zeros((dl, 4))
        W[:, 1] = gg
        W[:, 2] = old.Rl.T @ zt[:dl]
        if old.added:
            W[:, 0] = old.ga
            vp = old.v - zt * float(zt @ old.v)  # â in the old look-ahead Q basis
            up.ahat2 = float(vp @ vp)
            W[:, 3] = old.Rl.T @ vp[:dl]
            up.yahat = old.QtYx.T @ vp
        # (4, n), rows contiguous: Wᵀ Glᵀ with Glᵀ a C-ordered view of the block
        up.P = W.T @ self.G[:, k : old.t_old].T if dl else np.zeros((4, self.n))
        return up

    def _permute_small(self, k, q, h, Rb, O1, O2):
        """The transpositions on G's pivot row and on the small matrices: R, QᵀY, 1ᵀG
        and GlᵀGl."""
        G, R = self.G, self.R
        pi = self.piv[k]
        b = q - k + 1
        if q > k:  # exact zeros right of the new pivot entry
            G[pi, k] = h
            G[pi, k + 1 : q + 1] = 0.0
        if k:
            R[:k, k : q + 1] = R[:k, k : q + 1] @ O1
        R[k : q + 1, k : q + 1] = Rb
        if q + 1 < self.kadv:
            R[k : q + 1, q + 1 : self.kadv] = O2.T @ R[k : q + 1, q + 1 : self.kadv]
        self.QtY[k : q + 1] = O2.T @ self.QtY[k : q + 1]
        self.colsum[k : q + 1] = self.colsum[k : q + 1] @ O1
        T = self.GtG[k : self.kadv, k : q + 1] @ O1
        T[:b] = O1.T @ T[:b]
        self.GtG[k : self.kadv, k : q + 1] = T
        self.GtG[k : q + 1, k : self.kadv] = T.T

    def _update_gains(self, g, old, up) -> float:
        """A, B, C updated to the new look-ahead block (user guide); returns ‖g‖²."""
        gnorm2 = float(g @ g)
        A, B, P = self.A, self.B, up.P
        tmp = gnorm2 * g
        tmp -= 2.0 * P[1]
        tmp *= g
        A += tmp
        s_ = P[2]
        np.multiply(s_, s_, out=tmp)
        B -= tmp
        if old.added:
            a = old.a
            tmp = old.anorm2 * a
            tmp += 2.0 * P[0]
            tmp -= (2.0 * up.ag) * g
            tmp *= a
            A += tmp
            tmp = up.ahat2 * a
            tmp += 2.0 * P[3]
            tmp *= a
            B += tmp
            self.C += up.yahat[:, None] * a
        self.C -= up.yq[:, None] * s_
        np.maximum(A, 0.0, out=A)
        np.maximum(B, 0.0, out=B)
        return gnorm2

    def _commit(self, i, g):
        """Column k committed: the residual diagonal, the position, the refresh."""
        self.D -= g * g
        self.D[i] = 0.0
        np.maximum(self.D, 0.0, out=self.D)
        self.k += 1
        self.since_refresh += 1
        if self.since_refresh >= self.refresh_every:
            self._refresh()

    def _final_q(self, r: int, sgn: np.ndarray):
        """The stored Q (sign-fixed), or None when Q is implicit (see :func:`csi_q`)."""
        if not self.explicit_q:
            return None
        return self.Q[:, :r] * sgn

    # ------------------------------------------------------------ driver

    def run(self) -> CSIResult:
        self._initial_lookahead()
        self._refresh()
        e1, e2 = [1.0], [1.0]
        pred, true, hits = [], [], []
        stop = "max_rank"
        while self.k < self.m:
            sel = self._select()
            if sel is None:
                stop = "exhausted"
                break
            i, gain = sel
            tg, hit = self._step(i)
            gnorm2, y2 = self.last
            pred.append(gain)
            true.append(tg)
            hits.append(hit)
            e1.append(max(e1[-1] - gnorm2 / self.trK, 0.0))
            e2.append(max(e2[-1] - y2 / self.sumY2, 0.0) if self.sumY2 > 0 else 1.0)
            if tg < self.tol:
                stop = "tol"
                break
        else:
            if self.k == self.n:
                stop = "exhausted"
        r = self.k
        sgn = np.where(np.diag(self.R)[:r] < 0, -1.0, 1.0)  # R ≥ 0 on its diagonal
        e1a, e2a = np.asarray(e1), np.asarray(e2)
        return CSIResult(
            G=self.G[:, :r].copy(order="F"),
            pivots=self.piv[:r].copy(),
            Q=self._final_q(r, sgn),
            R=np.triu(self.R[:r, :r]) * sgn[:, None],
            approx_error=e1a,
            prediction_error=e2a,
            objective=(1.0 - self.kappa) * e1a + self.kappa * e2a,
            predicted_gain=np.asarray(pred),
            true_gain=np.asarray(true),
            lookahead_hit=np.asarray(hits, dtype=bool),
            kernel_columns=np.asarray(self.visited, dtype=np.intp),
            stop_reason=stop,
        )


def _rotation_product(cs, ss) -> np.ndarray:
    """The orthogonal matrix of the rotations on columns (t, t+1), t = b−2, …, 0.

    Rotation t maps [col_t, col_{t+1}] to [c col_t + s col_{t+1}, c col_{t+1} − s col_t]
    (``drot``). Column t+1 then holds the carried vector v_{t+1}, so v_t = c_t e_t +
    s_t v_{t+1} (v_{b−1} = e_{b−1}); the product has columns v_0 and c_t v_{t+1} − s_t e_t.
    """
    b = len(cs) + 1
    if b == 1:
        return np.ones((1, 1))
    c = np.asarray(cs)
    # P[t, i] = s_t ⋯ s_{i−1} for i ≥ t (1 at i = t), 0 below: cumulative products of
    # the rows of M[t, u] = s_u (u ≥ t), 1 (u < t)
    M = np.where(np.arange(b - 1)[None, :] >= np.arange(b)[:, None], np.asarray(ss), 1.0)
    P = np.triu(np.hstack((np.ones((b, 1)), np.cumprod(M, axis=1))))
    V = (P * np.append(c, 1.0)).T  # V[:, t] = v_t, v_t(i) = c_i P[t, i] (c_{b−1} = 1)
    O = V * np.append(1.0, c)
    O[np.arange(b - 1), np.arange(1, b)] -= ss
    return O


def _hysteresis_argmax(vals, ok, start, factor):
    """The reference code's scan: visit in order, replace the best when v > best/factor.

    Returns the index of the final best, or None when no entry qualified. Vectorized
    over the (few) successive records.
    """
    best = float(start)
    found = None
    i0 = 0
    n = vals.shape[0]
    while i0 < n:
        thr = best / factor
        hit = ok[i0:] & (vals[i0:] > thr)
        if not hit.any():
            break
        j = i0 + int(np.argmax(hit))
        found = j
        best = float(vals[j])
        i0 = j + 1
    return found

"""SimpleNPKL: non-parametric kernel learning from pairwise constraints (pure math).

The math of :class:`lorak.SimpleNPKL` (Zhuang, Tsang & Hoi 2009); :func:`fit_simple_npkl`
is its one entry. The solver, its conventions and decisions: :ref:`guide-npkl-solver`.
"""

from __future__ import annotations

import logging
import math
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh
from sklearn.exceptions import ConvergenceWarning
from sklearn.neighbors import NearestNeighbors

from ..constraints import constraint_matrix
from ._npkl_auto import (
    AUTO_C_STEPS,
    Degeneracy,
    DegenerateKernelWarning,
    auto_C,
    kernel_degeneracy,
)

__all__ = [
    "EIGEN_TOL_FACTOR",
    "NPKLResult",
    "SimpleNPKLFit",
    "constraint_operator",
    "dual_objective",
    "filter_cut",
    "fit_simple_npkl",
    "kkt_residual",
    "knn_graph",
    "margin_scores",
    "normalized_laplacian",
    "npkl_closed_form",
    "pair_values",
    "pataki_rank",
    "positive_eigenpairs",
    "primal_objective",
    "select_active",
    "simple_npkl_linear",
    "simple_npkl_sqhinge",
]

logger = logging.getLogger(__name__)

# eigenvalues at or below this fraction of ‖A‖ (estimated) count as zero
ZERO_RTOL = 1e-10
# below this many rows a dense eigh is always used
DENSE_N = 64
# dense eigh replaces Lanczos once k ≥ n / DENSE_FRACTION, if n ≤ DENSE_MAX_N; if
# n ≤ DENSE_LARGE_MAX_N, once k ≥ n / DENSE_FRACTION below the rank cap (every positive
# eigenpair wanted) or k ≥ n / DENSE_LARGE_FRACTION at it (see positive_eigenpairs)
DENSE_FRACTION = 24
DENSE_MAX_N = 5000
DENSE_LARGE_FRACTION = 7
DENSE_LARGE_MAX_N = 8192
# from this many rows on, Lanczos runs on a Chebyshev polynomial of A (see
# positive_eigenpairs); its odd degree
FILTER_MIN_N = 2000
FILTER_DEGREE = 5
# the largest relative Ritz residual (with A itself) accepted from the filtered solve
# when ARPACK was asked for machine precision; a tol > 0 raises it to tol
FILTER_RESIDUAL_MAX = 1e-8
# Algorithm 1 with a rank cap: the filter's cut θ is this fraction of a Ritz lower
# bound of the r-th eigenvalue on the previous eigenvectors (filter_cut)
CUT_FRACTION = 0.9


# ---------------------------------------------------------------- graph and Laplacian


def knn_graph(X, n_neighbors: int, *, mutual: bool = False, n_jobs=None) -> sp.csr_matrix:
    """Symmetric 0/1 kNN adjacency S (CSR), self excluded, never an n×n distance matrix.

    The neighbours come from :class:`sklearn.neighbors.NearestNeighbors` (a tree or
    brute force in blocks, scikit-learn's choice). ``mutual=False``: S_ij = 1 if j is
    among i's ``n_neighbors`` nearest or i among j's; ``mutual=True``: both.
    """
    # the graph depends on X only up to scale and offset: centre and divide by a power
    # of two near max |X| (exact), so that squared distances neither overflow (X·1e300
    # made scikit-learn's neighbour search fail) nor underflow, nor cancel at X + 1e8
    if sp.issparse(X):
        a = float(abs(X).max()) if X.nnz else 0.0
        X = X * (1.0 / (2.0 ** np.frexp(a)[1] if a > 0 else 1.0))
    else:
        X = np.asarray(X, dtype=np.float64)
        X = X - X.mean(axis=0)
        a = float(np.max(np.abs(X), initial=0.0))
        if a > 0:
            X /= 2.0 ** np.frexp(a)[1]
    nn = NearestNeighbors(n_neighbors=n_neighbors, n_jobs=n_jobs).fit(X)
    G = nn.kneighbors_graph(mode="connectivity")  # excludes each point itself
    G = sp.csr_matrix(G, dtype=np.float64)
    S = G.multiply(G.T) if mutual else G.maximum(G.T)
    S = sp.csr_matrix(S)
    S.setdiag(0.0)
    S.eliminate_zeros()
    S.sort_indices()
    return S


def normalized_laplacian(S: sp.spmatrix) -> sp.csr_matrix:
    """L = I − D^{-1/2} S D^{-1/2} (eq. 3), sparse; isolated rows get L_ii = 1."""
    S = sp.csr_matrix(S, dtype=np.float64)
    d = np.asarray(S.sum(axis=1)).ravel()
    inv_sqrt = np.zeros_like(d)
    pos = d > 0
    inv_sqrt[pos] = 1.0 / np.sqrt(d[pos])
    Dm = sp.diags(inv_sqrt)
    L = sp.identity(S.shape[0], format="csr") - Dm @ S @ Dm
    L = sp.csr_matrix(L)
    L.sort_indices()
    return L


def constraint_operator(L, pairs, weights) -> sp.csr_matrix:
    """A = Σ_(i,j) w_ij (e_i e_jᵀ + e_j e_iᵀ) − L, sparse (w = C·T for the linear loss,
    w = α ∘ T for Algorithm 1)."""
    A = sp.csr_matrix(constraint_matrix(pairs, weights, L.shape[0]) - L)
    A.sort_indices()
    return A


def pataki_rank(n_constraints: int) -> int:
    """Largest r with r(r + 1)/2 ≤ m (Pataki's bound, Prop. 2), at least 1."""
    m = max(int(n_constraints), 1)
    r = int((math.isqrt(8 * m + 1) - 1) // 2)
    return max(r, 1)


# ---------------------------------------------------------------- eigen-solving


@dataclass
class EigenInfo:
    """Diagnostics of one :func:`positive_eigenpairs` call."""

    solver: str = ""
    requested: list = field(default_factory=list)
    n_solves: int = 0
    largest: float = 0.0
    smallest_returned: float = 0.0
    seconds: float = 0.0
    filter_degree: int = 0
    filter_interval: tuple = ()
    matvecs: int = 0
    residual: float = 0.0


def _fix_signs(U: np.ndarray) -> np.ndarray:
    if U.size:
        idx = np.argmax(np.abs(U), axis=0)
        s = np.sign(U[idx, np.arange(U.shape[1])])
        s[s == 0] = 1.0
        U *= s
    return U


def _spectrum_floor(A, rng: np.random.Generator) -> float:
    """A cheap estimate of λ_min(A): the smallest Ritz value of a short Lanczos run
    (ARPACK, 1 % accuracy), or Gershgorin's bound if that does not converge. Only the
    speed of the filtered solve depends on it, never its result (see
    :func:`chebyshev_operator`)."""
    n = A.shape[0]
    try:
        w = eigsh(A, k=1, which="SA", tol=1e-2, ncv=min(n - 1, 24), maxiter=50,
                  v0=rng.standard_normal(n), return_eigenvectors=False)  # fmt: skip
        return float(w[0])
    except ArpackNoConvergence as exc:
        if len(exc.eigenvalues):
            return float(np.min(exc.eigenvalues))
    d = A.diagonal()
    off = np.asarray(abs(A).sum(axis=1)).ravel() - np.abs(d)
    return float(np.min(d - off))


def chebyshev_operator(A, lo: float, theta: float, degree: int) -> LinearOperator:
    """p(A) = T_d((A − c)/e) with c = (θ + lo)/2, e = (θ − lo)/2, as a LinearOperator
    (``degree`` sparse products per application, three-term recurrence).

    For odd d the eigenvalues of A above θ are those of p(A) above 1, in the same order
    and with the same eigenvectors; ``lo`` only sets how strongly the rest is damped.
    """
    c = 0.5 * (theta + lo)
    e = 0.5 * (theta - lo)
    two_e = 2.0 / e

    def matvec(x):
        x = np.asarray(x, dtype=np.float64).ravel()
        y_prev, y = x, (A @ x - c * x) / e
        for _ in range(degree - 1):
            y_prev, y = y, two_e * (A @ y - c * y) - y_prev
        return y

    return LinearOperator(A.shape, matvec=matvec, dtype=np.float64)


def positive_eigenpairs(
    A,
    *,
    rng: np.random.Generator,
    k: int | None = None,
    max_rank: int | None = None,
    v0: np.ndarray | None = None,
    tol: float = 0.0,
    solver: str = "auto",
    theta: float = 0.0,
    filter_degree: int | None = None,
    lower: float | None = None,
):
    """The positive eigenpairs of the symmetric (sparse) A, largest first.

    ARPACK (``eigsh``, ``which="LA"``) is asked for ``k`` pairs, doubling ``k`` while
    the smallest returned is still positive and fewer than ``max_rank`` were asked for;
    ``solver="auto"`` takes a dense ``eigh`` where that costs less, and from n = 2000
    Lanczos runs on a Chebyshev filter (:func:`chebyshev_operator`). The policy, its
    fallbacks and its timings: :ref:`guide-npkl-solver`.

    Parameters
    ----------
    A : sparse or dense symmetric (n, n)
    rng : Generator
        Seeds the Lanczos start vector when ``v0`` is None (determinism).
    k : int, optional
        Number of eigenpairs first requested (default 16).
    max_rank : int, optional
        Keep at most this many (the top ones); the doubling stops there.
    v0 : (n,) array, optional
        Lanczos start vector for the first request (warm start).
    tol : float
        ARPACK's relative accuracy (0 = machine precision).
    solver : {"auto", "arpack", "dense"}
    theta : float
        Lower end of the wanted eigenvalues, a hint for the filter (see above).
    filter_degree : int, optional
        Odd degree of the Chebyshev filter; 0 turns it off; default: 5 when n ≥ 2000.
    lower : float, optional
        Estimate of the smallest eigenvalue of A (the filter's damped interval starts
        there; default: a short Lanczos run). Any value works, a close one is faster.

    Returns
    -------
    w : (r,) positive eigenvalues, decreasing
    U : (n, r) orthonormal eigenvectors, sign-fixed
    info : EigenInfo
    """
    t0 = time.perf_counter()
    search = _EigenSearch(A, rng, k, max_rank, v0, tol, solver, theta, filter_degree, lower)
    w = U = None
    while not search.use_dense:
        attempt = search.filtered if search.filt else search.lanczos
        got = attempt()
        if got is None:  # failed: the filter is off, θ lowered, or the dense solve next
            continue
        w, U = got
        if w[-1] <= 0 or search.k >= search.cap:  # every positive pair, or the cap
            break
        search.double()
    if search.use_dense:
        w, U = search.dense()
    return search.finish(w, U, t0)


class _EigenSearch:
    """The state of :func:`positive_eigenpairs`' policy: the request k, the filter
    (degree, θ, λ_min estimate), the start vector, and the diagnostics; one method per
    kind of solve."""

    def __init__(self, A, rng, k, max_rank, v0, tol, solver, theta, filter_degree, lower):
        n = A.shape[0]
        self.A, self.rng, self.n, self.v0, self.tol, self.solver = A, rng, n, v0, tol, solver
        self.info = EigenInfo()
        self.cap = n if max_rank is None else max(1, min(int(max_rank), n))
        k = 16 if k is None else int(k)
        self.k = max(1, min(k, self.cap, n - 1))
        if filter_degree is None:
            filter_degree = FILTER_DEGREE if n >= FILTER_MIN_N else 0
        self.filt = int(filter_degree)
        if self.filt and self.filt % 2 == 0:
            raise ValueError(f"filter_degree must be odd (or 0); got {filter_degree}")
        self.theta = max(0.0, float(theta))
        self.lo = None if lower is None else float(lower)
        self.use_dense = self.dense_now(self.k)

    def dense_now(self, k_req) -> bool:
        """Whether the dense solve replaces a Lanczos request for k_req pairs."""
        n = self.n
        if self.solver == "dense" or n <= DENSE_N or k_req >= n - 1:
            return True
        if self.solver != "auto":
            return False
        if n <= DENSE_MAX_N and DENSE_FRACTION * k_req >= n:
            return True
        # below the cap, the request must reach the zero crossing of the spectrum,
        # where the filtered Lanczos is slowest: dense from n/24 there too
        frac = DENSE_FRACTION if k_req < self.cap else DENSE_LARGE_FRACTION
        return n <= DENSE_LARGE_MAX_N and frac * k_req >= n

    def double(self):
        self.k = min(2 * self.k, self.cap, self.n - 1)
        self.use_dense = self.dense_now(self.k)
        self.v0 = None  # a fresh random start for the larger request

    def _start(self):
        self.info.requested.append(self.k)
        self.info.n_solves += 1
        return self.v0 if self.v0 is not None else self.rng.standard_normal(self.n)

    def filtered(self):
        """Lanczos on the Chebyshev filter p(A), then Rayleigh–Ritz with A: (w, U), or
        None after switching the filter off or lowering θ."""
        A, n, k, info = self.A, self.n, self.k, self.info
        start = self._start()
        if self.lo is None:
            self.lo = _spectrum_floor(A, self.rng)
            if not self.lo < self.theta:
                self.lo = self.theta - max(1.0, abs(self.theta))
        calls = [0]
        op = chebyshev_operator(A, self.lo, self.theta, self.filt)

        def counted(x, op=op, calls=calls):
            calls[0] += 1
            return op.matvec(x)

        ncv = min(n - 1, max(20, k + max(24, k // 3)))
        try:  # a normal filtered solve restarts ~10–30 times; 200 means trouble
            _, U = eigsh(
                LinearOperator(A.shape, matvec=counted, dtype=np.float64),
                k=k, which="LA", v0=start, tol=self.tol, ncv=ncv, maxiter=200,
            )  # fmt: skip
        except ArpackNoConvergence:
            logger.info("filtered ARPACK did not converge (k=%d); unfiltered solve", k)
            self.filt = 0
            return None
        info.matvecs += calls[0] * self.filt + k
        w, U = self._rayleigh_ritz(U)
        if info.residual > max(FILTER_RESIDUAL_MAX, self.tol):
            # neither round-off level nor the accuracy asked of ARPACK (tol > 0: the
            # Ritz residuals then sit near a tenth of tol·‖p(A)‖)
            logger.info("filtered Lanczos residual %.2g; unfiltered solve", info.residual)
            self.filt = 0
            return None
        info.solver = "arpack+chebyshev"
        if self.theta > 0 and w[-1] <= self.theta:
            # the hint was too high: eigenvalues ≤ θ are not ordered by p(A)
            self.theta = 0.0
            self.v0 = None
            return None
        return w, U

    def _rayleigh_ritz(self, U):
        """The eigenvalues of A on span U (decreasing) and its vectors; the relative
        residual of the pairs above θ goes to ``info.residual``."""
        AU = self.A @ U
        H = U.T @ AU
        w, Q = np.linalg.eigh(0.5 * (H + H.T))
        w, Q = w[::-1], Q[:, ::-1]
        U, AU = U @ Q, AU @ Q
        scale = max(abs(float(w[0])), abs(self.lo), 1e-300)
        pos = w > self.theta
        res = np.linalg.norm(AU[:, pos] - U[:, pos] * w[pos], axis=0)
        self.info.residual = float(res.max()) / scale if res.size else 0.0
        self.info.filter_degree = self.filt
        self.info.filter_interval = (self.lo, self.theta)
        return w, U

    def lanczos(self):
        """Unfiltered ARPACK: (w, U) decreasing, or None with the dense solve next (n ≤
        5000; above, a RuntimeError)."""
        n, k = self.n, self.k
        start = self._start()
        try:
            w, U = eigsh(self.A, k=k, which="LA", v0=start, tol=self.tol)
        except ArpackNoConvergence as exc:
            if n > DENSE_MAX_N:
                raise RuntimeError(
                    f"ARPACK did not converge for {k} eigenpairs of the {n}×{n} matrix "
                    f"A ({len(exc.eigenvalues)} converged); set eigen_tol > 0 or lower "
                    "max_rank"
                ) from exc
            logger.info("ARPACK did not converge (k=%d); falling back to dense eigh", k)
            self.use_dense = True
            return None
        order = np.argsort(w)[::-1]
        self.info.solver = "arpack"
        return w[order], U[:, order]

    def dense(self):
        """Every eigenpair with eigenvalue > 0 by a dense eigh (the largest eigenvalue,
        ≤ 0, with a zero vector when there is none)."""
        n, info = self.n, self.info
        info.requested.append(n)
        info.n_solves += 1
        A = self.A
        Ad = A.toarray() if sp.issparse(A) else np.array(A, dtype=np.float64)
        # only the eigenvalues > 0 (and their vectors): MRRR on the tridiagonal form
        w, U = scipy.linalg.eigh(
            Ad, driver="evr", subset_by_value=(0.0, np.inf), check_finite=False
        )
        w, U = w[::-1], U[:, ::-1]
        info.solver = "dense"
        if w.size == 0:  # report the largest (≤ 0) eigenvalue in errors
            w = scipy.linalg.eigh(
                Ad, eigvals_only=True, subset_by_index=(n - 1, n - 1), driver="evr"
            )
            U = np.zeros((n, 1))
        return w, U

    def finish(self, w, U, t0):
        """The pairs above ZERO_RTOL·scale, at most ``max_rank``, sign-fixed."""
        info = self.info
        info.largest = float(w[0]) if w.size else 0.0
        info.smallest_returned = float(w[-1]) if w.size else 0.0
        scale = max(abs(float(w[0])), abs(float(w[-1])), 1e-300) if w.size else 1.0
        keep = w > ZERO_RTOL * scale
        keep[self.cap :] = False
        w = w[keep]
        U = _fix_signs(np.array(U[:, keep], dtype=np.float64, order="C"))
        info.seconds = time.perf_counter() - t0
        return w, U, info


def npkl_closed_form(w: np.ndarray, U: np.ndarray, B: float):
    """Eq. (8) as a factor: K* = A₊ √(B / tr(A₊²)) = V Vᵀ with V = U diag(√(s·w)),
    s = √B / ‖w‖₂. Returns ``(V, eigenvalues of K*)``; w empty → V with 0 columns."""
    if w.size == 0:
        return np.zeros((U.shape[0], 0)), np.zeros(0)
    s = math.sqrt(B) / float(np.linalg.norm(w))
    lam = s * w
    V = U * np.sqrt(lam)
    return V, lam


def pair_values(V: np.ndarray, pairs: np.ndarray, *, chunk: int = 8192) -> np.ndarray:
    """K_ij = ⟨v_i, v_j⟩ for each pair (rows of V only, never K), in chunks."""
    p = pairs.shape[0]
    out = np.empty(p)
    if V.shape[1] == 0:
        out[:] = 0.0
        return out
    for s in range(0, p, chunk):
        e = min(s + chunk, p)
        out[s:e] = np.einsum("ij,ij->i", V[pairs[s:e, 0]], V[pairs[s:e, 1]])
    return out


def laplacian_term(L, V) -> float:
    """tr(LK) = tr(Vᵀ L V)."""
    if V.shape[1] == 0:
        return 0.0
    return float(np.einsum("ij,ij->", V, L @ V))


def primal_objective(L, V, pairs, signs, C: float, kij=None) -> float:
    """Eq. (9) at K = VVᵀ: tr(LK) + (C/2) Σ_ordered max(0, 1 − T_ij K_ij)²
    (= tr(LK) + C Σ over unordered constraints)."""
    if kij is None:
        kij = pair_values(V, pairs)
    h = np.maximum(0.0, 1.0 - signs * kij)
    return laplacian_term(L, V) + C * float(h @ h)


def dual_objective(alpha, w_pos, B: float, C: float) -> float:
    """D(α) = min_K J(K, α) = Σ_ordered (α − α²/2C) − √B ‖A₊(α)‖_F (eq. 12 with eq. 8)."""
    return 2.0 * float(np.sum(alpha - alpha * alpha / (2.0 * C))) - math.sqrt(B) * float(
        np.linalg.norm(w_pos)
    )


# ---------------------------------------------------------------- solvers


@dataclass
class NPKLResult:
    """Output of the solvers ``simple_npkl_linear`` / ``simple_npkl_sqhinge``: the
    ``result`` of :func:`~lorak.learn.fit_simple_npkl`'s record.

    Attributes
    ----------
    embedding : (n, r) V with K = V Vᵀ (r = 0 when K = 0)
    eigenvalues : (r,) eigenvalues of K, decreasing
    objective : float
        Eq. (6) for the linear loss, eq. (9) (primal) for the square hinge.
    alpha : (p,) dual variables per unordered constraint (square hinge), else None
    n_iter : int
    converged : bool
    gap : float
        Relative duality gap at the end (square hinge; 0 for the closed form).
    kkt : float
        KKT residual of eq. (14) at the end (square hinge; 0 for the closed form).
    history : dict of lists
        Per iteration: ``objective`` J(K_t, α_{t−1}) (the dual value), ``primal``,
        ``gap``, ``kkt``, ``step`` (the step taken after it), ``rank``, ``seconds``,
        ``eig_solves``.
    largest_eigenvalue : float
        Largest eigenvalue of the final A (≤ 0 means K = 0).
    eig_info : list of EigenInfo
    """

    embedding: np.ndarray
    eigenvalues: np.ndarray
    objective: float
    alpha: np.ndarray | None = None
    n_iter: int = 1
    converged: bool = True
    gap: float = 0.0
    kkt: float = 0.0
    history: dict = field(default_factory=dict)
    largest_eigenvalue: float = 0.0
    eig_info: list = field(default_factory=list)


def filter_cut(A, U_prev, w_prev, max_rank: int) -> float:
    """θ for the filtered solve of Algorithm 1's next A when the rank is capped.

    When the previous solve kept ``max_rank`` = r eigenpairs, the smallest Ritz value
    θ_r of the new A on their span is ≤ λ_r(A) (Cauchy interlacing), so every wanted
    eigenvalue is above θ = CUT_FRACTION · θ_r (0 when θ_r ≤ 0) and the filter
    stretches only the top of the spectrum. One sparse product with r columns."""
    if U_prev.shape[1] < int(max_rank) or U_prev.shape[1] == 0 or not w_prev[-1] > 0:
        return 0.0
    H = U_prev.T @ (A @ U_prev)
    low = float(np.linalg.eigvalsh(0.5 * (H + H.T))[0])
    return max(0.0, CUT_FRACTION * low)


def _eig(A, rng, *, k, max_rank, v0, tol, solver, infos, theta=0.0, lower=None):
    w, U, info = positive_eigenpairs(
        A, rng=rng, k=k, max_rank=max_rank, v0=v0, tol=tol, solver=solver, theta=theta,
        lower=lower,
    )  # fmt: skip
    infos.append(info)
    return w, U, info


def simple_npkl_linear(
    L,
    pairs: np.ndarray,
    signs: np.ndarray,
    *,
    C: float,
    B: float,
    rng: np.random.Generator,
    max_rank: int | None = None,
    k0: int | None = None,
    eigen_tol: float = 0.0,
    solver: str = "auto",
) -> NPKLResult:
    """SimpleNPKL with linear loss (eq. 6) in closed form (eq. 8).

    max_K tr(AK) s.t. K ⪰ 0, tr(KK) ≤ B with A = C·T − L: K* = A₊ √(B / tr(A₊²)).
    ``k0`` is the number of eigenpairs first requested (default: Pataki's bound for
    ``len(pairs)`` constraints, at least 8); ``max_rank`` truncates A₊ to its top
    eigenpairs (the best K of that rank, rescaled to tr(KK) = B).
    """
    t0 = time.perf_counter()
    A = constraint_operator(L, pairs, C * signs)
    k = k0 if k0 is not None else max(8, pataki_rank(len(pairs)))
    infos: list = []
    w, U, info = _eig(
        A, rng, k=k, max_rank=max_rank, v0=None, tol=eigen_tol, solver=solver, infos=infos
    )
    V, lam = npkl_closed_form(w, U, B)
    obj = -math.sqrt(B) * float(np.linalg.norm(w)) if w.size else 0.0
    hist = {
        "objective": [obj],
        "rank": [int(lam.size)],
        "seconds": [time.perf_counter() - t0],
        "eig_solves": [info.n_solves],
    }
    return NPKLResult(
        embedding=V,
        eigenvalues=lam,
        objective=obj,
        history=hist,
        largest_eigenvalue=info.largest,
        eig_info=infos,
    )


def kkt_residual(alpha, kij, signs, C: float) -> float:
    """‖α − C·max(0, 1 − T∘K)‖ / max(‖α‖, ‖C·max(0, 1 − T∘K)‖): the violation of the
    optimality condition (14) for α given K. With K = argmin_K J(K, α) (eq. 8, which
    Algorithm 1 enforces exactly), a zero residual means (K, α) is a saddle point."""
    best = C * np.maximum(0.0, 1.0 - signs * kij)
    den = max(float(np.linalg.norm(alpha)), float(np.linalg.norm(best)))
    return 0.0 if den == 0 else float(np.linalg.norm(alpha - best)) / den


def simple_npkl_sqhinge(
    L,
    pairs: np.ndarray,
    signs: np.ndarray,
    *,
    C: float,
    B: float,
    rng: np.random.Generator,
    max_iter: int = 100,
    tol: float = 1e-4,
    step: str = "adaptive",
    step_size: float = 1.0,
    alpha0: np.ndarray | None = None,
    max_rank: int | None = None,
    k0: int | None = None,
    eigen_tol: float = 0.0,
    solver: str = "auto",
    cut_from_previous: bool = True,
) -> NPKLResult:
    """SimpleNPKL with square hinge loss (eq. 9–10), Algorithm 1.

    Repeats: A = Σ α_ij T_ij (e_i e_jᵀ + e_j e_iᵀ) − L; K_t = √B A₊/‖A₊‖_F (eq. 8) as
    its factor V_t; K_ij on the constrained pairs only (rows of V_t); the gradient
    ∂J/∂α_ij = 1 − T_ij K_ij − α_ij/C; α ← (α + η_t ∂J/∂α)₊.

    Stops when the KKT residual (:func:`kkt_residual`) or the relative duality gap
    (P(K_t) − D(α_{t−1})) / max(1, |P(K_t)|) is ≤ ``tol``. With ``max_rank`` set, K_t
    is the best K of that rank and the gap need not close (the rank-constrained
    problem is not convex); the KKT residual still measures stationarity. The step
    rules: :ref:`guide-npkl-solver`. ``cut_from_previous`` (with ``max_rank``): cut the
    Chebyshev filter at :func:`filter_cut`; False keeps the cut at 0 (the same
    eigenpairs, found with more Lanczos steps).
    """
    t_start = time.perf_counter()
    p = pairs.shape[0]
    alpha = np.full(p, float(C)) if alpha0 is None else np.array(alpha0, dtype=np.float64)
    k = k0 if k0 is not None else max(8, pataki_rank(p))
    solve = _KernelForAlpha(
        L, pairs, signs, C=C, B=B, rng=rng, max_rank=max_rank, eigen_tol=eigen_tol,
        solver=solver, cut_from_previous=cut_from_previous,
    )  # fmt: skip
    hist: dict = {key: [] for key in _SQHINGE_HISTORY}
    cur = solve(alpha, None, k)
    eta = float(step_size) * C
    converged = False
    gap = kkt = math.inf
    n_iter = 0
    prev_alpha = prev_grad = None
    for t in range(1, max_iter + 1):
        n_iter = t
        gap, kkt = _record(hist, L, pairs, signs, C, alpha, cur, t_start)
        if kkt <= tol or gap <= tol:
            converged = True
            break
        if t == max_iter:
            break
        grad = 1.0 - signs * cur["kij"] - alpha / C
        if step == "adaptive" and prev_grad is not None:
            eta = _bb_step(eta, alpha - prev_alpha, grad - prev_grad, C, step_size)
        prev_alpha, prev_grad = alpha, grad
        if step == "adaptive":
            alpha, cur, eta = _ascent_step(solve, alpha, grad, cur, eta, C)
            hist["step"].append(eta)
            eta = min(float(step_size) * C, 2.0 * eta)
        else:
            eta_t = float(step_size) * C / (t if step == "harmonic" else 1.0)
            hist["step"].append(eta_t)
            alpha = np.maximum(0.0, alpha + eta_t * grad)
            cur = solve(alpha, cur, _next_k(cur["lam"].size))
    return NPKLResult(
        embedding=cur["V"],
        eigenvalues=cur["lam"],
        objective=hist["primal"][-1],
        alpha=alpha,
        n_iter=n_iter,
        converged=converged,
        gap=float(gap),
        kkt=float(kkt),
        history=hist,
        largest_eigenvalue=cur["info"].largest,
        eig_info=solve.infos,
    )


_SQHINGE_HISTORY = ("objective", "primal", "gap", "kkt", "step", "rank", "seconds", "eig_solves")


class _KernelForAlpha:
    """K = argmin_K J(K, α) (eq. 8) for Algorithm 1's α, as a dict: ``V`` (K = V Vᵀ),
    ``U``, ``w`` (A's positive eigenpairs), ``lam``, ``kij`` (K on the pairs), ``dual``
    D(α), ``info``. Each eigen-solve starts from the previous one: its eigenvectors (a
    random combination as the start vector), its λ_min estimate, and with a rank cap
    the filter cut of :func:`filter_cut`."""

    def __init__(
        self, L, pairs, signs, *, C, B, rng, max_rank, eigen_tol, solver, cut_from_previous
    ):
        self.L, self.pairs, self.signs, self.C, self.B, self.rng = L, pairs, signs, C, B, rng
        self.max_rank, self.eigen_tol, self.solver = max_rank, eigen_tol, solver
        self.cut_from_previous = cut_from_previous
        self.infos: list = []

    def __call__(self, a, prev, k_req):
        A = constraint_operator(self.L, self.pairs, a * self.signs)
        v0 = None
        lower = None
        if prev is not None and prev["info"].filter_interval:
            # the previous A's smallest eigenvalue (it moves by at most ‖ΔA‖₂; the
            # filter is correct for any value, this only saves a Lanczos run)
            lower = prev["info"].filter_interval[0]
        if prev is not None and prev["V"].shape[1] > 0:
            # warm start: a random combination of the previous positive eigenvectors
            v0 = prev["V"] @ self.rng.standard_normal(prev["V"].shape[1])
        theta = 0.0
        if self.cut_from_previous and self.max_rank is not None and prev is not None:
            theta = filter_cut(A, prev["U"], prev["w"], self.max_rank)
        w, U, info = _eig(
            A, self.rng, k=k_req, max_rank=self.max_rank, v0=v0, tol=self.eigen_tol,
            solver=self.solver, infos=self.infos, lower=lower, theta=theta,
        )  # fmt: skip
        V, lam = npkl_closed_form(w, U, self.B)
        kij = pair_values(V, self.pairs)
        return {
            "alpha": a,
            "V": V,
            "U": U,
            "lam": lam,
            "w": w,
            "kij": kij,
            "dual": dual_objective(a, w, self.B, self.C),
            "info": info,
        }


def _next_k(rank):
    """The previous rank plus a margin, so that one Lanczos request usually suffices."""
    return max(8, rank + max(8, rank // 4))


def _record(hist, L, pairs, signs, C, alpha, cur, t_start):
    """Append the iterate's dual, primal, gap, KKT residual, rank, time and eigen-solves
    to ``hist``; return (gap, KKT residual)."""
    primal = primal_objective(L, cur["V"], pairs, signs, C, kij=cur["kij"])
    gap = (primal - cur["dual"]) / max(1.0, abs(primal))
    kkt = kkt_residual(alpha, cur["kij"], signs, C)
    hist["objective"].append(cur["dual"])
    hist["primal"].append(primal)
    hist["gap"].append(gap)
    hist["kkt"].append(kkt)
    hist["rank"].append(int(cur["lam"].size))
    hist["seconds"].append(time.perf_counter() - t_start)
    hist["eig_solves"].append(cur["info"].n_solves)
    return gap, kkt


def _bb_step(eta, sdiff, gdiff, C, step_size):
    """Barzilai–Borwein trial step from the last accepted move s and the change of the
    gradient along it: the curvature of D along s (D is (1/C)-strongly concave, so this
    is ≤ C up to round-off); ``eta`` unchanged when the curvature is not positive."""
    curv = -float(sdiff @ gdiff)
    if curv > 0:
        eta = min(float(step_size) * C, max(1e-6 * C, float(sdiff @ sdiff) / curv))
    return eta


def _ascent_step(solve, alpha, grad, cur, eta, C):
    """The projected step α ← (α + η ∂J/∂α)₊ with η halved until the dual D does not
    decrease: (new α, its kernel, the η taken)."""
    while True:
        new_alpha = np.maximum(0.0, alpha + eta * grad)
        cand = solve(new_alpha, cur, _next_k(cur["lam"].size))
        # accept any ascent of D (a tiny slack for round-off in ‖A₊‖): a sufficient-
        # ascent test of the quadratic model with curvature 1/η rejects many BB steps
        # when the rank is capped (the capped dual is not smooth) and converges slower
        slack = 1e-12 * max(1.0, abs(cur["dual"]))
        if cand["dual"] >= cur["dual"] - slack or eta < 1e-8 * C:
            return new_alpha, cand, eta
        eta *= 0.5


# ---------------------------------------------------------------- active selection


def margin_scores(V: np.ndarray, pairs: np.ndarray, signs: np.ndarray, n: int) -> np.ndarray:
    """m_i = |(1/l_i) Σ_{j: T_ij ≠ 0} T_ij K_ij| (§3.2.4), +inf for unconstrained points."""
    tk = signs * pair_values(V, pairs)
    s = np.bincount(pairs[:, 0], weights=tk, minlength=n) + np.bincount(
        pairs[:, 1], weights=tk, minlength=n
    )
    cnt = np.bincount(pairs[:, 0], minlength=n) + np.bincount(pairs[:, 1], minlength=n)
    out = np.full(n, np.inf)
    has = cnt > 0
    out[has] = np.abs(s[has] / cnt[has])
    return out


def select_active(
    V: np.ndarray, pairs: np.ndarray, signs: np.ndarray, n: int, n_keep: int
) -> np.ndarray:
    """Indices of the ``n_keep`` constraints kept by the margin rule (§3.2.4).

    Points are taken in increasing order of margin (ties by index); a constraint
    enters with the first of its two points, and the list is cut at ``n_keep``
    (so the last point may contribute only part of its constraints). Returned in
    their original order.
    """
    m = margin_scores(V, pairs, signs, n)
    order = np.argsort(m, kind="stable")
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    key = np.minimum(rank[pairs[:, 0]], rank[pairs[:, 1]])
    chosen = np.argsort(key, kind="stable")[: int(n_keep)]
    return np.sort(chosen)


# --------------------------------------------------------------------------- the fit

#: ``eigen_tol="auto"`` for the square hinge: this fraction of its stopping tolerance tol
EIGEN_TOL_FACTOR = 1e-2


@dataclass
class SimpleNPKLFit:
    """The outcome of :func:`fit_simple_npkl`.

    Attributes
    ----------
    result : NPKLResult
        The solver's output at the final C (embedding, eigenvalues, α, objective, …).
    C : float
        The C used (``C="auto"`` resolved; after a step-up, the stepped value).
    pairs, signs : (p, 2) and (p,) the constraints used (after active selection),
        must-links first.
    selected : indices of the kept constraints into the given ones, or None.
    max_rank : int or None, the rank cap used.
    graph : csr_matrix, the kNN graph S; laplacian : csr_matrix, L of eq. (3).
    weights : (p,) the constraint weights of A = Σ w T − L (C·signs, or α·signs).
    degeneracy : Degeneracy of the learned kernel (``kernel_degeneracy``).
    """

    result: NPKLResult
    C: float
    pairs: np.ndarray
    signs: np.ndarray
    selected: np.ndarray | None
    max_rank: int | None
    graph: sp.csr_matrix
    laplacian: sp.csr_matrix
    weights: np.ndarray
    degeneracy: Degeneracy


def _eigen_tol(eigen_tol, loss: str, tol: float) -> float:
    """ARPACK's tolerance for a solve of ``loss`` (resolves ``eigen_tol="auto"``)."""
    if isinstance(eigen_tol, str):
        return 0.0 if loss == "linear" else EIGEN_TOL_FACTOR * float(tol)
    return float(eigen_tol)


def _select_constraints(L, pairs, signs, n_keep, *, selection, rng, **linear):
    """Stage: the ``n_keep`` active constraints (§3.2.4), by the margins under the
    linear-loss kernel of every constraint or uniformly at random (in their order)."""
    if selection == "random":
        return np.sort(rng.choice(len(pairs), size=n_keep, replace=False))
    base = simple_npkl_linear(L, pairs, signs, rng=rng, **linear)
    return select_active(base.embedding, pairs, signs, L.shape[0], n_keep)


def fit_simple_npkl(
    X,
    pairs,
    signs,
    *,
    loss: str = "linear",
    C="auto",
    B: float = 1.0,
    n_neighbors: int = 5,
    mutual: bool = False,
    max_rank=None,
    n_keep: int | None = None,
    selection: str = "margin",
    max_iter: int = 100,
    tol: float = 1e-4,
    step: str = "adaptive",
    step_size: float = 1.0,
    eigen_solver: str = "auto",
    eigen_tol="auto",
    cut_from_previous: bool = True,
    n_jobs=None,
    rng: np.random.Generator,
) -> SimpleNPKLFit:
    """SimpleNPKL on the rows X from validated constraints (``pairs`` (p, 2), ``signs``
    ±1, must-links first), in named stages:

    1. the kNN graph S of X and its normalized Laplacian L (eq. 3);
    2. C: a number, or ``"auto"`` (:func:`auto_C`, 0.7/λ_max(T));
    3. with ``n_keep`` < p, the active constraints (``selection``: ``"margin"``,
       §3.2.4, or ``"random"``); C="auto" and ``max_rank="pataki"`` are then
       recomputed on the kept ones;
    4. the kernel (``loss``: the closed form or Algorithm 1); with C="auto" C steps up
       by ``AUTO_C_STEPS`` while the kernel is zero;
    5. a zero kernel raises, a square hinge stopped at ``max_iter`` warns
       (ConvergenceWarning), and the degeneracy of the kernel is computed
       (``kernel_degeneracy``; :class:`DegenerateKernelWarning` when degenerate).

    ``max_rank``: None, an int or ``"pataki"`` (``pataki_rank``); ``eigen_tol``
    ``"auto"``: 0 for the linear loss, ``EIGEN_TOL_FACTOR``·``tol`` for the square
    hinge; ``cut_from_previous``: see ``simple_npkl_sqhinge`` (square hinge only).
    """
    S = knn_graph(X, n_neighbors, mutual=mutual, n_jobs=n_jobs)  # stage 1
    L = normalized_laplacian(S)
    auto = isinstance(C, str)
    C0 = auto_C(pairs, signs) if auto else float(C)  # stage 2
    rank = pataki_rank(len(pairs)) if max_rank == "pataki" else max_rank
    selected = None
    if n_keep is not None and n_keep < len(pairs):  # stage 3
        selected = _select_constraints(
            L, pairs, signs, n_keep, selection=selection, rng=rng, C=C0, B=B, max_rank=rank,
            eigen_tol=_eigen_tol(eigen_tol, "linear", tol), solver=eigen_solver,
        )  # fmt: skip
        pairs, signs = pairs[selected], signs[selected]
        if max_rank == "pataki":
            rank = pataki_rank(len(pairs))
        if auto:
            C0 = auto_C(pairs, signs)
    opts = {"B": B, "rng": rng, "max_rank": rank, "solver": eigen_solver}
    opts["eigen_tol"] = _eigen_tol(eigen_tol, loss, tol)
    if loss == "linear":
        solve = simple_npkl_linear
    else:
        solve = simple_npkl_sqhinge
        opts.update(max_iter=int(max_iter), tol=float(tol), step=step, step_size=step_size)
        opts["cut_from_previous"] = bool(cut_from_previous)
    for c_step in AUTO_C_STEPS if auto else (1.0,):  # stage 4
        # C="auto": C = c/λ_max(T), c stepping up only while the kernel is zero
        res = solve(L, pairs, signs, C=c_step * C0, **opts)
        if res.embedding.shape[1] > 0:
            break
    Cf = c_step * C0
    _check_learned_kernel(
        res, loss=loss, C=C, max_iter=max_iter, tol=tol, capped=bool(rank)
    )  # stage 5
    weights = Cf * signs if res.alpha is None else res.alpha * signs
    degeneracy = kernel_degeneracy(L, res.embedding, pairs, weights)
    if degeneracy.degenerate:
        _warn_degenerate(degeneracy, Cf, stepped=auto and Cf > C0)
    return SimpleNPKLFit(res, float(Cf), pairs, signs, selected, rank, S, L, weights, degeneracy)


def _check_learned_kernel(res, *, loss, C, max_iter, tol, capped) -> None:
    """Refuse a zero kernel; warn when the square hinge stopped at ``max_iter``."""
    if res.embedding.shape[1] == 0:
        where = "A = C·T − L" if loss == "linear" else "A = Σ α_ij T_ij − L"
        raise ValueError(
            f"the learned kernel is zero: {where} has no positive eigenvalue (largest "
            f"{res.largest_eigenvalue:.3g} ≤ 0), so K = A₊·√(B/tr(A₊²)) is undefined; "
            f"the Laplacian outweighs the constraints at C={C!r}: increase C or "
            "add constraints"
        )
    if loss == "squared_hinge" and not res.converged:
        warnings.warn(
            f"SimpleNPKL: max_iter={max_iter} reached (relative duality gap "
            f"{res.gap:.2g}, KKT residual {res.kkt:.2g} > tol={tol}); increase "
            "max_iter"
            + (" or use max_rank=None (the rank cap slows convergence)" if capped else ""),
            ConvergenceWarning,
            stacklevel=4,
        )


def _warn_degenerate(degeneracy, C: float, *, stepped: bool) -> None:
    warnings.warn(
        f"SimpleNPKL: degenerate kernel at C={C:.3g}: "
        f"{100 * degeneracy.constraint_share:.0f} % of tr(K) lies in "
        "directions the constraints alone make positive (localized on the "
        "constrained points, not propagated along the kNN graph: with sparse or "
        "moderate constraints, the clustering of the rows they do not touch "
        "degrades); "
        + (
            "C='auto' had to raise C above 1/λ_max(T) because the kNN graph "
            "supports none of the constraints: check them or add more"
            if stepped
            else "use C='auto' or a smaller C"
        ),
        DegenerateKernelWarning,
        stacklevel=4,
    )

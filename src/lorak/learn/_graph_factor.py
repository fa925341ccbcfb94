"""Graph-regularized low-rank factors: manifold regularization in factor form.

The math of :class:`lorak.GraphRegularizedFactor`: the deformed factor G R with
R Rᵀ = (I + γ GᵀLᵖG)⁻¹ (the point-cloud kernel of Sindhwani, Niyogi & Belkin 2005
through the push-through identity), the m × m Grams GᵀG and GᵀLᵖG of the anchor graph
(passes over row chunks), the k-NN graph or a given one, and the leave-one-out choice
of γ, the ridge penalty and the rank over the labeled rows. The derivations are in the
user guide, "Graph-regularized factors".
"""

from __future__ import annotations

import functools
import uuid
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.linalg import eigh

from .._core.chunked import is_dask_array, reduce_rows
from .._core.validation import holds_whole_numbers, number_of_0d

__all__ = [
    "GAMMA_GRID",
    "PENALTY_GRID",
    "AnchorGraph",
    "GammaSelection",
    "GraphDeformation",
    "PrincipalMap",
    "RankSelection",
    "anchor_bandwidth",
    "anchor_block",
    "anchor_laplacian_gram",
    "deformation",
    "deformation_matrix",
    "graph_laplacian_gram",
    "loo_ridge_scores",
    "principal_map",
    "rank_candidates",
    "ridge_targets",
    "select_gamma_penalty",
    "select_rank",
    "simplex_least_squares",
    "simplex_projection",
]

#: Relative Laplacian weights t tried by ``gamma="auto"`` (γ = t·tr(GᵀG)/tr(GᵀLᵖG)).
GAMMA_GRID = (0.0, 1e-3, 1e-2, 1e-1, 1.0, 10.0, 1e2, 1e3, 1e4)
#: Ridge penalties tried with them, for features of unit mean squared row norm.
PENALTY_GRID = tuple(10.0**k for k in range(-6, 3))


# --------------------------------------------------------------------------- arguments
# The checks of the public functions here and in ``_few_labels``: bad input gets an
# error that names the function and the argument, never a message from deep in NumPy.


def _arg_array(A, name, owner, *, ndim, rows=None, cols=None, min_rows=0):
    """``A`` as a float64 array of ``ndim`` dimensions (1 or 2) of finite numbers, with
    ``rows`` rows (and ``cols`` columns) when given and at least ``min_rows``; else a
    TypeError / ValueError naming ``owner`` and ``name``. Sparse input is refused."""
    if A is None or sp.issparse(A):
        what = "None" if A is None else "a sparse matrix"
        raise TypeError(f"{owner}: {name} must be a dense array of numbers; got {what}")
    a = np.asarray(A)
    if a.dtype.kind not in "biuf":
        raise TypeError(f"{owner}: {name} must hold real numbers; got dtype {a.dtype}")
    if a.ndim != ndim:
        dims = "1-d" if ndim == 1 else "2-d"
        raise ValueError(f"{owner}: {name} must be {dims}; got shape {a.shape}")
    unit = "rows" if ndim == 2 else "entries"
    if rows is not None and a.shape[0] != rows:
        raise ValueError(f"{owner}: {name} has {a.shape[0]} {unit}; expected {rows}")
    if cols is not None and a.shape[1] != cols:
        raise ValueError(f"{owner}: {name} has {a.shape[1]} columns; expected {cols}")
    if a.shape[0] < min_rows:
        raise ValueError(f"{owner}: {name} has {a.shape[0]} {unit}; it needs at least {min_rows}")
    a = np.asarray(a, dtype=np.float64)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{owner}: {name} holds NaN or infinity")
    return a


def _arg_codes(codes, name, owner, n_classes=None):
    """Integer class codes (1-d, whole numbers ≥ 0, below ``n_classes`` when given) as
    int64; else an error naming ``name``."""
    if codes is None or sp.issparse(codes):
        raise TypeError(f"{owner}: {name} must be a 1-d array of integer class codes 0 … c−1")
    a = np.asarray(codes)
    if a.ndim != 1:
        raise ValueError(f"{owner}: {name} must be 1-d; got shape {a.shape}")
    if not holds_whole_numbers(a):
        raise ValueError(
            f"{owner}: {name} must hold integer class codes 0 … c−1; got {a.dtype} values"
        )
    a = a.astype(np.int64)
    if a.size and int(a.min()) < 0:
        raise ValueError(f"{owner}: {name} must hold class codes ≥ 0; got {int(a.min())}")
    if n_classes is not None and a.size and int(a.max()) >= n_classes:
        raise ValueError(
            f"{owner}: {name} holds code {int(a.max())}, but n_classes is {n_classes} "
            f"(codes 0 … {n_classes - 1})"
        )
    return a


def _arg_int(v, name, owner, *, low=1, allow_none=False):
    """An integer ≥ ``low`` (not a bool), as int; None passes with ``allow_none``."""
    if v is None and allow_none:
        return None
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{owner}: {name} must be an integer ≥ {low}; got {v!r}")
    if int(v) < low:
        raise ValueError(f"{owner}: {name} must be an integer ≥ {low}; got {v!r}")
    return int(v)


def _arg_real(v, name, owner, *, low=0.0, strict=False, high=None):
    """A finite real number ≥ ``low`` (> with ``strict``; < ``high`` when given), not a
    bool; a 0-d array of a number is that number."""
    v = number_of_0d(v)
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"{owner}: {name} must be a number; got {v!r}")
    v = float(v)
    bound = f"> {low:g}" if strict else f"≥ {low:g}"
    if high is not None:
        bound += f" and < {high:g}"
    if not np.isfinite(v) or (v <= low if strict else v < low) or (high is not None and v >= high):
        raise ValueError(f"{owner}: {name} must be a finite number {bound}; got {v!r}")
    return v


def _arg_grid(values, name, owner, *, strict):
    """A nonempty sequence of finite numbers ≥ 0 (> 0 with ``strict``), as a tuple."""
    if values is None or isinstance(values, (str, bytes)) or np.ndim(values) != 1:
        raise TypeError(
            f"{owner}: {name} must be a nonempty 1-d sequence of numbers; got {values!r}"
        )
    out = tuple(_arg_real(v, f"each of {name}", owner, strict=strict) for v in values)
    if not out:
        raise ValueError(f"{owner}: {name} is empty; give at least one value")
    return out


def _arg_deformation(defo, owner):
    if not isinstance(defo, GraphDeformation):
        raise TypeError(
            f"{owner}: defo must be a GraphDeformation (the deformation field of "
            "fit_graph_factor's record); "
            f"got {type(defo).__name__}"
        )
    return defo


# --------------------------------------------------------------------------- anchors


#: Up to this many neighbours the nearest anchors are found by repeated row minima
#: (s passes of argmin over the block, each a fraction of a partition's cost); more
#: neighbours use ``argpartition``.
_ARGMIN_MAX_NEIGHBORS = 8


def _nearest_anchors(D, s):
    """Indices (sorted by distance) and values of the s smallest entries of each row
    of D (squared distances, or squared distances less a per-row constant). D is read,
    and restored where the search marks it."""
    b, a = D.shape
    if s <= _ARGMIN_MAX_NEIGHBORS and s < a:
        r = np.arange(b)
        idx = np.empty((b, s), dtype=np.intp)
        d = np.empty((b, s), dtype=D.dtype)
        for j in range(s):  # ties: the lower index first
            k = np.argmin(D, axis=1)
            idx[:, j], d[:, j] = k, D[r, k]
            D[r, k] = np.inf
        for j in range(s):
            D[r, idx[:, j]] = d[:, j]
        return idx, d
    idx = np.argpartition(D, s - 1, axis=1)[:, :s] if s < a else np.argsort(D, axis=1)
    d = np.take_along_axis(D, idx, axis=1)
    order = np.argsort(d, axis=1, kind="stable")
    return np.take_along_axis(idx, order, axis=1), np.take_along_axis(d, order, axis=1)


def _anchor_scores(Xb, anchors, anchor_sq, center=None):
    """(‖u_j‖² − 2⟨x_i, u_j⟩ for a block of rows, ‖x_i‖²): the squared distances to the
    anchors less each row's own ‖x_i‖², which orders a row's anchors and cancels from
    the kernel weights' differences. Dense rows: one GEMM on rows augmented by a 1
    (no pass over the block afterwards).

    ``center``: the anchors (and ``anchor_sq``, their squared norms) are given relative
    to this point, and dense rows are shifted by it before the product, so that a large
    common offset of the data does not cancel in ‖u‖² − 2⟨x, u⟩ + ‖x‖² (at an offset
    of 10⁸ the uncentred form loses every digit of a unit distance). Sparse rows are
    not shifted (that would make them dense): their scores are the same quantities
    computed from the uncentred products, accurate for the data sparse matrices hold
    (no large common offset)."""
    if sp.issparse(Xb):
        x_sq = np.asarray(Xb.multiply(Xb).sum(axis=1), dtype=np.float64).ravel()
        S = np.asarray(Xb @ anchors.T, dtype=np.float64)
        S *= -2.0
        if center is None:
            S += anchor_sq
        else:  # relative to the centre c: ‖u−c‖² + 2⟨c, u−c⟩ − 2⟨x, u−c⟩, ‖x − c‖²
            S += anchor_sq + 2.0 * (anchors @ center)
            x_sq += float(center @ center) - 2.0 * np.asarray(Xb @ center).ravel()
        return S, x_sq
    Xb = np.asarray(Xb, dtype=np.float64)
    if center is not None:
        Xb = Xb - center
    x_sq = np.einsum("ij,ij->i", Xb, Xb)
    Xa = np.empty((Xb.shape[0], Xb.shape[1] + 1))
    Xa[:, :-1] = Xb
    Xa[:, -1] = 1.0
    Ua = np.empty((anchors.shape[0], anchors.shape[1] + 1))
    np.multiply(anchors, -2.0, out=Ua[:, :-1])
    Ua[:, -1] = anchor_sq
    return Xa @ Ua.T, x_sq


def simplex_projection(V):
    """Each row of V projected onto the probability simplex (Euclidean projection)."""
    V = np.asarray(V, dtype=np.float64)
    s = V.shape[1]
    U = -np.sort(-V, axis=1)
    css = np.cumsum(U, axis=1) - 1.0
    k = np.arange(1, s + 1)
    cond = U - css / k > 0
    rho = s - 1 - np.argmax(cond[:, ::-1], axis=1)
    theta = css[np.arange(V.shape[0]), rho] / (rho + 1)
    return np.maximum(V - theta[:, None], 0.0)


#: The local anchor embedding's ridge, relative to the mean squared distance from the
#: row to its anchors: it makes the weights unique where the anchors are affinely
#: dependent (more anchors than dimensions + 1, where many weights reconstruct the row
#: equally well) and costs the reconstruction at most this fraction of that distance.
LAE_RIDGE = 1e-6
#: The local anchor embedding's tolerance: the weights are accepted when their duality
#: (Frank–Wolfe) gap is at most this fraction of the mean squared distance to the
#: anchors, which bounds the excess of the objective over its minimum by twice as much.
LAE_TOL = 1e-12


def simplex_least_squares(C, *, ridge=LAE_RIDGE, tol=LAE_TOL, max_iter=None):
    """For each Gram C_b (s × s, positive semidefinite) of a stack (b × s × s), the
    weights z on the probability simplex (z ≥ 0, Σz = 1) that minimize
    zᵀ(C_b + ρ_b I)z, ρ_b = ``ridge`` · tr(C_b)/s.

    With C_b the Gram of the vectors u_j − x, zᵀC_b z = ‖x − Σ_j z_j u_j‖²: the simplex
    weights that best reconstruct x from the u_j (local anchor embedding).

    Solved exactly by a primal active-set method, all rows at once: on the current
    support P the minimizer over the affine hull is C_PP⁻¹1 / (1ᵀC_PP⁻¹1) (one batched
    s × s solve); a step that would leave the simplex stops at its boundary and drops
    the index that reached 0; otherwise the index with the most negative multiplier
    g_j − zᵀg (g = Cz) joins the support. A row is done when its duality gap
    zᵀg − min_j g_j is at most ``tol`` · tr(C_b)/s, which bounds the objective's excess
    over its minimum by 2 · ``tol`` · tr(C_b)/s (convexity: f(z) − f* ≤ ∇f(z)ᵀ(z − z*)).
    The result depends on the Grams only, so on the vectors' differences: the same for
    x and anchors shifted together. Rows not done after ``max_iter`` rounds (default
    10·s + 20; the method ends in finitely many, far fewer in practice) keep their
    current feasible weights, with a warning.
    """
    C, scale, z, P = _simplex_start(C, ridge)
    b, s, _ = C.shape
    if max_iter is None:
        max_iter = 10 * s + 20
    todo = np.arange(b)
    eye = np.eye(s, dtype=bool)
    for _ in range(max_iter):
        if todo.size == 0:
            break
        todo = _active_set_round(C, z, P, todo, eye, tol * scale)
    if todo.size:
        import warnings

        warnings.warn(
            f"local anchor embedding: {todo.size} row(s) did not reach the duality gap "
            f"{tol:g} of the mean squared anchor distance in {max_iter} rounds; their "
            "weights are feasible but may not be optimal",
            RuntimeWarning,
            stacklevel=2,
        )
    return z


def _simplex_start(C, ridge):
    """The ridged Grams, their scales tr(C_b)/s (1 where zero), and the start of
    :func:`simplex_least_squares`: all weight on the vector of least squared norm."""
    C = np.asarray(C, dtype=np.float64)
    b, s, _ = C.shape
    diag = np.einsum("bii->bi", C)
    scale = diag.sum(axis=1) / s
    scale = np.where(scale > 0, scale, 1.0)  # every vector zero: uniform weights
    C = C + (ridge * scale)[:, None, None] * np.eye(s)
    z = np.zeros((b, s))
    start = np.argmin(diag, axis=1)
    z[np.arange(b), start] = 1.0
    return C, scale, z, z > 0


def _active_set_round(C, z, P, todo, eye, gap_tol):
    """One round of the active-set method on the rows ``todo`` (z and the supports P
    updated in place); the rows still to do."""
    Ct, Pt, zt = C[todo], P[todo], z[todo]
    both = Pt[:, :, None] & Pt[:, None, :]
    M = np.where(both, Ct, 0.0) + (eye & ~Pt[:, :, None])
    a = np.linalg.solve(M, Pt.astype(np.float64)[:, :, None])[:, :, 0]
    y = a / a.sum(axis=1, keepdims=True)
    blocked = np.any(Pt & (y <= 0.0), axis=1)
    # feasible: move to y, then the gap and the most negative multiplier
    ok = ~blocked
    zt[ok] = np.where(Pt[ok], y[ok], 0.0)
    g = np.einsum("bst,bt->bs", Ct[ok], zt[ok])
    mu = np.einsum("bs,bs->b", g, zt[ok])
    off = np.where(Pt[ok], np.inf, g)
    j = np.argmin(off, axis=1)
    # done: the gap is within the tolerance, or no index off the support has a
    # negative multiplier (the face's minimizer is the answer, to the solve's
    # round-off)
    gap = mu - g.min(axis=1)
    done_ok = (gap <= gap_tol[todo[ok]]) | (off[np.arange(j.size), j] >= mu)
    add = ~done_ok
    rows_ok = np.flatnonzero(ok)
    Pt[rows_ok[add], j[add]] = True
    if np.any(blocked):
        zt[blocked], Pt[blocked] = _step_to_boundary(zt[blocked], y[blocked], Pt[blocked])
    z[todo], P[todo] = zt, Pt
    finished = np.zeros(todo.size, dtype=bool)
    finished[rows_ok[done_ok]] = True
    return todo[~finished]


def _step_to_boundary(zb, yb, Pb):
    """Blocked rows: step from z towards y until the first support index reaches 0,
    which leaves the support; ``(z, support)``."""
    shrink = Pb & (yb < zb)
    ratio = np.where(shrink, zb / np.where(shrink, zb - yb, 1.0), np.inf)
    k = np.argmin(ratio, axis=1)
    alpha = np.clip(ratio[np.arange(k.size), k], 0.0, 1.0)
    zb = zb + alpha[:, None] * (yb - zb)
    zb[np.arange(k.size), k] = 0.0
    zb = np.where(Pb & (zb > 0.0), zb, 0.0)
    zb /= zb.sum(axis=1, keepdims=True)
    return zb, zb > 0.0


def _lae_weights(Xb, anchors, idx, center=None):
    """Local anchor embedding: for each row x of the block, the weights z on the simplex
    that minimize ‖x − Σ_j z_j u_j‖² over its anchors u_j (:func:`simplex_least_squares`
    on the Gram of the u_j − x, which no common shift of rows and anchors changes).
    ``anchors`` are relative to ``center`` (None: the origin)."""
    Xb = Xb.toarray() if sp.issparse(Xb) else np.asarray(Xb, dtype=np.float64)
    if center is not None:
        Xb = Xb - center
    V = anchors[idx] - Xb[:, None, :]  # (b, s, d): each anchor less the row
    return simplex_least_squares(np.einsum("bsd,btd->bst", V, V))


def anchor_block(Xb, anchors, anchor_sq, n_neighbors, sigma2, weights="kernel", center=None):
    """The anchor graph's rows for a block of rows: (indices (b, s), weights (b, s)),
    each row's weights on the simplex. ``anchors`` and ``anchor_sq`` (their squared
    norms) are relative to ``center`` (None: the origin); the rows are shifted by it."""
    S, _ = _anchor_scores(Xb, anchors, anchor_sq, center)
    idx, d = _nearest_anchors(S, n_neighbors)
    if weights == "lle":
        return idx, _lae_weights(Xb, anchors, idx, center)
    # exp(−(d − d₁)/σ²), normalized: the row's ‖x‖² and its nearest distance cancel
    # (no underflow); the scores differ from the distances by ‖x‖² only
    w = np.exp(-(d - d[:, :1]) / sigma2)
    w /= w.sum(axis=1, keepdims=True)
    return idx, w


def _block_rows(width: int) -> int:
    """Rows per chunk so that a chunk's rows × ``width`` float64 blocks (distances to the
    anchors, factor rows) stay within the memory budget."""
    from .._core.config import get_config

    return max(64, int(get_config()["memory_budget"]) // (8 * 4 * max(width, 1)))


def _sum_parts(a, b):
    if isinstance(a, tuple):
        return tuple(_sum_parts(x, y) for x, y in zip(a, b, strict=True))
    return a + b


def _by_sub_blocks(Xb, *args, func, rows):
    """``func`` summed over sub-blocks of ``rows`` rows of a block: a dask chunk may hold
    more rows than the memory budget allows for its rows × anchors (or × m) blocks."""
    out = None
    for s in range(0, Xb.shape[0], rows):
        part = func(Xb[s : s + rows], *args)
        out = part if out is None else _sum_parts(out, part)
    return out


def _reduce_chunks(func, X, args, rows):
    """:func:`reduce_rows` of ``func(block, *args)`` over X in blocks of at most ``rows``
    rows. On a dask X each chunk is cut into such blocks on its worker, and ``args``
    (the factor's transform, the anchor graph) travel once as graph keys, not inside
    every task."""
    if not is_dask_array(X):
        return reduce_rows(func, X, args=args, rows=rows)
    import dask

    f = functools.partial(_by_sub_blocks, func=func, rows=rows)
    dargs = [
        dask.delayed(a, traverse=False, name=f"lorak-graph-arg-{uuid.uuid4().hex}") for a in args
    ]
    return reduce_rows(f, X, args=dargs)


def _kth_dist_block(Xb, anchors, anchor_sq, s, center=None):
    S, x_sq = _anchor_scores(Xb, anchors, anchor_sq, center)
    _, d = _nearest_anchors(S, s)
    kth = np.maximum(d[:, -1] + x_sq, 0.0)
    return np.array([float(kth.sum()), float(Xb.shape[0])])


def anchor_bandwidth(X, anchors, n_neighbors) -> float:
    """σ² of the kernel weights: the mean over rows of the squared distance to the
    s-th nearest anchor (one pass over row chunks; distances taken relative to the
    anchors' mean, so that a common offset of X cancels exactly)."""
    anchors = np.asarray(anchors, dtype=np.float64)
    center = anchors.mean(axis=0)
    anchors = anchors - center
    a_sq = np.einsum("ij,ij->i", anchors, anchors)
    rows = _block_rows(anchors.shape[0])
    args = (anchors, a_sq, n_neighbors, center)
    tot, n = _reduce_chunks(_kth_dist_block, X, args, rows)
    sigma2 = tot / max(n, 1.0)
    if not np.isfinite(sigma2):
        raise ValueError(
            "the anchor graph's bandwidth is not finite (the squared distances overflow "
            "float64); rescale X"
        )
    # every row sits on an anchor (duplicated rows, anchors = rows): any width will do
    return float(sigma2) if sigma2 > 0 else 1.0


@dataclass
class AnchorGraph:
    """The anchor graph, held as what defines it (anchors and the weight rule), so that
    its rows can be recomputed chunk by chunk in every pass over X. Distances are
    taken relative to ``center``, the anchors' mean (``centered``: the anchors less it,
    ``anchor_sq``: their squared norms), so that a common offset of the data cancels
    exactly instead of in round-off."""

    anchors: np.ndarray
    n_neighbors: int
    sigma2: float
    weights: str = "kernel"
    center: np.ndarray = field(init=False, repr=False)
    centered: np.ndarray = field(init=False, repr=False)
    anchor_sq: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        self.anchors = np.asarray(self.anchors, dtype=np.float64)
        self.center = self.anchors.mean(axis=0)
        self.centered = self.anchors - self.center
        self.anchor_sq = np.einsum("ij,ij->i", self.centered, self.centered)

    @property
    def n_anchors(self) -> int:
        return self.anchors.shape[0]

    def rows(self, Xb):
        """(indices, weights) of a block of rows of X."""
        return anchor_block(
            Xb,
            self.centered,
            self.anchor_sq,
            self.n_neighbors,
            self.sigma2,
            self.weights,
            self.center,
        )

    def dense(self, X) -> np.ndarray:
        """Z as a dense n × a matrix (tests and small n only)."""
        idx, w = self.rows(X)
        Z = np.zeros((idx.shape[0], self.n_anchors))
        np.put_along_axis(Z, idx, w, axis=1)
        return Z


# --------------------------------------------------------------------------- GᵀLᵖG


def _float64_rows(Gb):
    Gb = Gb.toarray() if sp.issparse(Gb) else Gb
    return np.asarray(Gb, dtype=np.float64)


def _gram(G):
    """GᵀG in float64 (NumPy's product recognizes the transpose and runs BLAS ``syrk``,
    half the flops of a general product, on the same BLAS as the kernel rows' — mixing
    two BLAS libraries' thread pools in one loop halves the speed of both on 2 cores)."""
    G = np.ascontiguousarray(G, dtype=np.float64)
    return G.T @ G


def _z_block(idx, w, n_anchors):
    """The block's rows of Z as a CSR matrix (b × a)."""
    b, s = idx.shape
    return sp.csr_matrix((w.ravel(), idx.ravel(), np.arange(0, b * s + 1, s)), shape=(b, n_anchors))


def _anchor_pass1(Xb, transform, graph):
    G = _float64_rows(transform(Xb))
    idx, w = graph.rows(Xb)
    a, m = graph.n_anchors, G.shape[1]
    Zb = _z_block(idx, w, a)
    ZtG = np.asarray(Zb.T @ G).reshape(a, m)
    lam = np.bincount(idx.ravel(), weights=w.ravel(), minlength=a)
    return _gram(G), ZtG, lam


def _anchor_pass2(Xb, transform, graph, B):
    G = _float64_rows(transform(Xb))
    idx, w = graph.rows(Xb)
    LG = G - np.einsum("bs,bsm->bm", w, B[idx])
    return _gram(LG)


def anchor_laplacian_gram(
    X, transform, graph: AnchorGraph, power: int = 1, *, rows=None, linear_map=None
):
    """(GᵀG, GᵀLᵖG, Λ) for G = transform(X) and the anchor graph's L = I − ZΛ⁻¹Zᵀ.

    One pass over row chunks of X (two for p = 2); X may be an ndarray, a memmap or a
    dask array (``rows``: rows per block, else the memory budget decides; a dask chunk
    larger than that is cut into such blocks on its worker). Anchors that no row chose
    (Λ_jj = 0) carry no edge and are dropped.

    ``linear_map`` (N, m × r): ``transform`` gives rows K with G = K N — a Nyström
    factor's kernel rows k(x, landmarks), whose N is the landmark kernel's inverse
    square root. The passes then accumulate KᵀK, ZᵀK (and the p = 2 Gram) on the
    kernel rows, and N is applied once to the m × m results (GᵀG = Nᵀ KᵀK N, and so on):
    the same matrices, without the m × r product on every row.
    """
    if rows is None:
        rows = _block_rows(graph.n_anchors + X.shape[1] if not sp.issparse(X) else graph.n_anchors)
    KtK, ZtK, lam = _reduce_chunks(_anchor_pass1, X, (transform, graph), rows)
    used = lam > 0
    B = np.zeros_like(ZtK)
    B[used] = ZtK[used] / lam[used, None]
    if power == 1:
        H = KtK - ZtK[used].T @ B[used]
    else:
        H = _reduce_chunks(_anchor_pass2, X, (transform, graph, B), rows)
    if linear_map is not None:
        N = np.asarray(linear_map, dtype=np.float64)
        KtK, H = N.T @ KtK @ N, N.T @ H @ N
    return KtK, _sym_part(H), lam


def graph_laplacian_gram(G, A, power: int = 1):
    """(GᵀG, GᵀLᵖG) for an in-memory G and a symmetric sparse adjacency A with the
    normalized Laplacian L = I − D^{-1/2} A D^{-1/2}.

    A row of A without any edge (degree 0) is refused: it has no neighbour to be smooth
    with, and ``n_neighbors`` or the graph is the parameter to change.
    """
    G = _float64_rows(G)
    A = sp.csr_matrix(A, dtype=np.float64)
    deg = np.asarray(A.sum(axis=1)).ravel()
    if np.any(deg <= 0):
        bad = np.flatnonzero(deg <= 0)
        raise ValueError(
            f"graph: {bad.size} row(s) have no edge (isolated rows, e.g. row {int(bad[0])}); "
            "every row needs a neighbour in the graph — pass a connected graph, or a larger "
            "n_neighbors"
        )
    Gs = G / np.sqrt(deg)[:, None]
    AGs = A @ Gs
    GtG = G.T @ G
    if power == 1:
        H = GtG - Gs.T @ AGs
    else:
        LG = G - AGs / np.sqrt(deg)[:, None]
        H = LG.T @ LG
    return GtG, _sym_part(H)


def _sym_part(H):
    return 0.5 * (H + H.T)


# --------------------------------------------------------------------------- k-NN graph

#: Rows up to which ``knn_method="auto"`` searches neighbours exactly (scikit-learn's
#: ``NearestNeighbors``); above, approximately by NN-descent (``pynndescent``): below
#: it the exact search costs about a second at most and has no compilation to pay (the
#: timings are in the user guide, "Graph-regularized factors").
KNN_EXACT_MAX = 20000


def _nndescent_graph(X, n_neighbors, random_state):
    try:
        from pynndescent import NNDescent
    except ImportError as exc:  # pragma: no cover - depends on the optional extra
        raise ImportError(
            "knn_method='nndescent' needs pynndescent: pip install 'lorak[graph]'"
        ) from exc
    index = NNDescent(
        X, n_neighbors=n_neighbors + 1, random_state=random_state, n_jobs=1, compressed=True
    )
    idx, _ = index.neighbor_graph
    n = X.shape[0]
    rows = np.repeat(np.arange(n), idx.shape[1])
    cols = idx.ravel()
    keep = (cols != rows) & (cols >= 0)
    A = sp.csr_matrix((np.ones(int(keep.sum())), (rows[keep], cols[keep])), shape=(n, n))
    A = A.maximum(A.T).tocsr()
    A.data[:] = 1.0
    return A


def knn_adjacency(X, n_neighbors: int, *, method: str = "auto", random_state=None):
    """The symmetrized k-NN 0/1 adjacency of the rows of X (CSR, self excluded).

    ``method``: "exact" (scikit-learn's ``NearestNeighbors``, O(n²d) time without an
    index that prunes), "nndescent" (approximate neighbours by NN-descent, the
    ``pynndescent`` package: about O(n^1.14 d)), or "auto": exact up to
    :data:`KNN_EXACT_MAX` rows, NN-descent above when ``pynndescent`` is installed.
    """
    from ._simple_npkl import knn_graph

    n = X.shape[0]
    if method == "auto":
        method = "exact"
        if n > KNN_EXACT_MAX:
            try:
                import pynndescent  # noqa: F401

                method = "nndescent"
            except ImportError:
                import warnings

                warnings.warn(
                    f"graph='knn' on {n} rows searches neighbours exactly (O(n²)); "
                    "pip install 'lorak[graph]' for approximate neighbours by NN-descent, "
                    "or use graph='anchor' (linear in n)",
                    UserWarning,
                    stacklevel=4,  # GraphRegularizedFactor.fit, through fit_graph_factor
                )
    if method == "exact":
        return knn_graph(X, n_neighbors)
    seed = (
        None if random_state is None else int(np.random.default_rng(random_state).integers(2**31))
    )
    Xd = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float32)
    return _nndescent_graph(Xd, n_neighbors, seed)


# --------------------------------------------------------------------------- deformation


@dataclass
class GraphDeformation:
    """H = GᵀLᵖG = V D Vᵀ with the scale of γ: γ = t · scale, scale = tr(GᵀG)/tr(H)."""

    eigenvalues: np.ndarray
    eigenvectors: np.ndarray
    scale: float
    gram: np.ndarray  # GᵀG, for feature scales without another pass

    def gamma(self, t: float) -> float:
        return float(t) * self.scale

    def matrix(self, t: float) -> np.ndarray:
        return deformation_matrix(self, t)

    @functools.cached_property
    def rotated_gram(self) -> np.ndarray:
        """Vᵀ GᵀG V: the factor's Gram in H's eigenbasis, where R(t) is diagonal (every
        t's feature scale and principal directions read it; computed once)."""
        V = self.eigenvectors
        return _sym_part(V.T @ (self.gram @ V))

    def mean_sq_norm(self, t: float, n_rows: int) -> float:
        """tr(R(t)ᵀ GᵀG R(t))/n: the mean squared norm of the n rows of G R(t)."""
        f2 = 1.0 / (1.0 + self.gamma(t) * self.eigenvalues) if t else 1.0
        return float(np.sum(f2 * np.diag(self.rotated_gram))) / max(n_rows, 1)


def deformation(GtG, H, n_rows=None) -> GraphDeformation:
    """The eigendecomposition of H (negative round-off clipped) and γ's scale.

    A graph whose GᵀLᵖG is zero to round-off carries no information on the factor's
    rows (a graph of self-loops only; each row alone with its anchor, as with
    n_anchors = n and n_neighbors = 1): its trace is then the round-off of a difference
    of sums over the n rows of terms as large as GᵀG's, up to about n·eps·tr(GᵀG), and
    tr(GᵀG)/tr(H) would turn it into a γ of 10¹⁵ or more. At or below
    max(n, m)·eps·tr(GᵀG) (``n_rows``: n; m when not given) the scale is 0 — every γ
    gives the plain factor — with a warning."""
    owner = "deformation"
    H = _arg_array(H, "H", owner, ndim=2, min_rows=1)
    m = H.shape[0]
    if H.shape[1] != m:
        raise ValueError(f"{owner}: H (GᵀLᵖG) must be square (m × m); got shape {H.shape}")
    GtG = _arg_array(GtG, "GtG", owner, ndim=2, rows=m, cols=m)
    n_rows = _arg_int(n_rows, "n_rows", owner, allow_none=True)
    if np.max(np.abs(H - H.T)) > 1e-8 * np.max(np.abs(H)):
        raise ValueError(f"{owner}: H (GᵀLᵖG) must be symmetric")
    D, V = eigh(H)
    D = np.maximum(D, 0.0)
    trH = float(np.sum(D))
    trG = float(np.trace(GtG))
    floor = max(int(n_rows or 0), D.size, 1) * np.finfo(np.float64).eps * trG
    if trH <= floor:
        if trG > 0:
            import warnings

            warnings.warn(
                f"graph: the Laplacian is zero on the factor's rows to round-off "
                f"(tr GᵀLᵖG / tr GᵀG = {trH / trG:.1e}): the graph joins no two rows the "
                "factor tells apart (only self-loops, or each row alone with its anchor), "
                "so gamma has no effect and the plain factor is used; pass a graph with "
                "edges between rows, or a larger n_neighbors",
                UserWarning,
                stacklevel=4,  # the caller of GraphRegularizedFactor.fit
            )
        return GraphDeformation(np.zeros_like(D), V, 0.0, np.asarray(GtG))
    return GraphDeformation(D, V, trG / trH, np.asarray(GtG))


def deformation_matrix(defo: GraphDeformation, t: float) -> np.ndarray:
    """R = V diag((1 + γD)^{-1/2}) Vᵀ, R Rᵀ = (I + γH)⁻¹; exactly I at t = 0."""
    defo = _arg_deformation(defo, "deformation_matrix")
    t = _arg_real(t, "t", "deformation_matrix")
    m = defo.eigenvectors.shape[0]
    if t == 0 or defo.scale == 0:
        return np.eye(m)
    V = defo.eigenvectors
    f = 1.0 / np.sqrt(1.0 + defo.gamma(t) * defo.eigenvalues)
    return _sym_part((V * f) @ V.T)


# --------------------------------------------------------------------------- selection


#: Labeled rows up to which :func:`loo_ridge_scores` diagonalizes their l × l Gram
#: (a few hundredths of a second) whatever the features' width r; above, the r × r
#: Gram when r < l (the ranks tried below full width cost r³, not l³).
LOO_GRAM_ROWS = 500


def loo_ridge_scores(F, Y, alphas, *, classification: bool = True, per_row: bool = False):
    """Closed-form leave-one-out of a ridge with an unpenalized intercept.

    ``F`` (l × r) features of the labeled rows, ``Y`` (l × c) targets (±1 one-vs-rest
    columns for classes, the responses for regression). For each α: the ridge fitted
    on l − 1 rows predicts the left-out row as yᵢ − eᵢ/(1 − hᵢᵢ) with e the residuals
    and h the hat matrix of the full fit (intercept included: hᵢᵢ = 1/l + Σ_k
    U_ik² s_k²/(s_k² + α) on the centred features). Returns an (len(alphas), 2) array:
    the LOO error rate (argmax of the columns; NaN for regression) and the LOO mean
    squared error; with ``per_row``, also each row's LOO loss (len(alphas), l): its 0/1
    error for classes, its squared error for responses.
    """
    owner = "loo_ridge_scores"
    F = _arg_array(F, "F", owner, ndim=2, min_rows=2)
    Y = _arg_array(Y, "Y", owner, ndim=np.ndim(Y) if np.ndim(Y) in (1, 2) else 2, rows=F.shape[0])
    alphas = _arg_grid(alphas, "alphas", owner, strict=False)
    return _loo_ridge(F, Y, alphas, classification=classification, per_row=per_row)


def _loo_ridge(F, Y, alphas, *, classification: bool = True, per_row: bool = False):
    """:func:`loo_ridge_scores` on checked float64 arrays."""
    if Y.ndim == 1:
        Y = Y[:, None]
    l = F.shape[0]
    mu = Y.mean(axis=0)
    Fc = F - F.mean(axis=0)
    # the left singular pairs of the centred features from one of their two Grams: the
    # l × l one (l labeled rows, usually the fewer; up to LOO_GRAM_ROWS always), else
    # the r × r one with U = Fc V / s — ten thousand labeled rows cost r³, not l³
    wide = l <= max(Fc.shape[1], LOO_GRAM_ROWS)
    s2_all, U = eigh(Fc @ Fc.T if wide else Fc.T @ Fc)
    top = float(s2_all[-1]) if s2_all.size else 0.0
    keep = s2_all > top * 1e-12 if top > 0 else np.zeros(s2_all.shape, bool)
    U, s = U[:, keep], np.sqrt(s2_all[keep])
    if not wide:
        U = (Fc @ U) / s
    UtY = U.T @ (Y - mu)
    s2 = s * s
    truth = Y.argmax(axis=1)
    out = np.empty((len(alphas), 2))
    rows = np.empty((len(alphas), l))
    for k, a in enumerate(alphas):
        f = s2 / (s2 + a)
        fit = U @ (f[:, None] * UtY) + mu
        h = 1.0 / l + (U * U) @ f
        loo = Y - (Y - fit) / np.maximum(1.0 - h, 1e-12)[:, None]
        sq = np.sum((Y - loo) ** 2, axis=1)
        wrong = loo.argmax(axis=1) != truth
        err = float(np.mean(wrong)) if classification else np.nan
        out[k] = err, float(np.mean(sq)) / Y.shape[1]
        rows[k] = wrong if classification else sq
    return (out, rows) if per_row else out


def ridge_targets(codes, n_classes):
    """±1 one-vs-rest columns of integer class codes (as a ridge classifier fits)."""
    n_classes = _arg_int(n_classes, "n_classes", "ridge_targets")
    codes = _arg_codes(codes, "codes", "ridge_targets", n_classes)
    Y = -np.ones((codes.size, n_classes))
    Y[np.arange(codes.size), codes] = 1.0
    return Y


@dataclass
class GammaSelection:
    """What ``select_gamma_penalty`` chose and the leave-one-out table behind it."""

    t: float
    penalty: float
    scores: np.ndarray  # (len(ts), len(alphas), 2): LOO error rate, LOO mean squared error
    ts: tuple
    alphas: tuple


def select_gamma_penalty(
    G_labeled,
    defo: GraphDeformation,
    targets,
    n_rows: int,
    *,
    ts=GAMMA_GRID,
    alphas=PENALTY_GRID,
    classification: bool = True,
    rule: str = "best",
) -> GammaSelection:
    """t (γ's relative weight) and the ridge penalty α chosen together by leave-one-out
    over the labeled rows.

    The features of each t are the labeled rows of G R(t), scaled to unit mean squared
    row norm over all n rows (from GᵀG: ‖G R‖_F² = tr(Rᵀ GᵀG R)), the scale the
    semi-supervised classifier applies, so that α means the same in the head. The key
    is (LOO error rate, LOO mean squared error) for classes, the LOO mean squared error
    for responses; ties go to the earlier candidate (smaller t first: the plain factor
    wins a tie, then the larger α). Only the labeled rows' targets are read.

    ``rule="one_se"`` then prefers the weakest graph that is not significantly worse
    than the best candidate: the smallest t whose best penalty's per-row LOO
    losses (0/1 errors for classes, squared errors for responses) exceed the best
    candidate's, paired row by row, by at most one standard error of the mean
    difference — a one-standard-error rule in the direction of the plain factor, so a
    graph is used only when the labeled rows show it helps. ``rule="best"`` (default):
    the best key. ``rule="squared_error"``: the lowest LOO squared error of the ±1
    targets, for classes too (smoother than the error count; scikit-learn's
    ``RidgeClassifierCV`` reads its leave-one-out this way).

    ``rule="gated"``: each t's penalty by its LOO squared error, t by the same; then a
    graph (t > 0) is kept only when its per-row LOO squared losses beat those of t = 0
    (the plain factor, at its own best penalty), paired row by row, by more than one
    standard error of the mean difference. The squared error of the ±1 targets is
    smooth where the error count of 100 labeled rows is coarse, and the gate keeps the
    plain factor where the rows show no geometry the labels follow.
    """
    owner = "select_gamma_penalty"
    if not isinstance(rule, str) or rule not in ("best", "gated", "squared_error", "one_se"):
        raise ValueError(
            f"{owner}: rule must be 'best', 'gated', 'squared_error' or 'one_se'; got {rule!r}"
        )
    G_labeled, targets = _arg_labeled(G_labeled, defo, targets, n_rows, owner)
    ts = _arg_grid(ts, "ts", owner, strict=False)
    alphas_desc = tuple(sorted(_arg_grid(alphas, "alphas", owner, strict=False), reverse=True))
    scores = np.empty((len(ts), len(alphas_desc), 2))
    losses = [None] * len(ts)
    best = None
    # R(t) = V diag(f_t) Vᵀ; the trailing Vᵀ is a rotation, which a ridge (and its
    # leave-one-out) does not see: the labeled features are A diag(f_t), A = G_l V
    A = G_labeled @ defo.eigenvectors
    feats = [None] * len(ts)
    for i, t in enumerate(ts):
        f = 1.0 / np.sqrt(1.0 + defo.gamma(t) * defo.eigenvalues)
        ms = defo.mean_sq_norm(t, n_rows)
        scale = 1.0 / np.sqrt(ms) if ms > 0 else 1.0
        F = feats[i] = A * (f * scale)
        scores[i], losses[i] = _loo_ridge(
            F, targets, alphas_desc, classification=classification, per_row=True
        )
        for k, a in enumerate(alphas_desc):
            key = _key(scores[i, k], classification and rule != "squared_error")
            if best is None or key < best[0]:
                best = (key, t, a, i, k)
    _, t, a, ib, kb = best
    if rule == "one_se":
        ref = losses[ib][kb]
        for i in range(ib):
            k = min(range(len(alphas_desc)), key=lambda k: _key(scores[i, k], classification))
            d = losses[i][k] - ref
            se = float(np.std(d, ddof=1)) / np.sqrt(d.size) if d.size > 1 else 0.0
            if float(np.mean(d)) <= se:
                t, a = ts[i], alphas_desc[k]
                break
    elif rule == "gated":
        t, a = _gated_choice(feats, targets, scores, ts, alphas_desc)
    return GammaSelection(t, a, scores, ts, alphas_desc)


def _arg_labeled(G_labeled, defo, targets, n_rows, owner):
    """The checked (G_labeled, targets) of :func:`select_gamma_penalty` and
    :func:`select_rank`: the labeled rows of the factor (l × m, m the deformation's
    width, l ≥ 2) and their targets (l, or l × c), finite; ``n_rows`` ≥ l."""
    defo = _arg_deformation(defo, owner)
    m = defo.eigenvectors.shape[0]
    G = _arg_array(G_labeled, "G_labeled", owner, ndim=2, cols=m, min_rows=2)
    nd = np.ndim(targets)
    T = _arg_array(targets, "targets", owner, ndim=nd if nd in (1, 2) else 2, rows=G.shape[0])
    if _arg_int(n_rows, "n_rows", owner) < G.shape[0]:
        raise ValueError(
            f"{owner}: n_rows={n_rows} is below the {G.shape[0]} labeled rows; n_rows counts "
            "every row the factor was fitted on"
        )
    return G, T


#: Fractions of the factor's width m tried as ranks by :func:`rank_candidates`.
RANK_FRACTIONS = (1.0, 1 / 3, 1 / 10, 1 / 30, 1 / 100)


def rank_candidates(m: int, n_classes: int = 1) -> tuple:
    """The ranks tried for a factor of width m: m·{1, 1/3, 1/10, 1/30, 1/100} rounded
    up, none below max(2, the number of classes), largest first."""
    m = _arg_int(m, "m", "rank_candidates")
    floor = max(2, _arg_int(n_classes, "n_classes", "rank_candidates"))
    ranks = {min(m, max(floor, int(np.ceil(m * f - 1e-9)))) for f in RANK_FRACTIONS}
    return tuple(sorted(ranks, reverse=True))


@dataclass
class PrincipalMap:
    """The deformed factor's leading principal directions: ``transform`` =
    G · ``matrix`` (m × r), whose rows have mean squared norm ``mean_sq_norm``
    (``variances``: each direction's share of it, largest first, when known)."""

    matrix: np.ndarray
    rank: int
    mean_sq_norm: float
    variances: np.ndarray | None = None

    def prefix(self, r: int) -> tuple:
        """(the map's first r directions, their rows' mean squared norm); ``variances``
        needed."""
        return self.matrix[:, :r], float(np.sum(self.variances[:r]))


def principal_map(defo: GraphDeformation, t: float, rank: int, n_rows: int) -> PrincipalMap:
    """The r leading principal directions of G R(t) over the training rows (the
    eigenvectors of Rᵀ GᵀG R with the largest eigenvalues): G R(t) P_r, the rank-r
    truncation of the deformed kernel that keeps the most of its variance — its
    cluster structure, where the data has one (the spectral cluster kernels of
    Chapelle, Weston & Schölkopf 2003)."""
    owner = "principal_map"
    defo = _arg_deformation(defo, owner)
    t = _arg_real(t, "t", owner)
    rank = _arg_rank(rank, "rank", owner, defo.eigenvectors.shape[0])
    n_rows = _arg_int(n_rows, "n_rows", owner)
    V = defo.eigenvectors
    f = 1.0 / np.sqrt(1.0 + defo.gamma(t) * defo.eigenvalues) if t else np.ones(V.shape[0])
    lam, P = eigh(defo.rotated_gram * np.outer(f, f))
    order = np.argsort(lam)[::-1][:rank]
    M = (V * f) @ P[:, order]
    # each direction's sign fixed by its largest entry (M does not depend on the signs
    # of V's columns): the same map from the same statistics up to round-off, in
    # memory, on a memmap and on dask
    big = np.argmax(np.abs(M), axis=0)
    M *= np.where(M[big, np.arange(M.shape[1])] < 0, -1.0, 1.0)
    var = np.maximum(lam[order], 0.0) / max(n_rows, 1)
    return PrincipalMap(M, int(rank), float(np.sum(var)), var)


def _arg_rank(r, name, owner, m):
    """A rank: an integer 1 … m (m the factor's width)."""
    r = _arg_int(r, name, owner)
    if r > m:
        raise ValueError(f"{owner}: {name} is {r}, above the factor's width m = {m}")
    return r


@dataclass
class RankSelection:
    """What :func:`select_rank` chose: the rank, the ridge penalty with it, the map,
    and the leave-one-out mean squared error of every (rank, penalty)."""

    rank: int
    penalty: float
    map: PrincipalMap
    scores: np.ndarray  # (len(ranks), len(alphas)): LOO mean squared error
    ranks: tuple
    alphas: tuple


def _ridge_dof(F, alphas):
    """The effective degrees of freedom Σ s²/(s² + α) of a ridge with an intercept on
    the centred rows of F, for each α (s the singular values)."""
    Fc = F - F.mean(axis=0)
    C = Fc @ Fc.T if Fc.shape[0] <= Fc.shape[1] else Fc.T @ Fc
    s2 = np.maximum(np.linalg.eigvalsh(C), 0.0)
    return np.array([float(np.sum(s2 / (s2 + a))) for a in alphas])


def select_rank(
    G_labeled,
    defo: GraphDeformation,
    t: float,
    targets,
    n_rows: int,
    *,
    ranks,
    alphas,
    leading=None,
) -> RankSelection:
    """The rank of the deformed factor (its leading principal directions,
    :func:`principal_map`) and the ridge penalty, together by closed-form
    leave-one-out over the labeled rows: the lowest LOO mean squared error of the
    targets (±1 class columns, or responses), ties to the larger rank, then the larger
    penalty. The features are scaled to unit mean squared row norm over all rows.

    A truncated candidate (r below the largest rank) is scored only at penalties whose
    ridge has at most l/2 effective degrees of freedom (l labeled rows): a fit that
    nearly interpolates the labeled rows makes leave-one-out a ratio of two small
    numbers, and picking the best of many such candidates overfits. The full-rank
    candidate, the factor as it was, is scored at every penalty.

    ``leading``: :func:`principal_map` of the same ``defo`` and t at a rank of at least
    the largest candidate, when a caller has it already (several choices at one t
    then share one eigendecomposition); None: computed here."""
    owner = "select_rank"
    G_l, targets = _arg_labeled(G_labeled, defo, targets, n_rows, owner)
    t = _arg_real(t, "t", owner)
    m = defo.eigenvectors.shape[0]
    if ranks is None or isinstance(ranks, (str, bytes)) or np.ndim(ranks) != 1 or not len(ranks):
        raise ValueError(
            f"{owner}: ranks must be a nonempty 1-d sequence of integers; got {ranks!r}"
        )
    ranks = tuple(_arg_rank(r, "each of ranks", owner, m) for r in ranks)
    alphas_desc = tuple(sorted(_arg_grid(alphas, "alphas", owner, strict=False), reverse=True))
    top = max(ranks)
    if (
        leading is not None
        and leading.matrix.shape == (m, leading.rank)
        and leading.rank >= top
        and leading.variances is not None
    ):
        full = leading
    else:
        full = principal_map(defo, t, top, n_rows)
    scores = np.empty((len(ranks), len(alphas_desc)))
    best = None
    for i, r in enumerate(ranks):
        M, ms = full.prefix(r)
        F = G_l @ M / (np.sqrt(ms) if ms > 0 else 1.0)
        scores[i] = _loo_ridge(F, targets, alphas_desc, classification=False)[:, 1]
        usable = scores[i].copy()
        if r < top:
            usable[_ridge_dof(F, alphas_desc) > 0.5 * G_l.shape[0]] = np.inf
        k = int(np.argmin(usable))
        if np.isfinite(usable[k]) and (best is None or usable[k] < best[0] - 1e-12 * abs(best[0])):
            best = (usable[k], i, k)
    _, i, k = best
    r = ranks[i]
    M, ms = full.prefix(r)
    pmap = PrincipalMap(M.copy(), r, ms, full.variances[:r].copy())
    return RankSelection(r, alphas_desc[k], pmap, scores, ranks, alphas_desc)


def _gated_choice(feats, targets, scores, ts, alphas):
    """(t, α) of ``rule="gated"`` (see :func:`select_gamma_penalty`)."""
    best_a = [int(np.argmin(scores[i, :, 1])) for i in range(len(ts))]  # ties: larger α
    i = int(np.argmin([scores[j, best_a[j], 1] for j in range(len(ts))]))  # ties: smaller t
    zero = [j for j, t in enumerate(ts) if t == 0]
    if ts[i] == 0 or not zero:
        return ts[i], alphas[best_a[i]]
    j = zero[0]

    def row_losses(k):
        _, rows = _loo_ridge(
            feats[k], targets, [alphas[best_a[k]]], classification=False, per_row=True
        )
        return rows[0]

    d = row_losses(i) - row_losses(j)
    se = float(np.std(d, ddof=1)) / np.sqrt(d.size) if d.size > 1 else 0.0
    if -float(np.mean(d)) > se:
        return ts[i], alphas[best_a[i]]
    return ts[j], alphas[best_a[j]]


def _key(score_row, classification):
    return (score_row[0], score_row[1]) if classification else (score_row[1],)

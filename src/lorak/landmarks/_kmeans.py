"""k-means centres as Nyström landmarks (Zhang, Tsang & Kwok 2008, "Improved Nyström").

The paper takes the centres of k-means, capped at 10 Lloyd iterations, as landmarks.
Seeding (``init="auto"`` = ``"subsample++"``): greedy k-means++ on
``min(n, max(2000, 10 k))`` random rows, sketched onto 64 principal directions when
d > 128 — a full k-means++ costs one pass over X per centre for a fraction of a
percent. Lloyd: one blocked loop (:func:`_lloyd`) whatever holds the rows (in memory,
dask chunks, an array API device), float32 products, distance bounds in memory, empty
clusters moved to the farthest rows; from the same seeds it gives the centres of
scikit-learn's Lloyd. The details, the defaults' reasons and the timings
(``bench/scripts/study_kmeans_init.py``) are in the user guide, "Low-rank factors and
landmarks", section "How the k-means landmarks are computed".
"""

from __future__ import annotations

import logging
import math
import time

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

__all__ = [
    "INIT_METHODS",
    "default_init_sample",
    "default_lloyd_sample",
    "kmeans_landmarks",
]

from .._core.rows import take_rows
from ..kernels._elementwise import sparse_dense_product

logger = logging.getLogger(__name__)

#: Valid values of ``init``; ``"auto"`` resolves to :data:`_AUTO_INIT`.
INIT_METHODS = ("auto", "k-means++", "subsample++", "random")
_AUTO_INIT = "subsample++"

# Default subsample for "subsample++": min(n, max(_SAMPLE_MIN, _SAMPLE_PER_CENTER * k)).
_SAMPLE_MIN = 2000
_SAMPLE_PER_CENTER = 10
# "subsample++" seeds on the sample's projection onto this many principal directions.
_SKETCH_DIM = 64
#: Lloyd's iterations run on all rows up to max(LLOYD_MIN_ROWS, LLOYD_ROWS_PER_CENTER·k)
#: rows; above, on that many rows drawn at random (see ``lloyd_sample``).
LLOYD_MIN_ROWS = 100_000
LLOYD_ROWS_PER_CENTER = 50

# Rows of X @ Cᵀ computed at once: about 2**21 entries (8 MB in float32) per block.
_BLOCK_ENTRIES = 2**21
# float64 data of at most this many entries is converted to the compute dtype once;
# larger data block by block.
_CONVERT_ONCE_ENTRIES = 2**24
# Rows per block of the thin products with the centres that moved most.
_THIN_BLOCK_ROWS = 16384
# Bound-based pruning (see _HostPasses) needs enough centres to pay for its bookkeeping.
_PRUNE_MIN_CENTERS = 32
_PRUNE_MAX_MOVERS = 64
# Attempt a pruned E-step only when at least this fraction of rows is expected to be
# skipped; otherwise a plain E-step is cheaper.
_PRUNE_MIN_SKIP = 0.1


def default_init_sample(n_samples: int, n_landmarks: int) -> int:
    """Subsample size of ``init="subsample++"`` when ``init_sample`` is None:
    min(n, max(2000, 10 k)) rows (fewer lose accuracy, more gain none: the user guide)."""
    return int(min(n_samples, max(_SAMPLE_MIN, _SAMPLE_PER_CENTER * n_landmarks)))


def default_lloyd_sample(n_samples: int, n_landmarks: int) -> int:
    """Rows Lloyd's iterations run on when ``lloyd_sample="auto"``: all n up to
    max(:data:`LLOYD_MIN_ROWS`, :data:`LLOYD_ROWS_PER_CENTER` · k), else that many."""
    return int(min(n_samples, max(LLOYD_MIN_ROWS, LLOYD_ROWS_PER_CENTER * n_landmarks)))


def _lloyd_rows(n, k, lloyd_sample):
    if lloyd_sample is None:
        return n
    if isinstance(lloyd_sample, str):
        if lloyd_sample != "auto":
            raise ValueError(f"lloyd_sample must be 'auto', None or an int; got {lloyd_sample!r}")
        return default_lloyd_sample(n, k)
    if isinstance(lloyd_sample, bool) or not isinstance(lloyd_sample, (int, np.integer)):
        raise ValueError(f"lloyd_sample must be 'auto', None or an int; got {lloyd_sample!r}")
    if lloyd_sample < k:
        raise ValueError(f"lloyd_sample={lloyd_sample} must be at least n_landmarks={k}")
    return int(min(n, lloyd_sample))


def lloyd_sample_rows(n, k, rng, lloyd_sample="auto"):
    """The sorted rows Lloyd's iterations run on, drawn from ``rng`` (None: all rows).

    The one draw every backend makes (in memory, a memmap, a dask array), so that the
    same seed gives the same sample and the same centres.
    """
    L = _lloyd_rows(n, k, lloyd_sample)
    if L >= n:
        return None
    return np.sort(rng.choice(n, size=L, replace=False))


def kmeans_landmarks(
    X,
    n_landmarks,
    *,
    rng,
    max_iter=10,
    init="auto",
    init_sample=None,
    tol=0.0,
    return_labels=False,
    lloyd_sample="auto",
    n_trials=None,
    prune=True,
    compute_dtype=np.float32,
    sketch=_SKETCH_DIM,
):
    """k-means cluster centres, for use as Nyström landmarks.

    Seeding (``init``) followed by at most ``max_iter`` Lloyd iterations on all rows.

    Parameters
    ----------
    X : ndarray of shape (n, d), float32 or float64, or scipy.sparse matrix
        The data, already validated by the caller (finite, 2-D, ``n >= n_landmarks``).
        Not modified.
    n_landmarks : int
        Number of centres k.
    rng : numpy.random.Generator
        Source of all randomness; the same Generator state gives the same output.
    max_iter : int, default=10
        Maximum number of Lloyd iterations (assignment + update) on all rows; the
        paper caps it at 10. Zero returns the seeds.
    init : {"auto", "k-means++", "subsample++", "random"} or array of shape \
(n_landmarks, d), default="auto"
        Seeding. ``"k-means++"``: greedy k-means++ (``n_trials`` candidates per
        centre, scikit-learn's default) on all rows — slow: one pass over X per centre.
        ``"subsample++"``: the same on ``init_sample`` rows drawn at random, projected
        on their ``sketch`` leading principal directions when d > 2 ``sketch``.
        ``"random"``: k distinct rows. ``"auto"``: currently ``"subsample++"`` (the
        user guide says why). An array: the initial centres
        themselves (Lloyd from given seeds, as ``KMeans(init=array)``; no random draw
        is made for the seeding; ``info["init"]`` is ``"given"``). Not modified.
    init_sample : int, optional
        Subsample size of ``"subsample++"`` (at least k is used). Default
        :func:`default_init_sample`: ``min(n, max(2000, 10 k))``.
    tol : float, default=0.0
        Stop when the squared centre shift, summed over centres, is at most ``tol``
        times the mean feature variance of X (scikit-learn's convention). Lloyd also
        stops when no assignment changes.
    return_labels : bool, default=False
        Also return the final assignment of every row in ``info["labels"]`` (of the
        sampled rows, with their indices in ``info["lloyd_rows"]``, when Lloyd ran on
        a sample).
    lloyd_sample : "auto", int or None, default="auto"
        Rows the seeding and Lloyd's iterations run on. None: all rows (the paper).
        An int L: L rows drawn at random (all when n ≤ L). "auto": all rows up to
        max(100 000, 50 k), else that many — the centres are means of their
        clusters, and 50 rows per centre estimate a cluster's mean to a seventh of its
        spread (1/√50), while every Lloyd pass over 10⁶ rows and 2000 centres costs as
        much as the rest of a semi-supervised fit. The paper's tables (n ≤ 10⁵) are on all
        rows.
    n_trials : int, optional
        k-means++ candidates drawn per centre (``"k-means++"``, ``"subsample++"``);
        each step keeps the one that lowers the potential most. Default 2 + ⌊ln k⌋,
        scikit-learn's ``n_local_trials``; 1 is plain (non-greedy) k-means++.
    prune : bool, default=True
        Let Lloyd skip the rows whose centre the distance bounds prove unchanged
        (Hamerly-style; used when k ≥ 32). The centres are the same without it, up to
        rounding-level ties; only the time differs.
    compute_dtype : {numpy.float32, numpy.float64}, default=numpy.float32
        dtype of the distance products of seeding and Lloyd. float32: float64 data is
        multiplied in float32 block by block (where float32 resolves its distances,
        else in float64); sums, centres and the inertia stay float64. float64: float64
        products for float64 data (about 1.5× the time, for the same inertia on the
        data of the study); float32 data is multiplied in float32 either way.
    sketch : int or None, default=64
        ``"subsample++"`` seeds on the sample's projection onto this many leading
        principal directions when d > 2 ``sketch`` (dense data). None: on the rows
        themselves (the same quality, several times the seeding time when d is large).

    Returns
    -------
    centers : ndarray of shape (n_landmarks, d)
        Dense, in X's float dtype (float32 stays float32).
    info : dict
        ``n_iter`` (Lloyd iterations run), ``inertia`` (Σᵢ ‖xᵢ − c(xᵢ)‖² over all rows,
        nearest centre c, after the final centres), ``init`` (the method used),
        ``init_sample`` (rows seeded on; None for ``"random"`` and given centres),
        ``init_seconds``, ``lloyd_seconds``,
        ``skipped`` (mean fraction of rows whose assignment the bounds settled without
        distances, per iteration), ``lloyd_rows`` (the sampled rows, None for all rows;
        ``inertia`` is then over the sample), and ``labels`` when ``return_labels``.
    """
    prune, cdt = _check_knobs(n_trials, prune, compute_dtype, sketch)
    n = X.shape[0]
    rows = (
        lloyd_sample_rows(n, int(n_landmarks), rng, lloyd_sample) if 1 <= n_landmarks <= n else None
    )
    if rows is not None:
        X = take_rows(X, rows)
    method = _init_method(init)
    X = _as_float(X)
    k = _check_sizes(n, n_landmarks, max_iter)
    given = _given_centers(init, k, X) if method == "given" else None

    t0 = time.perf_counter()
    passes = _HostPasses(X, k, compute_dtype=cdt, prune=prune)
    if given is not None:
        centers, m = given, None
    else:
        with threadpool_limits(1, user_api="blas"):  # thin products: one thread is faster
            centers, m = _seed(X, k, rng, method, init_sample, n_trials, passes.cdt, sketch)
    t1 = time.perf_counter()
    centers, n_iter = _lloyd(passes, centers, max_iter, tol)
    if passes.skipped:
        logger.debug("kmeans: fraction of rows skipped per iteration %s", passes.skipped)
    centers = centers.astype(X.dtype)
    inertia = passes.inertia(centers, passes.lab)
    t2 = time.perf_counter()
    logger.debug(
        "kmeans: k=%d init=%s (%.2fs) lloyd %d iterations (%.2fs), inertia %.6g",
        k,
        method,
        t1 - t0,
        n_iter,
        t2 - t1,
        inertia,
    )
    skipped = float(np.mean(passes.skipped)) if passes.skipped else 0.0
    labels = passes.lab if return_labels else None
    info = _fit_info(method, m, n_iter, inertia, (t0, t1, t2), labels, skipped, lloyd_rows=rows)
    return centers, info


def _fit_info(method, m, n_iter, inertia, times, labels, skipped, **extra) -> dict:
    """The ``info`` of a k-means fit, host or device: its seeding (method, sample
    size), Lloyd's iterations and inertia, the seconds of each stage (``times``: the
    clock at the start, after seeding, at the end), the mean share of rows the pruning
    skipped, any ``extra`` entries, and the labels when asked for (not None)."""
    t0, t1, t2 = times
    info = {
        "n_iter": n_iter,
        "inertia": inertia,
        "init": method,
        "init_sample": m,
        "init_seconds": t1 - t0,
        "lloyd_seconds": t2 - t1,
        "skipped": skipped,
        **extra,
    }
    if labels is not None:
        info["labels"] = labels
    return info


def _init_method(init, *, arrays=True) -> str:
    """The seeding method ``init`` names: ``"given"`` for an array of initial centres
    (where ``arrays``), ``"auto"`` resolved; else a ValueError listing the names."""
    if arrays and _are_centers(init):
        return "given"
    if isinstance(init, str) and init in INIT_METHODS:
        return _AUTO_INIT if init == "auto" else init
    valid = ", ".join(repr(m) for m in INIT_METHODS)
    extra = ", or pass an array of initial centres (n_landmarks × n_features)" if arrays else ""
    raise ValueError(f"unknown init {init!r}; valid names are {valid}{extra}")


def _check_sizes(n, n_landmarks, max_iter=0) -> int:
    """k = ``n_landmarks`` as an int in [1, n], and ``max_iter`` >= 0, else a ValueError."""
    k = int(n_landmarks)
    if not 1 <= k <= n:
        raise ValueError(f"n_landmarks must be in [1, {n}]; got {n_landmarks}")
    if max_iter < 0:
        raise ValueError(f"max_iter must be >= 0; got {max_iter}")
    return k


def _check_knobs(n_trials, prune, compute_dtype, sketch):
    """The options of :func:`kmeans_landmarks` beyond the paper's, checked: (prune, the
    compute dtype)."""
    for name, value in (("n_trials", n_trials), ("sketch", sketch)):
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1
        ):
            raise ValueError(f"{name} must be None or a positive int; got {value!r}")
    if not isinstance(prune, (bool, np.bool_)):
        raise ValueError(f"prune must be True or False; got {prune!r}")
    try:
        cdt = np.dtype(compute_dtype)
    except TypeError:
        cdt = None
    if cdt not in (np.float32, np.float64):
        raise ValueError(
            f"compute_dtype must be numpy.float32 or numpy.float64; got {compute_dtype!r}"
        )
    return bool(prune), cdt


def _are_centers(init) -> bool:
    """Whether ``init`` is a 2-D array (initial centres) rather than a method name."""
    if isinstance(init, str):
        return False
    if sp.issparse(init):
        return True
    try:
        return np.ndim(init) == 2
    except ValueError:  # ragged nested sequences
        return False


def _given_centers(init, k, X):
    """The centres passed as ``init`` (float64, a copy), checked against X and k."""
    C = init.toarray() if sp.issparse(init) else init
    try:
        C = np.array(C, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"init as an array must hold numbers (the initial centres); got {C!r}"
        ) from None
    if C.shape != (k, X.shape[1]):
        raise ValueError(
            f"init must have shape (n_landmarks, n_features) = ({k}, {X.shape[1]}); got {C.shape}"
        )
    if not np.all(np.isfinite(C)):
        raise ValueError("init contains NaN or inf")
    return C


def _as_float(X):
    if sp.issparse(X):
        X = X.tocsr()
        if X.dtype not in (np.float32, np.float64):
            X = X.astype(np.float64)
        return X
    X = np.asarray(X)
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    return X


def _product(A, W):
    """A @ W; sparse rows A split among threads (SciPy's product runs on one core)."""
    return sparse_dense_product(A, W) if sp.issparse(A) else A @ W


def _toarray(A):
    return A.toarray() if sp.issparse(A) else A


def _sparse_rows_as_columns(S, idx):
    """The rows ``idx`` of the CSR matrix S as the columns of a dense, C-contiguous
    (d × len(idx)) array: the operand of a sparse product, written from the rows'
    nonzeros alone (densifying the rows and transposing them copies d · len(idx)
    entries twice, which dominates the seeding's products on wide sparse rows)."""
    R = S[idx]
    R.sum_duplicates()  # as toarray would: one value per entry
    out = np.zeros((S.shape[1], R.shape[0]), dtype=S.dtype)
    out[R.indices, np.repeat(np.arange(R.shape[0]), np.diff(R.indptr))] = R.data
    return out


def _float32_resolves(amax, mu, xsq) -> bool:
    """Whether float32 products resolve the k-means distances of float64 data.

    The products x·(c − μ) are taken with uncentred rows: float32 needs the data's
    magnitude within its comfortable range (squares of 2^±40 stay normal) and the
    common offset ‖μ‖ not far above the spread (else x·(c − μ) cancels against
    μ·(c − μ)). Otherwise the products stay in float64.
    """
    if not 2.0**-40 <= amax <= 2.0**40:
        return amax == 0.0
    spread = float(np.mean(xsq)) if xsq.size else 0.0
    return float(mu @ mu) <= 16.0 * spread


# ---------------------------------------------------------------------------------------
# Seeding


def _seed(X, k, rng, method, init_sample, n_trials, cdt, sketch):
    """Initial centres (float64, k × d) and the number of rows seeded on (or None)."""
    n = X.shape[0]
    if method == "random":
        idx = np.sort(rng.choice(n, size=k, replace=False))
        return np.asarray(_toarray(X[idx]), dtype=np.float64), None
    if method == "k-means++":
        m, sample, sketch = n, X, None
    else:
        m = default_init_sample(n, k) if init_sample is None else int(init_sample)
        m = min(n, max(m, k))
        sample = X if m == n else X[np.sort(rng.choice(n, size=m, replace=False))]
    if k >= m:  # every row is a centre
        chosen = rng.permutation(m)
    else:
        chosen = _greedy_kmeanspp(_seeding_rows(sample, cdt, sketch, rng), k, rng, n_trials)
    return np.asarray(_toarray(sample[chosen]), dtype=np.float64), m


def _seeding_rows(S, cdt, sketch, rng):
    """The rows k-means++ measures distances between: centred, in ``cdt``, sketched.

    With ``sketch`` = p and d > 2p (dense S), the centred rows are projected on their p
    leading principal directions (randomized range finder, one power iteration).
    """
    if sp.issparse(S):
        return S.astype(cdt)
    Z = S.astype(cdt)  # a copy: S may be X itself
    Z -= S.mean(axis=0, dtype=np.float64).astype(cdt)
    m, d = Z.shape
    if not sketch or 2 * sketch >= d or m <= sketch:
        return Z
    q = min(d, sketch + 10)
    Q, _ = np.linalg.qr(Z @ rng.standard_normal((d, q)).astype(cdt))
    Q, _ = np.linalg.qr(Z @ (Z.T @ Q))
    _, _, Vt = np.linalg.svd(Q.T @ Z, full_matrices=False)
    return Z @ np.ascontiguousarray(Vt[:sketch].T)


def _greedy_kmeanspp(S, k, rng, n_trials=None):
    """Greedy k-means++ (Arthur & Vassilvitskii 2007): indices of k rows of S.

    Each new centre is the best, by potential Σᵢ minⱼ ‖sᵢ − cⱼ‖², of ``n_trials``
    (default 2 + ⌊ln k⌋) candidates drawn with probability ∝ the squared distance to
    the nearest centre so far. One step is one product of the rows with the
    candidates. S: dense (m × p) or CSR.
    """
    m = S.shape[0]
    t = 2 + int(math.log(k)) if n_trials is None else max(1, int(n_trials))
    if sp.issparse(S):
        sq = np.asarray(S.multiply(S).sum(axis=1)).ravel()
    else:
        sq = np.einsum("ij,ij->i", S, S)
    sq = sq.astype(S.dtype)

    def sqdist(idx):  # (len(idx), m)
        # S is finite (validated input, centred): NumPy's matmul reads the FPU's status
        # flags after the BLAS call, and BLAS threads running beside it (dask's threaded
        # scheduler) can leave an "invalid" flag set that this product did not raise
        with np.errstate(invalid="ignore"):
            if sp.issparse(S):
                D = sparse_dense_product(S, _sparse_rows_as_columns(S, idx)).T
            else:
                D = S[idx] @ S.T
        D *= -2.0
        D += sq[idx, None]
        D += sq
        return np.maximum(D, 0.0, out=D)

    chosen = np.empty(k, dtype=np.intp)
    chosen[0] = rng.integers(m)
    closest = sqdist(chosen[:1])[0]
    for c in range(1, k):
        cum = np.cumsum(closest, dtype=np.float64)
        if cum[-1] > 0.0:
            cand = np.searchsorted(cum, rng.random(t) * cum[-1], side="right")
            np.minimum(cand, m - 1, out=cand)
        else:  # every row coincides with a centre: any row will do
            cand = rng.integers(m, size=t)
        D = sqdist(cand)
        np.minimum(D, closest, out=D)
        best = int(np.argmin(D.sum(axis=1, dtype=np.float64)))
        chosen[c] = cand[best]
        closest = D[best].copy()
    return chosen


# ---------------------------------------------------------------------------------------
# Lloyd's iteration, one for every place the rows live


def _lloyd(passes, C, max_iter, tol=0.0):
    """Lloyd's iterations from the centres C (float64, k × d): (centres, iterations run).

    ``passes`` holds the rows and makes the passes over them: :class:`_HostPasses` in
    memory (with distance bounds that skip settled rows), :class:`_LazyPasses` over the
    chunks of a dask array (no per-row state), :class:`_DevicePasses` on an array API
    device. Everything else is this loop: assign every row to its nearest centre; move
    each centre to the mean of its rows; stop after ``max_iter`` updates, when no
    assignment changed, or when the squared centre shift summed over centres is at most
    ``tol`` times the mean feature variance (scikit-learn's convention).

    Empty clusters (the one rule of every pass): each empty cluster takes one of the rows
    farthest from their centres by the distances of the last assignment, the farthest
    first, in the order of the empty clusters (:func:`_farthest`); the row leaves its
    cluster, as in scikit-learn.
    """
    passes.assign(C)
    tol_abs = tol * passes.sq_total() / (passes.n * passes.d) if tol > 0 else 0.0
    n_iter = 0
    for _ in range(max_iter):
        sums, counts = passes.sums_counts()
        moved = _relocate_empty(passes, sums, counts)
        new = C.copy()
        nz = counts > 0
        new[nz] = sums[nz] / counts[nz, None]
        n_iter += 1
        drift = np.sqrt(np.einsum("ij,ij->i", new - C, new - C))
        shift = float(drift @ drift)
        C = new
        changed = passes.reassign(C, drift, moved)  # None: the pass keeps no labels
        if changed == 0 or shift <= tol_abs:
            break
    return C, n_iter


def _relocate_empty(passes, sums, counts):
    """Give each empty cluster one of the farthest rows (see :func:`_lloyd`), in the
    per-cluster sums and counts; the indices of the rows moved (None where the pass
    keeps no per-row state)."""
    empty = np.flatnonzero(counts == 0)
    if not empty.size:
        return np.empty(0, dtype=np.intp)
    moved, rows, labels = passes.farthest(empty.size)
    for j, x, old in zip(empty, rows, labels, strict=False):
        sums[old] -= x
        counts[old] -= 1.0
        sums[j] = x
        counts[j] = 1.0
    if moved is not None:
        passes.relocated(moved, empty[: moved.size])
    logger.debug("kmeans: relocated %d empty clusters", min(empty.size, len(rows)))
    return moved


def _farthest(dist, e):
    """Indices of the e largest entries of ``dist``, the largest first."""
    if e >= dist.size:
        return np.argsort(-dist, kind="stable")
    top = np.argpartition(-dist, e - 1)[:e]
    return top[np.argsort(-dist[top], kind="stable")]


def _operands(C, mu):
    """(W, b) in float64 with ‖x − c_j‖² = ‖x − μ‖² + (x W + b)_j: the products are
    taken against the centres less μ, the mean of the rows, so a large common offset
    costs no precision."""
    Ct = C - mu
    b = np.einsum("ij,ij->i", Ct, Ct) + 2.0 * (Ct @ mu)
    W = np.empty(Ct.shape[::-1])  # −2 Ctᵀ, written once in the product's layout
    np.multiply(Ct.T, -2.0, out=W)
    return W, b


class _HostPasses:
    """Lloyd's passes over X in memory: blocked, with distance bounds that skip settled
    rows.

    Distances use ‖x − c‖² = ‖x − μ‖² + (‖c − μ‖² + 2μᵀ(c − μ)) − 2xᵀ(c − μ), with μ the
    mean of X: the product is taken against centred centres, so a large common offset
    in the data costs no precision, and X itself is never copied or centred.

    Pruning (exact, in the manner of Hamerly 2010): each row keeps an upper bound u on
    the distance to its centre and a lower bound l on the distance to any other centre.
    After an update moving centre j by δⱼ, u grows by δ of its own centre and l shrinks
    by the largest δ among all but the ``_PRUNE_MAX_MOVERS`` centres that moved most;
    distances to those are computed exactly (a thin product). Rows with u ≤ l keep
    their centre; the others get their exact u, and those still in doubt a full
    distance row. Bounds come from the same float products as a plain assignment, so
    skipping changes only rounding-level ties. The farthest rows of the empty-cluster
    rule are those with the largest u.
    """

    def __init__(self, X, k, *, compute_dtype=np.float32, prune=True):
        self.X = X
        self.sparse = sp.issparse(X)
        self.dtype = X.dtype
        n, d = X.shape
        self.n, self.d, self.k = n, d, k
        self.block = int(min(8192, max(128, _BLOCK_ENTRIES // max(k, 1))))
        amax = self._row_stats()
        cdt = np.dtype(compute_dtype)
        if cdt.itemsize > X.dtype.itemsize:
            cdt = X.dtype
        if cdt != X.dtype and not _float32_resolves(amax, self.mu, self.xsq):
            cdt = X.dtype  # float64 data float32 cannot hold: keep float64 products
        self.cdt = cdt
        # Products are taken with Xc (X itself when the dtypes agree).
        self.Xc = X if X.dtype == cdt else None
        if self.Xc is None and (self.sparse or n * d <= _CONVERT_ONCE_ENTRIES):
            self.Xc = X.astype(cdt)
        self.prune = prune and k >= _PRUNE_MIN_CENTERS
        self.n_movers = min(_PRUNE_MAX_MOVERS, k // 8)
        self.skipped = []

    def _row_stats(self):
        """The mean μ, ‖x − μ‖² per row (``xsq``), and max |x| (returned)."""
        X = self.X
        amax = 0.0
        if self.sparse:
            self.mu = np.asarray(X.mean(axis=0), dtype=np.float64).ravel()
            sq = np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
            self.xsq = np.maximum(sq - 2.0 * (X @ self.mu) + self.mu @ self.mu, 0.0)
            return float(abs(X).max()) if X.nnz else 0.0
        self.mu = X.mean(axis=0, dtype=np.float64)
        mu = self.mu.astype(X.dtype)
        self.xsq = np.empty(self.n)
        for s in range(0, self.n, self.block):
            R = X[s : s + self.block] - mu
            self.xsq[s : s + self.block] = np.einsum("ij,ij->i", R, R)
            amax = max(amax, float(np.max(np.abs(X[s : s + self.block]), initial=0.0)))
        return amax

    # -- the pass interface of _lloyd ------------------------------------------------------

    def sq_total(self):
        return float(self.xsq.sum())

    def assign(self, C):
        n = self.n
        self.lab = np.empty(n, dtype=np.intp)
        self.u = np.empty(n)
        self.l = np.empty(n)
        W, b = self._operands(C)
        self._assign(W, b, slice(0, n), self.lab, self.u, self.l if self.prune else None)

    def sums_counts(self):
        k, n = self.k, self.n
        onehot = sp.csr_matrix(
            (np.ones(n, dtype=self.dtype), self.lab, np.arange(n + 1)), shape=(n, k)
        ).T.tocsr()
        sums = np.asarray(_toarray(onehot @ self.X), dtype=np.float64)
        return sums, np.bincount(self.lab, minlength=k).astype(np.float64)

    def farthest(self, e):
        moved = _farthest(self.u, e)
        rows = np.asarray(_toarray(self.X[moved]), dtype=np.float64)
        return moved, rows, self.lab[moved]

    def relocated(self, moved, clusters):
        self.lab[moved] = clusters
        self.u[moved] = 0.0

    def reassign(self, C, drift, moved):
        lab, u, l = self.lab, self.u, self.l
        W, b = self._operands(C)
        old = lab.copy()
        l[moved] = 0.0  # relocated rows: recompute
        if not self.prune:
            self._assign(W, b, slice(0, self.n), lab, u)
        else:
            u += drift[lab]
            order = np.argpartition(-drift, self.n_movers)
            movers, rest = order[: self.n_movers], float(drift[order[self.n_movers]])
            l -= rest
            expected = float(np.mean(u <= l))
            if expected >= _PRUNE_MIN_SKIP:
                self.skipped.append(self._assign_pruned(C, W, b, movers, lab, u, l))
            else:
                self._assign(W, b, slice(0, self.n), lab, u, l)
                self.skipped.append(0.0)
        return int(np.count_nonzero(lab != old)) + moved.size

    # -- products ------------------------------------------------------------------------

    def _rows(self, sl):
        """Rows ``sl`` (slice or index array) of X in the compute dtype."""
        if self.Xc is not None:
            return self.Xc[sl]
        return self.X[sl].astype(self.cdt)

    def _operands(self, C):
        """(W, b) with ‖x − c_j‖² = xsq + (x W + b)_j, in the compute dtype."""
        W, b = _operands(C, self.mu)
        return W.astype(self.cdt), b.astype(self.cdt)

    def _pieces(self, rows, block):
        if isinstance(rows, slice):
            return (slice(s, min(s + block, rows.stop)) for s in range(0, rows.stop, block))
        return (rows[s : s + block] for s in range(0, rows.size, block))

    def _assign(self, W, b, rows, lab, u, l=None):
        """Nearest centre of ``rows`` (a slice from 0, or indices), in place.

        ``u`` gets the distance to it and, when given, ``l`` the distance to the second
        nearest.
        """
        for dst in self._pieces(rows, self.block):
            G = _product(self._rows(dst), W)
            G += b
            a = np.argmin(G, axis=1)
            r = np.arange(G.shape[0])
            xsq = self.xsq[dst]
            lab[dst] = a
            u[dst] = np.sqrt(np.maximum(xsq + G[r, a], 0.0))
            if l is not None:
                G[r, a] = np.inf
                m2 = G.min(axis=1) if G.shape[1] > 1 else np.inf
                l[dst] = np.sqrt(np.maximum(xsq + m2, 0.0))

    def _dist_to_own(self, C, lab, rows):
        """Exact ‖x − c(x)‖ for ``rows`` (index array), from differences."""
        C = C.astype(self.dtype)
        out = np.empty(rows.size)
        for s in range(0, rows.size, self.block):
            r = rows[s : s + self.block]
            R = _toarray(self.X[r]) - C[lab[r]]
            out[s : s + r.size] = np.einsum("ij,ij->i", R, R)
        return np.sqrt(out)

    def _assign_pruned(self, C, W, b, movers, lab, u, l):
        """Assignment step using the bounds (see the class docstring); fraction skipped."""
        n = self.n
        if movers.size:
            Wm, bm = np.ascontiguousarray(W[:, movers]), b[movers]
            for sl in self._pieces(slice(0, n), _THIN_BLOCK_ROWS):
                G = _product(self._rows(sl), Wm)
                G += bm
                G[lab[sl, None] == movers[None, :]] = np.inf
                dm = np.sqrt(np.maximum(self.xsq[sl] + G.min(axis=1), 0.0))
                np.minimum(l[sl], dm, out=l[sl])
        doubt = np.flatnonzero(u > l)
        u[doubt] = self._dist_to_own(C, lab, doubt)
        doubt = doubt[u[doubt] > l[doubt]]
        if doubt.size:
            self._assign(W, b, doubt, lab, u, l)
        return 1.0 - doubt.size / n

    def inertia(self, C, lab):
        """Σᵢ ‖xᵢ − C[labᵢ]‖², from differences, accumulated in float64."""
        total = 0.0
        for s in range(0, self.n, self.block):
            R = _toarray(self.X[s : s + self.block]) - C[lab[s : s + self.block]]
            total += float(np.einsum("ij,ij->i", R, R).sum(dtype=np.float64))
        return total


# --------------------------------------------------------------------------- dask arrays


def _lloyd_block(B, mu, W, b, C, want_far):
    """One chunk of a Lloyd pass: sums, counts, inertia, and (optionally) far rows."""
    B = np.asarray(B)
    if B.dtype not in (np.float32, np.float64):
        B = B.astype(np.float64)
    n_b, k = B.shape[0], W.shape[1]
    lab = np.empty(n_b, dtype=np.intp)
    step = int(min(8192, max(128, _BLOCK_ENTRIES // max(k, 1))))
    for s in range(0, n_b, step):  # the (rows × k) products stay small
        G = B[s : s + step].astype(W.dtype, copy=False) @ W
        G += b
        lab[s : s + step] = np.argmin(G, axis=1)
    onehot = sp.csr_matrix(
        (np.ones(n_b, dtype=B.dtype), lab, np.arange(n_b + 1)), shape=(n_b, k)
    ).T.tocsr()
    sums = np.asarray(onehot @ B, dtype=np.float64)
    counts = np.bincount(lab, minlength=k).astype(np.float64)
    R = B - C.astype(B.dtype)[lab]
    dist = np.einsum("ij,ij->i", R, R, dtype=np.float64)
    far = None
    if want_far:
        # candidates for relocating empty clusters: this chunk's farthest rows
        t = min(want_far, B.shape[0])
        top = np.argpartition(-dist, t - 1)[:t]
        far = (dist[top], np.asarray(B[top], dtype=np.float64), lab[top])
    return sums, counts, float(dist.sum()), far


def _merge_lloyd(a, b):
    far = None
    if a[3] is not None:
        d = np.concatenate([a[3][0], b[3][0]])
        keep = np.argsort(-d, kind="stable")[: max(a[3][0].size, b[3][0].size)]
        far = tuple(np.concatenate([x, y])[keep] for x, y in zip(a[3], b[3], strict=True))
    return a[0] + b[0], a[1] + b[1], a[2] + b[2], far


class _LazyPasses:
    """Lloyd's passes over the chunks of a dask array: per chunk, one product with the
    centres (float32, as in memory) gives the assignment, and the per-cluster sums
    (float64) and counts are reduced over the chunks. No per-row state is kept between
    passes (so no distance bounds, and no count of changed assignments: the iterations
    stop when the centres stop moving); the farthest rows of the empty-cluster rule are
    found by one extra pass, only when a cluster empties. Memory per task: one chunk
    plus k × d."""

    def __init__(self, X, mu):
        self.X, self.mu = X, mu
        self.n, self.d = X.shape

    def _pass(self, want_far=0):
        from .._core.chunked import reduce_rows

        W, b = _operands(self.C, self.mu)
        W, b = W.astype(np.float32), b.astype(np.float32)
        args = (self.mu, W, b, self.C, want_far)
        return reduce_rows(_lloyd_block, self.X, args=args, combine=_merge_lloyd)

    def assign(self, C):
        self.C = C
        self.sums, self.counts, self.inertia, _ = self._pass()

    def sums_counts(self):
        return self.sums, self.counts

    def farthest(self, e):
        _, _, _, (dist, rows, labels) = self._pass(want_far=e)
        order = _farthest(dist, e)
        return None, rows[order], labels[order]

    def reassign(self, C, drift, moved):
        self.assign(C)
        return None


def lazy_kmeans_landmarks(
    X, n_landmarks, *, rng, max_iter=10, init="auto", init_sample=None, lloyd_sample="auto"
):
    """k-means centres of a dask array: seeding on a sample, Lloyd by passes over chunks.

    The chunked twin of :func:`kmeans_landmarks`. The seeding is the same
    (``"subsample++"``: greedy k-means++ on ``min(n, max(2000, 10k))`` random rows, which
    are computed and held in memory; the same random draws as in memory). Each Lloyd
    iteration is one pass over the chunks (:class:`_LazyPasses`), so the data are read
    ``max_iter + 2`` times (means, iterations, final inertia), plus one pass whenever a
    cluster empties; the centres are those of the in-memory version up to round-off.
    Above :func:`default_lloyd_sample` rows (``lloyd_sample``), the sample is gathered
    to memory and clustered there, as :func:`kmeans_landmarks` does with the same draw;
    so is all of X when the seeding would run on every row.
    """
    from .._core.chunked import LazyRows, norm_stats, reduce_rows

    n = X.shape[0]
    k = _check_sizes(n, n_landmarks)
    rows = lloyd_sample_rows(n, k, rng, lloyd_sample)
    if rows is not None:
        return _lazy_in_memory(X, rows, k, rng, max_iter, init, init_sample)
    method = _AUTO_INIT if init == "auto" else init
    if method == "k-means++" or default_init_sample(n, k) >= n:
        return _lazy_in_memory(X, None, k, rng, max_iter, init, init_sample)
    mu = reduce_rows(norm_stats, X)[1] / n
    C, m = _seed(LazyRows(X), k, rng, method, init_sample, None, np.dtype(np.float32), _SKETCH_DIM)
    passes = _LazyPasses(X, mu)
    C, n_iter = _lloyd(passes, C, max_iter)
    info = {
        "n_iter": n_iter,
        "inertia": passes.inertia,
        "init": method,
        "init_sample": m,
        "passes": n_iter + 2,
        "lloyd_rows": None,
    }
    return C.astype(X.dtype if X.dtype in (np.float32, np.float64) else np.float64), info


def _lazy_in_memory(X, rows, k, rng, max_iter, init, init_sample):
    """:func:`kmeans_landmarks` on the drawn ``rows`` of a dask X gathered to memory (the
    same draw as in memory), or on all of X (None) when the seeding runs on every row:
    only for data small enough to hold (or asked for)."""
    from .._core.chunked import gather_rows

    data = np.asarray(X.compute()) if rows is None else np.asarray(gather_rows(X, rows))
    kwargs = {"max_iter": max_iter, "init": init, "init_sample": init_sample}
    centers, info = kmeans_landmarks(data, k, rng=rng, lloyd_sample=None, **kwargs)
    if rows is not None:
        info["lloyd_rows"] = rows
    return centers, info


# --------------------------------------------------------------- array API (device) arrays


class _HostRows:
    """Rows of an array API X copied to the host on access (the seeding's sample)."""

    def __init__(self, X, xp):
        self.X, self.xp = X, xp
        self.shape = tuple(X.shape)
        self.ndim = 2
        self.dtype = np.dtype(np.float32 if X.dtype == xp.float32 else np.float64)

    def __getitem__(self, idx):
        from .._core.array_api import device_of, to_numpy

        idx = np.asarray(idx, dtype=np.int64).reshape(-1)
        rows = self.xp.take(self.X, self.xp.asarray(idx, device=device_of(self.X)), axis=0)
        return to_numpy(rows)


def _scatter_rows(xp, sums, lab, B, k):
    """sums (k × d, wide) += Σ of the rows of B per label (namespace's scatter-add, else a
    one-hot product)."""
    from .._core.array_api import compat, device_of

    if compat.is_torch_namespace(xp):
        return sums.index_add_(0, lab, xp.astype(B, sums.dtype))
    if compat.is_cupy_namespace(xp):
        import cupyx

        cupyx.scatter_add(sums, lab, xp.astype(B, sums.dtype))
        return sums
    onehot = xp.astype(lab[:, None] == xp.arange(k, device=device_of(B))[None, :], B.dtype)
    return sums + xp.astype(onehot.T @ B, sums.dtype)


class _DevicePasses:
    """Lloyd's passes over an array API X on its device, by row chunks under the memory
    budget: one GEMM of the chunk with the centred centres (float32 products for
    float64 data where float32 resolves the distances, as on the host), the argmin, and
    the per-cluster sums of the same pass (scatter-add: ``index_add_`` on PyTorch,
    ``cupyx.scatter_add`` on CuPy, a one-hot product elsewhere) accumulated in float64.
    The labels are kept on the host too; the host's distance bounds are not used (on a
    GPU a full pass is a GEMM). The farthest rows of the empty-cluster rule are those
    with the largest distance of the last pass."""

    def __init__(self, X, k):
        from .._core.array_api import array_namespace, device_of, has_float64
        from .._core.config import get_config

        xp = array_namespace(X)
        self.X, self.xp, self.dev, self.k = X, xp, device_of(X), k
        self.n, self.d = n, d = X.shape
        self.wide = xp.float64 if has_float64(xp, self.dev) else xp.float32
        itemsize = 4 if X.dtype == xp.float32 else 8
        budget = get_config()["memory_budget"]
        step = int(max(128, min(n, budget // max(1, max(k, d) * itemsize))))
        self.chunks = [(s, min(s + step, n)) for s in range(0, n, step)]
        self.rows = _HostRows(X, xp)
        self._row_stats()

    def _row_stats(self):
        """The mean, ‖x − μ‖² per row and max|x| (the float32 test of the host path)."""
        from .._core.array_api import to_numpy

        X, xp, wide = self.X, self.xp, self.wide
        total = xp.zeros(self.d, dtype=wide, device=self.dev)
        for s, e in self.chunks:
            total = total + xp.sum(xp.astype(X[s:e, ...], wide), axis=0)
        mu_d = total / self.n
        parts, peaks = [], []
        for s, e in self.chunks:
            R = xp.astype(X[s:e, ...], wide) - mu_d
            parts.append(xp.sum(R * R, axis=1))
            peaks.append(xp.max(xp.abs(X[s:e, ...])))
        self.xsq = xp.concat(parts) if len(parts) > 1 else parts[0]
        amax = float(xp.max(xp.stack(peaks)))
        self.mu = to_numpy(mu_d).astype(np.float64)
        host_float = np.dtype(np.float32 if X.dtype == xp.float32 else np.float64)
        self.cdt_np = np.dtype(np.float32)
        if host_float == np.float64 and not _float32_resolves(amax, self.mu, to_numpy(self.xsq)):
            self.cdt_np = np.dtype(np.float64)
        self.cdt = xp.float32 if self.cdt_np == np.float32 else X.dtype

    def seed(self, rng, method, init_sample):
        """The seeding of the NumPy path from the same draws, on the host: the sample it
        seeds on is copied there (all of X when it seeds on every row)."""
        from .._core.array_api import to_numpy

        k, n = self.k, self.n
        with threadpool_limits(1, user_api="blas"):
            m = default_init_sample(n, k) if init_sample is None else int(init_sample)
            if method == "k-means++" or (method != "random" and min(n, max(m, k)) >= n):
                source = to_numpy(self.X)  # seeding on every row: all of X on the host
            else:
                source = self.rows
            return _seed(source, k, rng, method, init_sample, None, self.cdt_np, _SKETCH_DIM)

    # -- the pass interface of _lloyd ------------------------------------------------------

    def sq_total(self):
        return float(self.xp.sum(self.xsq))

    def assign(self, C):
        from .._core.array_api import on_device, to_numpy

        xp, dev, cdt, wide = self.xp, self.dev, self.cdt, self.wide
        W, b = _operands(C, self.mu)
        W, bd = on_device(W, xp, dev, cdt), on_device(b, xp, dev, cdt)
        labs, dists = [], []
        sums = xp.zeros((self.k, self.d), dtype=wide, device=dev)
        for s, e in self.chunks:
            B = self.X[s:e, ...]
            G = (B if B.dtype == cdt else xp.astype(B, cdt)) @ W
            G = G + bd[None, :]
            lab = xp.argmin(G, axis=1)
            dist = xp.sqrt(xp.clip(xp.astype(xp.min(G, axis=1), wide) + self.xsq[s:e], min=0.0))
            labs.append(lab)
            dists.append(dist)
            sums = _scatter_rows(xp, sums, lab, B, self.k)
        self.lab = xp.concat(labs) if len(labs) > 1 else labs[0]
        self.u = xp.concat(dists) if len(dists) > 1 else dists[0]
        self.sums = sums
        self.lab_h = to_numpy(self.lab).astype(np.intp)

    def sums_counts(self):
        from .._core.array_api import to_numpy

        sums = to_numpy(self.sums).astype(np.float64)
        return sums, np.bincount(self.lab_h, minlength=self.k).astype(np.float64)

    def farthest(self, e):
        from .._core.array_api import to_numpy

        moved = _farthest(to_numpy(self.u), e)
        return moved, self.rows[moved].astype(np.float64), self.lab_h[moved]

    def relocated(self, moved, clusters):
        self.lab_h[moved] = clusters

    def reassign(self, C, drift, moved):
        old = self.lab_h
        self.assign(C)
        return int(np.count_nonzero(self.lab_h != old)) + moved.size

    def inertia(self, centers):
        """Σᵢ ‖xᵢ − c(xᵢ)‖² over the last assignment, on the device, in the wide dtype."""
        xp = self.xp
        Cw = xp.astype(centers, self.wide)
        total = xp.zeros((), dtype=self.wide, device=self.dev)
        for s, e in self.chunks:
            R = xp.astype(self.X[s:e, ...], self.wide) - xp.take(Cw, self.lab[s:e], axis=0)
            total = total + xp.sum(R * R)
        return float(total)


def device_kmeans_landmarks(
    X,
    n_landmarks,
    *,
    rng,
    max_iter=10,
    init="auto",
    init_sample=None,
    tol=0.0,
    return_labels=False,
):
    """:func:`kmeans_landmarks` on an array API X (a torch tensor, …), Lloyd on its device.

    The same seeding as the NumPy path, from the same random draws: the sample it
    seeds on (``min(n, max(2000, 10 k))`` rows) is copied to the host and seeded there
    (greedy k-means++ on its principal-component sketch), so both paths start from the
    same centres. Lloyd then runs on X's device, one pass over row chunks per
    iteration (:class:`_DevicePasses`), with the stopping and empty-cluster rules of
    the host (:func:`_lloyd`). Returns ``(centers, info)``: the centres in X's
    namespace, dtype and device; ``info`` as :func:`kmeans_landmarks` (``labels`` as
    NumPy).
    """
    from .._core.array_api import on_device

    method = _init_method(init, arrays=False)
    k = _check_sizes(X.shape[0], n_landmarks, max_iter)
    t0 = time.perf_counter()
    passes = _DevicePasses(X, k)
    C, m = passes.seed(rng, method, init_sample)
    t1 = time.perf_counter()
    C, n_iter = _lloyd(passes, C, max_iter, tol)
    centers = on_device(C, passes.xp, passes.dev, X.dtype)
    inertia = passes.inertia(centers)
    t2 = time.perf_counter()
    labels = passes.lab_h if return_labels else None
    return centers, _fit_info(method, m, n_iter, inertia, (t0, t1, t2), labels, 0.0)

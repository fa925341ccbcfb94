"""More data than memory: Dask arrays and memory-mapped arrays, chunk by chunk.

Everything that lets lorak run on data that do not fit in memory lives here, so that the
estimators only opt in.

Prediction and transform
    Every fitted lorak transformer and estimator accepts a ``dask.array.Array`` in
    ``transform``, ``predict``, ``decision_function`` and ``predict_proba`` and returns a
    lazy dask array with the same row chunks (one task per block of rows; the fitted
    estimator is shipped once per worker as one graph key). A ``numpy.memmap`` is read
    in row chunks of about ``memory_budget`` bytes (:func:`lorak.get_config`): only one
    chunk of the input is in memory at a time; the result is an in-memory array (or the
    ``out=`` array of :func:`map_rows`, which may itself be a memmap). This comes from
    :class:`ChunkedRowsMixin`, a base class of the estimators.

Fitting, where a method touches all rows
    * landmarks ``"uniform"`` (the same rows as in memory for the same seed) and
      ``"kmeans"`` (the same seeding on a random sample, then Lloyd iterations as
      passes over the row chunks: per chunk one GEMM with the centres, per-cluster
      sums and counts reduced over the chunks — same seed, same centres as in memory);
      ``"column_norm"`` needs every kernel entry (O(n²)) and is refused;
    * bandwidth rules by reductions (``"mean_pairwise"``, ``"mean_to_centroid"``) or a
      row sample (``"median"``);
    * :class:`lorak.Nystroem` (landmarks, then an m × m problem);
    * LS-SVM statistics ḠᵀḠ and Ḡᵀȳ in one pass (per-chunk centred moments merged by
      the pairwise update of Chan, Golub & LeVeque 1979, so no cancellation);
    * factor alignment by the same reductions;
    * :class:`lorak.GeneralizedNystroem`, whose fit needs only the labeled rows and the
      landmarks.

    Methods that need all rows in memory at once refuse a dask array with a clear
    error instead of computing it silently: incomplete Cholesky and CSI (pivoted
    greedy factorizations that revisit every row at every step), SimpleNPKL
    (transductive), the exact eigendecomposition, and the models that keep an n-sized
    state (kernel k-means, kernel PCA, ℓp-MKL, the semi-supervised classifier).
    Compute the array first (``X.compute()``) when it fits in memory.

With a ``dask.distributed.Client`` active, every computation here runs on its cluster
(Dask's default scheduler); otherwise on the local threaded scheduler. Dask is imported
only when a dask array is passed in (it is an optional dependency: ``lorak[dask]``).
"""

from __future__ import annotations

import functools
import inspect
import sys
import threading

import numpy as np

from ._config import get_config

__all__ = [
    "ChunkedRowsMixin",
    "is_dask_array",
    "is_memmap",
    "map_rows",
    "reduce_rows",
    "row_moments",
]

#: Methods that map rows to rows; :class:`ChunkedRowsMixin` applies them chunk-wise.
ROW_METHODS = (
    "transform",
    "predict",
    "decision_function",
    "predict_proba",
    "predict_log_proba",
    "score_samples",
)
#: Fitting methods that refuse a dask array unless the class sets ``_lazy_fit = True``.
FIT_METHODS = ("fit", "fit_transform", "fit_predict")

_state = threading.local()


# --------------------------------------------------------------------------- detection


def is_dask_array(X) -> bool:
    """True for a ``dask.array.Array`` (without importing dask when it is not loaded)."""
    da = sys.modules.get("dask.array")
    return da is not None and isinstance(X, da.Array)


def is_memmap(X) -> bool:
    """True for a ``numpy.memmap``."""
    return isinstance(X, np.memmap)


def _check_2d(X, name="X"):
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array; got a {X.ndim}-D dask array")


def _single_column_chunk(X):
    """X with all columns in one chunk (row blocks are what the methods see)."""
    if X.ndim == 2 and X.numblocks[1] != 1:
        X = X.rechunk({1: -1})
    return X


def _chunk_step(X, budget=None) -> int:
    budget = get_config()["memory_budget"] if budget is None else budget
    row_bytes = max(1, int(np.prod(X.shape[1:], dtype=np.int64)) * X.dtype.itemsize)
    return max(1, int(budget // row_bytes))


def validate_lazy(estimator, X, *, reset: bool, name: str = "X"):
    """Check a dask X for fitting (2-D, numeric, at least one row); record n_features_in_.

    Values are not scanned here (that would be a pass over the data); every chunk is
    validated (finite, numeric) when a method runs on it. Integer arrays become float64
    lazily.
    """
    _check_2d(X, name)
    if not np.issubdtype(X.dtype, np.number) or np.issubdtype(X.dtype, np.complexfloating):
        raise ValueError(f"{name} must be numeric (float32 or float64); got dtype {X.dtype}")
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    if X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"{name} is empty: got shape {X.shape}")
    if any(np.isnan(c) for c in X.shape):
        raise ValueError(f"{name} has unknown chunk sizes; call {name}.compute_chunk_sizes()")
    if reset:
        estimator.n_features_in_ = int(X.shape[1])
        if hasattr(estimator, "feature_names_in_"):
            del estimator.feature_names_in_
    elif X.shape[1] != estimator.n_features_in_:
        raise ValueError(
            f"X has {X.shape[1]} features, but {type(estimator).__name__} is expecting "
            f"{estimator.n_features_in_} features as input"
        )
    return _single_column_chunk(X)


def lazy_targets(y, n: int):
    """y (dask or array-like) as an in-memory array of n entries: one value per row.

    Targets are n-sized but d times smaller than X; they are brought into memory.
    """
    if is_dask_array(y):
        y = y.compute()
    y = np.asarray(y)
    if y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} rows but X has {n}")
    return y


# --------------------------------------------------------------------------- map_rows


def _call_method(block, est, name, args, kwargs):
    return getattr(est, name)(block, *args, **kwargs)


def _probe(func, X):
    """A result of ``func`` on one row, for the output's dtype and trailing shape."""
    dtype = X.dtype if X.dtype in (np.float32, np.float64) else np.float64
    try:
        out = func(np.zeros((1, X.shape[1]), dtype=dtype))
    except Exception:  # e.g. a kernel undefined at 0: use a real row
        out = func(np.asarray(X[:1].compute() if is_dask_array(X) else X[:1]))
    return np.asarray(out)


def _dask_map(func, X, sample, call=None):
    import dask
    import dask.array as da

    X = _single_column_chunk(X)
    if sample.ndim == 1:
        kw = {"drop_axis": 1, "chunks": (X.chunks[0],)}
    elif sample.ndim == 2:
        kw = {"chunks": (X.chunks[0], (sample.shape[1],))}
    else:
        raise ValueError(f"a row method must return 1-D or 2-D output; got {sample.ndim}-D")
    kw["meta"] = np.empty((0,) * sample.ndim, dtype=sample.dtype)  # no trial call
    if call is None:
        return da.map_blocks(func, X, dtype=sample.dtype, **kw)
    est, name, args, kwargs = call
    est = dask.delayed(est, pure=True)  # one graph key, shipped once per worker
    f = functools.partial(_call_method, name=name, args=args, kwargs=kwargs)
    return da.map_blocks(f, X, est, dtype=sample.dtype, **kw)


def map_rows(func, X, *, out=None, budget=None, rows=None, _call=None):
    """``func`` applied to blocks of rows of X, concatenated along rows.

    Parameters
    ----------
    func : callable, block (rows × d ndarray) -> (rows,) or (rows, k) array
        Must treat rows independently (a transform, a prediction).
    X : dask array, numpy memmap or ndarray (n, d)
        A dask array gives a lazy dask array with X's row chunks. Otherwise X is read
        ``budget`` bytes at a time (default: ``memory_budget``), so a memmap is never
        loaded whole.
    out : ndarray or memmap, optional
        Where to write the result (not for dask input); allocated when None.
    rows : int, optional
        Rows per chunk for in-memory and memmap input (overrides ``budget``).
    """
    if is_dask_array(X):
        if out is not None:
            raise ValueError("out= is not supported for a dask array: the result is lazy")
        _check_2d(X)
        sample = _probe(func, X)
        return _dask_map(func, X, sample, _call)
    X = X if isinstance(X, np.ndarray) else np.asarray(X)
    n = X.shape[0]
    step = int(rows) if rows else _chunk_step(X, budget)
    first = None
    for s in range(0, max(n, 1), step):
        e = min(s + step, n)
        res = np.asarray(func(np.asarray(X[s:e])))
        if first is None:
            first = res
            if out is None:
                out = np.empty((n, *res.shape[1:]), dtype=res.dtype)
            elif out.shape[0] != n or out.shape[1:] != res.shape[1:]:
                raise ValueError(f"out must have shape {(n, *res.shape[1:])}; got {out.shape}")
        out[s:e] = res
    return out


# --------------------------------------------------------------------------- reductions


def _aligned_blocks(arrays):
    """Lists of row blocks of the arrays, aligned (dask: delayed; else: slices)."""
    import dask.array as da

    lead = next(a for a in arrays if is_dask_array(a))
    lead = _single_column_chunk(lead)
    rows = lead.chunks[0]
    out = []
    for a in arrays:
        if is_dask_array(a):
            a = a.rechunk({0: rows, **({1: -1} if a.ndim == 2 else {})})
        else:
            a = np.asarray(a)
            a = da.from_array(a, chunks=(rows, *((s,) for s in a.shape[1:])))
        out.append(list(a.to_delayed().ravel()))
    return list(zip(*out, strict=True))


def _tree(parts, combine, fan_in=8):
    import dask

    comb = dask.delayed(lambda *xs: functools.reduce(combine, xs), pure=True)
    while len(parts) > 1:
        parts = [comb(*parts[i : i + fan_in]) for i in range(0, len(parts), fan_in)]
    return parts[0]


def _add(a, b):
    if isinstance(a, tuple):
        return tuple(_add(x, y) for x, y in zip(a, b, strict=True))
    return a + b


def reduce_rows(func, *arrays, combine=None, args=(), budget=None, rows=None):
    """Combine ``func(*row_blocks, *args)`` over aligned row blocks of ``arrays``.

    ``combine`` (default: elementwise sum, also over tuples) must be associative. With
    any dask array among ``arrays`` the blocks follow its row chunks (in-memory arrays
    are split to match) and the partial results are merged in a tree on the cluster;
    ``args`` (e.g. centres) are sent once as graph keys. Otherwise the arrays are read
    in row chunks of about ``budget`` bytes of input (or ``rows`` rows: choose it so that
    what ``func`` allocates per chunk, e.g. a transform's rows × m output, stays small).
    """
    combine = _add if combine is None else combine
    if any(is_dask_array(a) for a in arrays):
        import dask

        dargs = [dask.delayed(a, pure=True) if isinstance(a, np.ndarray) else a for a in args]
        f = dask.delayed(func, pure=True)
        parts = [f(*blocks, *dargs) for blocks in _aligned_blocks(arrays)]
        (result,) = dask.compute(_tree(parts, combine))
        return result
    n = arrays[0].shape[0]
    step = int(rows) if rows else min(_chunk_step(a, budget) for a in arrays)
    result = None
    for s in range(0, n, step):
        part = func(*(np.asarray(a[s : s + step]) for a in arrays), *args)
        result = part if result is None else combine(result, part)
    return result


def _moments_block(*blocks):
    """(count, mean, centred scatter) of the column-concatenated blocks, float64.

    One float64 copy of the block (centred in place), then one syrk.
    """
    n = blocks[0].shape[0]
    widths = [int(np.prod(b.shape[1:], dtype=np.int64)) for b in blocks]
    B = np.empty((n, sum(widths)))
    j = 0
    for b, w in zip(blocks, widths, strict=True):
        B[:, j : j + w] = np.asarray(b).reshape(n, w)
        j += w
    mean = B.mean(axis=0)
    B -= mean
    return n, mean, B.T @ B


def _merge_moments(a, b):
    """Pairwise update of Chan, Golub & LeVeque: exact, no cancellation."""
    na, ma, Sa = a
    nb, mb, Sb = b
    if na == 0:
        return b
    if nb == 0:
        return a
    n = na + nb
    delta = mb - ma
    mean = ma + delta * (nb / n)
    S = Sa + Sb + np.outer(delta, delta) * (na * nb / n)
    return n, mean, S


def row_moments(*arrays):
    """Count, column means and centred scatter (X − 1μᵀ)ᵀ(X − 1μᵀ) of [A₁ A₂ …].

    One pass over the rows (dask, memmap or ndarray); the per-chunk moments are merged
    exactly, so the centring costs no precision even when the columns share a large
    mean (a Gaussian factor's do).
    """
    return reduce_rows(_moments_block, *arrays, combine=_merge_moments)


def centered_cross_products(G, T=None):
    """``(mean(G), mean(T), ḠᵀḠ, ḠᵀT̄)`` in one pass: the LS-SVM statistics."""
    m = G.shape[1]
    if T is None:
        _, mean, S = row_moments(G)
        return mean, None, 0.5 * (S + S.T), None
    T = np.asarray(T) if not is_dask_array(T) else T
    _, mean, S = row_moments(G, T)
    Sg = S[:m, :m]
    return mean[:m], mean[m:], 0.5 * (Sg + Sg.T), S[:m, m:]


def factor_alignment(G1, G2, *, centered=False) -> float:
    """Alignment of G₁G₁ᵀ and G₂G₂ᵀ by one reduction over the rows (no n × n array)."""
    if G1.shape[0] != G2.shape[0]:
        raise ValueError(f"G1 and G2 must have the same number of rows; got {G1.shape}, {G2.shape}")
    m1 = G1.shape[1]
    n, mean, S = row_moments(G1, G2)
    if not centered:
        S = S + n * np.outer(mean, mean)
    cross = np.linalg.norm(S[:m1, m1:]) ** 2
    n1 = np.linalg.norm(S[:m1, :m1])
    n2 = np.linalg.norm(S[m1:, m1:])
    return float(cross / (n1 * n2)) if n1 > 0 and n2 > 0 else 0.0


# --------------------------------------------------------------------------- bandwidth


def _norm_stats(B):
    B = np.asarray(B, dtype=np.float64)
    return np.einsum("ij,ij->", B, B), B.sum(axis=0), B.shape[0]


class _Rows:
    """Random access to rows of a dask array (each access computes those rows only)."""

    def __init__(self, X):
        self.X = X
        self.shape = X.shape
        self.dtype = X.dtype
        self.ndim = 2

    def __getitem__(self, idx):
        return np.asarray(self.X[idx].compute())

    def __array__(self, dtype=None, copy=None):
        a = np.asarray(self.X.compute())
        return a if dtype is None else a.astype(dtype)


def bandwidth_scale(rule, X, rng=None) -> float:
    """The rules of :mod:`lorak.kernels._bandwidth` on a dask array, by reductions."""
    from .kernels import _bandwidth as bw

    if rule in ("mean_pairwise", "mean_to_centroid"):
        sq, s, n = reduce_rows(_norm_stats, X)
        mu = s / n
        v = max(sq / n - float(mu @ mu), 0.0)
        return 2.0 * v if rule == "mean_pairwise" else v
    if rule == "median":
        return bw._median(_Rows(X), rng)
    return bw.bandwidth_scale(rule, np.zeros((1, 1)))  # raises the usual message


# --------------------------------------------------------------------------- landmarks


def select_landmarks(name, X, n_landmarks, *, rng, kernel=None):
    """Named landmark strategies on a dask array (see the module docstring)."""
    from .landmarks import Landmarks

    if name == "uniform":
        idx = np.sort(rng.choice(X.shape[0], size=n_landmarks, replace=False))
        return Landmarks(points=np.asarray(X[idx].compute()), indices=idx)
    if name == "kmeans":
        centers, info = kmeans_landmarks(X, n_landmarks, rng=rng, max_iter=10)
        return Landmarks(points=centers, info=info)
    raise ValueError(
        f"landmarks={name!r} is not available for a dask array"
        + (
            ": column-norm sampling needs every entry of the n × n kernel matrix"
            if name == "column_norm"
            else ""
        )
        + "; use 'uniform' or 'kmeans', or pass points / row indices"
    )


def _lloyd_block(B, mu, W, b, C, want_far):
    """One chunk of a Lloyd pass: sums, counts, inertia, and (optionally) far rows."""
    import scipy.sparse as sp

    from .landmarks._kmeans import _BLOCK_ENTRIES

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


def kmeans_landmarks(X, n_landmarks, *, rng, max_iter=10, init="auto", init_sample=None):
    """k-means centres of a dask array: seeding on a sample, Lloyd by passes over chunks.

    The seeding is :mod:`lorak.landmarks._kmeans`'s (``"subsample++"``: greedy
    k-means++ on ``min(n, max(2000, 10k))`` random rows, which are computed and held in
    memory; the same random draws as in memory). Each Lloyd iteration is one pass: per
    chunk, one product with the centres (float32, as in memory) gives the assignment,
    and per-cluster sums (float64) and counts are reduced over the chunks. Memory per
    task: one chunk plus k × d. Iterations stop after ``max_iter`` updates or when the
    centres stop moving. Empty clusters take the rows farthest from their centres
    (found in one extra pass, only when a cluster empties). No per-row state is kept
    between passes, so the data are read ``max_iter + 2`` times (means, iterations,
    final inertia); the distance bounds of the in-memory version, which need per-row
    state, are not used — the centres are the same up to round-off.
    """
    from .landmarks import _kmeans as km

    n = X.shape[0]
    k = int(n_landmarks)
    if not 1 <= k <= n:
        raise ValueError(f"n_landmarks must be in [1, {n}]; got {n_landmarks}")
    method = km._AUTO_INIT if init == "auto" else init
    if method == "k-means++" or km.default_init_sample(n, k) >= n:
        # seeding on all rows: only for data small enough to hold (or asked for)
        return km.kmeans_landmarks(
            np.asarray(X.compute()),
            k,
            rng=rng,
            max_iter=max_iter,
            init=init,
            init_sample=init_sample,
        )
    cdt = np.dtype(np.float32)
    mu = reduce_rows(_norm_stats, X)[1] / n
    C, m = km._seed(_Rows(X), k, rng, method, init_sample, None, cdt, km._SKETCH_DIM)

    def operands(C):
        Ct = C - mu
        b = np.einsum("ij,ij->i", Ct, Ct) + 2.0 * (Ct @ mu)
        W = np.ascontiguousarray((-2.0 * Ct).T, dtype=cdt)
        return W, b.astype(cdt)

    def lloyd_pass(C, want_far=0):
        W, b = operands(C)
        return reduce_rows(_lloyd_block, X, args=(mu, W, b, C, want_far), combine=_merge_lloyd)

    n_iter = 0
    sums, counts, inertia, _ = lloyd_pass(C)
    for _ in range(max_iter):
        empty = np.flatnonzero(counts == 0)
        if empty.size:
            _, _, _, (fd, frows, flab) = lloyd_pass(C, want_far=empty.size)
            order = np.argsort(-fd, kind="stable")[: empty.size]
            for j, i in zip(empty, order, strict=False):
                sums[flab[i]] -= frows[i]
                counts[flab[i]] -= 1.0
                sums[j] = frows[i]
                counts[j] = 1.0
        new = C.copy()
        nz = counts > 0
        new[nz] = sums[nz] / counts[nz, None]
        n_iter += 1
        moved = not np.array_equal(new, C)
        C = new
        sums, counts, inertia, _ = lloyd_pass(C)
        if not moved:
            break
    info = {
        "n_iter": n_iter,
        "inertia": inertia,
        "init": method,
        "init_sample": m,
        "passes": n_iter + 2,
    }
    return C.astype(X.dtype if X.dtype in (np.float32, np.float64) else np.float64), info


# --------------------------------------------------------------------------- the mixin


def _first_arg(args, kwargs):
    if args:
        return args[0]
    return kwargs.get("X")


def _row_method(func):
    name = func.__name__

    @functools.wraps(func)
    def wrapper(self, *args, **kwargs):
        X = _first_arg(args, kwargs)
        if getattr(_state, "inside", False) or not (is_dask_array(X) or is_memmap(X)):
            return func(self, *args, **kwargs)
        rest_args = args[1:] if args else ()
        rest_kw = {k: v for k, v in kwargs.items() if k != "X"}
        if is_dask_array(X):
            _check_2d(X)

            def probe(block):
                return func(self, block, *rest_args, **rest_kw)

            sample = _probe(probe, X)
            return _dask_map(probe, X, sample, (self, name, rest_args, rest_kw))

        def run(block):
            _state.inside = True
            try:
                return func(self, block, *rest_args, **rest_kw)
            finally:
                _state.inside = False

        return map_rows(run, X)

    wrapper._lorak_chunked = True
    return wrapper


def _refuse_lazy(func):
    @functools.wraps(func)
    def wrapper(self, *args, **kwargs):
        if is_dask_array(_first_arg(args, kwargs)):
            raise TypeError(
                f"{type(self).__name__}.{func.__name__} cannot take a dask array: "
                f"{self._lazy_fit_reason}. Compute it first (X.compute()) if it fits in "
                "memory; see lorak.parallel for the methods that fit on dask arrays"
            )
        return func(self, *args, **kwargs)

    wrapper._lorak_chunked = True
    return wrapper


class ChunkedRowsMixin:
    """Base class giving an estimator's row methods dask and memmap support.

    On subclass creation, each of :data:`ROW_METHODS` the class defines is wrapped: a
    dask array gives a lazy dask array computed block by block, a memmap is read in
    chunks. Classes whose fit cannot run on a dask array (``_lazy_fit = False``, the
    default) get their :data:`FIT_METHODS` wrapped to raise a ``TypeError`` naming the
    method and ``_lazy_fit_reason``.
    """

    _lazy_fit = False
    _lazy_fit_reason = "its fit needs all rows in memory at once"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for name in ROW_METHODS:
            f = cls.__dict__.get(name)
            if inspect.isfunction(f) and not getattr(f, "_lorak_chunked", False):
                setattr(cls, name, _row_method(f))
            elif inspect.isfunction(getattr(f, "fn", None)):  # sklearn's available_if
                if not getattr(f.fn, "_lorak_chunked", False):
                    f.fn = _row_method(f.fn)
        if not cls._lazy_fit:
            for name in FIT_METHODS:
                f = cls.__dict__.get(name)
                if inspect.isfunction(f) and not getattr(f, "_lorak_chunked", False):
                    setattr(cls, name, _refuse_lazy(f))

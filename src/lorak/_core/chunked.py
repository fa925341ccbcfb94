"""Row-chunked and dask machinery: map rows, reduce rows, the estimator mixin.

A leaf module (:ref:`guide-internals-chunked`); what users see is :mod:`lorak.parallel`.
"""

from __future__ import annotations

import functools
import inspect
import sys
import threading

import numpy as np

from .config import get_config

__all__ = [
    "ChunkedRowsMixin",
    "LazyRows",
    "gather_rows",
    "is_dask_array",
    "is_memmap",
    "lazy_targets",
    "map_rows",
    "merge_moments",
    "norm_stats",
    "record_n_features",
    "reduce_rows",
    "row_moments",
    "validate_lazy",
]

#: Methods that map rows to rows; :class:`ChunkedRowsMixin` applies them chunk-wise.
ROW_METHODS = (
    "transform",
    "predict",
    "decision_function",
    "predict_proba",
    "predict_log_proba",
    "score_samples",
    "transform_product",
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
    record_n_features(estimator, X.shape[1], reset=reset)
    # every chunk is checked when it is computed (lazily: no extra pass), with the
    # message scikit-learn gives in memory ("Input X contains NaN.")
    X = _single_column_chunk(X)
    return X.map_blocks(_finite_chunk, name, dtype=X.dtype)


def _finite_chunk(block, name):
    from sklearn.utils import assert_all_finite

    assert_all_finite(block, input_name=name)
    return block


def lazy_targets(y, n: int):
    """y (dask or array-like) as an in-memory array of n entries: one value per row.

    Targets are n-sized but d times smaller than X; they are brought into memory.
    """
    if is_dask_array(y):
        y = y.compute()
    y = np.asarray(y)
    if y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} rows but X has {n}")
    if y.dtype.kind in "fc" or y.dtype == object:  # the in-memory path's message
        from sklearn.utils import assert_all_finite

        assert_all_finite(y, input_name="y")
    return y


# --------------------------------------------------------------------------- map_rows


def _call_method(block, est, name, args, kwargs):
    return getattr(est, name)(block, *args, **kwargs)


def _probe_output(func, X):
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
        sample = _probe_output(func, X)
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


def _row_block(a, start, stop):
    """Rows start:stop of an ndarray, memmap (read into memory) or CSR matrix (kept
    sparse: a reduction over a sparse X sees sparse blocks)."""
    block = a[start:stop]
    return block if hasattr(block, "tocsr") else np.asarray(block)


def reduce_rows(func, *arrays, combine=None, args=(), budget=None, rows=None):
    """Combine ``func(*row_blocks, *args)`` over aligned row blocks of ``arrays``.

    ``combine`` (default: elementwise sum, also over tuples) must be associative. With a
    dask array among ``arrays`` the blocks follow its row chunks and the partial results
    merge in a tree on the cluster; otherwise the arrays are read in row chunks of about
    ``budget`` bytes (or ``rows`` rows).
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
        part = func(*(_row_block(a, s, s + step) for a in arrays), *args)
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


def merge_moments(a, b):
    """The moments of two disjoint row sets merged: those of their union.

    ``a`` and ``b`` are ``(count, mean, scatter)`` triples as :func:`row_moments` returns
    them; exact (Chan, Golub & LeVeque 1979) and associative, so it can be the ``combine``
    of :func:`reduce_rows`; a triple with count 0 is the identity.
    """
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
    return reduce_rows(_moments_block, *arrays, combine=merge_moments)


# --------------------------------------------------------------------------- row access


def norm_stats(B):
    """(Σ‖xᵢ‖², Σxᵢ, n) of a block of rows, float64: a :func:`reduce_rows` summand."""
    B = np.asarray(B, dtype=np.float64)
    return np.einsum("ij,ij->", B, B), B.sum(axis=0), B.shape[0]


def gather_rows(X, rows, *, name: str = "X", what: str = "the labeled rows") -> np.ndarray:
    """The rows ``rows`` (host integer indices) of a dask array, memmap or ndarray as an
    in-memory float array (float32 kept), each checked finite.

    A dask array computes only the chunks that hold them, a memmap reads only those
    rows; a row with NaN or infinity gets a ``ValueError`` naming it.
    """
    rows = np.asarray(rows, dtype=np.intp)
    order = np.argsort(rows, kind="stable")
    if is_dask_array(X):
        if any(np.isnan(c) for c in X.shape):
            raise ValueError(f"{name} has unknown chunk sizes; call {name}.compute_chunk_sizes()")
        got = np.asarray(X[rows[order]].compute())
    else:
        got = np.asarray(X[rows[order]])
    block = np.empty_like(got)
    block[order] = got
    if block.dtype not in (np.float32, np.float64):
        block = block.astype(np.float64)
    bad = ~np.isfinite(block).all(axis=tuple(range(1, block.ndim)))
    if bad.any():
        raise ValueError(
            f"{name}: row {int(rows[np.flatnonzero(bad)[0]])} contains NaN or infinity "
            f"({int(bad.sum())} of the {rows.size} rows gathered to memory, {what}, are "
            "not finite)"
        )
    return block


class LazyRows:
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

            sample = _probe_output(probe, X)
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


def record_n_features(estimator, d: int, *, reset: bool) -> None:
    """On a fit (``reset``), set ``n_features_in_`` = d and drop the feature names of an
    earlier fit; otherwise check d against the fitted ``n_features_in_`` (when there is
    one), with scikit-learn's message."""
    if reset:
        estimator.n_features_in_ = int(d)
        if hasattr(estimator, "feature_names_in_"):
            del estimator.feature_names_in_
        return
    expected = getattr(estimator, "n_features_in_", None)
    if expected is not None and expected != d:
        raise ValueError(
            f"X has {d} features, but {type(estimator).__name__} is expecting {expected} "
            "features as input"
        )


def reset_fitted(estimator) -> None:
    """Remove what an earlier fit stored: every instance attribute named like a fitted
    attribute (ending in ``_``, not starting with ``__``: scikit-learn's convention).

    Constructor parameters never end in ``_``, so they stay. Called before each
    outermost fit, so that nothing of an earlier fit survives one that does not set it.
    """
    for name in [k for k in vars(estimator) if k.endswith("_") and not k.startswith("__")]:
        delattr(estimator, name)


def _refuse_lazy(func):
    @functools.wraps(func)
    def wrapper(self, *args, **kwargs):
        if not self._lazy_fit and is_dask_array(_first_arg(args, kwargs)):
            raise TypeError(
                f"{type(self).__name__}.{func.__name__} cannot take a dask array: "
                f"{self._lazy_fit_reason}. Compute it first (X.compute()) if it fits in "
                "memory; see lorak.parallel for the methods that fit on dask arrays"
            )
        # the outermost fit method of this estimator starts from a clean slate (a fit
        # that calls another fit method, or its base class's fit, does not reset again)
        fitting = _state.__dict__.setdefault("fitting", set())
        if id(self) in fitting:
            return func(self, *args, **kwargs)
        fitting.add(id(self))
        try:
            reset_fitted(self)
            return func(self, *args, **kwargs)
        finally:
            fitting.discard(id(self))

    wrapper._lorak_chunked = True
    return wrapper


class ChunkedRowsMixin:
    """Base class giving an estimator's row methods dask and memmap support.

    On subclass creation each of :data:`ROW_METHODS` the class defines is wrapped (a
    dask array gives a lazy dask array, a memmap is read in chunks), and so is each of
    :data:`FIT_METHODS`: without ``_lazy_fit = True`` they refuse a dask array with a
    ``TypeError`` naming ``_lazy_fit_reason``, and the outermost first calls
    :func:`reset_fitted`.
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
        for name in FIT_METHODS:
            f = cls.__dict__.get(name)
            if inspect.isfunction(f) and not getattr(f, "_lorak_chunked", False):
                setattr(cls, name, _refuse_lazy(f))

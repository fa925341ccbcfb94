"""Chunked evaluation of kernel blocks k(X, Z) under a memory budget.

:func:`kernel_block`, :func:`kernel_product` and :func:`iter_kernel_blocks`, all with
O(chunk · m) extra memory (:ref:`guide-internals-kernels`).
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Iterator

import numpy as np
import scipy.sparse as sp
from scipy.linalg.blas import dtrmm, strmm

from .._core.array_api import array_api_dispatched, array_namespace, device_of, is_foreign, to_numpy
from .._core.config import get_config
from .._core.validation import csr_rows, float_dtype
from ._elementwise import _MIN_PARALLEL, blas_on_one_thread, in_slabs, n_elementwise_threads

__all__ = ["chunk_rows", "iter_kernel_blocks", "kernel_block", "kernel_product"]

# Chunks are small next to the n × m outputs: 64 MiB keeps GEMMs efficient (≥ 8192
# rows at m = 1000 in float64) while the elementwise passes stay cache friendly.


def chunk_rows(n_cols: int, itemsize: int, budget: int | None = None, n_rows=None) -> int:
    """Rows per chunk so that one (rows × n_cols) block fits ``budget`` bytes."""
    budget = get_config()["memory_budget"] if budget is None else budget
    for name, v, low in (("n_cols", n_cols, 0), ("itemsize", itemsize, 1), ("budget", budget, 1)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise TypeError(f"{name} must be an integer; got {v!r} ({type(v).__name__})")
        if v < low:
            raise ValueError(f"{name} must be >= {low}; got {v!r}")
    rows = max(1, budget // max(1, n_cols * itemsize))
    return rows if n_rows is None else max(1, min(rows, n_rows))


def _host(A, name):
    """A NumPy copy of an array API input when dispatch is off (as scikit-learn does)."""
    try:
        return to_numpy(A)
    except Exception as exc:
        raise TypeError(
            f"{name} is an array NumPy cannot read (on device {device_of(A)!s}) and array "
            "API dispatch is off: enable it (lorak.set_config(array_api_dispatch=True)) "
            "to compute on that device, or move the array to the host"
        ) from exc


def _inputs(X, Z, R=None):
    """(X, Z, R, xp): xp is None on the NumPy path (foreign inputs converted when
    dispatch is off), else the namespace every input is moved into (X's device).
    Sparse X and Z of any format come back as CSR."""
    X, Z = csr_rows(X), csr_rows(Z)
    if not any(is_foreign(A) for A in (X, Z, R)):
        return X, Z, R, None
    if not any(array_api_dispatched(A) for A in (X, Z, R)):
        return (
            *(A if not is_foreign(A) else _host(A, n) for A, n in ((X, "X"), (Z, "Z"), (R, "R"))),
            None,
        )
    from .._core.array_api import on_device

    xp = array_namespace(X, Z, R)
    lead = next(A for A in (X, Z, R) if is_foreign(A))
    dev = device_of(lead)
    return (*(on_device(A, xp, dev) for A in (X, Z, R)), xp)


def _check_shapes(X, Z, *, numeric: bool):
    """Cheap O(1) checks, so that a wrong shape (or, with ``numeric``, dtype) is named,
    not a numpy error deep in a GEMM."""
    for name, A in (("X", X), ("Z", Z)):
        if getattr(A, "ndim", None) != 2:
            got = f"{A.ndim}-D" if hasattr(A, "ndim") else type(A).__name__
            raise ValueError(f"{name} must be a 2-D array (n_samples, n_features); got {got}")
        if numeric and getattr(A, "dtype", np.dtype(object)).kind not in "biuf":
            raise TypeError(f"{name} must be numeric; got dtype {getattr(A, 'dtype', None)}")
    if X.shape[1] != Z.shape[1]:
        raise ValueError(f"Z has {Z.shape[1]} features, but X has {X.shape[1]}")


def _prepared(prepare, X, Z, dtype, *args):
    """``prepare(Z, dtype, *args)``; for k(X, X) an error about Z names X (the user
    passed X)."""
    try:
        return prepare(Z, dtype, *args)
    except ValueError as exc:
        if Z is X and str(exc).startswith("Z "):
            raise ValueError("X" + str(exc)[1:]) from None
        raise


def _prepare_device(kernel, X, Z, xp):
    from ._device import device_prepare, result_dtype

    _check_shapes(X, Z, numeric=False)
    kernel._require_resolved()
    dtype = result_dtype(xp, X, Z)
    return (dtype, *_prepared(functools.partial(device_prepare, kernel), X, Z, dtype, xp))


def _prepare(kernel, X, Z):
    if getattr(kernel, "name", None) != "callable":  # a user's callable takes any rows
        _check_shapes(X, Z, numeric=True)
    kernel._require_resolved()
    dtype = float_dtype(X, Z)
    return (dtype, *_prepared(kernel._prepare, X, Z, dtype))


def _check_out(out, shape, dtype, inputs, *, contiguous=True):
    """Refuse an ``out`` the chunked evaluators cannot write whole, before any chunk is
    written into it: not a NumPy array, another shape or dtype, read-only, not
    C-contiguous where the chunks' blocks are evaluated into it (``contiguous``), or
    sharing memory with an input (a later chunk would read what an earlier one wrote)."""
    if not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a NumPy array; got {type(out).__name__}")
    if out.shape != shape or out.dtype != dtype:
        raise ValueError(
            f"out must have shape {shape} and dtype {dtype}; got shape {out.shape} and "
            f"dtype {out.dtype}"
        )
    if not out.flags.writeable:
        raise ValueError("out is read-only; pass a writeable array")
    if contiguous and not out.flags.c_contiguous:
        raise ValueError("out must be C-contiguous (np.empty or np.ascontiguousarray)")
    for name, A in inputs:
        arrays = (A.data, A.indices, A.indptr) if sp.issparse(A) else (A,)
        if any(isinstance(a, np.ndarray) and _overlap(out, a) for a in arrays):
            raise ValueError(f"out shares memory with {name}; pass a separate array")


def _overlap(a, b) -> bool:
    """Whether a and b share memory (exactly where that is cheap to decide, else
    whenever their bounds overlap)."""
    if not np.may_share_memory(a, b):
        return False
    try:
        return bool(np.shares_memory(a, b, max_work=10**6))
    except Exception:  # pragma: no cover - TooHardError: strides too hard to decide
        return True


def iter_kernel_blocks(kernel, X, Z, *, budget: int | None = None) -> Iterator:
    """Yield ``(start, stop, block)`` with block = k(X[start:stop], Z).

    Array API inputs (dispatch enabled) give blocks in their namespace, on X's device.
    """
    X, Z, _, xp = _inputs(X, Z)
    if xp is not None:
        from ._device import device_block

        dtype, Zd, aux = _prepare_device(kernel, X, Z, xp)
        n = X.shape[0]
        step = chunk_rows(Z.shape[0], _itemsize(xp, dtype), budget, n)
        for s in range(0, n, step):
            e = min(s + step, n)
            yield s, e, device_block(kernel, X[s:e, ...], Zd, aux, dtype, xp)
        return
    dtype, Zd, aux = _prepare(kernel, X, Z)
    n = X.shape[0]
    step = chunk_rows(Z.shape[0], dtype.itemsize, budget, n)
    for s in range(0, n, step):
        e = min(s + step, n)
        yield s, e, kernel._block(X[s:e], Zd, aux, dtype)


def kernel_block(kernel, X, Z, *, out=None, budget: int | None = None) -> np.ndarray:
    """The dense (n_X, n_Z) block k(X, Z), evaluated in row chunks written in place.

    Array API inputs (dispatch enabled): the block is in their namespace, on X's device.
    ``out``, when given: a writeable, C-contiguous (n_X, n_Z) array of the result's
    dtype that shares no memory with X or Z. Sparse X or Z may be of any SciPy format.
    """
    X, Z, _, xp = _inputs(X, Z)
    if xp is not None:
        return _device_kernel_block(kernel, X, Z, xp, out, budget)
    dtype, Zd, aux = _prepare(kernel, X, Z)
    shape = (X.shape[0], Z.shape[0])
    if out is None:
        out = np.empty(shape, dtype=dtype)
    else:
        _check_out(out, shape, dtype, (("X", X), ("Z", Z)))
    step = chunk_rows(shape[1], dtype.itemsize, budget, shape[0])
    if kernel._block_in_place(X, aux, dtype):
        step = max(1, shape[0])  # the block is the output: nothing to bound
    for s in range(0, shape[0], step):
        e = min(s + step, shape[0])
        kernel._block(X[s:e], Zd, aux, dtype, out=out[s:e])
    return out


def kernel_product(
    kernel, X, Z, R, *, out=None, budget: int | None = None, upper_triangular=False
) -> np.ndarray:
    """k(X, Z) @ R, with k(X, Z) formed one row chunk at a time.

    ``R`` is (n_Z, r); the result has X's float dtype. With ``upper_triangular`` (R upper
    triangular) each chunk is multiplied in place by BLAS ``trmm``. Array API inputs
    are computed in their namespace, on the device of the first of X, Z, R that is one.
    ``out``, when given, is checked before anything is written into it: a writeable
    (n_X, r) array of the result's dtype, C-contiguous with ``upper_triangular``, that
    shares no memory with X, Z or R. Sparse X or Z may be of any SciPy format (read as
    CSR, not modified).
    """
    X, Z, R, xp = _inputs(X, Z, R)
    if xp is not None:
        return _device_kernel_product(kernel, X, Z, R, xp, out, budget, upper_triangular)
    dtype, Zd, aux = _prepare(kernel, X, Z)
    R = np.asarray(R, dtype=dtype)
    n, m = X.shape[0], Z.shape[0]
    if R.ndim != 2 or R.shape[0] != m:
        raise ValueError(f"R must have {m} rows (one per row of Z); got shape {R.shape}")
    shape = (n, R.shape[1])
    triangular = upper_triangular and R.shape == (m, m)
    if out is None:
        out = np.empty(shape, dtype=dtype)
    else:  # before the first chunk is written into it; trmm works on C-ordered chunks
        _check_out(out, shape, dtype, (("X", X), ("Z", Z), ("R", R)), contiguous=triangular)
    step = chunk_rows(max(m, R.shape[1]), dtype.itemsize, budget, n)
    if triangular:
        if kernel._block_in_place(X, aux, dtype):
            step = max(1, n)  # the block is the output: nothing to bound
        trmm = strmm if dtype == np.float32 else dtrmm
        Rf = np.asfortranarray(R)
        for s in range(0, n, step):
            e = min(s + step, n)
            C = out[s:e]
            kernel._block(X[s:e], Zd, aux, dtype, out=C)
            # C (rows × m, C-order) is Cᵀ in Fortran order: Cᵀ ← Rᵀ Cᵀ, i.e. C ← C R.
            res = trmm(1.0, Rf, C.T, side=0, lower=0, trans_a=1, overwrite_b=1)
            if not np.shares_memory(res, C):  # pragma: no cover - BLAS wrappers copy
                C[...] = res.T
        return out
    threads = n_elementwise_threads() if n * m >= _MIN_PARALLEL else 1
    if threads > 1:
        return _product_by_slabs(kernel, X, Zd, aux, dtype, R, out, step, threads)
    for s in range(0, n, step):
        e = min(s + step, n)
        B = kernel._block(X[s:e], Zd, aux, dtype)
        np.matmul(B, R, out=out[s:e])
    return out


def _product_by_slabs(kernel, X, Zd, aux, dtype, R, out, step, threads):
    """:func:`kernel_product` on several threads, fused by row slab: each elementwise
    thread takes a contiguous slab of every chunk through the cross product (sparse or
    GEMM), the kernel's map and the product with R, BLAS on one thread meanwhile. One
    pool of threads in the loop, not BLAS's and the elementwise pool's taking turns: on
    two cores the turns cost more than the work (1.5× on dense rows, 1.8× on sparse).
    Every row's values are those of the unfused loop to round-off (the GEMMs' shapes
    differ)."""
    n = X.shape[0]
    buf = np.empty((min(step, n), Zd.shape[0]), dtype=dtype)

    def slab(s, a, b):
        B = kernel._block(X[s + a : s + b], Zd, aux, dtype, out=buf[a:b])
        np.matmul(B, R, out=out[s + a : s + b])

    with blas_on_one_thread():  # the slabs' own products: one thread each
        for s in range(0, n, step):
            e = min(s + step, n)
            in_slabs(e - s, threads, functools.partial(slab, s))
    return out


# --------------------------------------------------------------------- array API inputs


def _itemsize(xp, dtype) -> int:
    return 4 if dtype == xp.float32 else 8


def _device_kernel_block(kernel, X, Z, xp, out, budget):
    from ._device import device_block, gaussian_in_place, raise_if_flagged

    dtype, Zd, aux = _prepare_device(kernel, X, Z, xp)
    shape = (X.shape[0], Z.shape[0])
    if out is None:
        out = xp.empty(shape, dtype=dtype, device=device_of(X))
    elif tuple(out.shape) != shape or out.dtype != dtype:
        raise ValueError(
            f"out must have shape {shape} and dtype {dtype}; got {out.shape}, {out.dtype}"
        )
    step = chunk_rows(shape[1], _itemsize(xp, dtype), budget, shape[0])
    if gaussian_in_place(kernel, X, aux, dtype, xp) and out.is_contiguous():
        step = max(1, shape[0])  # the block is the output: nothing to bound
    flags = []
    for s in range(0, shape[0], step):
        e = min(s + step, shape[0])
        device_block(kernel, X[s:e, ...], Zd, aux, dtype, xp, out=out[s:e, ...], flags=flags)
    raise_if_flagged(xp, flags)
    return out


def _device_kernel_product(kernel, X, Z, R, xp, out, budget, upper_triangular):
    from .._core.array_api import compat
    from ._device import (
        device_block,
        gaussian_in_place,
        raise_if_flagged,
        upper_triangular_product,
    )

    dtype, Zd, aux = _prepare_device(kernel, X, Z, xp)
    n, m = X.shape[0], Z.shape[0]
    if R.ndim != 2 or R.shape[0] != m:
        raise ValueError(f"R must have {m} rows (one per row of Z); got shape {tuple(R.shape)}")
    R = R if R.dtype == dtype else xp.astype(R, dtype)
    shape = (n, R.shape[1])
    if out is None:
        out = xp.empty(shape, dtype=dtype, device=device_of(X))
    elif tuple(out.shape) != shape or out.dtype != dtype:  # before the first chunk
        raise ValueError(
            f"out must have shape {shape} and dtype {dtype}; got {tuple(out.shape)}, {out.dtype}"
        )
    step = chunk_rows(max(m, R.shape[1]), _itemsize(xp, dtype), budget, n)
    torch = compat.is_torch_namespace(xp)
    triangular = upper_triangular and tuple(R.shape) == (m, m)
    flags = []  # finiteness of X's rows, tested once after the last chunk
    if triangular and torch and gaussian_in_place(kernel, X, aux, dtype, xp):
        if out.is_contiguous():
            # the block of all rows is evaluated into the output (no temporary beyond
            # O(n)), then multiplied there, its temporaries bounded by the budget: no
            # per-chunk passes, and the GEMMs as large as the data
            device_block(kernel, X, Zd, aux, dtype, xp, out=out, flags=flags)
            upper_triangular_product(xp, out, R, inplace=True, budget=budget)
            raise_if_flagged(xp, flags)
            return out
    for s in range(0, n, step):
        e = min(s + step, n)
        if triangular and torch:
            # the block is evaluated into the output and multiplied there: the only
            # temporaries are the triangular product's leaves
            C = device_block(
                kernel, X[s:e, ...], Zd, aux, dtype, xp, out=out[s:e, ...], flags=flags
            )
            upper_triangular_product(xp, C, R, inplace=True, budget=budget)
            continue
        B = device_block(kernel, X[s:e, ...], Zd, aux, dtype, xp, flags=flags)
        if triangular:
            out[s:e, ...] = upper_triangular_product(xp, B, R)
        elif torch:
            import torch as _torch

            _torch.matmul(B, R, out=out[s:e, ...])
        else:
            out[s:e, ...] = B @ R
    raise_if_flagged(xp, flags)
    return out

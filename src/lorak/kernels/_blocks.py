"""Chunked evaluation of kernel blocks k(X, Z) under a memory budget.

Three entry points, all O(chunk · m) extra memory:

- :func:`kernel_block` — the dense block k(X, Z) (the output itself is n×m);
- :func:`kernel_product` — k(X, Z) @ R without materializing k(X, Z) (Nyström's
  transform: the only n-sized array is the result);
- :func:`iter_kernel_blocks` — row chunks of k(X, Z) for reductions (errors, norms).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from .._config import get_config
from .._validation import float_dtype

__all__ = ["chunk_rows", "iter_kernel_blocks", "kernel_block", "kernel_product"]


def chunk_rows(n_cols: int, itemsize: int, budget: int | None = None, n_rows=None) -> int:
    """Rows per chunk so that one (rows × n_cols) block fits ``budget`` bytes."""
    budget = get_config()["memory_budget"] if budget is None else budget
    rows = max(1, budget // max(1, n_cols * itemsize))
    return rows if n_rows is None else max(1, min(rows, n_rows))


def _prepare(kernel, X, Z):
    kernel._require_resolved()
    dtype = float_dtype(X, Z)
    Zd, aux = kernel._prepare(Z, dtype)
    return dtype, Zd, aux


def iter_kernel_blocks(kernel, X, Z, *, budget: int | None = None) -> Iterator:
    """Yield ``(start, stop, block)`` with block = k(X[start:stop], Z)."""
    dtype, Zd, aux = _prepare(kernel, X, Z)
    n = X.shape[0]
    step = chunk_rows(Z.shape[0], dtype.itemsize, budget, n)
    for s in range(0, n, step):
        e = min(s + step, n)
        yield s, e, kernel._block(X[s:e], Zd, aux, dtype)


def kernel_block(kernel, X, Z, *, out=None, budget: int | None = None) -> np.ndarray:
    """The dense (n_X, n_Z) block k(X, Z), evaluated in row chunks."""
    dtype = float_dtype(X, Z)
    shape = (X.shape[0], Z.shape[0])
    if out is None:
        out = np.empty(shape, dtype=dtype)
    elif out.shape != shape or out.dtype != dtype:
        raise ValueError(f"out must have shape {shape} and dtype {dtype}; got {out.shape}")
    for s, e, B in iter_kernel_blocks(kernel, X, Z, budget=budget):
        out[s:e] = B
    return out


def kernel_product(kernel, X, Z, R, *, out=None, budget: int | None = None) -> np.ndarray:
    """k(X, Z) @ R, with k(X, Z) formed one row chunk at a time.

    ``R`` is (n_Z, r). The result has X's float dtype (float32 stays float32).
    """
    dtype = float_dtype(X, Z)
    R = np.asarray(R, dtype=dtype)
    shape = (X.shape[0], R.shape[1])
    if out is None:
        out = np.empty(shape, dtype=dtype)
    for s, e, B in iter_kernel_blocks(kernel, X, Z, budget=budget):
        np.matmul(B, R, out=out[s:e])
    return out

"""The elementwise part of a Gaussian block, fused, cache-blocked and threaded.

After the GEMM ``G = X (2/b) Zᵀ`` the block needs exp(min(G − xn − zn, 0)). Done as
four whole-array numpy passes this costs about as much as the GEMM itself at
n×m = 7·10⁷ (each pass streams the array through memory, and ``np.exp`` runs on one
core). Here the passes run on row tiles that stay in cache, and the tiles are shared
by a few threads (numpy releases the GIL inside ufunc loops), so the elementwise
work costs a fraction of the GEMM.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

__all__ = [
    "blas_on_one_thread",
    "exp_neg_sqdist_inplace",
    "in_slabs",
    "n_elementwise_threads",
    "sparse_dense_product",
]

_TILE_BYTES = 1 << 19  # 512 KiB per tile: comfortably inside L2
_MIN_PARALLEL = 1 << 20  # entries below which threads cost more than they save
_pool: ThreadPoolExecutor | None = None
_pool_size = 0


_blas_libs: list | None = None


def _blas_controllers() -> list:
    """threadpoolctl's controllers of the loaded BLAS libraries, found once.

    Finding the libraries (``threadpool_info``) costs about 3 ms, once per large
    block; asking a found library for its thread count costs microseconds.
    """
    global _blas_libs
    if _blas_libs is None:
        from threadpoolctl import ThreadpoolController

        _blas_libs = [c for c in ThreadpoolController().lib_controllers if c.user_api == "blas"]
    return _blas_libs


def n_elementwise_threads() -> int:
    """Threads for elementwise work: the BLAS thread count (it is idle meanwhile)."""
    try:
        counts = [int(c.get_num_threads()) for c in _blas_controllers()]
        if counts:
            return max(1, min(counts))
    except Exception:  # pragma: no cover - threadpoolctl always ships with sklearn
        pass
    return max(1, os.cpu_count() or 1)


_blas_lock = threading.Lock()
_blas_holders = 0
_blas_saved: list[int] = []


@contextlib.contextmanager
def blas_on_one_thread():
    """BLAS on one thread while the block runs (for work that runs its own threads,
    each calling BLAS), its thread counts restored after. Safe to enter from several
    threads at once, as dask's threaded scheduler does: the first entry sets one
    thread, the last exit restores the counts it found (``threadpool_limits`` would
    restore per entry, and overlapping entries could leave BLAS on one thread)."""
    global _blas_holders, _blas_saved
    libs = _blas_controllers()
    with _blas_lock:
        if _blas_holders == 0:
            _blas_saved = [int(c.get_num_threads()) for c in libs]
            for c in libs:
                c.set_num_threads(1)
        _blas_holders += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_holders -= 1
            if _blas_holders == 0:
                for c, t in zip(libs, _blas_saved, strict=True):
                    c.set_num_threads(t)


def _get_pool(n: int) -> ThreadPoolExecutor:
    global _pool, _pool_size
    if _pool is None or _pool_size != n:
        if _pool is not None:
            _pool.shutdown(wait=False)
        _pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="lorak-elementwise")
        _pool_size = n
    return _pool


def _tile_pass(G, xn, zn, start, stop, step):
    for s in range(start, stop, step):
        e = min(s + step, stop)
        t = G[s:e]
        t -= xn[s:e, None]
        t -= zn[None, :]
        np.minimum(t, 0, out=t)
        np.exp(t, out=t)


def exp_neg_sqdist_inplace(G: np.ndarray, xn: np.ndarray, zn: np.ndarray) -> np.ndarray:
    """In place: G ← exp(min(G − xn[:, None] − zn[None, :], 0)). Returns G.

    ``G`` is C-contiguous (n, m); ``xn`` (n,), ``zn`` (m,) in G's dtype. The ``min``
    clips the round-off that can make a squared distance slightly negative.
    """
    n, m = G.shape
    if n == 0 or m == 0:
        return G
    step = max(1, _TILE_BYTES // max(1, m * G.itemsize))
    threads = n_elementwise_threads() if G.size >= _MIN_PARALLEL else 1
    if threads <= 1 or n < 2 * step:
        _tile_pass(G, xn, zn, 0, n, step)
        return G
    in_slabs(n, threads, lambda a, b: _tile_pass(G, xn, zn, a, b, step))
    return G


def in_slabs(n: int, threads: int, work) -> None:
    """``work(start, stop)`` on contiguous slabs of the n rows, one per thread, waited for
    (NumPy's ufunc loops and SciPy's sparse products release the GIL)."""
    bounds = np.linspace(0, n, threads + 1).astype(int)
    pool = _get_pool(threads)
    futures = [pool.submit(work, int(a), int(b)) for a, b in itertools.pairwise(bounds) if b > a]
    for f in futures:
        f.result()


def _rows_product(X, D, out, start, stop):
    out[start:stop] = X[start:stop] @ D


def sparse_dense_product(X, D, out=None) -> np.ndarray:
    """X @ D for a CSR matrix X (n × d) and a dense D (d × m), written into ``out`` (a
    C-contiguous n × m array of the result's dtype) or a new array.

    SciPy's sparse product runs on one core but releases the GIL, so the rows are
    split into contiguous slabs, one per thread (the BLAS thread count, as for the
    exponential): each row's values are those of ``X @ D``, computed the same way."""
    n, m = X.shape[0], D.shape[1]
    D = np.ascontiguousarray(D)
    if out is None:
        out = np.empty((n, m), dtype=np.result_type(X.dtype, D.dtype))
    threads = n_elementwise_threads() if n * m >= _MIN_PARALLEL else 1
    if threads <= 1 or n < 2 * threads:
        out[...] = X @ D
        return out
    in_slabs(n, threads, lambda a, b: _rows_product(X, D, out, a, b))
    return out

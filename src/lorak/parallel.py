"""More data than memory: Dask arrays and memory-mapped arrays, chunk by chunk.

Everything that lets lorak run on data that do not fit in memory lives here, so that the
estimators only opt in (:class:`ChunkedRowsMixin`, a base class of the estimators).
Every fitted estimator accepts a dask array in ``transform`` and the prediction methods
(returning a lazy dask array with the same row chunks) and reads a ``numpy.memmap`` in
row chunks of about ``memory_budget`` bytes. Several methods also fit on a dask array,
by passes over its chunks, with the same result as in memory; the methods that need all
rows in memory at once refuse one with a clear error. Which methods do what, how the
passes work and the figures: the user guide, :ref:`guide-scaling`.

For passes of your own, :func:`map_rows`, :func:`reduce_rows`, :func:`row_moments` and
:func:`merge_moments` (the ``combine`` of a :func:`reduce_rows` whose blocks return
:func:`row_moments` of something computed per block, a transform's rows, say)::

    moments = reduce_rows(lambda B: row_moments(est.transform(B)), X,
                          combine=merge_moments, rows=25_000)
"""

from ._chunked import (
    ChunkedRowsMixin,
    is_dask_array,
    is_memmap,
    map_rows,
    merge_moments,
    reduce_rows,
    row_moments,
)

__all__ = [
    "ChunkedRowsMixin",
    "is_dask_array",
    "is_memmap",
    "map_rows",
    "merge_moments",
    "reduce_rows",
    "row_moments",
]

"""More data than memory: Dask arrays and memory-mapped arrays, chunk by chunk.

Everything that lets lorak run on data that do not fit in memory lives here, so that the
estimators only opt in (:class:`ChunkedRowsMixin`). Every fitted estimator accepts a
dask array (lazily) or a ``numpy.memmap`` (in row chunks) in ``transform`` and the
prediction methods; several also fit on a dask array. Which ones, how the passes work
and the figures: the user guide, :ref:`guide-scaling`.

For passes of your own, :func:`map_rows`, :func:`reduce_rows`, :func:`row_moments` and
:func:`merge_moments` (the ``combine`` of a :func:`reduce_rows` whose blocks return
:func:`row_moments` of something computed per block, a transform's rows, say)::

    moments = reduce_rows(lambda B: row_moments(est.transform(B)), X,
                          combine=merge_moments, rows=25_000)
"""

from ._core.chunked import (
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

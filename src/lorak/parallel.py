"""More data than memory: Dask arrays and memory-mapped arrays, chunk by chunk.

Everything that lets lorak run on data that do not fit in memory lives here, so that the
estimators only opt in (:class:`ChunkedRowsMixin`, a base class of the estimators).

Prediction and transform
    Every fitted lorak transformer and estimator accepts a ``dask.array.Array`` in
    ``transform``, ``predict``, ``decision_function`` and ``predict_proba`` and returns a
    lazy dask array with the same row chunks. A ``numpy.memmap`` is read in row chunks
    of about ``memory_budget`` bytes (:func:`lorak.get_config`).

Fitting, where a method touches all rows
    By passes over the row chunks, with the same result as in memory: landmarks
    ``"uniform"`` and ``"kmeans"``, the bandwidth rules, :class:`lorak.Nystroem`, the
    LS-SVM models, factor alignment, :class:`lorak.GeneralizedNystroem` (it needs only
    the labeled rows and the landmarks), :class:`lorak.GraphRegularizedFactor` with its
    anchor graph and the semi-supervised :class:`lorak.SemiSupervisedFactorClassifier`
    and :class:`lorak.SemiSupervisedFactorRegressor` on it (labeled rows gathered to
    memory, no ``transduction_`` stored). Methods that need all rows in memory at once
    refuse a dask array with a clear error instead of computing it silently: incomplete
    Cholesky and CSI, SimpleNPKL, the exact eigendecomposition, the ``"column_norm"``
    landmarks, and the models that keep an n-sized state (kernel k-means, kernel PCA,
    ℓp-MKL). Compute the array first (``X.compute()``) when it fits in memory.

How the passes work (the scheduler, the merged moments) and the figures: the user
guide, :ref:`guide-scaling`. For passes of your own, :func:`map_rows`,
:func:`reduce_rows`, :func:`row_moments` and :func:`merge_moments` (the ``combine`` of a
:func:`reduce_rows` whose blocks return :func:`row_moments` of something computed per
block, a transform's rows, say)::

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

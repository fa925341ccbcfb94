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
      landmarks;
    * :class:`lorak.GraphRegularizedFactor` with its anchor graph (k-means anchors,
      then GᵀLᵖG by reductions over the chunks) and the semi-supervised
      :class:`lorak.SemiSupervisedFactorClassifier` and
      :class:`lorak.SemiSupervisedFactorRegressor` on it: the labeled rows are gathered
      to memory, every other row is read by passes over the chunks, and the training
      rows' predictions are ``predict(X)``, lazily (no ``transduction_`` is stored).

    Methods that need all rows in memory at once refuse a dask array with a clear
    error instead of computing it silently: incomplete Cholesky and CSI (pivoted
    greedy factorizations that revisit every row at every step), SimpleNPKL
    (transductive), the exact eigendecomposition, and the models that keep an n-sized
    state (kernel k-means, kernel PCA, ℓp-MKL).
    Compute the array first (``X.compute()``) when it fits in memory.

With a ``dask.distributed.Client`` active, every computation here runs on its cluster
(Dask's default scheduler); otherwise on the local threaded scheduler. Dask is imported
only when a dask array is passed in (it is an optional dependency: ``lorak[dask]``).

For passes of your own: :func:`map_rows` maps row blocks to row blocks,
:func:`reduce_rows` combines a function of each row block (a tree of partial results on
a dask cluster), :func:`row_moments` gives the count, column means and centred scatter
of the rows of [A₁ A₂ …] in one pass, and :func:`merge_moments` merges two such triples
exactly — the ``combine`` of a :func:`reduce_rows` whose blocks return
:func:`row_moments` of something computed per block (a transform's rows, say)::

    moments = reduce_rows(lambda B: row_moments(est.transform(B)), X,
                          combine=merge_moments, rows=25_000)

The machinery is in ``lorak._chunked`` (a leaf module); each lazy variant of a method
sits beside its in-memory original. This module is the public face of both.
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

"""The estimator base every transformer and model shares: :class:`TransformerBase`, the
checks of new rows (:func:`new_rows`, :func:`validate_new_rows`), the copy of a fit's
record to fitted attributes (:func:`store_record`) and the checks of precomputed kernels
and product matrices (:ref:`guide-internals-base`). Nothing here builds a kernel: the
kernel-factor templates are in ``lorak.estimators._base``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .chunked import ChunkedRowsMixin
from .rows import Rows, resolve_rows

__all__ = [
    "TransformerBase",
    "check_product_matrix",
    "check_symmetric_block",
    "new_rows",
    "refuse_sparse_kernel",
    "store_record",
    "validate_new_rows",
]


def check_symmetric_block(W, dtype, what: str) -> None:
    """Refuse a precomputed kernel whose block ``W`` (landmarks × landmarks, or pivots ×
    pivots) is not symmetric: max|W − Wᵀ| ≤ √eps · max|W|, eps of the kernel's dtype
    (1.5e-8 in float64, 3.5e-4 in float32: far above the round-off of a symmetric
    kernel evaluated in any order, far below a real asymmetry)."""
    W = np.asarray(W, dtype=np.float64)
    if W.size == 0:
        return
    tol = float(np.sqrt(np.finfo(np.dtype(dtype)).eps))
    scale = float(np.max(np.abs(W)))
    gap = float(np.max(np.abs(W - W.T)))
    if gap > tol * scale:
        i, j = np.unravel_index(int(np.argmax(np.abs(W - W.T))), W.shape)
        raise ValueError(
            f"kernel='precomputed' needs a symmetric kernel matrix, but {what} is not: "
            f"max|W − Wᵀ| = {gap:.3g} (at W[{i}, {j}]) against the tolerance "
            f"√eps · max|W| = {tol * scale:.3g}. Pass k(X, X) itself (a kernel is "
            "symmetric: k(x, z) = k(z, x)), or symmetrize it, (K + K.T) / 2"
        )


def refuse_sparse_kernel(K, alternative: str = "") -> None:
    """A TypeError for a sparse matrix given as a precomputed kernel (``alternative``:
    what else the caller takes besides a dense array)."""
    if sp.issparse(K):
        raise TypeError(
            "sparse input is not supported with kernel='precomputed': pass the kernel "
            f"matrix as a dense array{alternative}"
        )


def store_record(estimator, record, *, skip=()) -> None:
    """Copy a fit's result record (a dataclass) to fitted attributes: each field, but
    those in ``skip``, under its own name with a trailing underscore (``C`` → ``C_``).
    The last step of a thin ``fit``: validate, call the method's one entry, store."""
    for f in dataclasses.fields(record):
        if f.name not in skip:
            setattr(estimator, f.name + "_", getattr(record, f.name))


def new_rows(estimator, X, fitted: str) -> Rows:
    """New rows X for a fitted estimator's ``transform``/``predict``, resolved
    (:func:`lorak._core.rows.resolve_rows`): NotFittedError until ``fitted`` is set, then X
    checked against the training X (its features and names), CSR or dense, float32
    kept float32. Rows resolved by the caller are not checked again."""
    check_is_fitted(estimator, fitted)
    return resolve_rows(estimator, X, reset=False)


def validate_new_rows(estimator, X, fitted: str):
    """The validated array of :func:`new_rows`."""
    return new_rows(estimator, X, fitted).data


def check_product_matrix(M, n_components: int) -> np.ndarray:
    """M of ``transform_product(X, M)``: a real matrix with ``n_components`` rows (one
    per factor column), returned as float64; anything else a ValueError that says so."""
    if sp.issparse(M):
        M = M.toarray()
    try:
        A = np.asarray(M)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"M must be a numeric matrix with {n_components} rows; {exc}") from exc
    if A.dtype.kind not in "biuf":
        raise ValueError(
            f"M must be a matrix of real numbers with {n_components} rows; got dtype {A.dtype}"
        )
    if A.ndim != 2 or A.shape[0] != n_components:
        raise ValueError(
            f"M must have {n_components} rows (one per factor column); got shape {A.shape}"
        )
    return A.astype(np.float64, copy=False)


class TransformerBase(
    ChunkedRowsMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator
):
    """The base of lorak's transformers: row methods applied chunk-wise (dask and memmap
    aware), ``n_components_`` output columns named ``<classname><i>``, CSR input."""

    @property
    def _n_features_out(self):
        return self.n_components_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

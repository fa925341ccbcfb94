"""Where the rows of an input live, decided once: :class:`Rows`.

Resolved by :func:`resolve_rows` at the top of ``fit``, ``transform`` or ``predict``;
the kinds and how an estimator hands them down: :ref:`guide-internals-rows`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp

from .array_api import (
    array_api_dispatched,
    array_namespace,
    device_of,
    is_foreign,
    like_input,
    numpy_dtype,
    on_device,
    to_numpy,
)
from .chunked import (
    gather_rows,
    is_dask_array,
    is_memmap,
    lazy_targets,
    map_rows,
    record_n_features,
    validate_lazy,
)
from .validation import validate_data

__all__ = [
    "Rows",
    "hand_down",
    "host_targets",
    "refuse_device",
    "resolve_rows",
    "take_rows",
    "takes_resolved_input",
]

#: The default of :func:`resolve_rows`'s y: no targets to validate.
NO_TARGETS = "no_validation"


@dataclass(frozen=True, eq=False)
class Rows:
    """The validated rows of one input and where they live.

    Attributes
    ----------
    data : the rows, validated: a float32/float64 NumPy array, CSR matrix, dask array
        (checked chunk by chunk as it is computed) or array of ``xp``.
    kind : "numpy", "sparse", "memmap", "dask" or "array_api" (see the module).
    source : the input as given: a memmap or dask array is gathered from it.
    xp, device : the array API namespace and device of an "array_api" input, else None.
    keeps_features : whether :meth:`features` keeps each factor's result (the labeled
        rows of a fit: every step that reads their features gets the same array).
    """

    data: object
    kind: str
    source: object = None
    xp: object = None
    device: object = None
    keeps_features: bool = False
    _kept: dict = field(default_factory=dict, repr=False)

    # ------------------------------------------------------------ what they are
    @property
    def shape(self) -> tuple:
        return tuple(self.data.shape)

    @property
    def n_rows(self) -> int:
        return int(self.data.shape[0])

    @property
    def dtype(self) -> np.dtype:
        """The rows' float dtype as a NumPy dtype (float32 or float64)."""
        if self.xp is not None:
            return numpy_dtype(self.xp, self.data.dtype)
        return np.dtype(np.float32 if self.data.dtype == np.float32 else np.float64)

    @property
    def is_lazy(self) -> bool:
        """A dask array: results over all rows are lazy, a fit passes over the chunks."""
        return self.kind == "dask"

    @property
    def is_chunked(self) -> bool:
        """Read in chunks (a dask array or a memmap): nothing n × m is formed."""
        return self.kind in ("dask", "memmap")

    @property
    def on_device(self) -> bool:
        """Computed on in their own array API namespace, on their own device."""
        return self.kind == "array_api"

    # ------------------------------------------------------------ reading rows
    def take(self, idx, *, what: str | None = None) -> Rows:
        """The rows ``idx`` in memory (in the rows' namespace, on their device).

        A dask array computes only the chunks that hold them and a memmap reads only
        them; a row with NaN or infinity among them is named
        (:func:`lorak._core.chunked.gather_rows`, ``what`` saying which rows they are)."""
        if self.is_chunked:
            named = {} if what is None else {"what": what}
            return _block(gather_rows(self.source, idx, **named), self)
        if self.on_device:
            at = self.xp.asarray(np.asarray(idx, dtype=np.int64), device=self.device)
            return _block(self.xp.take(self.data, at, axis=0), self)
        return _block(self.data[idx], self)

    def labeled(self, idx) -> Rows:
        """The labeled rows ``idx``, gathered once per fit: asked again for the same
        rows (by the factor the fit hands these Rows to), the same block comes back, and
        it keeps the features computed from it."""
        kept = self._labeled_kept(idx)
        return kept if kept is not None else self._keep_labeled(idx, self.take(idx))

    def labeled_with(self, idx, sample, *, what: str) -> tuple:
        """(the labeled rows ``idx`` as :meth:`labeled` gives them, the rows ``sample``
        as :meth:`take` does): a dask array read once for both, unless the labeled rows
        were gathered already."""
        if not self.is_lazy or self._labeled_kept(idx) is not None:
            return self.labeled(idx), self.take(sample, what=what)
        idx = np.asarray(idx)
        both = gather_rows(
            self.source, np.concatenate([idx, sample]), what=f"the labeled rows and {what}"
        )
        labeled = self._keep_labeled(idx, _block(both[: idx.size], self))
        return labeled, _block(both[idx.size :], self)

    def _labeled_kept(self, idx):
        kept = self._kept.get("labeled")
        return kept[1] if kept is not None and np.array_equal(kept[0], idx) else None

    def _keep_labeled(self, idx, block):
        block = replace(block, keeps_features=True, _kept={})
        self._kept["labeled"] = (np.asarray(idx), block)
        return block

    def features(self, factor):
        """``factor.transform`` of these rows: handed as they are to a factor that takes
        resolved input (not validated again); lazily, with the rows' chunks, for a dask
        array. Kept per factor when ``keeps_features``."""
        if not self.keeps_features:
            return self._features(factor)
        key = ("features", id(factor))
        if key not in self._kept:
            self._kept[key] = (factor, self._features(factor))  # the factor kept alive
        return self._kept[key][1]

    def _features(self, factor):
        if not takes_resolved_input(factor):
            return factor.transform(self.data)
        if self.is_lazy:
            return self.map(factor, "transform")
        return factor.transform(self)

    def block_transform(self, factor):
        """A function of a block of these rows giving ``factor.transform`` of it (for
        the passes over the rows), the block handed on as validated rows when the
        factor takes them. Picklable: it travels to dask workers."""
        if not takes_resolved_input(factor):
            return factor.transform
        return _RowMethod(factor, "transform").on_block

    def map(self, estimator, method: str):
        """``estimator.<method>`` (a row method of an estimator that takes resolved
        input) of these rows, as a row method reads them: lazily with the chunks of a
        dask array (the estimator shipped once per worker), in chunks of the memory
        budget for a memmap, all at once otherwise."""
        call = _RowMethod(estimator, method)
        if self.is_lazy:
            return map_rows(call.on_block, self.data, _call=(call, "on_block", (), {}))
        if self.kind == "memmap":
            return map_rows(call.on_block, self.data)
        return getattr(estimator, method)(self)

    def mean_sq_norm(self, factor) -> float:
        """The mean squared row norm of ``factor.transform`` over these rows, by one
        pass: lazily per chunk on dask, in row chunks otherwise (nothing n × m)."""
        if self.is_lazy:
            Q = self.features(factor)
            return float((Q * Q).sum(axis=1).mean().compute())
        transform = self.block_transform(factor)
        return float(np.mean(map_rows(functools.partial(_sq_norms, transform), self.data)))

    # ------------------------------------------------------------ fitted arrays
    def like(self, *arrays) -> tuple:
        """``arrays`` in the rows' namespace, on their device, in their float dtype
        (:func:`lorak._core.array_api.like_input`)."""
        return like_input(self.data, *arrays)

    def put(self, *arrays) -> tuple:
        """Host arrays moved to the rows' device (dtype kept); as they are for host
        rows."""
        if not self.on_device:
            return arrays
        return tuple(on_device(A, self.xp, self.device) for A in arrays)

    def operands(self, components, normalization) -> tuple:
        """A fitted factor's (components, normalization) for computing on these rows:
        as they are on the host (the normalization in the rows' dtype); moved to the
        rows' device and dtype, or copied from a fit on a device to the host, otherwise."""
        if not (self.on_device or is_foreign(components) or is_foreign(normalization)):
            return components, normalization.astype(self.data.dtype, copy=False)
        return self.like(components, normalization)

    # ------------------------------------------------------------ what they cannot do
    def refuse_lazy(self, message: str) -> None:
        """A ``TypeError`` with ``message`` when the rows are a dask array."""
        if self.is_lazy:
            raise TypeError(message)

    def refuse_device(self, message: str) -> None:
        """A ``TypeError`` with ``message`` when the rows are on an array API device."""
        if self.on_device:
            raise TypeError(message)

    def input_for(self, estimator):
        """X for ``estimator``: these Rows when it takes resolved input, else the
        validated array."""
        return self if takes_resolved_input(estimator) else self.data


class _RowMethod:
    """``estimator.<method>`` of blocks of validated rows, handed on as :class:`Rows`."""

    def __init__(self, estimator, method: str):
        self.estimator, self.method = estimator, method

    def on_block(self, block):
        return getattr(self.estimator, self.method)(_block(block))


def _sq_norms(transform, block):
    Q = transform(block)
    Q = Q.toarray() if sp.issparse(Q) else Q
    return np.einsum("ij,ij->i", Q, Q, dtype=np.float64)


def _block(data, parent: Rows | None = None) -> Rows:
    """Rows of ``data``, validated already (a block of validated rows), in memory."""
    if sp.issparse(data):
        return Rows(data, "sparse", data)
    if is_foreign(data):
        xp = parent.xp if parent is not None else array_namespace(data)
        return Rows(data, "array_api", data, xp, device_of(data))
    return Rows(data, "numpy", data)


def takes_resolved_input(estimator) -> bool:
    """Whether ``estimator`` declares ``takes_resolved_input``: its ``fit``,
    ``transform`` and ``transform_product`` take :class:`Rows` for X (and ``fit`` a
    :class:`lorak._core.targets.SemiSupervisedTargets` for y)."""
    return bool(getattr(estimator, "takes_resolved_input", False))


def hand_down(estimator, rows: Rows, targets=None) -> tuple:
    """(X, y) for ``estimator.fit``: ``rows`` and ``targets`` themselves for an
    estimator that takes resolved input, else the validated array and y as coded."""
    if takes_resolved_input(estimator):
        return rows, targets
    return rows.data, None if targets is None else targets.coded


def resolve_rows(estimator, X, y=NO_TARGETS, *, reset: bool = True, **kwargs):
    """X validated for ``estimator`` and its kind resolved: a :class:`Rows`, or
    ``(rows, y)`` when y is given (validated with X, or brought into memory beside a
    dask X).

    Dense or CSR, float32 kept float32, integers made float64; ``n_features_in_`` set or
    checked. A dask X is checked lazily; a :class:`Rows` is returned as it is.
    """
    has_y = not (isinstance(y, str) and y == NO_TARGETS)
    if isinstance(X, Rows):
        record_n_features(estimator, X.shape[1], reset=reset)
        return (X, y) if has_y else X
    if is_dask_array(X):
        rows = Rows(validate_lazy(estimator, X, reset=reset), "dask", X)
        return (rows, lazy_targets(y, rows.n_rows)) if has_y else rows
    out = validate_data(
        estimator, X, y, accept_sparse="csr", dtype=[np.float64, np.float32], reset=reset, **kwargs
    )
    data, y = out if has_y else (out, y)
    rows = replace(_block(data), source=X)
    if is_memmap(X):
        rows = replace(rows, kind="memmap")
    return (rows, y) if has_y else rows


def host_targets(y):
    """y on the host: a dask y computed, an array API y copied to NumPy, any other y as
    it is."""
    if is_dask_array(y):
        return y.compute()
    return to_numpy(y) if is_foreign(y) else y


def refuse_device(X, message: str) -> None:
    """A ``TypeError`` with ``message`` when X (not validated: a path that validates it
    itself) would be computed on in its own array API namespace."""
    if array_api_dispatched(X):
        raise TypeError(message)


def take_rows(X, idx):
    """X[idx] in memory (a dask array computes only those rows; an array API X keeps
    them in its namespace, on its device)."""
    if is_foreign(X):
        xp = array_namespace(X)
        return xp.take(X, xp.asarray(np.asarray(idx, dtype=np.int64), device=device_of(X)), axis=0)
    P = X[idx]
    return P.compute() if hasattr(P, "compute") and hasattr(P, "chunks") else P  # dask

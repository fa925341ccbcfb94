"""A kernel matrix given by its columns on demand (graph, string, or any user kernel).

Pivoted factorizations read only diag(K) and one column per step: :class:`KernelColumns`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["KernelColumns"]


class KernelColumns:
    """The n × n training kernel K as ``diag`` plus ``columns(idx) -> K[:, idx]``.

    Pass it as X to ``fit`` of a factor with ``kernel="precomputed"`` (``lorak.
    IncompleteCholesky``, ``lorak.CSI``): only the pivots' columns are computed, O(r n)
    kernel evaluations for a rank-r factor.

    Parameters
    ----------
    columns : callable
        ``columns(idx)`` with ``idx`` a 1-D integer array returns the (n, len(idx))
        block K[:, idx] (a 1-D result is read as one column).
    diag : (n,) array-like
        The diagonal k(xᵢ, xᵢ) (it fixes n).

    Examples
    --------
    >>> import numpy as np
    >>> from lorak.kernels import KernelColumns
    >>> X = np.arange(6.0).reshape(3, 2)
    >>> K = KernelColumns(lambda idx: X @ X[idx].T, diag=(X * X).sum(axis=1))
    >>> K.shape, K.column(1).tolist()
    ((3, 3), [3.0, 13.0, 23.0])
    """

    def __init__(self, columns, diag):
        if not callable(columns):
            raise TypeError(f"columns must be callable: idx -> K[:, idx]; got {columns!r}")
        d = np.asarray(diag, dtype=np.float64)
        if d.ndim != 1 or d.size == 0:
            raise ValueError(f"diag must be a non-empty 1-D array; got shape {d.shape}")
        if not np.all(np.isfinite(d)):
            raise ValueError("diag contains NaN or infinity")
        self.columns = columns
        self.diag = d

    @property
    def shape(self):
        n = self.diag.shape[0]
        return (n, n)

    def block(self, idx) -> np.ndarray:
        """K[:, idx] as an (n, len(idx)) float64 array, checked."""
        idx = np.atleast_1d(np.asarray(idx, dtype=np.intp))
        B = np.asarray(self.columns(idx), dtype=np.float64)
        if B.ndim == 1:
            B = B[:, None]
        n = self.shape[0]
        if B.shape != (n, idx.size):
            raise ValueError(
                f"columns(idx) must return an array of shape ({n}, {idx.size}); got {B.shape}"
            )
        if not np.all(np.isfinite(B)):
            raise ValueError("columns(idx) returned NaN or infinity")
        return B

    def column(self, i) -> np.ndarray:
        """K[:, i] (n,)."""
        return self.block([i])[:, 0]

    def __repr__(self):
        return f"KernelColumns(n={self.shape[0]})"

"""The landmark record and row access shared by every strategy module of this package."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Landmarks", "take_rows"]


@dataclass(frozen=True)
class Landmarks:
    """Selected landmarks.

    Attributes
    ----------
    points : (m, d) array (CSR when the rows of a sparse X were picked)
    indices : (m,) int array or None
        Rows of X the points were taken from, when they are data rows.
    weights : (m,) array or None
        Column scaling of the Nyström reconstruction (Drineas–Mahoney), or None.
    info : dict
        Strategy-specific diagnostics (e.g. k-means inertia and iterations).
    """

    points: object
    indices: np.ndarray | None = None
    weights: np.ndarray | None = None
    info: dict | None = None

    @property
    def n_landmarks(self) -> int:
        return self.points.shape[0]


def take_rows(X, idx):
    """X[idx] in memory (a dask array computes only those rows; an array API X keeps
    them in its namespace, on its device)."""
    from .._array_api import array_namespace, device_of, is_foreign

    if is_foreign(X):
        xp = array_namespace(X)
        return xp.take(X, xp.asarray(np.asarray(idx, dtype=np.int64), device=device_of(X)), axis=0)
    P = X[idx]
    return P.compute() if hasattr(P, "compute") and hasattr(P, "chunks") else P  # dask

"""The landmark record shared by every strategy module of this package (their row
access, ``take_rows``, is in ``lorak._core.rows``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Landmarks"]


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

"""Exact top eigenpairs of a dense kernel matrix (the optimal rank-m factor)."""

from __future__ import annotations

import numpy as np
from scipy.linalg import eigh

__all__ = ["top_eigenpairs"]


def top_eigenpairs(K: np.ndarray, n_components: int):
    """Return ``(eigenvalues, eigenvectors)`` of the top ``n_components`` of K, decreasing.

    Eigenvalues ≤ 0 (round-off of a PSD matrix) are dropped. ``K`` may be overwritten.
    """
    n = K.shape[0]
    lam, U = eigh(
        K,
        subset_by_index=[n - n_components, n - 1],
        driver="evr",
        overwrite_a=True,
        check_finite=False,
    )
    lam = lam[::-1]
    U = U[:, ::-1]
    keep = lam > n * np.finfo(K.dtype).eps * max(lam[0], 0)
    return lam[keep], U[:, keep]

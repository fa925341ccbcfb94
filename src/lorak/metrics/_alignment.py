"""Kernel alignment (Cristianini et al. 2002) and centered alignment (Cortes et al. 2012),
for factors through small Gram products (⟨G₁G₁ᵀ, G₂G₂ᵀ⟩ = ‖G₁ᵀG₂‖²_F): never n × n.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._core.validation import check_square_matrix

__all__ = ["alignment", "centered_alignment", "factor_alignment", "ideal_kernel_factor"]


def _center_matrix(K):
    K = np.asarray(K, dtype=np.float64)
    return K - K.mean(axis=0, keepdims=True) - K.mean(axis=1, keepdims=True) + K.mean()


def alignment(K1, K2, *, centered=False) -> float:
    """Alignment of two dense kernel matrices (in [−1, 1]; [0, 1] for PSD pairs)."""
    K1 = check_square_matrix(K1, "K1")
    K2 = check_square_matrix(K2, "K2")
    if K1.shape != K2.shape:
        raise ValueError(f"K1 and K2 differ in shape: {K1.shape} vs {K2.shape}")
    if centered:
        K1, K2 = _center_matrix(K1), _center_matrix(K2)
    den = np.linalg.norm(K1) * np.linalg.norm(K2)
    return float(np.sum(K1 * K2) / den) if den > 0 else 0.0


def centered_alignment(K1, K2) -> float:
    """Centered alignment of two dense kernel matrices."""
    return alignment(K1, K2, centered=True)


def factor_alignment(G1, G2, *, centered=False) -> float:
    """Alignment of K₁ = G₁G₁ᵀ and K₂ = G₂G₂ᵀ from the factors, O(n m₁ m₂).

    Dask or memmap factors are reduced chunk by chunk (:func:`lazy_factor_alignment`).
    """
    from .._core.chunked import is_dask_array, is_memmap

    if any(is_dask_array(G) or is_memmap(G) for G in (G1, G2)):
        return lazy_factor_alignment(G1, G2, centered=centered)
    for name, G in (("G1", G1), ("G2", G2)):
        if sp.issparse(G):
            raise TypeError(f"{name} is a sparse matrix; factor_alignment needs dense factors")
    G1 = np.asarray(G1, dtype=np.float64)
    G2 = np.asarray(G2, dtype=np.float64)
    if G1.ndim != 2 or G2.ndim != 2 or G1.shape[0] != G2.shape[0]:
        raise ValueError(
            f"G1 and G2 must be 2-D with the same number of rows; got {G1.shape}, {G2.shape}"
        )
    for name, G in (("G1", G1), ("G2", G2)):
        if not np.all(np.isfinite(G)):
            raise ValueError(f"{name} contains NaN or inf")
    if centered:
        G1 = G1 - G1.mean(axis=0)
        G2 = G2 - G2.mean(axis=0)
    cross = np.linalg.norm(G1.T @ G2) ** 2
    n1 = np.linalg.norm(G1.T @ G1)
    n2 = np.linalg.norm(G2.T @ G2)
    return float(cross / (n1 * n2)) if n1 > 0 and n2 > 0 else 0.0


def ideal_kernel_factor(y) -> np.ndarray:
    """One-hot Y (n × c) with Y Yᵀ the ideal kernel: 1 where labels agree, else 0."""
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D; got shape {y.shape}")
    if y.size == 0:
        raise ValueError("y is empty: expected one class label per row")
    if y.dtype.kind in "fc" and not np.all(np.isfinite(y)):
        raise ValueError(
            "y contains NaN or infinity; give a class label for every row (NaN is not "
            "equal to itself, so each NaN would become a class of its own)"
        )
    classes, inv = np.unique(y, return_inverse=True)
    Y = np.zeros((y.shape[0], classes.size))
    Y[np.arange(y.shape[0]), inv] = 1.0
    return Y


def lazy_factor_alignment(G1, G2, *, centered=False) -> float:
    """:func:`factor_alignment` of dask or memmap factors by one reduction over the rows.

    The merged centred moments of [G₁ G₂] give G₁ᵀG₂, G₁ᵀG₁ and G₂ᵀG₂ (uncentred by
    adding n μμᵀ back); no n × n array and no row kept between chunks.
    """
    from .._core.chunked import row_moments

    if G1.shape[0] != G2.shape[0]:
        raise ValueError(f"G1 and G2 must have the same number of rows; got {G1.shape}, {G2.shape}")
    m1 = G1.shape[1]
    n, mean, S = row_moments(G1, G2)
    if not centered:
        S = S + n * np.outer(mean, mean)
    cross = np.linalg.norm(S[:m1, m1:]) ** 2
    n1 = np.linalg.norm(S[:m1, :m1])
    n2 = np.linalg.norm(S[m1:, m1:])
    return float(cross / (n1 * n2)) if n1 > 0 and n2 > 0 else 0.0

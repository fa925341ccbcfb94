"""Pivoted incomplete Cholesky decomposition (Fine & Scheinberg 2001; Bach & Jordan 2005).

K ≈ G Gᵀ one column per step, pivoting on the largest residual diagonal: O(r² n) time,
O(r n) memory. The steps and the blocked kernel columns: :ref:`guide-cholesky`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.linalg import solve_triangular

__all__ = ["ICDResult", "incomplete_cholesky", "pivot_transform_matrix"]


@dataclass
class ICDResult:
    G: np.ndarray  # (n, r), Fortran order
    pivots: np.ndarray  # (r,) row indices in the order chosen
    residual_trace: np.ndarray  # (r + 1,) tr(K − G_k G_kᵀ) / tr(K), k = 0..r
    converged: bool  # True when stopped by tol (or exact rank), False at max_rank


def incomplete_cholesky(
    diag: np.ndarray,
    column: Callable[[int], np.ndarray],
    max_rank: int,
    *,
    tol: float = 0.0,
    dtype=np.float64,
    columns: Callable[[np.ndarray], np.ndarray] | None = None,
    block: int = 32,
) -> ICDResult:
    """Pivoted incomplete Cholesky from ``diag`` = diag(K) and ``column(i)`` = K(:, i).

    Stops after ``max_rank`` columns, once tr(K − GGᵀ) ≤ tol · tr(K), or when the largest
    residual diagonal is numerically zero (the factor is then exact).

    ``columns(idx)``, optional, returns K(:, idx): kernel columns are then computed
    ``block`` at a time (:ref:`guide-cholesky`), with the same pivots.
    """
    d = np.array(diag, dtype=np.float64)
    n = d.shape[0]
    max_rank = min(int(max_rank), n)
    G = np.zeros((n, max_rank), dtype=dtype, order="F")
    pivots = np.empty(max_rank, dtype=np.intp)
    total = float(d.sum())
    if not total > 0:
        raise ValueError("diag(K) sums to zero: the kernel is zero on the data")
    floor = n * np.finfo(dtype).eps * float(d.max())
    trace = [1.0]
    converged = False
    block = max(1, min(int(block), n))
    kept: dict[int, np.ndarray] = {}  # pivot candidates' kernel columns, computed ahead
    k = 0
    while k < max_rank:
        i = int(np.argmax(d))
        di = d[i]
        if di <= floor:
            converged = True
            break
        if columns is None or block == 1:
            col = np.asarray(column(i), dtype=np.float64)
            if k:
                col = col - G[:, :k] @ G[i, :k].astype(np.float64)
        else:
            entry = kept.pop(i, None)
            if entry is None:
                kept = _ahead(columns, d, i, block, G, k)
                entry = kept.pop(i)
            col, k0 = entry
            if k > k0:  # the columns added since the block was updated
                col = col - G[:, k0:k] @ G[i, k0:k].astype(np.float64)
        g = col / np.sqrt(di)
        g[pivots[:k]] = 0.0  # exact zeros at earlier pivots (round-off otherwise)
        G[:, k] = g
        pivots[k] = i
        d -= g * g
        d[i] = 0.0
        np.maximum(d, 0.0, out=d)
        k += 1
        trace.append(float(d.sum()) / total)
        if trace[-1] <= tol:
            converged = True
            break
    if k == n:
        converged = True
    return ICDResult(
        G=G[:, :k].copy(order="F"),
        pivots=pivots[:k].copy(),
        residual_trace=np.asarray(trace),
        converged=converged,
    )


def _ahead(columns, d, i, block, G, k):
    """Kernel columns of pivot ``i`` and of the other largest residual diagonals, with
    the first ``k`` columns of the factor already subtracted (one GEMM for the block):
    ``{row: (column, k)}``."""
    top = np.argpartition(-d, block - 1)[:block] if block < d.size else np.arange(d.size)
    top = top[d[top] > 0]
    if i not in top:
        top = np.append(top[: block - 1], i)
    B = np.asarray(columns(top))
    if B.shape != (d.size, top.size):
        raise ValueError(
            f"columns(idx) must return an array of shape ({d.size}, {top.size}); got {B.shape}"
        )
    B = np.array(B, dtype=np.float64, order="F")
    if k:
        B -= G[:, :k].astype(np.float64) @ G[top, :k].astype(np.float64).T
    return {int(t): (B[:, j], k) for j, t in enumerate(top)}


def pivot_transform_matrix(G: np.ndarray, pivots: np.ndarray) -> np.ndarray:
    """R = L⁻ᵀ with L = G(pivots, :), so that new rows are k(x, X_pivots) R."""
    L = np.asarray(G[pivots, :], dtype=np.float64)
    r = L.shape[0]
    Linv = solve_triangular(L, np.eye(r), lower=True, check_finite=False)
    return np.ascontiguousarray(Linv.T)

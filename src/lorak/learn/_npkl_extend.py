"""Out-of-sample extension of a SimpleNPKL embedding to new rows (pure math).

``"graph"`` (:func:`graph_extension`) and ``"ridge"`` (:func:`ridge_map`), both O(n)
memory: :ref:`guide-npkl-extension`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = [
    "RIDGE_EXTENSION_ALPHA",
    "RIDGE_EXTENSION_LANDMARKS",
    "extension_eigenvalues",
    "graph_extension",
    "ridge_map",
]

#: ``extension="ridge"`` of :class:`lorak.SimpleNPKL`: uniform landmarks of the RBF
#: Nyström features Φ (all training rows when there are fewer).
RIDGE_EXTENSION_LANDMARKS = 200
#: ``extension="ridge"`` of :class:`lorak.SimpleNPKL`: the relative ridge α of
#: :func:`ridge_map`.
RIDGE_EXTENSION_ALPHA = 1e-2


def extension_eigenvalues(A, V: np.ndarray) -> np.ndarray:
    """w_c = v_cᵀ A v_c / v_cᵀ v_c for each column of V.

    ``A`` is the sparse A = W_T − L of the fit (O(n·k + #pairs) entries,
    :func:`lorak.learn.constraint_operator`). The columns of V are eigenvectors of A,
    so these Rayleigh quotients are its eigenvalues (> 0).
    """
    if V.shape[1] == 0:
        return np.zeros(0)
    AV = A @ V
    num = np.einsum("ij,ij->j", V, AV)
    den = np.einsum("ij,ij->j", V, V)
    return num / den


def graph_extension(
    neighbors: np.ndarray,
    V: np.ndarray,
    degrees: np.ndarray,
    eigenvalues: np.ndarray,
    *,
    row_degrees: np.ndarray | None = None,
) -> np.ndarray:
    """The Nyström extension of V through the kNN graph.

    Parameters
    ----------
    neighbors : int array (m, k)
        For each new row, the indices of its k nearest training rows (S_xj = 1).
    V : (n, r) the training embedding.
    degrees : (n,) degrees d_j of the training graph (rows with d_j = 0 contribute 0).
    eigenvalues : (r,) the eigenvalues w of A for the columns of V.
    row_degrees : (m,), optional
        d_x of the new rows (default: k, the number of neighbours given).

    Returns
    -------
    (m, r) the extended embedding; O(m·k·r) time, O(m·r) memory beyond the inputs.
    """
    neighbors = np.asarray(neighbors, dtype=np.int64)
    m, k = neighbors.shape
    inv_sqrt_d = np.zeros(degrees.shape[0])
    pos = degrees > 0
    inv_sqrt_d[pos] = 1.0 / np.sqrt(degrees[pos])
    dx = np.full(m, float(k)) if row_degrees is None else np.asarray(row_degrees, float)
    out = np.zeros((m, V.shape[1]))
    for a in range(k):  # k is small: one gather per neighbour rank
        j = neighbors[:, a]
        out += V[j] * inv_sqrt_d[j, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(dx > 0, 1.0 / np.sqrt(dx), 0.0)
    return out * scale[:, None] / (1.0 + eigenvalues)[None, :]


def ridge_map(Phi: np.ndarray, V: np.ndarray, alpha: float) -> np.ndarray:
    """W = (ΦᵀΦ + α·I)⁻¹ Φᵀ V, the ridge map from features Φ (n × m) to V (n × r).

    α is relative: the ridge is α·tr(ΦᵀΦ)/m, so that it does not depend on the scale
    of Φ. O(n·m + m²) memory.
    """
    G = Phi.T @ Phi
    m = G.shape[0]
    ridge = float(alpha) * float(np.trace(G)) / max(m, 1)
    G[np.diag_indices_from(G)] += ridge
    rhs = Phi.T @ V
    return np.linalg.solve(G, rhs) if not sp.issparse(G) else np.linalg.solve(G.toarray(), rhs)

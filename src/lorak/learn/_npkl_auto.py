"""SimpleNPKL's automatic C and its degenerate-kernel check (pure math).

``C="auto"`` sets C = 0.7 / λ_max(T); :func:`kernel_degeneracy` flags a collapsed
kernel (why: :ref:`"Choosing C" <guide-npkl-auto>`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from scipy.sparse.linalg import ArpackNoConvergence, eigsh

__all__ = [
    "AUTO_C_STEPS",
    "AUTO_SCALE",
    "DEGENERATE_SHARE",
    "Degeneracy",
    "DegenerateKernelWarning",
    "auto_C",
    "constraint_spectral_radius",
    "kernel_degeneracy",
]

#: A kernel whose trace lies for more than this share in constraint-only directions is
#: degenerate (see the module docstring).
DEGENERATE_SHARE = 0.5
#: ``C="auto"`` is AUTO_SCALE / λ_max(T).
AUTO_SCALE = 0.7
#: Factors on the auto C tried in turn while the learned kernel is zero (A has no
#: positive eigenvalue: no direction supported by the graph gains from the
#: constraints). The last, 4·0.7 = 2.8 > 2 ≥ λ_max(L), always gives a nonzero kernel:
#: T's top eigenvector u has uᵀAu = 2.8 − uᵀLu > 0.
AUTO_C_STEPS = (1.0, math.sqrt(2.0), 2.0, 2.0 * math.sqrt(2.0), 4.0)
# below this many constrained rows a dense eigen-solve of T is used
_DENSE_ROWS = 400
# uᵀWu counts as above 1 beyond this round-off margin (at C = 1/λ_max(T) exactly, T's
# top eigenvector sits at 1)
_Q_TOL = 1e-9


class DegenerateKernelWarning(UserWarning):
    """A learned SimpleNPKL kernel lies mostly in constraint-only directions."""


def _weighted_constraint_matrix(pairs: np.ndarray, weights: np.ndarray, n: int):
    rows = np.concatenate([pairs[:, 0], pairs[:, 1]])
    cols = np.concatenate([pairs[:, 1], pairs[:, 0]])
    w = np.asarray(weights, dtype=np.float64)
    return sp.csr_matrix((np.concatenate([w, w]), (rows, cols)), shape=(n, n))


def constraint_spectral_radius(
    pairs: np.ndarray, signs: np.ndarray, *, rng: np.random.Generator | None = None
) -> float:
    """λ_max(T), the largest eigenvalue of the symmetric ±1 constraint matrix (eq. 1).

    Computed on the rows a constraint touches (dense, or Lanczos when there are many);
    ≥ 1 for any non-empty set.
    """
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    if pairs.shape[0] == 0:
        raise ValueError("the constraint matrix is empty: at least one pair is needed")
    touched, local = np.unique(pairs, return_inverse=True)
    local = local.reshape(-1, 2)
    m = touched.size
    T = _weighted_constraint_matrix(local, signs, m)
    if m <= _DENSE_ROWS:
        w = scipy.linalg.eigh(T.toarray(), eigvals_only=True, subset_by_index=(m - 1, m - 1))
        return float(w[-1])
    rng = np.random.default_rng(0) if rng is None else rng
    try:
        w = eigsh(T, k=1, which="LA", v0=rng.standard_normal(m), return_eigenvectors=False)
    except ArpackNoConvergence as exc:  # pragma: no cover - ±1 matrices converge fast
        if not len(exc.eigenvalues):
            raise
        w = exc.eigenvalues
    return float(np.max(w))


def auto_C(pairs: np.ndarray, signs: np.ndarray, *, rng=None, scale: float = AUTO_SCALE) -> float:
    """``C="auto"``: ``scale`` / λ_max(T) (why: :ref:`the user guide <guide-npkl-auto>`)."""
    return float(scale) / constraint_spectral_radius(pairs, signs, rng=rng)


@dataclass(frozen=True)
class Degeneracy:
    """Diagnostics of a learned kernel K = V Vᵀ (:func:`kernel_degeneracy`).

    Attributes
    ----------
    constraint_share : float
        Share of tr(K) in eigenvectors u with uᵀWu > 1 (constraint-only directions).
    smoothness : float
        tr(LK)/tr(K) ∈ [0, 2]: the kNN graph's mean roughness of K (0: constant on
        connected components; ≈ 1: no graph structure).
    rank : int
    degenerate : bool
        Zero kernel, or ``constraint_share`` > :data:`DEGENERATE_SHARE`.
    """

    constraint_share: float
    smoothness: float
    rank: int
    degenerate: bool


def kernel_degeneracy(L, V: np.ndarray, pairs: np.ndarray, weights: np.ndarray) -> Degeneracy:
    """How much of K = V Vᵀ lives in directions that the constraints alone make positive.

    ``V`` has orthogonal columns (V = U diag(√λ), as SimpleNPKL returns it); ``weights``
    are the constraint weights of the learned A (C·T_ij for the linear loss, α_ij T_ij
    for the square hinge), one per unordered pair.
    """
    V = np.asarray(V, dtype=np.float64)
    r = V.shape[1]
    if r == 0:
        return Degeneracy(1.0, 0.0, 0, True)
    lam = np.einsum("ij,ij->j", V, V)
    total = float(lam.sum())
    if not total > 0:
        return Degeneracy(1.0, 0.0, 0, True)
    U = V / np.sqrt(np.where(lam > 0, lam, 1.0))
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    w = np.asarray(weights, dtype=np.float64)
    # uᵀWu = 2 Σ_pairs w_p u_i u_j, per column
    q = 2.0 * np.einsum("p,pj,pj->j", w, U[pairs[:, 0]], U[pairs[:, 1]])
    share = float(lam[q > 1.0 + _Q_TOL].sum()) / total
    smooth = float(np.einsum("ij,ij->", V, L @ V)) / total
    return Degeneracy(share, smooth, int(r), bool(share > DEGENERATE_SHARE))

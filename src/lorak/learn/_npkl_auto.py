"""SimpleNPKL's automatic C and its degenerate-kernel check (pure math).

This is part of the math of :class:`lorak.SimpleNPKL`
(estimators/_simple_npkl).

The rule
--------
With T the symmetric constraint matrix (eq. 1) and L = I − N the normalized Laplacian
of the kNN graph (N = D^{-1/2} S D^{-1/2}), the linear loss learns K ∝ A₊ with

    A = C·T − L = N − (I − C·T).

``C="auto"`` sets **C = 0.7 / λ_max(T)**: 70 % of the largest C with C·T ⪯ I. At
C ≤ 1/λ_max(T), I − C·T ⪰ 0, so every direction u with uᵀAu > 0 has uᵀNu > 0: K only
holds directions that the kNN graph itself supports. A vector localized on
constrained points that are not graph neighbours (uᵀNu = 0) can no longer be positive
— which is exactly the collapse of larger C: A₊ fills with eigenvectors living on the
constrained pairs (eigenvalue ≈ C·uᵀTu − 1), the learned kernel stops propagating the
constraints to the other rows, and kernel k-means on it falls to chance. The 30 %
margin keeps out the directions that sit just above the bound with little graph
support (bumps around one constrained pair and its neighbours), which compete with the
class-scale directions when constraints are sparse.

The rule is scale-free (L has a unit diagonal whatever the units of X; T is ±1) and
adapts to the amount of side information: λ_max(T) grows with the number of
constraints per row (a point with d constraints gives λ_max(T) ≥ √d), so C shrinks
as constraints pile up on the same rows. λ_max(T) ≥ 1 for any non-empty constraint
set, so C ≤ 0.7.

The margin's reason: on the six UCI sets of SimpleNPKL's Table 2, at three constraint
densities, c = 0.7 never lost to k-means on the raw features, where c = 1 sometimes did
and larger c collapsed; with dense constraints it gives up points to the best C picked
by the truth, for never collapsing (figures: the SimpleNPKL guide, "Choosing C").

Degenerate kernels
------------------
:func:`kernel_degeneracy` measures the collapse directly: the share of tr(K) carried
by eigenvectors u of K with uᵀWu > 1, W the weighted constraint matrix (C·T for the
linear loss, Σ α_ij T_ij for the square hinge) — directions that the constraints
alone make positive, that would be in K even with no kNN graph. Under the rule this
share is 0 for the linear loss by construction (C·T ⪯ 0.7·I). A kernel with a share
above :data:`DEGENERATE_SHARE` (more than half of its trace) is flagged as degenerate:
on the UCI sets such kernels clustered at or near chance at moderate constraint
densities. The flag describes the kernel, not the clustering: with dense constraints a
high share can cluster well (figures: the SimpleNPKL guide, "Choosing C").
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

    Only the rows touched by a constraint matter (T is zero elsewhere): a dense solve
    on them when there are few, else Lanczos (``eigsh``, ``which="LA"``) from a start
    vector drawn from ``rng`` (seed 0 when None). ≥ 1 for any non-empty set (a single
    pair has eigenvalue 1), ≤ the largest number of constraints on one row.
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
    """``C="auto"``: ``scale`` / λ_max(T) (see the module docstring)."""
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

"""Small dense linear-algebra helpers shared by the math layer (a leaf: imports no lorak).

The one decision that lives here is where to cut a spectrum: at a gap, so that a rank
does not flip on round-off (:ref:`guide-internals-spectral-cut`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["BAND", "spectral_keep"]

# An eigenvalue within a factor BAND above the noise floor is ambiguous: the cut is moved
# to the largest gap of the spectrum inside that band.
BAND = 10.0


def spectral_keep(lam, rtol: float, *, noise_margin: float = 10.0) -> np.ndarray:
    """Boolean mask of the eigenvalues of a (nearly) PSD matrix to keep.

    The floor is the largest of ``rtol``·λ_max, n·eps·λ_max and ``noise_margin`` times
    the largest negative eigenvalue's magnitude; among the cuts between the floor and
    floor · BAND, the one with the largest ratio between the last kept and the first
    dropped eigenvalue wins (why: :ref:`guide-internals-spectral-cut`).

    ``lam`` may be in any order; the mask is aligned with it. At least the largest
    eigenvalue is kept when it is positive; none when it is not.
    """
    lam = np.asarray(lam, dtype=np.float64)
    keep = np.zeros(lam.shape, dtype=bool)
    if lam.size == 0:
        return keep
    top = float(lam.max())
    if not top > 0:
        return keep
    eps = np.finfo(np.float64).eps
    neg = max(0.0, -float(lam.min()))
    floor = max(float(rtol) * top, lam.size * eps * top, noise_margin * neg)
    order = np.argsort(lam)[::-1]  # decreasing
    mu = lam[order]
    # cut r keeps mu[:r]; its gap is mu[r-1] / mu[r], both clamped at the floor (below it
    # everything is noise). Candidates keep nothing at or below the floor and drop
    # nothing above floor · BAND.
    clamped = np.maximum(mu, floor)
    ratio = clamped / np.append(clamped[1:], floor)
    first_dropped = np.append(mu[1:], -np.inf)
    cand = (mu > floor) & (first_dropped <= floor * BAND)
    r0 = max(int(np.count_nonzero(mu > floor)), 1)
    cand[r0 - 1] = True
    best = int(np.flatnonzero(cand)[np.argmax(ratio[cand])]) + 1
    keep[order[:best]] = True
    return keep


def symmetrize(M):
    """(M + Mᵀ)/2: the symmetric part, which removes the round-off asymmetry of products
    such as Eᵀ S E before an eigendecomposition or a PSD projection."""
    return 0.5 * (M + M.T)

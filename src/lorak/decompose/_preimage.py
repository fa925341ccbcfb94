"""Pre-images by kernel ridge regression (Bakır, Weston & Schölkopf 2004).

Shared by :class:`lorak.Nystroem` and :class:`lorak.LowRankKernelPCA` (:ref:`guide-downstream`).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.linalg import solve

from ..kernels import Gaussian, kernel_block

__all__ = [
    "PREIMAGE_ROWS",
    "PreImageMap",
    "check_alpha",
    "fit_preimage",
    "preimage",
    "preimage_rows",
]

#: rows the pre-image regression is fitted on (at most)
PREIMAGE_ROWS = 2000


@dataclass(frozen=True)
class PreImageMap:
    """Result of :func:`fit_preimage`.

    Attributes
    ----------
    kernel : the fitted Gaussian κ on feature rows.
    features : (s, r) feature rows G the regression was fitted on.
    dual_coef : (s, d) D = (κ(G, G) + α I)⁻¹ X.
    """

    kernel: object
    features: np.ndarray
    dual_coef: np.ndarray


def check_alpha(alpha) -> float:
    """The ridge α of a pre-image map: a positive number."""
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not alpha > 0:
        raise ValueError(f"alpha must be a positive number; got {alpha!r}")
    return float(alpha)


def preimage_rows(n: int, rng, max_rows: int = PREIMAGE_ROWS):
    """Sorted indices of the rows the map is fitted on; None for all n ≤ max_rows."""
    if n <= max_rows:
        return None
    return np.sort(rng.choice(n, max_rows, replace=False))


def fit_preimage(G, X, alpha: float) -> PreImageMap:
    """Kernel ridge regression from feature rows G (s × r) to rows X (s × d).

    X may be sparse or a dask array (it is materialized: s is small).
    """
    alpha = check_alpha(alpha)
    if hasattr(X, "compute"):  # dask
        X = X.compute()
    Xd = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
    G = np.asarray(G, dtype=np.float64)
    if G.shape[0] < 2 or not np.any(np.ptp(G, axis=0) > 0):
        # the map's bandwidth is the spread of the feature rows: none here
        raise ValueError(
            f"the pre-image map (fit_inverse_transform=True) learns from how the feature "
            f"rows of different training rows differ, but all {G.shape[0]} training rows "
            "have the same feature row (are all rows of X identical?). Fit on rows that "
            "differ, or without fit_inverse_transform: the pre-image of a single point is "
            "that point"
        )
    kernel = Gaussian(bandwidth="mean_to_centroid").resolve(G)
    A = kernel_block(kernel, G, G)
    A[np.diag_indices_from(A)] += alpha
    D = solve(A, Xd, assume_a="pos", check_finite=False)
    return PreImageMap(kernel=kernel, features=G, dual_coef=D)


def preimage(G, pmap: PreImageMap) -> np.ndarray:
    """Pre-images κ(G, G_fit) D of feature rows G (n × r); checks G's shape."""
    G = np.asarray(G, dtype=np.float64)
    r = pmap.features.shape[1]
    if G.ndim != 2 or G.shape[1] != r:
        raise ValueError(f"X must be 2-D with {r} columns (the feature rank); got shape {G.shape}")
    return kernel_block(pmap.kernel, G, pmap.features) @ pmap.dual_coef

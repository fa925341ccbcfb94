"""Bandwidth rules: data-dependent scales for stationary kernels.

Every rule returns a *squared-distance scale* ``s`` (units of ‖x − y‖²). The Gaussian
kernel exp(−‖x−y‖²/b) uses ``b = s``; kernels of the plain distance (Laplacian,
inverse distance) use ``σ = √s``.

Rules
-----
``"mean_pairwise"``
    b₀ of the generalized Nyström paper: the average squared distance over all
    ordered pairs, (1/n²) Σᵢⱼ ‖xᵢ − xⱼ‖² = 2 (mean ‖x‖² − ‖mean x‖²). Computed in
    O(nd) from that identity, never over pairs.
``"mean_to_centroid"``
    Zhang, Tsang & Kwok (2008): the average squared distance of the points to their
    mean, mean ‖x − x̄‖² = mean ‖x‖² − ‖x̄‖² (half of ``mean_pairwise``).
``"median"``
    the median squared distance over the distinct pairs of a random sample of at
    most 1000 rows (the "median heuristic").
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["BANDWIDTH_RULES", "bandwidth_scale"]

_MEDIAN_SAMPLE = 1000


def _row_sq_norms(X) -> np.ndarray:
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
    X = np.asarray(X)
    return np.einsum("ij,ij->i", X, X, dtype=np.float64)


def _mean_sq_norm_minus_centroid(X) -> float:
    mean_sq = float(_row_sq_norms(X).mean())
    mu = np.asarray(X.mean(axis=0), dtype=np.float64).ravel()
    return max(mean_sq - float(mu @ mu), 0.0)


def _mean_pairwise(X, rng=None) -> float:
    return 2.0 * _mean_sq_norm_minus_centroid(X)


def _mean_to_centroid(X, rng=None) -> float:
    return _mean_sq_norm_minus_centroid(X)


def _median(X, rng=None) -> float:
    n = X.shape[0]
    rng = np.random.default_rng(0) if rng is None else rng
    if n > _MEDIAN_SAMPLE:
        idx = np.sort(rng.choice(n, _MEDIAN_SAMPLE, replace=False))
        X = X[idx]
    S = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    S = S.astype(np.float64, copy=False)
    sq = np.einsum("ij,ij->i", S, S)
    D = sq[:, None] + sq[None, :] - 2.0 * (S @ S.T)
    iu = np.triu_indices(S.shape[0], k=1)
    d = np.maximum(D[iu], 0.0)
    return float(np.median(d)) if d.size else 0.0


BANDWIDTH_RULES = {
    "mean_pairwise": _mean_pairwise,
    "mean_to_centroid": _mean_to_centroid,
    "median": _median,
}


def bandwidth_scale(rule: str, X, rng: np.random.Generator | None = None) -> float:
    """Squared-distance scale of ``X`` under the named rule (see module docstring).

    Raises ``ValueError`` for unknown rules (listing the valid ones) and when the data
    are degenerate (all rows identical), where no bandwidth can be derived.
    """
    try:
        fn = BANDWIDTH_RULES[rule]
    except (KeyError, TypeError):
        valid = ", ".join(repr(r) for r in BANDWIDTH_RULES)
        raise ValueError(f"unknown bandwidth rule {rule!r}; valid rules are {valid}") from None
    from ..parallel import is_dask_array

    if is_dask_array(X):  # by reductions over the row chunks (see lorak.parallel)
        from ..parallel import bandwidth_scale as lazy_scale

        s = lazy_scale(rule, X, rng)
    else:
        s = fn(X, rng)
    if not np.isfinite(s) or s <= 0:
        raise ValueError(
            f"bandwidth rule {rule!r} gives {s!r} on this data (are all rows identical?); "
            "pass a numeric bandwidth instead"
        )
    return s

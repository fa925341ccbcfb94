"""Bandwidth rules: data-dependent scales for stationary kernels.

Every rule (``"mean_pairwise"``, ``"mean_to_centroid"``, ``"median"``) returns a
*squared-distance scale* ``s`` (units of ‖x − y‖²): the Gaussian kernel exp(−‖x−y‖²/b)
uses ``b = s``, kernels of the plain distance use ``σ = √s``. Their definitions:
:ref:`the user guide <guide-bandwidth-rules>`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._core.array_api import (
    array_api_dispatched,
    array_namespace,
    device_of,
    has_float64,
    to_numpy,
)

__all__ = [
    "BANDWIDTH_RULES",
    "bandwidth_scale",
    "scale_gamma",
]

_MEDIAN_SAMPLE = 1000


def _row_sq_norms(X) -> np.ndarray:
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
    X = np.asarray(X)
    return np.einsum("ij,ij->i", X, X, dtype=np.float64)


_ROWS = 4096  # row chunk of the O(nd) passes below (temporaries stay small)
# squared-distance scales outside this range cannot be used by the kernels: their
# squares (and the kernel's ‖x‖²/b) leave float64's normal range
_S_MIN = np.finfo(np.float64).tiny * 2.0**10
_S_MAX = np.finfo(np.float64).max * 2.0**-10


def _pow2_scale(X) -> float:
    """A power of two near max |X|: the rules work on X / t, which is exact, so their
    squares neither overflow nor underflow and cX gives c² times the scale of X."""
    if sp.issparse(X):
        a = float(abs(X).max()) if X.nnz else 0.0
    else:
        a = 0.0
        for s in range(0, X.shape[0], _ROWS):
            a = max(a, float(np.max(np.abs(X[s : s + _ROWS]), initial=0.0)))
    if not np.isfinite(a):
        raise ValueError("X contains NaN or infinity; a bandwidth rule needs finite data")
    return float(2.0 ** np.frexp(a)[1]) if a > 0 else 1.0


def _unscaled(s: float, t: float) -> float:
    """s · t², or a ValueError saying that it leaves the range the kernels can use."""
    if s <= 0:
        return 0.0
    log10 = np.log10(s) + 2 * np.log10(t)
    if not _S_MIN <= s * t * t <= _S_MAX:
        raise ValueError(
            f"the squared distances of X are about 1e{log10:.0f}, outside the range "
            f"[1e{np.log10(_S_MIN):.0f}, 1e{np.log10(_S_MAX):.0f}] where float64 can "
            f"evaluate a kernel of them (X's entries reach about {t:.3g}): the squares "
            "would underflow or overflow; rescale X, e.g. with "
            "sklearn.preprocessing.StandardScaler"
        )
    return s * t * t


def _mean_sq_norm_minus_centroid(X) -> float:
    # One pass through the identity mean ‖x‖² − ‖x̄‖² where it is accurate: the means
    # inside float64's normal range and the offset ‖x̄‖² not far above the result
    # (each bit of ‖x̄‖²/s above 1 is a bit of s lost).
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        mean_sq = float(_row_sq_norms(X).mean())
        mu = np.asarray(X.mean(axis=0), dtype=np.float64).ravel()
        mm = float(mu @ mu)
    s = mean_sq - mm
    if _S_MIN * 2.0**52 <= mean_sq <= _S_MAX and 0 < s and mm <= 2.0**10 * s:
        return s
    # Otherwise mean ‖x − x̄‖² on X / t (t a power of two: exact), centred before
    # squaring: no overflow or underflow of the squares, and no cancellation from a
    # common offset (the identity loses every digit at X + 1e8)
    t = _pow2_scale(X)
    n = X.shape[0]
    if sp.issparse(X):  # centring would densify: the identity, on X / t
        Xs = X * (1.0 / t)
        mean_sq = float(_row_sq_norms(Xs).mean())
        mu = np.asarray(Xs.mean(axis=0), dtype=np.float64).ravel()
        return _unscaled(max(mean_sq - float(mu @ mu), 0.0), t)
    mu = np.zeros(X.shape[1])
    for s in range(0, n, _ROWS):
        mu += np.sum(np.asarray(X[s : s + _ROWS], dtype=np.float64) / t, axis=0)
    mu /= n
    acc = 0.0
    for s in range(0, n, _ROWS):
        D = np.asarray(X[s : s + _ROWS], dtype=np.float64) / t
        D -= mu
        acc += float(np.einsum("ij,ij->", D, D))
    return _unscaled(acc / n, t)


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
    # scaled by a power of two and centred, as in _mean_sq_norm_minus_centroid
    t = _pow2_scale(S)
    S = S / t
    S -= S.mean(axis=0)
    sq = np.einsum("ij,ij->i", S, S)
    D = sq[:, None] + sq[None, :] - 2.0 * (S @ S.T)
    iu = np.triu_indices(S.shape[0], k=1)
    d = np.maximum(D[iu], 0.0)
    return _unscaled(float(np.median(d)), t) if d.size else 0.0


BANDWIDTH_RULES = {
    "mean_pairwise": _mean_pairwise,
    "mean_to_centroid": _mean_to_centroid,
    "median": _median,
}


def bandwidth_scale(rule: str, X, rng: np.random.Generator | None = None) -> float:
    """Squared-distance scale of ``X`` under the named rule.

    The rules: :ref:`the user guide <guide-bandwidth-rules>`. Raises ``ValueError`` for
    unknown rules (listing the valid ones) and when the data are degenerate (all rows
    identical), where no bandwidth can be derived.
    """
    try:
        fn = BANDWIDTH_RULES[rule]
    except (KeyError, TypeError):
        valid = ", ".join(repr(r) for r in BANDWIDTH_RULES)
        raise ValueError(f"unknown bandwidth rule {rule!r}; valid rules are {valid}") from None
    from .._core.chunked import is_dask_array

    n = X.shape[0] if getattr(X, "ndim", 0) >= 1 else 0
    if n < 2:
        raise ValueError(
            f"bandwidth rule {rule!r} measures distances between rows and needs at least 2; "
            f"got n_samples={n}. Pass a numeric bandwidth to fit on one sample"
        )
    if is_dask_array(X):  # by reductions over the row chunks
        s = lazy_bandwidth_scale(rule, X, rng)
    elif array_api_dispatched(X):  # in X's namespace, on its device
        s = device_bandwidth_scale(rule, X, rng)
    else:
        s = fn(X, rng)
    if not np.isfinite(s):
        raise ValueError(f"bandwidth rule {rule!r} gives {float(s)!r}: X contains NaN or infinity")
    if s <= 0:
        raise ValueError(
            f"bandwidth rule {rule!r} gives {s!r} on this data (are all rows identical?); "
            "pass a numeric bandwidth instead"
        )
    return s


def lazy_bandwidth_scale(rule, X, rng=None) -> float:
    """The rules above on a dask array: means by one reduction, the median on a sample.

    ``"mean_pairwise"`` and ``"mean_to_centroid"`` need only Σ‖xᵢ‖² and Σxᵢ (one pass
    over the row chunks); ``"median"`` reads only its random rows.
    """
    from .._core.chunked import LazyRows, norm_stats, reduce_rows

    if rule in ("mean_pairwise", "mean_to_centroid"):
        sq, s, n = reduce_rows(norm_stats, X)
        mu = s / n
        v = max(sq / n - float(mu @ mu), 0.0)
        return 2.0 * v if rule == "mean_pairwise" else v
    if rule == "median":
        return _median(LazyRows(X), rng)
    return bandwidth_scale(rule, np.zeros((1, 1)))  # raises the usual message


def device_bandwidth_scale(rule, X, rng=None) -> float:
    """The rules above on an array API X (a torch tensor, …), on its device.

    The means by two passes over row chunks in float64 (centred before squaring);
    ``"median"`` on the same random rows as the NumPy path, copied to the host.
    """
    if rule == "median":
        n = X.shape[0]
        rng = np.random.default_rng(0) if rng is None else rng
        if n > _MEDIAN_SAMPLE:
            xp = array_namespace(X)
            idx = np.sort(rng.choice(n, _MEDIAN_SAMPLE, replace=False))
            X = xp.take(X, xp.asarray(idx, device=device_of(X)), axis=0)
        return _median(to_numpy(X), rng)
    if rule not in ("mean_pairwise", "mean_to_centroid"):
        return bandwidth_scale(rule, np.zeros((1, 1)))  # raises the usual message
    xp = array_namespace(X)
    wide = xp.float64 if has_float64(xp, device_of(X)) else xp.float32
    n = X.shape[0]
    total = xp.zeros(X.shape[1], dtype=wide, device=device_of(X))
    for s in range(0, n, _ROWS):
        total = total + xp.sum(xp.astype(X[s : min(s + _ROWS, n), ...], wide), axis=0)
    mu = total / n
    acc = xp.zeros((), dtype=wide, device=device_of(X))
    for s in range(0, n, _ROWS):
        D = xp.astype(X[s : min(s + _ROWS, n), ...], wide) - mu
        acc = acc + xp.sum(D * D)
    v = float(acc) / n
    return 2.0 * v if rule == "mean_pairwise" else v


def scale_gamma(X) -> float:
    """γ = 1/(n_features · Var X), scikit-learn's ``gamma="scale"`` of an RBF exp(−γ‖x−y‖²).

    1/n_features on standardized features, and the same kernel whatever the units:
    computed on X / t (t a power of two, exact) so that Var X neither overflows nor
    underflows; data whose squared scale leaves float64's range get the bandwidth
    rules' error. Constant data give 1/n_features.
    """
    t = _pow2_scale(X)
    if sp.issparse(X):
        Xs = X * (1.0 / t)
        mean = Xs.sum() / np.prod(X.shape)
        var = Xs.multiply(Xs).sum() / np.prod(X.shape) - mean**2
    else:
        var = (np.asarray(X, dtype=np.float64) / t).var()
    var = float(var)
    return 1.0 / _unscaled(X.shape[1] * var, t) if var > 0 else 1.0 / X.shape[1]

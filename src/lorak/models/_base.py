"""What every downstream model shares: fitting a factor and reducing over its rows
(``factor=None``: G = X), every n-sized reduction in row chunks under ``memory_budget``.
"""

from __future__ import annotations

import copy
import inspect

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from sklearn.base import clone

from .._core.array_api import compat, move_like, to_numpy
from .._core.config import get_config

__all__ = [
    "centered_cross_products",
    "column_mean",
    "decision_codes",
    "fit_factor",
    "iter_row_chunks",
    "solve_spd",
    "take_classes",
    "transform_factor",
]


def _accepts_y(method) -> bool:
    try:
        params = inspect.signature(method).parameters
    except (TypeError, ValueError):  # builtins without a signature: try the usual form
        return True
    if "y" in params:
        return True
    return any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params.values())


def fit_factor(factor, X, y=None):
    """Clone and fit ``factor`` on X; return ``(fitted factor or None, G)``.

    ``y`` is passed to ``fit_transform`` when its signature accepts it (supervised
    factors use the labels; scikit-learn's transformers accept and ignore it).
    ``factor=None`` or ``"passthrough"`` uses X itself as the rows of G.
    """
    if factor is None or (isinstance(factor, str) and factor == "passthrough"):
        return None, X
    if isinstance(factor, str):
        raise ValueError(
            f"factor must be an unfitted transformer, None or 'passthrough'; got {factor!r}"
        )
    if not (hasattr(factor, "fit") and hasattr(factor, "transform")):
        raise TypeError(
            "factor must be a transformer with fit and transform (e.g. lorak.Nystroem()); "
            f"got {type(factor).__name__}"
        )
    try:
        est = clone(factor)
    except TypeError:
        # a parameter that looks like an estimator but cannot be cloned (an object with
        # a get_params() lacking ``deep``): a deep copy of the unfitted factor is the
        # same fresh estimator
        est = copy.deepcopy(factor)
    fit_transform = getattr(est, "fit_transform", None)
    if fit_transform is None:
        est.fit(X, y) if _accepts_y(est.fit) else est.fit(X)
        G = est.transform(X)
    elif y is not None and _accepts_y(fit_transform):
        G = fit_transform(X, y)
    else:
        G = fit_transform(X)
    return est, _check_rows(G, X.shape[0])


def transform_factor(factor_, X):
    """Rows of the fitted factor for new points (X itself when there is no factor)."""
    if factor_ is None:
        return X
    return _check_rows(factor_.transform(X), X.shape[0])


def _check_rows(G, n):
    lazy = hasattr(G, "chunks") and hasattr(G, "compute")  # a lazy dask G stays lazy
    if not (lazy or sp.issparse(G)):
        G = np.asarray(G)
        if G.dtype not in (np.float32, np.float64):
            G = G.astype(np.float64)
    if G.ndim != 2 or G.shape[0] != n:
        raise ValueError(
            f"the factor's transform must return one row per sample: expected ({n}, m), "
            f"found {G.shape}"
        )
    return G


def decision_codes(d):
    """Class codes 0 … c−1 from a linear classifier's decision values d, as it reads
    them: the sign of a 1-D d or of its one column, else the argmax; in d's namespace,
    on its device."""
    xp = compat.array_namespace(d)
    if d.ndim == 2 and d.shape[1] == 1:
        d = d[:, 0]
    return xp.astype(d > 0, xp.int64) if d.ndim == 1 else xp.argmax(d, axis=1)


def take_classes(classes, codes):
    """``classes[codes]`` (classes a NumPy array, codes integers): in the codes'
    namespace, on their device, for numeric classes; a NumPy array for others (strings
    have no device)."""
    if classes.dtype.kind not in "biuf":
        return classes[np.asarray(to_numpy(codes), dtype=np.intp)]
    xp = compat.array_namespace(codes)
    return xp.take(move_like(codes, classes), xp.astype(codes, xp.int64), axis=0)


def iter_row_chunks(n_rows: int, n_cols: int, itemsize: int = 8):
    """``(start, stop)`` row ranges of about ``memory_budget`` bytes at ``n_cols`` columns."""
    budget = get_config()["memory_budget"]
    step = max(1, int(budget // max(1, n_cols * itemsize)))
    for s in range(0, n_rows, step):
        yield s, min(s + step, n_rows)


def _centered_chunk(G, s, e, mean):
    """A new float64 array G[s:e] − mean (never a view of G: G is not modified)."""
    block = G[s:e]
    if sp.issparse(block):
        block = block.toarray()
    return np.subtract(block, mean, dtype=np.float64)


def column_mean(G) -> np.ndarray:
    """Mean of the rows of G in float64 (dense or sparse G)."""
    if sp.issparse(G):
        return np.asarray(G.mean(axis=0), dtype=np.float64).ravel()
    return np.mean(G, axis=0, dtype=np.float64)


def centered_cross_products(G, mean, T=None, t_mean=None):
    """``(Ḡᵀ Ḡ, Ḡᵀ T̄)`` with Ḡ = G − 1 meanᵀ and T̄ = T − 1 t_meanᵀ, in float64.

    Centred chunk by chunk, not as GᵀG − n·mean meanᵀ, which cancels the digits of the
    small eigenvalues. O(n m²) time, O(chunk · m) extra memory; G may be float32 or
    sparse.
    """
    n, m = G.shape
    S = np.zeros((m, m))
    R = None if T is None else np.zeros((m, T.shape[1]))
    for s, e in iter_row_chunks(n, m):
        B = _centered_chunk(G, s, e, mean)
        S += B.T @ B  # numpy uses syrk for a product with its own transpose
        if T is not None:
            R += B.T @ (T[s:e] - t_mean)
    # exact symmetry for the callers' Cholesky / eigh (round-off of the chunked sums)
    S = 0.5 * (S + S.T)
    return S, R


def solve_spd(S: np.ndarray, R: np.ndarray) -> np.ndarray:
    """Solve S X = R for a symmetric positive definite S (m × m), by Cholesky.

    Where Cholesky fails (ν below round-off relative to ‖S‖), the eigendecomposition
    with eigenvalues clipped at eps · λ_max (the minimum-norm solution).
    """
    try:
        c = scipy.linalg.cho_factor(S, lower=False, check_finite=False)
        return scipy.linalg.cho_solve(c, R, check_finite=False)
    except np.linalg.LinAlgError:
        pass
    lam, V = scipy.linalg.eigh(S, check_finite=False)
    floor = max(float(lam[-1]), 0.0) * S.shape[0] * np.finfo(np.float64).eps
    keep = lam > floor
    if not keep.any():
        raise np.linalg.LinAlgError("the regularized Gram matrix is zero; check the factor")
    inv = np.where(keep, 1.0 / np.where(keep, lam, 1.0), 0.0)
    return V @ (inv[:, None] * (V.T @ R))

"""Landmark selection strategies for Nyström factors, in a registry.

A strategy is ``f(X, n_landmarks, *, rng, kernel) -> Landmarks``. Built in:
``"uniform"`` (distinct rows at random), ``"kmeans"`` (k-means centres after at most 10
Lloyd iterations, :func:`kmeans_landmarks`), ``"column_norm"`` (Drineas & Mahoney 2005,
:func:`column_norm_landmarks`) and ``"rls"`` (approximate ridge leverage scores,
:func:`rls_landmarks`). User-given landmarks: a 2-D array of points (m × d), a 1-D
integer array of row indices, or a callable with the strategy signature returning a
:class:`Landmarks`, indices or points (e.g. ``functools.partial(rls_landmarks,
rank_fraction=0.25)``). What each strategy costs and when to use it:
:ref:`guide-factors`, section "Choosing the landmarks".
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

from .._core.array_api import is_foreign
from .._core.rows import take_rows
from ._base import Landmarks
from ._kmeans import default_init_sample, kmeans_landmarks
from ._rls import DEFAULT_RANK_FRACTION, ridge_leverage_scores, rls_landmarks

__all__ = [
    "DEFAULT_RANK_FRACTION",
    "LANDMARK_STRATEGIES",
    "Landmarks",
    "column_norm_landmarks",
    "default_init_sample",
    "kmeans_landmarks",
    "quantization_error",
    "register_landmarks",
    "ridge_leverage_scores",
    "rls_landmarks",
    "select_landmarks",
    "take_rows",
    "uniform_landmarks",
]


def uniform_landmarks(X, n_landmarks, *, rng, kernel=None) -> Landmarks:
    """``n_landmarks`` distinct rows of X, uniformly at random."""
    idx = np.sort(rng.choice(X.shape[0], size=n_landmarks, replace=False))
    return Landmarks(points=take_rows(X, idx), indices=idx)


def kmeans_landmarks_strategy(X, n_landmarks, *, rng, kernel=None) -> Landmarks:
    """k-means centres after ≤ 10 Lloyd iterations (Zhang, Tsang & Kwok 2008).

    On an array API X (dispatch enabled) Lloyd runs on X's device
    (:func:`lorak.landmarks._kmeans.device_kmeans_landmarks`).
    """
    from .._core.array_api import array_api_dispatched
    from ._kmeans import device_kmeans_landmarks

    kmeans = device_kmeans_landmarks if array_api_dispatched(X) else kmeans_landmarks
    centers, info = kmeans(X, n_landmarks, rng=rng, max_iter=10)
    return Landmarks(points=centers, info=info)


def column_norm_landmarks(X, n_landmarks, *, rng, kernel) -> Landmarks:
    """Drineas–Mahoney column sampling, p_i ∝ ‖K(:, i)‖², with 1/√(m p_i) weights.

    Columns are drawn i.i.d. with replacement; the column norms need every entry of K
    (O(n²d) time, computed in chunks). Repeated columns make W singular, which the
    pseudo-inverse of the Nyström normalization handles.
    """
    from ..kernels import iter_kernel_blocks

    n = X.shape[0]
    norms = np.zeros(n)
    for s, e, B in iter_kernel_blocks(kernel, X, X):
        norms[s:e] = np.einsum("ij,ij->i", B, B, dtype=np.float64)
    p = norms / norms.sum()
    idx = rng.choice(n, size=n_landmarks, replace=True, p=p)
    idx.sort()
    w = 1.0 / np.sqrt(n_landmarks * p[idx])
    return Landmarks(points=take_rows(X, idx), indices=idx, weights=w, info={"probabilities": p})


LANDMARK_STRATEGIES: dict[str, Callable] = {
    "uniform": uniform_landmarks,
    "kmeans": kmeans_landmarks_strategy,
    "column_norm": column_norm_landmarks,
    "rls": rls_landmarks,  # rows drawn ∝ approximate ridge leverage scores
}


def register_landmarks(name: str, strategy: Callable) -> None:
    """Add a strategy ``f(X, n_landmarks, *, rng, kernel) -> Landmarks`` by name."""
    if not callable(strategy):
        raise TypeError(f"strategy must be callable; got {strategy!r}")
    LANDMARK_STRATEGIES[name] = strategy


#: The strategies with an array API path (the others need every kernel column).
DEVICE_STRATEGIES = ("uniform", "kmeans")


def _on_x_device(lm: Landmarks, X) -> Landmarks:
    """The landmarks of an array API X as points in X's namespace, dtype and device."""
    from .._core.array_api import array_namespace, device_of, on_device

    if sp.issparse(lm.points):
        raise TypeError("sparse landmark points cannot be used with an array API X")
    P = lm.points if is_foreign(lm.points) else np.asarray(lm.points)
    P = on_device(P, array_namespace(X), device_of(X), X.dtype)  # no copy when it is there
    return Landmarks(points=P, indices=lm.indices, weights=lm.weights, info=lm.info)


def _from_result(result, X, name) -> Landmarks:
    if isinstance(result, Landmarks):
        return result
    if is_foreign(result):
        from .._core.array_api import to_numpy

        result = to_numpy(result)  # m rows: checked on the host, moved back after
    arr = result if sp.issparse(result) else np.asarray(result)
    if arr.ndim == 1:
        return _from_indices(arr, X, name)
    return _from_points(arr, X, name)


def _from_indices(idx, X, name) -> Landmarks:
    idx = np.asarray(idx)
    if idx.size == 0:
        raise ValueError(f"{name} gives no landmark rows")
    if not np.issubdtype(idx.dtype, np.integer):
        raise ValueError(
            f"{name} as a 1-D array must hold integer row indices; got dtype {idx.dtype}"
        )
    n = X.shape[0]
    bad = idx[(idx < 0) | (idx >= n)]
    if bad.size:
        raise ValueError(f"{name} refers to row {int(bad[0])} but X has {n} rows")
    return Landmarks(points=take_rows(X, idx), indices=idx.astype(np.intp))


def _from_points(P, X, name) -> Landmarks:
    if P.ndim != 2:
        raise ValueError(f"{name} must be 1-D (row indices) or 2-D (points); got {P.ndim}-D")
    if P.shape[1] != X.shape[1]:
        raise ValueError(f"{name} has {P.shape[1]} features, but X has {X.shape[1]} features")
    if P.shape[0] == 0:
        raise ValueError(f"{name} holds no points")
    if sp.issparse(P):
        if not np.all(np.isfinite(P.data)):
            raise ValueError(f"{name} contains NaN or inf")
        return Landmarks(points=P.tocsr())
    # (an array API X: float64 here, X's dtype once on its device)
    single = not is_foreign(X) and X.dtype == np.float32
    P = np.asarray(P, dtype=np.float32 if single else np.float64)
    if not np.all(np.isfinite(P)):
        raise ValueError(f"{name} contains NaN or inf")
    return Landmarks(points=P)


def select_landmarks(
    landmarks, X, n_landmarks: int | None, *, rng, kernel=None, name="landmarks"
) -> Landmarks:
    """Resolve a ``landmarks=`` parameter (name, callable, indices or points).

    For an array API X the points come back in X's namespace, dtype and device
    (``"column_norm"`` and ``"rls"`` are refused: :ref:`guide-gpu`).
    """
    from .._core.array_api import array_api_dispatched

    device = array_api_dispatched(X)
    if device and isinstance(landmarks, str) and landmarks in LANDMARK_STRATEGIES:
        if landmarks not in DEVICE_STRATEGIES:
            raise TypeError(
                f"{name}={landmarks!r} has no array API path (it needs every column of "
                f"the kernel matrix); on array API inputs use "
                f"{' or '.join(repr(s) for s in DEVICE_STRATEGIES)}, or pass points or "
                "row indices"
            )
    lm = _resolve_landmarks(landmarks, X, n_landmarks, rng=rng, kernel=kernel, name=name)
    return _on_x_device(lm, X) if device else lm


def _resolve_landmarks(landmarks, X, n_landmarks, *, rng, kernel, name) -> Landmarks:
    if isinstance(landmarks, str):
        try:
            strategy = LANDMARK_STRATEGIES[landmarks]
        except KeyError:
            valid = ", ".join(repr(k) for k in LANDMARK_STRATEGIES)
            raise ValueError(
                f"unknown {name} strategy {landmarks!r}; valid names are {valid}, "
                "or pass points, row indices or a callable"
            ) from None
        from .._core.chunked import is_dask_array

        if is_dask_array(X) and landmarks in ("uniform", "kmeans", "column_norm"):
            return lazy_select_landmarks(landmarks, X, n_landmarks, rng=rng, kernel=kernel)
        if n_landmarks is not None and not 1 <= n_landmarks <= X.shape[0]:
            raise ValueError(
                f"n_landmarks={n_landmarks} must be between 1 and the number of rows of X "
                f"({X.shape[0]})"
            )
        return strategy(X, n_landmarks, rng=rng, kernel=kernel)
    if callable(landmarks):
        return _from_result(landmarks(X, n_landmarks, rng=rng, kernel=kernel), X, name)
    if isinstance(landmarks, Landmarks):
        return landmarks
    if landmarks is None:
        raise ValueError(f"{name} must be a strategy name, a callable, indices or points")
    return _from_result(landmarks, X, name)


def lazy_select_landmarks(name, X, n_landmarks, *, rng, kernel=None) -> Landmarks:
    """The built-in strategies on a dask array.

    ``"uniform"`` draws the same rows as in memory, ``"kmeans"`` runs Lloyd by passes over
    the row chunks, ``"column_norm"`` is refused (:ref:`guide-scaling`).
    """
    if name == "uniform":
        return uniform_landmarks(X, n_landmarks, rng=rng)
    if name == "kmeans":
        from ._kmeans import lazy_kmeans_landmarks

        centers, info = lazy_kmeans_landmarks(X, n_landmarks, rng=rng, max_iter=10)
        return Landmarks(points=centers, info=info)
    raise ValueError(
        f"landmarks={name!r} is not available for a dask array"
        + (
            ": column-norm sampling needs every entry of the n × n kernel matrix"
            if name == "column_norm"
            else ""
        )
        + "; use 'uniform' or 'kmeans', or pass points / row indices"
    )


def quantization_error(X, points, *, budget=None) -> float:
    """Σᵢ minⱼ ‖xᵢ − zⱼ‖²: the error of coding each row by its nearest landmark.

    Zhang, Tsang & Kwok (2008) bound the Nyström error by this quantity (their e).
    """
    from ..kernels import Linear, iter_kernel_blocks, sq_norms

    dtype = np.float64
    P = points.toarray() if sp.issparse(points) else np.asarray(points, dtype=dtype)
    if P.ndim != 2 or X.ndim != 2 or P.shape[1] != X.shape[1]:
        raise ValueError(
            f"points must be 2-D with the n_features of X ({X.shape[-1]}); got shape {P.shape}"
        )
    if X.shape[0] == 0:
        raise ValueError("X is empty: the quantization error needs at least one point")
    if P.shape[0] == 0:
        raise ValueError("points is empty: the quantization error needs at least one point")
    pn = np.einsum("ij,ij->i", P, P)
    total = 0.0
    Xd = X if sp.issparse(X) else np.asarray(X, dtype=dtype)
    for s, e, B in iter_kernel_blocks(Linear(), Xd, P, budget=budget):
        xn = sq_norms(Xd[s:e], np.dtype(dtype))
        d = xn[:, None] - 2.0 * B + pn[None, :]
        total += float(np.maximum(d.min(axis=1), 0.0).sum())
    return total

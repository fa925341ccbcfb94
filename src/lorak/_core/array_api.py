"""Array API helpers: which namespace an input lives in, moves between host and device.

A leaf module (it imports only :mod:`lorak._core.config`); the behaviour: :ref:`guide-gpu`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .config import array_api_dispatch_enabled

try:
    import array_api_compat as compat
except ImportError:  # pragma: no cover - exercised only where it is not installed
    from sklearn.externals import array_api_compat as compat

__all__ = [
    "array_api_dispatched",
    "array_namespace",
    "as_dense",
    "compat",
    "device_of",
    "has_float64",
    "is_foreign",
    "like_input",
    "mean_sq_row_norm",
    "move_like",
    "namespace_name",
    "numpy_dtype",
    "on_device",
    "solve_triangular",
    "to_host",
    "to_numpy",
]


def is_foreign(X) -> bool:
    """What X is: an array API array that is not NumPy's (torch, cupy, array-api-strict,
    …), whatever the dispatch setting (:func:`array_api_dispatched` says what lorak does
    with it).

    SciPy sparse matrices, dask arrays, NumPy arrays and scalars, lists and pandas
    frames are not foreign: they take lorak's usual paths.
    """
    if X is None or isinstance(X, (np.ndarray, np.generic, list, tuple, str, int, float)):
        return False
    mod = type(X).__module__ or ""
    if mod.startswith(("scipy", "pandas", "polars", "dask", "numpy")):
        return False
    try:
        return bool(compat.is_array_api_obj(X)) and not compat.is_dask_array(X)
    except Exception:  # pragma: no cover - an object array_api_compat cannot inspect
        return False


def array_api_dispatched(X) -> bool:
    """What lorak does with X: compute on it in its own namespace and on its own device —
    X is foreign (:func:`is_foreign`) and array API dispatch is enabled. A foreign X with
    dispatch off is copied to NumPy instead."""
    return is_foreign(X) and array_api_dispatch_enabled()


def array_namespace(*arrays):
    """The (array_api_compat-wrapped) namespace of the foreign arrays among ``arrays``."""
    foreign = [a for a in arrays if is_foreign(a)]
    return compat.array_namespace(*foreign)


def namespace_name(X) -> str:
    """A short name of X's library for messages ("torch", "cupy", "array_api_strict")."""
    return (type(X).__module__ or "array").split(".")[0]


def device_of(X):
    return compat.device(X)


def has_float64(xp, device) -> bool:
    """Whether ``device`` holds float64 arrays (Apple's MPS does not)."""
    try:
        xp.zeros(1, dtype=xp.float64, device=device)
    except Exception:
        return False
    return True


def numpy_dtype(xp, dtype) -> np.dtype:
    """The NumPy float dtype matching ``xp``'s ``dtype`` (float32 or float64)."""
    return np.dtype(np.float32 if dtype == xp.float32 else np.float64)


def to_numpy(A):
    """A NumPy copy (or view, on the host) of an array of any namespace."""
    if A is None or isinstance(A, np.ndarray):
        return A
    if compat.is_torch_array(A):
        return A.detach().cpu().numpy()
    if compat.is_cupy_array(A):
        return A.get()
    try:
        return np.asarray(A)
    except Exception:
        return np.from_dlpack(A)


def to_host(A):
    """A foreign array copied to NumPy; anything else (NumPy, sparse, dask, lists, None)
    as it is."""
    return to_numpy(A) if is_foreign(A) else A


def as_dense(A):
    """A as a dense array of its own namespace: a sparse matrix densified, a foreign
    array as it is, anything else as a NumPy array."""
    if is_foreign(A):
        return A
    return A.toarray() if sp.issparse(A) else np.asarray(A)


def move_like(X, A):
    """A host array ``A`` on the device of X when X is foreign, else ``A`` as it is."""
    return on_device(A, array_namespace(X), device_of(X)) if is_foreign(X) else A


def mean_sq_row_norm(Q) -> float:
    """The mean squared row norm of Q (NumPy, accumulated in float64; or any array API
    namespace, on Q's device)."""
    if is_foreign(Q):
        xp = array_namespace(Q)
        return float(xp.mean(xp.sum(Q * Q, axis=1)))
    return float(np.mean(np.einsum("ij,ij->i", Q, Q, dtype=np.float64)))


def on_device(A, xp, device, dtype=None):
    """A (NumPy or foreign) array as an array of ``xp`` on ``device`` (``dtype`` if given).

    No copy when it is there already.
    """
    if A is None:
        return None
    if isinstance(A, np.ndarray) or isinstance(A, np.generic):
        if compat.is_torch_namespace(xp):
            import torch

            t = torch.from_numpy(np.ascontiguousarray(A))
            return t.to(device=device, dtype=dtype)
        A = xp.asarray(np.ascontiguousarray(A), device=device)
    elif device_of(A) != device:
        A = compat.to_device(A, device)
    if dtype is not None and A.dtype != dtype:
        A = xp.astype(A, dtype)
    return A


def like_input(X, *arrays):
    """``arrays`` (fitted NumPy or device arrays) in X's namespace, device and float
    dtype: moved to X's device for an array API X, copied to NumPy (and cast to X's
    dtype) for a NumPy X. ``None`` stays ``None``."""
    if is_foreign(X):
        xp, dev = array_namespace(X), device_of(X)
        return tuple(on_device(A, xp, dev, X.dtype) for A in arrays)
    dtype = X.dtype if X.dtype in (np.float32, np.float64) else np.float64
    return tuple(
        None if A is None else np.asarray(to_numpy(A)).astype(dtype, copy=False) for A in arrays
    )


def solve_triangular(xp, A, B, *, lower: bool):
    """Solve A X = B for a triangular A with the namespace's own solver.

    PyTorch: ``torch.linalg.solve_triangular``; CuPy:
    ``cupyx.scipy.linalg.solve_triangular``; any other namespace (the standard has no
    triangular solve): SciPy's on the host, copied back to A's device.
    """
    if compat.is_torch_namespace(xp):
        import torch

        return torch.linalg.solve_triangular(A, B, upper=not lower)
    if compat.is_cupy_namespace(xp):
        from cupyx.scipy.linalg import solve_triangular as cupy_solve

        return cupy_solve(A, B, lower=lower)
    from scipy.linalg import solve_triangular as host_solve

    X = host_solve(to_numpy(A), to_numpy(B), lower=lower, check_finite=False)
    return on_device(X, xp, device_of(A))

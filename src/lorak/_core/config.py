"""Library-wide settings (a tiny analogue of ``sklearn.get_config``)."""

from __future__ import annotations

import contextlib
import threading

__all__ = ["array_api_dispatch_enabled", "config_context", "get_config", "set_config"]

_DEFAULTS = {
    # Bytes one kernel block may occupy while a larger matrix is evaluated in chunks.
    "memory_budget": 64 * 2**20,
    # Compute on array API inputs (PyTorch, CuPy, ...) in their own namespace/device.
    "array_api_dispatch": False,
}
_local = threading.local()


def _cfg() -> dict:
    if not hasattr(_local, "cfg"):
        _local.cfg = dict(_DEFAULTS)
    return _local.cfg


def get_config() -> dict:
    """Return a copy of the current settings."""
    return dict(_cfg())


def set_config(*, memory_budget: int | None = None, array_api_dispatch: bool | None = None) -> None:
    """Change settings for the current thread.

    Parameters
    ----------
    memory_budget : int, optional
        Bytes a kernel block may use when a large kernel product is computed in row
        chunks (default 64 MiB). Outputs (e.g. the n×m factor) are not counted. On a
        GPU it also sets the row chunks of the device computations.
    array_api_dispatch : bool, optional
        Compute on array API inputs (a PyTorch tensor, a CuPy array, ...) in their own
        namespace and on their own device, returning outputs there (default False).
        Dispatch is on when this setting *or* scikit-learn's
        ``sklearn.set_config(array_api_dispatch=True)`` is True (see
        :func:`array_api_dispatch_enabled`). NumPy input always takes the NumPy path.
    """
    if memory_budget is not None:
        if isinstance(memory_budget, bool) or not isinstance(memory_budget, int):
            raise TypeError(f"memory_budget must be an int (bytes); got {memory_budget!r}")
        if memory_budget < 2**16:
            raise ValueError(f"memory_budget must be >= 65536 bytes; got {memory_budget}")
        _cfg()["memory_budget"] = memory_budget
    if array_api_dispatch is not None:
        if not isinstance(array_api_dispatch, bool):
            raise TypeError(f"array_api_dispatch must be True or False; got {array_api_dispatch!r}")
        _cfg()["array_api_dispatch"] = array_api_dispatch


def array_api_dispatch_enabled() -> bool:
    """Whether non-NumPy array API inputs are computed on in their own namespace.

    The rule: lorak's own ``array_api_dispatch`` setting or scikit-learn's is True
    (:ref:`guide-gpu`, section "Switching it on").
    """
    if _cfg()["array_api_dispatch"]:
        return True
    try:
        from sklearn import get_config as _sk_get_config
    except ImportError:  # pragma: no cover - scikit-learn is a dependency
        return False
    return bool(_sk_get_config().get("array_api_dispatch", False))


@contextlib.contextmanager
def config_context(**kwargs):
    """Temporarily change settings: ``with config_context(memory_budget=2**24): ...``."""
    old = get_config()
    set_config(**kwargs)
    try:
        yield
    finally:
        _cfg().update(old)

"""Library-wide settings (a tiny analogue of ``sklearn.get_config``)."""

from __future__ import annotations

import contextlib
import threading

__all__ = ["config_context", "get_config", "set_config"]

_DEFAULTS = {
    # Bytes one kernel block may occupy while a larger matrix is evaluated in chunks.
    "memory_budget": 64 * 2**20,
}
_local = threading.local()


def _cfg() -> dict:
    if not hasattr(_local, "cfg"):
        _local.cfg = dict(_DEFAULTS)
    return _local.cfg


def get_config() -> dict:
    """Return a copy of the current settings."""
    return dict(_cfg())


def set_config(*, memory_budget: int | None = None) -> None:
    """Change settings for the current thread.

    Parameters
    ----------
    memory_budget : int, optional
        Bytes a kernel block may use when a large kernel product is computed in row
        chunks (default 64 MiB). Outputs (e.g. the n×m factor) are not counted.
    """
    if memory_budget is not None:
        if isinstance(memory_budget, bool) or not isinstance(memory_budget, int):
            raise TypeError(f"memory_budget must be an int (bytes); got {memory_budget!r}")
        if memory_budget < 2**16:
            raise ValueError(f"memory_budget must be >= 65536 bytes; got {memory_budget}")
        _cfg()["memory_budget"] = memory_budget


@contextlib.contextmanager
def config_context(**kwargs):
    """Temporarily change settings: ``with config_context(memory_budget=2**24): ...``."""
    old = get_config()
    set_config(**kwargs)
    try:
        yield
    finally:
        _cfg().update(old)

"""Capture of the software and hardware a benchmark ran on."""

from __future__ import annotations

import platform
import sys
from pathlib import Path

__all__ = ["capture_environment"]


def _version(module: str) -> str | None:
    try:
        mod = __import__(module)
    except Exception:
        return None
    return getattr(mod, "__version__", None)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def _thread_counts() -> dict:
    """Thread counts per threadpool API (``blas``, ``openmp``), from threadpoolctl."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return {}
    out: dict = {}
    for info in threadpool_info():
        api = info.get("user_api") or "unknown"
        out[api] = max(out.get(api, 0), int(info.get("num_threads") or 0))
        name = f"{api}:{info.get('internal_api')}"
        out[name] = max(out.get(name, 0), int(info.get("num_threads") or 0))
    return out


def capture_environment() -> dict:
    """Versions, CPU model, BLAS/OpenMP threads, platform and the load average (1, 5,
    15 min; the machine may be shared), as a JSON-ready dict."""
    import os

    return {
        "python": sys.version.split()[0],
        "numpy": _version("numpy"),
        "scipy": _version("scipy"),
        "sklearn": _version("sklearn"),
        "lorak": _version("lorak"),
        "cpu": _cpu_model(),
        "threads": _thread_counts(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }

"""The version of lorak, a leaf the package reads.

It is the installed distribution's version, which setuptools-scm derives from the git
tags when the package is built or installed (``pyproject.toml``); a source tree that
is not installed reports the fallback below.
"""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _distribution_version

try:
    __version__ = _distribution_version("lorak")
except PackageNotFoundError:  # pragma: no cover - a bare source tree on sys.path
    __version__ = "0.1.0.dev0"

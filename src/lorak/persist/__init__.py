"""Save and load fitted estimators without pickle.

``save(estimator, path)`` writes one zip file of JSON and arrays; ``load(path)`` never
unpickles and never imports a module named in the file, and rebuilds only classes of
an allowlist, refusing anything else with :class:`PersistenceError`. The skops format is
supported too (``save(est, path, format="skops")``, :func:`skops_trusted_types`). The
file format, what loading refuses and the skops route: :ref:`guide-persistence`.

>>> import numpy as np, tempfile, os
>>> from lorak import Nystroem, save, load
>>> X = np.random.default_rng(0).standard_normal((50, 3))
>>> est = Nystroem(n_components=10, random_state=0).fit(X)
>>> path = os.path.join(tempfile.mkdtemp(), "nys.lorak")
>>> save(est, path)
>>> np.array_equal(load(path).transform(X), est.transform(X))
True
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Iterable

from . import _checks, _native, _skops
from ._allowlist import register_trusted, trusted_classes
from ._checks import PersistenceError
from ._legacy import MOVED_CLASSES  # noqa: F401  (a public name of this module)
from ._native import FORMAT_NAME, FORMAT_VERSION
from ._skops import skops_trusted_types

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "PersistenceError",
    "load",
    "register_trusted",
    "save",
    "skops_trusted_types",
    "trusted_classes",
]

_FORMATS = ("lorak", "skops")


def save(estimator, path, *, format: str = "lorak") -> None:
    """Write ``estimator`` (fitted or not) to ``path`` in a safe format.

    Parameters
    ----------
    estimator : a lorak estimator (or any object built from allowlisted classes)
    path : str or os.PathLike
        Written atomically (a temporary file in the same folder, then renamed).
    format : {"lorak", "skops"}, default="lorak"
        ``"lorak"``: lorak's own format (JSON + .npz, versioned, checksummed).
        ``"skops"``: skops's secure format (needs the ``skops`` extra), readable with
        :func:`load` or with ``skops.io.load(path, trusted=skops_trusted_types())``.

    Raises
    ------
    PersistenceError
        If the object holds something that cannot be stored without pickle: a
        function (a callable kernel or landmark strategy), or an instance of a class
        outside the allowlist (:func:`trusted_classes`, :func:`skops_trusted_types`).
        Also whenever :func:`load` would refuse the file: a fitted state that load's
        checks reject (NaN in a fitted array, a ``kernel_`` that is no kernel) or a
        fitted estimator whose prediction fails on a row of zeros. A file this
        function writes is one :func:`load` reads back.
    ValueError
        ``format`` is not one of the two names.
    ImportError
        ``format="skops"`` and skops is not installed.
    """
    if not isinstance(format, str) or format not in _FORMATS:
        raise ValueError(f"format must be one of {_FORMATS}; got {format!r}")
    path = os.fspath(path)
    if format == "skops":
        _checks.check_before_save(estimator)
        _write_atomic(path, _skops.skops_bytes(estimator))
        return
    _write_atomic(path, _native.native_bytes(estimator))


def _write_atomic(path: str, data: bytes) -> None:
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def load(path, *, trusted: Iterable[type] = ()):
    """Read an estimator written by :func:`save`, in either format.

    A skops file is loaded by skops with ``trusted=skops_trusted_types()`` plus
    ``trusted``, after checking that it names no other type (this needs the ``skops``
    extra; :ref:`guide-persistence`).

    Parameters
    ----------
    path : str or os.PathLike
    trusted : iterable of classes, optional
        Extra classes (beyond :func:`trusted_classes`) this call may rebuild.

    Raises
    ------
    PersistenceError (a ValueError)
        The file is not a lorak file, is truncated, fails its checksum (altered), was
        written by a newer format version, or names a class outside the allowlist.
    FileNotFoundError
        No file at ``path``.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such file: {path!r}")
    try:
        zf = zipfile.ZipFile(path, "r")
    except (zipfile.BadZipFile, EOFError, OSError) as exc:
        raise PersistenceError(
            f"{path} is not a lorak file or is truncated (not a readable zip archive: {exc})"
        ) from exc
    extra = list(trusted)
    for cls in extra:
        if not isinstance(cls, type):
            zf.close()
            raise TypeError(f"trusted must hold classes; got {cls!r}")
    names = set(zf.namelist())
    if _native.HEADER not in names and _skops.SKOPS_SCHEMA in names:
        zf.close()
        return _skops.load_skops(path, extra)
    return _native.read_native(zf, path, extra)

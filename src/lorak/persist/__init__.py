"""Save and load fitted estimators without pickle.

``save(estimator, path)`` writes one zip file with three members:

``lorak.json``
    The header: format name, ``format_version``, the lorak version that wrote it, and
    the SHA-256 of the two other members.
``state.json``
    The object tree as JSON: parameters and fitted scalars, strings, lists and dicts
    as they are; every array, numpy scalar and sparse matrix as a reference into
    ``arrays.npz``; every nested object (estimators, kernels, kernel banks, landmark
    and result dataclasses, the scikit-learn classifiers lorak wraps) as a class name
    plus its attribute dict.
``arrays.npz``
    The arrays, written by :func:`numpy.savez` and read with ``allow_pickle=False``.

``load(path)`` never unpickles and never imports a module named in the file: a
class name is looked up in an allowlist built from classes already imported —
lorak's own estimators, kernels, kernel banks and dataclasses (found generically, so
new estimators need no code here) and a fixed set of scikit-learn estimators that
lorak estimators wrap (``LinearSVC``, ``LogisticRegression``, ``SVC``, …). Anything
else is refused with :class:`PersistenceError` — when saving (functions, lambdas,
open files, unknown objects) and when loading (a class name not in the allowlist).

The checksums detect truncated or altered files; they do not authenticate the file
(whoever edits it can recompute them). What makes loading an untrusted file safe is
that it cannot run code: only allowlisted classes are instantiated, with
``object.__new__`` and their attribute dict (no ``__init__``, ``__reduce__`` or
``__setstate__`` of an unknown class is ever called).

>>> import numpy as np, tempfile, os
>>> from lorak import Nystroem, save, load
>>> X = np.random.default_rng(0).standard_normal((50, 3))
>>> est = Nystroem(n_components=10, random_state=0).fit(X)
>>> path = os.path.join(tempfile.mkdtemp(), "nys.lorak")
>>> save(est, path)
>>> np.array_equal(load(path).transform(X), est.transform(X))
True

skops compatibility
-------------------
Every lorak estimator can also be written in `skops <https://skops.readthedocs.io>`_'s
secure format (the optional extra ``lorak[skops]``), either with
``save(est, path, format="skops")`` or with skops itself::

    import skops.io
    skops.io.dump(est, "est.skops")
    est = skops.io.load("est.skops", trusted=lorak.persist.skops_trusted_types())

skops refuses every type it does not trust by default (lorak's classes, scipy's CSR
containers) unless the caller names it; :func:`skops_trusted_types` names exactly
lorak's allowlist (:func:`trusted_classes`) plus the two sparse classes lorak
estimators store, so a file holding anything else (a function, say a callable kernel)
is still refused (skops itself also trusts some types by default, e.g. every
scikit-learn estimator). :func:`load` recognises a skops file and is stricter: besides
skops's audit it reads the file's schema and accepts only the allowlist (plus its
``trusted`` argument) and plain data (builtin containers and scalars, numpy arrays,
number scalars and random states); anything else raises :class:`PersistenceError`,
and ``save(..., format="skops")`` refuses to write such a file. skops rebuilds a
trusted class with ``cls.__new__`` and ``__setstate__``/``__dict__`` and reads arrays
with ``allow_pickle=False``; skops files carry no lorak checksum or lorak format
version (a truncated or damaged one still fails with :class:`PersistenceError`).

The package, one module per concern: :mod:`._native` (the format above),
:mod:`._skops` (skops files), :mod:`._allowlist` (the classes ``load`` may rebuild),
:mod:`._legacy` (class names of files saved under an old module path) and
:mod:`._checks` (the state rules and the one-row probe both formats share).
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

    A skops file (one with skops's ``schema.json``, whether written by
    ``save(..., format="skops")`` or by ``skops.io.dump``) is loaded by skops with
    ``trusted=skops_trusted_types()`` plus ``trusted``, after checking that it names
    no other type than those and plain data (skops's wider defaults, such as
    scikit-learn estimators outside lorak's list, are refused); this needs the
    ``skops`` extra.

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

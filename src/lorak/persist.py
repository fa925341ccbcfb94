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
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import math
import os
import sys
import zipfile
import zlib
from collections.abc import Iterable

import numpy as np
import scipy.sparse as sp

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

FORMAT_NAME = "lorak-estimator"
#: Version of the file layout. ``load`` refuses files written with a newer version.
FORMAT_VERSION = 1

_HEADER = "lorak.json"
_STATE = "state.json"
_ARRAYS = "arrays.npz"
_TAG = "__lorak__"

# scikit-learn estimators that lorak estimators hold (SemiSupervisedFactorClassifier's
# classifier, downstream models); only these, plus lorak's own classes, are rebuilt.
_SKLEARN_TRUSTED = {
    "sklearn.svm": ("LinearSVC", "LinearSVR", "SVC", "SVR", "NuSVC", "NuSVR"),
    "sklearn.linear_model": (
        "LogisticRegression",
        "LinearRegression",
        "Ridge",
        "RidgeClassifier",
        "RidgeClassifierCV",
        "RidgeCV",
    ),
    "sklearn.preprocessing": ("StandardScaler", "MinMaxScaler", "LabelEncoder", "LabelBinarizer"),
    "sklearn.decomposition": ("PCA",),
    "sklearn.cluster": ("KMeans",),
    "sklearn.kernel_approximation": ("Nystroem", "RBFSampler"),
    "sklearn.pipeline": ("Pipeline",),
    "sklearn.dummy": ("DummyClassifier", "DummyRegressor"),
}

_extra_trusted: dict[str, type] = {}

#: Classes that moved since files were first written: ``{"old:Qual": "new:Qual"}``.
#: ``load`` reads a class name through this table before the allowlist lookup, so a
#: file saved under an old module path still loads (the class itself must still be in
#: the allowlist under its new path). Files are always written under the current path.
MOVED_CLASSES: dict[str, str] = {
    f"{old}:{cls}": f"{new}:{cls}"
    for old, moves in {
        # 0.1.0.dev0: the seven flat estimator modules became lorak.estimators/<stem>
        # and lorak.models/<stem>, each named after the math it calls
        "lorak.estimators": {
            "Nystroem": "lorak.estimators._nystrom",
            "ExactEigen": "lorak.estimators._nystrom",
            "IncompleteCholesky": "lorak.estimators._icd",
        },
        "lorak.semi_supervised": {
            "GeneralizedNystroem": "lorak.estimators._gen_nystrom",
            "SemiSupervisedFactorClassifier": "lorak.models._semi_supervised",
        },
        "lorak.csi": {"CSI": "lorak.estimators._csi"},
        "lorak.landmarks": {"Landmarks": "lorak.landmarks._base"},
        "lorak.npkl": {"SimpleNPKL": "lorak.estimators._simple_npkl"},
        "lorak.mkl": {"LowRankMKLClassifier": "lorak.estimators._lp_mkl"},
        "lorak.multiple_kernel": {
            "MultipleKernelGeneralizedNystroem": "lorak.estimators._mk_gen_nystrom"
        },
        "lorak.kernel_combination": {
            name: "lorak.estimators._kernel_combination"
            for name in (
                "UniformKernelSum",
                "ABMKL",
                "CABMKL",
                "GLMKLClassifier",
                "AlignmentMKLClassifier",
            )
        },
    }.items()
    for cls, new in moves.items()
}

_FORMATS = ("lorak", "skops")
_SKOPS_SCHEMA = "schema.json"


class PersistenceError(ValueError):
    """A file cannot be written or read safely: corrupt, truncated, tampered, from a
    newer format version, or naming a class outside the allowlist."""


# --------------------------------------------------------------------------- allowlist


def _qualname(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _is_lorak_persistable(cls: type) -> bool:
    from sklearn.base import BaseEstimator

    from .kernels import Kernel, KernelBank

    if not isinstance(cls, type):
        return False
    return (
        issubclass(cls, (BaseEstimator, Kernel, KernelBank)) or dataclasses.is_dataclass(cls)
    ) and "<locals>" not in cls.__qualname__


def trusted_classes() -> dict[str, type]:
    """The allowlist: ``{"module:QualName": class}`` of every class ``load`` may rebuild.

    lorak's classes are collected from the lorak modules already imported (importing
    :mod:`lorak` imports every estimator), so a new estimator is covered as soon as
    the package exports it; scikit-learn's are a fixed list; :func:`register_trusted`
    adds more.
    """
    import lorak  # noqa: F401  (makes sure every estimator module is imported)

    out: dict[str, type] = {}
    for modname, mod in list(sys.modules.items()):
        if mod is None or not (modname == "lorak" or modname.startswith("lorak.")):
            continue
        if modname.startswith("lorak.bench"):
            continue
        for obj in list(vars(mod).values()):
            if (
                isinstance(obj, type)
                and obj.__module__.split(".")[0] == "lorak"
                and _is_lorak_persistable(obj)
            ):
                out[_qualname(obj)] = obj
    import importlib

    for modname, names in _SKLEARN_TRUSTED.items():
        mod = importlib.import_module(modname)  # fixed list in this file, not the file read
        for name in names:
            cls = getattr(mod, name, None)
            if isinstance(cls, type):
                out[_qualname(cls)] = cls
    out.update(_extra_trusted)
    return out


def register_trusted(*classes: type) -> None:
    """Allow ``load`` to rebuild these classes too (e.g. your own classifier).

    Only register classes whose instances are plain data: ``load`` restores their
    attribute dict without calling ``__init__``.
    """
    for cls in classes:
        if not isinstance(cls, type):
            raise TypeError(f"register_trusted takes classes; got {cls!r}")
        _extra_trusted[_qualname(cls)] = cls


def _skops_name(cls: type) -> str:
    # skops names a type "module.ClassName" (its __module__ and __name__)
    return f"{cls.__module__}.{cls.__name__}"


def skops_trusted_types() -> list[str]:
    """The type names to pass as ``skops.io.load(..., trusted=...)`` for lorak estimators.

    Exactly lorak's own allowlist (:func:`trusted_classes`: lorak's estimators,
    kernels, kernel banks and result dataclasses, the fixed list of scikit-learn
    estimators lorak wraps, and classes added with :func:`register_trusted`) in
    skops's ``"module.ClassName"`` spelling, plus ``scipy.sparse``'s ``csr_matrix`` and
    ``csr_array`` (lorak stores sparse inputs such as Nystroem landmarks and
    SimpleNPKL's constraint graph in CSR). numpy arrays, dtypes, random generators and
    builtin containers are trusted by skops already. No function, method or module
    name is in the list, so a file that asks skops to import one is still refused.
    Needs no skops installed.
    """
    names = {
        _skops_name(cls)
        for cls in trusted_classes().values()
        if cls.__qualname__ == cls.__name__  # skops looks classes up as module attributes
    }
    names.update(_skops_name(cls) for cls in (sp.csr_matrix, sp.csr_array))
    return sorted(names)


def _skops_plain_types() -> set[str]:
    """Plain-data types a skops file of a lorak estimator holds besides the allowlist:
    builtin containers and scalars, numpy arrays and number scalars, numpy random
    states. (skops trusts these by default; lorak.load accepts no other default.)"""
    names = {f"builtins.{t.__name__}" for t in (dict, list, tuple, set, str, int, float, bool)}
    names.add(_skops_name(np.ndarray))
    names.update(
        f"numpy.{t.__name__}"
        for t in set(np.sctypeDict.values())
        if issubclass(t, (np.number, np.bool_))
    )
    names.update(_skops_name(c) for c in (np.random.Generator, np.random.RandomState))
    return names


def _skops_outside(skops_io, data: bytes, allow: set[str], path) -> list[str]:
    """Every type a skops file names that lorak does not accept: skops's own audit
    (:func:`skops.io.get_untrusted_types`) minus ``allow``, plus every class named in
    its schema outside ``allow`` and the plain-data types (skops trusts more types by
    default, e.g. any scikit-learn estimator; lorak.load does not)."""
    try:
        untrusted = set(skops_io.get_untrusted_types(data=data))
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            schema = json.loads(zf.read(_SKOPS_SCHEMA).decode("utf-8"))
    except Exception as exc:  # any failure to read the schema: a corrupt file
        raise PersistenceError(
            f"{path} is a corrupt or truncated skops file ({type(exc).__name__}: {exc})"
        ) from exc
    named: set[str] = set()
    stack = [schema]
    while stack:  # every node of the schema names its type with __module__ + __class__
        node = stack.pop()
        if isinstance(node, dict):
            mod, cls = node.get("__module__"), node.get("__class__")
            if isinstance(mod, str) and isinstance(cls, str):
                named.add(f"{mod}.{cls}")
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return sorted((untrusted - allow) | (named - allow - _skops_plain_types()))


def _check_skops_random_states(data: bytes, path) -> None:
    """Validate every random state a skops file holds before skops rebuilds it.

    skops trusts numpy random states and hands their stored state to numpy, which does
    not bound-check an MT19937 position: a file could make it read out of bounds. Each
    ``"pos"`` must be an integer in [0, 624] and each ``"key"`` array 624 words; any
    other MT19937-like payload is refused."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            schema = json.loads(zf.read(_SKOPS_SCHEMA).decode("utf-8"))
            stack = [(schema, False)]
            while stack:
                node, in_state = stack.pop()
                if isinstance(node, list):
                    stack.extend((v, in_state) for v in node)
                    continue
                if not isinstance(node, dict):
                    continue
                rs = in_state or node.get("__loader__") in (
                    "RandomStateNode",
                    "RandomGeneratorNode",
                )
                content = node.get("content")
                if rs and isinstance(content, dict):
                    if "pos" in content:
                        pos = json.loads(content["pos"].get("content", "null"))
                        if isinstance(pos, bool) or not isinstance(pos, int) or not 0 <= pos <= 624:
                            raise PersistenceError(
                                f"{path}: a random state's MT19937 position {pos!r} is not "
                                "in [0, 624]; refusing to load it"
                            )
                    if "key" in content and "file" in content["key"]:
                        f = content["key"]["file"]
                        with zf.open(f) as fh:
                            arr = np.load(fh, allow_pickle=False)
                        if arr.shape != (624,):
                            raise PersistenceError(
                                f"{path}: a random state's MT19937 key has shape "
                                f"{arr.shape}, not (624,); refusing to load it"
                            )
                stack.extend((v, rs) for v in node.values() if isinstance(v, (dict, list)))
    except PersistenceError:
        raise
    except Exception as exc:
        raise PersistenceError(
            f"{path} is a corrupt or truncated skops file ({type(exc).__name__}: {exc})"
        ) from exc


def _import_skops(what: str):
    try:
        import skops.io as skops_io
    except ImportError as exc:
        raise ImportError(
            f"{what} needs the optional dependency skops, which is not installed; "
            "install it with: pip install 'lorak[skops]'"
        ) from exc
    return skops_io


# --------------------------------------------------------------------------- encoding


class _Encoder:
    def __init__(self, trusted: dict[str, type]):
        self.trusted = trusted
        self.arrays: dict[str, np.ndarray] = {}
        self._array_ids: dict[int, str] = {}
        self._keep: list = []  # keeps ids stable while encoding
        self._stack: set[int] = set()

    def _store(self, a: np.ndarray) -> str:
        key = self._array_ids.get(id(a))
        if key is None:
            key = f"a{len(self.arrays)}"
            self.arrays[key] = a
            self._array_ids[id(a)] = key
            self._keep.append(a)
        return key

    def encode(self, obj, where: str):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int) and type(obj) is int:
            return obj
        if type(obj) is float:
            if math.isfinite(obj):
                return obj
            return {_TAG: "float", "value": repr(obj)}
        if isinstance(obj, np.generic):
            if obj.dtype.kind == "O":
                raise PersistenceError(f"cannot save {where}: numpy object scalar {obj!r}")
            return {_TAG: "scalar", "key": self._store(np.asarray(obj))}
        if isinstance(obj, np.ndarray):
            return self._encode_array(obj, where)
        if sp.issparse(obj):
            return self._encode_sparse(obj, where)
        if isinstance(obj, np.dtype):
            if obj.kind == "O" or obj.fields is not None:
                raise PersistenceError(f"cannot save {where}: dtype {obj!r}")
            return {_TAG: "dtype", "str": obj.str}
        if isinstance(obj, (list, tuple, set, frozenset, dict)):
            if id(obj) in self._stack:
                raise PersistenceError(f"cannot save {where}: it contains itself")
            self._stack.add(id(obj))
            try:
                return self._encode_container(obj, where)
            finally:
                self._stack.discard(id(obj))
        if isinstance(obj, np.random.Generator):
            return self._encode_generator(obj, where)
        if isinstance(obj, np.random.RandomState):
            _, keys, pos, has_gauss, cached = obj.get_state(legacy=True)
            return {
                _TAG: "random_state",
                "keys": self._store(np.asarray(keys)),
                "pos": int(pos),
                "has_gauss": int(has_gauss),
                "cached_gaussian": float(cached),
            }
        if isinstance(obj, complex):
            return {_TAG: "complex", "real": repr(obj.real), "imag": repr(obj.imag)}
        return self._encode_object(obj, where)

    def _encode_array(self, a: np.ndarray, where: str):
        if a.dtype.kind == "O":
            items = [self.encode(v, f"{where}[{i}]") for i, v in enumerate(a.ravel().tolist())]
            return {_TAG: "object_array", "shape": list(a.shape), "items": items}
        if a.dtype.kind == "V":
            raise PersistenceError(f"cannot save {where}: structured array dtype {a.dtype}")
        return {_TAG: "ndarray", "key": self._store(a)}

    def _encode_sparse(self, m, where: str):
        fmt = m.format
        if fmt not in ("csr", "csc", "coo"):
            m = m.tocsr()
            fmt = "csr"
        kind = "array" if isinstance(m, sp.sparray) else "matrix"
        if fmt == "coo":
            parts = {"data": m.data, "row": m.row, "col": m.col}
        else:
            parts = {"data": m.data, "indices": m.indices, "indptr": m.indptr}
        return {
            _TAG: "sparse",
            "format": fmt,
            "kind": kind,
            "shape": [int(s) for s in m.shape],
            "parts": {k: self._store(np.asarray(v)) for k, v in parts.items()},
        }

    def _encode_container(self, obj, where: str):
        if isinstance(obj, list) and type(obj) is list:
            return [self.encode(v, f"{where}[{i}]") for i, v in enumerate(obj)]
        if isinstance(obj, dict):
            if type(obj) is not dict:
                raise PersistenceError(
                    f"cannot save {where}: mapping type {type(obj).__name__} (only dict)"
                )
            if all(type(k) is str for k in obj):
                return {
                    _TAG: "dict",
                    "items": {k: self.encode(v, f"{where}[{k!r}]") for k, v in obj.items()},
                }
            return {
                _TAG: "dict_pairs",
                "items": [
                    [self.encode(k, f"{where} key"), self.encode(v, f"{where}[{k!r}]")]
                    for k, v in obj.items()
                ],
            }
        if type(obj) in (tuple, set, frozenset):
            items = obj if isinstance(obj, tuple) else sorted(obj, key=repr)
            return {
                _TAG: type(obj).__name__,
                "items": [self.encode(v, f"{where}[{i}]") for i, v in enumerate(items)],
            }
        raise PersistenceError(
            f"cannot save {where}: {type(obj).__name__} (a subclass of a builtin container)"
        )

    def _encode_generator(self, g: np.random.Generator, where: str):
        bg = g.bit_generator
        name = type(bg).__name__
        if name not in _BIT_GENERATORS:
            raise PersistenceError(f"cannot save {where}: bit generator {name}")
        return {_TAG: "generator", "bit_generator": name, "state": self.encode(bg.state, where)}

    def _encode_object(self, obj, where: str):
        cls = type(obj)
        name = _qualname(cls)
        if self.trusted.get(name) is not cls:
            if callable(obj):
                raise PersistenceError(
                    f"cannot save {where}: {obj!r} is a function or callable object, which "
                    "lorak does not store (loading it would mean importing and running "
                    "code); use a built-in kernel/strategy name, or refit after loading"
                )
            raise PersistenceError(
                f"cannot save {where}: objects of class {name} are not in lorak's allowlist "
                "of persistable classes (see lorak.persist.register_trusted)"
            )
        state = getattr(obj, "__dict__", None)
        if not isinstance(state, dict) or getattr(cls, "__slots__", ()):
            raise PersistenceError(f"cannot save {where}: {name} does not keep its state in a dict")
        problem = _state_problem(cls, state)
        if problem is not None:  # load would refuse the file: refuse to write it
            raise PersistenceError(
                f"cannot save {where}: {name}.{problem}, so lorak.load would refuse the file"
            )
        if id(obj) in self._stack:
            raise PersistenceError(f"cannot save {where}: it contains itself")
        self._stack.add(id(obj))
        try:
            enc = {
                k: self.encode(v, f"{where}.{k}")
                for k, v in state.items()
                if k != "_sklearn_version"
            }
        finally:
            self._stack.discard(id(obj))
        return {_TAG: "object", "class": name, "state": enc}


_BIT_GENERATORS = ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64")


def _check_npy_size(zf: zipfile.ZipFile, key: str) -> None:
    """Refuse an .npy member whose header claims more (or less) data than it holds,
    before numpy allocates what the header asks for."""
    try:
        info = zf.getinfo(key + ".npy")
        with zf.open(info) as f:
            version = np.lib.format.read_magic(f)
            if version == (1, 0):
                shape, _, dtype = np.lib.format.read_array_header_1_0(f)
            elif version == (2, 0):
                shape, _, dtype = np.lib.format.read_array_header_2_0(f)
            else:
                raise ValueError(f"npy format version {version}")
            start = f.tell()
    except (KeyError, ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
        raise PersistenceError(f"corrupt file: array {key!r} has a bad header ({exc})") from exc
    if dtype.hasobject:
        raise PersistenceError(
            f"array {key!r} cannot be read safely: it holds Python objects (pickle)"
        )
    claimed = math.prod(shape) * dtype.itemsize
    held = info.file_size - start
    if claimed != held:
        raise PersistenceError(
            f"corrupt file: array {key!r} claims shape {shape} of {dtype} "
            f"({claimed} bytes) but holds {held} bytes"
        )


def _check_mt_state(key, pos, what: str) -> None:
    """An MT19937 state numpy can use: 624 words and a position within them (numpy
    does not check the position; one outside reads out of bounds)."""
    key = np.asarray(key)
    if key.shape != (624,) or key.dtype.kind not in "iu":
        raise PersistenceError(f"corrupt file: {what} MT19937 key of shape {key.shape}")
    if isinstance(pos, bool) or not isinstance(pos, (int, np.integer)) or not 0 <= pos <= 624:
        raise PersistenceError(f"corrupt file: {what} MT19937 position {pos!r} not in [0, 624]")


# attributes whose arrays may hold NaN in a genuine fit (entries never evaluated)
_MAY_HOLD_NAN = frozenset({"duality_gap_", "alignment_scores_", "alignment_factors_"})
# attributes whose arrays may hold +inf (λ = ∞, the prior kernel, is a candidate of the
# generalized Nyström λ selection), but never NaN
_MAY_HOLD_INF = frozenset({"lam_grid_"})


def _state_problem(cls: type, attrs: dict) -> str | None:
    """What is wrong with the attribute dict of a lorak object, or None.

    Arrays of a genuine fit are finite (but for the few attributes listed in
    ``_MAY_HOLD_NAN`` and ``_MAY_HOLD_INF``), and ``kernel_`` holds a kernel (or the
    string ``"precomputed"`` of an estimator fitted with ``kernel="precomputed"``). The
    same rule runs when saving (:func:`save` refuses to write what :func:`load` would
    refuse) and when loading (a file whose checksum was recomputed after editing its
    state would otherwise load and transform to NaN, or fail later with an
    AttributeError far from the cause).
    """
    if not cls.__module__.startswith("lorak"):
        return None
    from .kernels import Kernel, KernelBank

    for key, value in attrs.items():
        if (
            isinstance(value, np.ndarray)
            and value.dtype.kind in "fc"
            and key not in _MAY_HOLD_NAN
            and not np.all(np.isfinite(value))
            and not (key in _MAY_HOLD_INF and not np.any(np.isnan(value) | (value == -np.inf)))
        ):
            return f"{key} holds NaN or infinity, which a fitted lorak estimator never stores"
        if key == "kernel_" and not _is_fitted_kernel(value, attrs, (Kernel, KernelBank)):
            got = repr(value)[:80] if isinstance(value, str) else type(value).__name__
            return (
                "kernel_ must be a lorak kernel, or the string 'precomputed' of an "
                f"estimator fitted with kernel='precomputed'; got {got}"
            )
    return None


def _is_fitted_kernel(value, attrs: dict, kernel_types: tuple) -> bool:
    """What a fitted ``kernel_`` may hold: a lorak kernel (or kernel bank), or — for an
    estimator fitted with ``kernel="precomputed"`` (Nystroem, IncompleteCholesky, CSI)
    — the string ``"precomputed"`` itself, which is what those fits store."""
    if isinstance(value, kernel_types):
        return True
    kernel = attrs.get("kernel")
    return (
        isinstance(value, str)
        and value == "precomputed"
        and isinstance(kernel, str)
        and kernel == "precomputed"
    )


def _check_state(name: str, cls: type, attrs: dict) -> None:
    """Refuse a decoded lorak object whose state :func:`_state_problem` rejects."""
    problem = _state_problem(cls, attrs)
    if problem is not None:
        raise PersistenceError(f"corrupt file: {name}.{problem}; the file was altered or damaged")


def _probe_problem(obj) -> tuple[str, BaseException | None] | None:
    """Run one row of zeros through a fitted estimator's first prediction method.

    Returns None when it answers with finite numbers (or the object is not a fitted
    estimator with ``n_features_in_``), else ``(what went wrong, the exception)``."""
    n = getattr(obj, "n_features_in_", None)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        return None
    import warnings

    for method in ("decision_function", "transform", "predict"):
        fn = getattr(obj, method, None)
        if fn is None:
            continue
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                out = fn(np.zeros((1, int(n))))
        except NotImplementedError:  # e.g. a transductive estimator
            continue
        except Exception as exc:
            return f"{method} fails ({type(exc).__name__}: {exc})", exc
        out = np.asarray(out)
        if out.dtype.kind in "fc" and not np.all(np.isfinite(out)):
            return f"{method} gives NaN or infinity", None
        return None
    return None


def _probe(obj, path) -> None:
    """Run one row through a loaded fitted estimator: a state that decodes but does
    not fit together (a string where an array belongs, …) fails here, at load time,
    with a PersistenceError, rather than later with an AttributeError."""
    problem = _probe_problem(obj)
    if problem is not None:
        what, exc = problem
        raise PersistenceError(
            f"{path}: the loaded {type(obj).__name__} is inconsistent: {what}; the file "
            "was altered or damaged"
        ) from exc


def _check_before_save(estimator) -> None:
    """Refuse to write what :func:`load` would refuse: the same one-row probe that
    ``load`` runs on what it read (the state rules of ``_state_problem`` run while
    encoding)."""
    problem = _probe_problem(estimator)
    if problem is not None:
        what, exc = problem
        raise PersistenceError(
            f"cannot save this {type(estimator).__name__}: {what} on a row of zeros, so "
            "lorak.load would refuse the file it would write"
        ) from exc


class _Decoder:
    def __init__(self, trusted: dict[str, type], arrays):
        self.trusted = trusted
        self.arrays = arrays
        self._cache: dict[str, np.ndarray] = {}

    def _array(self, key):
        if not isinstance(key, str):
            raise PersistenceError(f"corrupt file: array reference {key!r}")
        if key not in self._cache:
            if key not in self.arrays.files:
                raise PersistenceError(f"corrupt file: array {key!r} is missing")
            _check_npy_size(self.arrays.zip, key)
            try:
                self._cache[key] = self.arrays[key]
            except ValueError as exc:  # object arrays need pickle: refused
                raise PersistenceError(f"array {key!r} cannot be read safely: {exc}") from exc
        return self._cache[key]

    def decode(self, node):
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):
            return [self.decode(v) for v in node]
        if not isinstance(node, dict) or _TAG not in node:
            raise PersistenceError(f"corrupt file: unexpected node {str(node)[:80]}")
        tag = node[_TAG]
        try:
            return self._decode_tagged(tag, node)
        except PersistenceError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            raise PersistenceError(f"corrupt file: bad {tag!r} entry ({exc})") from exc

    def _decode_tagged(self, tag, node):
        if tag == "float":
            value = node["value"]
            if value not in ("nan", "inf", "-inf"):
                raise PersistenceError(f"corrupt file: float {value!r}")
            return float(value)
        if tag == "complex":
            return complex(float(node["real"]), float(node["imag"]))
        if tag == "scalar":
            a = self._array(node["key"])
            if a.ndim != 0:
                raise PersistenceError("corrupt file: a scalar entry holds an array")
            return a[()]
        if tag == "ndarray":
            return self._array(node["key"])
        if tag == "object_array":
            items = [self.decode(v) for v in node["items"]]
            out = np.empty(len(items), dtype=object)
            out[:] = items
            return out.reshape(tuple(int(s) for s in node["shape"]))
        if tag == "sparse":
            return self._decode_sparse(node)
        if tag == "dtype":
            dt = np.dtype(str(node["str"]))
            if dt.kind == "O":
                raise PersistenceError("corrupt file: object dtype")
            return dt
        if tag == "dict":
            items = node["items"]
            if not isinstance(items, dict):
                raise PersistenceError("corrupt file: dict entry")
            return {str(k): self.decode(v) for k, v in items.items()}
        if tag == "dict_pairs":
            return {_hashable(self.decode(k)): self.decode(v) for k, v in node["items"]}
        if tag == "tuple":
            return tuple(self.decode(v) for v in node["items"])
        if tag == "set":
            return {_hashable(self.decode(v)) for v in node["items"]}
        if tag == "frozenset":
            return frozenset(_hashable(self.decode(v)) for v in node["items"])
        if tag == "generator":
            name = node["bit_generator"]
            if name not in _BIT_GENERATORS:
                raise PersistenceError(f"bit generator {name!r} is not allowed")
            bg = getattr(np.random, name)()
            state = self.decode(node["state"])
            if name == "MT19937":
                inner = state["state"]
                _check_mt_state(inner["key"], inner["pos"], "generator")
            if name == "Philox" and not 0 <= int(state["buffer_pos"]) <= 4:
                raise PersistenceError("corrupt file: Philox buffer_pos out of range")
            bg.state = state
            return np.random.Generator(bg)
        if tag == "random_state":
            rs = np.random.RandomState()
            keys = np.asarray(self._array(node["keys"]), dtype=np.uint32)
            _check_mt_state(keys, node["pos"], "random_state")
            rs.set_state(
                (
                    "MT19937",
                    keys,
                    int(node["pos"]),
                    int(node["has_gauss"]),
                    float(node["cached_gaussian"]),
                )
            )
            return rs
        if tag == "object":
            return self._decode_object(node)
        raise PersistenceError(f"corrupt file: unknown entry type {tag!r}")

    def _decode_sparse(self, node):
        fmt = node["format"]
        parts = {k: self._array(v) for k, v in node["parts"].items()}
        shape = tuple(int(s) for s in node["shape"])
        if fmt == "csr":
            cls = sp.csr_array if node["kind"] == "array" else sp.csr_matrix
            return cls((parts["data"], parts["indices"], parts["indptr"]), shape=shape)
        if fmt == "csc":
            cls = sp.csc_array if node["kind"] == "array" else sp.csc_matrix
            return cls((parts["data"], parts["indices"], parts["indptr"]), shape=shape)
        if fmt == "coo":
            cls = sp.coo_array if node["kind"] == "array" else sp.coo_matrix
            return cls((parts["data"], (parts["row"], parts["col"])), shape=shape)
        raise PersistenceError(f"corrupt file: sparse format {fmt!r}")

    def _decode_object(self, node):
        name = node["class"]
        if isinstance(name, str):
            name = MOVED_CLASSES.get(name, name)
        cls = self.trusted.get(name) if isinstance(name, str) else None
        if cls is None:
            raise PersistenceError(
                f"the file asks for class {name!r}, which is not in lorak's allowlist of "
                "persistable classes; refusing to load it (see "
                "lorak.persist.register_trusted if you trust this class)"
            )
        state = node["state"]
        if not isinstance(state, dict):
            raise PersistenceError(f"corrupt file: state of {name}")
        obj = object.__new__(cls)
        attrs = {str(k): self.decode(v) for k, v in state.items()}
        _check_state(name, cls, attrs)
        # the attribute dict is set directly (frozen dataclasses included); no method
        # of the class runs.
        obj.__dict__.update(attrs)
        return obj


def _hashable(v):
    if isinstance(v, list):
        return tuple(_hashable(x) for x in v)
    return v


# --------------------------------------------------------------------------- files


def _digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(len(p).to_bytes(8, "little"))
        h.update(p)
    return h.hexdigest()


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
        _check_before_save(estimator)
        _write_atomic(path, _skops_bytes(estimator))
        return
    from ._version import __version__

    enc = _Encoder(trusted_classes())
    tree = enc.encode(estimator, "estimator")  # refuses a state that load would refuse
    _check_before_save(estimator)
    state_bytes = json.dumps(tree, allow_nan=False).encode("utf-8")
    buf = io.BytesIO()
    np.savez(buf, **enc.arrays)
    array_bytes = buf.getvalue()
    header = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "lorak_version": __version__,
        "class": tree.get("class") if isinstance(tree, dict) else None,
        "sha256": _digest(state_bytes, array_bytes),
    }
    header_bytes = json.dumps(header, sort_keys=True, indent=1).encode("utf-8")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr(_HEADER, header_bytes)
        zf.writestr(_STATE, state_bytes)
        zf.writestr(_ARRAYS, array_bytes)
    _write_atomic(path, buf.getvalue())


def _write_atomic(path: str, data: bytes) -> None:
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _skops_bytes(estimator) -> bytes:
    skops_io = _import_skops('save(..., format="skops")')
    try:
        data = skops_io.dumps(estimator)
    except (TypeError, ValueError) as exc:  # skops's UnsupportedTypeException is a TypeError
        raise PersistenceError(f"skops cannot save this estimator: {exc}") from exc
    # refuse what lorak.load would refuse, so that every file written here loads back
    outside = _skops_outside(skops_io, data, set(skops_trusted_types()), "the estimator")
    if outside:
        raise PersistenceError(
            f"cannot save the estimator in skops format: it holds {outside}, outside "
            "lorak's allowlist (functions such as a callable kernel are never stored; use "
            "a built-in kernel/strategy name, see lorak.persist.register_trusted, or call "
            "skops.io.dump yourself if you will load it with skops.io.load)"
        )
    return data


def _load_skops(path: str, trusted: list[type]):
    skops_io = _import_skops(f"load({path!r}) (a skops file)")
    from skops.io.exceptions import UntrustedTypesFoundException

    with open(path, "rb") as f:
        data = f.read()
    allow = set(skops_trusted_types()) | {_skops_name(cls) for cls in trusted}
    outside = _skops_outside(skops_io, data, allow, path)
    _check_skops_random_states(data, path)
    if outside:
        raise PersistenceError(
            f"the skops file {path} holds types outside lorak's allowlist: {outside}; "
            "refusing to load it (pass trusted=[...] classes, or use skops.io.load with "
            "your own reviewed list, if you trust them)"
        )
    try:
        obj = skops_io.loads(data, trusted=sorted(allow))
        _probe(obj, path)
        return obj
    except UntrustedTypesFoundException as exc:  # the audit above should catch these
        raise PersistenceError(f"{path}: {exc}") from exc
    except (ValueError, TypeError, KeyError, OSError, EOFError, zipfile.BadZipFile) as exc:
        raise PersistenceError(
            f"{path} is a corrupt or truncated skops file ({type(exc).__name__}: {exc})"
        ) from exc


def _read_member(zf: zipfile.ZipFile, name: str, path) -> bytes:
    try:
        return zf.read(name)
    except KeyError:
        raise PersistenceError(f"{path} is not a complete lorak file: {name} is missing") from None
    except (zipfile.BadZipFile, EOFError, OSError, zlib.error) as exc:
        raise PersistenceError(f"{path} is truncated or corrupt ({name}: {exc})") from exc


def _header(zf: zipfile.ZipFile, path) -> dict:
    raw = _read_member(zf, _HEADER, path)
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PersistenceError(f"{path} has a corrupt header ({exc})") from exc
    if not isinstance(header, dict) or header.get("format") != FORMAT_NAME:
        raise PersistenceError(f"{path} is not a lorak estimator file (format {header!r})")
    version = header.get("format_version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise PersistenceError(f"{path} has an invalid format_version {version!r}")
    if version > FORMAT_VERSION:
        raise PersistenceError(
            f"{path} was written with format_version {version} (lorak "
            f"{header.get('lorak_version', '?')}), newer than the {FORMAT_VERSION} this lorak "
            "reads; upgrade lorak to load it"
        )
    return header


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
    if _HEADER not in names and _SKOPS_SCHEMA in names:
        zf.close()
        return _load_skops(path, extra)
    with zf:
        for info in zf.infolist():
            # lorak writes members uncompressed, so a member's size on disk is its size
            # in memory: no decompression bomb can hide in a file this loader accepts
            if info.compress_type != zipfile.ZIP_STORED:
                raise PersistenceError(
                    f"{path}: member {info.filename!r} is compressed; lorak files are not"
                )
        header = _header(zf, path)
        state_bytes = _read_member(zf, _STATE, path)
        array_bytes = _read_member(zf, _ARRAYS, path)
    if _digest(state_bytes, array_bytes) != header.get("sha256"):
        raise PersistenceError(
            f"{path} fails its checksum: the file was altered or damaged after it was saved"
        )
    try:
        tree = json.loads(state_bytes.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise PersistenceError(f"{path} has a corrupt state ({type(exc).__name__})") from exc
    allow = trusted_classes()
    for cls in extra:
        allow[_qualname(cls)] = cls
    try:
        with zipfile.ZipFile(io.BytesIO(array_bytes)) as inner:
            if any(i.compress_type != zipfile.ZIP_STORED for i in inner.infolist()):
                raise PersistenceError(f"{path}: the array archive is compressed")
        arrays = np.load(io.BytesIO(array_bytes), allow_pickle=False)
    except (ValueError, OSError, zipfile.BadZipFile, EOFError) as exc:
        if isinstance(exc, PersistenceError):
            raise
        raise PersistenceError(f"{path} has a corrupt array archive ({exc})") from exc
    with arrays:
        try:
            obj = _Decoder(allow, arrays).decode(tree)
        except RecursionError as exc:
            raise PersistenceError(f"{path}: the object tree is nested too deeply") from exc
    _probe(obj, path)
    return obj

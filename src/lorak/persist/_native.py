"""lorak's native format: a zip of a JSON header, a JSON object tree and an ``.npz``.

:func:`native_bytes` encodes, :func:`read_native` checks and decodes (:ref:`guide-persistence`).
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import zipfile
import zlib

import numpy as np
import scipy.sparse as sp

from ._allowlist import qualname, trusted_classes
from ._checks import (
    PersistenceError,
    check_before_save,
    check_mt_state,
    check_state,
    probe,
    state_problem,
)
from ._legacy import current_name

FORMAT_NAME = "lorak-estimator"
#: Version of the file layout. ``load`` refuses files written with a newer version.
FORMAT_VERSION = 1

#: The three members of a native file.
HEADER = "lorak.json"
STATE = "state.json"
ARRAYS = "arrays.npz"
_TAG = "__lorak__"


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
        name = qualname(cls)
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
        problem = state_problem(cls, state)
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
        decoder = _TAGGED.get(tag) if isinstance(tag, str) else None
        if decoder is None:
            raise PersistenceError(f"corrupt file: unknown entry type {tag!r}")
        return decoder(self, node)

    def _decode_float(self, node):
        value = node["value"]
        if value not in ("nan", "inf", "-inf"):
            raise PersistenceError(f"corrupt file: float {value!r}")
        return float(value)

    def _decode_complex(self, node):
        return complex(float(node["real"]), float(node["imag"]))

    def _decode_scalar(self, node):
        a = self._array(node["key"])
        if a.ndim != 0:
            raise PersistenceError("corrupt file: a scalar entry holds an array")
        return a[()]

    def _decode_ndarray(self, node):
        return self._array(node["key"])

    def _decode_object_array(self, node):
        items = [self.decode(v) for v in node["items"]]
        out = np.empty(len(items), dtype=object)
        out[:] = items
        return out.reshape(tuple(int(s) for s in node["shape"]))

    def _decode_dtype(self, node):
        dt = np.dtype(str(node["str"]))
        if dt.kind == "O":
            raise PersistenceError("corrupt file: object dtype")
        return dt

    def _decode_dict(self, node):
        items = node["items"]
        if not isinstance(items, dict):
            raise PersistenceError("corrupt file: dict entry")
        return {str(k): self.decode(v) for k, v in items.items()}

    def _decode_dict_pairs(self, node):
        return {_hashable(self.decode(k)): self.decode(v) for k, v in node["items"]}

    def _decode_tuple(self, node):
        return tuple(self.decode(v) for v in node["items"])

    def _decode_set(self, node):
        return {_hashable(self.decode(v)) for v in node["items"]}

    def _decode_frozenset(self, node):
        return frozenset(_hashable(self.decode(v)) for v in node["items"])

    def _decode_generator(self, node):
        name = node["bit_generator"]
        if name not in _BIT_GENERATORS:
            raise PersistenceError(f"bit generator {name!r} is not allowed")
        bg = getattr(np.random, name)()
        state = self.decode(node["state"])
        if name == "MT19937":
            inner = state["state"]
            check_mt_state(inner["key"], inner["pos"], "generator")
        if name == "Philox" and not 0 <= int(state["buffer_pos"]) <= 4:
            raise PersistenceError("corrupt file: Philox buffer_pos out of range")
        bg.state = state
        return np.random.Generator(bg)

    def _decode_random_state(self, node):
        rs = np.random.RandomState()
        keys = np.asarray(self._array(node["keys"]), dtype=np.uint32)
        check_mt_state(keys, node["pos"], "random_state")
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

    def _decode_sparse(self, node):
        fmt = node["format"]
        parts = {k: self._array(v) for k, v in node["parts"].items()}
        shape = tuple(int(s) for s in node["shape"])
        if fmt not in ("csr", "csc", "coo"):  # the formats _encode_sparse writes
            raise PersistenceError(f"corrupt file: sparse format {fmt!r}")
        cls = getattr(sp, f"{fmt}_array" if node["kind"] == "array" else f"{fmt}_matrix")
        if fmt == "coo":
            return cls((parts["data"], (parts["row"], parts["col"])), shape=shape)
        return cls((parts["data"], parts["indices"], parts["indptr"]), shape=shape)

    def _decode_object(self, node):
        name = node["class"]
        if isinstance(name, str):
            name = current_name(name)
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
        check_state(name, cls, attrs)
        # the attribute dict is set directly (frozen dataclasses included); no method
        # of the class runs.
        obj.__dict__.update(attrs)
        return obj


#: the decoder of each tagged entry type (a registry: an unknown tag is a corrupt file)
_TAGGED = {
    "float": _Decoder._decode_float,
    "complex": _Decoder._decode_complex,
    "scalar": _Decoder._decode_scalar,
    "ndarray": _Decoder._decode_ndarray,
    "object_array": _Decoder._decode_object_array,
    "sparse": _Decoder._decode_sparse,
    "dtype": _Decoder._decode_dtype,
    "dict": _Decoder._decode_dict,
    "dict_pairs": _Decoder._decode_dict_pairs,
    "tuple": _Decoder._decode_tuple,
    "set": _Decoder._decode_set,
    "frozenset": _Decoder._decode_frozenset,
    "generator": _Decoder._decode_generator,
    "random_state": _Decoder._decode_random_state,
    "object": _Decoder._decode_object,
}


def _hashable(v):
    if isinstance(v, list):
        return tuple(_hashable(x) for x in v)
    return v


def digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(len(p).to_bytes(8, "little"))
        h.update(p)
    return h.hexdigest()


def native_bytes(estimator) -> bytes:
    """The bytes of a native file holding ``estimator``."""
    from .._version import __version__

    enc = _Encoder(trusted_classes())
    tree = enc.encode(estimator, "estimator")  # refuses a state that load would refuse
    check_before_save(estimator)
    state_bytes = json.dumps(tree, allow_nan=False).encode("utf-8")
    buf = io.BytesIO()
    np.savez(buf, **enc.arrays)
    array_bytes = buf.getvalue()
    header = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "lorak_version": __version__,
        "class": tree.get("class") if isinstance(tree, dict) else None,
        "sha256": digest(state_bytes, array_bytes),
    }
    header_bytes = json.dumps(header, sort_keys=True, indent=1).encode("utf-8")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr(HEADER, header_bytes)
        zf.writestr(STATE, state_bytes)
        zf.writestr(ARRAYS, array_bytes)
    return buf.getvalue()


def _read_member(zf: zipfile.ZipFile, name: str, path) -> bytes:
    try:
        return zf.read(name)
    except KeyError:
        raise PersistenceError(f"{path} is not a complete lorak file: {name} is missing") from None
    except (zipfile.BadZipFile, EOFError, OSError, zlib.error) as exc:
        raise PersistenceError(f"{path} is truncated or corrupt ({name}: {exc})") from exc


def _header(zf: zipfile.ZipFile, path) -> dict:
    raw = _read_member(zf, HEADER, path)
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


def read_native(zf: zipfile.ZipFile, path, extra: list[type]):
    """Check and decode the native file opened as ``zf`` (closed on return); ``extra``
    are classes trusted beyond the allowlist."""
    with zf:
        for info in zf.infolist():
            # lorak writes members uncompressed, so a member's size on disk is its size
            # in memory: no decompression bomb can hide in a file this loader accepts
            if info.compress_type != zipfile.ZIP_STORED:
                raise PersistenceError(
                    f"{path}: member {info.filename!r} is compressed; lorak files are not"
                )
        header = _header(zf, path)
        state_bytes = _read_member(zf, STATE, path)
        array_bytes = _read_member(zf, ARRAYS, path)
    if digest(state_bytes, array_bytes) != header.get("sha256"):
        raise PersistenceError(
            f"{path} fails its checksum: the file was altered or damaged after it was saved"
        )
    try:
        tree = json.loads(state_bytes.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise PersistenceError(f"{path} has a corrupt state ({type(exc).__name__})") from exc
    allow = trusted_classes()
    for cls in extra:
        allow[qualname(cls)] = cls
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
    probe(obj, path)
    return obj

"""skops support: lorak estimators in skops's secure format, read under lorak's allowlist.

Needs the extra ``lorak[skops]`` to read or write; :func:`skops_trusted_types` does not.
"""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import scipy.sparse as sp

from ._allowlist import trusted_classes
from ._checks import PersistenceError, probe

#: The member every skops file holds (lorak's own files never do).
SKOPS_SCHEMA = "schema.json"


def skops_name(cls: type) -> str:
    """A type's name in skops's spelling, ``"module.ClassName"`` (its ``__module__``
    and ``__name__``)."""
    return f"{cls.__module__}.{cls.__name__}"


def skops_trusted_types() -> list[str]:
    """The type names to pass as ``skops.io.load(..., trusted=...)`` for lorak estimators.

    Exactly lorak's own allowlist (:func:`trusted_classes`) in skops's
    ``"module.ClassName"`` spelling, plus ``scipy.sparse``'s ``csr_matrix`` and
    ``csr_array``. No function, method or module name is in the list, so a file that
    asks skops to import one is still refused. Needs no skops installed.
    """
    names = {
        skops_name(cls)
        for cls in trusted_classes().values()
        if cls.__qualname__ == cls.__name__  # skops looks classes up as module attributes
    }
    names.update(skops_name(cls) for cls in (sp.csr_matrix, sp.csr_array))
    return sorted(names)


def _skops_plain_types() -> set[str]:
    """Plain-data types a skops file of a lorak estimator holds besides the allowlist:
    builtin containers and scalars, numpy arrays and number scalars, numpy random
    states. (skops trusts these by default; lorak.load accepts no other default.)"""
    names = {f"builtins.{t.__name__}" for t in (dict, list, tuple, set, str, int, float, bool)}
    names.add(skops_name(np.ndarray))
    names.update(
        f"numpy.{t.__name__}"
        for t in set(np.sctypeDict.values())
        if issubclass(t, (np.number, np.bool_))
    )
    names.update(skops_name(c) for c in (np.random.Generator, np.random.RandomState))
    return names


def _skops_outside(skops_io, data: bytes, allow: set[str], path) -> list[str]:
    """Every type a skops file names that lorak does not accept: skops's own audit
    (:func:`skops.io.get_untrusted_types`) minus ``allow``, plus every class named in
    its schema outside ``allow`` and the plain-data types (skops trusts more types by
    default, e.g. any scikit-learn estimator; lorak.load does not)."""
    try:
        untrusted = set(skops_io.get_untrusted_types(data=data))
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            schema = json.loads(zf.read(SKOPS_SCHEMA).decode("utf-8"))
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
            schema = json.loads(zf.read(SKOPS_SCHEMA).decode("utf-8"))
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


def skops_bytes(estimator) -> bytes:
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


def load_skops(path: str, trusted: list[type]):
    skops_io = _import_skops(f"load({path!r}) (a skops file)")
    from skops.io.exceptions import UntrustedTypesFoundException

    with open(path, "rb") as f:
        data = f.read()
    allow = set(skops_trusted_types()) | {skops_name(cls) for cls in trusted}
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
        probe(obj, path)
        return obj
    except UntrustedTypesFoundException as exc:  # the audit above should catch these
        raise PersistenceError(f"{path}: {exc}") from exc
    except (ValueError, TypeError, KeyError, OSError, EOFError, zipfile.BadZipFile) as exc:
        raise PersistenceError(
            f"{path} is a corrupt or truncated skops file ({type(exc).__name__}: {exc})"
        ) from exc

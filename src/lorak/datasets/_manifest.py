"""The schema of a data home's ``MANIFEST.json``, and its validation.

The schema: the user guide, "Benchmark datasets", section "The data home".
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["ManifestError", "validate_manifest"]

_SHA256 = re.compile(r"[0-9a-fA-F]{64}")
_TEXT_KEYS = ("source", "notes", "format", "used_in")


class ManifestError(ValueError):
    """A data home's ``MANIFEST.json`` does not follow its schema (or is not UTF-8
    JSON). The message names the file, the set, the key and what was expected."""


#: stands for a key that is absent
MISSING = object()


def _found(value) -> str:
    if value is MISSING:
        return "no such key"
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({type(value).__name__})"


class _Checker:
    def __init__(self, where: str):
        self.where = where

    def fail(self, name: str | None, key: str | None, expected: str, value) -> None:
        loc = f"set {name!r}" if name is not None else "the top level"
        if key is not None:
            loc += f", key {key!r}"
        raise ManifestError(
            f"{self.where} does not follow the manifest schema: {loc} should be "
            f"{expected}; found {_found(value)}"
        )

    def obj(self, name, key, value, *, nonempty=False) -> dict:
        if not isinstance(value, dict):
            self.fail(name, key, "a JSON object", value)
        if nonempty and not value:
            self.fail(name, key, "a non-empty JSON object", value)
        return value

    def integer(self, name, key, value, low: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            self.fail(name, key, f"an integer >= {low}", value)

    def text(self, name, key, value, *, nonempty=False) -> None:
        if not isinstance(value, str) or (nonempty and not value):
            self.fail(name, key, "a non-empty string" if nonempty else "a string", value)

    def classes(self, name, key, value) -> None:
        self.obj(name, key, value)
        for label, count in value.items():
            try:
                float(label)
            except ValueError:
                self.fail(name, f"{key}.{label}", "keyed by a numeric label", label)
            self.integer(name, f"{key}.{label}", count, 0)

    def sha256(self, name, key, value) -> None:
        if not isinstance(value, str) or not _SHA256.fullmatch(value):
            self.fail(name, key, "a sha256 digest (64 hexadecimal characters)", value)

    def shape_keys(self, name, prefix, entry, *, required: bool) -> None:
        for key, low in (("n_features", 1), ("n_samples", 0)):
            if key in entry:
                self.integer(name, prefix + key, entry[key], low)
            elif required:
                self.fail(name, prefix + key, f"an integer >= {low}", MISSING)
        if "classes" in entry:
            self.classes(name, prefix + "classes", entry["classes"])
        if "sha256" in entry:
            self.sha256(name, prefix + "sha256", entry["sha256"])


def _check_libsvm(c: _Checker, name: str, entry: dict) -> None:
    files = c.obj(name, "files", entry.get("files", MISSING), nonempty=True)
    for split, info in files.items():
        prefix = f"files.{split}."
        c.obj(name, f"files.{split}", info)
        if "file" not in info:
            c.fail(name, prefix + "file", "a path relative to the data home", MISSING)
        c.text(name, prefix + "file", info["file"], nonempty=True)
        c.shape_keys(name, prefix, info, required=True)


def _check_ssl(c: _Checker, entry: dict) -> None:
    if "sets" not in entry:
        return
    sets = c.obj("ssl", "sets", entry["sets"])
    for title, spec in sets.items():
        prefix = f"sets.{title}."
        c.obj("ssl", f"sets.{title}", spec)
        if "files" in spec:
            files = spec["files"]
            if not isinstance(files, list) or not all(isinstance(f, str) and f for f in files):
                c.fail("ssl", prefix + "files", "a list of file paths (strings)", files)
        c.shape_keys("ssl", prefix, spec, required=False)


def validate_manifest(manifest: Any, where: str) -> dict[str, Any]:
    """Check a decoded ``MANIFEST.json`` against the schema; return it unchanged.

    Parameters
    ----------
    manifest : the decoded JSON
    where : str
        How to name the file in messages (its path).

    Raises
    ------
    ManifestError
        The first place that breaks the schema: the set, the key (dotted, e.g.
        ``files.train.n_samples``), what was expected and what was found.
    """
    c = _Checker(where)
    if not isinstance(manifest, dict):
        c.fail(None, None, "a JSON object (dataset name -> entry)", manifest)
    for name, entry in manifest.items():
        c.obj(name, None, entry)
        for key in _TEXT_KEYS:
            if key in entry:
                c.text(name, key, entry[key])
        if name == "ssl" and "files" not in entry:
            _check_ssl(c, entry)
        else:
            _check_libsvm(c, name, entry)
    return manifest

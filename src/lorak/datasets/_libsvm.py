"""LIBSVM-format datasets listed in the data home's ``MANIFEST.json`` (bz2 LIBSVM text
read with the manifest's ``n_features``, so that train and test agree on the width).
"""

from __future__ import annotations

import bz2
import logging
import time
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from ._base import (
    DataIntegrityError,
    DataNotFoundError,
    as_labels,
    check_sha256,
)

__all__ = ["KNOWN_LIBSVM", "libsvm_entries", "load_libsvm", "ordered_splits"]

logger = logging.getLogger(__name__)

#: Names of the LIBSVM sets in the project's shared data. They are recognised even
#: when no data home is configured, so that ``load("a1a")`` without data explains how
#: to provide it instead of calling the name unknown. Any other name found in a
#: data home's manifest is loadable too.
KNOWN_LIBSVM = (
    "a1a",
    "a4a",
    "a9a",
    "dna",
    "german",
    "glass",
    "ijcnn1",
    "mnist-test",
    "mushrooms",
    "satimage",
    "segment",
    "sonar",
    "splice",
    "svmguide1",
    "usps",
    "w1a",
)


def libsvm_entries(manifest: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """The manifest entries that describe LIBSVM files, keyed by lower-case name."""
    if not manifest:
        return {}
    out = {}
    for key, entry in manifest.items():
        if isinstance(entry, dict) and isinstance(entry.get("files"), dict):
            out[key.lower()] = entry
    return out


def ordered_splits(entry: dict[str, Any]) -> list[str]:
    """Split names of a manifest entry: ``train``, ``test``, then any other in file order."""
    names = list(entry["files"])
    first = [s for s in ("train", "test") if s in names]
    return first + [s for s in names if s not in first]


def _read_one(
    home: Path, name: str, split: str, info: dict[str, Any], dtype, verify: bool
) -> tuple[sp.csr_matrix, np.ndarray]:
    path = home / info["file"]
    if not path.resolve().is_relative_to(home.resolve()):
        raise ValueError(
            f"manifest entry {name!r} split {split!r}: file {info['file']!r} points outside "
            f"the data folder {str(home)!r}; manifest files must lie inside it"
        )
    if not path.is_file():
        raise DataNotFoundError(
            f"dataset {name!r} split {split!r}: expected the file {str(path)!r} "
            f"(listed in {str(home / 'MANIFEST.json')!r}), found no such file"
        )
    if verify:
        check_sha256(path, info.get("sha256"))
    n_features = int(info["n_features"])
    t0 = time.perf_counter()
    with bz2.open(path, "rb") as fh:
        try:
            X, y = load_svmlight_file(fh, n_features=n_features, dtype=dtype, zero_based=False)
        except ValueError as exc:
            raise DataIntegrityError(
                f"could not read {str(path)!r} as LIBSVM with n_features={n_features} "
                f"(from the manifest): {exc}"
            ) from exc
        except (OSError, EOFError) as exc:  # bz2: not a bz2 stream, or truncated
            raise DataIntegrityError(
                f"could not decompress {str(path)!r} (a .bz2 LIBSVM file): {exc}; the file "
                "is corrupt or truncated"
            ) from exc
    if not (np.all(np.isfinite(X.data)) and np.all(np.isfinite(y))):
        raise DataIntegrityError(
            f"{str(path)!r} holds NaN or infinite values (in the features or the labels); "
            "a LIBSVM data set must be finite"
        )
    logger.debug("read %s: %s in %.2fs", path, X.shape, time.perf_counter() - t0)
    expected_n = int(info["n_samples"])
    if X.shape[0] != expected_n:
        raise DataIntegrityError(
            f"dataset {name!r} split {split!r}: the manifest says n_samples={expected_n}, "
            f"found {X.shape[0]} rows in {str(path)!r}"
        )
    y = as_labels(y)
    if verify and isinstance(info.get("classes"), dict):
        expected = {float(k): int(v) for k, v in info["classes"].items()}
        values, counts = np.unique(y, return_counts=True)
        found = {float(v): int(c) for v, c in zip(values, counts, strict=True)}
        if found != expected:
            raise DataIntegrityError(
                f"dataset {name!r} split {split!r}: class counts expected {expected} "
                f"(from the manifest), found {found}"
            )
    return X.tocsr(), y


def load_libsvm(
    home: Path,
    name: str,
    entry: dict[str, Any],
    split: str | None,
    *,
    dtype=np.float64,
    sparse: bool | None = None,
    verify: bool = False,
) -> tuple[Any, np.ndarray, str, dict[str, Any]]:
    """Read one split (or the concatenation ``"all"``) of a manifest LIBSVM set.

    ``entry`` comes from a manifest :func:`lorak.datasets._base.read_manifest` has read,
    so checked against the schema already (each split's file, n_features, n_samples).

    Returns
    -------
    X, y, split, meta
        ``X`` dense unless ``sparse=True``; ``split`` the resolved split name.
    """
    available = ordered_splits(entry)
    split = "train" if split is None else split
    if split == "all":
        order = available
    elif split in available:
        order = [split]
    else:
        raise ValueError(
            f"dataset {name!r}: expected split to be one of {[*available, 'all']} "
            f"(or None for 'train'), found {split!r}"
        )
    parts = [_read_one(home, name, s, entry["files"][s], dtype, verify) for s in order]
    widths = {p[0].shape[1] for p in parts}
    if len(widths) > 1:
        raise DataIntegrityError(
            f"dataset {name!r}: the splits {order} should have the same n_features, "
            f"found {sorted(widths)} in the manifest"
        )
    if len(parts) == 1:
        X, y = parts[0]
    else:
        X = sp.vstack([p[0] for p in parts], format="csr")
        y = as_labels(np.concatenate([p[1] for p in parts]))
    if not sparse:
        X = X.toarray()
    meta = {
        "source": entry.get("source", ""),
        "notes": entry.get("notes", ""),
        "used_in": entry.get("used_in", ""),
        "files": [str(home / entry["files"][s]["file"]) for s in order],
        "parts": {s: int(p[0].shape[0]) for s, p in zip(order, parts, strict=True)},
    }
    return X, y, split, meta

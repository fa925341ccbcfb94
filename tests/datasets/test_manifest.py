"""A malformed MANIFEST.json (issue 30, item 11): ``available()``, ``lorak datasets``
and ``load`` validate it against its schema and name the set, the key and what was
expected, instead of raising StopIteration, AttributeError, a bare int() ValueError,
TypeError or UnicodeDecodeError from deep inside."""

from __future__ import annotations

import bz2
import contextlib
import io
import json
import os

import pytest

from lorak.datasets import ManifestError, available, describe_available, load
from lorak.datasets._manifest import validate_manifest

GOOD_SPLIT = {"file": "toy/toy.train.libsvm.bz2", "n_features": 2, "n_samples": 2}


def _home(tmp_path, manifest=None, *, raw: bytes | None = None):
    f = tmp_path / "toy" / "toy.train.libsvm.bz2"
    f.parent.mkdir(parents=True, exist_ok=True)
    with bz2.open(f, "wt") as fh:
        fh.write("1 1:0.5 2:1.0\n-1 1:-0.5 2:2.0\n")
    if raw is None:
        raw = json.dumps(manifest).encode("utf-8")
    (tmp_path / "MANIFEST.json").write_bytes(raw)
    return tmp_path


def _toy(split):
    return {"toy": {"files": {"train": split}}}


# (id, manifest, the set named, the key named, what is expected)
MALFORMED = [
    ("files-empty", {"toy": {"files": {}}}, "toy", "files", "non-empty JSON object"),
    ("files-missing", {"toy": {"source": "x"}}, "toy", "files", "JSON object"),
    ("files-list", {"toy": {"files": ["a"]}}, "toy", "files", "JSON object"),
    ("split-int", _toy(3), "toy", "files.train", "JSON object"),
    ("n_samples-str", _toy({**GOOD_SPLIT, "n_samples": "many"}), "toy", "n_samples", "integer"),
    ("n_samples-neg", _toy({**GOOD_SPLIT, "n_samples": -1}), "toy", "n_samples", "integer"),
    ("n_samples-bool", _toy({**GOOD_SPLIT, "n_samples": True}), "toy", "n_samples", "integer"),
    ("n_samples-missing", _toy({"file": "toy/x", "n_features": 2}), "toy", "n_samples", "integer"),
    ("n_features-float", _toy({**GOOD_SPLIT, "n_features": 2.5}), "toy", "n_features", "integer"),
    ("file-int", _toy({**GOOD_SPLIT, "file": 3}), "toy", "file", "string"),
    ("file-missing", _toy({"n_features": 2, "n_samples": 2}), "toy", "file", "path"),
    ("classes-list", _toy({**GOOD_SPLIT, "classes": [1, 2]}), "toy", "classes", "JSON object"),
    ("classes-label", _toy({**GOOD_SPLIT, "classes": {"a": 1}}), "toy", "classes.a", "numeric"),
    ("classes-count", _toy({**GOOD_SPLIT, "classes": {"1": "x"}}), "toy", "classes.1", "integer"),
    ("sha256-short", _toy({**GOOD_SPLIT, "sha256": "abc"}), "toy", "sha256", "sha256"),
    ("entry-int", {"toy": 3}, "toy", None, "JSON object"),
    ("source-int", {"toy": {"files": {"train": GOOD_SPLIT}, "source": 1}}, "toy", "source", "str"),
    ("ssl-list", {"ssl": []}, "ssl", None, "JSON object"),
    ("ssl-sets-str", {"ssl": {"sets": "x"}}, "ssl", "sets", "JSON object"),
    ("ssl-set-int", {"ssl": {"sets": {"Digit1": 1}}}, "ssl", "sets.Digit1", "JSON object"),
    ("ssl-n_samples", {"ssl": {"sets": {"Digit1": {"n_samples": "x"}}}}, "ssl", "n_samples", "int"),
    ("ssl-files", {"ssl": {"sets": {"Digit1": {"files": "a.mat"}}}}, "ssl", "files", "list"),
    ("top-list", [1, 2], None, None, "JSON object"),
]


@pytest.mark.parametrize(
    ("manifest", "name", "key", "expected"),
    [pytest.param(*m[1:], id=m[0]) for m in MALFORMED],
)
def test_available_names_the_set_the_key_and_what_was_expected(
    tmp_path, manifest, name, key, expected
):
    home = _home(tmp_path, manifest)
    with pytest.raises(ManifestError) as info:
        available(home)
    msg = str(info.value)
    assert "MANIFEST.json" in msg and "schema" in msg
    if name is not None:
        assert f"set {name!r}" in msg
    if key is not None:
        assert key in msg
    assert expected in msg and "found" in msg
    assert isinstance(info.value, ValueError)
    with pytest.raises(ManifestError):
        describe_available(home)


@pytest.mark.parametrize(
    ("raw", "match"),
    [
        (json.dumps(_toy(GOOD_SPLIT)).encode("utf-16"), r"not UTF-8.*UTF-16"),
        (b"\xff\x00garbage", "not UTF-8"),
        (b"{oops", "not valid JSON"),
        (b"[" * 100000 + b"]" * 100000, "not valid JSON"),
    ],
    ids=["utf16", "binary", "not-json", "deeply-nested"],
)
def test_undecodable_manifest(tmp_path, raw, match):
    home = _home(tmp_path, raw=raw)
    with pytest.raises(ManifestError, match=match):
        available(home)


def test_utf8_with_bom_and_the_shared_layout_are_accepted(tmp_path):
    home = _home(tmp_path, raw=b"\xef\xbb\xbf" + json.dumps(_toy(GOOD_SPLIT)).encode())
    rows = {r["name"]: r for r in available(home)}
    assert rows["toy"]["present"] and rows["toy"]["split_sizes"] == {"train": 2}
    assert load("toy", data_home=home).X.shape == (2, 2)
    # extra keys are allowed; every optional key of the schema at its type
    full = {
        "toy": {
            "files": {
                "train": {**GOOD_SPLIT, "classes": {"-1.0": 1, "1.0": 1}, "sha256": "a" * 64}
            },
            "source": "s",
            "notes": "",
            "format": "libsvm.bz2",
            "used_in": "u",
            "extra": [1, 2],
        },
        "ssl": {
            "format": "mat",
            "sets": {"Digit1": {"files": ["ssl/data1.mat"], "n_samples": 1500}},
        },
    }
    assert validate_manifest(full, "m") is full


@pytest.mark.skipif(not os.environ.get("LORAK_DATA"), reason="needs LORAK_DATA")
def test_the_shared_manifest_follows_the_schema():
    assert sum(r["present"] for r in available()) >= 16


def test_load_needs_the_manifest_only_for_the_sets_that_read_it(tmp_path):
    home = _home(tmp_path, _toy({**GOOD_SPLIT, "n_samples": "many"}))
    assert load("iris", data_home=home).X.shape == (150, 4)  # does not read it
    with pytest.raises(ManifestError, match=r"set 'toy', key 'files\.train\.n_samples'"):
        load("toy", data_home=home)  # a name only the manifest could resolve
    with pytest.raises(ManifestError, match="toy"):
        load("a1a", data_home=home)  # a LIBSVM set reads the manifest


def test_cli_datasets_reports_a_malformed_manifest_without_traceback(tmp_path):
    from lorak.cli import main

    home = _home(tmp_path, {"toy": {"files": {}}})
    out, err = io.StringIO(), io.StringIO()
    with (
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        pytest.raises(SystemExit) as info,
    ):
        main(["datasets", "--data-home", str(home)])
    assert info.value.code != 0
    assert "Traceback" not in err.getvalue()
    assert "set 'toy', key 'files'" in err.getvalue() and "MANIFEST.json" in err.getvalue()

"""Adversarial sweep, datasets: LIBSVM files (corrupt, not bz2, NaN values, bad
indices), data folders and manifest entries, and malformed MANIFEST.json files.

Part of the adversarial sweep: the outcome rules are in ``tests/_adversarial.py``,
``tests/test_adversarial.py`` gathers every area's table."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

import lorak
import lorak.datasets
from _adversarial import (
    _MF_BAD,
    PYTESTMARK,
    _close,
    _mf_home,
    _tmpdir,
    _write_libsvm,
    check_case,
    new_table,
    parametrize_cases,
)

pytestmark = PYTESTMARK

CASES, case = new_table()


def _home(name, text=None, *, raw=None, entry=None):
    home = _tmpdir() / f"home-{name}"
    f = home / "toy" / "toy.train.libsvm.bz2"
    _write_libsvm(f, text or "1 1:0.5 2:1.0\n-1 1:-0.5 2:2.0\n", raw=raw)
    e = {"file": "toy/toy.train.libsvm.bz2", "n_features": 2, "n_samples": 2}
    e.update(entry or {})
    (home / "MANIFEST.json").write_text(json.dumps({"toy": {"files": {"train": e}}}))
    return home


def _ds(name, text=None, *, verify=False, **kw):
    return lambda: lorak.datasets.load("toy", data_home=_home(name, text, **kw), verify=verify)


case("libsvm-ok", _ds("ok"), check=lambda d: _close(d.X, np.array([[0.5, 1.0], [-0.5, 2.0]]), 0))
case(
    "libsvm-corrupt-bz2",
    _ds("corrupt", raw=b"BZh91AY&SY" + b"\x00" * 50),
    error=r"toy\.train\.libsvm\.bz2",
)
case("libsvm-not-bz2", _ds("notbz2", raw=b"1 1:0.5\n"), error=r"toy\.train\.libsvm\.bz2")
case("libsvm-n_features-str", _ds("nf", entry={"n_features": "x"}), error=r"n_features")
case("libsvm-n_features-neg", _ds("nfneg", entry={"n_features": -2}), error=r"n_features")
case("libsvm-n_samples-str", _ds("ns", entry={"n_samples": "two"}), error=r"n_samples")
case(
    "libsvm-file-absolute",
    # an absolute path to an existing file outside the data home (this test file)
    _ds("abs", entry={"file": str(Path(__file__).resolve())}),
    error=r"(file|outside|data home|data folder)",
)
case(
    "libsvm-file-dotdot",
    _ds("dotdot", entry={"file": "../../../etc/hostname"}),
    error=r"(file|outside|data home|data folder)",
)
case("libsvm-file-int", _ds("fint", entry={"file": 3}), error=r"file")
case(
    "libsvm-nan-value-verify",
    _ds("nanv", "1 1:nan 2:1.0\n-1 1:-0.5 2:2.0\n", verify=True),
    error=r"(nan|inf|finite)",
)
case(
    "libsvm-inf-value-verify",
    _ds("infv", "1 1:inf 2:1.0\n-1 1:-0.5 2:2.0\n", verify=True),
    error=r"(nan|inf|finite)",
)
case(
    "libsvm-nan-value", _ds("nanv2", "1 1:nan 2:1.0\n-1 1:-0.5 2:2.0\n"), error=r"(nan|inf|finite)"
)
case(
    "libsvm-nan-label",
    _ds("nanl", "nan 1:0.5 2:1.0\n-1 1:-0.5 2:2.0\n"),
    error=r"(nan|inf|finite|label)",
)
case(
    "libsvm-garbage-line",
    _ds("garb", "1 1:0.5 2:1.0\nhello world\n"),
    error=r"toy\.train\.libsvm\.bz2",
)
case(
    "libsvm-index-too-large",
    _ds("idx", "1 1:0.5 9:1.0\n-1 1:-0.5 2:2.0\n"),
    error=r"(n_features|toy\.train)",
)
case("libsvm-rows-mismatch", _ds("rows", entry={"n_samples": 5}), error=r"n_samples")
case(
    "libsvm-manifest-not-json",
    lambda: (
        lambda h: (
            (h / "MANIFEST.json").write_text("{oops"),
            lorak.datasets.load("toy", data_home=h),
        )[1]
    )(_home("nj")),
    error=r"MANIFEST",
)
case(
    "datasets-data_home-missing",
    lambda: lorak.datasets.load("toy", data_home=_tmpdir() / "no-such-folder"),
    error=r"(no-such-folder|data_home|not found|does not exist)",
)


def _missing_home_error():
    try:
        lorak.datasets.load("a1a", data_home=_tmpdir() / "no-such-folder")
    except FileNotFoundError as exc:
        assert "no-such-folder" in str(exc), str(exc)
        return "clear"
    raise AssertionError("loaded from a missing folder")


case("datasets-a1a-data_home-missing", _missing_home_error, check=lambda v: v)


# malformed data folders (the table is in the harness): every reader of
# MANIFEST.json names the set, the key and what was expected
for _tag, (_manifest, _pat) in _MF_BAD.items():
    _pat = r"MANIFEST\.json.*" + _pat
    case(
        f"datasets-available-manifest-{_tag}",
        lambda t=_tag, m=_manifest: lorak.datasets.available(_mf_home(t, m)),
        error=_pat,
    )
    case(
        f"datasets-load-manifest-{_tag}",
        lambda t=_tag, m=_manifest: lorak.datasets.load("toy", data_home=_mf_home(t, m)),
        error=_pat,
    )
# a broken manifest does not stop the sets that do not read it
case(
    "datasets-load-iris-beside-a-broken-manifest",
    lambda: lorak.datasets.load("iris", data_home=_mf_home("iris", {"toy": {"files": {}}})).X,
    check=lambda a: _close(a[:1], lorak.datasets.load("iris").X[:1], 0),
)


# --------------------------------------------------------------------------- the test


@parametrize_cases(CASES)
def test_case(c):
    check_case(c)

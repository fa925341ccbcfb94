"""Adversarial sweep, the command line (``lorak.cli``): bad options, folders and data
homes give a non-zero status and a message, never a traceback.

Part of the adversarial sweep: the outcome rules are in ``tests/_adversarial.py``,
``tests/test_adversarial.py`` gathers every area's table."""

from __future__ import annotations

import os

import pytest

from _adversarial import (
    _MF_BAD,
    PYTESTMARK,
    _cli,
    _cli_error,
    _mf_home,
    _tmpdir,
    check_case,
    new_table,
    parametrize_cases,
)

pytestmark = PYTESTMARK

CASES, case = new_table()


def _out_under_file():
    f = _tmpdir() / "a-file"
    f.write_text("x")
    return _cli("bench", "nystrom-error", "--quick", "--no-progress", "--out", str(f / "sub"))


case(
    "cli-out-under-file",
    _out_under_file,
    check=_cli_error(r"(--out|a-file|not a directory|folder)"),
)


# the output folder: an existing file, a folder whose writes fail (for root too: the
# file creation is made to fail), a read-only folder (not for root, who writes anywhere), a `cells`
# file where the run saves its data sets — each refused before the run, naming --out;
# missing parents are created
def _file(tag):
    f = _tmpdir() / f"file-{tag}"
    f.write_text("x")
    return f


def _unwritable():
    """A folder whose writes fail with EACCES — as on a mount without write permission,
    which no file mode makes so for root: the file creation is made to fail."""
    d = _tmpdir() / "unwritable"
    d.mkdir(exist_ok=True)
    return d


def _denied(*args, **kwargs):
    raise PermissionError(13, "Permission denied")


def _without_writes(call):
    from unittest import mock

    def run():
        with mock.patch("tempfile.mkstemp", _denied):
            return call()

    return run


def _read_only():
    if os.name != "posix" or os.geteuid() == 0:
        pytest.skip("root writes into read-only folders")
    d = _tmpdir() / "read-only"
    d.mkdir(exist_ok=True)
    d.chmod(0o500)
    return d


def _cells_file():
    d = _tmpdir() / "cells-file"
    d.mkdir(exist_ok=True)
    (d / "cells").write_text("x")
    return d


_QUICK = ("nystrom-error", "--quick", "--reps", "1", "--datasets", "wine", "--no-progress")
for _tag, _out, _pat in (
    ("is-a-file", lambda: _file("out"), r"--out.*cannot create"),
    ("unwritable", _unwritable, r"--out.*cannot be written"),
    ("read-only", _read_only, r"--out.*cannot be written"),
    ("cells-is-a-file", _cells_file, r"--out.*cells"),
):
    _wrap = _without_writes if _tag == "unwritable" else (lambda call: call)
    case(
        f"cli-out-{_tag}",
        _wrap(lambda out=_out: _cli("bench", *_QUICK, "--out", str(out()))),
        check=_cli_error(_pat),
    )
    if _tag == "cells-is-a-file":  # `bench all` saves into out/NAME/cells
        continue
    case(
        f"cli-all-out-{_tag}",
        _wrap(
            lambda out=_out: _cli(
                "bench",
                "all",
                "--quick",
                "--only",
                "nystrom-error",
                "--no-progress",
                "--out",
                str(out()),
            )
        ),
        check=_cli_error(_pat),
    )


def _nested_out():
    out = _tmpdir() / "nested" / "missing" / "parents"
    return out, _cli("bench", *_QUICK, "--out", str(out))


def _nested_ok(res):
    out, (rc, _, err) = res
    assert rc == 0, f"exit status {rc}: {err[-300:]!r}"
    assert (out / "results.json").is_file(), "no results.json in the nested folder"


case("cli-out-nested-missing-parents", _nested_out, check=_nested_ok)

case(
    "cli-seed--1",
    lambda: _cli("bench", "nystrom-error", "--quick", "--seed", "-1"),
    check=_cli_error(r"--seed"),
)
case(
    "cli-reps-0",
    lambda: _cli("bench", "nystrom-error", "--quick", "--reps", "0"),
    check=_cli_error(r"--reps"),
)
case(
    "cli-threads-x",
    lambda: _cli("bench", "nystrom-error", "--quick", "--threads", "x"),
    check=_cli_error(r"--threads"),
)
case(
    "cli-unknown-experiment", lambda: _cli("bench", "no-such-exp"), check=_cli_error(r"no-such-exp")
)
case(
    "cli-data-home-missing",
    lambda: _cli(
        "bench",
        "nystrom-error",
        "--quick",
        "--no-progress",
        "--data-home",
        str(_tmpdir() / "nowhere"),
        "--out",
        str(_tmpdir() / "o1"),
    ),
    check=_cli_error(r"(--data-home|nowhere)"),
)
case(
    "cli-datasets-data-home-missing",
    lambda: _cli("datasets", "--data-home", str(_tmpdir() / "nowhere")),
    check=_cli_error(r"(--data-home|nowhere)"),
)


# malformed data folders (the table is in the harness): the command names the set,
# the key and what was expected
for _tag, (_manifest, _pat) in _MF_BAD.items():
    _pat = r"MANIFEST\.json.*" + _pat
    case(
        f"cli-datasets-manifest-{_tag}",
        lambda t=_tag, m=_manifest: _cli("datasets", "--data-home", str(_mf_home(t, m))),
        check=_cli_error(_pat),
    )


# --------------------------------------------------------------------------- the test


@parametrize_cases(CASES)
def test_case(c):
    check_case(c)

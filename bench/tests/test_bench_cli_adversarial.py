"""Adversarial sweep of the ``lorak-bench`` command line: bad options, output folders and
data homes give a non-zero status and a message, never a traceback (the library's
command is swept in ``tests/test_cli_adversarial.py``)."""

from __future__ import annotations

import contextlib
import io
import os
import re
import tempfile
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.filterwarnings("ignore::RuntimeWarning"),
    pytest.mark.filterwarnings("ignore::UserWarning"),
]

CASES: list[tuple[str, object, object]] = []
_TMP: list[Path | None] = [None]


def case(cid, call, *, check):
    CASES.append((cid, call, check))


def _tmpdir() -> Path:
    if _TMP[0] is None:
        _TMP[0] = Path(tempfile.mkdtemp(prefix="lorak-bench-adv-"))
    return _TMP[0]


def _cli(*argv):
    """Run ``lorak-bench`` in-process; returns (status, stdout, stderr)."""
    from lorak_bench.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(list(argv))
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 1
    return rc, out.getvalue(), err.getvalue()


def _cli_error(pattern):
    """A check: non-zero status, no traceback, and the message matching ``pattern``."""

    def check(res):
        rc, out, err = res
        assert rc != 0, f"exit status 0 (stdout: {out[-200:]!r})"
        assert "Traceback" not in err, f"traceback on stderr: {err[-300:]!r}"
        assert re.search(pattern, err + out, flags=re.I), f"stderr does not say why: {err[-300:]!r}"

    return check


def _out_under_file():
    f = _tmpdir() / "a-file"
    f.write_text("x")
    return _cli("nystrom-error", "--quick", "--no-progress", "--out", str(f / "sub"))


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
        _wrap(lambda out=_out: _cli(*_QUICK, "--out", str(out()))),
        check=_cli_error(_pat),
    )
    if _tag == "cells-is-a-file":  # `bench all` saves into out/NAME/cells
        continue
    case(
        f"cli-all-out-{_tag}",
        _wrap(
            lambda out=_out: _cli(
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
    return out, _cli(*_QUICK, "--out", str(out))


def _nested_ok(res):
    out, (rc, _, err) = res
    assert rc == 0, f"exit status {rc}: {err[-300:]!r}"
    assert (out / "results.json").is_file(), "no results.json in the nested folder"


case("cli-out-nested-missing-parents", _nested_out, check=_nested_ok)

case(
    "cli-seed--1",
    lambda: _cli("nystrom-error", "--quick", "--seed", "-1"),
    check=_cli_error(r"--seed"),
)
case(
    "cli-reps-0",
    lambda: _cli("nystrom-error", "--quick", "--reps", "0"),
    check=_cli_error(r"--reps"),
)
case(
    "cli-threads-x",
    lambda: _cli("nystrom-error", "--quick", "--threads", "x"),
    check=_cli_error(r"--threads"),
)
case("cli-unknown-experiment", lambda: _cli("no-such-exp"), check=_cli_error(r"no-such-exp"))
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


# --------------------------------------------------------------------------- the test


@pytest.mark.parametrize("c", CASES, ids=[c[0] for c in CASES])
def test_case(c):
    _, call, check = c
    check(call())

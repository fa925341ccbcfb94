"""Adversarial sweep, the command line (``lorak.cli``): bad options, folders and data
homes give a non-zero status and a message, never a traceback.

Part of the adversarial sweep: the outcome rules are in ``tests/_adversarial.py``,
``tests/test_adversarial.py`` gathers every area's table."""

from __future__ import annotations

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

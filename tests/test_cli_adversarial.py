"""Adversarial sweep, the command line (``lorak.cli``): bad data homes, and ``lorak bench``
without the benchmark harness, give a non-zero status and a message, never a traceback.
(The harness's own command, its options and output folders, is swept with it:
``bench/tests/test_bench_cli_adversarial.py``.)

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


def _without_harness(call):
    """``call()`` as if lorak-bench were not installed (its modules blocked from import)."""
    import sys

    names = ("lorak_bench", "lorak_bench.cli")
    saved = {name: sys.modules.get(name) for name in names}
    sys.modules.update(dict.fromkeys(names))
    try:
        return call()
    finally:
        for name, mod in saved.items():
            if mod is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = mod


case(
    "cli-bench-harness-not-installed",
    lambda: _without_harness(lambda: _cli("bench", "nystrom-error", "--quick")),
    check=_cli_error(r"not installed.*pip install \./bench"),
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

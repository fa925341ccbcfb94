"""The adversarial sweep, gathered: every area's table of cases (``_adversarial.AREAS``,
one test file per area, each running its own cases) checked as one.

- the tables together hold at least 500 cases, and no case id repeats across areas;
- every estimator lorak exports is in the estimator table (``_adversarial.ESTIMATORS``);
- every ``test_*_adversarial.py`` file under ``tests/`` is a listed area.

``python tests/test_adversarial.py`` runs every area's cases and prints the totals per
outcome (``--slow`` includes the slow part, ``-v`` lists skips, a bare word keeps the
cases whose id contains it, ``--exclude=ID`` leaves a case out).
"""

from __future__ import annotations

import sys

import pytest

import lorak
from _adversarial import AREAS, ESTIMATORS, TESTS, classify, gather


def test_case_count():
    tables = gather()
    assert all(tables.values()), [a for a, t in tables.items() if not t]
    assert sum(len(t) for t in tables.values()) >= 500, {a: len(t) for a, t in tables.items()}


def test_case_ids_are_unique_across_areas():
    ids = [c.id for t in gather().values() for c in t]
    assert len(set(ids)) == len(ids), sorted({i for i in ids if ids.count(i) > 1})


def test_every_area_file_is_gathered():
    found = {p.relative_to(TESTS).as_posix() for p in TESTS.rglob("test_*_adversarial.py")}
    assert found == set(AREAS)


def test_every_exported_estimator_is_in_the_sweep():
    from sklearn.base import BaseEstimator

    exported = {
        n
        for n in lorak.__all__
        if isinstance(getattr(lorak, n), type) and issubclass(getattr(lorak, n), BaseEstimator)
    }
    missing = exported - set(ESTIMATORS)
    assert not missing, f"add these estimators to ESTIMATORS: {sorted(missing)}"


def _main(argv):
    import collections
    import time

    slow = "--slow" in argv
    verbose = "-v" in argv
    only = [a for a in argv if not a.startswith("-")]
    # --exclude=ID: leave a case out (e.g. one that crashes the interpreter on old code)
    excluded = {a.split("=", 1)[1] for a in argv if a.startswith("--exclude=")}
    totals = collections.Counter()
    t0 = time.perf_counter()
    for c in (c for table in gather().values() for c in table):
        if c.slow and not slow:
            continue
        if (only and not any(o in c.id for o in only)) or c.id in excluded:
            continue
        try:
            outcome, detail = classify(c)
        except pytest.skip.Exception as exc:
            outcome, detail = "skipped", str(exc)
        totals[outcome] += 1
        if outcome not in ("clear", "correct") and (verbose or outcome != "skipped"):
            print(f"{outcome:13s} {c.id}: {detail.splitlines()[0][:220] if detail else ''}")
    n = sum(totals.values())
    print(
        f"\n{n} cases in {time.perf_counter() - t0:.1f} s: {totals['clear']} clear errors, "
        f"{totals['correct']} correct, {totals['silent_wrong']} silent wrong, "
        f"{totals['cryptic']} cryptic, {totals['skipped']} skipped"
    )


if __name__ == "__main__":
    _main(sys.argv[1:])

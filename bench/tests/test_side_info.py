"""The ``side-info`` experiment (bench/experiments/side_info.py): its sets, how it
prepares them, what its quick run uses, and one small run through the runner."""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import pytest

from _bench_testing import needs_data
from lorak_bench import get_experiment, run_experiment
from lorak_bench._runner import _resolve_specs
from lorak_bench.experiments import side_info


def test_registered_with_its_two_parts_and_every_set():
    exp = get_experiment("side-info")
    assert [p.name for p in exp.parts] == ["main", "cost"]
    main = exp.part("main")
    assert [s.display for s in main.datasets] == list(side_info.SETS)
    assert [m.name for m in main.methods] == list(side_info.METHODS)
    specs, notes = _resolve_specs(main, override=None, quick=False, data_home=None)
    assert len(specs) == 28 and not notes


def test_a_set_is_prepared_as_the_protocol_says():
    spec = next(s for s in get_experiment("side-info").part("main").datasets if s.display == "wine")
    data = side_info._load_set(spec, None)
    X, y = data.X, data.y
    assert X.dtype == np.float64 and X.flags.c_contiguous
    assert np.allclose(X.min(axis=0), -1.0) and np.allclose(X.max(axis=0), 1.0)
    assert sorted(np.unique(y)) == [0, 1, 2]
    assert "[−1, 1]" in data.meta["preprocessing"]


def test_labeled_rows_are_drawn_evenly_over_the_classes():
    y = np.repeat([0, 1, 2], [50, 30, 20])
    lab = side_info._even_draw(y, 10, np.random.default_rng(0))
    counts = np.bincount(y[lab], minlength=3)
    assert lab.size == 10 and np.all(np.diff(lab) > 0)
    assert counts.max() - counts.min() <= 1


@pytest.mark.data
@needs_data
def test_quick_runs_the_three_ssl_book_sets():
    part = get_experiment("side-info").part("main")
    specs, _ = _resolve_specs(part, override=None, quick=True, data_home=os.environ["LORAK_DATA"])
    assert [s.display for s in specs] == ["g241c", "Digit1", "USPS"]


FAST = ("gn", "nystrom", "gn-oracle", "ls-knn", "svm")  # the slower ones: same code path


def test_one_repetition_on_iris_through_the_runner():
    full = get_experiment("side-info")
    main = full.part("main")
    main = dataclasses.replace(main, methods=tuple(m for m in main.methods if m.name in FAST))
    exp = dataclasses.replace(full, parts=(main,))  # the cost part fits m = 150: minutes
    result = run_experiment(exp, datasets=["iris"], reps=1, quick=True)
    errors = {
        r["method"]: r["mean"]
        for r in result.select(part="main", dataset="iris", metric="error_pct")
    }
    assert set(errors) == set(FAST)
    assert all(0.0 <= e <= 100.0 for e in errors.values())
    assert errors["gn-oracle"] <= errors["gn"] + 1e-9  # the oracle is a ceiling
    lams = {r["method"]: r["mean"] for r in result.select(part="main", metric="lam")}
    assert lams["gn"] is not None and lams["gn"] > 0 and lams["svm"] is None
    summary = side_info.summarize(result)
    assert summary["gn"]["sets"] == 1 and "wins_vs_nystrom" in summary["gn"]
    text = exp.checks(result)
    assert "Against plain Nyström" in text and "Selection cost" not in text

"""The cell cache behind ``lorak bench ... --resume``: a killed run goes on where it stopped."""

import numpy as np
import pytest

from lorak.bench import DatasetSpec, Experiment, LoadedData, Method, Metric, Part, run_experiment
from lorak.bench._runner import CellCache, run_all


def _loader(seed):
    def load(spec, data_home=None):
        X = np.random.default_rng(seed).standard_normal((20, 3))
        return LoadedData(spec, X, (X[:, 0] > 0).astype(int), {})

    return load


def _experiment(calls, fail_on=None, name="resumable"):
    def run(task):
        calls.append((task.data.spec.display, task.params["m"], task.rep))
        if fail_on is not None and task.data.spec.display == fail_on:
            raise KeyboardInterrupt  # a killed run: nothing after this point is saved
        return float(task.params["m"] * (task.rep + 1)) + float(task.data.X[0, 0])

    def prepare(data):
        return {"artifacts": {"first_row": data.X[0].copy()}}

    part = Part(
        name="main",
        datasets=[DatasetSpec("a", loader=_loader(0)), DatasetSpec("b", loader=_loader(1))],
        grid=[{"m": 1}, {"m": 2}],
        methods=[Method("sum", run)],
        metrics=[Metric(("value",), lambda out, task: {"value": out})],
        reps=2,
        prepare=prepare,
    )
    return Experiment(name, "resume test", [part])


def _rows(result):
    return sorted((r["dataset"], r["params"]["m"], r["mean"]) for r in result.rows)


def test_killed_run_resumes_from_the_first_unfinished_dataset(tmp_path):
    ref_calls = []
    ref = run_experiment(_experiment(ref_calls), seed=1)
    assert len(ref_calls) == 8  # 2 datasets × 2 params × 2 reps

    calls = []
    cache = CellCache(tmp_path / "cells")
    with pytest.raises(KeyboardInterrupt):
        run_experiment(_experiment(calls, fail_on="b"), seed=1, cache=cache)
    assert cache.saved == 1 and len(list((tmp_path / "cells").glob("*.pkl"))) == 1

    calls = []
    cache = CellCache(tmp_path / "cells", resume=True)
    res = run_experiment(_experiment(calls), seed=1, cache=cache)
    assert {c[0] for c in calls} == {"b"} and len(calls) == 4  # only "b" ran again
    assert cache.hits == 1 and res.config["resumed_datasets"] == 1
    assert _rows(res) == _rows(ref)
    assert len(res.records) == len(ref.records) == 8
    assert [d["label"] for d in res.datasets["main"]] == ["a", "b"]
    assert res.datasets["main"][0]["resumed"] is True
    np.testing.assert_array_equal(
        res.artifacts["main"]["a"]["first_row"], ref.artifacts["main"]["a"]["first_row"]
    )


def test_cache_is_read_only_when_resuming_and_keyed_by_the_settings(tmp_path):
    calls = []
    run_experiment(_experiment(calls), seed=1, cache=CellCache(tmp_path))
    assert len(calls) == 8
    calls.clear()  # without resume: everything runs again (and is saved again)
    run_experiment(_experiment(calls), seed=1, cache=CellCache(tmp_path))
    assert len(calls) == 8
    calls.clear()  # another seed, or quick mode, is another run
    run_experiment(_experiment(calls), seed=2, cache=CellCache(tmp_path, resume=True))
    assert len(calls) == 8
    calls.clear()
    run_experiment(_experiment(calls), seed=1, cache=CellCache(tmp_path, resume=True))
    assert calls == []


def test_unreadable_cache_file_is_run_again(tmp_path):
    calls = []
    run_experiment(_experiment(calls), seed=0, cache=CellCache(tmp_path))
    for f in tmp_path.glob("*.pkl"):
        f.write_bytes(b"not a pickle")
    calls.clear()
    res = run_experiment(_experiment(calls), seed=0, cache=CellCache(tmp_path, resume=True))
    assert len(calls) == 8 and len(res.rows) == 4


def test_run_all_resume(tmp_path):
    calls = []
    exps = [_experiment(calls, name="e1"), _experiment(calls, name="e2")]
    entries = run_all(exps, tmp_path, quick=True)
    assert [e.status for e in entries] == ["ok", "ok"] and len(calls) == 16
    assert len(list((tmp_path / "e1" / "cells").glob("*.pkl"))) == 2
    calls.clear()
    entries = run_all(exps, tmp_path, quick=True, resume=True)
    assert [e.status for e in entries] == ["ok", "ok"] and calls == []
    assert (tmp_path / "e2" / "results.json").is_file()

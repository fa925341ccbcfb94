"""The cell cache behind ``lorak-bench ... --resume``: a killed run goes on where it stopped."""

import numpy as np
import pytest

from _bench_testing import load_benchmark_script
from lorak_bench import DatasetSpec, Experiment, LoadedData, Method, Metric, Part, run_experiment
from lorak_bench._runner import CellCache, run_all


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


def _probe(name):
    """An experiment whose cell reports the process it ran in and its BLAS threads."""

    def run(task):
        import os

        from threadpoolctl import threadpool_info

        blas = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
        return {"pid": float(os.getpid()), "blas": float(max(blas, default=1))}

    part = Part(
        name="main",
        datasets=[DatasetSpec("a", loader=_loader(0))],
        methods=[Method("probe", run, deterministic=True)],
        metrics=[Metric(("pid", "blas"), lambda out, task: out)],
    )
    return Experiment(name, "where cells run", [part])


def _means(folder, name):
    import json

    rows = json.loads((folder / name / "results.json").read_text())["results"]
    return sorted((r["dataset"], r["params"]["m"], r["mean"]) for r in rows)


def test_run_all_in_parallel_processes(tmp_path):
    """jobs=2: the experiments (their datasets, when they have several) run in worker
    processes with the BLAS threads limited,
    their numbers equal a serial run's, the combined order is the given one, and a
    second run with resume replays every saved dataset."""
    import json
    import os

    exps = [_experiment([], name="p1"), _probe("probe"), _experiment([], name="p2")]
    run_all(exps[::2], tmp_path / "serial", quick=True)
    seen = []
    entries = run_all(exps, tmp_path / "par", quick=True, jobs=2, threads=1, on_entry=seen.append)
    assert [e.name for e in entries] == ["p1", "probe", "p2"]
    assert [e.status for e in entries] == ["ok", "ok", "ok"]
    assert [e.name for e in seen[-1]] == ["p1", "probe", "p2"] and len(seen) == 3
    for name in ("p1", "p2"):
        assert _means(tmp_path / "par", name) == _means(tmp_path / "serial", name)
        # two datasets: each ran in a worker of its own into the cell cache, and the
        # experiment's outputs were assembled by replaying both (none ran twice)
        cfg = json.loads((tmp_path / "par" / name / "results.json").read_text())["config"]
        assert cfg["resumed_datasets"] == 2
        assert len(list((tmp_path / "par" / name / "cells").glob("*.pkl"))) == 2
    probe = json.loads((tmp_path / "par" / "probe" / "results.json").read_text())["results"]
    got = {r["metric"]: r["mean"] for r in probe}
    assert got["pid"] != os.getpid() and got["blas"] == 1
    entries = run_all(exps, tmp_path / "par", quick=True, jobs=2, threads=1, resume=True)
    assert [e.status for e in entries] == ["ok", "ok", "ok"]
    for name in ("p1", "p2"):
        cfg = json.loads((tmp_path / "par" / name / "results.json").read_text())["config"]
        assert cfg["resumed_datasets"] == 2
        assert _means(tmp_path / "par", name) == _means(tmp_path / "serial", name)


def test_parallel_run_hands_out_the_longest_measured_experiment_first(tmp_path):
    import json

    from lorak_bench._registry import list_experiments
    from lorak_bench._runner import FULL_RUN_SECONDS, _schedule_order

    exps = list_experiments()
    names = [e.name for e in exps]
    assert set(FULL_RUN_SECONDS) == set(names)  # every registered experiment listed
    timed = [n for n in names if FULL_RUN_SECONDS[n] is not None]
    unknown = {n for n in names if FULL_RUN_SECONDS[n] is None}  # not measured yet: first
    order = [names[i] for i in _schedule_order(exps, False, tmp_path)]
    assert set(order[: len(unknown)]) == unknown
    assert order[len(unknown) :] == sorted(timed, key=lambda n: -FULL_RUN_SECONDS[n])
    # an experiment with no measured time goes first; quick runs order by cells
    new = _experiment([], name="unmeasured")
    assert len(exps) in _schedule_order([*exps, new], False, tmp_path)[: len(unknown) + 1]
    assert sorted(_schedule_order(exps, True, tmp_path)) == list(range(len(exps)))
    # an earlier run's index.json in the output folder (same mode) takes precedence
    entries = [{"name": "kpca", "status": "ok", "seconds": 1e6}]
    (tmp_path / "index.json").write_text(json.dumps({"quick": False, "experiments": entries}))
    measured_first = [names[i] for i in _schedule_order(exps, False, tmp_path)]
    assert next(n for n in measured_first if n not in unknown) == "kpca"
    assert names[_schedule_order(exps, True, tmp_path)[0]] != "kpca" or len(exps) == 1


def test_parallel_run_hands_out_the_longest_units_first(tmp_path, monkeypatch):
    import json

    from lorak_bench import _runner

    exps = [_experiment([], name="big"), _experiment([], name="mid"), _experiment([], name="one")]
    units = {0: [("main", "a"), ("main", "b")], 1: [("main", "a"), ("main", "b")], 2: [("m", "x")]}
    monkeypatch.setattr(_runner, "FULL_RUN_SECONDS", {"big": 100.0, "mid": 90.0, "one": 60.0})
    monkeypatch.setattr(_runner, "FULL_UNIT_SECONDS", {("big", "main", "b"): 95.0})
    order = _runner._job_order(exps, units, False, tmp_path)
    # big/b measured alone (95 s); big/a gets the rest of an even share (50 s); mid's
    # units 45 s each; a one-unit experiment runs whole (60 s)
    assert order == [(0, ("main", "b")), (2, None), (0, ("main", "a")), (1, ("main", "a")),
                     (1, ("main", "b"))]  # fmt: skip
    # the unit table is for the full protocol; quick runs order by cells, units of an
    # experiment together and in their order
    quick = _runner._job_order(exps, units, True, tmp_path)
    assert sorted(quick, key=str) == sorted(order, key=str)
    # an unmeasured experiment's units go first
    new = _experiment([], name="new")
    got = _runner._job_order([*exps, new], {**units, 3: [("main", "a"), ("main", "b")]}, False,
                             tmp_path)  # fmt: skip
    assert got[:2] == [(3, ("main", "a")), (3, ("main", "b"))]
    # an earlier run's index.json in the output folder (same mode) takes precedence
    entries = [{"name": "mid", "status": "ok", "seconds": 1e6}]
    (tmp_path / "index.json").write_text(json.dumps({"quick": False, "experiments": entries}))
    assert _runner._job_order(exps, units, False, tmp_path)[0][0] == 1


def test_npkl_adult_figure_1_survives_a_resumed_run(tmp_path):
    from lorak_bench._registry import get_experiment
    from lorak_bench.experiments.npkl_adult import _adult_checks, _histories

    exp = get_experiment("npkl-adult")
    first = run_experiment(exp, quick=True, data_home=tmp_path / "none", cache=CellCache(tmp_path))
    again = run_experiment(
        exp, quick=True, data_home=tmp_path / "none", cache=CellCache(tmp_path, resume=True)
    )
    assert again.config["resumed_datasets"] >= 1
    h1, h2 = _histories(first), _histories(again)
    assert h1 and h1.keys() == h2.keys()
    for ds in h1:
        np.testing.assert_array_equal(h1[ds]["objective"], h2[ds]["objective"])
    assert "Fig. 1" in _adult_checks(again)  # drawn from the saved cells


def test_cell_cache_cost_summary(tmp_path):
    """bench/scripts/bench_all_cells.py adds up a run's cost per (part, dataset) from the
    cell cache, merging a second folder and counting a unit found twice once."""
    mod = load_benchmark_script("bench_all_cells")

    run_all([_experiment([], name="p1")], tmp_path / "a", quick=True)
    run_all([_experiment([], name="p1")], tmp_path / "b", quick=True)
    res = mod.collect([tmp_path / "a", tmp_path / "b"])
    units = res["p1"]["units"]
    assert sorted(u["dataset"] for u in units) == ["a", "b"]
    assert all(u["cells"] == 4 and u["wall_seconds"] >= 0 for u in units)
    assert res["p1"]["wall_seconds"] == pytest.approx(sum(u["wall_seconds"] for u in units))

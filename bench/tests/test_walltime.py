"""Wall time recording: results.json config (per run, part and dataset), `lorak-bench all`'s
index.json and the combined report's wall-time table (toy experiments that "sleep").

The clocks are fake (the ``clock`` fixture): ``time.perf_counter`` moves only by the
naps, so every time the runner records is a sum of naps, exactly, whatever the load of
the machine that runs the tests."""

import json
import time

import numpy as np
import pytest

from lorak.cli import main
from lorak_bench import (
    DatasetSpec,
    Experiment,
    LoadedData,
    Method,
    Metric,
    Part,
    _registry,
    run_experiment,
    write_outputs,
)

NAP = 2.0**-6  # seconds each cell "sleeps" inside the timed method (exact in binary)


class _Clock:
    """``time.perf_counter`` and ``time.process_time`` that move only when ``sleep``
    is called (no CPU time passes): what the runner adds up is then known exactly."""

    def __init__(self):
        self.now = 1024.0

    def perf_counter(self):
        return self.now

    def process_time(self):
        return 0.0

    def sleep(self, seconds):
        self.now += seconds


@pytest.fixture(autouse=True)
def clock(monkeypatch):
    c = _Clock()
    for name in ("perf_counter", "process_time", "sleep"):
        monkeypatch.setattr(time, name, getattr(c, name))
    return c


def _loader(spec, data_home):
    time.sleep(NAP)  # loading is wall time, not fit time
    y = np.repeat([0, 1], 5)
    return LoadedData(spec=spec, X=np.zeros((10, 2)) + y[:, None], y=y)


def _broken_loader(spec, data_home):
    raise OSError("no such file")


def _nap(task):
    time.sleep(NAP)
    return float(task.rep)


def _value(out, task):
    time.sleep(NAP)  # metrics are wall time, not fit time
    return out


def _part(name, loader=_loader, run=_nap):
    return Part(
        name=name,
        datasets=(DatasetSpec("toy", loader=loader),),
        methods=(Method("nap", run),),
        metrics=(Metric("value", _value),),
        grid=({"m": 1}, {"m": 2}),
        reps=2,
        quick_reps=2,
    )


def _experiment(name="toy-nap"):
    return Experiment(name=name, description="sleeps", parts=(_part("a"), _part("b")))


def test_results_json_records_wall_and_fit_seconds(tmp_path):
    result = run_experiment(_experiment(), quick=True)
    cfg = result.config
    n_cells = 2 * 2 * 2  # parts × grid × reps
    assert cfg["n_cells"] == n_cells == len(result.records)
    # each cell slept NAP inside the timed method; loading and metrics slept outside it
    assert [r["seconds"] for r in result.records] == [NAP] * n_cells
    assert cfg["fit_seconds"] == pytest.approx(n_cells * NAP, abs=1e-3)  # rounded to 1 ms
    assert cfg["wall_seconds"] == pytest.approx(2 * n_cells * NAP + 2 * NAP, abs=1e-3)
    parts = cfg["parts"]
    assert set(parts) == {"a", "b"}
    for pc in parts.values():
        assert pc["wall_seconds"] == pytest.approx((1 + 2 * 4) * NAP, abs=1e-3)  # load + 4 × 2
        (ds,) = pc["datasets"]
        assert ds["label"] == "toy"
        assert ds["wall_seconds"] == pytest.approx(pc["wall_seconds"], abs=1e-3)
    assert sum(pc["wall_seconds"] for pc in parts.values()) <= cfg["wall_seconds"] + 1e-3

    paths = write_outputs(result, tmp_path)
    saved = json.loads(paths["results"].read_text())["config"]
    assert saved["wall_seconds"] == cfg["wall_seconds"]
    assert saved["fit_seconds"] == cfg["fit_seconds"]
    assert saved["parts"]["a"]["wall_seconds"] == parts["a"]["wall_seconds"]
    report = paths["report"].read_text()
    assert f"timed fit + transform {result.fit_seconds:.1f} s wall" in report
    assert f"over {n_cells} cells" in report


def test_failed_load_still_records_its_dataset_time():
    exp = Experiment(name="toy-broken", description="x", parts=(_part("p", _broken_loader),))
    result = run_experiment(exp, quick=True)
    (ds,) = result.config["parts"]["p"]["datasets"]
    assert ds["loaded"] is False and ds["wall_seconds"] >= 0
    assert result.config["fit_seconds"] == 0 and result.config["n_cells"] == 0


@pytest.fixture
def fake_registry(monkeypatch):
    fakes = {
        "toy-nap": _experiment(),
        "toy-broken": Experiment(
            name="toy-broken", description="x", parts=(_part("p", _broken_loader),)
        ),
    }
    monkeypatch.setattr(_registry, "EXPERIMENTS", fakes)
    monkeypatch.setattr(_registry, "IMPORT_ERRORS", {})
    monkeypatch.setattr(_registry, "_discovered", True)


def test_bench_all_index_and_report_have_wall_times(tmp_path, capsys, fake_registry):
    out = tmp_path / "all"
    rc = main(["bench", "all", "--quick", "--out", str(out), "--no-progress"])
    assert rc == 1  # toy-broken has no results
    assert "toy-nap: ok" in capsys.readouterr().out
    index = json.loads((out / "index.json").read_text())
    by = {e["name"]: e for e in index["experiments"]}
    nap, broken = by["toy-nap"], by["toy-broken"]
    assert nap["fit_seconds"] == pytest.approx(8 * NAP, abs=1e-3)
    assert nap["seconds"] >= nap["run_seconds"] >= nap["fit_seconds"]
    assert nap["run_seconds"] == pytest.approx(18 * NAP, abs=1e-3)  # + 2 loads, 8 metrics
    results = json.loads((out / nap["results"]).read_text())["config"]
    assert nap["run_seconds"] == pytest.approx(results["wall_seconds"], abs=2e-3)
    assert nap["fit_seconds"] == pytest.approx(results["fit_seconds"], abs=2e-3)
    assert nap["work_seconds"] == pytest.approx(nap["fit_seconds"], abs=2e-3)  # no sharing
    assert broken["status"] == "no results" and broken["fit_seconds"] == 0
    assert index["wall_seconds"] >= nap["seconds"] + broken["seconds"] - 1e-3

    report = (out / "report.md").read_text()
    section = report.split("## Wall time", 1)[1].split("\n## ", 1)[0]
    header = "| experiment | status | wall s | run s | timed fits s | work s | share of wall |"
    assert header in section
    rows = [ln for ln in section.splitlines() if ln.startswith("| ")][1:]  # no header
    assert [r.split("|")[1].strip() for r in rows] == ["toy-broken", "toy-nap", "**total**"]
    nap_row = next(r for r in rows if "toy-nap" in r).split("|")
    # index.json rounds to 3 decimals, the table to 1: compare within that rounding
    assert nap_row[2].strip() == "ok" and abs(float(nap_row[3]) - nap["seconds"]) <= 0.0505
    assert f"**{index['wall_seconds']:.1f}**" in rows[-1]
    assert "1/2 with results" in rows[-1]


def test_single_bench_prints_wall_time(tmp_path, capsys, fake_registry):
    assert main(["bench", "toy-nap", "--quick", "--out", str(tmp_path), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "wall time " in printed and "timed fit + transform" in printed
    cfg = json.loads((tmp_path / "results.json").read_text())["config"]
    assert cfg["wall_seconds"] >= cfg["fit_seconds"] > 0


SHARED_NAP = 0.25


def _uses_shared(task):
    # every cell uses one cached computation (made once per dataset), charged in full
    task.shared("long", lambda: time.sleep(SHARED_NAP))
    return 1.0


def test_report_flags_timed_fits_above_the_wall(tmp_path, monkeypatch, fake_registry):
    part = _part("p", run=_uses_shared)
    exp = Experiment(name="toy-claims", description="x", parts=(part,))
    monkeypatch.setattr(_registry, "EXPERIMENTS", {"toy-claims": exp})
    assert main(["bench", "all", "--quick", "--out", str(tmp_path), "--no-progress"]) == 0
    (entry,) = json.loads((tmp_path / "index.json").read_text())["experiments"]
    assert entry["fit_seconds"] == pytest.approx(4 * SHARED_NAP, abs=1e-3)  # 2 grid × 2 reps
    # the run slept the shared nap once, the load and the four metrics' naps
    assert entry["run_seconds"] == pytest.approx(SHARED_NAP + 5 * NAP, abs=1e-3)
    assert entry["run_seconds"] < entry["fit_seconds"]
    report = (tmp_path / "report.md").read_text()
    assert "Timed fits above the run's wall time (toy-claims)" in report


def test_report_has_no_such_note_when_fits_fit(tmp_path, fake_registry):
    main(["bench", "all", "--only", "toy-nap", "--quick", "--out", str(tmp_path), "--no-progress"])
    assert "Timed fits above" not in (tmp_path / "report.md").read_text()


def _shared_nap(task):
    # every cell of a dataset uses one cached computation that sleeps NAP once
    task.shared("nap", lambda: time.sleep(NAP))
    return float(task.rep)


def test_shared_work_is_charged_to_every_cell_that_uses_it():
    part = Part(
        name="s",
        datasets=(DatasetSpec("toy", loader=_loader),),
        methods=(Method("a", _shared_nap), Method("b", _shared_nap)),
        metrics=(Metric("value", lambda out, task: out),),
        grid=({"m": 1},),
        reps=1,
    )
    result = run_experiment(Experiment(name="toy-shared", description="", parts=(part,)))
    a, b = result.records
    # a computed it, b found it cached: each is charged the one computation in full
    for rec in (a, b):
        assert rec["seconds"] == rec["shared_seconds"] == NAP
        assert rec["cpu_seconds"] is not None and rec["cpu_seconds"] >= 0
    # the runner timed the dataset's prepare step apart from the cells
    (ds,) = result.datasets["s"]
    assert ds["prepare_seconds"] >= 0
    row = result.rows[0]
    assert row["cpu_seconds_mean"] is not None
    # the repetition's CPU total counts the shared item once, not once per method
    c = result.cpu_per_repetition("s", "toy")
    assert c["reps"] == 1 and set(c["by_method"]) == {"a", "b"}
    assert c["per_rep"] == pytest.approx(
        a["cpu_seconds"] + b["cpu_seconds"] - b["shared_cpu_seconds"], abs=1e-9
    )
    assert list(a["shared_items"]) == list(b["shared_items"]) == ["'nap'"]
    # the run's timed work counts the shared nap once; fit_seconds counts it per cell
    assert result.fit_seconds == pytest.approx(a["seconds"] + b["seconds"], abs=1e-9)
    assert result.work_seconds == pytest.approx(
        a["seconds"] + b["seconds"] - b["shared_seconds"], abs=1e-9
    )
    assert result.work_seconds == NAP and result.fit_seconds == 2 * NAP


def test_shared_outside_a_run_just_caches():
    from lorak_bench import LoadedData as LD
    from lorak_bench import Task

    calls = []
    ctx = {}
    task = Task(
        data=LD(spec=DatasetSpec("toy"), X=np.zeros((1, 1))), params={}, rep=0, seed=0, context=ctx
    )
    assert task.shared("k", lambda: calls.append(1) or 5) == 5
    assert task.shared("k", lambda: calls.append(1) or 6) == 5
    assert calls == [1]

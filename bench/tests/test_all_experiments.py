"""`lorak-bench all`: every registered experiment, one combined report (fake experiments)."""

import json

import numpy as np
import pytest

from lorak.cli import main
from lorak_bench import DatasetSpec, Experiment, LoadedData, Method, Metric, Part, _registry
from lorak_bench._report import embed_report


def _loader(spec, data_home):
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 15)
    return LoadedData(spec=spec, X=rng.normal(size=(30, 2)) + y[:, None], y=y)


def _prepare(data):
    return {"artifacts": {}}


def _run(task):
    # a method that leaves an artifact for the plots
    task.context["artifacts"]["G"] = task.data.X
    return task.params["m"] * 0.5 + task.rep


def _value(out, task):
    return out


def _plots(result, out_dir):
    from lorak import plot

    arts = result.artifacts["main"]["toy"]
    ax = plot.embedding(arts["G"], np.repeat([0, 1], 15))
    ax.figure.savefig(out_dir / "embedding.png")
    return [("toy embedding", "embedding.png")]


def _reference(dataset, method, params, metric):
    return {"mean": 1.0, "std": 0.1}


def _part(name="main", run=_run):
    return Part(
        name=name,
        datasets=(DatasetSpec("toy", loader=_loader),),
        methods=(Method("m1", run),),
        metrics=(Metric("value", _value),),
        grid=({"m": 1}, {"m": 2}),
        reps=3,
        quick_reps=2,
        prepare=_prepare,
    )


def _boom(task):
    raise RuntimeError("cell broke")


FAKES = {
    "toy-ok": Experiment(
        name="toy-ok",
        description="a toy that works",
        parts=(_part(),),
        reference=_reference,
        plots=_plots,
        paper="Nobody, 2026",
    ),
    "toy-fail": Experiment(
        name="toy-fail", description="every cell fails", parts=(_part(run=_boom),)
    ),
    "toy-error": Experiment(name="toy-error", description="the run raises", parts=None),
}


@pytest.fixture
def fake_registry(monkeypatch):
    monkeypatch.setattr(_registry, "EXPERIMENTS", dict(FAKES))
    monkeypatch.setattr(_registry, "IMPORT_ERRORS", {})
    monkeypatch.setattr(_registry, "_discovered", True)


def test_bench_all_writes_combined_report(tmp_path, capsys, fake_registry):
    out = tmp_path / "all"
    rc = main(["bench", "all", "--quick", "--out", str(out), "--no-progress"])
    assert rc == 1  # toy-fail and toy-error produced no results
    printed = capsys.readouterr().out
    assert "toy-ok: ok" in printed and "toy-error: error" in printed

    index = json.loads((out / "index.json").read_text())
    assert index["command"] == "bench all" and index["quick"] is True
    by = {e["name"]: e for e in index["experiments"]}
    assert list(by) == ["toy-error", "toy-fail", "toy-ok"]  # sorted by name
    assert by["toy-ok"]["status"] == "ok" and by["toy-ok"]["n_rows"] == 2
    assert by["toy-ok"]["plots"] == ["toy-ok/embedding.png"]
    assert by["toy-fail"]["status"] == "no results" and by["toy-fail"]["n_failures"] == 4
    assert by["toy-error"]["status"] == "error" and "TypeError" in by["toy-error"]["error"]
    assert all(e["seconds"] >= 0 for e in index["experiments"])
    for e in (by["toy-ok"], by["toy-fail"]):
        for key in ("report", "results", "raw"):
            assert (out / e[key]).is_file()
    assert (out / "toy-ok" / "embedding.png").stat().st_size > 0

    # quick reps: 2 per cell; the paper's number beside ours in the combined report
    results = json.loads((out / "toy-ok" / "results.json").read_text())["results"]
    assert {r["reps"] for r in results} == {2}
    report = (out / "report.md").read_text()
    assert report.startswith("# lorak-bench all — quick mode")
    assert "(paper 1 ± 0.1)" in report and "seconds" in report
    assert "![toy embedding](toy-ok/embedding.png)" in report  # link rewritten
    assert "[report](toy-ok/report.md)" in report
    assert "cell broke" in report and "The run failed" in report
    # the embedded report's headings sit below the combined report's
    assert "\n### `toy-ok`" in report and "\n# `toy-ok`" not in report


def test_bench_all_skip_and_exit_status(tmp_path, fake_registry):
    out = tmp_path / "o"
    rc = main(
        [
            "bench",
            "all",
            "--skip",
            "toy-fail,toy-error",
            "--reps",
            "1",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    assert rc == 0
    index = json.loads((out / "index.json").read_text())
    assert [e["name"] for e in index["experiments"]] == ["toy-ok"]
    assert index["skipped"] == ["toy-fail", "toy-error"] and index["quick"] is False
    assert "Skipped on request: toy-fail, toy-error" in (out / "report.md").read_text()


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["bench", "all", "--skip", "nope"], "nope"),
        (["bench", "all", "--datasets", "wine"], "--datasets"),
        (["bench", "all", "--skip", "toy-ok,toy-fail,toy-error"], "no experiment left"),
        (["bench", "toy-ok", "--skip", "toy-fail"], "--skip"),
        (["bench", "toy-ok", "--only", "toy-fail"], "--only"),
        (["bench", "all", "--only", "toy-ok,nope"], "nope"),
    ],
)
def test_bench_all_bad_arguments(argv, match, capsys, fake_registry):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert match in capsys.readouterr().err


def test_bench_list_mentions_all(capsys, fake_registry):
    assert main(["bench", "--list"]) == 0
    out = capsys.readouterr().out
    assert "toy-ok" in out and "\nall " in out


def test_embed_report_relinks_and_demotes():
    text = "\n".join(
        [
            "# Title",
            "![plot](a.png) and [raw](raw.json), [web](https://x.org/a.png), [here](#sec)",
            "```",
            "# not a heading",
            "```",
            "## Sub",
        ]
    )
    got = embed_report(text, "exp", shift=2).splitlines()
    assert got[0] == "### Title"
    assert got[1] == (
        "![plot](exp/a.png) and [raw](exp/raw.json), [web](https://x.org/a.png), [here](#sec)"
    )
    assert got[3] == "# not a heading" and got[5] == "#### Sub"


def test_prepare_receives_quick_when_it_takes_it():
    from lorak_bench import run_experiment

    def prep_quick(data, quick=False):
        return {"quick_seen": quick, "artifacts": {"n": data.n_samples}}

    def run(task):
        return float(task.context["quick_seen"])

    part = Part(
        name="p",
        datasets=(DatasetSpec("toy", loader=_loader),),
        methods=(Method("m", run, deterministic=True),),
        metrics=(Metric("v", _value),),
        prepare=prep_quick,
    )
    exp = Experiment(name="toy-q", description="", parts=(part,))
    for quick in (False, True):
        res = run_experiment(exp, quick=quick)
        assert res.rows[0]["mean"] == float(quick)
        assert res.artifacts == {"p": {"toy": {"n": 30}}}
    # a prepare without the keyword is called as before
    plain = Experiment(name="toy-p", description="", parts=(_part(),))
    assert run_experiment(plain, quick=True).rows[0]["reps"] == 2


def test_bench_all_only_and_partial_report_while_running(tmp_path, monkeypatch):
    """The combined report is rewritten after each experiment: an interrupted run
    still leaves one, marked incomplete."""
    out = tmp_path / "o"
    seen = {}

    def peek(task):
        seen["report"] = (out / "report.md").read_text()
        seen["index"] = json.loads((out / "index.json").read_text())
        return 1.0

    second = Experiment(name="toy-z", description="runs second", parts=(_part(run=peek),))
    monkeypatch.setattr(_registry, "EXPERIMENTS", {**FAKES, "toy-z": second})
    monkeypatch.setattr(_registry, "IMPORT_ERRORS", {})
    monkeypatch.setattr(_registry, "_discovered", True)
    rc = main(
        ["bench", "all", "--only", "toy-ok,toy-z", "--quick", "--out", str(out), "--no-progress"]
    )
    assert rc == 0
    assert "**Incomplete**" in seen["report"] and "toy-z" in seen["report"]
    assert [e["name"] for e in seen["index"]["experiments"]] == ["toy-ok"]
    assert seen["index"]["pending"] == ["toy-z"]
    final = json.loads((out / "index.json").read_text())
    assert [e["name"] for e in final["experiments"]] == ["toy-ok", "toy-z"]
    assert final["pending"] == []
    assert "**Incomplete**" not in (out / "report.md").read_text()

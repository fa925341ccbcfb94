"""Tests of the ``lorak-bench`` command line (``lorak_bench.cli``), and of ``lorak bench``
handing over to it."""

import json
import os

import pytest

from lorak_bench.cli import main


def test_version(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"lorak-bench {version('lorak-bench')}"


def test_bench_list(capsys):
    assert main(["--list"]) == 0
    out = capsys.readouterr().out
    assert "nystrom-error" in out and "Fig. 1" in out


def test_unknown_experiment_exits_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["no-such-thing"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "no-such-thing" in err and "nystrom-error" in err


def test_missing_experiment_name_exits_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2
    assert "nystrom-error" in capsys.readouterr().err


def test_nystrom_error_quick_end_to_end(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("LORAK_DATA", raising=False)
    out = tmp_path / "o"
    argv = ["nystrom-error", "--quick", "--reps", "1", "--datasets", "wine"]
    rc = main([*argv, "--out", str(out), "--no-progress"])
    assert rc == 0
    doc = json.loads((out / "results.json").read_text())
    assert doc["config"]["quick"] is True and doc["config"]["options"]["reps"] == 1
    methods = {r["method"] for r in doc["results"]}
    assert methods == {"exact", "kmeans", "uniform", "column_norm", "icd", "rls"}
    assert all(r["paper"] is None for r in doc["results"])  # wine is a stand-in
    assert doc["config"]["stand_ins_used"] == ["wine"]
    report = (out / "report.md").read_text()
    assert "stand-in" in report and "observed ordering" in report
    stdout = capsys.readouterr().out
    assert "Observed orderings" in stdout


def test_default_out_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LORAK_DATA", raising=False)
    argv = ["nystrom-error", "--quick", "--reps", "1", "--datasets", "wine"]
    assert main([*argv, "--no-progress"]) == 0
    assert (tmp_path / "bench-out" / "nystrom-error" / "results.json").is_file()


@pytest.mark.data
@pytest.mark.skipif(not os.environ.get("LORAK_DATA"), reason="LORAK_DATA is not set")
def test_nystrom_error_on_german(tmp_path):
    out = tmp_path / "o"
    argv = ["nystrom-error", "--quick", "--reps", "1", "--datasets", "german"]
    assert main([*argv, "--out", str(out), "--no-progress"]) == 0
    doc = json.loads((out / "results.json").read_text())
    rows = [r for r in doc["results"] if r["metric"] == "frobenius"]
    fig1 = [r for r in rows if r["params"]["part"] == "fig1"]
    assert fig1 and all(r["paper"]["expected"].startswith("exact < kmeans") for r in fig1)
    by = {(r["method"], r["params"]["ratio"]): r["mean"] for r in fig1}
    for ratio in (0.02, 0.06, 0.1):
        assert by[("exact", ratio)] <= min(v for (m, q), v in by.items() if q == ratio)


def test_threads_option(capsys):
    from threadpoolctl import threadpool_info

    from lorak_bench.cli import _thread_limit, build_parser

    parser = build_parser()
    with pytest.raises(SystemExit):
        parser.parse_args(["kpca", "--threads", "-1"])
    assert "expected an integer >= 0" in capsys.readouterr().err
    before = [p["num_threads"] for p in threadpool_info()]
    for argv, expected in (
        (["kpca", "--quick"], 1),
        (["kpca", "--quick", "--threads", "0"], None),
        (["kpca"], None),
        (["kpca", "--threads", "1"], 1),
    ):
        with _thread_limit(parser.parse_args(argv)):
            now = [p["num_threads"] for p in threadpool_info()]
        if expected is None:
            assert now == before
        else:
            assert all(n == expected for n in now)
    assert [p["num_threads"] for p in threadpool_info()] == before


def test_bench_resume_replays_finished_datasets(tmp_path, monkeypatch):
    monkeypatch.delenv("LORAK_DATA", raising=False)
    out = tmp_path / "o"
    argv = ["nystrom-error", "--quick", "--reps", "1", "--datasets", "wine"]
    assert main([*argv, "--out", str(out), "--no-progress"]) == 0
    first = json.loads((out / "results.json").read_text())
    assert first["config"]["resumed_datasets"] == 0 and any((out / "cells").glob("*.pkl"))
    assert main([*argv, "--out", str(out), "--no-progress", "--resume"]) == 0
    again = json.loads((out / "results.json").read_text())
    assert again["config"]["resumed_datasets"] >= 1
    assert again["config"]["options"]["resume"] is True

    def means(doc):
        return sorted(
            (r["method"], r["metric"], str(r["params"]), r["mean"]) for r in doc["results"]
        )

    assert means(again) == means(first)


def _out_dir_error(out, capsys, monkeypatch):
    """The command stops before the run (nothing computed) with status 2 and a message
    that names --out."""
    from lorak_bench import _runner

    def never(*a, **k):  # pragma: no cover - reached only if the check let it through
        raise AssertionError("the run started")

    monkeypatch.setattr(_runner, "run_experiment", never)
    argv = ["nystrom-error", "--quick", "--datasets", "wine", "--no-progress"]
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--out", str(out)])
    assert exc.value.code == 2
    return capsys.readouterr().err


def test_out_folder_that_cannot_be_written_fails_before_the_run(tmp_path, capsys, monkeypatch):
    # an existing folder whose writes fail (a mount without write permission; no file
    # mode makes a folder unwritable for root, so the file creation is made to fail)
    import tempfile

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", denied)
    err = _out_dir_error(tmp_path, capsys, monkeypatch)
    assert "--out" in err and "cannot be written" in err


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes anywhere")
def test_read_only_out_folder_fails_before_the_run(tmp_path, capsys, monkeypatch):
    out = tmp_path / "ro"
    out.mkdir()
    out.chmod(0o500)
    try:
        err = _out_dir_error(out, capsys, monkeypatch)
    finally:
        out.chmod(0o700)
    assert "--out" in err and "cannot be written" in err


def test_out_folder_whose_cells_is_a_file_fails_before_the_run(tmp_path, capsys, monkeypatch):
    (tmp_path / "cells").write_text("x")
    err = _out_dir_error(tmp_path, capsys, monkeypatch)
    assert "--out" in err and "cells" in err


def test_existing_file_as_out_fails_before_the_run(tmp_path, capsys, monkeypatch):
    f = tmp_path / "a-file"
    f.write_text("x")
    err = _out_dir_error(f, capsys, monkeypatch)
    assert "--out" in err and "cannot create" in err


# ---------------------------------------------------------------- lorak bench


def test_lorak_bench_hands_over(capsys):
    """``lorak bench ARGS`` is ``lorak-bench ARGS``, its messages naming ``lorak bench``."""
    from lorak.cli import main as lorak_main

    assert lorak_main(["bench", "--list"]) == 0
    assert "nystrom-error" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        lorak_main(["bench", "kpca", "--skip", "ssl"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "usage: lorak bench" in err and "'lorak bench all'" in err


def test_lorak_bench_runs_an_experiment(tmp_path, monkeypatch):
    from lorak.cli import main as lorak_main

    monkeypatch.delenv("LORAK_DATA", raising=False)
    out = tmp_path / "o"
    argv = ["bench", "nystrom-error", "--quick", "--reps", "1", "--datasets", "wine"]
    assert lorak_main([*argv, "--out", str(out), "--no-progress"]) == 0
    doc = json.loads((out / "results.json").read_text())
    assert doc["config"]["command"] == "bench" and doc["config"]["quick"] is True

"""Tests of the benchmark framework (lorak_bench) and the nystrom-error experiment."""

import io
import json

import numpy as np
import pytest
import scipy.linalg

from lorak import ExactEigen, IncompleteCholesky, Nystroem
from lorak.kernels import Gaussian, kernel_block
from lorak.metrics import frobenius_error
from lorak_bench import (
    DatasetSpec,
    Experiment,
    LoadedData,
    Method,
    Metric,
    Part,
    ProgressBar,
    derive_seed,
    factor_method,
    get_experiment,
    list_experiments,
    load_dataset,
    load_reference,
    minmax_scale,
    plot_metric_lines,
    reference_names,
    run_experiment,
    write_outputs,
)
from lorak_bench._runner import _resolve_specs
from lorak_bench.experiments.nystrom_error import exact_tail_error, fro_error_cached

TOP_KEYS = {"experiment", "config", "environment", "results"}
ENV_KEYS = {"python", "numpy", "scipy", "sklearn", "lorak", "cpu", "threads", "platform"}
ROW_KEYS = {
    "dataset",
    "method",
    "params",
    "metric",
    "mean",
    "std",
    "seconds_mean",
    "cpu_seconds_mean",
    "reps",
    "paper",
}


def _toy_loader(spec, data_home):
    rng = np.random.default_rng(7)
    X = rng.standard_normal((60, 3))
    return LoadedData(spec=spec, X=X, y=(X[:, 0] > 0).astype(int))


def _error(out, task):
    kernel = out.estimator.kernel_
    return {
        "fro": frobenius_error(kernel, task.data.X, out.G),
        "fro_rel": frobenius_error(kernel, task.data.X, out.G, relative=True),
    }


def _uniform(task):
    return Nystroem(
        kernel="gaussian",
        bandwidth="mean_to_centroid",
        n_components=task.params["m"],
        random_state=task.seed,
    )


def _icd(task):
    return IncompleteCholesky(
        kernel="gaussian", bandwidth="mean_to_centroid", n_components=task.params["m"]
    )


def _boom(task):
    if task.params["m"] == 8:
        raise ValueError("boom at m=8")
    return _uniform(task)


def _plots(result, out_dir):
    path = out_dir / "toy.png"
    plot_metric_lines(result, "main", "fro", "m", path)
    return [("toy", path.name)]


def _toy_experiment(extra_methods=()):
    return Experiment(
        name="toy",
        description="a tiny synthetic experiment",
        parts=[
            Part(
                name="main",
                datasets=[DatasetSpec("toy", loader=_toy_loader)],
                grid=[{"m": 4}, {"m": 8}],
                methods=[
                    factor_method("uniform", _uniform),
                    factor_method("icd", _icd, deterministic=True),
                    *extra_methods,
                ],
                metrics=[Metric(("fro", "fro_rel"), _error)],
                reps=2,
            )
        ],
        reference=lambda d, m, p, metric: {"mean": 1.0, "std": 0.1} if m == "icd" else None,
        plots=_plots,
    )


def test_runner_writes_results_report_and_plot(tmp_path):
    pytest.importorskip("matplotlib")
    result = run_experiment(_toy_experiment(), seed=3)
    paths = write_outputs(result, tmp_path)
    doc = json.loads((tmp_path / "results.json").read_text())
    assert set(doc) == TOP_KEYS
    assert doc["experiment"] == "toy"
    assert ENV_KEYS <= set(doc["environment"])
    assert doc["config"]["seed"] == 3
    # 2 params × 2 methods × 2 metrics
    assert len(doc["results"]) == 8
    for row in doc["results"]:
        assert set(row) == ROW_KEYS
        assert row["mean"] >= 0
        assert row["seconds_mean"] >= 0
    icd = [r for r in doc["results"] if r["method"] == "icd"]
    assert all(r["reps"] == 1 and r["std"] == 0.0 for r in icd)
    assert all(r["paper"] == {"mean": 1.0, "std": 0.1} for r in icd)
    uni = [r for r in doc["results"] if r["method"] == "uniform"]
    assert all(r["reps"] == 2 and r["paper"] is None for r in uni)
    report = (tmp_path / "report.md").read_text()
    assert "## Failures" in report and "None." in report
    assert "paper 1 ± 0.1" in report
    assert "![toy](toy.png)" in report
    assert (tmp_path / "toy.png").read_bytes()[:4] == b"\x89PNG"
    raw = json.loads(paths["raw"].read_text())
    assert len(raw["records"]) == 2 * (2 + 1)


def test_failures_are_recorded_not_raised(tmp_path):
    def metric_fails(out, task):
        raise RuntimeError("metric broke")

    exp = _toy_experiment(
        extra_methods=[
            factor_method("flaky", _boom),
            Method("always", lambda task: 1 / 0),
        ]
    )
    result = run_experiment(exp)
    stages = {(f["method"], f["stage"]) for f in result.failures}
    assert ("flaky", "fit") in stages and ("always", "fit") in stages
    flaky = [f for f in result.failures if f["method"] == "flaky"]
    assert len(flaky) == 2 and all("boom at m=8" in f["error"] for f in flaky)
    rows = {(r["method"], r["params"]["m"], r["metric"]): r for r in result.rows}
    assert rows[("flaky", 4, "fro")]["reps"] == 2
    assert rows[("flaky", 8, "fro")]["mean"] is None
    assert rows[("flaky", 8, "fro")]["reps"] == 0
    assert rows[("uniform", 8, "fro")]["mean"] > 0
    write_outputs(result, tmp_path)
    report = (tmp_path / "report.md").read_text()
    assert "ZeroDivisionError" in report and "boom at m=8" in report

    bad_metric = Part(
        name="main",
        datasets=[DatasetSpec("toy", loader=_toy_loader)],
        grid=[{"m": 4}],
        methods=[factor_method("icd", _icd, deterministic=True)],
        metrics=[Metric("x", metric_fails)],
    )
    res = run_experiment(Experiment("t2", "", [bad_metric]))
    assert [f["stage"] for f in res.failures] == ["metric"]
    assert res.rows[0]["mean"] is None and res.rows[0]["seconds_mean"] is not None


def test_missing_dataset_is_a_failure():
    def loader(spec, home):
        raise FileNotFoundError("no such data")

    part = Part(
        name="main",
        datasets=[DatasetSpec("gone", loader=loader), DatasetSpec("toy", loader=_toy_loader)],
        grid=[{"m": 4}],
        methods=[factor_method("icd", _icd, deterministic=True)],
        metrics=[Metric(("fro", "fro_rel"), _error)],
    )
    res = run_experiment(Experiment("t3", "", [part]))
    assert res.failures[0]["stage"] == "load" and res.failures[0]["dataset"] == "gone"
    assert {r["dataset"] for r in res.rows} == {"toy"}


def test_seeds_are_deterministic():
    a = run_experiment(_toy_experiment(), seed=11)
    b = run_experiment(_toy_experiment(), seed=11)
    c = run_experiment(_toy_experiment(), seed=12)
    key = [(r["method"], r["params"]["m"], r["metric"], r["mean"], r["std"]) for r in a.rows]
    assert key == [
        (r["method"], r["params"]["m"], r["metric"], r["mean"], r["std"]) for r in b.rows
    ]
    assert key != [
        (r["method"], r["params"]["m"], r["metric"], r["mean"], r["std"]) for r in c.rows
    ]
    assert derive_seed(11, 0) == derive_seed(11, 0) != derive_seed(11, 1)
    assert [r["seed"] for r in a.records if r["method"] == "uniform"][:2] == [
        derive_seed(11, 0),
        derive_seed(11, 1),
    ]


def test_exact_shortcut_matches_exact_eigen():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((120, 4))
    kernel = Gaussian(bandwidth="mean_to_centroid").resolve(X)
    K = kernel_block(kernel, X, X)
    lam = scipy.linalg.eigvalsh(K)
    for m in (3, 12):
        G = ExactEigen(kernel=kernel, n_components=m).fit_transform(X)
        expected = frobenius_error(kernel, X, G)
        assert exact_tail_error(lam, m) == pytest.approx(expected, rel=1e-8, abs=1e-10)
        # the cached symmetric error equals the streamed one
        assert fro_error_cached(K, G, block_bytes=8 * 120 * 16) == pytest.approx(
            expected, rel=1e-10, abs=1e-12
        )
    G = Nystroem(kernel=kernel, n_components=10, random_state=0).fit_transform(X)
    assert fro_error_cached(K, G) == pytest.approx(frobenius_error(kernel, X, G), rel=1e-10)


def test_reference_files_are_bundled():
    assert set(reference_names()) >= {
        "csi",
        "generalized_nystrom",
        "improved_nystrom",
        "lp_mkl",
        "simple_npkl",
    }
    ref = load_reference("improved_nystrom")
    assert "figure1_approx_error" in ref
    assert ref["table3_kernel_pca"]["datasets"]["german"]["kmeans_nystrom"]["std"] == 0.0058
    with pytest.raises(ValueError, match="valid names are"):
        load_reference("nope")


def test_registry():
    names = [e.name for e in list_experiments()]
    assert "nystrom-error" in names
    assert get_experiment("nystrom-error").parts[0].name == "fig1"
    with pytest.raises(ValueError, match=r"unknown experiment 'nope'.*nystrom-error"):
        get_experiment("nope")


def test_quick_uses_stand_ins_without_data(tmp_path, monkeypatch):
    monkeypatch.delenv("LORAK_DATA", raising=False)
    part = get_experiment("nystrom-error").part("fig1")
    specs, notes = _resolve_specs(part, override=None, quick=True, data_home=tmp_path)
    assert specs and all(s.stand_in for s in specs)
    assert any("stand-ins" in n and "no numbers" in n for n in notes)
    specs, _ = _resolve_specs(part, override=["adult1a", "wine"], quick=True, data_home=None)
    assert [(s.name, s.display, s.stand_in) for s in specs] == [
        ("a1a", "adult1a", False),
        ("wine", "wine", True),
    ]


def test_quick_paper_datasets_subset():
    part = Part(
        name="p", datasets=("wine", "iris"), methods=(), metrics=(), quick_paper_datasets=("iris",)
    )
    specs, notes = _resolve_specs(part, override=None, quick=True, data_home=None)
    assert [s.name for s in specs] == ["iris"] and not specs[0].stand_in
    assert "quick run on iris of the paper's 2 sets" in notes[0]
    specs, notes = _resolve_specs(part, override=None, quick=False, data_home=None)
    assert [s.name for s in specs] == ["wine", "iris"] and not notes
    # --datasets wins over the quick subset
    specs, _ = _resolve_specs(part, override=["wine"], quick=True, data_home=None)
    assert [s.name for s in specs] == ["wine"]


def test_lookup_datasets_are_found_but_never_run(tmp_path, monkeypatch):
    monkeypatch.delenv("LORAK_DATA", raising=False)
    part = Part(
        name="p",
        datasets=("a1a",),
        methods=(),
        metrics=(),
        lookup_datasets=(DatasetSpec("w1a", label="web1"),),
    )
    specs, notes = _resolve_specs(part, override=None, quick=True, data_home=tmp_path)
    assert specs == [] and "no stand-in; nothing run" in notes[0]
    specs, _ = _resolve_specs(part, override=["web1"], quick=False, data_home=None)
    assert [(s.name, s.display, s.stand_in) for s in specs] == [("w1a", "web1", False)]


def test_progress_bar_modes():
    plain = io.StringIO()
    bar = ProgressBar(plain, tty=False)
    bar.start(4, "toy")
    bar.start_dataset("", "a", 1, 2)
    bar.advance(2)
    bar.end_dataset("", "a", 2, 0, 0.1)
    bar.start_dataset("", "b", 2, 2)
    bar.advance(2)
    bar.end_dataset("", "b", 2, 1, 0.1)
    bar.close()
    lines = plain.getvalue().splitlines()
    assert len(lines) == 2 and "1 failed" in lines[1] and "(4/4)" in lines[1]
    term = io.StringIO()
    bar = ProgressBar(term, tty=True)
    bar.start(2, "toy")
    bar.start_dataset("p", "a", 1, 1)
    bar.advance(2, "m=4")
    bar.close()
    assert "\r" in term.getvalue() and "2/2" in term.getvalue()


def test_minmax_preprocess_is_reported():
    spec = DatasetSpec("toy", loader=_toy_loader, preprocess=minmax_scale)
    data = load_dataset(spec)
    assert data.X.min() == -1.0 and data.X.max() == 1.0
    assert np.allclose(data.X.min(axis=0), -1) and np.allclose(data.X.max(axis=0), 1)
    assert "svm-scale" in data.meta["preprocessing"]
    part = Part(
        name="main",
        datasets=[spec],
        grid=[{"m": 4}],
        methods=[factor_method("icd", _icd, deterministic=True)],
        metrics=[Metric(("fro", "fro_rel"), _error)],
    )
    res = run_experiment(Experiment("t4", "", [part]))
    assert "svm-scale" in res.config["parts"]["main"]["datasets"][0]["preprocessing"]


def test_series_keys_split_lines_only_by_parameters_that_differ_at_one_x():
    from lorak_bench._report import _series_keys

    def row(**params):
        return {"params": params}

    # p varies at fixed R: one line per p; m = 2R moves with R only: no split
    rows = [row(R=r, p=p, m=2 * r) for r in (10, 20) for p in (2.0, 1.1)]
    assert _series_keys(rows, "R") == ["p"]
    assert _series_keys([row(R=r, m=2 * r) for r in (10, 20)], "R") == []


def test_harness_classes_are_not_persistable():
    """lorak.load never rebuilds a class of the harness, even once it is imported."""
    import sys

    import lorak_bench  # noqa: F401
    from lorak.persist import trusted_classes

    assert [m for m in sys.modules if m.startswith("lorak_bench")]
    assert not [k for k in trusted_classes() if k.startswith("lorak_bench")]

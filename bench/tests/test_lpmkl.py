"""The ``lpmkl`` experiment (quick mode, applicability, report) and bench/scripts/bench_lpmkl.py."""

import argparse
import dataclasses

import numpy as np
import pytest

from _bench_testing import load_benchmark_script
from lorak import LowRankMKLClassifier
from lorak.learn import fit_lp_mkl
from lorak_bench import DatasetSpec, LoadedData, get_experiment, run_experiment, write_outputs
from lorak_bench._cost import forget as lpmkl_forget
from lorak_bench._cost import shared as lpmkl_shared
from lorak_bench._runner import _resolve_specs
from lorak_bench.experiments import lpmkl


def _blobs(n, seed=0):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1, -1)
    X = rng.standard_normal((n, 3)) + 1.5 * y[:, None] * np.array([1.0, 0.5, 0.0])
    return X, y


def test_declared_parts_methods_and_quick_settings():
    exp = get_experiment("lpmkl")
    acc = exp.part("accuracy")
    assert [m.name for m in acc.methods] == ["lowrank_newton", "lowrank", "lowrank_paper", "full"]
    assert {g["R"] for g in acc.grid} == set(lpmkl.RANKS)
    assert {g["p"] for g in acc.grid} == set(lpmkl.PS)
    assert acc.reps == 5 and acc.quick_reps == 1
    assert {g["R"] for g in acc.quick_grid} == set(lpmkl.QUICK_RANKS)
    # with the paper's data present, --quick runs svmguide1 only
    specs, notes = _resolve_specs(acc, override=None, quick=True, data_home=None)
    if any(not s.stand_in for s in specs):
        assert [s.display for s in specs] == ["svmguide1"] and notes
    assert "newton" in [m.name for m in exp.part("solvers").methods]


def test_prepare_quick_subsamples_and_marks_the_data():
    X, y = _blobs(lpmkl.QUICK_ROWS + 300)
    data = LoadedData(spec=DatasetSpec("blobs"), X=X.copy(), y=y.copy())
    lpmkl._prepare_lpmkl(data, quick=True)
    assert data.n_samples == lpmkl.QUICK_ROWS and data.y.shape == (lpmkl.QUICK_ROWS,)
    assert data.meta["lpmkl_quick"] is True
    # rows kept are rows of the original (same pairs), no duplicates
    rows = {tuple(r) for r in X}
    assert all(tuple(r) in rows for r in data.X)
    assert np.unique(data.X, axis=0).shape[0] == lpmkl.QUICK_ROWS
    full = LoadedData(spec=DatasetSpec("blobs"), X=X.copy(), y=y.copy())
    lpmkl._prepare_lpmkl(full)
    assert full.n_samples == X.shape[0] and not full.meta["lpmkl_quick"]
    one = LoadedData(spec=DatasetSpec("one"), X=X[:10], y=np.ones(10))
    with pytest.raises(ValueError, match="two classes"):
        lpmkl._prepare_lpmkl(one)


def test_applicability_rules():
    small = LoadedData(spec=DatasetSpec("s"), X=np.zeros((100, 2)), y=np.zeros(100))
    big = LoadedData(spec=DatasetSpec("b"), X=np.zeros((20000, 1)), y=np.zeros(20000))
    assert lpmkl._gfb_applies(small, {}) and not lpmkl._gfb_applies(big, {})
    assert lpmkl._full_applies(small, {}) and not lpmkl._full_applies(big, {})
    # the merged GFB stops at a smaller size than Algorithm 2 (mushrooms: Algorithm 2 only)
    mid = LoadedData(spec=DatasetSpec("m"), X=np.zeros((8124, 1)), y=np.zeros(8124))
    assert lpmkl._gfb_applies(mid, {}) and not lpmkl._merged_gfb_applies(mid, {})
    assert lpmkl._merged_gfb_applies(small, {})
    small.meta["lpmkl_quick"] = True
    assert lpmkl._gfb_applies(small, {}) and not lpmkl._merged_gfb_applies(small, {})
    assert lpmkl._newton_applies(small, {}) == lpmkl.newton_available()


def _loader(spec, data_home):
    X, y = _blobs(120, seed=1)
    return LoadedData(spec=spec, X=X, y=y)


def test_tiny_end_to_end_report(tmp_path):
    spec = DatasetSpec("blobs", loader=_loader)
    methods = [lpmkl.LOWRANK_PAPER, lpmkl.FULL]
    if lpmkl.newton_available():
        methods.insert(0, lpmkl.LOWRANK_NEWTON)
    part = dataclasses.replace(
        lpmkl.ACCURACY,
        datasets=(spec,),
        grid=({"p": 2.0, "R": 5},),
        methods=tuple(methods),
        reps=1,
    )
    exp = dataclasses.replace(lpmkl.EXPERIMENT, parts=(part,))
    res = run_experiment(exp)
    assert not res.failures, res.failures
    accs = {r["method"]: r["mean"] for r in res.select(metric="accuracy")}
    assert set(accs) == {m.name for m in methods}
    # two well separated blobs: every method far above chance
    assert min(accs.values()) > 0.8
    text = lpmkl._lpmkl_checks(res)
    assert "| blobs | 2 | 5 |" in text and "Accuracy and time vs rank" in text
    paths = write_outputs(res, tmp_path)
    assert paths["report"].exists() and "blobs" in paths["report"].read_text()


def test_low_rank_methods_share_one_factor_step_per_repetition_and_rank():
    """The factors of a (repetition, R) are computed once for every low-rank method and
    p, charged in full to each cell, give the fit a plain ``fit`` gives, and are
    dropped when the next rank starts."""
    spec = DatasetSpec("blobs", loader=_loader)
    part = dataclasses.replace(
        lpmkl.ACCURACY,
        datasets=(spec,),
        grid=tuple({"p": p, "R": R} for R in (5, 8) for p in (2.0, 1.1)),
        methods=(lpmkl.LOWRANK_NEWTON, lpmkl.LOWRANK_PAPER),
        reps=1,
    )
    exp = dataclasses.replace(lpmkl.EXPERIMENT, parts=(part,))
    res = run_experiment(exp)
    assert not res.failures, res.failures
    cells = [r for r in res.records if r["part"] == "accuracy"]
    assert len(cells) == 8
    for R in (5, 8):
        items = [
            {k: v for k, v in r["shared_items"].items() if "lpmkl-factors" in k}
            for r in cells
            if r["params"]["R"] == R
        ]
        assert all(len(i) == 1 for i in items)
        assert len({next(iter(i)) for i in items}) == 1  # one key ...
        assert len({tuple(next(iter(i.values()))) for i in items}) == 1  # ... one cost
    # the same classifier as a plain fit
    data = _loader(spec, None)
    lpmkl._prepare_lpmkl(data)
    seed = cells[0]["seed"]
    tr, _ = lpmkl.split_indices(data.n_samples, seed, 0.3)
    kw = dict(
        solver="newton",
        n_kernels=lpmkl.N_KERNELS,
        rank=5,
        C=lpmkl.C,
        p=2.0,
        max_iter=lpmkl.OUTER_MAX_ITER,
        random_state=seed,
    )
    plain = LowRankMKLClassifier(**kw).fit(data.X[tr], data.y[tr])
    task = type("T", (), {})()
    context: dict = {}
    task.params, task.seed = {"R": 5}, seed
    task.shared = lambda key, compute: lpmkl_shared(context, key, compute)
    task.forget = lambda which: lpmkl_forget(context, which)
    fac = lpmkl._shared_factors(task, data.X[tr], None)
    kw.pop("n_kernels"), kw.pop("rank"), kw.pop("random_state")
    shared = fit_lp_mkl(fac, data.y[tr], **kw)
    np.testing.assert_array_equal(shared.kernel_weights[0], plain.kernel_weights_)
    np.testing.assert_array_equal(shared.landmark_coef, plain.landmark_coef_)
    np.testing.assert_array_equal(fac.bank.points, plain.components_)
    task.params = {"R": 8}
    ranks = lambda: [k[2] for k in context.get("_shared", {}) if k[0] == "lpmkl-factors"]  # noqa: E731
    assert ranks() == [5]
    lpmkl._shared_factors(task, data.X[tr], None)  # a new rank drops the factors of R = 5
    assert ranks() == [8]


@pytest.fixture(scope="module")
def bench():
    return load_benchmark_script("bench_lpmkl")


def test_bench_grid_experiment_parts(bench):
    args = argparse.Namespace(
        ps=[2.0], ranks=[10, 50], reps=3, full_reps=1, gfb_ranks=[10], gfb_reps=1
    )
    exp = bench._grid_experiment(args)
    names = [p.name for p in exp.parts]
    assert names == ["accuracy", "accuracy-full", "accuracy-gfb"]
    acc, full, gfb = exp.parts
    assert [m.name for m in acc.methods] == ["lowrank_newton"] and acc.reps == 3
    assert [g["R"] for g in acc.grid] == [10, 50]
    assert [m.name for m in full.methods] == ["full"] and full.reps == 1
    assert [m.name for m in gfb.methods] == ["lowrank", "lowrank_paper"]
    assert [g["R"] for g in gfb.grid] == [10]
    args.full_reps, args.gfb_ranks = 0, []
    assert [p.name for p in bench._grid_experiment(args).parts] == ["accuracy"]
    args.reps, args.gfb_ranks = 0, [50]
    assert [p.name for p in bench._grid_experiment(args).parts] == ["accuracy-gfb"]
    args.gfb_ranks = []
    with pytest.raises(SystemExit, match="nothing to run"):
        bench._grid_experiment(args)


def test_lpmkl_experiment_is_declared():
    from lorak_bench import get_experiment
    from lorak_bench.experiments.lpmkl import split_indices

    exp = get_experiment("lpmkl")
    assert [p.name for p in exp.parts] == ["accuracy", "solvers"]
    tr, te = split_indices(100, seed=3)
    assert tr.size == 70 and te.size == 30 and not np.intersect1d(tr, te).size

"""The ``ssl`` experiment: registration, a tiny quick run of every part with every
column, the labeled rows (official splits, even, random and per-class draws), the split
of the sets into tuning and held-out ones, ``parts=`` / ``sets=``, and the dense LapRLS /
LapSVM math."""

import dataclasses
import json

import numpy as np
import pytest
import scipy.sparse as sp

from _bench_testing import needs_data
from lorak_bench import (
    DatasetSpec,
    LoadedData,
    _ssl,
    get_experiment,
    run_experiment,
    write_outputs,
)
from lorak_bench._spec import Task
from lorak_bench.experiments import _ssl_dense, ssl

COLUMNS = [
    "default",
    "today-default",
    "gn-nystroem-prior",
    "nystroem",
    "nystroem-linearsvc",
    "labelspreading-knn",
    "labelspreading-rbf",
    "labelspreading-rbf-b0",
    "labelpropagation-knn",
    "selftraining-svc",
    "svc-labeled",
    "poisson",
    "laplace",
    "laprls",
    "lapsvm",
    "default-true-prior",
    "default-graph-off",
    "default-other-regime",
]


def test_registered_with_every_column():
    exp = get_experiment("ssl")
    assert exp is ssl.SSL
    assert [p.name for p in exp.parts] == ["book", "other-even", "other-random", "per-class"]
    for part in exp.parts:
        assert [m.name for m in part.methods] == COLUMNS
    book = exp.part("book")
    assert [s.display for s in book.datasets] == [
        "Digit1", "USPS", "COIL2", "BCI", "g241c", "g241n", "Text"
    ]  # fmt: skip
    assert [g["l"] for g in book.grid] == [100, 10] and book.reps == 12
    assert [g["l"] for g in book.quick_grid] == [100] and book.quick_reps == 2
    for name, draw in (("other-even", "even"), ("other-random", "random")):
        part = exp.part(name)
        assert [s.display for s in part.datasets] == [s.display for s in ssl.OTHER_SETS]
        assert part.grid == ({"draw": draw, "budget": 100}, {"draw": draw, "budget": 10})
        assert part.reps == 5 and part.quick_reps == 2
    per = exp.part("per-class")
    assert [s.display for s in per.datasets] == list(ssl.MULTICLASS_SETS)
    assert [g["per_class"] for g in per.grid] == [1, 2, 5]


# ---------------------------------------------------------------- a tiny run


def _moons(n=160, seed=0):
    from sklearn.datasets import make_moons

    X, y = make_moons(n, noise=0.08, random_state=seed)
    return X, y.astype(np.int64)


def _book_like(spec, data_home):
    """Two moons with two 'official' splits of 20 labels (both classes in each)."""
    X, y = _moons()
    rng = np.random.default_rng(1)
    splits = np.stack(
        [
            np.concatenate([rng.choice(np.flatnonzero(y == k), 10, replace=False) for k in (0, 1)])
            for _ in range(2)
        ]
    )
    return LoadedData(spec=spec, X=X, y=y, splits_labeled={20: splits})


def _plain(spec, data_home):
    X, y = _moons(seed=2)
    return LoadedData(spec=spec, X=X, y=y)


def _three(spec, data_home):
    """Three blobs, 40 rows each."""
    from sklearn.datasets import make_blobs

    X, y = make_blobs(120, centers=3, cluster_std=3.0, random_state=3)
    return LoadedData(spec=spec, X=X, y=y.astype(np.int64))


def _tiny_experiment():
    quick = {"quick_paper_datasets": None, "methods": ssl.METHODS}
    parts = (
        dataclasses.replace(
            ssl.SSL.part("book"),
            datasets=(DatasetSpec("toy-book", loader=_book_like),),
            quick_grid=({"l": 20},),
            **quick,
        ),
        dataclasses.replace(
            ssl.SSL.part("other-even"),
            datasets=(DatasetSpec("toy-other", loader=_plain),),
            quick_grid=({"draw": "even", "budget": 20},),
            **quick,
        ),
        dataclasses.replace(
            ssl.SSL.part("other-random"),
            datasets=(DatasetSpec("toy-other", loader=_plain),),
            quick_grid=({"draw": "random", "budget": 10},),
            **quick,
        ),
        dataclasses.replace(
            ssl.SSL.part("per-class"),
            datasets=(DatasetSpec("toy-three", loader=_three),),
            quick_grid=(
                {"draw": "per-class", "per_class": 1},
                {"draw": "per-class", "per_class": 2},
            ),
            **quick,
        ),
    )
    return dataclasses.replace(ssl.SSL, parts=parts)


def test_quick_run_writes_every_column(tmp_path):
    result = run_experiment(_tiny_experiment(), quick=True)
    assert result.failures == []
    write_outputs(result, tmp_path)
    doc = json.loads((tmp_path / "results.json").read_text())
    for part, dataset, grid in (
        ("book", "toy-book", [{"l": 20}]),
        ("other-even", "toy-other", [{"draw": "even", "budget": 20, "l": 20}]),
        ("other-random", "toy-other", [{"draw": "random", "budget": 10, "l": 10}]),
        (
            "per-class",
            "toy-three",
            [{"draw": "per-class", "per_class": k, "l": 3 * k} for k in (1, 2)],
        ),
    ):
        rows = [
            r
            for r in doc["results"]
            if r["dataset"] == dataset
            and r["metric"] == "error_pct"
            and r["params"]["part"] == part
        ]
        for params in grid:
            got = {r["method"]: r for r in rows if r["params"] == {"part": part, **params}}
            assert sorted(got) == sorted(COLUMNS), (part, params)
            for r in got.values():
                assert r["reps"] == 2 and 0.0 <= r["mean"] <= 100.0
    # the dense columns record their choice from the grids
    for rec in result.select_records(method="laprls"):
        assert rec["metrics"]["ratio"] in _ssl_dense.RATIO_GRID
        assert rec["metrics"]["gamma_A_l"] in _ssl_dense.GAMMA_A_L_GRID
    # the plain Nyström columns take the default's landmark count
    for rec in result.select_records(method="nystroem"):
        assert rec["metrics"]["m"] >= 1
    text = ssl._ssl_summary(result)
    assert "default wins" in text and "toy-book (l=20" in text
    assert "toy-three (1/class, l=3, 2)" in text and "toy-other (l=10, 2)" in text
    for part in ("book:", "other-even:", "other-random:", "per-class:"):
        assert part in text
    assert "Win counts" in text and "unassigned" in text  # the toys are in no group
    assert (tmp_path / "ssl_errors.png").is_file() and (tmp_path / "ssl_budget.png").is_file()


def test_win_counts_split_tuning_and_held_out():
    from lorak_bench.experiments import _ssl_report

    result = run_experiment(_tiny_experiment(), quick=True, parts=["other-random"])
    # relabel the toy set as a held-out and then a tuning set: the counts follow
    for label, group in (("glass", "held-out"), ("german", "tuning")):
        for r in result.rows:
            r["dataset"] = label
        result.datasets["other-random"][0]["label"] = label
        counts = ssl.ssl_win_counts(result)
        assert {c["part"] for c in counts} == {"other-random"}
        crits = [c["criterion"] for c in counts]
        assert "within 1 point of the best peer" in crits
        assert "at most 1 point behind SVC on the labeled rows" in crits
        assert "beats self-training SVC" not in crits  # at 100 labels only
        for c in counts:
            judged = {g: n for g, (_, n) in c["counts"].items()}
            assert judged == {**dict.fromkeys(_ssl_report.GROUPS, 0), group: 1}
            if group == "tuning":
                assert c["held_out_misses"] == []


def _result_of(cells):
    """A RunResult of error rows: ``cells`` {(part, set): {column: mean error}} at 10
    labels (held-out and tuning sets are named by their labels)."""
    from lorak_bench import RunResult

    rows, datasets = [], {}
    for (part, dataset), means in cells.items():
        datasets.setdefault(part, []).append({"label": dataset, "loaded": True, "stand_in": False})
        params = {"part": part, "l": 10, **({} if part == "book" else {"budget": 10})}
        for method, mean in means.items():
            rows.append(
                {"dataset": dataset, "method": method, "params": params, "_part": part,
                 "metric": "error_pct", "mean": mean, "std": 0.0, "reps": 5}
            )  # fmt: skip
    return RunResult(experiment=ssl.SSL, config={}, environment={}, rows=rows, datasets=datasets)


def test_miss_reasons_name_the_diagnostic_that_closes_the_gap():

    peers = {"poisson": 20.0, "laplace": 25.0, "svc-labeled": 30.0}
    cells = {
        ("other-random", "glass"): {"default": 26.0, **peers, "default-true-prior": 20.5,
                                    "default-graph-off": 27.0},
        ("other-random", "wine"): {"default": 26.0, **peers, "default-true-prior": 24.0,
                                   "default-graph-off": 19.0},
        ("other-random", "iris"): {"default": 26.0, **peers, "default-true-prior": 21.0,
                                   "default-graph-off": 20.9},
        ("other-random", "dna"): {"default": 26.0, **peers, "default-true-prior": 24.0,
                                  "default-graph-off": 23.5},  # less than half the gap
        ("other-random", "german"): {"default": 21.0, **peers, "default-true-prior": 40.0,
                                     "default-graph-off": 40.0},  # within 1: no miss
        ("other-random", "usps-3000"): {"default": 30.0, **peers},  # no diagnostics
        # the diagnostics are never the best: here they beat every peer, yet the default
        # (1 point behind the best peer) is no miss
        ("other-random", "satimage-3000"): {"default": 21.0, **peers,
                                            "default-true-prior": 5.0,
                                            "default-graph-off": 5.0},
    }  # fmt: skip
    rows = ssl.ssl_miss_reasons(_result_of(cells))
    got = {r["dataset"]: r for r in rows}
    assert set(got) == {"glass", "wine", "iris", "dna", "usps-3000"}
    assert got["glass"]["reason"] == "prior" and got["wine"]["reason"] == "graph"
    assert got["iris"]["reason"] == "prior or graph" and got["dna"]["reason"] == "beyond both"
    assert got["usps-3000"]["reason"] is None
    assert got["glass"]["best"] == ("poisson", 20.0) and got["glass"]["group"] == "held-out"
    assert got["glass"]["default-true-prior"] == 20.5
    assert {r["reason"] for r in rows} == {"prior", "graph", "prior or graph", "beyond both", None}
    # the book and the even draws judge against the best column, which the diagnostics
    # never are either
    book = {("book", "Digit1"): {"default": 9.0, "poisson": 7.0, "svc-labeled": 2.0,
                                 "default-true-prior": 7.5, "default-graph-off": 12.0}}  # fmt: skip
    (row,) = ssl.ssl_miss_reasons(_result_of(book))
    assert row["best"] == ("poisson", 7.0) and row["reason"] == "prior"
    table = ssl.ssl_win_table(_result_of(cells))
    assert "default-true-prior" not in table and "default-graph-off" not in table


def test_the_regime_diagnostic_names_its_misses_and_is_never_a_peer():
    from lorak_bench.experiments import _ssl_report

    peers = {"poisson": 20.0, "svc-labeled": 30.0}
    diag = {"default-true-prior": 25.0, "default-graph-off": 26.0}
    cells = {
        ("other-random", "german"): {"default": 26.0, **peers, **diag,
                                     "default-other-regime": 20.4},
        ("other-random", "adult1a"): {"default": 26.0, **peers, **diag,
                                      "default-true-prior": 20.9,
                                      "default-other-regime": 21.0},
        ("other-random", "glass"): {"default": 26.0, **peers, **diag,
                                    "default-other-regime": 24.0},
        # none within 1 point; the regime closes 70 % of the gap, the prior 58 %
        ("other-random", "iris"): {"default": 26.0, **peers, **diag,
                                   "default-true-prior": 22.5,
                                   "default-other-regime": 21.8},
        ("other-random", "dna"): {"default": 26.0, **peers, **diag},  # regime not refitted
        ("other-random", "wine"): {"default": 21.0, **peers, **diag,
                                   "default-other-regime": 2.0},  # no miss: never the best
    }  # fmt: skip
    got = {r["dataset"]: r for r in ssl.ssl_miss_reasons(_result_of(cells))}
    assert set(got) == {"german", "adult1a", "glass", "iris", "dna"}
    assert got["iris"]["reason"] == "mostly regime or prior"
    assert got["german"]["reason"] == "regime"
    assert got["adult1a"]["reason"] == "prior or regime"
    assert got["glass"]["reason"] == "beyond all three"
    assert got["dna"]["reason"] == "beyond both" and got["dna"]["default-other-regime"] is None
    assert _ssl_report.miss_reason({"default-true-prior": True}) is None  # graph's not run
    assert "default-other-regime" not in ssl.ssl_win_table(_result_of(cells))


def test_miss_reasons_table_is_in_the_report():
    cells = {
        ("other-random", "glass"): {"default": 26.0, "poisson": 20.0,
                                    "default-true-prior": 20.5, "default-graph-off": 27.0,
                                    "default-other-regime": 23.0},
    }  # fmt: skip
    result = _result_of(cells)
    result.wall_seconds, result.failures = 0.0, []
    lines = ssl._ssl_report._reason_lines(result, ssl.REPORT, lambda head, body: (head, body))
    head, body = lines[-1]
    assert head[-1] == "reason" and body == [
        ["other-random", "max(10, 2/class)", "glass", "held-out", "26.00", "20.00 poisson",
         "20.50", "27.00", "23.00", "prior"]
    ]  # fmt: skip
    table = ssl.ssl_miss_table(result)
    assert "| glass | held-out | 26.00 | 20.00 poisson | 20.50 | 27.00 | 23.00 | prior |" in table
    assert ssl.ssl_miss_table(_result_of({("other-random", "wine"): {"default": 20.0}})) == ""


def _task(data, rep, l=20):
    return Task(data=data, params={"l": l}, rep=rep, seed=7 + rep, context={})


def test_labeled_rows_are_the_official_split_of_the_repetition():
    data = _book_like(DatasetSpec("toy"), None)
    for rep in (0, 1):
        rows = ssl.ssl_labeled(_task(data, rep))
        np.testing.assert_array_equal(rows, np.sort(data.splits_labeled[20][rep]))
    with pytest.raises(ValueError, match="2 official splits"):
        ssl.ssl_labeled(_task(data, 2))
    # a set without splits: drawn evenly over the classes from the seed
    plain = _plain(DatasetSpec("toy"), None)
    rows = ssl.ssl_labeled(_task(plain, 0))
    assert rows.size == 20 and np.bincount(plain.y[rows]).tolist() == [10, 10]


def _unbalanced(spec=None, data_home=None):
    """Seven classes of 300, 200, 120, 60, 30, 15 and 8 rows."""
    sizes = [300, 200, 120, 60, 30, 15, 8]
    y = np.repeat(np.arange(7), sizes)
    X = np.random.default_rng(0).normal(size=(y.size, 2)) + y[:, None]
    return LoadedData(spec=spec or DatasetSpec("toy7"), X=X, y=y)


def _draw(data, params, rep=0):
    task = Task(data=data, params=dict(params), rep=rep, seed=11 + rep, context={})
    return ssl.ssl_labeled(task)


def test_random_draws_hold_every_class_and_are_reproducible():
    data = _unbalanced()
    for budget, want in ((10, 14), (100, 100)):  # max(10, 2 per class) with 7 classes
        params = ssl.resolve_budget({"draw": "random", "budget": budget}, data)
        assert params["l"] == want
        for rep in range(4):
            rows = _draw(data, params, rep)
            assert rows.size == want and np.unique(rows).size == want
            assert np.all(np.diff(rows) > 0)
            assert np.unique(data.y[rows]).size == 7
            np.testing.assert_array_equal(rows, _draw(data, params, rep))  # same seed
        assert not np.array_equal(_draw(data, params, 0), _draw(data, params, 1))
        # not the even draw of the same size and seed (which labels every row of a class
        # smaller than its share: the 8 rows of class 6 at 100 labels)
        even = _draw(data, {**params, "draw": "even"}, 0)
        assert want - 7 <= even.size <= want
        assert not np.array_equal(even, _draw(data, params, 0))
    # at 100 labels the random draw follows the class sizes, the even one does not
    rnd = np.bincount(data.y[_draw(data, {"draw": "random", "l": 100})], minlength=7)
    evn = np.bincount(data.y[_draw(data, {"draw": "even", "l": 100})], minlength=7)
    assert rnd[0] > 30 and evn[0] <= 15 and evn[-1] == 8


def test_random_draw_forces_one_per_class_only_after_the_rejections():
    y = np.repeat([0, 1, 2], [500, 500, 1])
    rng = np.random.default_rng(0)
    rows = _ssl.draw_random(y, 10, rng, max_tries=0)
    assert rows.size == 10 and sorted(np.unique(y[rows])) == [0, 1, 2]
    with pytest.raises(ValueError, match="between the 3 classes"):
        _ssl.draw_random(y, 2, rng)


def test_per_class_draws_are_exact():
    data = _unbalanced()
    for k in ssl.PER_CLASS:
        params = ssl.resolve_per_class({"draw": "per-class", "per_class": k}, data)
        assert params["l"] == 7 * k
        rows = _draw(data, params)
        assert np.bincount(data.y[rows]).tolist() == [k] * 7
        np.testing.assert_array_equal(rows, _draw(data, params))
        assert not np.array_equal(rows, _draw(data, params, rep=1))
    with pytest.raises(ValueError, match="class 6 has 8 rows"):
        _ssl.draw_per_class(data.y, 9, np.random.default_rng(0))


def test_small_budget_is_ten_or_two_per_class():
    two = _plain(DatasetSpec("toy"), None)
    assert ssl.resolve_budget({"budget": 10}, two)["l"] == 10
    assert ssl.resolve_budget({"budget": 100}, two)["l"] == 100
    assert ssl.resolve_budget({"budget": 10}, _unbalanced())["l"] == 14


def test_stratified_subsample_is_fixed_and_keeps_the_proportions():
    y = _unbalanced().y  # 733 rows
    keep = _ssl.stratified_subsample(y, 300, seed=0)
    assert keep.size == 300 and np.unique(keep).size == 300
    np.testing.assert_array_equal(keep, _ssl.stratified_subsample(y, 300, seed=0))
    share = np.bincount(y[keep]) / 300
    np.testing.assert_allclose(share, np.bincount(y) / y.size, atol=1 / 300 + 1e-12)
    np.testing.assert_array_equal(_ssl.stratified_subsample(y, 5000, seed=0), np.arange(733))


@needs_data
def test_large_sets_are_cut_to_a_stratified_subset():
    spec = next(s for s in ssl.OTHER_SETS if s.display == f"usps-{ssl.SUBSAMPLE_ROWS}")
    data = spec.loader(spec, None)
    assert data.n_samples == ssl.SUBSAMPLE_ROWS and data.y.max() == 9
    assert "7291" in data.meta["subsample"] and data.X.min() >= -1.0 and data.X.max() <= 1.0
    glass = next(s for s in ssl.OTHER_SETS if s.display == "glass")
    assert glass.loader(glass, None).n_samples == 214  # small sets whole
    ijcnn1 = next(s for s in ssl.OTHER_SETS if s.display == f"ijcnn1-{ssl.SUBSAMPLE_ROWS}")
    cut = ijcnn1.loader(ijcnn1, None)
    assert cut.n_samples == ssl.SUBSAMPLE_ROWS and "49990" in cut.meta["subsample"]
    # stratified: the small class keeps its share of the rows (4853 of 49 990)
    assert abs(np.mean(cut.y == 1) - 4853 / 49990) < 1e-3


def test_every_set_is_in_exactly_one_group():
    labels = [s.display for s in (*ssl.BOOK_SETS, *ssl.OTHER_SETS)]
    assert len(set(labels)) == len(labels)
    assert not set(ssl.TUNING_SETS) & set(ssl.HELD_OUT_SETS)
    assert sorted(labels) == sorted((*ssl.TUNING_SETS, *ssl.HELD_OUT_SETS))
    assert set(ssl.MULTICLASS_SETS) <= set(labels) - set(ssl.BOOK_LABELS)
    assert ssl.set_group("german") == "tuning" and ssl.set_group("glass") == "held-out"
    assert ssl.set_group("Digit1") == "tuning" and ssl.set_group("toy") == "unassigned"
    for name in ("satimage", "usps", "mnist-test", "glass", "wine", "iris", "digits"):
        assert any(s.name == name for s in ssl.OTHER_SETS), name
    # two-class sets with one class far larger than the other, and two more balanced
    # ones, none of which chose a rule
    rows = ssl.SUBSAMPLE_ROWS
    for label in ("w1a", f"ijcnn1-{rows}", f"mushrooms-{rows}", "sonar"):
        assert ssl.set_group(label) == "held-out", label


def test_parts_and_sets_select_pieces():
    exp = _tiny_experiment()
    result = run_experiment(exp, quick=True, parts=["per-class", "other-random"])
    assert sorted(result.datasets) == ["other-random", "per-class"]
    assert result.config["parts_requested"] == ["per-class", "other-random"]
    # the grid points carry the part as in a full run (the cell cache is shared)
    assert all(r["params"]["part"] == r["_part"] for r in result.rows)
    result = run_experiment(exp, quick=True, sets=["TOY-three"])
    assert {r["dataset"] for r in result.rows} == {"toy-three"}
    assert [d["label"] for d in result.datasets["per-class"]] == ["toy-three"]
    assert result.datasets.get("book") == []
    with pytest.raises(ValueError, match="has no part 'nope'"):
        run_experiment(exp, quick=True, parts=["nope"])


def test_sets_filter_runs_a_part_set_outside_the_quick_subset():
    from lorak_bench._runner import _resolve_specs

    part = ssl.SSL.part("per-class")
    specs, _ = _resolve_specs(part, override=None, quick=True, data_home=None)
    assert [s.display for s in specs] in (["wine"], [])
    specs, _ = _resolve_specs(part, override=None, quick=True, data_home=None, sets=["glass"])
    assert [s.display for s in specs] == ["glass"]


def test_cli_refuses_unknown_parts_and_pieces_of_all(capsys):
    from lorak_bench.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["ssl", "--parts", "nope", "--no-progress"])
    assert exc.value.code == 2 and "other-random" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["all", "--sets", "glass"])
    assert exc.value.code == 2 and "--sets and --parts" in capsys.readouterr().err


# ---------------------------------------------------------------- the dense math


def _problem(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.normal(size=(n // 2, 3)), rng.normal(size=(n // 2, 3)) + 2.0])
    y = np.repeat([0, 1], n // 2)
    d2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    K = np.exp(-d2 / d2.mean())
    L = _ssl_dense.knn_laplacian(X, k=5)
    labeled = np.sort(rng.choice(n, 12, replace=False))
    Y_l = _ssl_dense.ovr_targets(y[labeled], 2)
    return K, L, labeled, Y_l


def test_laplacian_is_normalized_and_symmetric():
    K, L, *_ = _problem()
    assert sp.issparse(L)
    D = L.toarray()
    np.testing.assert_allclose(D, D.T, atol=1e-12)
    np.testing.assert_allclose(np.diag(D), 1.0)
    w = np.linalg.eigvalsh(D)
    assert w.min() > -1e-10 and w.max() < 2.0 + 1e-10


def test_laprls_without_graph_is_kernel_ridge_on_the_labeled_rows():
    from sklearn.kernel_ridge import KernelRidge

    K, L, labeled, Y_l = _problem()
    gamma_A = 1e-2
    penalty = gamma_A * labeled.size
    alpha = _ssl_dense.laprls_closed_form(K, L, labeled, Y_l, gamma_A, 0.0)
    unlabeled = np.setdiff1d(np.arange(K.shape[0]), labeled)
    np.testing.assert_allclose(alpha[unlabeled], 0.0, atol=1e-12)
    krr = KernelRidge(alpha=penalty, kernel="precomputed").fit(K[np.ix_(labeled, labeled)], Y_l)
    np.testing.assert_allclose(K @ alpha, krr.predict(K[:, labeled]), rtol=1e-8, atol=1e-10)
    # the bench's route: ρ = 0 leaves K as it is
    assert _ssl_dense.deformed_kernel(K, L, 0.0) is K or np.allclose(
        _ssl_dense.deformed_kernel(K, L, 0.0), K
    )
    beta = _ssl_dense.ridge_on_labeled(K[np.ix_(labeled, labeled)], Y_l, penalty)
    np.testing.assert_allclose(K[:, labeled] @ beta, K @ alpha, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("ratio", [1e-2, 1.0, 1e2])
def test_laprls_deformed_route_satisfies_the_normal_equations(ratio):
    K, L, labeled, Y_l = _problem()
    n, nl = K.shape[0], labeled.size
    gamma_A = 1e-2
    gamma_I = ratio * gamma_A * n**2
    Kt = _ssl_dense.deformed_kernel(K, L, ratio)
    np.testing.assert_allclose(Kt, Kt.T, atol=1e-12)
    beta = _ssl_dense.ridge_on_labeled(Kt[np.ix_(labeled, labeled)], Y_l, gamma_A * nl)
    alpha = _ssl_dense.laprls_expansion(K, L, labeled, beta, ratio)
    # (J K + γ_A l I + γ_I l/(u+l)² L K) α = J Y
    J = np.zeros(n)
    J[labeled] = 1.0
    lhs = (
        J[:, None] * (K @ alpha) + gamma_A * nl * alpha + (gamma_I * nl / n**2) * (L @ (K @ alpha))
    )
    rhs = np.zeros_like(lhs)
    rhs[labeled] = Y_l
    np.testing.assert_allclose(lhs, rhs, atol=1e-8 * np.abs(Y_l).max())
    # the same α as the n × n system solved as written; f = K α = K̃_{:,L} β
    direct = _ssl_dense.laprls_closed_form(K, L, labeled, Y_l, gamma_A, gamma_I)
    np.testing.assert_allclose(alpha, direct, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(K @ alpha, Kt[:, labeled] @ beta, rtol=1e-6, atol=1e-8)


def test_cross_validated_fits_see_only_the_labeled_codes():
    K, L, labeled, Y_l = _problem()
    codes_l = (Y_l[:, 0] > 0).astype(np.int64)
    cache = {}

    def deformed(r):
        if r not in cache:
            cache[r] = _ssl_dense.deformed_kernel(K, L, r)
        return cache[r]

    for solve in (_ssl_dense.laprls_cv, _ssl_dense.lapsvm_cv):
        F1, chosen1 = solve(deformed, labeled, codes_l, 2, seed=3)
        F2, chosen2 = solve(deformed, labeled, codes_l, 2, seed=3)
        assert F1.shape == (K.shape[0], 1) and chosen1 == chosen2
        np.testing.assert_array_equal(F1, F2)
        assert chosen1["ratio"] in _ssl_dense.RATIO_GRID
        # the labeled rows are fitted well on this easy problem
        assert np.mean(_ssl_dense.ovr_decide(F1[labeled], 2) == codes_l) >= 0.9


def test_one_vs_rest_targets_and_decisions():
    codes = np.array([0, 2, 1, 2])
    Y = _ssl_dense.ovr_targets(codes, 3)
    assert Y.shape == (4, 3) and (Y == 1).sum() == 4
    np.testing.assert_array_equal(_ssl_dense.ovr_decide(Y, 3), codes)
    Y2 = _ssl_dense.ovr_targets(np.array([0, 1, 1]), 2)
    assert Y2.shape == (3, 1)
    np.testing.assert_array_equal(_ssl_dense.ovr_decide(Y2, 2), [0, 1, 1])


@pytest.mark.parametrize("l", [6, 40])
def test_the_regime_diagnostic_refits_the_default_in_the_other_regime(l):
    """``default-other-regime`` is the default forced into the regime it did not take:
    leave-one-out at 3 labels per class (few), the few-label rules at 20 (leave-one-out)."""
    from lorak import GraphRegularizedFactor, SemiSupervisedFactorClassifier

    data = _plain(DatasetSpec("toy"), None)
    task = _task(data, 0, l=l)
    rows = ssl.ssl_labeled(task)
    yu = np.full(data.y.size, -1)
    yu[rows] = data.y[rows]
    default = SemiSupervisedFactorClassifier().fit(data.X, yu)
    assert default.few_labels_ is (l == 6)
    other = "leave_one_out" if default.few_labels_ else "few_labels"
    forced = SemiSupervisedFactorClassifier(GraphRegularizedFactor(regime=other, random_state=0))
    want = forced.fit(data.X, yu)
    assert want.few_labels_ is not default.few_labels_
    column = next(m for m in ssl.METHODS if m.name == "default-other-regime")
    mask = np.ones(data.y.size, dtype=bool)
    mask[rows] = False
    expected = 100.0 * np.mean(want.transduction_[mask] != data.y[mask])
    assert column.run(task).error_pct == pytest.approx(expected, abs=1e-9)

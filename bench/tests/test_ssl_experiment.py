"""The ``ssl`` experiment: registration, a tiny quick run with every column, the
official-split labeled rows, and the dense LapRLS / LapSVM math."""

import dataclasses
import json

import numpy as np
import pytest
import scipy.sparse as sp

from lorak_bench import DatasetSpec, LoadedData, get_experiment, run_experiment, write_outputs
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
    "poisson",
    "laplace",
    "laprls",
    "lapsvm",
]


def test_registered_with_every_column():
    exp = get_experiment("ssl")
    assert exp is ssl.SSL
    assert [p.name for p in exp.parts] == ["book", "other"]
    for part in exp.parts:
        assert [m.name for m in part.methods] == COLUMNS
    book = exp.part("book")
    assert [s.display for s in book.datasets] == [
        "Digit1", "USPS", "COIL2", "BCI", "g241c", "g241n", "Text"
    ]  # fmt: skip
    assert [g["l"] for g in book.grid] == [100, 10] and book.reps == 12
    assert [g["l"] for g in book.quick_grid] == [100] and book.quick_reps == 2


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


def _tiny_experiment():
    parts = (
        dataclasses.replace(
            ssl.SSL.part("book"),
            datasets=(DatasetSpec("toy-book", loader=_book_like),),
            methods=ssl.METHODS,
            quick_grid=({"l": 20},),
            quick_paper_datasets=None,
        ),
        dataclasses.replace(
            ssl.SSL.part("other"),
            datasets=(DatasetSpec("toy-other", loader=_plain),),
            methods=ssl.METHODS,
            grid=({"l": 20},),
            quick_paper_datasets=None,
        ),
    )
    return dataclasses.replace(ssl.SSL, parts=parts)


def test_quick_run_writes_every_column(tmp_path):
    result = run_experiment(_tiny_experiment(), quick=True)
    assert result.failures == []
    write_outputs(result, tmp_path)
    doc = json.loads((tmp_path / "results.json").read_text())
    for dataset in ("toy-book", "toy-other"):
        got = {
            r["method"]: r
            for r in doc["results"]
            if r["dataset"] == dataset and r["metric"] == "error_pct"
        }
        assert sorted(got) == sorted(COLUMNS)
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
    assert (tmp_path / "ssl_errors.png").is_file()


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

"""The ``kpca`` and ``lssvm-usps`` experiments and bench/scripts/bench_downstream.py."""

import json

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

from _bench_testing import load_benchmark_script, needs_data
from lorak_bench import get_experiment, run_experiment, write_outputs
from lorak_bench.experiments import kpca as kpca_exp
from lorak_bench.experiments import lssvm_usps
from lorak_bench.experiments._zhang2008 import kmeans_counts


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


# ---------------------------------------------------------------- kpca: the math


def test_misalignment_definition(rng):
    U = np.linalg.qr(rng.standard_normal((50, 3)))[0]
    R = np.linalg.qr(rng.standard_normal((3, 3)))[0]
    assert kpca_exp.misalignment(U, U @ R) < 1e-12  # any basis of the same span
    assert kpca_exp.misalignment(U, -U[:, ::-1]) < 1e-12
    V = np.linalg.qr(rng.standard_normal((50, 3)))[0]
    A = np.linalg.lstsq(V, U, rcond=None)[0]
    ref = np.linalg.norm(U - V @ A)
    assert kpca_exp.misalignment(U, V) == pytest.approx(ref, rel=1e-12)
    # orthonormal Ũ: ‖U − ŨŨᵀU‖² = 3 − ‖ŨᵀU‖²
    assert kpca_exp.misalignment(U, V) ** 2 == pytest.approx(3 - np.sum((V.T @ U) ** 2))
    # a zero column (an eigenvalue-0 direction) is tolerated
    assert np.isfinite(kpca_exp.misalignment(U, np.column_stack([V[:, :2], np.zeros(50)])))


@pytest.mark.parametrize("n", [20, 120])  # the dense and the Lanczos branch
def test_exact_kpca_is_dense_eigh_of_centered_kernel(rng, n):
    X = rng.standard_normal((n, 3))
    K = rbf_kernel(X, gamma=0.2)
    H = np.eye(n) - 1 / n
    lam, W = np.linalg.eigh(H @ K @ H)
    U, top = kpca_exp.exact_kpca(K.copy())
    np.testing.assert_allclose(top, lam[::-1][:4], rtol=1e-9, atol=1e-12)
    for j in range(3):
        assert abs(abs(U[:, j] @ W[:, -1 - j]) - 1) < 1e-8


def test_kpca_reference_lookup():
    ref = kpca_exp._kpca_reference("german", "kmeans", {"ratio": 0.05, "m": 50}, "misalignment")
    assert ref["mean"] == pytest.approx(0.044) and ref["std"] == pytest.approx(0.0058)
    assert ref["seconds"] == pytest.approx(0.8)
    assert kpca_exp._kpca_reference("satimage", "exact", {}, "misalignment")["mean"] == 0.0
    assert kpca_exp._kpca_reference("german", "svd", {}, "misalignment") is None
    assert kpca_exp._kpca_reference("german", "kmeans", {}, "eigengap") is None


def test_kmeans_counts_kpca():
    rows = [
        {
            "ours": {
                "kmeans": (1, 0, 0),
                "uniform": (2, 0, 0),
                "column_norm": (3, 0, 0),
                "icd": (0.5, 0, 0),
            }
        },
        {
            "ours": {
                "kmeans": (1, 0, 0),
                "uniform": (0.5, 0, 0),
                "column_norm": (3, 0, 0),
                "icd": (4, 0, 0),
            }
        },
        {"ours": {"uniform": (1, 0, 0)}},
    ]
    c = kmeans_counts(rows, "ours", ties_win_best=True)  # kpca: a tie is best
    assert c == {
        "kmeans<uniform": 1,
        "kmeans<column_norm": 2,
        "kmeans<icd": 1,
        "kmeans best": 0,
        "n": 2,
    }
    paper = [
        {
            "paper": {
                k: (v["mean"], None, None)
                for k, v in d.items()
                if k in ("kmeans_nystrom", "uniform_nystrom")
            }
        }
        for d in kpca_exp._paper_table3().values()
    ]
    assert all("kmeans_nystrom" in p["paper"] for p in paper)


# ---------------------------------------------------------------- kpca: a run


def test_kpca_quick_run_on_a_stand_in():
    exp = get_experiment("kpca")
    res = run_experiment(exp, datasets=["wine"], quick=True, reps=2)
    assert not res.failures, res.failures
    methods = {r["method"] for r in res.select(metric="misalignment")}
    assert methods == set(kpca_exp.METHOD_ORDER)
    mis = {r["method"]: r["mean"] for r in res.select(metric="misalignment")}
    assert mis["exact"] < 1e-10
    assert mis["svd"] < mis["uniform"]
    assert all(0 <= v <= np.sqrt(3) + 1e-9 for v in mis.values())
    assert res.select(method="kmeans", metric="misalignment")[0]["reps"] == 2
    text = exp.checks(res)
    assert "Table 3 side by side" in text and "kmeans < uniform" in text


# ---------------------------------------------------------------- lssvm-usps


def test_lssvm_reference_lookup():
    ref = lssvm_usps._lssvm_reference("2-5", "kmeans", {"ratio": 0.05, "m": 70}, "test_error")
    assert ref["mean"] == pytest.approx(1.91) and ref["std"] == pytest.approx(0.62)
    ref = lssvm_usps._lssvm_reference("5-6", "uniform", {"ratio": 0.1, "m": 121}, "test_error")
    assert ref["mean"] == pytest.approx(1.25) and ref["std"] == pytest.approx(0.41)
    assert lssvm_usps._lssvm_reference("1-7", "exact", {"ratio": 0.1}, "test_error")["mean"] == 0.97
    assert lssvm_usps._lssvm_reference("1-7", "icd", {"ratio": 0.05}, "test_error")["mean"] == 4.62
    assert (
        lssvm_usps._lssvm_reference("digits 1-7", "kmeans", {"ratio": 0.05}, "test_error") is None
    )


def test_lssvm_kmeans_counts():
    rows = [
        {
            "ours": {
                "kmeans": (1.0, 0, 20),
                "uniform": (2.0, 0, 20),
                "column_norm": (1.0, 0, 20),
                "icd": (3.0, 0, 1),
            }
        },
        {
            "ours": {
                "kmeans": (1.0, 0, 20),
                "uniform": (2.0, 0, 20),
                "column_norm": (3.0, 0, 20),
                "icd": (3.0, 0, 1),
            }
        },
    ]
    c = kmeans_counts(rows, "ours")  # lssvm-usps: ties are not wins
    assert c == {
        "kmeans<uniform": 2,
        "kmeans<column_norm": 1,
        "kmeans<icd": 2,
        "kmeans best": 1,
        "n": 2,
    }


def test_lssvm_quick_run_on_a_stand_in():
    exp = get_experiment("lssvm-usps")
    res = run_experiment(exp, datasets=["digits 1-7"], quick=True, reps=2)
    assert not res.failures, res.failures
    rows = res.select(metric="test_error")
    assert {r["method"] for r in rows} == set(lssvm_usps.METHOD_ORDER)
    assert {r["params"]["ratio"] for r in rows} == {0.05, 0.1}
    assert all(0 <= r["mean"] <= 50 for r in rows)
    exact = [r for r in rows if r["method"] == "exact"]
    assert exact[0]["mean"] == exact[1]["mean"] and exact[0]["reps"] == 1
    assert "Table 4 side by side" in exp.checks(res)


@pytest.mark.slow
@pytest.mark.parametrize(
    "name,dataset,plot",
    [("kpca", "wine", "table3_kpca.png"), ("lssvm-usps", "digits 3-8", "table4_lssvm.png")],
)
def test_outputs_written(tmp_path, name, dataset, plot):
    res = run_experiment(get_experiment(name), datasets=[dataset], quick=True, reps=2)
    paths = write_outputs(res, tmp_path)
    assert "side by side" in paths["report"].read_text()
    assert (tmp_path / plot).is_file()
    json.loads(paths["results"].read_text())


@pytest.mark.data
@needs_data
def test_usps_pairs_load():
    Xtr, ytr, Xte, yte = lssvm_usps.load_pair("1-7")
    assert Xtr.shape == (1005 + 645, 256) and Xte.shape == (264 + 147, 256)
    assert set(np.unique(ytr)) == {-1, 1} and int((ytr == 1).sum()) == 1005


# ---------------------------------------------------------------- bench_downstream.py


@pytest.fixture(scope="module")
def bench():
    return load_benchmark_script("bench_downstream")


@pytest.mark.slow
def test_bench_lssvm_and_kpca_small(bench, rng):
    X = rng.standard_normal((120, 6))
    y = (X[:, 0] ** 2 + X[:, 1] > 1).astype(int) + (X[:, 2] > 1)
    Xt = rng.standard_normal((40, 6))
    yt = (Xt[:, 0] ** 2 + Xt[:, 1] > 1).astype(int) + (Xt[:, 2] > 1)
    b = bench.paper_bandwidth(X)
    out = bench.bench_lssvm(X, y, Xt, yt, b, 12, 1, dense=True, label="t")
    for key in ("lorak_uniform", "lorak_kmeans", "exact_lssvm", "sklearn_kernel_ridge"):
        assert out[key]["seconds"] > 0 and out[key]["peak_bytes"] > 0
        assert 0 <= out[key]["test_error_pct"] <= 100
    assert out["speedup_vs_kernel_ridge_uniform"] > 0
    assert out["lorak_kmeans"]["floor_seconds"] > 0 and out["lorak_kmeans"]["floor_ratio"] > 0
    auto = bench.bench_lssvm(X, y, Xt, yt, b, "auto", 1, dense=True, label="t")
    for lm in ("uniform", "kmeans"):
        choice = auto[f"lorak_{lm}"]["rank_choice"]
        assert auto[f"lorak_{lm}"]["m"] == choice["m"] in [p["m"] for p in choice["path"]]
        assert auto[f"speedup_with_rank_choice_{lm}"] < auto[f"speedup_vs_kernel_ridge_{lm}"]
    kp = bench.bench_kpca(X, b, 12, 1, dense=True, label="t")
    assert kp["sklearn_kernel_pca_randomized"]["misalignment_top3_vs_dense"] < 1e-3
    assert 0 <= kp["lorak_kmeans"]["misalignment_top3_vs_dense"] <= np.sqrt(3)
    big = bench.bench_lssvm(X, y, Xt, yt, b, 12, 1, dense=False, label="t")
    assert "skipped" in big["exact_lssvm"]


def test_effective_dimension_counts_the_directions_above_the_ridge(bench, rng):
    """d_eff = Σ σ/(σ + 1/C) of the centred Gram: a factor with k orthogonal centred
    columns of squared norm s has d_eff = k s / (s + 1/C)."""
    n, k, s = 200, 5, 50.0
    Q, _ = np.linalg.qr(rng.standard_normal((n, k + 1)))
    Q = Q - Q.mean(axis=0)
    Q, _ = np.linalg.qr(Q)
    G = np.sqrt(s) * Q[:, :k] + 3.0  # a common offset: removed by the centring
    expected = k * s / (s + 1.0 / bench.C)
    assert bench.effective_dimension(G, bench.C) == pytest.approx(expected, rel=1e-9)


def test_bench_exact_lssvm_matches_kernel_ridge_without_bias(bench, rng):
    """Sanity of the baselines: the two dense methods agree on an easy problem."""
    X = rng.standard_normal((150, 3))
    y = (X[:, 0] > 0).astype(int)
    b = bench.paper_bandwidth(X)
    p1 = bench.lssvm_exact(X, y, X, b)()
    p2 = bench.kernel_ridge(X, y, X, b)()
    assert np.mean(p1 == p2) > 0.95

"""The npkl-uci experiment (Zhuang, Tsang & Hoi 2009, Table 2): its SDP baseline and one
quick run."""

import numpy as np
import pytest

from lorak.constraints import constraint_matrix, from_labels
from lorak.learn import knn_graph, normalized_laplacian


def problem(n=40, seed=0, k=5, ratio=0.7):
    """Two Gaussian blobs, their k-NN Laplacian and must-link / cannot-link pairs."""
    rng = np.random.default_rng(seed)
    h = n // 2
    X = np.vstack([rng.normal(0.0, 1.0, (h, 2)), rng.normal(3.0, 1.0, (n - h, 2))])
    y = np.repeat([0, 1], [h, n - h])
    L = normalized_laplacian(knn_graph(X, k))
    pairs, signs = from_labels(y, ratio=ratio, random_state=seed).pairs()
    return X, y, L, pairs, signs


def dense_T(pairs, signs, n):
    return constraint_matrix(pairs, signs, n).toarray()


def test_sdp_baseline_linear_is_the_top_eigenvector():
    pytest.importorskip("cvxpy")
    from lorak_bench.experiments.npkl_uci import sdp_npkl

    X, y, L, pairs, signs = problem(n=30)
    V, status = sdp_npkl(X, pairs, signs, C=0.3, loss="linear", n_neighbors=5, B=1.0)
    assert status in ("optimal", "optimal_inaccurate")
    A = 0.3 * dense_T(pairs, signs, 30) - L.toarray()
    lam, P = np.linalg.eigh(A)
    # max tr(AK) s.t. tr(K) ≤ 1, K ⪰ 0 is attained at v vᵀ, v the top eigenvector
    np.testing.assert_allclose(V @ V.T, np.outer(P[:, -1], P[:, -1]), atol=1e-3)


@pytest.mark.slow
def test_npkl_uci_experiment_runs_on_iris():
    from lorak_bench import get_experiment, run_experiment

    exp = get_experiment("npkl-uci")
    res = run_experiment(exp, datasets=["iris"], reps=1, quick=True)
    assert not [f for f in res.failures if f["part"] == "table2"]
    text = exp.checks(res)
    assert "Table 2" in text and "iris (paper)" in text
    acc = res.select(part="table2", dataset="iris", method="simplenpkl_linear", metric="accuracy")
    assert acc[0]["mean"] > 85

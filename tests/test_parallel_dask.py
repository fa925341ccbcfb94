"""Dask (on a real LocalCluster) and memmap inputs: same results as in memory."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import lorak  # noqa: E402
from _tolerance import assert_labels_agree_off_ties  # noqa: E402
from lorak import (  # noqa: E402
    CSI,
    LSSVC,
    LSSVR,
    ExactEigen,
    GeneralizedNystroem,
    IncompleteCholesky,
    KernelKMeans,
    LowRankKernelPCA,
    LowRankMKLClassifier,
    Nystroem,
    SemiSupervisedFactorClassifier,
    SimpleNPKL,
)
from lorak.metrics import factor_alignment  # noqa: E402
from lorak.parallel import is_dask_array, map_rows, row_moments  # noqa: E402

N = 2503  # not a multiple of any chunk size used below
CHUNK = 600


@pytest.fixture(scope="module")
def client():
    """Two worker processes on loopback, one thread each: a real (small) cluster."""
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            silence_logs=50,
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N, 6))
    X[:, :2] += 3.0 * rng.integers(0, 3, size=(N, 1))  # some cluster structure
    y = (np.sin(X[:, 0]) + X[:, 1] > 2.0).astype(int)
    return X, y


def _dask(a, chunk=CHUNK):
    return da.from_array(a, chunks=(chunk, *a.shape[1:]))


@pytest.mark.parametrize(
    "landmarks, chunk",
    [("uniform", CHUNK), ("kmeans", CHUNK), ("kmeans", N)],  # uneven chunks; one chunk
)
def test_nystroem_fit_transform_on_the_cluster_equals_in_memory(client, data, landmarks, chunk):
    X, _ = data
    kw = {"n_components": 40, "landmarks": landmarks, "bandwidth": "mean_pairwise"}
    ref = Nystroem(**kw, random_state=3).fit(X)
    est = Nystroem(**kw, random_state=3).fit(_dask(X, chunk))
    assert est.n_features_in_ == 6
    np.testing.assert_allclose(est.kernel_.bandwidth, ref.kernel_.bandwidth, rtol=1e-12)
    np.testing.assert_allclose(est.components_, ref.components_, rtol=0, atol=1e-10)
    if landmarks == "kmeans":
        assert est.landmark_info_["n_iter"] == ref.landmark_info_["n_iter"]
        np.testing.assert_allclose(
            est.landmark_info_["inertia"], ref.landmark_info_["inertia"], rtol=1e-9
        )
    G = est.transform(_dask(X, chunk))
    assert is_dask_array(G) and G.chunks[0] == _dask(X, chunk).chunks[0]
    np.testing.assert_allclose(G.compute(), ref.transform(X), rtol=0, atol=1e-10)


def test_median_bandwidth_and_float32(client, data):
    X, _ = data
    X32 = X.astype(np.float32)
    ref = Nystroem(n_components=20, bandwidth="median", random_state=1).fit(X32)
    est = Nystroem(n_components=20, bandwidth="median", random_state=1).fit(_dask(X32))
    assert est.kernel_.bandwidth == pytest.approx(ref.kernel_.bandwidth, rel=1e-6)
    G = est.transform(_dask(X32))
    assert G.dtype == np.float32
    np.testing.assert_allclose(G.compute(), ref.transform(X32), rtol=0, atol=1e-5)


def test_lssvm_fit_by_reductions_equals_in_memory(client, data):
    X, y = data
    f = Nystroem(n_components=30, landmarks="kmeans", random_state=0)
    ref = LSSVC(f, C=10.0).fit(X, y)
    est = LSSVC(f, C=10.0).fit(_dask(X), da.from_array(y, chunks=CHUNK))
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(est.intercept_, ref.intercept_, rtol=1e-8, atol=1e-9)
    d = est.decision_function(_dask(X))
    d_ref = ref.decision_function(X)
    np.testing.assert_allclose(d.compute(), d_ref, atol=1e-8)
    # two fits equal to 1e-8: the labels agree wherever the decision is clear of 0
    assert_labels_agree_off_ties(est.predict(_dask(X)).compute(), ref.predict(X), d_ref, 1e-8)

    t = X[:, 0] - 2 * X[:, 2]
    r1 = LSSVR(Nystroem(n_components=25, random_state=0), C=5.0).fit(X, t)
    r2 = LSSVR(Nystroem(n_components=25, random_state=0), C=5.0).fit(_dask(X), t)
    np.testing.assert_allclose(r2.coef_, r1.coef_, rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(r2.predict(_dask(X)).compute(), r1.predict(X), atol=1e-8)


def test_generalized_nystroem_fit_on_a_dask_array(client, data):
    X, y = data
    yl = np.full(N, -1)
    yl[::25] = y[::25]  # 101 labeled rows
    kw = {"n_components": 20, "landmarks": "kmeans", "random_state": 0}
    ref = GeneralizedNystroem(**kw).fit(X, yl)
    est = GeneralizedNystroem(**kw).fit(_dask(X), yl)
    np.testing.assert_allclose(est.components_, ref.components_, atol=1e-10)
    # the rank decision must not flip on the summation order (a spectral gap, not a
    # fixed threshold inside the round-off); the learned kernels E S Eᵀ agree
    assert est.n_components_ == ref.n_components_
    G, Gr = est.transform(_dask(X)).compute(), ref.transform(X)
    # (G itself is determined only up to a rotation inside near-equal eigenvalues of the
    # learned kernel, so the kernels are what is compared)
    np.testing.assert_allclose(G @ G[:300].T, Gr @ Gr[:300].T, rtol=1e-6, atol=1e-8)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_every_fitted_estimator_predicts_dask_chunkwise(client, data):
    X, y = data
    Xs, ys = X[:300], y[:300]
    yl = np.where(np.arange(300) % 5 == 0, ys, -1)
    fitted = [
        (IncompleteCholesky(n_components=10).fit(Xs), ["transform"]),
        (CSI(n_components=8, random_state=0).fit(Xs, ys), ["transform"]),
        (
            LowRankKernelPCA(Nystroem(n_components=15, random_state=0), n_components=3).fit(Xs),
            ["transform"],
        ),
        (
            KernelKMeans(
                3, Nystroem(n_components=15, random_state=0), n_init=1, random_state=0
            ).fit(Xs),
            ["predict", "transform"],
        ),
        (
            SemiSupervisedFactorClassifier(
                GeneralizedNystroem(n_components=10, random_state=0)
            ).fit(Xs, yl),
            ["predict", "decision_function"],
        ),
        (
            LowRankMKLClassifier(n_kernels=2, rank=5, max_iter=3, random_state=0).fit(Xs, ys),
            ["predict", "decision_function"],
        ),
    ]
    Xd = _dask(X, 700)
    for est, methods in fitted:
        for name in methods:
            out = getattr(est, name)(Xd)
            assert is_dask_array(out), (type(est).__name__, name)
            np.testing.assert_allclose(
                out.compute(),
                getattr(est, name)(X),
                rtol=1e-7,
                atol=1e-9,
                err_msg=f"{type(est).__name__}.{name}",
            )


def test_predict_proba_through_available_if(client, data):
    from sklearn.linear_model import LogisticRegression

    X, y = data
    yl = np.where(np.arange(N) % 10 == 0, y, -1)
    est = SemiSupervisedFactorClassifier(
        GeneralizedNystroem(n_components=10, random_state=0), LogisticRegression()
    ).fit(X[:500], yl[:500])
    P = est.predict_proba(_dask(X))
    assert is_dask_array(P) and P.shape == (N, 2)
    np.testing.assert_allclose(P.compute(), est.predict_proba(X), atol=1e-10)


@pytest.mark.parametrize(
    "est",
    [
        IncompleteCholesky(n_components=5),
        CSI(n_components=5),
        SimpleNPKL(),
        ExactEigen(n_components=5),
        KernelKMeans(n_clusters=2),
        LowRankKernelPCA(),
        LowRankMKLClassifier(),
    ],
    ids=lambda e: type(e).__name__,
)
def test_methods_that_need_all_rows_refuse_a_dask_array(data, est):
    X, y = data
    Xd = _dask(X)
    with pytest.raises(TypeError, match=r"cannot take a dask array.*X\.compute\(\)"):
        est.fit(Xd, y)
    if hasattr(est, "fit_transform"):
        with pytest.raises(TypeError, match="cannot take a dask array"):
            est.fit_transform(Xd, y)


def test_landmark_strategies_over_all_pairs_are_refused(data):
    X, _ = data
    with pytest.raises(ValueError, match=r"column_norm.*not available for a dask array"):
        Nystroem(n_components=5, landmarks="column_norm").fit(_dask(X))
    with pytest.raises(ValueError, match="2-D"):
        Nystroem(n_components=5).fit(X).transform(da.zeros(10, chunks=5))
    with pytest.raises(ValueError, match=f"y has {N - 1} rows but X has {N}"):
        LSSVC(C=1.0).fit(_dask(X), np.zeros(N - 1))
    est = Nystroem(n_components=5).fit(X)
    with pytest.raises(ValueError, match="X has 6 features, but Nystroem is expecting 3"):
        Nystroem(n_components=5).fit(_dask(X[:, :3])).transform(X)  # fitted on 3
    with pytest.raises(ValueError, match="features"):
        est.transform(_dask(X[:, :3]))


def test_memmap_transform_is_chunked_and_not_loaded_whole(tmp_path):
    rng = np.random.default_rng(0)
    n, d = 60_000, 40
    path = tmp_path / "X.f64"
    mm = np.memmap(path, dtype=np.float64, mode="w+", shape=(n, d))
    for s in range(0, n, 20_000):  # written chunk-wise
        mm[s : s + 20_000] = rng.standard_normal((min(20_000, n - s), d))
    mm.flush()
    del mm
    X = np.memmap(path, dtype=np.float64, mode="r", shape=(n, d))
    y = (X[:2000, 0] > 0).astype(int)
    clf = LSSVC(Nystroem(n_components=20, random_state=0), C=1.0).fit(X[:2000], y)
    ref = clf.decision_function(np.array(X[:5000]))
    with lorak.config_context(memory_budget=2**20):
        tracemalloc.start()
        out = clf.decision_function(X)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert out.shape == (n,)
    np.testing.assert_allclose(out[:5000], ref, atol=1e-10)
    # the array is 19 MB; one chunk (1 MB) plus the n-vector output is a few MB
    assert peak < X.nbytes / 6, (peak, X.nbytes)

    # map_rows writes into a memmap output too, and reductions read in chunks
    f = Nystroem(n_components=8, random_state=0).fit(X[:1000])
    out = np.memmap(tmp_path / "G.f64", dtype=np.float64, mode="w+", shape=(n, 8))
    map_rows(f.transform, X, out=out)
    np.testing.assert_allclose(out[-100:], f.transform(np.array(X[-100:])), atol=1e-12)
    cnt, mean, S = row_moments(X)
    Xa = np.asarray(X)
    np.testing.assert_allclose(mean, Xa.mean(axis=0), atol=1e-12)
    C = Xa - Xa.mean(axis=0)
    np.testing.assert_allclose(S, C.T @ C, rtol=1e-10)
    assert cnt == n


def test_factor_alignment_by_reductions(client, data):
    X, _ = data
    G1 = Nystroem(n_components=10, random_state=0).fit_transform(X)
    G2 = Nystroem(n_components=7, gamma=0.01, random_state=1).fit_transform(X)
    for centered in (False, True):
        ref = factor_alignment(G1, G2, centered=centered)
        got = factor_alignment(_dask(G1), _dask(G2, 900), centered=centered)
        assert got == pytest.approx(ref, rel=1e-10)

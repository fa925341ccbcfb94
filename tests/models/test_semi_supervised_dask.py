"""The semi-supervised pipeline on a dask array and a memmap: the same landmarks, the
same graph weight and the same predictions as in memory; lazy outputs with the input's
row chunks; clear errors for what a lazy fit cannot take."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_moons
from sklearn.linear_model import LogisticRegression

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

from _tolerance import assert_labels_agree_off_ties  # noqa: E402
from lorak import (  # noqa: E402
    GraphRegularizedFactor,
    Nystroem,
    SemiSupervisedFactorClassifier,
    SemiSupervisedFactorRegressor,
)
from lorak.models import _semi_supervised as semi_module  # noqa: E402
from lorak.parallel import is_dask_array  # noqa: E402

N = 307  # a prime: no chunk size below divides it


def _lift(X2, d, rng):
    """2-D points put in d dimensions by a random rotation, plus a little noise."""
    Q, _ = np.linalg.qr(rng.standard_normal((d, 2)))
    return X2 @ Q.T + 0.02 * rng.standard_normal((X2.shape[0], d))


@pytest.fixture(scope="module")
def moons():
    rng = np.random.default_rng(0)
    X2, y = make_moons(N, noise=0.06, random_state=0)
    X = _lift(X2, 5, rng)
    labeled = rng.choice(N, 24, replace=False)  # spread over the chunks, any order
    ys = np.full(N, -1)
    ys[labeled] = y[labeled]
    # a response that follows the arcs: NaN = unlabeled
    t = np.where(y == 1, 1.0, -1.0) + 0.3 * X2[:, 0]
    yr = np.full(N, np.nan)
    yr[labeled] = t[labeled]
    return X, y, ys, t, yr


@pytest.fixture
def threads():
    with dask.config.set(scheduler="threads"):
        yield


def _dask(X, chunk):
    return da.from_array(X, chunks=(chunk, X.shape[1]))


def _same_factor(est, ref):
    """Same landmarks, anchors, bandwidths, graph weight and penalty."""
    f, r = est.factor_, ref.factor_
    np.testing.assert_allclose(f.factor_.components_, r.factor_.components_, rtol=0, atol=1e-10)
    np.testing.assert_allclose(f.anchors_, r.anchors_, rtol=0, atol=1e-10)
    assert f.factor_.kernel_.bandwidth == pytest.approx(r.factor_.kernel_.bandwidth, rel=1e-10)
    assert f.gamma_ == r.gamma_ and f.penalty_ == r.penalty_
    assert f.laplacian_weight_ == pytest.approx(r.laplacian_weight_, rel=1e-8)
    np.testing.assert_allclose(f.components_, r.components_, rtol=0, atol=1e-6)
    assert est.scale_ == pytest.approx(ref.scale_, rel=1e-6)


def _same_labels(got, ref, X):
    """The labels of ``ref`` (a fitted classifier) on X, but for rows whose decision
    value is within round-off of the boundary (a change in the last bits may flip
    those)."""
    want = ref.predict(X)
    differ = np.flatnonzero(np.asarray(got) != want)
    if differ.size:
        dec = np.abs(np.asarray(ref.decision_function(X[differ]))).reshape(differ.size, -1)
        assert np.all(dec.min(axis=1) < 1e-6), differ


@pytest.mark.parametrize("chunk", [97, N])  # chunks that do not divide n; one chunk
def test_classifier_on_dask_predicts_as_in_memory(moons, threads, chunk):
    X, y, ys, _, _ = moons
    ref = SemiSupervisedFactorClassifier().fit(X, ys)
    Xd = _dask(X, chunk)
    est = SemiSupervisedFactorClassifier().fit(Xd, ys)
    _same_factor(est, ref)
    assert ref.factor_.gamma_ > 0  # the graph is in use: the comparison covers it
    # the heads' cross-validated error counts: LinearSVC's iterative solver may move a
    # row across its boundary on features equal to round-off
    assert est.head_cv_errors_.keys() == ref.head_cv_errors_.keys()
    for k, v in ref.head_cv_errors_.items():
        assert abs(est.head_cv_errors_[k] - v) <= 1, (k, est.head_cv_errors_, v)
    assert type(est.classifier_) is type(ref.classifier_)
    c = ref.classifier_.coef_  # a ridge at a small penalty: relative to its size
    np.testing.assert_allclose(est.classifier_.coef_, c, rtol=0, atol=1e-5 * np.abs(c).max())
    # the training rows' predictions are predict(X), lazily: nothing n-long is stored
    assert not hasattr(est, "transduction_")
    np.testing.assert_array_equal(est.labeled_indices_, ref.labeled_indices_)
    pred = est.predict(Xd)
    assert is_dask_array(pred) and pred.chunks[0] == Xd.chunks[0]
    _same_labels(pred.compute(), ref, X)
    dec = est.decision_function(Xd)
    assert is_dask_array(dec) and dec.chunks[0] == Xd.chunks[0]
    np.testing.assert_allclose(dec.compute(), ref.decision_function(X), rtol=0, atol=1e-6)
    Q = est.factor_.transform(Xd)
    assert is_dask_array(Q) and Q.chunks[0] == Xd.chunks[0]
    np.testing.assert_allclose(Q.compute(), ref.factor_.transform(X), rtol=0, atol=1e-6)
    assert np.mean(ref.transduction_ != y) < 0.1  # the arcs are found


def test_predict_proba_is_lazy_with_the_input_chunks(moons, threads):
    X, _, ys, _, _ = moons
    kw = {"classifier": LogisticRegression(C=10.0)}
    ref = SemiSupervisedFactorClassifier(**kw).fit(X, ys)
    Xd = _dask(X, 128)
    est = SemiSupervisedFactorClassifier(**kw).fit(Xd, ys)
    proba = est.predict_proba(Xd)
    assert is_dask_array(proba) and proba.chunks == (Xd.chunks[0], (2,))
    np.testing.assert_allclose(proba.compute(), ref.predict_proba(X), rtol=0, atol=1e-6)


def test_regressor_on_dask_predicts_as_in_memory(moons, threads):
    X, _, _, t, yr = moons
    ref = SemiSupervisedFactorRegressor().fit(X, yr)
    Xd = _dask(X, 61)
    # y may be a dask array too, in chunks of its own
    est = SemiSupervisedFactorRegressor().fit(Xd, da.from_array(yr, chunks=200))
    _same_factor(est, ref)
    assert not hasattr(est, "transduction_")
    pred = est.predict(Xd)
    assert is_dask_array(pred) and pred.chunks[0] == Xd.chunks[0]
    np.testing.assert_allclose(pred.compute(), ref.transduction_, rtol=0, atol=1e-6)
    unl = np.isnan(yr)
    assert np.mean((ref.transduction_[unl] - t[unl]) ** 2) < 0.5 * np.var(t)


def test_chunks_of_one_row(threads):
    rng = np.random.default_rng(1)
    X2, y = make_moons(40, noise=0.05, random_state=1)
    X = _lift(X2, 3, rng)
    ys = np.full(40, -1)
    ys[[39, 0, 17, 5, 22, 31]] = y[[39, 0, 17, 5, 22, 31]]
    ref = SemiSupervisedFactorClassifier().fit(X, ys)
    Xd = _dask(X, 1)
    est = SemiSupervisedFactorClassifier().fit(Xd, ys)
    _same_factor(est, ref)
    pred = est.predict(Xd)
    assert pred.numblocks == (40,)
    _same_labels(pred.compute(), ref, X)


def test_labels_in_one_chunk_and_unsorted_chunks(moons, threads):
    """All labeled rows in the last chunk, and chunks of unequal sizes."""
    X, y, _, _, _ = moons
    ys = np.full(N, -1)
    ys[-30:] = y[-30:]
    ref = SemiSupervisedFactorClassifier().fit(X, ys)
    Xd = da.from_array(X, chunks=((150, 3, 100, 54), (X.shape[1],)))
    est = SemiSupervisedFactorClassifier().fit(Xd, ys)
    _same_factor(est, ref)
    _same_labels(est.predict(Xd).compute(), ref, X)


def test_float32_on_dask(moons, threads):
    X, _, ys, _, _ = moons
    X32 = X.astype(np.float32)
    ref = SemiSupervisedFactorClassifier().fit(X32, ys)
    est = SemiSupervisedFactorClassifier().fit(_dask(X32, 100), ys)
    assert est.factor_.components_.dtype == np.float32
    dec = est.decision_function(_dask(X32, 100)).compute()
    np.testing.assert_allclose(dec, ref.decision_function(X32), rtol=0, atol=1e-3)


def test_memmap_equals_in_memory(moons, tmp_path):
    X, _, ys, _, yr = moons
    mm = np.lib.format.open_memmap(tmp_path / "X.npy", mode="w+", dtype=X.dtype, shape=X.shape)
    mm[:] = X
    mm.flush()
    mm = np.load(tmp_path / "X.npy", mmap_mode="r")
    ref = SemiSupervisedFactorClassifier().fit(X, ys)
    est = SemiSupervisedFactorClassifier().fit(mm, ys)
    _same_factor(est, ref)
    assert isinstance(est.transduction_, np.ndarray) and est.transduction_.shape == (N,)
    _same_labels(est.transduction_, ref, X)
    _same_labels(est.predict(mm), ref, X)
    r_ref = SemiSupervisedFactorRegressor().fit(X, yr)
    r_est = SemiSupervisedFactorRegressor().fit(mm, yr)
    np.testing.assert_allclose(r_est.transduction_, r_ref.transduction_, rtol=0, atol=1e-6)


def test_a_factor_without_its_own_norm_takes_one_more_pass(moons, threads):
    """A factor other than the graph one: the feature scale by a pass over the chunks."""
    X, _, ys, _, _ = moons
    f = Nystroem(n_components=30, landmarks="kmeans", random_state=0)
    ref = SemiSupervisedFactorClassifier(f).fit(X, ys)
    est = SemiSupervisedFactorClassifier(f).fit(_dask(X, 90), ys)
    assert est.scale_ == pytest.approx(ref.scale_, rel=1e-10)
    np.testing.assert_allclose(
        est.decision_function(_dask(X, 90)).compute(), ref.decision_function(X), atol=1e-8
    )


def test_on_a_local_cluster_with_two_workers(moons):
    distributed = pytest.importorskip("distributed")
    X, _, ys, _, yr = moons
    ref = SemiSupervisedFactorClassifier().fit(X, ys)
    r_ref = SemiSupervisedFactorRegressor().fit(X, yr)
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=False,
            dashboard_address=None,
            silence_logs=50,
        ) as cluster,
        distributed.Client(cluster),
    ):
        Xd = _dask(X, 120)
        est = SemiSupervisedFactorClassifier().fit(Xd, ys)
        pred = est.predict(Xd).compute()
        reg = SemiSupervisedFactorRegressor().fit(Xd, yr)
        r_pred = reg.predict(Xd).compute()
    _same_factor(est, ref)
    _same_labels(pred, ref, X)
    np.testing.assert_allclose(r_pred, r_ref.transduction_, rtol=0, atol=1e-6)


# --------------------------------------------------------------------------- errors


def test_a_label_array_of_another_length_is_refused(moons):
    X, _, ys, _, yr = moons
    with pytest.raises(ValueError, match=rf"y has {N - 1} entries, but X has {N} rows"):
        SemiSupervisedFactorClassifier().fit(_dask(X, 100), ys[:-1])
    with pytest.raises(ValueError, match=rf"y has {N + 1} entries, but X has {N} rows"):
        SemiSupervisedFactorRegressor().fit(_dask(X, 100), np.append(yr, 1.0))
    with pytest.raises(ValueError, match=rf"y has {N - 1} entries, but X has {N} rows"):
        GraphRegularizedFactor().fit(_dask(X, 100), ys[:-1])


def test_unknown_chunk_sizes_are_refused_in_fit(moons):
    X, _, ys, _, _ = moons
    Xd = _dask(X, 100)
    Xu = Xd[Xd[:, 0] > -np.inf]  # a boolean mask: the chunk sizes become NaN
    assert np.isnan(Xu.shape[0])
    for est in (SemiSupervisedFactorClassifier(), GraphRegularizedFactor()):
        with pytest.raises(ValueError, match=r"unknown chunk sizes.*compute_chunk_sizes"):
            est.fit(Xu, ys)


def test_a_labeled_row_with_nan_is_named(moons):
    X, _, ys, _, yr = moons
    Xn = X.copy()
    row = int(np.flatnonzero(ys >= 0)[3])
    Xn[row, 2] = np.nan
    for est, yy in (
        (SemiSupervisedFactorClassifier(), ys),
        (SemiSupervisedFactorRegressor(), yr),
        (GraphRegularizedFactor(), ys),
    ):
        with pytest.raises(ValueError, match=rf"X: row {row} contains NaN or infinity"):
            est.fit(_dask(Xn, 100), yy)


def test_an_unlabeled_row_with_nan_fails_in_the_passes(moons, threads):
    X, _, ys, _, _ = moons
    Xn = X.copy()
    row = int(np.flatnonzero(ys < 0)[5])
    Xn[row, 0] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        SemiSupervisedFactorClassifier().fit(_dask(Xn, 100), ys)


@pytest.mark.parametrize("graph", ["knn", "matrix"])
def test_graphs_over_all_rows_are_refused_on_dask(moons, graph):
    import scipy.sparse as sp

    X, _, ys, _, _ = moons
    g = sp.identity(N, format="csr") if graph == "matrix" else graph
    with pytest.raises(TypeError, match=r"needs all rows in memory.*graph='anchor'"):
        GraphRegularizedFactor(graph=g).fit(_dask(X, 100), ys)


def test_row_methods_take_unknown_chunk_sizes(moons, threads):
    """Fit needs n (refused above); the row methods do not: they map chunk by chunk."""
    X, _, ys, _, _ = moons
    est = SemiSupervisedFactorClassifier().fit(X, ys)
    Xd = _dask(X, 100)
    Xu = Xd[Xd[:, 0] > -np.inf]
    pred = est.predict(Xu)
    assert np.isnan(pred.shape[0])
    # 100-row chunks against the fit's pass over all rows: decisions equal to round-off,
    # so the labels agree wherever the decision is clear of 0
    d = est.decision_function(X)
    assert_labels_agree_off_ties(pred.compute(), est.transduction_, d, 1e-9 * np.abs(d).max())


def test_graph_factor_second_pass_and_lle_weights_on_dask(moons, threads):
    """power=2 (a second pass, LG row by row) and local anchor embedding on dask."""
    X, _, _, _, _ = moons
    kw = {"gamma": 1.0, "power": 2, "weights": "lle", "n_anchors": 40, "random_state": 0}
    ref = GraphRegularizedFactor(**kw).fit(X)
    Xd = _dask(X, 83)
    est = GraphRegularizedFactor(**kw).fit(Xd)
    assert est.laplacian_weight_ == pytest.approx(ref.laplacian_weight_, rel=1e-8)
    np.testing.assert_allclose(est.components_, ref.components_, rtol=0, atol=1e-8)
    assert est.mean_sq_norm_ == pytest.approx(ref.mean_sq_norm_, rel=1e-8)
    Q = ref.transform(X)
    assert ref.mean_sq_norm_ == pytest.approx(np.mean(np.sum(Q * Q, axis=1)), rel=1e-8)
    np.testing.assert_allclose(est.transform(Xd).compute(), Q, rtol=0, atol=1e-8)


# ---------------------------------------------------------------- the large-n paths


def _graph_factor():
    """A graph factor whose landmark kernel is well enough conditioned for the
    kernel-row Grams (‖N‖₂² ≈ 10⁴)."""
    from lorak.kernels import Gaussian

    nys = Nystroem(
        kernel=Gaussian(bandwidth=0.3), landmarks="kmeans", n_components=50, random_state=0
    )
    return GraphRegularizedFactor(nys, random_state=0)


def test_large_n_paths_agree_on_dask_and_in_memory(moons, threads, monkeypatch):
    """Above the thresholds the kernel-row Grams, the bandwidth sample and Lloyd's
    sample are used (lowered here to this n): the same draws on dask as in memory."""
    import lorak.landmarks._kmeans as km
    import lorak.learn._graph_entry as gf

    monkeypatch.setattr(gf, "KERNEL_ROWS_MIN_SAMPLES", 10)
    monkeypatch.setattr(gf, "BANDWIDTH_SAMPLE", 150)
    monkeypatch.setattr(km, "LLOYD_MIN_ROWS", 200)
    monkeypatch.setattr(km, "LLOYD_ROWS_PER_CENTER", 1)
    X, y, ys, _, _ = moons
    ref = SemiSupervisedFactorClassifier(_graph_factor()).fit(X, ys)
    assert ref.factor_.factor_.landmark_info_["lloyd_rows"].size == 200
    assert gf._kernel_rows_map(ref.factor_.factor_, X.shape[0]) is not None
    est = SemiSupervisedFactorClassifier(_graph_factor()).fit(_dask(X, 53), ys)
    _same_factor(est, ref)
    _same_labels(est.predict(_dask(X, 53)).compute(), ref, X)
    un = ys == -1
    assert np.mean(ref.transduction_[un] != y[un]) < 0.1


def test_kernel_row_grams_give_the_factor_row_deformation(moons, monkeypatch):
    """The kernel-row path (N applied after the sum) and the factor-row path give the
    same γ and, to the round-off N amplifies, the same R."""
    import lorak.learn._graph_entry as gf

    X, _, ys, _, _ = moons
    ref = _graph_factor().fit(X, ys)
    monkeypatch.setattr(gf, "KERNEL_ROWS_MIN_SAMPLES", 0)
    assert gf._kernel_rows_map(ref.factor_, X.shape[0]) is not None
    got = _graph_factor().fit(X, ys)
    assert (got.gamma_, got.penalty_) == (ref.gamma_, ref.penalty_)
    np.testing.assert_allclose(got.components_, ref.components_, rtol=0, atol=1e-7)
    monkeypatch.setattr(gf, "KERNEL_ROWS_MAX_AMPLIFICATION", 1.0)
    assert gf._kernel_rows_map(ref.factor_, X.shape[0]) is None  # too ill-conditioned


def test_in_memory_fit_forms_no_n_by_m_rows(moons, monkeypatch):
    """The default factor reports its rows' mean squared norm: the fit transforms the
    labeled rows, and the unlabeled ones only in blocks, for their mean row (the
    measured class prior of two classes); the predictions go through the kernel rows
    times one m × c matrix (``transform_product``), equal to the head on the scaled
    factor rows."""
    X, _, ys, _, yr = moons
    seen = []
    orig = GraphRegularizedFactor.transform

    def spy(self, Xb):
        seen.append(Xb.shape[0])
        return orig(self, Xb)

    monkeypatch.setattr(GraphRegularizedFactor, "transform", spy)
    monkeypatch.setattr(semi_module, "_MEAN_BLOCK", 50)
    clf = SemiSupervisedFactorClassifier().fit(X, ys)
    l = np.count_nonzero(ys != -1)
    assert seen[0] == l and max(seen[1:]) <= 50 and sum(seen[1:]) == ys.size - l
    assert clf.prior_estimate_ is not None
    monkeypatch.setattr(GraphRegularizedFactor, "transform", orig)
    Q = clf.factor_.transform(X) * clf.scale_
    d = clf.classifier_.decision_function(Q)
    np.testing.assert_allclose(clf.decision_function(X), d, rtol=1e-9, atol=1e-9)
    # two summation orders (kernel rows times one m × c matrix, the factor's rows times
    # the head): the labels agree wherever the decision is clear of a tie
    tol = 1e-9 * (1 + np.abs(d).max())
    assert_labels_agree_off_ties(clf.predict(X), clf.classes_[clf.classifier_.predict(Q)], d, tol)
    assert_labels_agree_off_ties(clf.transduction_, clf.predict(X), d, tol)
    reg = SemiSupervisedFactorRegressor().fit(X, yr)
    Qr = reg.factor_.transform(X) * reg.scale_
    np.testing.assert_allclose(reg.predict(X), reg.regressor_.predict(Qr), rtol=1e-9, atol=1e-9)


def test_transform_product_is_transform_times_M(moons, threads):
    X, _, ys, _, _ = moons
    rng = np.random.default_rng(5)
    for gamma in (0.0, 3.0):
        f = GraphRegularizedFactor(gamma=gamma, random_state=0).fit(X)
        M = rng.standard_normal((f.n_components_, 3))
        want = f.transform(X) @ M
        np.testing.assert_allclose(f.transform_product(X, M), want, rtol=1e-9, atol=1e-11)
        lazy = f.transform_product(_dask(X, 50), M)
        assert is_dask_array(lazy)
        np.testing.assert_allclose(lazy.compute(), want, rtol=1e-9, atol=1e-11)
        nys = f.factor_
        Mn = rng.standard_normal((nys.n_components_, 2))
        # float32 rows: the dtype transform gives; N M is formed in float64, so the
        # result is as close to the float64 product as float32 rows are: both errors
        # are float32 round-off, which of the two is smaller depends on the BLAS
        # kernels (Haswell's: 3.2e-4 against 2.9e-4), so within a factor of 2
        want = nys.transform(X) @ Mn
        got32 = nys.transform_product(X.astype(np.float32), Mn)
        ref32 = nys.transform(X.astype(np.float32)) @ Mn.astype(np.float32)
        assert got32.dtype == nys.transform(X[:2].astype(np.float32)).dtype
        assert np.abs(got32 - want).max() <= 2 * max(np.abs(ref32 - want).max(), 1e-5)
    with pytest.raises(ValueError, match="rows"):
        f.factor_.transform_product(X, np.ones((f.factor_.n_components_ + 1, 2)))


def test_gamma_grid_keeps_the_graph_weight_per_row_above_its_rows():
    from lorak.estimators import gamma_grid
    from lorak.estimators._graph_factor import GAMMA_GRID_ROWS
    from lorak.learn import GRAPH_GAMMA_GRID

    assert gamma_grid(1000) == tuple(GRAPH_GAMMA_GRID)
    assert gamma_grid(GAMMA_GRID_ROWS) == tuple(GRAPH_GAMMA_GRID)
    big = gamma_grid(10 * GAMMA_GRID_ROWS)
    np.testing.assert_allclose(big, np.asarray(GRAPH_GAMMA_GRID) / 10, rtol=1e-15)
    assert big[0] == 0.0  # the plain factor stays a candidate


def test_gamma_auto_chooses_from_the_grid_of_its_n(moons, monkeypatch):
    import lorak.estimators._graph_factor as gf

    X, _, ys, _, _ = moons
    monkeypatch.setattr(gf, "GAMMA_GRID_ROWS", 30)
    f = GraphRegularizedFactor(random_state=0).fit(X, ys)
    assert f.gamma_ in gf.gamma_grid(X.shape[0])

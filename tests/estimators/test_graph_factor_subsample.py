"""``GraphRegularizedFactor(subsample=…)``: above that many rows the anchor graph's
statistics come from one random sample of the rows, the same draw in memory, on a
memmap and on dask; at or below it nothing changes; the estimates are close to the
full pass; bad values get clear errors."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_moons

from lorak import GraphRegularizedFactor, SemiSupervisedFactorClassifier
from lorak.learn._graph_factor import AnchorGraph, anchor_bandwidth, anchor_laplacian_gram

N = 4000


@pytest.fixture(scope="module")
def moons():
    rng = np.random.default_rng(0)
    X2, y = make_moons(N, noise=0.08, random_state=0)
    Q, _ = np.linalg.qr(rng.standard_normal((6, 2)))
    X = X2 @ Q.T + 0.03 * rng.standard_normal((N, 6))
    ys = np.full(N, -1)
    lab = rng.choice(N, 60, replace=False)
    ys[lab] = y[lab]
    return X, y, ys


def _fit(X, ys, **kw):
    return GraphRegularizedFactor(random_state=0, **kw).fit(X, ys)


def test_at_or_below_subsample_rows_nothing_changes(moons):
    assert GraphRegularizedFactor().subsample == 50_000
    X, _, ys = moons
    ref = _fit(X, ys, subsample=None)
    for s in (N, 10 * N):
        got = _fit(X, ys, subsample=s)
        np.testing.assert_array_equal(got.components_, ref.components_)
        np.testing.assert_array_equal(got.anchors_, ref.anchors_)
        assert got.gamma_ == ref.gamma_ and got.penalty_ == ref.penalty_
        assert got.graph_energy_ratio_ == ref.graph_energy_ratio_


def test_above_subsample_the_statistics_come_from_the_sample(moons):
    """The anchors, the default factor's landmarks and the Grams: those of the sampled
    rows (the Grams scaled by n/s), against a fit on those rows alone."""
    X, _, ys = moons
    s = 1500
    got = _fit(X, ys, subsample=s, gamma=1.0)
    assert got.anchors_.shape[0] == 1000  # "auto": 2/3 of the rows learned from
    assert got.factor_.n_components_ <= 500  # the default factor's m: a third of them
    idx = np.sort(np.random.default_rng([_seed(0), 4]).choice(N, s, replace=False))
    S = X[idx]
    # the anchors and the bandwidth on S; the Grams of S scaled to n rows
    graph = AnchorGraph(got.anchors_, 5, anchor_bandwidth(S, got.anchors_, 5))
    GtG, H, _ = anchor_laplacian_gram(S, got.factor_.transform, graph)
    want_gamma = 1.0 * np.trace(GtG) / np.trace(H)
    assert got.laplacian_weight_ == pytest.approx(want_gamma, rel=1e-9)
    # ... and the Gram GᵀG, from which the features' scale is read, scaled to n rows
    R = got.components_
    np.testing.assert_allclose(got.mean_sq_norm_, np.sum(R * (GtG @ R)) / s, rtol=1e-9)


def _seed(random_state):
    """The seed GraphRegularizedFactor draws from its random_state (first draw)."""
    return int(np.random.default_rng(random_state).integers(2**31 - 1))


def test_sampled_grams_estimate_the_full_pass(moons):
    """GᵀG/n and GᵀLG/n from 2,000 of 4,000 rows against the full pass: the factor and
    the anchors fixed, only the rows averaged over differ."""
    X, _, _ = moons
    full = _fit(X, None, subsample=None, gamma=1.0)
    f = full.factor_
    graph = AnchorGraph(full.anchors_, 5, anchor_bandwidth(X, full.anchors_, 5))
    GtG, H, _ = anchor_laplacian_gram(X, f.transform, graph)
    rng = np.random.default_rng(1)
    idx = np.sort(rng.choice(N, N // 2, replace=False))
    GtG_s, H_s, _ = anchor_laplacian_gram(X[idx], f.transform, graph)
    rel = np.linalg.norm(2 * GtG_s - GtG) / np.linalg.norm(GtG)
    assert rel < 0.05
    rel_h = np.linalg.norm(2 * H_s - H) / np.linalg.norm(H)
    assert rel_h < 0.15


def test_the_sampled_fit_predicts_as_well(moons):
    X, y, ys = moons
    unl = ys == -1
    errs = {}
    for s in (None, 2000):
        m = SemiSupervisedFactorClassifier(GraphRegularizedFactor(subsample=s, random_state=0))
        errs[s] = np.mean(m.fit(X, ys).predict(X)[unl] != y[unl])
    assert errs[None] < 0.05
    assert errs[2000] <= errs[None] + 0.02


def test_the_same_draw_in_memory_on_a_memmap_and_on_dask(moons, tmp_path):
    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    X, _, ys = moons
    ref = _fit(X, ys, subsample=1500)
    path = tmp_path / "X.npy"
    np.save(path, X)
    mm = np.load(path, mmap_mode="r")
    with dask.config.set(scheduler="threads"):
        for Xb in (mm, da.from_array(X, chunks=(613, X.shape[1]))):
            got = _fit(Xb, ys, subsample=1500)
            np.testing.assert_allclose(got.anchors_, ref.anchors_, rtol=0, atol=1e-10)
            np.testing.assert_allclose(got.components_, ref.components_, rtol=0, atol=1e-8)
            assert got.gamma_ == ref.gamma_ and got.penalty_ == ref.penalty_


@pytest.mark.parametrize("sparse", [False, True])
def test_the_sampled_fit_is_the_fit_on_the_sample(moons, sparse):
    """Anchors, landmarks, kernel width and the relative graph weight: those of a fit
    on the sampled rows alone (dense and sparse rows)."""
    X, _, _ = moons
    if sparse:
        X = sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))
    got = _fit(X, None, subsample=1500, gamma=1.0)
    idx = np.sort(np.random.default_rng([_seed(0), 4]).choice(N, 1500, replace=False))
    ref = _fit(X[idx], None, subsample=None, gamma=1.0)
    np.testing.assert_array_equal(got.anchors_, ref.anchors_)
    want = ref.factor_.components_
    have = got.factor_.components_
    np.testing.assert_array_equal(
        have.toarray() if sp.issparse(have) else have, want.toarray() if sp.issparse(want) else want
    )
    # γ's scale tr(GᵀG)/tr(GᵀLG) is a ratio of the two sums: n/s cancels
    assert got.laplacian_weight_ == pytest.approx(ref.laplacian_weight_, rel=1e-9)


def test_a_user_factor_is_fitted_on_every_row(moons):
    from lorak import Nystroem

    X, _, ys = moons
    got = _fit(X, ys, subsample=1500, factor=Nystroem(n_components=50, random_state=0))
    ref = Nystroem(n_components=50, random_state=0).fit(X)
    np.testing.assert_array_equal(got.factor_.components_, ref.components_)


@pytest.mark.parametrize("bad", [0, 1, -5, 2.5, "all", True])
def test_a_bad_subsample_is_refused_by_name(moons, bad):
    X, _, ys = moons
    with pytest.raises(ValueError, match="subsample must be None or an integer"):
        _fit(X, ys, subsample=bad)


def test_a_subsample_below_the_anchors_is_refused(moons):
    X, _, ys = moons
    with pytest.raises(ValueError, match="subsample=100 is below n_anchors=300"):
        _fit(X, ys, subsample=100, n_anchors=300)


def test_a_bad_row_in_the_sample_of_a_dask_array_is_named(moons):
    da = pytest.importorskip("dask.array")
    X, _, ys = moons
    idx = np.sort(np.random.default_rng([_seed(0), 4]).choice(N, 1500, replace=False))
    Xb = X.copy()
    Xb[idx[7], 2] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity"):
        _fit(da.from_array(Xb, chunks=(500, 6)), None, subsample=1500, gamma=1.0)

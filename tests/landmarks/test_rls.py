"""Ridge-leverage-score landmarks (``landmarks="rls"``, lorak.landmarks._rls)."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from sklearn.linear_model import RidgeClassifier
from sklearn.pipeline import make_pipeline

import lorak
from _naive import ridge_leverage_scores_dense
from lorak.kernels import Gaussian, Polynomial
from lorak.landmarks import (
    DEFAULT_RANK_FRACTION,
    LANDMARK_STRATEGIES,
    ridge_leverage_scores,
    rls_landmarks,
    select_landmarks,
)


@pytest.fixture
def blobs():
    rng = np.random.default_rng(0)
    # a dense cloud and a small far cluster: unequal leverage
    X = np.vstack([rng.normal(size=(500, 4)), rng.normal(loc=5.0, scale=0.3, size=(40, 4))])
    return X, Gaussian(bandwidth="mean_to_centroid").resolve(X)


def test_registered():
    assert "rls" in LANDMARK_STRATEGIES


def test_scores_within_a_constant_factor_of_the_exact_ones(blobs):
    X, k = blobs
    scores, info = ridge_leverage_scores(
        X, 40, kernel=k, rng=np.random.default_rng(1), sample_size=120
    )
    exact = ridge_leverage_scores_dense(k, X, info["lam"])
    ratio = scores / exact
    # Musco & Musco (Lemma 6): with a (1 ± ε) spectral sample the estimates lie in
    # [ℓ/(1+ε), ℓ/(1−ε)]; the recursion's samples are small, so allow a factor of 4
    assert info["levels"] > 1
    assert np.quantile(ratio, 0.02) > 1 / 4 and np.quantile(ratio, 0.98) < 4
    # and they rank the rows alike
    assert np.corrcoef(np.log(scores), np.log(exact))[0, 1] > 0.8


def test_single_level_is_exact(blobs):
    X, k = blobs
    X = X[::5]  # 108 rows ≤ sample_size: the sample is every row
    scores, info = ridge_leverage_scores(
        X, 20, kernel=k, rng=np.random.default_rng(0), sample_size=200
    )
    assert info["levels"] == 1
    np.testing.assert_allclose(
        scores, np.minimum(ridge_leverage_scores_dense(k, X, info["lam"]), 1), rtol=1e-6, atol=1e-9
    )


def test_fixed_lambda_and_effective_dimension(blobs):
    X, k = blobs
    lm = rls_landmarks(X, 30, rng=np.random.default_rng(0), kernel=k, lam=0.5, sample_size=150)
    assert lm.info["lam"] == 0.5
    d_exact = ridge_leverage_scores_dense(k, X, 0.5).sum()
    assert d_exact / 3 < lm.info["effective_dimension"] < 3 * d_exact


def test_deterministic_distinct_rows(blobs):
    X, k = blobs
    a = select_landmarks("rls", X, 25, rng=np.random.default_rng(7), kernel=k)
    b = select_landmarks("rls", X, 25, rng=np.random.default_rng(7), kernel=k)
    c = select_landmarks("rls", X, 25, rng=np.random.default_rng(8), kernel=k)
    np.testing.assert_array_equal(a.indices, b.indices)
    assert not np.array_equal(a.indices, c.indices)
    assert len(np.unique(a.indices)) == 25
    np.testing.assert_array_equal(a.points, X[a.indices])
    assert a.weights is None


def test_memory_budget_does_not_change_the_draw(blobs):
    X, k = blobs
    a = rls_landmarks(X, 20, rng=np.random.default_rng(3), kernel=k)
    b = rls_landmarks(X, 20, rng=np.random.default_rng(3), kernel=k, budget=2**16)
    np.testing.assert_array_equal(a.indices, b.indices)
    np.testing.assert_allclose(a.info["leverage_scores"], b.info["leverage_scores"], rtol=1e-9)


def test_nystroem_in_a_pipeline():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5))
    y = (np.sum(X[:, :2] ** 2, axis=1) > 2).astype(int)
    pipe = make_pipeline(
        lorak.Nystroem(n_components=60, landmarks="rls", random_state=0), RidgeClassifier()
    )
    assert pipe.fit(X, y).score(X, y) > 0.9
    ny = pipe[0]
    assert ny.component_indices_.shape == (60,)
    assert "leverage_scores" in ny.landmark_info_


def test_float32_kept_and_close_to_float64(blobs):
    X, _ = blobs
    ny64 = lorak.Nystroem(n_components=30, landmarks="rls", random_state=0).fit(X)
    ny32 = lorak.Nystroem(n_components=30, landmarks="rls", random_state=0).fit(
        X.astype(np.float32)
    )
    assert ny32.transform(X.astype(np.float32)).dtype == np.float32
    s64 = ny64.landmark_info_["leverage_scores"]
    s32 = ny32.landmark_info_["leverage_scores"]
    # scores are computed in float64 either way; only the kernel's inputs were rounded
    np.testing.assert_allclose(s32, s64, rtol=1e-3, atol=1e-6)


def test_sparse_and_other_kernels():
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = rng.random((300, 20)) * (rng.random((300, 20)) < 0.2)
    ny_d = lorak.Nystroem(n_components=20, landmarks="rls", random_state=0).fit(X)
    ny_s = lorak.Nystroem(n_components=20, landmarks="rls", random_state=0).fit(sp.csr_matrix(X))
    np.testing.assert_array_equal(ny_d.component_indices_, ny_s.component_indices_)
    k = Polynomial(degree=2, gamma=0.1, coef0=1.0)
    lm = rls_landmarks(X, 15, rng=np.random.default_rng(0), kernel=k)
    assert lm.indices.shape == (15,)


def test_the_rls_strategy_is_rls_landmarks_at_the_default_rank_fraction(blobs):
    X, k = blobs
    by_name = select_landmarks("rls", X, 30, rng=np.random.default_rng(3), kernel=k)
    direct = rls_landmarks(
        X, 30, rng=np.random.default_rng(3), kernel=k, rank_fraction=DEFAULT_RANK_FRACTION
    )
    np.testing.assert_array_equal(by_name.indices, direct.indices)
    assert by_name.info["lam"] == direct.info["lam"]
    other = rls_landmarks(X, 30, rng=np.random.default_rng(3), kernel=k, rank_fraction=0.5)
    assert other.info["lam"] != direct.info["lam"]


def test_partial_for_options(blobs):
    X, _ = blobs
    strat = functools.partial(rls_landmarks, rank_fraction=0.2, sample_size=80)
    ny = lorak.Nystroem(n_components=20, landmarks=strat, random_state=0).fit(X)
    assert ny.n_components_ == 20


@pytest.mark.parametrize(
    "kw, msg",
    [
        ({"lam": -1.0}, "lam must be a positive number"),
        ({"rank_fraction": 1.5}, "rank_fraction must be in"),
        ({"sample_size": 1}, "sample_size must be an integer"),
    ],
)
def test_bad_options(blobs, kw, msg):
    X, k = blobs
    with pytest.raises(ValueError, match=msg):
        rls_landmarks(X, 10, rng=np.random.default_rng(0), kernel=k, **kw)


def test_needs_a_kernel(blobs):
    X, _ = blobs
    with pytest.raises(ValueError, match="need the kernel"):
        rls_landmarks(X, 10, rng=np.random.default_rng(0), kernel=None)


def test_dask_array_gives_the_same_landmarks():
    da = pytest.importorskip("dask.array")
    X = np.random.default_rng(0).normal(size=(1500, 5))
    a = lorak.Nystroem(n_components=30, landmarks="rls", random_state=0).fit(X)
    b = lorak.Nystroem(n_components=30, landmarks="rls", random_state=0).fit(
        da.from_array(X, chunks=400)
    )
    np.testing.assert_array_equal(a.component_indices_, b.component_indices_)

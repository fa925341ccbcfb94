"""The GeneralizedNystroem estimator: responses in any units, and the prior option."""

import numpy as np
import pytest
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.datasets import make_sparse_uncorrelated

import lorak
from lorak import GeneralizedNystroem, Nystroem
from lorak.kernels import Gaussian
from lorak.persist import PersistenceError


@pytest.mark.parametrize("lam", ["auto", 0.1])
@pytest.mark.parametrize("scale", [1e-13, 1e-150])
def test_responses_in_small_units_give_the_same_kernel(lam, scale):
    # y ~ 1e-13 or y·1e-150 used to be refused as "constant" (an absolute threshold)
    X, y = make_sparse_uncorrelated(120, n_features=6, random_state=0)
    yu = np.full(y.size, np.nan)
    yu[:40] = y[:40]
    kw = dict(n_components=15, lam=lam, random_state=0)
    ref = GeneralizedNystroem(**kw).fit(X, yu)
    got = GeneralizedNystroem(**kw).fit(X, yu * scale)
    assert got.lam_ == ref.lam_ and got.target_type_ == "regression"
    Q, R = got.transform(X), ref.transform(X)
    K = R @ R.T
    np.testing.assert_allclose(Q @ Q.T, K, atol=1e-10 * np.abs(K).max())


# ----------------------------------------------------------------- prior=transformer


class RotatedFactor(TransformerMixin, BaseEstimator):
    """A prior factor whose rows are rotated by a random orthogonal matrix: Φ(x) Qᵀ."""

    def __init__(self, factor=None, seed=0):
        self.factor = factor
        self.seed = seed

    def fit(self, X, y=None):
        self.factor_ = clone(self.factor).fit(X, y)
        r = self.factor_.transform(X[:1]).shape[1]
        A = np.random.default_rng(self.seed).standard_normal((r, r))
        self.rotation_ = np.linalg.qr(A)[0]
        return self

    def transform(self, X):
        return self.factor_.transform(X) @ self.rotation_


class RecordingFactor(TransformerMixin, BaseEstimator):
    """Nyström that records the y it was fitted with."""

    def __init__(self, n_components=10):
        self.n_components = n_components

    def fit(self, X, y=None):
        self.y_seen_ = None if y is None else np.array(y, copy=True)
        self.nys_ = Nystroem(n_components=self.n_components, random_state=0).fit(X)
        return self

    def transform(self, X):
        return self.nys_.transform(X)


def _two_blobs(seed=0, n=60, labels=8):
    rng = np.random.default_rng(seed)
    X = np.r_[rng.normal(0, 1, (n, 3)), rng.normal(2.5, 1, (n, 3))]
    y = np.full(2 * n, -1)
    y[:labels], y[n : n + labels] = 0, 1
    return X, y


def _kernel_of(est, X):
    Q = est.transform(X)
    return Q @ Q.T


@pytest.fixture(scope="module")
def blobs():
    X, y = _two_blobs()
    idx = np.random.default_rng(1).choice(X.shape[0], 15, replace=False)
    return X, y, Gaussian(bandwidth=4.0), idx


def test_nystroem_prior_at_infinite_lambda_is_the_nystroem_kernel(blobs):
    X, y, kern, idx = blobs
    G = Nystroem(kernel=kern, n_components=15, landmarks=idx).fit(X).transform(X)
    prior = Nystroem(kernel=kern, n_components=15, landmarks=idx)
    gn = GeneralizedNystroem(prior=prior, lam=np.inf).fit(X, y)
    K = G @ G.T
    np.testing.assert_allclose(_kernel_of(gn, X), K, atol=1e-10 * np.abs(K).max())
    # the paper's prior on the same landmarks gives the same kernel at λ = ∞
    plain = GeneralizedNystroem(kernel=kern, n_components=15, landmarks=idx, lam=np.inf)
    np.testing.assert_allclose(_kernel_of(plain.fit(X, y), X), K, atol=1e-10 * np.abs(K).max())
    assert gn.n_landmarks_ == gn.prior_.n_components_ and gn.components_ is None
    np.testing.assert_allclose(gn.S0_, gn.beta_ * np.eye(gn.n_landmarks_))
    # λ by cross-validation keeps λ = ∞, the prior kernel itself, among the candidates
    gn = GeneralizedNystroem(prior=prior, random_state=0).fit(X, y)
    assert gn.lam_grid_[-1] == np.inf and gn.cv_errors_.shape == gn.lam_grid_.shape
    assert gn.transform(X[:5]).shape == (5, gn.n_components_)


@pytest.mark.parametrize(
    "kw",
    [
        dict(lam=0.1, beta="heuristic"),
        dict(lam=1e-3, beta="optimize", tol=1e-6),
        dict(random_state=0),  # λ by cross-validation
        dict(criterion="paper", tol=1e-6),
    ],
)
def test_a_rotated_prior_learns_the_same_kernel(blobs, kw):
    X, y, kern, idx = blobs
    prior = Nystroem(kernel=kern, n_components=15, landmarks=idx)
    a = GeneralizedNystroem(prior=prior, **kw).fit(X, y)
    b = GeneralizedNystroem(prior=RotatedFactor(prior, seed=3), **kw).fit(X, y)
    assert a.lam_ == b.lam_
    K = _kernel_of(a, X)
    np.testing.assert_allclose(_kernel_of(b, X), K, atol=1e-5 * np.abs(K).max())


def test_rotated_prior_with_must_link_and_responses(blobs):
    X, y, kern, idx = blobs
    prior = Nystroem(kernel=kern, n_components=15, landmarks=idx)
    groups = np.where(y >= 0, y, -1)
    r = X[:, 0] + 0.1 * X[:, 1]
    yr = np.where(y >= 0, r, np.nan)
    for fit_kw, kw in ((dict(must_link=groups), dict(lam=0.1, tol=1e-6)), ({}, dict(lam=0.1))):
        target = None if fit_kw else yr
        a = GeneralizedNystroem(prior=prior, **kw).fit(X, target, **fit_kw)
        b = GeneralizedNystroem(prior=RotatedFactor(prior), **kw).fit(X, target, **fit_kw)
        K = _kernel_of(a, X)
        np.testing.assert_allclose(_kernel_of(b, X), K, atol=1e-5 * np.abs(K).max())


def test_the_prior_is_fitted_on_all_rows_with_class_codes(blobs):
    X, y, _, _ = blobs
    labels = np.where(y == 0, "a", np.where(y == 1, "b", "-1")).astype(object)
    labels[y == -1] = -1
    gn = GeneralizedNystroem(prior=RecordingFactor(), lam=0.1).fit(X, labels)
    seen = gn.prior_.y_seen_
    assert seen.dtype.kind == "i" and seen.shape == (X.shape[0],)
    np.testing.assert_array_equal(seen, np.where(y == -1, -1, y))
    assert list(gn.classes_) == ["a", "b"]
    yr = np.where(y >= 0, X[:, 0], np.nan)
    gn = GeneralizedNystroem(prior=RecordingFactor(), lam=0.1).fit(X, yr)
    np.testing.assert_array_equal(np.isnan(gn.prior_.y_seen_), y == -1)
    with pytest.raises(TypeError, match="prior must be None or a transformer"):
        GeneralizedNystroem(prior="nystroem").fit(X, y)


def test_graph_regularized_prior(blobs):
    X, y, kern, idx = blobs
    from lorak import GraphRegularizedFactor

    prior = GraphRegularizedFactor(
        Nystroem(kernel=kern, n_components=15, landmarks=idx), gamma=1.0, random_state=0
    )
    gn = GeneralizedNystroem(prior=prior, lam=np.inf).fit(X, y)
    Phi = clone(prior).fit(X, y).transform(X)
    K = Phi @ Phi.T
    np.testing.assert_allclose(_kernel_of(gn, X), K, atol=1e-9 * np.abs(K).max())
    gn = GeneralizedNystroem(prior=prior, random_state=0).fit(X, y)
    assert gn.lam_grid_[-1] == np.inf


def test_a_prior_round_trips_or_is_refused_clearly(blobs, tmp_path):
    X, y, kern, idx = blobs
    gn = GeneralizedNystroem(prior=Nystroem(kernel=kern, n_components=15, landmarks=idx), lam=0.1)
    gn.fit(X, y)
    lorak.save(gn, tmp_path / "gn.lorak")
    back = lorak.load(tmp_path / "gn.lorak")
    np.testing.assert_allclose(back.transform(X), gn.transform(X), rtol=0, atol=1e-12)
    odd = GeneralizedNystroem(prior=RotatedFactor(Nystroem(n_components=10)), lam=0.1).fit(X, y)
    with pytest.raises(PersistenceError, match="RotatedFactor are not in lorak's allowlist"):
        lorak.save(odd, tmp_path / "odd.lorak")
    assert not (tmp_path / "odd.lorak").exists()

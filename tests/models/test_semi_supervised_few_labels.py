"""The semi-supervised default with few labels (a class with fewer than
MIN_LABELS_PER_CLASS labeled rows) and with many (the rank chosen with γ)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_moons
from sklearn.linear_model import LogisticRegression

from _tolerance import assert_labels_agree_off_ties
from conftest import readonly
from lorak import GraphRegularizedFactor, Nystroem, SemiSupervisedFactorClassifier
from lorak.learn import (
    FEW_LABELS_GAMMA,
    FEW_LABELS_PENALTY,
    FEW_LABELS_RANK_FRACTION,
    GRAPH_PENALTY_GRID,
)
from lorak.learn._graph_factor import principal_map, rank_candidates
from lorak.models import SelfTrainedRidge


def _lift(X2, d, rng, noise=0.02):
    Q, _ = np.linalg.qr(rng.standard_normal((d, 2)))
    return X2 @ Q.T + noise * rng.standard_normal((X2.shape[0], d))


@pytest.fixture(scope="module")
def moons():
    rng = np.random.default_rng(0)
    X2, y = make_moons(400, noise=0.06, random_state=0)
    X = _lift(X2, 6, rng)
    lab = np.r_[
        rng.choice(np.flatnonzero(y == 0), 3, False), rng.choice(np.flatnonzero(y == 1), 3, False)
    ]
    ys = np.full(y.size, -1)
    ys[lab] = y[lab]
    return X, y, ys, lab


@pytest.fixture(scope="module")
def gaussians():
    """Two overlapping Gaussians in 40 dimensions: clusters, but no manifold."""
    rng = np.random.default_rng(1)
    y = np.repeat([0, 1], 300)
    X = rng.standard_normal((600, 40))
    X[:, 0] += np.where(y == 1, 2.5, -2.5)
    return X, y


def test_few_labels_use_the_graph_at_full_strength_and_the_self_trained_head(moons):
    X, y, ys, lab = moons
    clf = SemiSupervisedFactorClassifier().fit(X, ys)
    f = clf.factor_
    assert clf.few_labels_ and isinstance(clf.classifier_, SelfTrainedRidge)
    assert f.gamma_rule_ == "few_labels"
    assert f.graph_energy_ratio_ < 0.5
    assert f.gamma_ == FEW_LABELS_GAMMA
    assert f.penalty_ == FEW_LABELS_PENALTY
    assert clf.head_cv_errors_ is None
    mask = np.ones(y.size, bool)
    mask[lab] = False
    # six labels, two arcs: the prior is measured from the rows (three per arc make
    # noisy class means: 0.43 here against the truth 0.5), and read under it
    assert abs(clf.classifier_.class_prior_[0] - 0.5) < 0.1
    assert np.mean(clf.transduction_[mask] == y[mask]) > 0.88
    told = SemiSupervisedFactorClassifier(class_prior="uniform").fit(X, ys)
    assert np.mean(told.transduction_[mask] == y[mask]) > 0.95  # the prior told
    np.testing.assert_array_equal(clf.predict(X), clf.transduction_)
    d = clf.decision_function(X)
    np.testing.assert_array_equal((d > 0).astype(int), clf.transduction_)


def test_few_labels_without_a_graph_that_informs(gaussians):
    X, y = gaussians
    ys = np.full(y.size, -1)
    ys[[0, 1, 2, 300, 301]] = y[[0, 1, 2, 300, 301]]
    clf = SemiSupervisedFactorClassifier().fit(X, ys)
    f = clf.factor_
    assert f.graph_energy_ratio_ > 0.5
    assert f.gamma_ == 0.0
    m = f.factor_.n_components_
    assert f.rank_ == max(2, int(np.ceil(m * FEW_LABELS_RANK_FRACTION))) < m
    assert f.transform(X[:3]).shape == (3, f.rank_)
    # the self-trained head follows the two clusters (the cluster assumption)
    assert np.mean(clf.transduction_ == y) > 0.9
    # n_components=None keeps every direction
    full = SemiSupervisedFactorClassifier(GraphRegularizedFactor(n_components=None, random_state=0))
    assert full.fit(X, ys).factor_.rank_ == m


def test_class_prior_options(moons):
    X, _, ys, _ = moons
    got = {}
    for prior in ("auto", "uniform", "labeled", [0.3, 0.7], np.array([1.0, 1.0])):
        clf = SemiSupervisedFactorClassifier(class_prior=prior).fit(X, ys)
        got[str(prior)] = clf.classifier_.class_prior_
    # "auto" measures it (the moons are even; three labels per arc make it noisy)
    np.testing.assert_allclose(got["auto"], [0.5, 0.5], atol=0.1)
    np.testing.assert_allclose(got["uniform"], [0.5, 0.5])
    np.testing.assert_allclose(got["[0.3, 0.7]"], [0.3, 0.7])
    np.testing.assert_allclose(got["[1. 1.]"], [0.5, 0.5])
    clf = SemiSupervisedFactorClassifier(class_prior=[0.3, 0.7]).fit(X, ys)
    assert abs(np.mean(clf.transduction_[ys == -1] == 1) - 0.7) < 0.02


@pytest.mark.parametrize(
    "prior", ["balanced", [0.5], [0.5, -0.1], [np.nan, 1.0], [0.0, 0.0], "x", [[0.5, 0.5]]]
)
def test_a_bad_class_prior_is_named(moons, prior):
    X, _, ys, _ = moons
    with pytest.raises(ValueError, match="class_prior"):
        SemiSupervisedFactorClassifier(class_prior=prior).fit(X, ys)


@pytest.mark.parametrize("mass", ["balanced", None, 1])
def test_a_bad_class_mass_is_named(moons, mass):
    X, _, ys, _ = moons
    with pytest.raises((TypeError, ValueError), match="class_mass"):
        SemiSupervisedFactorClassifier(class_mass=mass).fit(X, ys)
    with pytest.raises((TypeError, ValueError), match="class_mass"):
        SelfTrainedRidge(class_mass=mass).fit(X[:6], [0, 1, 2, 0, 1, 2])


def test_class_masses_follow_clusters_of_unequal_sizes():
    # three clusters, 4:1:1, two labels each: the counts say nothing of the sizes, so
    # the prior is uniform; read exactly, a third of the large cluster goes to the
    # small ones; read as class masses, far less of it
    rng = np.random.default_rng(3)
    centres = np.array([[-4.0, 0.0], [4.0, 0.0], [0.0, 5.0]])
    y = np.repeat([0, 1, 2], [400, 100, 100])
    X = centres[y] + rng.standard_normal((600, 2))
    ys = np.full(600, -1)
    lab = [0, 1, 400, 401, 500, 501]
    ys[lab] = y[lab]
    errs = {}
    for mass in ("exact", "normalized", "auto"):
        clf = SemiSupervisedFactorClassifier(class_mass=mass).fit(X, ys)
        assert clf.few_labels_
        assert clf.classifier_.class_mass_ == ("normalized" if mass == "auto" else mass)
        np.testing.assert_allclose(clf.classifier_.class_prior_, np.full(3, 1 / 3))
        errs[mass] = np.mean(clf.transduction_[ys == -1] != y[ys == -1])
    assert errs["exact"] > 0.25
    assert errs["normalized"] < errs["exact"] - 0.1
    assert errs["auto"] == errs["normalized"]
    # a prior you give is read exactly
    clf = SemiSupervisedFactorClassifier(class_prior=[4, 1, 1]).fit(X, ys)
    assert clf.classifier_.class_mass_ == "exact"


def test_a_given_classifier_keeps_its_own_head(moons):
    X, _, ys, _ = moons
    clf = SemiSupervisedFactorClassifier(classifier=LogisticRegression()).fit(X, ys)
    assert not clf.few_labels_ and isinstance(clf.classifier_, LogisticRegression)


def test_few_labels_with_a_plain_factor_and_three_classes():
    rng = np.random.default_rng(2)
    centres = 5.0 * rng.standard_normal((3, 4))
    y = np.repeat([0, 1, 2], 80)
    X = centres[y] + rng.standard_normal((240, 4))
    ys = np.full(240, -1)
    ys[[0, 1, 80, 81, 160, 161]] = y[[0, 1, 80, 81, 160, 161]]
    f = Nystroem(n_components=40, random_state=0)
    clf = SemiSupervisedFactorClassifier(f).fit(readonly(X), readonly(ys))
    assert clf.few_labels_
    assert clf.classifier_.coef_.shape == (3, 40)
    assert np.mean(clf.transduction_ == y) > 0.95
    # the fit reads the factor's rows, predict the kernel rows times one m × c matrix:
    # two summation orders, so the labels agree wherever the decision is clear of a tie
    d = clf.decision_function(X)
    tol = 1e-9 * (1 + np.abs(d).max())
    assert_labels_agree_off_ties(clf.predict(X), clf.transduction_, d, tol)


def test_many_labels_choose_a_rank_with_gamma(gaussians):
    X, y = gaussians
    rng = np.random.default_rng(3)
    lab = np.r_[rng.choice(300, 40, False), 300 + rng.choice(300, 40, False)]
    ys = np.full(y.size, -1)
    ys[lab] = y[lab]
    clf = SemiSupervisedFactorClassifier().fit(X, ys)
    f = clf.factor_
    m = f.factor_.n_components_
    assert f.gamma_rule_ == "leave_one_out"
    assert f.rank_scores_.shape == (len(rank_candidates(m, 2)), len(GRAPH_PENALTY_GRID))
    assert f.rank_ < m  # the clusters live in a few principal directions
    assert f.n_components_ == f.rank_ == f.components_.shape[1]
    assert f.transform(X[:5]).shape == (5, f.rank_)
    mask = ys == -1
    assert np.mean(clf.transduction_[mask] == y[mask]) > 0.9


def test_a_fixed_rank_keeps_the_leading_directions_of_the_deformed_kernel(moons):
    X, _, _, _ = moons
    full = GraphRegularizedFactor(gamma=10.0, random_state=0).fit(X)
    Q = full.transform(X)
    K = Q @ Q.T
    lam, U = np.linalg.eigh(K)
    r = 7
    top = (U[:, -r:] * lam[-r:]) @ U[:, -r:].T
    cut = GraphRegularizedFactor(gamma=10.0, n_components=r, random_state=0).fit(X)
    Qr = cut.transform(X)
    assert Qr.shape == (X.shape[0], r) and cut.rank_ == r
    np.testing.assert_allclose(Qr @ Qr.T, top, atol=1e-8 * np.abs(K).max())
    np.testing.assert_allclose(cut.mean_sq_norm_, np.mean(np.sum(Qr * Qr, 1)), rtol=1e-9)
    np.testing.assert_allclose(
        cut.transform_product(X, np.eye(r)), Qr, atol=1e-10 * np.abs(Qr).max()
    )
    # n_components at least m is the full factor
    m = full.components_.shape[0]
    same = GraphRegularizedFactor(gamma=10.0, n_components=m + 5, random_state=0).fit(X)
    np.testing.assert_allclose(same.transform(X), Q, rtol=1e-12, atol=1e-14)


def test_principal_map_at_gamma_zero_is_kernel_pca_of_the_factor():
    rng = np.random.default_rng(4)
    G = rng.standard_normal((50, 6))
    from lorak.learn._graph_factor import deformation

    defo = deformation(G.T @ G, np.eye(6), n_rows=50)
    pm = principal_map(defo, 0.0, 3, 50)
    F = G @ pm.matrix
    lam, U = np.linalg.eigh(G @ G.T)
    np.testing.assert_allclose(F @ F.T, (U[:, -3:] * lam[-3:]) @ U[:, -3:].T, atol=1e-9)


@pytest.mark.parametrize("r", [0, -1, 2.5, "all", True])
def test_a_bad_n_components_is_named(moons, r):
    X, _, ys, _ = moons
    with pytest.raises(ValueError, match="n_components"):
        GraphRegularizedFactor(n_components=r).fit(X, ys)


# ------------------------------------------------------------------ one decision


class _OtherDecision(GraphRegularizedFactor):
    """A graph factor whose recorded few-label decision is the opposite of the count's:
    the model must follow the factor, not decide again."""

    def fit(self, X, y=None):
        super().fit(X, y)
        self.few_labels_ = not self.few_labels_
        return self


def test_the_head_follows_the_factor_few_label_decision(moons, gaussians):
    X, _, ys, _ = moons  # 3 labeled rows per class: few
    clf = SemiSupervisedFactorClassifier().fit(X, ys)
    assert clf.few_labels_ is clf.factor_.few_labels_ is True
    other = SemiSupervisedFactorClassifier(_OtherDecision(random_state=0)).fit(X, ys)
    assert other.factor_.few_labels_ is False and other.few_labels_ is False
    assert not isinstance(other.classifier_, SelfTrainedRidge)
    Xg, yg = gaussians  # every row labeled: not few, unless the factor says so
    many = SemiSupervisedFactorClassifier(_OtherDecision(random_state=0)).fit(Xg, yg)
    assert many.factor_.few_labels_ is True and many.few_labels_ is True
    assert isinstance(many.classifier_, SelfTrainedRidge)


def test_the_decision_is_taken_without_a_graph_factor_decision(moons):
    """A plain factor decides nothing, a graph factor reading the labels as responses
    neither: the model takes the decision on its labels (lorak.learn.few_labels)."""
    X, _, ys, _ = moons
    plain = SemiSupervisedFactorClassifier(Nystroem(n_components=30, random_state=0))
    plain.fit(X, ys)
    assert not hasattr(plain.factor_, "few_labels_")
    assert plain.few_labels_ is True and isinstance(plain.classifier_, SelfTrainedRidge)
    resp = SemiSupervisedFactorClassifier(GraphRegularizedFactor(target="regression"))
    resp.fit(X, ys)
    assert resp.factor_.few_labels_ is None and resp.factor_.target_type_ == "regression"
    assert resp.few_labels_ is True and isinstance(resp.classifier_, SelfTrainedRidge)


@pytest.mark.parametrize("regime", ["few_labels", "leave_one_out"])
def test_the_head_follows_a_regime_forced_on_the_factor(moons, gaussians, regime):
    """``GraphRegularizedFactor(regime=...)`` forces both the factor's choice of γ and
    the model's head, at 3 labeled rows per class and with every row labeled."""
    few = regime == "few_labels"
    for X, ys in ((moons[0], moons[2]), gaussians):
        factor = GraphRegularizedFactor(regime=regime, random_state=0)
        clf = SemiSupervisedFactorClassifier(factor).fit(X, ys)
        assert clf.factor_.few_labels_ is few and clf.few_labels_ is few
        assert clf.factor_.gamma_rule_ == regime and clf.factor_.regime_table_ is None
        assert isinstance(clf.classifier_, SelfTrainedRidge) is few
        assert np.all(np.isin(clf.transduction_, np.unique(ys[ys != -1])))


def test_a_forced_regime_without_class_labels_is_named(moons):
    X = moons[0]
    responses = np.full(X.shape[0], np.nan)
    responses[:12] = X[:12, 0]
    with pytest.raises(ValueError, match=r"GraphRegularizedFactor: regime='few_labels'.*responses"):
        GraphRegularizedFactor(regime="few_labels", random_state=0).fit(X, responses)
    with pytest.raises(ValueError, match=r"GraphRegularizedFactor: regime='leave_one_out'.*no y"):
        GraphRegularizedFactor(regime="leave_one_out", gamma=1.0).fit(X)
    with pytest.raises(ValueError, match="regime"):
        GraphRegularizedFactor(regime="loo").fit(X, moons[2])

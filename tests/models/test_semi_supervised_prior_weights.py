"""A given class prior with enough labels: the labeled rows' classes reweighted to the
proportions of the data (importance weights of a shift in the classes' proportions)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

import lorak
from lorak import SemiSupervisedFactorClassifier
from lorak.models._semi_supervised import prior_class_weights, resolve_class_prior

PRIOR = np.array([0.9, 0.1])


@pytest.fixture(scope="module")
def unequal():
    """Two overlapping Gaussians, 90 % and 10 % of the rows, labeled 30 and 30: the
    labels drawn evenly over classes of unequal size."""
    rng = np.random.default_rng(3)
    y = (rng.random(1200) < PRIOR[1]).astype(np.int64)
    X = rng.standard_normal((y.size, 5))
    X[:, 0] += np.where(y == 1, 1.0, -1.0)
    lab = np.r_[
        rng.choice(np.flatnonzero(y == 0), 30, False), rng.choice(np.flatnonzero(y == 1), 30, False)
    ]
    ys = np.full(y.size, -1)
    ys[lab] = y[lab]
    return X, y, ys, lab


def _unlabeled_share(clf, X, lab):
    unl = np.setdiff1d(np.arange(X.shape[0]), lab)
    return float(np.mean(clf.predict(X[unl]) == 1)), unl


def _weights(class_prior, codes, c):
    counts = np.bincount(codes, minlength=c)
    return prior_class_weights(resolve_class_prior(class_prior, counts), counts)


def test_weights_are_the_ratio_of_the_given_to_the_labeled_proportions():
    codes = np.repeat([0, 1, 2], [10, 30, 60])
    w = _weights([0.5, 0.3, 0.2], codes, 3)
    np.testing.assert_allclose(w, [0.5 / 0.1, 0.3 / 0.3, 0.2 / 0.6])
    np.testing.assert_allclose(_weights("uniform", codes, 3), [10 / 3, 10 / 9, 10 / 18])
    # the labeled proportions, given or named, and "auto" leave the rows as they came
    assert _weights("labeled", codes, 3) is None
    assert _weights([0.1, 0.3, 0.6], codes, 3) is None
    assert _weights("auto", codes, 3) is None


def test_a_given_prior_reweights_the_head(unequal):
    X, y, ys, lab = unequal
    came = SemiSupervisedFactorClassifier(class_prior="labeled").fit(X, ys)
    told = SemiSupervisedFactorClassifier(class_prior=PRIOR).fit(X, ys)
    assert not came.few_labels_ and not told.few_labels_  # 30 per class: leave-one-out
    assert came.class_weights_ is None and came.prior_estimate_ is None
    np.testing.assert_allclose(told.class_weights_, PRIOR / 0.5)
    assert told.prior_estimate_ is None  # given, not measured
    # the cross-validation that chose the head counted the wrong rows' weights
    assert all(isinstance(v, float) for v in told.head_cv_errors_.values())
    # trained on equal classes, the head gives the small class far more rows than its
    # tenth; reweighted, close to it, and fewer rows are wrong
    share_came, unl = _unlabeled_share(came, X, lab)
    share_told, _ = _unlabeled_share(told, X, lab)
    assert share_came > PRIOR[1] + 0.08
    assert abs(share_told - PRIOR[1]) < abs(share_came - PRIOR[1]) - 0.05
    err_came = np.mean(came.predict(X[unl]) != y[unl])
    err_told = np.mean(told.predict(X[unl]) != y[unl])
    assert err_told < err_came - 0.03


def test_auto_measures_the_prior_of_labels_drawn_evenly(unequal):
    """30 and 30 labels of classes that hold 90 % and 10 % of the rows: "auto" measures
    the proportions from the unlabeled rows and reweights as a given prior would."""
    X, y, ys, lab = unequal
    came = SemiSupervisedFactorClassifier(class_prior="labeled").fit(X, ys)
    auto = SemiSupervisedFactorClassifier().fit(X, ys)
    est = auto.prior_estimate_
    assert not auto.few_labels_ and est is not None
    np.testing.assert_allclose(est.labeled, [0.5, 0.5])
    assert est.weight > 0.8 and abs(est.prior[1] - PRIOR[1]) < 0.1
    np.testing.assert_allclose(auto.class_weights_, est.prior / 0.5, rtol=1e-12)
    share_auto, unl = _unlabeled_share(auto, X, lab)
    share_came, _ = _unlabeled_share(came, X, lab)
    assert abs(share_auto - PRIOR[1]) < abs(share_came - PRIOR[1]) - 0.05
    err_came = np.mean(came.predict(X[unl]) != y[unl])
    err_auto = np.mean(auto.predict(X[unl]) != y[unl])
    assert err_auto < err_came - 0.03


def test_auto_keeps_labels_drawn_at_random(unequal):
    """Labels drawn at random agree with the measured proportions within their noise:
    the head sees them nearly as they came."""
    X, y, _, _ = unequal
    lab = np.random.default_rng(5).choice(y.size, 120, replace=False)
    ys = np.full(y.size, -1)
    ys[lab] = y[lab]
    auto = SemiSupervisedFactorClassifier().fit(X, ys)
    est = auto.prior_estimate_
    assert np.abs(est.prior - est.labeled).max() < 0.03
    # every row labeled: nothing to measure, the labels as they came
    every = SemiSupervisedFactorClassifier().fit(X[:300], y[:300])
    assert every.prior_estimate_ is None and every.class_weights_ is None


def test_the_labeled_proportions_change_nothing(unequal):
    X, _, ys, _ = unequal
    came = SemiSupervisedFactorClassifier(class_prior="labeled").fit(X, ys)
    clf = SemiSupervisedFactorClassifier(class_prior=[0.5, 0.5]).fit(X, ys)
    assert clf.class_weights_ is None
    np.testing.assert_array_equal(clf.predict(X), came.predict(X))
    assert clf.head_cv_errors_ == came.head_cv_errors_


def test_a_labeled_class_with_a_share_of_zero_is_refused(unequal):
    X, _, ys, _ = unequal
    with pytest.raises(ValueError, match="class_prior gives a share of 0 to the class at"):
        SemiSupervisedFactorClassifier(class_prior=[1.0, 0.0]).fit(X, ys)
    # with few labels too (the self-trained head), before any fit
    few = np.where(np.isin(np.arange(ys.size), np.flatnonzero(ys >= 0)[::10]), ys, -1)
    with pytest.raises(ValueError, match="class_prior gives a share of 0 to the class at"):
        SemiSupervisedFactorClassifier(class_prior=[0.0, 1.0]).fit(X, few)


def test_a_given_classifier_ignores_the_prior(unequal):
    X, _, ys, _ = unequal
    clf = SemiSupervisedFactorClassifier(classifier=LogisticRegression(), class_prior=PRIOR)
    clf.fit(X, ys)
    assert clf.class_weights_ is None and clf.head_cv_errors_ is None
    assert clf.prior_estimate_ is None


def test_the_weights_survive_a_save(unequal, tmp_path):
    X, _, ys, _ = unequal
    told = SemiSupervisedFactorClassifier(class_prior=PRIOR).fit(X, ys)
    path = tmp_path / "told.lorak"
    lorak.save(told, path)
    back = lorak.load(path)
    np.testing.assert_array_equal(back.class_weights_, told.class_weights_)
    np.testing.assert_array_equal(back.predict(X[:50]), told.predict(X[:50]))
    auto = SemiSupervisedFactorClassifier().fit(X, ys)  # the measured prior's record too
    lorak.save(auto, path)
    back = lorak.load(path)
    np.testing.assert_array_equal(back.prior_estimate_.prior, auto.prior_estimate_.prior)
    assert back.prior_estimate_.weight == auto.prior_estimate_.weight


@pytest.mark.parametrize(
    "class_prior, expected", [("auto", None), (PRIOR, PRIOR), ("uniform", [0.5, 0.5])]
)
def test_the_factor_scores_the_heads_under_the_model_s_prior(
    unequal, monkeypatch, class_prior, expected
):
    """The graph factor's regime measurement scores the heads as the model fits them:
    the model hands its resolved prior down with the parsed labels."""
    X, y, ys, lab = unequal
    seen = []
    fit = lorak.GraphRegularizedFactor.fit

    def spy(self, X, y=None, **kw):
        seen.append(y)
        return fit(self, X, y, **kw)

    monkeypatch.setattr(lorak.GraphRegularizedFactor, "fit", spy)
    few = np.full(y.size, -1)
    few[lab[::5]] = y[lab[::5]]  # 6 and 6: the regime is measured
    model = SemiSupervisedFactorClassifier(class_prior=class_prior).fit(X, few)
    assert len(seen) == 1 and model.factor_.regime_table_ is not None
    if expected is None:
        assert seen[0].class_prior is None
    else:
        np.testing.assert_allclose(seen[0].class_prior, expected)

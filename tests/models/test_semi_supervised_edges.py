"""The semi-supervised models at the edges of issue 47.

- The smallest label sets: one labeled row per class (two, three and five classes), a
  class of the data with no labeled row, a single labeled class.
- A head given by the user next to the default head: a head that takes unlabeled rows
  (``SelfTrainedRidge``, or any head declaring ``takes_unlabeled_rows``) gets them.
- ``SelfTrainedRidge``'s own checks: ``alpha``, y, X, ``X_unlabeled``, new rows.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import make_moons
from sklearn.linear_model import LogisticRegression

from conftest import readonly
from lorak import SemiSupervisedFactorClassifier
from lorak.learn._few_labels import SELF_TRAINING_WEIGHTS
from lorak.models import SelfTrainedRidge


@pytest.fixture(scope="module")
def moons():
    X, y = make_moons(300, noise=0.08, random_state=0)
    return X, y


def _blobs(c, per=60, seed=0, spread=8.0, d=3):
    rng = np.random.default_rng(seed)
    centres = spread * rng.standard_normal((c, d))
    y = np.repeat(np.arange(c), per)
    return centres[y] + rng.standard_normal((c * per, d)), y


def _one_per_class(y, classes=None, label=lambda c: c):
    ys = np.full(y.size, -1, dtype=object if not np.issubdtype(type(label(0)), np.integer) else int)
    ys[:] = -1
    for c in np.unique(y) if classes is None else classes:
        ys[np.flatnonzero(y == c)[0]] = label(c)
    return ys


# ------------------------------------------------------- (a) the smallest label sets


def test_one_labeled_row_per_class_two_classes(moons):
    """Cause 1: two labels, one per class, on the moons (refused before issue 47)."""
    X, y = moons
    ys = _one_per_class(y)
    Xr, ysr = readonly(X), readonly(ys)
    clf = SemiSupervisedFactorClassifier().fit(Xr, ysr)
    assert clf.few_labels_ and isinstance(clf.classifier_, SelfTrainedRidge)
    assert clf.factor_.gamma_rule_ == "few_labels"
    np.testing.assert_array_equal(clf.classes_, [0, 1])
    assert np.mean(clf.transduction_ == y) > 0.9
    np.testing.assert_array_equal(clf.predict(X), clf.transduction_)
    # the labeled rows keep their labels
    lab = np.flatnonzero(ys != -1)
    np.testing.assert_array_equal(clf.transduction_[lab], y[lab])


@pytest.mark.parametrize("c", [3, 5])
def test_one_labeled_row_per_class_more_classes(c):
    X, y = _blobs(c)
    ys = _one_per_class(y)
    clf = SemiSupervisedFactorClassifier().fit(X, ys)
    assert clf.few_labels_
    np.testing.assert_array_equal(clf.classes_, np.arange(c))
    assert clf.classifier_.coef_.shape[0] == c
    assert np.mean(clf.transduction_ == y) > 0.9
    assert clf.decision_function(X[:4]).shape == (4, c)


def test_string_labels_one_per_class(moons):
    X, y = moons
    names = np.array(["left", "right"])
    ys = np.full(y.size, "-1", dtype=object)
    for c in (0, 1):
        ys[np.flatnonzero(y == c)[0]] = names[c]
    clf = SemiSupervisedFactorClassifier().fit(X, ys)
    np.testing.assert_array_equal(clf.classes_, names)
    assert np.mean(clf.transduction_ == names[y]) > 0.9


def test_a_class_with_no_labeled_row_is_not_a_class_of_the_model():
    """Three blobs, labels for two of them: ``classes_`` holds the labeled classes (as
    documented), every row is given one of them, and the prior is over those two.

    The unlabeled blob's rows count towards the labeled classes' shares: with the
    proportions they then have (blob 1 lies next to blob 0 here: 2/3, 1/3), the two
    labeled blobs are told apart. (Under "auto" — equal shares — half a blob has to
    change sides; how the prior is chosen is the few-label method's business.)"""
    X, y = _blobs(3)
    ys = _one_per_class(y, classes=[0, 2])
    for prior in ("auto", [2 / 3, 1 / 3]):
        clf = SemiSupervisedFactorClassifier(class_prior=prior).fit(X, ys)
        np.testing.assert_array_equal(clf.classes_, [0, 2])
        assert set(np.unique(clf.transduction_)) <= {0, 2}
        assert clf.classifier_.class_prior_.shape == (2,)
        assert clf.decision_function(X[:3]).shape == (3,)
    for c in (0, 2):
        assert np.mean(clf.transduction_[y == c] == c) > 0.95
    with pytest.raises(ValueError, match="class_prior"):  # a prior per labeled class
        SemiSupervisedFactorClassifier(class_prior=[0.2, 0.3, 0.5]).fit(X, ys)


def test_a_single_labeled_class_is_named(moons):
    X, y = moons
    ys = np.full(y.size, -1)
    ys[0] = y[0]
    with pytest.raises(ValueError, match="one class among its labeled rows"):
        SemiSupervisedFactorClassifier().fit(X, ys)
    ys[np.flatnonzero(y == y[0])[:20]] = y[0]
    with pytest.raises(ValueError, match="one class among its labeled rows"):
        SemiSupervisedFactorClassifier().fit(X, ys)


def test_the_fewest_responses_the_regressor_takes(moons, tmp_path):
    """Responses go through leave-one-out: 3 labeled rows at least (named), and 3
    fit, predict and save."""
    import lorak
    from lorak import SemiSupervisedFactorRegressor

    X, _ = moons
    yr = np.full(X.shape[0], np.nan)
    yr[0] = 0.5
    with pytest.raises(ValueError, match="at least 2"):
        SemiSupervisedFactorRegressor().fit(X, yr)
    yr[1] = -0.5
    with pytest.raises(ValueError, match="at least 3 labeled rows"):
        SemiSupervisedFactorRegressor().fit(X, yr)
    yr[2] = 0.1
    reg = SemiSupervisedFactorRegressor().fit(X, yr)
    assert np.all(np.isfinite(reg.transduction_))
    lorak.save(reg, tmp_path / "r.lorak")
    np.testing.assert_array_equal(lorak.load(tmp_path / "r.lorak").predict(X), reg.predict(X))


def test_every_row_labeled_with_one_row_per_class():
    X = np.array([[0.0, 0.0], [1.0, 1.0], [0.1, 0.0], [0.9, 1.0]])
    clf = SemiSupervisedFactorClassifier().fit(X, [0, 1, 0, 1])
    np.testing.assert_array_equal(clf.predict(X), [0, 1, 0, 1])


@pytest.mark.parametrize("prior", [[0.25, 0.25, 0.5], [0.2, 0.2, 0.6]])
def test_three_separated_blobs_are_read_under_the_prior_given(prior):
    """Cause 8 through the model: the unlabeled rows' shares are the prior's to one
    row (class-mass normalization had given [0.282, 0.278, 0.44] for [0.25, 0.25, 0.5]
    and 0.515 for the 0.6 class)."""
    rng = np.random.default_rng(0)
    centres = np.array([[-6.0, 0.0, 0.0], [6.0, 0.0, 0.0], [0.0, 8.0, 0.0]])
    y = np.repeat([0, 1, 2], 100)
    X = centres[y] + rng.standard_normal((300, 3))
    ys = np.full(300, -1)
    ys[[0, 100, 200]] = [0, 1, 2]
    clf = SemiSupervisedFactorClassifier(class_prior=prior).fit(X, ys)
    unl = ys == -1
    counts = np.bincount(clf.transduction_[unl], minlength=3)
    assert np.max(np.abs(counts - unl.sum() * np.array(prior))) < 1.0 + 1e-9


# ------------------------------------------ (c) a head given next to the default head


def test_a_given_self_trained_ridge_reads_the_unlabeled_rows(moons):
    """Cause 3: the given head gets the unlabeled rows and reads them under its own
    prior (0.9 / 0.1), as the default head reads them under the model's."""
    X, y = moons
    ys = np.full(y.size, -1)
    lab = np.r_[np.flatnonzero(y == 0)[:3], np.flatnonzero(y == 1)[:3]]
    ys[lab] = y[lab]
    head = SelfTrainedRidge(class_prior=[0.9, 0.1])
    clf = SemiSupervisedFactorClassifier(classifier=head).fit(X, ys)
    assert not clf.few_labels_ and clf.classifier_ is not head
    assert len(clf.classifier_.n_changed_) == len(SELF_TRAINING_WEIGHTS)
    np.testing.assert_allclose(clf.classifier_.class_prior_, [0.9, 0.1])
    unl = ys == -1
    share = np.mean(clf.transduction_[unl] == 0)
    assert abs(share - 0.9) <= 2.0 / unl.sum()
    # the default head with the same prior reads them the same way
    default = SemiSupervisedFactorClassifier(class_prior=[0.9, 0.1]).fit(X, ys)
    np.testing.assert_array_equal(default.transduction_, clf.transduction_)
    assert head.get_params()["class_prior"] == [0.9, 0.1]  # the given head is not fitted
    assert not hasattr(head, "coef_")


class _Recorder(ClassifierMixin, BaseEstimator):
    """A head that declares it takes unlabeled rows, and records what it got."""

    takes_unlabeled_rows = True

    def fit(self, X, y, X_unlabeled=None):
        self.classes_ = np.unique(y)
        self.shapes_ = (X.shape, None if X_unlabeled is None else X_unlabeled.shape)
        self.mean_ = X.mean(axis=0)
        return self

    def predict(self, X):
        return np.full(X.shape[0], self.classes_[0])


class _LabeledOnly(_Recorder):
    takes_unlabeled_rows = False


def test_a_head_that_declares_it_gets_the_unlabeled_rows(moons):
    X, y = moons
    ys = np.where(np.arange(y.size) < 40, y, -1)
    clf = SemiSupervisedFactorClassifier(classifier=_Recorder()).fit(X, ys)
    (l, r), unl = clf.classifier_.shapes_
    assert l == 40 and unl == (260, r)
    # a head without the capability (or declaring False) sees the labeled rows only
    assert (
        SemiSupervisedFactorClassifier(classifier=_LabeledOnly()).fit(X, ys).classifier_.shapes_[1]
        is None
    )
    clf = SemiSupervisedFactorClassifier(classifier=LogisticRegression()).fit(X, ys)
    assert isinstance(clf.classifier_, LogisticRegression)


def test_a_head_that_takes_unlabeled_rows_with_every_row_labeled(moons):
    X, y = moons
    clf = SemiSupervisedFactorClassifier(classifier=_Recorder()).fit(X[:60], y[:60])
    assert clf.classifier_.shapes_[1] is None
    clf = SemiSupervisedFactorClassifier(classifier=SelfTrainedRidge()).fit(X[:60], y[:60])
    assert clf.classifier_.n_changed_ == []


def test_the_default_head_and_a_given_head_side_by_side(moons):
    """Enough labels: the default head is cross-validated, a given one is taken as it
    is; a given SelfTrainedRidge self-trains there too."""
    X, y = moons
    rng = np.random.default_rng(0)
    ys = np.full(y.size, -1)
    lab = np.r_[
        rng.choice(np.flatnonzero(y == 0), 15, False), rng.choice(np.flatnonzero(y == 1), 15, False)
    ]
    ys[lab] = y[lab]
    default = SemiSupervisedFactorClassifier().fit(X, ys)
    assert not default.few_labels_ and default.head_cv_errors_ is not None
    given = SemiSupervisedFactorClassifier(classifier=SelfTrainedRidge()).fit(X, ys)
    assert given.head_cv_errors_ is None and not given.few_labels_
    assert len(given.classifier_.n_changed_) == len(SELF_TRAINING_WEIGHTS)
    for clf in (default, given):
        assert np.mean(clf.transduction_ == y) > 0.9
        np.testing.assert_array_equal(clf.predict(X), clf.transduction_)


# ------------------------------------------------------------ SelfTrainedRidge checks


@pytest.fixture(scope="module")
def head_data():
    rng = np.random.default_rng(1)
    F = rng.standard_normal((40, 5))
    y = np.r_[np.zeros(20, int), np.ones(20, int)]
    F[y == 1, 0] += 3.0
    Fu = rng.standard_normal((100, 5))
    return F, y, Fu


@pytest.mark.parametrize(
    "alpha", [np.nan, -1.0, 0.0, np.inf, True, "0.1", None, [0.1], np.array([0.1, 0.2])]
)
def test_self_trained_ridge_names_a_bad_alpha(head_data, alpha):
    F, y, Fu = head_data
    with pytest.raises((TypeError, ValueError), match="alpha"):
        SelfTrainedRidge(alpha=alpha).fit(F, y, Fu)


@pytest.mark.parametrize("alpha", [1e-8, 0.1, 5, np.float32(2.0)])
def test_self_trained_ridge_takes_a_positive_alpha(head_data, alpha):
    F, y, Fu = head_data
    head = SelfTrainedRidge(alpha=alpha).fit(F, y, Fu)
    assert np.all(np.isfinite(head.coef_))


def _bad_fits(F, y, Fu):
    nanF = F.copy()
    nanF[3, 2] = np.nan
    nanFu = Fu.copy()
    nanFu[0, 0] = np.inf
    return {
        "one class": ((F, np.zeros(40, int), Fu), "two classes"),
        "short y": ((F, y[:-1], Fu), "y has 39 entries"),
        "long y": ((F, np.r_[y, 0], Fu), "y has 41 entries"),
        "string y": ((F, np.where(y == 0, "a", "b"), Fu), "integer class codes"),
        "float y": ((F, y + 0.5, Fu), "integer class codes"),
        "codes with a gap": ((F, 2 * y, Fu), "codes 0"),
        "negative codes": ((F, y - 1, Fu), "codes 0"),
        "2-d y": ((F, np.c_[y, y], Fu), "y must be 1-d"),
        "y None": ((F, None, Fu), "y"),
        "other width": ((F, y, Fu[:, :4]), "X_unlabeled has 4 columns"),
        "1-d X_unlabeled": ((F, y, Fu[0]), "X_unlabeled"),
        "NaN in X": ((nanF, y, Fu), "X"),
        "inf in X_unlabeled": ((F, y, nanFu), "X_unlabeled"),
        "string X": ((np.full(F.shape, "a"), y, Fu), "X"),
        "1-d X": ((F[:, 0], y, Fu), "X"),
        "empty X": ((F[:0], y[:0], Fu), "X"),
    }


@pytest.mark.parametrize(
    "case",
    [
        "one class",
        "short y",
        "long y",
        "string y",
        "float y",
        "codes with a gap",
        "negative codes",
        "2-d y",
        "y None",
        "other width",
        "1-d X_unlabeled",
        "NaN in X",
        "inf in X_unlabeled",
        "string X",
        "1-d X",
        "empty X",
    ],
)
def test_self_trained_ridge_names_bad_input(head_data, case):
    F, y, Fu = head_data
    args, match = _bad_fits(F, y, Fu)[case]
    with pytest.raises((TypeError, ValueError), match=match):
        SelfTrainedRidge().fit(*args)


def test_self_trained_ridge_densifies_sparse_rows_and_keeps_its_inputs(head_data):
    F, y, Fu = head_data
    ref = SelfTrainedRidge().fit(F, y, Fu)
    got = SelfTrainedRidge().fit(sp.csr_matrix(F), y, sp.csr_matrix(Fu))
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(got.predict(sp.csr_matrix(F)), ref.predict(F))
    Fr, yr, Fur = readonly(F), readonly(y), readonly(Fu)
    SelfTrainedRidge().fit(Fr, yr, Fur)
    np.testing.assert_array_equal(Fr, F)
    np.testing.assert_array_equal(Fur, Fu)
    # float codes that are whole numbers, and booleans, are codes
    np.testing.assert_allclose(SelfTrainedRidge().fit(F, y.astype(float), Fu).coef_, ref.coef_)
    np.testing.assert_allclose(SelfTrainedRidge().fit(F, y.astype(bool), Fu).coef_, ref.coef_)


def test_self_trained_ridge_checks_new_rows(head_data):
    F, y, Fu = head_data
    head = SelfTrainedRidge().fit(F, y, Fu)
    with pytest.raises(ValueError, match="X has 4 columns"):
        head.predict(F[:, :4])
    with pytest.raises(ValueError, match="X"):
        head.decision_function(np.full((2, 5), np.nan))
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        SelfTrainedRidge().predict(F)
    assert head.predict(F).shape == (40,)

"""The semi-supervised classifier's default heads (``lorak.learn._heads``), which the
classifier fits and the graph factor's entry scores to measure the regime."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import RidgeClassifier
from sklearn.svm import LinearSVC

from lorak.learn._heads import (
    HEAD_CV_FOLDS,
    choose_head,
    few_label_head_codes,
    linear_head_hits,
    linear_svc,
    measured_class_prior,
)


def _blobs(n_per=30, seed=0, gap=4.0):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(0, 1, (n_per, 3)), rng.normal(0, 1, (n_per, 3)) + gap])
    return X, np.repeat([0, 1], n_per)


def test_choose_head_counts_errors_over_stratified_folds():
    X, y = _blobs()
    head, errors = choose_head((RidgeClassifier(alpha=1.0), linear_svc()), X, y)
    assert set(errors) == {"RidgeClassifier", "LinearSVC"}
    assert all(0 <= e <= y.size for e in errors.values())
    assert errors["RidgeClassifier"] == errors["LinearSVC"] == 0  # separated: both right
    assert isinstance(head, RidgeClassifier)  # a tie: the first candidate
    # a class of one labeled row: no folds, the first candidate unscored
    head, errors = choose_head((linear_svc(), RidgeClassifier()), X[29:], y[29:])
    assert errors is None and isinstance(head, LinearSVC)
    assert HEAD_CV_FOLDS == 10


def test_linear_head_hits_score_both_heads_on_the_held_out_rows():
    X, y = _blobs(gap=0.5)
    train, test = np.arange(0, 60, 2), np.arange(1, 60, 2)
    hits = linear_head_hits(X, y, 1.0, train, test)
    assert hits.shape == (2, test.size) and hits.dtype == bool
    ridge = RidgeClassifier(alpha=1.0).fit(X[train], y[train]).predict(X[test]) == y[test]
    np.testing.assert_array_equal(hits[0], ridge)


def test_the_few_label_head_reads_the_unlabeled_rows():
    X, y = _blobs(n_per=100, gap=3.0)
    lab = np.r_[0, 1, 100, 101]
    unl = np.setdiff1d(np.arange(200), lab)
    codes = few_label_head_codes(X[lab], y[lab], X[unl], 0.1, 2, X)
    assert codes.shape == (200,) and set(np.unique(codes)) <= {0, 1}
    assert np.mean(codes[unl] == y[unl]) > 0.95


def test_linear_head_hits_fit_with_the_rows_weights():
    X, y = _blobs(gap=0.7, seed=2)
    train, test = np.arange(0, 60, 2), np.arange(1, 60, 2)
    w = np.where(y == 0, 3.0, 0.5)
    hits = linear_head_hits(X, y, 2.0, train, test, w)
    for i, head in enumerate((RidgeClassifier(alpha=2.0), linear_svc())):
        pred = head.fit(X[train], y[train], sample_weight=w[train]).predict(X[test])
        np.testing.assert_array_equal(hits[i], pred == y[test])
    np.testing.assert_array_equal(
        linear_head_hits(X, y, 2.0, train, test, np.ones(60)),
        linear_head_hits(X, y, 2.0, train, test),
    )


def test_few_label_head_codes_read_a_given_prior():
    from lorak.learn import self_training_ridge

    rng = np.random.default_rng(5)
    y = (rng.random(600) < 0.15).astype(np.int64)
    X = rng.standard_normal((600, 3))
    X[:, 0] += np.where(y == 1, 1.2, -1.2)
    lab = np.r_[np.flatnonzero(y == 0)[:5], np.flatnonzero(y == 1)[:5]]
    unl = np.setdiff1d(np.arange(600), lab)
    prior = np.array([0.7, 0.3])  # not the rows' 85 / 15: read, not measured
    codes = few_label_head_codes(X[lab], y[lab], X[unl], 0.1, 2, X[unl], prior)
    fit = self_training_ridge(X[lab], y[lab], X[unl], 0.1, n_classes=2, prior=prior)
    np.testing.assert_array_equal(codes, np.argmax(X[unl] @ fit.coef.T + fit.intercept, axis=1))
    assert abs(np.mean(codes == 1) - 0.3) < 0.01  # the given shares, exactly
    assert (
        abs(np.mean(few_label_head_codes(X[lab], y[lab], X[unl], 0.1, 2, X[unl]) == 1) - 0.3) > 0.05
    )


def _unequal(seed=0, n=2000, share=0.1, gap=3.0):
    """Two overlapping Gaussians, ``share`` of the rows in class 1."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < share).astype(np.int64)
    X = rng.normal(0, 1, (n, 4))
    X[:, 0] += gap * y
    return X, y


def _measured(X, y, lab, head=None):
    unl = np.setdiff1d(np.arange(y.size), lab)
    head = RidgeClassifier(alpha=1.0) if head is None else head
    return measured_class_prior(head, X[lab], y[lab], X[unl].mean(axis=0), unl.size)


def test_the_measured_prior_gives_way_to_labels_drawn_evenly():
    X, y = _unequal()
    truth = np.bincount(y) / y.size
    X0, off = X.copy(), []
    for seed in range(5):
        rng = np.random.default_rng(seed)
        lab = np.concatenate([rng.choice(np.flatnonzero(y == k), 25, False) for k in (0, 1)])
        est = _measured(X, y, lab)
        # 25 and 25 labeled where the data holds 9 to 1: the match is far from the
        # labeled halves, beyond its noise, and takes nearly all the weight
        np.testing.assert_allclose(est.labeled, [0.5, 0.5])
        assert est.signal > 5 * est.noise > 0 and est.weight > 0.8
        # with 25 rows a class, the match is off by up to a tenth or so: far nearer the
        # data's proportions than the labeled ones, on every draw
        off.append(np.abs(est.prior - truth).max())
        assert off[-1] < np.abs(est.labeled - truth).max() / 2
        # the data's proportions: the labeled counts plus the unlabeled rows in the blend's
        n_u = y.size - lab.size
        blend = est.weight * est.matched + (1 - est.weight) * est.labeled
        np.testing.assert_allclose(est.prior, ([25, 25] + n_u * blend) / y.size, rtol=1e-12)
    assert np.mean(off) < 0.1
    np.testing.assert_array_equal(X, X0)


def test_the_measured_prior_keeps_labels_drawn_at_random():
    X, y = _unequal()
    shifts = []
    for seed in range(5):
        lab = np.random.default_rng(seed).choice(y.size, 60, replace=False)
        est = _measured(X, y, lab, head=linear_svc())
        # proportions that agree with the match within its noise stay as they came
        shifts.append(np.abs(est.prior - est.labeled).max())
    assert np.median(shifts) < 0.02


def test_the_measured_prior_is_not_measured_where_it_cannot_be():
    X, y = _unequal()
    lab = np.r_[np.flatnonzero(y == 0)[:20], np.flatnonzero(y == 1)[:20]]
    unl = np.setdiff1d(np.arange(y.size), lab)
    head, mean_u = RidgeClassifier(), X[unl].mean(axis=0)
    assert measured_class_prior(head, X[lab], y[lab], mean_u, 0) is None  # no unlabeled rows
    one = np.r_[lab[:20], lab[20]]  # a class of one labeled row
    assert measured_class_prior(head, X[one], y[one], mean_u, unl.size) is None
    single = np.zeros(lab.size, dtype=np.int64)  # one class
    assert measured_class_prior(head, X[lab], single, mean_u, unl.size) is None


def test_the_measured_prior_of_three_classes():
    """Three separated classes holding 70, 20 and 10 % of the rows, 40 labeled in each:
    the match moves the prior well over half way from equal thirds to the data's."""
    rng = np.random.default_rng(4)
    y = rng.choice(3, 3000, p=[0.7, 0.2, 0.1])
    X = rng.normal(0, 1, (y.size, 4))
    X[:, 0] += 3.0 * (y == 1)
    X[:, 1] += 3.0 * (y == 2)
    lab = np.concatenate([rng.choice(np.flatnonzero(y == k), 40, False) for k in range(3)])
    est = _measured(X, y, lab)
    truth = np.bincount(y) / y.size
    np.testing.assert_allclose(est.labeled, [1 / 3] * 3)
    assert est.weight > 0.8
    assert np.abs(est.prior - truth).sum() < np.abs(est.labeled - truth).sum() / 2


def test_the_unconstrained_match_solves_the_mixture_exactly():
    """The match the bootstrap spreads: proportions summing to 1, of any sign, whose
    mixture of the class means is the mean (exactly, where one exists)."""
    from lorak.learn._heads import _affine_proportions

    # two classes, scores (−s, s): π₁ = (μ − m₀)/(m₁ − m₀), inside and outside [0, 1]
    M = np.array([[[-1.0, 1.0], [2.0, -2.0]], [[-1.0, 1.0], [1.0, -1.0]]])
    np.testing.assert_allclose(_affine_proportions(M[:1], np.array([0.5, -0.5])), [[0.5, 0.5]])
    np.testing.assert_allclose(_affine_proportions(M[1:], np.array([-3.0, 3.0])), [[2.0, -1.0]])
    # three classes in general position: the mixture is reproduced
    rng = np.random.default_rng(0)
    M3 = rng.normal(size=(4, 3, 3))
    pi = np.array([0.6, 0.5, -0.1])
    mu = pi @ M3[0]
    got = _affine_proportions(M3[:1], mu)[0]
    np.testing.assert_allclose(got, pi, atol=1e-10)
    np.testing.assert_allclose(_affine_proportions(M3, mu).sum(axis=1), 1.0, rtol=1e-12)


def test_the_head_choice_hands_its_out_of_fold_scores_to_the_measurement():
    """``choose_head(return_scores=True)`` gives the chosen head's out-of-fold class
    scores, whose argmax is what its error count counted; the measured prior reads them
    as it would compute them itself (one cross-validation, not two)."""
    X, y = _unequal()
    rng = np.random.default_rng(3)
    lab = np.concatenate([rng.choice(np.flatnonzero(y == k), 25, False) for k in (0, 1)])
    heads = (RidgeClassifier(alpha=1.0), linear_svc())
    head, errors, scores = choose_head(heads, X[lab], y[lab], return_scores=True)
    plain_head, plain_errors = choose_head(heads, X[lab], y[lab])
    assert plain_head is head and plain_errors == errors
    assert scores.shape == (lab.size, 2)
    assert np.count_nonzero(scores.argmax(axis=1) != y[lab]) == errors[type(head).__name__]
    unl = np.setdiff1d(np.arange(y.size), lab)
    args = (head, X[lab], y[lab], X[unl].mean(axis=0), unl.size)
    handed, own = measured_class_prior(*args, scores=scores), measured_class_prior(*args)
    np.testing.assert_allclose(handed.prior, own.prior, rtol=1e-12)
    assert handed.weight == pytest.approx(own.weight, rel=1e-12)
    # a class of one labeled row: unscored, no scores
    assert choose_head(heads, X[lab][24:], y[lab][24:], return_scores=True)[1:] == (None, None)

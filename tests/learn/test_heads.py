"""The semi-supervised classifier's default heads (``lorak.learn._heads``), which the
classifier fits and the graph factor's entry scores to measure the regime."""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import RidgeClassifier
from sklearn.svm import LinearSVC

from lorak.learn._heads import (
    HEAD_CV_FOLDS,
    choose_head,
    few_label_head_codes,
    linear_head_hits,
    linear_svc,
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

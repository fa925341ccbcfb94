"""Streaming LS-SVM fits (``LSSVC.partial_fit`` / ``LSSVR.partial_fit``; issue 21, item 4):
the m × m statistics merge over batches, so batch by batch equals the one-shot fit."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

import lorak
from _tolerance import assert_labels_agree_off_ties
from lorak.models import LSSVC, LSSVR, lssvm_fit_factor, lssvm_moments, merge_lssvm_moments


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((900, 5))
    y = (X[:, 0] * X[:, 1] > 0).astype(int) + (X[:, 2] > 1).astype(int)  # 3 classes
    t = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(900)
    Z = X[rng.choice(900, 60, replace=False)]  # landmarks as points: batch-independent
    return X, y, t, Z


def _batches(n, sizes=(100, 350, 1, 249, 200)):
    edges = np.cumsum((0, *sizes))
    assert edges[-1] == n
    return [slice(a, b) for a, b in itertools.pairwise(edges)]


def _factor(Z):
    return lorak.Nystroem(kernel="gaussian", gamma=0.3, landmarks=Z)


def test_moments_merge_to_the_one_shot_moments(data):
    X, _, t, _ = data
    T = np.column_stack([t, 2 * t])
    whole = lssvm_moments(X, T)
    acc = (0, None, None)
    for s in _batches(X.shape[0]):
        acc = merge_lssvm_moments(acc, lssvm_moments(X[s], T[s]))
    assert acc[0] == whole[0]
    np.testing.assert_allclose(acc[1], whole[1], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(acc[2], whole[2], rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("C", [0.1, 100.0])
def test_lssvc_batches_equal_the_one_shot_fit(data, C):
    X, y, _, Z = data
    one = LSSVC(_factor(Z), C=C).fit(X, y)
    st = LSSVC(_factor(Z), C=C)
    for s in _batches(X.shape[0]):
        st.partial_fit(X[s], y[s], classes=[0, 1, 2])
    assert st.n_samples_seen_ == X.shape[0]
    np.testing.assert_array_equal(st.classes_, one.classes_)
    scale = np.abs(one.coef_).max()
    np.testing.assert_allclose(st.coef_, one.coef_, rtol=1e-7, atol=1e-9 * scale)
    np.testing.assert_allclose(st.intercept_, one.intercept_, rtol=1e-7, atol=1e-9 * scale)
    d1, d2 = one.decision_function(X), st.decision_function(X)
    np.testing.assert_allclose(d2, d1, rtol=1e-7, atol=1e-8 * np.abs(d1).max())
    # moments merged batch by batch, not summed at once: decisions equal to 1e-7, so
    # the labels agree wherever the two largest scores are not that close
    tol = 1e-7 * np.abs(d1).max()
    assert_labels_agree_off_ties(st.predict(X), one.predict(X), d1, tol)


def test_lssvr_batches_equal_the_one_shot_fit_and_the_factor_solution(data):
    X, _, t, Z = data
    one = LSSVR(_factor(Z), C=10.0).fit(X, t)
    st = LSSVR(_factor(Z), C=10.0)
    for s in _batches(X.shape[0]):
        st.partial_fit(X[s], t[s])
    np.testing.assert_allclose(st.predict(X), one.predict(X), rtol=1e-8, atol=1e-9)
    ref = lssvm_fit_factor(one.factor_.transform(X), t, 10.0)
    np.testing.assert_allclose(st.coef_, ref.coef[:, 0], rtol=1e-7, atol=1e-9)
    assert isinstance(st.intercept_, float)


def test_a_fitted_factor_is_used_as_it_is(data):
    X, _, t, _ = data
    fac = lorak.Nystroem(n_components=40, random_state=0).fit(X)  # uniform landmarks
    st = LSSVR(fac, C=1.0)
    for s in _batches(X.shape[0]):
        st.partial_fit(X[s], t[s])
    assert st.factor_ is fac
    ref = lssvm_fit_factor(fac.transform(X), t, 1.0)
    np.testing.assert_allclose(st.coef_, ref.coef[:, 0], rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(st.intercept_, ref.intercept[0], rtol=1e-7, atol=1e-9)


def test_passthrough_sparse_multi_target_and_partial_fit_after_fit(data):
    X, _, t, _ = data
    T = np.column_stack([t, X[:, 1]])
    Xs = sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))
    one = LSSVR(None, C=3.0).fit(Xs, T)
    st = LSSVR(None, C=3.0).fit(Xs[:300], T[:300])  # a fit starts the stream
    st.partial_fit(Xs[300:], T[300:])
    np.testing.assert_allclose(st.coef_, one.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(st.intercept_, one.intercept_, rtol=1e-8, atol=1e-10)


def test_partial_fit_errors(data):
    X, y, t, Z = data
    with pytest.raises(ValueError, match="classes must be passed"):
        LSSVC(_factor(Z)).partial_fit(X[:50], y[:50])
    clf = LSSVC(_factor(Z)).partial_fit(X[:50], y[:50], classes=[0, 1, 2])
    with pytest.raises(ValueError, match="not in classes"):
        clf.partial_fit(X[50:60], y[50:60] + 5)
    with pytest.raises(ValueError, match="features"):
        clf.partial_fit(X[50:60, :3], y[50:60])
    reg = LSSVR(_factor(Z)).partial_fit(X[:50], t[:50])
    with pytest.raises(ValueError, match="targets"):
        reg.partial_fit(X[50:60], np.column_stack([t[50:60], t[50:60]]))

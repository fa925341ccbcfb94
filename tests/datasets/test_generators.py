"""Tests of the synthetic generators in lorak.datasets (published definitions)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

from lorak.datasets import (
    GENERATORS,
    make_chessboard,
    make_double_spiral,
    make_ringnorm,
    make_twonorm,
    make_waveform,
)

ALL = [
    (make_twonorm, 20, 2),
    (make_ringnorm, 20, 2),
    (make_waveform, 21, 3),
    (make_chessboard, 2, 2),
    (make_double_spiral, 2, 2),
]
IDS = [f.__name__ for f, _, _ in ALL]


@pytest.mark.parametrize(("func", "d", "k"), ALL, ids=IDS)
def test_shapes_dtypes_and_balance(func, d, k):
    X, y = func(101, random_state=0)
    assert X.shape == (101, d) and X.dtype == np.float64 and X.flags.c_contiguous
    assert y.shape == (101,) and y.dtype == np.int64
    counts = np.bincount(y, minlength=k)
    assert counts.size == k and counts.max() - counts.min() <= 1 and counts.sum() == 101
    assert np.isfinite(X).all()


@pytest.mark.parametrize(("func", "d", "k"), ALL, ids=IDS)
def test_default_sizes_match_registry(func, d, k):
    name = next(n for n, v in GENERATORS.items() if v[0] is func)
    _, d_reg, k_reg, n_default = GENERATORS[name]
    X, _ = func(random_state=0)
    assert X.shape == (n_default, d_reg) and (d_reg, k_reg) == (d, k)


def test_documented_default_sizes():
    assert {n: v[3] for n, v in GENERATORS.items()} == {
        "twonorm": 4000,
        "ringnorm": 1000,
        "waveform": 2000,
        "chessboard": 100,
        "double_spiral": 100,
    }


@pytest.mark.parametrize(("func", "d", "k"), ALL, ids=IDS)
def test_determinism(func, d, k):
    X1, y1 = func(60, random_state=42)
    X2, y2 = func(60, random_state=42)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    X3, _ = func(60, random_state=43)
    assert not np.array_equal(X1, X3)
    # a Generator and a legacy RandomState are accepted
    Xg, _ = func(60, random_state=np.random.default_rng(42))
    np.testing.assert_array_equal(Xg, X1)
    Xr, _ = func(60, random_state=np.random.RandomState(0))
    assert Xr.shape == (60, d)


@pytest.mark.parametrize(("func", "d", "k"), ALL, ids=IDS)
def test_shuffle_false_groups_by_class(func, d, k):
    _, y = func(30, random_state=0, shuffle=False)
    assert np.all(np.diff(y) >= 0)
    _, y = func(30, random_state=0)
    assert not np.all(np.diff(y) >= 0)


@pytest.mark.parametrize("func", [f for f, _, _ in ALL], ids=IDS)
@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "10"])
def test_bad_n_samples(func, bad):
    with pytest.raises(ValueError, match=r"n_samples should be an integer >= 1, found"):
        func(bad)


def test_bad_random_state():
    with pytest.raises(ValueError, match="random_state should be"):
        make_twonorm(10, random_state="seed")


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 200), seed=st.integers(0, 2**32 - 1), which=st.integers(0, 4))
def test_any_size_is_balanced(n, seed, which):
    func, d, k = ALL[which]
    X, y = func(n, random_state=seed)
    assert X.shape == (n, d)
    counts = np.bincount(y, minlength=k)
    assert counts.max() - counts.min() <= 1


def _class_moments(X, y, c):
    Xc = X[y == c]
    return Xc.mean(axis=0), np.cov(Xc, rowvar=False)


def test_twonorm_moments():
    X, y = make_twonorm(20000, random_state=0)
    a = 2 / np.sqrt(20)
    m0, c0 = _class_moments(X, y, 0)
    m1, c1 = _class_moments(X, y, 1)
    np.testing.assert_allclose(m0, a, atol=0.05)
    np.testing.assert_allclose(m1, -a, atol=0.05)
    np.testing.assert_allclose(c0, np.eye(20), atol=0.07)
    np.testing.assert_allclose(c1, np.eye(20), atol=0.07)


def test_ringnorm_moments():
    X, y = make_ringnorm(20000, random_state=0)
    a = 1 / np.sqrt(20)
    m0, c0 = _class_moments(X, y, 0)
    m1, c1 = _class_moments(X, y, 1)
    np.testing.assert_allclose(m0, 0.0, atol=0.1)
    np.testing.assert_allclose(m1, a, atol=0.05)
    np.testing.assert_allclose(c0, 4 * np.eye(20), atol=0.25)
    np.testing.assert_allclose(c1, np.eye(20), atol=0.07)


def test_other_dimension_keeps_mean_distance():
    X, y = make_twonorm(20000, n_features=5, random_state=1)
    gap = X[y == 0].mean(axis=0) - X[y == 1].mean(axis=0)
    assert np.linalg.norm(gap) == pytest.approx(4.0, abs=0.1)


def test_twonorm_linear_error_near_bayes():
    # Bayes error 2.3 %; the optimal rule is linear
    X, y = make_twonorm(4000, random_state=0)
    Xt, yt = make_twonorm(4000, random_state=1)
    err = 1 - LinearDiscriminantAnalysis().fit(X, y).score(Xt, yt)
    assert err < 0.04


def test_waveform_linear_classifier_near_bayes():
    # Bayes error about 14 % (CART book); LDA is known to come close
    X, y = make_waveform(3000, random_state=0)
    Xt, yt = make_waveform(3000, random_state=1)
    err = 1 - LinearDiscriminantAnalysis().fit(X, y).score(Xt, yt)
    assert 0.10 < err < 0.25


def test_waveform_class_means_are_base_wave_averages():
    X, y = make_waveform(30000, random_state=0)
    i = np.arange(1, 22)
    h1 = np.maximum(6 - np.abs(i - 11), 0)
    h2 = np.maximum(6 - np.abs(i - 15), 0)
    h3 = np.maximum(6 - np.abs(i - 7), 0)
    for c, (a, b) in enumerate([(h1, h2), (h1, h3), (h2, h3)]):
        np.testing.assert_allclose(X[y == c].mean(axis=0), (a + b) / 2, atol=0.1)
    X0, _ = make_waveform(3000, noise=0.0, random_state=0)
    assert X0.min() >= 0 and X0.max() <= 6


def test_chessboard_labels_follow_cell_parity():
    X, y = make_chessboard(2000, random_state=0)
    assert X.min() >= 0 and X.max() < 4
    np.testing.assert_array_equal(y, (np.floor(X[:, 0]) + np.floor(X[:, 1])).astype(int) % 2)
    cells = np.floor(X[:, 0]) * 4 + np.floor(X[:, 1])
    assert np.unique(cells).size == 16  # every cell is used
    X, y = make_chessboard(500, n_cells=3, random_state=0)
    assert X.max() < 3
    np.testing.assert_array_equal(y, (np.floor(X).sum(axis=1)).astype(int) % 2)


def test_double_spiral_geometry():
    X, y = make_double_spiral(400, random_state=0)
    r = np.linalg.norm(X, axis=1)
    t1 = np.pi / 2 + 3 * np.pi
    assert r.min() >= (np.pi / 2) / t1 - 1e-12 and r.max() <= 1 + 1e-12
    # the classes are each other's rotation by pi: angle - radius * t1 is constant
    theta = r * t1
    ang = np.arctan2(X[:, 1], X[:, 0])
    phase = np.mod(ang - theta + np.pi * y, 2 * np.pi)
    phase = np.minimum(phase, 2 * np.pi - phase)
    np.testing.assert_allclose(phase, 0, atol=1e-9)
    # noise moves points off the curves; 3-D adds a height in [0, 1]
    Xn, _ = make_double_spiral(400, noise=0.1, random_state=0)
    assert not np.allclose(np.linalg.norm(Xn, axis=1), r)
    X3, _ = make_double_spiral(400, n_features=3, random_state=0)
    np.testing.assert_allclose(X3[:, :2], X)
    assert X3[:, 2].min() >= 0 and X3[:, 2].max() <= 1


def test_double_spiral_bad_options():
    with pytest.raises(ValueError, match="n_features should be 2 or 3, found 4"):
        make_double_spiral(10, n_features=4)
    with pytest.raises(ValueError, match="noise should be a non-negative number, found -1"):
        make_double_spiral(10, noise=-1)
    with pytest.raises(ValueError, match="turns should be positive"):
        make_double_spiral(10, turns=0)
    with pytest.raises(ValueError, match="n_cells should be an integer >= 2"):
        make_chessboard(10, n_cells=1)

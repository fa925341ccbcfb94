"""GraphRegularizedFactor at the edges of issue 47: the smallest label sets (one
labeled row per class), the record of a choice made from responses (savable, no NaN),
and ``transform_at``/``use_gamma`` with a 0-d array or None for gamma."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_moons

import lorak
from lorak import GraphRegularizedFactor
from lorak.learn import FEW_LABELS_GAMMA, GRAPH_GAMMA_GRID, GRAPH_PENALTY_GRID


@pytest.fixture(scope="module")
def moons():
    X, y = make_moons(300, noise=0.08, random_state=0)
    return X, y


def _one_per_class(y, classes=None):
    ys = np.full(y.size, -1)
    for c in np.unique(y) if classes is None else classes:
        i = np.flatnonzero(y == c)[0]
        ys[i] = c
    return ys


# ------------------------------------------------------------------ cause 1


def test_one_labeled_row_per_class_takes_the_few_label_rule(moons):
    X, y = moons
    ys = _one_per_class(y)
    f = GraphRegularizedFactor(random_state=0).fit(X, ys)
    assert f.gamma_rule_ == "few_labels"
    assert f.graph_energy_ratio_ < 0.5  # the moons' arcs: the graph informs
    assert f.gamma_ == FEW_LABELS_GAMMA
    assert f.loo_scores_ is None and f.rank_scores_ is None
    assert np.all(np.isfinite(f.transform(X)))


def test_one_labeled_row_per_class_with_three_classes():
    rng = np.random.default_rng(0)
    centres = 6.0 * rng.standard_normal((3, 3))
    y = np.repeat([0, 1, 2], 70)
    X = centres[y] + rng.standard_normal((210, 3))
    f = GraphRegularizedFactor(random_state=0).fit(X, _one_per_class(y))
    assert f.gamma_rule_ == "few_labels"
    assert f.transform(X[:4]).shape[0] == 4


def test_a_single_labeled_class_is_named(moons):
    X, y = moons
    ys = np.full(y.size, -1)
    ys[0] = y[0]  # one labeled row in all
    with pytest.raises(ValueError, match="one class among its labeled rows"):
        GraphRegularizedFactor(random_state=0).fit(X, ys)
    ys[np.flatnonzero(y == y[0])[:5]] = y[0]  # five rows, still one class
    with pytest.raises(ValueError, match="one class among its labeled rows"):
        GraphRegularizedFactor(random_state=0).fit(X, ys)


def test_responses_still_need_three_labeled_rows_for_leave_one_out(moons):
    X, _ = moons
    yr = np.full(X.shape[0], np.nan)
    yr[:2] = [0.3, -0.2]
    with pytest.raises(ValueError, match="at least 3 labeled rows"):
        GraphRegularizedFactor(random_state=0).fit(X, yr)
    yr[2] = 0.1
    f = GraphRegularizedFactor(random_state=0).fit(X, yr)
    assert f.gamma_rule_ == "leave_one_out"


# ------------------------------------------------------------------ cause 2


def test_the_record_of_a_choice_from_responses_holds_no_nan(moons, tmp_path):
    X, _ = moons
    yr = np.sin(2 * X[:, 0])
    yr[40:] = np.nan
    f = GraphRegularizedFactor(random_state=0).fit(X, yr)
    assert f.target_type_ == "regression"
    # responses: the leave-one-out mean squared error alone (no error rate to count)
    assert f.loo_scores_.shape == (len(GRAPH_GAMMA_GRID), len(GRAPH_PENALTY_GRID), 1)
    assert np.all(np.isfinite(f.loo_scores_))
    lorak.save(f, tmp_path / "f.lorak")
    g = lorak.load(tmp_path / "f.lorak")
    np.testing.assert_array_equal(g.transform(X), f.transform(X))
    np.testing.assert_array_equal(g.loo_scores_, f.loo_scores_)


def test_the_record_of_a_choice_from_classes_keeps_both_columns(moons):
    X, y = moons
    ys = np.where(np.arange(y.size) < 60, y, -1)
    f = GraphRegularizedFactor(random_state=0).fit(X, ys)
    assert f.gamma_rule_ == "leave_one_out"
    assert f.loo_scores_.shape == (len(GRAPH_GAMMA_GRID), len(GRAPH_PENALTY_GRID), 2)
    assert np.all((f.loo_scores_[..., 0] >= 0) & (f.loo_scores_[..., 0] <= 1))


# ------------------------------------------------------------------ cause 6


@pytest.fixture(scope="module")
def kept(moons):
    X, y = moons
    ys = np.where(np.arange(y.size) < 60, y, -1)
    return GraphRegularizedFactor(keep_statistics=True, random_state=0).fit(X, ys)


@pytest.mark.parametrize("t", [np.array(1.0), np.array(0), np.float32(10.0), np.int64(3)])
def test_transform_at_takes_a_zero_dimensional_number(moons, kept, t):
    X, _ = moons
    got = kept.transform_at(X[:5], t)
    assert isinstance(got, np.ndarray)
    np.testing.assert_array_equal(got, kept.transform_at(X[:5], float(t)))


def test_transform_at_takes_an_array_of_gammas(moons, kept):
    X, _ = moons
    got = kept.transform_at(X[:5], np.array([0.0, 1.0]))
    assert isinstance(got, list) and len(got) == 2
    np.testing.assert_array_equal(got[1], kept.transform_at(X[:5], 1.0))


@pytest.mark.parametrize(
    "t", [None, "1.0", np.array(True), True, np.array(np.nan), -1.0, np.array([[1.0]]), [None]]
)
def test_transform_at_names_a_bad_gamma(moons, kept, t):
    X, _ = moons
    with pytest.raises((TypeError, ValueError), match="gamma"):
        kept.transform_at(X[:5], t)


def test_use_gamma_takes_a_zero_dimensional_number(moons, moons_kept_copy):
    X, _ = moons
    f = moons_kept_copy
    ref = f.transform_at(X[:5], 10.0)
    f.use_gamma(np.array(10.0))
    assert f.gamma_ == 10.0
    np.testing.assert_array_equal(f.transform(X[:5]), ref)
    with pytest.raises((TypeError, ValueError), match="gamma"):
        f.use_gamma(None)


@pytest.fixture
def moons_kept_copy(kept):
    import copy

    return copy.deepcopy(kept)

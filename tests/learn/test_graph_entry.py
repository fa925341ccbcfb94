"""The graph factor's one entry, ``lorak.learn.fit_graph_factor``: its record, the
few-label decision it holds, the labels record it reads, and the map R."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from sklearn.datasets import make_moons

from lorak import GraphRegularizedFactor, Nystroem
from lorak._core.rows import resolve_rows
from lorak._core.targets import SemiSupervisedTargets
from lorak.estimators import gamma_grid
from lorak.learn import FEW_LABELS_PENALTY, GraphFactorFit, few_labels, fit_graph_factor
from lorak.learn._few_labels import few_labels_decision
from lorak.learn._graph_entry import GraphLabels, graph_factor_map
from lorak.learn._graph_factor import deformation_matrix, principal_map


@pytest.fixture(scope="module")
def moons():
    X, y = make_moons(240, noise=0.08, random_state=0)
    return X, y


def _labels(y, per_class, seed=0):
    rng = np.random.default_rng(seed)
    ys = np.full(y.size, -1)
    for c in np.unique(y):
        i = rng.choice(np.flatnonzero(y == c), per_class, replace=False)
        ys[i] = c
    return ys


def _classes(ys):
    rows = np.flatnonzero(ys != -1)
    return SemiSupervisedTargets.of_classes(rows, ys[rows], ys.size)


def _entry(X, targets, **options):
    """The entry called as GraphRegularizedFactor calls it, on rows resolved here."""
    rows = resolve_rows(GraphRegularizedFactor(), X)
    factor = Nystroem(n_components=30, random_state=0).fit(X)
    labeled = None if targets is None else rows.labeled(targets.rows)
    options = {"n_anchors": 40, "n_neighbors": 5, "gammas": gamma_grid(rows.n_rows), **options}
    return fit_graph_factor(rows, factor, targets, labeled=labeled, seed=0, **options)


@pytest.mark.parametrize("per_class", [2, 15])
def test_the_record_holds_the_few_label_decision(moons, per_class):
    X, y = moons
    targets = _classes(_labels(y, per_class))
    fit = _entry(X, targets)
    assert isinstance(fit, GraphFactorFit)
    assert fit.few_labels is few_labels(targets.codes, 2) is (per_class == 2)
    assert fit.gamma_rule == ("few_labels" if per_class == 2 else "leave_one_out")
    assert fit.target_type == "classification"
    if per_class == 2:
        assert fit.penalty == FEW_LABELS_PENALTY and fit.loo_scores is None
    else:
        assert fit.loo_scores.shape[-1] == 2 and fit.rank_scores is not None
    m = fit.deformation.eigenvectors.shape[0]
    assert fit.components.shape == (m, fit.rank)
    assert fit.laplacian_weight == fit.deformation.gamma(fit.gamma)
    assert fit.anchors.shape == (40, X.shape[1])


def test_responses_and_no_labels_take_no_few_label_decision(moons):
    X, y = moons
    rows = np.arange(0, y.size, 8)
    resp = SemiSupervisedTargets.of_responses(rows, X[rows, 0] + y[rows], y.size)
    fit = _entry(X, resp)
    assert fit.few_labels is None and fit.target_type == "regression"
    assert fit.gamma_rule == "leave_one_out" and fit.loo_scores.shape[-1] == 1
    given = _entry(X, None, gamma=0.5, n_components=None)
    assert given.few_labels is None and given.target_type is None
    assert (given.gamma_rule, given.penalty, given.loo_scores) == (None, None, None)
    assert given.gamma == 0.5
    m = given.deformation.eigenvectors.shape[0]
    np.testing.assert_allclose(given.components, deformation_matrix(given.deformation, 0.5))
    assert given.rank == m


def test_the_estimator_stores_the_record(moons):
    """GraphRegularizedFactor.fit is validate → entry → store: every field of the record
    is a fitted attribute (the deformation only with keep_statistics)."""
    X, y = moons
    ys = _labels(y, 2)
    f = GraphRegularizedFactor(keep_statistics=True, random_state=0).fit(X, ys)
    for field in dataclasses.fields(GraphFactorFit):
        if field.name not in ("components", "deformation"):
            assert hasattr(f, field.name + "_"), field.name
    assert f.few_labels_ is True and f.gamma_rule_ == "few_labels"
    assert f.n_components_ == f.rank_ == f.components_.shape[1]
    plain = GraphRegularizedFactor(gamma=1.0, random_state=0).fit(X, ys)
    assert plain.few_labels_ is True and plain.gamma_rule_ is None  # decided, not used
    assert GraphRegularizedFactor(gamma=1.0, random_state=0).fit(X).few_labels_ is None


def test_the_labels_record_has_named_fields():
    ys = np.array([0, -1, 1, 1, -1, 0, 2])
    lab = GraphLabels.of(_classes(ys))
    assert lab.kind == "classification"
    np.testing.assert_array_equal(lab.rows, [0, 2, 3, 5, 6])
    assert lab.targets.shape == (5, 3) and set(np.unique(lab.targets)) == {-1.0, 1.0}
    assert lab.few_labels is True
    resp = GraphLabels.of(SemiSupervisedTargets.of_responses(np.array([1, 3]), np.r_[2.0, 4.0], 5))
    assert resp.kind == "regression" and resp.few_labels is None
    np.testing.assert_allclose(resp.targets[:, 0], [-1.0, 1.0])


def test_few_labels_decision_takes_over_a_decision_made():
    codes = np.repeat([0, 1], 20)
    assert few_labels_decision(codes, 2) is few_labels(codes, 2) is False
    assert few_labels_decision(codes, 2, decided=True) is True
    assert few_labels_decision(codes[:4], 2, decided=False) is False


def test_graph_factor_map_is_r_or_its_leading_directions(moons):
    X, y = moons
    fit = _entry(X, None, gamma=1.0, n_components=None)
    defo, n = fit.deformation, X.shape[0]
    m = defo.eigenvectors.shape[0]
    full = graph_factor_map(defo, 1.0, n)
    np.testing.assert_allclose(full.matrix, deformation_matrix(defo, 1.0))
    assert full.rank == m
    assert graph_factor_map(defo, 1.0, n, m + 5).rank == m  # at most m: R itself
    low = graph_factor_map(defo, 1.0, n, 4)
    ref = principal_map(defo, 1.0, 4, n)
    np.testing.assert_allclose(low.matrix, ref.matrix)
    assert (low.rank, low.mean_sq_norm) == (4, ref.mean_sq_norm)


# --------------------------------------------------------------------------- the regime


def _regime_by_rule(table, by_counts, level):
    """The regime the entry's rule takes from its held-out table: the counts' unless
    the rows only the other regime predicts right pass a one-sided sign test."""
    from scipy.stats import binomtest

    few_only, loo_only = int(table[0, 1]), int(table[1, 0])
    stay, switch = (few_only, loo_only) if by_counts else (loo_only, few_only)
    p = binomtest(switch, stay + switch, 0.5, alternative="greater").pvalue if switch else 1.0
    if switch > stay and p < level:
        return not by_counts
    return by_counts


@pytest.mark.parametrize("per_class", [3, 5, 15])
def test_the_regime_is_measured_on_held_out_labeled_rows(moons, per_class):
    from lorak.learn._few_labels import regime_test_level

    X, y = moons
    targets = _classes(_labels(y, per_class))
    fit = _entry(X, targets)
    level = regime_test_level(targets.codes, 2)
    table = fit.regime_table
    # each labeled row held out at most once; each regime right or wrong on it
    assert table.shape == (2, 2) and table.dtype.kind == "i" and np.all(table >= 0)
    held, rows = int(table.sum()), targets.rows.size
    assert 0 < held <= rows
    by_counts = few_labels(targets.codes, 2)
    assert fit.few_labels is _regime_by_rule(table, by_counts, level)
    if held < rows:  # the folds stopped: the rows left could not have overturned the counts
        best = table.copy()
        best[(1, 0) if by_counts else (0, 1)] += rows - held
        assert fit.few_labels is by_counts is _regime_by_rule(best, by_counts, level)
    assert fit.gamma_rule == ("few_labels" if fit.few_labels else "leave_one_out")


def test_stopping_the_folds_early_keeps_the_decision_of_all_folds(moons, monkeypatch):
    import lorak.learn._graph_entry as entry

    X, y = moons
    draws = [_classes(_labels(y, per_class, seed)) for per_class in (3, 6, 20) for seed in (0, 1)]
    early = [_entry(X, t) for t in draws]
    rule = entry._may_switch
    # never settled before the last fold: every fold runs
    monkeypatch.setattr(
        entry, "_may_switch", lambda b, c, left, level: left > 0 or rule(b, c, left, level)
    )
    full = [_entry(X, t) for t in draws]
    assert all(int(f.regime_table.sum()) == t.rows.size for f, t in zip(full, draws, strict=True))
    assert [f.few_labels for f in early] == [f.few_labels for f in full]
    assert any(int(f.regime_table.sum()) < t.rows.size for f, t in zip(early, draws, strict=True))


def test_classes_of_one_or_two_stay_in_every_fold_s_training_rows():
    from lorak.learn._graph_entry import _regime_folds

    codes = np.array([1, 0, 2, 1, 2, 0, 1, 3, 2, 1, 2, 2])  # class 0: two rows, 3: one
    scored = np.bincount(codes)[codes] >= 3
    folds = list(_regime_folds(codes, scored))
    assert len(folds) == 3
    tested = np.concatenate([test for _, test in folds])
    assert np.array_equal(np.sort(tested), np.flatnonzero(scored))  # each scored row once
    for train, test in folds:
        assert np.array_equal(np.sort(np.r_[train, test]), np.arange(codes.size))
        assert set(np.flatnonzero((codes == 0) | (codes == 3))) <= set(train)
        assert np.all(np.bincount(codes[train], minlength=4)[:3] >= 2)


def test_a_class_of_one_row_is_measured_beside_two_larger_classes(moons):
    X, y = moons
    y3 = np.where((y == 0) & (X[:, 0] < -0.2), 2, y)  # a third class: one moon's tip
    ys = _labels(y3, 5)
    ys[np.flatnonzero(ys == 2)[1:]] = -1  # class 2 keeps one labeled row
    fit = _entry(X, _classes(ys))
    assert fit.regime_table is not None
    assert 0 < int(fit.regime_table.sum()) <= 10  # its row is never held out


def test_the_counts_decide_where_nothing_is_measured(moons):
    X, y = moons
    ys = _labels(y, 3)
    ys[np.flatnonzero(ys == 1)[1:]] = -1  # class 1 keeps one labeled row: no fold
    fit = _entry(X, _classes(ys))
    assert fit.regime_table is None and fit.few_labels is True
    two = _entry(X, _classes(_labels(y, 2)))  # a fold would train on one row of a class
    assert two.regime_table is None and two.few_labels is True
    ys = _labels(y, 6)
    ys[np.flatnonzero(ys == 1)[2:]] = -1  # 2 and 6: one class could be held out
    one = _entry(X, _classes(ys))
    assert one.regime_table is None and one.few_labels is True
    rows = np.arange(0, y.size, 8)  # responses have no regime
    resp = _entry(X, SemiSupervisedTargets.of_responses(rows, X[rows, 0], y.size))
    assert resp.regime_table is None
    given = _entry(X, _classes(_labels(y, 5)), gamma=0.5)  # γ given: nothing chosen
    assert given.regime_table is None and given.few_labels is True
    from lorak.learn._few_labels import REGIME_MEASURED_BELOW

    many = _entry(X, _classes(_labels(y, REGIME_MEASURED_BELOW)))  # leave-one-out's range
    assert many.regime_table is None and many.few_labels is False
    below = _entry(X, _classes(_labels(y, REGIME_MEASURED_BELOW - 1)))
    assert below.regime_table is not None


@pytest.mark.parametrize("level", [0.0, 1.5])
def test_the_sign_test_level_bounds_the_switch(moons, monkeypatch, level):
    """Level 0: the counts' regime always stands; above 1: the regime with more rows
    only it predicts right wins (a tie keeps the counts')."""
    import lorak.learn._graph_entry as entry

    monkeypatch.setattr(entry, "regime_test_level", lambda codes, c: level)
    X, y = moons
    switched = 0
    for per_class, seed in ((4, 0), (4, 1), (12, 0), (12, 2)):
        targets = _classes(_labels(y, per_class, seed))
        fit = _entry(X, targets)
        by_counts = few_labels(targets.codes, 2)
        few_only, loo_only = fit.regime_table[0, 1], fit.regime_table[1, 0]
        if level == 0.0 or few_only == loo_only:
            assert fit.few_labels is by_counts
        else:
            assert fit.few_labels is bool(few_only > loo_only)
        switched += fit.few_labels is not by_counts
    assert (switched > 0) is (level > 1)  # on these draws the level decides a switch


def test_no_folds_turn_the_measurement_off(moons, monkeypatch):
    import lorak.learn._graph_entry as entry

    monkeypatch.setattr(entry, "REGIME_CV_FOLDS", 0)
    X, y = moons
    targets = _classes(_labels(y, 5))
    fit = _entry(X, targets)
    assert fit.regime_table is None and fit.few_labels is True  # 5 per class: the counts


@pytest.mark.parametrize("prior", [None, (0.8, 0.2)])
def test_the_regime_s_heads_read_a_given_prior(moons, monkeypatch, prior):
    """Both regimes' heads are scored as the model fits them: the self-trained ridge
    under the given prior, the linear heads with the fold's classes weighted by it."""
    import lorak.learn._heads as heads
    from lorak.learn._heads import prior_class_weights

    X, y = moons
    targets = _classes(_labels(y, 6))
    given = None if prior is None else np.asarray(prior)
    targets = dataclasses.replace(targets, class_prior=given)
    seen = {"few": [], "loo": []}
    few, loo = heads.few_label_head_codes, heads.linear_head_hits

    def few_spy(Q_l, codes_l, Q_u, alpha, c, Q, prior=None):
        seen["few"].append(prior)
        return few(Q_l, codes_l, Q_u, alpha, c, Q, prior)

    def loo_spy(Q_l, codes_l, alpha, train, test, sample_weight=None):
        seen["loo"].append((codes_l, train, sample_weight))
        return loo(Q_l, codes_l, alpha, train, test, sample_weight)

    monkeypatch.setattr(heads, "few_label_head_codes", few_spy)
    monkeypatch.setattr(heads, "linear_head_hits", loo_spy)
    fit = _entry(X, targets)
    assert fit.regime_table is not None and seen["few"] and len(seen["few"]) == len(seen["loo"])
    for p, (codes, train, w) in zip(seen["few"], seen["loo"], strict=True):
        if given is None:
            assert p is None and w is None
            continue
        np.testing.assert_array_equal(p, given)
        expected = prior_class_weights(given, np.bincount(codes[train], minlength=2))[codes]
        np.testing.assert_allclose(w, expected)
        assert not np.allclose(w, 1.0)  # 6 and 6 labeled, told 4 to 1: weighted


def test_the_folds_weigh_the_classes_by_the_prior_over_their_own_counts():
    from lorak.learn._graph_entry import _fold_weights

    codes = np.array([0, 0, 0, 1, 1, 1, 1, 2, 2])
    train = np.arange(codes.size)
    assert _fold_weights(None, codes, train, 3) is None
    # a share of 0 is refused by the classifier before any fold; here it is plain math
    np.testing.assert_allclose(
        _fold_weights(np.array([0.0, 0.5, 0.5]), codes, train, 3),
        np.r_[[0.0] * 3, [9 / 8] * 4, [9 / 4] * 2],
    )
    assert _fold_weights(np.array([3, 4, 2]) / 9, codes, train, 3) is None  # as they came
    w = _fold_weights(np.array([0.5, 0.25, 0.25]), codes, train[:7], 3)  # class 2 held out
    np.testing.assert_allclose(w, np.r_[[0.5 * 7 / 3] * 3, [0.25 * 7 / 4] * 4, [0.25 * 7] * 2])


def test_the_sign_test_asks_more_the_farther_the_counts_stand_from_their_switch():
    from lorak.learn._few_labels import (
        LEAVE_ONE_OUT_MIN_LABELED,
        MIN_LABELS_PER_CLASS,
        REGIME_LEVEL_AT_SWITCH,
        REGIME_TEST_LEVEL,
        regime_test_level,
    )

    def codes(*counts):
        return np.repeat(np.arange(len(counts)), counts)

    def level(*counts):
        return regime_test_level(codes(*counts), len(counts))

    k, total = MIN_LABELS_PER_CLASS, LEAVE_ONE_OUT_MIN_LABELED
    assert level(k, k) == pytest.approx(REGIME_LEVEL_AT_SWITCH)
    # half and twice the switch, and beyond: the fixed level; between, above it
    assert level(k // 2, k // 2) == pytest.approx(REGIME_TEST_LEVEL)
    assert level(2 * k, 2 * k) == pytest.approx(REGIME_TEST_LEVEL)
    assert REGIME_TEST_LEVEL < level(k - 1, k - 1) < REGIME_LEVEL_AT_SWITCH
    assert level(3, 3) == level(3 * k, 3 * k) == pytest.approx(REGIME_TEST_LEVEL)  # beyond
    # the smallest class decides (and the total, while every class has two rows)
    drop = REGIME_TEST_LEVEL / REGIME_LEVEL_AT_SWITCH  # per doubling
    assert level(5, 40) == pytest.approx(REGIME_LEVEL_AT_SWITCH * drop ** np.log2(45 / total))
    many = [2] * 14 + [total - 28]  # 15 classes, the total at the switch
    assert level(*many) == pytest.approx(REGIME_LEVEL_AT_SWITCH)
    assert level(1, *many[1:]) == pytest.approx(REGIME_TEST_LEVEL)  # a class of one
    # below the switch (9 and 10, 29 rows of 15 classes), at it, or far from it
    assert level(k - 1, k) < REGIME_LEVEL_AT_SWITCH
    assert level(*([2] * 14 + [total - 29])) < REGIME_LEVEL_AT_SWITCH
    assert level(1, 40) == pytest.approx(REGIME_TEST_LEVEL)


@pytest.mark.parametrize("per_class", [1, 5, 15])
@pytest.mark.parametrize("regime", ["few_labels", "leave_one_out"])
def test_a_forced_regime_is_taken_whatever_the_counts_and_not_measured(moons, per_class, regime):
    X, y = moons
    targets = _classes(_labels(y, per_class))
    fit = _entry(X, targets, regime=regime)
    assert fit.few_labels is (regime == "few_labels")
    assert fit.gamma_rule == regime and fit.regime_table is None
    if regime == "few_labels":
        assert fit.penalty == FEW_LABELS_PENALTY and fit.loo_scores is None
    else:  # γ, the penalty and the rank from the labeled rows' leave-one-out table
        assert fit.loo_scores is not None and fit.rank_scores is not None
        assert fit.penalty > 0
        assert np.all(np.isfinite(fit.components))


def test_a_forced_regime_equals_the_counts_regime_where_they_agree(moons):
    """At 30 per class the counts take leave-one-out (and measure nothing above 29):
    forcing it changes nothing; at 2 per class (nothing measured: two rows a class)
    the counts take the few-label rules, and forcing them changes nothing either."""
    X, y = moons
    for per_class, regime in ((30, "leave_one_out"), (2, "few_labels")):
        targets = _classes(_labels(y, per_class))
        auto, forced = _entry(X, targets), _entry(X, targets, regime=regime)
        assert auto.regime_table is None
        assert (auto.gamma, auto.penalty, auto.rank) == (forced.gamma, forced.penalty, forced.rank)
        np.testing.assert_allclose(forced.components, auto.components, rtol=1e-12, atol=1e-12)


def test_a_forced_regime_needs_class_labels(moons):
    X, y = moons
    responses = np.full(y.size, np.nan)
    responses[:20] = X[:20, 0]
    rows = np.flatnonzero(~np.isnan(responses))
    t = SemiSupervisedTargets.of_responses(rows, responses[rows], y.size)
    with pytest.raises(ValueError, match="y holds responses"):
        _entry(X, t, regime="few_labels")
    with pytest.raises(ValueError, match="no y was given"):
        _entry(X, None, gamma=1.0, regime="leave_one_out")
    with pytest.raises(ValueError, match="regime must be one of"):
        _entry(X, _classes(_labels(y, 5)), regime="loo")

"""The few-label math: the class prior, class-mass offsets, the self-trained ridge, the
graph's energy ratio."""

import numpy as np
import pytest
import scipy.sparse as sp

from lorak.learn import (
    LEAVE_ONE_OUT_MIN_LABELED,
    MATCHED_PRIOR_MAX_CLASSES,
    MIN_LABELS_PER_CLASS,
    estimate_class_prior,
    few_labels,
    prior_from_counts,
    self_training_ridge,
)
from lorak.learn._few_labels import balance_offsets, class_mass_reading, graph_energy_ratio
from lorak.learn._graph_factor import graph_laplacian_gram


def test_few_labels_counts_the_smallest_class():
    small = MIN_LABELS_PER_CLASS - 1
    codes = np.r_[np.zeros(LEAVE_ONE_OUT_MIN_LABELED - small - 1, int), np.ones(small, int)]
    assert few_labels(codes)  # a class under 10, and under 30 labeled rows in all
    codes = np.r_[np.zeros(5, int), np.ones(MIN_LABELS_PER_CLASS, int)]
    assert few_labels(codes)
    codes = np.r_[np.zeros(MIN_LABELS_PER_CLASS, int), np.ones(MIN_LABELS_PER_CLASS, int)]
    assert not few_labels(codes)
    # a class with no labeled row at all counts as few
    assert few_labels(np.zeros(30, int), n_classes=2)


def test_few_labels_many_classes_with_enough_rows_in_all():
    """11 classes and 100 labels leave every class under 10 rows; leave-one-out still
    averages over 100 rows, so they are not few. A class of one row is."""
    codes = np.repeat(np.arange(11), 9)
    assert codes.size >= LEAVE_ONE_OUT_MIN_LABELED
    assert not few_labels(codes)
    assert few_labels(np.r_[codes, 11], n_classes=12)  # class 11 has one row
    two = np.repeat(np.arange(15), 2)  # 30 rows, two per class
    assert not few_labels(two)
    assert few_labels(two[:-1])  # 29 rows


def _blobs(rng, sizes, centres):
    X = np.concatenate([rng.normal(c, 1.0, (k, 4)) for k, c in zip(sizes, centres, strict=True)])
    y = np.repeat(np.arange(len(sizes)), sizes)
    return X, y


@pytest.mark.parametrize("draw", ["even", "random"])
def test_estimate_class_prior_reads_the_unlabeled_rows(draw):
    """Separated classes at 80/20: the mean of the unlabeled rows puts the prior near
    0.8 whether the 10 labels were drawn evenly (their counts say nothing) or at
    random, where the counts alone keep equal classes."""
    rng = np.random.default_rng(0)
    X, y = _blobs(rng, (800, 200), (0.0, 5.0))
    if draw == "even":
        lab = np.r_[rng.choice(800, 5, replace=False), 800 + rng.choice(200, 5, replace=False)]
    else:
        lab = np.r_[rng.choice(800, 8, replace=False), 800 + rng.choice(200, 2, replace=False)]
    unl = np.setdiff1d(np.arange(1000), lab)
    X0 = X.copy()
    est = estimate_class_prior(X[lab], y[lab], X[unl])
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_allclose(est.labeled, (0.5, 0.5))  # p = 0.11 at 8/2: no rejection
    assert est.weight > 0.9
    assert abs(est.prior[0] - 0.8) < 0.08  # two rows of the small class: its mean is noisy
    np.testing.assert_allclose(est.prior.sum(), 1.0)


def test_estimate_class_prior_three_classes_keep_the_counts_reading():
    """More than two classes: the counts' reading (the match is not used)."""
    rng = np.random.default_rng(1)
    X, y = _blobs(rng, (600, 300, 100), (0.0, 5.0, -5.0))
    lab = np.concatenate([np.flatnonzero(y == k)[:8] for k in range(3)])
    unl = np.setdiff1d(np.arange(y.size), lab)
    est = estimate_class_prior(X[lab], y[lab], X[unl])
    assert MATCHED_PRIOR_MAX_CLASSES == 2
    assert est.weight == 0.0
    np.testing.assert_allclose(est.prior, prior_from_counts(np.array([8, 8, 8])))


def test_estimate_class_prior_falls_back_on_the_counts_without_signal():
    """Two classes with the same distribution: the match is noise, the bootstrap says
    so, and the counts' reading (equal classes at 6/4) stays."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(1000, 4))
    y = np.r_[np.zeros(500, int), np.ones(500, int)]
    lab = np.r_[np.arange(6), 500 + np.arange(4)]
    unl = np.setdiff1d(np.arange(1000), lab)
    est = estimate_class_prior(X[lab], y[lab], X[unl])
    assert est.weight < 0.5
    assert abs(est.prior[0] - 0.5) < 0.1


def test_estimate_class_prior_one_row_per_class_and_no_unlabeled_rows():
    rng = np.random.default_rng(3)
    X, y = _blobs(rng, (700, 300), (0.0, 6.0))
    lab = np.array([0, 700])
    unl = np.setdiff1d(np.arange(1000), lab)
    # no class has two rows: the unlabeled rows' spread (between the classes too)
    # stands for the classes' own, a noise that swamps the match: the counts' reading
    est = estimate_class_prior(X[lab], y[lab], X[unl])
    assert est.noise > est.signal and est.weight == 0.0
    np.testing.assert_allclose(est.prior, (0.5, 0.5))
    none = estimate_class_prior(X[lab], y[lab], None)
    np.testing.assert_allclose(none.prior, (0.5, 0.5))
    assert none.weight == 0.0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"F_l": np.ones((3, 2)), "codes_l": [0, 1], "F_u": np.ones((4, 2))}, "codes_l has 2"),
        ({"F_l": np.ones((2, 2)), "codes_l": [0, 1], "F_u": np.ones((4, 3))}, "F_u has 3 columns"),
        ({"F_l": [[np.nan, 1.0], [0, 1]], "codes_l": [0, 1], "F_u": np.ones((4, 2))}, "F_l"),
        (
            {"F_l": np.ones((2, 2)), "codes_l": [0, 1], "F_u": np.ones((4, 2)), "n_boot": 0},
            "n_boot",
        ),
        ({"F_l": np.ones((2, 2)), "codes_l": [0, -1], "F_u": np.ones((4, 2))}, "codes_l"),
    ],
)
def test_estimate_class_prior_names_bad_input(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        estimate_class_prior(**kwargs)


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        ((5, 5), (0.5, 0.5)),
        ((2, 8), (0.5, 0.5)),  # p = 0.11: not evidence enough against equal classes
        ((1, 9), (0.1, 0.9)),  # p = 0.021: the labeled proportions
        ((20, 80), (0.2, 0.8)),
        ((30, 35, 35), (1 / 3, 1 / 3, 1 / 3)),
        ((10, 10, 80), (0.1, 0.1, 0.8)),
    ],
)
def test_prior_from_counts_is_uniform_unless_the_counts_reject_it(counts, expected):
    np.testing.assert_allclose(prior_from_counts(np.array(counts)), expected)


def test_class_prior_is_a_deprecated_alias_of_prior_from_counts():
    with pytest.warns(DeprecationWarning, match="prior_from_counts"):
        from lorak.learn import class_prior
    got = class_prior(np.array([1, 9]), level=0.05)
    np.testing.assert_allclose(got, prior_from_counts(np.array([1, 9])))


def test_balance_offsets_two_classes_give_the_prior_exactly():
    rng = np.random.default_rng(0)
    D = rng.standard_normal((1000, 2)) + np.array([1.0, 0.0])  # skewed to class 0
    for p0 in (0.5, 0.2, 0.8):
        b = balance_offsets(D, np.array([p0, 1 - p0]))
        pred = np.argmax(D + b, axis=1)
        assert abs(np.mean(pred == 0) - p0) <= 1.5 / D.shape[0]


def test_balance_offsets_many_classes_match_the_prior():
    rng = np.random.default_rng(1)
    D = rng.standard_normal((3000, 4)) + np.array([0.8, 0.0, -0.3, 0.2])
    prior = np.array([0.1, 0.2, 0.3, 0.4])
    b = balance_offsets(D, prior)
    got = np.bincount(np.argmax(D + b, axis=1), minlength=4) / D.shape[0]
    np.testing.assert_allclose(got, prior, atol=0.01)
    assert D.flags.writeable and not np.shares_memory(b, D)


def _dense_weighted_ridge(F, T, w, alpha):
    """The weighted ridge with an unpenalized intercept by one dense solve over the
    augmented features [F, 1]."""
    A = np.c_[F, np.ones(F.shape[0])]
    P = np.eye(A.shape[1]) * alpha
    P[-1, -1] = 0.0
    sol = np.linalg.solve(A.T @ (A * w[:, None]) + P, A.T @ (T * w[:, None]))
    return sol[:-1], sol[-1]


def test_self_training_without_steps_is_the_ridge_read_under_the_prior():
    rng = np.random.default_rng(2)
    F_l, F_u = rng.standard_normal((12, 5)), rng.standard_normal((200, 5))
    codes = np.r_[np.zeros(6, int), np.ones(6, int)]
    fit = self_training_ridge(F_l, codes, F_u, 0.3, weights=())
    T = -np.ones((12, 2))
    T[np.arange(12), codes] = 1.0
    W, b = _dense_weighted_ridge(F_l, T, np.ones(12), 0.3)
    D = F_u @ W + b
    off = balance_offsets(D, np.array([0.5, 0.5]))
    np.testing.assert_allclose(fit.coef, W.T, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(fit.intercept, b + off, rtol=1e-9, atol=1e-12)


def test_each_self_training_step_is_the_weighted_ridge_on_its_labels():
    rng = np.random.default_rng(3)
    F_l, F_u = rng.standard_normal((10, 4)), rng.standard_normal((150, 4))
    codes = np.r_[np.zeros(5, int), np.ones(5, int)]
    one = self_training_ridge(F_l, codes, F_u, 0.1, weights=())
    labels = np.argmax(F_u @ one.coef.T + one.intercept, axis=1)
    two = self_training_ridge(F_l, codes, F_u, 0.1, weights=(0.25,))
    T = -np.ones((160, 2))
    T[np.arange(160), np.r_[codes, labels]] = 1.0
    w = np.r_[np.ones(10), np.full(150, 0.25)]
    W, b = _dense_weighted_ridge(np.vstack([F_l, F_u]), T, w, 0.1)
    np.testing.assert_allclose(two.coef, W.T, rtol=1e-8, atol=1e-12)
    off = balance_offsets(F_u @ W + b, two.prior)
    np.testing.assert_allclose(two.intercept, b + off, rtol=1e-8, atol=1e-12)
    assert len(two.n_changed) == 1


def test_self_training_follows_two_clusters_from_one_label_each():
    rng = np.random.default_rng(4)
    centres = np.array([[-3.0, 0.0], [3.0, 0.0]])
    y = np.repeat([0, 1], 200)
    X = centres[y] + rng.standard_normal((400, 2))
    F = np.c_[X, X**2]  # any feature map with the clusters in it
    lab = np.array([0, 399])
    fit = self_training_ridge(F[lab], y[lab], np.delete(F, lab, axis=0), 0.1)
    pred = np.argmax(F @ fit.coef.T + fit.intercept, axis=1)
    assert np.mean(pred == y) > 0.97


def test_inputs_are_not_modified():
    rng = np.random.default_rng(5)
    F_l, F_u = rng.standard_normal((8, 3)), rng.standard_normal((40, 3))
    F_l.flags.writeable = False
    F_u.flags.writeable = False
    codes = np.r_[np.zeros(4, int), np.ones(4, int)]
    codes.flags.writeable = False
    self_training_ridge(F_l, codes, F_u, 0.1)
    D = rng.standard_normal((40, 3))
    D.flags.writeable = False
    balance_offsets(D, np.full(3, 1 / 3))


def test_graph_energy_ratio_is_one_for_random_edges_and_small_for_neighbours():
    rng = np.random.default_rng(6)
    n = 600
    X = np.r_[rng.normal(-4, 1, (n // 2, 2)), rng.normal(4, 1, (n // 2, 2))]
    G = np.exp(-((X[:, None, :] - X[None, :40, :]) ** 2).sum(-1) / 4.0)  # kernel rows
    from lorak.learn import knn_graph

    A = knn_graph(X, 10)
    GtG, H = graph_laplacian_gram(G, A)
    near = graph_energy_ratio(GtG, H, G.mean(axis=0), n)
    perm = rng.permutation(n)  # the same degrees, edges between random rows
    P = sp.csr_matrix((np.ones(n), (np.arange(n), perm)), shape=(n, n))
    A_rand = P @ A @ P.T
    _, H_rand = graph_laplacian_gram(G, A_rand)
    far = graph_energy_ratio(GtG, H_rand, G.mean(axis=0), n)
    assert near < 0.2
    assert 0.8 < far < 1.2


def test_graph_energy_ratio_of_constant_rows_is_nan():
    G = np.ones((10, 3))
    assert np.isnan(graph_energy_ratio(G.T @ G, np.zeros((3, 3)), G.mean(axis=0), 10))


# --------------------------------------------------------------------- issue 47


def _shares_off(D, b, prior):
    """Each class's count under argmax(D + b) less n·π (in rows)."""
    n, c = D.shape
    counts = np.bincount(np.argmax(D + b, axis=1), minlength=c)
    return counts - n * np.asarray(prior) / np.sum(prior)


def _scores(kind, n, c, rng):
    if kind == "random":
        return rng.standard_normal((n, c))
    if kind == "separated":  # blobs of unequal sizes, far from the prior
        lab = rng.choice(c, n, p=rng.dirichlet(np.ones(c)))
        D = -np.ones((n, c))
        D[np.arange(n), lab] = 1.0
        return D + 0.2 * rng.standard_normal((n, c))
    # a ridge's scores: a few directions, so the classes' scores are correlated
    return rng.standard_normal((n, 3)) @ rng.standard_normal((3, c))


@pytest.mark.parametrize("c", [3, 5, 10])
@pytest.mark.parametrize("kind", ["random", "separated", "low_rank"])
def test_balance_offsets_many_classes_hit_the_prior_to_one_row(c, kind):
    """Cause 8: with three classes and more the offsets give the prior's counts to one
    row, as the two-class quantile does (the entropic transport missed it by 4 %)."""
    rng = np.random.default_rng(c)
    for n in (50, 997, 4000):
        D = _scores(kind, n, c, rng)
        priors = (np.full(c, 1.0 / c), rng.dirichlet(np.ones(c)), rng.dirichlet(np.ones(c) / 4))
        for prior in priors:
            b = balance_offsets(D, prior)
            assert b.shape == (c,) and np.all(np.isfinite(b))
            assert np.max(np.abs(_shares_off(D, b, prior))) < 1.0 + 1e-9, (n, prior)


@pytest.mark.parametrize("prior", [[0.25, 0.25, 0.5], [0.2, 0.2, 0.6]])
def test_balance_offsets_three_separated_blobs(prior):
    """The issue's reproducer: three separated blobs of equal size read under a prior
    that is not theirs (it had given [0.282, 0.278, 0.44] for [0.25, 0.25, 0.5])."""
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 400)
    D = -np.ones((1200, 3))
    D[np.arange(1200), y] = 1.0
    D += 0.3 * rng.standard_normal(D.shape)
    b = balance_offsets(D, np.array(prior))
    assert np.max(np.abs(_shares_off(D, b, prior))) < 1.0 + 1e-9


def test_balance_offsets_twenty_classes_on_twenty_thousand_rows():
    rng = np.random.default_rng(7)
    D = _scores("low_rank", 20_000, 20, rng)
    prior = rng.dirichlet(np.ones(20))
    b = balance_offsets(D, prior)
    assert np.max(np.abs(_shares_off(D, b, prior))) < 1.0 + 1e-9


def test_balance_offsets_as_close_as_ties_allow():
    """Rows that are each repeated (the same scores) go to one class together: the
    counts move in steps of the repeats, and the offsets find counts within a step of
    the prior's. A class of prior 0 gets no row; a prior is normalized."""
    rng = np.random.default_rng(3)
    D = np.repeat(rng.standard_normal((300, 4)), 3, axis=0)
    prior = np.array([0.1, 0.2, 0.3, 0.4])
    b = balance_offsets(D, prior)
    assert np.max(np.abs(_shares_off(D, b, prior))) <= 3.0
    b = balance_offsets(D, np.array([0.0, 1.0, 1.0, 2.0]))
    off = _shares_off(D, b, [0.0, 0.25, 0.25, 0.5])
    assert np.max(np.abs(off)) <= 3.0 and np.all(np.argmax(D + b, axis=1) != 0)
    # every row the same: all of them in one class, whatever the prior
    same = np.ones((40, 3))
    counts = np.bincount(np.argmax(same + balance_offsets(same, [0.2, 0.3, 0.5]), 1), minlength=3)
    assert sorted(counts) == [0, 0, 40]


def test_self_training_with_three_classes_keeps_the_prior_on_the_unlabeled_rows():
    rng = np.random.default_rng(5)
    centres = np.array([[-4.0, 0.0], [4.0, 0.0], [0.0, 5.0]])
    y = np.repeat([0, 1, 2], 300)
    X = centres[y] + rng.standard_normal((900, 2))
    F = np.c_[X, X**2, X[:, :1] * X[:, 1:]]
    lab = np.array([0, 1, 300, 301, 600, 601])
    prior = np.array([0.25, 0.25, 0.5])
    F_u = np.delete(F, lab, axis=0)
    fit = self_training_ridge(F[lab], y[lab], F_u, 0.1, prior=prior)
    pred = np.argmax(F_u @ fit.coef.T + fit.intercept, axis=1)
    shares = np.bincount(pred, minlength=3) / F_u.shape[0]
    np.testing.assert_allclose(shares, prior, atol=1.0 / F_u.shape[0] + 1e-12)


def _unequal_blobs(seed, sizes=(600, 150, 150)):
    """Three separated clusters of unequal sizes in a feature map, two labeled rows each."""
    rng = np.random.default_rng(seed)
    centres = np.array([[-4.0, 0.0], [4.0, 0.0], [0.0, 5.0]])
    y = np.repeat([0, 1, 2], sizes)
    X = centres[y] + rng.standard_normal((y.size, 2))
    F = np.c_[X, X**2, X[:, :1] * X[:, 1:]]
    starts = np.cumsum((0, *sizes[:-1]))
    lab = np.sort(np.r_[starts, starts + 1])
    return F, y, lab


def test_normalized_class_mass_gives_each_class_its_prior_mass():
    # the reading is (D − shift)·scale with the shifted scores' column means at the prior:
    # recompute it from the returned fit's last ridge (the coef before the reading)
    F, y, lab = _unequal_blobs(6)
    F_u = np.delete(F, lab, axis=0)
    prior = np.array([0.5, 0.3, 0.2])
    fit = self_training_ridge(F[lab], y[lab], F_u, 0.1, prior=prior, class_mass="normalized")
    read = F_u @ fit.coef.T + fit.intercept
    assert np.all(read > 0)  # every column shifted to start just above zero
    np.testing.assert_allclose(read.mean(axis=0), prior, rtol=1e-9)


def test_normalized_class_mass_follows_clusters_of_unequal_sizes():
    # a uniform prior read exactly moves a third of the large cluster (4:1:1) into the
    # small ones; read as masses, the scores keep more of it (over 8 draws: about 0.36
    # against 0.22 of the rows wrong)
    errs = []
    for seed in range(7, 15):
        F, y, lab = _unequal_blobs(seed)
        F_u, y_u = np.delete(F, lab, axis=0), np.delete(y, lab)
        uniform = np.full(3, 1 / 3)
        fits = [
            self_training_ridge(F[lab], y[lab], F_u, 0.1, prior=uniform, class_mass=mass)
            for mass in ("exact", "normalized")
        ]
        errs.append([np.mean(np.argmax(F_u @ f.coef.T + f.intercept, axis=1) != y_u) for f in fits])
    err_exact, err_mass = np.mean(errs, axis=0)
    assert err_exact > 0.3
    assert err_mass < err_exact - 0.1


def test_a_given_prior_is_read_exactly_by_default():
    F, y, lab = _unequal_blobs(8)
    F_u = np.delete(F, lab, axis=0)
    one = self_training_ridge(F[lab], y[lab], F_u, 0.1, prior=np.full(3, 1 / 3))
    two = self_training_ridge(F[lab], y[lab], F_u, 0.1, prior=np.full(3, 1 / 3), class_mass="exact")
    assert one.class_mass == "exact"
    np.testing.assert_array_equal(one.coef, two.coef)
    np.testing.assert_array_equal(one.intercept, two.intercept)


def test_the_counts_reading_of_three_classes_is_read_as_masses_unless_labels_object():
    # "auto" takes the class masses unless they predict fewer labeled rows right than
    # exact shares; the draws cover both outcomes
    taken = set()
    for seed in range(7, 15):
        F, y, lab = _unequal_blobs(seed)
        F_u = np.delete(F, lab, axis=0)
        auto = self_training_ridge(F[lab], y[lab], F_u, 0.1)
        fits = {
            m: self_training_ridge(F[lab], y[lab], F_u, 0.1, class_mass=m)
            for m in ("normalized", "exact")
        }
        wrong = {
            m: np.sum(np.argmax(F[lab] @ f.coef.T + f.intercept, axis=1) != y[lab])
            for m, f in fits.items()
        }
        expected = "exact" if wrong["exact"] < wrong["normalized"] else "normalized"
        assert auto.class_mass == expected
        np.testing.assert_array_equal(auto.coef, fits[expected].coef)
        np.testing.assert_array_equal(auto.intercept, fits[expected].intercept)
        assert auto.estimate is not None
        taken.add(expected)
    assert taken == {"exact", "normalized"}
    # two classes: the prior is measured from the unlabeled rows, and read exactly
    F, y, lab = _unequal_blobs(9)
    two = y[lab] < 2
    rows = np.isin(np.arange(y.size), lab) | (y == 2)
    fit = self_training_ridge(F[lab][two], y[lab][two], F[~rows], 0.1)
    assert fit.class_mass == "exact"


@pytest.mark.parametrize(
    ("mass", "c", "given", "expected"),
    [
        ("auto", 2, False, ("exact",)),
        ("auto", 3, False, ("normalized", "exact")),
        ("auto", 3, True, ("exact",)),
        ("auto", MATCHED_PRIOR_MAX_CLASSES, False, ("exact",)),
        ("exact", 5, False, ("exact",)),
        ("normalized", 2, True, ("normalized",)),
    ],
)
def test_class_mass_reading(mass, c, given, expected):
    assert class_mass_reading(mass, c, prior_given=given) == expected


# ------------------------------------------- the public functions' checks (issue 47)
# Every function of the few-label and graph-factor modules of lorak.learn that the graph
# factor's entry and the semi-supervised models call: bad input gets an error that
# names the function and the argument, never a message from deep in NumPy; good input
# is never modified.


def _defo(m=6, seed=0):
    from lorak.learn._graph_factor import deformation

    rng = np.random.default_rng(seed)
    G = rng.standard_normal((50, m))
    A = rng.standard_normal((m, m))
    return deformation(G.T @ G, A @ A.T, n_rows=50), G


def _good():
    rng = np.random.default_rng(9)
    defo, G = _defo()
    codes = np.r_[np.zeros(4, int), np.ones(4, int)]
    from lorak.learn._graph_factor import ridge_targets

    T = ridge_targets(codes, 2)
    return {
        "F_l": rng.standard_normal((8, 3)),
        "F_u": rng.standard_normal((30, 3)),
        "codes": codes,
        "D": rng.standard_normal((20, 3)),
        "defo": defo,
        "G_l": G[:8],
        "T": T,
        "gram": G.T @ G,
        "H": np.diag(defo.eigenvalues),
        "mean": G.mean(axis=0),
    }


def _call(name, **over):
    """Call the function ``name`` on good arguments with ``over`` replacing some."""
    from types import SimpleNamespace

    from lorak.learn import _few_labels, _graph_factor

    learn = SimpleNamespace(**{**vars(_graph_factor), **vars(_few_labels)})

    g = _good()
    calls = {
        "few_labels": lambda a: learn.few_labels(a.get("codes_l", g["codes"]), a.get("n_classes")),
        "prior_from_counts": lambda a: learn.prior_from_counts(
            a.get("counts", [3, 5]), level=a.get("level", 0.05)
        ),
        "graph_energy_ratio": lambda a: learn.graph_energy_ratio(
            a.get("gram", g["gram"]),
            a.get("laplacian_gram", g["H"]),
            a.get("mean_row", g["mean"]),
            a.get("n_rows", 50),
        ),
        "balance_offsets": lambda a: learn.balance_offsets(
            a.get("D", g["D"]), a.get("prior", [0.2, 0.3, 0.5]), n_iter=a.get("n_iter", 200)
        ),
        "self_training_ridge": lambda a: learn.self_training_ridge(
            a.get("F_l", g["F_l"]),
            a.get("codes_l", g["codes"]),
            a.get("F_u", g["F_u"]),
            a.get("alpha", 0.1),
            n_classes=a.get("n_classes"),
            prior=a.get("prior"),
            weights=a.get("weights", (0.1, 1.0)),
            class_mass=a.get("class_mass", "exact"),
        ),
        "ridge_targets": lambda a: learn.ridge_targets(
            a.get("codes", g["codes"]), a.get("n_classes", 2)
        ),
        "select_gamma_penalty": lambda a: learn.select_gamma_penalty(
            a.get("G_labeled", g["G_l"]),
            a.get("defo", g["defo"]),
            a.get("targets", g["T"]),
            a.get("n_rows", 50),
            ts=a.get("ts", (0.0, 1.0)),
            alphas=a.get("alphas", (0.1, 1.0)),
            rule=a.get("rule", "gated"),
        ),
        "select_rank": lambda a: learn.select_rank(
            a.get("G_labeled", g["G_l"]),
            a.get("defo", g["defo"]),
            a.get("t", 1.0),
            a.get("targets", g["T"]),
            a.get("n_rows", 50),
            ranks=a.get("ranks", (6, 3, 2)),
            alphas=a.get("alphas", (0.1, 1.0)),
        ),
        "principal_map": lambda a: learn.principal_map(
            a.get("defo", g["defo"]), a.get("t", 1.0), a.get("rank", 2), a.get("n_rows", 50)
        ),
        "rank_candidates": lambda a: learn.rank_candidates(a.get("m", 60), a.get("n_classes", 2)),
        "deformation": lambda a: learn.deformation(
            a.get("GtG", g["gram"]), a.get("H", g["H"]), a.get("n_rows", 50)
        ),
        "deformation_matrix": lambda a: learn.deformation_matrix(
            a.get("defo", g["defo"]), a.get("t", 1.0)
        ),
        "loo_ridge_scores": lambda a: learn.loo_ridge_scores(
            a.get("F", g["G_l"]), a.get("Y", g["T"]), a.get("alphas", (0.1, 1.0))
        ),
    }
    return calls[name](over)


_NAN3 = np.array([[np.nan, 0.0, 0.0]] * 4)
BAD = [
    # (function, argument, bad value)
    ("few_labels", "codes_l", np.array([0, -1, 1])),
    ("few_labels", "codes_l", np.array([0.5, 1.0])),
    ("few_labels", "codes_l", np.array(["a", "b"])),
    ("few_labels", "codes_l", np.zeros((2, 2), int)),
    ("few_labels", "n_classes", 1.5),
    ("few_labels", "n_classes", 0),
    ("few_labels", "codes_l", np.array([0, 1, 5])),  # with n_classes=2 below
    ("prior_from_counts", "counts", [3, -1]),
    ("prior_from_counts", "counts", [2.5, 3]),
    ("prior_from_counts", "counts", []),
    ("prior_from_counts", "counts", [[1, 2]]),
    ("prior_from_counts", "counts", ["a", "b"]),
    ("prior_from_counts", "counts", [np.nan, 2]),
    ("prior_from_counts", "level", 0.0),
    ("prior_from_counts", "level", 1.5),
    ("prior_from_counts", "level", "0.05"),
    ("graph_energy_ratio", "gram", np.ones((3, 4))),
    ("graph_energy_ratio", "laplacian_gram", np.ones((5, 5))),
    ("graph_energy_ratio", "mean_row", np.ones(5)),
    ("graph_energy_ratio", "mean_row", np.full(6, np.nan)),
    ("graph_energy_ratio", "n_rows", 0),
    ("graph_energy_ratio", "n_rows", 2.5),
    ("balance_offsets", "D", np.ones(5)),
    ("balance_offsets", "D", _NAN3),
    ("balance_offsets", "D", np.full((4, 3), "x")),
    ("balance_offsets", "D", sp.csr_matrix(np.ones((4, 3)))),
    ("balance_offsets", "prior", [0.5, 0.5]),
    ("balance_offsets", "prior", [0.5, -0.2, 0.7]),
    ("balance_offsets", "prior", [0.0, 0.0, 0.0]),
    ("balance_offsets", "prior", [np.nan, 0.5, 0.5]),
    ("balance_offsets", "prior", "uniform"),
    ("balance_offsets", "n_iter", 0),
    ("balance_offsets", "n_iter", 2.0),
    ("self_training_ridge", "F_l", np.ones(8)),
    ("self_training_ridge", "F_l", np.full((8, 3), np.inf)),
    ("self_training_ridge", "F_u", np.ones((30, 4))),
    ("self_training_ridge", "F_u", np.full((3, 3), np.nan)),
    ("self_training_ridge", "codes_l", np.zeros(8, int)),
    ("self_training_ridge", "codes_l", np.r_[np.zeros(4, int), np.ones(3, int)]),
    ("self_training_ridge", "codes_l", np.r_[np.zeros(4, int), -np.ones(4, int)]),
    ("self_training_ridge", "codes_l", np.array(list("aaaabbbb"))),
    ("self_training_ridge", "alpha", np.nan),
    ("self_training_ridge", "alpha", -1.0),
    ("self_training_ridge", "class_mass", "balanced"),
    ("self_training_ridge", "class_mass", None),
    ("self_training_ridge", "class_mass", np.array(["exact", "auto"])),
    ("self_training_ridge", "alpha", 0.0),
    ("self_training_ridge", "alpha", "0.1"),
    ("self_training_ridge", "alpha", True),
    ("self_training_ridge", "n_classes", 1),
    ("self_training_ridge", "prior", [0.5, 0.3, 0.2]),
    ("self_training_ridge", "prior", [-0.5, 1.5]),
    ("self_training_ridge", "weights", 0.5),
    ("self_training_ridge", "weights", (0.1, np.nan)),
    ("self_training_ridge", "weights", (0.1, -1.0)),
    ("ridge_targets", "codes", np.array([0, 2])),
    ("ridge_targets", "codes", np.array([0, -1])),
    ("ridge_targets", "codes", np.array([0.0, 0.5])),
    ("ridge_targets", "n_classes", 0),
    ("ridge_targets", "n_classes", None),
    ("select_gamma_penalty", "G_labeled", np.ones((8, 5))),
    ("select_gamma_penalty", "G_labeled", np.ones((1, 6))),
    ("select_gamma_penalty", "G_labeled", np.full((8, 6), np.nan)),
    ("select_gamma_penalty", "defo", np.eye(6)),
    ("select_gamma_penalty", "targets", np.ones((7, 2))),
    ("select_gamma_penalty", "targets", np.full((8, 2), np.inf)),
    ("select_gamma_penalty", "n_rows", 5),
    ("select_gamma_penalty", "n_rows", 50.0),
    ("select_gamma_penalty", "ts", ()),
    ("select_gamma_penalty", "ts", (0.0, -1.0)),
    ("select_gamma_penalty", "ts", (0.0, np.nan)),
    ("select_gamma_penalty", "ts", 1.0),
    ("select_gamma_penalty", "alphas", (0.1, -1.0)),
    ("select_gamma_penalty", "alphas", ()),
    ("select_gamma_penalty", "rule", "worst"),
    ("select_rank", "G_labeled", np.ones((8, 7))),
    ("select_rank", "defo", None),
    ("select_rank", "t", -1.0),
    ("select_rank", "t", np.inf),
    ("select_rank", "targets", np.ones(9)),
    ("select_rank", "n_rows", 0),
    ("select_rank", "ranks", ()),
    ("select_rank", "ranks", (7, 2)),
    ("select_rank", "ranks", (0,)),
    ("select_rank", "ranks", (2.5,)),
    ("select_rank", "alphas", (np.inf,)),
    ("principal_map", "defo", "x"),
    ("principal_map", "t", np.nan),
    ("principal_map", "rank", 0),
    ("principal_map", "rank", 7),
    ("principal_map", "rank", 2.0),
    ("principal_map", "n_rows", -3),
    ("rank_candidates", "m", 0),
    ("rank_candidates", "m", 10.5),
    ("rank_candidates", "n_classes", 0),
    ("deformation", "GtG", np.ones((5, 5))),
    ("deformation", "GtG", np.full((6, 6), np.nan)),
    ("deformation", "H", np.ones((6, 5))),
    ("deformation", "H", np.triu(np.ones((6, 6)))),
    ("deformation", "H", np.full((6, 6), np.inf)),
    ("deformation", "n_rows", 0),
    ("deformation_matrix", "defo", {}),
    ("deformation_matrix", "t", -0.5),
    ("deformation_matrix", "t", "1"),
    ("loo_ridge_scores", "F", np.ones((1, 3))),
    ("loo_ridge_scores", "F", np.full((8, 6), np.nan)),
    ("loo_ridge_scores", "Y", np.ones((7, 2))),
    ("loo_ridge_scores", "Y", np.ones((8, 2, 2))),
    ("loo_ridge_scores", "alphas", (-1.0,)),
    ("loo_ridge_scores", "alphas", None),
]


@pytest.mark.parametrize(
    ("func", "arg", "value"), BAD, ids=[f"{f}-{a}-{i}" for i, (f, a, _) in enumerate(BAD)]
)
def test_bad_input_is_named(func, arg, value):
    over = {arg: value}
    if (func, arg) == ("few_labels", "codes_l") and value.size == 3 and value.max() == 5:
        over["n_classes"] = 2
    with pytest.raises((TypeError, ValueError)) as info:
        _call(func, **over)
    msg = str(info.value)
    assert msg.startswith(f"{func}: "), msg
    assert arg in msg, msg


def test_good_input_passes_and_is_not_modified():
    from conftest import readonly

    g = _good()
    for key in ("F_l", "F_u", "codes", "D", "G_l", "T", "gram", "H", "mean"):
        g[key] = readonly(g[key])
    kw = {
        "few_labels": {"codes_l": g["codes"]},
        "graph_energy_ratio": {"gram": g["gram"], "laplacian_gram": g["H"], "mean_row": g["mean"]},
        "balance_offsets": {"D": g["D"]},
        "self_training_ridge": {"F_l": g["F_l"], "F_u": g["F_u"], "codes_l": g["codes"]},
        "ridge_targets": {"codes": g["codes"]},
        "select_gamma_penalty": {"G_labeled": g["G_l"], "targets": g["T"]},
        "select_rank": {"G_labeled": g["G_l"], "targets": g["T"]},
        "deformation": {"GtG": g["gram"], "H": g["H"]},
        "loo_ridge_scores": {"F": g["G_l"], "Y": g["T"]},
    }
    plain = ("prior_from_counts", "principal_map", "rank_candidates", "deformation_matrix")
    for func in (*plain, *kw):
        _call(func, **kw.get(func, {}))
    # numbers in other spellings: NumPy scalars, 0-d arrays, whole-number floats as codes
    _call("self_training_ridge", alpha=np.float32(0.5), n_classes=np.int64(2))
    _call("balance_offsets", n_iter=np.int32(5), prior=np.array([1.0, 1.0, 2.0]))
    _call("select_rank", t=np.array(2.0), ranks=np.array([6, 2]))
    _call("ridge_targets", codes=np.array([0.0, 1.0]), n_classes=2)
    # responses: 1-d targets
    _call("select_gamma_penalty", targets=np.arange(8.0))
    _call("self_training_ridge", F_u=None)
    assert _call("few_labels", codes_l=np.array([], dtype=int))

"""The few-label math: the class prior, class-mass offsets, the self-trained ridge, the
graph's energy ratio."""

import numpy as np
import pytest
import scipy.sparse as sp

from lorak.learn import (
    MIN_LABELS_PER_CLASS,
    balance_offsets,
    class_prior,
    few_labels,
    graph_energy_ratio,
    graph_laplacian_gram,
    self_training_ridge,
)


def test_few_labels_counts_the_smallest_class():
    codes = np.r_[np.zeros(50, int), np.ones(MIN_LABELS_PER_CLASS - 1, int)]
    assert few_labels(codes)
    codes = np.r_[np.zeros(50, int), np.ones(MIN_LABELS_PER_CLASS, int)]
    assert not few_labels(codes)
    # a class with no labeled row at all counts as few
    assert few_labels(np.zeros(30, int), n_classes=2)


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
def test_class_prior_is_uniform_unless_the_counts_reject_it(counts, expected):
    np.testing.assert_allclose(class_prior(np.array(counts)), expected)


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

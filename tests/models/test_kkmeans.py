"""Kernel k-means on a factor, and the pairwise cluster accuracy."""

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.metrics import rand_score
from sklearn.metrics.pairwise import rbf_kernel

from _naive import kernel_kmeans_dense, pairwise_accuracy_naive
from _tolerance import assert_labels_agree_off_ties
from conftest import readonly
from lorak import ExactEigen, Nystroem
from lorak.metrics._cluster import pairwise_cluster_accuracy
from lorak.models import KernelKMeans, kernel_kmeans_factor

# ---------------------------------------------------------------- pairwise accuracy


@pytest.mark.parametrize("n,kt,kp", [(2, 2, 2), (30, 3, 3), (57, 2, 6), (80, 5, 1), (40, 40, 3)])
def test_pairwise_accuracy_equals_definition(rng, n, kt, kp):
    a = rng.integers(0, kt, n)
    b = rng.integers(0, kp, n)
    ref = pairwise_accuracy_naive(a, b)
    assert pairwise_cluster_accuracy(a, b) == pytest.approx(ref, abs=1e-15)
    assert pairwise_cluster_accuracy(b, a) == pytest.approx(ref, abs=1e-15)
    assert pairwise_cluster_accuracy(a, b) == pytest.approx(rand_score(a, b), abs=1e-15)


def test_pairwise_accuracy_label_types_and_edges(rng):
    a = rng.integers(0, 3, 50)
    b = rng.integers(0, 4, 50)
    ref = pairwise_accuracy_naive(a, b)
    # strings, negative and huge integer labels, floats: only the partition matters
    names = np.array(["x", "y", "z"])[a]
    assert pairwise_cluster_accuracy(names, b) == pytest.approx(ref)
    assert pairwise_cluster_accuracy(a - 7, b * 10**12) == pytest.approx(ref)
    assert pairwise_cluster_accuracy(a.astype(float), list(b)) == pytest.approx(ref)
    # one cluster per point (the sparse path): agreement only on pairs split in both
    ids = np.arange(50)
    assert pairwise_cluster_accuracy(ids, b) == pytest.approx(pairwise_accuracy_naive(ids, b))
    perm = rng.permutation(3)
    assert pairwise_cluster_accuracy(a, perm[a]) == 1.0
    assert pairwise_cluster_accuracy([1], [0]) == 1.0
    with pytest.raises(ValueError, match="labels_pred has 3 entries but labels_true has 4"):
        pairwise_cluster_accuracy([0, 1, 0, 1], [0, 1, 1])
    with pytest.raises(ValueError, match="labels_true must be 1-D"):
        pairwise_cluster_accuracy(np.zeros((3, 2)), [0, 1, 1])


def test_pairwise_accuracy_large_n_is_fast():
    n = 2_000_000
    a = np.arange(n) % 7
    b = (np.arange(n) // 3) % 5
    acc = pairwise_cluster_accuracy(a, b)
    assert 0.0 < acc < 1.0


# ---------------------------------------------------------------- kernel k-means


def test_kmeans_on_factor_rows_is_kernel_kmeans(rng):
    """From the same start, Lloyd on G's rows = Lloyd on K = G Gᵀ in kernel form."""
    X, _ = make_blobs(120, centers=4, n_features=3, cluster_std=2.5, random_state=3)
    gamma = 0.05
    K = rbf_kernel(X, gamma=gamma)
    G = ExactEigen(gamma=gamma, n_components=120).fit_transform(X)
    start = rng.integers(0, 4, 120)
    start[:4] = np.arange(4)
    init = np.stack([G[start == c].mean(0) for c in range(4)])
    res = kernel_kmeans_factor(readonly(G), 4, rng=rng, init=init, n_init=1, tol=0.0)
    labels, objective = kernel_kmeans_dense(K, start, 4)
    # two computations of the distances (on G's rows, from K): the labels agree
    # wherever a row's two nearest centres are clear of a tie
    C = np.stack([G[labels == c].mean(0) for c in range(4)])
    D = ((G[:, None, :] - C[None]) ** 2).sum(axis=2)
    assert_labels_agree_off_ties(res.labels, labels, -D, 1e-8 * D.max())
    assert res.inertia == pytest.approx(objective, rel=1e-8)


def test_recovers_blobs_and_is_reproducible():
    X, y = make_blobs(300, centers=3, n_features=5, random_state=0)
    factor = Nystroem(bandwidth="mean_to_centroid", n_components=40, random_state=0)
    a = KernelKMeans(3, factor, n_init=2, random_state=7).fit(X)
    assert pairwise_cluster_accuracy(y, a.labels_) == 1.0
    b = KernelKMeans(3, factor, n_init=2, random_state=7).fit(X)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_array_equal(a.predict(X), a.labels_)
    D = a.transform(X[:10])
    assert D.shape == (10, 3)
    # the fit's distances on all rows, transform's on ten: the same to round-off
    assert_labels_agree_off_ties(D.argmin(1), a.labels_[:10], -D, 1e-9 * D.max(), max_near=0)
    assert a.cluster_centers_.shape == (3, a.factor_.n_components_)
    G = a.factor_.transform(X)
    assert a.inertia_ == pytest.approx(((G - a.cluster_centers_[a.labels_]) ** 2).sum(), rel=1e-5)
    assert KernelKMeans(3, n_init=1, random_state=0).fit_predict(X).shape == (300,)


def test_more_inits_never_worse(rng):
    X = rng.standard_normal((200, 4))
    one = KernelKMeans(6, n_init=1, random_state=0).fit(X)
    many = KernelKMeans(6, n_init=4, random_state=0).fit(X)
    assert many.inertia_ <= one.inertia_ + 1e-9

"""MKL baselines: uniform / ABMKL / CABMKL kernel sums on factors, and GLMKL."""

import numpy as np
import pytest
from sklearn.svm import SVC

from _naive import brute_force_cabmkl, nonnegative_qp
from conftest import readonly
from lorak.estimators import (
    ABMKL,
    CABMKL,
    AlignmentMKLClassifier,
    GLMKLClassifier,
    UniformKernelSum,
)
from lorak.kernels import Gaussian, KernelBank
from lorak.learn._kernel_combination import (
    alignment_qp,
    alignment_statistics_from_factors,
    alignment_statistics_from_kernels,
    alignment_weights,
    centered_alignment_weights,
    combination_weights,
)

SMALL_BANK = KernelBank.gaussian(factors=[0.25, 1.0, 4.0])


def _blobs(n=200, seed=0, classes=3, d=4):
    rng = np.random.default_rng(seed)
    centers = 3.0 * rng.standard_normal((classes, d))
    y = rng.integers(0, classes, n)
    y[:classes] = np.arange(classes)
    X = centers[y] + rng.standard_normal((n, d))
    return X, y


def _semi(y, n_lab, seed=0):
    rng = np.random.default_rng(seed)
    lab = np.sort(rng.choice(y.size, n_lab, replace=False))
    lab[: np.unique(y).size] = [np.flatnonzero(y == k)[0] for k in np.unique(y)]
    yu = np.full(y.size, -1)
    yu[lab] = y[lab]
    return yu


def test_alignment_qp_matches_cvxpy():
    rng = np.random.default_rng(3)
    for M_ in (2, 4, 7):
        B = rng.standard_normal((M_, 30))
        M = B @ B.T
        a = B @ rng.standard_normal(30)
        v = alignment_qp(M, a)
        ref = nonnegative_qp(M, a)
        assert np.all(v >= 0)
        ov, oref = v @ M @ v - 2 * a @ v, ref @ M @ ref - 2 * a @ ref
        assert ov <= oref + 1e-6 * (1 + abs(oref))
        np.testing.assert_allclose(v, np.clip(ref, 0, None), atol=1e-4 * (1 + np.abs(ref).max()))


def test_cabmkl_weights_match_brute_force_qp_tiny():
    X, y = _blobs(n=24, classes=2, d=3, seed=1)
    Ks = [Gaussian(bandwidth=b)(X) for b in (0.3, 2.0, 8.0, 40.0)]
    mu_ref, _, _ = brute_force_cabmkl(Ks, y)
    stats = alignment_statistics_from_kernels(Ks, y, centered=True)
    mu = centered_alignment_weights(stats)
    np.testing.assert_allclose(mu, mu_ref, atol=1e-4)
    # the optimum beats every single kernel and random nonnegative mixtures
    best = stats.combined_alignment(mu)
    assert best >= stats.alignments.max() - 1e-9
    rng = np.random.default_rng(0)
    for _ in range(200):
        assert stats.combined_alignment(rng.random(4)) <= best + 1e-9


def test_factor_statistics_equal_kernel_statistics():
    rng = np.random.default_rng(2)
    Gs = [rng.standard_normal((15, r)) for r in (3, 5, 2)]
    y = rng.integers(0, 3, 15)
    y[:3] = [0, 1, 2]
    for centered in (False, True):
        a = alignment_statistics_from_factors(Gs, y, centered=centered)
        b = alignment_statistics_from_kernels([G @ G.T for G in Gs], y, centered=centered)
        np.testing.assert_allclose(a.gram, b.gram, rtol=1e-10)
        np.testing.assert_allclose(a.target, b.target, rtol=1e-10, atol=1e-10)
        assert a.target_norm2 == pytest.approx(b.target_norm2)


def test_abmkl_weights_proportional_to_alignment():
    X, y = _blobs(n=30, classes=2, seed=4)
    Ks = [Gaussian(bandwidth=b)(X) for b in (0.5, 5.0, 50.0)]
    Kstar = (y[:, None] == y[None, :]).astype(float)
    al = np.array([np.sum(K * Kstar) / (np.linalg.norm(K) * np.linalg.norm(Kstar)) for K in Ks])
    mu = alignment_weights(alignment_statistics_from_kernels(Ks, y, centered=False))
    np.testing.assert_allclose(mu, al / al.sum(), rtol=1e-10)


@pytest.mark.parametrize("cls", [UniformKernelSum, ABMKL, CABMKL])
def test_transform_reproduces_weighted_nystrom_sum(cls):
    X, y = _blobs(n=150, seed=5)
    yu = _semi(y, 30)
    Xr = readonly(X)
    f = cls(SMALL_BANK, n_components=20, random_state=0).fit(Xr, readonly(yu))
    w = f.weights_
    assert np.all(w >= 0) and w.sum() == pytest.approx(1.0)
    Q = f.transform(Xr)
    Z = f.components_
    K = np.zeros((150, 150))
    for j, k in enumerate(f.kernels_):
        E = k(X, Z)
        K += w[j] * E @ np.linalg.pinv(k(Z, Z), rcond=1e-10, hermitian=True) @ E.T
    np.testing.assert_allclose(Q @ Q.T, K, atol=1e-6)
    assert Q.shape[1] == f.n_components_
    # float32 in, float32 out
    assert f.fit(X.astype(np.float32), yu).transform(X[:5].astype(np.float32)).dtype == np.float32


def test_cabmkl_on_factors_prefers_informative_width():
    """On blobs, the centered alignment puts weight on widths that separate the classes,
    and the combination aligns at least as well as the best single kernel."""
    X, y = _blobs(n=300, seed=6)
    yu = _semi(y, 60)
    bank = KernelBank.gaussian()
    c = CABMKL(bank, n_components=30, random_state=0).fit(X, yu)
    assert c.alignment_ >= c.alignments_.max() - 1e-9
    a = ABMKL(bank, n_components=30, random_state=0).fit(X, yu)
    np.testing.assert_allclose(a.weights_, a.alignments_ / a.alignments_.sum())
    assert len(a.weights_) == 9


def test_glmkl_weights_and_objective():
    X, y = _blobs(n=200, seed=7)
    yu = _semi(y, 60)
    g = GLMKLClassifier(KernelBank.gaussian(factors=[0.1, 1.0, 10.0]), max_iter=30).fit(X, yu)
    assert np.all(g.weights_ >= 0) and g.weights_.sum() == pytest.approx(1.0)
    h = np.array(g.objective_history_)
    assert np.all(np.diff(h) <= 1e-6 * np.abs(h[:-1]) + 1e-9)
    assert g.score(X[yu == -1], y[yu == -1]) > 0.8
    np.testing.assert_array_equal(g.transduction_, g.predict(X))
    assert g.decision_function(X[:4]).shape == (4, 3)


def test_glmkl_single_kernel_is_svc():
    X, y = _blobs(n=120, classes=2, seed=8)
    k = Gaussian(bandwidth=4.0)
    g = GLMKLClassifier(KernelBank([k]), C=0.5).fit(X, y)
    svc = SVC(kernel="precomputed", C=0.5).fit(k(X), y)
    np.testing.assert_allclose(g.decision_function(X), svc.decision_function(k(X)), atol=1e-8)
    assert g.weights_.tolist() == [1.0]


def test_alignment_classifier_uses_exact_kernel_weights():
    X, y = _blobs(n=160, seed=9)
    yu = _semi(y, 50)
    bank = KernelBank.gaussian(factors=[0.1, 1.0, 10.0])
    lab = np.flatnonzero(yu != -1)
    for weighting in ("alignment", "centered_alignment", "uniform"):
        c = AlignmentMKLClassifier(bank, weighting=weighting).fit(X, yu)
        Ks = [k(X[lab], X[lab]) for k in c.kernels_]
        stats = alignment_statistics_from_kernels(
            Ks, y[lab], centered=weighting == "centered_alignment"
        )
        np.testing.assert_allclose(
            c.weights_, combination_weights(weighting, stats, 3), rtol=1e-8, atol=1e-10
        )
        assert c.score(X[yu == -1], y[yu == -1]) > 0.8
    with pytest.raises(ValueError, match="unknown weighting"):
        AlignmentMKLClassifier(weighting="best").fit(X, yu)


def test_bad_input():
    X, y = _blobs(n=40)
    yu = _semi(y, 10)
    with pytest.raises(ValueError, match="at least one kernel"):
        ABMKL(KernelBank([]))
    with pytest.raises(TypeError, match="kernels must be"):
        ABMKL("gaussian", n_components=5).fit(X, yu)
    with pytest.raises(ValueError, match="n_components=50 exceeds"):
        CABMKL(n_components=50).fit(X, yu)
    with pytest.raises(ValueError, match="requires y"):
        CABMKL(n_components=5).fit(X)
    with pytest.raises(ValueError, match="no labeled rows"):
        ABMKL(n_components=5).fit(X, np.full(40, -1))
    with pytest.raises(ValueError, match="one class"):
        ABMKL(n_components=5).fit(X, np.where(yu == -1, -1, 0))
    with pytest.raises(ValueError, match="rtol"):
        UniformKernelSum(n_components=5, rtol=2.0).fit(X)
    with pytest.raises(ValueError, match="unknown weighting"):
        combination_weights("best", None, 3)
    with pytest.raises(ValueError, match="centered=True"):
        centered_alignment_weights(
            alignment_statistics_from_kernels([np.eye(4)], [0, 0, 1, 1], centered=False)
        )
    with pytest.raises(ValueError, match="same labeled rows"):
        alignment_statistics_from_factors(
            [np.ones((4, 2)), np.ones((5, 2))], [0, 1, 0, 1], centered=True
        )
    with pytest.raises(ValueError, match="C must be"):
        GLMKLClassifier(C=0).fit(X, yu)
    with pytest.raises(ValueError, match="max_labeled"):
        GLMKLClassifier(max_labeled=5).fit(X, yu)
    with pytest.raises(ValueError, match="X has 40 rows"):
        GLMKLClassifier().fit(X, yu[:-1])
    UniformKernelSum(n_components=5).fit(X)  # no labels needed

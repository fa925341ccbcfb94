"""SimpleNPKL's C="auto" (C = 0.7/λ_max(T)) and its degenerate-kernel check."""

import math
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris, load_wine, make_blobs, make_moons

from lorak import SimpleNPKL
from lorak.constraints import from_labels
from lorak.learn import _npkl_auto as auto


def _standardized(X):
    X = np.asarray(X, dtype=np.float64)
    return (X - X.mean(0)) / X.std(0)


def _sets():
    X, y = load_iris(return_X_y=True)
    yield "iris", _standardized(X), y
    X, y = load_wine(return_X_y=True)
    yield "wine", _standardized(X), y
    X, y = make_moons(160, noise=0.08, random_state=0)
    yield "moons", _standardized(X), y
    X, y = make_blobs(150, centers=4, cluster_std=2.0, random_state=1)
    yield "blobs", _standardized(X), y


def _T_dense(pairs, signs, n):
    T = np.zeros((n, n))
    T[pairs[:, 0], pairs[:, 1]] = signs
    T[pairs[:, 1], pairs[:, 0]] = signs
    return T


def test_spectral_radius_of_simple_patterns():
    one = np.array([[0, 5]])
    assert auto.constraint_spectral_radius(one, np.array([1.0])) == pytest.approx(1.0)
    assert auto.constraint_spectral_radius(one, np.array([-1.0])) == pytest.approx(1.0)
    # a star of d must-links: λ_max = √d
    d = 9
    star = np.column_stack([np.zeros(d, int), np.arange(1, d + 1)])
    assert auto.constraint_spectral_radius(star, np.ones(d)) == pytest.approx(3.0)
    assert auto.auto_C(star, np.ones(d), scale=1.0) == pytest.approx(1 / 3)
    assert auto.auto_C(star, np.ones(d)) == pytest.approx(auto.AUTO_SCALE / 3)
    with pytest.raises(ValueError, match="at least one pair"):
        auto.constraint_spectral_radius(np.zeros((0, 2), int), np.zeros(0))


def test_spectral_radius_lanczos_path_matches_dense(monkeypatch):
    y = np.repeat(np.arange(4), 150)
    pairs, signs = from_labels(y, ratio=0.7, random_state=0).pairs()
    dense = np.linalg.eigvalsh(_T_dense(pairs, signs, len(y)))[-1]
    assert auto.constraint_spectral_radius(pairs, signs) == pytest.approx(dense, rel=1e-9)
    monkeypatch.setattr(auto, "_DENSE_ROWS", 10)
    got = auto.constraint_spectral_radius(pairs, signs, rng=np.random.default_rng(3))
    assert got == pytest.approx(dense, rel=1e-8)


@pytest.mark.parametrize("loss", ["linear", "squared_hinge"])
def test_auto_never_zero_or_collapsed(loss):
    for name, X, y in _sets():
        for seed in range(2):
            c = from_labels(y, ratio=0.7, random_state=seed)
            pairs, signs = c.pairs()
            with warnings.catch_warnings():
                warnings.simplefilter("error", auto.DegenerateKernelWarning)
                est = SimpleNPKL(loss, max_iter=200, random_state=seed).fit(X, **c)
            assert est.C == "auto"
            lam = np.linalg.eigvalsh(_T_dense(pairs, signs, len(y)))[-1]
            assert est.C_ == pytest.approx(auto.AUTO_SCALE / lam)
            assert est.n_components_ >= 1, name
            assert np.linalg.norm(est.embedding_) > 0, name
            deg = est.degeneracy_
            assert not deg.degenerate, (name, deg)
            assert 0.0 <= deg.smoothness < 0.5, (name, deg)
            if loss == "linear":
                # C·T ⪯ I: no direction is positive through the constraints alone
                assert deg.constraint_share == 0.0, (name, deg)


def test_old_default_collapses_and_warns():
    X, y = load_iris(return_X_y=True)
    X = _standardized(X)
    c = from_labels(y, ratio=0.7, random_state=0)
    with pytest.warns(auto.DegenerateKernelWarning, match="degenerate kernel"):
        est = SimpleNPKL(C=1.0, random_state=0).fit(X, **c)
    assert est.degeneracy_.degenerate
    assert est.degeneracy_.constraint_share > 0.9
    assert est.C_ == 1.0


def test_auto_is_deterministic():
    X, y = load_wine(return_X_y=True)
    X = _standardized(X)
    c = from_labels(y, ratio=0.7, random_state=4)
    for loss in ("linear", "squared_hinge"):
        a = SimpleNPKL(loss, random_state=7).fit(X, **c)
        b = SimpleNPKL(loss, random_state=7).fit(X, **c)
        assert a.C_ == b.C_
        np.testing.assert_allclose(a.embedding_, b.embedding_, rtol=1e-8, atol=1e-12)


def test_auto_steps_up_when_the_graph_supports_no_constraint():
    # a single cannot-link between two kNN neighbours (λ_max(T) = 1): at C ≤ 1 the only
    # candidate direction (e_i − e_j)/√2 has uᵀAu = C − 1 − N_ij < 0, so the kernel
    # would be zero; C="auto" steps C up (documented fallback) to a nonzero kernel
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 2))
    d = ((X[:, None] - X[None]) ** 2).sum(-1)
    np.fill_diagonal(d, np.inf)
    i, j = np.unravel_index(np.argmin(d), d.shape)
    with pytest.warns(auto.DegenerateKernelWarning, match="supports none of the constraints"):
        est = SimpleNPKL(random_state=0).fit(X, cannot_link=[[i, j]])
    assert est.n_components_ >= 1
    assert est.C_ > 1.0
    assert any(math.isclose(est.C_, s * auto.AUTO_SCALE) for s in auto.AUTO_C_STEPS)
    with pytest.raises(ValueError, match="kernel is zero"):
        SimpleNPKL(C=1.0, random_state=0).fit(X, cannot_link=[[i, j]])


def test_auto_with_active_selection_uses_the_kept_pairs():
    X, y = load_iris(return_X_y=True)
    X = _standardized(X)
    c = from_labels(y, ratio=0.7, random_state=1)
    est = SimpleNPKL(active_constraints=0.5, random_state=0).fit(X, **c)
    kept = np.vstack([est.must_link_, est.cannot_link_])
    signs = np.r_[np.ones(len(est.must_link_)), -np.ones(len(est.cannot_link_))]
    assert est.C_ == pytest.approx(auto.auto_C(kept, signs))
    assert not est.degeneracy_.degenerate


def test_bad_C():
    X, y = load_iris(return_X_y=True)
    c = from_labels(y, ratio=0.7, random_state=0)
    with pytest.raises(ValueError, match="'auto'"):
        SimpleNPKL(C="heldout").fit(X, **c)
    with pytest.raises(ValueError):
        SimpleNPKL(C=-1.0).fit(X, **c)


def test_degeneracy_of_a_zero_and_of_a_localized_kernel():
    import scipy.sparse as sp

    L = sp.identity(4, format="csr")
    pairs = np.array([[0, 1]])
    z = auto.kernel_degeneracy(L, np.zeros((4, 0)), pairs, np.array([1.0]))
    assert z.degenerate and z.rank == 0
    # K on (e_0 + e_1)/√2 with weight 2 on the must-link: uᵀWu = 2 > 1 → all of tr(K)
    V = np.array([[1.0], [1.0], [0.0], [0.0]]) / math.sqrt(2)
    d = auto.kernel_degeneracy(L, V, pairs, np.array([2.0]))
    assert d.constraint_share == pytest.approx(1.0) and d.degenerate
    assert d.smoothness == pytest.approx(1.0)
    d = auto.kernel_degeneracy(L, V, pairs, np.array([0.5]))
    assert d.constraint_share == 0.0 and not d.degenerate

"""λ of the generalized Nyström factor by cross-validation over the labeled rows."""

import numpy as np
import pytest

from lorak import GeneralizedNystroem, Nystroem
from lorak.kernels import Gaussian, kernel_block
from lorak.learn._gen_nystrom import _cv as lcv
from lorak.learn._gen_nystrom import (
    cv_folds,
    cv_select_lambda,
    fold_features,
    kept_eigenpairs,
    prior_factor,
)

GRID = (1e-3, 1e-1, 1e1, 1e3)


def _blobs(n=240, d=5, seed=0, n_classes=2, labeled=60):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    centers = rng.normal(scale=2.0, size=(n_classes, d))
    X = centers[y] + rng.normal(size=(n, d))
    lab = np.sort(
        np.concatenate(
            [
                rng.choice(np.flatnonzero(y == c), labeled // n_classes, replace=False)
                for c in range(n_classes)
            ]
        )
    )
    return X, y, lab


def _blocks(X, lab, m=30, seed=0):
    kernel = Gaussian(bandwidth="mean_pairwise").resolve(X)
    Z = X[np.random.default_rng(seed).choice(X.shape[0], m, replace=False)]
    return kernel_block(kernel, X[lab], Z), kernel_block(kernel, Z, Z), kernel, Z


def test_folds_stratified_and_deterministic():
    y = np.repeat([0, 1, 2], [7, 12, 20])
    f1, k = cv_folds(y, 5, np.random.default_rng(3))
    f2, _ = cv_folds(y, 5, np.random.default_rng(3))
    assert k == 5
    np.testing.assert_array_equal(f1, f2)
    for c in range(3):
        counts = np.bincount(f1[y == c], minlength=k)
        assert counts.max() - counts.min() <= 1
    sizes = np.bincount(f1, minlength=k)
    assert sizes.max() - sizes.min() <= 1


def test_cv_selection_deterministic_for_a_seed():
    X, y, lab = _blobs()
    El, W, _, _ = _blocks(X, lab)
    a = cv_select_lambda(El, W, y[lab], lam_grid=GRID, rng=np.random.default_rng(7))
    b = cv_select_lambda(El, W, y[lab], lam_grid=GRID, rng=np.random.default_rng(7))
    assert a.lam == b.lam and a.C == b.C
    np.testing.assert_array_equal(a.fold_of, b.fold_of)
    np.testing.assert_array_equal(a.errors, b.errors)
    assert a.candidates[-1] == np.inf and a.candidates.size == len(GRID) + 1


def test_estimator_cv_deterministic_for_a_random_state():
    X, y, lab = _blobs(seed=1)
    yu = np.full(y.shape, -1)
    yu[lab] = y[lab]
    kw = dict(n_components=30, random_state=0, lam_grid=GRID)
    a = GeneralizedNystroem(**kw).fit(X, yu)
    b = GeneralizedNystroem(**kw).fit(X, yu)
    assert a.criterion == "cv"
    assert a.lam_ == b.lam_
    np.testing.assert_array_equal(a.cv_errors_, b.cv_errors_)
    np.testing.assert_allclose(a.S_, b.S_, rtol=1e-10, atol=1e-12 * np.abs(a.S_).max())


def _gram(G):
    return G @ G.T


def test_prior_candidate_is_plain_nystroem():
    """λ = ∞ (the fallback) gives exactly plain Nyström's kernel on the same landmarks."""
    X, y, lab = _blobs(seed=2)
    El, W, kernel, Z = _blocks(X, lab)
    plain = Nystroem(kernel=kernel, landmarks=Z, n_components=Z.shape[0]).fit(X)
    Gp = plain.transform(X[lab])
    Gf = El @ prior_factor(kept_eigenpairs(W, 1e-10))
    Kp, Kf = _gram(Gp), _gram(Gf)
    np.testing.assert_allclose(Kf, Kp, rtol=1e-8, atol=1e-10 * np.abs(Kp).max())
    # the estimator with lam=inf: the same features for every row, up to rotation
    yu = np.full(y.shape, -1)
    yu[lab] = y[lab]
    gn = GeneralizedNystroem(kernel=kernel, landmarks=Z, lam=np.inf).fit(X, yu)
    Kg, Kn = _gram(gn.transform(X)), _gram(plain.transform(X))
    np.testing.assert_allclose(Kg, Kn, rtol=1e-8, atol=1e-9 * np.abs(Kn).max())
    assert gn.lam_ == np.inf


def test_folds_never_see_held_out_labels():
    X, y, lab = _blobs(seed=3)
    El, W, _, _ = _blocks(X, lab)
    yl = y[lab]
    fold_of, k = cv_folds(yl, 5, np.random.default_rng(0))
    grid = np.asarray(GRID)
    ref, _ = fold_features(El, W, yl, fold_of, k, grid)
    poisoned = yl.copy()
    held = fold_of == 0
    poisoned[held] = 1 - poisoned[held]  # flip every held-out label of fold 0
    got, _ = fold_features(El, W, poisoned, fold_of, k, grid)
    for i in range(grid.size):
        Kr, Kg = _gram(ref[0][i]), _gram(got[0][i])
        np.testing.assert_allclose(Kg, Kr, rtol=1e-9, atol=1e-12 * np.abs(Kr).max())
    # the other folds train on fold 0's rows, so their kernels change
    assert any(not np.allclose(_gram(ref[1][i]), _gram(got[1][i])) for i in range(grid.size))


def test_targets_are_built_from_training_rows_only(monkeypatch):
    X, y, lab = _blobs(seed=4)
    El, W, _, _ = _blocks(X, lab)
    yl = y[lab]
    seen = []
    real = lcv.ideal_kernel

    def spy(labels, **kw):
        seen.append(np.asarray(labels).copy())
        return real(labels, **kw)

    monkeypatch.setattr(lcv, "ideal_kernel", spy)
    res = cv_select_lambda(El, W, yl, lam_grid=GRID, rng=np.random.default_rng(1))
    assert len(seen) == res.n_splits
    for f, labels in enumerate(seen):
        np.testing.assert_array_equal(labels, yl[res.fold_of != f])


def test_too_few_labeled_rows_per_class():
    X, y, lab = _blobs(seed=6)
    El, W, _, _ = _blocks(X, lab)
    yl = y[lab].copy()
    one = np.flatnonzero(yl == 1)
    yl[one[1:]] = 0  # class 1 keeps a single labeled row
    with pytest.raises(ValueError, match="at least 2 labeled rows per class"):
        cv_select_lambda(El, W, yl, lam_grid=GRID, rng=np.random.default_rng(0))
    # 3 rows in the smallest class: 3 folds instead of 5 (documented fallback)
    yl = y[lab].copy()
    yl[one[3:]] = 0
    res = cv_select_lambda(El, W, yl, lam_grid=GRID, rng=np.random.default_rng(0))
    assert res.n_splits == 3


def test_estimator_bad_cv_input():
    X, y, lab = _blobs(seed=7)
    yu = np.full(y.shape, -1)
    yu[lab[:3]] = [0, 1, 1]  # class 0: one labeled row
    yu[lab[3]] = 1
    # no row of class 0 can be held out: λ by the paper's criterion, with a warning
    with pytest.warns(UserWarning, match=r"class 0 has 1 labeled row.*criterion='paper'"):
        gn = GeneralizedNystroem(n_components=20, random_state=0).fit(X, yu)
    assert gn.criterion_ == "paper"
    paper = GeneralizedNystroem(n_components=20, random_state=0, criterion="paper").fit(X, yu)
    assert gn.lam_ == paper.lam_
    np.testing.assert_allclose(gn.S_, paper.S_, rtol=1e-10, atol=1e-12 * np.abs(paper.S_).max())
    with pytest.raises(ValueError, match="at least 2 labeled rows per class"):
        cv_folds(yu[yu >= 0], 5, np.random.default_rng(0))  # the function itself refuses
    with pytest.raises(ValueError, match="cv must be an integer >= 2"):
        GeneralizedNystroem(n_components=20, cv=1).fit(
            X, np.where(np.isin(np.arange(y.size), lab), y, -1)
        )


def test_estimator_few_rows_uses_fewer_folds():
    X, y, lab = _blobs(seed=8, labeled=6)  # 3 labeled rows per class
    yu = np.full(y.shape, -1)
    yu[lab] = y[lab]
    gn = GeneralizedNystroem(n_components=20, random_state=0, lam_grid=GRID).fit(X, yu)
    assert gn.cv_n_splits_ == 3


def test_multiple_kernel_cv_and_uniform_fallback():
    from lorak import MultipleKernelGeneralizedNystroem, UniformKernelSum
    from lorak.kernels import KernelBank

    X, y, lab = _blobs(seed=9)
    yu = np.full(y.shape, -1)
    yu[lab] = y[lab]
    Z = X[np.random.default_rng(0).choice(X.shape[0], 20, replace=False)]
    bank = KernelBank([Gaussian(bandwidth=2.0), Gaussian(bandwidth=8.0)])
    kw = dict(kernels=bank, landmarks=Z, lam_grid=GRID, random_state=0)
    a = MultipleKernelGeneralizedNystroem(**kw).fit(X, yu)
    b = MultipleKernelGeneralizedNystroem(**kw).fit(X, yu)
    assert a.lam_ == b.lam_ and a.cv_n_splits_ == 5
    np.testing.assert_array_equal(a.cv_errors_, b.cv_errors_)
    # λ = ∞ is the uniform kernel sum on the same landmarks
    mk = MultipleKernelGeneralizedNystroem(kernels=bank, landmarks=Z, lam=np.inf).fit(X, yu)
    uni = UniformKernelSum(kernels=bank, landmarks=Z).fit(X, yu)
    Km, Ku = _gram(mk.transform(X)), _gram(uni.transform(X))
    np.testing.assert_allclose(Km, Ku, rtol=1e-7, atol=1e-9 * np.abs(Ku).max())


def test_multiple_kernel_one_labeled_row_falls_back_to_paper():
    from lorak import MultipleKernelGeneralizedNystroem
    from lorak.kernels import KernelBank

    X, y, lab = _blobs(seed=9)
    yu = np.full(y.shape, -1)
    yu[lab[:3]] = [0, 1, 1]
    Z = X[np.random.default_rng(0).choice(X.shape[0], 20, replace=False)]
    bank = KernelBank([Gaussian(bandwidth=2.0), Gaussian(bandwidth=8.0)])
    kw = dict(kernels=bank, landmarks=Z, lam_grid=[1e-2, 1.0, 1e2], random_state=0)
    with pytest.warns(UserWarning, match="criterion='paper'"):
        a = MultipleKernelGeneralizedNystroem(**kw).fit(X, yu)
    b = MultipleKernelGeneralizedNystroem(criterion="paper", **kw).fit(X, yu)
    assert a.criterion_ == "paper" and b.criterion_ == "paper" and a.lam_ == b.lam_
    Ka, Kb = _gram(a.transform(X)), _gram(b.transform(X))
    np.testing.assert_allclose(Ka, Kb, rtol=1e-9, atol=1e-12 * np.abs(Kb).max())

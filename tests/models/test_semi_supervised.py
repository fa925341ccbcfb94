"""GeneralizedNystroem (lorak.estimators) and SemiSupervisedFactorClassifier (lorak.models)."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from _tolerance import assert_labels_agree_off_ties
from conftest import readonly
from lorak import Nystroem
from lorak.estimators import MAX_AUTO_COMPONENTS, GeneralizedNystroem
from lorak.kernels import kernel_block
from lorak.models import SemiSupervisedFactorClassifier


def _blobs(n=240, seed=0, classes=3, d=3):
    rng = np.random.default_rng(seed)
    centers = 6.0 * rng.standard_normal((classes, d))
    y = rng.integers(0, classes, n)
    y[:classes] = np.arange(classes)
    X = centers[y] + rng.standard_normal((n, d))
    return X, y


def _semi(y, n_labeled=30, seed=1):
    rng = np.random.default_rng(seed)
    yu = np.full_like(y, -1)
    idx = np.concatenate(
        [rng.choice(np.flatnonzero(y == c), n_labeled // 3, replace=False) for c in np.unique(y)]
    )
    yu[idx] = y[idx]
    return yu


@pytest.fixture(scope="module")
def data():
    X, y = _blobs()
    return X, y, _semi(y)


def test_transform_of_training_rows_reproduces_ESE(data):
    X, _, yu = data
    g = GeneralizedNystroem(n_components=20, landmarks="uniform", random_state=0).fit(X, yu)
    Q = g.transform(X)
    E = kernel_block(g.kernel_, X, g.landmarks_)
    K = E @ g.S_ @ E.T
    np.testing.assert_allclose(Q @ Q.T, K, atol=1e-8 * np.abs(K).max())
    assert Q.shape == (X.shape[0], g.n_components_)
    ev = np.linalg.eigvalsh(g.S_)
    assert ev.min() > -1e-9 * ev.max()  # S stays PSD
    W = kernel_block(g.kernel_, g.landmarks_, g.landmarks_)
    Wp = np.linalg.pinv(W, rcond=1e-10, hermitian=True)
    np.testing.assert_allclose(g.S0_, g.beta_ * Wp, rtol=1e-6, atol=1e-6 * np.abs(g.S0_).max())


def test_fitted_attributes(data):
    X, _, yu = data
    g = GeneralizedNystroem(criterion="paper", random_state=0).fit(X, yu)
    assert g.n_landmarks_ == round(0.1 * X.shape[0])
    assert g.lam_grid_.tolist() == [10.0**k for k in range(-5, 6)]
    assert g.lam_ == g.lam_grid_[np.nanargmax(g.alignment_scores_)]
    assert g.alignment_factors_.shape == (11, 2)
    np.testing.assert_allclose(g.alignment_scores_, g.alignment_factors_.prod(axis=1))
    assert g.n_iter_ >= 1 and g.converged_
    assert len(g.objective_history_) >= 2
    assert g.objective_ == pytest.approx(g.objective_history_[-1])
    assert g.beta_ == 1.0
    np.testing.assert_array_equal(g.classes_, [0, 1, 2])
    np.testing.assert_array_equal(g.labeled_indices_, np.flatnonzero(yu != -1))
    assert MAX_AUTO_COMPONENTS == 1000


def test_fixed_lambda_and_beta_options(data):
    X, _, yu = data
    g = GeneralizedNystroem(lam=0.5, beta="heuristic", landmarks="uniform", random_state=0)
    g.fit(X, yu)
    assert g.lam_ == 0.5 and g.lam_grid_.tolist() == [0.5]
    assert g.beta_ > 0 and np.isfinite(g.alignment_scores_).all()
    go = GeneralizedNystroem(lam=0.5, beta="optimize", landmarks="uniform", random_state=0)
    go.fit(X, yu)
    # the jointly optimized β is stationary: ⟨S, W⁺⟩ = β ‖W⁺‖²
    Wp = go.S0_ / go.beta_
    assert np.vdot(go.S_, Wp) == pytest.approx(go.beta_ * np.vdot(Wp, Wp), rel=1e-3)


def test_large_lambda_gives_plain_nystrom_kernel(data):
    X, _, yu = data
    Z = X[::12]
    g = GeneralizedNystroem(lam=1e9, landmarks=Z, bandwidth=20.0, tol=1e-8, max_iter=5000)
    g.fit(X, yu)
    n = Nystroem(kernel="gaussian", bandwidth=20.0, landmarks=Z).fit(X)
    K_g = g.transform(X) @ g.transform(X).T
    K_n = n.transform(X) @ n.transform(X).T
    assert np.abs(K_g - K_n).max() < 1e-4 * np.abs(K_n).max()


def test_unlabeled_rows_enter_only_through_landmarks(data):
    X, y, yu = data
    Z = X[::10].copy()
    kw = dict(landmarks=Z, bandwidth=10.0, tol=1e-8, random_state=0)  # the same CV folds
    g1 = GeneralizedNystroem(**kw).fit(X, yu)
    X2 = X.copy()
    X2[yu == -1] += 5.0  # move every unlabeled row
    g2 = GeneralizedNystroem(**kw).fit(X2, yu)
    # the learned kernel, not S itself: S is determined only up to the landmark kernel's
    # near-null directions, where last-bit differences (a BLAS path, an alignment) move it
    K1, K2 = (g.transform(X[:60]) @ g.transform(X[:60]).T for g in (g1, g2))
    np.testing.assert_allclose(K1, K2, rtol=0, atol=1e-7 * np.abs(K1).max())
    # and the labels of unlabeled rows are never read
    y_all = y.copy()
    y_all[yu == -1] = -1
    g3 = GeneralizedNystroem(**kw).fit(X, y_all)
    np.testing.assert_allclose(g1.S_, g3.S_)


def test_float32_sparse_and_readonly_inputs(data):
    X, _, yu = data
    g32 = GeneralizedNystroem(n_components=15, random_state=0).fit(X.astype(np.float32), yu)
    assert g32.transform(X.astype(np.float32)).dtype == np.float32
    Xs = sp.csr_matrix(np.where(np.abs(X) > 1, X, 0.0))
    gs = GeneralizedNystroem(n_components=15, landmarks="uniform", random_state=0).fit(Xs, yu)
    assert gs.transform(Xs).shape[0] == X.shape[0]
    GeneralizedNystroem(n_components=15, random_state=0).fit(readonly(X), readonly(yu))


def test_must_link_groups(data):
    X, y, _ = data
    groups = np.full(X.shape[0], -1)
    for c in range(3):
        groups[np.flatnonzero(y == c)[:6]] = c
    g = GeneralizedNystroem(n_components=15, landmarks="uniform", random_state=0)
    Q = g.fit_transform(X, must_link=groups)
    assert Q.shape[0] == X.shape[0]
    ev = np.linalg.eigvalsh(g.S_)
    assert ev.min() > -1e-8 * ev.max()
    np.testing.assert_array_equal(g.classes_, [0, 1, 2])
    # linked rows come out more similar than under plain Nyström
    linked = np.flatnonzero(groups == 0)
    K = Q @ Q.T
    assert K[np.ix_(linked, linked)].mean() > 0.5


def test_convergence_warning_names_the_fix(data):
    X, _, yu = data
    g = GeneralizedNystroem(n_components=15, lam=1e-4, tol=1e-12, max_iter=1, random_state=0)
    with pytest.warns(ConvergenceWarning, match="max_iter=1 .*increase max_iter"):
        g.fit(X, yu)
    assert not g.converged_


@pytest.mark.parametrize(
    ("y_fn", "match"),
    [
        (lambda y: np.full_like(y, -1), r"no labeled rows \(all -1\)"),
        (lambda y: np.where(np.arange(y.size) < 10, 2, -1), "one class among its labeled rows"),
        (lambda y: np.where(np.arange(y.size) < 10, y, np.nan), "y contains NaN; mark unlabeled"),
        (lambda y: y[:-1], "y has 239 entries, but X has 240 rows"),
        (lambda y: None, "requires y to be passed"),
        (lambda y: y + 0.5, "Unknown label type"),
    ],
)
def test_label_errors(data, y_fn, match):
    X, y, _ = data
    # target="classification": with "auto", real-valued y (y + 0.5) is a regression target
    with pytest.raises(ValueError, match=match):
        GeneralizedNystroem(n_components=5, target="classification").fit(X, y_fn(y))
    with pytest.raises(ValueError, match=match):
        SemiSupervisedFactorClassifier(GeneralizedNystroem(n_components=5)).fit(X, y_fn(y))


def test_parameter_errors(data):
    X, _, yu = data
    cases = [
        (dict(n_components=500), "n_components=500 exceeds n_samples=240"),
        (dict(n_components="half"), "n_components must be a positive integer or 'auto'"),
        (dict(lam=-1.0), "lam must be 'auto' or a positive number"),
        (dict(lam_grid=[]), "lam_grid must be a non-empty"),
        (dict(beta=0.0), "beta must be 'heuristic', 'optimize' or a number > 0"),
        (dict(beta="auto"), "unknown beta 'auto'"),
        (dict(solver="newton"), "unknown solver 'newton'"),
        (dict(criterion="loo"), "unknown criterion 'loo'"),
        (dict(cv=1), "cv must be an integer >= 2"),
        (dict(tol=0.0), r"tol must be a number in \(0, 1\)"),
        (dict(max_iter=0), "max_iter must be an integer >= 1"),
        (dict(landmarks="nope"), "unknown landmarks strategy 'nope'"),
    ]
    for params, match in cases:
        with pytest.raises(ValueError, match=match):
            GeneralizedNystroem(**params).fit(X, yu)
    groups = np.full(X.shape[0], -1)
    with pytest.raises(ValueError, match=r"either y .* or must_link"):
        GeneralizedNystroem().fit(X, yu, must_link=groups)
    with pytest.raises(ValueError, match="no must-link pair"):
        GeneralizedNystroem().fit(X, must_link=np.arange(X.shape[0]))
    with pytest.raises(ValueError, match="must_link has 3 entries"):
        GeneralizedNystroem().fit(X, must_link=[0, 0, 1])


def test_classifier_predicts_unlabeled_and_new_points(data):
    X, y, yu = data
    clf = SemiSupervisedFactorClassifier(GeneralizedNystroem(random_state=0)).fit(X, yu)
    unl = yu == -1
    assert np.mean(clf.transduction_[unl] == y[unl]) > 0.9
    # the fit reads the factor's rows, predict the kernel rows times one m × c matrix:
    # two summation orders, so the labels agree wherever the decision is clear of a tie
    d = clf.decision_function(X)
    tol = 1e-9 * (1 + np.abs(d).max())
    assert_labels_agree_off_ties(clf.predict(X), clf.transduction_, d, tol)
    Xn, yn = _blobs(n=60, seed=0)  # same centres, new noise
    assert clf.score(Xn, yn) > 0.9
    assert clf.decision_function(Xn).shape == (60, 3)
    assert clf.scale_ > 0
    Q = clf.factor_.transform(X) * clf.scale_
    assert np.mean(np.sum(Q * Q, axis=1)) == pytest.approx(1.0)


def test_classifier_labels_scaling_and_other_models(data):
    X, y, yu = data
    names = np.array(["ant", "bee", "cat"], dtype=object)
    ys = np.where(yu == -1, -1, names[np.maximum(yu, 0)]).astype(object)
    clf = SemiSupervisedFactorClassifier(
        GeneralizedNystroem(n_components=20, random_state=0),
        LogisticRegression(C=10.0),
        feature_scale=None,
    ).fit(X, ys)
    assert set(clf.classes_) == set(names)
    assert clf.scale_ == 1.0
    assert clf.predict_proba(X).shape == (X.shape[0], 3)
    assert np.mean(clf.predict(X)[yu == -1] == names[y[yu == -1]]) > 0.9
    # an unsupervised factor ignores the labels it is given
    nys = SemiSupervisedFactorClassifier(Nystroem(n_components=20, random_state=0)).fit(X, yu)
    assert np.mean(nys.transduction_[yu == -1] == y[yu == -1]) > 0.9
    with pytest.raises(ValueError, match="feature_scale must be"):
        SemiSupervisedFactorClassifier(feature_scale="max").fit(X, yu)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        SemiSupervisedFactorClassifier(
            GeneralizedNystroem(n_components=20, random_state=0), feature_scale=3.0
        ).fit(X, yu)


def test_default_head_is_the_cross_validated_pick():
    """classifier=None: a ridge at the factor's penalty or LinearSVC(C=1), whichever
    errs less in a stratified cross-validation over the labeled rows; recorded."""
    from sklearn.base import clone
    from sklearn.datasets import make_moons
    from sklearn.linear_model import RidgeClassifier
    from sklearn.model_selection import StratifiedKFold
    from sklearn.svm import LinearSVC

    from lorak.models._semi_supervised import HEAD_CV_FOLDS

    X, y = make_moons(300, noise=0.3, random_state=3)
    ys = np.full(300, -1)
    lab = np.r_[np.flatnonzero(y == 0)[:20], np.flatnonzero(y == 1)[:20]]
    ys[lab] = y[lab]
    clf = SemiSupervisedFactorClassifier().fit(X, ys)
    errs = clf.head_cv_errors_
    assert set(errs) == {"RidgeClassifier", "LinearSVC"}
    chosen = type(clf.classifier_).__name__
    assert errs[chosen] == min(errs.values())
    if errs["RidgeClassifier"] == errs["LinearSVC"]:
        assert chosen == "RidgeClassifier"
    # the counts are those of an explicit cross-validation of the two heads; the
    # ridge's penalty is the factor's, carried to the head's scale (α·s²·ms)
    Q_all = clf.factor_.transform(X)
    ms = float(np.mean(np.sum(Q_all * Q_all, axis=1)))
    alpha = clf.factor_.penalty_ * clf.scale_**2 * ms
    Q = Q_all[clf.labeled_indices_] * clf.scale_
    codes = y[clf.labeled_indices_]
    heads = {
        "RidgeClassifier": RidgeClassifier(alpha=alpha),
        "LinearSVC": LinearSVC(C=1.0, max_iter=10000, random_state=0),
    }
    for name, head in heads.items():
        count = 0
        folds = StratifiedKFold(HEAD_CV_FOLDS, shuffle=True, random_state=0)
        for tr, te in folds.split(Q, codes):
            pred = clone(head).fit(Q[tr], codes[tr]).predict(Q[te])
            count += int(np.sum(pred != codes[te]))
        assert count == errs[name]


def test_given_classifier_or_single_labeled_class_skips_the_head_pick():
    from sklearn.datasets import make_moons

    X, y = make_moons(200, noise=0.1, random_state=0)
    ys = np.full(200, -1)
    ys[:30] = y[:30]
    clf = SemiSupervisedFactorClassifier(classifier=LogisticRegression()).fit(X, ys)
    assert clf.head_cv_errors_ is None
    ys = np.full(200, -1)
    first1 = int(np.flatnonzero(y == 1)[0])
    ys[np.flatnonzero(y == 0)[:10]] = 0
    ys[first1] = 1  # one labeled row of class 1: no stratified folds
    clf = SemiSupervisedFactorClassifier(Nystroem(n_components=20, random_state=0)).fit(X, ys)
    assert clf.head_cv_errors_ is None


@pytest.mark.parametrize("fs", [float("inf"), float("nan"), -1.0, 0.0, np.inf])
@pytest.mark.parametrize("model", ["classifier", "regressor"])
def test_feature_scale_must_be_a_finite_positive_number(data, fs, model):
    """An infinite or NaN scale is refused at fit (infinity passed and failed later
    inside the ridge head)."""
    from lorak.models import SemiSupervisedFactorRegressor

    X, y, yu = data
    if model == "classifier":
        est, target = SemiSupervisedFactorClassifier(feature_scale=fs), yu
    else:
        est = SemiSupervisedFactorRegressor(feature_scale=fs)
        target = np.where(yu == -1, np.nan, y.astype(float))
    with pytest.raises(ValueError, match=r"feature_scale must be .*finite positive"):
        est.fit(X, target)


@pytest.mark.parametrize("part", ["factor", "classifier"])
def test_a_class_instead_of_an_instance_is_named(data, part):
    from sklearn.linear_model import RidgeClassifier

    X, _, yu = data
    kw = {"factor": Nystroem} if part == "factor" else {"classifier": RidgeClassifier}
    with pytest.raises(TypeError, match=rf"{part} must be an estimator instance"):
        SemiSupervisedFactorClassifier(**kw).fit(X, yu)

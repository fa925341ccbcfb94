"""LS-SVM on a factor: exact cases against the dense solve, Woodbury, memory, API."""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.datasets import make_blobs
from sklearn.linear_model import Ridge
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.svm import SVC, LinearSVC

from _naive import exact_factor, paper_lssvm
from _tolerance import assert_labels_agree_off_ties
from conftest import readonly
from lorak import ExactEigen, IncompleteCholesky, Nystroem, config_context
from lorak.kernels import Gaussian
from lorak.models import LSSVC, LSSVR, lssvm_fit_dense, lssvm_fit_factor, woodbury_solve

GAMMA = 2.0  # narrow enough that the 80 × 80 kernel below is well conditioned


@pytest.fixture
def binary(rng):
    X = rng.standard_normal((80, 3))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 > 0.3, 1, -1)
    return X, y, rng.standard_normal((25, 3))


# ---------------------------------------------------------------- exact cases


def test_dense_solve_is_the_papers_formula(binary):
    X, y, _ = binary
    K = rbf_kernel(X, gamma=GAMMA)
    alpha, b = paper_lssvm(K, y, C=0.5)
    beta, b2 = lssvm_fit_dense(K, y, C=0.5)
    np.testing.assert_allclose(beta[:, 0], alpha * y, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(b2[0], b, rtol=1e-10)
    assert abs(beta.sum()) < 1e-10  # the KKT condition 1ᵀβ = yᵀα = 0


@pytest.mark.parametrize("C", [0.5, 10.0, 1e4])
def test_full_rank_factor_equals_dense_solve(binary, C):
    X, y, Xn = binary
    K = rbf_kernel(X, gamma=GAMMA)
    G = exact_factor(K)
    sol = lssvm_fit_factor(readonly(G), readonly(y), C, return_dual=True)
    beta, b = lssvm_fit_dense(K, y, C)
    np.testing.assert_allclose(sol.dual_coef, beta, rtol=1e-8, atol=1e-8 * np.abs(beta).max())
    np.testing.assert_allclose(sol.intercept, b, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(sol.coef, G.T @ beta, rtol=1e-8, atol=1e-8)
    # decisions on new points: g(x)ᵀw + b with g(x) = k(x, X) G⁻ᵀ equals k(x, X)β + b
    g_new = np.linalg.solve(G, rbf_kernel(X, Xn, gamma=GAMMA)).T
    f_factor = g_new @ sol.coef + sol.intercept
    f_dense = rbf_kernel(Xn, X, gamma=GAMMA) @ beta + b
    np.testing.assert_allclose(f_factor, f_dense, rtol=1e-8, atol=1e-8)


def test_estimator_with_exact_factor_equals_dense(binary):
    """LSSVC(factor=ExactEigen at full rank) predicts new points like the dense LS-SVM."""
    X, y, Xn = binary
    K = rbf_kernel(X, gamma=GAMMA)
    clf = LSSVC(ExactEigen(gamma=GAMMA, n_components=len(y)), C=0.5).fit(X, y)
    assert clf.n_components_ == len(y)
    beta, b = lssvm_fit_dense(K, y, 0.5)
    f_dense = rbf_kernel(Xn, X, gamma=GAMMA) @ beta[:, 0] + b[0]
    np.testing.assert_allclose(clf.decision_function(Xn), f_dense, rtol=1e-8, atol=1e-8)
    # two computations equal to 1e-8: the labels agree wherever f is clear of 0
    tol = 1e-8 * (1 + np.abs(f_dense).max())
    assert_labels_agree_off_ties(clf.predict(Xn), np.where(f_dense > 0, 1, -1), f_dense, tol)


def test_woodbury_solve_equals_dense_inverse(rng):
    G = rng.standard_normal((60, 7))
    R = rng.standard_normal((60, 3))
    for nu in (0.01, 2.0):
        ref = np.linalg.solve(G @ G.T + nu * np.eye(60), R)
        np.testing.assert_allclose(woodbury_solve(G, nu, R), ref, rtol=1e-9, atol=1e-12)


def test_rank_deficient_factor(rng):
    """Duplicate and zero columns, rank 4 of 9: still the dense solve with K = G Gᵀ."""
    B = rng.standard_normal((70, 4))
    G = np.column_stack([B, B[:, :2], np.zeros(70), B[:, 3] * 2.0, B[:, 0] - B[:, 1]])
    y = np.sign(rng.standard_normal(70))
    for C in (0.5, 1e6):
        sol = lssvm_fit_factor(G, y, C, return_dual=True)
        beta, b = lssvm_fit_dense(G @ G.T, y, C)
        np.testing.assert_allclose(sol.dual_coef, beta, rtol=1e-7, atol=1e-7)
        np.testing.assert_allclose(sol.intercept, b, rtol=1e-8, atol=1e-9)
        np.testing.assert_allclose(G @ sol.coef, G @ (G.T @ beta), rtol=1e-7, atol=1e-7)


def test_sparse_and_float32_factor_rows(rng):
    G = sp.random(90, 12, density=0.3, random_state=0, format="csr")
    y = rng.standard_normal(90)
    a = lssvm_fit_factor(G, y, 2.0)
    b = lssvm_fit_factor(G.toarray(), y, 2.0)
    np.testing.assert_allclose(a.coef, b.coef, rtol=1e-10, atol=1e-12)
    c = lssvm_fit_factor(G.toarray().astype(np.float32), y, 2.0)
    np.testing.assert_allclose(c.coef, b.coef, rtol=1e-5, atol=1e-6)
    # the estimator with passthrough takes sparse X as the factor rows
    reg = LSSVR(C=2.0).fit(G, y)
    np.testing.assert_allclose(reg.coef_, b.coef[:, 0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(reg.predict(G), G.toarray() @ reg.coef_ + reg.intercept_)


# ---------------------------------------------------------------- multi-class, regression


def test_multiclass_is_one_vs_rest_of_the_binary_lssvm(rng):
    X, y = make_blobs(150, centers=3, n_features=4, cluster_std=2.0, random_state=0)
    labels = np.array(["a", "b", "c"])[y]
    factor = Nystroem(gamma=0.1, n_components=40, random_state=0)
    clf = LSSVC(factor, C=1.0).fit(X, labels)
    assert clf.coef_.shape == (3, clf.n_components_) and clf.intercept_.shape == (3,)
    D = clf.decision_function(X[:20])
    assert D.shape == (20, 3)
    for j, c in enumerate(clf.classes_):
        binary = LSSVC(factor, C=1.0).fit(X, labels == c)
        np.testing.assert_allclose(binary.decision_function(X[:20]), D[:, j], rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(clf.predict(X[:20]), clf.classes_[D.argmax(1)])
    assert clf.score(X, labels) > 0.9
    # one-hot least squares gives f_ovr = 2 f_onehot − 1: the same argmax
    onehot = LSSVR(factor, C=1.0).fit(X, (labels[:, None] == clf.classes_).astype(float))
    np.testing.assert_allclose(D, 2 * onehot.predict(X[:20]) - 1, rtol=1e-9, atol=1e-9)


def test_binary_labels_any_type(binary):
    X, y, Xn = binary
    a = LSSVC(C=0.5).fit(X, y)
    b = LSSVC(C=0.5).fit(X, np.where(y > 0, "pos", "neg"))
    assert list(b.classes_) == ["neg", "pos"] and b.coef_.shape == (1, 3)
    np.testing.assert_allclose(a.decision_function(Xn), b.decision_function(Xn))
    assert set(b.predict(Xn)) <= {"neg", "pos"}


def test_linear_regression_equals_ridge_with_intercept(rng):
    """Passthrough factor = linear kernel: LS-SVM regression is ridge (alpha = 1/C)."""
    X = rng.standard_normal((100, 6)) + 3.0
    y = X @ rng.standard_normal(6) + 1.5 + 0.1 * rng.standard_normal(100)
    reg = LSSVR(C=0.25).fit(X, y)
    ridge = Ridge(alpha=4.0).fit(X, y)
    np.testing.assert_allclose(reg.coef_, ridge.coef_, rtol=1e-10)
    np.testing.assert_allclose(reg.intercept_, ridge.intercept_, rtol=1e-10)
    Y2 = np.column_stack([y, -2 * y + 1])
    reg2 = LSSVR(C=0.25).fit(X, Y2)
    assert reg2.coef_.shape == (2, 6) and reg2.predict(X).shape == (100, 2)
    np.testing.assert_allclose(reg2.predict(X)[:, 1], -2 * reg.predict(X) + 1, rtol=1e-9)


def test_kernel_regression_with_exact_factor(rng):
    X = rng.uniform(-3, 3, (70, 1))
    y = np.sin(X[:, 0]) + 0.05 * rng.standard_normal(70)
    Xn = np.linspace(-3, 3, 9)[:, None]
    reg = LSSVR(ExactEigen(gamma=GAMMA, n_components=70), C=10.0).fit(X, y)
    beta, b = lssvm_fit_dense(rbf_kernel(X, gamma=GAMMA), y, 10.0)
    ref = rbf_kernel(Xn, X, gamma=GAMMA) @ beta[:, 0] + b[0]
    np.testing.assert_allclose(reg.predict(Xn), ref, rtol=1e-8, atol=1e-8)
    assert np.abs(reg.predict(Xn) - np.sin(Xn[:, 0])).max() < 0.2


# ---------------------------------------------------------------- memory


@pytest.mark.parametrize("estimator", ["passthrough", "nystroem"])
def test_never_allocates_n_by_n(rng, estimator):
    """n = 20000: an n × n float64 array is 3.2 GB; the whole fit + predict stays far below."""
    n, m = 20000, 50
    if estimator == "passthrough":
        X = rng.standard_normal((n, m))
        model = LSSVC(C=0.5)
    else:
        X = rng.standard_normal((n, 5))
        model = LSSVC(Nystroem(gamma=0.2, n_components=m, random_state=0), C=0.5)
    y = np.where(X[:, 0] > 0, 1, -1)
    with config_context(memory_budget=2**22):
        tracemalloc.start()
        try:
            model.fit(X, y).predict(X)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 12 * n * m * 8, f"peak {peak / 2**20:.0f} MiB"  # n × n would be 3052 MiB
    assert model.score(X, y) > 0.8


# ---------------------------------------------------------------- API


class _RecordsY(TransformerMixin, BaseEstimator):
    """A 'supervised factor' that scales X by the number of classes it was fitted with."""

    def fit(self, X, y=None):
        self.k_ = 1 if y is None else len(np.unique(y))
        return self

    def transform(self, X):
        return np.asarray(X) * self.k_


class _NoY(TransformerMixin, BaseEstimator):
    def fit(self, X):
        self.fitted_ = True
        return self

    def fit_transform(self, X):
        return self.fit(X).transform(X)

    def transform(self, X):
        return np.asarray(X) + 1.0


def test_factor_is_cloned_fitted_with_y_and_used_for_prediction(binary):
    X, y, Xn = binary
    factor = _RecordsY()
    clf = LSSVC(factor).fit(X, y)
    assert not hasattr(factor, "k_") and clf.factor_.k_ == 2
    np.testing.assert_allclose(
        clf.decision_function(Xn), (2 * Xn) @ clf.coef_[0] + clf.intercept_[0]
    )
    LSSVR(_NoY()).fit(X, y.astype(float))  # a fit without y is called without y


def test_factor_with_a_kernel_object(binary):
    """A factor holding a lorak Kernel object is fitted on a fresh copy of itself."""
    X, y, Xn = binary
    factor = Nystroem(kernel=Gaussian(bandwidth=1 / GAMMA), n_components=20, random_state=0)
    a = LSSVC(factor, C=0.5).fit(X, y)
    b = LSSVC(Nystroem(gamma=GAMMA, n_components=20, random_state=0), C=0.5).fit(X, y)
    assert a.factor_ is not factor and not hasattr(factor, "components_")
    np.testing.assert_allclose(a.decision_function(Xn), b.decision_function(Xn), rtol=1e-8)


def test_pipeline_and_grid_search(binary):
    X, y, _ = binary
    grid = GridSearchCV(
        LSSVC(Nystroem(gamma=GAMMA, random_state=0)),
        {"factor__n_components": [5, 20], "C": [0.5, 5.0]},
        cv=3,
    ).fit(X, y)
    assert grid.best_estimator_.factor_.n_components in (5, 20)
    assert grid.best_estimator_.coef_.shape == (1, grid.best_params_["factor__n_components"])
    pipe = make_pipeline(IncompleteCholesky(gamma=GAMMA, n_components=10), LSSVR(C=1.0))
    assert pipe.fit(X, y.astype(float)).predict(X).shape == (80,)


def test_bad_input(binary):
    X, y, _ = binary
    with pytest.raises(ValueError, match="y has 1 class"):
        LSSVC().fit(X, np.ones(80))
    with pytest.raises(ValueError, match="y has 70 rows but X has 80"):
        LSSVC().fit(X, y[:70])
    with pytest.raises(ValueError, match="y has 70 rows but X has 80"):
        LSSVR().fit(X, y[:70].astype(float))
    for C in (0, -1.0, np.inf):
        with pytest.raises(ValueError, match="C must be > 0"):
            LSSVC(C=C).fit(X, y)
    with pytest.raises(TypeError, match="C must be a number"):
        LSSVR(C="big").fit(X, y.astype(float))
    with pytest.raises(ValueError, match="factor must be an unfitted transformer"):
        LSSVC(factor="rbf").fit(X, y)
    with pytest.raises(TypeError, match="factor must be a transformer"):
        LSSVC(factor=SVC()).fit(X, y)
    clf = LSSVC().fit(X, y)
    with pytest.raises(ValueError, match="X has 2 features, but LSSVC is expecting 3"):
        clf.predict(X[:, :2])


def test_inputs_not_modified(binary):
    X, y, _ = binary
    Xr, yr = readonly(X), readonly(y)
    LSSVC(C=0.5).fit(Xr, yr)
    LSSVC(Nystroem(n_components=10, random_state=0)).fit(Xr, yr)
    np.testing.assert_array_equal(Xr, X)


# ---------------------------------------------------------------- linear models on a factor


def test_linear_svm_on_factor_rows_is_the_kernel_svm(binary):
    """make_pipeline(factor, linear SVM) = the paper's "linear SVM on virtual samples".

    The rows of G are virtual samples whose inner products are K ≈ G Gᵀ; a linear SVM on
    them solves the kernel SVM on G Gᵀ. With an exact factor it is the kernel SVM.
    """
    X, y, Xn = binary
    kernel_svm = SVC(kernel="rbf", gamma=GAMMA, C=1.0, tol=1e-10).fit(X, y)
    exact = make_pipeline(
        ExactEigen(gamma=GAMMA, n_components=80), SVC(kernel="linear", C=1.0, tol=1e-10)
    ).fit(X, y)
    np.testing.assert_allclose(
        exact.decision_function(Xn), kernel_svm.decision_function(Xn), rtol=1e-5, atol=1e-5
    )
    # the scalable form: liblinear on Nyström rows, end to end in a Pipeline
    approx = make_pipeline(
        Nystroem(gamma=GAMMA, n_components=60, landmarks="kmeans", random_state=0),
        LinearSVC(C=1.0),
    ).fit(X, y)
    agree = np.mean(approx.predict(Xn) == kernel_svm.predict(Xn))
    assert agree >= 0.8


def test_clone_keeps_factor_params():
    est = LSSVC(Nystroem(n_components=7, landmarks="kmeans"), C=3.0)
    c = clone(est)
    assert c.get_params()["factor__n_components"] == 7 and c.C == 3.0

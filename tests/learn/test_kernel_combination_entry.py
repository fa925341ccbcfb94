"""The kernel-combination entries: lorak.learn.fit_kernel_combination and fit_glmkl."""

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from lorak import CABMKL, GLMKLClassifier
from lorak.kernels import KernelBank
from lorak.learn import fit_glmkl, fit_kernel_combination


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((150, 3))
    y = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int)
    return X, y


def test_fit_kernel_combination_is_the_transformer_fit(data):
    X, y = data
    bank = KernelBank.gaussian(factors=[0.25, 1.0, 4.0])
    est = CABMKL(bank, n_components=20, random_state=0).fit(X, y)
    rows = np.arange(X.shape[0])
    fit = fit_kernel_combination(
        est.kernels_, X, est.components_, "centered_alignment", rows=rows, y=y
    )
    np.testing.assert_allclose(fit.weights, est.weights_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fit.statistics.alignments, est.alignments_, rtol=1e-10)
    uniform = fit_kernel_combination(est.kernels_, X, est.components_)
    np.testing.assert_allclose(uniform.weights, np.full(3, 1 / 3))
    assert uniform.statistics is None


def test_fit_glmkl_is_the_classifier_weights(data):
    X, y = data
    bank = KernelBank.gaussian(factors=[0.1, 1.0, 10.0])
    clf = GLMKLClassifier(bank, max_iter=30).fit(X, y)
    Xl = X.astype(np.float64)
    Ks = [0.5 * (K + K.T) for K in clf.kernels_.blocks(Xl, Xl)]
    fit = fit_glmkl(Ks, [np.where(y == 1, 1, -1)], C=1.0, max_iter=30, tol=1e-4)
    np.testing.assert_allclose(fit.weights, clf.weights_, rtol=1e-8, atol=1e-12)
    assert fit.n_iter == clf.n_iter_ and fit.converged == clf.converged_
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        fit_glmkl(Ks, [np.where(y == 1, 1, -1)], C=1.0, max_iter=1, tol=1e-12, owner="X")

"""The ℓp-MKL classifier's one entry (lorak.learn.fit_lp_mkl) and its factor stage."""

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from lorak import LowRankMKLClassifier
from lorak.decompose import FactorBank
from lorak.learn import bank_decision, fit_lp_mkl, lp_mkl_factors
from lorak.learn._lp_mkl import check_inner_options, default_bank


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((240, 3))
    y = np.where(X[:, 0] * X[:, 1] > 0, "a", "b")
    y[X[:, 2] > 1.0] = "c"
    return X, y


def test_factor_stage_carries_its_factor_bank(data):
    X, _ = data
    bank = default_bank(4).resolve(X, np.random.default_rng(0))
    fac = lp_mkl_factors(bank, X, 15, rng=np.random.default_rng(0))
    assert isinstance(fac.bank, FactorBank)
    assert fac.bank.points.shape == (15, 3) and len(fac.normalizations) == 4
    for N, N_bank in zip(fac.normalizations, fac.bank.normalizations, strict=True):
        np.testing.assert_array_equal(N, N_bank)


def test_entry_is_the_estimator_fit(data):
    X, y = data
    kw = dict(C=10.0, p=2.0, max_iter=20)
    est = LowRankMKLClassifier(n_kernels=4, rank=15, random_state=0, **kw).fit(X, y)
    rng = np.random.default_rng(0)
    fac = lp_mkl_factors(default_bank(4).resolve(X, rng), X, 15, rng=rng)
    fit = fit_lp_mkl(fac, y, **kw)
    assert fit.kernel_weights.shape == (3, 4)  # one-vs-rest: a row per class
    np.testing.assert_array_equal(fit.kernel_weights, est.kernel_weights_)
    np.testing.assert_array_equal(fit.landmark_coef, est.landmark_coef_)
    dec = bank_decision(fac.bank.kernels, fac.bank.points, fit.landmark_coef, fit.intercept, X)
    np.testing.assert_allclose(dec, est.decision_function(X), rtol=1e-12, atol=1e-12)


def test_entry_warns_once_naming_the_classes(data):
    X, y = data
    rng = np.random.default_rng(0)
    fac = lp_mkl_factors(default_bank(4).resolve(X, rng), X, 15, rng=rng)
    with pytest.warns(ConvergenceWarning, match="class") as caught:
        fit = fit_lp_mkl(fac, y, C=10.0, max_iter=1, tol=1e-12)
    assert len([w for w in caught if issubclass(w.category, ConvergenceWarning)]) == 1
    assert fit.not_converged and set(fit.not_converged) <= {"a", "b", "c"}


@pytest.mark.parametrize(
    "solver, kw, match",
    [
        ("qp", {}, "unknown solver"),
        ("newton", {"compress": False}, "compress=True"),
        ("newton", {"eta": 0.1}, "eta"),
        ("newton", {"inner_criterion": "objective"}, "inner_criterion"),
        ("split", {"gfb_weights": "fancy"}, "gfb_weights"),
    ],
)
def test_inner_options_are_checked(solver, kw, match):
    with pytest.raises(ValueError, match=match):
        check_inner_options(solver, **kw)

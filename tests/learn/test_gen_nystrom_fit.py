"""The estimators' one call (lorak.learn._gen_nystrom._fit): how λ is chosen is decided
there, and the record it returns is what the estimators store."""

import warnings

import numpy as np
import pytest
from _gen_nystrom_blocks import gn_blocks

from lorak import GeneralizedNystroem, MultipleKernelGeneralizedNystroem
from lorak.kernels import KernelBank
from lorak.learn import (
    LambdaCV,
    alignment_lambda_path,
    fit_generalized_nystroem,
    fit_mk_generalized_nystroem,
    ideal_kernel,
)
from lorak.learn._gen_nystrom import cv_select_and_solve, must_link_target, prior_fit
from lorak.metrics import ideal_kernel_factor


@pytest.fixture(scope="module")
def blocks():
    El, W, yl = gn_blocks(l=24, classes=2)[:3]
    return El, W, yl, ideal_kernel(yl, centered=True)


def _same(a, b):
    np.testing.assert_allclose(a.S, b.S, atol=1e-10 * np.abs(b.S).max())
    assert a.lam == b.lam and a.beta == pytest.approx(b.beta)


def test_cv_criterion_is_the_cross_validated_fit(blocks):
    El, W, yl, K = blocks
    fit = fit_generalized_nystroem(El, W, K, y=yl, rng=np.random.default_rng(0))
    ref, cv = cv_select_and_solve(El, W, K, yl, rng=np.random.default_rng(0))
    _same(fit, ref)
    assert isinstance(fit.cv, LambdaCV) and fit.cv.lam == cv.lam == fit.lam
    assert fit.criterion == "cv"
    np.testing.assert_allclose(fit.F @ fit.F.T, fit.S, atol=1e-10 * np.abs(fit.S).max())


def test_paper_criterion_and_fixed_lambda_are_the_path(blocks):
    El, W, yl, K = blocks
    for criterion in ("paper", "kernel"):
        fit = fit_generalized_nystroem(El, W, K, y=yl, criterion=criterion)
        _same(fit, alignment_lambda_path(El, W, K, beta=1.0, criterion=criterion))
        assert fit.criterion == criterion and fit.cv is None
    fit = fit_generalized_nystroem(El, W, K, y=yl, lam=0.1)
    _same(fit, alignment_lambda_path(El, W, K, beta=1.0, lam=0.1))
    assert fit.criterion is None and fit.cv is None


def test_infinite_lambda_is_the_prior(blocks):
    El, W, yl, K = blocks
    for criterion in ("cv", "paper"):
        fit = fit_generalized_nystroem(El, W, K, y=yl, lam=np.inf, criterion=criterion)
        _same(fit, prior_fit(El, W, K))
        assert fit.criterion is None and fit.cv is None and fit.F is not None


def test_must_link_and_single_labeled_rows_fall_back_to_the_paper_criterion(blocks):
    El, W, yl, _ = blocks
    K, T = must_link_target(yl)
    fit = fit_generalized_nystroem(El, W, K, mask=T, y=yl, solver="fista")
    assert fit.criterion == "paper" and fit.cv is None
    y1 = yl.copy()
    y1[0] = 7  # a class with one labeled row: nothing to hold out
    with pytest.warns(UserWarning, match="Est: criterion='cv' cannot hold out"):
        fit = fit_generalized_nystroem(El, W, ideal_kernel(y1, centered=True), y=y1, owner="Est")
    assert fit.criterion == "paper"
    with pytest.raises(ValueError, match="unknown criterion 'best'"):
        fit_generalized_nystroem(El, W, K, y=yl, criterion="best")
    with pytest.raises(ValueError, match=r"criterion='cv' .* needs their labels"):
        fit_generalized_nystroem(El, W, ideal_kernel(yl), owner="Est")
    with pytest.raises(ValueError, match=r"criterion='cv' .* needs their labels"):
        fit_mk_generalized_nystroem([El], [W], ideal_kernel_factor(yl))


def test_the_estimators_store_the_record():
    rng = np.random.default_rng(1)
    X = np.r_[rng.normal(0, 1, (40, 2)), rng.normal(3, 1, (40, 2))]
    y = np.full(80, -1)
    y[:6], y[40:46] = 0, 1
    gn = GeneralizedNystroem(n_components=10, random_state=0).fit(X, y)
    assert gn.criterion_ == "cv" and gn.lam_grid_[-1] == np.inf
    np.testing.assert_allclose(gn.S_, gn.normalization_ @ gn.normalization_.T)
    bank = KernelBank.gaussian(factors=[0.5, 2.0])
    mk = MultipleKernelGeneralizedNystroem(bank, n_landmarks=8, random_state=0).fit(X, y)
    assert mk.criterion_ == "cv" and mk.cv_n_splits_ == 5
    Els = bank.resolve(X).blocks(X[y != -1], mk.landmarks_)
    Ws = bank.resolve(X).blocks(mk.landmarks_, mk.landmarks_)
    Y = ideal_kernel_factor(y[y != -1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = fit_mk_generalized_nystroem(Els, Ws, Y - Y.mean(0), y=y[y != -1], lam=mk.lam_)
    assert fit.criterion is None and len(fit.F) == 2
    # F_j F_jᵀ is T^(j) with the solver's round-off below zero clipped
    for T, F in zip(fit.T, fit.F, strict=True):
        np.testing.assert_allclose(F @ F.T, T, atol=1e-4 * max(np.abs(T).max(), 1e-300))

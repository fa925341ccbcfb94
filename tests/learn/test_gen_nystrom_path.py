"""The λ path of generalized Nyström (lorak.learn._gen_nystrom._path): the argmax of the
alignment criterion, the reuse of work along the path, β refined at λ*, the fit record."""

import numpy as np
import pytest
from _gen_nystrom_blocks import gn_blocks

from conftest import readonly
from lorak.learn import (
    DEFAULT_LAMBDA_GRID,
    GenNystromProblem,
    alignment_lambda_path,
    closed_form,
    ideal_kernel,
    pinv_psd,
    psd_factor,
    solve_gen_nystrom,
)


@pytest.fixture(scope="module")
def blocks():
    return gn_blocks()


@pytest.fixture(scope="module")
def problem(blocks):
    El, W, yl = blocks[:3]
    return GenNystromProblem.from_blocks(El, W, ideal_kernel(yl, centered=True))


@pytest.mark.parametrize("criterion", ["paper", "kernel"])
def test_optimized_beta_on_the_path_is_refined_at_the_chosen_lambda(problem, criterion):
    # the λ path finds β only to its loose tolerance; a path solve whose duality gap
    # met tol certifies its fixed-β subproblem, not β, so λ* is always refined
    fit = alignment_lambda_path(
        None, None, None, problem=problem, beta="optimize", criterion=criterion
    )
    ref = solve_gen_nystrom(problem, fit.lam, 1.0, optimize_beta=True, tol=1e-10, max_iter=20000)
    assert fit.objective == pytest.approx(ref.info["objective"], rel=1e-3)
    assert fit.beta == pytest.approx(ref.info["beta"], rel=2e-2)


def test_lambda_path_picks_argmax_and_reuses_work(problem):
    fit = alignment_lambda_path(None, None, None, problem=problem, beta=1.0, tol=1e-6)
    assert fit.lam_grid.tolist() == sorted(DEFAULT_LAMBDA_GRID)
    assert fit.lam == fit.lam_grid[np.nanargmax(fit.scores)]
    assert np.all(np.abs(fit.scores) <= 1.0 + 1e-12)
    # the same solution as a direct solve at λ*
    direct = alignment_lambda_path(
        None, None, None, problem=problem, beta=1.0, lam=fit.lam, tol=1e-6
    )
    assert fit.objective == pytest.approx(direct.objective, rel=1e-5)
    # warm starts: fewer eigendecompositions than cold solves at every λ (a cold solve
    # also projects its start; a warm start is a previous, PSD, iterate)
    cold = sum(1 + solve_gen_nystrom(problem, lam, 1.0, tol=1e-3).n_iter for lam in fit.lam_grid)
    assert fit.path_n_iter.sum() < cold


def test_fit_returns_psd_solution_and_consistent_factor(problem):
    fit = alignment_lambda_path(None, None, None, problem=problem, beta="heuristic")
    ev = np.linalg.eigvalsh(fit.S)
    assert ev.min() > -1e-9 * ev.max()
    F = psd_factor(fit.S)
    np.testing.assert_allclose(F @ F.T, fit.S, atol=1e-8 * np.abs(fit.S).max())
    np.testing.assert_allclose(fit.S0, fit.beta * problem.Wp)


def test_inputs_are_not_modified(blocks):
    El, W, yl = blocks[:3]
    K = ideal_kernel(yl, centered=True)
    El_r, W_r, K_r = readonly(El), readonly(W), readonly(K)
    alignment_lambda_path(El_r, W_r, K_r, beta=1.0, lam=0.1)
    closed_form(El_r, K_r, readonly(pinv_psd(W)[0]), 0.1, project=True)

"""A prior's graph weight t and λ chosen by one cross-validation
(:func:`cv_select_prior_gamma`), and the l × l problem on the labeled rows' span."""

import numpy as np

from lorak.learn._gen_nystrom import (
    cv_select_lambda,
    cv_select_prior_gamma,
    prior_row_space,
    smooth,
)


def _close(A, B, rel):
    np.testing.assert_allclose(A, B, atol=rel * np.abs(B).max())


def _blocks(seed=0, l=30, r=45, classes=2):
    rng = np.random.default_rng(seed)
    y = np.arange(l) % classes
    base = rng.standard_normal((l, r))
    base[:, 0] += 3.0 * y
    # three "priors": the same rows scaled differently per column, like R(t)
    scales = [np.ones(r), np.linspace(1.0, 0.2, r), np.linspace(1.0, 0.02, r)]
    return [base * s for s in scales], y


def test_the_rows_span_gives_the_same_cross_validation_as_the_full_problem():
    # r > l: the joint search solves on the labeled rows' span (prior_row_space); solved
    # tightly, its table equals cv_select_lambda's on each full prior with the same folds
    Els, y = _blocks()
    grid = (1e-3, 1e-1, 10.0)
    opts = dict(lam_grid=grid, path_tol=1e-10, max_iter=20000)
    sel = cv_select_prior_gamma(Els, y, ts=(0.0, 1.0, 2.0), rng=3, **opts)
    for i, El in enumerate(Els):
        ref = cv_select_lambda(El, np.eye(El.shape[1]), y, rng=3, **opts)
        np.testing.assert_array_equal(sel.errors[i], ref.errors)
        np.testing.assert_allclose(sel.hinge[i], ref.hinge, rtol=1e-6)
        np.testing.assert_array_equal(sel.fold_of, ref.fold_of)


def test_prior_row_space_keeps_the_labeled_rows_kernel():
    El = _blocks()[0][1]
    Er, V1 = prior_row_space(El)
    assert Er.shape == (30, 30) and V1.shape == (45, 30)
    _close(Er @ Er.T, El @ El.T, 1e-12)
    np.testing.assert_allclose(V1.T @ V1, np.eye(30), atol=1e-12)
    assert prior_row_space(El[:, :20])[1] is None  # l ≥ r: nothing to reduce


def test_the_joint_choice_is_the_best_cell_of_the_table():
    Els, y = _blocks(seed=1)
    sel = cv_select_prior_gamma(Els, y, ts=(0.0, 1.0, 2.0), lam_grid=(1e-3, 1e-1, 10.0), rng=0)
    # brute force: smoothed counts along λ per t, hinge below a quarter error, ties to
    # the smaller t, then the larger λ
    score = np.stack([smooth(e) for e in sel.errors])[:, :, 0]
    score = score + 1e-3 * sel.hinge[:, :, 0] / sel.hinge.max()
    best = score.min()
    cells = [(i, g) for i in range(3) for g in range(3, -1, -1) if score[i, g] <= best + 1e-12]
    i, g = cells[0]
    assert (sel.index, sel.lam) == (i, sel.candidates[g])
    assert sel.t == (0.0, 1.0, 2.0)[i]

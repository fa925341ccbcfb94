"""The GFB solvers of the SVM with a sum of low-rank kernels (lorak.solvers._gfb)."""

import numpy as np
import pytest

from _naive import gfb_dense_algorithm2, svm_dual_qp
from lorak.solvers._gfb import (
    FactorStack,
    _psd_solver,
    duality_gap,
    gfb_naive,
    gfb_split,
    project_feasible,
    svm_dual_objective,
)


def _problem(seed=0, n=80, ranks=(4, 3, 5), C=1.0, separable=False):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    y = np.where(
        X[:, 0] + 0.5 * X[:, 1] + (0 if separable else 0.8) * rng.standard_normal(n) > 0, 1.0, -1.0
    )
    blocks = []
    for j, r in enumerate(ranks):
        Z = rng.standard_normal((r, 2))
        E = np.exp(-((X[:, None, :] - Z[None]) ** 2).sum(-1) / (0.5 + j))
        blocks.append(E)
    F = FactorStack.from_blocks(blocks)
    d = rng.uniform(0.2, 1.0, len(ranks))
    return F, blocks, y, d, C


def test_split_iterates_equal_dense_algorithm2():
    F, blocks, y, d, C = _problem(n=40)
    n_iter = 25
    ref = gfb_dense_algorithm2(blocks, y, d, C, n_iter)
    res = gfb_split(F, y, d, C, tol=0, max_iter=n_iter, weights="uniform")
    np.testing.assert_allclose(res.info["raw_alpha"], ref[-1], rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("weights", ["uniform", "blockwise"])
def test_split_matches_qp_reference(weights):
    F, blocks, y, d, C = _problem()
    ref, a_ref = svm_dual_qp(blocks, y, d, C)
    res = gfb_split(F, y, d, C, criterion="gap", tol=1e-5, max_iter=20000, weights=weights)
    assert res.converged
    assert abs(res.objective - ref) <= 1e-3 * abs(ref)
    assert res.info["relative_gap"] <= 1e-5
    # feasibility of the returned α, and its distance to the QP minimizer
    assert abs(y @ res.alpha) <= 1e-9 * C * y.size
    assert res.alpha.min() >= 0 and res.alpha.max() <= C
    assert np.max(np.abs(res.alpha - a_ref)) <= 0.05 * C


def test_naive_matches_qp_reference_and_split():
    F, blocks, y, d, C = _problem(seed=1)
    ref, _ = svm_dual_qp(blocks, y, d, C)
    nv = gfb_naive(F, y, d, C, criterion="gap", tol=1e-6, max_iter=20000)
    sp = gfb_split(F, y, d, C, criterion="gap", tol=1e-6, max_iter=40000, weights="blockwise")
    assert abs(nv.objective - ref) <= 1e-3 * abs(ref)
    assert abs(sp.objective - nv.objective) <= 1e-4 * abs(nv.objective)
    assert nv.n_iter < sp.n_iter  # two operators instead of M + 2 (measured, see bench)


def test_kkt_conditions_at_the_solution():
    F, blocks, y, d, C = _problem(seed=2, C=2.0)
    res = gfb_split(F, y, d, C, criterion="gap", tol=1e-7, max_iter=50000, weights="blockwise")
    dcol = np.repeat(d, F.ranks)
    f = F.matvec(dcol * F.rmatvec(y * res.alpha))
    margin = y * (f + res.info["bias"])
    a = res.alpha
    tol = 2e-2
    assert np.all(margin[a <= 1e-6 * C] >= 1 - tol)
    assert np.all(margin[a >= (1 - 1e-6) * C] <= 1 + tol)
    free = (a > 1e-3 * C) & (a < (1 - 1e-3) * C)
    assert free.any()
    np.testing.assert_allclose(margin[free], 1.0, atol=tol)


def test_eta_regularized_problem():
    F, blocks, y, d, C = _problem(seed=3)
    eta = 0.5
    ref, _ = svm_dual_qp(blocks, y, d, C, eta=eta)
    res = gfb_split(F, y, d, C, eta=eta, tol=1e-9, max_iter=20000)
    assert abs(res.objective - ref) <= 1e-3 * abs(ref)


def test_objective_criterion_and_max_iter():
    F, _, y, d, C = _problem()
    res = gfb_split(F, y, d, C, tol=1e-4, max_iter=3000)
    assert res.converged and res.n_iter < 3000
    assert res.history.shape == (res.n_iter,)
    res = gfb_split(F, y, d, C, tol=0, max_iter=7)
    assert not res.converged and res.n_iter == 7


def test_zero_weight_kernel_drops_out():
    F, blocks, y, d, C = _problem()
    d0 = d.copy()
    d0[1] = 0.0
    full = gfb_naive(F, y, d0, C, criterion="gap", tol=1e-7, max_iter=20000)
    sub = gfb_naive(
        FactorStack.from_blocks([blocks[0], blocks[2]]),
        y,
        d0[[0, 2]],
        C,
        criterion="gap",
        tol=1e-7,
        max_iter=20000,
    )
    np.testing.assert_allclose(full.objective, sub.objective, rtol=1e-9)
    assert np.all(full.gamma[F.block(1)] == 0)


def test_warm_start_state_continues():
    F, _, y, d, C = _problem()
    a = gfb_split(F, y, d, C, tol=0, max_iter=200, weights="blockwise")
    b = gfb_split(F, y, d, C, tol=0, max_iter=200, weights="blockwise", state=a.state)
    c = gfb_split(F, y, d, C, tol=0, max_iter=400, weights="blockwise")
    np.testing.assert_allclose(b.info["raw_alpha"], c.info["raw_alpha"], rtol=1e-8, atol=1e-10)


def test_compressed_stack_products_match_explicit(rng):
    V = rng.standard_normal((60, 9))
    F = FactorStack(V, [4, 5])
    Q, Rr = np.linalg.qr(V)
    Fc = FactorStack(ranks=[4, 5], basis=Q.astype(np.float32), coef=Rr)
    u = rng.standard_normal(60)
    s = rng.standard_normal(9)
    np.testing.assert_allclose(Fc.rmatvec(u), F.rmatvec(u), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(Fc.matvec(s), F.matvec(s), rtol=1e-5, atol=1e-5)
    for A, B in zip(Fc.gram_blocks(), F.gram_blocks(), strict=True):
        np.testing.assert_allclose(A, B, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(Fc.gram(), F.gram(), rtol=1e-5, atol=1e-4)
    sub = Fc.subset([1])
    np.testing.assert_allclose(sub.rmatvec(u), F.rmatvec(u)[4:], rtol=1e-5, atol=1e-5)


def test_project_feasible_is_the_projection(rng):
    cp = pytest.importorskip("cvxpy")
    for _ in range(3):
        a = rng.uniform(-1, 3, 30)
        y = np.where(rng.standard_normal(30) > 0, 1.0, -1.0)
        C = 2.0
        p = project_feasible(a, y, C)
        x = cp.Variable(30)
        cp.Problem(cp.Minimize(cp.sum_squares(x - a)), [y @ x == 0, x >= 0, x <= C]).solve()
        np.testing.assert_allclose(p, x.value, atol=1e-6)
        assert abs(y @ p) < 1e-10
    # one class: only α = 0 is feasible
    assert not project_feasible(np.ones(5), np.ones(5), 1.0).any()


def test_duality_gap_nonnegative_and_objective():
    F, blocks, y, d, C = _problem()
    a = project_feasible(np.full(y.size, 0.3), y, C)
    gap, primal, dual, _ = duality_gap(F, y, d, a, C)
    assert gap >= 0 and primal >= dual
    np.testing.assert_allclose(-dual, svm_dual_objective(F, y, d, a))


def test_bad_input():
    F, _, y, d, C = _problem()
    with pytest.raises(ValueError, match="C must be > 0"):
        gfb_split(F, y, d, 0.0)
    with pytest.raises(ValueError, match="d has 2 weights, but there are 3 kernels"):
        gfb_split(F, y, d[:2], C)
    with pytest.raises(ValueError, match="y has 79 entries, but the factors have 80 rows"):
        gfb_naive(F, y[:-1], d, C)
    with pytest.raises(ValueError, match="every kernel weight is 0"):
        gfb_split(F, y, np.zeros(3), C)
    with pytest.raises(ValueError, match="step must be in"):
        gfb_split(F, y, d, C, step=2.5)
    with pytest.raises(ValueError, match="unknown weights"):
        gfb_split(F, y, d, C, weights="odd")
    with pytest.raises(ValueError, match="unknown criterion"):
        gfb_split(F, y, d, C, criterion="odd")
    with pytest.raises(ValueError, match="ranks must be"):
        FactorStack(np.zeros((5, 3)), [1, 1])


def test_psd_solver_cholesky_and_pseudo_inverse_fallback(rng):
    M = rng.standard_normal((6, 6))
    A = M @ M.T + np.eye(6)
    x = rng.standard_normal(6)
    np.testing.assert_allclose(_psd_solver(A)(x), np.linalg.solve(A, x), rtol=1e-10)
    B = rng.standard_normal((6, 3))
    S = B @ B.T  # rank 3: Cholesky fails, the pseudo-inverse takes over
    np.testing.assert_allclose(_psd_solver(S)(x), np.linalg.pinv(S) @ x, atol=1e-10)


def test_naive_survives_a_numerically_singular_constraint_matrix():
    """A factor column ~ 1e8 · 1 makes the Schur complement of AAᵀ vanish numerically."""
    F, blocks, y, d, C = _problem(seed=4)
    blocks = [
        np.column_stack([b, np.full(b.shape[0], 1e8)]) if k == 0 else b
        for k, b in enumerate(blocks)
    ]
    Fs = FactorStack.from_blocks(blocks)
    res = gfb_naive(Fs, y, d, C, max_iter=50, tol=0)
    assert np.isfinite(res.objective)
    assert abs(float(np.dot(y, res.alpha))) <= 1e-8 * C * y.size

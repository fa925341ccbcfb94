"""Objective (7) and its solvers (lorak.learn._gen_nystrom._problem), and the PSD solvers
they use.

Tiers: exact cases (closed form = dense solve of the unconstrained problem; λ → ∞
recovers the prior), optimality conditions (projected-gradient fixed point, KKT,
certified duality gap), invariants (PSD iterates, monotone objective for the descent
solvers), and agreement between the three solvers.
"""

import itertools
import warnings

import numpy as np
import pytest
from _gen_nystrom_blocks import gn_blocks as _blocks

from lorak.kernels import Gaussian
from lorak.learn import (
    GenNystromProblem,
    alignment_lambda_path,
    closed_form,
    ideal_kernel,
    pinv_psd,
    psd_factor,
    solve_gen_nystrom,
)
from lorak.learn._gen_nystrom import must_link_target
from lorak.metrics import centered_alignment
from lorak.solvers import (
    admm_psd,
    armijo_projected_gradient,
    fista_psd,
    psd_projection,
    scaled_psd_projection,
    weighted_nearest_psd,
)


@pytest.fixture(scope="module")
def blocks():
    return _blocks()


@pytest.fixture(scope="module")
def problem(blocks):
    El, W, yl = blocks[:3]
    return GenNystromProblem.from_blocks(El, W, ideal_kernel(yl, centered=True))


def _kkt(problem, X, lam, beta):
    """(min eig of S, min eig of ∇J, |⟨S, ∇J⟩| / (‖S‖‖∇J‖)) at X (V basis)."""
    G = problem.gradient(X, lam, beta)
    ex = np.linalg.eigvalsh(X)
    eg = np.linalg.eigvalsh(G)
    comp = abs(np.vdot(X, G)) / (np.linalg.norm(X) * np.linalg.norm(G))
    return ex.min() / ex.max(), eg.min() / np.abs(eg).max(), comp


# ----------------------------------------------------------------- PSD projections


def test_psd_projection_clips_negative_eigenvalues(rng):
    A = rng.standard_normal((9, 9))
    M = A + A.T
    lam, U = np.linalg.eigh(M)
    ref = (U * np.maximum(lam, 0)) @ U.T
    np.testing.assert_allclose(psd_projection(M), ref, atol=1e-12)
    P = np.eye(9) + 0.1 * (A @ A.T)
    np.testing.assert_allclose(psd_projection(P), P, atol=1e-13)  # already PSD: unchanged
    np.testing.assert_allclose(psd_projection(-P), 0, atol=1e-12)


def test_scaled_psd_projection_satisfies_kkt(rng):
    A = rng.standard_normal((8, 8))
    M = A + A.T
    d = rng.uniform(0.1, 10.0, 8)
    X = scaled_psd_projection(M, d)
    # optimality of min Σ dᵢdⱼ (X − M)² over X ⪰ 0: G = dd∘(X − M) ⪰ 0, ⟨X, G⟩ = 0
    G = np.outer(d, d) * (X - M)
    assert np.linalg.eigvalsh(X).min() > -1e-10
    assert np.linalg.eigvalsh(G).min() > -1e-9 * np.abs(G).max()
    assert abs(np.vdot(X, G)) < 1e-9 * np.linalg.norm(X) * np.linalg.norm(G)


def test_weighted_nearest_psd_solvers_agree(rng):
    m = 10
    a = np.sort(rng.uniform(0, 30, m))
    w = 0.01 + np.outer(a, a)
    A = rng.standard_normal((m, m))
    T = A + A.T
    ref = weighted_nearest_psd(T, w, tol=1e-10, max_iter=5000)
    assert ref.converged
    f = ref.history[-1]
    d = np.sqrt(np.diag(w))
    fi = fista_psd(
        lambda X: float(np.sum(w * (X - T) ** 2)),
        lambda X: 2 * w * (X - T),
        T,
        d=d,
        L=2.0,
        tol=1e-10,
        max_iter=5000,
    )
    assert fi.history[-1] == pytest.approx(f, rel=1e-6)
    assert np.all(np.diff(fi.history) <= 1e-12 * abs(f))  # restarts keep it monotone


# ----------------------------------------------------------------- closed form (12–13)


def test_closed_form_equals_dense_solve(blocks):
    El, W, yl = blocks[:3]
    m = El.shape[1]
    K = ideal_kernel(yl)
    S0 = 3.0 * pinv_psd(W)[0]
    A = El.T @ El
    for lam in (1e-3, 0.1, 10.0):
        # ∂J/∂S = 0  ⇔  (λ I⊗I + A⊗A) vec S = vec(λ S₀ + E_lᵀ K* E_l)
        H = lam * np.eye(m * m) + np.kron(A, A)
        dense = np.linalg.solve(H, (lam * S0 + El.T @ K @ El).ravel()).reshape(m, m)
        S = closed_form(El, K, S0, lam)
        np.testing.assert_allclose(S, dense, rtol=1e-7, atol=1e-9 * np.abs(dense).max())
        p = GenNystromProblem.from_blocks(El, W, K)
        St = p.to_landmark_basis(p.unconstrained(lam, 3.0))
        np.testing.assert_allclose(St, dense, rtol=1e-7, atol=1e-9 * np.abs(dense).max())
        # and it is a stationary point of the objective
        G = p.gradient(p.unconstrained(lam, 3.0), lam, 3.0)
        assert np.linalg.norm(G) < 1e-8 * np.linalg.norm(p.gradient(0 * G, lam, 3.0))


def test_projected_closed_form_is_psd_and_not_optimal(problem):
    # the paper's initialization: feasible, but the solver improves on it at small λ
    lam = 1e-3
    S = closed_form(problem.El, problem.K, problem.Wp, lam, project=True)
    assert np.linalg.eigvalsh(S).min() > -1e-9 * np.abs(S).max()
    res = solve_gen_nystrom(problem, lam, 1.0, tol=1e-8, max_iter=5000)
    J0 = problem.objective(problem.from_landmark_basis(S), lam, 1.0)
    assert res.info["objective"] < J0


def test_objective_and_gradient_match_dense_formulas(problem, rng):
    El, K, Wp = problem.El, problem.K, problem.Wp
    A = rng.standard_normal(Wp.shape)
    S = A @ A.T
    X = problem.from_landmark_basis(S)
    lam, beta = 0.3, 2.0
    J = lam * np.sum((S - beta * Wp) ** 2) + np.sum((El @ S @ El.T - K) ** 2)
    assert problem.objective(X, lam, beta) == pytest.approx(J, rel=1e-10)
    G = 2 * lam * (S - beta * Wp) + 2 * El.T @ (El @ S @ El.T - K) @ El
    np.testing.assert_allclose(
        problem.to_landmark_basis(problem.gradient(X, lam, beta)), G, rtol=1e-8, atol=1e-8
    )


# ----------------------------------------------------------------- constrained optimum


@pytest.mark.parametrize("lam", [1e-4, 1e-2, 1.0, 100.0])
def test_constrained_optimum_is_projected_gradient_fixed_point(problem, lam):
    res = solve_gen_nystrom(problem, lam, 1.0, tol=1e-10, max_iter=20000)
    assert res.converged
    assert problem.projected_gradient_residual(res.x, lam, 1.0) < 1e-5
    ex, eg, comp = _kkt(problem, res.x, lam, 1.0)
    assert ex > -1e-9  # S ⪰ 0
    assert eg > -1e-5  # ∇J ⪰ 0 (the multiplier)
    assert comp < 1e-5  # complementarity ⟨S, ∇J⟩ = 0
    assert res.info["duality_gap"] <= 1e-10 or res.info["primal_residual"] <= 1e-10


def test_duality_gap_certifies_the_objective(problem):
    lam = 1e-2
    ref = solve_gen_nystrom(problem, lam, 1.0, tol=1e-12, max_iter=50000)
    for tol in (1e-3, 1e-5):
        res = solve_gen_nystrom(problem, lam, 1.0, tol=tol)
        J = res.info["objective"]
        assert J >= ref.info["objective"] * (1 - 1e-12)
        if res.info["duality_gap"] <= tol:
            assert (J - ref.info["objective"]) / J <= tol


def test_three_solvers_reach_the_same_optimum(problem):
    lam = 0.05
    admm = solve_gen_nystrom(problem, lam, 1.0, solver="admm", tol=1e-9, max_iter=5000)
    fista = solve_gen_nystrom(problem, lam, 1.0, solver="fista", tol=1e-10, max_iter=5000)
    pg = solve_gen_nystrom(problem, lam, 1.0, solver="pg", tol=1e-12, max_iter=300)
    J = admm.info["objective"]
    assert fista.info["objective"] == pytest.approx(J, rel=1e-6)
    # the paper's Frobenius-metric projected gradient descends, but slowly
    assert J <= pg.info["objective"] < pg.history[0]
    assert not pg.converged and pg.n_iter == 300


def test_descent_solvers_never_increase_the_objective(problem):
    for solver in ("fista", "pg"):
        res = solve_gen_nystrom(problem, 1e-3, 1.0, solver=solver, tol=1e-9, max_iter=400)
        h = np.asarray(res.history)
        assert np.all(np.diff(h) <= 1e-10 * abs(h[0])), solver


def test_admm_iterates_stay_psd_and_end_below_the_start(problem):
    res = solve_gen_nystrom(problem, 1e-3, 1.0, tol=1e-8, max_iter=3000)
    assert np.linalg.eigvalsh(res.x).min() > -1e-10 * np.abs(res.x).max()
    h = np.asarray(res.history)
    assert h[-1] <= h.min() * (1 + 1e-8)
    assert h[-1] < h[0]


def test_large_lambda_recovers_the_prior(problem):
    Wp = problem.Wp
    errs = []
    for lam in (1e2, 1e4, 1e6, 1e8):
        res = solve_gen_nystrom(problem, lam, 1.0, tol=1e-10, max_iter=5000)
        S = problem.to_landmark_basis(res.x)
        errs.append(np.linalg.norm(S - Wp) / np.linalg.norm(Wp))
    assert errs[-1] < 1e-5
    assert all(b <= a * (1 + 1e-6) for a, b in itertools.pairwise(errs))


# ----------------------------------------------------------------- β


def test_beta_heuristic_matches_pinv_formula(blocks):
    El, W, yl = blocks[:3]
    K = ideal_kernel(yl)
    p = GenNystromProblem.from_blocks(El, W, K)
    Elp = np.linalg.pinv(El, rcond=max(El.shape) * np.finfo(float).eps)
    ref = np.linalg.norm(Elp @ K @ Elp.T) / np.linalg.norm(pinv_psd(W)[0])
    assert p.beta_heuristic() == pytest.approx(ref, rel=1e-8)


def test_optimized_beta_is_jointly_optimal(problem):
    lam = 0.01
    res = solve_gen_nystrom(problem, lam, 1.0, optimize_beta=True, tol=1e-10, max_iter=5000)
    b = res.info["beta"]
    J = res.info["objective"]
    # stationarity in β: ⟨S, W⁺⟩ = β ‖W⁺‖²
    assert np.vdot(res.x, problem.P_t) == pytest.approx(b * problem.P_norm2, rel=1e-5)
    # no fixed β does better
    for other in (0.5 * b, 0.9 * b, 1.1 * b, 2 * b):
        r = solve_gen_nystrom(problem, lam, other, tol=1e-10, max_iter=5000)
        assert r.info["objective"] >= J * (1 - 1e-7)
    # the alternating scheme (FISTA) finds the same β
    alt = solve_gen_nystrom(
        problem, lam, 1.0, solver="fista", optimize_beta=True, tol=1e-8, max_iter=20000
    )
    assert alt.info["beta"] == pytest.approx(b, rel=1e-4)
    assert alt.info["objective"] == pytest.approx(J, rel=1e-6)


@pytest.mark.parametrize("lam", [1e-3, 1.0, 1e3])
def test_unconstrained_slope_bounds_the_beta_root_in_one_step(problem, lam):
    # h(β) = ⟨S(β), W⁺⟩ − β‖W⁺‖² has h' in [−‖W⁺‖², −slope] with slope that of the
    # unconstrained problem (the PSD projection only steepens h); so from any β a
    # Newton step with that slope lands at or past the root, β + h/‖W⁺‖² short of it —
    # what lets the β search bracket the root with one step
    P = problem.P_t
    slope = float(np.sum(problem.aa * P * P / problem.weights(lam)))
    root = solve_gen_nystrom(problem, lam, 1.0, optimize_beta=True, tol=1e-10, max_iter=20000)
    b_star = root.info["beta"]
    for b in (0.1 * b_star, 0.7 * b_star, 1.5 * b_star, 5.0 * b_star):
        x = solve_gen_nystrom(problem, lam, b, tol=1e-11, max_iter=20000).x
        h = float(np.vdot(x, P)) - b * problem.P_norm2
        far, near = b + h / slope, b + h / problem.P_norm2
        # slack: where no constraint is active h is affine and the far step hits the
        # root up to the solves' accuracy
        lo, hi = b_star * (1 - 1e-3), b_star * (1 + 1e-3)
        if b < b_star:
            assert near <= hi and far >= lo, (b, far, near)
        else:
            assert far <= hi and near >= lo, (b, far, near)


@pytest.mark.parametrize("centered", [True, False])
def test_optimized_beta_at_loose_tolerance_stays_near_the_optimum(blocks, centered):
    # Regression: each β step used to restart ADMM from the previous β's solution,
    # whose residuals (dominated by the data directions' metric weights) were already
    # below a loose tol while the prior directions were far off — the returned point
    # was 16–150× the optimum at λ = 1e5 and β was off by up to 18×. The warm start is
    # now scaled by β_new/β_old.
    El, W, yl = blocks[:3]
    p = GenNystromProblem.from_blocks(El, W, ideal_kernel(yl, centered=centered))
    for lam in (1e5, 1e3, 1.0):
        ref = solve_gen_nystrom(p, lam, 1.0, optimize_beta=True, tol=1e-9, max_iter=20000)
        r = solve_gen_nystrom(
            p, lam, 1.0, optimize_beta=True, tol=3e-3, max_iter=500, eig_dtype=np.float32
        )
        assert r.info["objective"] <= ref.info["objective"] * 1.02, lam
        assert r.info["beta"] == pytest.approx(ref.info["beta"], rel=0.2), lam


def test_admm_residual_stop_can_be_capped_by_the_gap(problem):
    lam, beta = 1e5, 4.0
    start = solve_gen_nystrom(problem, lam, 1.0, tol=1e-8).x  # the β = 1 solution
    w = problem.weights(lam)
    lbP = lam * beta * problem.P_t + problem.B_t
    d = problem.metric(lam)
    dd = np.outer(d, d)

    def prox(V, rho):
        return (2 * lbP + rho * dd * V) / (2 * w + rho * dd)

    def f(X):
        return problem.objective(X, lam, beta)

    def lower(Lam):
        Xl = (lbP + 0.5 * Lam) / w
        return f(Xl) - float(np.vdot(Lam, Xl))

    kw = dict(d=d, objective=f, lower_bound=lower, rho=0.3, tol=3e-3, project_start=False)
    loose = admm_psd(prox, start, **kw)
    capped = admm_psd(prox, start, residual_gap_cap=0.05, **kw)
    # the residual test alone stops far from the optimum after this warm start
    assert loose.info["duality_gap"] > 0.5
    assert capped.info["duality_gap"] <= 0.05
    assert f(capped.x) < 0.2 * f(loose.x)


# ----------------------------------------------------------------- criterion and path


def test_criterion_matches_dense_centered_alignment(problem, rng):
    A = rng.standard_normal(problem.Wp.shape)
    S = A @ A.T
    X = problem.from_landmark_basis(S)
    score, rp, rt = problem.criterion(X)
    El = problem.El
    assert rp == pytest.approx(centered_alignment(S, problem.Wp), rel=1e-8)
    assert rt == pytest.approx(centered_alignment(El @ S @ El.T, problem.K), rel=1e-8)
    assert score == pytest.approx(rp * rt)
    # the kernel-space variant: ρ[W S W, W] in place of ρ[S, S₀]
    W = np.linalg.pinv(problem.Wp, rcond=1e-12, hermitian=True)
    score_k, rk, rt_k = problem.criterion(X, "kernel")
    assert rk == pytest.approx(centered_alignment(W @ S @ W, W), rel=1e-6)
    assert rt_k == pytest.approx(rt) and score_k == pytest.approx(rk * rt)
    with pytest.raises(ValueError, match="unknown criterion 'best'"):
        problem.criterion(X, "best")


# ----------------------------------------------------------------- must-link (§3.3)


def test_masked_gradient_matches_finite_differences(blocks, rng):
    El, W = blocks[:2]
    groups = np.array([0, 0, 0, 1, 1, 2, 2, 2, 3, 3, 4, 4])
    K, T = must_link_target(groups)
    p = GenNystromProblem.from_blocks(El, W, K, mask=T)
    A = rng.standard_normal(W.shape)
    X = A @ A.T
    H = rng.standard_normal(W.shape)
    H = H + H.T
    lam, beta, eps = 0.1, 1.5, 1e-6
    fd = (p.objective(X + eps * H, lam, beta) - p.objective(X - eps * H, lam, beta)) / (2 * eps)
    assert np.vdot(p.gradient(X, lam, beta), H) == pytest.approx(fd, rel=1e-6)


def test_masked_problem_solves_to_a_fixed_point(blocks):
    El, W = blocks[:2]
    groups = np.array([0, 0, 0, 1, 1, 2, 2, 2, 3, 3, 4, 4])
    K, T = must_link_target(groups)
    p = GenNystromProblem.from_blocks(El, W, K, mask=T)
    res = solve_gen_nystrom(p, 0.01, 1.0, tol=1e-10, max_iter=5000)  # auto → fista
    assert res.info["solver"] == "fista"
    assert p.projected_gradient_residual(res.x, 0.01, 1.0) < 1e-5
    with pytest.raises(ValueError, match="must-link"):
        solve_gen_nystrom(p, 0.01, 1.0, solver="admm")
    fit = alignment_lambda_path(None, None, None, problem=p, beta=1.0)
    assert np.isfinite(fit.scores).all()


# ----------------------------------------------------------------- convergence and errors


def test_admm_max_iter_reports_not_converged(problem):
    res = solve_gen_nystrom(problem, 1e-4, 1.0, tol=1e-12, max_iter=1)
    assert res.n_iter == 1 and not res.converged


def test_solver_errors(problem):
    with pytest.raises(ValueError, match="unknown solver 'newton'"):
        solve_gen_nystrom(problem, 1.0, 1.0, solver="newton")
    with pytest.raises(ValueError, match="lam must be > 0"):
        solve_gen_nystrom(problem, 0.0, 1.0)
    with pytest.raises(ValueError, match="unknown beta 'auto'"):
        alignment_lambda_path(None, None, None, problem=problem, beta="auto")
    with pytest.raises(ValueError, match="beta must be > 0"):
        alignment_lambda_path(None, None, None, problem=problem, beta=-1.0)
    with pytest.raises(ValueError, match="unknown lam 'best'"):
        alignment_lambda_path(None, None, None, problem=problem, lam="best")
    with pytest.raises(ValueError, match="K must be 3 × 3"):
        GenNystromProblem.from_blocks(np.ones((3, 2)), np.eye(2), np.ones((2, 2)))


def test_generic_solvers_accept_operators(rng):
    # min ‖X − T‖² over the cone: every solver must return Π(T)
    A = rng.standard_normal((6, 6))
    T = A + A.T
    ref = psd_projection(T)

    def f(X):
        return float(np.sum((X - T) ** 2))

    def g(X):
        return 2 * (X - T)

    def prox(V, rho):
        return (2 * T + rho * V) / (2 + rho)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for res in (
            admm_psd(prox, np.zeros((6, 6)), objective=f, tol=1e-10, max_iter=2000),
            fista_psd(f, g, np.zeros((6, 6)), L=2.0, tol=1e-12, max_iter=2000),
            armijo_projected_gradient(f, g, np.zeros((6, 6)), tol=1e-6, max_iter=2000),
        ):
            np.testing.assert_allclose(res.x, ref, atol=1e-6)
            assert res.converged


def test_psd_factor_in_the_landmark_metric_keeps_the_data_directions():
    """S ≈ β W⁺ has its smallest eigenvalues on W's largest directions — the ones the
    data use. Cut relative to λ_max(S), with W over ten decades, those go (the learned
    kernel E S Eᵀ loses most of its trace); cut in the metric of W, E F Fᵀ Eᵀ = E S Eᵀ."""
    from lorak.kernels import kernel_block
    from lorak.learn import pinv_psd

    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(600, 2))
    Z = X[:150]
    k = Gaussian(bandwidth=4.0)
    E, W = kernel_block(k, X, Z), kernel_block(k, Z, Z)
    ev = np.linalg.eigvalsh(W)
    assert ev[-1] / ev[ev > 0].min() > 1e10  # W over many decades
    Wp, _ = pinv_psd(W)
    # a learned S: the prior plus a positive label term on the data directions
    u = Wp @ (E[:100].T @ ((X[:100, 0] > 0) - 0.5)) / 100
    S = Wp + np.outer(u, u)
    K = E @ S @ E.T
    F = psd_factor(S, metric=W)
    np.testing.assert_allclose(E @ F @ F.T @ E.T, K, rtol=1e-6, atol=1e-6 * np.abs(K).max())
    F_max = psd_factor(S)  # relative to λ_max(S): the old cut
    lost = 1 - np.trace(E @ F_max @ F_max.T @ E.T) / np.trace(K)
    assert lost > 0.1

"""The primal Newton solver of the SVM with a sum of low-rank kernels (lorak.solvers._newton)."""

import numpy as np
import pytest

from _naive import svm_dual_qp
from lorak.kernels import KernelBank
from lorak.learn._lp_mkl import bank_factors
from lorak.solvers._gfb import FactorStack, gfb_naive, svm_dual_objective
from lorak.solvers._newton import NewtonResult, _line_search, _zone_solve, svm_newton


def _problem(seed=0, n=120, ranks=(4, 3, 5), C=1.0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.8 * rng.standard_normal(n) > 0, 1.0, -1.0)
    blocks = []
    for j, r in enumerate(ranks):
        Z = rng.standard_normal((r, 2))
        blocks.append(np.exp(-((X[:, None, :] - Z[None]) ** 2).sum(-1) / (0.5 + j)))
    d = rng.uniform(0.2, 1.0, len(ranks))
    return FactorStack.from_blocks(blocks), blocks, y, d, C


def _margins(F, y, d, alpha, b):
    dcol = np.repeat(d, F.ranks)
    return y * (F.matvec(dcol * F.rmatvec(y * alpha)) + b)


@pytest.mark.parametrize(("seed", "C"), [(0, 1.0), (1, 100.0), (2, 1000.0)])
def test_matches_qp_reference_and_kkt(seed, C):
    F, blocks, y, d, _ = _problem(seed=seed)
    ref, a_ref = svm_dual_qp(blocks, y, d, C)
    res = svm_newton(F, y, d, C, tol=1e-6)
    assert isinstance(res, NewtonResult)
    assert res.converged and res.info["relative_gap"] <= 1e-6
    assert abs(res.objective - ref) <= 1e-3 * abs(ref)  # the 0.1 %
    assert abs(res.objective - ref) <= 1e-5 * abs(ref)  # what it actually reaches
    a = res.alpha
    assert a.min() >= 0 and a.max() <= C
    assert abs(y @ a) <= 1e-9 * C * y.size
    # complementary slackness: α = 0 ⇒ margin ≥ 1, α = C ⇒ margin ≤ 1, free ⇒ margin = 1
    m = _margins(F, y, d, a, res.info["bias"])
    tol = 1e-3
    assert np.all(m[a <= 1e-6 * C] >= 1 - tol)
    assert np.all(m[a >= (1 - 1e-6) * C] <= 1 + tol)
    free = (a > 1e-3 * C) & (a < (1 - 1e-3) * C)
    assert free.any()
    np.testing.assert_allclose(m[free], 1.0, atol=tol)
    # the reported objective and dual are those of (4) at α
    assert res.objective == pytest.approx(svm_dual_objective(F, y, d, a), rel=1e-10)
    assert res.info["dual"] == pytest.approx(-res.objective, rel=1e-10)
    assert res.info["primal"] >= res.info["dual"]
    # the α of the QP minimizer (unique up to degenerate directions: compare the function)
    assert np.max(np.abs(_margins(F, y, d, a_ref, res.info["bias"]) - m)) <= 1e-2


def test_matches_naive_gfb_run_to_convergence():
    F, _, y, d, C = _problem(seed=3, n=100, C=10.0)
    gfb = gfb_naive(F, y, d, C, criterion="gap", tol=1e-6, max_iter=50000)
    nt = svm_newton(F, y, d, C, tol=1e-8)
    assert gfb.converged and nt.converged
    assert nt.objective == pytest.approx(gfb.objective, rel=2e-6)
    np.testing.assert_allclose(nt.gamma, gfb.gamma, atol=1e-2 * np.abs(gfb.gamma).max())
    # Newton: a handful of steps per width; the GFB: thousands of iterations
    assert nt.n_iter < 100 < gfb.n_iter


def test_newton_steps_barely_grow_with_C():
    """The GFB needs ~C/ζ iterations for α to reach C; Newton a few steps per width."""
    F, _, y, d, _ = _problem(seed=0)
    steps = {C: svm_newton(F, y, d, C, tol=1e-6).n_iter for C in (1.0, 1000.0)}
    assert steps[1000.0] <= 3 * steps[1.0]
    assert steps[1000.0] <= 80


def test_primal_point_is_reported_honestly():
    """info['primal'] is the hinge primal of the returned w and bias on Φ = V D^½."""
    F, blocks, y, d, C = _problem(seed=4)
    res = svm_newton(F, y, d, C, tol=1e-4)
    Phi = np.hstack([np.sqrt(dk) * b for dk, b in zip(d, blocks, strict=True)])
    w = res.info["w"]
    hinge = np.maximum(0.0, 1.0 - y * (Phi @ w + res.info["bias"]))
    assert res.info["primal"] == pytest.approx(0.5 * w @ w + C * hinge.sum(), rel=1e-10)
    gap = (res.info["primal"] - res.info["dual"]) / res.info["dual"]
    assert res.info["relative_gap"] == pytest.approx(gap, rel=1e-10)
    # the gap shrinks with the Huber width, and each width's solve is recorded
    gaps = [g for _, _, g in res.info["widths"]]
    assert len(gaps) >= 2 and gaps[-1] < gaps[0]
    assert res.info["h"] == res.info["widths"][-1][0]
    np.testing.assert_allclose(res.info["u"], F.rmatvec(y * res.alpha), rtol=1e-10)


def test_shared_basis_and_float32_factors():
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, (300, 2))
    y = np.where(X[:, 0] * X[:, 1] > 0, 1.0, -1.0)
    bank = KernelBank.gaussian_sigmas([0.2, 0.5, 1.0, 3.0, 10.0])
    Z = X[rng.choice(300, 25, replace=False)]
    ex = bank_factors(bank, X, Z, compress=False).stack
    co = bank_factors(bank, X, Z, compress_rtol=1e-14).stack
    c32 = bank_factors(bank, X, Z, compress_rtol=1e-14, dtype=np.float32).stack
    assert co.basis is not None and co.basis.shape[1] < ex.total_rank
    d = np.array([0.1, 0.5, 0.3, 0.0, 0.2])  # one kernel switched off
    a = svm_newton(ex, y, d, 10.0, tol=1e-7)
    b = svm_newton(co, y, d, 10.0, tol=1e-7)
    c = svm_newton(c32, y, d, 10.0, tol=1e-4)
    assert b.objective == pytest.approx(a.objective, rel=1e-6)
    assert c.objective == pytest.approx(a.objective, rel=1e-4)
    assert c.info["relative_gap"] <= 1e-4
    assert np.all(a.gamma[ex.block(3)] == 0) and np.all(b.gamma[co.block(3)] == 0)
    np.testing.assert_allclose(b.gamma, a.gamma, atol=1e-4 * np.abs(a.gamma).max())


@pytest.mark.parametrize(("s", "c"), [(0, 5.0), (1, 5.0), (7, 50.0), (30, 5e6), (40, 1e3)])
def test_zone_solve_is_the_newton_system(s, c):
    """The zone-space solve returns the solution of the (q + 1)² generalized Hessian
    system, with fewer (s < q) or more (s > q) zone rows than features, and at the
    curvature of small widths (c = C/2h large)."""
    rng = np.random.default_rng(s)
    q = 12
    P = rng.standard_normal((s, q)) * rng.uniform(0.1, 3.0, q)
    g = rng.standard_normal(q + 1)
    H = np.zeros((q + 1, q + 1))
    H[:q, :q] = np.eye(q) + c * P.T @ P
    H[:q, q] = H[q, :q] = c * P.sum(axis=0)
    H[q, q] = c * max(s, 1)
    x = _zone_solve(P, P @ P.T, g[:q], g[q], c)
    # the residual relative to the size of the terms (the system's condition is ~ c‖P‖²)
    assert np.linalg.norm(H @ x - g) <= 1e-10 * np.linalg.norm(H) * np.linalg.norm(x)
    np.testing.assert_allclose(x, np.linalg.solve(H, g), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("C", [10.0, 1000.0])
def test_zone_and_primal_newton_systems_give_the_same_svm(C):
    """The solver picks the cheaper of the two forms of the Newton system per step; forced
    to the primal form everywhere it reaches the same optimum."""
    rng = np.random.default_rng(11)
    X = rng.uniform(-1, 1, (400, 2))
    y = np.where(X[:, 0] * X[:, 1] + 0.1 * rng.standard_normal(400) > 0, 1.0, -1.0)
    bank = KernelBank.gaussian_sigmas([0.2, 0.5, 1.0, 3.0])
    F = bank_factors(bank, X, X[rng.choice(400, 60, replace=False)], compress_rtol=1e-12).stack
    d = np.array([0.3, 0.4, 0.2, 0.1])
    mixed = svm_newton(F, y, d, C, tol=1e-6)
    # cold start: the wide zone of the first widths takes the primal form, then the zone
    assert mixed.info["newton_systems"]["primal"] > 0 and mixed.info["newton_systems"]["zone"] > 0
    primal = svm_newton(F, y, d, C, tol=1e-6, system="primal")
    assert primal.info["newton_systems"]["zone"] == 0
    zone = svm_newton(F, y, d, C, tol=1e-6, system="zone")
    assert zone.info["newton_systems"]["primal"] == 0
    assert zone.converged and zone.objective == pytest.approx(primal.objective, rel=1e-5)
    assert mixed.converged and primal.converged
    assert mixed.objective == pytest.approx(primal.objective, rel=1e-5)
    assert mixed.info["relative_gap"] <= 1e-6


def test_warm_start_from_a_nearby_problem():
    F, _, y, d, C = _problem(seed=6, n=200, C=100.0)
    first = svm_newton(F, y, d, C, tol=1e-6)
    d2 = d * np.array([1.1, 0.9, 1.05])
    cold = svm_newton(F, y, d2, C, tol=1e-6)
    warm = svm_newton(F, y, d2, C, tol=1e-6, alpha0=first.alpha, state=first.state)
    assert warm.converged
    assert warm.objective == pytest.approx(cold.objective, rel=1e-5)
    assert warm.n_iter < cold.n_iter


def test_max_iter_stops_without_convergence():
    F, _, y, d, _ = _problem(seed=7)
    res = svm_newton(F, y, d, 1000.0, tol=1e-10, max_iter=3)
    assert not res.converged and res.n_iter == 3
    assert res.info["relative_gap"] > 1e-10
    assert res.alpha.min() >= 0 and res.alpha.max() <= 1000.0


def test_line_search_is_exact(rng):
    """The step minimizes the smoothed objective along the direction (brute force)."""
    n, q, h, C = 200, 5, 0.05, 10.0
    Phi = rng.standard_normal((n, q))
    y = np.where(rng.standard_normal(n) > 0, 1.0, -1.0)
    w, dw = rng.standard_normal(q), rng.standard_normal(q)
    b, db = 0.3, -0.2

    def J(t):
        m = y * (Phi @ (w + t * dw) + b + t * db)
        s = (1 + h - m) / (2 * h)
        loss = np.where(s >= 1, 1 - m, h * np.clip(s, 0, None) ** 2)
        return 0.5 * np.sum((w + t * dw) ** 2) + C * loss.sum()

    if J(1e-6) > J(0):  # make it a descent direction
        dw, db = -dw, -db
    m = y * (Phi @ w + b)
    delta = y * (Phi @ dw + db)
    t = _line_search(w, dw, m, delta, h, C)
    grid = np.linspace(0, 3 * max(t, 1.0), 3001)
    best = min(J(s) for s in grid)
    assert t > 0
    assert J(t) <= best + 1e-9 * abs(best)


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"C": 0.0}, ValueError, "C must be a finite number > 0"),
        ({"C": np.inf}, ValueError, "C must be a finite number > 0"),
        ({"d": [0.0, 0.0, 0.0]}, ValueError, "every kernel weight is 0"),
        ({"d": [1.0, -1.0, 1.0]}, ValueError, "kernel weights d must be finite and >= 0"),
        ({"d": [1.0, 1.0]}, ValueError, "d has 2 weights, but there are 3 kernels"),
        ({"y": "zeros"}, ValueError, "y must contain only the labels -1 and \\+1"),
        ({"y": "short"}, ValueError, "y has 10 entries, but the factors have 120 rows"),
        ({"y": "ones"}, ValueError, "y has a single class"),
        ({"C": True}, ValueError, "C must be a finite number > 0; got True"),
        ({"criterion": "objective"}, ValueError, "criterion must be 'gap'"),
        ({"max_iter": 0}, ValueError, "max_iter must be an integer >= 1"),
        ({"h_factor": 1.0}, ValueError, "h_factor must be in \\(0, 1\\)"),
        ({"h_min": 2.0}, ValueError, "need 0 < h_min <= h0"),
        ({"tol": -1.0}, ValueError, "tol must be >= 0"),
        ({"alpha0": "short"}, ValueError, "alpha0 has 5 entries, expected 120"),
        ({"F": "array"}, TypeError, "F must be a FactorStack"),
        ({"system": "dual"}, ValueError, "system must be one of"),
    ],
)
def test_bad_input(kwargs, exc, match):
    F, blocks, y, d, C = _problem()
    args = {"F": F, "y": y, "d": d, "C": C}
    args.update(kwargs)
    if args["y"] is not y:
        args["y"] = {"zeros": np.zeros(y.size), "ones": np.ones(y.size), "short": y[:10]}[args["y"]]
    if isinstance(args.get("alpha0"), str):
        args["alpha0"] = np.zeros(5)
    if isinstance(args["F"], str):
        args["F"] = blocks[0]
    with pytest.raises(exc, match=match):
        svm_newton(args.pop("F"), args.pop("y"), args.pop("d"), args.pop("C"), **args)

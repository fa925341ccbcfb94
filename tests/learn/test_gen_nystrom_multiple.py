"""The multiple-kernel problem (17) and its alternation (lorak.learn._gen_nystrom._multiple):
the objective against its dense formula, block-wise optimality of the returned point,
and the optimum of an interior-point solver."""

import numpy as np
import pytest

from lorak.kernels import KernelBank
from lorak.learn import ideal_kernel, solve_gen_nystrom
from lorak.learn._gen_nystrom import MKGenNystromProblem, mk_alignment_lambda_path
from lorak.metrics import ideal_kernel_factor


def _blobs(n=180, seed=0, classes=3, d=3):
    rng = np.random.default_rng(seed)
    centers = 5.0 * rng.standard_normal((classes, d))
    y = rng.integers(0, classes, n)
    y[:classes] = np.arange(classes)
    X = centers[y] + rng.standard_normal((n, d))
    return X, y


def _semi(y, per_class=6, seed=1):
    rng = np.random.default_rng(seed)
    yu = np.full_like(y, -1)
    for c in np.unique(y):
        idx = rng.choice(np.flatnonzero(y == c), per_class, replace=False)
        yu[idx] = y[idx]
    return yu


@pytest.fixture(scope="module")
def data():
    X, y = _blobs()
    return X, y, _semi(y)


@pytest.mark.slow
def test_returned_point_is_blockwise_optimal(data):
    """No block can lower (17) given the others: the alternation stopped at a minimum."""
    X, _, yu = data
    rows = np.flatnonzero(yu != -1)
    rng = np.random.default_rng(0)
    bank = KernelBank.gaussian(factors=[0.5, 1.0, 2.0]).resolve(X)
    Z = X[rng.choice(X.shape[0], 10, replace=False)]
    Els, Ws = bank.blocks(X[rows], Z), bank.blocks(Z, Z)
    Y = ideal_kernel_factor(yu[rows])
    Y = Y - Y.mean(axis=0)
    lam = 0.05
    fit = mk_alignment_lambda_path(Els, Ws, Y, lam=lam, tol=1e-7, max_iter=300)
    P = fit.problem
    J = P.objective(fit.Xs, fit.alphas, lam)
    assert J == pytest.approx(fit.objective, rel=1e-12)
    A = P.stack(fit.Xs)
    priors = lam * P.prior_terms(fit.Xs, fit.alphas)
    for j in range(P.n_kernels):
        prob = P.residual_problem(j, A - P.block_kernel(j, fit.Xs[j]))
        others = priors.sum() - priors[j]
        assert prob.objective(fit.Xs[j], lam, fit.alphas[j]) + others == pytest.approx(J)
        best = solve_gen_nystrom(prob, lam, fit.alphas[j], solver="admm", tol=1e-9, max_iter=5000)
        assert best.info["objective"] + others >= J * (1 - 1e-5)
        assert fit.alphas[j] == pytest.approx(P.alpha(j, fit.Xs[j]), rel=1e-9, abs=1e-15)


@pytest.mark.slow
def test_reaches_the_optimum_of_a_conic_solver():
    """(17) is jointly convex in (T, α): compare with an interior-point solution."""
    cp = pytest.importorskip("cvxpy")
    X, _ = _blobs(n=60, seed=2, classes=2, d=2)
    y = (X[:, 0] > np.median(X[:, 0])).astype(int)
    rows = np.r_[np.flatnonzero(y == 0)[:6], np.flatnonzero(y == 1)[:6]]
    bank = KernelBank.gaussian(factors=[0.5, 2.0]).resolve(X)
    Z = X[-5:]
    Els, Ws = bank.blocks(X[rows], Z), bank.blocks(Z, Z)
    Y = ideal_kernel_factor(y[rows])
    Y = Y - Y.mean(axis=0)
    lam = 0.05
    fit = mk_alignment_lambda_path(Els, Ws, Y, lam=lam, tol=1e-8, max_iter=3000)
    Ts = [cp.Variable((5, 5), PSD=True) for _ in Els]
    al = cp.Variable(2, nonneg=True)
    Wp = [b.Wp for b in fit.problem.blocks]
    G = sum(E @ T @ E.T for E, T in zip(Els, Ts, strict=True))
    obj = lam * sum(cp.sum_squares(T - a * W) for T, a, W in zip(Ts, al, Wp, strict=True))
    prob = cp.Problem(cp.Minimize(obj + cp.sum_squares(G - Y @ Y.T)))
    prob.solve(solver="CLARABEL")
    assert fit.objective == pytest.approx(prob.value, rel=1e-4)
    assert fit.objective >= prob.value * (1 - 1e-6)


def test_problem_matches_dense_objective_with_and_without_compression(rng):
    n, d, mt = 60, 3, 4
    X = rng.standard_normal((n, d))
    y = rng.integers(0, 2, n)
    bank = KernelBank.gaussian(factors=[0.5, 2.0]).resolve(X)
    Z = X[:mt]
    for l in (6, 40):  # l ≤ M m̃ (no compression) and l > M m̃ (QR compression)
        rows = np.arange(l)
        Els, Ws = bank.blocks(X[rows], Z), bank.blocks(Z, Z)
        Y = ideal_kernel_factor(y[rows])
        Y = Y - Y.mean(axis=0)
        P = MKGenNystromProblem.from_blocks(Els, Ws, Y)
        assert P.compressed == (l > 2 * mt)
        Ts = []
        for _ in Els:
            G = rng.standard_normal((mt, mt))
            Ts.append(G @ G.T)
        alphas = np.array([0.3, 1.7])
        Xs = [b.from_landmark_basis(T) for b, T in zip(P.blocks, Ts, strict=True)]
        K = ideal_kernel(y[rows], centered=True)
        Kt = sum(E @ T @ E.T for E, T in zip(Els, Ts, strict=True))
        Wp = [np.linalg.pinv(W, rcond=1e-10, hermitian=True) for W in Ws]
        lam = 0.7
        J = lam * sum(np.sum((T - a * S0) ** 2) for T, a, S0 in zip(Ts, alphas, Wp, strict=True))
        J += np.sum((Kt - K) ** 2)
        assert P.objective(Xs, alphas, lam) == pytest.approx(J, rel=1e-9)
        H = np.eye(l) - 1.0 / l
        Kc, Gc = H @ K @ H, H @ Kt @ H
        rho = np.sum(Kc * Gc) / (np.linalg.norm(Kc) * np.linalg.norm(Gc))
        assert P.target_alignment(P.stack(Xs)) == pytest.approx(rho, rel=1e-9)

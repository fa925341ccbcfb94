"""ℓp-norm MKL regression with the squared loss: exact inner solves against dense references."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from _naive import gaussian_dense, kernel_ridge_with_bias_dense, svr_dual_qp
from lorak.learn._lp_mkl_regression import lp_mkl_ridge
from lorak.solvers._gfb import FactorStack

WIDTHS = (0.5, 2.0, 8.0)


def _exact_factors(X):
    Ks = [gaussian_dense(X, X, b) for b in WIDTHS]
    Vs = []
    for K in Ks:
        lam, U = np.linalg.eigh(K)
        keep = lam > 1e-12 * lam[-1]
        Vs.append(U[:, keep] * np.sqrt(lam[keep]))
    return Ks, FactorStack.from_blocks(Vs)


def _compressed(F):
    lam, U = np.linalg.eigh(F.gram())
    keep = lam > 1e-12 * lam[-1]
    B = F.V @ U[:, keep] / np.sqrt(lam[keep])
    S = np.sqrt(lam[keep])[:, None] * U[:, keep].T
    return FactorStack(ranks=F.ranks, basis=B, coef=S)


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 3))
    y = np.sin(2 * X[:, 0]) + 0.3 * X[:, 1] + 0.1 * rng.standard_normal(50) + 5.0
    Ks, F = _exact_factors(X)
    return X, y, Ks, F


@pytest.mark.parametrize(("p", "compress"), [(2.0, False), (1.25, True), (2.0, True)])
def test_inner_solve_is_the_kernel_ridge_dual(problem, p, compress):
    X, y, Ks, F = problem
    F = _compressed(F) if compress else F
    C = 10.0
    res = lp_mkl_ridge(F, y, C, p, tol=1e-9, max_iter=3000)
    assert res.converged
    np.testing.assert_allclose(np.linalg.norm(res.d, ord=p), 1.0, rtol=1e-12)
    Kd = sum(dk * K for dk, K in zip(res.d, Ks, strict=True))
    alpha, b = kernel_ridge_with_bias_dense(Kd, y, C)
    np.testing.assert_allclose(res.alpha, alpha, atol=1e-8 * np.abs(alpha).max())
    assert res.b == pytest.approx(b, abs=1e-8 * abs(b))
    np.testing.assert_allclose(F.matvec(res.coef) + res.b, Kd @ alpha + b, atol=1e-8)


def _joint_objective(d, Ks, y, C, p):
    """min over (f, b) for fixed d of ½Σ‖f_k‖²/d_k + (C/2)‖y − f − b‖² (dual closed form)."""
    Kd = sum(dk * K for dk, K in zip(d, Ks, strict=True))
    alpha, b = kernel_ridge_with_bias_dense(Kd, y, C)
    r = alpha / C
    return 0.5 * float(alpha @ Kd @ alpha) + 0.5 * C * float(r @ r)


@pytest.mark.parametrize("p", [1.5, 3.0])
def test_weights_minimize_the_joint_objective(problem, p):
    """No other d on the unit ℓp sphere gives a lower objective (the problem is convex)."""
    X, y, Ks, F = problem
    C = 10.0
    res = lp_mkl_ridge(F, y, C, p, tol=1e-9, max_iter=3000)
    best = _joint_objective(res.d, Ks, y, C, p)

    def on_sphere(t):
        d = np.abs(t)
        return _joint_objective(d / np.linalg.norm(d, ord=p), Ks, y, C, p)

    other = minimize(on_sphere, np.ones(len(Ks)), method="Nelder-Mead", options={"xatol": 1e-8})
    assert best <= other.fun * (1 + 1e-7)
    assert res.objective_history[-1] == pytest.approx(best, rel=1e-8)
    # the objective never increases along the alternation
    h = np.asarray(res.objective_history)
    assert np.all(np.diff(h) <= 1e-9 * abs(h[0]))


def test_constant_target_and_bad_input(problem):
    X, y, Ks, F = problem
    res = lp_mkl_ridge(F, np.full(y.shape, 3.0), 1.0, 2.0)
    assert res.b == pytest.approx(3.0) and np.allclose(res.coef, 0.0, atol=1e-12)
    with pytest.raises(ValueError, match="y must have shape"):
        lp_mkl_ridge(F, y[:-1], 1.0, 2.0)
    with pytest.raises(ValueError, match="NaN"):
        lp_mkl_ridge(F, np.r_[y[:-1], np.nan], 1.0, 2.0)
    with pytest.raises(ValueError, match="C must be"):
        lp_mkl_ridge(F, y, 0.0, 2.0)
    with pytest.raises(ValueError, match="p must be"):
        lp_mkl_ridge(F, y, 1.0, 0.5)
    with pytest.raises(ValueError, match="d0 must be"):
        lp_mkl_ridge(F, y, 1.0, 2.0, d0=np.zeros(3))
    y_copy = y.copy()
    lp_mkl_ridge(F, y, 1.0, 2.0)
    np.testing.assert_array_equal(y, y_copy)


def test_gcv_matches_the_dense_hat_matrix(problem):
    from lorak.learn._lp_mkl_regression import gcv_scores, ridge_moments

    X, y, Ks, F = problem
    d = np.array([0.2, 0.5, 0.3])
    Kd = sum(dk * K for dk, K in zip(d, Ks, strict=True))
    n = y.size
    Cs = [0.1, 3.0, 100.0]
    mom = ridge_moments(F, y)
    got = gcv_scores(mom, mom.root(F, d), Cs)
    for C, g in zip(Cs, got, strict=True):
        # hat matrix of kernel ridge with an unregularized bias, from the dense dual
        H = np.column_stack(
            [Kd @ a + b for a, b in (kernel_ridge_with_bias_dense(Kd, e, C) for e in np.eye(n))]
        )
        r = y - H @ y
        ref = n * (r @ r) / (n - np.trace(H)) ** 2
        assert g == pytest.approx(ref, rel=1e-7)


@pytest.mark.parametrize("C", [1.0, 100.0])
def test_svr_newton_reaches_the_qp_optimum(problem, C):
    from lorak.learn._lp_mkl_regression import svr_newton

    X, y, Ks, F = problem
    Phi = F.V[:, F.block(1)]  # one kernel's exact factor
    K = Phi @ Phi.T
    eps = 0.1 * float(np.std(y))
    res = svr_newton(Phi, y, C, eps, tol=1e-6)
    assert res.converged and res.gap <= 1e-6
    ref = svr_dual_qp(K, y, C, eps)
    t = y - Phi @ res.w - res.b
    primal = 0.5 * res.w @ res.w + C * np.maximum(np.abs(t) - eps, 0).sum()
    assert primal == pytest.approx(ref, rel=1e-5)


def test_lp_mkl_svr_weights_and_predictions(problem):
    from lorak.learn._lp_mkl_regression import lp_mkl_svr

    X, y, Ks, F = problem
    eps = 0.1 * float(np.std(y))
    res = lp_mkl_svr(F, y, 10.0, 2.0, eps, tol=1e-4, max_iter=100, inner_tol=1e-6)
    assert res.converged and res.info["inner_gap"] <= 1e-6
    np.testing.assert_allclose(np.linalg.norm(res.d, 2), 1.0, rtol=1e-12)
    # the fitted function is Σ_k d_k K_k α + b
    Kd = sum(dk * K for dk, K in zip(res.d, Ks, strict=True))
    np.testing.assert_allclose(F.matvec(res.coef), Kd @ res.alpha, atol=1e-8)
    # the weights minimize the joint objective: no uniform-weight model is better
    P = res.objective_history[-1]
    uni = lp_mkl_svr(F, y, 10.0, 2.0, eps, max_iter=1, inner_tol=1e-6, warn=False)
    assert P <= uni.objective_history[0] * (1 + 1e-6)


# ------------------------------------------------------------------ the estimator


@pytest.fixture(scope="module")
def wave():
    rng = np.random.default_rng(1)
    X = rng.uniform(-3, 3, size=(300, 2))
    y = np.sin(X[:, 0]) + 0.1 * X[:, 1] ** 2 + 0.05 * rng.standard_normal(300)
    return X, y


def test_regressor_is_the_math_on_its_factors(wave):
    from lorak import LowRankMKLRegressor

    X, y = wave
    reg = LowRankMKLRegressor(rank=40, C=5.0, weights="mkl", random_state=0).fit(X, y)
    # the same fit from the stored landmarks and normalizations: V_k = k_k(X, Z) N_k
    blocks = reg.kernels_.blocks(X, reg.components_)
    V = [B @ N for B, N in zip(blocks, reg.normalizations_, strict=True)]
    res = lp_mkl_ridge(FactorStack.from_blocks(V), y, 5.0, 2.0, tol=reg.tol, max_iter=200)
    # both stop at max|Δd| < tol: the weights agree to that tolerance
    np.testing.assert_allclose(reg.kernel_weights_, res.d, atol=10 * reg.tol)
    # and the estimator's predictions are the kernel ridge fit at its own weights
    Kd = sum(dk * Vk @ Vk.T for dk, Vk in zip(reg.kernel_weights_, V, strict=True))
    alpha, b = kernel_ridge_with_bias_dense(Kd, y, 5.0)
    np.testing.assert_allclose(reg.predict(X), Kd @ alpha + b, atol=1e-5 * np.abs(y).max())


def test_regressor_selected_weights_are_the_lowest_gcv(wave):
    from lorak import LowRankMKLRegressor

    X, y = wave
    reg = LowRankMKLRegressor(rank=40, random_state=0).fit(X, y)
    table = reg.weights_gcv_
    assert set(table) >= {"mkl", "uniform"} and len(table) == 2 + len(reg.kernels_)
    assert reg.weights_choice_ == min(table, key=table.get)
    d = reg.kernel_weights_
    if reg.weights_choice_.startswith("kernel"):
        k = int(reg.weights_choice_.split()[1])
        np.testing.assert_array_equal(d, np.eye(len(d))[k])
    # the GCV of the chosen weights, recomputed densely: n‖r‖² / (n − tr H)² at C_
    blocks = reg.kernels_.blocks(X, reg.components_)
    V = [B @ N for B, N in zip(blocks, reg.normalizations_, strict=True)]
    Kd = sum(dk * Vk @ Vk.T for dk, Vk in zip(d, V, strict=True))
    alpha, b = kernel_ridge_with_bias_dense(Kd, y, reg.C_)
    pred = Kd @ alpha + b
    np.testing.assert_allclose(reg.predict(X), pred, atol=1e-5 * np.abs(y).max())
    n = len(y)
    Kc = Kd - Kd.mean(0) - Kd.mean(1)[:, None] + Kd.mean()
    trH = 1.0 + np.trace(np.linalg.solve(Kc + np.eye(n) / reg.C_, Kc))
    gcv = n * np.sum((y - pred) ** 2) / (n - trH) ** 2
    np.testing.assert_allclose(table[reg.weights_choice_], gcv, rtol=1e-5)
    with pytest.raises(ValueError, match="weights must be"):
        LowRankMKLRegressor(weights="best").fit(X, y)


def test_regressor_rank_doubling_is_kernel_ridge_on_the_final_landmarks():
    from lorak import LowRankMKLRegressor
    from lorak.kernels import kernel_block

    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(700, 5))
    y = np.sin(3 * X[:, 0]) * X[:, 1] + X[:, 2] ** 2 + 0.05 * rng.standard_normal(700)
    reg = LowRankMKLRegressor(random_state=0).fit(X, y)
    path = reg.rank_path_
    assert path[0][0] == 200 and len(path) >= 2
    # every kept doubling lowered the GCV by at least 2 %; the first refused one did not
    kept = [r for r, _ in path if r <= reg.rank_]
    assert reg.rank_ == kept[-1] == reg.components_.shape[0]
    gcv = [g for _, g in path]
    for i in range(1, len(kept)):
        assert gcv[i] < 0.98 * gcv[i - 1]
    if len(kept) < len(path):
        assert not path[len(kept)][1] < 0.98 * path[len(kept) - 1][1]
    if reg.rank_ > 200:
        # the model is kernel ridge on the Nyström approximation of Σ d_k k_k at the
        # final landmarks, at C_
        d, Z = reg.kernel_weights_, reg.components_
        E = sum(dk * kernel_block(k, X, Z) for dk, k in zip(d, reg.kernels_, strict=True))
        W = sum(dk * kernel_block(k, Z, Z) for dk, k in zip(d, reg.kernels_, strict=True))
        K = E @ np.linalg.pinv(W, rcond=1e-10, hermitian=True) @ E.T
        alpha, b = kernel_ridge_with_bias_dense(K, y, reg.C_)
        np.testing.assert_allclose(reg.predict(X), K @ alpha + b, atol=1e-4 * np.abs(y).max())
    fixed = LowRankMKLRegressor(rank=200, random_state=0).fit(X, y)
    assert fixed.rank_ == 200 and fixed.rank_path_ == []
    with pytest.raises(ValueError, match="rank must be"):
        LowRankMKLRegressor(rank="big").fit(X, y)


def test_regressor_defaults_are_scale_free_and_fit(wave):
    from lorak import LowRankMKLRegressor

    X, y = wave
    ref = LowRankMKLRegressor(rank=40, random_state=0).fit(X, y)
    assert ref.score(X, y) > 0.95
    assert ref.C_ in ref.C_grid_ and ref.gcv_.shape == ref.C_grid_.shape
    for c in (1e-3, 1e3):
        other = LowRankMKLRegressor(rank=40, random_state=0).fit(c * X, 7.0 * y)
        np.testing.assert_allclose(other.predict(c * X), 7.0 * ref.predict(X), rtol=1e-6, atol=1e-6)


def test_regressor_epsilon_insensitive_and_float32(wave):
    from lorak import LowRankMKLRegressor

    X, y = wave
    reg = LowRankMKLRegressor(rank=40, loss="epsilon_insensitive", random_state=0).fit(X, y)
    assert reg.score(X, y) > 0.95
    r32 = LowRankMKLRegressor(rank=40, random_state=0).fit(X.astype(np.float32), y)
    assert r32.score(X, y) > 0.95


_UNITS: dict = {}


def _units_data():
    """A small problem (the fits run many times): 150 rows, rank 20."""
    if "data" not in _UNITS:
        rng = np.random.default_rng(4)
        X = rng.uniform(-3, 3, size=(150, 2))
        y = np.sin(X[:, 0]) + 0.1 * X[:, 1] ** 2 + 0.05 * rng.standard_normal(150)
        Xte = rng.uniform(-3, 3, size=(60, 2))
        _UNITS["data"] = X, y, Xte, np.sin(Xte[:, 0]) + 0.1 * Xte[:, 1] ** 2
    return _UNITS["data"]


@pytest.mark.parametrize("loss", ["squared", "epsilon_insensitive"])
@pytest.mark.parametrize(("scale", "offset"), [(1e6, 0.0), (5e4, 2e5), (-1e-6, -3.0)])
def test_regressor_is_free_of_the_units_of_y(loss, scale, offset):
    """Issue 30, item 9: fitting scale·y + offset predicts scale·f + offset, for both
    losses (the targets are standardized inside; before, the ε-insensitive loss reused
    the squared loss's C on the raw y, and y·1e6 gave R² ≈ 0)."""
    from lorak import LowRankMKLRegressor

    X, y, Xte, yte = _units_data()
    make = lambda: LowRankMKLRegressor(rank=20, loss=loss, random_state=0)  # noqa: E731
    if loss not in _UNITS:
        _UNITS[loss] = make().fit(X, y)
    ref = _UNITS[loss]
    other = make().fit(X, scale * y + offset)
    got = (other.predict(Xte) - offset) / scale
    np.testing.assert_allclose(got, ref.predict(Xte), rtol=1e-6, atol=1e-6 * np.abs(y).max())
    assert other.score(Xte, scale * yte + offset) > 0.9
    assert other.C_ == pytest.approx(ref.C_, rel=1e-9)
    if other.gcv_ is not None:  # reported in the units of y²
        np.testing.assert_allclose(other.gcv_, scale**2 * ref.gcv_, rtol=1e-6)


def test_epsilon_insensitive_is_the_svr_on_standardized_targets():
    """The exact rule behind the units: the fit of s·y with C·s is s times the fit of y
    with C (the objective scales by s²); the estimator's fit with C is the math's fit
    on (y − ȳ)/σ, mapped back."""
    from lorak import LowRankMKLRegressor
    from lorak.learn._lp_mkl_regression import lp_mkl_svr

    X, y, _, _ = _units_data()
    reg = LowRankMKLRegressor(
        rank=20, loss="epsilon_insensitive", C=3.0, weights="mkl", random_state=0
    ).fit(X, y)
    blocks = reg.kernels_.blocks(X, reg.components_)
    F = FactorStack.from_blocks([B @ N for B, N in zip(blocks, reg.normalizations_, strict=True)])
    mu, sd = y.mean(), y.std()
    z = lp_mkl_svr(F, (y - mu) / sd, 3.0, 2.0, 0.1, tol=reg.tol, max_iter=200)
    raw = lp_mkl_svr(F, y, 3.0 * sd, 2.0, 0.1 * sd, tol=reg.tol, max_iter=200)
    np.testing.assert_allclose(raw.d, z.d, atol=1e-3)
    pred_z = F.V @ z.coef * sd + (mu + sd * z.b)
    np.testing.assert_allclose(F.V @ raw.coef + raw.b, pred_z, atol=1e-3 * np.abs(y).max())
    np.testing.assert_allclose(reg.predict(X), pred_z, atol=1e-3 * np.abs(y).max())


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"loss": "huber"}, "unknown loss"),
        ({"C": "cv"}, "C must be a positive number or 'gcv'"),
        ({"C": -1.0}, "C must be > 0"),
        ({"C_range": (10.0, 1.0)}, "low <= high"),
        ({"p": 0.5}, "p must be >= 1"),
        ({"epsilon": -0.1}, "epsilon must be >= 0"),
        ({"n_kernels": 0}, "n_kernels must be an integer >= 1"),
        ({"factor_range": (0.0, 1.0)}, "factor_range"),
    ],
)
def test_regressor_bad_parameters(wave, kw, match):
    from lorak import LowRankMKLRegressor

    X, y = wave
    with pytest.raises(ValueError, match=match):
        LowRankMKLRegressor(rank=10, **kw).fit(X, y)


def test_regressor_bad_targets(wave):
    from lorak import LowRankMKLRegressor

    X, y = wave
    with pytest.raises(ValueError, match="NaN"):
        LowRankMKLRegressor(rank=10).fit(X, np.r_[y[:-1], np.nan])
    with pytest.raises(ValueError):
        LowRankMKLRegressor(rank=10).fit(X, np.c_[y, y])

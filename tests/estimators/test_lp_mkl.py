"""ℓp-norm MKL with low-rank kernels: the outer update, the factors, the classifier."""

import os
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from _naive import gaussian_dense
from lorak.estimators import LowRankMKLClassifier, default_bank
from lorak.kernels import Gaussian, KernelBank
from lorak.learn._lp_mkl import (
    GaussianGrams,
    bank_factors,
    kernel_norms,
    kkt_bias,
    lp_mkl,
    lp_mkl_full_kernel,
    lp_norm_weights,
    shared_basis_factor,
    uniform_weights,
)
from lorak.solvers._gfb import FactorStack, gfb_naive


def _xor(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 2))
    y = np.where(X[:, 0] * X[:, 1] > 0, 1, -1)
    return X, y


# ---------------------------------------------------------------- the weight update


@pytest.mark.parametrize("p", [1.0, 1.1, 2.0, 4.0])
def test_lp_norm_weights_formula(p, rng):
    f2 = rng.uniform(0, 5, 7) * 1e8  # large norms (α ~ C = 1000) must not overflow
    d = lp_norm_weights(f2, p)
    assert np.all(d >= 0)
    np.testing.assert_allclose(np.linalg.norm(d, ord=p), 1.0, rtol=1e-12)
    fn = np.sqrt(f2)
    expected = fn ** (2 / (p + 1)) / np.sum(fn ** (2 * p / (p + 1))) ** (1 / p)
    np.testing.assert_allclose(d, expected, rtol=1e-10)


def test_lp_norm_weights_p1_is_proportional_and_sparse():
    d = lp_norm_weights(np.array([4.0, 0.0, 1.0]), 1.0)
    np.testing.assert_allclose(d, [2 / 3, 0, 1 / 3])
    assert lp_norm_weights(np.zeros(3), 2.0) is None


def test_uniform_weights_on_the_unit_sphere():
    for p in (1, 1.1, 2, 3):
        np.testing.assert_allclose(np.linalg.norm(uniform_weights(6, p), ord=p), 1.0)


def test_kernel_norms_use_d_squared(rng):
    V1, V2 = rng.standard_normal((30, 3)), rng.standard_normal((30, 2))
    F = FactorStack.from_blocks([V1, V2])
    y = np.where(rng.standard_normal(30) > 0, 1.0, -1.0)
    a = rng.uniform(0, 1, 30)
    d = np.array([0.3, 0.8])
    K1, K2 = V1 @ V1.T, V2 @ V2.T
    ya = y * a
    np.testing.assert_allclose(
        kernel_norms(F, y, a, d), [0.09 * ya @ K1 @ ya, 0.64 * ya @ K2 @ ya], rtol=1e-12
    )


def test_kkt_bias_free_and_fallback():
    f = np.array([0.5, -0.2, 1.5, -3.0])
    y = np.array([1.0, 1.0, -1.0, -1.0])
    alpha = np.array([0.5, 1.0, 0.0, 0.0])  # only the first is free (C = 1)
    assert kkt_bias(f, y, alpha, 1.0) == pytest.approx(0.5)
    # no free vector: midpoint of [max lower bounds, min upper bounds] = [0.5, 1.0]
    f = np.array([0.5, -0.2, -2.0, 0.2])
    alpha = np.array([0.0, 1.0, 0.0, 1.0])
    b = kkt_bias(f, y, alpha, 1.0)
    assert b == pytest.approx(0.75)
    m = y * (f + b)
    assert m[0] >= 1 - 1e-12 and m[2] >= 1 - 1e-12  # α = 0: margin ≥ 1
    assert m[1] <= 1 + 1e-12 and m[3] <= 1 + 1e-12  # α = C: margin ≤ 1


# ---------------------------------------------------------------- the outer loop


def _factors(X, bank, m, seed=0):
    rng = np.random.default_rng(seed)
    Z = X[rng.choice(X.shape[0], m, replace=False)]
    return bank_factors(bank, X, Z, compress=False), Z


@pytest.mark.parametrize("p", [1.0, 1.1, 2.0])
def test_weights_stay_on_the_lp_sphere(p):
    X, y = _xor()
    bank = KernelBank.gaussian_sigmas([0.2, 0.5, 1.0, 3.0])
    fac, _ = _factors(X, bank, 20)
    res = lp_mkl(fac.stack, y, 10.0, p, tol=1e-4, max_iter=30, solver="naive", warn=False)
    assert len(res.d_history) == res.n_iter + (0 if res.converged and res.n_iter == 1 else 1)
    for d in res.d_history:
        assert np.all(d >= 0)
        np.testing.assert_allclose(np.linalg.norm(d, ord=p), 1.0, rtol=1e-10)
    np.testing.assert_allclose(np.linalg.norm(res.d, ord=p), 1.0, rtol=1e-10)


def test_lp_mkl_max_iter_warns():
    X, y = _xor()
    fac, _ = _factors(X, KernelBank.gaussian_sigmas([0.2, 1.0]), 15)
    with pytest.warns(ConvergenceWarning, match="max_iter=1 outer iterations reached"):
        lp_mkl(fac.stack, y, 10.0, 2.0, max_iter=1, solver="naive")


def test_primal_bias_beats_kkt_bias_for_an_inexact_solve():
    """bias='primal' minimizes the hinge loss for the final f; the KKT mean does not."""
    from lorak.solvers._gfb import best_bias

    X, y = _xor(150, seed=2)
    fac, _ = _factors(X, KernelBank.gaussian_sigmas([0.3, 1.0]), 20)
    F = fac.stack
    kw = dict(max_iter=2, solver="naive", inner={"max_iter": 5}, warn=False)
    primal = lp_mkl(F, y, 100.0, 2.0, bias="primal", **kw)
    kkt = lp_mkl(F, y, 100.0, 2.0, bias="kkt", **kw)
    np.testing.assert_array_equal(primal.alpha, kkt.alpha)  # same solve, another b
    f = F.matvec(np.repeat(primal.d, F.ranks) * F.rmatvec(y * primal.alpha))

    def hinge(b):
        return np.maximum(0.0, 1.0 - y * (f + b)).sum()

    assert primal.b == pytest.approx(best_bias(f, y, 100.0)[0])
    assert hinge(primal.b) <= hinge(kkt.b) + 1e-9
    for b in np.linspace(primal.b - 2, primal.b + 2, 41):  # a minimizer of the hinge
        assert hinge(primal.b) <= hinge(b) + 1e-9
    with pytest.raises(ValueError, match="unknown bias 'mean'"):
        lp_mkl(F, y, 1.0, 2.0, bias="mean")


def test_single_kernel_is_a_low_rank_svm_matching_svc():
    """M = 1: the SVM on the explicit features V matches SVC(kernel='linear') on V."""
    X, y = _xor(100, seed=1)
    bank = KernelBank.gaussian_sigmas([0.5])
    fac, _ = _factors(X, bank, 25)
    V = fac.stack.V
    C = 5.0
    svc = SVC(kernel="linear", C=C, tol=1e-8).fit(V, y)
    res = gfb_naive(fac.stack, y.astype(float), [1.0], C, criterion="gap", tol=1e-8, max_iter=50000)
    ya = y * res.alpha
    a_svc = np.zeros(y.size)
    a_svc[svc.support_] = np.abs(svc.dual_coef_[0])
    obj_svc = 0.5 * np.sum((V.T @ (y * a_svc)) ** 2) - a_svc.sum()
    np.testing.assert_allclose(res.objective, obj_svc, rtol=1e-5)
    dec = V @ (V.T @ ya) + res.info["bias"]
    np.testing.assert_allclose(dec, svc.decision_function(V), atol=2e-3 * np.abs(dec).max())
    # and through the outer loop (p is irrelevant with one kernel: d = 1)
    out = lp_mkl(fac.stack, y, C, 2.0, solver="naive", inner={"criterion": "gap", "tol": 1e-8})
    np.testing.assert_allclose(out.d, [1.0])
    assert out.b == pytest.approx(svc.intercept_[0], abs=5e-3)


@pytest.mark.parametrize("block", [7, 40, 1 << 16])  # several blocks and a remainder; one
def test_gaussian_grams_sum_and_quadratic_forms(rng, monkeypatch, block):
    X = rng.standard_normal((23, 3))
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    b = np.array([0.5, 2.0, 8.0, 30.0])
    d = np.array([0.3, 0.0, 1.2, 0.7])  # a zero weight is skipped
    monkeypatch.setattr(GaussianGrams, "BLOCK", block)
    for dtype, rtol in ((np.float64, 1e-13), (np.float32, 1e-6)):
        g = GaussianGrams(D.astype(dtype), b)
        K = [np.exp(-D / bk) for bk in b]
        want = sum(dk * Kk for dk, Kk in zip(d, K, strict=True))
        got = g.weighted(d)
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=rtol, atol=0)
        rows, cols = np.array([0, 5, 6, 20]), np.arange(3, 17)
        np.testing.assert_allclose(g.weighted(d, rows, cols), want[np.ix_(rows, cols)], rtol=rtol)
        assert not g.weighted(np.zeros(4)).any()
        sv = np.array([1, 2, 4, 9, 10, 15, 22])
        v = rng.standard_normal(sv.size)
        quad = [v @ Kk[np.ix_(sv, sv)] @ v for Kk in K]
        np.testing.assert_allclose(g.quad_forms(v, sv), quad, rtol=10 * rtol, atol=1e-12)


def test_full_rank_factors_reproduce_the_full_kernel_mkl():
    """With every training row a landmark, low-rank MKL is full-kernel MKL."""
    X, y = _xor(60, seed=2)
    sig = [0.3, 1.0, 3.0]
    bank = KernelBank.gaussian_sigmas(sig)
    fac = bank_factors(bank, X, X, compress=False)
    C, p = 10.0, 1.5
    ours = lp_mkl(
        fac.stack,
        y,
        C,
        p,
        tol=1e-6,
        max_iter=200,
        solver="naive",
        inner={"criterion": "gap", "tol": 1e-9, "max_iter": 100000},
    )
    D = ((X[:, None] - X[None]) ** 2).sum(-1)
    ref, _ = lp_mkl_full_kernel(
        GaussianGrams(D, [2 * s**2 for s in sig]), y, C, p, tol=1e-6, max_iter=200, svc_tol=1e-8
    )
    np.testing.assert_allclose(ours.d, ref.d, atol=2e-3)
    np.testing.assert_allclose(ours.objective_history[-1], ref.objective_history[-1], rtol=1e-3)


def test_shared_basis_solver_solves_the_same_svm():
    X, y = _xor(120, seed=4)
    bank = KernelBank.gaussian_sigmas([0.2, 0.5, 1.0, 3.0])
    Z = X[np.random.default_rng(0).choice(120, 20, replace=False)]
    F = bank_factors(bank, X, Z, compress_rtol=1e-14).stack
    d = np.array([0.1, 0.5, 0.3, 0.2])
    inner = {"criterion": "gap", "tol": 1e-7, "max_iter": 50000}
    a = gfb_naive(shared_basis_factor(F, d), y, [1.0], 10.0, **inner)
    b = gfb_naive(F, y, d, 10.0, **inner)
    np.testing.assert_allclose(a.objective, b.objective, rtol=1e-5)
    inner = {"criterion": "gap", "tol": 1e-4, "max_iter": 50000}
    r1 = lp_mkl(F, y, 10.0, 2.0, solver="shared", inner=inner, tol=1e-5, max_iter=100)
    r2 = lp_mkl(F, y, 10.0, 2.0, solver="naive", inner=inner, tol=1e-5, max_iter=100)
    np.testing.assert_allclose(r1.d, r2.d, atol=1e-3)
    with pytest.raises(ValueError, match="needs factors with a shared basis"):
        shared_basis_factor(bank_factors(bank, X, Z, compress=False).stack, d)


def test_newton_solver_gives_the_same_mkl_as_the_gfb():
    X, y = _xor(120, seed=4)
    bank = KernelBank.gaussian_sigmas([0.2, 0.5, 1.0, 3.0])
    Z = X[np.random.default_rng(0).choice(120, 20, replace=False)]
    F = bank_factors(bank, X, Z, compress_rtol=1e-14).stack
    gfb = {"criterion": "gap", "tol": 1e-4, "max_iter": 50000}
    r1 = lp_mkl(F, y, 10.0, 2.0, solver="newton", inner={"tol": 1e-7}, tol=1e-5, max_iter=100)
    r2 = lp_mkl(F, y, 10.0, 2.0, solver="shared", inner=gfb, tol=1e-5, max_iter=100)
    assert r1.converged and r2.converged
    np.testing.assert_allclose(r1.d, r2.d, atol=1e-3)
    np.testing.assert_allclose(r1.objective_history[-1], r2.objective_history[-1], rtol=1e-4)
    # the Huber smoothing leaves a gap of about 0.09·h here: 1e-7 is reached at
    # h = 1e-6, far from the width floor h_min = 1e-7 where round-off decides
    assert r1.info["method"] == "newton" and r1.info["relative_gap"] <= 1e-7
    # stacked factors too (the Newton system has Σ r_k + 1 unknowns then), and p = 1
    Fs = bank_factors(bank, X, Z, compress=False).stack
    r3 = lp_mkl(Fs, y, 10.0, 2.0, solver="newton", inner={"tol": 1e-7}, tol=1e-5, max_iter=100)
    np.testing.assert_allclose(r3.d, r1.d, atol=1e-3)
    r4 = lp_mkl(F, y, 10.0, 1.0, solver="newton", tol=1e-5, max_iter=200, warn=False)
    np.testing.assert_allclose(r4.d.sum(), 1.0)
    assert np.all(r4.d >= 0)


# ---------------------------------------------------------------- the factors


@pytest.mark.parametrize("m", [20, 10])
def test_bank_factors_compressed_equals_explicit(m):
    # m = 20: Σ r_k = 160 > 150 rows, the basis from V Vᵀ; m = 10: from VᵀV
    X, _ = _xor(150)
    bank = KernelBank.gaussian_sigmas(np.logspace(-0.5, 1, 8))
    rng = np.random.default_rng(0)
    Z = X[rng.choice(150, m, replace=False)]
    ex = bank_factors(bank, X, Z, compress=False)
    co = bank_factors(bank, X, Z, compress=True, compress_rtol=1e-12)
    V = ex.stack.V
    B, S = co.stack.basis, co.stack.coef
    assert co.info["compressed_rank"] < V.shape[1]  # wide Gaussians share directions
    np.testing.assert_allclose(B @ S, V, atol=1e-5 * np.abs(V).max())
    np.testing.assert_allclose(B.T @ B, np.eye(B.shape[1]), atol=1e-4)
    # each block is the Nyström factor of its kernel: V_k V_kᵀ = E W⁻¹ Eᵀ
    k = 2
    E = gaussian_dense(X, Z, bank[k].bandwidth)
    W = gaussian_dense(Z, Z, bank[k].bandwidth)
    Vk = V[:, ex.stack.block(k)]
    np.testing.assert_allclose(
        Vk @ Vk.T, E @ np.linalg.pinv(W, rcond=1e-10, hermitian=True) @ E.T, atol=1e-6
    )
    # with a row sample for the basis: exact on the sample, measured on the other rows
    cs = bank_factors(bank, X, Z, compress_rows=50, rng=np.random.default_rng(1))
    assert cs.info["compression_rows"] == 50
    assert cs.info["compression_error"] < 1e-8
    assert cs.info["compression_error_other"] < 1e-4
    Bs, Ss = cs.stack.basis, cs.stack.coef
    assert np.sum((V - Bs @ Ss) ** 2) / np.sum(V**2) < 1e-4


@pytest.mark.parametrize("m", [20, 10])
def test_bank_factors_compression_error_and_rank_are_those_of_the_spectrum(m):
    """The pivoted Cholesky basis keeps the directions of VᵀV above the cut-off and
    reports the squared Frobenius error it leaves (from the Gram VVᵀ, m = 20, or VᵀV)."""
    X, _ = _xor(150)
    bank = KernelBank.gaussian_sigmas(np.logspace(-0.5, 1, 8))
    Z = X[np.random.default_rng(0).choice(150, m, replace=False)]
    V = bank_factors(bank, X, Z, compress=False).stack.V
    lam = np.linalg.eigvalsh(V.T @ V)[::-1]
    for rtol in (1e-6, 1e-9):
        co = bank_factors(bank, X, Z, compress_rtol=rtol)
        B, S = co.stack.basis, co.stack.coef
        direct = np.sum((V - B @ S) ** 2) / np.sum(V**2)
        assert co.info["compression_error"] == pytest.approx(direct, rel=1e-3, abs=1e-13)
        # the rank is that of the eigenvalue cut-off, up to eigenvalues within 10× of it
        r = co.info["compressed_rank"]
        assert np.sum(lam > 10 * rtol * lam[0]) <= r <= np.sum(lam > 0.1 * rtol * lam[0])
        assert direct <= np.sum(lam[lam <= 10 * rtol * lam[0]]) / np.sum(lam) * 1.5


# ---------------------------------------------------------------- the classifier


def test_classifier_fits_xor_and_predicts_through_the_factors():
    X, y = _xor(200)
    clf = LowRankMKLClassifier(n_kernels=6, rank=30, C=10.0, p=2.0, random_state=0).fit(X, y)
    assert clf.score(X, y) > 0.9
    assert clf.kernel_weights_.shape == (6,)
    np.testing.assert_allclose(np.linalg.norm(clf.kernel_weights_, ord=2), 1.0)
    # decision on the training rows through k(x, Z)β equals the factor form K_d Yα + b
    dec = clf.decision_function(X)
    Fd = bank_factors(clf.kernels_, X, clf.components_, compress=False).stack
    dcol = np.repeat(clf.kernel_weights_, Fd.ranks)
    f = Fd.matvec(dcol * Fd.rmatvec(clf.dual_coef_[0])) + clf.intercept_[0]
    np.testing.assert_allclose(dec, f, atol=1e-3 * np.abs(f).max())  # compression: 1e-5


def test_classifier_with_the_newton_solver():
    X, y = _xor(200)
    kw = {"n_kernels": 6, "rank": 30, "p": 2.0, "random_state": 0}
    big = LowRankMKLClassifier(solver="newton", C=1000.0, inner_tol=1e-6, **kw).fit(X, y)
    assert big.converged_[0]
    assert 0 <= big.duality_gap_[0] <= 1e-6
    assert big.score(X, y) > 0.95
    np.testing.assert_allclose(np.linalg.norm(big.kernel_weights_, ord=2), 1.0)
    # same SVM as the GFB in the shared basis run to a tight gap (C = 10: the GFB's
    # iteration count grows with C)
    nt = LowRankMKLClassifier(solver="newton", C=10.0, inner_tol=1e-6, **kw).fit(X, y)
    gfb = LowRankMKLClassifier(
        solver="shared", C=10.0, inner_tol=1e-5, inner_max_iter=100000, max_iter=100, **kw
    ).fit(X, y)
    np.testing.assert_allclose(nt.kernel_weights_, gfb.kernel_weights_, atol=2e-3)
    agree = np.mean(np.sign(nt.decision_function(X)) == np.sign(gfb.decision_function(X)))
    assert agree >= 0.99
    # decision on the training rows through k(x, Z)β equals the factor form K_d Yα + b
    dec = nt.decision_function(X)
    Fd = bank_factors(nt.kernels_, X, nt.components_, compress=False).stack
    dcol = np.repeat(nt.kernel_weights_, Fd.ranks)
    f = Fd.matvec(dcol * Fd.rmatvec(nt.dual_coef_[0])) + nt.intercept_[0]
    np.testing.assert_allclose(dec, f, atol=1e-3 * np.abs(f).max())
    # multi-class one-vs-rest and float32 input
    rng = np.random.default_rng(0)
    centers = np.array([[0, 0], [3, 0], [0, 3]])
    X3 = np.vstack([c + 0.5 * rng.standard_normal((40, 2)) for c in centers]).astype(np.float32)
    y3 = np.repeat(["a", "b", "c"], 40)
    clf = LowRankMKLClassifier(n_kernels=4, rank=15, C=5.0, random_state=0)
    assert clf.solver == "newton" and clf.inner_tol is None  # the defaults
    assert clf.fit(X3, y3).score(X3, y3) > 0.95
    assert clf.duality_gap_.shape == (3,) and np.all(clf.duality_gap_ <= 1e-3)


def test_sparse_weights_with_p_one():
    X, y = _xor(200, seed=3)
    sig = [0.05, 0.3, 1.0, 30.0, 100.0]
    clf = LowRankMKLClassifier(
        KernelBank.gaussian_sigmas(sig),
        rank=30,
        C=10.0,
        p=1.0,
        max_iter=100,
        solver="naive",
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X, y)
    d = clf.kernel_weights_
    np.testing.assert_allclose(d.sum(), 1.0)
    assert d[[3, 4]].max() < 0.05 * d.max()  # very wide Gaussians cannot fit xor


def test_multiclass_one_vs_rest():
    rng = np.random.default_rng(0)
    centers = np.array([[0, 0], [3, 0], [0, 3]])
    X = np.vstack([c + 0.5 * rng.standard_normal((40, 2)) for c in centers])
    y = np.repeat(["a", "b", "c"], 40)
    clf = LowRankMKLClassifier(n_kernels=4, rank=15, C=5.0, random_state=0).fit(X, y)
    assert clf.kernel_weights_.shape == (3, 4)
    assert clf.decision_function(X).shape == (120, 3)
    assert clf.score(X, y) > 0.95


def test_float32_factors_and_kmeans_landmarks():
    X, y = _xor(150)
    clf = LowRankMKLClassifier(
        n_kernels=4, sigma_range=(0.1, 3.0), rank=20, C=10.0, landmarks="kmeans", random_state=0
    ).fit(X.astype(np.float32), y)
    assert clf.factor_info_["compressed_rank"] <= 20 * 4
    assert clf.score(X, y) > 0.85


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"p": 0.5}, "p must be >= 1; got 0.5"),
        ({"C": 0.0}, "C must be > 0; got 0.0"),
        ({"C": -1.0}, "C must be > 0"),
        ({"kernels": []}, "kernels is empty"),
        ({"rank": 500}, "rank=500 exceeds n_samples=120"),
        ({"solver": "smo"}, "unknown solver 'smo'"),
        ({"gfb_weights": "x"}, "unknown gfb_weights"),
        ({"n_kernels": 0}, "n_kernels must be an integer >= 1"),
        ({"compress": False, "solver": "shared"}, "solver='shared' .* needs compress=True"),
        ({"compress": False, "solver": "newton"}, "solver='newton' .* needs compress=True"),
        ({"solver": "newton", "eta": 0.1}, "eta=0.1 is a GFB option"),
        ({"solver": "newton", "inner_criterion": "objective"}, "inner_criterion='objective'"),
    ],
)
def test_bad_parameters(params, match):
    X, y = _xor()
    with pytest.raises(ValueError, match=match):
        LowRankMKLClassifier(**params).fit(X, y)


def test_single_class_is_refused():
    X, _ = _xor()
    with pytest.raises(ValueError, match="at least 2 classes; got 1 class"):
        LowRankMKLClassifier(rank=5).fit(X, np.ones(X.shape[0]))


def test_default_bank_is_the_papers():
    bank = default_bank()
    assert len(bank) == 50
    sig = np.sqrt(np.array([k.bandwidth for k in bank]) / 2)
    np.testing.assert_allclose(sig[[0, -1]], [1.0, 100.0])
    assert isinstance(bank[0], Gaussian)


@pytest.mark.data
@pytest.mark.slow
def test_svmguide1_close_to_the_full_kernel_reference():
    from sklearn.model_selection import train_test_split

    from lorak.datasets import load

    ds = load("svmguide1", split="all", data_home=os.environ.get("LORAK_DATA"))
    X = ds.X
    X = 2 * (X - X.min(0)) / (X.max(0) - X.min(0)) - 1
    rng = np.random.default_rng(0)
    idx = rng.choice(X.shape[0], 1500, replace=False)
    Xtr, Xte, ytr, yte = train_test_split(X[idx], ds.y[idx], test_size=0.3, random_state=0)
    clf = LowRankMKLClassifier(n_kernels=10, rank=100, C=100.0, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(Xtr, ytr)
    bank = default_bank(10)
    D = ((Xtr[:, None] - Xtr[None]) ** 2).sum(-1)
    yb = np.where(ytr == clf.classes_[1], 1.0, -1.0)
    res, svc = lp_mkl_full_kernel(
        GaussianGrams(D, [k.bandwidth for k in bank]), yb, 100.0, 2.0, warn=False
    )
    Dte = ((Xte[:, None] - Xtr[svc.support_][None]) ** 2).sum(-1)
    dec = GaussianGrams(Dte, [k.bandwidth for k in bank]).weighted(res.d) @ svc.dual_coef_[0]
    acc_full = np.mean(
        np.where(dec + svc.intercept_[0] > 0, 1, -1) == np.where(yte == clf.classes_[1], 1, -1)
    )
    assert clf.score(Xte, yte) >= acc_full - 0.02

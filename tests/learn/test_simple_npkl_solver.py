"""SimpleNPKL's eigen-solver choice: the dense solve for many eigenpairs at mid-size n.

The switch (``DENSE_LARGE_FRACTION``, ``DENSE_LARGE_MAX_N``) changes the solver, not the
problem: the same positive eigenpairs, the same Algorithm 1 iterates. Forced here on a
small problem by lowering the thresholds.
"""

import numpy as np
import pytest
import scipy.linalg

from lorak.constraints import from_labels
from lorak.learn import _simple_npkl as M


def problem(n=300, seed=0, k=5):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = rng.normal(0.0, 1.0, (n, 3)) + 2.0 * rng.normal(0.0, 1.0, (3, 3))[y]
    L = M.normalized_laplacian(M.knn_graph(X, k))
    pairs, signs = from_labels(y, ratio=0.7, random_state=seed).pairs()
    return L, pairs, signs


def kernel(res):
    return res.embedding @ res.embedding.T


def test_many_eigenpairs_switch_to_dense_with_the_same_result(monkeypatch):
    L, pairs, signs = problem()
    n = L.shape[0]
    A = M.constraint_operator(L, pairs, 1.0 * signs)
    w_ref = scipy.linalg.eigvalsh(A.toarray())[::-1]
    w_pos = w_ref[w_ref > 1e-10 * w_ref[0]]
    assert len(w_pos) > n // 7 + 1
    lanczos = M.positive_eigenpairs(A, rng=np.random.default_rng(0), k=8, solver="arpack")
    # only the mid-size rules (here n ≤ 1000): every positive eigenpair wanted, dense
    # once the doubled request reaches n/24
    monkeypatch.setattr(M, "DENSE_MAX_N", 0)
    monkeypatch.setattr(M, "DENSE_LARGE_MAX_N", 1000)
    w, U, info = M.positive_eigenpairs(A, rng=np.random.default_rng(0), k=8)
    assert info.solver == "dense"
    assert 24 * info.requested[-2] < n <= 24 * 2 * info.requested[-2]  # doubled into it
    # the top max_rank only: dense from n/7 on
    for cap, dense in ((n // 7 + 1, True), (n // 7 - 1, False)):
        wc, _, ic = M.positive_eigenpairs(A, rng=np.random.default_rng(0), k=cap, max_rank=cap)
        assert (ic.solver == "dense") == dense
        np.testing.assert_allclose(wc, w_pos[:cap], rtol=1e-9, atol=1e-12 * w_ref[0])
    for wi, Ui in ((w, U), lanczos[:2]):
        np.testing.assert_allclose(wi, w_pos, rtol=1e-9, atol=1e-12 * w_ref[0])
        np.testing.assert_allclose(A @ Ui, Ui * wi, atol=1e-9 * w_ref[0])
    # the same A₊ (not the same eigenvector signs within clusters)
    P, P0 = (U * w) @ U.T, (lanczos[1] * lanczos[0]) @ lanczos[1].T
    assert np.linalg.norm(P - P0) <= 1e-9 * np.linalg.norm(P0)
    # above DENSE_LARGE_MAX_N, or with solver="arpack", Lanczos as before
    monkeypatch.setattr(M, "DENSE_LARGE_MAX_N", n - 1)
    assert M.positive_eigenpairs(A, rng=np.random.default_rng(0), k=8)[2].solver != "dense"
    monkeypatch.setattr(M, "DENSE_LARGE_MAX_N", 1000)
    w_a, _, info_a = M.positive_eigenpairs(A, rng=np.random.default_rng(0), k=8, solver="arpack")
    assert info_a.solver != "dense"
    np.testing.assert_allclose(w_a, w_pos, rtol=1e-9, atol=1e-12 * w_ref[0])


def assert_same_iterates(new, old, *, rtol):
    """Two runs of Algorithm 1 took the same path: iterations, dual and primal objective
    per iteration (``rtol``), the final α and the learned kernel (100 ``rtol``)."""
    assert new.n_iter == old.n_iter
    np.testing.assert_allclose(new.history["objective"], old.history["objective"], rtol=rtol)
    np.testing.assert_allclose(new.history["primal"], old.history["primal"], rtol=rtol)
    np.testing.assert_allclose(new.alpha, old.alpha, rtol=100 * rtol, atol=rtol)
    K, K0 = kernel(new), kernel(old)
    assert np.linalg.norm(K - K0) <= 100 * rtol * np.linalg.norm(K0)


def test_square_hinge_iterates_unchanged_by_the_dense_switch(monkeypatch):
    # exact rank (no cap): K_t needs every positive eigenpair, many of them
    L, pairs, signs = problem(seed=2)
    n = L.shape[0]
    kw = dict(C=1.0, B=float(n), max_iter=5)
    monkeypatch.setattr(M, "DENSE_MAX_N", 0)
    monkeypatch.setattr(M, "DENSE_LARGE_MAX_N", 0)
    old = M.simple_npkl_sqhinge(L, pairs, signs, rng=np.random.default_rng(0), **kw)
    assert "dense" not in {i.solver for i in old.eig_info}
    monkeypatch.setattr(M, "DENSE_LARGE_MAX_N", 1000)
    new = M.simple_npkl_sqhinge(L, pairs, signs, rng=np.random.default_rng(0), **kw)
    assert "dense" in {i.solver for i in new.eig_info}
    assert_same_iterates(new, old, rtol=1e-9)


def test_filter_cut_is_below_the_new_rth_eigenvalue():
    # Cauchy interlacing: the smallest Ritz value of the new A on the previous top-r
    # eigenvectors is ≤ its r-th eigenvalue, for any change of the constraint weights
    L, pairs, signs = problem(seed=3)
    r = 6
    rng = np.random.default_rng(0)
    alpha = np.ones(len(pairs))
    A0 = M.constraint_operator(L, pairs, alpha * signs)
    w0, U0 = scipy.linalg.eigh(A0.toarray())
    w0, U0 = w0[::-1][:r], U0[:, ::-1][:, :r]
    assert w0[-1] > 0
    for scale in (0.01, 0.1, 1.0):
        a = np.maximum(0.0, alpha + scale * rng.standard_normal(len(pairs)))
        A = M.constraint_operator(L, pairs, a * signs)
        theta = M.filter_cut(A, U0, w0, r)
        w = scipy.linalg.eigvalsh(A.toarray())[::-1]
        assert 0.0 <= theta <= M.CUT_FRACTION * max(w[r - 1], 0.0) + 1e-12
    assert M.filter_cut(A, U0[:, : r - 1], w0[: r - 1], r) == 0.0  # rank not reached


def test_capped_square_hinge_iterates_unchanged_by_the_filter_cut(monkeypatch):
    L, pairs, signs = problem(n=400, seed=4)
    kw = dict(C=1.0, B=400.0, max_iter=8, max_rank=8, solver="arpack")
    monkeypatch.setattr(M, "FILTER_MIN_N", 100)  # the filtered solver on a small problem
    rng = np.random.default_rng
    old = M.simple_npkl_sqhinge(L, pairs, signs, rng=rng(0), cut_from_previous=False, **kw)
    new = M.simple_npkl_sqhinge(L, pairs, signs, rng=rng(0), **kw)  # cut_from_previous=True
    cuts = [i.filter_interval[1] for i in new.eig_info]
    assert all(c == 0.0 for c in (i.filter_interval[1] for i in old.eig_info))
    assert cuts[0] == 0.0 and max(cuts) > 0.0
    assert all(i.n_solves == 1 for i in new.eig_info)  # the cut never had to be undone
    assert_same_iterates(new, old, rtol=1e-10)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.filterwarnings("ignore::lorak.learn.DegenerateKernelWarning")
def test_fit_simple_npkl_passes_cut_from_previous_to_the_square_hinge(monkeypatch):
    rng = np.random.default_rng(5)
    y = rng.integers(0, 3, 400)
    X = rng.normal(0.0, 1.0, (400, 3)) + 2.0 * rng.normal(0.0, 1.0, (3, 3))[y]
    pairs, signs = from_labels(y, ratio=0.7, random_state=5).pairs()
    monkeypatch.setattr(M, "FILTER_MIN_N", 100)  # the filtered solver on a small problem
    kw = dict(loss="squared_hinge", C=1.0, B=400.0, max_rank=8, max_iter=6, n_neighbors=5)
    cut = M.fit_simple_npkl(X, pairs, signs, rng=np.random.default_rng(0), **kw)
    flat = M.fit_simple_npkl(
        X, pairs, signs, rng=np.random.default_rng(0), cut_from_previous=False, **kw
    )
    assert max(i.filter_interval[1] for i in cut.result.eig_info) > 0.0
    assert all(i.filter_interval[1] == 0.0 for i in flat.result.eig_info)
    assert_same_iterates(cut.result, flat.result, rtol=1e-9)


def test_arpack_is_the_auto_rule_without_the_dense_switch_above_dense_max_n(monkeypatch):
    """What bench/scripts/bench_npkl.py's "old rules" rely on: for n above DENSE_MAX_N,
    ``solver="arpack"`` takes exactly the path of ``"auto"`` with the mid-size dense
    switch off (DENSE_LARGE_MAX_N = 0): the same solvers, requests and iterates."""
    L, pairs, signs = problem(seed=2)
    kw = dict(C=1.0, B=float(L.shape[0]), max_iter=4)
    monkeypatch.setattr(M, "DENSE_MAX_N", 0)  # n is "above" it
    monkeypatch.setattr(M, "DENSE_LARGE_MAX_N", 0)
    auto = M.simple_npkl_sqhinge(L, pairs, signs, rng=np.random.default_rng(0), **kw)
    monkeypatch.setattr(M, "DENSE_LARGE_MAX_N", 1000)  # "arpack" ignores the switch
    arpack = M.simple_npkl_sqhinge(
        L, pairs, signs, rng=np.random.default_rng(0), solver="arpack", **kw
    )
    assert [(i.solver, i.requested) for i in auto.eig_info] == [
        (i.solver, i.requested) for i in arpack.eig_info
    ]
    assert "dense" not in {i.solver for i in arpack.eig_info}
    assert_same_iterates(arpack, auto, rtol=1e-12)

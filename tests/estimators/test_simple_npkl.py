"""SimpleNPKL: graph, closed form, Algorithm 1, active selection, estimator."""

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from conftest import readonly
from lorak.constraints import check_constraints, constraint_matrix, from_labels
from lorak.estimators import SimpleNPKL
from lorak.learn import _simple_npkl as M


def blobs(n=40, seed=0, d=2):
    rng = np.random.default_rng(seed)
    h = n // 2
    X = np.vstack([rng.normal(0.0, 1.0, (h, d)), rng.normal(3.0, 1.0, (n - h, d))])
    y = np.repeat([0, 1], [h, n - h])
    return X, y


def problem(n=40, seed=0, k=5, ratio=0.7):
    X, y = blobs(n, seed)
    L = M.normalized_laplacian(M.knn_graph(X, k))
    pairs, signs = from_labels(y, ratio=ratio, random_state=seed).pairs()
    return X, y, L, pairs, signs


def dense_T(pairs, signs, n):
    return constraint_matrix(pairs, signs, n).toarray()


# ---------------------------------------------------------------- graph and Laplacian


@pytest.mark.parametrize("mutual", [False, True])
def test_knn_graph_is_symmetric_binary_sparse(mutual):
    X, _ = blobs(60)
    S = M.knn_graph(X, 5, mutual=mutual)
    assert sp.issparse(S)
    assert (S != S.T).nnz == 0
    assert np.all(S.data == 1.0)
    assert S.diagonal().sum() == 0
    deg = np.asarray(S.sum(axis=1)).ravel()
    if mutual:
        assert deg.max() <= 5
        assert (S - S.multiply(M.knn_graph(X, 5))).nnz == 0  # mutual ⊂ union
    else:
        assert deg.min() >= 5 and S.nnz <= 2 * 5 * 60


def test_knn_graph_neighbours_match_brute_force():
    X, _ = blobs(30)
    D = ((X[:, None] - X[None]) ** 2).sum(-1)
    np.fill_diagonal(D, np.inf)
    G = np.zeros((30, 30))
    nn = np.argsort(D, axis=1)[:, :4]
    G[np.repeat(np.arange(30), 4), nn.ravel()] = 1
    np.testing.assert_array_equal(M.knn_graph(X, 4).toarray(), np.maximum(G, G.T))


def test_normalized_laplacian_properties():
    X, _ = blobs(50)
    S = M.knn_graph(X, 5)
    L = M.normalized_laplacian(S)
    assert sp.issparse(L) and L.nnz <= S.nnz + 50
    Ld = L.toarray()
    np.testing.assert_allclose(Ld, Ld.T, atol=0)
    np.testing.assert_allclose(np.diag(Ld), 1.0)
    d = np.asarray(S.sum(axis=1)).ravel()
    np.testing.assert_allclose(Ld @ np.sqrt(d), 0.0, atol=1e-12)  # D^{1/2}1 in the kernel
    lam = np.linalg.eigvalsh(Ld)
    assert lam.min() > -1e-12 and lam.max() < 2 + 1e-12
    # Ω(V) = Σ S_ij ‖v_i/√d_i − v_j/√d_j‖² = 2 tr(Vᵀ L V) (eq. 2, sum over ordered pairs)
    V = np.random.default_rng(0).standard_normal((50, 3))
    W = V / np.sqrt(d)[:, None]
    Sd = S.toarray()
    omega = (Sd * ((W[:, None] - W[None]) ** 2).sum(-1)).sum()
    np.testing.assert_allclose(omega, 2 * np.trace(V.T @ Ld @ V), rtol=1e-10)


def test_isolated_points_get_unit_diagonal():
    S = sp.csr_matrix(np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]], dtype=float))
    L = M.normalized_laplacian(S).toarray()
    np.testing.assert_allclose(L, [[1, -1, 0], [-1, 1, 0], [0, 0, 1]])


# ---------------------------------------------------------------- eigen-solving


def test_pataki_rank():
    assert [M.pataki_rank(m) for m in (0, 1, 2, 3, 5, 6, 4104)] == [1, 1, 1, 2, 2, 3, 90]


def test_positive_eigenpairs_match_dense_and_are_deterministic():
    X, _, L, pairs, signs = problem(n=300, seed=1)
    A = M.constraint_operator(L, pairs, 0.3 * signs)
    w_ref = scipy.linalg.eigvalsh(A.toarray())
    w_ref = w_ref[w_ref > 1e-10][::-1]
    out = [
        M.positive_eigenpairs(A, rng=np.random.default_rng(7), k=4, solver="arpack")
        for _ in range(2)
    ]
    w, U, info = out[0]
    assert info.solver == "arpack" and len(info.requested) >= 2  # k grew from 4
    assert info.smallest_returned <= 0
    np.testing.assert_allclose(w, w_ref, rtol=1e-9)
    np.testing.assert_allclose(U.T @ U, np.eye(len(w)), atol=1e-10)
    np.testing.assert_allclose(A @ U, U * w, atol=1e-9)
    np.testing.assert_array_equal(w, out[1][0])  # same seed, same bits
    np.testing.assert_array_equal(U, out[1][1])
    wd, Ud, _ = M.positive_eigenpairs(A, rng=np.random.default_rng(0), solver="dense")
    np.testing.assert_allclose(np.abs(Ud.T @ U), np.eye(len(w)), atol=1e-7)


def test_max_rank_keeps_the_top_eigenpairs():
    _, _, L, pairs, signs = problem(n=200, seed=2)
    A = M.constraint_operator(L, pairs, 0.5 * signs)
    w_all, _, _ = M.positive_eigenpairs(A, rng=np.random.default_rng(0), solver="dense")
    w3, U3, _ = M.positive_eigenpairs(A, rng=np.random.default_rng(0), max_rank=3)
    np.testing.assert_allclose(w3, w_all[:3], rtol=1e-9)
    assert U3.shape == (200, 3)


def test_chebyshev_filtered_lanczos_matches_dense():
    # the filtered path (default from n = 2000 on) forced on a small problem: all
    # positive eigenpairs (θ = 0, k grows), the top ones with a good hint, and with a
    # hint above the r-th eigenvalue (detected, solved again with θ = 0)
    _, _, L, pairs, signs = problem(n=300, seed=1)
    A = M.constraint_operator(L, pairs, 0.3 * signs)
    w_ref = scipy.linalg.eigvalsh(A.toarray())[::-1]
    w_pos = w_ref[w_ref > 1e-10]
    kw = dict(solver="arpack", filter_degree=5)
    k0 = max(1, len(w_pos) // 2)  # must grow once
    w, U, info = M.positive_eigenpairs(A, rng=np.random.default_rng(3), k=k0, **kw)
    assert info.solver == "arpack+chebyshev" and len(info.requested) >= 2
    assert info.residual < 1e-10 and info.matvecs > 0
    np.testing.assert_allclose(w, w_pos, rtol=1e-9)
    np.testing.assert_allclose(A @ U, U * w, atol=1e-9)
    r = 5
    for theta, solves in ((0.5 * w_ref[r - 1], 1), (0.5 * (w_ref[0] + w_ref[r - 1]), 2)):
        w5, U5, info5 = M.positive_eigenpairs(
            A, rng=np.random.default_rng(3), k=r, max_rank=r, theta=theta, **kw
        )
        assert info5.n_solves == solves
        np.testing.assert_allclose(w5, w_ref[:r], rtol=1e-9)
        np.testing.assert_allclose(A @ U5, U5 * w5, atol=1e-9)
    # odd degree only (an even one would rank eigenvalues below the interval first)
    with pytest.raises(ValueError, match="odd"):
        M.positive_eigenpairs(A, rng=np.random.default_rng(0), filter_degree=4)


def test_filtered_residual_accepted_up_to_the_requested_tolerance(monkeypatch):
    # the filtered solve is checked against A itself: at tol = 0 a residual above
    # FILTER_RESIDUAL_MAX sends it to the unfiltered Lanczos; with tol > 0 a residual
    # up to tol is what was asked for and is kept
    _, _, L, pairs, signs = problem(n=300, seed=1)
    A = M.constraint_operator(L, pairs, 0.3 * signs)
    w_ref = scipy.linalg.eigvalsh(A.toarray())[::-1]
    kw = dict(rng=np.random.default_rng(3), k=5, max_rank=5, solver="arpack", filter_degree=5)
    monkeypatch.setattr(M, "FILTER_RESIDUAL_MAX", 0.0)  # nothing passes at tol = 0
    _, _, info0 = M.positive_eigenpairs(A, tol=0.0, **kw)
    assert info0.solver == "arpack"
    w, U, info = M.positive_eigenpairs(A, tol=1e-6, **kw)
    assert info.solver == "arpack+chebyshev" and 0 < info.residual <= 1e-6
    np.testing.assert_allclose(w, w_ref[:5], rtol=1e-6)
    np.testing.assert_allclose(U.T @ U, np.eye(5), atol=1e-10)


def test_estimator_eigen_tol_auto(monkeypatch):
    # "auto": machine precision for the linear loss, tol/100 for the square hinge
    X, y = blobs(60)
    c = from_labels(y, random_state=0)
    from lorak.learn import _simple_npkl as learn  # what lorak.learn.fit_simple_npkl calls

    seen = {}
    for name in ("simple_npkl_linear", "simple_npkl_sqhinge"):
        fn = getattr(learn, name)

        def spy(*a, _fn=fn, _name=name, **kw):
            seen[_name] = kw["eigen_tol"]
            return _fn(*a, **kw)

        monkeypatch.setattr(learn, name, spy)
    SimpleNPKL(C=0.3, random_state=0).fit(X, **c)
    SimpleNPKL("squared_hinge", C=0.3, tol=1e-3, random_state=0).fit(X, **c)
    assert seen == {"simple_npkl_linear": 0.0, "simple_npkl_sqhinge": 1e-5}
    SimpleNPKL("squared_hinge", C=0.3, eigen_tol=1e-9, random_state=0).fit(X, **c)
    assert seen["simple_npkl_sqhinge"] == 1e-9
    with pytest.raises(ValueError, match="'auto' or a number"):
        SimpleNPKL(eigen_tol="fast").fit(X, **c)


def test_filtered_square_hinge_equals_unfiltered(monkeypatch):
    # Algorithm 1 with the filter gives the same iterates
    _, _, L, pairs, signs = problem(n=300, seed=4)
    kw = dict(C=1.0, B=300.0, max_iter=4, max_rank=6, solver="arpack")
    plain = M.simple_npkl_sqhinge(L, pairs, signs, rng=np.random.default_rng(0), **kw)
    monkeypatch.setattr(M, "FILTER_MIN_N", 100)
    filt = M.simple_npkl_sqhinge(L, pairs, signs, rng=np.random.default_rng(0), **kw)
    assert {i.solver for i in filt.eig_info} == {"arpack+chebyshev"}
    assert len({i.filter_interval[0] for i in filt.eig_info}) == 1  # λ_min estimated once
    np.testing.assert_allclose(filt.history["objective"], plain.history["objective"], rtol=1e-10)
    np.testing.assert_allclose(filt.alpha, plain.alpha, rtol=1e-8, atol=1e-10)


# ---------------------------------------------------------------- linear loss


def test_closed_form_equals_dense_formula_psd_and_capacity():
    X, y, L, pairs, signs = problem(n=60)
    C, B = 0.3, 2.0
    res = M.simple_npkl_linear(L, pairs, signs, C=C, B=B, rng=np.random.default_rng(0))
    K = res.embedding @ res.embedding.T
    A = C * dense_T(pairs, signs, 60) - L.toarray()
    lam, P = np.linalg.eigh(A)
    Ap = (P * np.maximum(lam, 0)) @ P.T
    K_ref = Ap * np.sqrt(B / np.sum(Ap * Ap))  # eq. (8)
    np.testing.assert_allclose(K, K_ref, atol=1e-12)
    np.testing.assert_allclose(np.sum(K * K), B, rtol=1e-12)  # tr(KK) = B at the optimum
    assert np.linalg.eigvalsh(K).min() > -1e-12
    np.testing.assert_allclose(
        res.objective, np.trace(L.toarray() @ K) - C * np.sum(dense_T(pairs, signs, 60) * K)
    )
    np.testing.assert_allclose(np.sum(res.eigenvalues**2), B)


def test_linear_loss_matches_cvxpy_scs():
    cp = pytest.importorskip("cvxpy")
    X, y, L, pairs, signs = problem(n=40)
    T = dense_T(pairs, signs, 40)
    Ld = L.toarray()
    for C, B in [(0.3, 1.0), (1.0, 40.0)]:
        res = M.simple_npkl_linear(L, pairs, signs, C=C, B=B, rng=np.random.default_rng(0))
        K = cp.Variable((40, 40), PSD=True)
        prob = cp.Problem(
            cp.Minimize(cp.trace(Ld @ K) - C * cp.sum(cp.multiply(T, K))),  # eq. (6)
            [cp.norm(K, "fro") <= np.sqrt(B)],  # eq. (5)
        )
        prob.solve(solver="SCS", eps_abs=1e-9, eps_rel=1e-9, max_iters=100000)
        assert abs(res.objective - prob.value) <= 1e-4 * abs(prob.value)
        Kr = res.embedding @ res.embedding.T
        assert np.abs(Kr - K.value).max() <= 1e-3 * np.abs(Kr).max()


# ---------------------------------------------------------------- square hinge


def sqhinge(n=40, C=0.3, B=1.0, **kw):
    X, y, L, pairs, signs = problem(n=n)
    kw.setdefault("tol", 1e-10)
    kw.setdefault("max_iter", 500)
    res = M.simple_npkl_sqhinge(L, pairs, signs, C=C, B=B, rng=np.random.default_rng(0), **kw)
    return L, pairs, signs, res


@pytest.mark.parametrize(("C", "B"), [(0.3, 1.0), (1.0, 40.0)])
def test_square_hinge_matches_cvxpy_scs(C, B):
    cp = pytest.importorskip("cvxpy")
    L, pairs, signs, res = sqhinge(C=C, B=B)
    assert res.converged
    K = cp.Variable((40, 40), PSD=True)
    h = cp.pos(1 - cp.multiply(signs, K[pairs[:, 0], pairs[:, 1]]))
    # eq. (9): (C/2) Σ over ordered pairs = C Σ over the unordered constraints
    prob = cp.Problem(
        cp.Minimize(cp.trace(L.toarray() @ K) + C * cp.sum_squares(h)),
        [cp.norm(K, "fro") <= np.sqrt(B)],
    )
    prob.solve(solver="SCS", eps_abs=1e-9, eps_rel=1e-9, max_iters=100000)
    assert abs(res.objective - prob.value) <= 1e-4 * abs(prob.value)


@pytest.mark.parametrize(("C", "B"), [(0.3, 1.0), (1.0, 40.0)])
def test_square_hinge_kkt_conditions(C, B):
    # the gap is quadratic in the error of α: ask for a gap near round-off
    L, pairs, signs, res = sqhinge(C=C, B=B, tol=1e-14, max_iter=300)
    V, a = res.embedding, res.alpha
    K = V @ V.T
    kij = K[pairs[:, 0], pairs[:, 1]]
    # (14): α = C·max(0, 1 − T_ij K_ij), α ≥ 0
    np.testing.assert_allclose(a, C * np.maximum(0, 1 - signs * kij), atol=1e-6 * C)
    assert a.min() >= 0
    # K optimal for α (Prop. 1): with A = Σα T − L and λ = ‖A₊‖_F / (2√B),
    # Z = 2λK − A ⪰ 0, KZ = 0, tr(KK) = B
    A = dense_T(pairs, a * signs, 40) - L.toarray()
    lam_ = np.linalg.norm(np.maximum(np.linalg.eigvalsh(A), 0)) / (2 * np.sqrt(B))
    Z = 2 * lam_ * K - A
    assert np.linalg.eigvalsh(Z).min() > -1e-9
    assert np.abs(K @ Z).max() < 1e-9
    np.testing.assert_allclose(np.sum(K * K), B, rtol=1e-10)
    assert res.gap <= 1e-12 and res.kkt <= 1e-6


def test_square_hinge_dual_objective_is_monotone_and_warm_started():
    L, pairs, signs, res = sqhinge(n=200, C=0.3)
    J = np.array(res.history["objective"])  # J(K_t, α_{t−1}) = D(α_{t−1})
    assert np.all(np.diff(J) >= -1e-10 * np.abs(J).max())
    assert np.all(np.array(res.history["primal"]) >= J - 1e-10)  # weak duality
    assert res.n_iter < 50


def test_other_step_rules_approach_the_same_optimum():
    _, _, _, ref = sqhinge(C=0.3)
    _, _, _, const = sqhinge(C=0.3, step="constant", step_size=0.5, tol=1e-7, max_iter=3000)
    assert const.converged
    np.testing.assert_allclose(const.objective, ref.objective, rtol=1e-5)
    # η_t = C/t converges slowly (the paper's O(1/t) rule), but it does converge
    _, _, _, harm = sqhinge(C=0.3, step="harmonic", max_iter=60)
    assert harm.objective >= ref.objective - 1e-9
    np.testing.assert_allclose(harm.objective, ref.objective, rtol=1e-2)


# ---------------------------------------------------------------- active selection


def test_margin_scores_and_selection_match_brute_force():
    X, y, L, pairs, signs = problem(n=50)
    V = np.random.default_rng(0).standard_normal((50, 3))
    K = V @ V.T
    T = dense_T(pairs, signs, 50)
    l = (T != 0).sum(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ref = np.where(l > 0, np.abs((T * K).sum(1) / l), np.inf)
    np.testing.assert_allclose(M.margin_scores(V, pairs, signs, 50), ref)
    keep = M.select_active(V, pairs, signs, 50, 10)
    assert len(keep) == 10 and np.all(np.diff(keep) > 0)
    first = np.argmin(ref)  # the least certain point: all its constraints come first
    touching = np.flatnonzero((pairs[:, 0] == first) | (pairs[:, 1] == first))
    assert set(touching[:10]) <= set(keep)


# ---------------------------------------------------------------- the estimator


def test_estimator_linear_matches_function_and_api():
    X, y = blobs(60)
    c = from_labels(y, random_state=0)
    est = SimpleNPKL(C=0.3, random_state=0)
    V = est.fit_transform(readonly(X), **c)
    assert V is est.embedding_ and V.shape == (60, est.n_components_)
    assert est.n_features_in_ == 2
    assert est.n_constraints_ == c.n_constraints
    assert est.alpha_ is None and est.converged_ and est.n_iter_ == 1
    pairs, signs = check_constraints(*c, 60).pairs()
    K = V @ V.T
    np.testing.assert_allclose(est.kernel_entries(pairs), K[pairs[:, 0], pairs[:, 1]])
    assert np.sum(K * K) == pytest.approx(1.0)
    assert est.transform(X).shape == V.shape  # the extension, training rows included
    est2 = clone(est).set_params(B="n_samples")
    V2 = est2.fit_transform(X, must_link=c.must_link, cannot_link=c.cannot_link)
    np.testing.assert_allclose(V2 @ V2.T, np.sqrt(60) * K, rtol=1e-8, atol=1e-10)  # K ∝ √B


def test_estimator_sparse_input_and_square_hinge():
    X, y = blobs(60)
    c = from_labels(y, random_state=0)
    dense = SimpleNPKL("squared_hinge", C=0.3, random_state=0).fit(X, **c)
    est = SimpleNPKL("squared_hinge", C=0.3, random_state=0).fit(sp.csr_matrix(X), **c)
    np.testing.assert_allclose(
        est.embedding_ @ est.embedding_.T, dense.embedding_ @ dense.embedding_.T, atol=1e-10
    )
    assert est.alpha_.shape == (c.n_constraints,)
    assert est.objective_history_ == est.history_["objective"]
    assert est.duality_gap_ <= 1e-4


def test_estimator_deterministic_under_random_state_with_arpack():
    X, y = blobs(400, seed=3)
    c = from_labels(y, random_state=0)
    kw = dict(C=0.5, eigen_solver="arpack", random_state=11)
    a = SimpleNPKL(**kw).fit_transform(X, **c)
    b = SimpleNPKL(**kw).fit_transform(X, **c)
    np.testing.assert_array_equal(a, b)


def test_estimator_clusters_better_than_the_raw_features():
    from sklearn.cluster import KMeans
    from sklearn.datasets import make_moons

    X, y = make_moons(200, noise=0.06, random_state=0)
    c = from_labels(y, random_state=0)
    V = SimpleNPKL(C=0.3, random_state=0).fit_transform(X, **c)
    lab = KMeans(2, n_init=10, random_state=0).fit_predict(V)
    raw = KMeans(2, n_init=10, random_state=0).fit_predict(X)
    agree = max(np.mean(lab == y), np.mean(lab != y))
    assert agree > 0.95 > max(np.mean(raw == y), np.mean(raw != y))


def test_active_constraints_fraction_count_and_random():
    X, y = blobs(80)
    c = from_labels(y, random_state=0)
    p = c.n_constraints
    est = SimpleNPKL(C=0.3, active_constraints=0.5, random_state=0).fit(X, **c)
    assert est.n_constraints_ == round(0.5 * p) == len(est.selected_)
    assert len(est.must_link_) + len(est.cannot_link_) == est.n_constraints_
    r1 = SimpleNPKL(C=0.3, active_constraints=7, selection="random", random_state=1).fit(X, **c)
    r2 = SimpleNPKL(C=0.3, active_constraints=7, selection="random", random_state=1).fit(X, **c)
    assert r1.n_constraints_ == 7
    np.testing.assert_array_equal(r1.selected_, r2.selected_)
    with pytest.raises(ValueError, match=r"active_constraints as a fraction must be in \(0, 1\]"):
        SimpleNPKL(active_constraints=1.5).fit(X, **c)


def test_pataki_rank_cap():
    X, y = blobs(80)
    c = from_labels(y, random_state=0)
    est = SimpleNPKL(C=1.0, max_rank="pataki", random_state=0).fit(X, **c)
    assert est.max_rank_ == M.pataki_rank(c.n_constraints)
    assert est.n_components_ <= est.max_rank_


def test_zero_kernel_raises_clearly_never_nan():
    X, y = blobs(60)
    c = from_labels(y, random_state=0)
    with pytest.raises(ValueError, match=r"no positive eigenvalue.*increase C"):
        SimpleNPKL(C=1e-6).fit(X, **c)
    # inside Algorithm 1, a zero K is a valid iterate: no NaN anywhere
    L = M.normalized_laplacian(M.knn_graph(X, 5))
    pairs, signs = c.pairs()
    res = M.simple_npkl_sqhinge(
        L, pairs, signs, C=1e-6, B=1.0, rng=np.random.default_rng(0), max_iter=3
    )
    assert res.embedding.shape == (60, 0)
    assert all(np.isfinite(v) for v in res.history["objective"] + res.history["primal"])


def test_convergence_warning_names_the_fix():
    X, y = blobs(60)
    c = from_labels(y, random_state=0)
    with pytest.warns(ConvergenceWarning, match="max_iter=1 reached.*increase max_iter"):
        SimpleNPKL("squared_hinge", C=0.3, max_iter=1).fit(X, **c)


def test_input_errors():
    X, y = blobs(20)
    c = from_labels(y, random_state=0)
    with pytest.raises(ValueError, match=r"pairwise constraints.*from_labels"):
        SimpleNPKL().fit(X, y)
    with pytest.raises(ValueError, match="refers to row 25 but X has 20 rows"):
        SimpleNPKL().fit(X, must_link=[[0, 25]])
    with pytest.raises(ValueError, match="n_neighbors=20 must be smaller than the number of rows"):
        SimpleNPKL(n_neighbors=20).fit(X, **c)
    with pytest.raises(
        ValueError, match="unknown loss 'hinge'; valid names are 'linear', 'squared_hinge'"
    ):
        SimpleNPKL("hinge").fit(X, **c)
    with pytest.raises(ValueError, match="B must be a positive number or 'n_samples'"):
        SimpleNPKL(B="n").fit(X, **c)
    with pytest.raises(ValueError, match="C must be > 0"):
        SimpleNPKL(C=0.0).fit(X, **c)
    with pytest.raises(ValueError, match="both must-link and cannot-link"):
        SimpleNPKL().fit(X, must_link=[[0, 1]], cannot_link=[[1, 0]])


@pytest.mark.data
def test_a1a_linear_loss_pataki():
    from lorak.datasets import load

    d = load("a1a")
    c = from_labels(d.y, random_state=0)
    est = SimpleNPKL(C=1.0, B="n_samples", n_neighbors=50, max_rank="pataki", random_state=0)
    V = est.fit_transform(d.X, **c)
    assert V.shape == (1605, est.max_rank_)
    assert np.sum(est.eigenvalues_**2) == pytest.approx(1605)

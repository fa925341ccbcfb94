"""The math of graph-regularized factors (lorak.learn._graph_factor) against dense
references on small n: the push-through identity, GᵀLᵖG by chunks, leave-one-out."""

import itertools

import dask.array as da
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import Ridge

from _tolerance import assert_labels_agree_off_ties
from lorak.learn import knn_graph
from lorak.learn._graph_factor import (
    LAE_RIDGE,
    LAE_TOL,
    AnchorGraph,
    anchor_bandwidth,
    anchor_laplacian_gram,
    deformation,
    deformation_matrix,
    graph_laplacian_gram,
    loo_ridge_scores,
    ridge_targets,
    select_gamma_penalty,
    simplex_least_squares,
    simplex_projection,
)


def _data(rng, n=60, d=4, m=12):
    X = rng.standard_normal((n, d))
    P = rng.standard_normal((d, m))
    G = np.tanh(X @ P)  # any row map x -> g(x) serves as a factor
    return X, P, G


def _anchor_graph(rng, X, a=9, s=3, weights="kernel"):
    anchors = X[rng.choice(X.shape[0], a, replace=False)] + 0.01
    return AnchorGraph(anchors, s, anchor_bandwidth(X, anchors, s), weights)


def _dense_laplacian(Z):
    lam = Z.sum(axis=0)
    used = lam > 0
    return np.eye(Z.shape[0]) - Z[:, used] @ np.diag(1 / lam[used]) @ Z[:, used].T


@pytest.mark.parametrize("weights", ["kernel", "lle"])
def test_anchor_rows_lie_on_the_simplex(rng, weights):
    X, _, _ = _data(rng)
    Z = _anchor_graph(rng, X, weights=weights).dense(X)
    assert np.all(Z >= 0)
    np.testing.assert_allclose(Z.sum(axis=1), 1.0, rtol=1e-12)
    assert np.all((Z > 0).sum(axis=1) <= 3)


def test_lae_weights_reconstruct_better_than_kernel_weights(rng):
    X, _, _ = _data(rng, n=80, d=3)
    anchors = X[rng.choice(80, 20, replace=False)] + 0.05
    errs = {}
    for w in ("kernel", "lle"):
        g = AnchorGraph(anchors, 4, anchor_bandwidth(X, anchors, 4), w)
        errs[w] = np.linalg.norm(X - g.dense(X) @ anchors)
    assert errs["lle"] < errs["kernel"]


def test_simplex_projection_is_the_euclidean_projection(rng):
    V = rng.standard_normal((50, 5)) * 3
    P = simplex_projection(V)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    assert np.all(P >= 0)
    # optimality: for any other simplex point q, (v − p)·(q − p) ≤ 0
    Q = simplex_projection(rng.standard_normal((50, 5)))
    assert np.all(np.einsum("ij,ij->i", V - P, Q - P) <= 1e-10)


@pytest.mark.parametrize("power", [1, 2])
def test_anchor_gram_equals_the_dense_laplacian(rng, power):
    X, P, G = _data(rng)
    graph = _anchor_graph(rng, X)
    GtG, H, lam = anchor_laplacian_gram(X, lambda B: np.tanh(B @ P), graph, power)
    L = _dense_laplacian(graph.dense(X))
    Lp = L if power == 1 else L @ L
    np.testing.assert_allclose(GtG, G.T @ G, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(H, G.T @ Lp @ G, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(lam, graph.dense(X).sum(axis=0), rtol=1e-12)


@pytest.mark.parametrize("power", [1, 2])
def test_anchor_gram_by_chunks_equals_in_memory(rng, tmp_path, power):
    X, P, _ = _data(rng, n=57)
    graph = _anchor_graph(rng, X)

    def f(B):
        return np.tanh(np.asarray(B) @ P)

    ref = anchor_laplacian_gram(X, f, graph, power)
    mm = np.lib.format.open_memmap(tmp_path / "X.npy", mode="w+", shape=X.shape)
    mm[:] = X
    for Xc in (mm, da.from_array(X, chunks=(10, 4))):
        got = anchor_laplacian_gram(Xc, f, graph, power)
        for a, b in zip(got, ref, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)
    # chunks of 8 rows, dense and CSR (reduce_rows hands CSR blocks to the passes)
    for Xc in (X, sp.csr_matrix(X)):
        got = anchor_laplacian_gram(Xc, lambda B: np.tanh(B @ P), graph, power, rows=8)
        for a, b in zip(got, ref, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("power", [1, 2])
def test_knn_gram_equals_the_normalized_laplacian(rng, power):
    X, _, G = _data(rng)
    A = knn_graph(X, 5)
    GtG, H = graph_laplacian_gram(G, A, power)
    d = np.asarray(A.sum(axis=1)).ravel()
    L = np.eye(60) - A.toarray() / np.sqrt(np.outer(d, d))
    Lp = L if power == 1 else L @ L
    np.testing.assert_allclose(H, G.T @ Lp @ G, rtol=1e-9, atol=1e-9)


def test_isolated_rows_are_refused(rng):
    _, _, G = _data(rng, n=10)
    A = sp.lil_matrix((10, 10))
    for i in range(8):
        A[i, (i + 1) % 8] = A[(i + 1) % 8, i] = 1.0
    with pytest.raises(ValueError, match=r"graph: 2 row\(s\) have no edge"):
        graph_laplacian_gram(G, A.tocsr())


@pytest.mark.parametrize("power", [1, 2])
def test_factor_form_equals_the_dense_deformed_kernel(rng, power):
    """G R (G R)ᵀ = K − K(I + MK)⁻¹MK with K = GGᵀ, M = γLᵖ; on new rows x, z (k_x = G g(x))
    k̃(x, z) = g(x)ᵀg(z) − k_xᵀ(I + MK)⁻¹M k_z."""
    X, P, G = _data(rng)
    graph = _anchor_graph(rng, X)
    GtG, H, _ = anchor_laplacian_gram(X, lambda B: np.tanh(B @ P), graph, power)
    defo = deformation(GtG, H)
    t = 3.0
    R = deformation_matrix(defo, t)
    np.testing.assert_allclose(
        R @ R.T, np.linalg.inv(np.eye(12) + defo.gamma(t) * H), rtol=1e-9, atol=1e-12
    )
    L = _dense_laplacian(graph.dense(X))
    M = defo.gamma(t) * (L if power == 1 else L @ L)
    K = G @ G.T
    dense = K - K @ np.linalg.solve(np.eye(60) + M @ K, M @ K)
    np.testing.assert_allclose((G @ R) @ (G @ R).T, dense, rtol=1e-8, atol=1e-10)
    Gn = np.tanh(rng.standard_normal((7, 4)) @ P)
    kx = G @ Gn.T  # k(X, x_new) of the factor's kernel
    dense_new = Gn @ Gn.T - kx.T @ np.linalg.solve(np.eye(60) + M @ K, M @ kx)
    np.testing.assert_allclose((Gn @ R) @ (Gn @ R).T, dense_new, rtol=1e-8, atol=1e-10)


def test_gamma_zero_is_exactly_the_identity(rng):
    X, P, G = _data(rng)
    graph = _anchor_graph(rng, X)
    defo = deformation(*anchor_laplacian_gram(X, lambda B: np.tanh(B @ P), graph)[:2])
    assert np.array_equal(deformation_matrix(defo, 0.0), np.eye(12))


@pytest.mark.parametrize("classification", [True, False])
def test_loo_scores_equal_explicit_leave_one_out(rng, classification):
    F = rng.standard_normal((25, 6))
    if classification:
        codes = rng.integers(0, 3, 25)
        Y = ridge_targets(codes, 3)
    else:
        Y = (F @ rng.standard_normal(6) + 0.3 * rng.standard_normal(25))[:, None]
    alphas = (10.0, 0.1)
    got = loo_ridge_scores(F, Y, alphas, classification=classification)
    for k, a in enumerate(alphas):
        preds = np.empty_like(Y)
        for i in range(25):
            keep = np.arange(25) != i
            preds[i] = Ridge(alpha=a).fit(F[keep], Y[keep]).predict(F[i : i + 1])
        np.testing.assert_allclose(got[k, 1], np.mean((Y - preds) ** 2), rtol=1e-8)
        if classification:
            assert got[k, 0] == np.mean(preds.argmax(axis=1) != Y.argmax(axis=1))


def test_selection_is_deterministic_and_reads_only_labeled_rows(rng):
    X, P, G = _data(rng, n=80)
    graph = _anchor_graph(rng, X)
    defo = deformation(*anchor_laplacian_gram(X, lambda B: np.tanh(B @ P), graph)[:2])
    rows = np.arange(0, 80, 4)
    codes = (X[rows, 0] > 0).astype(int)
    T = ridge_targets(codes, 2)
    a = select_gamma_penalty(G[rows], defo, T, 80)
    b = select_gamma_penalty(G[rows].copy(), defo, T.copy(), 80)
    assert (a.t, a.penalty) == (b.t, b.penalty)
    np.testing.assert_array_equal(a.scores, b.scores)
    assert a.t in a.ts and a.penalty in a.alphas
    # the best key: no candidate has a lower LOO error
    errs = a.scores[..., 0]
    i, k = a.ts.index(a.t), a.alphas.index(a.penalty)
    assert errs[i, k] == errs.min()
    # rule="squared_error": no candidate has a lower LOO squared error
    sq = select_gamma_penalty(G[rows], defo, T, 80, rule="squared_error")
    i, k = sq.ts.index(sq.t), sq.alphas.index(sq.penalty)
    assert sq.scores[i, k, 1] == sq.scores[..., 1].min()


def test_one_se_rule_is_the_weakest_graph_within_one_standard_error(rng):
    X, P, G = _data(rng, n=120)
    graph = _anchor_graph(rng, X, a=20)
    defo = deformation(*anchor_laplacian_gram(X, lambda B: np.tanh(B @ P), graph)[:2])
    rows = np.arange(0, 120, 3)
    T = ridge_targets((X[rows, 1] + 0.5 * rng.standard_normal(rows.size) > 0).astype(int), 2)
    best = select_gamma_penalty(G[rows], defo, T, 120, rule="best")
    one = select_gamma_penalty(G[rows], defo, T, 120, rule="one_se")
    assert one.t <= best.t

    def losses(t, alpha):
        R = deformation_matrix(defo, t)
        ms = float(np.sum(R * (defo.gram @ R))) / 120
        F = G[rows] @ R / np.sqrt(ms)
        return loo_ridge_scores(F, T, (alpha,), per_row=True)[1][0]

    ref = losses(best.t, best.penalty)
    d = losses(one.t, one.penalty) - ref
    assert d.mean() <= d.std(ddof=1) / np.sqrt(d.size) + 1e-12
    with pytest.raises(ValueError, match="rule must be"):
        select_gamma_penalty(G[rows], defo, T, 120, rule="median")


def test_one_se_rule_keeps_a_graph_that_clearly_helps():
    """Two noisy arcs and 12 labels: the graph halves the LOO error, so it is kept."""
    from sklearn.datasets import make_moons

    from lorak import GraphRegularizedFactor, Nystroem
    from lorak.kernels import Gaussian

    X, y = make_moons(300, noise=0.06, random_state=1)
    ys = np.full(300, -1)
    lab = np.r_[np.flatnonzero(y == 0)[:6], np.flatnonzero(y == 1)[:6]]
    ys[lab] = y[lab]
    nys = Nystroem(
        kernel=Gaussian(bandwidth=0.5), landmarks="kmeans", n_components=40, random_state=0
    )
    f = GraphRegularizedFactor(nys, random_state=0).fit(X, ys)
    assert f.gamma_ > 0


@pytest.mark.parametrize("signal", [0.0, 3.0])
def test_gated_rule_equals_its_definition(rng, signal):
    """rule="gated", recomputed from its definition: each t's penalty and t itself by
    the LOO squared error, then t > 0 kept only when its per-row squared losses beat
    t = 0's by more than one standard error (paired)."""
    X, P, G = _data(rng, n=120)
    graph = _anchor_graph(rng, X, a=20)
    defo = deformation(*anchor_laplacian_gram(X, lambda B: np.tanh(B @ P), graph)[:2])
    rows = np.arange(0, 120, 3)
    noise = rng.standard_normal(rows.size)
    T = ridge_targets((signal * X[rows, 1] + noise > 0).astype(int), 2)
    sel = select_gamma_penalty(G[rows], defo, T, 120, rule="gated")

    def sq_losses(t, alpha):
        R = deformation_matrix(defo, t)
        ms = float(np.sum(R * (defo.gram @ R))) / 120
        F = G[rows] @ R / np.sqrt(ms)
        return loo_ridge_scores(F, T, (alpha,), classification=False, per_row=True)[1][0]

    alphas = sorted(sel.alphas, reverse=True)
    table = {t: [sq_losses(t, a).mean() for a in alphas] for t in sel.ts}
    pick = {t: alphas[int(np.argmin(v))] for t, v in table.items()}
    t_best = min(sel.ts, key=lambda t: (min(table[t]), t))
    want = (0.0, pick[0.0])
    if t_best > 0:
        d = sq_losses(t_best, pick[t_best]) - sq_losses(0.0, pick[0.0])
        if -d.mean() > d.std(ddof=1) / np.sqrt(d.size):
            want = (t_best, pick[t_best])
    assert (sel.t, sel.penalty) == pytest.approx(want, rel=1e-12)


def test_gated_rule_keeps_the_plain_factor_for_labels_the_rows_do_not_shape(rng):
    """Labels drawn at random carry no geometry: the gate keeps t = 0."""
    X, P, G = _data(rng, n=150)
    graph = _anchor_graph(rng, X, a=20)
    defo = deformation(*anchor_laplacian_gram(X, lambda B: np.tanh(B @ P), graph)[:2])
    rows = np.arange(0, 150, 3)
    T = ridge_targets(rng.integers(0, 2, rows.size), 2)
    assert select_gamma_penalty(G[rows], defo, T, 150, rule="gated").t == 0.0


# ---------------------------------------------------------------- the large-n passes


@pytest.mark.parametrize("s", [1, 3, 8, 9, 12])
def test_nearest_anchors_are_the_s_smallest_in_order(rng, s):
    from lorak.learn._graph_factor import _nearest_anchors

    D = rng.standard_normal((40, 12))
    D[5, 3] = D[5, 7]  # a tie: either anchor, the same distance
    D0 = D.copy()
    idx, d = _nearest_anchors(D, s)
    np.testing.assert_array_equal(D, D0)  # read, restored
    np.testing.assert_array_equal(d, np.sort(D0, axis=1)[:, :s])
    np.testing.assert_array_equal(np.take_along_axis(D0, idx, axis=1), d)
    assert all(len(set(r)) == s for r in idx)


def test_anchor_weights_equal_the_kernel_weights_of_the_true_distances(rng):
    X, _, _ = _data(rng, n=50, d=3)
    X = X + 40.0  # far from the origin: the scores drop ‖x‖², the weights must not care
    graph = _anchor_graph(rng, X, a=10, s=4)
    D = ((X[:, None, :] - graph.anchors[None, :, :]) ** 2).sum(-1)
    order = np.argsort(D, axis=1)[:, :4]
    d = np.take_along_axis(D, order, axis=1)
    w = np.exp(-(d - d[:, :1]) / graph.sigma2)
    w /= w.sum(axis=1, keepdims=True)
    Z = np.zeros_like(D)
    np.put_along_axis(Z, order, w, axis=1)
    np.testing.assert_allclose(graph.dense(X), Z, rtol=1e-8, atol=1e-12)
    kth = np.sort(D, axis=1)[:, 3].mean()
    assert anchor_bandwidth(X, graph.anchors, 4) == pytest.approx(kth, rel=1e-9)


@pytest.mark.parametrize("power", [1, 2])
def test_kernel_row_grams_equal_the_factor_row_grams(rng, power):
    """linear_map: the Grams accumulated on K and mapped by N once equal those of the
    rows G = K N (a well-conditioned N, so round-off stays at eps·‖N‖²)."""
    X, P, _ = _data(rng, n=70, d=4, m=10)
    graph = _anchor_graph(rng, X)
    N = np.triu(rng.standard_normal((10, 10))) + 3 * np.eye(10)

    def k(B):
        return np.tanh(np.asarray(B) @ P)

    ref = anchor_laplacian_gram(X, lambda B: k(B) @ N, graph, power)
    for Xc in (X, da.from_array(X, chunks=(13, 4))):
        got = anchor_laplacian_gram(Xc, k, graph, power, linear_map=N)
        for a, b in zip(got, ref, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-9)


def _simplex_lsq_by_supports(C):
    """The minimizer of zᵀCz over the simplex (C positive definite) by trying every
    support: the support's affine minimizer C_SS⁻¹1/(1ᵀC_SS⁻¹1) that is feasible and
    satisfies the optimality conditions off the support."""
    s = C.shape[0]
    for k in range(1, s + 1):
        for S in itertools.combinations(range(s), k):
            S = list(S)
            a = np.linalg.solve(C[np.ix_(S, S)], np.ones(k))
            z = np.zeros(s)
            z[S] = a / a.sum()
            g = C @ z
            if np.all(z[S] > 0) and np.all(g >= z @ g - 1e-12 * np.trace(C)):
                return z
    raise AssertionError("no support satisfies the optimality conditions")


@pytest.mark.parametrize(("d", "s"), [(8, 5), (3, 5), (2, 4), (1, 3)])
def test_lae_weights_are_the_exact_simplex_least_squares(rng, d, s):
    """The weights are the unique minimizer of the ridged problem (checked against every
    support) and within the stated bound of the unridged optimum (cvxpy)."""
    b = 40
    V = rng.standard_normal((b, s, d)) - 1.5 * rng.standard_normal((b, 1, d))
    C = np.einsum("bsd,btd->bst", V, V)
    z = simplex_least_squares(C)
    assert np.all(z >= 0)
    np.testing.assert_allclose(z.sum(axis=1), 1.0, rtol=1e-14)
    scale = np.einsum("bii->b", C) / s
    for i in range(b):
        ref = _simplex_lsq_by_supports(C[i] + LAE_RIDGE * scale[i] * np.eye(s))
        np.testing.assert_allclose(z[i], ref, atol=1e-9)
    cp = pytest.importorskip("cvxpy")
    for i in range(b):
        w = cp.Variable(s)
        L = np.linalg.cholesky(C[i] + 1e-14 * scale[i] * np.eye(s))
        prob = cp.Problem(cp.Minimize(cp.sum_squares(L.T @ w)), [w >= 0, cp.sum(w) == 1])
        prob.solve()
        best = min(prob.value, float(w.value @ C[i] @ w.value))
        assert z[i] @ C[i] @ z[i] <= best + (LAE_RIDGE + 2 * LAE_TOL) * scale[i] + 1e-8 * scale[i]


def test_lae_weights_do_not_depend_on_the_offset(rng):
    """The same rows and anchors shifted together give the same weights (the Gram of
    the anchors less the row), and the reconstruction is the best one."""
    X = rng.standard_normal((60, 8))
    anchors = X[rng.choice(60, 12, replace=False)] + 0.1 * rng.standard_normal((12, 8))
    ref = AnchorGraph(anchors, 5, 1.0, "lle").dense(X)
    for c in (8.0, 1e4, 1e6):
        got = AnchorGraph(anchors + c, 5, 1.0, "lle").dense(X + c)
        np.testing.assert_allclose(got, ref, atol=1e-9 * max(1.0, c / 1e4))
    # the old fixed 60 gradient steps on uncentred anchors were 2.2× the optimum at 8
    idx = np.argsort(((X[:, None] - anchors[None]) ** 2).sum(-1), axis=1)[:, :5]
    V = anchors[idx] - X[:, None, :]
    C = np.einsum("bsd,btd->bst", V, V)
    z = np.take_along_axis(ref, idx, axis=1)
    exact = np.array([_simplex_lsq_by_supports(c + 1e-12 * np.trace(c) * np.eye(5)) for c in C])
    f = np.einsum("bs,bst,bt->b", z, C, z)
    f_exact = np.einsum("bs,bst,bt->b", exact, C, exact)
    np.testing.assert_array_less(f, f_exact * (1 + 1e-5) + 1e-12)


@pytest.mark.parametrize("weights", ["kernel", "lle"])
def test_anchor_graph_keeps_its_accuracy_at_a_large_offset(rng, weights):
    """Distances are taken from the anchors' mean: at an offset of 10⁸ the graph rows
    and σ² equal those of the data at the origin (‖x‖² − 2⟨x, u⟩ + ‖u‖² uncentred lost
    every digit there)."""
    X = rng.standard_normal((60, 3))
    anchors = X[rng.choice(60, 15, replace=False)] + 0.05
    ref = AnchorGraph(anchors, 4, anchor_bandwidth(X, anchors, 4), weights)
    for c in (1e6, 1e8):
        sig = anchor_bandwidth(X + c, anchors + c, 4)
        assert sig == pytest.approx(ref.sigma2, rel=1e-6)
        got = AnchorGraph(anchors + c, 4, sig, weights).dense(X + c)
        np.testing.assert_allclose(got, ref.dense(X), atol=1e-5 if c > 1e6 else 1e-8)
    # sparse rows (not shifted) give the same graph at the origin
    Zs = ref.dense(sp.csr_matrix(X))
    np.testing.assert_allclose(Zs, ref.dense(X), atol=1e-12)


def test_a_zero_laplacian_gives_the_plain_factor_with_a_warning(rng):
    """GᵀLG zero to round-off (only self-loops) is no graph: scale 0 (every γ is the
    plain factor) and a warning, not γ = tr(GᵀG) / round-off ≈ 10¹⁷."""
    X, P, G = _data(rng)
    GtG, H = graph_laplacian_gram(G, sp.identity(G.shape[0], format="csr"))
    assert np.abs(H).max() < 1e-12 * np.trace(GtG)  # zero up to round-off
    with pytest.warns(UserWarning, match=r"Laplacian is zero.*n_neighbors"):
        defo = deformation(GtG, H, n_rows=G.shape[0])
    assert defo.scale == 0.0
    np.testing.assert_array_equal(deformation_matrix(defo, 1.0), np.eye(G.shape[1]))
    # a graph with edges keeps its scale
    graph = _anchor_graph(rng, X)
    defo = deformation(*anchor_laplacian_gram(X, lambda B: np.tanh(B @ P), graph)[:2], n_rows=60)
    assert 0 < defo.scale < 1e6


@pytest.mark.parametrize("classification", [True, False])
def test_loo_with_more_labeled_rows_than_features_uses_the_small_gram(monkeypatch, classification):
    """Above LOO_GRAM_ROWS labeled rows and fewer features, the r × r Gram gives the
    same leave-one-out table as the l × l one and as the explicit hat matrix."""
    import lorak.learn._graph_factor as gfm

    rng = np.random.default_rng(7)
    l, r = gfm.LOO_GRAM_ROWS + 200, 60
    F = rng.standard_normal((l, r)) * np.logspace(0, -3, r)
    Y = ridge_targets(rng.integers(0, 3, l), 3) if classification else rng.standard_normal((l, 1))
    alphas = (1e-4, 1e-1, 10.0)
    small, rows_small = gfm.loo_ridge_scores(
        F, Y, alphas, classification=classification, per_row=True
    )
    monkeypatch.setattr(gfm, "LOO_GRAM_ROWS", 10 * l)
    big, rows_big = gfm.loo_ridge_scores(F, Y, alphas, classification=classification, per_row=True)
    np.testing.assert_allclose(small[:, 1], big[:, 1], rtol=1e-9)
    Fc = F - F.mean(axis=0)
    for k, a in enumerate(alphas):
        H = Fc @ np.linalg.solve(Fc.T @ Fc + a * np.eye(r), Fc.T) + 1.0 / l
        fit = H @ (Y - Y.mean(axis=0)) + Y.mean(axis=0)
        loo = Y - (Y - fit) / (1 - np.diag(H))[:, None]
        want = np.mean(np.sum((Y - loo) ** 2, axis=1)) / Y.shape[1]
        assert small[k, 1] == pytest.approx(want, rel=1e-9)
        if classification:
            # per-row errors: the argmax of the held-out predictions, which the two
            # Grams give to round-off, so equal wherever the two largest are not tied
            tol = 1e-9 * np.abs(loo).max()
            assert_labels_agree_off_ties(rows_small[k], rows_big[k], loo, tol)

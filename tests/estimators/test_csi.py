"""CSI (Bach & Jordan 2005): the algorithm against a brute-force reference, its exact
cases and the estimator's contract (the csi-rank experiment's helpers are tested with
the harness, ``bench/tests/test_csi_rank.py``)."""

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

from _naive import naive_csi
from conftest import readonly
from lorak.decompose import incomplete_cholesky
from lorak.estimators import CSI
from lorak.learn._csi import _hysteresis_argmax, csi, csi_q

# ---------------------------------------------------------------- brute-force reference


def _run(K, Y, m, **kw):
    return csi(np.diag(K).copy(), lambda i: K[:, i].copy(), Y, m, tol=0.0, **kw)


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 3))
    K = rbf_kernel(X, gamma=0.4)
    targets = {
        "regression": (X[:, :1] ** 2 + 0.1 * rng.standard_normal((40, 1))),
        "multi-output": np.column_stack([np.sin(X[:, 0]), X[:, 1] * X[:, 2]]),
        "3 classes": np.eye(3)[rng.integers(0, 3, 40)],
    }
    return K, targets, rng.random(40) < 0.4


@pytest.mark.parametrize("target", ["regression", "multi-output", "3 classes"])
@pytest.mark.parametrize("centering", [True, False])
@pytest.mark.parametrize("delta", [0, 2, 6])
@pytest.mark.parametrize("qr", ["gram", "cgs2"])
def test_matches_brute_force_reference(small, target, centering, delta, qr):
    K, targets, _ = small
    Y = targets[target]
    res = _run(K, Y, 12, kappa=0.9, lookahead=delta, centering=centering, qr=qr)
    piv, pred, true = naive_csi(K, Y, 12, kappa=0.9, delta=delta, centering=centering)
    np.testing.assert_array_equal(res.pivots, piv)
    np.testing.assert_allclose(res.predicted_gain, pred, rtol=1e-8)
    np.testing.assert_allclose(res.true_gain, true, rtol=1e-8)


@pytest.mark.parametrize("qr", ["gram", "cgs2"])
@pytest.mark.parametrize("delta", [0, 3])
def test_labeled_subset_matches_reference(small, qr, delta):
    """Unlabeled rows enter the Cholesky part only; ΠG(L,:) loses rank (16 labeled rows,
    up to 12 + δ columns)."""
    K, targets, labeled = small
    Y = targets["3 classes"]
    res = _run(K, Y, 12, kappa=0.9, lookahead=delta, labeled=labeled, qr=qr)
    piv, pred, true = naive_csi(K, Y, 12, kappa=0.9, delta=delta, labeled=labeled)
    np.testing.assert_array_equal(res.pivots, piv)
    np.testing.assert_allclose(res.true_gain, true, rtol=1e-7, atol=1e-14)


# ---------------------------------------------------------------- exact cases


@pytest.fixture(scope="module")
def blobs():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 4))
    y = (X[:, 0] ** 2 + X[:, 1] > 1).astype(int) + (X[:, 2] > 1)
    return X, y


def test_kappa_zero_without_lookahead_is_incomplete_cholesky(blobs):
    X, y = blobs
    K = rbf_kernel(X, gamma=0.3)
    res = _run(K, np.eye(3)[y], 60, kappa=0.0, lookahead=0)
    icd = incomplete_cholesky(np.diag(K).copy(), lambda i: K[:, i].copy(), 60)
    np.testing.assert_array_equal(res.pivots, icd.pivots)
    np.testing.assert_allclose(res.G, icd.G, atol=1e-12)
    np.testing.assert_allclose(res.approx_error, icd.residual_trace, atol=1e-12)


def test_kappa_zero_estimator_is_incomplete_cholesky(blobs):
    from lorak import IncompleteCholesky

    X, y = blobs
    c = CSI(gamma=0.3, n_components=30, kappa=0.0, lookahead=0, tol=0).fit(X, y)
    i = IncompleteCholesky(gamma=0.3, n_components=30).fit(X)
    np.testing.assert_array_equal(c.pivots_, i.pivots_)
    np.testing.assert_allclose(c.transform(X[:20]), i.transform(X[:20]), atol=1e-10)


@pytest.mark.parametrize("delta", [0, 5, 40])
def test_full_rank_reproduces_K(delta):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((50, 3))
    y = rng.integers(0, 2, 50)
    c = CSI(gamma=0.5, n_components=50, lookahead=delta, tol=0).fit(X, y)
    G = c.G_
    np.testing.assert_allclose(G @ G.T, rbf_kernel(X, gamma=0.5), atol=1e-8)
    assert c.stop_reason_ in ("max_rank", "exhausted")


def test_predicted_gain_is_exact_for_lookahead_pivots(blobs):
    X, y = blobs
    c = CSI(gamma=0.3, n_components=60, lookahead=10, tol=0).fit(X, y)
    hit = c.lookahead_hit_
    assert hit.sum() >= 3 and (~hit).sum() >= 3  # both cases occur
    np.testing.assert_allclose(c.predicted_gain_[hit], c.true_gain_[hit], rtol=1e-9)
    assert not np.allclose(c.predicted_gain_[~hit], c.true_gain_[~hit], rtol=1e-6)


def test_traces_match_their_definitions(blobs):
    X, y = blobs
    K = rbf_kernel(X, gamma=0.3)
    c = CSI(gamma=0.3, n_components=25, lookahead=8, tol=0, kappa=0.7).fit(X, y)
    G = c.G_
    Y = np.eye(3)[y]
    Yc = Y - Y.mean(0)
    for k in (0, 1, 7, 25):
        Gk = G[:, :k]
        np.testing.assert_allclose(
            c.approx_error_[k], np.trace(K - Gk @ Gk.T) / np.trace(K), atol=1e-10
        )
        if k:
            Gc = Gk - Gk.mean(0)
            fit = Gc @ np.linalg.lstsq(Gc, Yc, rcond=None)[0]
            e2 = ((Yc - fit) ** 2).sum() / (Yc**2).sum()
            np.testing.assert_allclose(c.prediction_error_[k], e2, atol=1e-10)
    J = 0.3 * c.approx_error_ + 0.7 * c.prediction_error_
    np.testing.assert_allclose(c.objective_, J)
    np.testing.assert_allclose(-np.diff(J), c.true_gain_, atol=1e-12)
    assert np.all(np.diff(J) <= 1e-15)  # J never increases


def test_factor_structure_and_qr(blobs):
    """Appendix A keeps G lower triangular on its pivot rows (positive diagonal) and
    ΠG = QR with Q orthonormal, through every transposition."""
    X, y = blobs
    for centering in (True, False):
        c = CSI(gamma=0.3, n_components=40, lookahead=12, tol=0, centering=centering)
        c.fit(X, y)
        Lp = c.G_[c.pivots_]
        assert np.all(np.triu(Lp, 1) == 0)
        assert np.all(np.diag(Lp) > 0)
        Gc = c.G_ - c.G_.mean(0) if centering else c.G_
        Q = c.Q_
        np.testing.assert_allclose(Q @ c.R_, Gc, atol=1e-10)
        np.testing.assert_allclose(Q.T @ Q, np.eye(40), atol=1e-8)
        assert np.all(np.diag(c.R_) >= 0)


def test_gram_and_explicit_qr_agree(blobs):
    X, y = blobs
    K = rbf_kernel(X, gamma=0.3)
    a = _run(K, np.eye(3)[y], 50, lookahead=10, qr="gram")
    b = _run(K, np.eye(3)[y], 50, lookahead=10, qr="cgs2")
    np.testing.assert_array_equal(a.pivots, b.pivots)
    np.testing.assert_allclose(a.R, b.R, atol=1e-8)
    np.testing.assert_allclose(csi_q(a.G, a.R), b.Q, atol=1e-7)


def test_refresh_does_not_change_the_run(blobs):
    """The O((δ+d)n) gain updates agree with the exact O(δ²n) recomputation."""
    X, y = blobs
    K = rbf_kernel(X, gamma=0.3)
    a = _run(K, np.eye(3)[y], 50, lookahead=10, refresh=1)
    b = _run(K, np.eye(3)[y], 50, lookahead=10, refresh=10**9)
    np.testing.assert_array_equal(a.pivots, b.pivots)
    np.testing.assert_allclose(a.predicted_gain, b.predicted_gain, rtol=1e-9)


def test_only_diag_and_pivot_columns_are_computed(blobs):
    X, y = blobs
    K = rbf_kernel(X, gamma=0.3)
    asked = []

    def column(i):
        asked.append(i)
        return K[:, i].copy()

    res = csi(np.diag(K).copy(), column, np.eye(3)[y], 30, lookahead=10, tol=0)
    assert len(asked) == len(set(asked)) <= 30 + 10
    np.testing.assert_array_equal(asked, res.kernel_columns)
    assert set(res.pivots) <= set(asked)


def test_rotation_product_is_the_sequence_of_rotations():
    from scipy.linalg.blas import drot

    from lorak.learn._csi import _rotation_product

    rng = np.random.default_rng(5)
    for b in (1, 2, 3, 9):
        th = rng.uniform(0, 2 * np.pi, b - 1)
        cs, ss = list(np.cos(th)), list(np.sin(th))
        if b > 2:
            cs[1], ss[1] = 1.0, 0.0  # a skipped rotation (h₂ = 0)
        O = np.eye(b, order="F")
        for t in range(b - 2, -1, -1):
            drot(O[:, t], O[:, t + 1], cs[t], ss[t], overwrite_x=1, overwrite_y=1)
        np.testing.assert_allclose(_rotation_product(cs, ss), O, atol=1e-15)


def test_reference_selection_and_scan():
    """The reference code's scan: a later entry wins only above best/factor."""
    vals = np.array([1.0, 1.05, 1.2, 1.3, 5.0])
    ok = np.ones(5, bool)
    assert _hysteresis_argmax(vals, ok, -1.0, 0.9) == 4
    assert _hysteresis_argmax(vals[:4], ok[:4], -1.0, 0.9) == 2  # 1.05 < 1/0.9
    assert _hysteresis_argmax(vals[:2], ok[:2], -1.0, 0.9) == 0
    assert _hysteresis_argmax(vals, np.zeros(5, bool), -1.0, 0.9) is None
    rng = np.random.default_rng(2)
    X = rng.standard_normal((120, 3))
    K = rbf_kernel(X, gamma=0.5)
    res = _run(K, np.eye(2)[rng.integers(0, 2, 120)], 20, lookahead=5, selection="reference")
    assert len(set(res.pivots)) == 20
    np.testing.assert_allclose(res.predicted_gain[res.lookahead_hit],
                               res.true_gain[res.lookahead_hit], rtol=1e-9)  # fmt: skip


# ---------------------------------------------------------------- the estimator


def test_transform_is_inductive(blobs):
    X, y = blobs
    c = CSI(gamma=0.3, n_components=30, lookahead=8, tol=0).fit(X[:200], y[:200])
    np.testing.assert_allclose(c.transform(X[:200]), c.G_, atol=1e-10)
    # new rows: the Nyström extension on the pivots (Proposition 1)
    Gn = c.transform(X[200:])
    P = X[c.pivots_]
    Kn = rbf_kernel(X[200:], P, gamma=0.3) @ np.linalg.solve(
        rbf_kernel(P, gamma=0.3), rbf_kernel(P, X[:200], gamma=0.3)
    )
    np.testing.assert_allclose(Gn @ c.G_.T, Kn, atol=1e-8)


def test_csi_predicts_better_than_icd_at_equal_rank(blobs):
    X, y = blobs
    c = CSI(gamma=0.3, n_components=10, tol=0).fit(X, y)
    i = CSI(gamma=0.3, n_components=10, tol=0, kappa=0.0, lookahead=0).fit(X, y)
    assert c.prediction_error_[-1] < i.prediction_error_[-1]


def test_regression_targets():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((150, 2))
    y = np.sin(2 * X[:, 0]) + 0.05 * rng.standard_normal(150)
    c = CSI(gamma=1.0, n_components=15, tol=0).fit(X, y)
    assert c.target_type_ == "regression" and c.classes_ is None
    assert c.prediction_error_[-1] < 0.1
    Y2 = np.column_stack([y, X[:, 1] ** 2])
    c2 = CSI(gamma=1.0, n_components=15, tol=0).fit(X, Y2)
    assert c2.target_type_ == "regression"
    # integer-valued responses read as classes unless told otherwise
    counts = rng.poisson(3, 150)
    assert CSI(n_components=5).fit(X, counts).target_type_ == "classification"
    assert CSI(n_components=5, target="regression").fit(X, counts).target_type_ == "regression"


def test_multiclass_and_string_labels(blobs):
    X, y = blobs
    labels = np.array(["a", "b", "c"])[y]
    c = CSI(gamma=0.3, n_components=10, tol=0).fit(X, labels)
    np.testing.assert_array_equal(c.classes_, ["a", "b", "c"])
    d = CSI(gamma=0.3, n_components=10, tol=0).fit(X, y)
    np.testing.assert_array_equal(c.pivots_, d.pivots_)


def test_centering_changes_the_prediction_term(blobs):
    X, y = blobs
    on = CSI(gamma=0.3, n_components=15, tol=0, centering=True).fit(X, y)
    off = CSI(gamma=0.3, n_components=15, tol=0, centering=False).fit(X, y)
    # uncentred Y = one-hot has its mean to explain too: a larger initial error budget
    assert on.prediction_error_[0] == off.prediction_error_[0] == 1.0
    assert not np.array_equal(on.pivots_, off.pivots_)


def test_tol_stops_after_the_first_small_gain(blobs):
    X, y = blobs
    full = CSI(gamma=0.3, n_components=80, tol=0).fit(X, y)
    tol = float(np.quantile(full.true_gain_[:40], 0.3))
    c = CSI(gamma=0.3, n_components=80, tol=tol).fit(X, y)
    r = c.n_components_
    assert c.stop_reason_ == "tol" and c.converged_
    assert c.true_gain_[-1] < tol and np.all(c.true_gain_[:-1] >= tol)
    np.testing.assert_array_equal(c.pivots_, full.pivots_[:r])


def test_unlabeled_rows(blobs):
    X, y = blobs
    ys = y.copy()
    ys[::3] = -1
    c = CSI(gamma=0.3, n_components=20, tol=0, unlabeled=-1).fit(X, ys)
    assert c.n_labeled_ == int((ys != -1).sum())
    np.testing.assert_array_equal(c.classes_, [0, 1, 2])
    K = rbf_kernel(X, gamma=0.3)
    Y = np.zeros((300, 3))
    Y[ys != -1, ys[ys != -1]] = 1
    res = _run(K, Y, 20, labeled=ys != -1)
    np.testing.assert_array_equal(c.pivots_, res.pivots)
    assert c.Q_.shape == (c.n_labeled_, 20)
    # NaN marks unlabeled responses
    yr = X[:, 0].copy()
    yr[::4] = np.nan
    r = CSI(gamma=0.3, n_components=10, unlabeled=np.nan).fit(X, yr)
    assert r.n_labeled_ == 225 and r.target_type_ == "regression"
    # ±1 labels (LIBSVM, SSL book): NaN marks the unlabeled rows
    ypm = np.where(y > 0, 1.0, -1.0)
    ypm[::3] = np.nan
    s = CSI(gamma=0.3, n_components=10, unlabeled=np.nan).fit(X, ypm)
    np.testing.assert_array_equal(s.classes_, [-1.0, 1.0])
    assert s.target_type_ == "classification" and s.n_labeled_ == 200


def test_input_is_not_modified(blobs):
    X, y = blobs
    Xr, yr = readonly(X), readonly(y)
    CSI(gamma=0.3, n_components=10).fit(Xr, yr)


def test_float32_is_preserved(blobs):
    X, y = blobs
    c = CSI(gamma=0.3, n_components=10).fit(X.astype(np.float32), y)
    assert c.G_.dtype == np.float32
    assert c.transform(X[:5].astype(np.float32)).dtype == np.float32


@pytest.mark.parametrize(
    ("params", "y_fn", "match"),
    [
        ({}, lambda y: y[:-1], "y has 299 rows, but X has 300"),
        ({"kappa": 1.5}, None, r"kappa must be in \[0, 1\]; got 1.5"),
        ({"kappa": -0.1}, None, r"kappa must be in \[0, 1\]"),
        ({"lookahead": -1}, None, "lookahead must be >= 0; got -1"),
        ({"tol": -1e-3}, None, "tol must be a finite number >= 0"),
        ({"target": "ranking"}, None, "unknown target 'ranking'"),
        ({}, lambda y: np.zeros(300, int), "single class"),
        ({"target": "regression"}, lambda y: np.full(300, 2.5), "y is constant"),
        ({}, lambda y: None, "requires y to be passed"),
        ({"unlabeled": -1}, lambda y: np.full(300, -1), "at least 2 labeled rows"),
    ],
)
def test_bad_input(blobs, params, y_fn, match):
    X, y = blobs
    yy = y if y_fn is None else y_fn(y)
    with pytest.raises(ValueError, match=match):
        CSI(n_components=5, **params).fit(X, yy)


def test_bad_types(blobs):
    X, y = blobs
    with pytest.raises(TypeError, match="lookahead must be an integer"):
        CSI(n_components=5, lookahead=2.5).fit(X, y)
    with pytest.raises(TypeError, match="kappa must be a number"):
        CSI(n_components=5, kappa="high").fit(X, y)


def test_constant_y_is_fine_without_the_prediction_term(blobs):
    X, _ = blobs
    c = CSI(n_components=5, kappa=0.0, target="regression").fit(X, np.ones(300))
    assert c.n_components_ == 5


# ---------------------------------------------------------------- slow / data


@pytest.mark.slow
def test_long_run_stays_exact():
    """rank 300, δ = 40 on 2000 rows: gains of look-ahead pivots stay exact (no drift)."""
    from lorak.datasets import make_ringnorm

    X, y = make_ringnorm(2000, random_state=0)
    c = CSI(gamma=0.025, n_components=300, tol=0).fit(X, y)
    h = c.lookahead_hit_
    np.testing.assert_allclose(c.predicted_gain_[h], c.true_gain_[h], rtol=1e-9)
    Gc = c.G_ - c.G_.mean(0)
    np.testing.assert_allclose(c.Q_ @ c.R_, Gc, atol=1e-8)


@pytest.mark.data
def test_csi_on_dna_beats_icd_in_prediction():
    from lorak.datasets import load

    d = load("dna", split="train")
    X = d.X.toarray() if hasattr(d.X, "toarray") else d.X
    c = CSI(bandwidth="mean_pairwise", n_components=20, tol=0).fit(X, d.y)
    i = CSI(bandwidth="mean_pairwise", n_components=20, tol=0, kappa=0, lookahead=0)
    i.fit(X, d.y)
    assert c.prediction_error_[20] < 0.8 * i.prediction_error_[20]

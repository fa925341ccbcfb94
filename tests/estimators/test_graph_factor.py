"""GraphRegularizedFactor: the estimator around the graph-regularized factor math."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_moons

import lorak
from lorak import GraphRegularizedFactor, Nystroem, SemiSupervisedFactorClassifier
from lorak.kernels import Gaussian


@pytest.fixture
def moons():
    X, y = make_moons(240, noise=0.06, random_state=0)
    y_semi = np.full(240, -1)
    lab = np.r_[np.flatnonzero(y == 0)[:4], np.flatnonzero(y == 1)[:4]]
    y_semi[lab] = y[lab]
    return X, y, y_semi


def _nys():
    return Nystroem(
        kernel=Gaussian(bandwidth=0.5), landmarks="kmeans", n_components=40, random_state=0
    )


def test_gamma_zero_reproduces_the_plain_factor_exactly(moons):
    X, _, _ = moons
    f = GraphRegularizedFactor(_nys(), gamma=0.0, random_state=0).fit(X)
    G = _nys().fit(X).transform(X)
    assert np.array_equal(f.transform(X), G)
    assert f.penalty_ is None and f.gamma_ == 0.0


def test_fit_is_deterministic_and_the_graph_helps_on_moons(moons):
    X, y, y_semi = moons
    a = GraphRegularizedFactor(_nys(), random_state=3).fit(X, y_semi)
    b = GraphRegularizedFactor(_nys(), random_state=3).fit(X, y_semi)
    np.testing.assert_array_equal(a.components_, b.components_)
    assert (a.gamma_, a.penalty_) == (b.gamma_, b.penalty_)
    assert a.gamma_ > 0  # 8 labels on two arcs: the graph is worth using
    clf = SemiSupervisedFactorClassifier(GraphRegularizedFactor(_nys(), random_state=3))
    clf.fit(X, y_semi)
    un = y_semi == -1
    plain = SemiSupervisedFactorClassifier(_nys()).fit(X, y_semi)
    err = np.mean(clf.transduction_[un] != y[un])
    assert err < 0.05 and err <= np.mean(plain.transduction_[un] != y[un])


def test_transform_is_the_factor_times_R(moons, rng):
    X, _, y_semi = moons
    f = GraphRegularizedFactor(_nys(), gamma=10.0, random_state=0).fit(X)
    Xn = rng.standard_normal((5, 2))
    np.testing.assert_allclose(f.transform(Xn), f.factor_.transform(Xn) @ f.components_, rtol=1e-12)
    # R Rᵀ = (I + γ GᵀLG)⁻¹ has eigenvalues in (0, 1]
    ev = np.linalg.eigvalsh(f.components_ @ f.components_.T)
    assert ev.min() > 0 and ev.max() <= 1 + 1e-10


@pytest.mark.parametrize("graph", ["anchor", "knn"])
@pytest.mark.parametrize("power", [1, 2])
def test_graph_options_fit(moons, graph, power):
    X, _, y_semi = moons
    f = GraphRegularizedFactor(_nys(), graph=graph, power=power, random_state=0).fit(X, y_semi)
    assert f.transform(X).shape == (240, f.n_components_)
    assert (f.anchors_ is None) == (graph == "knn")


def test_knn_by_nndescent(moons):
    pytest.importorskip("pynndescent")
    X, _, y_semi = moons
    f = GraphRegularizedFactor(_nys(), graph="knn", knn_method="nndescent", random_state=0)
    assert f.fit(X, y_semi).transform(X).shape[0] == 240


def test_your_own_graph(moons):
    X, _, y_semi = moons
    A = lorak.learn.knn_graph(X, 8)
    f = GraphRegularizedFactor(_nys(), graph=A, random_state=0).fit(X, y_semi)
    g = GraphRegularizedFactor(_nys(), graph="knn", n_neighbors=8, random_state=0).fit(X, y_semi)
    np.testing.assert_allclose(f.components_, g.components_, rtol=1e-10, atol=1e-12)


def test_regression_target(rng):
    X = rng.uniform(-3, 3, (200, 2))
    y = np.sin(X[:, 0])
    ys = np.full(200, np.nan)
    ys[:30] = y[:30]
    f = GraphRegularizedFactor(_nys(), random_state=0).fit(X, ys)
    assert f.target_type_ == "regression" and f.penalty_ is not None
    reg = lorak.SemiSupervisedFactorRegressor().fit(X, ys)
    assert reg.score(X[30:], y[30:]) > 0.8


def test_float32_kept(moons):
    X, _, y_semi = moons
    f = GraphRegularizedFactor(_nys(), random_state=0).fit(X.astype(np.float32), y_semi)
    assert f.transform(X.astype(np.float32)).dtype == np.float32


def test_inputs_are_not_modified(moons):
    X, _, y_semi = moons
    X0, y0 = X.copy(), y_semi.copy()
    GraphRegularizedFactor(_nys(), random_state=0).fit(X, y_semi)
    assert np.array_equal(X, X0) and np.array_equal(y_semi, y0)


def test_sparse_input_gives_the_dense_result(moons):
    X, _, y_semi = moons
    a = GraphRegularizedFactor(_nys(), gamma=5.0, random_state=0).fit(X)
    b = GraphRegularizedFactor(_nys(), gamma=5.0, random_state=0).fit(sp.csr_matrix(X))
    np.testing.assert_allclose(a.components_, b.components_, rtol=1e-8, atol=1e-10)


def test_save_and_load(moons, tmp_path):
    X, _, y_semi = moons
    f = GraphRegularizedFactor(_nys(), random_state=0).fit(X, y_semi)
    lorak.save(f, tmp_path / "g.lorak")
    g = lorak.load(tmp_path / "g.lorak")
    np.testing.assert_array_equal(g.transform(X), f.transform(X))


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"n_anchors": 500}, "n_anchors=500 exceeds the number of rows"),
        ({"n_anchors": 2, "n_neighbors": 3}, "n_neighbors=3 exceeds n_anchors=2"),
        ({"power": 3}, "power must be 1 or 2"),
        ({"gamma": -1.0}, "gamma must be 'auto' or a number"),
        ({"graph": "full"}, "graph"),
        ({"weights": "heat"}, "weights"),
        ({"n_anchors": "many"}, "n_anchors must be"),
    ],
)
def test_bad_parameters_name_themselves(moons, params, match):
    X, _, y_semi = moons
    with pytest.raises(ValueError, match=match):
        GraphRegularizedFactor(_nys(), **params).fit(X, y_semi)


def test_isolated_rows_in_your_graph_are_refused(moons):
    X, _, y_semi = moons
    A = lorak.learn.knn_graph(X, 5).tolil()
    A[7, :] = 0
    A[:, 7] = 0
    with pytest.raises(ValueError, match="no edge"):
        GraphRegularizedFactor(_nys(), graph=A.tocsr()).fit(X, y_semi)


def test_gamma_auto_needs_labels(moons):
    X, _, y_semi = moons
    with pytest.raises(ValueError, match="gamma='auto' chooses"):
        GraphRegularizedFactor(_nys()).fit(X)
    # responses go through leave-one-out, which needs 3 labeled rows (one labeled row
    # per class is enough for class labels: the few-label rule, no leave-one-out)
    few = np.full(240, np.nan)
    few[[0, 1]] = [0.5, 1.5]
    with pytest.raises(ValueError, match="at least 3 labeled rows"):
        GraphRegularizedFactor(_nys()).fit(X, few)


def test_libsvm_labels_are_explained(moons):
    X, y, _ = moons
    with pytest.raises(ValueError, match="unlabeled"):
        GraphRegularizedFactor(_nys()).fit(X, 2 * y - 1)


def _kernel(f, X):
    Q = f.transform(X)
    return Q @ Q.T


def test_lle_weights_do_not_depend_on_the_offset():
    X = np.random.default_rng(5).standard_normal((60, 8))
    a = GraphRegularizedFactor(weights="lle", gamma=1.0, random_state=0).fit(X)
    b = GraphRegularizedFactor(weights="lle", gamma=1.0, random_state=0).fit(X + 8)
    Ka = _kernel(a, X)
    np.testing.assert_allclose(_kernel(b, X + 8), Ka, atol=1e-9 * np.abs(Ka).max())
    assert b.laplacian_weight_ == pytest.approx(a.laplacian_weight_, rel=1e-9)


def test_anchor_graph_keeps_its_accuracy_at_a_large_offset():
    X = np.random.default_rng(0).standard_normal((60, 3))
    fac = Nystroem(gamma=0.5, n_components=60, landmarks=np.arange(60))
    a = GraphRegularizedFactor(factor=fac, gamma=1.0, random_state=0).fit(X)
    b = GraphRegularizedFactor(factor=fac, gamma=1.0, random_state=0).fit(X + 1e8)
    assert b.laplacian_weight_ == pytest.approx(a.laplacian_weight_, rel=1e-6)
    Ka = _kernel(a, X)
    np.testing.assert_allclose(_kernel(b, X + 1e8), Ka, atol=1e-6 * np.abs(Ka).max())


@pytest.mark.parametrize(
    "kw",
    [
        {"graph": sp.identity(60, format="csr")},  # self-loops only
        {"n_anchors": 60, "n_neighbors": 1},  # each row alone with its anchor
    ],
    ids=["self-loops", "own-anchor"],
)
def test_a_graph_without_edges_between_rows_gives_the_plain_factor(kw):
    """GᵀLG is zero up to round-off: no γ of 10¹⁷ from it, a warning and the plain
    factor."""
    X = np.random.default_rng(0).standard_normal((60, 3))
    with pytest.warns(UserWarning, match=r"Laplacian is zero.*(graph|n_neighbors)"):
        f = GraphRegularizedFactor(_nys(), gamma=1.0, random_state=0, **kw).fit(X)
    assert f.laplacian_weight_ == 0.0
    np.testing.assert_array_equal(f.transform(X), f.factor_.transform(X))


@pytest.mark.parametrize("scale", [1 + 1j, 1j], ids=["complex", "imaginary"])
def test_a_complex_graph_is_refused(scale):
    """Complex weights are not cast to real (NumPy's ComplexWarning only), and a purely
    imaginary graph is not reported as rows without an edge."""
    X = np.random.default_rng(0).standard_normal((60, 3))
    i = np.arange(59)
    A = sp.coo_matrix((np.ones(59) * scale, (i, i + 1)), shape=(60, 60))
    A = (A + A.T).tocsr()
    with pytest.raises(ValueError, match=r"graph.*real"):
        GraphRegularizedFactor(_nys(), graph=A, gamma=1.0, random_state=0).fit(X)


@pytest.mark.parametrize(
    ("M", "match"),
    [
        (np.ones((3, 2)), r"M must have 40 rows"),
        (np.ones(40), r"M must have 40 rows"),
        (np.ones((40, 2)) * 1j, r"M must be .*real"),
        ([[1.0, 2.0], [3.0]], r"M must be"),
    ],
    ids=["rows", "1-d", "complex", "ragged"],
)
def test_transform_product_names_a_wrong_M(M, match):
    X = np.random.default_rng(0).standard_normal((60, 3))
    f = GraphRegularizedFactor(_nys(), gamma=1.0, random_state=0).fit(X)
    with pytest.raises(ValueError, match=match):
        f.transform_product(X, M)
    # the right shape still works, on either path (the factor's own product or not)
    M = np.ones((f.n_components_, 2))
    np.testing.assert_allclose(f.transform_product(X, M), f.transform(X) @ M, rtol=1e-10)


@pytest.mark.parametrize(
    ("factor", "match"),
    [("nystroem", r"factor must be a transformer"), (Nystroem, r"factor must be .*instance")],
    ids=["string", "class"],
)
def test_a_factor_that_is_not_a_transformer_is_named(factor, match):
    X = np.random.default_rng(0).standard_normal((60, 3))
    with pytest.raises(TypeError, match=match):
        GraphRegularizedFactor(factor=factor, gamma=1.0).fit(X)

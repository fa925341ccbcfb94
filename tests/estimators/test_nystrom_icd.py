import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_blobs
from sklearn.kernel_approximation import Nystroem as SkNystroem
from sklearn.metrics.pairwise import rbf_kernel

from _naive import icd_dense, nystrom_dense
from conftest import readonly
from lorak import ExactEigen, IncompleteCholesky, Nystroem
from lorak.kernels import Gaussian
from lorak.metrics import frobenius_error


@pytest.fixture
def data(rng):
    return rng.standard_normal((200, 5))


def _K(X, gamma):
    return rbf_kernel(X, gamma=gamma)


# ---------------------------------------------------------------- Nyström


def test_full_rank_nystrom_reproduces_K(data):
    G = Nystroem(n_components=200, random_state=0).fit_transform(data)
    np.testing.assert_allclose(G @ G.T, _K(data, 1 / 5), atol=1e-8)


def test_landmark_rows_reproduced_exactly(data):
    """Zhang 2008 Prop. 1: rows/columns of landmark points are exact."""
    idx = np.array([3, 17, 40, 41, 99, 150])
    m = Nystroem(gamma=0.3, landmarks=idx).fit(data)
    G = m.transform(data)
    K = _K(data, 0.3)
    np.testing.assert_allclose((G @ G.T)[idx], K[idx], atol=1e-10)
    np.testing.assert_allclose(G @ G.T, nystrom_dense(K, idx), atol=1e-10)
    np.testing.assert_array_equal(m.component_indices_, idx)


def test_matches_sklearn_with_same_landmarks(data):
    sk = SkNystroem(n_components=30, gamma=0.5, random_state=0).fit(data)
    ours = Nystroem(n_components=30, gamma=0.5, landmarks=sk.component_indices_).fit(data)
    Gs, Go = sk.transform(data), ours.transform(data)
    np.testing.assert_allclose(Go @ Go.T, Gs @ Gs.T, atol=1e-10)
    # default parameters agree too: rbf with gamma = 1/n_features
    sk = SkNystroem(n_components=20, random_state=1).fit(data)
    ours = Nystroem(n_components=20, landmarks=sk.component_indices_).fit(data)
    G1, G2 = sk.transform(data[:50]), ours.transform(data[:50])
    np.testing.assert_allclose(G2 @ G2.T, G1 @ G1.T, atol=1e-10)


def test_duplicate_landmarks_handled_by_pseudo_inverse(data):
    idx = np.array([1, 1, 2, 5, 5, 5, 9])
    G = Nystroem(gamma=0.5, landmarks=idx).fit_transform(data)
    K = _K(data, 0.5)
    assert G.shape[1] == 4  # rank of W is the number of distinct landmarks
    np.testing.assert_allclose(G @ G.T, nystrom_dense(K, np.unique(idx)), atol=1e-8)


def test_given_points_and_callable(data, rng):
    P = rng.standard_normal((12, 5))
    m = Nystroem(bandwidth=4.0, landmarks=P).fit(data)
    np.testing.assert_array_equal(m.landmarks_, P)
    assert m.component_indices_ is None
    m2 = Nystroem(bandwidth=4.0, n_components=7, landmarks=lambda X, k, rng, kernel: X[:k] + 0.1)
    assert m2.fit(data).components_.shape == (7, 5)


def test_kmeans_beats_uniform_on_clustered_data():
    X, _ = make_blobs(n_samples=1500, centers=30, n_features=4, cluster_std=0.4, random_state=0)
    errs = {}
    for lm in ("uniform", "kmeans"):
        e = []
        for seed in range(3):
            f = Nystroem(
                bandwidth="mean_to_centroid", n_components=30, landmarks=lm, random_state=seed
            ).fit(X)
            e.append(frobenius_error(f.kernel_, X, f.transform(X)))
        errs[lm] = np.mean(e)
    assert errs["kmeans"] < 0.8 * errs["uniform"]


def test_column_norm_weights_and_error(data):
    f = Nystroem(gamma=0.2, n_components=40, landmarks="column_norm", random_state=0).fit(data)
    assert f.landmark_weights_ is not None and np.all(f.landmark_weights_ > 0)
    G = f.transform(data)
    # rescaling cancels when W is invertible: same as plain Nyström on the distinct columns
    idx = np.unique(f.component_indices_)
    np.testing.assert_allclose(G @ G.T, nystrom_dense(_K(data, 0.2), idx), atol=1e-6)


def test_sparse_input_equals_dense():
    X = sp.random(150, 40, density=0.15, random_state=3, format="csr")
    idx = np.arange(0, 150, 10)
    Gs = Nystroem(bandwidth=2.0, landmarks=idx).fit(X).transform(X)
    Gd = Nystroem(bandwidth=2.0, landmarks=idx).fit(X.toarray()).transform(X.toarray())
    np.testing.assert_allclose(Gs @ Gs.T, Gd @ Gd.T, atol=1e-10)


def test_float32_in_float32_out(data):
    X32 = data.astype(np.float32)
    for est in (
        Nystroem(n_components=20, random_state=0),
        IncompleteCholesky(n_components=20),
        ExactEigen(n_components=20),
    ):
        G = est.fit_transform(X32)
        assert G.dtype == np.float32, type(est).__name__
        assert est.transform(X32).dtype == np.float32
    G64 = Nystroem(n_components=20, random_state=0).fit_transform(data)
    G32 = Nystroem(n_components=20, random_state=0).fit_transform(X32)
    np.testing.assert_allclose(G32 @ G32.T, G64 @ G64.T, atol=1e-4)


def test_transform_rows_independent_of_batch(data):
    f = Nystroem(n_components=30, random_state=0).fit(data)
    full = f.transform(data)
    np.testing.assert_allclose(f.transform(data[7:8]), full[7:8], atol=1e-12)


def test_nystroem_inputs_untouched(data):
    X = readonly(data)
    Nystroem(n_components=10, landmarks="kmeans", random_state=0).fit(X).transform(X)
    IncompleteCholesky(n_components=10).fit(X).transform(X)


def test_determinism(data):
    a = Nystroem(n_components=15, landmarks="kmeans", random_state=4).fit_transform(data)
    b = Nystroem(n_components=15, landmarks="kmeans", random_state=4).fit_transform(data)
    np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------- incomplete Cholesky


def test_icd_full_rank_reproduces_K_and_out_of_sample(data):
    f = IncompleteCholesky(gamma=0.5, n_components=200).fit(data)
    K = _K(data, 0.5)
    np.testing.assert_allclose(f.G_ @ f.G_.T, K, atol=1e-10)
    np.testing.assert_allclose(f.transform(data), f.G_, atol=1e-8)


def test_icd_matches_dense_reference(data):
    K = _K(data, 0.5)
    G_ref, piv_ref = icd_dense(K, 25)
    f = IncompleteCholesky(gamma=0.5, n_components=25).fit(data)
    np.testing.assert_array_equal(f.pivots_, piv_ref)
    np.testing.assert_allclose(f.G_, G_ref, atol=1e-10)
    # out-of-sample rows equal in-sample ones, also at low rank
    np.testing.assert_allclose(f.transform(data), f.G_, atol=1e-10)
    # pivot columns exact
    np.testing.assert_allclose((f.G_ @ f.G_.T)[:, f.pivots_], K[:, f.pivots_], atol=1e-10)


def test_icd_trace_and_tol(data):
    f = IncompleteCholesky(gamma=0.5, n_components=200, tol=1e-2).fit(data)
    tr = f.residual_trace_
    assert tr[0] == 1.0 and np.all(np.diff(tr) <= 1e-15)
    assert tr[-1] <= 1e-2 < tr[-2]
    assert f.converged_ and f.n_components_ == len(tr) - 1 < 200
    K = _K(data, 0.5)
    np.testing.assert_allclose(np.trace(K - f.G_ @ f.G_.T) / np.trace(K), tr[-1], atol=1e-10)


def test_icd_exact_low_rank_stops():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100, 3))
    f = IncompleteCholesky(kernel="linear", n_components=50).fit(X)
    assert f.n_components_ == 3 and f.converged_


# ---------------------------------------------------------------- exact


def test_exact_eigen_is_optimal(data):
    K = _K(data, 0.5)
    lam = np.linalg.eigvalsh(K)[::-1]
    f = ExactEigen(gamma=0.5, n_components=10).fit(data)
    np.testing.assert_allclose(f.eigenvalues_, lam[:10], rtol=1e-10)
    G = f.transform(data)
    err = np.linalg.norm(K - G @ G.T)
    np.testing.assert_allclose(err, np.sqrt((lam[10:] ** 2).sum()), rtol=1e-8)
    np.testing.assert_allclose(frobenius_error(f.kernel_, data, G), err, rtol=1e-8)


def test_exact_refuses_large_n(data):
    with pytest.raises(ValueError, match="max_samples=100"):
        ExactEigen(n_components=5, max_samples=100).fit(data)


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "est",
    [Nystroem(n_components=5), IncompleteCholesky(n_components=5), ExactEigen(n_components=5)],
)
@pytest.mark.parametrize(
    "X, exc, match",
    [
        (np.array([[1.0, np.nan], [0, 1], [2, 2]] * 3), ValueError, "NaN"),
        (np.array([[1.0, np.inf], [0, 1], [2, 2]] * 3), ValueError, "infinity"),
        (np.arange(10.0), ValueError, "Expected 2D"),
        (np.empty((0, 3)), ValueError, "0 sample"),
        (np.array([["a", "b"]] * 6), ValueError, "numeric|convert"),
    ],
)
def test_bad_X(est, X, exc, match):
    with pytest.raises(exc, match=match):
        est.fit(X)


def test_n_components_too_large(data):
    with pytest.raises(ValueError, match="n_components=500 exceeds n_samples=200"):
        Nystroem(n_components=500).fit(data)
    with pytest.raises(ValueError, match="n_components=201 exceeds"):
        IncompleteCholesky(n_components=201).fit(data)
    with pytest.raises(ValueError, match="n_components must be >= 1"):
        Nystroem(n_components=0).fit(data)


def test_unknown_names(data):
    with pytest.raises(ValueError, match="valid names are 'uniform', 'kmeans', 'column_norm'"):
        Nystroem(n_components=5, landmarks="kmedoids").fit(data)
    with pytest.raises(ValueError, match="unknown kernel 'tanh'; valid names"):
        Nystroem(kernel="tanh", n_components=5).fit(data)


def test_bad_bandwidth(data):
    with pytest.raises(ValueError, match="bandwidth must be > 0"):
        Nystroem(bandwidth=0.0, n_components=5).fit(data)
    with pytest.raises(ValueError, match="bandwidth must be > 0"):
        IncompleteCholesky(bandwidth=-2.0, n_components=5).fit(data)


def test_bad_landmark_arrays(data):
    with pytest.raises(ValueError, match="refers to row 900 but X has 200 rows"):
        Nystroem(landmarks=np.array([1, 900])).fit(data)
    with pytest.raises(ValueError, match="has 3 features, but X has 5 features"):
        Nystroem(landmarks=np.ones((4, 3))).fit(data)
    with pytest.raises(ValueError, match="NaN or inf"):
        Nystroem(landmarks=np.full((4, 5), np.nan)).fit(data)


def test_transform_feature_mismatch(data):
    f = Nystroem(n_components=5, random_state=0).fit(data)
    with pytest.raises(ValueError, match="X has 4 features, but Nystroem is expecting 5"):
        f.transform(data[:, :4])


def test_kernel_object_accepted(data):
    f = Nystroem(kernel=Gaussian(bandwidth="median"), n_components=10, random_state=0).fit(data)
    assert isinstance(f.kernel_.bandwidth, float)


# ---------------------------------------------------------------- normalization paths


def test_cholesky_and_eigen_paths_agree(data):
    from lorak.decompose import nystrom_normalization
    from lorak.kernels import kernel_block, kernel_product

    k = Gaussian(bandwidth=4.0)
    Z = data[:30]
    W = kernel_block(k, Z, Z)
    chol = nystrom_normalization(W)
    eig = nystrom_normalization(W, method="eigh")
    assert chol.upper_triangular and not eig.upper_triangular
    np.testing.assert_array_equal(chol.N, np.triu(chol.N))
    G1 = kernel_product(k, data, Z, chol.N, upper_triangular=True)
    G2 = kernel_product(k, data, Z, eig.N)
    np.testing.assert_allclose(G1 @ G1.T, G2 @ G2.T, atol=1e-10)
    # the in-place triangular product equals the general one, chunked or not
    G3 = kernel_product(k, data, Z, chol.N, budget=2**16)
    np.testing.assert_allclose(G1, G3, atol=1e-12)
    G4 = kernel_product(
        k,
        data.astype(np.float32),
        Z.astype(np.float32),
        chol.N.astype(np.float32),
        upper_triangular=True,
    )
    np.testing.assert_allclose(G4, G1, atol=1e-4)


def test_ill_conditioned_W_falls_back_to_eigen(data):
    X = np.vstack([data[:20], data[:5] + 1e-9])  # near-duplicate landmarks
    f = Nystroem(gamma=0.5, landmarks=np.arange(25)).fit(X)
    assert not f.normalization_is_upper_
    assert f.n_components_ == 20
    f = Nystroem(gamma=0.5, landmarks=np.arange(20)).fit(X)
    assert f.normalization_is_upper_ and f.n_components_ == 20


@pytest.mark.parametrize("block", [1, 3, 32, 500])
def test_icd_columns_computed_ahead_give_the_same_factor(block):
    """Kernel columns computed a block at a time (lookahead): same pivots and factor."""
    from lorak.decompose import incomplete_cholesky

    rng = np.random.default_rng(3)
    X = np.vstack([rng.standard_normal((150, 6)), rng.standard_normal((50, 6)) * 0.1 + 2])
    k = Gaussian(bandwidth=3.0)
    calls = []

    def columns(idx):
        calls.append(len(idx))
        return k(X, X[idx])

    def column(i):
        return k(X, X[i : i + 1]).ravel()

    ref = incomplete_cholesky(k.diag(X), column, 60)
    res = incomplete_cholesky(k.diag(X), column, 60, columns=columns, block=block)
    np.testing.assert_array_equal(res.pivots, ref.pivots)
    np.testing.assert_allclose(res.G, ref.G, atol=1e-10)
    np.testing.assert_allclose(res.residual_trace, ref.residual_trace, atol=1e-10)
    if block > 1:
        assert 1 <= len(calls) <= 60 and max(calls) <= min(block, X.shape[0])
    else:
        assert not calls
    # the estimator uses the lookahead; its factor reproduces K at the pivots
    f = IncompleteCholesky(n_components=40, bandwidth=3.0).fit(X)
    K = rbf_kernel(X, X[f.pivots_], gamma=1 / 3.0)
    np.testing.assert_allclose(f.G_ @ f.G_[f.pivots_].T, K, atol=1e-8)


def test_icd_columns_of_the_wrong_shape_are_named():
    from lorak.decompose import incomplete_cholesky

    X = np.random.default_rng(0).standard_normal((30, 3))
    k = Gaussian(bandwidth=2.0)
    with pytest.raises(ValueError, match=r"columns\(idx\) must return"):
        incomplete_cholesky(
            k.diag(X), lambda i: k(X, X[i : i + 1]).ravel(), 5, columns=lambda idx: k(X, X[:2])
        )


def test_well_conditioned_float32_landmark_kernel_takes_the_cholesky_path():
    """cond(W) ≈ 10³ is far below float32's 1/rtol = 10⁶: no eigen fallback (the earlier
    test, trcon's estimate for L squared, was 10⁴× pessimistic at m = 1000 and sent this
    case down the eigen path)."""
    from scipy.linalg import eigvalsh

    rng = np.random.default_rng(0)
    X = rng.standard_normal((1100, 784)).astype(np.float32)
    f = Nystroem(gamma=1 / 1568, n_components=1000, random_state=0).fit(X)
    W = rbf_kernel(f.components_.astype(np.float64), gamma=1 / 1568)
    lam = eigvalsh(W)
    assert lam[-1] / lam[0] < 1e4
    assert f.normalization_is_upper_ and f.n_components_ == 1000
    N = f.normalization_.astype(np.float64)
    np.testing.assert_allclose(N.T @ W @ N, np.eye(1000), atol=1e-3)

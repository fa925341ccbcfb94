"""k-means landmarks: seeding choices, Lloyd with bounds, dtypes, sparse input."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs
from threadpoolctl import threadpool_limits

import lorak.landmarks._kmeans as km
from _tolerance import assert_labels_agree_off_ties
from conftest import readonly
from lorak.landmarks._kmeans import INIT_METHODS, kmeans_landmarks


@pytest.fixture(autouse=True)
def one_blas_thread():
    """Small products: threads only cost time (a lot on a busy machine)."""
    with threadpool_limits(1):
        yield


INFO_KEYS = {"n_iter", "inertia", "init", "init_seconds", "lloyd_seconds"}


def sq_error(X, C):
    """Σᵢ minⱼ ‖xᵢ − cⱼ‖², the slow obvious way, in float64."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    C = np.asarray(C, dtype=np.float64)
    D = ((X[:, None, :] - C[None, :, :]) ** 2).sum(axis=2)
    return float(D.min(axis=1).sum())


def mixture(n, d, n_components, seed, dtype=np.float64):
    """Overlapping anisotropic Gaussian components (what k-means landmarks meet)."""
    rng = np.random.default_rng(seed)
    comp = rng.integers(n_components, size=n)
    mu = 2.0 * rng.standard_normal((n_components, d))
    A = rng.standard_normal((n_components, 3, d))
    Z = rng.standard_normal((n, 3))
    X = mu[comp] + np.einsum("ij,ijk->ik", Z, A[comp]) + 0.5 * rng.standard_normal((n, d))
    return X.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("init", INIT_METHODS)
def test_shapes_dtypes_and_info(dtype, init):
    X = readonly(mixture(400, 12, 5, seed=0, dtype=dtype))
    C, info = kmeans_landmarks(X, 20, rng=np.random.default_rng(0), init=init)
    assert C.shape == (20, 12)
    assert C.dtype == dtype
    assert isinstance(C, np.ndarray)
    assert INFO_KEYS <= set(info)
    assert "labels" not in info
    assert info["init"] == ("subsample++" if init == "auto" else init)
    assert 1 <= info["n_iter"] <= 10
    assert info["inertia"] == pytest.approx(sq_error(X, C), rel=1e-5)
    assert info["init_seconds"] >= 0 and info["lloyd_seconds"] >= 0


def test_return_labels_match_centres():
    X = mixture(500, 8, 6, seed=1)
    C, info = kmeans_landmarks(X, 15, rng=np.random.default_rng(1), return_labels=True)
    lab = info["labels"]
    assert lab.shape == (500,)
    D = ((X[:, None, :] - C[None]) ** 2).sum(axis=2)
    np.testing.assert_array_equal(lab, D.argmin(axis=1))
    assert info["inertia"] == pytest.approx(((X - C[lab]) ** 2).sum(), rel=1e-10)


@pytest.mark.parametrize("init", INIT_METHODS)
def test_same_seed_same_output_and_seeds_differ(init):
    X = mixture(600, 10, 8, seed=2, dtype=np.float32)
    C1, i1 = kmeans_landmarks(X, 25, rng=np.random.default_rng(7), init=init)
    C2, i2 = kmeans_landmarks(X, 25, rng=np.random.default_rng(7), init=init)
    np.testing.assert_array_equal(C1, C2)
    assert i1["inertia"] == i2["inertia"] and i1["n_iter"] == i2["n_iter"]
    C3, _ = kmeans_landmarks(X, 25, rng=np.random.default_rng(8), init=init)
    assert not np.array_equal(C1, C3)


def test_global_random_state_untouched():
    X = mixture(300, 6, 4, seed=3)
    before = np.random.get_state()[1].copy()  # noqa: NPY002
    kmeans_landmarks(X, 10, rng=np.random.default_rng(0))
    np.testing.assert_array_equal(np.random.get_state()[1], before)  # noqa: NPY002


def test_unknown_init_lists_valid_names():
    X = mixture(100, 4, 3, seed=0)
    with pytest.raises(ValueError, match="unknown init") as e:
        kmeans_landmarks(X, 5, rng=np.random.default_rng(0), init="kmeans++")
    for name in INIT_METHODS:
        assert repr(name) in str(e.value)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sparse_input(dtype):
    rng = np.random.default_rng(4)
    X = sp.random(300, 500, density=0.03, format="csr", dtype=dtype, random_state=rng)
    X.data[:] = np.abs(X.data) + 0.1
    data_before = X.data.copy()
    C, info = kmeans_landmarks(X, 12, rng=np.random.default_rng(0))
    assert isinstance(C, np.ndarray) and C.shape == (12, 500) and C.dtype == dtype
    assert info["inertia"] == pytest.approx(sq_error(X, C), rel=1e-5)
    np.testing.assert_array_equal(X.data, data_before)
    # From the same random rows, sparse and dense Lloyd agree.
    Cs, _ = kmeans_landmarks(X, 12, rng=np.random.default_rng(5), init="random")
    Cd, _ = kmeans_landmarks(X.toarray(), 12, rng=np.random.default_rng(5), init="random")
    np.testing.assert_allclose(Cs, Cd, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("init", INIT_METHODS)
def test_as_many_landmarks_as_rows(init):
    X = mixture(40, 5, 3, seed=5)
    C, info = kmeans_landmarks(X, 40, rng=np.random.default_rng(0), init=init)
    # Every row is its own centre.
    order = np.lexsort(C.T)
    np.testing.assert_array_equal(C[order], X[np.lexsort(X.T)])
    assert info["inertia"] == 0.0


def test_max_iter_zero_returns_rows():
    X = mixture(500, 6, 4, seed=6)
    C, info = kmeans_landmarks(X, 10, rng=np.random.default_rng(0), max_iter=0)
    assert info["n_iter"] == 0
    rows = {tuple(r) for r in X}
    assert all(tuple(c) in rows for c in C)


def test_blobs_are_all_found():
    # 12 well-separated blobs: with k = 12 every blob gets one centre.
    X, y, centres = make_blobs(
        n_samples=3000,
        n_features=10,
        centers=12,
        cluster_std=1.0,
        center_box=(-60, 60),
        random_state=0,
        return_centers=True,
    )
    true = sum(((X[y == j] - X[y == j].mean(axis=0)) ** 2).sum() for j in range(12))
    for seed in range(3):
        C, info = kmeans_landmarks(X, 12, rng=np.random.default_rng(seed))
        assert info["inertia"] == pytest.approx(true, rel=1e-6)
        nearest = ((centres[:, None] - C[None]) ** 2).sum(axis=2).argmin(axis=1)
        assert len(set(nearest)) == 12


def test_quality_close_to_sklearn():
    X = mixture(4000, 30, 25, seed=7)
    k = 80
    ours = np.mean(
        [kmeans_landmarks(X, k, rng=np.random.default_rng(s))[1]["inertia"] for s in range(3)]
    )
    ref = np.mean(
        [
            KMeans(k, init="k-means++", n_init=1, max_iter=10, random_state=s).fit(X).inertia_
            for s in range(3)
        ]
    )
    assert ours <= 1.03 * ref


def test_subsample_plus_plus_beats_random_seeding():
    X = mixture(3000, 20, 40, seed=8)
    q = {
        init: kmeans_landmarks(X, 60, rng=np.random.default_rng(0), init=init, max_iter=0)[1][
            "inertia"
        ]
        for init in ("random", "subsample++", "k-means++")
    }
    assert q["subsample++"] < q["random"]
    assert q["k-means++"] < q["random"]


def test_init_sample_is_used_and_clipped():
    X = mixture(3000, 6, 5, seed=9)
    _, info = kmeans_landmarks(X, 30, rng=np.random.default_rng(0), init="subsample++")
    assert info["init_sample"] == 2000  # max(2000, 10 k), below n
    _, info = kmeans_landmarks(
        X, 30, rng=np.random.default_rng(0), init="subsample++", init_sample=10
    )
    assert info["init_sample"] == 30  # at least k
    _, info = kmeans_landmarks(
        X, 30, rng=np.random.default_rng(0), init="subsample++", init_sample=10**6
    )
    assert info["init_sample"] == 3000


def _assert_same_labels_off_ties(X, C, got, want):
    """The pruned pass reassigns only the rows its bounds doubt, as a gathered block:
    other GEMM shapes, rounded otherwise by some BLAS kernels. Its labels agree with the
    plain pass's wherever a row's two nearest centres are clear of a tie (10⁻⁵ of the
    largest squared distance: float32 round-off of the distances, with room)."""
    Xd = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
    C = np.asarray(C, dtype=np.float64)
    D = (Xd**2).sum(axis=1)[:, None] - 2 * Xd @ C.T + (C**2).sum(axis=1)  # in float64
    assert_labels_agree_off_ties(got, want, -D, 1e-5 * D.max())


@pytest.mark.parametrize("kind", ["float32", "float64", "sparse"])
def test_pruned_lloyd_matches_plain_lloyd(kind):
    # Enough centres and rows for the bounds to settle rows (k >= 32).
    X = mixture(4000, 16, 30, seed=10, dtype=np.float64 if kind == "float64" else np.float32)
    if kind == "sparse":
        X[np.abs(X) < 1.0] = 0.0
        X = sp.csr_matrix(X)
    res = {}
    for prune in (False, True):
        res[prune] = kmeans_landmarks(
            X, 100, rng=np.random.default_rng(3), init="random", return_labels=True, prune=prune
        )
    (Cp, ip), (Cq, iq) = res[True], res[False]
    assert ip["skipped"] > 0.2 and iq["skipped"] == 0.0
    assert ip["n_iter"] == iq["n_iter"]
    _assert_same_labels_off_ties(X, Cq, ip["labels"], iq["labels"])
    np.testing.assert_allclose(Cp, Cq, rtol=1e-6, atol=1e-6)


def test_lloyd_matches_sklearn_from_same_seeds():
    X = mixture(2000, 12, 10, seed=11)
    C0, _ = kmeans_landmarks(X, 40, rng=np.random.default_rng(0), max_iter=0)
    C, info = kmeans_landmarks(X, 40, rng=np.random.default_rng(0), max_iter=10)
    sk = KMeans(40, init=C0, n_init=1, max_iter=10, algorithm="lloyd", tol=0.0).fit(X)
    assert info["n_iter"] == sk.n_iter_
    np.testing.assert_allclose(C, sk.cluster_centers_, rtol=1e-8, atol=1e-8)


def test_float64_blockwise_products_read_only(monkeypatch):
    # Large float64 data is multiplied in float32 block by block; nothing is written.
    monkeypatch.setattr(km, "_CONVERT_ONCE_ENTRIES", 0)
    X = readonly(mixture(3000, 20, 12, seed=12))
    C, info = kmeans_landmarks(X, 50, rng=np.random.default_rng(0))
    C64, info64 = kmeans_landmarks(X, 50, rng=np.random.default_rng(0), compute_dtype=np.float64)
    assert C.dtype == np.float64
    assert info["inertia"] == pytest.approx(info64["inertia"], rel=1e-6)


def test_large_offset_costs_no_precision():
    X = mixture(2000, 10, 8, seed=13, dtype=np.float32)
    _, a = kmeans_landmarks(X, 30, rng=np.random.default_rng(0))
    _, b = kmeans_landmarks(X + np.float32(1e4), 30, rng=np.random.default_rng(0))
    assert b["inertia"] == pytest.approx(a["inertia"], rel=1e-2)


def test_duplicate_rows_and_empty_clusters():
    # 6 distinct points, 10 centres: clusters go empty and are relocated.
    rng = np.random.default_rng(0)
    X = np.repeat(rng.standard_normal((6, 3)), 20, axis=0)
    for init in INIT_METHODS:
        C, info = kmeans_landmarks(X, 10, rng=np.random.default_rng(1), init=init)
        assert np.all(np.isfinite(C))
        assert info["inertia"] == pytest.approx(0.0, abs=1e-9)


def test_empty_clusters_on_dask_as_in_memory():
    """The one empty-cluster rule: on dask chunks (an extra pass finds the farthest
    rows) the clusters empty and are refilled as in memory, to the same centres."""
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(3)
    X = np.concatenate(
        [np.repeat(rng.standard_normal((30, 4)), 100, axis=0), 4 * rng.standard_normal((100, 4))]
    )
    for k in (45, 60):
        ref, iref = kmeans_landmarks(X, k, rng=np.random.default_rng(0), init="random")
        got, info = km.lazy_kmeans_landmarks(
            da.from_array(X, chunks=(500, 4)), k, rng=np.random.default_rng(0), init="random"
        )
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
        assert info["inertia"] == pytest.approx(iref["inertia"], rel=1e-12)


def test_constant_data():
    X = np.ones((10, 4))
    C, info = kmeans_landmarks(X, 5, rng=np.random.default_rng(0))
    np.testing.assert_array_equal(C, np.ones((5, 4)))
    assert info["inertia"] == 0.0


def test_tol_stops_early():
    X, _ = make_blobs(n_samples=2000, n_features=5, centers=20, random_state=1)
    _, info = kmeans_landmarks(X, 20, rng=np.random.default_rng(0), tol=1e-2, max_iter=50)
    assert info["n_iter"] < 50


# ---------------------------------------------------------------- Lloyd on a sample


def test_lloyd_sample_is_kmeans_on_the_drawn_rows():
    X = mixture(3000, 5, 8, seed=3)
    C, info = kmeans_landmarks(X, 20, rng=np.random.default_rng(7), lloyd_sample=500)
    rng = np.random.default_rng(7)
    rows = np.sort(rng.choice(3000, 500, replace=False))
    ref, _ = kmeans_landmarks(X[rows], 20, rng=rng, lloyd_sample=None)
    np.testing.assert_array_equal(C, ref)
    np.testing.assert_array_equal(info["lloyd_rows"], rows)
    # the sampled centres still quantize all rows about as well
    full, _ = kmeans_landmarks(X, 20, rng=np.random.default_rng(7), lloyd_sample=None)
    assert sq_error(X, C) < 1.1 * sq_error(X, full)


def test_lloyd_sample_auto_keeps_every_row_up_to_its_threshold():
    assert km.default_lloyd_sample(km.LLOYD_MIN_ROWS, 10) == km.LLOYD_MIN_ROWS
    assert km.default_lloyd_sample(10**7, 10) == km.LLOYD_MIN_ROWS
    assert km.default_lloyd_sample(10**7, 2000) == 2000 * km.LLOYD_ROWS_PER_CENTER
    X = mixture(800, 4, 5, seed=1)
    a, ia = kmeans_landmarks(X, 10, rng=np.random.default_rng(0))
    b, _ = kmeans_landmarks(X, 10, rng=np.random.default_rng(0), lloyd_sample=None)
    np.testing.assert_array_equal(a, b)
    assert ia["lloyd_rows"] is None


def test_lloyd_sample_same_centres_on_dask():
    da = pytest.importorskip("dask.array")
    X = mixture(2600, 4, 6, seed=2)
    ref, _ = kmeans_landmarks(X, 12, rng=np.random.default_rng(3), lloyd_sample=700)
    got, info = km.lazy_kmeans_landmarks(
        da.from_array(X, chunks=(333, 4)), 12, rng=np.random.default_rng(3), lloyd_sample=700
    )
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
    assert info["lloyd_rows"].size == 700


@pytest.mark.parametrize("bad", ["all", 3, 2.5, True])
def test_lloyd_sample_bad_values(bad):
    with pytest.raises(ValueError, match="lloyd_sample"):
        kmeans_landmarks(
            mixture(100, 3, 2, seed=0), 5, rng=np.random.default_rng(0), lloyd_sample=bad
        )


# ------------------------------------------------ public options: given centres, knobs


def test_default_init_sample_is_exported_and_is_the_subsample_used():
    from lorak.landmarks import default_init_sample

    assert default_init_sample(3000, 30) == 2000
    assert default_init_sample(10**6, 1000) == 10_000
    assert default_init_sample(500, 30) == 500
    X = mixture(3000, 6, 5, seed=9)
    _, info = kmeans_landmarks(X, 300, rng=np.random.default_rng(0), max_iter=0)
    assert info["init_sample"] == default_init_sample(3000, 300) == 3000


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_given_centres_run_lloyd_from_them_as_sklearn(dtype):
    X = mixture(2000, 12, 10, seed=14, dtype=dtype)
    C0 = readonly(X[np.random.default_rng(1).choice(2000, 40, replace=False)])
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    C, info = kmeans_landmarks(X, 40, rng=rng, init=C0, lloyd_sample=None, return_labels=True)
    assert rng.bit_generator.state == state  # no random draw for the seeding
    assert info["init"] == "given" and info["init_sample"] is None
    assert C.dtype == dtype
    sk = KMeans(40, init=C0.astype(dtype), n_init=1, max_iter=10, algorithm="lloyd", tol=0.0)
    sk.fit(X)
    assert info["inertia"] == pytest.approx(sk.inertia_, rel=1e-4)
    if dtype == np.float64:  # float32 sums may settle a near tie the other way
        assert info["n_iter"] == sk.n_iter_
        np.testing.assert_allclose(C, sk.cluster_centers_, rtol=1e-8, atol=1e-8)
        np.testing.assert_array_equal(info["labels"], sk.labels_)
    C00, info0 = kmeans_landmarks(X, 40, rng=rng, init=C0, max_iter=0)
    np.testing.assert_array_equal(C00, C0.astype(dtype))
    assert info0["n_iter"] == 0


def test_given_centres_on_sparse_data_and_as_a_list():
    rng = np.random.default_rng(4)
    X = sp.random(300, 40, density=0.1, format="csr", random_state=rng)
    C0 = X[:12].toarray()
    Cs, _ = kmeans_landmarks(X, 12, rng=rng, init=sp.csr_matrix(C0))
    Cl, _ = kmeans_landmarks(X.toarray(), 12, rng=rng, init=C0.tolist())
    np.testing.assert_allclose(Cs, Cl, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize(
    ("init", "match"),
    [
        (np.zeros((4, 3)), r"init must have shape \(n_landmarks, n_features\) = \(5, 3\)"),
        (np.zeros((5, 2)), r"init must have shape"),
        (np.full((5, 3), np.nan), "init contains NaN"),
        (np.array([["a"] * 3] * 5), "init as an array must hold numbers"),
        (np.zeros(3), "unknown init"),
        (None, "unknown init"),
        ([[0.0, 1.0], [2.0]], "unknown init"),
    ],
)
def test_bad_given_centres(init, match):
    with pytest.raises(ValueError, match=match):
        kmeans_landmarks(mixture(100, 3, 2, seed=0), 5, rng=np.random.default_rng(0), init=init)


def test_options_reach_the_seeding_and_lloyd():
    X = mixture(3000, 300, 12, seed=15, dtype=np.float32)
    X64 = X.astype(np.float64)

    def run(data=X, **kw):
        return kmeans_landmarks(data, 40, rng=np.random.default_rng(2), **kw)

    seeds, _ = run(max_iter=0)
    # the seeding's sketch (d = 300 > 2 · 64) and its number of candidates
    assert not np.array_equal(run(max_iter=0, sketch=None)[0], seeds)
    assert not np.array_equal(run(max_iter=0, n_trials=1)[0], seeds)
    np.testing.assert_array_equal(run(max_iter=0, sketch=64, n_trials=None)[0], seeds)
    # pruning changes the time only; float64 products the rounding only
    (C, i), (Cn, i_n) = run(return_labels=True), run(return_labels=True, prune=False)
    assert i["skipped"] > 0.0 and i_n["skipped"] == 0.0
    _assert_same_labels_off_ties(X, Cn, i["labels"], i_n["labels"])
    np.testing.assert_allclose(C, Cn, rtol=1e-5, atol=1e-5)
    _, a = run(X64)
    _, b = run(X64, compute_dtype=np.float64)
    assert b["inertia"] == pytest.approx(a["inertia"], rel=1e-6)


@pytest.mark.parametrize(
    ("name", "bad"),
    [
        ("n_trials", 0),
        ("n_trials", 2.5),
        ("sketch", 0),
        ("sketch", True),
        ("prune", "yes"),
        ("compute_dtype", np.float16),
        ("compute_dtype", "int64"),
        ("compute_dtype", "no such dtype"),
    ],
)
def test_bad_options_name_the_parameter(name, bad):
    with pytest.raises(ValueError, match=name):
        kmeans_landmarks(mixture(100, 3, 2, seed=0), 5, rng=np.random.default_rng(0), **{name: bad})


def test_sparse_rows_as_columns_is_the_densified_transpose():
    """The seeding's operand written from the nonzeros equals the rows densified and
    transposed, for repeated indices and a CSR with duplicate, unsorted entries."""
    from lorak.landmarks._kmeans import _sparse_rows_as_columns

    data = np.array([1.0, 2.0, 3.0, -4.0, 5.0, 0.5])
    indices = np.array([3, 0, 3, 1, 2, 2])  # row 0: column 3 twice, unsorted
    S = sp.csr_matrix((data, indices, np.array([0, 3, 4, 6])), shape=(3, 5))
    assert not S.has_canonical_format
    idx = np.array([2, 0, 0, 1])
    want = S[idx].toarray().T
    got = _sparse_rows_as_columns(S, idx)
    np.testing.assert_array_equal(got, want)
    assert got.flags.c_contiguous and got.dtype == S.dtype
    np.testing.assert_array_equal(S.data, data)  # the input is not modified

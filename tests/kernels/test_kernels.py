import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import laplacian_kernel, polynomial_kernel, rbf_kernel

from _naive import (
    gaussian_dense,
    inverse_distance_dense,
    laplacian_dense,
    mean_pairwise_sq_dist,
)
from _tolerance import assert_same_to_roundoff
from conftest import readonly
from lorak import config_context
from lorak.kernels import (
    BANDWIDTH_RULES,
    Gaussian,
    InverseDistance,
    Laplacian,
    Linear,
    Polynomial,
    bandwidth_scale,
    iter_kernel_blocks,
    kernel_block,
    kernel_product,
    make_kernel,
)


@pytest.fixture
def XZ(rng):
    return rng.standard_normal((120, 6)), rng.standard_normal((17, 6))


def test_gaussian_papers_form_and_gamma(XZ):
    X, Z = XZ
    np.testing.assert_allclose(Gaussian(bandwidth=2.5)(X, Z), gaussian_dense(X, Z, 2.5), atol=1e-13)
    np.testing.assert_allclose(Gaussian(gamma=0.3)(X, Z), rbf_kernel(X, Z, gamma=0.3), atol=1e-13)


def test_laplacian_inverse_distance_polynomial_linear(XZ):
    X, Z = XZ
    np.testing.assert_allclose(
        Laplacian(bandwidth=1.7)(X, Z), laplacian_dense(X, Z, 1.7), atol=1e-12
    )
    np.testing.assert_allclose(
        Laplacian(gamma=0.2, norm="l1")(X, Z), laplacian_kernel(X, Z, gamma=0.2), atol=1e-13
    )
    np.testing.assert_allclose(
        InverseDistance(bandwidth=2.0, eps=0.5)(X, Z),
        inverse_distance_dense(X, Z, 2.0, 0.5),
        atol=1e-12,
    )
    np.testing.assert_allclose(
        Polynomial(degree=3, gamma=0.1, coef0=2.0)(X, Z),
        polynomial_kernel(X, Z, degree=3, gamma=0.1, coef0=2.0),
        rtol=1e-12,
    )
    np.testing.assert_allclose(Linear()(X, Z), X @ Z.T, atol=1e-12)


@pytest.mark.parametrize(
    "kernel",
    [
        Gaussian(bandwidth=3.0),
        Laplacian(bandwidth=2.0),
        InverseDistance(bandwidth=1.0),
        Polynomial(degree=2, gamma=0.5),
        Linear(),
    ],
)
def test_diag_matches_block(kernel, XZ):
    X, _ = XZ
    np.testing.assert_allclose(kernel.diag(X), np.diag(kernel(X)), atol=1e-12)


def test_callable_block_and_pairwise(XZ):
    X, Z = XZ
    k_block = make_kernel(lambda A, B: A @ B.T)
    np.testing.assert_allclose(k_block(X, Z), X @ Z.T)
    k_pair = make_kernel(lambda a, b: float(np.dot(a, b)))
    np.testing.assert_allclose(k_pair(X[:10], Z), X[:10] @ Z.T)
    np.testing.assert_allclose(k_pair.diag(X[:10]), (X[:10] ** 2).sum(1))


def test_callable_bad_shape_or_nan(XZ):
    X, Z = XZ
    with pytest.raises(ValueError, match="returned shape"):
        make_kernel(lambda A, B: np.ones((2, 2)))(X, Z)
    with pytest.raises(ValueError, match="NaN"):
        make_kernel(lambda A, B: np.full((A.shape[0], B.shape[0]), np.nan))(X, Z)


def test_bandwidth_rules(rng):
    X = rng.standard_normal((300, 4)) * [1, 2, 3, 4] + 5
    b0 = bandwidth_scale("mean_pairwise", X)
    np.testing.assert_allclose(b0, mean_pairwise_sq_dist(X), rtol=1e-10)
    c = bandwidth_scale("mean_to_centroid", X)
    np.testing.assert_allclose(c, ((X - X.mean(0)) ** 2).sum(1).mean(), rtol=1e-10)
    med = bandwidth_scale("median", X, np.random.default_rng(0))
    d = ((X[:, None] - X[None]) ** 2).sum(-1)[np.triu_indices(300, 1)]
    np.testing.assert_allclose(med, np.median(d), rtol=1e-10)  # n <= sample size: exact
    assert Gaussian().resolve(X).bandwidth == pytest.approx(b0)
    assert Laplacian(bandwidth="mean_to_centroid").resolve(X).bandwidth == pytest.approx(np.sqrt(c))


def test_bandwidth_rules_sparse_equal_dense(rng):
    X = sp.random(200, 50, density=0.1, random_state=0, format="csr")
    for rule in ("mean_pairwise", "mean_to_centroid"):
        assert bandwidth_scale(rule, X) == pytest.approx(bandwidth_scale(rule, X.toarray()))


def test_bandwidth_rule_errors(rng):
    with pytest.raises(ValueError, match="valid rules are 'mean_pairwise'"):
        Gaussian(bandwidth="silverman")
    with pytest.raises(ValueError, match="all rows identical"):
        Gaussian().resolve(np.ones((5, 3)))
    with pytest.raises(ValueError, match="bandwidth must be > 0"):
        Gaussian(bandwidth=0.0)
    with pytest.raises(ValueError, match="gamma must be > 0"):
        Gaussian(gamma=-1.0)
    with pytest.raises(ValueError, match="either bandwidth or gamma"):
        Gaussian(bandwidth=1.0, gamma=1.0)
    with pytest.raises(RuntimeError, match="resolve"):
        Gaussian()(rng.standard_normal((3, 2)))


def test_make_kernel_errors():
    with pytest.raises(ValueError, match="valid names are 'gaussian', 'rbf'"):
        make_kernel("tanh")
    with pytest.raises(ValueError, match="does not take degree"):
        make_kernel("rbf", degree=3)
    with pytest.raises(ValueError, match="set its parameters on the object"):
        make_kernel(Gaussian(bandwidth=1.0), gamma=2.0)
    assert make_kernel("poly", degree=2) == Polynomial(degree=2)
    assert make_kernel("rbf", kernel_params={"bandwidth": 2.0}) == Gaussian(bandwidth=2.0)


@pytest.mark.parametrize("kernel", [Gaussian(bandwidth=3.0), Laplacian(bandwidth=2.0), Linear()])
def test_sparse_equals_dense(kernel, rng):
    X = sp.random(80, 30, density=0.2, random_state=1, format="csr")
    Z = rng.standard_normal((7, 30))
    np.testing.assert_allclose(kernel(X, Z), kernel(X.toarray(), Z), atol=1e-12)
    np.testing.assert_allclose(kernel(X, X[:5]), kernel(X.toarray(), X[:5].toarray()), atol=1e-12)
    np.testing.assert_allclose(kernel.diag(X), kernel.diag(X.toarray()), atol=1e-12)


def test_float32_stays_float32(XZ):
    X, Z = XZ
    X32, Z32 = X.astype(np.float32), Z.astype(np.float32)
    for k in (Gaussian(bandwidth=3.0), Laplacian(bandwidth=2.0), Linear(), Polynomial(gamma=0.1)):
        K = k(X32, Z32)
        assert K.dtype == np.float32
        assert k.diag(X32).dtype == np.float32
        np.testing.assert_allclose(K, k(X, Z), rtol=2e-5, atol=2e-6)
    assert Gaussian(bandwidth=3.0)(X32, Z).dtype == np.float64  # mixed → float64


def test_chunking_does_not_change_result(rng):
    X = rng.standard_normal((1000, 5))
    Z = rng.standard_normal((50, 5))
    k = Gaussian(bandwidth=4.0)
    full = k(X, Z)
    with config_context(memory_budget=2**16):  # 163 rows per chunk
        # other GEMM shapes than the one 1000-row block: equal to round-off (a BLAS
        # may round another row blocking otherwise), not bit for bit
        assert_same_to_roundoff(k(X, Z), full)
        starts = [s for s, _, _ in iter_kernel_blocks(k, X, Z)]
        assert len(starts) > 5
    R = rng.standard_normal((50, 3))
    np.testing.assert_allclose(kernel_product(k, X, Z, R, budget=2**16), full @ R, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_triangular_product_in_one_pass_or_in_chunks(rng, dtype):
    """k(X, Z) R with R upper triangular: the in-place one-pass route (Gaussian, dense X
    in the output's dtype) and the chunked route (other kernels, centred or converted
    rows) give the same product, which is the dense block times R."""
    from lorak.kernels import _blocks

    X = rng.standard_normal((900, 6)).astype(dtype)
    Z = X[:40]
    R = np.triu(rng.standard_normal((40, 40))) + 5 * np.eye(40)
    k = Gaussian(bandwidth=6.0).resolve(X)
    full = k(X, Z).astype(np.float64) @ R
    tol = 1e-12 if dtype == np.float64 else 2e-5
    scale = np.abs(full).max()
    dtype_, _, aux = _blocks._prepare(k, X, Z)
    assert k._block_in_place(X, aux, dtype_)
    one = kernel_product(k, X, Z, R, upper_triangular=True, budget=2**12)
    np.testing.assert_allclose(one, full, atol=tol * scale)
    # a Laplacian block is not written in place: chunked under the same small budget
    lap = Laplacian(bandwidth=6.0)
    _, _, aux_l = _blocks._prepare(lap, X, Z)
    assert not lap._block_in_place(X, aux_l, dtype_)
    chunked = kernel_product(lap, X, Z, R, upper_triangular=True, budget=2**12)
    np.testing.assert_allclose(chunked, lap(X, Z).astype(np.float64) @ R, atol=tol * scale)
    # no rows: an empty product, on either route
    assert kernel_product(k, X[:0], Z, R, upper_triangular=True).shape == (0, 40)
    # int rows are converted chunk by chunk: not in place
    Xi = np.rint(X * 3).astype(np.int64)
    ki = Gaussian(bandwidth=6.0).resolve(Xi)
    dti, _, aux_i = _blocks._prepare(ki, Xi, Xi[:40])
    assert not ki._block_in_place(Xi, aux_i, dti)


def test_large_block_threaded_path_matches_reference(rng):
    # > 1M entries takes the threaded, tiled elementwise path
    X = rng.standard_normal((3000, 8))
    Z = rng.standard_normal((400, 8))
    np.testing.assert_allclose(
        Gaussian(bandwidth=5.0)(X, Z), rbf_kernel(X, Z, gamma=0.2), atol=1e-13
    )


def test_self_distance_round_off_clipped(rng):
    X = rng.standard_normal((50, 3)) * 1e4
    K = Gaussian(bandwidth=1.0)(X, X)
    assert np.all(K <= 1.0)  # round-off never pushes a squared distance below 0
    # ‖x‖² ~ 3e8 here: the expansion ‖x‖² + ‖z‖² − 2xz loses ~1e-7 absolute
    np.testing.assert_allclose(np.diag(K), 1.0, atol=1e-6)


def test_inputs_not_modified(XZ):
    X, Z = (readonly(a) for a in XZ)
    X0 = X.copy()
    Gaussian(bandwidth=1.0)(X, Z)
    kernel_product(Gaussian(bandwidth=1.0), X, Z, np.ones((Z.shape[0], 2)))
    np.testing.assert_array_equal(X, X0)


def test_kernel_block_out_checked(XZ):
    X, Z = XZ
    with pytest.raises(ValueError, match=r"out must have shape \(120, 17\)"):
        kernel_block(Gaussian(bandwidth=1.0), X, Z, out=np.empty((3, 3)))


def test_registry_names_complete():
    assert set(BANDWIDTH_RULES) == {"mean_pairwise", "mean_to_centroid", "median"}


# ---------------------------------------------------------------- kernel banks


def test_bank_gaussian_relative_and_blocks(rng):
    from lorak.kernels import KernelBank

    X = rng.standard_normal((300, 4))
    Z = rng.standard_normal((20, 4))
    bank = KernelBank.gaussian()
    assert len(bank) == 9 and not bank.is_resolved
    with pytest.raises(RuntimeError, match="resolve"):
        bank.blocks(X, Z)
    rb = bank.resolve(X)
    b0 = mean_pairwise_sq_dist(X)
    np.testing.assert_allclose([k.bandwidth for k in rb], b0 * 2.0 ** np.arange(-4, 5))
    with config_context(memory_budget=2**16):
        blocks = rb.blocks(X, Z)
    for k, B in zip(rb, blocks, strict=True):
        np.testing.assert_allclose(B, gaussian_dense(X, Z, k.bandwidth), atol=1e-12)


def test_bank_mixed_and_sigmas(rng):
    from lorak.kernels import KernelBank

    X = rng.standard_normal((40, 3))
    bank = KernelBank(["linear", Gaussian(bandwidth=2.0)])
    B = bank.blocks(X, X[:5])
    np.testing.assert_allclose(B[0], X @ X[:5].T)
    np.testing.assert_allclose(B[1], gaussian_dense(X, X[:5], 2.0), atol=1e-12)
    s = KernelBank.gaussian_sigmas([1.0, 10.0])
    assert [k.bandwidth for k in s] == [2.0, 200.0]
    assert [d.shape for d in bank.diag(X)] == [(40,), (40,)]


def test_bank_errors():
    from lorak.kernels import KernelBank

    with pytest.raises(ValueError, match="at least one kernel"):
        KernelBank([])
    with pytest.raises(ValueError, match="at least one kernel"):
        KernelBank.gaussian(factors=[])
    with pytest.raises(ValueError, match="positive"):
        KernelBank.gaussian(factors=[1.0, -2.0])
    with pytest.raises(ValueError, match="either bandwidths or factors"):
        KernelBank.gaussian(factors=[1.0], bandwidths=[1.0])
    with pytest.raises(ValueError, match="unknown kernel"):
        KernelBank(["nope"])


def test_kernel_objects_survive_sklearn_clone():
    from sklearn.base import clone

    from lorak import Nystroem
    from lorak.kernels import KernelBank

    est = Nystroem(kernel=Gaussian(bandwidth="median"), n_components=5)
    c = clone(est)
    assert c.kernel == est.kernel and c.kernel is not None
    bank = KernelBank.gaussian(factors=[0.5, 2.0])
    assert repr(clone(bank, safe=False)) == repr(bank)


def test_squared_distances_that_overflow_are_a_clear_error():
    """X·1e300: ‖x − z‖²·γ overflows float64. The kernel of such data is 0 between any
    two distinct rows, and a Nyström factor of it was 0 on every row but the landmarks
    (diag(G Gᵀ) = 0 where k(x, x) = 1) without a word: now an error naming the overflow
    (issue 30, item 10)."""
    import lorak

    X = np.random.default_rng(0).standard_normal((60, 5))
    with pytest.raises(ValueError, match="squared distances between rows overflow float64"):
        lorak.Nystroem(n_components=20, random_state=0).fit_transform(X * 1e300)
    with pytest.raises(ValueError, match=r"overflow.*[Rr]escale"):
        Gaussian(gamma=0.2)(X * 1e300, X[:7] * 1e300)
    for k in (Laplacian(bandwidth=1.0), InverseDistance(bandwidth=1.0)):
        with pytest.raises(ValueError, match="overflow"):
            k(X * 1e300)
    # a bandwidth at the data's scale evaluates the same rows without overflow
    k = Gaussian(bandwidth=1e300)  # b = 1e300 for distances of about 1e150
    B = k(X * 1e150)
    np.testing.assert_allclose(
        B, np.exp(-((X[:, None] - X[None]) ** 2).sum(-1)), rtol=1e-10, atol=1e-300
    )
    # NaN is still reported as NaN, not as an overflow
    Xn = X * 1e300
    Xn[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity"):
        Gaussian(gamma=0.2)(Xn, X[:7] * 1e300)

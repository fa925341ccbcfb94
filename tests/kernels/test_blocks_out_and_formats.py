"""kernel_product's and kernel_block's ``out`` checked before anything is written into
it, and sparse rows of every SciPy format read by the kernels' public entry points
(issue 47, cause 7)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from _tolerance import assert_same_to_roundoff
from lorak.kernels import (
    Gaussian,
    KernelBank,
    Linear,
    iter_kernel_blocks,
    kernel_block,
    kernel_product,
    make_kernel,
)

SENTINEL = -12345.0


@pytest.fixture
def XZR():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 4))
    Z = rng.standard_normal((9, 4))
    R = rng.standard_normal((9, 3))
    return X, Z, R


def _k():
    return Gaussian(bandwidth=2.0)


# ------------------------------------------------------------------ out


@pytest.mark.parametrize("triangular", [False, True])
@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda n, r: np.full((n - 1, r), SENTINEL), r"out must have shape \(60, \d\)"),
        (lambda n, r: np.full((n + 1, r), SENTINEL), r"out must have shape \(60, \d\)"),
        (lambda n, r: np.full((n, r), SENTINEL, dtype=np.float32), "out must have .*dtype"),
        (lambda n, r: np.full((n, r + 1), SENTINEL), r"out must have shape"),
    ],
    ids=["fewer-rows", "more-rows", "float32", "more-columns"],
)
def test_a_wrong_out_is_refused_before_a_chunk_is_written(XZR, make, match, triangular):
    """The first chunks went into a short ``out`` before the shape error, and a long
    one was filled but for its last rows, silently."""
    X, Z, R = XZR
    if triangular:
        R = np.triu(np.random.default_rng(1).standard_normal((9, 9))) + 3 * np.eye(9)
    out = make(X.shape[0], R.shape[1])
    before = out.copy()
    with pytest.raises(ValueError, match=match):
        kernel_product(_k(), X, Z, R, out=out, budget=800, upper_triangular=triangular)
    np.testing.assert_array_equal(out, before)  # nothing written


def test_a_read_only_out_is_refused_by_name(XZR):
    X, Z, R = XZR
    out = np.zeros((60, 3))
    out.flags.writeable = False
    with pytest.raises(ValueError, match="out is read-only"):
        kernel_product(_k(), X, Z, R, out=out)
    block = np.zeros((60, 9))
    block.flags.writeable = False
    with pytest.raises(ValueError, match="out is read-only"):
        kernel_block(_k(), X, Z, out=block)


def test_out_must_be_a_numpy_array(XZR):
    X, Z, R = XZR
    with pytest.raises(TypeError, match="out must be a NumPy array"):
        kernel_product(_k(), X, Z, R, out=np.zeros((60, 3)).tolist())


def test_a_strided_out_is_written_by_the_plain_product_and_refused_by_trmm(XZR):
    X, Z, R = XZR
    want = _k()(X, Z) @ R
    wide = np.full((60, 6), SENTINEL)
    got = kernel_product(_k(), X, Z, R, out=wide[:, ::2], budget=800)
    assert_same_to_roundoff(got, want)
    assert_same_to_roundoff(wide[:, ::2], want)
    assert np.all(wide[:, 1::2] == SENTINEL)  # the columns between: untouched
    T = np.triu(np.random.default_rng(1).standard_normal((9, 9))) + 3 * np.eye(9)
    wide = np.full((60, 18), SENTINEL)
    with pytest.raises(ValueError, match="out must be C-contiguous"):
        kernel_product(_k(), X, Z, T, out=wide[:, ::2], upper_triangular=True)
    assert np.all(wide == SENTINEL)
    with pytest.raises(ValueError, match="out must be C-contiguous"):
        kernel_block(_k(), X, Z, out=np.zeros((60, 18))[:, ::2])


def test_an_out_that_shares_memory_with_an_input_is_refused(XZR):
    """out = R with as many rows of X as of Z: the first chunk overwrote R, which the
    later chunks then read (a silently wrong product)."""
    X, Z, R = XZR
    Zs = X[:9].copy()
    Rs = np.random.default_rng(2).standard_normal((9, 4))
    R0 = Rs.copy()
    with pytest.raises(ValueError, match="out shares memory with R"):
        kernel_product(_k(), Zs, Zs, Rs, out=Rs, budget=200)
    np.testing.assert_array_equal(Rs, R0)
    with pytest.raises(ValueError, match="out shares memory with X"):
        kernel_product(_k(), Zs, Z, R[:, :2].copy() @ np.ones((2, 4)), out=Zs)
    with pytest.raises(ValueError, match="out shares memory with Z"):
        kernel_product(_k(), X[:9], Zs, np.ones((9, 4)), out=Zs)
    with pytest.raises(ValueError, match="out shares memory with X"):
        kernel_block(_k(), Zs[:, :4], Zs[:4], out=Zs[:9, :4])
    S = sp.csr_matrix(X[:9])
    with pytest.raises(ValueError, match="out shares memory with X"):
        kernel_product(Linear(), S, Z, np.ones((9, 1)), out=S.data[:9, None])
    # separate arrays, the same values: fine
    got = kernel_product(_k(), Zs, Zs, Rs, out=np.empty((9, 4)), budget=200)
    assert_same_to_roundoff(got, _k()(Zs, Zs) @ R0)


def test_a_right_out_is_filled_and_returned(XZR):
    X, Z, R = XZR
    out = np.full((60, 3), SENTINEL)
    assert kernel_product(_k(), X, Z, R, out=out, budget=800) is out
    assert_same_to_roundoff(out, _k()(X, Z) @ R)


# ------------------------------------------------------------------ sparse formats

FORMATS = [
    "coo_matrix",
    "csc_matrix",
    "dok_matrix",
    "lil_matrix",
    "bsr_matrix",
    "dia_matrix",
    "coo_array",
    "csc_array",
    "bsr_array",
]


@pytest.mark.parametrize("fmt", FORMATS)
def test_sparse_rows_of_every_format_give_the_csr_results(fmt):
    """COO rows gave "'coo_matrix' object is not subscriptable" (BSR:
    NotImplementedError); every format is now read as CSR, the input untouched."""
    rng = np.random.default_rng(3)
    Xd = np.where(rng.random((70, 5)) < 0.4, rng.standard_normal((70, 5)), 0.0)
    Z = rng.standard_normal((8, 5))
    R = rng.standard_normal((8, 2))
    T = np.triu(rng.standard_normal((8, 8))) + 3 * np.eye(8)
    X = getattr(sp, fmt)(Xd)
    kept = X.copy()
    ref = sp.csr_matrix(Xd)
    for k in (_k(), Linear(), make_kernel("cosine")):
        assert_same_to_roundoff(k(X, Z), k(ref, Z))
        assert_same_to_roundoff(k(X), k(ref))
        assert_same_to_roundoff(k(Z, X), k(Z, ref))
        assert_same_to_roundoff(k.diag(X), k.diag(ref))
        assert_same_to_roundoff(kernel_block(k, X, Z, budget=300), k(ref, Z))
        assert_same_to_roundoff(kernel_product(k, X, Z, R, budget=300), k(ref, Z) @ R)
        assert_same_to_roundoff(
            kernel_product(k, X, Z, T, upper_triangular=True, budget=300), k(ref, Z) @ T
        )
        blocks = np.vstack([b for *_, b in iter_kernel_blocks(k, X, Z, budget=300)])
        assert_same_to_roundoff(blocks, k(ref, Z))
    bank = KernelBank.gaussian(factors=[0.5, 2.0]).resolve(ref, np.random.default_rng(0))
    for got, want in zip(bank.blocks(X, Z, budget=300), bank.blocks(ref, Z), strict=True):
        assert_same_to_roundoff(got, want)
    assert type(X) is type(kept) and (X != kept).nnz == 0  # not converted in place


def test_a_wrong_out_is_refused_on_the_array_api_path_too(XZR):
    xs = pytest.importorskip("array_api_strict")
    import lorak

    X, Z, R = (xs.asarray(A) for A in XZR)
    out = xs.full((59, 3), SENTINEL, dtype=xs.float64)
    with lorak.config_context(array_api_dispatch=True):
        with pytest.raises(ValueError, match=r"out must have shape \(60, 3\)"):
            kernel_product(_k(), X, Z, R, out=out, budget=800)
    assert np.all(np.asarray(out) == SENTINEL)

"""The threaded sparse × dense product behind the kernel rows of sparse X: the rows of
``X @ D`` exactly, whatever the thread count, the dtype or the sparse container."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from lorak.kernels import Gaussian
from lorak.kernels._elementwise import sparse_dense_product


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("container", [sp.csr_matrix, sp.csr_array])
def test_the_rows_of_x_times_d_exactly(threads, dtype, container):
    X = container(sp.random(3001, 40, density=0.1, random_state=0, dtype=dtype))
    D = np.random.default_rng(0).standard_normal((40, 400)).astype(dtype)
    with threadpool_limits(threads):
        got = sparse_dense_product(X, D)
    want = X @ D
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_into_a_given_block_and_a_transposed_d():
    X = sp.random(2000, 30, density=0.2, format="csr", random_state=1)
    Z = np.random.default_rng(1).standard_normal((600, 30))
    out = np.full((2000, 600), np.nan)
    with threadpool_limits(2):
        res = sparse_dense_product(X, Z.T, out)
    assert res is out
    np.testing.assert_array_equal(out, X @ Z.T)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_few_rows(n):
    X = sp.random(n, 5, density=0.5, format="csr", random_state=2)
    D = np.ones((5, 7))
    np.testing.assert_array_equal(sparse_dense_product(X, D), X @ D)


def test_the_kernel_of_sparse_rows_is_the_dense_one():
    rng = np.random.default_rng(3)
    Xd = np.where(rng.random((2500, 50)) < 0.1, rng.standard_normal((2500, 50)), 0.0)
    Z = rng.standard_normal((500, 50))
    k = Gaussian(bandwidth=10.0)
    with threadpool_limits(2):
        np.testing.assert_allclose(k(sp.csr_matrix(Xd), Z), k(Xd, Z), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("budget", [None, 40_000])
@pytest.mark.parametrize("sparse", [True, False])
def test_kernel_product_by_slabs(threads, budget, sparse):
    """k(X, Z) @ R (one slab of each chunk per thread, BLAS on one thread meanwhile)
    equals the kernel matrix times R, on sparse and dense rows, for several chunks and
    thread counts, and leaves BLAS's thread count as it was."""
    from threadpoolctl import threadpool_info

    from lorak.kernels import kernel_product

    rng = np.random.default_rng(4)
    Xd = np.where(rng.random((2300, 60)) < 0.1, rng.standard_normal((2300, 60)), 0.0)
    Z = rng.standard_normal((300, 60))
    R = rng.standard_normal((300, 3))
    k = Gaussian(bandwidth=12.0)
    X = sp.csr_matrix(Xd) if sparse else Xd.copy()
    data = (X.data if sparse else X).copy()
    with threadpool_limits(threads, user_api="blas"):
        before = [c["num_threads"] for c in threadpool_info() if c["user_api"] == "blas"]
        got = kernel_product(k, X, Z, R, budget=budget)
        after = [c["num_threads"] for c in threadpool_info() if c["user_api"] == "blas"]
    want = k(Xd, Z) @ R
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-12)
    assert before == after
    np.testing.assert_array_equal(X.data if sparse else X, data)

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
    Z = rng.standard_normal((500, 60))  # 2300 × 500 entries: above the threads' floor
    R = rng.standard_normal((500, 3))
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


def test_blas_on_one_thread_from_overlapping_threads(monkeypatch):
    """Entries from several threads whose lifetimes overlap (dask's threaded scheduler):
    BLAS stays on one thread until the last one leaves, then gets back the counts the
    first one found. (Stand-in libraries: how a real BLAS takes a count set from
    another thread is the BLAS's business.)"""
    import threading

    from lorak.kernels import _elementwise

    class Lib:
        def __init__(self):
            self.n = 2

        def get_num_threads(self):
            return self.n

        def set_num_threads(self, n):
            self.n = n

    libs = [Lib(), Lib()]
    monkeypatch.setattr(_elementwise, "_blas_libs", libs)
    a_in, b_in, a_out, b_go = (threading.Event() for _ in range(4))
    seen = {}

    def a():
        with _elementwise.blas_on_one_thread():
            a_in.set()
            b_in.wait()
        a_out.set()

    def b():
        a_in.wait()
        with _elementwise.blas_on_one_thread():
            b_in.set()
            a_out.wait()  # the first entry has left; this one still holds
            seen["b"] = [lib.n for lib in libs]
            b_go.wait()

    ts = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in ts:
        t.start()
    a_out.wait()
    seen["between"] = [lib.n for lib in libs]
    b_go.set()
    for t in ts:
        t.join()
    assert seen["b"] == [1, 1]
    assert seen["between"] == [1, 1]
    assert [lib.n for lib in libs] == [2, 2]

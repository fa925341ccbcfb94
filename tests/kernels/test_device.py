"""The PyTorch fast paths of lorak.kernels._device: the in-place triangular products
(halving the columns, column blocks) and the Gaussian block of all rows written straight
into the output, against the NumPy path and the plain product. Skips without torch."""

from __future__ import annotations

import numpy as np
import pytest

import lorak
from lorak._core.array_api import compat, to_numpy
from lorak.kernels import Gaussian, kernel_block, kernel_product
from lorak.kernels._blocks import _prepare_device
from lorak.kernels._device import gaussian_in_place, row_sq_norms, upper_triangular_product

torch = pytest.importorskip("torch")


@pytest.fixture
def dispatch():
    with lorak.config_context(array_api_dispatch=True):
        yield


def _xp(A):
    return compat.array_namespace(A)


@pytest.mark.parametrize("method", [None, "halves", "columns"])
@pytest.mark.parametrize("m", [1, 64, 129, 300, 1000])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_in_place_triangular_product_is_b_times_n(method, m, dtype, rng):
    B = torch.asarray(rng.standard_normal((700, m)), dtype=dtype)
    N = torch.asarray(np.triu(rng.standard_normal((m, m))) / np.sqrt(m) + np.eye(m), dtype=dtype)
    ref = B.double() @ N.double()
    C = B.clone()
    # a budget of a few rows: the leaves' (or blocks') temporaries run in row chunks
    got = upper_triangular_product(_xp(C), C, N, inplace=True, budget=2**16, method=method)
    assert got.data_ptr() == C.data_ptr()  # in place
    tol = 1e-4 if dtype == torch.float32 else 1e-12
    np.testing.assert_allclose(got.double().numpy(), ref.numpy(), atol=tol * ref.abs().max())


def test_triangular_product_method_is_checked(rng):
    B = torch.ones(3, 3)
    with pytest.raises(ValueError, match="method"):
        upper_triangular_product(_xp(B), B, torch.eye(3), inplace=True, method="rows")


def test_row_sq_norms(rng):
    X = rng.standard_normal((40, 7))
    got = row_sq_norms(_xp(torch.ones(1)), torch.asarray(X))
    np.testing.assert_allclose(got.numpy(), (X * X).sum(axis=1), rtol=1e-13)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gaussian_block_of_all_rows_in_place(dispatch, dtype, rng):
    """Near the origin, X in the block's dtype: one pass over all rows into the
    output (whatever the budget), the NumPy path's block and triangular product."""
    X = rng.standard_normal((500, 6)).astype(dtype)
    Z = X[:60]
    kern = Gaussian(bandwidth=6.0)
    Xt, Zt = torch.asarray(X), torch.asarray(Z)
    _, _, aux = _prepare_device(kern, Xt, Zt, _xp(Xt))
    assert gaussian_in_place(kern, Xt, aux, Xt.dtype, _xp(Xt))
    tol = 2e-5 if dtype == np.float32 else 1e-12
    ref = kernel_block(kern, X, Z)
    got = kernel_block(kern, Xt, Zt, budget=2**12)
    np.testing.assert_allclose(got.numpy(), ref, atol=tol)
    R = np.triu(rng.standard_normal((60, 60))) / 8 + np.eye(60)
    ref = kernel_product(kern, X, Z, R.astype(dtype), upper_triangular=True)
    got = kernel_product(kern, Xt, Zt, torch.asarray(R.astype(dtype)), upper_triangular=True)
    assert got.dtype == Xt.dtype
    np.testing.assert_allclose(got.numpy(), ref, atol=tol * np.abs(ref).max())


def test_gaussian_in_place_only_where_no_temporary(dispatch, rng):
    """Centred Z (X − centre is a copy), a dtype cast, or the difference path: the
    block is evaluated in row chunks instead, with the same result."""
    kern = Gaussian(bandwidth=2.0)
    far = rng.standard_normal((80, 3)) + 1e4  # centred
    Xt = torch.asarray(far)
    _, _, aux = _prepare_device(kern, Xt, Xt[:10], _xp(Xt))
    assert aux.center is not None
    assert not gaussian_in_place(kern, Xt, aux, Xt.dtype, _xp(Xt))
    R = np.triu(rng.standard_normal((10, 10))) + 3 * np.eye(10)
    ref = kernel_product(kern, far, far[:10], R, upper_triangular=True)
    got = kernel_product(kern, Xt, Xt[:10], torch.asarray(R), upper_triangular=True, budget=2**10)
    np.testing.assert_allclose(to_numpy(got), ref, atol=1e-9 * np.abs(ref).max())
    near = torch.asarray(rng.standard_normal((80, 3)), dtype=torch.float32)
    _, _, aux = _prepare_device(kern, near, near[:10].double(), _xp(near))
    assert not gaussian_in_place(kern, near, aux, torch.float64, _xp(near))


def test_non_finite_rows_are_reported_on_the_one_pass_path(dispatch, rng):
    X = rng.standard_normal((50, 4))
    X[33, 2] = np.nan
    Xt = torch.asarray(X)
    Z = torch.asarray(X[:5])
    R = torch.eye(5, dtype=torch.float64)
    with pytest.raises(ValueError, match="X contains NaN or infinity"):
        kernel_product(Gaussian(bandwidth=1.0), Xt, Z, R, upper_triangular=True)


@pytest.mark.parametrize("inplace", [False, True])
def test_upper_triangular_product_is_public_and_takes_numpy(inplace, rng):
    """Exported from lorak.kernels; on NumPy arrays the column blocks (m above one
    block width), into ``out`` or B; the blocks below N's diagonal are not read."""
    from lorak.kernels import upper_triangular_product as public

    assert public is upper_triangular_product
    m = 300
    B = rng.standard_normal((50, m))
    N = np.triu(rng.standard_normal((m, m))) / np.sqrt(m) + np.eye(m)
    ref = B @ N
    junk = N.copy()  # below the diagonal blocks (128 columns wide): ignored
    junk[128:, :128] = np.nan
    C = B.copy()
    out = None if inplace else np.empty_like(B)
    got = public(_xp(C), C, junk, out, inplace=inplace)
    assert got is (C if inplace else out)
    np.testing.assert_allclose(got, ref, atol=1e-12 * np.abs(ref).max())
    if not inplace:
        np.testing.assert_array_equal(C, B)

"""``gather_rows``: the few rows a lazy fit keeps in memory, in the order asked for."""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

from lorak._core.chunked import gather_rows  # noqa: E402


@pytest.mark.parametrize("kind", ["ndarray", "memmap", "dask"])
def test_rows_come_back_in_the_order_asked(kind, tmp_path):
    X = np.arange(60, dtype=np.float32).reshape(20, 3)
    if kind == "memmap":
        np.save(tmp_path / "X.npy", X)
        src = np.load(tmp_path / "X.npy", mmap_mode="r")
    elif kind == "dask":
        src = da.from_array(X, chunks=(7, 3))
    else:
        src = X
    rows = [19, 0, 8, 7, 14]  # unsorted, over several chunks
    got = gather_rows(src, rows)
    assert got.dtype == np.float32 and not isinstance(got, np.memmap)
    np.testing.assert_array_equal(got, X[rows])


def test_integer_rows_become_float64_and_bad_rows_are_named():
    Xi = np.arange(12).reshape(6, 2)
    assert gather_rows(da.from_array(Xi, chunks=4), [5, 1]).dtype == np.float64
    X = np.ones((6, 2))
    X[4, 1] = np.inf
    with pytest.raises(ValueError, match=r"X: row 4 contains NaN or infinity \(1 of the 2"):
        gather_rows(da.from_array(X, chunks=4), [1, 4])
    Xd = da.from_array(X, chunks=4)
    Xu = Xd[Xd[:, 0] > 0]
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        gather_rows(Xu, [0])

"""The finiteness check of array API inputs (lorak._core.validation): row sums first, the
exact test in row chunks where a sum is not finite — an overflow of finite entries is
no error, a NaN or an infinity is, wherever it sits."""

from __future__ import annotations

import numpy as np
import pytest

import lorak
from lorak import Nystroem
from lorak._core.array_api import compat
from lorak._core.validation import _foreign_all_finite, validate_data

NAMESPACES = ["array_api_strict", "torch"]


def _convert(name):
    mod = pytest.importorskip(name)
    return lambda a: mod.asarray(np.ascontiguousarray(a))


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_finite_check_tells_overflow_from_non_finite(name, dtype):
    conv = _convert(name)
    big = np.finfo(dtype).max / 2
    X = np.ones((3000, 4), dtype=dtype)
    X[7] = big  # finite, but its row sum overflows to inf
    xp = compat.array_namespace(conv(X))
    with lorak.config_context(memory_budget=2**16):  # the exact test in several chunks
        assert _foreign_all_finite(xp, conv(X))
        for bad in (np.nan, np.inf, -np.inf):
            Y = X.copy()
            Y[2900, 3] = bad  # in a later chunk than the overflowing row
            assert not _foreign_all_finite(xp, conv(Y))
            Y = np.ones((3000, 4), dtype=dtype)
            Y[1234, 0] = bad  # no overflow: the row sums alone decide
            assert not _foreign_all_finite(xp, conv(Y))


@pytest.mark.parametrize("name", NAMESPACES)
def test_nystroem_accepts_huge_finite_values_and_refuses_nan(name, rng):
    conv = _convert(name)
    X = rng.standard_normal((40, 3))
    with lorak.config_context(array_api_dispatch=True):
        bad = X.copy()
        bad[-1, 1] = np.nan
        with pytest.raises(ValueError, match="NaN or infinity"):
            Nystroem(n_components=5, random_state=0).fit(conv(bad))
        huge = X.copy()
        huge[0] = np.finfo(np.float64).max / 2  # a row sum overflows; the data is finite
        est = Nystroem(n_components=5)
        out = validate_data(est, conv(huge))
        assert est.n_features_in_ == 3
        assert type(out).__module__.split(".")[0] == name

"""Adversarial sweep, out-of-memory inputs (``lorak.parallel``): every estimator on dask
arrays (equal to the in-memory fit, or refused by name) and on memmaps.

Part of the adversarial sweep: the outcome rules are in ``tests/_adversarial.py``,
``tests/test_adversarial.py`` gathers every area's table."""

from __future__ import annotations

import os

import numpy as np
import pytest

import lorak
import lorak.datasets
from _adversarial import (
    _X_INF,
    _X_NAN,
    ESTIMATORS,
    PYTESTMARK,
    X,
    _apply,
    _output,
    _same_as_reference,
    check_case,
    new_table,
    parametrize_cases,
    y,
    y_reg,
    y_semi,
)

pytestmark = PYTESTMARK

CASES, case = new_table()


def _dask():
    return pytest.importorskip("dask.array")


def _dask_call(name, Xb, yb=None, chunks=20):
    def call():
        da = _dask()
        make, fit, method, _ = ESTIMATORS[name]
        Xd = da.from_array(Xb, chunks=(chunks, Xb.shape[1]))
        yd = None if yb is None else da.from_array(yb, chunks=chunks)
        out = _apply(fit(make(), Xd, yd), method, Xb)
        return np.asarray(out.compute() if hasattr(out, "compute") else out)

    return call


_DASK_OK_OR_REFUSED = r"(dask|in memory|memory|lazy|chunk)"
_LSSVR_NAN_Y = y_reg.copy()
_LSSVR_NAN_Y[5] = np.nan
for _name in ESTIMATORS:
    case(
        f"{_name}-dask",
        _dask_call(_name, X),
        check=_same_as_reference(_name, atol=1e-4),
        error=_DASK_OK_OR_REFUSED,
    )
    case(
        f"{_name}-dask-X-nan",
        _dask_call(_name, _X_NAN),
        error=r"(\bX\b.*(nan|infinity)|dask|in memory)",
    )
    case(
        f"{_name}-dask-X-inf",
        _dask_call(_name, _X_INF),
        error=r"(\bX\b.*(nan|infinity)|dask|in memory)",
    )


def _dask_transform_nan(name):
    """A fixed bandwidth: fit reads only the landmark rows, so a NaN row elsewhere is
    met (and named) when a method computes its chunk."""

    def call():
        da = _dask()
        Xd = da.from_array(_X_NAN, chunks=(20, 5))
        est = lorak.Nystroem(n_components=8, gamma=0.2, random_state=0).fit(Xd)
        return np.asarray(est.transform(Xd).compute())

    return call


case("Nystroem-gamma-dask-X-nan-transform", _dask_transform_nan("Nystroem"), error=r"\bX\b.*nan")
for _name in ("LSSVR", "LSSVC", "SemiSupervisedFactorClassifier"):
    _yb = {
        "LSSVR": _LSSVR_NAN_Y,
        "LSSVC": np.where(np.arange(60) == 4, np.nan, y.astype(float)),
    }.get(_name, np.where(np.arange(60) == 4, np.nan, y_semi.astype(float)))
    case(
        f"{_name}-dask-y-nan",
        _dask_call(_name, X, _yb),
        error=r"(\by\b.*(nan|infinity|label)|dask|in memory)",
    )


def _memmap_call(name, tmpdir=[None]):  # noqa: B006 - one folder per session
    def call():
        import tempfile

        if tmpdir[0] is None:
            tmpdir[0] = tempfile.mkdtemp(prefix="lorak-adv-")
        path = os.path.join(tmpdir[0], "X.dat")
        mm = np.memmap(path, dtype=np.float64, mode="w+", shape=X.shape)
        mm[:] = X
        mm.flush()
        Xm = np.memmap(path, dtype=np.float64, mode="r", shape=X.shape)
        return _output(name, Xm)

    return call


for _name in ESTIMATORS:
    case(f"{_name}-memmap", _memmap_call(_name), check=_same_as_reference(_name))


# --------------------------------------------------------------------------- the test


@parametrize_cases(CASES)
def test_case(c):
    check_case(c)

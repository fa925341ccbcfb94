"""One default semi-supervised fit resolves its input once: X validated once, y parsed
once, the labeled rows gathered once and transformed once — in memory, on a memmap and
on a dask array (lorak._core.rows hands the resolved rows down to the factors)."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from sklearn.datasets import make_moons

import lorak
from lorak import GraphRegularizedFactor, Nystroem, SemiSupervisedFactorClassifier
from lorak._core.array_api import to_numpy
from lorak._core.chunked import gather_rows, validate_lazy
from lorak._core.rows import Rows
from lorak._core.targets import (
    parse_class_labels,
    parse_semi_supervised_response,
    parse_semi_supervised_y,
)
from lorak._core.validation import check_data, validate_data
from lorak.learn._gen_nystrom import resolve_target_type

N, LABELED = 600, 60


@pytest.fixture(scope="module")
def moons():
    X, y = make_moons(N, noise=0.1, random_state=0)
    labeled = np.sort(np.random.default_rng(0).choice(N, LABELED, replace=False))
    ys = np.full(N, -1)
    ys[labeled] = y[labeled]
    return X, ys, labeled


def _count(monkeypatch, *funcs):
    """Wrap each function wherever a lorak module holds it (its own module's callers
    included); return the list every call appends (name, args) to."""
    calls = []
    for func in funcs:

        def spy(*args, _func=func, **kwargs):
            calls.append((_func.__name__, args))
            return _func(*args, **kwargs)

        for mod in list(sys.modules.values()):
            name = getattr(mod, "__name__", "") or ""
            if name.startswith("lorak") and vars(mod).get(func.__name__) is func:
                monkeypatch.setattr(mod, func.__name__, spy)
    return calls


def _spy_transform(monkeypatch, cls, X_l, seen):
    """Record each ``cls.transform`` of exactly the labeled rows."""
    orig = cls.transform

    def spy(self, X, *args, **kwargs):
        data = X.data if isinstance(X, Rows) else X
        if data.shape == X_l.shape and np.array_equal(to_numpy(np.asarray(data)), X_l):
            seen.append(cls.__name__)
        return orig(self, X, *args, **kwargs)

    monkeypatch.setattr(cls, "transform", spy)


def _input(kind, X, tmp_path):
    if kind == "dask":
        da = pytest.importorskip("dask.array")
        return da.from_array(X, chunks=(128, X.shape[1]))
    if kind == "memmap":
        mm = np.memmap(tmp_path / "X.dat", dtype=X.dtype, mode="w+", shape=X.shape)
        mm[:] = X
        mm.flush()
        return np.memmap(tmp_path / "X.dat", dtype=X.dtype, mode="r", shape=X.shape)
    return X


@pytest.mark.parametrize("kind", ["numpy", "memmap", "dask"])
def test_default_fit_reads_its_input_once(moons, kind, tmp_path, monkeypatch):
    dask = pytest.importorskip("dask")
    X, ys, labeled = moons
    Xin = _input(kind, X, tmp_path)
    validations = _count(monkeypatch, validate_data, validate_lazy, check_data)
    parses = _count(
        monkeypatch,
        parse_semi_supervised_y,
        parse_class_labels,
        parse_semi_supervised_response,
        resolve_target_type,
    )
    gathers = _count(monkeypatch, gather_rows)
    takes = []
    orig_take = Rows.take

    def take(self, idx):
        takes.append(np.asarray(idx))
        return orig_take(self, idx)

    monkeypatch.setattr(Rows, "take", take)
    transforms = []
    for cls in (GraphRegularizedFactor, Nystroem):
        _spy_transform(monkeypatch, cls, X[labeled], transforms)
    with dask.config.set(scheduler="synchronous"):
        clf = SemiSupervisedFactorClassifier().fit(Xin, ys)

    assert [(name, type(args[0]).__name__) for name, args in validations] == [
        ("validate_lazy" if kind == "dask" else "validate_data", "SemiSupervisedFactorClassifier")
    ]
    assert [name for name, _ in parses] == ["parse_semi_supervised_y"]
    assert sum(np.array_equal(idx, labeled) for idx in takes) == 1
    if kind != "numpy":  # read from the memmap or the dask array: the labeled rows once,
        # then (the measured class prior's mean row) unlabeled rows only
        read = [args[1] for _, args in gathers]
        assert np.array_equal(read[0], labeled)
        assert all(not np.isin(idx, labeled).any() for idx in read[1:])
    assert sorted(transforms) == ["GraphRegularizedFactor", "Nystroem"]
    assert clf.factor_.gamma_rule_ == "leave_one_out"  # the path that reads labeled rows


def test_resolved_fit_predicts_as_the_factor_alone(moons):
    """The factor handed the resolved rows fits as it does on X itself."""
    X, ys, _ = moons
    clf = SemiSupervisedFactorClassifier().fit(X, ys)
    alone = GraphRegularizedFactor(random_state=0).fit(X, ys)  # the labels are 0 and 1
    np.testing.assert_array_equal(alone.components_, clf.factor_.components_)
    np.testing.assert_array_equal(alone.transform(X), clf.factor_.transform(X))


def test_a_factor_that_does_not_take_resolved_input_gets_arrays(moons):
    """A factor without ``takes_resolved_input`` (scikit-learn's, or lorak's ICD) is
    given the validated array and y coded as integers, as before."""
    from sklearn.kernel_approximation import Nystroem as SkNystroem

    X, ys, _ = moons
    seen = {}

    class Spy(SkNystroem):
        def fit(self, X, y=None):
            seen["X"], seen["y"] = type(X), np.asarray(y)
            return super().fit(X, y)

    clf = SemiSupervisedFactorClassifier(Spy(n_components=30, random_state=0)).fit(X, ys)
    assert seen["X"] is np.ndarray
    np.testing.assert_array_equal(seen["y"], ys)  # the codes of the labels 0 and 1
    assert clf.predict(X[:5]).shape == (5,)


def test_lorak_factors_declare_that_they_take_resolved_input():
    assert GraphRegularizedFactor.takes_resolved_input is True
    assert Nystroem().takes_resolved_input is True
    assert Nystroem(kernel="precomputed").takes_resolved_input is False
    assert not getattr(lorak.IncompleteCholesky(), "takes_resolved_input", False)


def test_a_sampled_graph_reads_the_labeled_rows_once_too(moons, monkeypatch):
    """Above ``subsample`` rows the graph learns from a random sample: on dask the
    labeled rows (gathered by the model) are not read again, the sample is read once."""
    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    X, ys, labeled = moons
    validations = _count(monkeypatch, validate_data, validate_lazy, check_data)
    gathers = _count(monkeypatch, gather_rows)
    factor = GraphRegularizedFactor(subsample=400, random_state=0)
    with dask.config.set(scheduler="synchronous"):
        SemiSupervisedFactorClassifier(factor).fit(da.from_array(X, chunks=(128, 2)), ys)
    assert [name for name, _ in validations] == ["validate_lazy"]
    read = [args[1] for _, args in gathers]
    assert np.array_equal(read[0], labeled) and read[1].size == 400
    assert not np.isin(read[1], labeled).all()  # the sample, not the labeled rows again
    # the rest (the measured class prior's mean row) reads unlabeled rows only
    assert all(not np.isin(idx, labeled).any() for idx in read[2:])

"""Save and load of every fitted default of the semi-supervised models (issue 47):
``SemiSupervisedFactorClassifier()``, ``SemiSupervisedFactorRegressor()``,
``GraphRegularizedFactor()`` with class labels and with responses, few labels and
enough labels, and ``GeneralizedNystroem(prior=GraphRegularizedFactor(),
prior_gamma="joint")`` on responses — each fitted in memory, on a memmap and on a dask
array, saved in both formats, loaded, and predicting what it predicted before."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_moons

import lorak
from lorak import (
    GeneralizedNystroem,
    GraphRegularizedFactor,
    SemiSupervisedFactorClassifier,
    SemiSupervisedFactorRegressor,
)

N = 180


@pytest.fixture(scope="module")
def data():
    X2, y = make_moons(N, noise=0.08, random_state=0)
    rng = np.random.default_rng(0)
    X = np.c_[X2, 0.1 * rng.standard_normal((N, 2))]
    one = np.full(N, -1)  # one labeled row per class
    for c in (0, 1):
        one[np.flatnonzero(y == c)[0]] = c
    few = np.full(N, -1)  # three per class
    for c in (0, 1):
        idx = np.flatnonzero(y == c)[:3]
        few[idx] = c
    many = np.full(N, -1)  # fifteen per class: leave-one-out
    for c in (0, 1):
        idx = rng.choice(np.flatnonzero(y == c), 15, replace=False)
        many[idx] = c
    t = np.sin(2 * X2[:, 0]) + 0.5 * y
    resp = np.where(np.arange(N) < 40, t, np.nan)
    return X, {"one": one, "few": few, "many": many, "responses": resp}


def _given_head():
    from lorak.models import SelfTrainedRidge

    return SemiSupervisedFactorClassifier(classifier=SelfTrainedRidge(class_prior=[0.6, 0.4]))


def _class_masses():
    return SemiSupervisedFactorClassifier(class_mass="normalized")


def _joint():
    return GeneralizedNystroem(
        prior=GraphRegularizedFactor(), prior_gamma="joint", n_components=20, random_state=0
    )


CASES = {
    "classifier, one label per class": (SemiSupervisedFactorClassifier, "one"),
    "classifier, few labels": (SemiSupervisedFactorClassifier, "few"),
    "classifier, enough labels": (SemiSupervisedFactorClassifier, "many"),
    "classifier, a given self-trained head": (_given_head, "few"),
    "classifier, class masses normalized": (_class_masses, "few"),
    "regressor": (SemiSupervisedFactorRegressor, "responses"),
    "graph factor, one label per class": (GraphRegularizedFactor, "one"),
    "graph factor, few labels": (GraphRegularizedFactor, "few"),
    "graph factor, enough labels": (GraphRegularizedFactor, "many"),
    "graph factor, responses": (GraphRegularizedFactor, "responses"),
    "joint generalized Nystroem, responses": (_joint, "responses"),
}


def _backend(X, kind, tmp_path):
    if kind == "memory":
        return X
    if kind == "memmap":
        path = tmp_path / "X.npy"
        np.save(path, X)
        return np.load(path, mmap_mode="r")
    da = pytest.importorskip("dask.array")
    return da.from_array(X, chunks=(47, X.shape[1]))


def _outputs(est, X):
    """What the fitted estimator answers on X: predictions and decision values, or the
    transformed rows; computed (a dask result is lazy)."""
    out = []
    for method in ("predict", "decision_function", "transform"):
        fn = getattr(est, method, None)
        if fn is None:
            continue
        r = fn(X)
        out.append(np.asarray(r.compute() if hasattr(r, "compute") else r))
    return out


@pytest.mark.parametrize("backend", ["memory", "memmap", "dask"])
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("fmt", ["lorak", "skops"])
def test_every_fitted_default_saves_and_loads(data, case, backend, fmt, tmp_path):
    if fmt == "skops":
        pytest.importorskip("skops")
    X, ys = data
    make, which = CASES[case]
    Xb = _backend(X, backend, tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. convergence warnings of a head
        est = make().fit(Xb, ys[which])
    before = _outputs(est, Xb)
    path = tmp_path / f"est.{fmt}"
    lorak.save(est, path, format=fmt)
    got = lorak.load(path)
    assert type(got) is type(est)
    after = _outputs(got, Xb)
    assert len(after) == len(before) > 0
    for a, b in zip(after, before, strict=True):
        np.testing.assert_array_equal(a, b)
    # and on new rows in memory
    for a, b in zip(_outputs(got, X[:7] + 0.01), _outputs(est, X[:7] + 0.01), strict=True):
        np.testing.assert_array_equal(a, b)

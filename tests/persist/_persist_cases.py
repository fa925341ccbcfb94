"""The persistence tests' shared cases: small data, a fitting recipe per exported
estimator (a generic one for any class without a recipe), and deep equality of two
fitted estimators."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import BaseEstimator, clone
from sklearn.linear_model import LogisticRegression
from sklearn.svm import SVC

import lorak
from lorak import Nystroem, SemiSupervisedFactorClassifier
from lorak.constraints import from_labels


def _data(n=90, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    return X, y


# Small, fast settings per exported estimator class; a class missing here is fitted
# by the generic recipe in _fit_generic (so new estimators are covered by default).
def _nys(**kw):
    return Nystroem(n_components=10, random_state=0, **kw)


RECIPES = {
    "Nystroem": [
        lambda X, y: _nys().fit(X),
        lambda X, y: _nys(landmarks="kmeans", bandwidth="median").fit(X),
        lambda X, y: _nys(landmarks="column_norm", kernel="laplacian").fit(X),
        lambda X, y: _nys(kernel="poly", degree=2).fit(X.astype(np.float32)),
        lambda X, y: _nys().fit(sp.csr_matrix(np.where(X > 0.5, X, 0.0))),
    ],
    "IncompleteCholesky": [lambda X, y: lorak.IncompleteCholesky(n_components=12).fit(X)],
    "ExactEigen": [lambda X, y: lorak.ExactEigen(n_components=8).fit(X)],
    "CSI": [lambda X, y: lorak.CSI(n_components=10, lookahead=5, random_state=0).fit(X, y)],
    "GeneralizedNystroem": [
        lambda X, y: lorak.GeneralizedNystroem(n_components=10, random_state=0).fit(
            X, np.where(np.arange(len(y)) < 20, y, -1)
        ),
    ],
    "SemiSupervisedFactorClassifier": [
        lambda X, y: SemiSupervisedFactorClassifier(
            lorak.GeneralizedNystroem(n_components=10, random_state=0)
        ).fit(X, np.where(np.arange(len(y)) < 20, y, -1)),
        lambda X, y: SemiSupervisedFactorClassifier(_nys(), LogisticRegression()).fit(
            X, np.where(y == 1, "yes", "no")
        ),
        lambda X, y: SemiSupervisedFactorClassifier(_nys(), SVC(probability=False)).fit(X, y),
    ],
    "SemiSupervisedFactorRegressor": [
        lambda X, y: lorak.SemiSupervisedFactorRegressor(
            lorak.GeneralizedNystroem(n_components=10, random_state=0)
        ).fit(X, np.where(np.arange(len(y)) < 20, X[:, 0] ** 2, np.nan)),
    ],
    "SimpleNPKL": [
        lambda X, y: lorak.SimpleNPKL(random_state=0, max_iter=20).fit(
            X, **from_labels(y, random_state=0)
        )
    ],
    "LowRankMKLClassifier": [
        lambda X, y: lorak.LowRankMKLClassifier(n_kernels=3, rank=10, random_state=0).fit(X, y)
    ],
    "LowRankMKLRegressor": [
        lambda X, y: lorak.LowRankMKLRegressor(n_kernels=3, rank=10, random_state=0).fit(
            X, X[:, 0] ** 2
        ),
        lambda X, y: lorak.LowRankMKLRegressor(
            n_kernels=3, rank=10, loss="epsilon_insensitive", random_state=0
        ).fit(X, X[:, 0] ** 2),
    ],
    "LSSVC": [lambda X, y: lorak.LSSVC(_nys()).fit(X, y)],
    "LSSVR": [lambda X, y: lorak.LSSVR(_nys()).fit(X, X[:, 0])],
    "LowRankKernelPCA": [lambda X, y: lorak.LowRankKernelPCA(_nys(), n_components=3).fit(X)],
    "KernelKMeans": [lambda X, y: lorak.KernelKMeans(3, _nys(), random_state=0).fit(X)],
}

_SMALL = {"n_components": 10, "rank": 10, "n_kernels": 3, "n_landmarks": 10, "max_iter": 30}


def _fit_generic(cls, X, y):
    """Fit an estimator with no recipe: small sizes, then fit(X, y_semi), fit(X, y), fit(X)."""
    est = cls()
    params = est.get_params(deep=False)
    est.set_params(**{k: v for k, v in _SMALL.items() if k in params})
    if "random_state" in params:
        est.set_params(random_state=0)
    y_semi = np.where(np.arange(len(y)) < 30, y, -1)
    errors = []
    for args in ((X, y_semi), (X, y), (X,)):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return clone(est).fit(*args)
        except Exception as exc:  # try the next calling convention
            errors.append(f"{type(exc).__name__}: {exc}")
    # a fit that fails is a failure, not a skip: give the class a recipe, or fix the fit
    pytest.fail(f"no recipe for {cls.__name__} and the generic fit failed: {errors}")


def _exported_estimators():
    return sorted(
        (
            obj
            for name in lorak.__all__
            if inspect.isclass(obj := getattr(lorak, name)) and issubclass(obj, BaseEstimator)
        ),
        key=lambda c: c.__name__,
    )


def _cases():
    cases = []
    for cls in _exported_estimators():
        recipes = RECIPES.get(cls.__name__)
        if recipes is None:
            cases.append(pytest.param(cls, None, id=f"{cls.__name__}-generic"))
        else:
            cases += [pytest.param(cls, r, id=f"{cls.__name__}-{i}") for i, r in enumerate(recipes)]
    return cases


def _assert_same(a, b, where="estimator"):
    """Deep equality: same types, arrays equal bit for bit with the same dtype."""
    assert type(a) is type(b), f"{where}: {type(a)} != {type(b)}"
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, where
        if a.dtype.kind == "O":
            for i, (u, v) in enumerate(zip(a.ravel(), b.ravel(), strict=True)):
                _assert_same(u, v, f"{where}[{i}]")
        else:
            np.testing.assert_array_equal(a, b, err_msg=where, strict=True)
    elif sp.issparse(a):
        assert a.format == b.format and a.shape == b.shape, where
        _assert_same(a.toarray(), b.toarray(), where)
    elif isinstance(a, np.generic):
        assert a.dtype == b.dtype and (a == b or (a != a and b != b)), where
    elif isinstance(a, dict):
        assert list(a) == list(b), where
        for k in a:
            _assert_same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (u, v) in enumerate(zip(a, b, strict=True)):
            _assert_same(u, v, f"{where}[{i}]")
    elif isinstance(a, float):
        assert a == b or (a != a and b != b), where
    elif hasattr(a, "__dict__"):
        _assert_same(
            {k: v for k, v in vars(a).items() if k != "_sklearn_version"},
            {k: v for k, v in vars(b).items() if k != "_sklearn_version"},
            where,
        )
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


_METHODS = ("transform", "predict", "decision_function", "predict_proba", "score_samples")

"""save / load for every exported estimator × every kind of kernel (issue 30, item 6).

A kernel reaches an estimator in one of four kinds: a name (``"rbf"``), a lorak kernel
object, ``"precomputed"`` (the kernel matrix in place of X) or a callable. For each
exported estimator and each kind the contract is:

- the fit accepts the kind, or refuses it with a clear ``ValueError`` / ``TypeError``
  (``"precomputed"`` and callables are not for every estimator);
- a fitted named, object or precomputed estimator saves, loads, and the loaded one is
  the same object and predicts bit for bit the same;
- a callable kernel is refused at *save* with a ``PersistenceError`` that says why
  (no file is written), never written into a file that ``load`` then refuses.

The kernel reaches the estimator through whichever parameter it has: ``kernel``,
``kernels`` (a list of two) or ``factor`` (a Nystroem with that kernel). An estimator
with none of these (SimpleNPKL learns its kernel) is checked once, kind ``"none"``.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
from _persist_cases import _METHODS, _assert_same, _data, _exported_estimators
from sklearn.base import is_regressor
from sklearn.metrics.pairwise import rbf_kernel

from lorak import Nystroem, load, save
from lorak.constraints import from_labels
from lorak.kernels import Gaussian, Laplacian
from lorak.persist import PersistenceError

KINDS = ("named", "object", "precomputed", "callable")
GAMMA = 0.3


def _rbf(A, B):
    return rbf_kernel(A, B, gamma=GAMMA)


def _kernel(kind):
    return {
        "named": "rbf",
        "object": Gaussian(gamma=GAMMA),
        "precomputed": "precomputed",
        "callable": _rbf,
    }[kind]


def _kernels(kind):
    return {
        "named": ["rbf", "laplacian"],
        "object": [Gaussian(gamma=GAMMA), Laplacian(bandwidth=2.0)],
        "precomputed": "precomputed",
        "callable": [_rbf, Gaussian(gamma=GAMMA)],
    }[kind]


_SMALL = {"n_components": 8, "rank": 8, "n_kernels": 2, "n_landmarks": 10, "max_iter": 20}


def _route(cls) -> str:
    params = inspect.signature(cls).parameters
    for p in ("kernel", "kernels", "factor"):
        if p in params:
            return p
    return "none"


def _make(cls, kind):
    est = cls()
    params = est.get_params(deep=False)
    est.set_params(**{k: v for k, v in _SMALL.items() if k in params})
    if "random_state" in params:
        est.set_params(random_state=0)
    route = _route(cls)
    if route == "kernel":
        est.set_params(kernel=_kernel(kind))
        if kind == "named" and "gamma" in params:
            est.set_params(gamma=GAMMA)
    elif route == "kernels":
        est.set_params(kernels=_kernels(kind))
    elif route == "factor":
        est.set_params(factor=Nystroem(n_components=8, kernel=_kernel(kind), random_state=0))
    return est


def _cases():
    out = []
    for cls in _exported_estimators():
        kinds = ("none",) if _route(cls) == "none" else KINDS
        out += [pytest.param(cls, kind, id=f"{cls.__name__}-{kind}") for kind in kinds]
    return out


def _fit(est, X, y):
    """Fit with the estimator's calling convention: regressors get values, the rest
    labels with unlabeled rows (−1 / NaN) where that is the convention, SimpleNPKL
    pairs. Returns the fitted estimator, or the exception of every convention."""
    n = X.shape[0]
    if type(est).__name__ == "SimpleNPKL":
        return est.fit(X, **from_labels(y, random_state=0))
    if is_regressor(est):
        values = np.linspace(-1.0, 1.0, n) ** 2 + y
        semi = np.where(np.arange(n) < 30, values, np.nan)
        conventions = ((X, values), (X, semi))
    else:
        conventions = ((X, np.where(np.arange(n) < 30, y, -1)), (X, y), (X,))
    errors = []
    for args in conventions:
        try:
            return est.fit(*args)
        except (ValueError, TypeError) as exc:
            errors.append(exc)
    raise errors[0]


@pytest.mark.parametrize(("cls", "kind"), _cases())
def test_save_load_every_estimator_every_kernel_kind(cls, kind, tmp_path):
    X, y = _data(n=60, d=4)
    X_new = _data(n=13, d=4, seed=1)[0]
    if kind == "precomputed":
        X, X_new = rbf_kernel(X, gamma=GAMMA), rbf_kernel(X_new, X, gamma=GAMMA)
    est = _make(cls, kind)
    path = tmp_path / "est.lorak"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            est = _fit(est, X, y)
        except (ValueError, TypeError) as exc:
            # refused at fit: allowed for "precomputed" and callables only, and clearly
            assert kind in ("precomputed", "callable"), f"{kind} refused: {exc}"
            assert "precomputed" in str(exc) or "kernel" in str(exc) or "callable" in str(exc)
            return
        if kind == "callable":
            with pytest.raises(PersistenceError, match="callable"):
                save(est, path)
            assert not any(p.name.startswith("est.lorak") for p in tmp_path.iterdir())
            return
        save(est, path)
        back = load(path)
        _assert_same(est, back)
        compared = 0
        for method in _METHODS:
            if not hasattr(est, method):
                continue
            try:
                expected = getattr(est, method)(X_new)
            except NotImplementedError:
                continue
            _assert_same(expected, getattr(back, method)(X_new), method)
            compared += 1
        assert compared >= 1, f"{cls.__name__}: no prediction method compared"


def test_precomputed_fits_save_and_load(tmp_path):
    """The reproducer of item 6: these three were written and then refused by load."""
    import lorak

    X, y = _data(n=50, d=3)
    K = rbf_kernel(X, gamma=GAMMA)
    for est in (
        lorak.Nystroem(n_components=10, kernel="precomputed", random_state=0).fit(K),
        lorak.IncompleteCholesky(n_components=10, kernel="precomputed").fit(K),
        lorak.CSI(n_components=10, kernel="precomputed", lookahead=3, random_state=0).fit(K, y),
    ):
        save(est, tmp_path / "p.lorak")
        back = load(tmp_path / "p.lorak")
        assert back.kernel_ == "precomputed"
        np.testing.assert_array_equal(back.transform(K[:7]), est.transform(K[:7]))


def test_save_refuses_what_load_would_refuse(tmp_path):
    """The state rules of load run at save: a kernel_ that is no kernel (or a string
    other than 'precomputed' of a precomputed fit) and NaN in a fitted array are
    refused before any file is written."""
    X, _ = _data(n=40, d=3)
    est = Nystroem(n_components=6, random_state=0).fit(X)
    est.kernel_ = "precomputed"  # but kernel="rbf": load would refuse it
    with pytest.raises(PersistenceError, match="kernel_"):
        save(est, tmp_path / "a.lorak")
    est = Nystroem(n_components=6, random_state=0).fit(X)
    est.normalization_ = np.full_like(est.normalization_, np.nan)
    with pytest.raises(PersistenceError, match="NaN"):
        save(est, tmp_path / "b.lorak")
    assert list(tmp_path.iterdir()) == []

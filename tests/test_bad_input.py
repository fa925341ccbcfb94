"""Bad-input sweep: every public estimator and function, fed bad input, raises
ValueError or TypeError with a message that names the offending argument.

One table (CASES) of (case id, call, expected exception type(s), argument name). The
generic data cases (NaN, inf, empty, 1-D, 3-D, strings, objects, mismatched lengths,
wrong n_features at predict time) are generated for every estimator in ESTIMATORS;
hyper-parameter, label and constraint cases are listed per estimator/function below.
``test_case_count`` keeps the table from shrinking unnoticed.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.sparse as sp

import lorak
import lorak.datasets
from lorak import constraints as C
from lorak import kernels as K
from lorak import metrics as M
from lorak.landmarks import register_landmarks, select_landmarks

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

_rng = np.random.default_rng(0)
X = _rng.standard_normal((40, 3))
y = (X[:, 0] > 0).astype(int)
y_semi = np.where(np.arange(40) < 12, y, -1)
y_reg = X[:, 0].copy()


def _with(a, i, v):
    a = np.array(a, dtype=float, copy=True)
    a.flat[i] = v
    return a


X_nan = _with(X, 5, np.nan)
X_inf = _with(X, 7, np.inf)
X_empty = np.empty((0, 3))
X_1d = X[:, 0].copy()
X_3d = X.reshape(40, 3, 1)
X_str = np.array([["a", "b", "c"]] * 40)
X_obj = np.array([[{}, None, 1.0]] * 40, dtype=object)
X_4feat = np.hstack([X, X[:, :1]])
TINY = {"n_components": 5}
ML = C.from_labels(y, random_state=0)


def _nys(**kw):
    return lorak.Nystroem(**{"n_components": 5, "random_state": 0, **kw})


# name -> (constructor, fit(est, X), fitted-estimator builder or None, predict method)
ESTIMATORS = {
    "Nystroem": (lambda **kw: _nys(**kw), lambda e, X: e.fit(X), "transform"),
    "IncompleteCholesky": (
        lambda **kw: lorak.IncompleteCholesky(**{**TINY, **kw}),
        lambda e, X: e.fit(X),
        "transform",
    ),
    "ExactEigen": (
        lambda **kw: lorak.ExactEigen(**{**TINY, **kw}),
        lambda e, X: e.fit(X),
        "transform",
    ),
    "CSI": (
        lambda **kw: lorak.CSI(**{**TINY, "lookahead": 2, "random_state": 0, **kw}),
        lambda e, X: e.fit(X, y[: len(X)] if len(X) <= 40 else y),
        "transform",
    ),
    "GeneralizedNystroem": (
        lambda **kw: lorak.GeneralizedNystroem(**{**TINY, "random_state": 0, **kw}),
        lambda e, X: e.fit(X, y_semi),
        "transform",
    ),
    "SemiSupervisedFactorClassifier": (
        lambda **kw: lorak.SemiSupervisedFactorClassifier(_nys(), **kw),
        lambda e, X: e.fit(X, y_semi),
        "predict",
    ),
    "SimpleNPKL": (
        lambda **kw: lorak.SimpleNPKL(**{"max_iter": 5, "random_state": 0, **kw}),
        lambda e, X: e.fit(X, **ML),
        None,
    ),
    "LowRankMKLClassifier": (
        lambda **kw: lorak.LowRankMKLClassifier(
            **{"n_kernels": 2, "rank": 5, "max_iter": 3, "random_state": 0, **kw}
        ),
        lambda e, X: e.fit(X, y),
        "predict",
    ),
    "LSSVC": (lambda **kw: lorak.LSSVC(_nys(), **kw), lambda e, X: e.fit(X, y), "predict"),
    "LSSVR": (lambda **kw: lorak.LSSVR(_nys(), **kw), lambda e, X: e.fit(X, y_reg), "predict"),
    "LowRankKernelPCA": (
        lambda **kw: lorak.LowRankKernelPCA(_nys(), **kw),
        lambda e, X: e.fit(X),
        "transform",
    ),
    "KernelKMeans": (
        lambda **kw: lorak.KernelKMeans(**{"n_clusters": 2, "factor": _nys(), "n_init": 1, **kw}),
        lambda e, X: e.fit(X),
        "predict",
    ),
}

CASES: list = []


def case(cid, call, exc, arg):
    """Register a case: ``call()`` must raise ``exc`` naming ``arg`` (a word or regex)."""
    CASES.append(pytest.param(call, exc, arg, id=cid))


def _fit(name, Xb, **kw):
    make, fit, _ = ESTIMATORS[name]
    return lambda: fit(make(**kw), Xb)


def _predict(name, Xb):
    make, fit, method = ESTIMATORS[name]

    def call():
        est = fit(make(), X)
        return getattr(est, method)(Xb)

    return call


VE, TE = ValueError, TypeError
BOTH = (ValueError, TypeError)

# ------------------------------------------------------------ generic data cases
for _name in ESTIMATORS:
    case(f"{_name}-fit-X-nan", _fit(_name, X_nan), VE, "X")
    case(f"{_name}-fit-X-inf", _fit(_name, X_inf), VE, "X")
    case(f"{_name}-fit-X-empty", _fit(_name, X_empty), VE, "X")
    case(f"{_name}-fit-X-1d", _fit(_name, X_1d), VE, "X")
    case(f"{_name}-fit-X-3d", _fit(_name, X_3d), VE, "X")
    case(f"{_name}-fit-X-strings", _fit(_name, X_str), BOTH, "X")
    case(f"{_name}-fit-X-objects", _fit(_name, X_obj), BOTH, "X")
    if ESTIMATORS[_name][2] is not None:
        case(f"{_name}-predict-X-nan", _predict(_name, X_nan), VE, "X")
        case(f"{_name}-predict-X-n_features", _predict(_name, X_4feat), VE, "X")
        case(f"{_name}-predict-X-1d", _predict(_name, X_1d), VE, "X")

# exported estimators without an entry above (e.g. added later): the same data cases,
# fitted with whichever calling convention works on good data (found once, cached)
_SMALL = {"n_components": 5, "rank": 5, "n_kernels": 2, "n_landmarks": 5, "max_iter": 5}
_CONVENTION: dict = {}


def _exported_estimators():
    from sklearn.base import BaseEstimator

    return [
        getattr(lorak, n)
        for n in sorted(lorak.__all__)
        if isinstance(getattr(lorak, n), type) and issubclass(getattr(lorak, n), BaseEstimator)
    ]


def _generic_make(cls):
    est = cls()
    params = est.get_params(deep=False)
    est.set_params(**{k: v for k, v in _SMALL.items() if k in params})
    if "random_state" in params:
        est.set_params(random_state=0)
    return est


def _generic_fit(cls, Xb):
    def call():
        import warnings

        from sklearn.base import clone

        if cls not in _CONVENTION:
            errors = []
            for conv in ((y_semi,), (y,), ()):
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        clone(_generic_make(cls)).fit(X, *conv)
                    _CONVENTION[cls] = conv
                    break
                except Exception as exc:  # try the next convention
                    errors.append(f"{type(exc).__name__}: {exc}")
            else:
                # a fit that fails on good data is a failure, not a skip: give the class
                # an entry in ESTIMATORS, or fix the fit
                pytest.fail(f"{cls.__name__}: no calling convention fits good data: {errors}")
        return _generic_make(cls).fit(Xb, *_CONVENTION[cls])

    return call


GENERIC = [c for c in _exported_estimators() if c.__name__ not in ESTIMATORS]
for _cls in GENERIC:
    _n = _cls.__name__
    case(f"{_n}-fit-X-nan", _generic_fit(_cls, X_nan), VE, "X")
    case(f"{_n}-fit-X-inf", _generic_fit(_cls, X_inf), VE, "X")
    case(f"{_n}-fit-X-empty", _generic_fit(_cls, X_empty), VE, "X")
    case(f"{_n}-fit-X-1d", _generic_fit(_cls, X_1d), VE, "X")
    case(f"{_n}-fit-X-3d", _generic_fit(_cls, X_3d), VE, "X")
    case(f"{_n}-fit-X-strings", _generic_fit(_cls, X_str), BOTH, "X")
    case(f"{_n}-fit-X-objects", _generic_fit(_cls, X_obj), BOTH, "X")

# ------------------------------------------------------------ labels (y)
y_short = y[:30]
case("CSI-y-length", lambda: lorak.CSI(**TINY).fit(X, y_short), VE, "y")
case("CSI-y-nan", lambda: lorak.CSI(**TINY).fit(X, _with(y, 0, np.nan)), VE, "y")
case("GenNys-y-length", lambda: lorak.GeneralizedNystroem(**TINY).fit(X, y_semi[:30]), VE, "y")
case(
    "GenNys-y-all-unlabeled",
    lambda: lorak.GeneralizedNystroem(**TINY).fit(X, -np.ones(40)),
    VE,
    "y",
)
case(
    "GenNys-y-one-class",
    lambda: lorak.GeneralizedNystroem(**TINY).fit(X, np.where(y_semi == 1, 0, y_semi)),
    VE,
    "y",
)
case("GenNys-y-none", lambda: lorak.GeneralizedNystroem(**TINY).fit(X), VE, "y")
# target="auto" (the default) reads continuous y as regression responses
case(
    "GenNys-y-continuous",
    lambda: lorak.GeneralizedNystroem(**TINY, target="classification").fit(X, y_reg),
    VE,
    "y",
)
case(
    "SSFC-y-all-unlabeled",
    lambda: lorak.SemiSupervisedFactorClassifier(_nys()).fit(X, -np.ones(40, int)),
    VE,
    "y",
)
case(
    "SSFC-y-one-class",
    lambda: lorak.SemiSupervisedFactorClassifier(_nys()).fit(X, np.zeros(40, int)),
    VE,
    "y",
)
case("SSFC-y-length", lambda: lorak.SemiSupervisedFactorClassifier(_nys()).fit(X, y[:39]), VE, "y")
case(
    "SSFC-y-nan",
    lambda: lorak.SemiSupervisedFactorClassifier(_nys()).fit(X, _with(y, 3, np.nan)),
    VE,
    "y",
)
case(
    "MKL-y-one-class", lambda: ESTIMATORS["LowRankMKLClassifier"][0]().fit(X, np.zeros(40)), VE, "y"
)
case("MKL-y-length", lambda: ESTIMATORS["LowRankMKLClassifier"][0]().fit(X, y[:20]), VE, "y")
case("MKL-y-continuous", lambda: ESTIMATORS["LowRankMKLClassifier"][0]().fit(X, y_reg), VE, "y")
case("LSSVC-y-one-class", lambda: lorak.LSSVC(_nys()).fit(X, np.ones(40)), VE, "y")
case("LSSVC-y-length", lambda: lorak.LSSVC(_nys()).fit(X, y[:10]), VE, "y")
case("LSSVC-y-nan", lambda: lorak.LSSVC(_nys()).fit(X, _with(y, 0, np.nan)), VE, "y")
case("LSSVR-y-length", lambda: lorak.LSSVR(_nys()).fit(X, y_reg[:10]), VE, "y")
case("LSSVR-y-inf", lambda: lorak.LSSVR(_nys()).fit(X, _with(y_reg, 0, np.inf)), VE, "y")
case("LSSVC-y-continuous", lambda: lorak.LSSVC(_nys()).fit(X, y_reg), VE, "y")
case("LSSVR-y-strings", lambda: lorak.LSSVR(_nys()).fit(X, np.array(["a"] * 40)), BOTH, "y")

# ------------------------------------------------------------ hyper-parameters
_HP = [
    ("Nystroem", {"n_components": 0}, VE, "n_components"),
    ("Nystroem", {"n_components": -3}, VE, "n_components"),
    ("Nystroem", {"n_components": 1000}, VE, "n_components"),
    ("Nystroem", {"n_components": 2.5}, TE, "n_components"),
    ("Nystroem", {"kernel": "no_such_kernel"}, VE, "kernel"),
    ("Nystroem", {"landmarks": "no_such_strategy"}, VE, "landmarks"),
    ("Nystroem", {"gamma": -1.0}, VE, "gamma"),
    ("Nystroem", {"gamma": 0.0}, VE, "gamma"),
    ("Nystroem", {"bandwidth": -2.0}, VE, "bandwidth"),
    ("Nystroem", {"bandwidth": "no_such_rule"}, VE, "bandwidth"),
    ("Nystroem", {"gamma": 1.0, "bandwidth": 2.0}, VE, "bandwidth"),
    ("Nystroem", {"rtol": 2.0}, VE, "rtol"),
    ("Nystroem", {"kernel": "poly", "degree": 0}, VE, "degree"),
    ("Nystroem", {"kernel": "linear", "gamma": 1.0}, VE, "gamma"),
    ("Nystroem", {"landmarks": np.array([0, 1, 400])}, VE, "landmarks"),
    ("Nystroem", {"landmarks": np.ones((4, 7))}, VE, "landmarks"),
    ("Nystroem", {"landmarks": np.array([0.5, 1.5])}, VE, "landmarks"),
    ("Nystroem", {"landmarks": _with(np.ones((4, 3)), 0, np.nan)}, VE, "landmarks"),
    ("IncompleteCholesky", {"tol": 1.5}, VE, "tol"),
    ("IncompleteCholesky", {"tol": -0.1}, VE, "tol"),
    ("IncompleteCholesky", {"n_components": 0}, VE, "n_components"),
    ("ExactEigen", {"max_samples": 10}, VE, "max_samples"),
    ("ExactEigen", {"n_components": 0}, VE, "n_components"),
    ("CSI", {"kappa": 1.5}, VE, "kappa"),
    ("CSI", {"kappa": "x"}, TE, "kappa"),
    ("CSI", {"lookahead": -1}, VE, "lookahead"),
    ("CSI", {"tol": -1.0}, VE, "tol"),
    ("CSI", {"target": "no_such_target"}, VE, "target"),
    ("GeneralizedNystroem", {"lam": -1.0}, VE, "lam"),
    ("GeneralizedNystroem", {"lam": "big"}, VE, "lam"),
    ("GeneralizedNystroem", {"lam_grid": []}, VE, "lam_grid"),
    ("GeneralizedNystroem", {"lam_grid": [1.0, -1.0]}, VE, "lam_grid"),
    ("GeneralizedNystroem", {"beta": 0.0}, VE, "beta"),
    ("GeneralizedNystroem", {"beta": "no_such_beta"}, VE, "beta"),
    ("GeneralizedNystroem", {"solver": "no_such_solver"}, VE, "solver"),
    ("GeneralizedNystroem", {"criterion": "no_such_criterion"}, VE, "criterion"),
    ("GeneralizedNystroem", {"tol": 0.0}, VE, "tol"),
    ("GeneralizedNystroem", {"max_iter": 0}, VE, "max_iter"),
    ("GeneralizedNystroem", {"n_components": "many"}, VE, "n_components"),
    ("GeneralizedNystroem", {"center_ideal": "yes"}, TE, "center_ideal"),
    ("SemiSupervisedFactorClassifier", {"feature_scale": -1.0}, VE, "feature_scale"),
    ("SemiSupervisedFactorClassifier", {"feature_scale": "no_such_scale"}, VE, "feature_scale"),
    ("SimpleNPKL", {"loss": "no_such_loss"}, VE, "loss"),
    ("SimpleNPKL", {"C": -1.0}, VE, "C"),
    ("SimpleNPKL", {"C": 0.0}, VE, "C"),
    ("SimpleNPKL", {"B": 0.0}, VE, "B"),
    ("SimpleNPKL", {"n_neighbors": 0}, VE, "n_neighbors"),
    ("SimpleNPKL", {"n_neighbors": 40}, VE, "n_neighbors"),
    ("SimpleNPKL", {"max_rank": 0}, VE, "max_rank"),
    ("SimpleNPKL", {"max_iter": 0}, VE, "max_iter"),
    ("SimpleNPKL", {"active_constraints": 1.5}, VE, "active_constraints"),
    ("SimpleNPKL", {"selection": "no_such_selection"}, VE, "selection"),
    ("SimpleNPKL", {"eigen_solver": "no_such_solver"}, VE, "eigen_solver"),
    ("LowRankMKLClassifier", {"p": 0.5}, VE, "p"),
    ("LowRankMKLClassifier", {"C": 0.0}, VE, "C"),
    ("LowRankMKLClassifier", {"rank": 0}, VE, "rank"),
    ("LowRankMKLClassifier", {"rank": 1000}, VE, "rank"),
    ("LowRankMKLClassifier", {"n_kernels": 0}, VE, "n_kernels"),
    ("LowRankMKLClassifier", {"sigma_range": (10.0, 1.0)}, VE, "sigma_range"),
    ("LowRankMKLClassifier", {"solver": "no_such_solver"}, VE, "solver"),
    ("LowRankMKLClassifier", {"kernels": []}, VE, "kernels"),
    ("LSSVC", {"C": -1.0}, VE, "C"),
    ("LSSVC", {"C": "big"}, TE, "C"),
    ("LSSVR", {"C": 0.0}, VE, "C"),
    ("LowRankKernelPCA", {"n_components": 0}, VE, "n_components"),
    ("LowRankKernelPCA", {"n_components": 99}, VE, "n_components"),
    ("KernelKMeans", {"n_clusters": 0}, VE, "n_clusters"),
    ("KernelKMeans", {"n_clusters": 41}, VE, "n_clusters"),
    ("KernelKMeans", {"init": "no_such_init"}, VE, "init"),
    ("KernelKMeans", {"n_init": 0}, VE, "n_init"),
    ("KernelKMeans", {"max_iter": -1}, VE, "max_iter"),
]
for _name, _kw, _exc, _arg in _HP:
    case(f"{_name}-{_arg}={_kw[next(iter(_kw))]!r}", _fit(_name, X, **_kw), _exc, _arg)

# estimators added in the kernel-combination / multiple-kernel issues
_NEW_HP = [
    ("MultipleKernelGeneralizedNystroem", {"lam": -1.0}, VE, "lam"),
    ("MultipleKernelGeneralizedNystroem", {"tau": 0.0}, VE, "tau"),
    ("MultipleKernelGeneralizedNystroem", {"solver": "no_such_solver"}, VE, "solver"),
    ("MultipleKernelGeneralizedNystroem", {"kernels": []}, VE, "kernels"),
    (
        "MultipleKernelGeneralizedNystroem",
        {"n_components": 0, "n_landmarks": None},
        VE,
        "n_components",
    ),
    ("MultipleKernelGeneralizedNystroem", {"n_landmarks": 0}, VE, "n_landmarks"),
    ("UniformKernelSum", {"n_components": 0}, VE, "n_components"),
    ("ABMKL", {"landmarks": "no_such_strategy"}, VE, "landmarks"),
    ("CABMKL", {"rtol": 2.0}, VE, "rtol"),
    ("AlignmentMKLClassifier", {"weighting": "no_such_weighting"}, VE, "weighting"),
    ("AlignmentMKLClassifier", {"C": -1.0}, VE, "C"),
    ("GLMKLClassifier", {"C": 0.0}, VE, "C"),
    ("GLMKLClassifier", {"max_labeled": 0}, VE, "max_labeled"),
]
for _name, _kw, _exc, _arg in _NEW_HP:
    if hasattr(lorak, _name):
        _cls = getattr(lorak, _name)
        case(
            f"{_name}-{_arg}={_kw[next(iter(_kw))]!r}",
            (lambda c, kw: lambda: _generic_make(c).set_params(**kw).fit(X, y_semi))(_cls, _kw),
            _exc,
            _arg,
        )

# downstream models given something that is not a factor
case(
    "LSSVC-factor-not-transformer", lambda: lorak.LSSVC(factor="nystroem").fit(X, y), BOTH, "factor"
)
case("KPCA-factor-not-transformer", lambda: lorak.LowRankKernelPCA(factor=3).fit(X), BOTH, "factor")
case(
    "SSFC-factor-not-transformer",
    lambda: lorak.SemiSupervisedFactorClassifier(factor="nystroem").fit(X, y),
    BOTH,
    "factor",
)
case(
    "SSFC-classifier-not-classifier",
    lambda: lorak.SemiSupervisedFactorClassifier(_nys(), classifier="svm").fit(X, y),
    BOTH,
    "classifier",
)

# sparse where unsupported (Laplacian l1 and callable kernels are dense-only? ExactEigen
# is documented dense-friendly; the dense-only public function is alignment on matrices)
case("alignment-sparse", lambda: M.alignment(sp.eye(5, format="csr"), np.eye(5)), BOTH, "K1")

# ------------------------------------------------------------ semi-supervised side information
case(
    "GenNys-must_link-and-y",
    lambda: lorak.GeneralizedNystroem(**TINY).fit(X, y_semi, must_link=np.zeros(40, int)),
    VE,
    "must_link",
)
case(
    "GenNys-must_link-length",
    lambda: lorak.GeneralizedNystroem(**TINY).fit(X, must_link=np.zeros(30, int)),
    VE,
    "must_link",
)
case(
    "GenNys-must_link-float",
    lambda: lorak.GeneralizedNystroem(**TINY).fit(X, must_link=np.zeros(40)),
    VE,
    "must_link",
)
case(
    "GenNys-must_link-no-pair",
    lambda: lorak.GeneralizedNystroem(**TINY).fit(X, must_link=np.arange(40)),
    VE,
    "must_link",
)

# ------------------------------------------------------------ pairwise constraints
_ok_ml = np.array([[0, 1], [2, 3]])
case("NPKL-no-constraints", lambda: lorak.SimpleNPKL().fit(X), VE, "must_link")
case(
    "NPKL-must_link-out-of-range",
    lambda: lorak.SimpleNPKL().fit(X, must_link=[[0, 40]]),
    VE,
    "must_link",
)
case(
    "NPKL-cannot_link-negative",
    lambda: lorak.SimpleNPKL().fit(X, must_link=_ok_ml, cannot_link=[[-1, 2]]),
    VE,
    "cannot_link",
)
case(
    "NPKL-must_link-shape", lambda: lorak.SimpleNPKL().fit(X, must_link=[0, 1, 2]), VE, "must_link"
)
case(
    "NPKL-must_link-float",
    lambda: lorak.SimpleNPKL().fit(X, must_link=[[0.5, 1.0]]),
    BOTH,
    "must_link",
)
case(
    "NPKL-contradictory",
    lambda: lorak.SimpleNPKL().fit(X, must_link=[[0, 1]], cannot_link=[[1, 0]]),
    VE,
    "must_link|cannot_link",
)
case("NPKL-self-pair", lambda: lorak.SimpleNPKL().fit(X, must_link=[[3, 3]]), VE, "must_link")
case(
    "check_constraints-contradictory",
    lambda: C.check_constraints([[0, 1]], [[0, 1]], 10),
    VE,
    "must_link|cannot_link",
)
case(
    "check_constraints-out-of-range",
    lambda: C.check_constraints([[0, 10]], None, 10),
    VE,
    "must_link",
)
case("check_constraints-n_samples", lambda: C.check_constraints([[0, 1]], None, 0), VE, "n_samples")
case(
    "check_constraints-n_samples-type",
    lambda: C.check_constraints([[0, 1]], None, 2.5),
    TE,
    "n_samples",
)
case("from_labels-ratio-zero", lambda: C.from_labels(y, ratio=0.0), VE, "ratio")
case("from_labels-ratio-big", lambda: C.from_labels(y, ratio=1.5), VE, "ratio")
case("from_labels-n_pairs-negative", lambda: C.from_labels(y, n_pairs=-1), VE, "n_pairs")
case("from_labels-y-2d", lambda: C.from_labels(np.ones((4, 2))), VE, "y")
case(
    "from_labels-labeled-length", lambda: C.from_labels(y, labeled=np.ones(5, bool)), VE, "labeled"
)
case("from_labels-unreachable", lambda: C.from_labels(y, ratio=0.01), VE, "ratio")
case(
    "must_link_components-out-of-range",
    lambda: C.must_link_components([[0, 9]], 5),
    VE,
    "must_link",
)
case(
    "constraint_matrix-signs-length", lambda: C.constraint_matrix([[0, 1]], [1, -1], 5), VE, "signs"
)

# ------------------------------------------------------------ kernels
case("make_kernel-unknown", lambda: K.make_kernel("no_such_kernel"), VE, "kernel")
case("make_kernel-bad-param", lambda: K.make_kernel("linear", gamma=1.0), VE, "gamma")
case("Gaussian-bandwidth-negative", lambda: K.Gaussian(bandwidth=-1.0), VE, "bandwidth")
case("Gaussian-bandwidth-nan", lambda: K.Gaussian(bandwidth=float("nan")), VE, "bandwidth")
case("Gaussian-bandwidth-string", lambda: K.Gaussian(bandwidth="wide"), VE, "bandwidth")
case("Gaussian-gamma-zero", lambda: K.Gaussian(gamma=0.0), VE, "gamma")
case("Gaussian-gamma-string", lambda: K.Gaussian(gamma="x"), TE, "gamma")
case("Gaussian-both", lambda: K.Gaussian(bandwidth=1.0, gamma=1.0), VE, "bandwidth")
case("Laplacian-norm", lambda: K.Laplacian(norm="l3"), VE, "norm")
case("InverseDistance-eps", lambda: K.InverseDistance(eps=0.0), VE, "eps")
case("Polynomial-degree", lambda: K.Polynomial(degree=0), VE, "degree")
case("Polynomial-coef0", lambda: K.Polynomial(coef0=-1.0), VE, "coef0")
case("CallableKernel-not-callable", lambda: K.CallableKernel(3), TE, "function")
case("KernelBank-empty", lambda: K.KernelBank([]), VE, "kernel")
case("KernelBank-factors", lambda: K.KernelBank.gaussian(factors=[1.0, -2.0]), VE, "factors")
case(
    "KernelBank-both",
    lambda: K.KernelBank.gaussian(factors=[1.0], bandwidths=[1.0]),
    VE,
    "bandwidths",
)
case(
    "kernel_block-features", lambda: K.kernel_block(K.Gaussian(bandwidth=1.0), X, X_4feat), VE, "Z"
)
case("kernel_call-X-1d", lambda: K.Gaussian(bandwidth=1.0)(X_1d), VE, "X")
case(
    "kernel_product-R-rows",
    lambda: K.kernel_product(K.Linear(), X, X[:5], np.ones((4, 2))),
    VE,
    "R",
)
case("kernel_block-X-strings", lambda: K.kernel_block(K.Linear(), X_str, X), TE, "X")
case("kernel_call-list", lambda: K.Linear()([1.0, 2.0]), VE, "X")

# ------------------------------------------------------------ landmarks
case(
    "select_landmarks-unknown",
    lambda: select_landmarks("nope", X, 3, rng=np.random.default_rng(0)),
    VE,
    "landmarks",
)
case(
    "select_landmarks-none",
    lambda: select_landmarks(None, X, 3, rng=np.random.default_rng(0)),
    VE,
    "landmarks",
)
case(
    "select_landmarks-too-many",
    lambda: select_landmarks("uniform", X, 41, rng=np.random.default_rng(0)),
    VE,
    "n_landmarks",
)
case("register_landmarks-not-callable", lambda: register_landmarks("x", 3), TE, "strategy")

# ------------------------------------------------------------ metrics
case("alignment-not-square", lambda: M.alignment(np.ones((3, 4)), np.ones((3, 4))), VE, "K1")
case("alignment-shapes", lambda: M.alignment(np.eye(3), np.eye(4)), VE, "K2")
case("alignment-nan", lambda: M.alignment(_with(np.eye(3), 0, np.nan), np.eye(3)), VE, "K1")
case(
    "factor_alignment-rows", lambda: M.factor_alignment(np.ones((4, 2)), np.ones((5, 2))), VE, "G2"
)
case("factor_alignment-1d", lambda: M.factor_alignment(np.ones(4), np.ones((4, 2))), VE, "G1")
case("ideal_kernel_factor-2d", lambda: M.ideal_kernel_factor(np.ones((4, 2))), VE, "y")
case(
    "pairwise_cluster_accuracy-lengths",
    lambda: M.pairwise_cluster_accuracy([0, 1, 1], [0, 1]),
    VE,
    "labels_pred",
)
case(
    "pairwise_cluster_accuracy-2d",
    lambda: M.pairwise_cluster_accuracy(np.ones((3, 2)), [0, 1, 1]),
    VE,
    "labels_true",
)
case(
    "approximation_error-norm",
    lambda: M.approximation_error(K.Linear(), X, X, norm="no_such_norm"),
    VE,
    "norm",
)
case("frobenius_error-rows", lambda: M.frobenius_error(K.Linear(), X, X[:5]), VE, "G")
case("trace_error-nan", lambda: M.trace_error(K.Linear(), X, X_nan), VE, "G")
case("quantization_error-features", lambda: M.quantization_error(X, X_4feat), VE, "points")

# ------------------------------------------------------------ sparse where unsupported
_ys = sp.csr_matrix(y.reshape(1, -1))
case("factor_alignment-sparse", lambda: M.factor_alignment(sp.csr_matrix(X), X), TE, "G1")
case("alignment-sparse-K2", lambda: M.alignment(np.eye(4), sp.eye(4, format="csr")), TE, "K2")
case("ideal_kernel_factor-sparse", lambda: M.ideal_kernel_factor(_ys), VE, "y")
case(
    "pairwise_cluster_accuracy-sparse",
    lambda: M.pairwise_cluster_accuracy(_ys, y),
    VE,
    "labels_true",
)
case(
    "frobenius_error-G-sparse", lambda: M.frobenius_error(K.Linear(), X, sp.csr_matrix(X)), VE, "G"
)
case("from_labels-y-sparse", lambda: C.from_labels(_ys), VE, "y")
case(
    "NPKL-must_link-sparse",
    lambda: lorak.SimpleNPKL().fit(X, must_link=sp.csr_matrix(np.array([[0, 1]]))),
    TE,
    "must_link",
)
case("GenNys-y-sparse", lambda: lorak.GeneralizedNystroem(**TINY).fit(X, _ys), BOTH, "y")

# ------------------------------------------------------------ random_state
for _name in ("Nystroem", "GeneralizedNystroem", "CSI", "KernelKMeans", "SimpleNPKL"):
    case(f"{_name}-random_state-string", _fit(_name, X, random_state="seed"), VE, "random_state")

# ------------------------------------------------------------ datasets
case("datasets-unknown-name", lambda: lorak.datasets.load("no_such_dataset"), VE, "dataset")
case("datasets-split", lambda: lorak.datasets.load("twonorm", split="nope"), VE, "split")
case("datasets-n_samples", lambda: lorak.datasets.load("twonorm", n_samples=-5), VE, "n_samples")
case("datasets-dtype", lambda: lorak.datasets.load("twonorm", dtype=np.int32), VE, "dtype")
case(
    "datasets-n_samples-not-generated",
    lambda: lorak.datasets.load("iris", n_samples=10),
    VE,
    "n_samples",
)

# ------------------------------------------------------------ config and persistence
case(
    "set_config-memory_budget-small",
    lambda: lorak.set_config(memory_budget=10),
    VE,
    "memory_budget",
)
case(
    "set_config-memory_budget-type",
    lambda: lorak.set_config(memory_budget="1GB"),
    TE,
    "memory_budget",
)
case(
    "save-callable-kernel",
    lambda: lorak.save(_nys(kernel=lambda a, b: a @ b.T), "no-such-dir/model.lorak"),
    VE,
    "kernel",
)


@pytest.mark.parametrize(("call", "exc", "arg"), CASES)
def test_bad_input_raises_naming_the_argument(call, exc, arg):
    with pytest.raises(exc) as info:
        call()
    msg = str(info.value)
    pattern = rf"(?<![A-Za-z0-9_])({arg})(?![A-Za-z0-9_])"
    assert re.search(pattern, msg), f"message does not name {arg!r}: {msg!r}"


def test_case_count():
    assert len(CASES) >= 300, len(CASES)

"""Adversarial sweep, estimators: every exported estimator (the table ``ESTIMATORS``)
fed scaled, offset, float32, integer, non-finite and constant data, odd seeds, extreme
kernel parameters and hyper-parameters, and every label convention.

Part of the adversarial sweep: the outcome rules are in ``tests/_adversarial.py``,
``tests/test_adversarial.py`` gathers every area's table."""

from __future__ import annotations

import numpy as np

import lorak
import lorak.datasets
from _adversarial import (
    _RANGE_ERR,
    ESTIMATORS,
    PYTESTMARK,
    X,
    _apply,
    _factor_in_range,
    _finite,
    _fit_call,
    _fit_none,
    _fit_reg,
    _fit_semi,
    _fit_y,
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

# --------------------------------------------------------------------------- cases

SCALES_FAST = (1e-100, 1e-30, 1e30, 1e100)
SCALES_SLOW = (1e-150, 1e-10, 1e10, 1e150)
OFFSETS = (1e4, 1e8, -1e8)

for _name in ESTIMATORS:
    for _c in SCALES_FAST + SCALES_SLOW:
        # 1e±150: squared distances near float64's limits; a clear error is acceptable
        case(
            f"{_name}-scale-{_c:g}",
            _fit_call(_name, X * _c),
            check=_same_as_reference(_name),
            error=_RANGE_ERR if abs(np.log10(_c)) > 120 else None,
            slow=_c in SCALES_SLOW,
        )
    for _o in OFFSETS:
        # X + 1e8 holds X to ~1e-8 absolute: the learned kernel agrees to ~1e-6
        case(
            f"{_name}-offset-{_o:g}",
            _fit_call(_name, X + _o),
            check=_same_as_reference(_name, atol=1e-4),
            slow=_o == -1e8,
        )
    case(
        f"{_name}-float32",
        _fit_call(_name, X.astype(np.float32)),
        check=_same_as_reference(_name, atol=2e-2),
    )
    case(f"{_name}-int", _fit_call(_name, np.round(X * 100).astype(np.int64)), check=_finite)
    case(
        f"{_name}-fortran", _fit_call(_name, np.asfortranarray(X)), check=_same_as_reference(_name)
    )
    case(
        f"{_name}-X-nan",
        _fit_call(_name, np.where(np.arange(300).reshape(60, 5) == 7, np.nan, X)),
        error=r"\bX\b.*(nan|infinity)",
    )
    case(
        f"{_name}-X-inf",
        _fit_call(_name, np.where(np.arange(300).reshape(60, 5) == 9, np.inf, X)),
        error=r"\bX\b.*(nan|infinity)",
    )
    case(
        f"{_name}-X-huge",
        _fit_call(_name, X * 1e300),
        check=_same_as_reference(_name),
        error=_RANGE_ERR,
    )
    case(
        f"{_name}-X-tiny",
        _fit_call(_name, X * 1e-160),
        check=_same_as_reference(_name),
        error=_RANGE_ERR,
    )
    case(
        f"{_name}-X-constant",
        _fit_call(_name, np.ones((60, 5))),
        check=_finite,
        error=r"(identical|constant|degenerate|zero|bandwidth|single|one class|cluster)",
    )

# float32 stays float32 where promised
for _name in ("Nystroem", "IncompleteCholesky", "ExactEigen", "LowRankKernelPCA"):

    def _f32(name=_name):
        return _output(name, X.astype(np.float32))

    def _is_f32(out):
        assert np.asarray(out).dtype == np.float32, f"float32 input gave {np.asarray(out).dtype}"

    case(f"{_name}-float32-dtype", _f32, check=_is_f32)

# random_state = -1 and other seeds
for _name in ESTIMATORS:
    _p = ESTIMATORS[_name][0]().get_params(deep=False)
    if "random_state" in _p:
        case(
            f"{_name}-random_state--1", _fit_call(_name, X, random_state=-1), error=r"random_state"
        )
        case(
            f"{_name}-random_state-str",
            _fit_call(_name, X, random_state="abc"),
            error=r"random_state",
        )

# y with NaN / inf for supervised estimators
_NAN_IS_UNLABELED = {"SemiSupervisedFactorRegressor"}
for _name, (_, _fit, _, _) in ESTIMATORS.items():
    if _fit in (_fit_y, _fit_semi, _fit_reg):
        _base = {_fit_y: y, _fit_semi: y_semi, _fit_reg: y_reg}[_fit].astype(float)
        _yn = _base.copy()
        _yn[3] = np.nan
        if _name in _NAN_IS_UNLABELED:
            continue
        case(f"{_name}-y-nan", _fit_call(_name, X, _yn), error=r"\by\b.*(nan|infinity|label|class)")


# NaN marks an unlabeled response for the semi-supervised regressor: the fit must equal
# the fit on the labeled rows' responses with that row unlabeled, and inf is refused
def _nan_row_unlabeled(name):
    def call():
        yn = y_reg.astype(float).copy()
        yn[3] = np.nan
        est = ESTIMATORS[name][1](ESTIMATORS[name][0](), X, yn)
        return est

    def check(est):
        assert 3 not in set(est.labeled_indices_.tolist())
        assert est.labeled_indices_.size == X.shape[0] - 1
        assert np.all(np.isfinite(est.predict(X)))

    return call, check


for _name in sorted(_NAN_IS_UNLABELED):
    _call, _check = _nan_row_unlabeled(_name)
    case(f"{_name}-y-nan-is-unlabeled", _call, check=_check)
    _yi = y_reg.astype(float).copy()
    _yi[3] = np.inf
    case(f"{_name}-y-inf", _fit_call(_name, X, _yi), error=r"\by\b.*(nan|infinity|inf|finite)")

# extreme kernel parameters
for _name, _cls in (
    ("Nystroem", lorak.Nystroem),
    ("IncompleteCholesky", lorak.IncompleteCholesky),
    ("ExactEigen", lorak.ExactEigen),
    ("CSI", lorak.CSI),
    ("GeneralizedNystroem", lorak.GeneralizedNystroem),
):
    _fit = _fit_y if _name == "CSI" else _fit_semi if _name == "GeneralizedNystroem" else _fit_none
    for _kw in ({"gamma": 1e300}, {"bandwidth": 1e-300}, {"bandwidth": 1e300}, {"gamma": 1e-300}):

        def _ext(cls=_cls, kw=_kw, fit=_fit):
            est = cls(n_components=8, **kw)
            if "random_state" in est.get_params():
                est.set_params(random_state=0)
            return fit(est, X).transform(X)

        case(
            f"{_name}-{'-'.join(f'{k}={v:g}' for k, v in _kw.items())}",
            _ext,
            check=_factor_in_range,
            error=r"(gamma|bandwidth)",
        )

# LowRankMKLClassifier hyper-parameters
_MKL = ESTIMATORS["LowRankMKLClassifier"][0]
for _kw, _pat in (
    ({"compress_rtol": -1}, "compress_rtol"),
    ({"compress_rtol": 2}, "compress_rtol"),
    ({"kernels": "abc"}, "kernels"),
    ({"kernels": "gaussian"}, "kernels"),
    ({"p": 0.5}, r"\bp\b"),
    ({"sigma_range": (5.0, 1.0), "kernels": None}, "sigma_range"),
    ({"rtol": -1}, "rtol"),
    ({"rtol": 2}, "rtol"),
):
    case(
        f"LowRankMKLClassifier-{next(iter(_kw))}-{next(iter(_kw.values()))}",
        lambda kw=_kw: _MKL(**kw).fit(X, y),
        error=_pat,
    )
for _name in (
    "ABMKL",
    "UniformKernelSum",
    "AlignmentMKLClassifier",
    "MultipleKernelGeneralizedNystroem",
):
    case(
        f"{_name}-kernels-str",
        lambda name=_name: ESTIMATORS[name][1](ESTIMATORS[name][0](kernels="abc"), X),
        error="kernels",
    )
for _name in ("Nystroem", "ABMKL", "UniformKernelSum"):
    for _r in (-1, 2, float("nan")):
        case(
            f"{_name}-rtol-{_r}",
            lambda name=_name, r=_r: ESTIMATORS[name][1](ESTIMATORS[name][0](rtol=r), X),
            error="rtol",
        )


# label conventions: LIBSVM's {-1, +1}, strings, {1, 2}, booleans, floats. A supervised
# classifier learns both classes; an estimator for which -1 marks an unlabeled row
# must refuse {-1, +1} with an error that says so (only one class would be labeled).
_LABEL_SETS = {
    "pm1": np.where(y == 1, 1, -1),
    "str": np.where(y == 1, "pos", "neg"),
    "12": y + 1,
    "bool": y.astype(bool),
    "float": y.astype(float),
}


def _label_case(name, labels):
    fit, method = ESTIMATORS[name][1], ESTIMATORS[name][2]

    def call():
        est = fit(ESTIMATORS[name][0](), X, labels)
        return est, _apply(est, method, X)

    def check(res):
        est, out = res
        out = np.asarray(out)
        if out.dtype.kind in "biufc":
            _finite(out)
        classes = getattr(est, "classes_", None)
        if classes is not None:
            assert set(np.asarray(classes).tolist()) == set(np.unique(labels).tolist()), (
                f"classes_ {classes!r} are not the labels given {np.unique(labels)!r}"
            )
        if hasattr(est, "predict") and classes is not None:
            pred = est.predict(X)
            assert set(np.unique(pred).tolist()) <= set(np.unique(labels).tolist())

    return call, check


for _name, (_, _fit, _, _) in ESTIMATORS.items():
    if _fit not in (_fit_y, _fit_semi):
        continue
    for _lk, _labels in _LABEL_SETS.items():
        _call, _check = _label_case(_name, _labels)
        _err = r"unlabeled" if _lk == "pm1" else r"(\by\b|label|class)"
        case(f"{_name}-labels-{_lk}", _call, check=_check, error=_err)


# --------------------------------------------------------------------------- the test


@parametrize_cases(CASES)
def test_case(c):
    check_case(c)

"""Input validation shared by every estimator and public function.

Errors name the offending argument and say what was expected and what was found.
"""

from __future__ import annotations

import numbers
import re

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_array, check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import column_or_1d
from sklearn.utils.validation import validate_data as _sk_validate_data

__all__ = [
    "UNLABELED",
    "as_float64",
    "check_bool",
    "check_classification_y",
    "check_data",
    "check_generator",
    "check_in_choices",
    "check_lambda",
    "check_n_components",
    "check_positive",
    "check_rtol",
    "float_dtype",
    "one_class_error",
    "parse_class_labels",
    "parse_semi_supervised_response",
    "parse_semi_supervised_y",
    "validate_data",
]


def validate_data(_estimator, /, X="no_validation", y="no_validation", **kwargs):
    """:func:`sklearn.utils.validation.validate_data` whose errors name the argument.

    scikit-learn's messages for a 1-D, 3-D, empty or non-numeric X (and for X and y of
    different lengths, or a non-numeric y) do not say which argument is wrong; these are
    re-raised, same type, with "X: ", "y: " or "X and y: " in front. Messages that
    already name X or y pass through unchanged.
    """
    try:
        return _sk_validate_data(_estimator, X, y, **kwargs)
    except (ValueError, TypeError) as exc:
        msg = str(exc)
        if type(exc) not in (ValueError, TypeError) or re.search(r"\b[Xy]\b", msg):
            raise
        has_y = not (isinstance(y, str) and y == "no_validation") and y is not None
        if has_y and "inconsistent numbers of samples" in msg:
            name = "X and y"
        elif has_y and ((isinstance(X, str) and X == "no_validation") or _looks_numeric_2d(X)):
            name = "y"
        else:
            name = "X"
        raise type(exc)(f"{name}: {msg}") from exc


def float_dtype(*arrays) -> np.dtype:
    """float32 if every array is float32, else float64 (the library default)."""
    for a in arrays:
        if a is None:
            continue
        if np.dtype(getattr(a, "dtype", np.float64)) != np.float32:
            return np.dtype(np.float64)
    return np.dtype(np.float32)


def as_float64(A):
    """A float64 version of a dense array or sparse matrix (no copy when it already is)."""
    if sp.issparse(A):
        return A.astype(np.float64) if A.dtype != np.float64 else A
    return np.asarray(A, dtype=np.float64)


def check_data(
    X,
    *,
    name: str = "X",
    accept_sparse: bool = True,
    min_samples: int = 1,
    dtype=(np.float64, np.float32),
    copy: bool = False,
):
    """Validate a 2-D data matrix: finite, numeric, float32/float64, dense or CSR.

    Wraps :func:`sklearn.utils.check_array` and rewrites its messages so that they
    name ``name``. Sparse input is converted to CSR when ``accept_sparse``.
    """
    if isinstance(X, (list, tuple)) and len(X) == 0:
        raise ValueError(f"{name} is empty: expected a 2-D array with at least one row")
    try:
        out = check_array(
            X,
            accept_sparse=["csr"] if accept_sparse else False,
            dtype=list(dtype) if isinstance(dtype, tuple) else dtype,
            ensure_2d=True,
            ensure_min_samples=min_samples,
            ensure_all_finite=True,
            input_name=name,
            copy=copy,
        )
    except TypeError as exc:
        if "sparse" in str(exc).lower():
            raise TypeError(
                f"{name} is a sparse matrix, but this method needs a dense array; "
                f"convert with {name}.toarray() if it fits in memory"
            ) from exc
        raise
    except ValueError as exc:
        msg = str(exc)
        if "could not convert" in msg or ("dtype" in msg.lower() and "object" in msg.lower()):
            raise ValueError(f"{name} must be numeric; got {msg}") from exc
        raise
    if sp.issparse(out):
        out = out.tocsr()
    return out


def _looks_numeric_2d(X) -> bool:
    if sp.issparse(X):
        return True
    try:
        a = np.asarray(X)
    except Exception:
        return False
    return a.ndim == 2 and a.size > 0 and a.dtype.kind in "biuf" and bool(np.isfinite(a).all())


def check_classification_y(y, name: str = "y") -> None:
    """:func:`sklearn.utils.multiclass.check_classification_targets`, naming ``name``."""
    try:
        check_classification_targets(y)
    except ValueError as exc:
        raise ValueError(f"{name} must hold class labels: {exc}") from exc


def check_bound(value, name: str, *, low=0, strict: bool = True, integer: bool = False):
    """Return ``value`` if it is a finite number (an integer with ``integer``) above
    ``low`` (``strict``) or at least ``low``, else raise TypeError / ValueError."""
    kind = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kind):
        what = "an integer" if integer else "a number"
        raise TypeError(f"{name} must be {what}; got {value!r} ({type(value).__name__})")
    if not np.isfinite(value) or (value <= low if strict else value < low):
        op = ">" if strict else ">="
        raise ValueError(f"{name} must be {op} {low}; got {value!r}")
    return value


def check_positive(value, name: str, *, strict: bool = True, integer: bool = False):
    """Return ``value`` if it is a (strictly) positive finite number, else raise."""
    return check_bound(value, name, low=0, strict=strict, integer=integer)


def check_in_choices(value, name: str, choices) -> str:
    """``value`` if it is one of the string ``choices``, else a ValueError listing them."""
    if not isinstance(value, str) or value not in choices:
        valid = ", ".join(repr(c) for c in sorted(choices))
        raise ValueError(f"unknown {name} {value!r}; valid names are {valid}")
    return value


def check_generator(random_state) -> np.random.Generator:
    """Turn ``random_state`` (None, int, RandomState, Generator) into a Generator.

    Constructors only store ``random_state``; ``fit`` calls this once and passes the
    Generator down as ``rng``. A RandomState is used only to draw a seed.
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or isinstance(random_state, (numbers.Integral, np.integer)):
        if isinstance(random_state, (bool, np.bool_)) or (
            random_state is not None and random_state < 0
        ):
            raise ValueError(
                "random_state must be None, a non-negative int, a numpy RandomState or a "
                f"numpy Generator; got {random_state!r}"
            )
        return np.random.default_rng(random_state)
    try:
        rs = check_random_state(random_state)
    except ValueError as exc:
        raise ValueError(
            "random_state must be None, an int, a numpy RandomState or a numpy Generator; "
            f"got {random_state!r}"
        ) from exc
    return np.random.default_rng(rs.randint(np.iinfo(np.int32).max))


def check_n_components(m, n_samples: int, *, what: str = "a rank-{m} factor needs") -> int:
    """``n_components`` as an int in [1, n_samples]; ``what`` says what needs m rows.

    The upper bound is the number of rows: m landmarks, pivots or eigenpairs need at
    least m rows of X.
    """
    if isinstance(m, bool) or not isinstance(m, numbers.Integral):
        raise TypeError(f"n_components must be an integer; got {m!r}")
    if m < 1:
        raise ValueError(f"n_components must be >= 1; got {m}")
    if m > n_samples:
        need = what.format(m=m)
        raise ValueError(
            f"n_components={m} exceeds n_samples={n_samples}: {need} at least {m} "
            "rows; lower n_components"
        )
    return int(m)


def check_rtol(rtol):
    """``rtol``: None (the dtype's default) or a number in [0, 1)."""
    if rtol is not None and not (
        isinstance(rtol, numbers.Real) and not isinstance(rtol, bool) and 0 <= rtol < 1
    ):
        raise ValueError(f"rtol must be a number in [0, 1); got {rtol!r}")
    return rtol


def check_bool(value, name: str) -> bool:
    """``value`` if it is True or False (numpy's bool too), else a TypeError."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False; got {value!r}")
    return bool(value)


def check_lambda(lam, lam_grid, default_grid) -> np.ndarray:
    """Validate ``lam`` ("auto" or a number > 0) and return the λ grid as a float array.

    ``lam_grid=None`` means ``default_grid`` (the estimator's own default path).
    """
    if isinstance(lam, str):
        if lam != "auto":
            raise ValueError(f"lam must be 'auto' or a positive number; got {lam!r}")
    elif isinstance(lam, bool) or not isinstance(lam, numbers.Real) or not lam > 0:
        raise ValueError(f"lam must be 'auto' or a positive number; got {lam!r}")
    grid = default_grid if lam_grid is None else lam_grid
    g = np.asarray(grid, dtype=np.float64).ravel()
    if g.size == 0 or not np.all(np.isfinite(g) & (g > 0)):
        raise ValueError(f"lam_grid must be a non-empty sequence of positive numbers; got {grid!r}")
    return g


# ------------------------------------------------------------ semi-supervised labels

#: The label of an unlabeled row (scikit-learn's semi-supervised convention).
UNLABELED = -1


def _is_unlabeled(y) -> np.ndarray:
    """Boolean mask of entries equal to −1 (numbers, objects, or the string "-1")."""
    if y.dtype.kind in "iuf":
        return y == UNLABELED
    if y.dtype.kind in "US":
        return y == str(UNLABELED)
    return np.array([(v == UNLABELED) is True or v == str(UNLABELED) for v in y], dtype=bool)


def parse_semi_supervised_y(y, n_samples: int, *, owner: str):
    """Split ``y`` into (labeled row indices, their labels); −1 marks unlabeled rows.

    Raises with messages that name the fix: y missing, wrong length, NaN/None used as
    the unlabeled marker, no labeled row, a single labeled class, continuous labels.
    """
    if y is None:
        raise ValueError(
            f"{owner} requires y to be passed, but the target y is None; give class labels "
            "with -1 for unlabeled rows (or must_link= groups)"
        )
    y = column_or_1d(y, warn=True)
    if y.shape[0] != n_samples:
        raise ValueError(f"y has {y.shape[0]} entries, but X has {n_samples} rows")
    if y.dtype.kind == "f" and np.isnan(y).any():
        raise ValueError(
            "y contains NaN; mark unlabeled rows with -1 (the scikit-learn "
            "semi-supervised convention)"
        )
    if y.dtype.kind == "O" and any(v is None for v in y):
        raise ValueError("y contains None; mark unlabeled rows with -1")
    unlabeled = _is_unlabeled(y)
    labeled = np.flatnonzero(~unlabeled)
    if labeled.size == 0:
        raise ValueError(
            "y has no labeled rows (all -1); give labeled rows of at least two classes"
        )
    y_l = y[labeled]
    check_classification_y(y_l)
    classes = np.unique(y_l)
    if classes.size < 2:
        raise one_class_error(classes[0], owner, unlabeled=unlabeled)
    return labeled, y_l


def parse_class_labels(y, n_samples: int, *, owner: str):
    """Class labels of a semi-supervised fit: (labeled rows, their labels, classes).

    −1 marks unlabeled rows (:func:`parse_semi_supervised_y`); a float y holding NaN is
    refused with the hint that NaN marks unlabeled rows of real-valued responses
    (``target="regression"``); the labeled rows must hold two classes at least.
    """
    yv = np.asarray(y) if y is not None else None
    if yv is not None and yv.dtype.kind == "f" and np.isnan(yv).any():
        raise ValueError(
            f"{owner}: y contains NaN; mark unlabeled rows with -1 for class labels (the "
            "scikit-learn semi-supervised convention), or pass target='regression' for "
            "real-valued responses with NaN on the unlabeled rows"
        )
    rows, y_l = parse_semi_supervised_y(y, n_samples, owner=owner)
    return rows, y_l, np.unique(y_l)


def parse_semi_supervised_response(y, n_samples: int, *, owner: str):
    """Split a real-valued ``y`` into (labeled row indices, responses); NaN = unlabeled.

    For regression targets NaN marks the unlabeled rows and −1 is an ordinary value
    (−1 stays the marker of class labels). At least 2 labeled rows, all finite.
    """
    if y is None:
        raise ValueError(
            f"{owner} requires y to be passed, but the target y is None; give responses "
            "with NaN on the unlabeled rows"
        )
    y = column_or_1d(y, warn=True)
    if y.shape[0] != n_samples:
        raise ValueError(f"y has {y.shape[0]} entries, but X has {n_samples} rows")
    try:
        y = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"{owner}: a regression target needs numeric y (NaN = unlabeled); got {exc}"
        ) from exc
    if np.isinf(y).any():
        raise ValueError(f"{owner}: y contains infinity; mark unlabeled rows with NaN")
    rows = np.flatnonzero(~np.isnan(y))
    if rows.size < 2:
        raise ValueError(
            f"{owner}: y has n_samples={rows.size} labeled row(s) (NaN = unlabeled); a "
            "regression target needs at least 2"
        )
    return rows, y[rows]


def _row_list(rows, shown: int = 5) -> str:
    head = ", ".join(str(int(i)) for i in rows[:shown])
    return head + (", …" if rows.size > shown else "")


def one_class_error(label, owner, *, unlabeled=None) -> ValueError:
    """The error for labeled rows of a single class: the ideal kernel is then constant.

    ``unlabeled``: the boolean mask of the rows read as unlabeled (−1). When some rows
    hold −1 the message says so — which rows, how many — and that −1 is the unlabeled
    marker, not a class: LIBSVM-style labels {−1, +1} arrive as one class plus
    unlabeled rows, and need recoding (``y = (y + 1) // 2``).
    """
    if "GeneralizedNystroem" in str(owner):  # the label-learned kernels
        msg = (
            f"y has one class among its labeled rows (label {label!r}), so the ideal "
            "kernel (eq. 6) is constant and carries no information; label rows of at "
            f"least two classes, or pass must-link groups to {owner}.fit(X, must_link=...)"
        )
    else:
        msg = (
            f"{owner}: y has one class among its labeled rows (label {label!r}); a "
            "classifier needs labeled rows of at least two classes"
        )
    if unlabeled is not None and np.any(unlabeled):
        rows = np.flatnonzero(unlabeled)
        msg += (
            f". Note: -1 marks an unlabeled row (the scikit-learn semi-supervised "
            f"convention), and {rows.size} of {np.size(unlabeled)} rows hold -1, so they "
            f"were read as unlabeled (rows {_row_list(rows)}). If -1 is a class here "
            "(LIBSVM-style labels {-1, +1}), recode y to non-negative class codes, e.g. "
            "y = (y + 1) // 2, and mark the unlabeled rows with -1"
        )
    return ValueError(msg)

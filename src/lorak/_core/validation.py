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
from sklearn.utils.validation import validate_data as _sk_validate_data

from .array_api import array_namespace, device_of, has_float64, is_foreign, namespace_name, to_numpy
from .chunked import record_n_features
from .config import array_api_dispatch_enabled

__all__ = [
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
    "validate_data",
]


def validate_data(_estimator, /, X="no_validation", y="no_validation", **kwargs):
    """:func:`sklearn.utils.validation.validate_data` whose errors name the argument.

    scikit-learn's messages for a 1-D, 3-D, empty or non-numeric X (and for X and y of
    different lengths, or a non-numeric y) do not say which argument is wrong; these are
    re-raised, same type, with "X: ", "y: " or "X and y: " in front. Messages that
    already name X or y pass through unchanged.

    Array API input with dispatch enabled stays in its namespace and on its device for
    an estimator whose class sets ``_array_api_support = True`` (any other raises a
    ``TypeError``); with dispatch off it is converted to NumPy (:ref:`guide-gpu`).
    """
    if is_foreign(X):
        X = _foreign_input(_estimator, X)
        if is_foreign(X):
            return _validate_foreign(_estimator, X, y, **kwargs)
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


#: What the array API path covers (for the messages of the estimators it does not).
ARRAY_API_SUPPORTED = (
    "Nystroem (fit, transform, inverse_transform), GeneralizedNystroem (transform; its fit "
    "runs on the host), GraphRegularizedFactor (anchor graph, kernel weights), "
    "SemiSupervisedFactorClassifier, SemiSupervisedFactorRegressor, LSSVC, LSSVR and the "
    "kernels of lorak.kernels"
)


def _foreign_input(estimator, X):
    """X itself when the estimator computes on it in its namespace, else a NumPy copy
    (dispatch off, host memory), else a TypeError that says what to do."""
    name = type(estimator).__name__
    lib = namespace_name(X)
    if array_api_dispatch_enabled():
        if getattr(estimator, "_array_api_support", False):
            return X
        raise TypeError(
            f"{name} does not support array API inputs (got a {lib} array) and array API "
            f"dispatch is enabled: {name} computes with NumPy only. Pass a NumPy array "
            "(e.g. X.cpu().numpy() for a torch tensor), or disable dispatch with "
            "lorak.set_config(array_api_dispatch=False) (and scikit-learn's) to have it "
            f"converted. Array API inputs are supported by {ARRAY_API_SUPPORTED}"
        )
    try:
        return to_numpy(X)
    except Exception as exc:
        raise TypeError(
            f"X is a {lib} array on device {device_of(X)!s}, which NumPy cannot read, and "
            "array API dispatch is off. Enable it to compute on that device "
            "(lorak.set_config(array_api_dispatch=True), for the estimators that support "
            f"it: {ARRAY_API_SUPPORTED}), or move X to the host first (e.g. X.cpu().numpy())"
        ) from exc


def _foreign_all_finite(xp, X) -> bool:
    """Whether every entry of the 2-D array API array X is finite, with O(rows) extra
    memory: ``isfinite`` of the whole array would hold n × d booleans (and PyTorch's
    |X|, n × d floats, besides).

    Finite row sums prove finite data; otherwise the exact test decides, in row chunks.
    """
    with np.errstate(over="ignore", invalid="ignore"):  # NumPy-backed namespaces
        if bool(xp.all(xp.isfinite(xp.sum(X, axis=1)))):
            return True
    from .config import get_config

    n, d = X.shape
    itemsize = 4 if X.dtype == xp.float32 else 8
    step = max(1, get_config()["memory_budget"] // (d * (itemsize + 3)))
    return all(bool(xp.all(xp.isfinite(X[s : min(s + step, n), ...]))) for s in range(0, n, step))


def _validate_foreign(estimator, X, y="no_validation", *, reset=True, **kwargs):
    """The checks of :func:`validate_data` for an array API X, in its own namespace.

    X: 2-D, at least one row and one column, real numbers (integers and booleans become
    float64, or float32 on a device without float64), finite. ``n_features_in_`` is set
    (``reset``) or checked; y (when given) is read on the host as NumPy.
    """
    xp = array_namespace(X)
    if X.ndim != 2:
        raise ValueError(
            f"X: Expected a 2-dimensional array (n_samples, n_features), got a {X.ndim}-D "
            f"{namespace_name(X)} array"
        )
    n, d = X.shape
    if n < kwargs.get("ensure_min_samples", 1) or n < 1:
        raise ValueError(f"X: Found array with {n} sample(s) while a minimum of 1 is required")
    if d < 1:
        raise ValueError(f"X: Found array with {d} feature(s) while a minimum of 1 is required")
    if X.dtype not in (xp.float32, xp.float64):
        if xp.isdtype(X.dtype, ("integral", "bool")) or X.dtype == xp.bool:
            dev = device_of(X)
            X = xp.astype(X, xp.float64 if has_float64(xp, dev) else xp.float32)
        else:
            raise ValueError(f"X must hold real numbers; got dtype {X.dtype}")
    if not _foreign_all_finite(xp, X):
        raise ValueError("Input X contains NaN or infinity.")
    record_n_features(estimator, d, reset=reset)
    if y is None or (isinstance(y, str) and y == "no_validation"):
        return X
    y = to_numpy(y) if is_foreign(y) else np.asarray(y)
    if y.shape[0] != n:
        raise ValueError(f"X and y: y has {y.shape[0]} rows but X has {n}")
    if kwargs.get("y_numeric") and y.dtype.kind not in "biuf":
        raise ValueError(f"y must be numeric; got dtype {y.dtype}")
    return X, y


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


def csr_rows(A):
    """A sparse matrix or array of another format (COO, CSC, DOK, LIL, BSR, DIA) as a
    new CSR one, the format whose row slices the chunked code reads; anything else,
    CSR included, as it is. The input is never modified."""
    if sp.issparse(A) and A.format != "csr":
        return A.tocsr()
    return A


def check_float_array(A, name: str, *, ndim: int = 2, shape=None, what: str = "", empty=False):
    """``A`` as a float64 array of ``ndim`` dimensions, finite, not empty (unless
    ``empty``) and of ``shape`` (None entries: any size), else a TypeError or ValueError
    that names ``name`` (``what`` says why the shape is required)."""
    if A is None or isinstance(A, str) or sp.issparse(A):
        got = "a sparse matrix" if sp.issparse(A) else repr(A)
        raise TypeError(f"{name} must be a dense array of numbers; got {got}")
    try:
        a = np.asarray(A, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be an array of numbers: {exc}") from None
    if a.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array; got shape {a.shape}")
    if a.size == 0 and not empty:
        raise ValueError(f"{name} is empty (shape {a.shape})")
    if shape is not None and any(
        w is not None and w != g for w, g in zip(shape, a.shape, strict=True)
    ):
        want = " × ".join("any" if w is None else str(w) for w in shape)
        raise ValueError(f"{name} must be {want}{f' ({what})' if what else ''}; got {a.shape}")
    bad = np.size(a) - int(np.count_nonzero(np.isfinite(a)))
    if bad:
        raise ValueError(f"{name} holds NaN or infinity ({bad} of {a.size} entries)")
    return a


def number_of_0d(value):
    """The Python number a 0-d NumPy array of a number holds (``np.array(1.0)``, what a
    reduction may return), where a number is asked for; any other ``value`` as it is."""
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        return value.item()
    return value


def check_square_matrix(A, name: str) -> np.ndarray:
    """``A`` as a finite, non-empty, square float64 matrix (:func:`check_float_array`),
    else a TypeError or ValueError naming ``name``."""
    A = check_float_array(A, name)
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"{name} must be a square matrix; got shape {A.shape}")
    return A


def check_number_sequence(
    values, name: str, *, low=0.0, strict=True, allow_inf=False, empty=False
) -> np.ndarray:
    """``values`` (a number or a 1-D sequence of numbers) as a 1-D float64 array whose
    entries are not NaN, finite unless ``allow_inf``, above ``low`` (``strict``) or at
    least ``low``, and not empty unless ``empty``; else a TypeError or ValueError naming
    ``name``."""
    if values is None or isinstance(values, (str, bytes)) or sp.issparse(values):
        raise TypeError(f"{name} must be a sequence of numbers; got {values!r}")
    try:
        a = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a sequence of numbers: {exc}") from None
    if np.asarray(values).dtype.kind == "b":
        raise TypeError(f"{name} must be a sequence of numbers; got {values!r}")
    if a.ndim > 1:
        raise ValueError(f"{name} must be a 1-D sequence of numbers; got shape {a.shape}")
    a = a.ravel()
    if a.size == 0 and not empty:
        raise ValueError(f"{name} is empty: give at least one value")
    if np.isnan(a).any() or (not allow_inf and np.isinf(a).any()):
        kind = "NaN" if allow_inf else "NaN or infinity"
        raise ValueError(f"{name} must not hold {kind}; got {values!r}")
    if np.any(a <= low if strict else a < low):
        op = ">" if strict else ">="
        raise ValueError(f"{name} must hold numbers {op} {low}; got {values!r}")
    return a


def holds_whole_numbers(a) -> bool:
    """Whether a NumPy array holds whole numbers: an integer or boolean dtype, or finite
    floats equal to their rounding (class codes given as 0.0, 1.0, …)."""
    return a.dtype.kind in "biu" or (
        a.dtype.kind == "f" and bool(np.all(np.isfinite(a))) and bool(np.all(a == np.round(a)))
    )

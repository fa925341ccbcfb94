"""Input validation shared by every estimator and public function.

Errors name the offending argument and say what was expected and what was found.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_array, check_random_state

__all__ = [
    "check_data",
    "check_generator",
    "check_in_choices",
    "check_positive",
    "float_dtype",
]


def float_dtype(*arrays) -> np.dtype:
    """float32 if every array is float32, else float64 (the library default)."""
    for a in arrays:
        if a is None:
            continue
        if np.dtype(getattr(a, "dtype", np.float64)) != np.float32:
            return np.dtype(np.float64)
    return np.dtype(np.float32)


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


def check_positive(value, name: str, *, strict: bool = True, integer: bool = False):
    """Return ``value`` if it is a (strictly) positive finite number, else raise."""
    kind = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kind):
        what = "an integer" if integer else "a number"
        raise TypeError(f"{name} must be {what}; got {value!r} ({type(value).__name__})")
    if not np.isfinite(value) or (value <= 0 if strict else value < 0):
        bound = "> 0" if strict else ">= 0"
        raise ValueError(f"{name} must be {bound}; got {value!r}")
    return value


def check_in_choices(value, name: str, choices) -> str:
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
        return np.random.default_rng(random_state)
    rs = check_random_state(random_state)
    return np.random.default_rng(rs.randint(np.iinfo(np.int32).max))

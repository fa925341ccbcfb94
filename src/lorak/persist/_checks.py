"""The rules every saved or loaded estimator obeys, in both formats: the state rules
(:func:`state_problem`) and the one-row probe (:func:`probe`, :func:`check_before_save`).
"""

from __future__ import annotations

import numpy as np


class PersistenceError(ValueError):
    """A file cannot be written or read safely: corrupt, truncated, tampered, from a
    newer format version, or naming a class outside the allowlist."""


def check_mt_state(key, pos, what: str) -> None:
    """An MT19937 state numpy can use: 624 words and a position within them (numpy
    does not check the position; one outside reads out of bounds)."""
    key = np.asarray(key)
    if key.shape != (624,) or key.dtype.kind not in "iu":
        raise PersistenceError(f"corrupt file: {what} MT19937 key of shape {key.shape}")
    if isinstance(pos, bool) or not isinstance(pos, (int, np.integer)) or not 0 <= pos <= 624:
        raise PersistenceError(f"corrupt file: {what} MT19937 position {pos!r} not in [0, 624]")


# attributes whose arrays may hold NaN in a genuine fit (entries never evaluated)
_MAY_HOLD_NAN = frozenset({"duality_gap_", "alignment_scores_", "alignment_factors_"})
# attributes whose arrays may hold +inf (λ = ∞, the prior kernel, is a candidate of the
# generalized Nyström λ selection), but never NaN
_MAY_HOLD_INF = frozenset({"lam_grid_"})


def state_problem(cls: type, attrs: dict) -> str | None:
    """What is wrong with the attribute dict of a lorak object, or None.

    Arrays of a genuine fit are finite (but for the attributes of ``_MAY_HOLD_NAN``
    and ``_MAY_HOLD_INF``), and ``kernel_`` holds a kernel or ``"precomputed"``. The
    same rule runs when saving and when loading (an edited state would otherwise fail
    later, far from the cause).
    """
    if not cls.__module__.startswith("lorak"):
        return None
    from ..kernels import Kernel, KernelBank

    for key, value in attrs.items():
        if (
            isinstance(value, np.ndarray)
            and value.dtype.kind in "fc"
            and key not in _MAY_HOLD_NAN
            and not np.all(np.isfinite(value))
            and not (key in _MAY_HOLD_INF and not np.any(np.isnan(value) | (value == -np.inf)))
        ):
            return f"{key} holds NaN or infinity, which a fitted lorak estimator never stores"
        if key == "kernel_" and not _is_fitted_kernel(value, attrs, (Kernel, KernelBank)):
            got = repr(value)[:80] if isinstance(value, str) else type(value).__name__
            return (
                "kernel_ must be a lorak kernel, or the string 'precomputed' of an "
                f"estimator fitted with kernel='precomputed'; got {got}"
            )
    return None


def _is_fitted_kernel(value, attrs: dict, kernel_types: tuple) -> bool:
    """What a fitted ``kernel_`` may hold: a lorak kernel (or kernel bank), or — for an
    estimator fitted with ``kernel="precomputed"`` (Nystroem, IncompleteCholesky, CSI)
    — the string ``"precomputed"`` itself, which is what those fits store."""
    if isinstance(value, kernel_types):
        return True
    kernel = attrs.get("kernel")
    return (
        isinstance(value, str)
        and value == "precomputed"
        and isinstance(kernel, str)
        and kernel == "precomputed"
    )


def check_state(name: str, cls: type, attrs: dict) -> None:
    """Refuse a decoded lorak object whose state :func:`state_problem` rejects."""
    problem = state_problem(cls, attrs)
    if problem is not None:
        raise PersistenceError(f"corrupt file: {name}.{problem}; the file was altered or damaged")


def _probe_problem(obj) -> tuple[str, BaseException | None] | None:
    """Run one row of zeros through a fitted estimator's first prediction method.

    Returns None when it answers with finite numbers (or the object is not a fitted
    estimator with ``n_features_in_``), else ``(what went wrong, the exception)``."""
    n = getattr(obj, "n_features_in_", None)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        return None
    import warnings

    for method in ("decision_function", "transform", "predict"):
        fn = getattr(obj, method, None)
        if fn is None:
            continue
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                out = fn(np.zeros((1, int(n))))
        except NotImplementedError:  # e.g. a transductive estimator
            continue
        except Exception as exc:
            return f"{method} fails ({type(exc).__name__}: {exc})", exc
        out = np.asarray(out)
        if out.dtype.kind in "fc" and not np.all(np.isfinite(out)):
            return f"{method} gives NaN or infinity", None
        return None
    return None


def probe(obj, path) -> None:
    """Run one row through a loaded fitted estimator: a state that decodes but does
    not fit together (a string where an array belongs, …) fails here, at load time,
    with a PersistenceError, rather than later with an AttributeError."""
    problem = _probe_problem(obj)
    if problem is not None:
        what, exc = problem
        raise PersistenceError(
            f"{path}: the loaded {type(obj).__name__} is inconsistent: {what}; the file "
            "was altered or damaged"
        ) from exc


def check_before_save(estimator) -> None:
    """Refuse to write what :func:`load` would refuse: the same one-row probe that
    ``load`` runs on what it read (the state rules of ``state_problem`` run while
    encoding)."""
    problem = _probe_problem(estimator)
    if problem is not None:
        what, exc = problem
        raise PersistenceError(
            f"cannot save this {type(estimator).__name__}: {what} on a row of zeros, so "
            "lorak.load would refuse the file it would write"
        ) from exc

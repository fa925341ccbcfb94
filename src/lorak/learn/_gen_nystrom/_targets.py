"""The targets K* of generalized Nyström: what the learned kernel is asked to match.

- class labels: the ideal kernel (eq. 6), K*ᵢⱼ = 1 if yᵢ = yⱼ else 0, optionally centred;
- real-valued responses: K* = ỹỹᵀ of the centred, unit-variance responses;
- must-link groups (§3.3): the same-group indicator and its mask T;
- :func:`resolve_target_type` reads a semi-supervised ``y`` as class labels or responses.
"""

from __future__ import annotations

import numpy as np

from ...metrics import ideal_kernel_factor

__all__ = [
    "TARGET_TYPES",
    "ideal_kernel",
    "must_link_target",
    "regression_target",
    "regression_target_factor",
    "resolve_target_type",
    "unit_scaled",
]

#: How ``y`` becomes the target K*: class labels (the ideal kernel, eq. 6) or a
#: real-valued response (:func:`regression_target`); "auto" reads y.
TARGET_TYPES = ("auto", "classification", "regression")


def ideal_kernel(y, *, centered: bool = False) -> np.ndarray:
    """Ideal kernel (eq. 6): K*ᵢⱼ = 1 if yᵢ = yⱼ else 0; ``centered`` gives H K* H.

    H = I − 11ᵀ/l. Centering removes the constant offset that K* has and a kernel
    E S Eᵀ would otherwise have to reproduce; for two balanced classes HK*H has entries
    ±1/2.
    """
    Y = ideal_kernel_factor(y)
    if centered:
        Y = Y - Y.mean(axis=0)
    return Y @ Y.T


def unit_scaled(y) -> np.ndarray:
    """Real responses y times the power of two that brings max |y| into [1, 2).

    Exact (a power of two changes the exponent only), so everything computed from the
    scaled responses is what y would give, without the underflow of squaring responses
    in small units (y ~ 1e-150) or the overflow of large ones. Zeros stay zeros.
    """
    y = np.asarray(y, dtype=np.float64)
    top = float(np.abs(y).max()) if y.size else 0.0
    if not (top > 0 and np.isfinite(top)):
        return y
    return np.ldexp(y, 1 - int(np.frexp(top)[1]))


def regression_target_factor(y) -> np.ndarray:
    """ỹ (l × 1): the labeled responses centred and scaled to unit variance.

    The regression counterpart of the centred ideal kernel's factor: K* = ỹỹᵀ
    (:func:`regression_target`) asks the learned kernel E_l S E_lᵀ to align with the
    response, k̃(xᵢ, xⱼ) ≈ ỹᵢỹⱼ. The scale makes mean diag K* = 1, the size of a unit
    diagonal kernel (the Gaussian prior E W⁺ Eᵀ has diagonal ≈ 1), so that β = 1 weighs
    prior and target as for class labels, whatever the units of y.
    """
    if y is None or isinstance(y, (str, bytes)):
        raise TypeError(f"y must hold the labeled rows' real-valued responses; got {y!r}")
    try:
        y = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"y must hold real-valued responses: {exc}") from None
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D, one response per labeled row; got shape {y.shape}")
    if y.size < 2 or not np.all(np.isfinite(y)):
        raise ValueError(
            f"y: a regression target needs at least 2 finite labeled responses; got {y.size} "
            f"(non-finite: {int(np.count_nonzero(~np.isfinite(y)))})"
        )
    # the spread is judged relative to the scale of y, whatever its units: responses in
    # small units (1e-13, 1e-150) neither look constant nor underflow when squared
    first = y[0]
    y = unit_scaled(y)
    yc = y - y.mean()
    sd = float(np.sqrt(np.mean(yc * yc)))
    if not sd > 1e-12 * float(np.abs(y).max()):
        raise ValueError(
            f"y: the labeled responses are constant (all {first!r}): a constant response carries "
            "no information for the learned kernel; label rows with differing responses"
        )
    return (yc / sd)[:, None]


def regression_target(y) -> np.ndarray:
    """K* = ỹỹᵀ (l × l) for real-valued responses, ỹ of :func:`regression_target_factor`.

    Centred by construction (H ỹ = ỹ): the counterpart of ``ideal_kernel(y,
    centered=True)``. Rank one, so the data term of (7) pulls one direction of the
    learned kernel toward the response and leaves the rest to the prior β W⁺.
    """
    Y = regression_target_factor(y)
    return Y @ Y.T


def must_link_target(groups) -> tuple[np.ndarray, np.ndarray]:
    """Target and mask of §3.3 for must-link groups: (K*, T), both the same-group indicator.

    ``groups`` holds a group id per constrained row. T marks the pairs with a given
    must-link relation (every pair inside a group, the diagonal included) and K* = 1
    there, so the data term ‖T ⊙ (E_l S E_lᵀ − K*)‖² asks those pairs to have kernel
    value 1 and says nothing about pairs across groups.
    """
    g = np.asarray(groups)
    if g.ndim != 1 or g.size == 0:
        raise ValueError(f"groups must be a non-empty 1-D array of group ids; got shape {g.shape}")
    if g.dtype.kind in "fc" and not np.all(np.isfinite(g)):
        raise ValueError("groups holds NaN or infinity: give a group id to every row")
    G = ideal_kernel_factor(g)
    T = G @ G.T
    return T.copy(), T


def resolve_target_type(y_all, target: str, *, owner: str) -> str:
    """The target type, "classification" or "regression", of a semi-supervised ``y``.

    ``target="auto"`` reads ``y``: a float y holding NaN is a response with NaN on the
    unlabeled rows when its other values are continuous
    (:func:`sklearn.utils.multiclass.type_of_target`); a continuous y without NaN is a
    response with every row labeled — unless it holds −1, the class-label convention's
    unlabeled marker, which is then ambiguous and refused. Anything else is class labels
    (−1 = unlabeled).
    """
    from sklearn.utils.multiclass import type_of_target

    if target not in TARGET_TYPES:
        valid = ", ".join(repr(t) for t in TARGET_TYPES)
        raise ValueError(f"unknown target {target!r}; valid values are {valid}")
    if target != "auto" or y_all is None:
        return "classification" if target == "auto" else target
    y = np.asarray(y_all)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.dtype.kind not in "f" or y.ndim != 1:
        return "classification"
    nan = np.isnan(y)
    yl = y[~nan]
    if yl.size == 0:
        return "classification"  # the class-label parser names the problem
    if type_of_target(yl) != "continuous":
        return "classification"
    if not nan.any() and np.any(yl == -1):
        raise ValueError(
            f"{owner}: y holds real-valued responses and -1 but no NaN, so -1 is ambiguous: "
            "for regression targets NaN marks unlabeled rows and -1 is a value. Put NaN on "
            "the unlabeled rows, or pass target='regression' to read every -1 as a "
            "response (target='classification' for class labels with -1 = unlabeled)"
        )
    return "regression"

"""The targets of a semi-supervised fit: y parsed once into the labeled rows and what
they hold (:class:`SemiSupervisedTargets`), −1 (class labels) or NaN (responses) on the
unlabeled rows, and the errors that name the fix."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.utils.validation import column_or_1d

from .validation import check_classification_y

__all__ = [
    "REGIMES",
    "UNLABELED",
    "SemiSupervisedTargets",
    "check_regime",
    "is_unlabeled",
    "one_class_error",
    "parse_class_labels",
    "parse_semi_supervised_response",
    "parse_semi_supervised_y",
]


#: The label of an unlabeled row (scikit-learn's semi-supervised convention).
UNLABELED = -1
#: The regimes class labels can take in a graph factor's fit (``regime=``): "auto"
#: decides from the labels; the other two are taken as given.
REGIMES = ("auto", "few_labels", "leave_one_out")


def check_regime(regime, targets, owner: str) -> None:
    """Refuse a ``regime`` that is not one of :data:`REGIMES`, or that forces a regime
    where there are no class labels to take it: ``targets`` (parsed y, or None) holds
    responses or is missing."""
    if not (isinstance(regime, str) and regime in REGIMES):
        raise ValueError(f"{owner}: regime must be one of {REGIMES}; got {regime!r}")
    if regime != "auto" and (targets is None or targets.kind != "classification"):
        held = "no y was given" if targets is None else "y holds responses"
        raise ValueError(
            f"{owner}: regime={regime!r} chooses between the regimes of class labels; "
            f"{held} (leave regime='auto')"
        )


def is_unlabeled(y) -> np.ndarray:
    """Boolean mask of entries equal to −1 (numbers, objects, or the string "-1")."""
    if y.dtype.kind in "iuf":
        return y == UNLABELED
    if y.dtype.kind in "US":
        return y == str(UNLABELED)
    return np.array([(v == UNLABELED) is True or v == str(UNLABELED) for v in y], dtype=bool)


def _target_column(y, n_samples: int, *, owner: str, what: str, marker: str):
    """y as a 1-d array of ``n_samples`` entries (a column vector is raveled, with
    scikit-learn's warning); y missing, complex, of another shape or length is refused
    with a message that names y and says how unlabeled rows are marked (``marker``)."""
    if y is None:
        raise ValueError(
            f"{owner} requires y to be passed, but the target y is None; give {what} {marker}"
        )
    yv = np.asarray(y)
    if yv.dtype.kind == "c":
        raise ValueError(f"y holds complex numbers; give real {what}")
    if yv.ndim == 0 or yv.ndim > 2:
        raise ValueError(f"y must be 1-d, one entry per row of X; got shape {yv.shape}")
    y = column_or_1d(y, warn=True)
    if y.shape[0] != n_samples:
        raise ValueError(f"y has {y.shape[0]} entries, but X has {n_samples} rows")
    return y


def parse_semi_supervised_y(y, n_samples: int, *, owner: str):
    """Split ``y`` into (labeled row indices, their labels); −1 marks unlabeled rows.

    Raises with messages that name the fix: y missing, wrong length, NaN/None used as
    the unlabeled marker, no labeled row, a single labeled class, continuous labels.
    """
    marker = "with -1 for unlabeled rows (or must_link= groups)"
    y = _target_column(y, n_samples, owner=owner, what="class labels", marker=marker)
    if y.dtype.kind == "f" and np.isnan(y).any():
        raise ValueError(
            "y contains NaN; mark unlabeled rows with -1 (the scikit-learn "
            "semi-supervised convention)"
        )
    if y.dtype.kind == "O" and any(v is None for v in y):
        raise ValueError("y contains None; mark unlabeled rows with -1")
    unlabeled = is_unlabeled(y)
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
    marker = "with NaN on the unlabeled rows"
    y = _target_column(y, n_samples, owner=owner, what="responses", marker=marker)
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


@dataclass(frozen=True)
class SemiSupervisedTargets:
    """The y of a semi-supervised fit, parsed once: which rows are labeled, what they hold.

    A semi-supervised model hands this record, in place of y, to a factor that declares
    ``takes_resolved_input``; any other factor is given ``coded``.

    Attributes
    ----------
    kind : "classification" or "regression".
    rows : (l,) the labeled rows, increasing.
    values : (l,) their labels (classification) or responses (regression, float64).
    coded : (n,) y as a factor reads it: the class codes with −1 on the unlabeled rows,
        or the responses with NaN there.
    classes : (c,) the labeled classes, sorted (classification), else None.
    codes : (l,) the labeled rows' class codes 0 … c−1 (classification), else None.
    class_prior : (c,) the class proportions the model was given (its ``class_prior``
        resolved), else None ("auto", or responses): a factor that scores the model's
        heads on the labeled rows (the graph factor's regime measurement) scores them
        as the model will fit them, under this prior.
    """

    kind: str
    rows: np.ndarray
    values: np.ndarray
    coded: np.ndarray
    classes: np.ndarray | None = None
    codes: np.ndarray | None = None
    class_prior: np.ndarray | None = None

    @classmethod
    def of_classes(cls, rows, labels, n_samples: int) -> SemiSupervisedTargets:
        """From the labeled rows and their class labels (a parser's output)."""
        classes, codes = np.unique(labels, return_inverse=True)
        coded = np.full(n_samples, UNLABELED, dtype=np.int64)
        coded[rows] = codes
        return cls("classification", rows, labels, coded, classes, codes)

    @classmethod
    def of_responses(cls, rows, responses, n_samples: int) -> SemiSupervisedTargets:
        """From the labeled rows and their real-valued responses (a parser's output)."""
        coded = np.full(n_samples, np.nan)
        coded[rows] = responses
        return cls("regression", rows, responses, coded)


def _row_list(rows, shown: int = 5) -> str:
    head = ", ".join(str(int(i)) for i in rows[:shown])
    return head + (", …" if rows.size > shown else "")


def one_class_error(label, owner, *, unlabeled=None) -> ValueError:
    """The error for labeled rows of a single class: the ideal kernel is then constant.

    ``unlabeled``: the mask of the rows read as unlabeled (−1); the message then says
    that −1 is the unlabeled marker, not a class (LIBSVM's {−1, +1} need recoding).
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

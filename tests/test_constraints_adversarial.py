"""Adversarial sweep, pairwise constraints (``lorak.constraints``).

Part of the adversarial sweep: the outcome rules are in ``tests/_adversarial.py``,
``tests/test_adversarial.py`` gathers every area's table."""

from __future__ import annotations

import numpy as np

import lorak
import lorak.datasets
from _adversarial import (
    PYTESTMARK,
    X,
    check_case,
    new_table,
    parametrize_cases,
    y,
)
from lorak import constraints as C

pytestmark = PYTESTMARK

CASES, case = new_table()


def _labels(vals):
    return np.array(vals, dtype=float)


_YNAN = np.where(np.arange(60) % 7 == 0, np.nan, y.astype(float))
case("from_labels-nan", lambda: C.from_labels(_YNAN, random_state=0), error=r"\by\b.*nan")
case(
    "from_labels-inf",
    lambda: C.from_labels(np.where(np.arange(60) == 2, np.inf, y.astype(float)), random_state=0),
    error=r"\by\b.*(nan|inf)",
)
case(
    "from_labels-none-object",
    lambda: C.from_labels(np.array([None, 1, 2, 1] * 5, dtype=object), random_state=0),
    error=r"\by\b",
)
case("from_labels-2d", lambda: C.from_labels(np.ones((4, 2))), error=r"\by\b")
case("from_labels-ratio--1", lambda: C.from_labels(y, ratio=-1), error=r"ratio")
case("from_labels-ratio-nan", lambda: C.from_labels(y, ratio=float("nan")), error=r"ratio")
case("from_labels-n_pairs--1", lambda: C.from_labels(y, n_pairs=-1), error=r"n_pairs")
case(
    "from_labels-random_state--1", lambda: C.from_labels(y, random_state=-1), error=r"random_state"
)


def _from_labels_ok():
    c = C.from_labels(y, n_pairs=40, random_state=0)
    return c


def _from_labels_check(c):
    ml, cl = np.asarray(c["must_link"]), np.asarray(c["cannot_link"])
    assert all(y[i] == y[j] for i, j in ml), "a must-link joins different labels"
    assert all(y[i] != y[j] for i, j in cl), "a cannot-link joins equal labels"


case("from_labels-ok", _from_labels_ok, check=_from_labels_check)
case(
    "check_constraints-out-of-range",
    lambda: C.check_constraints(np.array([[0, 99]]), None, 60),
    error=r"(must_link|index|range|n_samples)",
)
case(
    "check_constraints-nan",
    lambda: C.check_constraints(np.array([[0, np.nan]]), None, 60),
    error=r"(must_link|integer|nan)",
)
case(
    "check_constraints-self",
    lambda: C.check_constraints(np.array([[3, 3]]), None, 60),
    error=r"(must_link|itself|same|i ?= ?j|self)",
)
case(
    "SimpleNPKL-constraint-out-of-range",
    lambda: lorak.SimpleNPKL(max_iter=2).fit(X, must_link=[[0, 600]], cannot_link=[[1, 2]]),
    error=r"(must_link|range|index|n_samples)",
)


# --------------------------------------------------------------------------- the test


@parametrize_cases(CASES)
def test_case(c):
    check_case(c)

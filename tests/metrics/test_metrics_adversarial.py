"""Adversarial sweep, metrics: alignments, approximation errors and cluster scores on
degenerate input.

Part of the adversarial sweep: the outcome rules are in ``tests/_adversarial.py``,
``tests/test_adversarial.py`` gathers every area's table."""

from __future__ import annotations

import numpy as np

from _adversarial import (
    _X_NAN,
    PYTESTMARK,
    X,
    _close,
    _finite,
    check_case,
    new_table,
    parametrize_cases,
)
from lorak import kernels as K
from lorak import metrics as M

pytestmark = PYTESTMARK

CASES, case = new_table()

_Z = np.zeros((10, 3))
case(
    "trace_error-relative-zero-kernel",
    lambda: M.trace_error(K.Linear(), _Z, np.zeros((10, 2)), relative=True),
    error=r"(zero|relative)",
)
case(
    "frobenius_error-relative-zero-kernel",
    lambda: M.frobenius_error(K.Linear(), _Z, np.zeros((10, 2)), relative=True),
    error=r"(zero|relative)",
)
case(
    "approximation_error-trace-relative-zero",
    lambda: M.approximation_error(K.Linear(), _Z, np.zeros((10, 2)), norm="trace", relative=True),
    error=r"(zero|relative)",
)
case(
    "trace_error-ok",
    lambda: M.trace_error(K.Gaussian(gamma=1.0), X, np.zeros((60, 2))),
    check=lambda v: _close(np.array(v), np.array(60.0), 1e-9),
)
case(
    "frobenius_error-G-nan",
    lambda: M.frobenius_error(K.Gaussian(gamma=1.0), X, np.full((60, 2), np.nan)),
    error=r"\bG\b",
)
case(
    "frobenius_error-G-rows",
    lambda: M.frobenius_error(K.Gaussian(gamma=1.0), X, np.ones((5, 2))),
    error=r"\bG\b",
)
case(
    "frobenius_error-X-nan",
    lambda: M.frobenius_error(K.Gaussian(gamma=1.0), _X_NAN, np.ones((60, 2))),
    error=r"\bX\b.*(nan|infinity)",
)
case(
    "frobenius_error-unresolved",
    lambda: M.frobenius_error(K.Gaussian(), X, np.ones((60, 2))),
    error=r"(resolve|bandwidth)",
)
case(
    "quantization_error-0-points",
    lambda: M.quantization_error(np.empty((0, 3)), np.ones((2, 3))),
    error=r"(\bX\b|empty|points|sample)",
)
case(
    "quantization_error-0-centers",
    lambda: M.quantization_error(np.ones((4, 3)), np.empty((0, 3))),
    error=r"(centers|landmarks|empty|Z\b)",
)
case(
    "quantization_error-nan",
    lambda: M.quantization_error(_X_NAN, X[:3]),
    error=r"(\bX\b|nan|infinity)",
)
case(
    "quantization_error-ok",
    lambda: M.quantization_error(X, X),
    check=lambda v: _close(np.array(v), np.array(0.0), 1e-12),
)
case(
    "pairwise_cluster_accuracy-empty",
    lambda: M.pairwise_cluster_accuracy([], []),
    error=r"(empty|labels_true|sample)",
)
case(
    "pairwise_cluster_accuracy-length",
    lambda: M.pairwise_cluster_accuracy([0, 1], [0]),
    error=r"labels_",
)
case(
    "pairwise_cluster_accuracy-nan",
    lambda: M.pairwise_cluster_accuracy([0, np.nan, np.nan], [0, 1, 1]),
    error=r"(labels_true|nan)",
)
case(
    "pairwise_cluster_accuracy-ok",
    lambda: M.pairwise_cluster_accuracy([0, 0, 1, 1], [1, 1, 0, 0]),
    check=lambda v: _close(np.array(v), np.array(1.0), 0),
)
case(
    "ideal_kernel_factor-nan",
    lambda: M.ideal_kernel_factor(np.array([0.0, np.nan, np.nan, 1.0])),
    error=r"\by\b.*nan",
)
case("ideal_kernel_factor-empty", lambda: M.ideal_kernel_factor(np.array([])), error=r"\by\b")
case(
    "ideal_kernel_factor-ok",
    lambda: M.ideal_kernel_factor(np.array([2, 2, 5])),
    check=lambda Y: _close(Y @ Y.T, np.array([[1, 1, 0], [1, 1, 0], [0, 0, 1]]), 0),
)
case(
    "alignment-zero",
    lambda: M.alignment(np.zeros((4, 4)), np.eye(4)),
    check=lambda v: _finite(np.array(v)),
    error=r"(zero|K1|norm)",
)
case(
    "alignment-nan",
    lambda: M.alignment(np.full((4, 4), np.nan), np.eye(4)),
    error=r"(K1|nan|finite)",
)
case("alignment-shape", lambda: M.alignment(np.eye(3), np.eye(4)), error=r"(K1|K2|shape)")
case(
    "centered_alignment-constant",
    lambda: M.centered_alignment(np.ones((4, 4)), np.eye(4)),
    check=lambda v: _finite(np.array(v)),
    error=r"(zero|K1|constant|centered)",
)
case(
    "factor_alignment-zero",
    lambda: M.factor_alignment(np.zeros((4, 2)), np.ones((4, 2))),
    check=lambda v: _finite(np.array(v)),
    error=r"(zero|G1)",
)
case(
    "factor_alignment-nan",
    lambda: M.factor_alignment(np.full((4, 2), np.nan), np.ones((4, 2))),
    error=r"(G1|nan|finite)",
)
case(
    "factor_alignment-rows",
    lambda: M.factor_alignment(np.ones((4, 2)), np.ones((5, 2))),
    error=r"(G1|G2|rows|shape)",
)


# --------------------------------------------------------------------------- the test


@parametrize_cases(CASES)
def test_case(c):
    check_case(c)

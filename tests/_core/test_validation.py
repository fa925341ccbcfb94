"""Shared parsing of y (lorak._core.targets): semi-supervised class labels and responses."""

import numpy as np
import pytest

from lorak import GeneralizedNystroem, SemiSupervisedFactorClassifier
from lorak._core.targets import (
    one_class_error,
    parse_class_labels,
    parse_semi_supervised_response,
    parse_semi_supervised_y,
)


def _libsvm(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    y = np.where(X[:, 0] > 0, 1, -1)  # LIBSVM-style labels, every row labeled
    return X, y


def test_libsvm_labels_are_refused_with_the_unlabeled_marker_explained():
    X, y = _libsvm()
    n_minus = int(np.sum(y == -1))
    first = np.flatnonzero(y == -1)[:3]
    for est in (GeneralizedNystroem(n_components=5), SemiSupervisedFactorClassifier()):
        with pytest.raises(ValueError) as info:
            est.fit(X, y)
        msg = str(info.value)
        assert "one class among its labeled rows" in msg
        assert "-1 marks an unlabeled row" in msg
        assert f"{n_minus} of {y.size} rows hold -1" in msg
        assert "rows " + ", ".join(str(i) for i in first) in msg
        assert "y = (y + 1) // 2" in msg
    # the recoding the message suggests is accepted
    GeneralizedNystroem(n_components=5, random_state=0).fit(X, (y + 1) // 2)


def test_one_class_without_unlabeled_rows_says_nothing_about_minus_one():
    msg = str(one_class_error(3, "Est", unlabeled=np.zeros(5, dtype=bool)))
    assert "one class among its labeled rows (label 3)" in msg and "-1" not in msg
    with pytest.raises(ValueError, match="one class") as info:
        parse_semi_supervised_y(np.full(5, 3), 5, owner="Est")
    assert "-1" not in str(info.value)


def test_parsers_split_labeled_rows():
    y = np.array([0, -1, 1, 1, -1])
    rows, y_l = parse_semi_supervised_y(y, 5, owner="Est")
    np.testing.assert_array_equal(rows, [0, 2, 3])
    rows, y_l, classes = parse_class_labels(y, 5, owner="Est")
    np.testing.assert_array_equal(classes, [0, 1])
    with pytest.raises(ValueError, match=r"y contains NaN.*target='regression'"):
        parse_class_labels(np.array([0.0, np.nan, 1.0]), 3, owner="Est")
    rows, r = parse_semi_supervised_response(np.array([0.5, np.nan, -1.0]), 3, owner="Est")
    np.testing.assert_array_equal(rows, [0, 2])
    np.testing.assert_array_equal(r, [0.5, -1.0])


def test_parse_semi_supervised_response_resolves_from_lorak_learn_for_one_release():
    with pytest.warns(DeprecationWarning, match="deprecated"):
        from lorak.learn import parse_semi_supervised_response as from_learn

    assert from_learn is parse_semi_supervised_response

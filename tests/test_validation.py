"""Shared parsing of y (lorak._validation): semi-supervised class labels and responses."""

import numpy as np
import pytest

from lorak._validation import (
    parse_class_labels,
    parse_semi_supervised_response,
    parse_semi_supervised_y,
)


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


def test_parse_semi_supervised_response_stays_importable_from_lorak_learn():
    from lorak.learn import RIDGE_ALPHAS
    from lorak.learn import parse_semi_supervised_response as from_learn

    assert from_learn is parse_semi_supervised_response
    assert len(RIDGE_ALPHAS) > 0

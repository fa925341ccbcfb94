"""Pairwise constraints: validation and the paper's random generator."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lorak.constraints import (
    PairwiseConstraints,
    check_constraints,
    constraint_matrix,
    from_labels,
    must_link_components,
    transitive_conflicts,
)

# ---------------------------------------------------------------- validation


def test_pairs_are_normalized_sorted_and_merged():
    c = check_constraints([[3, 1], [1, 3], [1, 3], [0, 2]], [[4, 0]], 5)
    np.testing.assert_array_equal(c.must_link, [[0, 2], [1, 3]])
    np.testing.assert_array_equal(c.cannot_link, [[0, 4]])
    assert c.must_link.dtype == np.int64
    assert c.n_constraints == 3
    ml, cl = c  # unpacks as two arrays
    assert ml is c.must_link and cl is c.cannot_link
    assert dict(**c).keys() == {"must_link", "cannot_link"}


def test_single_pair_and_integer_valued_floats():
    c = check_constraints(np.array([2.0, 0.0]), None, 3)
    np.testing.assert_array_equal(c.must_link, [[0, 2]])
    assert c.cannot_link.shape == (0, 2)


def test_out_of_range_names_row_and_size():
    with pytest.raises(ValueError, match=r"\(12, 907\).*refers to row 907 but X has 500 rows"):
        check_constraints([[12, 907]], None, 500)
    with pytest.raises(ValueError, match=r"cannot_link.*refers to row 9 but X has 5 rows"):
        check_constraints([[0, 1]], [[9, 2]], 5)


def test_negative_self_pairs_shape_dtype():
    with pytest.raises(ValueError, match="negative index"):
        check_constraints([[-1, 2]], None, 5)
    with pytest.raises(ValueError, match=r"links a point to itself"):
        check_constraints([[0, 1], [3, 3]], None, 5)
    with pytest.raises(ValueError, match=r"shape \(p, 2\).*got shape \(2, 3\)"):
        check_constraints([[0, 1, 2], [1, 2, 3]], None, 5)
    with pytest.raises(ValueError, match=r"integer row indices; found 0.5"):
        check_constraints([[0.5, 1]], None, 5)
    with pytest.raises(TypeError, match="integer row indices"):
        check_constraints(np.array([[True, False]]), None, 5)


def test_no_constraints_raises():
    with pytest.raises(ValueError, match="no pairwise constraint"):
        check_constraints(None, np.empty((0, 2)), 5)


def test_conflicting_pair_raises_and_lists_it():
    with pytest.raises(
        ValueError, match=r"1 pair\(s\) are both must-link and cannot-link: \(1, 4\)"
    ):
        check_constraints([[0, 1], [4, 1]], [[1, 4], [2, 3]], 5)


def test_transitive_conflicts_warn():
    ml = [[0, 1], [1, 2]]
    cl = [[0, 2], [3, 4]]
    np.testing.assert_array_equal(transitive_conflicts(ml, cl, 5), [[0, 2]])
    with pytest.warns(UserWarning, match="same must-link component"):
        check_constraints(ml, cl, 5)


def test_constraint_matrix_is_symmetric_signed():
    c = check_constraints([[0, 1]], [[1, 2]], 3)
    pairs, signs = c.pairs()
    T = constraint_matrix(pairs, signs, 3).toarray()
    np.testing.assert_array_equal(T, [[0, 1, 0], [1, 0, -1], [0, -1, 0]])


# ---------------------------------------------------------------- from_labels


@pytest.mark.parametrize("ratio", [0.7, 0.6, 0.95])
def test_from_labels_reaches_the_component_ratio(ratio):
    y = np.repeat([0, 1, 2], 50)
    c = from_labels(y, ratio=ratio, random_state=1)
    n = len(y)
    ncomp, _ = must_link_components(c.must_link, n)
    assert ncomp == c.n_components
    # stops as soon as the target is reached: each must-link removes ≤ 1 component
    assert ncomp == int(np.floor(ratio * n))
    assert np.all(y[c.must_link[:, 0]] == y[c.must_link[:, 1]])
    assert np.all(y[c.cannot_link[:, 0]] != y[c.cannot_link[:, 1]])
    allp = np.concatenate([c.must_link, c.cannot_link])
    assert np.all(allp[:, 0] < allp[:, 1])
    assert len(np.unique(allp, axis=0)) == len(allp)  # no pair drawn twice
    check_constraints(c.must_link, c.cannot_link, n)  # valid, no conflict


def test_from_labels_is_deterministic_and_seed_dependent():
    y = np.repeat([-1, 1], [60, 40])  # LIBSVM labels: −1 is a class, not "unlabelled"
    a = from_labels(y, random_state=3)
    b = from_labels(y, random_state=3)
    c = from_labels(y, random_state=4)
    np.testing.assert_array_equal(a.must_link, b.must_link)
    np.testing.assert_array_equal(a.cannot_link, b.cannot_link)
    assert not np.array_equal(a.must_link, c.must_link)
    assert a.n_samples == 100


def test_from_labels_n_pairs_and_labeled_subset():
    y = np.array(["a", "b"] * 30)
    c = from_labels(y, n_pairs=25, random_state=0)
    assert c.n_constraints == 25
    mask = np.zeros(60, dtype=bool)
    mask[:20] = True
    c = from_labels(y, n_pairs=30, labeled=mask, random_state=0)
    allp = np.concatenate([c.must_link, c.cannot_link])
    assert allp.max() < 20
    with pytest.raises(ValueError, match=r"n_pairs must be in \[1, 190\]"):
        from_labels(y, n_pairs=191, labeled=mask)


def test_from_labels_labeled_parsed_once_with_unlabeled():
    """labeled as indices means the same rows with or without unlabeled=, and a row
    outside y is named the same way."""
    y = np.where(np.arange(60) % 7 == 0, -1, np.arange(60) % 3)
    rows = np.arange(0, 60, 2)
    a = from_labels(y, n_pairs=20, labeled=rows, unlabeled=-1, random_state=0)
    mask = np.zeros(60, dtype=bool)
    mask[rows] = True
    b = from_labels(y, n_pairs=20, labeled=mask & (y != -1), random_state=0)
    np.testing.assert_array_equal(a.must_link, b.must_link)
    np.testing.assert_array_equal(a.cannot_link, b.cannot_link)
    for unlabeled in (None, -1):
        with pytest.raises(ValueError, match="labeled refers to row 60 but y has 60 rows"):
            from_labels(y, labeled=[0, 60], unlabeled=unlabeled)


def test_from_labels_unreachable_ratio_raises():
    y = np.repeat([0, 1], 10)
    mask = np.arange(20) < 6  # 14 unlabelled rows stay singletons
    with pytest.raises(ValueError, match=r"1 class\(es\) leave at least 15: use ratio >= 0\.75"):
        from_labels(y, ratio=0.5, labeled=mask)
    with pytest.raises(ValueError, match=r"ratio must be in \(0, 1\]"):
        from_labels(y, ratio=0.0)


@settings(max_examples=25, deadline=None)
@given(
    n_classes=st.integers(1, 5),
    n=st.integers(10, 80),
    ratio=st.floats(0.55, 1.0),
    seed=st.integers(0, 2**16),
)
def test_from_labels_property(n_classes, n, ratio, seed):
    y = np.random.default_rng(seed).integers(0, n_classes, size=n)
    floor_ = len(np.unique(y))
    if np.floor(ratio * n + 1e-9) < floor_:
        with pytest.raises(ValueError):
            from_labels(y, ratio=ratio, random_state=seed)
        return
    c = from_labels(y, ratio=ratio, random_state=seed)
    assert isinstance(c, PairwiseConstraints)
    # the generator reads ratio·N with a 1e-9 slack (0.7·10 = 7.000000000000001)
    assert must_link_components(c.must_link, n)[0] <= ratio * n + 1e-9

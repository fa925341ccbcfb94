"""lorak.parallel's moments: row_moments of row blocks merged by merge_moments."""

from __future__ import annotations

import numpy as np
import pytest

from lorak.parallel import merge_moments, reduce_rows, row_moments


def _direct(A):
    A = np.asarray(A, dtype=np.float64)
    mean = A.mean(axis=0)
    return A.shape[0], mean, (A - mean).T @ (A - mean)


def test_merging_the_moments_of_two_row_sets_gives_those_of_their_union():
    rng = np.random.default_rng(0)
    # a large common mean: raw sums would lose the scatter to cancellation
    A = 1e6 + rng.standard_normal((300, 4))
    n, mean, S = merge_moments(row_moments(A[:120]), row_moments(A[120:]))
    n0, mean0, S0 = _direct(A)
    assert n == n0 == 300
    np.testing.assert_allclose(mean, mean0, rtol=1e-13)
    np.testing.assert_allclose(S, S0, rtol=1e-8, atol=1e-8 * np.abs(S0).max())


def test_an_empty_triple_is_the_identity_of_the_merge():
    A = np.arange(12.0).reshape(4, 3)
    m = row_moments(A)
    empty = (0, np.zeros(3), np.zeros((3, 3)))
    for merged in (merge_moments(empty, m), merge_moments(m, empty)):
        assert merged[0] == 4
        np.testing.assert_array_equal(merged[1], m[1])
        np.testing.assert_array_equal(merged[2], m[2])


@pytest.mark.parametrize("rows", [1, 7, 64, 1000])
def test_merge_moments_combines_per_block_moments_in_reduce_rows(rows):
    """The pattern of lorak.parallel's docstring: moments of something computed per
    row block (here a feature map of the block and a target), merged over the blocks."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((200, 3)).astype(np.float32)
    W = rng.standard_normal((3, 5))

    def features(B):
        return np.tanh(B @ W)

    def target(B):
        return B[:, 0] - 2.0 * B[:, 1]

    n, mean, S = reduce_rows(
        lambda B: row_moments(features(B), target(B)), X, combine=merge_moments, rows=rows
    )
    n0, mean0, S0 = _direct(np.column_stack([features(X), target(X)]))
    assert n == n0 == 200
    np.testing.assert_allclose(mean, mean0, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(S, S0, rtol=1e-10, atol=1e-10 * np.abs(S0).max())

"""Comparing two computations of the same values to the accuracy floating point keeps.

Two row blockings, chunk sizes, thread counts or backends (dask, a memmap read in
chunks, an array API namespace, in memory) form the same sums in another order: a BLAS
picks its kernels by the shape it is handed (OpenBLAS's Haswell kernels round a 6-row
GEMM otherwise than a 40-row one), and promises nothing across shapes. Such paths agree
to round-off, not bit for bit, and the library promises no more (the guide's "values
agree to round-off"); tests of them compare with the helpers here, and keep exact
equality for what is exact: integer results, copies of rows, one computation repeated
on one input in one process.

Labels (signs, argmaxes) read from two such computations agree wherever the decision
is clear of a tie; a row whose decision is within the two computations' difference of
a tie may go either way. :func:`assert_labels_agree_off_ties` compares the labels of
the other rows only, and checks that those near a tie are few.
"""

from __future__ import annotations

import numpy as np

#: Relative agreement of two summation orders in float64, against the largest value
#: compared: ε ≈ 2.2·10⁻¹⁶ times the length of the sums behind each entry, with room.
ROUNDOFF = 1e-12


def assert_same_to_roundoff(got, want, rel: float = ROUNDOFF, err_msg: str = ""):
    """``got`` equals ``want`` within ``rel`` × max |want|, entry by entry.

    The tolerance is relative to the scale of the values, not to each entry: an entry
    near zero that is a sum of larger terms carries the round-off of those terms.
    """
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    np.testing.assert_allclose(got, want, rtol=0, atol=rel * scale, err_msg=err_msg)


def decision_margin(decision) -> np.ndarray:
    """Each row's distance from a tie: |f| of a binary decision (n,), the gap between
    the two largest scores of an (n, c) decision."""
    d = np.asarray(decision, dtype=np.float64)
    if d.ndim == 1 or d.shape[1] == 1:
        return np.abs(d.ravel())
    top = np.sort(d, axis=1)
    return top[:, -1] - top[:, -2]


def assert_labels_agree_off_ties(got, want, decision, tol: float, *, max_near: float = 0.02):
    """Labels ``got`` and ``want`` of two computations agree on every row whose
    reference ``decision`` (see :func:`decision_margin`) is more than ``tol`` from a
    tie; at most a fraction ``max_near`` of the rows may be that near (else the data
    do not test the labels at all). ``tol``: a bound on the difference of the two
    computations' decision values."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    clear = decision_margin(decision) > tol
    assert clear.shape == got.shape, (clear.shape, got.shape)
    assert np.mean(~clear) <= max_near, f"{np.count_nonzero(~clear)} rows within {tol} of a tie"
    np.testing.assert_array_equal(got[clear], want[clear])

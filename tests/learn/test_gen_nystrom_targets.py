"""The targets K* of generalized Nyström (lorak.learn._gen_nystrom._targets)."""

import numpy as np

from lorak.learn import must_link_target


def test_must_link_target_and_mask():
    K, T = must_link_target(np.array([0, 0, 1, 2, 1]))
    np.testing.assert_array_equal(K, T)
    assert T[0, 1] == 1 and T[2, 4] == 1 and T[0, 2] == 0 and T[3, 3] == 1

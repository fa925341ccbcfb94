"""The targets K* of generalized Nyström (lorak.learn._gen_nystrom._targets)."""

import numpy as np
import pytest

from lorak.learn._gen_nystrom import (
    must_link_target,
    regression_target,
    regression_target_factor,
)


def test_must_link_target_and_mask():
    K, T = must_link_target(np.array([0, 0, 1, 2, 1]))
    np.testing.assert_array_equal(K, T)
    assert T[0, 1] == 1 and T[2, 4] == 1 and T[0, 2] == 0 and T[3, 3] == 1


@pytest.mark.parametrize("scale", [1e-13, 1e-150, 1e-300, 1e150])
def test_regression_target_does_not_depend_on_the_units_of_y(scale):
    # responses in small units used to be refused as constant: the threshold was absolute
    y = np.random.default_rng(0).standard_normal(30) + 3.0
    ref = regression_target_factor(y)
    got = regression_target_factor(y * scale)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
    assert np.mean(got**2) == pytest.approx(1.0) and abs(got.mean()) < 1e-12
    np.testing.assert_allclose(regression_target(y * scale), ref @ ref.T, atol=1e-12)


@pytest.mark.parametrize("scale", [1e-150, 1e-13, 1.0, 1e150])
def test_constant_responses_are_refused_at_every_scale(scale):
    for y in (np.full(6, 2.5), 2.5 + 1e-15 * np.arange(6), np.zeros(6)):
        with pytest.raises(ValueError, match="constant"):
            regression_target_factor(y * scale)


def test_unit_scaled_is_an_exact_power_of_two():
    from lorak.learn._gen_nystrom import unit_scaled

    for y in (np.array([3e-151, -1e-150, 0.0]), np.array([5.0, 7.0]), np.array([1e300, 2.0])):
        u = unit_scaled(y)
        assert 1.0 <= np.abs(u).max() < 2.0
        ratio = u[np.abs(y) > 0] / y[np.abs(y) > 0]
        assert np.all(ratio == ratio[0]) and np.frexp(ratio[0])[0] == 0.5
    np.testing.assert_array_equal(unit_scaled(np.zeros(3)), np.zeros(3))

"""Rank decisions and stop tests that floating point can reach on every CPU."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from lorak._core.linalg import spectral_keep
from lorak.solvers._psd import admm_psd, armijo_projected_gradient, fista_psd, psd_projection


def _jitter(lam, rng, rel=1e-13):
    return lam * (1.0 + rel * rng.standard_normal(lam.shape))


@pytest.mark.parametrize("seed", range(5))
def test_spectral_keep_does_not_flip_on_rounding_at_the_threshold(seed):
    rng = np.random.default_rng(seed)
    # one eigenvalue sits exactly at rtol·λ_max: a fixed cut-off flips on its last bit
    lam = np.array([1.0, 0.5, 0.1, 3e-3, 1e-10, 1e-15, -2e-16])
    counts = {int(spectral_keep(_jitter(lam, rng), 1e-10).sum()) for _ in range(200)}
    assert len(counts) == 1
    # and the cut is at the gap: 3e-3 → 1e-10 (seven decades), not at the threshold
    assert counts == {4}


def test_spectral_keep_noise_floor_from_negative_eigenvalues():
    # a PSD matrix computed by an iterative solver: its negatives show the noise level,
    # and a positive eigenvalue well below it cannot be told from zero
    lam = np.array([1.0, 0.6, 2.5e-3, 1.4e-10, -4.7e-12, -4.8e-9])
    assert spectral_keep(lam, 1e-10).tolist() == [True, True, True, False, False, False]


def test_spectral_keep_edge_cases():
    assert spectral_keep(np.array([]), 1e-10).size == 0
    assert not spectral_keep(np.array([0.0, -1e-20]), 1e-10).any()
    assert spectral_keep(np.array([2.0, 1.0]), 1e-10).all()
    # aligned with the input order
    assert spectral_keep(np.array([1e-30, 3.0, 1.0]), 1e-10).tolist() == [False, True, True]
    # noise larger than the top: keep the top only
    assert spectral_keep(np.array([1.0, 0.5, -0.2]), 1e-10).tolist() == [True, False, False]


@pytest.mark.parametrize("seed", range(20))
def test_psd_solvers_stop_under_last_bit_noise(seed):
    """f evaluated with ±1 ulp noise (another BLAS kernel): the stop test still passes."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((6, 6))
    T = A + A.T
    ref = psd_projection(T)
    noise = np.random.default_rng(seed + 100)

    def f(X):
        return float(np.sum((X - T) ** 2)) * (1.0 + noise.choice([-1, 0, 1]) * 2.2e-16)

    def g(X):
        return 2 * (X - T)

    def prox(V, rho):
        return (2 * T + rho * V) / (2 + rho)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for res in (
            fista_psd(f, g, np.zeros((6, 6)), L=2.0, tol=1e-12, max_iter=2000),
            admm_psd(prox, np.zeros((6, 6)), objective=f, tol=1e-12, max_iter=5000),
            armijo_projected_gradient(f, g, np.zeros((6, 6)), tol=1e-6, max_iter=2000),
        ):
            np.testing.assert_allclose(res.x, ref, atol=1e-6)
            assert res.converged, res.info

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

from lorak import Nystroem
from lorak.kernels import Gaussian
from lorak.landmarks import quantization_error
from lorak.metrics import (
    alignment,
    approximation_error,
    centered_alignment,
    factor_alignment,
    frobenius_error,
    ideal_kernel_factor,
    trace_error,
)


@pytest.fixture
def setup(rng):
    X = rng.standard_normal((150, 4))
    k = Gaussian(bandwidth=3.0)
    G = Nystroem(kernel=k, n_components=20, random_state=0).fit_transform(X)
    return X, k, G, rbf_kernel(X, gamma=1 / 3.0)


def test_frobenius_and_trace_errors(setup):
    X, k, G, K = setup
    R = K - G @ G.T
    np.testing.assert_allclose(frobenius_error(k, X, G), np.linalg.norm(R), rtol=1e-10)
    np.testing.assert_allclose(
        frobenius_error(k, X, G, relative=True, budget=2**16),
        np.linalg.norm(R) / np.linalg.norm(K),
        rtol=1e-10,
    )
    np.testing.assert_allclose(trace_error(k, X, G), np.trace(R), rtol=1e-10)
    # the Nyström residual is PSD, so its trace is its nuclear norm
    np.testing.assert_allclose(trace_error(k, X, G), np.linalg.norm(R, "nuc"), rtol=1e-6)
    np.testing.assert_allclose(
        approximation_error(k, X, G, norm="trace", relative=True), np.trace(R) / np.trace(K)
    )
    with pytest.raises(ValueError, match="valid names are 'fro', 'trace'"):
        approximation_error(k, X, G, norm="spectral")
    with pytest.raises(ValueError, match="one row per row of X"):
        frobenius_error(k, X, G[:10])


def test_alignment_factor_form_equals_dense(setup, rng):
    X, k, G, K = setup
    G2 = rng.standard_normal((150, 3))
    K2 = G2 @ G2.T
    for centered in (False, True):
        np.testing.assert_allclose(
            factor_alignment(G, G2, centered=centered),
            alignment(G @ G.T, K2, centered=centered),
            rtol=1e-10,
        )
    assert alignment(K, K) == pytest.approx(1.0)
    assert centered_alignment(K, K) == pytest.approx(1.0)
    assert -1.0 <= alignment(K, -K2) <= 1.0


def test_centered_alignment_dense_definition(rng):
    A = rng.standard_normal((30, 30))
    A = A @ A.T
    B = rng.standard_normal((30, 30))
    B = B @ B.T
    H = np.eye(30) - 1 / 30
    Ac, Bc = H @ A @ H, H @ B @ H
    ref = np.sum(Ac * Bc) / np.linalg.norm(Ac) / np.linalg.norm(Bc)
    assert centered_alignment(A, B) == pytest.approx(ref)


def test_ideal_kernel_factor():
    y = np.array([2, 0, 2, 1])
    Y = ideal_kernel_factor(y)
    np.testing.assert_array_equal(Y @ Y.T, (y[:, None] == y[None, :]).astype(float))


def test_quantization_error(rng):
    X = rng.standard_normal((300, 3))
    P = rng.standard_normal((7, 3))
    d = ((X[:, None] - P[None]) ** 2).sum(-1).min(1).sum()
    assert quantization_error(X, P) == pytest.approx(d)
    assert quantization_error(X, X) == pytest.approx(0.0, abs=1e-9)


def test_alignment_shape_errors():
    with pytest.raises(ValueError, match="square"):
        alignment(np.ones((2, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="same number of rows"):
        factor_alignment(np.ones((3, 2)), np.ones((4, 2)))

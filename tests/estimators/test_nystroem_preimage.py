"""Pre-images of Nyström factor rows (``fit_inverse_transform``; issue 21, item 3)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.kernel_ridge import KernelRidge

import lorak


@pytest.fixture
def digits():
    X = load_digits().data[:600] / 16.0
    return X


def test_inverse_transform_is_kernel_ridge_on_the_training_rows(digits):
    X = digits
    ny = lorak.Nystroem(
        n_components=80, landmarks="kmeans", random_state=0, fit_inverse_transform=True, alpha=0.1
    ).fit(X)
    G = ny.transform(X)
    b = ny.inverse_kernel_.bandwidth
    ref = KernelRidge(alpha=0.1, kernel="rbf", gamma=1.0 / b).fit(G, X)
    np.testing.assert_allclose(ny.inverse_transform(G), ref.predict(G), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ny.X_transformed_fit_, G, rtol=1e-10, atol=1e-12)


def test_pre_images_denoise():
    X = load_digits().data / 16.0
    rng = np.random.default_rng(0)
    train, test = X[:1000], X[1000:1400]
    noisy = test + 0.25 * rng.standard_normal(test.shape)
    ny = lorak.Nystroem(
        n_components=100,
        landmarks="kmeans",
        bandwidth="mean_to_centroid",
        random_state=0,
        fit_inverse_transform=True,
        alpha=1e-3,
    ).fit(train)
    rec = ny.inverse_transform(ny.transform(noisy))
    # measured 0.70: the pre-images are closer to the clean digits than the noisy input
    assert np.linalg.norm(rec - test) < 0.8 * np.linalg.norm(noisy - test)


def test_inverse_map_fitted_on_a_subsample_of_large_sets():
    X = np.random.default_rng(0).random((2500, 3))
    ny = lorak.Nystroem(n_components=20, random_state=0, fit_inverse_transform=True).fit(X)
    assert ny.X_transformed_fit_.shape == (2000, ny.n_components_)


def test_inverse_transform_errors(digits):
    X = digits[:50]
    ny = lorak.Nystroem(n_components=10, random_state=0).fit(X)
    with pytest.raises(ValueError, match="fit_inverse_transform=True"):
        ny.inverse_transform(ny.transform(X))
    ny = lorak.Nystroem(n_components=10, random_state=0, fit_inverse_transform=True).fit(X)
    with pytest.raises(ValueError, match="columns"):
        ny.inverse_transform(np.ones((3, 4)))
    with pytest.raises(ValueError, match="alpha must be"):
        lorak.Nystroem(n_components=10, fit_inverse_transform=True, alpha=0).fit(X)
    K = X @ X.T
    with pytest.raises(ValueError, match="precomputed"):
        lorak.Nystroem(kernel="precomputed", n_components=10, fit_inverse_transform=True).fit(K)

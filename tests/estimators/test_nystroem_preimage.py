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


def test_pre_image_map_belongs_to_the_last_fit():
    """Issue 30, items 5 and 14: a refit without fit_inverse_transform drops the earlier
    fit's map (it answered in the old feature count), and an unfitted estimator says it
    is not fitted."""
    from sklearn.exceptions import NotFittedError

    rng = np.random.default_rng(0)
    A, B = rng.random((40, 5)), rng.random((30, 3))
    with pytest.raises(NotFittedError, match="not fitted"):
        lorak.Nystroem(fit_inverse_transform=True).inverse_transform(np.zeros((1, 3)))
    ny = lorak.Nystroem(n_components=8, random_state=0, fit_inverse_transform=True).fit(A)
    assert ny.inverse_transform(ny.transform(A[:2])).shape == (2, 5)
    ny.set_params(fit_inverse_transform=False).fit(B)
    for name in ("dual_coef_", "X_transformed_fit_", "inverse_kernel_"):
        assert not hasattr(ny, name)
    with pytest.raises(NotFittedError, match="without fit_inverse_transform=True"):
        ny.inverse_transform(ny.transform(B[:2]))
    # and the map of a refit with it is the new one
    ny.set_params(fit_inverse_transform=True).fit(B)
    assert ny.inverse_transform(ny.transform(B[:2])).shape == (2, 3)


def test_constant_rows_with_pre_images_say_what_helps():
    """Issue 30, item 14: the map's bandwidth is the spread of the factor rows; for a
    constant X there is none, and "pass a numeric bandwidth" (the kernel's) did not help."""
    X = np.ones((20, 3))
    ny = lorak.Nystroem(n_components=4, random_state=0, gamma=0.5, fit_inverse_transform=True)
    with pytest.raises(ValueError, match="same feature row") as info:
        ny.fit(X)
    assert "numeric bandwidth" not in str(info.value)
    assert "without fit_inverse_transform" in str(info.value)
    # without pre-images the same fit works
    ny.set_params(fit_inverse_transform=False).fit(X)

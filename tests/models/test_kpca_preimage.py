"""Pre-images of kernel PCA scores (``LowRankKernelPCA(fit_inverse_transform=True)``;
issue 21, item 3), against scikit-learn's dense ``KernelPCA`` on small n."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.decomposition import KernelPCA
from sklearn.kernel_ridge import KernelRidge

import lorak


@pytest.fixture(scope="module")
def digits():
    return load_digits().data[:300] / 16.0


def test_pre_images_equal_kernel_ridge_on_the_dense_kpca_scores(digits):
    X, Xnew = digits[:200], digits[200:260]
    n, gamma, k, alpha = X.shape[0], 0.05, 12, 0.1
    # every row a landmark: the factor is exact, the scores are dense kernel PCA's
    factor = lorak.Nystroem(kernel="gaussian", gamma=gamma, n_components=n, landmarks="uniform")
    kp = lorak.LowRankKernelPCA(factor, n_components=k, fit_inverse_transform=True, alpha=alpha)
    Z = kp.fit_transform(X)
    ref = KernelPCA(n_components=k, kernel="rbf", gamma=gamma, eigen_solver="dense").fit(X)
    Zr, Zr_new = ref.transform(X), ref.transform(Xnew)
    # the scores agree up to each component's sign; Gaussian distances do not see signs
    np.testing.assert_allclose(np.abs(Z), np.abs(Zr), rtol=1e-6, atol=1e-8)
    b = kp.inverse_kernel_.bandwidth
    krr = KernelRidge(alpha=alpha, kernel="rbf", gamma=1.0 / b).fit(Zr, X)
    np.testing.assert_allclose(
        kp.inverse_transform(kp.transform(Xnew)), krr.predict(Zr_new), rtol=1e-6, atol=1e-8
    )
    np.testing.assert_allclose(kp.X_transformed_fit_, Z, rtol=1e-10, atol=1e-12)


def test_pre_images_denoise_held_out_digits():
    X = load_digits().data / 16.0
    rng = np.random.default_rng(0)
    train, test = X[:1000], X[1000:1300]
    noisy = test + 0.25 * rng.standard_normal(test.shape)
    kp = lorak.LowRankKernelPCA(
        lorak.Nystroem(n_components=150, landmarks="kmeans", random_state=0),
        n_components=32,
        fit_inverse_transform=True,
        alpha=1e-3,
    ).fit(train)
    rec = kp.inverse_transform(kp.transform(noisy))
    ratio = np.linalg.norm(rec - test) / np.linalg.norm(noisy - test)
    assert ratio < 0.8, ratio


def test_pre_image_map_on_a_subsample_is_deterministic():
    X = np.random.default_rng(0).random((2300, 3))

    def fit(seed):
        return lorak.LowRankKernelPCA(
            lorak.Nystroem(n_components=15, random_state=0),
            n_components=3,
            fit_inverse_transform=True,
            random_state=seed,
        ).fit(X)

    a, b = fit(1), fit(1)
    assert a.X_transformed_fit_.shape == (2000, 3)
    np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)


def test_inverse_transform_errors(digits):
    X = digits[:60]
    kp = lorak.LowRankKernelPCA(lorak.Nystroem(n_components=10, random_state=0), n_components=4)
    kp.fit(X)
    with pytest.raises(ValueError, match="fit_inverse_transform=True"):
        kp.inverse_transform(kp.transform(X))
    kp.set_params(fit_inverse_transform=True).fit(X)
    with pytest.raises(ValueError, match="columns"):
        kp.inverse_transform(np.ones((2, 5)))
    with pytest.raises(ValueError, match="alpha must be"):
        kp.set_params(alpha=-1.0).fit(X)
    kp.set_params(alpha=1.0).fit(X)
    kp.set_params(fit_inverse_transform=False).fit(X)  # a refit drops the map
    with pytest.raises(ValueError, match="fit_inverse_transform=True"):
        kp.inverse_transform(kp.transform(X))

"""The shared base of the kernel-factor estimators: kernel, validation, transform.

A class lives in estimators/<stem> or models/<stem>; its math in learn/<stem> or
decompose/<stem>. Every factor stores ``components_`` (the points the factor is
expressed on: landmarks, pivots or training rows), ``normalization_`` (m × r) and
``kernel_`` (the resolved kernel), and ``transform(X) = k(X, components_) @
normalization_`` — rows G with G Gᵀ ≈ K — computed chunk by chunk so that only the
n × r output is ever n-sized.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._chunked import ChunkedRowsMixin, is_dask_array, validate_lazy
from .._validation import check_generator, check_n_components, validate_data
from ..kernels import kernel_product, make_kernel
from ..landmarks import Landmarks, select_landmarks

__all__ = ["shared_landmarks"]


def shared_landmarks(landmarks, X, n_landmarks, bank, rng) -> Landmarks:
    """The landmark set all kernels of a bank share, chosen with its middle kernel.

    (Only kernel-dependent strategies such as ``"column_norm"`` look at the kernel;
    the middle of a bandwidth grid is its typical width.)
    """
    return select_landmarks(landmarks, X, n_landmarks, rng=rng, kernel=bank[len(bank) // 2])


class _KernelFactor(
    ChunkedRowsMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator
):
    """Shared parts: kernel construction, input validation, chunked ``transform``."""

    _kernel_args = ("gamma", "bandwidth", "degree", "coef0", "kernel_params")

    def _build_kernel(self, X, rng):
        kernel = make_kernel(
            self.kernel,
            gamma=self.gamma,
            bandwidth=self.bandwidth,
            degree=self.degree,
            coef0=self.coef0,
            kernel_params=self.kernel_params,
        )
        return kernel.resolve(X, rng)

    # ------------------------------------------------------------ the template fit
    def fit(self, X, y=None):
        """Validate X, build the kernel, choose landmarks, run the math, store the factor.

        The steps are the hooks below; an estimator supplies ``_fit_math`` (and, where it
        has them, ``_check_fit_params`` and ``_select_landmarks``).
        """
        X = self._validate_fit_X(X)
        m = self._check_fit_params(X)
        rng = check_generator(self.random_state) if hasattr(self, "random_state") else None
        self.kernel_ = self._build_kernel(X, rng)
        landmarks = self._select_landmarks(X, m, rng)
        self._fit_math(X, y, landmarks)
        return self

    def _check_fit_params(self, X):
        """Check the parameters against X; return the rank or landmark count m."""
        return self._check_n_components(X.shape[0])

    def _select_landmarks(self, X, m, rng):
        """The landmarks the math works on, or None when it needs none."""
        return None

    def _fit_math(self, X, y, landmarks):  # pragma: no cover - every factor defines it
        raise NotImplementedError

    # ------------------------------------------------------------ shared steps
    def _validate_fit_X(self, X):
        if is_dask_array(X):  # only classes with _lazy_fit = True get here
            return validate_lazy(self, X, reset=True)
        return validate_data(
            self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=True
        )

    def _check_n_components(self, n_samples):
        return check_n_components(self.n_components, n_samples)

    def transform(self, X):
        """Factor rows G(X) (n × r) with G(X) G(X')ᵀ ≈ k(X, X')."""
        check_is_fitted(self, "normalization_")
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)
        N = self.normalization_.astype(X.dtype, copy=False)
        return kernel_product(
            self.kernel_,
            X,
            self.components_,
            N,
            upper_triangular=getattr(self, "normalization_is_upper_", False),
        )

    @property
    def _n_features_out(self):
        return self.normalization_.shape[1]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        kernel = getattr(self, "kernel", None)
        tags.input_tags.pairwise = isinstance(kernel, str) and kernel == "precomputed"
        if isinstance(kernel, str) and kernel in ("chi2", "additive_chi2", "precomputed"):
            # scikit-learn's χ² kernels take dense non-negative data only
            tags.input_tags.sparse = False
            tags.input_tags.positive_only = kernel != "precomputed"
        return tags

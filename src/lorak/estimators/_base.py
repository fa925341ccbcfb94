"""The kernel-factor templates: kernel, landmarks, validation, chunked transform.

``_KernelFactor`` and ``_LandmarkFactor``, the bases of the factors that
build a kernel on pivots or landmarks; the generic pieces every estimator and model
uses (``new_rows``, ``validate_new_rows``, ``TransformerBase``, …) live in
``lorak._core.estimator`` (:ref:`guide-internals-base`).
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._core.chunked import record_n_features
from .._core.estimator import TransformerBase, check_symmetric_block, refuse_sparse_kernel
from .._core.rows import resolve_rows
from .._core.validation import check_data, check_generator, check_n_components, validate_data
from ..decompose import pivot_transform_matrix
from ..kernels import KernelColumns, kernel_product, make_kernel
from ..learn import shared_landmarks

__all__ = ["shared_landmarks"]


class _KernelFactor(TransformerBase):
    """Shared parts: kernel construction, input validation, chunked ``transform``."""

    _kernel_args = ("gamma", "bandwidth", "degree", "coef0", "kernel_params")

    def _kernel_gamma(self, X):
        """The gamma given to the kernel (Nystroem fills in scikit-learn's default)."""
        return self.gamma

    def _build_kernel(self, X, rng):
        kernel = make_kernel(
            self.kernel,
            gamma=self._kernel_gamma(X),
            bandwidth=self.bandwidth,
            degree=self.degree,
            coef0=self.coef0,
            kernel_params=self.kernel_params,
        )
        return kernel.resolve(X, rng)

    # ------------------------------------------------------------ the template fit
    def fit(self, X, y=None):
        """Validate X, build the kernel, run the math, store the factor.

        The steps are the hooks below; an estimator supplies ``_fit_math`` (and, where it
        has one, ``_check_fit_params``).
        """
        X = self._validate_fit_X(X)
        m = self._check_fit_params(X)
        rng = check_generator(self.random_state) if hasattr(self, "random_state") else None
        self.kernel_ = self._build_kernel(X, rng)
        self._fit_math(X, y, m)
        return self

    def _check_fit_params(self, X):
        """Check the parameters against X; return the rank m the math computes."""
        return self._check_n_components(X.shape[0])

    def _fit_math(self, X, y, m):  # pragma: no cover - every factor defines it
        raise NotImplementedError

    # ------------------------------------------------------------ shared steps
    def _validate_fit_X(self, X):
        """The validated training X (a dask X only for classes with ``_lazy_fit``)."""
        return resolve_rows(self, X).data

    def _check_n_components(self, n_samples):
        return check_n_components(self.n_components, n_samples)

    def _store_pivots(self, G, pivots, X, dtype):
        """Store a pivoted Cholesky factor (ICD, CSI): ``G_`` of the training rows and
        ``transform(X) = k(X, X[pivots]) L⁻ᵀ`` with L = G[pivots] (X: the training
        points, or the precomputed K; no components for a KernelColumns)."""
        if isinstance(getattr(self, "kernel_", None), str) and not isinstance(X, KernelColumns):
            check_symmetric_block(
                X[np.ix_(pivots, pivots)], X.dtype, "the pivot block K[pivots][:, pivots]"
            )
        self.G_ = G.astype(dtype, copy=False)
        self.pivots_ = pivots
        self.component_indices_ = pivots
        self.components_ = None if isinstance(X, KernelColumns) else X[pivots]
        self.normalization_ = pivot_transform_matrix(G, pivots).astype(dtype)
        self.normalization_is_upper_ = True
        self.n_components_ = int(G.shape[1])

    def _precomputed_kernel(self, K):
        """``(K, diag, column, dtype)`` of a precomputed training kernel.

        K is the dense n × n matrix or a :class:`lorak.kernels.KernelColumns` (columns
        on demand); ``column(i)`` returns K[:, i]. Sets ``n_features_in_`` = n, what
        ``transform`` then expects of k(X_new, X_train).
        """
        given = [k for k in self._kernel_args if getattr(self, k, None) is not None]
        if given:
            raise ValueError(
                f"kernel='precomputed' takes no kernel parameters; got {', '.join(given)}"
            )
        if isinstance(K, KernelColumns):
            record_n_features(self, K.shape[0], reset=True)
            return K, K.diag, K.column, np.dtype(np.float64)
        refuse_sparse_kernel(K, " or a lorak.kernels.KernelColumns")
        K = validate_data(self, K, dtype=[np.float64, np.float32], reset=True)
        if K.shape[0] != K.shape[1]:
            raise ValueError(
                "kernel='precomputed' takes the square n × n kernel matrix of the training "
                f"rows (or a lorak.kernels.KernelColumns); got shape {K.shape}"
            )
        return K, np.diag(K).astype(np.float64), lambda i: K[:, i], K.dtype

    def transform(self, X):
        """Factor rows G(X) (n × r) with G(X) G(X')ᵀ ≈ k(X, X').

        With ``kernel="precomputed"``, X is k(X_new, components) (n' × m, the columns in
        the order of ``component_indices_``) or k(X_new, X_train) (n' × n_train), of
        which only the columns at ``component_indices_`` are read. At m = n_train the
        matrix is read as k(X_new, X_train).
        """
        check_is_fitted(self, "normalization_")
        if isinstance(getattr(self, "kernel_", None), str):  # precomputed
            return self._transform_precomputed(X)

        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)
        N = self.normalization_.astype(X.dtype, copy=False)
        return kernel_product(
            self.kernel_,
            X,
            self.components_,
            N,
            upper_triangular=getattr(self, "normalization_is_upper_", False),
        )

    def _transform_precomputed(self, X):
        """G of a precomputed k(X_new, landmarks) (n' × m) or k(X_new, X_train) (n' × n)."""
        idx = np.asarray(self.component_indices_)
        n, m = int(self.n_features_in_), int(idx.size)
        refuse_sparse_kernel(X)
        shape = getattr(X, "shape", None)
        if shape is None:  # a list or another array-like: read it once
            X = check_data(X, accept_sparse=False)
            shape = X.shape
        ncols = shape[1] if len(shape) == 2 else None
        if ncols == m and m != n:  # k(X_new, landmarks)
            X = check_data(X, accept_sparse=False)
            N = self.normalization_.astype(X.dtype, copy=False)
            return X @ N
        if ncols is not None and ncols != n:
            check_data(X, accept_sparse=False)  # NaN, inf or non-numeric entries first
            raise ValueError(
                f"X has {ncols} features, but {type(self).__name__} is expecting {n} "
                "features as input: with kernel='precomputed', transform takes "
                f"k(X_new, X_train) of shape (n_new, {n}) or k(X_new, landmarks) of shape "
                f"(n_new, {m}) (columns in the order of component_indices_); got shape "
                f"{tuple(shape)}"
            )
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        N = self.normalization_.astype(X.dtype, copy=False)
        return X[:, idx] @ N

    @property
    def _n_features_out(self):
        return self.normalization_.shape[1]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        kernel = getattr(self, "kernel", None)
        tags.input_tags.pairwise = isinstance(kernel, str) and kernel == "precomputed"
        if isinstance(kernel, str) and kernel in ("chi2", "additive_chi2", "precomputed"):
            # scikit-learn's χ² kernels take dense non-negative data only
            tags.input_tags.sparse = False
            tags.input_tags.positive_only = kernel != "precomputed"
        return tags


class _LandmarkFactor(_KernelFactor):
    """A factor on landmarks Z: ``landmarks_`` is ``components_`` under the papers' name."""

    @property
    def landmarks_(self):
        check_is_fitted(self, "components_")
        return self.components_

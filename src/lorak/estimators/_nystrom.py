"""Nyström factors (landmarks, then the m × m landmark kernel) and the exact baseline.

Its math: :func:`lorak.decompose.nystrom_normalization` (Nyström with
chosen landmarks) and :func:`lorak.decompose.top_eigenpairs` (the exact eigen factor).
"""

from __future__ import annotations

import functools

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from .._core.array_api import (
    array_api_dispatched,
    array_namespace,
    device_of,
    has_float64,
    like_input,
    on_device,
    to_host,
)
from .._core.estimator import (
    check_product_matrix,
    check_symmetric_block,
    new_rows,
    refuse_sparse_kernel,
)
from .._core.rows import refuse_device, resolve_rows
from .._core.validation import check_generator, check_rtol, validate_data
from ..decompose import (
    PreImageMap,
    check_alpha,
    default_rtol,
    device_nystrom_normalization,
    fit_preimage,
    nystrom_normalization,
    preimage,
    preimage_rows,
    top_eigenpairs,
)
from ..kernels import check_device_kernel, kernel_block, kernel_product
from ..landmarks import select_landmarks
from ._base import _KernelFactor, _LandmarkFactor

__all__ = ["ExactEigen", "Nystroem"]


def _kernel_rows(kernel, landmarks, Xb):
    """k(Xb, landmarks): a picklable row map (it travels to dask workers)."""
    return kernel_block(kernel, Xb, landmarks)


class Nystroem(_LandmarkFactor):
    """Nyström low-rank kernel factor with a choice of landmarks.

    A drop-in for :class:`sklearn.kernel_approximation.Nystroem` (same ``kernel``,
    ``gamma``, ``coef0``, ``degree``, ``kernel_params``, ``n_components``,
    ``random_state``, and the same defaults), plus ``landmarks=`` (k-means centres
    as in Zhang, Tsang & Kwok 2008, Drineas–Mahoney column sampling, or your own),
    ``bandwidth=`` in the papers' form exp(−‖x−y‖²/b) or a rule such as
    ``"mean_to_centroid"``, float32 kept float32, and a transform computed in chunks
    (peak memory: the n × r output plus one chunk).

    Parameters
    ----------
    kernel : str, Kernel or callable, default="rbf"
        A name from :data:`lorak.kernels.KERNELS` (every scikit-learn kernel name), a
        :class:`lorak.kernels.Kernel`, a callable ``f(X, Z) -> block`` (or scikit-learn's
        pairwise ``f(x, z) -> float``, evaluated once per landmark pair), or
        ``"precomputed"``: ``fit`` takes the n × n training kernel (or, with
        ``landmarks`` given as m row indices, k(X, landmarks) of shape n × m),
        ``transform`` k(X_new, landmarks) (n' × m) or k(X_new, X_train) (n' × n, of
        which the landmark columns are read; at m = n the matrix is read this way).
        The landmark block W must be symmetric: max|W − Wᵀ| ≤ √eps · max|W| (eps of
        K's dtype). Every name scikit-learn knows means scikit-learn's kernel:
        ``"laplacian"`` is exp(−γ‖x−y‖₁); the papers' exp(−‖x−y‖/σ) is
        ``"laplacian_l2"``. Kernels that are not PSD (sigmoid, additive χ², and a
        precomputed K with clearly negative eigenvalues on the landmarks) use the
        magnitudes of W's eigenvalues, as scikit-learn's Nystroem does.
    gamma : float, optional
        scikit-learn's parameterization (rbf: exp(−γ‖x−y‖²)). With neither gamma nor
        bandwidth, the rbf/laplacian/polynomial kernels (and laplacian_l2) use
        γ = 1/n_features exactly as scikit-learn does.
    bandwidth : float or str, optional
        b in exp(−‖x−y‖²/b) (σ for the Laplacians), or a rule: ``"mean_pairwise"``,
        ``"mean_to_centroid"``, ``"median"``.
    degree, coef0, kernel_params : polynomial / extra kernel parameters.
    n_components : int, default=100
        Number of landmarks m (ignored when ``landmarks`` is an array of points or
        indices). The factor's rank r ≤ m drops eigenvalues of W below ``rtol``.
    landmarks : str, callable or array, default="uniform"
        ``"uniform"``, ``"kmeans"``, ``"column_norm"`` (see :mod:`lorak.landmarks`), a
        callable strategy, a 1-D array of row indices or a 2-D array of points.
    rtol : float, optional
        Eigenvalues of W at or below ``rtol · λ_max`` are dropped (default 1e-10 in
        float64, 1e-6 in float32).
    random_state : int, Generator or None
    fit_inverse_transform : bool, default=False
        Learn a pre-image map for :meth:`inverse_transform`: kernel ridge regression
        from factor rows back to rows (Gaussian kernel on the factor rows, bandwidth =
        their mean squared distance to their centroid), the approach of
        :class:`sklearn.decomposition.KernelPCA`, fitted on at most 2000 training rows
        drawn at random (all when n ≤ 2000) so that it stays O(1) in n
        (:ref:`guide-downstream`).
    alpha : float, default=1.0
        Ridge of that regression.

    Attributes
    ----------
    components_ : (m, d) landmarks (scikit-learn's name); ``landmarks_`` is an alias.
    component_indices_ : (m,) rows of X used as landmarks, or None.
    landmark_weights_ : (m,) Drineas–Mahoney weights, or None.
    normalization_ : (m, r) array N with transform(X) = k(X, Z) N: upper triangular
        L⁻ᵀ from the Cholesky factor of W when W is well conditioned (then r = m),
        else U Λ^{-1/2} over the kept eigenpairs (see :mod:`lorak.decompose._nystrom`).
    normalization_is_upper_ : bool, which of the two.
    n_components_ : int, the rank r of the factor.
    kernel_ : the resolved :class:`lorak.kernels.Kernel`.
    landmark_info_ : dict of strategy diagnostics (k-means inertia, …).
    dual_coef_, X_transformed_fit_, inverse_kernel_ : the pre-image map (with
        ``fit_inverse_transform``): inverse_transform(G) = k(G, X_transformed_fit_) dual_coef_.

    Notes
    -----
    Array API inputs (a PyTorch tensor, a CuPy array, …) are fitted and transformed on
    their own device when array API dispatch is enabled
    (``lorak.set_config(array_api_dispatch=True)``); what runs there: :ref:`guide-gpu`.
    """

    _array_api_support = True

    @property
    def takes_resolved_input(self) -> bool:
        """A capability the estimators that wrap a factor read: ``fit``, ``transform``
        and ``transform_product`` take X as they resolved it (:class:`lorak._core.rows.Rows`),
        so it is not validated again. Not with a precomputed kernel (X is a kernel
        matrix there)."""
        return not (isinstance(self.kernel, str) and self.kernel == "precomputed")

    def __init__(
        self,
        kernel="rbf",
        *,
        gamma=None,
        bandwidth=None,
        coef0=None,
        degree=None,
        kernel_params=None,
        n_components=100,
        landmarks="uniform",
        rtol=None,
        random_state=None,
        fit_inverse_transform=False,
        alpha=1.0,
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.bandwidth = bandwidth
        self.coef0 = coef0
        self.degree = degree
        self.kernel_params = kernel_params
        self.n_components = n_components
        self.landmarks = landmarks
        self.rtol = rtol
        self.random_state = random_state
        self.fit_inverse_transform = fit_inverse_transform
        self.alpha = alpha

    _lazy_fit = True  # fit on a dask array: see lorak.parallel

    def _check_kernel_args(self):
        if callable(self.kernel) or self.kernel == "precomputed":
            given = [k for k in ("gamma", "coef0", "degree") if getattr(self, k) is not None]
            if given:
                raise ValueError(
                    "Don't pass gamma, coef0 or degree to Nystroem if using a callable or "
                    f"precomputed kernel (got {', '.join(given)}); use kernel_params or set "
                    "them inside the kernel"
                )

    def _kernel_gamma(self, X):
        """``gamma``, or scikit-learn's default 1/n_features for the kernels that use it
        when neither gamma nor a bandwidth is given."""
        self._check_kernel_args()
        gamma = self.gamma
        uses_gamma = isinstance(self.kernel, str) and self.kernel in (
            "rbf",
            "gaussian",
            "laplacian",
            "laplacian_l2",
            "poly",
            "polynomial",
        )
        if uses_gamma and gamma is None and self.bandwidth is None:
            params = self.kernel_params or {}
            # a key given as None is not given: kernel_params={"gamma": None} is
            # scikit-learn's default too
            if params.get("gamma") is None and params.get("bandwidth") is None:
                gamma = 1.0 / X.shape[1]  # scikit-learn's default
        return gamma

    def fit(self, X, y=None):
        """Choose landmarks on X and factor the landmark kernel W."""
        return self._fit_validated(resolve_rows(self, X))

    def fit_transform(self, X, y=None):
        """Fit on X and return its factor rows, ``fit(X).transform(X)`` with X checked once.

        (The finiteness check is a pass over X; the rows validated for the fit are
        transformed as they are: read again in chunks for a dask array or a memmap. A
        precomputed kernel goes through ``transform``'s checks.)
        """
        rows = resolve_rows(self, X)
        self._fit_validated(rows)
        if not self.takes_resolved_input:
            return self.transform(rows.source)
        return rows.map(self, "transform")

    def _factor_arrays(self, rows):
        """``(components_, normalization_)`` for computing on ``rows``: in their
        namespace, on their device, in their float dtype."""
        if sp.issparse(self.components_):
            rows.refuse_device(
                "this Nystroem was fitted on sparse data: its landmarks are sparse and "
                "cannot move to an array API device; transform NumPy or SciPy input"
            )
        return rows.operands(self.components_, self.normalization_)

    def transform(self, X):
        """Factor rows G(X) = k(X, components_) normalization_ (n × r), in row chunks.

        With ``kernel="precomputed"``, X is k(X_new, landmarks) (n' × m) or
        k(X_new, X_train) (n' × n_train), of which only the landmark columns are read.
        An array API X (dispatch enabled) gives G in its namespace, on its device.
        """
        check_is_fitted(self, "normalization_")
        if isinstance(getattr(self, "kernel_", None), str):  # precomputed
            refuse_device(X, _PRECOMPUTED_ON_DEVICE)
            return super().transform(X)
        rows = new_rows(self, X, "normalization_")
        Z, N = self._factor_arrays(rows)
        return kernel_product(
            self.kernel_, rows.data, Z, N, upper_triangular=self.normalization_is_upper_
        )

    def transform_product(self, X, M):
        """``transform(X) @ M`` for a small M (r × c): k(X, components_) (N M), in row
        chunks, without the n × r factor rows — a linear model's predictions on the
        factor at the cost of the kernel rows. Host arrays; other inputs go through
        ``transform``."""
        check_is_fitted(self, "normalization_")
        M = check_product_matrix(M, self.n_components_)
        if isinstance(getattr(self, "kernel_", None), str):  # precomputed
            G = self.transform(X)
            return G @ M.astype(G.dtype, copy=False)
        rows = new_rows(self, X, "normalization_")
        if rows.on_device:
            G = self.transform(rows)
            (Md,) = like_input(G, M)
            return G @ Md
        NM = np.asarray(self.normalization_, dtype=np.float64) @ M
        X = rows.data
        return kernel_product(self.kernel_, X, self.components_, NM.astype(X.dtype, copy=False))

    def kernel_rows_map(self):
        """(rows, N, max k(x, x)) with ``transform(X) = rows(X) @ N`` — rows the kernel
        rows k(X, components_), N ``normalization_`` as float64 — for a fit on host
        arrays with a kernel function; None otherwise (a precomputed kernel, sparse or
        device landmarks, a subclass with a transform of its own). Lets a pass over the
        rows accumulate Grams of the kernel rows and apply N once after the sum."""
        if type(self).transform is not Nystroem.transform or isinstance(self.kernel_, str):
            return None
        Z, N = self.components_, self.normalization_
        if not isinstance(Z, np.ndarray):  # sparse landmarks, or a fit on a device
            return None
        Z = np.asarray(Z)
        max_diag = float(np.max(np.asarray(self.kernel_.diag(Z[:1]), dtype=np.float64)))
        return functools.partial(_kernel_rows, self.kernel_, Z), np.asarray(N, np.float64), max_diag

    def _fit_validated(self, rows):
        X = rows.data
        rng = check_generator(self.random_state)
        given = not isinstance(self.landmarks, str) and not callable(self.landmarks)
        m = None if given else self._check_n_components(X.shape[0])
        check_rtol(self.rtol)
        if rows.on_device:
            return self._fit_device(rows, m, rng)
        if isinstance(self.kernel, str) and self.kernel == "precomputed":
            return self._fit_precomputed(X, m, rng)
        if self.__sklearn_tags__().input_tags.positive_only and not sp.issparse(X):
            if np.min(X, initial=0.0) < 0:
                raise ValueError(
                    f"Negative values in data passed to Nystroem: kernel={self.kernel!r} "
                    "needs non-negative data"
                )
        self.kernel_ = self._build_kernel(X, rng)
        lm = select_landmarks(self.landmarks, X, m, rng=rng, kernel=self.kernel_)
        Z = lm.points
        if not sp.issparse(Z):
            Z = np.asarray(Z, dtype=X.dtype)
        Z64 = Z.astype(np.float64) if Z.dtype != np.float64 else Z
        # k(Z, Z) through the kernel's own call: a scikit-learn-style callable f(x, z)
        # is then evaluated once per unordered landmark pair, as scikit-learn does
        W = np.asarray(self.kernel_(Z64), dtype=np.float64)
        norm = _normalization(self.kernel_, W, lm.weights, self.rtol, X.dtype)
        self._store_landmarks(lm, Z, norm, X.dtype)
        if self.fit_inverse_transform:
            self._fit_inverse(rows, rng)
        return self

    def _store_landmarks(self, lm, Z, norm, dtype):
        """The fitted attributes of landmarks ``lm`` (points Z) and W's normalization."""
        self.normalization_ = norm.N
        self.normalization_is_upper_ = norm.upper_triangular
        self.n_components_ = norm.rank
        self.components_ = Z
        self.component_indices_ = lm.indices
        self.landmark_weights_ = lm.weights
        self.landmark_info_ = dict(lm.info or {})
        self.rtol_ = default_rtol(dtype) if self.rtol is None else self.rtol

    def _fit_device(self, rows, m, rng):
        """The fit on an array API X, in its namespace and on its device.

        The same steps as on NumPy (bandwidth rule, landmarks, W = k(Z, Z) in float64
        where the device has it, the Cholesky normalization) in X's namespace; W goes
        to the host only when the device's Cholesky path does not apply
        (:func:`lorak.decompose.device_nystrom_normalization`).
        """
        if isinstance(self.kernel, str) and self.kernel == "precomputed":
            raise TypeError(_PRECOMPUTED_ON_DEVICE)
        X, xp = rows.data, rows.xp
        self.kernel_ = self._build_kernel(X, rng)
        check_device_kernel(self.kernel_)
        lm = select_landmarks(self.landmarks, X, m, rng=rng, kernel=self.kernel_)
        Z = lm.points
        wide = xp.float64 if has_float64(xp, rows.device) else xp.float32
        W = kernel_block(self.kernel_, xp.astype(Z, wide), xp.astype(Z, wide))
        norm = device_nystrom_normalization(
            W,
            weights=lm.weights,
            rtol=self.rtol,
            dtype=X.dtype,
            psd=getattr(self.kernel_, "psd", True),
        )
        self._store_landmarks(lm, Z, norm, rows.dtype)
        if self.fit_inverse_transform:
            self._fit_inverse(rows, rng)
        return self

    def _fit_inverse(self, rows, rng):
        """The pre-image map, fitted on the host on at most 2000 training rows and
        stored where the rows live."""
        check_alpha(self.alpha)
        pick = preimage_rows(rows.n_rows, rng)
        sub = rows if pick is None else rows.take(pick)
        G = to_host(sub.features(self))
        pmap = fit_preimage(G, to_host(sub.data), self.alpha)
        self.inverse_kernel_ = pmap.kernel
        self.X_transformed_fit_, self.dual_coef_ = rows.put(pmap.features, pmap.dual_coef)

    def inverse_transform(self, X):
        """Pre-images: points whose factor rows are close to the rows of X (n × r).

        Kernel ridge regression learnt at fit time (``fit_inverse_transform=True``)
        from the landmarks' factor rows back to the landmarks.
        """
        check_is_fitted(self, "normalization_")
        if not hasattr(self, "dual_coef_"):
            raise NotFittedError(
                "this Nystroem was fitted without fit_inverse_transform=True, so it has no "
                "pre-image map: set fit_inverse_transform=True and fit again (it needs the "
                "points: not with kernel='precomputed')"
            )
        if array_api_dispatched(X):  # on X's device, in float64 where the device has it
            xp, dev = array_namespace(X), device_of(X)
            F = on_device(self.X_transformed_fit_, xp, dev)
            D = on_device(self.dual_coef_, xp, dev)
            r = F.shape[1]
            if X.ndim != 2 or X.shape[1] != r:
                raise ValueError(
                    f"X must be 2-D with {r} columns (the feature rank); got shape {tuple(X.shape)}"
                )
            G = xp.astype(X, F.dtype)
            return kernel_block(self.inverse_kernel_, G, F) @ D
        # dispatch off: NumPy, as scikit-learn does; a map fitted on a device comes back
        X, features, dual = to_host(X), to_host(self.X_transformed_fit_), to_host(self.dual_coef_)
        return preimage(X, PreImageMap(self.inverse_kernel_, features, dual))

    def partial_fit(self, X, y=None):
        """Fit on the first batch; later batches only check their shape.

        A Nyström factor depends on the data only through its landmarks: once they are
        chosen (from the first batch, or given as points), every batch is transformed
        by the same k(·, Z) N, so streaming fits need no state beyond the landmarks.
        Pass the landmarks as points and a numeric gamma or bandwidth (a bandwidth rule
        is resolved on the first batch) to make the result independent of how the rows
        are batched.
        """
        if not hasattr(self, "normalization_"):
            return self.fit(X, y)
        if isinstance(getattr(self, "kernel_", None), str):  # precomputed
            validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        else:
            validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)
        return self

    def _fit_precomputed(self, K, m, rng):
        """``kernel="precomputed"``: X is the n × n training kernel (scikit-learn's form),
        or k(X, landmarks) (n × m) when ``landmarks`` gives the m landmark rows.

        Landmarks are rows of K (``"uniform"`` or row indices); W = K[idx][:, idx] (or
        the landmark rows of k(X, landmarks)), checked to be symmetric; ``transform``
        takes k(X_new, landmarks) (n' × m) or k(X_new, X_train) (n' × n).
        """
        refuse_sparse_kernel(K)
        n = K.shape[0]
        given = np.asarray(self.landmarks) if m is None else None
        columns = (  # k(X, landmarks): one column per given landmark row
            K.shape[0] != K.shape[1]
            and given is not None
            and given.ndim == 1
            and K.shape[1] == given.size
        )
        if K.shape[0] != K.shape[1] and not columns:
            raise ValueError(
                "kernel='precomputed' takes the square n × n kernel matrix of the training "
                "rows, or k(X, landmarks) of shape (n, m) when landmarks= gives the m "
                f"landmark rows as indices; got shape {K.shape}"
                + (
                    f" with {given.size} landmark indices"
                    if given is not None and given.ndim == 1
                    else ""
                )
            )
        self._check_kernel_args()
        if self.fit_inverse_transform:
            raise ValueError("fit_inverse_transform needs the points: not with 'precomputed'")
        if isinstance(self.landmarks, str) and self.landmarks != "uniform":
            raise ValueError(
                "kernel='precomputed' selects landmarks as rows: landmarks must be "
                f"'uniform' or row indices; got {self.landmarks!r}"
            )
        lm = select_landmarks(self.landmarks, K, m, rng=rng, kernel=None)
        if lm.indices is None:
            raise ValueError("kernel='precomputed' needs landmarks given as row indices")
        idx = np.asarray(lm.indices)
        cols = np.arange(idx.size) if columns else idx
        W = np.asarray(K[np.ix_(idx, cols)], dtype=np.float64)
        check_symmetric_block(W, K.dtype, "the landmark block W = K[landmarks][:, landmarks]")
        # psd=False: a precomputed K may be indefinite (a sigmoid kernel); W is then
        # treated as the named indefinite kernels treat theirs
        norm = nystrom_normalization(
            W, weights=lm.weights, rtol=self.rtol, dtype=K.dtype, psd=False
        )
        self.kernel_ = "precomputed"
        self._store_landmarks(lm, K[idx], norm, K.dtype)
        self.n_features_in_ = n  # what the n-column form of transform takes
        return self


_PRECOMPUTED_ON_DEVICE = (
    "kernel='precomputed' has no array API path: pass the kernel matrix as a NumPy array"
)


def _normalization(kernel, W, weights, rtol, dtype):
    """Nyström normalization; for kernels that are not PSD (scikit-learn's sigmoid and
    additive χ²), a clearly indefinite W enters by the magnitudes of its eigenvalues:
    G Gᵀ = E U |Λ|⁻¹ Uᵀ Eᵀ, what scikit-learn's SVD-based normalization gives, instead of
    dropping the negative part (which would leave fewer columns than scikit-learn's).
    The same call as for a precomputed K (``psd=False``), so that both paths agree."""
    return nystrom_normalization(
        W, weights=weights, rtol=rtol, dtype=dtype, psd=getattr(kernel, "psd", True)
    )


class ExactEigen(_KernelFactor):
    """The optimal rank-m factor from the top eigenpairs of the full kernel matrix.

    A baseline: it forms the n × n kernel (O(n²) memory, O(n²m) time), so it refuses
    n above ``max_samples``. ``transform`` uses the Nyström extension over all
    training rows, k(X, X_train) U Λ^{-1/2}, which reproduces U Λ^{1/2} on them.

    Parameters
    ----------
    kernel, gamma, bandwidth, coef0, degree, kernel_params : as for IncompleteCholesky.
    n_components : int, default=100
    max_samples : int, default=10000
        Largest n accepted (the n × n float64 kernel at 10000 rows takes 0.8 GB).

    Attributes
    ----------
    eigenvalues_ : (r,) top eigenvalues of K, decreasing.
    components_ : the training rows.
    normalization_ : (n, r) U Λ^{-1/2}.
    """

    def __init__(
        self,
        kernel="rbf",
        *,
        gamma=None,
        bandwidth=None,
        coef0=None,
        degree=None,
        kernel_params=None,
        n_components=100,
        max_samples=10000,
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.bandwidth = bandwidth
        self.coef0 = coef0
        self.degree = degree
        self.kernel_params = kernel_params
        self.n_components = n_components
        self.max_samples = max_samples

    _lazy_fit_reason = "it forms the full n × n kernel matrix"

    def fit_transform(self, X, y=None):
        """Fit, and return U Λ^{1/2} of the training rows."""
        return self.fit(X).embedding_

    def _check_fit_params(self, X):
        n = X.shape[0]
        if n > self.max_samples:
            raise ValueError(
                f"ExactEigen forms the full {n}×{n} kernel matrix, but max_samples="
                f"{self.max_samples}; use Nystroem or IncompleteCholesky for large n, or "
                "raise max_samples if the memory is there"
            )
        return self._check_n_components(n)

    def _fit_math(self, X, y, m):
        """The top m eigenpairs of the full kernel matrix of X."""
        K = kernel_block(self.kernel_, X, X).astype(np.float64, copy=False)
        lam, U = top_eigenpairs(K, m)
        self.eigenvalues_ = lam
        self.components_ = X
        self.normalization_ = (U / np.sqrt(lam)).astype(X.dtype)
        self.embedding_ = (U * np.sqrt(lam)).astype(X.dtype)

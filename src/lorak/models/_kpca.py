"""Kernel PCA on a low-rank factor (Zhang, Tsang & Kwok 2008, §4.2 and Prop. 4).

The eigenproblem of the m × m matrix ḠᵀḠ = V Σ Vᵀ (1) instead of the n × n centred
kernel: :ref:`guide-downstream`, section "Kernel PCA".
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
import scipy.linalg
from sklearn.exceptions import NotFittedError
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import check_is_fitted

from .._core.estimator import TransformerBase, validate_new_rows
from .._core.validation import check_generator, validate_data
from ..decompose import PreImageMap, check_alpha, fit_preimage, preimage, preimage_rows
from ._base import centered_cross_products, column_mean, fit_factor, transform_factor

__all__ = ["FactorKPCA", "LowRankKernelPCA", "factor_kpca", "kpca_eigenvectors", "kpca_scores"]


@dataclass(frozen=True)
class FactorKPCA:
    """Result of :func:`factor_kpca`.

    Attributes
    ----------
    mean : (m,) mean row of G.
    components : (m, r) V, eigenvectors of ḠᵀḠ for the r largest eigenvalues.
    eigenvalues : (r,) Σ, decreasing: eigenvalues of the centered kernel Ḡ Ḡᵀ
        (scikit-learn's ``KernelPCA.eigenvalues_`` for an exact factor).
    total : float, tr(ḠᵀḠ) = tr(H G Gᵀ H), the factor's total centered variance.
    """

    mean: np.ndarray
    components: np.ndarray
    eigenvalues: np.ndarray
    total: float


def factor_kpca(G, n_components: int | None = None, *, rtol: float | None = None) -> FactorKPCA:
    """The m × m eigenproblem (1) of kernel PCA on K ≈ G Gᵀ, O(m²n).

    Parameters
    ----------
    G : (n, m) array (or sparse), the factor rows of the training points.
    n_components : int, optional
        Number r ≤ m of leading components. None keeps every eigenvalue above
        ``rtol · λ_max``.
    rtol : float, optional
        Relative cut for ``n_components=None`` (default m · eps: round-off of a
        rank-deficient G).

    Returns
    -------
    FactorKPCA
        Signs are fixed so that the largest-magnitude entry of each column of V is
        positive (deterministic for a given G).
    """
    m = G.shape[1]
    mean = column_mean(G)
    S, _ = centered_cross_products(G, mean)
    total = float(np.trace(S))
    lam, V = scipy.linalg.eigh(S, driver="evd", check_finite=False, overwrite_a=True)
    lam, V = lam[::-1], V[:, ::-1]
    if n_components is None:
        cut = (m * np.finfo(np.float64).eps if rtol is None else rtol) * max(lam[0], 0.0)
        r = int(np.count_nonzero(lam > cut)) if lam[0] > 0 else 0
    else:
        r = int(n_components)
    lam = np.maximum(lam[:r], 0.0)  # negative values are round-off of a PSD matrix
    V = np.ascontiguousarray(V[:, :r])
    if r:
        rows = np.abs(V).argmax(axis=0)
        V *= np.sign(V[rows, np.arange(r)])
    return FactorKPCA(mean=mean, components=V, eigenvalues=lam, total=total)


def kpca_scores(G, result: FactorKPCA) -> np.ndarray:
    """Principal scores (G − 1 meanᵀ) V of the rows of G (training or new points)."""
    return safe_sparse_dot(G, result.components, dense_output=True) - (
        result.mean @ result.components
    )


def kpca_eigenvectors(G, result: FactorKPCA) -> np.ndarray:
    """Unit eigenvectors U = Ḡ V Σ^{-1/2} of the centered kernel, eq. (2) (Prop. 4).

    Columns with a zero eigenvalue are returned as zeros (they have no direction).
    """
    Z = kpca_scores(G, result)
    lam = result.eigenvalues
    scale = np.zeros_like(lam)
    pos = lam > 0
    scale[pos] = 1.0 / np.sqrt(lam[pos])
    return Z * scale


class LowRankKernelPCA(TransformerBase):
    """Kernel PCA through a low-rank factor: an m × m eigenproblem (Prop. 4).

    Fits ``factor`` on X, centers its rows in factor form and eigendecomposes ḠᵀḠ
    (:ref:`guide-downstream`): O(m²n) time instead of kernel PCA's O(n³), never
    an n × n array. ``transform`` projects new points through ``factor_.transform``
    onto the same directions, consistently with the training embedding.

    Parameters
    ----------
    factor : transformer, "passthrough" or None, default=None
        Unfitted factor (``lorak.Nystroem(...)``, ...), cloned and fitted on X; None or
        "passthrough" uses X as G (linear PCA, or factor rows computed beforehand).
    n_components : int, optional
        Number of components (≤ the factor's m). None keeps every direction with a
        nonzero eigenvalue.
    fit_inverse_transform : bool, default=False
        Learn a pre-image map for :meth:`inverse_transform`: kernel ridge regression
        from the training rows' principal scores back to the rows (scikit-learn's
        ``KernelPCA`` approach; Gaussian kernel on the scores, bandwidth their mean
        squared distance to the centroid), fitted on at most 2000 training rows.
    alpha : float, default=1.0
        Ridge of the pre-image regression (``fit_inverse_transform=True``).
    random_state : int, Generator or None, default=None
        Picks the rows of the pre-image regression when there are more than 2000.

    Attributes
    ----------
    factor_ : the fitted clone of ``factor`` (None for passthrough).
    mean_ : (m,) mean of the training factor rows.
    components_ : (n_components, m) principal directions in factor coordinates (Vᵀ).
    eigenvalues_ : (n_components,) eigenvalues of the centered (factor) kernel matrix,
        decreasing — scikit-learn's ``KernelPCA.eigenvalues_`` for an exact factor.
    explained_variance_ : eigenvalues_ / (n − 1), the variance of each score (equal to
        ``sklearn.decomposition.PCA.explained_variance_`` for the linear factor).
    explained_variance_ratio_ : eigenvalues_ / tr(H G Gᵀ H), the share of the factor
        kernel's total centered variance.
    n_components_ : int
    n_features_in_, feature_names_in_ : as in scikit-learn.
    dual_coef_, X_transformed_fit_, inverse_kernel_ : the pre-image map (with
        ``fit_inverse_transform``): inverse_transform(Z) = k(Z, X_transformed_fit_) dual_coef_.
    """

    _lazy_fit_reason = "its fit keeps the n training rows' embedding in memory"

    def __init__(
        self,
        factor=None,
        *,
        n_components=None,
        fit_inverse_transform=False,
        alpha=1.0,
        random_state=None,
    ):
        self.factor = factor
        self.n_components = n_components
        self.fit_inverse_transform = fit_inverse_transform
        self.alpha = alpha
        self.random_state = random_state

    def _check_n_components(self, m):
        r = self.n_components
        if r is None:
            return None
        if isinstance(r, bool) or not isinstance(r, numbers.Integral):
            raise TypeError(f"n_components must be an integer or None; got {r!r}")
        if r < 1:
            raise ValueError(f"n_components must be >= 1; got {r}")
        if r > m:
            raise ValueError(
                f"n_components={r} exceeds the factor's {m} columns; lower n_components or "
                "raise the factor's rank"
            )
        return int(r)

    def _fit(self, X, y):
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32])
        rng = check_generator(self.random_state)
        if self.fit_inverse_transform:
            check_alpha(self.alpha)
        self.factor_, G = fit_factor(self.factor, X, y)
        res = factor_kpca(G, self._check_n_components(G.shape[1]))
        n = G.shape[0]
        self.mean_ = res.mean
        self.components_ = np.ascontiguousarray(res.components.T)
        self.eigenvalues_ = res.eigenvalues
        self.explained_variance_ = res.eigenvalues / max(n - 1, 1)
        self.explained_variance_ratio_ = (
            res.eigenvalues / res.total if res.total > 0 else np.zeros_like(res.eigenvalues)
        )
        self.n_components_ = int(res.eigenvalues.shape[0])
        if self.fit_inverse_transform:
            pick = preimage_rows(G.shape[0], rng)
            rows = slice(None) if pick is None else pick
            pmap = fit_preimage(kpca_scores(G[rows], res), X[rows], self.alpha)
            self.inverse_kernel_ = pmap.kernel
            self.X_transformed_fit_ = pmap.features
            self.dual_coef_ = pmap.dual_coef
        else:  # a refit without the map drops an earlier fit's
            for name in ("inverse_kernel_", "X_transformed_fit_", "dual_coef_"):
                self.__dict__.pop(name, None)
        return G, res

    def fit(self, X, y=None):
        """Fit the factor on X and solve the m × m eigenproblem."""
        self._fit(X, y)
        return self

    def fit_transform(self, X, y=None):
        """Fit, and return the principal scores Ḡ V of the training rows."""
        G, res = self._fit(X, y)
        Z = kpca_scores(G, res)
        # float32 in, float32 out (the eigenproblem itself runs in float64)
        return Z.astype(np.float32) if getattr(X, "dtype", None) == np.float32 else Z

    def transform(self, X):
        """Scores (g(x) − mean_)ᵀ V of new points on the training directions."""
        X = validate_new_rows(self, X, "components_")
        G = transform_factor(self.factor_, X)
        Z = safe_sparse_dot(G, self.components_.T, dense_output=True) - (
            self.mean_ @ self.components_.T
        )
        return Z.astype(X.dtype, copy=False)  # float32 in, float32 out

    def inverse_transform(self, X):
        """Pre-images: points whose scores are close to the rows of X (n × n_components_).

        Kernel ridge regression learnt at fit time (``fit_inverse_transform=True``) from
        the training rows' scores back to the rows.
        """
        check_is_fitted(self, "components_")
        if not hasattr(self, "dual_coef_"):
            raise NotFittedError(
                "this LowRankKernelPCA was fitted without fit_inverse_transform=True, so "
                "it has no pre-image map: set fit_inverse_transform=True and fit again"
            )
        pmap = PreImageMap(self.inverse_kernel_, self.X_transformed_fit_, self.dual_coef_)
        return preimage(X, pmap)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

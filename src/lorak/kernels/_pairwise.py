"""scikit-learn's remaining pairwise kernels, as :class:`Kernel` objects.

``chi2``, ``additive_chi2``, ``sigmoid`` and ``cosine``, evaluated block by block by
scikit-learn's own functions with its parameters (:ref:`guide-factors`).
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from .._core.validation import check_positive
from ._kernels import Kernel, _float_dtype_of, _into

__all__ = ["PAIRWISE_KERNELS", "AdditiveChi2", "Chi2", "Cosine", "PairwiseKernel", "Sigmoid"]


def _writable(A, dtype):
    # scikit-learn's Cython χ² kernels refuse read-only buffers (pandas' copy-on-write
    # views, memory-mapped arrays)
    if sp.issparse(A):
        return A.astype(dtype)
    A = np.ascontiguousarray(A, dtype=dtype)
    return A if A.flags.writeable else A.copy()


class PairwiseKernel(Kernel):
    """A kernel evaluated by :func:`sklearn.metrics.pairwise.pairwise_kernels`.

    Subclasses set ``name`` (scikit-learn's metric name) and ``_param_names``;
    parameters left as None take scikit-learn's defaults.
    """

    def _params(self) -> dict:
        return {k: getattr(self, k) for k in self._param_names if getattr(self, k) is not None}

    def _prepare(self, Z, dtype):
        return _writable(Z, dtype), None

    def _block(self, X, Zd, aux, dtype, out=None):
        from sklearn.metrics.pairwise import pairwise_kernels

        Xd = _writable(X, dtype)
        K = pairwise_kernels(Xd, Zd, metric=self.name, **self._params())
        return _into(out, np.asarray(K, dtype=dtype))


class Chi2(PairwiseKernel):
    """Exponentiated χ² kernel exp(−γ Σ (xᵢ − zᵢ)²/(xᵢ + zᵢ)) for non-negative data."""

    name = "chi2"
    _param_names = ("gamma",)

    def __init__(self, gamma=None):
        self.gamma = None if gamma is None else float(check_positive(gamma, "gamma"))

    def diag(self, X):
        return np.ones(X.shape[0], dtype=_float_dtype_of(X))


class AdditiveChi2(PairwiseKernel):
    """Additive χ² kernel −Σ (xᵢ − zᵢ)²/(xᵢ + zᵢ) for non-negative data (not PSD)."""

    name = "additive_chi2"
    psd = False

    def diag(self, X):
        return np.zeros(X.shape[0], dtype=_float_dtype_of(X))


class Sigmoid(PairwiseKernel):
    """Sigmoid kernel tanh(γ ⟨x, z⟩ + c₀); γ = 1/n_features when None (not PSD)."""

    name = "sigmoid"
    psd = False
    _param_names = ("gamma", "coef0")

    def __init__(self, gamma=None, coef0=None):
        self.gamma = None if gamma is None else float(check_positive(gamma, "gamma"))
        if coef0 is not None and (
            isinstance(coef0, bool) or not isinstance(coef0, numbers.Real) or not np.isfinite(coef0)
        ):
            raise TypeError(f"coef0 must be a finite number; got {coef0!r}")
        self.coef0 = None if coef0 is None else float(coef0)

    def resolve(self, X, rng=None):
        # fix scikit-learn's data-dependent default once, on the training rows
        if self.gamma is not None:
            return self
        return Sigmoid(gamma=1.0 / X.shape[1], coef0=self.coef0)


class Cosine(PairwiseKernel):
    """Cosine similarity ⟨x, z⟩ / (‖x‖ ‖z‖) (zero rows give 0)."""

    name = "cosine"


PAIRWISE_KERNELS = {
    "chi2": Chi2,
    "additive_chi2": AdditiveChi2,
    "sigmoid": Sigmoid,
    "cosine": Cosine,
}

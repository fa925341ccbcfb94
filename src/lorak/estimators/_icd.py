"""Pivoted incomplete Cholesky as a scikit-learn transformer, inductive through its pivots.

Its math: :func:`lorak.decompose.incomplete_cholesky`.
"""

from __future__ import annotations

import numbers

from ..decompose import incomplete_cholesky
from ._base import _KernelFactor

__all__ = ["IncompleteCholesky"]


class IncompleteCholesky(_KernelFactor):
    """Pivoted incomplete Cholesky factor K ≈ G Gᵀ, inductive through its pivots.

    Needs only diag(K) and one kernel column per step (O(r²n) time, O(rn) memory).
    ``transform(X_new)`` = k(X_new, X_pivots) L⁻ᵀ with L = G(pivots, :) (Bach & Jordan
    2005, §6.2); on the training rows it reproduces ``G_`` up to round-off.

    Parameters
    ----------
    kernel, gamma, bandwidth, coef0, degree, kernel_params :
        As for :class:`Nystroem`, except that the default bandwidth is the rule
        ``"mean_pairwise"`` when neither gamma nor bandwidth is given.
        ``kernel="precomputed"``: ``fit`` takes the n × n training kernel, or a
        :class:`lorak.kernels.KernelColumns` (the diagonal and columns on demand: graph
        or string kernels, only the pivots' columns are computed); ``transform`` takes
        k(X_new, X_train) (n' × n), of which only the pivots' columns are read, or
        k(X_new, X_train[pivots_]) (n' × r) itself (at r = n the matrix is read as
        k(X_new, X_train)). K must be symmetric on the pivots: max|W − Wᵀ| ≤
        √eps · max|W| for W = K[pivots_][:, pivots_].
    n_components : int, default=100
        Maximum rank.
    tol : float, default=0.0
        Stop once tr(K − GGᵀ) ≤ tol · tr(K). With tol = 0 the factor stops at
        ``n_components`` or when the residual is zero to working precision.

    Attributes
    ----------
    G_ : (n, r) factor of the training rows (Fortran order).
    pivots_ : (r,) pivot rows in the order chosen.
    components_ : (r, d) the pivot points X[pivots_] (precomputed: the pivots' rows of
        K, None for :class:`~lorak.kernels.KernelColumns`).
    component_indices_ : (r,) pivots_ (the columns ``transform`` reads).
    normalization_ : (r, r) upper-triangular L⁻ᵀ.
    residual_trace_ : (r + 1,) tr(K − G_k G_kᵀ)/tr(K) after k = 0..r steps.
    n_components_ : int, the rank reached.
    kernel_ : the resolved kernel.
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
        tol=0.0,
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.bandwidth = bandwidth
        self.coef0 = coef0
        self.degree = degree
        self.kernel_params = kernel_params
        self.n_components = n_components
        self.tol = tol

    _lazy_fit_reason = "pivoted incomplete Cholesky revisits every row at every step"

    def fit(self, X, y=None):
        """Run the pivoted incomplete Cholesky on k(X, X) (or on the precomputed K)."""
        if not (isinstance(self.kernel, str) and self.kernel == "precomputed"):
            return super().fit(X, y)
        K, diag, column, dtype = self._precomputed_kernel(X)
        m = self._check_fit_params(K)
        self.kernel_ = "precomputed"
        res = incomplete_cholesky(diag, column, m, tol=self.tol, dtype=dtype)
        self._store(res, K, dtype)
        return self

    def fit_transform(self, X, y=None):
        """Fit, and return the factor G of the training rows (no second pass)."""
        return self.fit(X).G_

    def _check_fit_params(self, X):
        m = self._check_n_components(X.shape[0])
        if isinstance(self.tol, bool) or not isinstance(self.tol, numbers.Real):
            raise TypeError(f"tol must be a number; got {self.tol!r}")
        if not 0 <= self.tol < 1:
            raise ValueError(f"tol must be in [0, 1); got {self.tol!r}")
        return m

    def _fit_math(self, X, y, m):
        """Run the pivoted incomplete Cholesky on k(X, X) up to rank m; store G and its
        pivots."""
        kernel = self.kernel_
        res = incomplete_cholesky(
            kernel.diag(X),
            lambda i: kernel(X, X[i : i + 1]).ravel(),
            m,
            tol=self.tol,
            dtype=X.dtype,
            columns=lambda idx: kernel(X, X[idx]),
            block=_lookahead(X.shape[0], X.shape[1]),
        )
        self._store(res, X, X.dtype)

    def _store(self, res, X, dtype):
        self._store_pivots(res.G, res.pivots, X, dtype)
        self.residual_trace_ = res.residual_trace
        self.converged_ = res.converged


def _lookahead(n, d):
    """Kernel columns computed at once by the ICD: up to 32 (fewer for few features,
    where a column is cheap next to its exp; the block stays within the memory budget)."""
    from .._core.config import get_config

    fit = get_config()["memory_budget"] // max(1, 8 * n)
    return int(max(1, min(32, max(8, d // 2), fit)))

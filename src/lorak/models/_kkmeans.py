"""Kernel k-means on a low-rank factor: k-means on the rows of G when K = G Gᵀ.

A downstream model's pure functions sit beside its class (:ref:`guide-downstream`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin, TransformerMixin
from sklearn.cluster import KMeans
from sklearn.metrics.pairwise import euclidean_distances
from sklearn.utils.validation import check_is_fitted

from .._core.chunked import ChunkedRowsMixin
from .._core.estimator import validate_new_rows
from .._core.validation import check_generator, validate_data
from ._base import fit_factor, transform_factor

__all__ = ["KernelKMeans", "KernelKMeansResult", "kernel_kmeans_factor"]


@dataclass(frozen=True)
class KernelKMeansResult:
    """Result of :func:`kernel_kmeans_factor`.

    Attributes
    ----------
    labels : (n,) cluster index of each row.
    centers : (k, m) cluster means in factor coordinates.
    inertia : float, Σᵢ ‖gᵢ − μ_c(i)‖², the kernel k-means objective for K = G Gᵀ.
    n_iter : int, Lloyd iterations of the best initialization.
    """

    labels: np.ndarray
    centers: np.ndarray
    inertia: float
    n_iter: int


def kernel_kmeans_factor(
    G, n_clusters: int, *, rng, init="k-means++", n_init=10, max_iter=300, tol=1e-4
) -> KernelKMeansResult:
    """Kernel k-means for K = G Gᵀ: k-means on the rows of G.

    Parameters
    ----------
    G : (n, m) array (or sparse), the factor rows.
    n_clusters : int
    rng : numpy.random.Generator
        Source of the seeds of the ``n_init`` initializations.
    init, n_init, max_iter, tol : as in :class:`sklearn.cluster.KMeans`.
    """
    seed = int(rng.integers(np.iinfo(np.int32).max))
    km = KMeans(n_clusters, init=init, n_init=n_init, max_iter=max_iter, tol=tol, random_state=seed)
    km.fit(G)
    return KernelKMeansResult(
        labels=km.labels_,
        centers=km.cluster_centers_,
        inertia=float(km.inertia_),
        n_iter=int(km.n_iter_),
    )


class KernelKMeans(ChunkedRowsMixin, ClusterMixin, TransformerMixin, BaseEstimator):
    """Kernel k-means through a low-rank factor: k-means on the factor rows.

    Exactly kernel k-means for K = G Gᵀ (:ref:`guide-downstream`), O(n m k) per
    iteration; ``predict`` and ``transform`` go through ``factor_.transform``.

    Parameters
    ----------
    n_clusters : int, default=8
    factor : transformer, "passthrough" or None, default=None
        Unfitted factor (``lorak.Nystroem(...)``, ...), cloned and fitted on X; None or
        "passthrough" uses X as G (plain k-means, or an embedding computed beforehand,
        such as SimpleNPKL's).
    init : {"k-means++", "random"} or array, default="k-means++"
        Seeding, as in :class:`sklearn.cluster.KMeans` (an array gives centres in
        factor coordinates).
    n_init : int, default=10
        Initializations; the one with the lowest objective is kept.
    max_iter : int, default=300
    tol : float, default=1e-4
        scikit-learn's relative tolerance on the centre shift.
    random_state : int, Generator or None

    Attributes
    ----------
    factor_ : the fitted clone of ``factor`` (None for passthrough).
    labels_ : (n,) cluster of each training point.
    cluster_centers_ : (n_clusters, m) centres in factor coordinates.
    inertia_ : float, the kernel k-means objective Σᵢ ‖φ(xᵢ) − μ_c(i)‖² on GGᵀ.
    n_iter_ : int
    n_features_in_, feature_names_in_ : as in scikit-learn.
    """

    _lazy_fit_reason = "its k-means runs on the n factor rows held in memory"

    def __init__(
        self,
        n_clusters=8,
        factor=None,
        *,
        init="k-means++",
        n_init=10,
        max_iter=300,
        tol=1e-4,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.factor = factor
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def fit(self, X, y=None):
        """Fit the factor on X (with y when it accepts it) and cluster its rows."""
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32])
        rng = check_generator(self.random_state)
        self.factor_, G = fit_factor(self.factor, X, y)
        res = kernel_kmeans_factor(
            G,
            self.n_clusters,
            rng=rng,
            init=self.init,
            n_init=self.n_init,
            max_iter=self.max_iter,
            tol=self.tol,
        )
        self.labels_ = res.labels
        self.cluster_centers_ = res.centers
        self.inertia_ = res.inertia
        self.n_iter_ = res.n_iter
        return self

    def _rows(self, X):
        X = validate_new_rows(self, X, "cluster_centers_")
        return transform_factor(self.factor_, X)

    def predict(self, X):
        """The nearest centre (in the kernel's feature space) of each row of X."""
        return self.transform(X).argmin(axis=1)

    def transform(self, X):
        """Feature-space distances ‖φ(x) − μ_c‖ to each centre (n × n_clusters)."""
        return euclidean_distances(self._rows(X), self.cluster_centers_)

    def get_feature_names_out(self, input_features=None):
        check_is_fitted(self, "cluster_centers_")
        name = type(self).__name__.lower()
        return np.asarray([f"{name}{i}" for i in range(self.n_clusters)], dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

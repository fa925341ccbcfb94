"""Downstream learners on any low-rank factor: LS-SVM, kernel PCA, kernel k-means.

Each takes ``factor=``, any unfitted transformer whose ``transform`` returns rows G with
G Gᵀ ≈ K, clones and fits it on X; the pure functions on G sit beside the classes.

- :class:`LSSVC`, :class:`LSSVR` — least-squares SVM (Suykens & Vandewalle 1999) through
  the Woodbury identity: O(m²n) time, O(mn) memory (Zhang, Tsang & Kwok 2008, §4.3).
- :class:`LowRankKernelPCA` — kernel PCA by the m × m eigenproblem of Prop. 4 (§4.2).
- :class:`KernelKMeans` — kernel k-means = k-means on the factor rows.
- :class:`SemiSupervisedFactorClassifier` — a factor fitted on all rows plus a
  classifier on the labeled rows (generalized Nyström's protocol);
  :class:`SemiSupervisedFactorRegressor` — its twin for real-valued responses (ridge head);
  :class:`SelfTrainedRidge` — the classifier's head when labels are few (a ridge
  self-trained on the unlabeled rows under a class prior).

How each works, and why a linear model on the factor rows needs no wrapper:
:ref:`guide-downstream`.
"""

from ._kkmeans import KernelKMeans, KernelKMeansResult, kernel_kmeans_factor
from ._kpca import FactorKPCA, LowRankKernelPCA, factor_kpca, kpca_eigenvectors, kpca_scores
from ._lssvm import (
    LSSVC,
    LSSVR,
    LSSVMSolution,
    lssvm_fit_dense,
    lssvm_fit_factor,
    lssvm_moments,
    lssvm_solve_moments,
    merge_lssvm_moments,
    woodbury_solve,
)
from ._semi_supervised import (
    SelfTrainedRidge,
    SemiSupervisedFactorClassifier,
    SemiSupervisedFactorRegressor,
)

__all__ = [
    "LSSVC",
    "LSSVR",
    "FactorKPCA",
    "KernelKMeans",
    "KernelKMeansResult",
    "LSSVMSolution",
    "LowRankKernelPCA",
    "SelfTrainedRidge",
    "SemiSupervisedFactorClassifier",
    "SemiSupervisedFactorRegressor",
    "factor_kpca",
    "kernel_kmeans_factor",
    "kpca_eigenvectors",
    "kpca_scores",
    "lssvm_fit_dense",
    "lssvm_fit_factor",
    "lssvm_moments",
    "lssvm_solve_moments",
    "merge_lssvm_moments",
    "woodbury_solve",
]

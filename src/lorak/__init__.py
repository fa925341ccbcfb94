"""lorak — LOw-RAnk Kernels.

Low-rank kernel factors as scikit-learn transformers whose ``transform(X)`` returns
rows G with G Gᵀ ≈ K — unsupervised (Nyström with chosen landmarks, incomplete
Cholesky, exact eigen) and learned from side information (generalized Nyström from
labels, CSI, SimpleNPKL from pairwise constraints, low-rank ℓp-norm MKL) — and the
downstream learners that take any factor (LS-SVM, kernel PCA, kernel k-means).
"""

from . import constraints, plot  # plot imports matplotlib only when called
from ._config import config_context, get_config, set_config
from .csi import CSI
from .estimators import ExactEigen, IncompleteCholesky, Nystroem
from .kernel_combination import (
    ABMKL,
    CABMKL,
    AlignmentMKLClassifier,
    GLMKLClassifier,
    UniformKernelSum,
)
from .mkl import LowRankMKLClassifier
from .models import LSSVC, LSSVR, KernelKMeans, LowRankKernelPCA
from .multiple_kernel import MultipleKernelGeneralizedNystroem
from .npkl import SimpleNPKL
from .persist import load, save
from .semi_supervised import GeneralizedNystroem, SemiSupervisedFactorClassifier

__version__ = "0.1.0.dev0"

__all__ = [
    "ABMKL",
    "CABMKL",
    "CSI",
    "LSSVC",
    "LSSVR",
    "AlignmentMKLClassifier",
    "ExactEigen",
    "GLMKLClassifier",
    "GeneralizedNystroem",
    "IncompleteCholesky",
    "KernelKMeans",
    "LowRankKernelPCA",
    "LowRankMKLClassifier",
    "MultipleKernelGeneralizedNystroem",
    "Nystroem",
    "SemiSupervisedFactorClassifier",
    "SimpleNPKL",
    "UniformKernelSum",
    "__version__",
    "config_context",
    "constraints",
    "get_config",
    "load",
    "plot",
    "save",
    "set_config",
]

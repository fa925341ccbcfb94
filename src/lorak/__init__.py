"""lorak — LOw-RAnk Kernels.

Low-rank kernel factors as scikit-learn transformers whose ``transform(X)`` returns
rows G with G Gᵀ ≈ K, unsupervised or learned from side information, and the
downstream learners that take any factor (:ref:`guide`; the package's layers:
:ref:`guide-internals`).
"""

from . import constraints, plot  # plot imports matplotlib only when called
from ._core.config import config_context, get_config, set_config
from ._version import __version__
from .estimators import (
    ABMKL,
    CABMKL,
    CSI,
    AlignmentMKLClassifier,
    ExactEigen,
    GeneralizedNystroem,
    GLMKLClassifier,
    GraphRegularizedFactor,
    IncompleteCholesky,
    LowRankMKLClassifier,
    LowRankMKLRegressor,
    MultipleKernelGeneralizedNystroem,
    Nystroem,
    SimpleNPKL,
    UniformKernelSum,
)
from .models import (
    LSSVC,
    LSSVR,
    KernelKMeans,
    LowRankKernelPCA,
    SemiSupervisedFactorClassifier,
    SemiSupervisedFactorRegressor,
)
from .persist import load, save

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
    "GraphRegularizedFactor",
    "IncompleteCholesky",
    "KernelKMeans",
    "LowRankKernelPCA",
    "LowRankMKLClassifier",
    "LowRankMKLRegressor",
    "MultipleKernelGeneralizedNystroem",
    "Nystroem",
    "SemiSupervisedFactorClassifier",
    "SemiSupervisedFactorRegressor",
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

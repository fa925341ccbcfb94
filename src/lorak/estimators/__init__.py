"""Low-rank kernel factors and multiple-kernel methods as scikit-learn estimators.

Each module here is a thin class around the math module of the same stem in
``learn/`` or ``decompose/``; ``_base`` is the shared base. The map of modules and
classes is in the user guide, :ref:`guide-internals`.
"""

from ._csi import CSI
from ._gen_nystrom import MAX_AUTO_COMPONENTS, GeneralizedNystroem
from ._graph_factor import GraphRegularizedFactor, default_graph_components, gamma_grid
from ._icd import IncompleteCholesky
from ._kernel_combination import (
    ABMKL,
    CABMKL,
    AlignmentMKLClassifier,
    GLMKLClassifier,
    UniformKernelSum,
)
from ._lp_mkl import (
    LowRankMKLClassifier,
    LowRankMKLRegressor,
    default_bank,
    regression_bank,
)
from ._mk_gen_nystrom import MultipleKernelGeneralizedNystroem, default_gnys_bank
from ._nystrom import ExactEigen, Nystroem
from ._simple_npkl import SimpleNPKL

__all__ = [
    "ABMKL",
    "CABMKL",
    "CSI",
    "MAX_AUTO_COMPONENTS",
    "AlignmentMKLClassifier",
    "ExactEigen",
    "GLMKLClassifier",
    "GeneralizedNystroem",
    "GraphRegularizedFactor",
    "IncompleteCholesky",
    "LowRankMKLClassifier",
    "LowRankMKLRegressor",
    "MultipleKernelGeneralizedNystroem",
    "Nystroem",
    "SimpleNPKL",
    "UniformKernelSum",
    "default_bank",
    "default_gnys_bank",
    "default_graph_components",
    "gamma_grid",
    "regression_bank",
]

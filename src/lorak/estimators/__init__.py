"""Low-rank kernel factors and multiple-kernel methods as scikit-learn estimators.

A class lives in estimators/<stem> or models/<stem>; its math in learn/<stem> or
decompose/<stem>. Each module here is a thin class around the math module of the same
stem: it validates the parameters and data, builds the kernel and the landmarks, calls
the math and stores the results as fitted attributes.

- :mod:`._nystrom` — :class:`Nystroem`, :class:`ExactEigen` (``decompose/_nystrom``,
  ``decompose/_eigen``); :mod:`._icd` — :class:`IncompleteCholesky` (``decompose/_icd``);
- :mod:`._csi` — :class:`CSI`; :mod:`._gen_nystrom` — :class:`GeneralizedNystroem`;
  :mod:`._mk_gen_nystrom` — :class:`MultipleKernelGeneralizedNystroem`;
  :mod:`._graph_factor` — :class:`GraphRegularizedFactor` (``learn/_graph_factor``);
  :mod:`._simple_npkl` — :class:`SimpleNPKL`; :mod:`._lp_mkl` —
  :class:`LowRankMKLClassifier`, :class:`LowRankMKLRegressor`;
  :mod:`._kernel_combination` — the multiple-kernel baselines (:class:`UniformKernelSum`,
  :class:`ABMKL`, :class:`CABMKL`, :class:`GLMKLClassifier`,
  :class:`AlignmentMKLClassifier`) — math in ``learn/``;
- :mod:`._base` — the shared base: kernel construction, validation, chunked transform,
  and ``store_params``, the body of every estimator's ``__init__``.
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

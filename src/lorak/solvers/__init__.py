"""Generic numerics that take operators and return a :class:`SolverResult`.

Building blocks of :mod:`lorak.learn` that know operators and vectors, not kernels:
the PSD-cone solvers of generalized Nyström and the ℓp-MKL SVM solvers.
"""

from ._gfb import (
    WEIGHTS,
    FactorStack,
    GFBResult,
    best_bias,
    gfb_naive,
    gfb_split,
    project_feasible,
    svm_dual_objective,
)
from ._newton import NewtonResult, svm_newton
from ._psd import (
    SolverResult,
    admm_psd,
    armijo_projected_gradient,
    fista_psd,
    psd_projection,
    scaled_psd_projection,
    weighted_nearest_psd,
)

__all__ = [
    "WEIGHTS",
    "FactorStack",
    "GFBResult",
    "NewtonResult",
    "SolverResult",
    "admm_psd",
    "armijo_projected_gradient",
    "best_bias",
    "fista_psd",
    "gfb_naive",
    "gfb_split",
    "project_feasible",
    "psd_projection",
    "scaled_psd_projection",
    "svm_dual_objective",
    "svm_newton",
    "weighted_nearest_psd",
]

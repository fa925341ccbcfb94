"""Generic numerics that take operators and return a :class:`SolverResult`.

These solvers are building blocks of that math: they know operators
and vectors, not kernels or estimators.

- :func:`psd_projection`, :func:`scaled_psd_projection` — nearest PSD matrix in the
  Frobenius norm and in a diagonal congruence metric;
- :func:`admm_psd` — ADMM for min f(X) s.t. X ⪰ 0 from the prox of f;
  :func:`weighted_nearest_psd` — its elementwise-weighted special case;
- :func:`fista_psd` — accelerated projected gradient with adaptive restart;
- :func:`armijo_projected_gradient` — gradient mapping with backtracking (the
  generalized Nyström paper's eq. 9–10);
- :func:`gfb_split`, :func:`gfb_naive` — generalized forward–backward for the ℓp-MKL
  SVM dual over a :class:`FactorStack` of low-rank factors (``WEIGHTS``: its block
  weightings); :func:`svm_newton` — the primal Newton solver of the same problem
  (→ :class:`NewtonResult`);
  :func:`best_bias` — the bias minimizing the hinge loss for given decision values.
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

"""Supervised and semi-supervised kernel learning as pure functions on arrays.

- :mod:`._gen_nystrom` — generalized Nyström, single kernel (Zhang et al. 2017, §3):
  :func:`fit_gen_nystrom` (λ path with the alignment criterion, β heuristic /
  optimized), :class:`GenNystromProblem` (objective (7), its gradient, the closed form
  of eq. 12–13, the criterion of eq. 15), :func:`solve_gen_nystrom` (one λ),
  :func:`ideal_kernel`, :func:`must_link_target`, :func:`closed_form`.

The scikit-learn estimators built on them live in :mod:`lorak.semi_supervised`.
"""

from ._gen_nystrom import (
    DEFAULT_LAMBDA_GRID,
    SOLVERS,
    GenNystromFit,
    GenNystromProblem,
    closed_form,
    fit_gen_nystrom,
    ideal_kernel,
    must_link_target,
    pinv_psd,
    psd_factor,
    solve_gen_nystrom,
)

__all__ = [
    "DEFAULT_LAMBDA_GRID",
    "SOLVERS",
    "GenNystromFit",
    "GenNystromProblem",
    "closed_form",
    "fit_gen_nystrom",
    "ideal_kernel",
    "must_link_target",
    "pinv_psd",
    "psd_factor",
    "solve_gen_nystrom",
]

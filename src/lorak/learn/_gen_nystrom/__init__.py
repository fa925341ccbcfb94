"""Generalized Nyström (Zhang et al. 2017): a low-rank kernel learned from a few labels.

With landmarks Z, E_l = k(X_l, Z) for the labeled rows, W = k(Z, Z), K* the target
(eq. 6) and S₀ = β W⁺ the prior (eq. 5), the method learns the inverse dictionary
kernel S (m × m) of the learned kernel E S Eᵀ:

    minimize_S  J(S) = λ ‖S − S₀‖²_F + ‖E_l S E_lᵀ − K*‖²_F    s.t.  S ⪰ 0        (7)

(on a prior factor Φ: E_l = Φ(X_l), W = I; with M kernels, objective (17)). One module
per concern (targets, problem, λ path, cross-validation, multiple kernels, the
estimators' calls), the names shared between them exported here; the layout is in
:ref:`guide-internals-learn` and the derivations in :ref:`guide-gnys-solver`.
"""

from ._cv import (
    CV_LAMBDA_GRID,
    DEFAULT_CV_SPLITS,
    RIDGE_ALPHAS,
    LambdaCV,
    PriorGammaCV,
    cv_criterion,
    cv_feasible,
    cv_folds,
    cv_select_and_solve,
    cv_select_lambda,
    cv_select_prior_gamma,
    fold_features,
    mk_cv_select_and_solve,
    mk_cv_select_lambda,
    mk_fold_features,
    prior_row_space,
    score_candidates,
    score_ridge_candidates,
    smooth,
)
from ._fit import (
    CRITERIA,
    fit_generalized_nystroem,
    fit_mk_generalized_nystroem,
)
from ._multiple import (
    BlockState,
    MKGenNystromFit,
    MKGenNystromProblem,
    alternate_blocks,
    mk_alignment_lambda_path,
    mk_prior_fit,
    uniform_prior_factors,
)
from ._path import (
    DEFAULT_LAMBDA_GRID,
    GenNystromFit,
    alignment_lambda_path,
    lambda_path,
    prior_fit,
)
from ._problem import (
    SOLVERS,
    GenNystromProblem,
    check_beta,
    closed_form,
    kept_eigenpairs,
    optimal_beta_unconstrained,
    pinv_psd,
    prior_factor,
    projection_dtype,
    psd_factor,
    solve_gen_nystrom,
)
from ._targets import (
    TARGET_TYPES,
    ideal_kernel,
    must_link_target,
    regression_target,
    regression_target_factor,
    resolve_target_type,
    unit_scaled,
)

__all__ = [
    "CRITERIA",
    "CV_LAMBDA_GRID",
    "DEFAULT_CV_SPLITS",
    "DEFAULT_LAMBDA_GRID",
    "RIDGE_ALPHAS",
    "SOLVERS",
    "TARGET_TYPES",
    "BlockState",
    "GenNystromFit",
    "GenNystromProblem",
    "LambdaCV",
    "MKGenNystromFit",
    "MKGenNystromProblem",
    "PriorGammaCV",
    "alignment_lambda_path",
    "alternate_blocks",
    "check_beta",
    "closed_form",
    "cv_criterion",
    "cv_feasible",
    "cv_folds",
    "cv_select_and_solve",
    "cv_select_lambda",
    "cv_select_prior_gamma",
    "fit_generalized_nystroem",
    "fit_mk_generalized_nystroem",
    "fold_features",
    "ideal_kernel",
    "kept_eigenpairs",
    "lambda_path",
    "mk_alignment_lambda_path",
    "mk_cv_select_and_solve",
    "mk_cv_select_lambda",
    "mk_fold_features",
    "mk_prior_fit",
    "must_link_target",
    "optimal_beta_unconstrained",
    "pinv_psd",
    "prior_factor",
    "prior_fit",
    "prior_row_space",
    "projection_dtype",
    "psd_factor",
    "regression_target",
    "regression_target_factor",
    "resolve_target_type",
    "score_candidates",
    "score_ridge_candidates",
    "smooth",
    "solve_gen_nystrom",
    "uniform_prior_factors",
    "unit_scaled",
]

"""Supervised and semi-supervised kernel learning as pure functions on arrays.

Each module is the math of the estimator of the same stem in :mod:`lorak.estimators`;
its entry ``fit_<method>`` returns a result record the estimator stores. The modules
and their entries: :ref:`guide-internals-learn`.

The public names (``__all__``): one entry per method, the records it returns (and what
applies one: ``preimage``, ``bank_decision``), the documented rules and constants, and
the building blocks timed on their own by the benchmark harness (generalized Nyström's
problem, solver and λ path, CSI itself, SimpleNPKL's graph, the ℓp-MKL factor stage and
full-kernel reference). The names imported here as ``x as x`` are the math lorak's
estimators and models apply around their entry (parameter checks, targets, transforms,
predictions): they import it from this package, not from its private modules, and it
is not public API.
"""

import importlib
import warnings

from ..decompose import PreImageMap, fit_preimage, preimage
from ._csi import CSIResult, csi, fit_csi
from ._csi import csi_q as csi_q
from ._few_labels import CLASS_MASS_READINGS as CLASS_MASS_READINGS
from ._few_labels import (
    FEW_LABELS_GAMMA,
    FEW_LABELS_PENALTY,
    FEW_LABELS_RANK_FRACTION,
    GRAPH_INFORMATIVE_RATIO,
    LEAVE_ONE_OUT_MIN_LABELED,
    MATCHED_PRIOR_MAX_CLASSES,
    MIN_LABELS_PER_CLASS,
    REGIME_CV_FOLDS,
    REGIME_TEST_LEVEL,
    PriorEstimate,
    SelfTrainingFit,
    estimate_class_prior,
    few_labels,
    prior_from_counts,
    self_training_ridge,
)
from ._few_labels import few_labels_decision as few_labels_decision
from ._gen_nystrom import (
    CV_LAMBDA_GRID,
    DEFAULT_CV_SPLITS,
    DEFAULT_LAMBDA_GRID,
    RIDGE_ALPHAS,
    GenNystromFit,
    GenNystromProblem,
    LambdaCV,
    MKGenNystromFit,
    PriorGammaCV,
    alignment_lambda_path,
    closed_form,
    fit_generalized_nystroem,
    fit_mk_generalized_nystroem,
    ideal_kernel,
    pinv_psd,
    psd_factor,
    solve_gen_nystrom,
)
from ._gen_nystrom import SOLVERS as SOLVERS
from ._gen_nystrom import cv_feasible as cv_feasible
from ._gen_nystrom import must_link_target as must_link_target
from ._gen_nystrom import regression_target as regression_target
from ._gen_nystrom import regression_target_factor as regression_target_factor
from ._gen_nystrom import resolve_target_type as resolve_target_type
from ._graph_entry import GraphFactorFit, fit_graph_factor
from ._graph_entry import graph_factor_map as graph_factor_map
from ._graph_factor import GAMMA_GRID as GRAPH_GAMMA_GRID
from ._graph_factor import (
    KNN_EXACT_MAX,
)
from ._graph_factor import PENALTY_GRID as GRAPH_PENALTY_GRID
from ._kernel_combination import WEIGHTINGS as WEIGHTINGS
from ._kernel_combination import (
    AlignmentStatistics,
    GLMKLFit,
    KernelCombinationFit,
    fit_glmkl,
    fit_kernel_combination,
)
from ._kernel_combination import (
    alignment_statistics_from_kernels as alignment_statistics_from_kernels,
)
from ._kernel_combination import combination_weights as combination_weights
from ._lp_mkl import SOLVERS as LP_MKL_SOLVERS
from ._lp_mkl import (
    BankFactors,
    GaussianGrams,
    LpMKLFit,
    LpMKLResult,
    bank_decision,
    bank_factors,
    fit_lp_mkl,
    lp_mkl_factors,
    lp_mkl_full_kernel,
)
from ._lp_mkl import check_inner_options as check_inner_options
from ._lp_mkl import default_bank as default_bank
from ._lp_mkl import shared_landmarks as shared_landmarks
from ._lp_mkl_regression import LpMKLRegressionFit, fit_lp_mkl_regression
from ._lp_mkl_regression import check_regression_options as check_regression_options
from ._lp_mkl_regression import regression_bank as regression_bank
from ._npkl_auto import DegenerateKernelWarning, auto_C
from ._npkl_extend import RIDGE_EXTENSION_ALPHA, RIDGE_EXTENSION_LANDMARKS, ridge_map
from ._npkl_extend import extension_eigenvalues as extension_eigenvalues
from ._npkl_extend import graph_extension as graph_extension
from ._simple_npkl import (
    NPKLResult,
    SimpleNPKLFit,
    fit_simple_npkl,
    knn_graph,
    normalized_laplacian,
)
from ._simple_npkl import constraint_operator as constraint_operator
from ._simple_npkl import pair_values as pair_values

__all__ = [
    "CV_LAMBDA_GRID",
    "DEFAULT_CV_SPLITS",
    "DEFAULT_LAMBDA_GRID",
    "FEW_LABELS_GAMMA",
    "FEW_LABELS_PENALTY",
    "FEW_LABELS_RANK_FRACTION",
    "GRAPH_GAMMA_GRID",
    "GRAPH_INFORMATIVE_RATIO",
    "GRAPH_PENALTY_GRID",
    "KNN_EXACT_MAX",
    "LEAVE_ONE_OUT_MIN_LABELED",
    "LP_MKL_SOLVERS",
    "MATCHED_PRIOR_MAX_CLASSES",
    "MIN_LABELS_PER_CLASS",
    "REGIME_CV_FOLDS",
    "REGIME_TEST_LEVEL",
    "RIDGE_ALPHAS",
    "RIDGE_EXTENSION_ALPHA",
    "RIDGE_EXTENSION_LANDMARKS",
    "AlignmentStatistics",
    "BankFactors",
    "CSIResult",
    "DegenerateKernelWarning",
    "GLMKLFit",
    "GaussianGrams",
    "GenNystromFit",
    "GenNystromProblem",
    "GraphFactorFit",
    "KernelCombinationFit",
    "LambdaCV",
    "LpMKLFit",
    "LpMKLRegressionFit",
    "LpMKLResult",
    "MKGenNystromFit",
    "NPKLResult",
    "PreImageMap",
    "PriorEstimate",
    "PriorGammaCV",
    "SelfTrainingFit",
    "SimpleNPKLFit",
    "alignment_lambda_path",
    "auto_C",
    "bank_decision",
    "bank_factors",
    "closed_form",
    "csi",
    "estimate_class_prior",
    "few_labels",
    "fit_csi",
    "fit_generalized_nystroem",
    "fit_glmkl",
    "fit_graph_factor",
    "fit_kernel_combination",
    "fit_lp_mkl",
    "fit_lp_mkl_regression",
    "fit_mk_generalized_nystroem",
    "fit_preimage",
    "fit_simple_npkl",
    "ideal_kernel",
    "knn_graph",
    "lp_mkl_factors",
    "lp_mkl_full_kernel",
    "normalized_laplacian",
    "pinv_psd",
    "preimage",
    "prior_from_counts",
    "psd_factor",
    "ridge_map",
    "self_training_ridge",
    "solve_gen_nystrom",
]

#: Names that left ``lorak.learn`` (issue 49) and that the user guide named: one more
#: release they resolve, with a DeprecationWarning, to ``(module, name there)``;
#: ``None`` marks the ones whose object changed (below).
_DEPRECATED = {
    "MKGenNystromProblem": ("._gen_nystrom", "MKGenNystromProblem"),
    "anchor_laplacian_gram": ("._graph_factor", "anchor_laplacian_gram"),
    "balance_offsets": ("._few_labels", "balance_offsets"),
    "class_prior": ("._few_labels", "prior_from_counts"),
    "cv_select_lambda": ("._gen_nystrom", "cv_select_lambda"),
    "cv_select_prior_gamma": ("._gen_nystrom", "cv_select_prior_gamma"),
    "deformation": ("._graph_factor", "deformation"),
    "fit_gen_nystrom": ("._gen_nystrom", "alignment_lambda_path"),
    "fit_gen_nystrom_cv": ("._gen_nystrom", "cv_select_and_solve"),
    "fit_generalized_nystroem_prior_gamma": None,
    "fit_mk_gen_nystrom": ("._gen_nystrom", "mk_alignment_lambda_path"),
    "fit_mk_gen_nystrom_cv": ("._gen_nystrom", "mk_cv_select_and_solve"),
    "graph_energy_ratio": ("._few_labels", "graph_energy_ratio"),
    "graph_laplacian_gram": ("._graph_factor", "graph_laplacian_gram"),
    "kernel_degeneracy": ("._npkl_auto", "kernel_degeneracy"),
    "loo_ridge_scores": ("._graph_factor", "loo_ridge_scores"),
    "lp_mkl": ("._lp_mkl", "lp_mkl"),
    "lp_mkl_ridge": ("._lp_mkl_regression", "lp_mkl_ridge"),
    "lp_mkl_svr": ("._lp_mkl_regression", "lp_mkl_svr"),
    "mk_cv_select_lambda": ("._gen_nystrom", "mk_cv_select_lambda"),
    "parse_semi_supervised_response": ("lorak._core.targets", "parse_semi_supervised_response"),
    "prior_fit": ("._gen_nystrom", "prior_fit"),
    "select_gamma_penalty": ("._graph_factor", "select_gamma_penalty"),
    "select_rank": ("._graph_factor", "select_rank"),
    "select_ridge_weights": ("._lp_mkl_regression", "select_ridge_weights"),
    "simple_npkl_linear": ("._simple_npkl", "simple_npkl_linear"),
    "simple_npkl_sqhinge": ("._simple_npkl", "simple_npkl_sqhinge"),
    "simplex_least_squares": ("._graph_factor", "simplex_least_squares"),
}


def _fit_generalized_nystroem_prior_gamma(Els, K, *, y, ts, **options):
    """The old entry of a prior's graph weight chosen with λ: ``(fit, PriorGammaCV)``."""
    fit = fit_generalized_nystroem(Els, None, K, y=y, prior_gammas=ts, **options)
    return fit, fit.prior_gamma_cv


def __getattr__(name):
    if name not in _DEPRECATED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attr = _DEPRECATED[name] or ("", "")
    if attr in __all__:
        hint = f"use lorak.learn.{attr}"
    else:
        hint = "each method has one entry, fit_<method> (lorak.learn.__all__)"
    warnings.warn(
        f"lorak.learn.{name} is deprecated and will be removed in the next release; {hint}",
        DeprecationWarning,
        stacklevel=2,
    )
    if not module:
        return _fit_generalized_nystroem_prior_gamma
    return getattr(importlib.import_module(module, __name__), attr)

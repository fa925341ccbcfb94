"""Supervised and semi-supervised kernel learning as pure functions on arrays.

Each module here is the math of the estimator of the same stem in
:mod:`lorak.estimators`, which imports it through this package. A method's entry is
``fit_<method>``: it owns the method's loops, stepping and dispatch and returns a
result record (a dataclass); the estimator validates its input, calls the entry and
copies the record to its fitted attributes. The entries and what lies under them, by
module (the graph-regularized factor has no single entry yet: its estimator calls the
stages of :mod:`._graph_factor` in turn):

- :mod:`._csi` — Cholesky with side information (Bach & Jordan 2005):
  :func:`fit_csi` (→ :class:`CSIResult`), over the decomposition itself, :func:`csi`,
  and :func:`csi_q`, the explicit Q of its QR;
- :mod:`._simple_npkl` — SimpleNPKL (Zhuang, Tsang & Hoi 2009) from pairwise
  constraints: :func:`fit_simple_npkl` (→ :class:`SimpleNPKLFit`; the kNN graph, C,
  the active constraints, the kernel), over the two losses' solvers
  :func:`simple_npkl_linear` and :func:`simple_npkl_sqhinge` (→ :class:`NPKLResult`);
  its ``C="auto"`` rule in :mod:`._npkl_auto` (:func:`auto_C`,
  :func:`kernel_degeneracy`), its out-of-sample extensions in :mod:`._npkl_extend`
  (:func:`graph_extension`, :func:`ridge_map` with :data:`RIDGE_EXTENSION_LANDMARKS`
  and :data:`RIDGE_EXTENSION_ALPHA`);
- :mod:`._lp_mkl` — ℓp-norm MKL on low-rank kernels: :func:`fit_lp_mkl`
  (→ :class:`LpMKLFit`; the bank's factors on shared landmarks, one-vs-rest, the
  decision function's landmark coefficients), over the outer loop :func:`lp_mkl`
  (→ :class:`LpMKLResult`) and the factor stage :func:`lp_mkl_factors` /
  :func:`bank_factors`; the full-kernel reference (small n) :func:`lp_mkl_full_kernel`
  with :class:`GaussianGrams`;
- :mod:`._lp_mkl_regression` — the same for regression (squared loss in closed form,
  ε-insensitive loss by primal Newton): :func:`fit_lp_mkl_regression`
  (→ :class:`LpMKLRegressionFit`), over :func:`lp_mkl_ridge` and :func:`lp_mkl_svr`;
- :mod:`._kernel_combination` — the multiple-kernel baselines (uniform, alignment,
  centred alignment): :func:`fit_kernel_combination` (→ :class:`KernelCombinationFit`;
  the factors on shared landmarks, then :func:`combination_weights`), and the
  group-lasso MKL's alternation :func:`fit_glmkl` (→ :class:`GLMKLFit`);
- :mod:`._gen_nystrom` — generalized Nyström (Zhang et al. 2017), a package with one
  module per concern, mapped in its own docstring; the estimators' one call each, which
  decides how λ is chosen: :func:`fit_generalized_nystroem` (→ :class:`GenNystromFit`)
  and :func:`fit_mk_generalized_nystroem` (→ :class:`MKGenNystromFit`), over the λ path
  (:func:`alignment_lambda_path`), the cross-validation (:func:`fit_gen_nystrom_cv`,
  :func:`fit_mk_gen_nystrom_cv`) and objective (7) with its solvers;
- :mod:`._graph_factor` — graph-regularized factors (manifold regularization in factor
  form): the anchor and k-NN graphs' GᵀLᵖG by passes over row chunks
  (:func:`anchor_laplacian_gram`, :func:`graph_laplacian_gram`), the deformation R(γ)
  (:func:`deformation`) and γ with a ridge penalty by closed-form leave-one-out
  (:func:`select_gamma_penalty`); :mod:`._graph_device`, the anchor graph's passes on
  an array API device (:func:`device_anchor_laplacian_gram`);
- :mod:`._few_labels` — what replaces leave-one-out when a class has a handful of
  labeled rows: whether the graph is informative (:func:`graph_energy_ratio`), the
  class prior and class-mass normalization (:func:`class_prior`,
  :func:`balance_offsets`), and the self-trained ridge of the cluster assumption
  (:func:`self_training_ridge`, → :class:`SelfTrainingFit`);
- :mod:`._preimage` — pre-images by kernel ridge regression, shared by
  :class:`lorak.Nystroem` and :class:`lorak.LowRankKernelPCA`: :func:`fit_preimage`
  (→ :class:`PreImageMap`), applied by :func:`preimage`.
"""

from .._validation import parse_semi_supervised_response
from ._csi import CSIResult, csi, csi_q, fit_csi
from ._few_labels import (
    FEW_LABELS_GAMMA,
    FEW_LABELS_PENALTY,
    FEW_LABELS_RANK_FRACTION,
    GRAPH_INFORMATIVE_RATIO,
    MIN_LABELS_PER_CLASS,
    PRIOR_TEST_LEVEL,
    SELF_TRAINING_WEIGHTS,
    SelfTrainingFit,
    balance_offsets,
    class_prior,
    few_labels,
    graph_energy_ratio,
    self_training_ridge,
)
from ._gen_nystrom import (
    CV_LAMBDA_GRID,
    DEFAULT_CV_SPLITS,
    DEFAULT_LAMBDA_GRID,
    RIDGE_ALPHAS,
    SOLVERS,
    TARGET_TYPES,
    GenNystromFit,
    GenNystromProblem,
    LambdaCV,
    MKGenNystromFit,
    MKGenNystromProblem,
    alignment_lambda_path,
    closed_form,
    cv_criterion,
    cv_feasible,
    cv_select_lambda,
    fit_gen_nystrom,
    fit_gen_nystrom_cv,
    fit_generalized_nystroem,
    fit_mk_gen_nystrom,
    fit_mk_gen_nystrom_cv,
    fit_mk_generalized_nystroem,
    ideal_kernel,
    mk_cv_select_lambda,
    must_link_target,
    pinv_psd,
    prior_fit,
    psd_factor,
    regression_target,
    regression_target_factor,
    resolve_target_type,
    score_ridge_candidates,
    solve_gen_nystrom,
)
from ._graph_device import device_anchor_bandwidth, device_anchor_laplacian_gram
from ._graph_factor import GAMMA_GRID as GRAPH_GAMMA_GRID
from ._graph_factor import (
    KNN_EXACT_MAX,
    RANK_FRACTIONS,
    AnchorGraph,
    GammaSelection,
    GraphDeformation,
    PrincipalMap,
    RankSelection,
    anchor_bandwidth,
    anchor_laplacian_gram,
    deformation,
    deformation_matrix,
    graph_laplacian_gram,
    knn_adjacency,
    loo_ridge_scores,
    principal_map,
    rank_candidates,
    ridge_targets,
    select_gamma_penalty,
    select_rank,
    simplex_least_squares,
    simplex_projection,
)
from ._graph_factor import PENALTY_GRID as GRAPH_PENALTY_GRID
from ._kernel_combination import (
    WEIGHTINGS,
    AlignmentStatistics,
    GLMKLFit,
    KernelCombinationFit,
    alignment_statistics_from_factors,
    alignment_statistics_from_kernels,
    combination_weights,
    fit_glmkl,
    fit_kernel_combination,
)
from ._lp_mkl import SOLVERS as LP_MKL_SOLVERS
from ._lp_mkl import (
    BankFactors,
    GaussianGrams,
    LpMKLFit,
    LpMKLResult,
    bank_decision,
    bank_factors,
    check_inner_options,
    default_bank,
    fit_lp_mkl,
    lp_mkl,
    lp_mkl_factors,
    lp_mkl_full_kernel,
    shared_landmarks,
    uniform_weights,
)
from ._lp_mkl_regression import (
    LpMKLRegressionFit,
    LpMKLRidgeResult,
    SVRNewtonResult,
    check_regression_options,
    fit_lp_mkl_regression,
    gcv_scores,
    lp_mkl_ridge,
    lp_mkl_svr,
    regression_bank,
    ridge_moments,
    select_ridge_weights,
    svr_newton,
    weighted_ridge,
)
from ._npkl_auto import AUTO_C_STEPS, DegenerateKernelWarning, auto_C, kernel_degeneracy
from ._npkl_extend import (
    RIDGE_EXTENSION_ALPHA,
    RIDGE_EXTENSION_LANDMARKS,
    extension_eigenvalues,
    graph_extension,
    ridge_map,
)
from ._preimage import (
    PREIMAGE_ROWS,
    PreImageMap,
    check_alpha,
    fit_preimage,
    preimage,
    preimage_rows,
)
from ._simple_npkl import (
    NPKLResult,
    SimpleNPKLFit,
    constraint_operator,
    fit_simple_npkl,
    knn_graph,
    normalized_laplacian,
    pair_values,
    pataki_rank,
    select_active,
    simple_npkl_linear,
    simple_npkl_sqhinge,
)

__all__ = [
    "AUTO_C_STEPS",
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
    "LP_MKL_SOLVERS",
    "MIN_LABELS_PER_CLASS",
    "PREIMAGE_ROWS",
    "PRIOR_TEST_LEVEL",
    "RANK_FRACTIONS",
    "RIDGE_ALPHAS",
    "RIDGE_EXTENSION_ALPHA",
    "RIDGE_EXTENSION_LANDMARKS",
    "SELF_TRAINING_WEIGHTS",
    "SOLVERS",
    "TARGET_TYPES",
    "WEIGHTINGS",
    "AlignmentStatistics",
    "AnchorGraph",
    "BankFactors",
    "CSIResult",
    "DegenerateKernelWarning",
    "GLMKLFit",
    "GammaSelection",
    "GaussianGrams",
    "GenNystromFit",
    "GenNystromProblem",
    "GraphDeformation",
    "KernelCombinationFit",
    "LambdaCV",
    "LpMKLFit",
    "LpMKLRegressionFit",
    "LpMKLResult",
    "LpMKLRidgeResult",
    "MKGenNystromFit",
    "MKGenNystromProblem",
    "NPKLResult",
    "PreImageMap",
    "PrincipalMap",
    "RankSelection",
    "SVRNewtonResult",
    "SelfTrainingFit",
    "SimpleNPKLFit",
    "alignment_lambda_path",
    "alignment_statistics_from_factors",
    "alignment_statistics_from_kernels",
    "anchor_bandwidth",
    "anchor_laplacian_gram",
    "auto_C",
    "balance_offsets",
    "bank_decision",
    "bank_factors",
    "check_alpha",
    "check_inner_options",
    "check_regression_options",
    "class_prior",
    "closed_form",
    "combination_weights",
    "constraint_operator",
    "csi",
    "csi_q",
    "cv_criterion",
    "cv_feasible",
    "cv_select_lambda",
    "default_bank",
    "deformation",
    "deformation_matrix",
    "device_anchor_bandwidth",
    "device_anchor_laplacian_gram",
    "extension_eigenvalues",
    "few_labels",
    "fit_csi",
    "fit_gen_nystrom",
    "fit_gen_nystrom_cv",
    "fit_generalized_nystroem",
    "fit_glmkl",
    "fit_kernel_combination",
    "fit_lp_mkl",
    "fit_lp_mkl_regression",
    "fit_mk_gen_nystrom",
    "fit_mk_gen_nystrom_cv",
    "fit_mk_generalized_nystroem",
    "fit_preimage",
    "fit_simple_npkl",
    "gcv_scores",
    "graph_energy_ratio",
    "graph_extension",
    "graph_laplacian_gram",
    "ideal_kernel",
    "kernel_degeneracy",
    "knn_adjacency",
    "knn_graph",
    "loo_ridge_scores",
    "lp_mkl",
    "lp_mkl_factors",
    "lp_mkl_full_kernel",
    "lp_mkl_ridge",
    "lp_mkl_svr",
    "mk_cv_select_lambda",
    "must_link_target",
    "normalized_laplacian",
    "pair_values",
    "parse_semi_supervised_response",
    "pataki_rank",
    "pinv_psd",
    "preimage",
    "preimage_rows",
    "principal_map",
    "prior_fit",
    "psd_factor",
    "rank_candidates",
    "regression_bank",
    "regression_target",
    "regression_target_factor",
    "resolve_target_type",
    "ridge_map",
    "ridge_moments",
    "ridge_targets",
    "score_ridge_candidates",
    "select_active",
    "select_gamma_penalty",
    "select_rank",
    "select_ridge_weights",
    "self_training_ridge",
    "shared_landmarks",
    "simple_npkl_linear",
    "simple_npkl_sqhinge",
    "simplex_least_squares",
    "simplex_projection",
    "solve_gen_nystrom",
    "svr_newton",
    "uniform_weights",
    "weighted_ridge",
]

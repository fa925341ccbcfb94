"""The generalized Nyström factor (Zhang et al. 2017, §3) as a scikit-learn transformer.

Its math: :func:`lorak.learn.fit_generalized_nystroem` (package
:mod:`lorak.learn._gen_nystrom`). Fitted on labeled and
unlabeled rows (``y = -1`` marks unlabeled rows, the :mod:`sklearn.semi_supervised`
convention) or on must-link groups — or, with real-valued responses (NaN marks the
unlabeled rows), on the regression target K* = ỹỹᵀ; ``transform`` gives the virtual samples
Q = k(X, Z) U Λ^{1/2} with Q Qᵀ = E S Eᵀ — inductive for any new X. The paper's
protocol, a linear SVM on the factor, is :class:`lorak.SemiSupervisedFactorClassifier`;
its regression twin (a ridge on the factor) :class:`lorak.SemiSupervisedFactorRegressor`.
"""

from __future__ import annotations

import logging
import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted, column_or_1d

from .._core.array_api import is_foreign, to_host, to_numpy
from .._core.estimator import new_rows
from .._core.rows import refuse_device, resolve_rows, take_rows
from .._core.targets import UNLABELED, parse_class_labels, parse_semi_supervised_response
from .._core.validation import check_generator, check_in_choices, check_lambda
from ..kernels import check_device_kernel, kernel_block, kernel_product
from ..landmarks import select_landmarks
from ..learn import (
    DEFAULT_CV_SPLITS,
    DEFAULT_LAMBDA_GRID,
    SOLVERS,
    cv_feasible,
    fit_generalized_nystroem,
    ideal_kernel,
    must_link_target,
    regression_target,
    resolve_target_type,
)
from ._base import _LandmarkFactor

__all__ = ["MAX_AUTO_COMPONENTS", "PRIOR_GAMMA_METHODS", "GeneralizedNystroem"]

logger = logging.getLogger(__name__)

#: Cap of ``n_components="auto"`` (10 % of n): the fit costs O(m³) per solver
#: iteration and the transform O(n m d), so for large n m stays a constant; 1000 is
#: what the paper's largest set (mnist) takes with one kernel.
MAX_AUTO_COMPONENTS = 1000

#: What a ``prior`` needs for ``prior_gamma="joint"``: its graph weight changed after
#: ``fit`` without refitting (:class:`lorak.GraphRegularizedFactor` has them).
PRIOR_GAMMA_METHODS = ("gamma_candidates", "transform_at", "use_gamma")


class _LabelLearnedFactor:
    """What the single- and multiple-kernel generalized Nyström estimators share.

    Their common parameters (solver, λ and its criterion, folds, tolerances, target)
    and their checks, ``n_components="auto"``, the reading of y (class labels with
    −1 = unlabeled, or responses with NaN = unlabeled), the options every solve gets,
    and the fitted attributes of the λ choice. Each estimator adds its own parameters
    (``_check_params``) and its math (``fit``).
    """

    def _check_shared_params(self, integers=("max_iter",), flags=("center_ideal",)):
        """Check the shared parameters (and the named integer and flag ones); return
        the λ grid."""
        check_in_choices(self.solver, "solver", SOLVERS)
        check_in_choices(self.criterion, "criterion", ("cv", "paper", "kernel"))
        check_in_choices(self.target, "target", ("auto", "classification", "regression"))
        cv = self.cv
        if isinstance(cv, bool) or not isinstance(cv, numbers.Integral) or cv < 2:
            raise ValueError(f"cv must be an integer >= 2 (the number of folds); got {cv!r}")
        for name in ("tol", "rtol"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not 0 < v < 1:
                raise ValueError(f"{name} must be a number in (0, 1); got {v!r}")
        for name in integers:
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1; got {v!r}")
        for name in flags:
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise TypeError(f"{name} must be True or False; got {getattr(self, name)!r}")
        return check_lambda(self.lam, self.lam_grid, DEFAULT_LAMBDA_GRID)

    def _resolve_n_components(self, n_samples):
        """m: ``n_components``, or 10 % of n for "auto" (at most ``MAX_AUTO_COMPONENTS``)."""
        if isinstance(self.n_components, str):
            if self.n_components != "auto":
                raise ValueError(
                    f"n_components must be a positive integer or 'auto'; got {self.n_components!r}"
                )
            return int(min(max(1, round(0.1 * n_samples)), MAX_AUTO_COMPONENTS, n_samples))
        return self._check_n_components(n_samples)

    def _labels(self, y, n):
        """``(target type, labeled rows, their y, classes)``; classes is None for responses."""
        name = type(self).__name__
        kind = resolve_target_type(y, self.target, owner=name)
        if kind == "regression":
            rows, y_l = parse_semi_supervised_response(y, n, owner=name)
            return kind, rows, y_l, None
        rows, y_l, classes = parse_class_labels(y, n, owner=name)
        return kind, rows, y_l, classes

    def _fit_options(self, kind, rng):
        """The options every fit call gets: λ and its search, the target, the solver's."""
        return {
            "lam": self.lam,
            "lam_grid": self.lam_grid,
            "n_splits": self.cv,
            "rng": rng,
            "target": kind,
            "criterion": self.criterion,
            "center_ideal": bool(self.center_ideal),
            "owner": type(self).__name__,
            "solver": self.solver,
            "tol": self.tol,
            "max_iter": self.max_iter,
            "rtol": self.rtol,
        }

    def _store_choice(self, fit, rows, classes, kind, landmarks):
        """The fitted attributes of the λ choice and of the labels both estimators set."""
        cv = fit.cv
        self.lam_ = fit.lam
        self.lam_grid_ = fit.lam_grid
        self.criterion_ = fit.criterion
        self.alignment_scores_ = fit.scores
        self.objective_history_ = list(fit.objective_history)
        self.objective_ = fit.objective
        self.n_iter_ = int(max(fit.n_iter, 1))
        self.converged_ = fit.converged
        self.path_n_iter_ = fit.path_n_iter
        if cv is not None:
            # at the classifier's C / the ridge penalty the choice was made with
            self.cv_errors_ = cv.error_rate[:, int(np.argmin(np.abs(cv.C_grid - cv.C)))]
            self.cv_penalty_ = cv.C
            self.cv_n_splits_ = cv.n_splits
        self.classes_ = classes
        self.target_type_ = kind
        self.labeled_indices_ = rows
        self.landmark_info_ = dict(landmarks.info or {}) if landmarks is not None else {}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags


class GeneralizedNystroem(_LabelLearnedFactor, _LandmarkFactor):
    """Generalized Nyström low-rank kernel learned from labels (Zhang et al. 2017, §3).

    Landmarks Z are chosen on all rows (labeled and unlabeled); with E_l = k(X_l, Z),
    W = k(Z, Z) and the ideal kernel K* of the labels (eq. 6), the inverse dictionary
    kernel solves

        min_S  λ ‖S − β W⁺‖²_F + ‖E_l S E_lᵀ − K*‖²_F   s.t.  S ⪰ 0            (5, 7)

    (the data term masked by T with must-link groups, §3.3), λ chosen by
    cross-validation over the labeled rows among a grid and λ = ∞ — the plain Nyström
    kernel, which the method falls back to when the labels do not help. The learned
    kernel is k̃(x, x') = k(x, Z) S k(Z, x'); ``transform`` returns
    Q = k(X, Z) U Λ^{1/2} (S = U Λ Uᵀ), so Q Qᵀ = E S Eᵀ, for the training rows and any
    new X. With ``prior``, the rows Φ(x) of a fitted factor take the place of k(x, Z)
    and W = I. The defaults (``beta=1.0``, ``center_ideal=True``, ``criterion="cv"``)
    differ from the paper's literal reading (``beta="heuristic"``,
    ``center_ideal=False``, ``criterion="paper"``), which is kept for comparison; why:
    :ref:`guide-gnys-defaults`. Details of every option: :ref:`guide-gnys-estimator`.

    Parameters
    ----------
    kernel : str, Kernel or callable, default="gaussian"
        As for :class:`lorak.Nystroem`. The default Gaussian exp(−‖x−y‖²/b) uses the
        paper's b₀ = mean pairwise squared distance (rule ``"mean_pairwise"``) unless
        ``gamma`` or ``bandwidth`` is given.
    gamma, bandwidth, degree, coef0, kernel_params : kernel parameters.
    n_components : int or "auto", default="auto"
        Number of landmarks m; "auto" = 10 % of n (at least 1, at most
        ``MAX_AUTO_COMPONENTS`` = 1000), the paper's choice (§3.7).
    landmarks : str, callable or array, default="kmeans"
        Any strategy of :mod:`lorak.landmarks` (k-means centres, as in the paper),
        a callable, row indices or points. Drineas–Mahoney weights are ignored.
    lam : "auto" or float, default="auto"
        λ of eq. (7); "auto" chooses it by ``criterion``; ``inf`` gives S = β W⁺, the
        plain Nyström kernel on the same landmarks.
    lam_grid : sequence of float, optional
        The λ values "auto" chooses from. Default: 10⁻⁵, 10⁻³, …, 10⁷ (every other
        decade) and ∞ with ``criterion="cv"``; 10⁻⁵, 10⁻⁴, …, 10⁵ (the paper's grid)
        with "paper" and "kernel".
    beta : "heuristic", "optimize" or float, default=1.0
        Scale of the prior S₀ = β W⁺: eq. (8), optimized jointly with S (Appendix A),
        or a number.
    center_ideal : bool, default=True
        Use the centered ideal kernel H K* H as the target (ignored with must-link
        groups, whose target is not a class kernel).
    criterion : {"cv", "paper", "kernel"}, default="cv"
        How ``lam="auto"`` chooses λ. "cv": k-fold cross-validation over the labeled
        rows, scored by the held-out error of the default downstream model (class
        labels: a LinearSVC; responses: a ridge, its penalty chosen with λ), with
        λ = ∞ among the candidates and near-ties going to the larger λ. "paper": the
        alignment product ρ[S, S₀] · ρ[E_l S E_lᵀ, K*] of eq. (15); "kernel":
        ρ[W S W, W] · ρ[E_l S E_lᵀ, K*]. With must-link groups (no class labels to
        score) "cv" uses "paper". The protocol:
        :ref:`guide-gnys-estimator`.
    cv : int, default=5
        Folds of ``criterion="cv"``, stratified by class (fewer when a class has fewer
        labeled rows). With fewer than 2 labeled rows in a class, λ is chosen by
        ``criterion="paper"``, with a warning, and ``criterion_`` says so.
    solver : {"auto", "admm", "fista", "pg"}, default="auto"
        "admm" (preconditioned ADMM; the default without must-link groups), "fista"
        (accelerated projected gradient; the default with them), "pg" (the paper's
        projected gradient; slow, for comparison).
    tol : float, default=1e-4
        Relative residual tolerance of the final solve (the λ path uses
        max(tol, 1e-2)).
    max_iter : int, default=500
        Iteration cap of each solve.
    rtol : float, default=1e-10
        Relative eigenvalue cut-off for W⁺ and for the rank of S.
    random_state : int, Generator or None
        Landmark selection (and the bandwidth rule when it samples).
    target : {"auto", "classification", "regression"}, default="auto"
        What y holds. "classification": class labels, −1 = unlabeled, target the ideal
        kernel (eq. 6). "regression": real-valued responses, **NaN = unlabeled** (−1 is
        a value), target K* = ỹỹᵀ with ỹ the standardized labeled responses
        (``regression_target`` in ``lorak.learn._gen_nystrom``; ``center_ideal`` does
        not apply).
        "auto": regression when the labeled values are continuous, class labels
        otherwise; a continuous y that holds −1 and no NaN is refused as ambiguous.
    prior : transformer or None, default=None
        The kernel the labels refine. None: the paper's prior S₀ = β W⁺, the Nyström
        kernel of ``kernel``. A transformer whose ``transform`` gives factor rows Φ(x)
        (a Nyström factor, :class:`lorak.GraphRegularizedFactor`, …) is cloned and
        fitted on ``(X, y)``, and the kernel is learned in its feature space: E := Φ(X),
        W := I, S₀ = β I, learned kernel Φ S Φᵀ (λ = ∞ with β = 1 gives Φ Φᵀ exactly).
        ``kernel``, its parameters, ``n_components`` and ``landmarks`` are then not
        used. See :ref:`guide-gnys-prior`.
    prior_gamma : "sequential", "joint" or sequence of float, default="sequential"
        How the graph weight t of a graph prior (:class:`lorak.GraphRegularizedFactor`)
        and λ are chosen. "sequential": the prior chooses its t alone, then λ on that
        prior. "joint": (t, λ) together by this estimator's cross-validation over
        ``prior.gamma_candidates()`` × the λ candidates, the chosen t then set on
        ``prior_``; a sequence of t ≥ 0: the joint search over those values. The prior
        needs ``gamma_candidates``, ``transform_at`` and ``use_gamma`` (else a
        ValueError). Where no labeled row can be held out, the sequential choice, with
        a warning. The derivation and measurements: :ref:`guide-graph`, section
        "Generalized Nyström on the graph".

    Attributes
    ----------
    landmarks_, components_ : (m, d) landmark points Z.
    S_ : (m, m) learned inverse dictionary kernel, PSD: the solver's S with eigenvalues
        below ``rtol``·max clipped, S_ = normalization_ @ normalization_.T.
    S0_ : (m, m) the prior β W⁺.
    beta_ : float, β used (the optimized one with ``beta="optimize"``).
    lam_ : float, λ chosen (or given); ``inf`` = the prior β W⁺ (plain Nyström).
    criterion_ : the criterion that chose λ ("paper" for "cv" with must-link groups or
        with a class of fewer than 2 labeled rows; None for a given λ).
    cv_errors_ : (g,) held-out error rate per candidate λ of ``lam_grid_`` (regression:
        held-out squared error over the labeled rows' total sum of squares)
        (``criterion="cv"`` only; ``lam_grid_`` then ends with ``inf``, and
        ``alignment_scores_`` is NaN: eq. 15 is not computed).
    cv_n_splits_ : int, the folds used (``criterion="cv"`` only).
    cv_penalty_ : float, the LinearSVC's C (class labels) or the ridge penalty α
        (responses) the λ choice was made with (``criterion="cv"`` only).
    lam_grid_ : (g,) λ values tried, ascending.
    alignment_scores_ : (g,) eq. (15) per λ; ``alignment_factors_`` : (g, 2) its two
        factors ρ[S, S₀] and ρ[E_l S E_lᵀ, K*].
    objective_history_ : list of J (eq. 7) per solver iteration at λ*.
    objective_ : float, J at the solution.
    n_iter_ : int, solver iterations in total (λ path and refinement).
    converged_ : bool, whether the final solve met ``tol``.
    normalization_ : (m, r) U Λ^{1/2} of S (largest eigenvalue first).
    n_components_ : int, the rank r of S (the number of output features).
    n_landmarks_ : int, m.
    classes_ : labels seen among the labeled rows (group ids with must-link; None for a
        regression target).
    target_type_ : "classification" or "regression" (must-link groups:
        "classification").
    labeled_indices_ : rows of the training X that carried a label (or a group).
    kernel_ : the resolved kernel (not set with a ``prior``).
    prior_ : the fitted clone of ``prior`` (None without one); with a prior,
        ``components_`` and ``landmarks_`` are None and ``n_landmarks_`` is r, the
        prior's number of features, and ``S_``, ``S0_`` = β I are r × r.
    prior_gamma_ : float or None, the prior's graph weight t in use (``prior_.gamma_``:
        chosen jointly with λ, or by the prior itself); None without a prior that has
        one.
    prior_gamma_grid_ : (h,) ndarray or None, the t values of the joint search
        (None when sequential).
    prior_gamma_cv_errors_ : (h, g) ndarray or None, the held-out error rate of every
        (t, λ) of the joint search (rows ``prior_gamma_grid_``, columns
        ``lam_grid_``), at the C the choice was made with; ``cv_errors_`` is the
        chosen t's row. None when sequential.

    X may be a dask array or a memmap (``fit`` brings only the labeled rows into
    memory; ``transform`` runs chunk by chunk) or, without a ``prior``, an array API
    array (``transform`` on its device); see :ref:`guide-gnys-estimator`.
    """

    _lazy_fit = True
    _array_api_support = True

    def __init__(
        self,
        kernel="gaussian",
        *,
        gamma=None,
        bandwidth=None,
        degree=None,
        coef0=None,
        kernel_params=None,
        n_components="auto",
        landmarks="kmeans",
        lam="auto",
        lam_grid=None,
        beta=1.0,
        center_ideal=True,
        criterion="cv",
        cv=DEFAULT_CV_SPLITS,
        solver="auto",
        tol=1e-4,
        max_iter=500,
        rtol=1e-10,
        random_state=None,
        target="auto",
        prior=None,
        prior_gamma="sequential",
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.bandwidth = bandwidth
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.n_components = n_components
        self.landmarks = landmarks
        self.lam = lam
        self.lam_grid = lam_grid
        self.beta = beta
        self.center_ideal = center_ideal
        self.criterion = criterion
        self.cv = cv
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.rtol = rtol
        self.random_state = random_state
        self.target = target
        self.prior = prior
        self.prior_gamma = prior_gamma

    #: default of models saved before ``prior`` existed (their state has no ``prior``)
    prior = None
    #: ... and before ``prior_gamma``
    prior_gamma = "sequential"

    # ------------------------------------------------------------ validation
    def _check_params(self):
        g = self._check_shared_params()
        prior = self.prior
        if prior is not None and not (hasattr(prior, "fit") and hasattr(prior, "transform")):
            raise TypeError(
                "prior must be None or a transformer with fit and transform (its transform "
                f"gives the prior's factor rows); got {type(prior).__name__}"
            )
        self._prior_ts()
        beta = self.beta
        if isinstance(beta, str):
            check_in_choices(beta, "beta", ("heuristic", "optimize"))
        elif isinstance(beta, bool) or not isinstance(beta, numbers.Real) or not beta > 0:
            raise ValueError(f"beta must be 'heuristic', 'optimize' or a number > 0; got {beta!r}")
        return g

    def _prior_ts(self):
        """None for ``prior_gamma="sequential"``; "joint" or the given t values (sorted,
        unique) for the joint search, after checking that it can run."""
        pg = self.prior_gamma
        if isinstance(pg, str):
            check_in_choices(pg, "prior_gamma", ("sequential", "joint"))
            if pg == "sequential":
                return None
            ts = pg
        else:
            try:
                ts = np.asarray(pg, dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise ValueError(
                    "prior_gamma must be 'sequential', 'joint' or a sequence of numbers ≥ 0; "
                    f"got {pg!r}"
                ) from exc
            if ts.ndim != 1 or ts.size == 0 or not np.all(np.isfinite(ts) & (ts >= 0)):
                raise ValueError(
                    "prior_gamma must be 'sequential', 'joint' or a non-empty sequence of "
                    f"numbers ≥ 0; got {pg!r}"
                )
            ts = tuple(float(t) for t in np.unique(ts))
        what = f"prior_gamma={pg!r}" if isinstance(pg, str) else "a sequence prior_gamma"
        if self.prior is None:
            raise ValueError(
                f"{what} chooses the graph weight of a prior together with lam; pass a "
                "graph prior, e.g. prior=GraphRegularizedFactor(), or prior_gamma='sequential'"
            )
        missing = [a for a in PRIOR_GAMMA_METHODS if not callable(getattr(self.prior, a, None))]
        if missing:
            raise ValueError(
                f"{what} needs a prior whose graph weight can change after its fit (methods "
                f"{', '.join(PRIOR_GAMMA_METHODS)}, as GraphRegularizedFactor has); the prior "
                f"{type(self.prior).__name__} lacks {', '.join(missing)}. Use "
                "prior_gamma='sequential'"
            )
        if self.criterion != "cv":
            raise ValueError(
                f"{what} chooses the graph weight by cross-validation; it needs "
                f"criterion='cv', got criterion={self.criterion!r}"
            )
        return ts

    def _side_information(self, y, must_link, n):
        """(labeled rows, target K*, mask T or None, classes, target type, y of the rows)."""
        if must_link is not None:
            if y is not None:
                raise ValueError("give either y (class labels) or must_link (group ids), not both")
            g = column_or_1d(must_link)
            if g.shape[0] != n:
                raise ValueError(f"must_link has {g.shape[0]} entries, but X has {n} rows")
            if g.dtype.kind not in "iu":
                raise ValueError(
                    f"must_link must hold integer group ids (-1 = no constraint); got dtype "
                    f"{g.dtype}"
                )
            rows = np.flatnonzero(g != UNLABELED)
            ids, counts = np.unique(g[rows], return_counts=True)
            if not np.any(counts >= 2):
                raise ValueError(
                    "must_link gives no must-link pair: every group has a single row; put "
                    "at least two rows in one group"
                )
            K, T = must_link_target(g[rows])
            return rows, K, T, ids, "classification", g[rows]
        kind, rows, y_l, classes = self._labels(y, n)
        if kind == "regression":
            return rows, regression_target(y_l), None, None, kind, y_l
        K = ideal_kernel(y_l, centered=bool(self.center_ideal))
        return rows, K, None, classes, kind, y_l

    # ------------------------------------------------------------ fit
    def fit(self, X, y=None, *, must_link=None):
        """Learn S from the labeled rows of y (−1 = unlabeled) or from must-link groups.

        Parameters
        ----------
        X : (n, d) array or CSR matrix, labeled and unlabeled rows.
        y : (n,) class labels, −1 for unlabeled rows; or real-valued responses, NaN for
            unlabeled rows (see ``target``).
        must_link : (n,) int array, optional
            Instead of y: a group id per row (−1 = no constraint); rows sharing an id
            must be linked (§3.3).
        """
        rows = resolve_rows(self, X)
        if rows.on_device:
            return self._fit_host(rows, y, must_link)
        X = rows.data
        self._check_params()
        n = X.shape[0]
        m = self._resolve_n_components(n) if self.prior is None else None
        rows, K, mask, classes, kind, y_l = self._side_information(y, must_link, n)
        rng = check_generator(self.random_state)
        self.prior_gamma_grid_ = self.prior_gamma_cv_errors_ = None
        ts = self._prior_ts()
        if ts is not None and self._joint_feasible(must_link, y_l, kind):
            self._fit_prior(X, y, must_link, rows, classes, kind, read_rows=False)
            fit, W = self._learn_joint(X, rows, ts, K, y_l, kind, rng)
            self._store(fit, X, None, W, rows, classes, kind, None)
        else:
            lm, Z, El, W = self._blocks(X, y, must_link, m, rows, classes, kind, rng)
            fit = self._learn(El, W, K, y_l, mask, kind, rng)
            self._store(fit, X, Z, W, rows, classes, kind, lm)
        gamma = getattr(self.prior_, "gamma_", None)
        self.prior_gamma_ = None if gamma is None else float(gamma)
        return self

    def _joint_feasible(self, must_link, y_l, kind):
        """Whether the joint search can run: labels to score (not must-link groups, which
        are refused) and a row of every class to hold out (else the sequential choice,
        with a warning)."""
        name = type(self).__name__
        if must_link is not None:
            raise ValueError(
                f"{name}: prior_gamma={self.prior_gamma!r} chooses by cross-validation over "
                "labeled rows, and must-link groups have no labels to score; use "
                "prior_gamma='sequential'"
            )
        ok, why = cv_feasible(y_l, kind)
        if not ok:
            warnings.warn(
                f"{name}: prior_gamma={self.prior_gamma!r} cannot hold out a row ({why}); "
                "the prior's graph weight is chosen by the prior itself (sequential)",
                UserWarning,
                stacklevel=3,
            )
        return ok

    def _learn_joint(self, X, rows, ts, K, y_l, kind, rng):
        """(fit record, W = I) of (t, λ) chosen together on the fitted ``prior_``; sets
        the chosen t on it and the attributes of the search."""
        prior = self.prior_
        ts = tuple(prior.gamma_candidates()) if isinstance(ts, str) else ts
        # at every t the rank the prior chose with its own γ (all its directions when it
        # chose none)
        rank = getattr(prior, "rank_", None)
        X_l = take_rows(X, rows)
        Els = [self._checked_rows(E, rows) for E in prior.transform_at(X_l, ts, rank=rank)]
        fit = fit_generalized_nystroem(
            Els, None, K, y=y_l, prior_gammas=ts, beta=self.beta, **self._fit_options(kind, rng)
        )
        self._check_fit(fit)
        sel = fit.prior_gamma_cv
        prior.use_gamma(sel.t, rank=rank)
        self.prior_gamma_grid_ = np.asarray(sel.ts, dtype=np.float64)
        self.prior_gamma_cv_errors_ = sel.error_rate[:, :, sel.best_per_t[sel.index][1]]
        return fit, np.eye(Els[sel.index].shape[1])

    def _blocks(self, X, y, must_link, m, rows, classes, kind, rng):
        """``(landmarks, Z, E_l, W)``: k(X_l, Z) and k(Z, Z) on the chosen landmarks, or
        with a ``prior`` its rows Φ(X_l) and W = I (no landmarks)."""
        if self.prior is not None:
            El = self._fit_prior(X, y, must_link, rows, classes, kind)
            return None, None, El, np.eye(El.shape[1])
        self.prior_ = None
        self.kernel_ = self._build_kernel(X, rng)
        lm = select_landmarks(self.landmarks, X, m, rng=rng, kernel=self.kernel_)
        Z = lm.points
        Z64 = Z.astype(np.float64)
        Xl = take_rows(X, rows)  # only the labeled rows are brought into memory
        Xl = Xl.astype(np.float64) if Xl.dtype != np.float64 else Xl
        El = kernel_block(self.kernel_, Xl, Z64)
        W = kernel_block(self.kernel_, Z64, Z64)
        return lm, Z, El, W

    def _learn(self, El, W, K, y_l, mask, kind, rng):
        """The fit record of :func:`~lorak.learn.fit_generalized_nystroem`; warns when the
        solver did not converge, refuses a zero S."""
        options = self._fit_options(kind, rng)
        fit = fit_generalized_nystroem(El, W, K, y=y_l, mask=mask, beta=self.beta, **options)
        self._check_fit(fit)
        return fit

    def _check_fit(self, fit):
        """Warn when the solver did not converge; refuse a zero S."""
        name = type(self).__name__
        if not fit.converged:
            res = fit.info.get("primal_residual", fit.info.get("gradient_mapping_residual"))
            warnings.warn(
                f"{name}: the {fit.info.get('solver', self.solver)} solver "
                f"reached max_iter={self.max_iter} at lam={fit.lam:g} (relative residual "
                f"{res:.1e} > tol={self.tol:g}); increase max_iter or tol",
                ConvergenceWarning,
                stacklevel=3,
            )
        if fit.F.shape[1] == 0:
            raise ValueError(
                "the learned S is zero (the labels pull every direction to 0); raise lam or "
                "check the labels"
            )

    def _store(self, fit, X, Z, W, rows, classes, kind, lm):
        """The fitted attributes of the record ``fit``."""
        F = fit.F  # S = F Fᵀ over the spectrum kept in W's metric
        if Z is None:
            self.components_ = None
        else:
            self.components_ = Z if sp.issparse(Z) else np.asarray(Z, dtype=X.dtype)
        # S_ from the clipped eigendecomposition: exactly PSD (eigenvalues below
        # rtol·max, including round-off negatives, dropped) and equal to F Fᵀ
        self.S_ = F @ F.T
        self.S0_ = fit.S0
        self.beta_ = fit.beta
        self.alignment_factors_ = np.column_stack([fit.rho_prior, fit.rho_target])
        self._store_choice(fit, rows, classes, kind, lm)
        self.normalization_ = np.ascontiguousarray(F, dtype=X.dtype)
        self.n_components_ = F.shape[1]
        self.n_landmarks_ = W.shape[0]
        logger.debug(
            "GeneralizedNystroem: m=%d, l=%d, lam=%g, beta=%g, %d iterations",
            W.shape[0],
            rows.size,
            fit.lam,
            fit.beta,
            fit.n_iter,
        )

    def _fit_host(self, rows, y, must_link):
        """The fit of an array API X (dispatch enabled): on a NumPy copy, on the host.

        The fit's work is O(n d) for the bandwidth and landmarks plus the m × m
        solver, which runs on the host anyway; the landmarks and S's factor are then
        stored in X's namespace, on its device, where :meth:`transform` computes.
        """
        if self.prior is not None:
            raise TypeError(
                f"{type(self).__name__} with a prior has no array API path: pass NumPy arrays"
            )
        self.fit(to_numpy(rows.data), to_host(y), must_link=to_host(must_link))
        check_device_kernel(self.kernel_)  # transform computes k(X, Z) on the device
        self.components_, self.normalization_ = rows.like(self.components_, self.normalization_)
        return self

    def _fit_prior(self, X, y, must_link, rows, classes, kind, *, read_rows=True):
        """Fit the clone ``prior_`` on (X, y) and return Φ(X[rows]) (l × r), float64
        (None without ``read_rows``)."""
        n = X.shape[0]
        if must_link is not None:
            y_prior = None
        elif kind == "regression":
            y_prior = np.full(n, np.nan)
            y_prior[rows] = np.asarray(y, dtype=np.float64).ravel()[rows]
        else:  # integer class codes, -1 = unlabeled
            y_prior = np.full(n, UNLABELED, dtype=np.int64)
            y_prior[rows] = np.searchsorted(classes, column_or_1d(y)[rows])
        self.prior_ = clone(self.prior)
        if not read_rows and "keep_statistics" in self.prior_.get_params(deep=False):
            self.prior_.set_params(keep_statistics=True)  # the joint search changes its γ
        self.prior_.fit(X, y_prior)
        if not read_rows:
            return None
        return self._checked_rows(self.prior_.transform(take_rows(X, rows)), rows)

    def _checked_rows(self, El, rows):
        """The prior's rows of the labeled rows as float64, checked."""
        name = type(self).__name__
        El = El.toarray() if sp.issparse(El) else np.asarray(El)
        if El.ndim != 2 or El.shape[0] != rows.size or El.shape[1] < 1:
            raise ValueError(
                f"{name}: prior.transform must give one row of factor features per input "
                f"row; got shape {El.shape} for {rows.size} rows"
            )
        El = El.astype(np.float64)
        if not np.all(np.isfinite(El)):
            raise ValueError(f"{name}: prior.transform gave NaN or infinity on the labeled rows")
        return El

    def transform(self, X):
        """Q with Q Qᵀ = E S Eᵀ: k(X, Z) U Λ^{1/2}, or Φ(X) U Λ^{1/2} with a ``prior``."""
        check_is_fitted(self, "normalization_")
        prior = getattr(self, "prior_", None)
        if prior is None:
            rows = new_rows(self, X, "normalization_")
            if rows.on_device:
                check_device_kernel(self.kernel_)
            if is_foreign(X):  # with dispatch off too: the fitted arrays in X's float dtype
                Z, N = rows.like(self.components_, self.normalization_)
            else:  # k(X, Z) N on the host, or on X's device for a fit on one
                Z, N = rows.operands(self.components_, self.normalization_)
            return kernel_product(self.kernel_, rows.data, Z, N)
        refuse_device(
            X, f"{type(self).__name__} with a prior has no array API path: pass NumPy arrays"
        )
        Phi = prior.transform(X)
        Phi = Phi.toarray() if sp.issparse(Phi) else np.asarray(Phi)
        dtype = Phi.dtype if Phi.dtype in (np.float32, np.float64) else np.float64
        return Phi.astype(dtype, copy=False) @ self.normalization_.astype(dtype, copy=False)

    def fit_transform(self, X, y=None, *, must_link=None):
        """``fit(X, y).transform(X)``: the virtual samples of the training rows."""
        return self.fit(X, y, must_link=must_link).transform(X)

"""ℓp-norm multiple kernel learning with low-rank kernels, as scikit-learn estimators.

The math: :func:`lorak.learn.fit_lp_mkl` and :func:`lorak.learn.fit_lp_mkl_regression`.
"""

from __future__ import annotations

import logging
import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from threadpoolctl import threadpool_limits

from .._core.chunked import ChunkedRowsMixin
from .._core.estimator import store_record, validate_new_rows
from .._core.validation import check_bound, check_classification_y, check_generator, validate_data
from ..decompose import resolve_kernel_bank
from ..learn import (
    bank_decision,
    check_inner_options,
    check_regression_options,
    default_bank,
    fit_lp_mkl,
    fit_lp_mkl_regression,
    lp_mkl_factors,
    regression_bank,
)

__all__ = ["LowRankMKLClassifier", "LowRankMKLRegressor", "default_bank", "regression_bank"]

#: ``rank="auto"``: the first stage's landmarks (then :func:`lorak.learn.fit_lp_mkl_regression`)
AUTO_FIRST_RANK = 200

logger = logging.getLogger(__name__)


class _BankMKL(ChunkedRowsMixin, BaseEstimator):
    """What both ℓp-MKL estimators share: the checks of their common parameters, the
    factor stage and the decision function on the bank."""

    _lazy_fit_reason = "its solver iterates over the n factor rows held in memory"

    def _check_shared(self):
        check_bound(self.p, "p", low=1, strict=False)
        check_bound(self.tol, "tol", low=0)
        check_bound(self.max_iter, "max_iter", low=1, strict=False, integer=True)
        check_bound(self.compress_rtol, "compress_rtol", low=0, strict=False)
        for name, value in (("compress_rtol", self.compress_rtol), ("rtol", self.rtol)):
            if value is not None:
                check_bound(value, name, low=0, strict=False)
                if not value < 1:  # a cut-off relative to the largest eigenvalue
                    raise ValueError(f"{name} must be in [0, 1); got {value!r}")
        if self.factor_dtype not in (None, "float32", "float64", np.float32, np.float64):
            raise ValueError(
                f"factor_dtype must be None, 'float32' or 'float64'; got {self.factor_dtype!r}"
            )
        return not isinstance(self.landmarks, str) and not callable(self.landmarks)  # points given

    def _n_kernels(self) -> int:
        n = self.n_kernels
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
            raise ValueError(f"n_kernels must be an integer >= 1; got {n!r}")
        return int(n)

    def _factor_stage(self, X, m, rng):
        """The bank resolved on X, m shared landmarks and every kernel factored on them
        (:func:`lorak.learn.lp_mkl_factors`); stores ``kernels_``, ``components_``,
        ``normalizations_`` and ``factor_info_`` and returns the factors."""
        bank = resolve_kernel_bank(self.kernels, X, rng, default=self._default_bank)
        fac = lp_mkl_factors(
            bank, X, m, landmarks=self.landmarks, rng=rng, rtol=self.rtol,
            dtype=self.factor_dtype, compress=self.compress, compress_rtol=self.compress_rtol,
        )  # fmt: skip
        self.kernels_, self.components_ = bank, fac.bank.points
        self.normalizations_, self.factor_info_ = fac.normalizations, dict(fac.info)
        if self.verbose:
            logger.info("lp-mkl factors: %s", self.factor_info_)
        return fac

    def _decision(self, X):
        X = validate_new_rows(self, X, "landmark_coef_")
        coef = self.landmark_coef_.reshape(-1, *self.landmark_coef_.shape[-2:])  # (P, M, R)
        b = np.atleast_1d(self.intercept_)
        return bank_decision(self.kernels_, self.components_, coef, b, X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class LowRankMKLClassifier(ClassifierMixin, _BankMKL):
    """ℓp-norm multiple kernel learning on low-rank (Nyström) base kernels.

    Solves the ℓp-MKL problem of Rakotomamonjy & Chanda by alternation: the SVM with
    kernel Σ_k d_k V_k V_kᵀ for fixed d, then the closed-form weights
    d_k ∝ ‖f_k‖^{2/(p+1)}, ‖d‖_p = 1 (Kloft et al. 2011). Nothing n × n is ever formed:
    memory O(ℓ r) for the factors (r ≤ M·R). Multi-class problems are solved
    one-vs-rest, each with its own weights, on factors computed once. The method and
    its solvers: :ref:`guide-lpmkl`.

    Parameters
    ----------
    kernels : KernelBank, sequence of kernels, or None
        The base kernels. None: :func:`default_bank` (``n_kernels`` Gaussians with σ
        log-spaced in ``sigma_range``, the paper's setting).
    n_kernels : int, default=50
    sigma_range : (float, float), default=(1, 100)
        Only used when ``kernels`` is None.
    rank : int, default=50
        R, the number of landmarks (shared by all kernels); each kernel's rank r_k ≤ R
        (wide Gaussians lose rank to the eigenvalue cut-off ``rtol``).
    landmarks : str, callable or array, default="uniform"
        Any strategy of :mod:`lorak.landmarks` (``"uniform"``, ``"kmeans"``,
        ``"column_norm"``; the latter's column norms use the bank's middle kernel), a
        callable, row indices or points.
    p : float ≥ 1, default=2
        The ℓp norm on d; p = 1 gives sparse weights.
    C : float > 0, default=1.0
        SVM regularization (the paper's experiments use 1000).
    tol : float, default=1e-4
        Outer stopping: max_k |Δd_k| < tol.
    max_iter : int, default=50
        Outer iterations (inner SVM solves per binary problem).
    inner_tol : float or None, default=None
        Tolerance of the inner stopping criterion. None: 1e-3 for ``solver="newton"``,
        1e-2 for the GFB solvers.
    inner_max_iter : int, default=3000
        GFB iterations (the paper: 3000) or Newton steps per inner solve; solves are
        warm-started.
    inner_criterion : {"gap", "objective"}, default="gap"
        ``"gap"``: relative duality gap of the SVM (a certificate). ``"objective"``:
        relative change of the objective, the paper's rule with ``inner_tol=1e-4``,
        which stops far from the optimum at large C.
    solver : {"newton", "shared", "split", "naive"}, default="newton"
        The SVM solver for fixed d (:func:`lorak.learn.fit_lp_mkl`, whose inner solve it is):
        ``"newton"``, primal Newton (needs ``compress=True``, ``eta=0``,
        ``inner_criterion="gap"``); ``"split"``, Algorithm 2 (the paper); ``"naive"``
        and ``"shared"`` (needs ``compress=True``), GFB variants
        (:ref:`guide-lpmkl-solvers`).
    gfb_weights : {"uniform", "blockwise"}, default="blockwise"
        Averaging weights of the split GFB (:func:`lorak.solvers._gfb.gfb_split`):
        ``"uniform"`` is Algorithm 2 verbatim, ``"blockwise"`` its preconditioned form.
    gfb_scale : float, default=1.0
        Metric scale c of the GFB (1 = the paper).
    eta : float, default=0.0
        Optional η/2 ‖α‖² (the paper's Remark 1).
    compress : bool, default=True
        Store the stacked factors through their shared orthonormal basis V = B S (exact
        up to eigenvalues of VᵀV below ``compress_rtol``·λ_max); False stores every V_k.
    compress_rtol : float, default=1e-10
    factor_dtype : {None, "float32", "float64"}, default=None
        Storage of the factors; None follows X. The iterates are float64 either way.
    rtol : float, optional
        Eigenvalue cut-off of each landmark kernel matrix W_k.
    random_state : int, Generator or None
    blas_threads : int or None, default=None
        Limit BLAS threads during ``fit`` (threadpoolctl); None leaves them as they
        are. On a busy machine one thread runs the GFB's iterations faster than two.
    verbose : int, default=0
        > 0 logs progress on the ``lorak.estimators._lp_mkl`` logger (the factors) and
        the ``lorak.learn._lp_mkl`` logger (each binary problem).

    Attributes
    ----------
    classes_ : (n_classes,) labels.
    kernel_weights_ : (M,) for two classes, (n_classes, M) for one-vs-rest.
    dual_coef_ : (n_problems, n_samples) y_i α_i of each binary SVM (n_problems = 1
        for two classes, else n_classes).
    intercept_ : (n_problems,) biases; converged_ : (n_problems,) bool.
    n_iter_ : (n_problems,) outer iterations of each binary problem; inner_iter_ :
        list of lists, inner iterations of each outer iteration; objective_history_ :
        list of lists, the inner objective (4) after each solve.
    duality_gap_ : (n_problems,) relative duality gap (P − D)/|D| of the last inner SVM
        solve (for its d), the certificate of how far α is from the optimum (NaN with
        ``eta`` > 0).
    components_ : (R, d) landmarks; kernels_ : the resolved KernelBank.
    normalizations_ : list of (R, r_k) arrays, V_k = k_k(X, Z) N_k.
    landmark_coef_ : (n_problems, M, R) β_k with decision(x) = Σ_k k_k(x, Z) β_k + b.
    factor_info_ : dict, ranks, compressed rank, compression error, seconds.

    Examples
    --------
    >>> import numpy as np
    >>> from lorak import LowRankMKLClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 2))
    >>> y = (X[:, 0] * X[:, 1] > 0).astype(int)
    >>> clf = LowRankMKLClassifier(n_kernels=5, rank=20, C=10.0, random_state=0).fit(X, y)
    >>> clf.kernel_weights_.shape, bool(np.isclose(np.linalg.norm(clf.kernel_weights_, 2), 1))
    ((5,), True)
    >>> bool(clf.score(X, y) > 0.9)
    True
    """

    def __init__(
        self,
        kernels=None,
        *,
        n_kernels=50,
        sigma_range=(1.0, 100.0),
        rank=50,
        landmarks="uniform",
        p=2.0,
        C=1.0,
        tol=1e-4,
        max_iter=50,
        inner_tol=None,
        inner_max_iter=3000,
        inner_criterion="gap",
        solver="newton",
        gfb_weights="blockwise",
        gfb_scale=1.0,
        eta=0.0,
        compress=True,
        compress_rtol=1e-10,
        factor_dtype=None,
        rtol=None,
        random_state=None,
        blas_threads=None,
        verbose=0,
    ):
        self.kernels = kernels
        self.n_kernels = n_kernels
        self.sigma_range = sigma_range
        self.rank = rank
        self.landmarks = landmarks
        self.p = p
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.inner_tol = inner_tol
        self.inner_max_iter = inner_max_iter
        self.inner_criterion = inner_criterion
        self.solver = solver
        self.gfb_weights = gfb_weights
        self.gfb_scale = gfb_scale
        self.eta = eta
        self.compress = compress
        self.compress_rtol = compress_rtol
        self.factor_dtype = factor_dtype
        self.rtol = rtol
        self.random_state = random_state
        self.blas_threads = blas_threads
        self.verbose = verbose

    def _check_params(self, n_samples):
        given = self._check_shared()
        check_bound(self.C, "C", low=0)
        check_inner_options(self.solver, compress=self.compress, **self._inner())
        if given:
            return None
        check_bound(self.rank, "rank", low=1, strict=False, integer=True)
        if self.rank > n_samples:
            raise ValueError(
                f"rank={self.rank} exceeds n_samples={n_samples}: R landmarks need at "
                "least R rows; lower rank"
            )
        return int(self.rank)

    def _inner(self):
        """The inner solver's options (:func:`lorak.learn._lp_mkl.inner_options`)."""
        names = ("inner_tol", "inner_max_iter", "inner_criterion", "eta", "gfb_scale")
        return {name: getattr(self, name) for name in (*names, "gfb_weights")}

    def _default_bank(self):
        lo, hi = self.sigma_range
        if not 0 < lo <= hi:
            raise ValueError(
                f"sigma_range must be (low, high) with 0 < low <= high; got {self.sigma_range!r}"
            )
        return default_bank(self._n_kernels(), (lo, hi))

    def fit(self, X, y):
        """Compute the factors once, then run ℓp-MKL for each binary problem
        (:func:`lorak.learn.fit_lp_mkl`)."""
        threads = None if self.blas_threads is None else int(self.blas_threads)
        with threadpool_limits(limits=threads, user_api="blas"):
            X, y = validate_data(
                self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32], reset=True
            )
            check_classification_y(y)
            if np.unique(y).size < 2:
                raise ValueError(
                    "LowRankMKLClassifier needs samples of at least 2 classes; got 1 class "
                    f"in y ({y[0]!r})"
                )
            m = self._check_params(X.shape[0])
            fac = self._factor_stage(X, m, check_generator(self.random_state))
            fit = fit_lp_mkl(
                fac, y, C=self.C, p=self.p, tol=self.tol, max_iter=self.max_iter,
                solver=self.solver, verbose=bool(self.verbose), **self._inner(),
            )  # fmt: skip
        store_record(self, fit, skip=("not_converged",))
        if fit.kernel_weights.shape[0] == 1:  # two classes: one problem
            self.kernel_weights_ = fit.kernel_weights[0]
        return self

    def decision_function(self, X):
        """Σ_k k_k(x, Z) β_k + b: (n,) for two classes, (n, n_classes) one-vs-rest."""
        out = self._decision(X)
        return out[:, 0] if out.shape[1] == 1 else out

    def predict(self, X):
        """Class labels: sign of the decision (two classes) or its argmax (one-vs-rest)."""
        D = self.decision_function(X)
        if D.ndim == 1:
            return self.classes_[(D > 0).astype(int)]
        return self.classes_[np.argmax(D, axis=1)]


class LowRankMKLRegressor(RegressorMixin, _BankMKL):
    """ℓp-norm multiple kernel learning for regression on low-rank (Nyström) base kernels.

    The regression twin of :class:`LowRankMKLClassifier`, with the squared loss (a
    kernel ridge regression for fixed weights, solved exactly:
    :func:`lorak.learn.fit_lp_mkl_regression` with ``loss="squared"``) or Vapnik's
    ε-insensitive loss (the same entry with ``loss="epsilon_insensitive"``). Memory
    O(n r) for the factors (r ≤ M·R). The method and its defaults: :ref:`guide-lpmkl`,
    section "Regression".

    Parameters
    ----------
    kernels : KernelBank, sequence of kernels, or None
        The base kernels. None: :func:`regression_bank` — ``n_kernels`` Gaussians whose
        widths are log-spaced multiples (``factor_range``) of the mean pairwise squared
        distance of the training rows, so the default is scale-free.
    n_kernels : int, default=12
    factor_range : (float, float), default=(2**-6, 2**5)
        Only used when ``kernels`` is None.
    rank : int or "auto", default="auto"
        R, the number of landmarks shared by all kernels (at most n). "auto": the
        weights and C are chosen at R = 200 (or n when smaller), then the chosen
        combination, now one fixed kernel, is refitted on twice as many landmarks
        while that lowers the GCV error by at least 2 % (``rank_path_``), up to
        ``max_rank``. Squared loss only; with the ε-insensitive loss "auto" is R = 200.
    max_rank : int, default=2000
        Cap of the doubling (memory n × R floats; time O(n R²)).
    landmarks : str, callable or array, default="kmeans"
        Any strategy of :mod:`lorak.landmarks`.
    loss : {"squared", "epsilon_insensitive"}, default="squared"
    epsilon : float ≥ 0, default=0.1
        Half-width of the ε-insensitive tube, in units of the standard deviation of the
        training targets (so the default is scale-free); ignored for the squared loss.
        Both losses are fitted on the standardized targets (y − mean y) / std y and
        mapped back, so that neither depends on the units or the offset of y:
        fitting c·y + t predicts c·f + t.
    weights : {"select", "mkl"}, default="select"
        "mkl": the learned ℓp-MKL weights, as the method defines them. "select" (squared
        loss): the weights with the lowest generalized cross-validation among the learned
        ones, the uniform sum and each base kernel alone, then refitted at their best C
        (``select_ridge_weights`` in ``lorak.learn._lp_mkl_regression``, which says why;
        no pass over the rows). With the ε-insensitive loss the learned weights are used.
    C : float > 0 or "gcv", default="gcv"
        Weight of the loss (for the squared loss C = 1/α of scikit-learn's
        ``KernelRidge``), on the standardized targets. ``"gcv"``: generalized
        cross-validation of the ridge fit over ``n_C`` values log-spaced in ``C_range``
        (C·n spans that range), from the factors' moments without a refit per value.
        With the ε-insensitive loss the ridge fit's C is used.
    C_range : (float, float), default=(1e-2, 1e6)
    n_C : int, default=17
    max_iter : int, default=200
        Outer iterations.
    p, tol, compress, compress_rtol, factor_dtype, rtol, random_state
        As for :class:`LowRankMKLClassifier`, with the same defaults.
    verbose : int, default=0

    Attributes
    ----------
    kernel_weights_ : (M,) the weights d of the model (learned or selected).
    weights_choice_ : str, "mkl", "uniform" or "kernel k" (``weights="select"``).
    rank_ : int, the number of landmarks of the model; rank_path_ : list of
        (R, GCV) pairs of the doubling (``rank="auto"``).
    weights_gcv_ : dict, the lowest GCV score of each candidate (``weights="select"``).
    C_ : float, the C used (on the standardized targets).
    gcv_ : (n_C,) GCV scores of the last selection (``C="gcv"``), else None.
    intercept_ : float.
    n_iter_ : int, outer iterations of the final fit; converged_ : bool.
    components_ : (R, d) landmarks; kernels_ : the resolved KernelBank;
    normalizations_ : list of (R, r_k) arrays, V_k = k_k(X, Z) N_k; after a rank
    doubling one (R, r) array N of the fixed combination, V = (Σ_k d_k k_k(X, Z)) N.
    landmark_coef_ : (M, R) with predict(x) = Σ_k k_k(x, Z) β_k + b; factor_info_ : dict.

    Examples
    --------
    >>> import numpy as np
    >>> from lorak import LowRankMKLRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, size=(400, 2))
    >>> y = np.sin(X[:, 0]) + 0.1 * X[:, 1] ** 2 + 0.05 * rng.standard_normal(400)
    >>> reg = LowRankMKLRegressor(rank=60, random_state=0).fit(X, y)
    >>> bool(reg.score(X, y) > 0.95), reg.kernel_weights_.shape
    (True, (12,))
    """

    def __init__(
        self,
        kernels=None,
        *,
        n_kernels=12,
        factor_range=(2.0**-6, 2.0**5),
        rank="auto",
        max_rank=2000,
        landmarks="kmeans",
        loss="squared",
        epsilon=0.1,
        p=2.0,
        weights="select",
        C="gcv",
        C_range=(1e-2, 1e6),
        n_C=17,
        tol=1e-4,
        max_iter=200,
        compress=True,
        compress_rtol=1e-10,
        factor_dtype=None,
        rtol=None,
        random_state=None,
        verbose=0,
    ):
        self.kernels = kernels
        self.n_kernels = n_kernels
        self.factor_range = factor_range
        self.rank = rank
        self.max_rank = max_rank
        self.landmarks = landmarks
        self.loss = loss
        self.epsilon = epsilon
        self.p = p
        self.weights = weights
        self.C = C
        self.C_range = C_range
        self.n_C = n_C
        self.tol = tol
        self.max_iter = max_iter
        self.compress = compress
        self.compress_rtol = compress_rtol
        self.factor_dtype = factor_dtype
        self.rtol = rtol
        self.random_state = random_state
        self.verbose = verbose

    def _check_params(self, n_samples):
        given = self._check_shared()
        check_regression_options(
            self.loss, weights=self.weights, epsilon=self.epsilon, C=self.C,
            C_range=self.C_range, n_C=self.n_C,
        )  # fmt: skip
        if isinstance(self.rank, str):
            if self.rank != "auto":
                raise ValueError(f"rank must be a positive integer or 'auto'; got {self.rank!r}")
            check_bound(self.max_rank, "max_rank", low=1, strict=False, integer=True)
        elif not given:
            check_bound(self.rank, "rank", low=1, strict=False, integer=True)
        if given:
            return None
        if self.rank == "auto":
            return min(AUTO_FIRST_RANK, int(self.max_rank), n_samples)
        return min(int(self.rank), n_samples)

    def _default_bank(self):
        n = self._n_kernels()
        try:
            lo, hi = self.factor_range
        except (TypeError, ValueError):
            lo = hi = np.nan
        if not 0 < lo <= hi < np.inf:
            raise ValueError(
                f"factor_range must be (low, high) with 0 < low <= high; got {self.factor_range!r}"
            )
        return regression_bank(n, (lo, hi))

    def fit(self, X, y):
        """Compute the factors once, then choose C, the weights and the rank
        (:func:`lorak.learn.fit_lp_mkl_regression`)."""
        X, y = validate_data(
            self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32], reset=True,
            y_numeric=True,
        )  # fmt: skip
        y = np.asarray(y, dtype=np.float64)
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D (one target per row); got shape {y.shape}")
        if X.shape[0] < 2:
            raise ValueError(
                f"LowRankMKLRegressor needs at least 2 samples; got {X.shape[0]} sample"
            )
        m = self._check_params(X.shape[0])
        rng = check_generator(self.random_state)
        fac = self._factor_stage(X, m, rng)
        auto = self.rank == "auto" and m is not None and m < min(X.shape[0], int(self.max_rank))
        fit = fit_lp_mkl_regression(
            fac, X, y, loss=self.loss, epsilon=self.epsilon, p=float(self.p),
            weights=self.weights, C=self.C, C_range=self.C_range, n_C=self.n_C, tol=self.tol,
            max_iter=self.max_iter, max_rank=self.max_rank, landmarks=self.landmarks,
            auto_rank=auto, rtol=self.rtol, rng=rng, verbose=bool(self.verbose),
        )  # fmt: skip
        store_record(self, fit, skip=() if fit.C_grid is not None else ("C_grid",))
        return self

    def predict(self, X):
        """Σ_k k_k(x, Z) β_k + b."""
        return self._decision(X)[:, 0]

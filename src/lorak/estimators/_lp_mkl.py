"""ℓp-norm multiple kernel learning with low-rank kernels, as a scikit-learn classifier.

A class lives in estimators/<stem> or models/<stem>; its math in learn/<stem> or
decompose/<stem>: here :mod:`lorak.learn._lp_mkl` (classifier) and
:mod:`lorak.learn._lp_mkl_regression` (regressor).

:class:`LowRankMKLClassifier` learns the weights d of a bank of base kernels (default:
50 Gaussians, σ log-spaced in [1, 100]) together with an SVM on Σ_k d_k K_k, where every
K_k is a rank-R Nyström approximation on one shared landmark set (Rakotomamonjy &
Chanda).

A class lives in estimators/<stem> or models/<stem>; its math in learn/<stem> or
decompose/<stem>. The math here is :mod:`lorak.learn._lp_mkl` (outer loop; the
factors are a :class:`lorak.decompose.FactorBank`), with the inner SVM solvers of
:mod:`lorak.solvers` (Newton by default, the paper's GFB).

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

from __future__ import annotations

import logging
import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import ConvergenceWarning

from .._chunked import ChunkedRowsMixin
from .._validation import check_bound, check_classification_y, check_generator, validate_data
from ..decompose import nystrom_normalization, resolve_kernel_bank
from ..kernels import KernelBank, chunk_rows, kernel_block
from ..learn import LP_MKL_SOLVERS as SOLVERS
from ..learn import (
    bank_factors,
    gcv_scores,
    lp_mkl,
    lp_mkl_ridge,
    lp_mkl_svr,
    ridge_moments,
    select_ridge_weights,
    uniform_weights,
    weighted_ridge,
)
from ..solvers import WEIGHTS, FactorStack
from ._base import shared_landmarks, store_params, validate_new_rows

__all__ = [
    "LowRankMKLClassifier",
    "LowRankMKLRegressor",
    "bank_factor_state",
    "default_bank",
    "regression_bank",
]

#: ``rank="auto"``: the first stage's number of landmarks, and the least relative drop
#: of the GCV error that a doubling of the rank must buy to be kept
AUTO_FIRST_RANK = 200
RANK_GAIN = 0.02

logger = logging.getLogger(__name__)


def default_bank(n_kernels: int = 50, sigma_range=(1.0, 100.0)) -> KernelBank:
    """The paper's bank: Gaussians exp(−‖x−y‖²/(2σ²)), σ log-spaced over ``sigma_range``."""
    lo, hi = sigma_range
    return KernelBank.gaussian_sigmas(np.logspace(np.log10(lo), np.log10(hi), n_kernels))


class LowRankMKLClassifier(ChunkedRowsMixin, ClassifierMixin, BaseEstimator):
    """ℓp-norm multiple kernel learning on low-rank (Nyström) base kernels.

    Solves the ℓp-MKL problem (1) of Rakotomamonjy & Chanda by alternation
    (Algorithm 1): the SVM with kernel Σ_k d_k V_k V_kᵀ for fixed d, then the
    closed-form weights d_k ∝ ‖f_k‖^{2/(p+1)}, ‖d‖_p = 1 (eq. 3, Kloft et al. 2011).
    The SVM is solved by default by primal Newton on its explicit shared-basis
    features (``solver="newton"``); the paper's generalized forward–backward
    splitting on the lifted dual (6), with the equality constraints split per kernel
    (Algorithm 2) or merged, stays selectable (``solver``). Nothing n × n is ever
    formed: memory O(ℓ r) for the factors (r ≤ M·R, see ``compress``), time O(ℓ r)
    per GFB iteration and O(ℓ r + |S| r²) per Newton step. Multi-class problems are
    solved one-vs-rest, each binary problem with its own weights; the factors are
    computed once.

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
        Tolerance of the inner stopping criterion. None: 1e-3 for ``solver="newton"``
        (a relative duality gap it reaches in a few more Newton steps), 1e-2 for the
        GFB solvers.
    inner_max_iter : int, default=3000
        GFB iterations per inner solve (the paper: 3000), or Newton steps per inner
        solve (``solver="newton"``: 10–50 are typical). Solves are warm-started, so
        the GFB's budget accumulates over the outer iterations.
    inner_criterion : {"gap", "objective"}, default="gap"
        ``"gap"``: relative duality gap of the SVM (a certificate). ``"objective"``:
        relative change of the objective, the paper's rule with ``inner_tol=1e-4`` —
        it stops far from the optimum at C = 1000 (svmguide1, R = 50: 88.1 % test
        accuracy against 96.85 % with the gap rule and 96.8 % for the full-kernel
        reference; see :mod:`lorak.solvers._gfb`).
    solver : {"newton", "shared", "split", "naive"}, default="newton"
        ``"newton"`` (default; not the paper's solver): the SVM for fixed d is a
        linear SVM on the explicit features Φ = B L (r columns) of Σ_k d_k V_k V_kᵀ in
        the shared basis, solved in the primal by Newton's method on the
        Huber-smoothed hinge with continuation
        (:func:`lorak.solvers._newton.svm_newton`), stopped on the relative duality
        gap ``inner_tol`` of the unsmoothed SVM (``inner_max_iter`` caps the Newton
        steps); needs ``compress=True``, ``eta=0``, ``inner_criterion="gap"``. The
        GFB's iteration count grows with C, Newton's barely (``tests/solvers/test_newton.py``:
        25 → 54 steps from C = 1 to 1000, to a 1e-6 gap). Measured (C = 1000,
        p = 2, R = 50, 50 kernels, one BLAS thread, whole fit including the factors,
        under the shared lock, load 8–10 on 2 cores): ijcnn1 99,184 training rows:
        25.7 s, 24.7 s CPU, 18 outer iterations, gap 3e-5, 96.97 % test accuracy,
        peak RSS 571 MB — the merged GFB with the same CPU time (500 iterations,
        26.5 s CPU): 84.85 %, gap 609; on the same factors, inner solves only, the
        merged GFB took 766 s CPU (51,000 iterations, gap 4.5e-2) for the objective
        Newton reached in 12.3 s (590 steps, gap 2.9e-5); a 21,000-row subsample:
        12.4 s, 96.77 % (inner_tol=1e-2) against the merged GFB's 88.0 s, 29,060
        iterations, 96.74 %; svmguide1 (4962 rows): 2.2 s, 97.27 % against 10.2 s,
        97.13 %.
        ``"split"``: Algorithm 2 (the paper); ``"naive"``: the GFB with all Σ r_k + 1
        equality constraints merged; ``"shared"``: the merged GFB on the single factor
        of Σ_k d_k V_k V_kᵀ in the shared basis of the landmarks (r + 1 constraints;
        needs ``compress=True``; :func:`lorak.learn._lp_mkl.shared_basis_factor`) —
        the fastest GFB: two averaged copies instead of M + 2 (tens of times fewer
        iterations, ``tests/solvers/test_gfb.py``) at O(ℓ r + r²) per iteration.
    gfb_weights : {"uniform", "blockwise"}, default="blockwise"
        Averaging weights of the split GFB (see :func:`lorak.solvers._gfb.gfb_split`;
        ``"uniform"`` is Algorithm 2 verbatim, ``"blockwise"`` its preconditioned form,
        3× fewer iterations measured).
    gfb_scale : float, default=1.0
        Metric scale c of the GFB (1 = the paper).
    eta : float, default=0.0
        Optional η/2 ‖α‖² (the paper's Remark 1).
    compress : bool, default=True
        Store the stacked factors through their shared orthonormal basis V = B S (exact
        up to eigenvalues of VᵀV below ``compress_rtol``·λ_max); False stores every V_k
        (memory O(ℓ Σ r_k)).
    compress_rtol : float, default=1e-10
    factor_dtype : {None, "float32", "float64"}, default=None
        Storage of the factors; None follows X (float32 X → float32 factors). The GFB
        iterates are float64 either way.
    rtol : float, optional
        Eigenvalue cut-off of each landmark kernel matrix W_k.
    random_state : int, Generator or None
    blas_threads : int or None, default=None
        Limit BLAS threads during ``fit`` (threadpoolctl); None leaves them as they
        are. The GFB iterations are matrix–vector products, memory bound: on a busy
        machine one thread was measured 4–20× faster than two (thread hand-offs).
    verbose : int, default=0
        > 0 logs progress on the ``lorak.estimators._lp_mkl`` logger.

    Attributes
    ----------
    classes_ : (n_classes,) labels.
    kernel_weights_ : (M,) for two classes, (n_classes, M) for one-vs-rest.
    dual_coef_ : (n_problems, n_samples) y_i α_i of each binary SVM (n_problems = 1
        for two classes, else n_classes).
    intercept_ : (n_problems,) biases.
    n_iter_ : (n_problems,) outer iterations of each binary problem.
    inner_iter_ : list of lists, inner GFB iterations of each outer iteration.
    objective_history_ : list of lists, the inner objective (4) after each solve.
    converged_ : (n_problems,) bool.
    duality_gap_ : (n_problems,) relative duality gap (P − D)/|D| of the last inner SVM
        solve (for its d), the certificate of how far α is from the optimum (NaN with
        ``eta`` > 0).
    components_ : (R, d) landmarks.
    kernels_ : the resolved KernelBank.
    normalizations_ : list of (R, r_k) arrays, V_k = k_k(X, Z) N_k.
    landmark_coef_ : (n_problems, M, R) β_k with decision(x) = Σ_k k_k(x, Z) β_k + b.
    factor_info_ : dict, ranks, compressed rank, compression error, seconds.
    """

    _lazy_fit_reason = "its solver iterates over the n factor rows held in memory"

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
        store_params(self, locals())

    # ------------------------------------------------------------------ validation
    def _check_params(self, n_samples):
        check_bound(self.p, "p", low=1, strict=False)
        check_bound(self.C, "C", low=0)
        check_bound(self.tol, "tol", low=0)
        if self.inner_tol is not None:
            check_bound(self.inner_tol, "inner_tol", low=0, strict=False)
        check_bound(self.max_iter, "max_iter", low=1, strict=False, integer=True)
        check_bound(self.inner_max_iter, "inner_max_iter", low=1, strict=False, integer=True)
        check_bound(self.eta, "eta", low=0, strict=False)
        check_bound(self.gfb_scale, "gfb_scale", low=0)
        check_bound(self.compress_rtol, "compress_rtol", low=0, strict=False)
        for name, value in (("compress_rtol", self.compress_rtol), ("rtol", self.rtol)):
            if value is not None:
                check_bound(value, name, low=0, strict=False)
                if not value < 1:  # a cut-off relative to the largest eigenvalue
                    raise ValueError(f"{name} must be in [0, 1); got {value!r}")
        if self.solver not in SOLVERS:
            raise ValueError(f"unknown solver {self.solver!r}; valid names are {sorted(SOLVERS)}")
        if self.gfb_weights not in WEIGHTS:
            raise ValueError(
                f"unknown gfb_weights {self.gfb_weights!r}; valid names are {list(WEIGHTS)}"
            )
        if self.inner_criterion not in ("objective", "gap"):
            raise ValueError(
                f"unknown inner_criterion {self.inner_criterion!r}; valid names are "
                "'gap', 'objective'"
            )
        _check_factor_dtype(self.factor_dtype)
        if self.solver in ("shared", "newton") and not self.compress:
            raise ValueError(
                f"solver={self.solver!r} works in the shared basis of the factors: it needs "
                "compress=True (or choose solver='split' or 'naive')"
            )
        if self.solver == "newton" and self.eta != 0:
            raise ValueError(
                f"eta={self.eta!r} is a GFB option (the paper's Remark 1); solver='newton' "
                "solves the plain SVM: use eta=0"
            )
        if self.solver == "newton" and self.inner_criterion != "gap":
            raise ValueError(
                f"inner_criterion={self.inner_criterion!r} is a GFB option; solver='newton' "
                "stops on the duality gap: use inner_criterion='gap'"
            )
        given = not isinstance(self.landmarks, str) and not callable(self.landmarks)
        if not given:
            check_bound(self.rank, "rank", low=1, strict=False, integer=True)
            if self.rank > n_samples:
                raise ValueError(
                    f"rank={self.rank} exceeds n_samples={n_samples}: R landmarks need at "
                    "least R rows; lower rank"
                )
        return None if given else int(self.rank)

    def _default_bank(self):
        real_n = self.n_kernels
        if isinstance(real_n, bool) or not isinstance(real_n, numbers.Integral) or real_n < 1:
            raise ValueError(f"n_kernels must be an integer >= 1; got {real_n!r}")
        lo, hi = self.sigma_range
        if not 0 < lo <= hi:
            raise ValueError(
                f"sigma_range must be (low, high) with 0 < low <= high; got {self.sigma_range!r}"
            )
        return default_bank(int(real_n), (lo, hi))

    # ------------------------------------------------------------------ fit
    def fit(self, X, y):
        """Compute the factors once, then run ℓp-MKL for each binary problem."""
        return self._fit_with_factors(X, y)

    def _fit_with_factors(self, X, y, factors=None):
        """``fit`` with the factor step replaced by ``factors(est, X, m, rng)`` (same
        contract as :func:`_fit_bank_factors`): for callers that share one set of factors
        between fits that differ only after it (the benchmark's p and inner solvers)."""
        if self.blas_threads is None:
            return self._fit(X, y, factors)
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=int(self.blas_threads), user_api="blas"):
            return self._fit(X, y, factors)

    def _fit(self, X, y, factors=None):
        X, y = validate_data(
            self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32], reset=True
        )
        check_classification_y(y)
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        if self.classes_.size < 2:
            raise ValueError(
                f"LowRankMKLClassifier needs samples of at least 2 classes; got 1 class in y "
                f"({self.classes_[0]!r})"
            )
        m = self._check_params(X.shape[0])
        rng = check_generator(self.random_state)
        fac = (factors or _fit_bank_factors)(self, X, m, rng)
        F, Z = fac.stack, self.components_
        if self.verbose:
            logger.info("lp-mkl factors: %s", self.factor_info_)

        problems = [1] if self.classes_.size == 2 else list(range(self.classes_.size))
        inner_tol = self.inner_tol
        if inner_tol is None:
            inner_tol = 1e-3 if self.solver == "newton" else 1e-2
        if self.solver == "newton":
            inner = {"tol": inner_tol, "max_iter": self.inner_max_iter}
        else:
            inner = {
                "tol": inner_tol,
                "max_iter": self.inner_max_iter,
                "criterion": self.inner_criterion,
                "eta": self.eta,
                "scale": self.gfb_scale,
            }
        if self.solver == "split":
            inner["weights"] = self.gfb_weights
        M = F.n_kernels
        R = Z.shape[0]
        weights = np.empty((len(problems), M))
        dual = np.empty((len(problems), X.shape[0]))
        beta = np.zeros((len(problems), M, R))
        b = np.empty(len(problems))
        n_iter = np.empty(len(problems), dtype=int)
        conv = np.empty(len(problems), dtype=bool)
        gaps = np.full(len(problems), np.nan)
        self.inner_iter_, self.objective_history_ = [], []
        not_converged = []
        for j, cls in enumerate(problems):
            yb = np.where(y_idx == cls, 1.0, -1.0)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", ConvergenceWarning)
                res = lp_mkl(
                    F,
                    yb,
                    float(self.C),
                    float(self.p),
                    tol=self.tol,
                    max_iter=self.max_iter,
                    solver=self.solver,
                    inner=inner,
                )
            if any(issubclass(w.category, ConvergenceWarning) for w in caught):
                not_converged.append(self.classes_[cls])
            weights[j] = res.d
            dual[j] = yb * res.alpha
            b[j] = res.b
            n_iter[j] = res.n_iter
            conv[j] = res.converged
            gaps[j] = res.info.get("relative_gap", np.nan)
            self.inner_iter_.append(res.inner_iter)
            self.objective_history_.append(res.objective_history)
            # β_k = d_k N_k V_kᵀ(y∘α): decision(x) = Σ_k k_k(x, Z) β_k + b
            q = F.rmatvec(dual[j])
            for k in range(M):
                qk = q[F.block(k)]
                beta[j, k] = res.d[k] * (fac.normalizations[k] @ qk)
            if self.verbose:
                logger.info(
                    "lp-mkl problem %d/%d: %d outer iterations, %d inner, d = %s",
                    j + 1,
                    len(problems),
                    res.n_iter,
                    sum(res.inner_iter),
                    np.round(res.d, 4),
                )
        if not_converged:
            warnings.warn(
                f"ℓp-MKL did not converge within max_iter={self.max_iter} outer iterations "
                f"(tol={self.tol:g}) for class(es) {not_converged}; increase max_iter or tol",
                ConvergenceWarning,
                stacklevel=2,
            )
        self.kernel_weights_ = weights[0] if len(problems) == 1 else weights
        self.dual_coef_ = dual
        self.intercept_ = b
        self.n_iter_ = n_iter
        self.converged_ = conv
        self.duality_gap_ = gaps
        self.landmark_coef_ = beta
        return self

    # ------------------------------------------------------------------ predict
    def decision_function(self, X):
        """Σ_k k_k(x, Z) β_k + b: (n,) for two classes, (n, n_classes) one-vs-rest."""
        X = validate_new_rows(self, X, "landmark_coef_")
        out = _bank_decision(
            self.kernels_, self.components_, self.landmark_coef_, self.intercept_, X
        )
        return out[:, 0] if out.shape[1] == 1 else out

    def predict(self, X):
        """Class labels: sign of the decision (two classes) or its argmax (one-vs-rest)."""
        D = self.decision_function(X)
        if D.ndim == 1:
            return self.classes_[(D > 0).astype(int)]
        return self.classes_[np.argmax(D, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def _check_factor_dtype(value) -> None:
    if value not in (None, "float32", "float64", np.float32, np.float64):
        raise ValueError(f"factor_dtype must be None, 'float32' or 'float64'; got {value!r}")


def _landmark_points(lm) -> np.ndarray:
    """The landmark rows as a dense float64 array (k-means centres of sparse X are sparse)."""
    Z = lm.points.toarray() if hasattr(lm.points, "toarray") else lm.points
    return np.asarray(Z, dtype=np.float64)


def _fit_bank_factors(est, X, m, rng):
    """Resolve ``est``'s bank, draw m shared landmarks and factor every kernel on them
    (one normalization per kernel): stores ``kernels_``, ``components_``,
    ``normalizations_`` and ``factor_info_`` on ``est`` and returns the factors."""
    fac, state = bank_factor_state(est, X, m, rng)
    for name, value in state.items():
        setattr(est, name, value)
    return fac


def bank_factor_state(est, X, m, rng):
    """What :func:`_fit_bank_factors` computes, without touching ``est``: the factors
    and the fitted attributes they come with (a dict of name → value)."""
    bank = resolve_kernel_bank(est.kernels, X, rng, default=est._default_bank)
    lm = shared_landmarks(est.landmarks, X, m, bank, rng)
    Z = _landmark_points(lm)
    dtype = X.dtype if est.factor_dtype is None else np.dtype(est.factor_dtype)
    fac = bank_factors(
        bank,
        X,
        Z,
        landmark_weights=lm.weights,
        rtol=est.rtol,
        dtype=dtype,
        compress=est.compress,
        compress_rtol=est.compress_rtol,
        rng=rng,
    )
    state = {
        "kernels_": bank,
        "components_": Z,
        "normalizations_": fac.normalizations,
        "factor_info_": dict(fac.info),
    }
    return fac, state


def _bank_decision(kernels, Z, landmark_coef, intercept, X):
    """Σ_k k_k(x, Z) β_k + b for every row of X, chunked: (n, P) for P problems."""
    n = X.shape[0]
    P, M, R = landmark_coef.shape
    out = np.empty((n, P))
    coef = landmark_coef.transpose(1, 2, 0)  # (M, R, P)
    step = chunk_rows(M * R, 8, None, n)
    for s in range(0, n, step):
        e = min(s + step, n)
        Xc = X[s:e]
        Xc = Xc.astype(np.float64) if hasattr(Xc, "toarray") else np.asarray(Xc, float)
        acc = np.zeros((e - s, P))
        for k, B in enumerate(kernels.blocks(Xc, Z)):
            acc += B @ coef[k]
        out[s:e] = acc + intercept[None, :]
    return out


def regression_bank(n_kernels: int = 12, factor_range=(2.0**-6, 2.0**5)) -> KernelBank:
    """Scale-free Gaussians exp(−‖x−y‖²/b), b log-spaced over ``factor_range`` times the
    mean pairwise squared distance of the training rows (X and c·X give the same model)."""
    lo, hi = factor_range
    return KernelBank.gaussian(factors=np.geomspace(lo, hi, n_kernels), base="mean_pairwise")


LOSSES = ("squared", "epsilon_insensitive")


def _target_standardization(y) -> tuple[float, float]:
    """(mean, scale) with which :class:`LowRankMKLRegressor` standardizes its targets.

    Both losses are fitted on z = (y − mean) / scale and the model mapped back
    (coefficients × scale, bias × scale + mean), so that a fit of s·y + t predicts
    s·f + t for every unit s ≠ 0 and offset t:

    - the squared loss is quadratic in the residual like the regularizer: y → s·y
      scales its objective by s² at s·f, so the same C (and the GCV that picks it) is
      free of the units of y mathematically; standardizing also keeps its moments
      well conditioned when the offset dwarfs the spread (y·1e-6 − 3);
    - the ε-insensitive loss is linear in the residual: with y → s·y and ε → s·ε the
      loss scales by s but the regularizer by s², so no C on the raw targets serves
      every unit. On z (ε in units of std y, C as chosen by the squared loss's GCV on
      z) the fit is exactly the raw fit at C·std(y), whose objective at s·f is s² times
      the one at f: f → s·f, b → s·b + t.

    A constant y (spread within rounding of its mean) is left as it is: both fits
    return f = 0, b = mean, and standardizing would magnify its rounding.
    """
    mu = float(np.mean(y))
    sd = float(np.std(y))
    tiny = np.finfo(np.float64).tiny
    if not (np.isfinite(sd) and sd > 0) or np.ptp(y) <= 8 * np.finfo(np.float64).eps * max(
        abs(mu), tiny
    ):
        return 0.0, 1.0
    return mu, sd


class LowRankMKLRegressor(ChunkedRowsMixin, RegressorMixin, BaseEstimator):
    """ℓp-norm multiple kernel learning for regression on low-rank (Nyström) base kernels.

    The regression twin of :class:`LowRankMKLClassifier`: a bank of base kernels on one
    shared landmark set, weights d learned in closed form (d_k ∝ ‖f_k‖^{2/(p+1)},
    ‖d‖_p = 1) together with a regression function f = Σ_k f_k + b by alternation, with
    the squared loss

        min_{d, f, b}  ½ Σ_k ‖f_k‖²/d_k + (C/2) Σ_i (y_i − f(x_i))²

    or Vapnik's ε-insensitive loss C Σ_i max(0, |y_i − f(x_i)| − ε). For fixed d the
    squared loss is a kernel ridge regression on Σ_k d_k K_k, solved exactly in closed
    form on the r × r system of the factors' shared basis
    (:func:`lorak.learn.lp_mkl_ridge`): after one O(n r²) pass that forms the factors'
    moments, each outer iteration is O(r³) and never touches the rows again. The
    ε-insensitive loss is solved by primal Newton on a Huber-smoothed loss with
    continuation, stopped on the SVR's duality gap (:func:`lorak.learn.lp_mkl_svr`).
    Nothing n × n is formed: memory is O(n r) for the factors (r ≤ M·R).

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
        kernel weights and C are chosen at R = 200 (or n when smaller); then the chosen
        combination Σ_k d_k k_k, now one fixed kernel, is refitted on 2w, 4w, …
        landmarks (w the first stage's factor width: R for one kernel, up to M·R for a
        combination; one factor of that width, not M of them) while doubling R lowers the
        generalized cross-validation error by at least 2 % (``rank_path_``), up to
        ``max_rank``. Measured on Friedman #1 (n = 1400): R² 0.903 at R = 200, 0.946 at
        R = 400 (tuned full-kernel ridge: 0.945). Squared loss only; with the
        ε-insensitive loss "auto" is R = 200.
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
    p : float ≥ 1, default=2
        The ℓp norm on d; p = 1 gives sparse weights.
    weights : {"select", "mkl"}, default="select"
        "mkl": the learned ℓp-MKL weights, as the method defines them. "select" (squared
        loss): the weights with the lowest generalized cross-validation among the learned
        ones, the uniform sum and each base kernel alone, then refitted at their best C
        (:func:`lorak.learn.select_ridge_weights`; no pass over the rows). The MKL
        objective rewards kernels that fit the training rows, so on smooth targets it
        leans to narrow kernels: measured on Friedman #1 (n = 1400, rank 200) the learned
        weights gave test R² 0.896, the best single kernel 0.908, chosen by GCV. With the
        ε-insensitive loss the learned weights are used.
    C : float > 0 or "gcv", default="gcv"
        Weight of the loss (for the squared loss C = 1/α of scikit-learn's
        ``KernelRidge``). ``"gcv"``: generalized cross-validation of the ridge fit over
        ``n_C`` values log-spaced in ``C_range`` (C·n spans that range, so the rule is
        independent of n and of the scale of y), computed from the factors' moments
        without a refit per value — once at uniform weights, and again at the learned
        weights, refitting when the choice moves. With the ε-insensitive loss the ridge
        fit's C is used (the same bias–variance balance; the SVR is then fitted once).
        C (chosen or given) weighs the loss of the standardized targets: for the
        squared loss that is the same model as on the raw y; the ε-insensitive loss is
        linear in the residual, so its C on the raw y would carry the units of 1/y
        (the raw-target C of the same fit is C·std(y)).
    C_range : (float, float), default=(1e-2, 1e6)
    n_C : int, default=17
    tol : float, default=1e-4
        Outer stopping: max_k |Δd_k| < tol.
    max_iter : int, default=200
        Outer iterations.
    compress : bool, default=True
        Store the factors through their shared orthonormal basis (see
        :class:`LowRankMKLClassifier`).
    compress_rtol : float, default=1e-10
    factor_dtype : {None, "float32", "float64"}, default=None
    rtol : float, optional
        Eigenvalue cut-off of each landmark kernel matrix W_k.
    random_state : int, Generator or None
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

    _lazy_fit_reason = "its solver iterates over the n factor rows held in memory"

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
        store_params(self, locals())

    def _check_params(self, n_samples):
        if self.loss not in LOSSES:
            raise ValueError(f"unknown loss {self.loss!r}; valid names are {list(LOSSES)}")
        check_bound(self.p, "p", low=1, strict=False)
        if self.weights not in ("select", "mkl"):
            raise ValueError(f"weights must be 'select' or 'mkl'; got {self.weights!r}")
        check_bound(self.epsilon, "epsilon", low=0, strict=False)
        check_bound(self.tol, "tol", low=0)
        check_bound(self.max_iter, "max_iter", low=1, strict=False, integer=True)
        check_bound(self.compress_rtol, "compress_rtol", low=0, strict=False)
        if isinstance(self.C, str):
            if self.C != "gcv":
                raise ValueError(f"C must be a positive number or 'gcv'; got {self.C!r}")
            check_bound(self.n_C, "n_C", low=1, strict=False, integer=True)
            try:
                lo, hi = self.C_range
            except (TypeError, ValueError):
                raise ValueError(f"C_range must be (low, high); got {self.C_range!r}") from None
            check_bound(lo, "C_range[0]", low=0)
            check_bound(hi, "C_range[1]", low=0)
            if lo > hi:
                raise ValueError(
                    f"C_range must be (low, high) with low <= high; got {self.C_range!r}"
                )
        else:
            check_bound(self.C, "C", low=0)
        _check_factor_dtype(self.factor_dtype)
        given = not isinstance(self.landmarks, str) and not callable(self.landmarks)
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
        n = self.n_kernels
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
            raise ValueError(f"n_kernels must be an integer >= 1; got {n!r}")
        try:
            lo, hi = self.factor_range
        except (TypeError, ValueError):
            raise ValueError(
                f"factor_range must be (low, high); got {self.factor_range!r}"
            ) from None
        if not 0 < lo <= hi < np.inf:
            raise ValueError(
                f"factor_range must be (low, high) with 0 < low <= high; got {self.factor_range!r}"
            )
        return regression_bank(int(n), (lo, hi))

    def _select_C(self, mom, F, d):
        """The C of the grid with the lowest GCV at weights d (grid in units of 1/n)."""
        lo, hi = self.C_range
        Cs = np.geomspace(lo, hi, int(self.n_C)) / mom.n
        scores = gcv_scores(mom, mom.root(F, d), Cs)
        self.gcv_ = scores
        self.C_grid_ = Cs
        return float(Cs[int(np.argmin(scores))]), scores

    def fit(self, X, y):
        """Compute the factors once, choose C (``"gcv"``), then alternate d and f."""
        X, y = validate_data(
            self,
            X,
            y,
            accept_sparse="csr",
            dtype=[np.float64, np.float32],
            reset=True,
            y_numeric=True,
        )
        y = np.asarray(y, dtype=np.float64)
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D (one target per row); got shape {y.shape}")
        if X.shape[0] < 2:
            raise ValueError(
                f"LowRankMKLRegressor needs at least 2 samples; got {X.shape[0]} sample"
            )
        y_mean, y_scale = _target_standardization(y)
        self._fit_standardized(X, (y - y_mean) / y_scale)
        # back to the units of y: f = scale·f_z, b = scale·b_z + mean; GCV ∝ scale²
        self.landmark_coef_ = self.landmark_coef_ * y_scale
        self.intercept_ = float(y_mean + y_scale * self.intercept_)
        s2 = y_scale**2
        if self.gcv_ is not None:
            self.gcv_ = self.gcv_ * s2
        if self.weights_gcv_ is not None:
            self.weights_gcv_ = {k: v * s2 for k, v in self.weights_gcv_.items()}
        self.rank_path_ = [(r, g * s2) for r, g in self.rank_path_]
        return self

    def _fit_standardized(self, X, y):
        """The fit on standardized targets (see :func:`_target_standardization`)."""
        m = self._check_params(X.shape[0])
        rng = check_generator(self.random_state)
        fac = _fit_bank_factors(self, X, m, rng)
        F, Z, bank = fac.stack, self.components_, self.kernels_
        p = float(self.p)
        kw = {"tol": self.tol, "max_iter": int(self.max_iter)}
        self.gcv_ = None
        uniform = uniform_weights(F.n_kernels, p)
        known = {}  # GCV arrays over the C grid already computed, by candidate
        if self.C == "gcv":
            mom = ridge_moments(F, y)
            C, known["uniform"] = self._select_C(mom, F, uniform)
            res = lp_mkl_ridge(F, y, C, p, **kw)
            C2, scores = self._select_C(mom, F, res.d)
            if C2 != C:
                C = C2
                res = lp_mkl_ridge(F, y, C, p, d0=res.d, **kw)
                # the refit moved d: its GCV is recomputed by the selection below
            else:
                known["mkl"] = scores
        else:
            C = float(self.C)
            res = None
        self.weights_choice_ = "mkl"
        self.weights_gcv_ = None
        if self.loss == "squared":
            if res is None:
                res = lp_mkl_ridge(F, y, C, p, **kw)
            if self.weights == "select":
                mom = mom if self.C == "gcv" else ridge_moments(F, y)
                grid = self.C_grid_ if self.C == "gcv" else np.array([C])
                choice, d, C_sel, table = select_ridge_weights(
                    mom, F, res.d, grid, uniform=uniform, known=known
                )
                self.weights_choice_, self.weights_gcv_ = choice, table
                if choice != "mkl":
                    C = C_sel
                    res = weighted_ridge(F, y, d, C, mom=mom)
        else:
            # y is standardized: ε in units of std(y) is ε itself
            d0 = None if res is None else res.d
            res = lp_mkl_svr(F, y, C, p, float(self.epsilon) * float(np.std(y)), d0=d0, **kw)
        self.rank_ = Z.shape[0]
        self.rank_path_ = []
        refined = None
        if (
            self.rank == "auto"
            and self.loss == "squared"
            and m is not None
            and m < min(X.shape[0], int(self.max_rank))
        ):
            if self.weights_gcv_ is not None:
                gcv0 = self.weights_gcv_[self.weights_choice_]
            else:
                gcv0 = self._gcv_of(mom if self.C == "gcv" else ridge_moments(F, y), F, res.d, C)
            # the first stage's factor has one block per kernel: Σ_k r_k columns for the
            # kernels in use (at most the compressed rank), so the doubling starts there
            active = res.d > 0
            width = int(np.sum(F.ranks[active]))
            if F.V is None:
                width = min(width, F.basis.shape[1])
            refined = self._double_rank(X, y, bank, res.d, C, gcv0, rng, width)
        if self.verbose:
            logger.info("lp-mkl regression: C = %.3g, %d outer iterations", C, res.n_iter)
        self.C_ = C
        self.kernel_weights_ = res.d
        self.intercept_ = float(res.b)
        self.n_iter_ = int(res.n_iter)
        self.converged_ = bool(res.converged)
        if refined is not None:
            Z, N, coef, b, C = refined
            self.components_ = Z
            self.normalizations_ = [N]
            self.rank_ = Z.shape[0]
            self.C_ = C
            self.intercept_ = float(b)
            # Σ_k d_k k_k(x, Z) N coef: β_k = d_k · N coef
            self.landmark_coef_ = np.outer(res.d, N @ coef)
            return self
        # β_k = N_k · (coefficients of block k): predict(x) = Σ_k k_k(x, Z) β_k + b
        beta = np.zeros((F.n_kernels, Z.shape[0]))
        for k in range(F.n_kernels):
            beta[k] = fac.normalizations[k] @ res.coef[F.block(k)]
        self.landmark_coef_ = beta
        return self

    def _C_grid(self, n, C):
        if self.C != "gcv":
            return np.array([C])
        lo, hi = self.C_range
        return np.geomspace(lo, hi, int(self.n_C)) / n

    def _gcv_of(self, mom, F, d, C):
        return float(np.min(gcv_scores(mom, mom.root(F, d), self._C_grid(mom.n, C))))

    def _double_rank(self, X, y, bank, d, C, gcv, rng, width):
        """The fixed combination Σ_k d_k k_k on 2w, 4w, … landmarks (w = the first
        stage's factor width, R for one kernel, up to M·R for a combination) while the
        GCV drops by ≥ 2 %: (Z, N, coef, b, C) of the last accepted rank, or None."""
        n = X.shape[0]
        self.rank_path_ = [(self.rank_, gcv)]
        R = max(self.rank_, int(width))
        best = None
        active = [k for k in range(len(bank)) if d[k] > 0]
        while R < min(n, int(self.max_rank)):
            R = min(2 * R, n, int(self.max_rank))
            lm = shared_landmarks(self.landmarks, X, R, bank, rng)
            Z = _landmark_points(lm)
            W = sum(d[k] * kernel_block(bank[k], Z, Z) for k in active)
            N = nystrom_normalization(W, weights=lm.weights, rtol=self.rtol).N
            E = np.zeros((n, Z.shape[0]))
            for k in active:  # one n × R block at a time: memory n·R
                E += d[k] * kernel_block(bank[k], X, Z)
            F1 = FactorStack.from_blocks([E @ N])
            del E
            mom1 = ridge_moments(F1, y)
            Cs = self._C_grid(n, C)
            scores = gcv_scores(mom1, mom1.root(F1, np.ones(1)), Cs)
            i = int(np.argmin(scores))
            self.rank_path_.append((Z.shape[0], float(scores[i])))
            if not scores[i] < (1.0 - RANK_GAIN) * gcv:
                break
            gcv = float(scores[i])
            fit = weighted_ridge(F1, y, np.ones(1), float(Cs[i]), mom=mom1)
            best = (Z, N, fit.coef, fit.b, float(Cs[i]))
        return best

    def predict(self, X):
        """Σ_k k_k(x, Z) β_k + b."""
        X = validate_new_rows(self, X, "landmark_coef_")
        out = _bank_decision(
            self.kernels_,
            self.components_,
            self.landmark_coef_[None],
            np.array([self.intercept_]),
            X,
        )
        return out[:, 0]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

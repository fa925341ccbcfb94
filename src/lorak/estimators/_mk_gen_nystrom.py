"""Generalized Nyström with multiple kernels (Zhang et al. 2017, §4) as a transformer.

The math is :mod:`lorak.learn._gen_nystrom._multiple`; the factor bank (shared
landmarks, chunked transform) is :class:`lorak.decompose.FactorBank`.

>>> import numpy as np
>>> from lorak.kernels import KernelBank
>>> from lorak import MultipleKernelGeneralizedNystroem
>>> rng = np.random.default_rng(0)
>>> X = np.r_[rng.normal(0, 1, (60, 2)), rng.normal(4, 1, (60, 2))]
>>> y = np.full(120, -1); y[:5] = 0; y[60:65] = 1          # 10 labels, -1 = unlabeled
>>> bank = KernelBank.gaussian(factors=[0.25, 1.0, 4.0])     # b = f · b0; default: 9 of them
>>> mk = MultipleKernelGeneralizedNystroem(bank, n_landmarks=12, random_state=0).fit(X, y)
>>> mk.weights_.shape, bool(np.all(mk.weights_ >= 0))
((3,), True)
>>> mk.transform(X).shape == (120, mk.block_ranks_.sum())
True
"""

from __future__ import annotations

import logging
import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from .._core.estimator import validate_new_rows
from .._core.validation import check_generator
from ..decompose import FactorBank, resolve_kernel_bank
from ..kernels import KernelBank
from ..learn import DEFAULT_CV_SPLITS, fit_mk_generalized_nystroem, regression_target_factor
from ..metrics import ideal_kernel_factor
from ._base import _LandmarkFactor, shared_landmarks
from ._gen_nystrom import _LabelLearnedFactor

__all__ = ["MultipleKernelGeneralizedNystroem", "default_gnys_bank"]

logger = logging.getLogger(__name__)


def default_gnys_bank() -> KernelBank:
    """The paper's bank (§6.2): Gaussians exp(−‖x−y‖²/b), b ∈ {2⁻⁴b₀, …, 2⁴b₀}, b₀ the
    mean pairwise squared distance."""
    return KernelBank.gaussian(2.0 ** np.arange(-4, 5), base="mean_pairwise")


def _is_per_kernel_sets(landmarks) -> bool:
    """A list/tuple of several landmark arrays (one per kernel) rather than one set."""
    if not isinstance(landmarks, (list, tuple)) or len(landmarks) < 2:
        return False
    return all(hasattr(a, "shape") and getattr(a, "ndim", 0) in (1, 2) for a in landmarks) and (
        any(getattr(a, "ndim", 0) == 2 for a in landmarks) or len({len(a) for a in landmarks}) > 1
    )


class MultipleKernelGeneralizedNystroem(_LabelLearnedFactor, _LandmarkFactor):
    """Generalized Nyström low-rank kernel from labels and a bank of kernels (§4).

    Learns one PSD block T^(j) and one weight α_j ≥ 0 per base kernel on m̃ landmarks
    Z shared by the M kernels (problem (17), by alternating minimization). The
    learned kernel is k̃(x, x') = Σ_j k_j(x, Z) T^(j) k_j(Z, x'); ``transform`` returns
    the block-diagonal factor Q = [k_1(X, Z) F_1, …, k_M(X, Z) F_M] with
    T^(j) = F_j F_jᵀ, in row chunks. The problem, the alternation and the choice of λ:
    :doc:`/guide/generalized_nystrom` (sections "Many kernels" and "Many kernels: the
    alternation in detail").

    Parameters
    ----------
    kernels : KernelBank, sequence of kernels, or None
        The base kernels. None: :func:`default_gnys_bank`, the paper's 9 Gaussians
        b ∈ {2⁻⁴b₀, …, 2⁴b₀}.
    n_components : int or "auto", default="auto"
        m, the number of landmarks the single-kernel method would use ("auto": 10 % of
        n, at most 1000); the bank shares m̃ = round(m · tau / M) landmarks.
    tau : float, default=3.0
        Cost ratio against the single-kernel method (§4.2: m̃ = m τ / M).
    n_landmarks : int, optional
        m̃ itself (overrides ``n_components`` and ``tau``).
    landmarks : str, callable or array, default="kmeans"
        Any strategy of :mod:`lorak.landmarks` (k-means, as in the paper), a callable,
        row indices or points — one set, shared by every kernel.
    lam : "auto" or float, default="auto"
    lam_grid : sequence of float, optional
        Default: 10⁻⁵, 10⁻³, …, 10⁷ and ∞ with ``criterion="cv"``; 10⁻⁵, …, 10⁵ (the
        paper's grid) otherwise.
    center_ideal : bool, default=True
        Use the centered ideal kernel H K* H as the target (as
        :class:`lorak.GeneralizedNystroem`).
    criterion : {"cv", "paper", "kernel"}, default="cv"
        How ``lam="auto"`` chooses λ. "cv": cross-validation as for
        :class:`lorak.GeneralizedNystroem`, with λ = ∞ the uniform kernel sum
        (T^(j) = W_j⁺/M). "paper": the product of alignments of §6.2; "kernel": with the
        per-block factor ρ[W_j T^(j) W_j, W_j] (:doc:`/guide/generalized_nystrom`).
    cv : int, default=5
        Folds of ``criterion="cv"`` (fewer when a class has fewer labeled rows). With
        fewer than 2 labeled rows in a class λ is chosen by ``criterion="paper"``, with
        a warning (``criterion_`` says so).
    solver : {"auto", "admm", "fista", "pg"}, default="auto"
        Solver of each block problem (see :class:`lorak.GeneralizedNystroem`).
    rescale : bool, default=True
        Add the exact subspace step to each alternation. False is the paper's
        alternation verbatim (slow at large λ; kept for comparison).
    tol : float, default=1e-4
        Stop when an alternation lowers the objective by less than ``tol`` (relative);
        also the tolerance of the block solves. The λ path uses max(tol, 1e-3).
    max_iter : int, default=100
        Alternations per λ.
    inner_max_iter : int, default=500
        Iteration cap of each block solve.
    rtol : float, default=1e-10
        Relative eigenvalue cut-off for W_j⁺ and for the rank of each T^(j).
    random_state : int, Generator or None
    target : {"auto", "classification", "regression"}, default="auto"
        As for :class:`lorak.GeneralizedNystroem`: class labels (−1 = unlabeled) or
        real-valued responses (NaN = unlabeled), whose target factor is the centred,
        unit-variance response ỹ (K* = ỹỹᵀ; ``center_ideal`` does not apply) and whose
        λ cross-validation scores a ridge on the factor.

    Attributes
    ----------
    kernels_ : the resolved KernelBank.
    landmarks_, components_ : (m̃, d) shared landmarks Z.
    weights_ : (M,) α, ≥ 0.
    T_ : list of M (m̃, m̃) PSD blocks T^(j) = α_j S^(j) (the learned kernel is
        Σ_j E^(j) T^(j) E^(j)ᵀ); T_[j] = normalizations_[j] @ normalizations_[j].T.
    S_ : list of M (m̃, m̃) blocks S^(j) = T^(j) / α_j (zero where α_j = 0).
    S0_ : list of M (m̃, m̃) priors W_j⁺.
    lam_ : float; lam_grid_ : (g,) λ values tried, ascending.
    criterion_ : the criterion that chose λ ("paper" when "cv" had a class with fewer
        than 2 labeled rows); None for a given λ.
    cv_errors_, cv_n_splits_, cv_penalty_ : with ``criterion="cv"``, the held-out error
        rate per candidate λ, the folds, and the classifier's C or ridge penalty the
        choice was made with (as for :class:`lorak.GeneralizedNystroem`).
    alignment_scores_ : (g,) the criterion per λ; alignment_factors_ : (g, M + 1) its
        per-block factors (NaN for a zero block) and the target factor.
    objective_history_ : list, J (eq. 17) after each alternation at λ*, from its
        starting point; objective_ : float, J at the solution.
    n_iter_ : int, alternations in total (λ path and refinement); inner_iter_ : int,
        block-solver iterations in total.
    converged_ : bool.
    normalizations_ : list of M (m̃, r_j) factors F_j (largest eigenvalue first).
    block_ranks_ : (M,) r_j; n_components_ : Σ_j r_j (output features);
    n_landmarks_ : m̃; n_kernels_ : M.
    classes_, labeled_indices_ : labels seen (None for a regression target) and the
        rows that carried them.
    target_type_ : "classification" or "regression".
    """

    def __init__(
        self,
        kernels=None,
        *,
        n_components="auto",
        tau=3.0,
        n_landmarks=None,
        landmarks="kmeans",
        lam="auto",
        lam_grid=None,
        center_ideal=True,
        criterion="cv",
        cv=DEFAULT_CV_SPLITS,
        solver="auto",
        rescale=True,
        tol=1e-4,
        max_iter=100,
        inner_max_iter=500,
        rtol=1e-10,
        random_state=None,
        target="auto",
    ):
        self.kernels = kernels
        self.n_components = n_components
        self.tau = tau
        self.n_landmarks = n_landmarks
        self.landmarks = landmarks
        self.lam = lam
        self.lam_grid = lam_grid
        self.center_ideal = center_ideal
        self.criterion = criterion
        self.cv = cv
        self.solver = solver
        self.rescale = rescale
        self.tol = tol
        self.max_iter = max_iter
        self.inner_max_iter = inner_max_iter
        self.rtol = rtol
        self.random_state = random_state
        self.target = target

    # ------------------------------------------------------------ validation
    def _check_params(self):
        g = self._check_shared_params(
            integers=("max_iter", "inner_max_iter"), flags=("center_ideal", "rescale")
        )
        t = self.tau
        if isinstance(t, bool) or not isinstance(t, numbers.Real) or not (np.isfinite(t) and t > 0):
            raise ValueError(f"tau must be a number > 0; got {t!r}")
        return g

    def _fit_options(self, kind, rng):
        options = super()._fit_options(kind, rng)
        options.update(inner_max_iter=self.inner_max_iter, rescale=bool(self.rescale))
        return options

    def _n_shared_landmarks(self, n_samples, n_kernels):
        """m̃ (None when the landmarks are given as points or indices)."""
        lm = self.landmarks
        if _is_per_kernel_sets(lm):
            counts = [len(a) for a in lm]
            raise ValueError(
                f"landmarks holds {len(lm)} separate sets (sizes {counts}); the kernels share "
                "one landmark set: pass a single array of points or row indices"
            )
        given = not isinstance(lm, str) and not callable(lm)
        nl = self.n_landmarks
        if nl is not None:
            if isinstance(nl, bool) or not isinstance(nl, numbers.Integral) or nl < 1:
                raise ValueError(f"n_landmarks must be an integer >= 1 or None; got {nl!r}")
            if nl > n_samples:
                raise ValueError(
                    f"n_landmarks={nl} exceeds n_samples={n_samples}; lower n_landmarks"
                )
            if given:
                count = np.shape(lm)[0] if not sp.issparse(lm) else lm.shape[0]
                if count != nl:
                    raise ValueError(
                        f"landmarks holds {count} landmarks but n_landmarks={nl}; the counts "
                        "must match (or leave n_landmarks=None)"
                    )
            return int(nl)
        if given:
            return None
        m = self._resolve_n_components(n_samples)
        return int(min(max(1, round(m * float(self.tau) / n_kernels)), n_samples))

    # ------------------------------------------------------------ fit
    def fit(self, X, y=None):
        """Learn the blocks and weights from the labeled rows of y (−1 = unlabeled)."""
        X = self._validate_fit_X(X)
        self._check_params()
        n = X.shape[0]
        kind, rows, y_l, classes = self._labels(y, n)
        Y = self._target_factor(kind, y_l)
        rng = check_generator(self.random_state)
        bank = resolve_kernel_bank(self.kernels, X, rng, default=default_gnys_bank)
        lm, Z64, Els, Ws = self._blocks(X, rows, bank, rng)
        fit = self._learn(Els, Ws, Y, y_l, kind, rng)
        self._store(fit, X, Z64, bank, rows, classes, kind, lm)
        return self

    def _target_factor(self, kind, y_l):
        """Y with K* = Y Yᵀ: the scaled response, or the (centred) ideal kernel's factor."""
        if kind == "regression":
            return regression_target_factor(y_l)
        Y = ideal_kernel_factor(y_l)
        if self.center_ideal:
            Y = Y - Y.mean(axis=0)
        return Y

    def _blocks(self, X, rows, bank, rng):
        """``(landmarks, Z, E_l^(j), W_j)``: the shared landmarks (float64) and every
        kernel's blocks of the labeled rows and of the landmarks."""
        mt = self._n_shared_landmarks(X.shape[0], len(bank))
        lm = shared_landmarks(self.landmarks, X, mt, bank, rng)
        Z = lm.points
        Z64 = Z.toarray() if sp.issparse(Z) else np.asarray(Z)
        Z64 = np.ascontiguousarray(Z64, dtype=np.float64)
        Xl = X[rows]
        Xl = Xl.astype(np.float64) if Xl.dtype != np.float64 else Xl
        return lm, Z64, bank.blocks(Xl, Z64), bank.blocks(Z64, Z64)

    def _learn(self, Els, Ws, Y, y_l, kind, rng):
        """The fit record of :func:`~lorak.learn.fit_mk_generalized_nystroem`; warns when
        the alternation did not settle, refuses a zero kernel."""
        name = type(self).__name__
        fit = fit_mk_generalized_nystroem(Els, Ws, Y, y=y_l, **self._fit_options(kind, rng))
        if not fit.converged:
            warnings.warn(
                f"{name}: the alternation reached max_iter={self.max_iter} at lam={fit.lam:g} "
                f"before the objective settled to tol={self.tol:g}; increase max_iter or tol",
                ConvergenceWarning,
                stacklevel=3,
            )
        if sum(F.shape[1] for F in fit.F) == 0:
            raise ValueError(
                "the learned kernel is zero (the labels pull every block to 0); raise lam or "
                "check the labels"
            )
        return fit

    def _store(self, fit, X, Z64, bank, rows, classes, kind, lm):
        """The fitted attributes of the record ``fit``."""
        Fs = fit.F  # T^(j) = F_j F_jᵀ in W_j's metric
        self.kernels_ = bank
        self.components_ = np.asarray(Z64, dtype=X.dtype)
        self.T_ = [F @ F.T for F in Fs]
        self.weights_ = fit.alphas.copy()
        self.S_ = [
            T / a if a > 0 else np.zeros_like(T)
            for T, a in zip(self.T_, self.weights_, strict=True)
        ]
        self.S0_ = list(fit.S0)
        self.alignment_factors_ = np.column_stack([fit.rho_blocks, fit.rho_target])
        self.inner_iter_ = int(fit.n_solves)
        self._store_choice(fit, rows, classes, kind, lm)
        self.normalizations_ = [np.ascontiguousarray(F, dtype=X.dtype) for F in Fs]
        self.block_ranks_ = np.array([F.shape[1] for F in Fs])
        self.n_components_ = int(self.block_ranks_.sum())
        self.n_landmarks_ = Z64.shape[0]
        self.n_kernels_ = len(bank)
        logger.debug(
            "%s: M=%d, m~=%d, l=%d, lam=%g, %d alternations, %d block iterations",
            type(self).__name__,
            len(bank),
            Z64.shape[0],
            rows.size,
            fit.lam,
            fit.n_iter,
            fit.n_solves,
        )

    def fit_transform(self, X, y=None):
        """``fit(X, y).transform(X)``: the virtual samples of the training rows."""
        return self.fit(X, y).transform(X)

    # ------------------------------------------------------------ transform
    def transform(self, X):
        """Q = [k_1(X, Z) F_1, …, k_M(X, Z) F_M] (n × Σ r_j), with Q Qᵀ = K̃."""
        X = validate_new_rows(self, X, "normalizations_")
        bank = FactorBank(self.kernels_, self.components_, tuple(self.normalizations_))
        return bank.astype(X.dtype).transform(X)

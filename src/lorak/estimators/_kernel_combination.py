"""Multiple-kernel baselines: fixed and alignment-weighted kernel sums, and GLMKL.

The comparators of the multiple-kernel generalized Nyström method (Zhang et al. 2017,
Table 2): the factor transformers :class:`UniformKernelSum`, :class:`ABMKL`,
:class:`CABMKL` (``transform`` returns [√μ₁ G₁, …, √μ_M G_M]) and the full-kernel
classifiers :class:`AlignmentMKLClassifier`, :class:`GLMKLClassifier`. The weights:
:doc:`/guide/generalized_nystrom`, section "Many kernels".
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
)
from sklearn.svm import SVC

from .._core.chunked import ChunkedRowsMixin
from .._core.estimator import TransformerBase, validate_new_rows
from .._core.targets import parse_semi_supervised_y
from .._core.validation import (
    as_float64,
    check_generator,
    check_n_components,
    check_rtol,
    validate_data,
)
from ..decompose import FactorBank, default_rtol, resolve_kernel_bank
from ..kernels import KernelBank, chunk_rows
from ..learn import (
    WEIGHTINGS,
    alignment_statistics_from_kernels,
    combination_weights,
    fit_glmkl,
    fit_kernel_combination,
)
from ._base import shared_landmarks

__all__ = ["ABMKL", "CABMKL", "AlignmentMKLClassifier", "GLMKLClassifier", "UniformKernelSum"]


class _KernelCombination(TransformerBase):
    """Shared landmarks, one Nyström factor per kernel, weights, concatenated transform."""

    _weighting = "uniform"

    def __init__(
        self,
        kernels=None,
        *,
        n_components=100,
        landmarks="kmeans",
        rtol=None,
        random_state=None,
    ):
        self.kernels = kernels
        self.n_components = n_components
        self.landmarks = landmarks
        self.rtol = rtol
        self.random_state = random_state

    def _check_params(self, n):
        check_rtol(self.rtol)
        if not isinstance(self.landmarks, str) and not callable(self.landmarks):
            return None  # given points or indices
        return check_n_components(self.n_components, n, what="{m} landmarks need")

    def fit(self, X, y=None):
        """Choose landmarks, factor each kernel on them, and learn the weights.

        Parameters
        ----------
        X : (n, d) array or CSR matrix, labeled and unlabeled rows.
        y : (n,) class labels, −1 for unlabeled rows (ignored by the uniform sum).
        """
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=True)
        n = X.shape[0]
        m = self._check_params(n)
        needs_y = self._weighting != "uniform"
        name = type(self).__name__
        if needs_y:
            rows, y_l = parse_semi_supervised_y(y, n, owner=name)  # two classes at least
            classes = np.unique(y_l)
        rng = check_generator(self.random_state)
        bank = resolve_kernel_bank(self.kernels, X, rng, default=KernelBank.gaussian)
        lm = shared_landmarks(self.landmarks, X, m, bank, rng)
        Z = lm.points
        Z = Z if sp.issparse(Z) else np.asarray(Z, dtype=X.dtype)
        fit = fit_kernel_combination(
            bank, X, Z, self._weighting, rows=rows if needs_y else None,
            y=y_l if needs_y else None, rtol=self.rtol,
        )  # fmt: skip
        factors, weights = fit.factors, fit.weights
        if needs_y:
            self.alignments_ = fit.statistics.alignments
            self.alignment_ = fit.statistics.combined_alignment(weights)
            self.labeled_indices_ = rows
            self.classes_ = classes
        self.weights_ = weights
        self.kernels_ = bank
        self.components_ = Z
        self.normalizations_ = [
            np.ascontiguousarray(N, dtype=X.dtype) for N in factors.normalizations
        ]
        self.ranks_ = factors.ranks
        self.n_landmarks_ = Z.shape[0]
        self.n_components_ = int(self.ranks_[weights > 0].sum())
        self.landmark_info_ = dict(lm.info or {})
        self.rtol_ = default_rtol(X.dtype) if self.rtol is None else self.rtol
        return self

    def transform(self, X):
        """[√μ_j k_j(X, Z) N_j]_j over the kernels with μ_j > 0, computed in row chunks."""
        X = validate_new_rows(self, X, "normalizations_")
        bank = FactorBank(
            self.kernels_,
            self.components_,
            tuple(self.normalizations_),
            scales=np.sqrt(self.weights_),
        )
        return bank.astype(X.dtype).transform(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        tags.target_tags.required = self._weighting != "uniform"
        return tags


_COMMON_DOC = """
    Parameters
    ----------
    kernels : KernelBank, list of kernels or None, default=None
        The M base kernels; None = 9 Gaussians at b ∈ {2⁻⁴b₀, …, 2⁴b₀}, b₀ the mean
        pairwise squared distance of the rows given to ``fit``.
    n_components : int, default=100
        Number of landmarks shared by the kernels (ignored when ``landmarks`` gives
        points or indices). The output has up to M · n_components columns.
    landmarks : str, callable or array, default="kmeans"
        Any strategy of :mod:`lorak.landmarks`, a callable, row indices or points.
    rtol : float, optional
        Eigenvalue cut-off of each landmark kernel W_j (see :class:`lorak.Nystroem`).
    random_state : int, Generator or None

    Attributes
    ----------
    weights_ : (M,) nonnegative kernel weights, summing to 1.
    kernels_ : the resolved KernelBank.
    components_ : (m, d) the shared landmarks.
    normalizations_ : list of (m, r_j) N_j, with G_j = k_j(X, Z) N_j.
    ranks_ : (M,) r_j.
    n_components_ : int, output width Σ_{μ_j > 0} r_j.
    n_landmarks_ : int, m.
"""

_LABELED_ATTRS = """    alignments_ : (M,) alignment of each base kernel's factor with the ideal
        kernel of the labeled rows (centered for CABMKL).
    alignment_ : float, the same alignment for the weighted combination.
    labeled_indices_ : rows of the training X that carried a label.
    classes_ : labels seen among the labeled rows.
"""


class UniformKernelSum(_KernelCombination):
    """Uniform kernel combination Σ_j K_j / M as a low-rank factor (no labels used)."""

    _weighting = "uniform"


class ABMKL(_KernelCombination):
    """Alignment-based MKL: μ_j ∝ A(K_j, K*), the alignment of each kernel with the
    ideal kernel K* = Y Yᵀ of the labeled rows (uncentered), as a low-rank factor."""

    _weighting = "alignment"


class CABMKL(_KernelCombination):
    """Centered-alignment MKL (Cortes, Mohri & Rostamizadeh 2010): μ ≥ 0 maximizing the
    centered alignment A(Σ_j μ_j K_j^c, K*^c) on the labeled rows (a nonnegative QP of
    size M), as a low-rank factor."""

    _weighting = "centered_alignment"


UniformKernelSum.__doc__ += _COMMON_DOC
ABMKL.__doc__ += _COMMON_DOC + _LABELED_ATTRS
CABMKL.__doc__ += _COMMON_DOC + _LABELED_ATTRS


class _LabeledRowsMKL(ChunkedRowsMixin, ClassifierMixin, BaseEstimator):
    """SVC on Σ_j d_j K_j over the labeled rows; subclasses learn d (``_learn_weights``)."""

    def _check_common(self):
        C = self.C
        if isinstance(C, bool) or not isinstance(C, numbers.Real) or not C > 0:
            raise ValueError(f"C must be a positive number; got {C!r}")
        ml = self.max_labeled
        if isinstance(ml, bool) or not isinstance(ml, numbers.Integral) or ml < 2:
            raise ValueError(f"max_labeled must be an integer >= 2; got {ml!r}")

    def _binary_targets(self, codes):
        c = self.classes_.size
        if c == 2:
            return [np.where(codes == 1, 1, -1)]
        return [np.where(codes == k, 1, -1) for k in range(c)]

    def fit(self, X, y):
        """Fit on the labeled rows of X (y = −1 marks unlabeled rows)."""
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=True)
        self._check_params()
        name = type(self).__name__
        rows, y_l = parse_semi_supervised_y(y, X.shape[0], owner=name)  # two classes at least
        classes, codes = np.unique(y_l, return_inverse=True)
        if rows.size > self.max_labeled:
            raise ValueError(
                f"{rows.size} labeled rows exceed max_labeled={self.max_labeled}: {name} "
                f"holds M kernels of size l × l ({len(rows)}² floats each); raise "
                "max_labeled if that fits in memory"
            )
        self.classes_ = classes
        bank = resolve_kernel_bank(self.kernels, X, check_generator(0), default=KernelBank.gaussian)
        Xl = as_float64(X[rows])
        Ks = bank.blocks(Xl, Xl)
        for K in Ks:
            np.copyto(K, 0.5 * (K + K.T))
        targets = self._binary_targets(codes)
        d = self._learn_weights(Ks, codes, targets)
        K = np.zeros_like(Ks[0])
        for dj, Kj in zip(d, Ks, strict=True):
            if dj > 0:
                K += dj * Kj
        self.svms_ = [SVC(kernel="precomputed", C=float(self.C)).fit(K, t) for t in targets]
        self.weights_ = d
        self.kernels_ = bank
        self.X_fit_ = Xl
        self.labeled_indices_ = rows
        self.transduction_ = self._predict_validated(X)
        return self

    def _combined_kernel_chunks(self, X):
        n, l = X.shape[0], self.X_fit_.shape[0]
        step = chunk_rows(l * len(self.kernels_), 8, n_rows=n)
        for s in range(0, n, step):
            e = min(s + step, n)
            blocks = self.kernels_.blocks(as_float64(X[s:e]), self.X_fit_)
            Kc = np.zeros((e - s, l))
            for dj, B in zip(self.weights_, blocks, strict=True):
                if dj > 0:
                    Kc += dj * B
            yield s, e, Kc

    def _decision_validated(self, X):
        c = self.classes_.size
        out = np.empty((X.shape[0],) if c == 2 else (X.shape[0], c))
        for s, e, Kc in self._combined_kernel_chunks(X):
            if c == 2:
                out[s:e] = self.svms_[0].decision_function(Kc)
            else:
                out[s:e] = np.column_stack([svm.decision_function(Kc) for svm in self.svms_])
        return out

    def _predict_validated(self, X):
        dec = self._decision_validated(X)
        idx = (dec > 0).astype(np.intp) if dec.ndim == 1 else np.argmax(dec, axis=1)
        return self.classes_[idx]

    def decision_function(self, X):
        """(n,) for two classes (positive = classes_[1]), else (n, c) one-vs-rest scores."""
        return self._decision_validated(validate_new_rows(self, X, "svms_"))

    def predict(self, X):
        """Class labels for X."""
        return self._predict_validated(validate_new_rows(self, X, "svms_"))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.target_tags.required = True
        return tags


class GLMKLClassifier(_LabeledRowsMKL):
    """Group-lasso MKL (GLMKL; Xu, Jin, Yang, King & Lyu 2010, ℓ1 case) with SVC.

    Alternates an SVM on K = Σ_j d_j K_j (``SVC(kernel="precomputed")``; one-vs-rest
    sharing the weights) with the closed-form update d_j = ‖f_j‖ / Σ_k ‖f_k‖, from
    d = 1/M (:func:`lorak.learn.fit_glmkl`). Trained on the labeled rows only
    (``y = -1`` marks unlabeled rows, used only to resolve bandwidths);
    ``transduction_`` holds the predictions for the rows given to ``fit``.

    Memory: M kernels on the labeled rows, M · l² floats; prediction builds k_j(X, X_l)
    in row chunks.

    Parameters
    ----------
    kernels : KernelBank, list of kernels or None, default=None
        None = 9 Gaussians at b ∈ {2⁻⁴b₀, …, 2⁴b₀}, b₀ resolved on all rows of ``fit``.
    C : float, default=1.0
    max_iter : int, default=50
        Weight updates at most.
    tol : float, default=1e-4
        Stop when the summed SVM dual objective (which the updates decrease) changes
        by less than tol relative to its value, or the weights by less than tol.
    max_labeled : int, default=8000
        Refuse to fit on more labeled rows than this (the M l × l kernels).

    Attributes
    ----------
    weights_ : (M,) kernel weights d (nonnegative, sum 1).
    kernels_ : the resolved KernelBank.
    X_fit_ : labeled rows (the SVMs' training points).
    svms_ : list of fitted SVC, one per binary problem.
    objective_history_ : Σ_c SVM dual objective per iteration.
    n_iter_ : weight updates done; converged_ : whether tol was met.
    classes_, labeled_indices_, transduction_.
    """

    def __init__(self, kernels=None, *, C=1.0, max_iter=50, tol=1e-4, max_labeled=8000):
        self.kernels = kernels
        self.C = C
        self.max_iter = max_iter
        self.tol = tol
        self.max_labeled = max_labeled

    def _check_params(self):
        self._check_common()
        mi = self.max_iter
        if isinstance(mi, bool) or not isinstance(mi, numbers.Integral) or mi < 1:
            raise ValueError(f"max_iter must be an integer >= 1; got {mi!r}")
        if isinstance(self.tol, bool) or not isinstance(self.tol, numbers.Real) or not self.tol > 0:
            raise ValueError(f"tol must be a positive number; got {self.tol!r}")

    def _learn_weights(self, Ks, codes, targets):
        fit = fit_glmkl(
            Ks, targets, C=self.C, max_iter=self.max_iter, tol=self.tol, owner=type(self).__name__
        )
        self.objective_history_, self.n_iter_ = fit.objective_history, fit.n_iter
        self.converged_ = fit.converged
        return fit.weights


class AlignmentMKLClassifier(_LabeledRowsMKL):
    """Two-stage MKL on full kernels: weights from (centered) alignment, then an SVC.

    The ABMKL / CABMKL comparators as the paper ran them: the weights μ of
    ``weighting`` from the M exact l × l kernels of the labeled rows, then
    ``SVC(kernel="precomputed")`` on Σ_j μ_j K_j. Unlabeled rows (``y = -1``) are used
    only to resolve data-dependent bandwidths.

    Parameters
    ----------
    kernels : KernelBank, list of kernels or None, default=None
    weighting : {"alignment", "centered_alignment", "uniform"}, default="centered_alignment"
    C : float, default=1.0
    max_labeled : int, default=8000

    Attributes
    ----------
    weights_ : (M,) μ (nonnegative, sum 1); alignments_ : (M,) per-kernel alignment.
    kernels_, X_fit_, svms_, classes_, labeled_indices_, transduction_ : as in
    :class:`GLMKLClassifier`.
    """

    def __init__(self, kernels=None, *, weighting="centered_alignment", C=1.0, max_labeled=8000):
        self.kernels = kernels
        self.weighting = weighting
        self.C = C
        self.max_labeled = max_labeled

    def _check_params(self):
        self._check_common()
        if not isinstance(self.weighting, str) or self.weighting not in WEIGHTINGS:
            raise ValueError(
                f"unknown weighting {self.weighting!r}; valid values are "
                + ", ".join(repr(w) for w in WEIGHTINGS)
            )

    def _learn_weights(self, Ks, codes, targets):
        stats = alignment_statistics_from_kernels(
            Ks, codes, centered=self.weighting == "centered_alignment"
        )
        self.alignments_ = stats.alignments
        return combination_weights(self.weighting, stats, len(Ks))

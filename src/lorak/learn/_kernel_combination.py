"""Weights of a kernel combination Σ_j μ_j K_j learned from labels — pure functions.

The math of the kernel-combination baselines, from factors of the base kernels on the
labeled rows (never l × l): :doc:`/guide/generalized_nystrom`, section "Many kernels".
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.linalg import eigh
from scipy.optimize import nnls
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from .._core.validation import as_float64, check_bool, check_bound, check_float_array, check_rtol
from ..decompose import FactorBank
from ..metrics import ideal_kernel_factor
from ._lp_mkl import uniform_weights  # μ_j = 1/M: the ℓ1 case of the ℓp start

__all__ = [
    "WEIGHTINGS",
    "AlignmentStatistics",
    "GLMKLFit",
    "KernelCombinationFit",
    "alignment_qp",
    "alignment_statistics_from_factors",
    "alignment_statistics_from_kernels",
    "alignment_weights",
    "centered_alignment_weights",
    "combination_weights",
    "fit_glmkl",
    "fit_kernel_combination",
    "uniform_weights",
]

WEIGHTINGS = ("uniform", "alignment", "centered_alignment")


@dataclass
class AlignmentStatistics:
    """Inner products of the base kernels and the ideal kernel on the labeled rows.

    gram : (M, M) ⟨K_i, K_j⟩_F.
    target : (M,) ⟨K_j, K*⟩_F.
    target_norm2 : ‖K*‖²_F.
    centered : whether the kernels (and K*) were centered (H K H).
    """

    gram: np.ndarray
    target: np.ndarray
    target_norm2: float
    centered: bool

    @property
    def alignments(self) -> np.ndarray:
        """A(K_j, K*) = ⟨K_j, K*⟩ / (‖K_j‖ ‖K*‖) per kernel (0 for a zero kernel)."""
        norms = np.sqrt(np.clip(np.diag(self.gram), 0.0, None)) * np.sqrt(self.target_norm2)
        out = np.zeros_like(self.target)
        ok = norms > 0
        out[ok] = self.target[ok] / norms[ok]
        return out

    def combined_alignment(self, mu) -> float:
        """A(Σ μ_j K_j, K*) for weights μ."""
        mu = np.asarray(mu, dtype=np.float64)
        num = float(mu @ self.target)
        den = float(np.sqrt(max(mu @ self.gram @ mu, 0.0) * self.target_norm2))
        return num / den if den > 0 else 0.0


def _check_class_labels(y, l=None, rows="the kernels") -> np.ndarray:
    """``y`` as 1-D class labels (NaN-free), ``l`` of them when given; else an error
    naming y."""
    if y is None:
        raise ValueError("y is required: the class labels of the labeled rows")
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D class labels; got shape {y.shape}")
    if l is not None and y.shape[0] != l:
        raise ValueError(f"y has {y.shape[0]} entries, but {rows} have {l} rows")
    if y.dtype.kind in "fc" and np.isnan(y).any():
        raise ValueError("y holds NaN: give a class label for every labeled row")
    return y


def _labels_factor(y, centered: bool) -> np.ndarray:
    if np.unique(y).size < 2:
        raise ValueError(
            "y has a single class among the labeled rows; the ideal kernel is constant and "
            "carries no information about the weights; give labels of at least two classes"
        )
    Y = ideal_kernel_factor(y).astype(np.float64)
    return Y - Y.mean(axis=0) if centered else Y


def alignment_statistics_from_factors(
    factors: Sequence[np.ndarray], y, *, centered: bool
) -> AlignmentStatistics:
    """Alignment statistics of K_j = G_j G_jᵀ (G_j: the labeled rows' factor, l × r_j).

    Cost O(l (Σ r_j)² + l c Σ r_j) time, O(l Σ r_j) memory; no l × l matrix.
    """
    check_bool(centered, "centered")
    if factors is None or isinstance(factors, (str, bytes)) or len(factors) == 0:
        raise ValueError("factors is empty; give at least one kernel factor")
    Gs = []
    l = None
    for j, G in enumerate(factors):
        G = np.asarray(G, dtype=np.float64)
        if G.ndim != 2:
            raise ValueError(f"factors[{j}] must be a 2-D (l, r) array; got shape {G.shape}")
        if l is None:
            l = G.shape[0]
        elif G.shape[0] != l:
            raise ValueError(
                f"factors[{j}] has {G.shape[0]} rows but factors[0] has {l}; every factor "
                "must cover the same labeled rows"
            )
        if not np.all(np.isfinite(G)):
            raise ValueError(f"factors[{j}] contains NaN or infinity")
        Gs.append(G - G.mean(axis=0) if centered else G)
    Y = _labels_factor(_check_class_labels(y, l, "the factors"), centered)
    M = len(Gs)
    widths = [G.shape[1] for G in Gs]
    Gall = np.hstack(Gs)
    C = Gall.T @ Gall  # blocks G_iᵀ G_j
    edges = np.concatenate([[0], np.cumsum(widths)])
    gram = np.empty((M, M))
    for i in range(M):
        for j in range(i, M):
            blk = C[edges[i] : edges[i + 1], edges[j] : edges[j + 1]]
            gram[i, j] = gram[j, i] = float(np.sum(blk * blk))
    GY = Gall.T @ Y
    target = np.array(
        [float(np.sum(GY[edges[j] : edges[j + 1]] ** 2)) for j in range(M)], dtype=np.float64
    )
    YtY = Y.T @ Y
    return AlignmentStatistics(gram, target, float(np.sum(YtY * YtY)), centered)


def alignment_statistics_from_kernels(
    kernels: Sequence[np.ndarray], y, *, centered: bool
) -> AlignmentStatistics:
    """Alignment statistics from explicit l × l kernel matrices of the labeled rows."""
    check_bool(centered, "centered")
    if kernels is None or isinstance(kernels, (str, bytes)) or len(kernels) == 0:
        raise ValueError("kernels is empty; give at least one kernel matrix")
    y = _check_class_labels(y)
    l = y.shape[0]
    Ks = []
    for j, K in enumerate(kernels):
        K = check_float_array(K, f"kernels[{j}]", shape=(l, l), what="one per labeled row, as y")
        if centered:
            K = K - K.mean(axis=0) - K.mean(axis=1)[:, None] + K.mean()
        Ks.append(K)
    Y = _labels_factor(y, centered)
    Kstar = Y @ Y.T
    M = len(Ks)
    gram = np.array([[float(np.sum(Ks[i] * Ks[j])) for j in range(M)] for i in range(M)])
    target = np.array([float(np.sum(K * Kstar)) for K in Ks])
    return AlignmentStatistics(gram, target, float(np.sum(Kstar * Kstar)), centered)


def _normalize(mu: np.ndarray, what: str) -> np.ndarray:
    mu = np.clip(np.asarray(mu, dtype=np.float64), 0.0, None)
    s = mu.sum()
    if not s > 0:
        raise ValueError(
            f"every {what} is zero: no base kernel aligns with the labels, so the weights "
            "are undefined; check the labels and the kernel widths"
        )
    return mu / s


def alignment_weights(stats: AlignmentStatistics) -> np.ndarray:
    """ABMKL: μ_j ∝ A(K_j, K*) (alignments clipped at 0), normalized to sum 1."""
    return _normalize(stats.alignments, "kernel-target alignment")


def alignment_qp(gram, target, *, rtol: float = 1e-12) -> np.ndarray:
    """argmin_{v ≥ 0} vᵀ M v − 2 vᵀ a for a PSD M — the QP of Cortes et al. (2010).

    Written as a nonnegative least-squares problem ‖A v − b‖² with A = diag(√w) Vᵀ and
    b = diag(1/√w) Vᵀ a from M = V diag(w) Vᵀ (a lies in the range of a Gram matrix M).
    """
    M = np.asarray(gram, dtype=np.float64)
    a = np.asarray(target, dtype=np.float64).ravel()
    if M.ndim != 2 or M.shape[0] != M.shape[1] or M.shape[0] != a.size:
        raise ValueError(f"gram must be ({a.size}, {a.size}) to match target; got {M.shape}")
    if not (np.all(np.isfinite(M)) and np.all(np.isfinite(a))):
        raise ValueError("gram and target must be finite")
    w, V = eigh(0.5 * (M + M.T), check_finite=False)
    top = w[-1] if w.size else 0.0
    if not top > 0:
        return np.zeros_like(a)
    keep = w > rtol * top
    sw = np.sqrt(w[keep])
    A = sw[:, None] * V[:, keep].T
    b = (V[:, keep].T @ a) / sw
    v, _ = nnls(A, b, maxiter=50 * a.size + 100)
    return v


def centered_alignment_weights(stats: AlignmentStatistics) -> np.ndarray:
    """CABMKL: the nonnegative μ maximizing the centered alignment, normalized to sum 1."""
    if not stats.centered:
        raise ValueError("centered_alignment_weights needs statistics computed with centered=True")
    return _normalize(alignment_qp(stats.gram, stats.target), "centered alignment")


def combination_weights(weighting: str, stats: AlignmentStatistics | None, n_kernels: int):
    """Dispatch on ``weighting`` ∈ :data:`WEIGHTINGS`; ``stats`` (the labeled rows'
    :class:`AlignmentStatistics`, of ``n_kernels`` kernels) for the alignment ones."""
    if not isinstance(weighting, str) or weighting not in WEIGHTINGS:
        raise ValueError(
            f"unknown weighting {weighting!r}; valid values are "
            + ", ".join(repr(w) for w in WEIGHTINGS)
        )
    check_bound(n_kernels, "n_kernels", low=1, strict=False, integer=True)
    if weighting == "uniform":
        return uniform_weights(n_kernels)
    if not isinstance(stats, AlignmentStatistics):
        raise TypeError(
            f"weighting={weighting!r} needs stats, the AlignmentStatistics of the labeled "
            f"rows (alignment_statistics_from_factors or _kernels); got {stats!r}"
        )
    if stats.target.shape != (n_kernels,):
        raise ValueError(
            f"stats describe {stats.target.size} kernels, but n_kernels is {n_kernels}"
        )
    if weighting == "alignment":
        return alignment_weights(stats)
    return centered_alignment_weights(stats)


# --------------------------------------------------------------------------- the fits


@dataclass
class KernelCombinationFit:
    """The outcome of :func:`fit_kernel_combination`.

    Attributes
    ----------
    weights : (M,) μ, nonnegative, summing to 1.
    factors : FactorBank, the Nyström factor of every kernel on the shared landmarks.
    statistics : AlignmentStatistics of the labeled rows, or None (uniform weights).
    """

    weights: np.ndarray
    factors: FactorBank
    statistics: AlignmentStatistics | None = None


def fit_kernel_combination(
    bank, X, landmarks, weighting: str = "uniform", *, rows=None, y=None, rtol=None
) -> KernelCombinationFit:
    """A low-rank kernel combination Σ_j μ_j K_j on shared landmarks, in two stages:
    the Nyström factor of every kernel of the resolved ``bank`` on the points
    ``landmarks`` (a :class:`lorak.decompose.FactorBank`, eigenvalue cut-off ``rtol``),
    then the weights ``weighting`` ∈ ``WEIGHTINGS`` — for the alignment ones from
    the factors of the labeled rows ``X[rows]`` with labels ``y`` (never l × l)."""
    from ..kernels import KernelBank

    if not isinstance(bank, KernelBank):
        raise TypeError(f"bank must be a resolved lorak.kernels.KernelBank; got {bank!r}")
    if not isinstance(weighting, str) or weighting not in WEIGHTINGS:
        valid = ", ".join(repr(w) for w in WEIGHTINGS)
        raise ValueError(f"unknown weighting {weighting!r}; valid values are {valid}")
    check_rtol(rtol)
    landmarks = _check_rows_matrix(landmarks, "landmarks")
    factors = FactorBank.nystrom(bank, landmarks, rtol=rtol)
    if weighting == "uniform":
        return KernelCombinationFit(combination_weights("uniform", None, len(bank)), factors)
    X = _check_rows_matrix(X, "X")
    rows = _check_row_indices(rows, X.shape[0])
    _check_class_labels(y, rows.size, "rows")
    Els = bank.blocks(as_float64(X[rows]), factors.points)
    Gl = [E @ N for E, N in zip(Els, factors.normalizations, strict=True)]
    stats = alignment_statistics_from_factors(Gl, y, centered=weighting == "centered_alignment")
    return KernelCombinationFit(combination_weights(weighting, stats, len(bank)), factors, stats)


def _check_rows_matrix(A, name):
    """``A`` unchanged if it is a non-empty 2-D matrix of finite numbers (dense or
    sparse), else an error naming it."""
    if sp.issparse(A):
        if A.shape[0] == 0 or not np.all(np.isfinite(A.data)):
            raise ValueError(f"{name} must be a non-empty 2-D matrix of finite numbers")
        return A
    check_float_array(A, name)
    return A


def _check_row_indices(rows, n):
    """``rows`` as 1-D integer indices into n rows, else an error naming rows."""
    if rows is None:
        raise ValueError("rows is required for an alignment weighting: the labeled rows of X")
    r = np.asarray(rows)
    if r.ndim != 1 or r.dtype.kind not in "iu" or r.size == 0:
        raise ValueError(
            f"rows must be a non-empty 1-D array of row indices; got {r.dtype} {r.shape}"
        )
    if r.min() < -n or r.max() >= n:
        raise ValueError(
            f"rows must index the {n} rows of X; got values from {r.min()} to {r.max()}"
        )
    return r


@dataclass
class GLMKLFit:
    """The outcome of :func:`fit_glmkl`: the weights d, the summed SVM dual objective
    per iteration, the updates done and whether ``tol`` was met."""

    weights: np.ndarray
    objective_history: list
    n_iter: int
    converged: bool


def _check_glmkl(Ks, targets, C, max_iter, tol):
    """(Ks, targets) of :func:`fit_glmkl`, checked: finite, M ≥ 1 kernels,
    l × l each, and one ±1 vector of l entries per binary problem — and C > 0, tol > 0,
    max_iter ≥ 1; else an error naming the argument."""
    if Ks is None or isinstance(Ks, (str, bytes)) or len(Ks) == 0:
        raise ValueError("Ks is empty; give at least one l × l kernel matrix")
    first = check_float_array(Ks[0], "Ks[0]")
    l = first.shape[0]
    for j, K in enumerate(Ks):
        check_float_array(K, f"Ks[{j}]", shape=(l, l), what="l × l")
    if targets is None or isinstance(targets, (str, bytes)) or len(targets) == 0:
        raise ValueError("targets is empty; give one ±1 vector per binary problem")
    T = [
        check_float_array(t, f"targets[{c}]", ndim=1, shape=(l,), what="one per row of Ks")
        for c, t in enumerate(targets)
    ]
    for c, t in enumerate(T):
        if not np.all(np.abs(t) == 1.0) or np.unique(t).size < 2:
            raise ValueError(f"targets[{c}] must hold both labels +1 and -1, and only those")
    check_bound(C, "C")
    check_bound(max_iter, "max_iter", low=1, strict=False, integer=True)
    check_bound(tol, "tol")
    return list(Ks), list(targets)


def fit_glmkl(Ks, targets, *, C: float, max_iter: int, tol: float, owner="GLMKLClassifier"):
    """Group-lasso MKL (Xu et al. 2010, ℓ1 case) on the kernels ``Ks`` (l × l each) of
    the labeled rows: alternate scikit-learn's ``SVC(kernel="precomputed")`` on
    K = Σ_j d_j K_j (one binary problem per entry of ``targets``, ±1) with the closed
    form d_j = ‖f_j‖ / Σ_k ‖f_k‖, ‖f_j‖² = d_j² Σ_c β_cᵀ K_j β_c, from d = 1/M; stop
    when the weights or the summed dual objective change by less than ``tol``
    (relative), with a ConvergenceWarning naming ``owner`` after ``max_iter`` updates."""
    Ks, targets = _check_glmkl(Ks, targets, C, max_iter, tol)
    M = len(Ks)
    d = np.full(M, 1.0 / M)
    history = []
    converged = False
    K = np.empty_like(Ks[0])
    it = 0
    while it < max_iter:
        it += 1
        K.fill(0.0)
        for dj, Kj in zip(d, Ks, strict=True):
            if dj > 0:
                K += dj * Kj
        norms2, obj = np.zeros(M), 0.0
        for t in targets:
            svm = SVC(kernel="precomputed", C=float(C)).fit(K, t)
            beta = svm.dual_coef_[0]
            sv = svm.support_
            for j in range(M):
                if d[j] > 0:
                    norms2[j] += d[j] ** 2 * float(beta @ Ks[j][np.ix_(sv, sv)] @ beta)
            obj += float(np.abs(beta).sum() - 0.5 * beta @ K[np.ix_(sv, sv)] @ beta)
        history.append(obj)
        norms = np.sqrt(np.clip(norms2, 0.0, None))
        if not norms.sum() > 0:  # every SVM is trivial (all bounded dual at 0)
            converged = True
            break
        d_new = norms / norms.sum()
        step = float(np.max(np.abs(d_new - d)))
        d = d_new
        flat = len(history) > 1 and abs(history[-2] - obj) <= tol * abs(history[-2])
        if step < tol or flat:
            converged = True
            break
    if not converged:
        warnings.warn(
            f"{owner}: objective and weights still changing after max_iter="
            f"{max_iter} updates (last weight change {step:.1e}, tol={tol:g}); "
            "increase max_iter",
            ConvergenceWarning,
            stacklevel=4,
        )
    return GLMKLFit(d, history, it, converged)

"""Few labels: what replaces leave-one-out when a class has a handful of labeled rows.

The math of the semi-supervised default's few-label regime (used by
:class:`lorak.GraphRegularizedFactor` and :class:`lorak.SemiSupervisedFactorClassifier`):
whether the graph carries information (:func:`graph_energy_ratio`, ρ = tr(GᵀLG) /
tr(G_cᵀG_c), about 1 for a graph of random edges), class-mass normalization under a
class prior (:func:`class_prior`, :func:`balance_offsets`) and the cluster assumption
by a self-trained ridge (:func:`self_training_ridge`). The reasons and the numbers
behind each rule are in the user guide, "Graph-regularized factors", section "Few
labels".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import solve
from scipy.special import logsumexp

from ._graph_factor import ridge_targets

__all__ = [
    "FEW_LABELS_GAMMA",
    "FEW_LABELS_PENALTY",
    "FEW_LABELS_RANK_FRACTION",
    "GRAPH_INFORMATIVE_RATIO",
    "MIN_LABELS_PER_CLASS",
    "PRIOR_TEST_LEVEL",
    "SELF_TRAINING_WEIGHTS",
    "SelfTrainingFit",
    "balance_offsets",
    "class_prior",
    "few_labels",
    "graph_energy_ratio",
    "self_training_ridge",
]

#: A classification target has few labels when its smallest class has fewer labeled
#: rows than this: a 10-fold cross-validation (or leave-one-out) then scores a class
#: on fewer than one row per fold.
MIN_LABELS_PER_CLASS = 10
#: The graph is informative when it removes at least this share of the variance a
#: random graph would penalize (ρ below it, see :func:`graph_energy_ratio`).
GRAPH_INFORMATIVE_RATIO = 0.5
#: The relative graph weight t (γ = t·tr(GᵀG)/tr(GᵀLG)) with few labels and an
#: informative graph: deep in the range where the deformed kernel no longer changes
#: with t (the graph's smooth directions dominate; 10²…10⁵ give the same predictions).
FEW_LABELS_GAMMA = 1e3
#: With few labels and a graph that is not informative, the factor keeps this share of
#: its leading principal directions (at least 2, and one per class): with no manifold to
#: follow, the classes can only be the data's clusters, and those sit in the kernel's
#: leading directions (chosen on g241c, g241n and Text, and confirmed on splice and dna).
FEW_LABELS_RANK_FRACTION = 1 / 30
#: The ridge penalty with few labels (features of unit mean squared row norm).
FEW_LABELS_PENALTY = 0.1
#: The unlabeled rows' weights in the self-training's successive refits.
SELF_TRAINING_WEIGHTS = (0.01, 0.03, 0.1, 0.3, 1.0)
#: Level of the test that keeps the class prior uniform.
PRIOR_TEST_LEVEL = 0.05


def few_labels(codes_l, n_classes: int | None = None) -> bool:
    """Whether integer class codes (0 … c−1) of the labeled rows are too few for a
    cross-validated choice: the smallest class has fewer than
    :data:`MIN_LABELS_PER_CLASS` rows."""
    codes_l = np.asarray(codes_l, dtype=np.int64)
    if codes_l.size == 0:
        return True
    c = int(codes_l.max()) + 1 if n_classes is None else int(n_classes)
    return int(np.bincount(codes_l, minlength=c).min()) < MIN_LABELS_PER_CLASS


def graph_energy_ratio(gram, laplacian_gram, mean_row, n_rows: int) -> float:
    """ρ = tr(GᵀLG) / tr(G_cᵀG_c): the graph's Dirichlet energy of the factor's rows per
    unit of their variance (≈ 1 for a graph of random edges, → 0 where neighbours
    agree). ``gram`` GᵀG, ``laplacian_gram`` GᵀLG, ``mean_row`` ḡ (m,), over
    ``n_rows`` rows. NaN when the rows have no variance."""
    mean_row = np.asarray(mean_row, dtype=np.float64)
    var = float(np.trace(gram)) - n_rows * float(mean_row @ mean_row)
    if not var > 0:
        return float("nan")
    return float(np.trace(laplacian_gram)) / var


def class_prior(counts, *, level: float = PRIOR_TEST_LEVEL) -> np.ndarray:
    """The class proportions to read scores under: uniform unless the labeled counts
    reject equal classes at ``level`` (exact binomial test for two classes, Pearson's
    χ² for more), else the labeled proportions."""
    from scipy.stats import binomtest, chisquare

    counts = np.asarray(counts, dtype=np.int64)
    c, total = counts.size, int(counts.sum())
    uniform = np.full(c, 1.0 / c)
    if c < 2 or total == 0:
        return uniform
    if c == 2:
        p = binomtest(int(counts[0]), total, 0.5).pvalue
    else:
        p = chisquare(counts).pvalue
    return uniform if p >= level else counts / total


def balance_offsets(D, prior, *, n_iter: int = 200) -> np.ndarray:
    """Offsets b (c,) such that argmax(D + b) over the rows of D (n × c scores) gives
    class proportions close to ``prior``.

    Two classes: the prior's quantile of the score difference, exact. More: the
    entropic optimal transport of the rows onto the classes (Sinkhorn, in the log
    domain) at a temperature of 1/20 of the scores' spread; b is its column
    potential."""
    D = np.asarray(D, dtype=np.float64)
    prior = np.asarray(prior, dtype=np.float64)
    n, c = D.shape
    if n == 0 or c < 2:
        return np.zeros(c)
    if c == 2:
        s = D[:, 1] - D[:, 0]
        cut = float(np.quantile(s, prior[0]))
        return np.array([0.0, -cut])
    spread = float(np.std(D - D.mean(axis=1, keepdims=True)))
    tau = spread / 20.0 if spread > 0 else 1.0
    S = D / tau
    logp = np.log(np.maximum(prior, 1e-300))
    g = np.zeros(c)
    for _ in range(n_iter):
        # rows normalized (each row one unit of mass), then each class's total mass
        # matched to n·π: the column potential g moves by the log of the mismatch
        logq = S + g
        logq -= logsumexp(logq, axis=1, keepdims=True)
        mass = logsumexp(logq, axis=0) - np.log(n)
        if np.max(np.abs(np.exp(mass) - prior)) < 1e-4:
            break
        g += logp - mass
    return tau * (g - g.mean())


class _Moments:
    """Σ f fᵀ, Σ f and n of a block of rows, so that a weighted ridge over two blocks
    with one weight each is an m × m solve (no pass over the rows per weight)."""

    def __init__(self, F):
        self.F = F
        self.gram = F.T @ F
        self.sum = F.sum(axis=0)
        self.n = F.shape[0]


def _two_block_ridge(lab, T_l, unl, T_u, w_u, alpha):
    """(W (m × c), b (c,)): min Σ_l ‖T_i − F_i W − b‖² + w_u Σ_u ‖T_i − F_i W − b‖²
    + α‖W‖², the intercept unpenalized; ``lab``/``unl`` the two blocks' moments."""
    sw = lab.n + w_u * unl.n
    mu_f = (lab.sum + w_u * unl.sum) / sw
    t_sum = T_l.sum(axis=0) + (w_u * T_u.sum(axis=0) if w_u else 0.0)
    mu_t = t_sum / sw
    A = lab.gram + w_u * unl.gram - sw * np.outer(mu_f, mu_f)
    A[np.diag_indices_from(A)] += alpha
    rhs = lab.F.T @ T_l - sw * np.outer(mu_f, mu_t)
    if w_u:
        rhs += w_u * (unl.F.T @ T_u)
    W = solve(A, rhs, assume_a="sym")
    return W, mu_t - mu_f @ W


@dataclass
class SelfTrainingFit:
    """The self-trained ridge: decision = F coefᵀ + intercept (offsets included)."""

    coef: np.ndarray  # (c, m)
    intercept: np.ndarray  # (c,)
    prior: np.ndarray  # (c,)
    n_changed: list  # unlabeled rows whose label changed, per step


def self_training_ridge(
    F_l, codes_l, F_u, alpha, *, n_classes=None, prior=None, weights=SELF_TRAINING_WEIGHTS
) -> SelfTrainingFit:
    """A ridge classifier (±1 one-vs-rest targets) self-trained on unlabeled rows under a
    class prior.

    Fit on the labeled rows F_l (codes 0 … c−1); label the unlabeled rows F_u by the
    argmax of their scores under the prior (:func:`balance_offsets`); then, for each
    weight w in ``weights``, refit on all rows — labeled rows weight 1, unlabeled rows
    weight w with their current labels — and label them again. The returned decision
    includes the final offsets, so ``argmax(F coefᵀ + intercept)`` is the prediction for
    any row. ``prior`` None: :func:`class_prior` of the labeled counts.
    """
    F_l = np.asarray(F_l, dtype=np.float64)
    F_u = np.asarray(F_u, dtype=np.float64)
    codes_l = np.asarray(codes_l, dtype=np.int64)
    c = int(codes_l.max()) + 1 if n_classes is None else int(n_classes)
    if prior is None:
        prior = class_prior(np.bincount(codes_l, minlength=c))
    prior = np.asarray(prior, dtype=np.float64)
    T_l = ridge_targets(codes_l, c)
    lab = _Moments(F_l)
    unl = _Moments(F_u)
    W, b = _two_block_ridge(lab, T_l, unl, None, 0.0, alpha)
    changed = []
    if F_u.shape[0] == 0:
        return SelfTrainingFit(W.T.copy(), b, prior, changed)
    D = F_u @ W + b
    offsets = balance_offsets(D, prior)
    b = b + offsets
    labels = np.argmax(D + offsets, axis=1)
    for w_u in weights:
        W, b = _two_block_ridge(lab, T_l, unl, ridge_targets(labels, c), float(w_u), alpha)
        D = F_u @ W + b
        offsets = balance_offsets(D, prior)
        b = b + offsets
        new = np.argmax(D + offsets, axis=1)
        changed.append(int(np.count_nonzero(new != labels)))
        labels = new
    return SelfTrainingFit(W.T.copy(), b, prior, changed)

"""The semi-supervised classifier's two default heads on a factor's feature rows.

With few labels, the ridge self-trained on the unlabeled rows under a class prior
measured from them (:func:`lorak.learn.self_training_ridge`); otherwise the better of a
ridge and ``LinearSVC(C=1)`` by cross-validation over the labeled rows
(:func:`choose_head`; :func:`linear_head_hits` scores both on one split).
:class:`lorak.SemiSupervisedFactorClassifier` fits them, and
:func:`lorak.learn.fit_graph_factor` scores them on held-out labeled rows to measure
which regime — the few-label rules or leave-one-out — the labels support.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from ._few_labels import (
    PRIOR_BOOTSTRAP,
    SELF_TRAINING_WEIGHTS,
    PriorEstimate,
    _matched_proportions,
    _Moments,
    _self_train,
)

__all__ = [
    "HEAD_CV_FOLDS",
    "choose_head",
    "few_label_head_codes",
    "linear_head_hits",
    "linear_svc",
    "measured_class_prior",
    "prior_class_weights",
]

#: Folds of the cross-validation that picks the default head (fewer when a class has
#: fewer labeled rows).
HEAD_CV_FOLDS = 10


def linear_svc():
    """The hinge-loss candidate head: ``LinearSVC(C=1)`` (a strong penalty)."""
    from sklearn.svm import LinearSVC

    return LinearSVC(C=1.0, max_iter=10000, random_state=0)


def choose_head(candidates, Q_l, codes_l, sample_weight=None, *, return_scores=False):
    """The candidate head with the fewest errors in a stratified k-fold cross-validation
    over the labeled rows (the first candidate wins a tie), and each candidate's error
    count. k = :data:`HEAD_CV_FOLDS`, or the smallest class's labeled rows when fewer;
    with a class of one labeled row the first candidate is taken unscored.

    ``sample_weight`` (l,), optional: each fold's heads are fitted with the training
    rows' weights and a held-out row's error counts its weight (an importance-weighted
    error: the rows of a class weighted by the ratio of the proportions it is meant for
    to the labeled ones score the heads as if the labels came in those proportions);
    the counts are then sums of weights.

    ``return_scores``: also return the chosen head's out-of-fold class scores (l × c;
    None where unscored), which :func:`measured_class_prior` reads."""
    scores = _out_of_fold_scores(candidates, Q_l, codes_l, sample_weight)
    if scores is None:
        return (candidates[0], None, None) if return_scores else (candidates[0], None)
    wrong = scores.argmax(axis=2) != codes_l
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    errors = np.count_nonzero(wrong, axis=1) if w is None else wrong @ w
    best = int(np.argmin(errors))
    cast = int if w is None else float
    counts = {type(h).__name__: cast(e) for h, e in zip(candidates, errors, strict=True)}
    return (candidates[best], counts, scores[best]) if return_scores else (candidates[best], counts)


def _out_of_fold_scores(heads, Q_l, codes_l, sample_weight=None):
    """(len(heads), l, c) the heads' class scores of each labeled row, from the fold of
    :func:`choose_head`'s stratified cross-validation that held it out (fitted with the
    training rows' ``sample_weight`` when given); None with a class of one labeled row."""
    from sklearn.model_selection import StratifiedKFold

    codes_l = np.asarray(codes_l)
    counts = np.bincount(codes_l)
    k = min(HEAD_CV_FOLDS, int(counts.min()))
    if k < 2:
        return None
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    scores = np.empty((len(heads), codes_l.size, counts.size))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for train, test in StratifiedKFold(k, shuffle=True, random_state=0).split(Q_l, codes_l):
            fit_kw = {} if w is None else {"sample_weight": w[train]}
            for i, head in enumerate(heads):
                fitted = clone(head).fit(Q_l[train], codes_l[train], **fit_kw)
                scores[i, test] = _class_scores(fitted, Q_l[test])
    return scores


def prior_class_weights(prior, counts):
    """Weights (c,) of the labeled rows' classes under a class prior ``prior`` (c
    proportions, given or measured; None: none) and the labeled class counts ``counts``:
    π_c / (n_c / l), the ratio of the proportions the head is meant for to the labeled
    ones, so that a head fitted with them (and a cross-validation scored with them)
    sees the labeled rows as if they came in proportions π — the importance weights of
    a shift in the classes' proportions between the labeled rows and the data. None
    without a prior (the labels are taken as they came) or where every weight is 1. (The
    classifier refuses a share of 0 for a labeled class before any head is fitted.)"""
    if prior is None:
        return None
    counts = np.asarray(counts, dtype=np.int64)
    weights = prior * (counts.sum() / np.maximum(counts, 1))
    return None if np.allclose(weights, 1.0, rtol=1e-12, atol=0.0) else weights


def measured_class_prior(
    head, Q_l, codes_l, mean_u, n_unlabeled, *, scores=None, n_boot=PRIOR_BOOTSTRAP, seed=0
) -> PriorEstimate | None:
    """The class proportions of the data, measured with enough labels from a linear
    head's scores: None where they are not measured (fewer than two classes, a class
    with fewer than two labeled rows, no unlabeled rows).

    A linear head's mean score over the unlabeled rows is its score of their mean
    feature row ``mean_u``, and it is the mixture Σ_c π_c s_c of the classes' mean
    scores s_c — whether the labels were drawn at random or evenly per class, the
    labeled rows of a class are a sample of it. The s_c are read out of fold (the
    stratified folds of :func:`choose_head`: a head's scores of its own training rows
    are too sure), and π — the unlabeled rows' proportions — is matched on the simplex
    (matching in the space of the scores, after Lipton, Wang & Smola 2018, in its soft
    form). ``head`` (unfitted) is the candidate :func:`choose_head` picked, fitted here
    on all labeled rows ``Q_l`` (codes ``codes_l``) for ``mean_u``'s score; ``scores``
    its out-of-fold class scores from that choice (``return_scores=True``), else
    computed here in the same folds.

    The match is noisy with tens of labeled rows. A bootstrap of the out-of-fold scores
    within each class (``n_boot`` replicates) measures its variance (of the match
    unconstrained in sign, which does not stick to a vertex), and the labeled
    proportions p_l of random draws vary around π by Σ π_c(1 − π_c)/l; the match enters
    with the positive-part James–Stein weight w = max(0, 1 − noise / signal), signal
    ‖match − p_l‖²: labels drawn at random, whose proportions agree with the match
    within that noise, are taken as they came; labels drawn evenly over unequal
    classes, which disagree by far more, give way to the match. The proportions of the
    data are the labeled counts plus ``n_unlabeled`` rows in the blend's proportions."""
    codes_l = np.asarray(codes_l)
    counts = np.bincount(codes_l)
    c, l = counts.size, codes_l.size
    if c < 2 or counts.min() < 2 or n_unlabeled < 1:
        return None
    if scores is None:
        scores = _out_of_fold_scores((head,), Q_l, codes_l)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        mu = _class_scores(clone(head).fit(Q_l, codes_l), np.asarray(mean_u)[None, :])[0]
    by_class = [scores[codes_l == j] for j in range(c)]
    M = np.stack([s.mean(axis=0) for s in by_class])
    matched = _matched_proportions(M[None], mu)[0]
    rng = np.random.default_rng(seed)
    Mb = np.stack(
        [
            np.stack([s[rng.integers(0, len(s), len(s))].mean(axis=0) for s in by_class])
            for _ in range(n_boot)
        ]
    )
    noise = float(np.sum(_affine_proportions(Mb, mu).var(axis=0)))
    noise += float(np.sum(matched * (1.0 - matched))) / l
    labeled = counts / l
    signal = float(np.sum((matched - labeled) ** 2))
    w = max(0.0, 1.0 - noise / signal) if signal > 0 else 0.0
    blend = w * matched + (1.0 - w) * labeled
    prior = (counts + n_unlabeled * blend) / (l + n_unlabeled)
    return PriorEstimate(prior, labeled, matched, w, signal, noise)


def _affine_proportions(M, mu):
    """π summing to 1, of any sign, minimizing ‖mu − Σ_c π_c M_c‖² for each stack of
    class means M (b × c × k): (b × c), from the equations of the constrained minimum
    [G 1; 1ᵀ 0] [π; λ] = [0; 1], G = (M − mu)(M − mu)ᵀ (least squares where singular).
    Its spread over a bootstrap is the match's noise: near the simplex's edge, or where
    the class means nearly coincide, the simplex's own solution sticks to a vertex and
    hides it."""
    D = M - mu[None, None, :]
    b, c, _ = D.shape
    K = np.zeros((b, c + 1, c + 1))
    K[:, :c, :c] = D @ np.swapaxes(D, 1, 2)
    K[:, :c, c] = K[:, c, :c] = 1.0
    rhs = np.zeros(c + 1)
    rhs[c] = 1.0
    return (np.linalg.pinv(K) @ rhs)[:, :c]


def _class_scores(head, Q):
    """(rows, c) class scores of a fitted linear head (a binary head's one column as
    −s, s)."""
    d = np.asarray(head.decision_function(Q), dtype=np.float64)
    return np.column_stack([-d, d]) if d.ndim == 1 else d


def linear_head_hits(Q_l, codes_l, alpha, train, test, sample_weight=None):
    """The leave-one-out regime's heads scored on one split of the labeled rows: whether
    a ridge at penalty ``alpha`` and ``LinearSVC(C=1)``, each fitted on ``train`` (with
    those rows' ``sample_weight`` when given), predict each row of ``test`` right —
    (2, len(test)) booleans, in that order."""
    from sklearn.linear_model import RidgeClassifier

    heads = (RidgeClassifier(alpha=alpha), linear_svc())
    return _split_hits(heads, Q_l, codes_l, train, test, sample_weight)


def _split_hits(heads, Q_l, codes_l, train, test, sample_weight=None):
    """(len(heads), len(test)) booleans: whether each head (a clone), fitted on the rows
    ``train`` of ``Q_l`` (with their ``sample_weight`` when given), predicts each row of
    ``test`` right."""
    hits = np.zeros((len(heads), len(test)), dtype=bool)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for i, head in enumerate(heads):
            fit_kw = {} if sample_weight is None else {"sample_weight": sample_weight[train]}
            pred = clone(head).fit(Q_l[train], codes_l[train], **fit_kw).predict(Q_l[test])
            hits[i] = pred == codes_l[test]
    return hits


def few_label_head_codes(Q_l, codes_l, Q_u, alpha, n_classes, Q, prior=None):
    """The few-label regime's head on rows Q: the class codes of the ridge self-trained
    on the labeled rows (``Q_l``, ``codes_l``) and the unlabeled rows ``Q_u`` (or their
    moments, shared by the folds of a cross-validation) under the class prior: the
    given proportions ``prior`` (c,), or None, measured from the rows
    (:func:`lorak.learn.estimate_class_prior`)."""
    unl = Q_u if isinstance(Q_u, _Moments) else _Moments(Q_u)
    fit = _self_train(Q_l, codes_l, unl, alpha, n_classes, prior, SELF_TRAINING_WEIGHTS)
    return np.argmax(Q @ fit.coef.T + fit.intercept, axis=1)

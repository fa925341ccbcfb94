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

from ._few_labels import SELF_TRAINING_WEIGHTS, _Moments, _self_train

__all__ = ["HEAD_CV_FOLDS", "choose_head", "few_label_head_codes", "linear_head_hits", "linear_svc"]

#: Folds of the cross-validation that picks the default head (fewer when a class has
#: fewer labeled rows).
HEAD_CV_FOLDS = 10


def linear_svc():
    """The hinge-loss candidate head: ``LinearSVC(C=1)`` (a strong penalty)."""
    from sklearn.svm import LinearSVC

    return LinearSVC(C=1.0, max_iter=10000, random_state=0)


def choose_head(candidates, Q_l, codes_l):
    """The candidate head with the fewest errors in a stratified k-fold cross-validation
    over the labeled rows (the first candidate wins a tie), and each candidate's error
    count. k = :data:`HEAD_CV_FOLDS`, or the smallest class's labeled rows when fewer;
    with a class of one labeled row the first candidate is taken unscored."""
    from sklearn.model_selection import StratifiedKFold

    k = min(HEAD_CV_FOLDS, int(np.bincount(codes_l).min()))
    if k < 2:
        return candidates[0], None
    folds = StratifiedKFold(k, shuffle=True, random_state=0).split(Q_l, codes_l)
    errors = np.zeros(len(candidates), dtype=np.int64)
    for train, test in folds:
        errors += np.count_nonzero(~_split_hits(candidates, Q_l, codes_l, train, test), axis=1)
    best = int(np.argmin(errors))
    return candidates[best], {
        type(h).__name__: int(e) for h, e in zip(candidates, errors, strict=True)
    }


def linear_head_hits(Q_l, codes_l, alpha, train, test):
    """The leave-one-out regime's heads scored on one split of the labeled rows: whether
    a ridge at penalty ``alpha`` and ``LinearSVC(C=1)``, each fitted on ``train``,
    predict each row of ``test`` right — (2, len(test)) booleans, in that order."""
    from sklearn.linear_model import RidgeClassifier

    return _split_hits((RidgeClassifier(alpha=alpha), linear_svc()), Q_l, codes_l, train, test)


def _split_hits(heads, Q_l, codes_l, train, test):
    """(len(heads), len(test)) booleans: whether each head (a clone), fitted on the rows
    ``train`` of ``Q_l``, predicts each row of ``test`` right."""
    from sklearn.exceptions import ConvergenceWarning

    hits = np.zeros((len(heads), len(test)), dtype=bool)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for i, head in enumerate(heads):
            pred = clone(head).fit(Q_l[train], codes_l[train]).predict(Q_l[test])
            hits[i] = pred == codes_l[test]
    return hits


def few_label_head_codes(Q_l, codes_l, Q_u, alpha, n_classes, Q):
    """The few-label regime's head on rows Q: the class codes of the ridge self-trained
    on the labeled rows (``Q_l``, ``codes_l``) and the unlabeled rows ``Q_u`` (or their
    moments, shared by the folds of a cross-validation) under the class prior measured
    from them (:func:`lorak.learn.estimate_class_prior`)."""
    unl = Q_u if isinstance(Q_u, _Moments) else _Moments(Q_u)
    fit = _self_train(Q_l, codes_l, unl, alpha, n_classes, None, SELF_TRAINING_WEIGHTS)
    return np.argmax(Q @ fit.coef.T + fit.intercept, axis=1)

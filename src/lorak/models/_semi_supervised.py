"""A low-rank factor fitted on all rows plus a linear classifier on the labeled ones.

A class lives in estimators/<stem> or models/<stem>; its math in learn/<stem> or
decompose/<stem>. This downstream model has no math of its own: any factor
(:class:`lorak.GeneralizedNystroem` by default) and any scikit-learn classifier.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from .._chunked import ChunkedRowsMixin
from .._validation import UNLABELED, one_class_error, parse_semi_supervised_y, validate_data

__all__ = ["SemiSupervisedFactorClassifier"]


def _scale_of(Q) -> float:
    ms = float(np.mean(np.einsum("ij,ij->i", Q, Q, dtype=np.float64)))
    return 1.0 / np.sqrt(ms) if ms > 0 else 1.0


def _has(attr):
    def check(self):
        obj = getattr(self, "classifier_", None)
        if obj is None:
            obj = self.classifier if self.classifier is not None else _default_classifier()
        return hasattr(obj, attr)

    return check


def _default_factor():
    from ..estimators import GeneralizedNystroem  # the estimators sit above the models

    return GeneralizedNystroem()


def _default_classifier():
    from sklearn.svm import LinearSVC

    # random_state fixed: liblinear's dual coordinate descent visits rows in random order
    return LinearSVC(C=1.0, dual=True, max_iter=10000, random_state=0)


class SemiSupervisedFactorClassifier(ChunkedRowsMixin, ClassifierMixin, BaseEstimator):
    """A low-rank factor fitted on all rows + a linear classifier on the labeled rows.

    ``fit(X, y)`` with ``y = -1`` on unlabeled rows: the factor is fitted on every row
    (the generalized Nyström factor uses the labels; an unsupervised factor such as
    :class:`lorak.Nystroem` ignores them), the features Q = factor.transform(X) are
    scaled, and the classifier is trained on the labeled rows of Q. ``predict`` works
    for any new X (inductive); ``transduction_`` holds the predictions for the training
    rows. With no −1 in y this is plain supervised learning on the factor.

    Parameters
    ----------
    factor : transformer, default=GeneralizedNystroem()
        Cloned and fitted with ``fit(X, y_codes)`` where ``y_codes`` are integer class
        codes with −1 for unlabeled rows.
    classifier : classifier, default=LinearSVC(C=1.0, dual=True, random_state=0)
        Cloned and fitted on the labeled rows' features.
    feature_scale : "mean_norm", None or float, default="mean_norm"
        "mean_norm": multiply the features by 1/√(mean ‖qᵢ‖²) over the training rows
        (unit mean squared row norm, i.e. trace(K̃)/n = 1), a factor stored in
        ``scale_`` and applied to new X too, so that a fixed C means the same for
        every factor; None: no scaling; a number: that factor.

    Attributes
    ----------
    factor_, classifier_ : the fitted estimators.
    scale_ : float, the feature scale used.
    classes_ : labels of the labeled rows.
    transduction_ : (n,) predictions for the rows given to ``fit``.
    labeled_indices_ : rows of the training X that carried a label.
    """

    _lazy_fit_reason = "its fit predicts every row (transduction_) in memory"

    def __init__(self, factor=None, classifier=None, *, feature_scale="mean_norm"):
        self.factor = factor
        self.classifier = classifier
        self.feature_scale = feature_scale

    def _features(self, X):
        check_is_fitted(self, "classifier_")
        Q = self.factor_.transform(X)
        if sp.issparse(Q):  # pragma: no cover - lorak factors are dense
            Q = Q.toarray()
        return Q * self.scale_ if self.scale_ != 1.0 else Q

    def fit(self, X, y):
        """Fit the factor on all rows of X and the classifier on the labeled ones."""
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=True)
        fs = self.feature_scale
        if not (
            fs is None
            or (isinstance(fs, str) and fs == "mean_norm")
            or (isinstance(fs, numbers.Real) and not isinstance(fs, bool) and fs > 0)
        ):
            raise ValueError(
                f"feature_scale must be 'mean_norm', None or a positive number; got {fs!r}"
            )
        name = type(self).__name__
        rows, y_l = parse_semi_supervised_y(y, X.shape[0], owner=name)
        classes, codes_l = np.unique(y_l, return_inverse=True)
        if classes.size < 2:
            raise one_class_error(classes[0], name)
        codes = np.full(X.shape[0], UNLABELED, dtype=np.int64)
        codes[rows] = codes_l
        factor = _default_factor() if self.factor is None else self.factor
        clf = _default_classifier() if self.classifier is None else self.classifier
        for arg, obj, need in (("factor", factor, "transform"), ("classifier", clf, "predict")):
            if not (hasattr(obj, "fit") and hasattr(obj, need)):
                raise TypeError(
                    f"{arg} must be a scikit-learn estimator with fit and {need}; got {obj!r}"
                )
        self.factor_ = clone(factor)
        Q = self.factor_.fit_transform(X, codes)
        if sp.issparse(Q):  # pragma: no cover
            Q = Q.toarray()
        if fs == "mean_norm":
            self.scale_ = _scale_of(Q)
        else:
            self.scale_ = 1.0 if fs is None else float(fs)
        if self.scale_ != 1.0:
            Q = Q * self.scale_
        self.classifier_ = clone(clf).fit(Q[rows], codes_l)
        self.classes_ = classes
        self.labeled_indices_ = rows
        self.transduction_ = classes[np.asarray(self.classifier_.predict(Q), dtype=np.intp)]
        return self

    def _check_X(self, X):
        check_is_fitted(self, "classifier_")
        return validate_data(
            self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False
        )

    def predict(self, X):
        """Class labels for X (any rows, not only the training ones)."""
        Q = self._features(self._check_X(X))
        return self.classes_[np.asarray(self.classifier_.predict(Q), dtype=np.intp)]

    @available_if(_has("decision_function"))
    def decision_function(self, X):
        """The classifier's decision function on the features of X."""
        check_is_fitted(self, "classifier_")
        return self.classifier_.decision_function(self._features(self._check_X(X)))

    @available_if(_has("predict_proba"))
    def predict_proba(self, X):
        """The classifier's class probabilities on the features of X."""
        check_is_fitted(self, "classifier_")
        return self.classifier_.predict_proba(self._features(self._check_X(X)))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.target_tags.required = True
        return tags

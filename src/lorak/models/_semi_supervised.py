"""A low-rank factor fitted on all rows plus a linear model on the labeled ones.

These downstream models have no math of their own: any factor and any scikit-learn
classifier (:class:`SemiSupervisedFactorClassifier`, −1 = unlabeled) or regressor
(:class:`SemiSupervisedFactorRegressor`, NaN = unlabeled). By default the factor is
:class:`lorak.GraphRegularizedFactor` (a Nyström factor deformed by an anchor graph on
all the rows) and the head a ridge at the penalty the factor chose with its graph
weight by leave-one-out over the labeled rows."""

from __future__ import annotations

import numbers
import warnings
from dataclasses import replace

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from sklearn.utils.metaestimators import available_if

from .._core.array_api import is_foreign, like_input, mean_sq_row_norm, move_like, to_numpy
from .._core.chunked import ChunkedRowsMixin
from .._core.estimator import new_rows
from .._core.rows import hand_down, host_targets, resolve_rows, take_rows
from .._core.targets import (
    SemiSupervisedTargets,
    parse_semi_supervised_response,
    parse_semi_supervised_y,
)
from .._core.validation import check_data, check_in_choices, check_positive, holds_whole_numbers
from ..estimators import GraphRegularizedFactor
from ..learn import (
    CLASS_MASS_READINGS,
    FEW_LABELS_PENALTY,
    GRAPH_PENALTY_GRID,
    RIDGE_ALPHAS,
    few_labels_decision,
    self_training_ridge,
)
from ..learn._heads import HEAD_CV_FOLDS as HEAD_CV_FOLDS
from ..learn._heads import choose_head, linear_svc, measured_class_prior, prior_class_weights
from ._base import decision_codes, take_classes

__all__ = ["SemiSupervisedFactorClassifier", "SemiSupervisedFactorRegressor"]


def _scale_from(ms) -> float:
    return float(1.0 / np.sqrt(ms)) if ms > 0 else 1.0


def _coef_intercept(head):
    """(coef (c × r), intercept (c,)) of a fitted head with a dense ``coef_``, as float64;
    else None."""
    coef = getattr(head, "coef_", None)
    if coef is None or sp.issparse(coef):
        return None
    icpt = np.atleast_1d(np.asarray(getattr(head, "intercept_", 0.0), dtype=np.float64))
    return np.atleast_2d(np.asarray(coef, dtype=np.float64)), icpt


def _linear_decision(head, Q):
    """A fitted linear head's (``coef_``) decision values Q coefᵀ + intercept (n × k), in
    Q's namespace and on its device; None for another head."""
    parts = _coef_intercept(head)
    if parts is not None:
        C, b = like_input(Q, *parts)
        return Q @ C.T + b
    return None


def _host_call(method, Q):
    """``method`` of a head on a host copy of Q; a numeric result moved back to Q's
    device."""
    out = np.asarray(method(to_numpy(Q)))
    return move_like(Q, out) if out.dtype.kind in "biuf" else out


def _head_call(head, method: str, Q, *, codes: bool = False):
    """The fitted head's ``method`` ("predict", "decision_function", "predict_proba") on
    the feature rows Q.

    The head was fitted on the host. On an array API Q, a linear head's decision values
    Q coefᵀ + intercept are computed in Q's namespace, on its device (read as class
    codes for ``codes``, as the head's ``predict`` reads them), and any other call runs
    on a host copy of Q, its result moved back."""
    if not is_foreign(Q):
        return np.asarray(getattr(head, method)(Q))
    d = None if method == "predict_proba" else _linear_decision(head, Q)
    if d is None:
        return _host_call(getattr(head, method), Q)
    if codes:
        return decision_codes(d)
    return d[:, 0] if d.shape[1] == 1 else d


def _check_parts(**parts):
    """Each ``name=(estimator, method)`` must have ``fit`` and that method."""
    for arg, (obj, need) in parts.items():
        if isinstance(obj, type):
            raise TypeError(
                f"{arg} must be an estimator instance, e.g. {obj.__name__}(); got the class "
                f"{obj.__name__}"
            )
        if not (hasattr(obj, "fit") and hasattr(obj, need)):
            raise TypeError(
                f"{arg} must be a scikit-learn estimator with fit and {need}; got {obj!r}"
            )


def _check_feature_scale(fs):
    if not (
        fs is None
        or (isinstance(fs, str) and fs == "mean_norm")
        or (
            isinstance(fs, numbers.Real) and not isinstance(fs, bool) and np.isfinite(fs) and fs > 0
        )
    ):
        raise ValueError(
            f"feature_scale must be 'mean_norm', None or a finite positive number; got {fs!r}"
        )


def _feature_scale(fs, ms) -> float:
    """The feature scale of ``feature_scale`` fs ("mean_norm", None or a number) for
    rows of mean squared norm ms."""
    if fs == "mean_norm":
        return _scale_from(ms)
    return 1.0 if fs is None else float(fs)


def _dense_rows(Q):
    return Q.toarray() if sp.issparse(Q) else Q


def _train_mean_sq_norm(factor, rows):
    """The mean squared row norm of the fitted factor's rows of the training X: the
    factor's own ``mean_sq_norm_`` when it has one (no pass), else one pass over the
    rows (:meth:`lorak._core.rows.Rows.mean_sq_norm`)."""
    ms = getattr(factor, "mean_sq_norm_", None)
    if ms is not None:
        return float(ms)
    return rows.mean_sq_norm(factor)


def _reports_mean_sq_norm(factor) -> bool:
    """Whether ``factor`` declares that it reports its training rows' mean squared norm
    (``reports_mean_sq_norm``: ``mean_sq_norm_`` after the fit)."""
    return bool(getattr(factor, "reports_mean_sq_norm", False))


def _takes_unlabeled_rows(head) -> bool:
    """Whether a head declares that its ``fit`` takes the unlabeled rows' features as
    ``X_unlabeled=`` (``takes_unlabeled_rows``, as :class:`SelfTrainedRidge` does)."""
    return getattr(head, "takes_unlabeled_rows", False) is True


def _reads_linearly(head) -> bool:
    """Whether a head's predictions are read off Q coefᵀ + intercept exactly as it reads
    them itself (the sign of one column or the argmax, for a classifier; the value, for
    a regressor): scikit-learn's linear models, and heads that declare it
    (``linear_decision``)."""
    from sklearn import linear_model as lm
    from sklearn.svm import LinearSVC

    linear = (lm.LinearRegression, lm.LogisticRegression, lm.Ridge, lm.RidgeClassifier,
              lm.RidgeClassifierCV, lm.RidgeCV, LinearSVC)  # fmt: skip
    return isinstance(head, linear) or bool(getattr(head, "linear_decision", False))


#: The self-trained head reads at most this many unlabeled rows (drawn at random
#: above): what it fits is a mean over rows, and its cost then stays independent of n.
SELF_TRAINING_ROWS = 20_000
#: Rows per block where only the unlabeled rows' mean feature row is needed.
_MEAN_BLOCK = 2_048


def resolve_class_prior(class_prior, counts):
    """The class proportions of ``class_prior`` for labeled class counts ``counts``
    (c,), or None for "auto" (measured from the rows by the head that reads them:
    :func:`lorak.learn.estimate_class_prior`); "uniform"; "labeled" — the labeled
    proportions; or c nonnegative numbers (normalized to sum 1). A bad value gets an
    error naming ``class_prior``, and so does a share of 0: every class of ``counts``
    has labeled rows, so it occurs in the data (any head would fit it on rows that
    weigh nothing, or give it no row beside its own labeled ones)."""
    counts = np.asarray(counts, dtype=np.int64)
    c = counts.size
    if isinstance(class_prior, str):
        check_in_choices(class_prior, "class_prior", ("auto", "uniform", "labeled"))
        if class_prior == "auto":
            return None
        if class_prior == "uniform":
            return np.full(c, 1.0 / c)
        return counts / counts.sum()
    p = np.asarray(class_prior, dtype=np.float64) if _numeric(class_prior) else None
    if p is None or p.shape != (c,) or not np.all(np.isfinite(p)) or np.any(p < 0) or p.sum() <= 0:
        raise ValueError(
            f"class_prior must be 'auto', 'uniform', 'labeled' or {c} nonnegative numbers "
            f"(one per class, in the order of classes_); got {class_prior!r}"
        )
    empty = np.flatnonzero(p == 0)
    if empty.size:
        raise ValueError(
            f"class_prior gives a share of 0 to the class at position {int(empty[0])} of "
            f"classes_, which has {int(counts[empty[0]])} labeled rows; a labeled class "
            "occurs in the data: give every labeled class a positive share"
        )
    return p / p.sum()


def _numeric(v) -> bool:
    try:
        a = np.asarray(v)
    except Exception:  # pragma: no cover - exotic objects
        return False
    return a.dtype.kind in "biuf"


def _self_trained_rows(X, name, owner, *, min_rows=1):
    """The rows a :class:`SelfTrainedRidge` reads as a dense float64 array: 2-D, finite
    numbers (sparse rows densified), at least ``min_rows`` of them; else an error naming
    ``name``."""
    if X is None:
        raise ValueError(f"{owner}: {name} is None; give a 2-D array of feature rows")
    X = X.toarray() if sp.issparse(X) else X
    shape = np.shape(X) if isinstance(X, np.ndarray) else np.shape(np.asarray(X, dtype=object))
    if len(shape) != 2:
        raise ValueError(f"{owner}: {name} must be 2-D (rows × features); got shape {shape}")
    if shape[0] < min_rows:
        raise ValueError(f"{owner}: {name} has no rows; give at least {min_rows}")
    try:
        X = check_data(X, name=name, accept_sparse=False, min_samples=min_rows, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{owner}: {exc}") from exc
    return np.asarray(X, dtype=np.float64)


def _self_trained_codes(y, n_rows, owner):
    """y of :meth:`SelfTrainedRidge.fit` as int64 class codes 0 … c−1 (every code
    present, c ≥ 2, one per row of X); whole-number floats and booleans are codes."""
    if y is None:
        raise ValueError(f"{owner}: y is None; give the integer class codes 0 … c−1 of X's rows")
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(
            f"{owner}: y must be 1-d, one class code per row of X; got shape {y.shape}"
        )
    if y.shape[0] != n_rows:
        raise ValueError(f"{owner}: y has {y.shape[0]} entries, but X has {n_rows} rows")
    if not holds_whole_numbers(y):
        raise ValueError(
            f"{owner}: y must hold the integer class codes 0 … c−1; got {y.dtype} values "
            "(encode class labels first, e.g. with sklearn.preprocessing.LabelEncoder, or "
            "use SemiSupervisedFactorClassifier, which does)"
        )
    y = y.astype(np.int64)
    classes = np.unique(y)
    if not np.array_equal(classes, np.arange(classes.size)):
        raise ValueError(
            f"{owner}: y must hold the integer class codes 0 … c−1, each present; got {classes}"
        )
    if classes.size < 2:
        raise ValueError(
            f"{owner}: y holds one class (code 0); a classifier needs labeled rows of at "
            "least two classes"
        )
    return y


class SelfTrainedRidge(ClassifierMixin, BaseEstimator):
    """The few-label head: a ridge classifier self-trained on unlabeled rows under a
    class prior (:func:`lorak.learn.self_training_ridge`).

    Fitted by the semi-supervised classifier with ``fit(Q_l, codes_l, Q_u)``: the
    labeled rows' features and integer codes, and unlabeled rows' features — as its
    default head with few labels, and as a head you give it (``classifier=``), with
    any number of labels. A ridge
    (±1 one-vs-rest targets, penalty ``alpha``) labels the unlabeled rows under the
    class prior (with "auto", measured from the rows: the proportions whose mixture of
    the labeled class means matches the unlabeled rows' mean, as far as a bootstrap
    tells them from equal classes, else the labeled counts' reading — see
    :func:`lorak.learn.estimate_class_prior`), and is refitted on all rows with the
    unlabeled rows' weight raised step by step. Its decision function
    F coefᵀ + intercept includes the class-mass offsets.

    Parameters
    ----------
    alpha : float, default=0.1
        The ridge penalty (features of unit mean squared row norm).
    class_prior : "auto", "uniform", "labeled" or array of shape (c,), default="auto"
        The class proportions the unlabeled rows are read under (see
        :func:`resolve_class_prior`).
    class_mass : "auto", "exact" or "normalized", default="auto"
        How the scores are read under the prior: "exact" gives each class its share
        of the unlabeled rows; "normalized" scales each class's scores so that their
        mass over the unlabeled rows is its share, and a class takes the rows its
        scaled scores claim (see :func:`lorak.learn.self_training_ridge`). "auto":
        exact where the prior is given or measured ("auto" with two classes); where
        it is the labeled counts' reading of three classes or more, normalized unless
        that predicts fewer of the labeled rows right than exact shares do.

    Attributes
    ----------
    coef_ : (1, m) for two classes, else (c, m); intercept_ : (1,) or (c,).
    classes_ : (c,) the integer codes 0 … c−1.
    class_prior_ : (c,) the class proportions the scores were read under.
    class_mass_ : "exact" or "normalized", how they were read.
    prior_estimate_ : :class:`lorak.learn.PriorEstimate` or None, the evidence behind
        ``class_prior_`` with "auto" (None otherwise).
    n_changed_ : list, unlabeled rows whose label changed at each refit.
    """

    #: A capability the semi-supervised models read: ``decision_function`` is
    #: F coefᵀ + intercept and ``predict`` its sign (one column) or argmax, so a model
    #: may compute them from ``coef_`` and ``intercept_`` itself.
    linear_decision = True

    def __init__(self, alpha=FEW_LABELS_PENALTY, class_prior="auto", class_mass="auto"):
        self.alpha = alpha
        self.class_prior = class_prior
        self.class_mass = class_mass

    #: A capability the semi-supervised classifier reads: ``fit`` takes the unlabeled
    #: rows' features as ``X_unlabeled=``, so a model given this head passes them.
    takes_unlabeled_rows = True

    def fit(self, X, y, X_unlabeled=None):
        """Fit on labeled rows X (codes y, 0 … c−1) and unlabeled rows
        ``X_unlabeled`` (none: a plain ridge read under the prior of the labels).

        X and ``X_unlabeled`` are dense or sparse (densified: these are a factor's
        features, a few hundred columns) finite numbers with the same columns; y holds
        integer class codes 0 … c−1, every code present, c ≥ 2."""
        owner = f"{type(self).__name__}.fit"
        alpha = float(check_positive(self.alpha, f"{type(self).__name__}: alpha"))
        check_in_choices(self.class_mass, "class_mass", CLASS_MASS_READINGS)
        X = _self_trained_rows(X, "X", owner)
        y = _self_trained_codes(y, X.shape[0], owner)
        self.classes_ = np.unique(y)
        c = self.classes_.size
        if X_unlabeled is None:
            Xu = np.empty((0, X.shape[1]))
        else:
            Xu = _self_trained_rows(X_unlabeled, "X_unlabeled", owner, min_rows=0)
            if Xu.shape[1] != X.shape[1]:
                raise ValueError(
                    f"{owner}: X_unlabeled has {Xu.shape[1]} columns, but X has "
                    f"{X.shape[1]}: they are rows of the same features"
                )
        prior = resolve_class_prior(self.class_prior, np.bincount(y, minlength=c))
        fit = self_training_ridge(
            X, y, Xu, alpha, n_classes=c, prior=prior, class_mass=self.class_mass
        )
        self.prior_estimate_ = fit.estimate
        coef, icpt = fit.coef, fit.intercept
        if c == 2:  # one column, as scikit-learn's linear classifiers keep it
            coef, icpt = coef[1:] - coef[:1], icpt[1:] - icpt[:1]
        self.coef_, self.intercept_ = coef, icpt
        self.class_prior_, self.n_changed_ = fit.prior, fit.n_changed
        self.class_mass_ = fit.class_mass
        self.n_features_in_ = X.shape[1]
        return self

    def decision_function(self, X):
        """F coefᵀ + intercept: (n,) for two classes, else (n, c)."""
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "coef_")
        owner = f"{type(self).__name__}.decision_function"
        X = _self_trained_rows(X, "X", owner, min_rows=0)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"{owner}: X has {X.shape[1]} columns, but this head was fitted on "
                f"{self.n_features_in_}"
            )
        d = X @ self.coef_.T + self.intercept_
        return d[:, 0] if d.shape[1] == 1 else d

    def predict(self, X):
        """The class codes of the rows of X."""
        codes = decision_codes(self.decision_function(X))  # checks the fit first
        return self.classes_[codes]


def _has(attr):
    def check(self):
        obj = getattr(self, "classifier_", None)
        if obj is None:
            obj = self.classifier if self.classifier is not None else _default_classifier()
        return hasattr(obj, attr)

    return check


def _ridge_classifier(alpha):
    from sklearn.linear_model import RidgeClassifier

    return RidgeClassifier(alpha=alpha)


def _default_factor():
    return GraphRegularizedFactor(random_state=0)


def _default_classifier():
    from sklearn.linear_model import RidgeClassifierCV

    # efficient leave-one-out over the labeled rows (scikit-learn's closed form)
    return RidgeClassifierCV(alphas=GRAPH_PENALTY_GRID)


def _chosen_penalty(factor, ms_all, Q_l, scale):
    """The ridge penalty the factor chose itself, carried over to the head's feature
    scale; None when it chose none.

    Two factors choose one: :class:`lorak.GraphRegularizedFactor` (``penalty_``, with its
    graph weight, by leave-one-out on rows scaled to unit mean squared norm over all
    training rows) and :class:`lorak.GeneralizedNystroem` for responses (``cv_penalty_``,
    with a learned kernel λ < ∞, on rows scaled over the labeled rows). Either way the
    penalty α was scored on Q/√ms, with ms the mean squared row norm over those rows;
    the head sees s·Q, and a ridge on c·A with penalty α·c² predicts as a ridge on A with
    α, so α_head = α · s² · ms. ``ms_all``: ms over all training rows; ``Q_l``: the
    labeled rows of Q (unscaled).
    """
    alpha, ms = getattr(factor, "penalty_", None), ms_all
    if alpha is None:
        lam = getattr(factor, "lam_", None)
        if (
            lam is None
            or not np.isfinite(lam)
            or getattr(factor, "target_type_", None) != "regression"
        ):
            return None
        alpha, ms = getattr(factor, "cv_penalty_", None), mean_sq_row_norm(Q_l)
    if alpha is None:
        return None
    return float(alpha) * scale * scale * ms if ms > 0 else None


class _FactorAndHead(ChunkedRowsMixin, BaseEstimator):
    """What the classifier and the regressor share: a factor fitted on every row, its
    scaled rows as the features of a head fitted on the labeled rows."""

    _head = "classifier_"  # the fitted head's attribute
    # dask X: the factor fits by passes over the chunks, the labeled rows are gathered
    # to memory, and the training rows' predictions are predict(X), lazily
    _lazy_fit = True
    # array API inputs: the factor's rows stay on the device, the labeled rows go to the
    # host for the head's fit, and a linear head predicts on the device
    _array_api_support = True

    def _fit_input(self, X, y):
        """(the rows of X, resolved; y on the host), once ``feature_scale`` is checked.
        A dask X is validated lazily (each chunk when it is computed), a memmap stays on
        disk."""
        _check_feature_scale(self.feature_scale)
        y = host_targets(y)
        return resolve_rows(self, X), y

    def _fit_features(self, rows, factor, targets):
        """Fit ``factor`` (a clone, stored as ``factor_``) on the rows with the parsed
        targets and store the feature scale as ``scale_``; return (Q, the labeled rows
        of Q, the mean squared row norm over all rows), Q not yet scaled.

        In memory Q is the factor's n rows, except for a factor that reports its
        training rows' mean squared norm (:class:`lorak.GraphRegularizedFactor`): then,
        as for X read in chunks (a dask array, a memmap), Q is None — the labeled rows
        are gathered (first, so that a bad one fails before the passes; once: the
        factor gets the same rows) and go through the fitted factor, and the mean
        squared norm comes from the factor (``mean_sq_norm_``) or one more pass.
        Nothing n × m is formed.
        """
        self.factor_ = factor
        X, y = hand_down(factor, rows, targets)
        if rows.is_chunked or (_reports_mean_sq_norm(factor) and not rows.on_device):
            X_l = rows.labeled(targets.rows)
            factor.fit(X, y)
            ms = _train_mean_sq_norm(factor, rows)
            Q, Q_l = None, _dense_rows(X_l.features(factor))
        else:
            Q = _dense_rows(factor.fit_transform(X, y))
            ms, Q_l = mean_sq_row_norm(Q), to_numpy(take_rows(Q, targets.rows))
        self.scale_ = _feature_scale(self.feature_scale, ms)
        return Q, Q_l, ms

    def _store_transduction(self, rows, Q, read):
        """``transduction_``: ``read`` (labels or responses) of the scaled Q, or, where Q
        was not formed, ``predict`` of the training rows (in chunks for a memmap); not
        built for a dask X (``predict(X)`` is the same, lazily)."""
        if Q is not None:
            self.transduction_ = read(Q * self.scale_ if self.scale_ != 1.0 else Q)
        elif not rows.is_lazy:
            self.transduction_ = rows.map(self, "predict")

    def _linear_rows(self, rows):
        """A linear head's raw outputs on new rows, Q coefᵀ + intercept (n × c), through
        the factor's ``transform_product`` — the kernel rows times one m × c matrix, no
        n × m rows — or None where that does not apply (another head, a factor without
        it, an array API X)."""
        head = getattr(self, self._head)
        parts = _coef_intercept(head) if _reads_linearly(head) else None
        product = getattr(self.factor_, "transform_product", None)
        if parts is None or product is None or rows.on_device:
            return None
        coef, icpt = parts
        return np.asarray(product(rows.input_for(self.factor_), (coef * self.scale_).T)) + icpt

    def _features(self, rows):
        """The scaled factor rows of new rows."""
        Q = _dense_rows(rows.features(self.factor_))
        return Q * self.scale_ if self.scale_ != 1.0 else Q

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.target_tags.required = True
        return tags


class SemiSupervisedFactorClassifier(ClassifierMixin, _FactorAndHead):
    """A low-rank factor fitted on all rows + a linear classifier on the labeled rows.

    ``fit(X, y)`` with ``y = -1`` on unlabeled rows: the factor is fitted on every row
    (the generalized Nyström factor uses the labels; an unsupervised factor such as
    :class:`lorak.Nystroem` ignores them), the features Q = factor.transform(X) are
    scaled, and the classifier is trained on the labeled rows of Q. ``predict`` works
    for any new X (inductive); ``transduction_`` holds the predictions for the training
    rows. With no −1 in y this is plain supervised learning on the factor.

    The default adapts to the label budget (the numbers behind each rule are in the
    user guide, "Graph-regularized factors"):

    - **Enough labels** (every class has at least
      :data:`lorak.learn.MIN_LABELS_PER_CLASS` labeled rows, or there are
      :data:`lorak.learn.LEAVE_ONE_OUT_MIN_LABELED` labeled rows in all and two in
      every class — many classes at 100 labels): the graph's weight γ, the
      factor's rank (its leading principal directions over all rows) and the ridge
      penalty are chosen by closed-form leave-one-out over the labeled rows, γ = 0 and
      full rank — plain Nyström — always among the candidates; the head is
      cross-validated between the ridge and ``LinearSVC``.
    - **Few labels** (otherwise): leave-one-out would score each candidate on a
      count out of a handful of rows. The graph is used at full strength when it is
      informative — when it removes at least half of the variance of the kernel's
      features that a graph of random edges would (``graph_energy_ratio_`` of the
      factor below 1/2) — and otherwise not at all, the factor then cut to its leading
      principal directions, where clusters show; the head is a ridge self-trained
      on the unlabeled rows under a class prior measured from the rows
      (:class:`lorak.models.SelfTrainedRidge`: class-mass normalization and the
      cluster assumption; ``class_prior`` below).

    Parameters
    ----------
    factor : transformer, default=GraphRegularizedFactor(random_state=0)
        Cloned and fitted with ``fit(X, y_codes)`` where ``y_codes`` are integer class
        codes with −1 for unlabeled rows. The default is a Nyström factor (Gaussian
        kernel, k-means landmarks, m = ⌈n/3⌉ ≤ 1000) deformed by an anchor graph on all
        the rows, R Rᵀ = (I + γGᵀLG)⁻¹: the unlabeled rows shape the kernel, and γ = 0
        (plain Nyström) is among the candidates of its leave-one-out choice.
        ``GeneralizedNystroem()`` (a kernel learned from the labels on the landmarks'
        span) was the default before; pass it to keep that pipeline.
    classifier : classifier, default=None
        Cloned and fitted on the labeled rows' features; a head that declares
        ``takes_unlabeled_rows = True`` (:class:`~lorak.models.SelfTrainedRidge` does)
        also gets the unlabeled rows' features, as ``fit(Q_l, codes_l,
        X_unlabeled=Q_u)`` (at most :data:`SELF_TRAINING_ROWS` of them, drawn at random
        above). None: in the few-label regime (the factor's own decision,
        ``few_labels_``, when it took one on these labels —
        :class:`lorak.GraphRegularizedFactor` measures it, see its ``regime_table_`` —
        else the counts', :func:`lorak.learn.few_labels`), a
        :class:`~lorak.models.SelfTrainedRidge` at the penalty the factor chose, read
        under ``class_prior``; otherwise one of two linear heads, the one with fewer
        errors in a stratified cross-validation over the labeled rows
        (:data:`HEAD_CV_FOLDS` folds; the ridge wins a tie), recorded in
        ``head_cv_errors_``:

        - a ridge: a ``RidgeClassifier`` at the penalty the factor chose with its graph
          weight (``penalty_``, closed-form leave-one-out, carried over to this feature
          scale), else ``RidgeClassifierCV`` (efficient leave-one-out over
          :data:`lorak.learn.GRAPH_PENALTY_GRID`);
        - ``LinearSVC(C=1)``, the hinge loss with a strong penalty.

        Neither wins everywhere: the ridge is the better where the graph bends the
        kernel, the hinge where the classes are not the data's clusters.
    feature_scale : "mean_norm", None or float, default="mean_norm"
        "mean_norm": multiply the features by 1/√(mean ‖qᵢ‖²) over the training rows
        (unit mean squared row norm, i.e. trace(K̃)/n = 1), a factor stored in
        ``scale_`` and applied to new X too, so that a fixed C means the same for
        every factor; None: no scaling; a number: that factor.
    class_prior : "auto", "uniform", "labeled" or array of shape (n_classes,), default="auto"
        The class proportions of the data. With few labels, those the self-trained head
        reads the unlabeled rows under (class-mass normalization). With enough labels a
        given prior (anything but "auto") reweights the labeled rows: class c by
        π_c / (n_c / l), its share in the data over its share of the l labeled rows, in
        the fit of the head and in the cross-validation that chooses it
        (``class_weights_``), so that labels drawn evenly over unequal classes no
        longer teach the head equal classes (told the true proportions, with 100 labels
        spread evenly, ``lorak bench ssl``: w1a, 3 % positives, 26.6 → 0.9 % error;
        adult1a 25.8 → 19.2; german 32.4 → 26.8). "auto" with enough labels measures
        the proportions and reweights by them alike (``prior_estimate_``): the
        unlabeled rows' mean score under the chosen head is the mixture of the classes'
        mean scores, read out of fold on the labeled rows, and the matched proportions
        enter with a James–Stein weight — how far they lie from the labeled
        proportions beyond the match's bootstrap noise and the spread of labels drawn
        at random — so that labels drawn at random stay nearly as they came and labels
        drawn evenly over unequal classes give way to the match (100 labels spread
        evenly: w1a 26.6 → 1.7, adult1a 25.8 → 20.2, german 32.4 → 28.2). Where the
        default factor measures which of the two regimes the labels
        support (3 to 29 labeled rows in the smallest class), it scores both heads
        under a given prior, as they are then fitted. Ignored with a given
        ``classifier``. "auto" with few labels: measured from the data
        (:func:`lorak.learn.estimate_class_prior`) — the proportions whose mixture of
        the labeled rows' class means (in the factor's feature space) matches the
        unlabeled rows' mean, which holds whether the labels were drawn at random or
        evenly per class, weighted by how clearly a bootstrap of the labeled rows tells
        them from equal classes; the rest of the weight goes to the labeled counts'
        reading (equal classes unless an exact binomial test, χ² for more classes,
        rejects them at level 0.05; then the labeled proportions). "uniform";
        "labeled"; or one nonnegative number per class, in the order of ``classes_``
        (proportions you know win: told the true ones, the default came within 1 point
        of the best column or peer in 13 of the 15 few-label cells and all 4 100-label
        cells where it missed on ``lorak bench ssl``'s held-out sets).
    class_mass : "auto", "exact" or "normalized", default="auto"
        How the few-label head reads the unlabeled rows under the prior
        (:class:`~lorak.models.SelfTrainedRidge`'s ``class_mass``; ignored with enough
        labels or a given ``classifier``): "exact" gives each class its prior share of
        the rows; "normalized" makes the class's score mass its share and lets the rows
        go where the scaled scores send them. "auto": exact where the prior is known —
        given, or measured from the unlabeled rows (two classes); where it is the
        labeled counts' reading of three classes or more (equal classes unless the
        counts reject them: an assumption), normalized, unless that predicts fewer of
        the labeled rows right than exact shares do. Read as masses, a uniform prior on
        classes of unequal sizes erred 6–10 points less (usps, satimage and dna with 1–5
        labels per class); where classes overlap in the features a class can absorb its
        neighbours, labeled rows and all (segment: 5–20 points more), and the labeled
        rows' check keeps exact shares.

    Attributes
    ----------
    factor_, classifier_ : the fitted estimators.
    scale_ : float, the feature scale used.
    classes_ : labels of the labeled rows.
    transduction_ : (n,) predictions for the rows given to ``fit``; not set when X
        was a dask array (then ``predict(X)`` is the same, lazily).
    labeled_indices_ : rows of the training X that carried a label.
    head_cv_errors_ : dict or None, the cross-validation errors of the default head's
        two candidates (by class name; with ``class_weights_``, the sums of the wrong
        rows' weights); None when ``classifier`` was given, with few labels, or when a
        class has a single labeled row.
    class_weights_ : (n_classes,) array or None, the weights of the labeled rows' classes
        under a given or measured ``class_prior`` with enough labels (π_c / (n_c / l),
        in the order of ``classes_``); None with few labels, a given ``classifier``, or
        where every weight is 1.
    prior_estimate_ : :class:`lorak.learn.PriorEstimate` or None, the class proportions
        "auto" measured (``prior``; ``matched``, the proportions the rows match;
        ``labeled``; ``weight``, the match's share): with few labels the self-trained
        head's (its ``prior_estimate_``), with enough labels the chosen head's scores';
        None where none was measured (a given prior or ``classifier``; with enough
        labels, a class of one labeled row or no unlabeled rows).
    few_labels_ : bool, whether the few-label head was used.

    Notes
    -----
    More data than memory: X may be a dask array or a ``numpy.memmap`` (with the
    default factor, or any factor whose fit takes one). The labeled rows are gathered
    to memory (l × d values, l the labeled rows: a few thousand are cheap; every fit
    step that sees labels works on them alone), every other row is read only by passes
    over row chunks (the landmarks' and anchors' k-means, the bandwidth, the anchor
    graph's GᵀLᵖG), and nothing n × m is formed: the feature scale comes from the
    factor's ``mean_sq_norm_`` (or one more pass). The same seed and the same rows give
    the same landmarks, γ and predictions as in memory, to round-off. On a dask X,
    ``transform``, ``predict``, ``decision_function`` and ``predict_proba`` return lazy
    dask arrays with X's row chunks, and ``transduction_`` is not built: it is
    ``predict(X)``, computed when asked for (``.compute()``, or ``da.store`` into a
    memmap). On a memmap, ``transduction_`` is an in-memory array, computed chunk by
    chunk (one value per row).
    """

    def __init__(
        self,
        factor=None,
        classifier=None,
        *,
        feature_scale="mean_norm",
        class_prior="auto",
        class_mass="auto",
    ):
        self.factor = factor
        self.classifier = classifier
        self.feature_scale = feature_scale
        self.class_prior = class_prior
        self.class_mass = class_mass

    def fit(self, X, y):
        """Fit the factor on all rows of X and the classifier on the labeled ones."""
        rows, y = self._fit_input(X, y)
        n = rows.n_rows
        targets = SemiSupervisedTargets.of_classes(
            *parse_semi_supervised_y(y, n, owner=type(self).__name__), n
        )
        classes, codes_l = targets.classes, targets.codes
        # checked now; "auto" (None) is measured by the few-label head from the factor's rows
        counts_l = np.bincount(codes_l, minlength=classes.size)
        prior = resolve_class_prior(self.class_prior, counts_l)
        check_in_choices(self.class_mass, "class_mass", CLASS_MASS_READINGS)
        # a factor that scores the heads on the labeled rows scores them under it
        targets = replace(targets, class_prior=prior)
        factor = _default_factor() if self.factor is None else self.factor
        clf = _default_classifier() if self.classifier is None else self.classifier
        _check_parts(factor=(factor, "transform"), classifier=(clf, "predict"))
        Q, Q_l, ms = self._fit_features(rows, clone(factor), targets)
        alpha = None
        if self.classifier is None:
            alpha = _chosen_penalty(self.factor_, ms, Q_l, self.scale_)
        if self.scale_ != 1.0:
            Q_l = Q_l * self.scale_
        self.head_cv_errors_ = self.class_weights_ = self.prior_estimate_ = None
        # taken once: the factor's decision on these labels (a graph factor's), else here
        decided = getattr(self.factor_, "few_labels_", None)
        few = few_labels_decision(codes_l, classes.size, decided=decided)
        self.few_labels_ = self.classifier is None and few
        if self.few_labels_:
            if alpha is None:  # FEW_LABELS_PENALTY at this feature scale
                alpha = FEW_LABELS_PENALTY * self.scale_**2 * ms if ms > 0 else FEW_LABELS_PENALTY
            Q_u = self._unlabeled_features(rows, Q, targets.rows)
            head = SelfTrainedRidge(
                alpha=alpha, class_prior=self.class_prior, class_mass=self.class_mass
            )
            self.classifier_ = head.fit(Q_l, codes_l, Q_u)
            self.prior_estimate_ = self.classifier_.prior_estimate_
        else:
            fit_kw = {}
            if self.classifier is None:
                heads = (clf if alpha is None else _ridge_classifier(alpha), linear_svc())
                clf, fit_kw = self._leave_one_out_head(rows, Q, targets, heads, Q_l, prior)
            Q_u = None
            if _takes_unlabeled_rows(clf):  # a given head that reads unlabeled rows
                Q_u = self._unlabeled_features(rows, Q, targets.rows)
            if Q_u is None:
                self.classifier_ = clone(clf).fit(Q_l, codes_l, **fit_kw)
            else:
                self.classifier_ = clone(clf).fit(Q_l, codes_l, X_unlabeled=Q_u)
        self.classes_ = classes
        self.labeled_indices_ = targets.rows
        self._store_transduction(rows, Q, self._labels)
        return self

    def _leave_one_out_head(self, rows, Q, targets, heads, Q_l, prior):
        """(the default head with enough labels, unfitted: the candidate of ``heads``
        with fewer cross-validation errors; its fit's keywords). A given ``prior``
        reweights the labeled rows' classes; None ("auto") is measured from the
        unlabeled rows where it can be (:func:`lorak.learn._heads.measured_class_prior`,
        recorded in ``prior_estimate_``), else the labels are taken as they came."""
        codes_l = targets.codes
        counts_l = np.bincount(codes_l, minlength=targets.classes.size)
        chosen = None
        if prior is None:
            clf, errors, scores = choose_head(heads, Q_l, codes_l, return_scores=True)
            chosen = clf, errors
            mean_u = self._unlabeled_features(rows, Q, targets.rows, mean=True)
            if mean_u is not None and scores is not None:
                n_u = rows.n_rows - codes_l.size
                self.prior_estimate_ = measured_class_prior(
                    clf, Q_l, codes_l, mean_u, n_u, scores=scores
                )
            est = self.prior_estimate_
            prior = counts_l / codes_l.size if est is None else est.prior
        self.class_weights_ = prior_class_weights(prior, counts_l)
        w = None if self.class_weights_ is None else self.class_weights_[codes_l]
        if chosen is None or w is not None:  # scored as the head is then fitted
            chosen = choose_head(heads, Q_l, codes_l, w)
        clf, self.head_cv_errors_ = chosen
        return clf, ({} if w is None else {"sample_weight": w})

    def _unlabeled_features(self, rows, Q, labeled, *, mean=False):
        """The scaled features of the unlabeled rows the self-trained head reads: all
        of them up to :data:`SELF_TRAINING_ROWS`, that many drawn at random above (the
        same draw for every backend), on the host; with ``mean``, their mean row alone,
        from blocks of rows. None where every row is labeled."""
        n = rows.n_rows
        unl = np.setdiff1d(np.arange(n), labeled)
        if unl.size > SELF_TRAINING_ROWS:
            rng = np.random.default_rng(0)
            unl = np.sort(rng.choice(unl, SELF_TRAINING_ROWS, replace=False))
        if unl.size == 0:  # every row labeled: the head is the ridge read under the prior
            return None
        if not mean:
            return self._host_features(rows, Q, unl)
        total = sum(
            self._host_features(rows, Q, unl[i : i + _MEAN_BLOCK]).sum(axis=0)
            for i in range(0, unl.size, _MEAN_BLOCK)
        )
        return total / unl.size

    def _host_features(self, rows, Q, idx):
        """The scaled features of the training rows ``idx``, float64 on the host: from Q
        where it was formed, else through the fitted factor."""
        if Q is not None:
            Q_i = to_numpy(take_rows(Q, idx))
        else:
            Q_i = to_numpy(_dense_rows(rows.take(idx).features(self.factor_)))
        Q_i = np.asarray(Q_i, dtype=np.float64)
        return Q_i * self.scale_ if self.scale_ != 1.0 else Q_i

    def _labels(self, Q):
        """Class labels of the feature rows Q; on Q's device for an array API Q (numeric
        classes; other labels come back as a NumPy array)."""
        return take_classes(self.classes_, _head_call(self.classifier_, "predict", Q, codes=True))

    def predict(self, X):
        """Class labels for X (any rows, not only the training ones)."""
        rows = new_rows(self, X, self._head)
        d = self._linear_rows(rows)
        if d is None:
            return self._labels(self._features(rows))
        # the head was fitted on the codes 0 … k−1 of classes_
        return self.classes_[decision_codes(d)]

    @available_if(_has("decision_function"))
    def decision_function(self, X):
        """The classifier's decision function on the features of X."""
        rows = new_rows(self, X, self._head)
        d = self._linear_rows(rows)
        if d is not None:
            return d[:, 0] if d.shape[1] == 1 else d
        return _head_call(self.classifier_, "decision_function", self._features(rows))

    @available_if(_has("predict_proba"))
    def predict_proba(self, X):
        """The classifier's class probabilities on the features of X."""
        rows = new_rows(self, X, self._head)
        return _head_call(self.classifier_, "predict_proba", self._features(rows))


def _default_regressor():
    from sklearn.linear_model import RidgeCV

    # the penalties the factor's λ cross-validation scores; efficient leave-one-out
    return RidgeCV(alphas=RIDGE_ALPHAS)


def _as_regression_factor(factor):
    """A clone of ``factor`` told that y holds responses with NaN = unlabeled, through
    the parameters lorak's label-using factors have for it (``target``, ``unlabeled``)."""
    factor = clone(factor)
    params = factor.get_params(deep=False)
    if params.get("target", None) == "auto":
        factor.set_params(target="regression")
    if "unlabeled" in params and params["unlabeled"] is None:
        factor.set_params(unlabeled=np.nan)
    return factor


class SemiSupervisedFactorRegressor(RegressorMixin, _FactorAndHead):
    """A low-rank factor fitted on all rows + a linear regressor on the labeled rows.

    The regression twin of :class:`SemiSupervisedFactorClassifier`. ``fit(X, y)`` with
    real-valued ``y`` and **NaN on the unlabeled rows** (−1 is a response value here,
    not a marker): the factor is fitted on every row — :class:`lorak.GeneralizedNystroem`
    learns its kernel from the labeled responses (target K* = ỹỹᵀ, λ by
    cross-validation with a ridge scorer, plain Nyström among the candidates);
    ``CSI(target="regression")`` chooses its pivots to predict them; an unsupervised
    factor such as :class:`lorak.Nystroem` ignores them — the features
    Q = factor.transform(X) are scaled, and the regressor is trained on the labeled
    rows of Q. ``predict`` works for any new X; ``transduction_`` holds the
    predictions for the training rows. Without NaN in y this is supervised regression
    on the factor.

    Parameters
    ----------
    factor : transformer, default=GraphRegularizedFactor(random_state=0)
        Cloned and fitted with ``fit(X, y)`` (NaN = unlabeled); the default chooses its
        graph weight with a ridge penalty by leave-one-out over the labeled responses.
        A factor with a ``target`` parameter left at "auto" gets
        ``target="regression"``, one with an ``unlabeled`` parameter left at None gets
        ``unlabeled=np.nan`` (CSI), so that integer-valued responses are not read as
        classes.
    regressor : regressor, default=None
        Cloned and fitted on the labeled rows' features. Default: when the factor chose
        a learned kernel (λ < ∞) by its cross-validation, a ``Ridge`` at the penalty
        chosen there with it (``cv_penalty_``, carried over to this feature scale);
        otherwise ``RidgeCV`` by efficient leave-one-out over
        :data:`lorak.learn.RIDGE_ALPHAS`. Why not always RidgeCV: the learned features
        are built from the labeled responses, so leave-one-out on them sees each
        response twice and picks too small a penalty (the user guide's "Graph-regularized
        factors" gives the figures).
    feature_scale : "mean_norm", None or float, default="mean_norm"
        As for :class:`SemiSupervisedFactorClassifier`: 1/√(mean ‖qᵢ‖²) over the
        training rows, stored in ``scale_`` and applied to new X.

    Attributes
    ----------
    factor_, regressor_ : the fitted estimators.
    scale_ : float, the feature scale used.
    transduction_ : (n,) predictions for the rows given to ``fit``; not set when X
        was a dask array (then ``predict(X)`` is the same, lazily).
    labeled_indices_ : rows of the training X that carried a response.

    Notes
    -----
    A dask array or a ``numpy.memmap`` X is fitted as by the classifier (see its
    Notes): the labeled rows gathered to memory, passes over the chunks for the rest,
    lazy row methods on dask and no ``transduction_`` there.

    Examples
    --------
    >>> import numpy as np
    >>> from lorak import GeneralizedNystroem, SemiSupervisedFactorRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, (300, 2))
    >>> y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(300)
    >>> y_semi = y.copy(); y_semi[40:] = np.nan               # 40 labeled rows
    >>> reg = SemiSupervisedFactorRegressor(
    ...     GeneralizedNystroem(n_components=30, random_state=0)).fit(X, y_semi)
    >>> reg.predict(X[:3]).shape, bool(reg.score(X[40:], y[40:]) > 0.8)
    ((3,), True)
    """

    _head = "regressor_"

    def __init__(self, factor=None, regressor=None, *, feature_scale="mean_norm"):
        self.factor = factor
        self.regressor = regressor
        self.feature_scale = feature_scale

    def fit(self, X, y):
        """Fit the factor on all rows of X and the regressor on the labeled ones."""
        rows, y = self._fit_input(X, y)
        name, n = type(self).__name__, rows.n_rows
        targets = SemiSupervisedTargets.of_responses(
            *parse_semi_supervised_response(y, n, owner=name), n
        )
        y_l = targets.values
        n_minus = int(np.count_nonzero(y_l == -1))
        if targets.rows.size == n and n_minus >= 2 and np.any(y_l != np.round(y_l)):
            warnings.warn(
                f"{name}: y has no NaN and {n_minus} entries equal to -1 among real-valued "
                "responses; every row is read as labeled and -1 as a response. For "
                "regression NaN marks the unlabeled rows (-1 is the class-label convention)",
                UserWarning,
                stacklevel=2,
            )
        factor = _default_factor() if self.factor is None else self.factor
        reg = _default_regressor() if self.regressor is None else self.regressor
        _check_parts(factor=(factor, "transform"), regressor=(reg, "predict"))
        Q, Q_l, ms = self._fit_features(rows, _as_regression_factor(factor), targets)
        if self.regressor is None:
            alpha = _chosen_penalty(self.factor_, ms, Q_l, self.scale_)
            if alpha is not None:
                from sklearn.linear_model import Ridge

                reg = Ridge(alpha=alpha)
        if self.scale_ != 1.0:
            Q_l = Q_l * self.scale_
        self.regressor_ = clone(reg).fit(Q_l, y_l)
        self.labeled_indices_ = targets.rows
        self._store_transduction(rows, Q, self._responses)
        return self

    def _responses(self, Q):
        """Predicted responses of the feature rows Q (on Q's device for an array API Q)."""
        return _head_call(self.regressor_, "predict", Q)

    def predict(self, X):
        """Predicted responses for X (any rows, not only the training ones)."""
        rows = new_rows(self, X, self._head)
        d = self._linear_rows(rows)
        if d is not None:
            return d[:, 0] if np.ndim(self.regressor_.coef_) == 1 else d
        return self._responses(self._features(rows))

"""Least-squares SVM (Suykens & Vandewalle 1999) on a low-rank factor K ≈ G Gᵀ.

The fit solves the centred m × m ridge system w = (νI + ḠᵀḠ)⁻¹ Ḡᵀȳ (ν = 1/C), the
paper's Woodbury form without its cancellations: :ref:`guide-lssvm-derivation`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import NotFittedError
from sklearn.preprocessing import LabelBinarizer
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import check_is_fitted

from .._core.array_api import (
    array_namespace,
    device_of,
    has_float64,
    is_foreign,
    on_device,
    to_numpy,
)
from .._core.chunked import ChunkedRowsMixin, is_dask_array, merge_moments, row_moments
from .._core.estimator import new_rows
from .._core.rows import resolve_rows
from .._core.validation import check_classification_y, check_positive
from ._base import (
    centered_cross_products,
    column_mean,
    decision_codes,
    fit_factor,
    iter_row_chunks,
    solve_spd,
    take_classes,
    transform_factor,
)

__all__ = [
    "LSSVC",
    "LSSVR",
    "LSSVMSolution",
    "lssvm_fit_dense",
    "lssvm_fit_factor",
    "lssvm_moments",
    "lssvm_solve_moments",
    "merge_lssvm_moments",
    "woodbury_solve",
]


@dataclass(frozen=True)
class LSSVMSolution:
    """Result of :func:`lssvm_fit_factor`.

    Attributes
    ----------
    coef : (m, k) array, w = Gᵀβ: the decision is f(x) = g(x)ᵀ coef + intercept.
    intercept : (k,) array, b.
    dual_coef : (n, k) array or None, β = Yα (the paper's α times the labels).
    """

    coef: np.ndarray
    intercept: np.ndarray
    dual_coef: np.ndarray | None = None


def _as_2d_targets(T) -> np.ndarray:
    try:
        T = np.asarray(T, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"y must be numeric (regression targets); {exc}") from exc
    return T[:, None] if T.ndim == 1 else T


def lssvm_fit_factor(G, T, C: float, *, return_dual: bool = False) -> LSSVMSolution:
    """LS-SVM on the factor K ≈ G Gᵀ: the centred m × m system, O(m²n) time.

    See :ref:`guide-lssvm-derivation` for the equations.

    Parameters
    ----------
    G : (n, m) array (float32/float64, or sparse)
        Factor rows of the training points. Not modified.
    T : (n,) or (n, k) array
        Targets: ±1 labels (one column per binary problem) or real values.
    C : float > 0
        Regularization; ν = 1/C is added to the kernel's diagonal.
    return_dual : bool
        Also return β = (T − 1 bᵀ − G w)/ν (n × k).

    Returns
    -------
    LSSVMSolution
        ``coef`` (m, k) and ``intercept`` (k,) such that f(x) = g(x)ᵀ coef + intercept
        equals the dense LS-SVM's Σᵢ βᵢ k(x, xᵢ) + b whenever K = G Gᵀ.
    """
    T = _as_2d_targets(T)
    nu = 1.0 / C
    if is_dask_array(G):
        return_dual = False  # would be n-sized; not formed for a dask G
    sol = lssvm_solve_moments(lssvm_moments(G, T), G.shape[1], C)
    coef, intercept, dual = sol.coef, sol.intercept, None
    if return_dual:
        dual = np.empty_like(T)
        for s, e in iter_row_chunks(T.shape[0], coef.shape[0]):
            fit = safe_sparse_dot(G[s:e], coef)
            dual[s:e] = (T[s:e] - intercept - fit) / nu
    return LSSVMSolution(coef=coef, intercept=intercept, dual_coef=dual)


def lssvm_moments(G, T):
    """``(n, mean, scatter)`` of the rows of [G T]: the LS-SVM's sufficient statistics.

    ``mean`` is the (m + k,) mean row, ``scatter`` the centred scatter of [G T]. They merge
    exactly over disjoint row sets (:func:`merge_lssvm_moments`: dask passes,
    :meth:`LSSVC.partial_fit`). G may be sparse, float32, dask or a memmap.
    """
    T = _as_2d_targets(T)  # n values per target: in memory, beside a dask G too
    if is_dask_array(G):
        return row_moments(G, T)
    n = G.shape[0]
    g_mean = column_mean(G)
    t_mean = T.mean(axis=0)
    S, R = centered_cross_products(G, g_mean, T, t_mean)
    Tc = T - t_mean
    scatter = np.block([[S, R], [R.T, Tc.T @ Tc]])
    return n, np.concatenate([g_mean, t_mean]), scatter


def device_lssvm_moments(G, T):
    """:func:`lssvm_moments` of an array API G (a torch tensor, …) on its device.

    The mean and the centred cross products ḠᵀḠ, ḠᵀT̄ are accumulated over row chunks
    on G's device in float64 (float32 where the device has none): only the (m + k)
    moments come back to the host, where the m × m solve runs. T (n × k) is NumPy.
    """
    xp, dev = array_namespace(G), device_of(G)
    wide = xp.float64 if has_float64(xp, dev) else xp.float32
    T = np.asarray(T, dtype=np.float64)
    n, m = G.shape
    total = xp.zeros(m, dtype=wide, device=dev)
    chunks = list(iter_row_chunks(n, m))
    for s, e in chunks:
        total = total + xp.sum(xp.astype(G[s:e, ...], wide), axis=0)
    g_mean = total / n
    t_mean = T.mean(axis=0)
    Tc = on_device(T - t_mean, xp, dev, wide)
    S = xp.zeros((m, m), dtype=wide, device=dev)
    R = xp.zeros((m, T.shape[1]), dtype=wide, device=dev)
    for s, e in chunks:
        B = xp.astype(G[s:e, ...], wide) - g_mean
        S = S + B.T @ B
        R = R + B.T @ Tc[s:e, ...]
    S = to_numpy(S).astype(np.float64)
    S = 0.5 * (S + S.T)
    R = to_numpy(R).astype(np.float64)
    Th = T - t_mean
    scatter = np.block([[S, R], [R.T, Th.T @ Th]])
    return n, np.concatenate([to_numpy(g_mean).astype(np.float64), t_mean]), scatter


def _device_factor(factor, X, y=None):
    """``fit_factor`` for an array API X: the factor's rows stay on X's device."""
    from sklearn.base import clone

    if factor is None or (isinstance(factor, str) and factor == "passthrough"):
        return None, X
    if isinstance(factor, str) or not hasattr(factor, "fit_transform"):
        raise TypeError(
            "on array API inputs, factor must be None, 'passthrough' or a transformer with "
            f"fit_transform and array API support (e.g. lorak.Nystroem()); got {factor!r}"
        )
    est = clone(factor)
    try:
        G = est.fit_transform(X, y)
    except TypeError as exc:
        if "positional argument" not in str(exc):
            raise
        G = est.fit_transform(X)
    return est, _device_rows(G, X)


def _device_rows(G, X):
    if not is_foreign(G) or G.ndim != 2 or G.shape[0] != X.shape[0]:
        raise ValueError(
            "the factor's transform must return one row per sample in the input's "
            f"namespace: expected ({X.shape[0]}, m), found {type(G).__name__} of shape "
            f"{tuple(getattr(G, 'shape', ()))}"
        )
    return G


def _device_transform(factor_, X):
    """``transform_factor`` for an array API X: the factor's rows on X's device."""
    return X if factor_ is None else _device_rows(factor_.transform(X), X)


def _device_decision(G, coef, intercept):
    """G coefᵀ + intercept on G's device (w and b moved there)."""
    xp, dev = array_namespace(G), device_of(G)
    w = on_device(np.asarray(coef.T), xp, dev, G.dtype)
    b = on_device(np.asarray(intercept, dtype=np.float64), xp, dev, G.dtype)
    return G @ w + b


def _host_decision(G, coef, intercept):
    """G coefᵀ + intercept on the host (G dense or sparse)."""
    return safe_sparse_dot(G, coef.T, dense_output=True) + intercept


@dataclass(frozen=True)
class _Steps:
    """Where an LS-SVM's steps run, for rows of one kind: the factor's fit and
    transform, the moments of its rows, the decision values."""

    fit: object
    transform: object
    moments: object
    decision: object


_HOST = _Steps(fit_factor, transform_factor, lssvm_moments, _host_decision)
_DEVICE = _Steps(_device_factor, _device_transform, device_lssvm_moments, _device_decision)


def _steps(rows) -> _Steps:
    """The steps for ``rows``: on their device for array API rows, else on the host."""
    return _DEVICE if rows.on_device else _HOST


def merge_lssvm_moments(a, b):
    """The statistics of :func:`lssvm_moments` for the union of two disjoint row sets."""
    return merge_moments(a, b)


def lssvm_solve_moments(moments, m: int, C: float) -> LSSVMSolution:
    """The LS-SVM from the statistics of :func:`lssvm_moments`: one m × m solve, O(m³)."""
    _, mean, scatter = moments
    S = 0.5 * (scatter[:m, :m] + scatter[:m, :m].T)
    S[np.diag_indices_from(S)] += 1.0 / C
    coef = solve_spd(S, scatter[:m, m:])
    return LSSVMSolution(coef=coef, intercept=mean[m:] - mean[:m] @ coef)


def woodbury_solve(G, nu: float, R) -> np.ndarray:
    """(G Gᵀ + νI)⁻¹ R by the Woodbury identity (Zhang et al. 2008, eq. 13).

    ν⁻¹ [R − G (νI + GᵀG)⁻¹ GᵀR]: O(m²n + mnk) time, no n × n array. Loses relative
    accuracy when ν ≪ ‖G‖² (the bracket cancels); :func:`lssvm_fit_factor` uses the
    cancellation-free centred form instead.
    """
    R = np.asarray(R, dtype=np.float64)
    Gd = G.toarray() if sp.issparse(G) else np.asarray(G, dtype=np.float64)
    S = Gd.T @ Gd
    S[np.diag_indices_from(S)] += nu
    return (R - Gd @ solve_spd(S, Gd.T @ R)) / nu


def lssvm_fit_dense(K, T, C: float):
    """The exact LS-SVM from the dense n × n kernel matrix (O(n³), small n).

    Parameters
    ----------
    K : (n, n) array, the kernel matrix of the training points (PSD).
    T : (n,) or (n, k) targets (±1 labels or values).
    C : float > 0

    Returns
    -------
    dual_coef : (n, k) array β;  intercept : (k,) array b, so that the decision on new
    points is k(X_new, X) β + b.
    """
    T = _as_2d_targets(T)
    n = T.shape[0]
    H = np.array(K, dtype=np.float64, copy=True)
    H[np.diag_indices(n)] += 1.0 / C
    c = scipy.linalg.cho_factor(H, lower=True, overwrite_a=True, check_finite=False)
    Z = scipy.linalg.cho_solve(c, np.column_stack([T, np.ones(n)]), check_finite=False)
    ZT, z1 = Z[:, :-1], Z[:, -1]
    b = z1 @ T / z1.sum()  # 1ᵀH⁻¹T / 1ᵀH⁻¹1 (H⁻¹ symmetric)
    return ZT - np.outer(z1, b), b


# ---------------------------------------------------------------- estimators


def _is_fitted(est) -> bool:
    try:
        check_is_fitted(est)
    except (NotFittedError, TypeError):
        return False
    return True


def _n_rows(a):
    shape = getattr(a, "shape", None)  # arrays and matrices of any kind, data frames
    if shape is not None and len(shape):
        return shape[0]
    try:
        shape = np.shape(np.asarray(a) if hasattr(a, "__array__") else a)
    except ValueError:  # ragged nested lists: let validation report them
        return None
    return shape[0] if len(shape) else None


def _check_y_length(X, y):
    """Name both arguments when y and X disagree in length ("y has 10 rows but X has 12")."""
    if y is None:
        return
    n_x, n_y = _n_rows(X), _n_rows(y)
    if n_x is not None and n_y is not None and n_x != n_y:
        raise ValueError(f"y has {n_y} rows but X has {n_x}")


class _BaseLSSVM(ChunkedRowsMixin, BaseEstimator):
    """Fitting and decision values shared by :class:`LSSVC` and :class:`LSSVR`."""

    _lazy_fit = True  # dask X: the factor's fit, then ḠᵀḠ, Ḡᵀȳ by reductions

    def __init__(self, factor=None, *, C=1.0):
        self.factor = factor
        self.C = C

    def _validate(self, X, y, *, reset=True, **kw):
        """(the rows of X, resolved; y; C): y validated with X, or in memory beside a
        dask X."""
        _check_y_length(X, y)
        C = check_positive(self.C, "C")
        rows, y = resolve_rows(self, X, y, reset=reset, **kw)
        return rows, y, float(C)

    _array_api_support = True  # array API X: factor rows and moments on its device

    def _fit_targets(self, rows, y, T, C):
        steps = _steps(rows)
        self.factor_, G = steps.fit(self.factor, rows.data, y)
        self._set_moments(steps.moments(G, T))
        self.n_components_ = int(G.shape[1])
        return lssvm_solve_moments(self._moments(), self.n_components_, C)

    def _set_moments(self, moments):
        n, mean, scatter = moments
        self.n_samples_seen_ = int(n)
        self.stats_mean_ = np.asarray(mean, dtype=np.float64)
        self.stats_scatter_ = np.asarray(scatter, dtype=np.float64)

    def _moments(self):
        return self.n_samples_seen_, self.stats_mean_, self.stats_scatter_

    def _partial_fit_targets(self, rows, y, T, C):
        """Merge this batch's statistics into the running ones and re-solve (O(m³)).

        First call (or after nothing was fitted): the factor is fitted on this batch —
        or used as it is when ``factor`` is already fitted.
        """
        steps = _steps(rows)
        if not hasattr(self, "stats_scatter_"):
            if (
                self.factor is not None
                and not isinstance(self.factor, str)
                and _is_fitted(self.factor)
            ):
                self.factor_ = self.factor
                G = steps.transform(self.factor_, rows.data)
            else:
                self.factor_, G = steps.fit(self.factor, rows.data, y)
            self.n_components_ = int(G.shape[1])
            prev = (0, None, None)
        else:
            G = steps.transform(self.factor_, rows.data)
            prev = self._moments()
        if sp.issparse(G):
            G = G.toarray()
        self._set_moments(merge_lssvm_moments(prev, steps.moments(G, T)))
        return lssvm_solve_moments(self._moments(), self.n_components_, C)

    def _set_solution(self, sol, ndim):
        """``coef_`` and ``intercept_`` of the solution, for 1-D targets as 1-D."""
        if ndim == 1:
            self.coef_ = sol.coef[:, 0].copy()
            self.intercept_ = float(sol.intercept[0])
        else:
            self.coef_ = np.ascontiguousarray(sol.coef.T)
            self.intercept_ = sol.intercept

    def _validate_partial(self, X, y, **kw):
        return self._validate(X, y, reset=not hasattr(self, "stats_scatter_"), **kw)

    def _decision(self, X):
        """g(x)ᵀ w + b, (n, k): on X's device for an array API X (w and b moved there)."""
        rows = new_rows(self, X, "coef_")
        steps = _steps(rows)
        G = steps.transform(self.factor_, rows.data)
        return steps.decision(G, self.coef_, self.intercept_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class LSSVC(ClassifierMixin, _BaseLSSVM):
    """Least-squares SVM classifier on any low-rank factor (Suykens & Vandewalle 1999).

    Fits the factor on X, takes its rows G (K ≈ G Gᵀ) and solves the LS-SVM of
    Zhang, Tsang & Kwok (2008, §4.3) through the Woodbury identity in O(m²n) time and
    O(mn) memory. New points are predicted through ``factor_.transform``:
    f(x) = g(x)ᵀ w + b, with the m-vector w. Two classes: labels ±1 (``classes_[1]`` is
    +1); more classes: one-vs-rest, all sharing one Cholesky factorization. See
    :ref:`guide-lssvm-derivation`.

    Parameters
    ----------
    factor : transformer, "passthrough" or None, default=None
        Unfitted transformer whose ``transform`` returns factor rows
        (``lorak.Nystroem(...)``, ``lorak.IncompleteCholesky(...)``, ...). It is cloned
        and fitted on X (with y when its ``fit`` accepts y), so its parameters are
        tunable as ``factor__n_components`` in GridSearchCV. None or "passthrough": X
        itself is G — the linear kernel, or factor rows computed beforehand.
    C : float, default=1.0
        Regularization (> 0): the kernel matrix gets 1/C on its diagonal.

    Attributes
    ----------
    factor_ : the fitted clone of ``factor`` (None for passthrough).
    classes_ : (n_classes,) array of labels.
    coef_ : (1, m) for two classes, (n_classes, m) otherwise: w = Gᵀ(α ∘ y).
    intercept_ : (1,) or (n_classes,) array, b.
    n_components_ : int, m (columns of the factor).
    n_samples_seen_, stats_mean_, stats_scatter_ : the rows' count, the mean row and
        centred scatter of [G T] (:func:`lssvm_moments`), which :meth:`partial_fit`
        merges batch by batch.
    n_features_in_, feature_names_in_ : as in scikit-learn.

    Examples
    --------
    >>> import numpy as np
    >>> from lorak import Nystroem
    >>> from lorak.models import LSSVC
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 2)); y = (X[:, 0] * X[:, 1] > 0).astype(int)
    >>> clf = LSSVC(Nystroem(gamma=1.0, n_components=50, random_state=0), C=10.0)
    >>> bool(clf.fit(X, y).score(X, y) > 0.9)
    True
    """

    def fit(self, X, y):
        """Fit the factor on X and solve the LS-SVM for the labels y."""
        rows, y, C = self._validate(X, y)
        check_classification_y(y)
        lb = LabelBinarizer(neg_label=-1, pos_label=1)
        T = lb.fit_transform(y)
        self.classes_ = lb.classes_
        if self.classes_.shape[0] < 2:
            raise ValueError(
                f"y has 1 class ({self.classes_[0]!r}); LSSVC needs at least 2 classes"
            )
        sol = self._fit_targets(rows, y, T.astype(np.float64), C)
        self._set_solution(sol, 2)
        return self

    def partial_fit(self, X, y, classes=None):
        """Fit on one more batch of rows: the LS-SVM of all rows seen so far.

        The m × m statistics of :func:`lssvm_moments` merge exactly over batches; each
        call adds this batch's and re-solves. The factor is fitted on the first batch
        unless already fitted (for the result of :meth:`fit` on all rows, give it
        landmark points and a numeric bandwidth, or pass it fitted). ``classes`` (every
        label of the stream) is needed on the first call.
        """
        first = not hasattr(self, "stats_scatter_")
        rows, y, C = self._validate_partial(X, y)
        check_classification_y(y)
        if first:
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit")
            classes = np.unique(np.asarray(classes))
            if classes.shape[0] < 2:
                raise ValueError(f"classes has {classes.shape[0]} label; LSSVC needs at least 2")
            self.classes_ = classes
        elif classes is not None and not np.array_equal(np.unique(classes), self.classes_):
            raise ValueError(f"classes={classes!r} differs from the first call's {self.classes_!r}")
        unseen = np.setdiff1d(np.unique(np.asarray(y)), self.classes_)
        if unseen.size:
            raise ValueError(f"y has labels {unseen!r} not in classes {self.classes_!r}")
        lb = LabelBinarizer(neg_label=-1, pos_label=1).fit(self.classes_)
        sol = self._partial_fit_targets(rows, y, lb.transform(y).astype(np.float64), C)
        self._set_solution(sol, 2)
        return self

    def decision_function(self, X):
        """f(x) = g(x)ᵀ w + b: (n,) for two classes, (n, n_classes) otherwise."""
        d = self._decision(X)
        return d[:, 0] if d.shape[1] == 1 else d

    def predict(self, X):
        """The class with the largest decision value (sign of f for two classes).

        For an array API X the labels are in its namespace, on its device, when they
        are numbers (NumPy otherwise: strings have no device).
        """
        codes = decision_codes(self.decision_function(X))  # checks the fit first
        return take_classes(self.classes_, codes)


class LSSVR(RegressorMixin, _BaseLSSVM):
    """Least-squares SVM regression on any low-rank factor (kernel ridge + intercept).

    Solves (K + I/C) β + b 1 = y, 1ᵀβ = 0 with K ≈ G Gᵀ: ridge regression with an
    unpenalized intercept on the factor rows, O(m²n) time
    (:ref:`guide-lssvm-derivation`). Several targets (y of shape (n, k)) share a Cholesky.

    Parameters
    ----------
    factor : transformer, "passthrough" or None, default=None
        As for :class:`LSSVC`.
    C : float, default=1.0
        Regularization (> 0).

    Attributes
    ----------
    factor_ : the fitted clone of ``factor`` (None for passthrough).
    coef_ : (m,) or (n_targets, m) array, w.
    intercept_ : float or (n_targets,) array, b.
    n_components_ : int, m.
    n_samples_seen_, stats_mean_, stats_scatter_ : as for :class:`LSSVC`.
    n_features_in_, feature_names_in_ : as in scikit-learn.
    """

    def fit(self, X, y):
        """Fit the factor on X and solve the LS-SVM regression for y."""
        rows, y, C = self._validate(X, y, y_numeric=True, multi_output=True)
        sol = self._fit_targets(rows, y, _as_2d_targets(y), C)
        self._set_solution(sol, np.ndim(y))
        return self

    def partial_fit(self, X, y):
        """Fit on one more batch of rows: the LS-SVM regression of all rows seen so far.

        As :meth:`LSSVC.partial_fit`: the m × m statistics merge exactly over batches;
        the factor is fitted on the first batch unless it is already fitted.
        """
        rows, y, C = self._validate_partial(X, y, y_numeric=True, multi_output=True)
        if hasattr(self, "stats_scatter_"):
            k = self.stats_mean_.shape[0] - self.n_components_
            if (1 if np.ndim(y) == 1 else np.shape(y)[1]) != k:
                raise ValueError(f"y has a different number of targets than before ({k})")
        sol = self._partial_fit_targets(rows, y, _as_2d_targets(y), C)
        self._set_solution(sol, np.ndim(y))
        return self

    def predict(self, X):
        """g(x)ᵀ w + b for each row of X."""
        return self._decision(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

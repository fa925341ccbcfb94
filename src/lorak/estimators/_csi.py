"""``CSI``: Cholesky with side information as an inductive scikit-learn transformer.

The math here is :mod:`lorak.learn._csi`; this module validates the
input, builds the kernel and the target matrix Y, and stores the fitted factor.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted

from .._core.estimator import store_record
from .._core.targets import UNLABELED, is_unlabeled
from .._core.validation import check_generator, validate_data
from ..learn import csi_q, fit_csi
from ._base import _KernelFactor

__all__ = ["CSI"]

_TARGETS = ("auto", "classification", "regression")


class CSI(_KernelFactor):
    """Cholesky with Side Information (Bach & Jordan 2005): a predictive ICD factor.

    A pivoted incomplete Cholesky factor K ≈ G Gᵀ whose pivots are chosen to decrease

        J(G) = (1 − κ) tr(K − GGᵀ)/tr K + κ ‖Y − QQᵀY‖²_F / ‖Y‖²_F      (Eq. 2)

    (Q: orthonormal basis of the centred columns of G), i.e. to approximate K *and* to
    predict the targets Y from the factor by least squares. The gains of unseen pivots
    are estimated with ``lookahead`` extra Cholesky/QR steps: O((m + δ)² n + m d n)
    time, O((m + δ + d) n) memory. ``transform(X_new)`` = k(X_new, X_pivots) L⁻ᵀ, as
    for :class:`lorak.IncompleteCholesky`. See :ref:`guide-cholesky`.

    Parameters
    ----------
    kernel, gamma, bandwidth, coef0, degree, kernel_params :
        As for :class:`lorak.IncompleteCholesky`, ``kernel="precomputed"`` included
        (default: Gaussian kernel with the ``"mean_pairwise"`` bandwidth when neither
        gamma nor bandwidth is given).
    n_components : int, default=100
        Maximum rank m.
    kappa : float in [0, 1], default=0.99
        Weight of the prediction term (the paper's κ, its experiments' value). κ = 0
        ignores y; with ``lookahead=0`` it is then exactly incomplete Cholesky.
    lookahead : int >= 0, default=40
        δ, the number of look-ahead Cholesky steps (the paper's 40).
    tol : float >= 0, default=1e-4
        Stop after a step whose decrease of J is below ``tol`` (the paper's
        experiments; kernlab's default is 1e-5); that step's column is kept. 0 runs to
        ``n_components``.
    centering : bool, default=True
        Centre Y and the columns of G in the prediction term (a free intercept).
    target : {"auto", "classification", "regression"}, default="auto"
        How ``y`` becomes Y: class labels → one-hot n × C (multi-class); real values
        (1-D, or n × d for several responses) → used as they are. ``"auto"`` follows
        :func:`sklearn.utils.multiclass.type_of_target` (integer-valued responses are
        read as classes: pass ``"regression"`` for counts).
    unlabeled : scalar, optional
        Rows whose ``y`` equals this value (``np.nan`` matches NaN) are unlabeled: they
        enter the Cholesky part and the approximation term, not the prediction term,
        which is ‖Y_L − Q_L Q_Lᵀ Y_L‖² over the labeled rows L (Eq. 1 summed over L).
        Default: every row is labeled. ``unlabeled=-1`` (lorak's usual marker; it also
        matches the string label ``"-1"``) only when −1 is not a class; with ±1 labels
        or real responses, pass y as floats with NaN on the unlabeled rows and
        ``unlabeled=np.nan`` (semi-supervised use: :ref:`guide-cholesky`).
    random_state : int, Generator or None
        Only used by bandwidth rules that subsample.

    Attributes
    ----------
    G_ : (n, r) factor of the training rows (Fortran order).
    pivots_ : (r,) pivot rows in the order chosen.
    components_ : (r, n_features) X[pivots_] (precomputed: the pivots' rows of K, None
        for a :class:`~lorak.kernels.KernelColumns`).
    component_indices_ : (r,) pivots_ (the columns a precomputed ``transform`` reads).
    normalization_ : (r, r) upper-triangular L⁻ᵀ; ``transform(X) = k(X, components_) @
        normalization_``. ``normalization_is_upper_`` is True.
    Q_, R_ : QR decomposition of ΠG_ (Π_L G_[L] with unlabeled rows): Q_ (n_L × r,
        formed on access when the run kept it implicit), R_ (r × r, upper triangular).
    approx_error_ : (r + 1,) tr(K − G_kG_kᵀ)/tr K after k = 0..r steps.
    prediction_error_ : (r + 1,) ‖Y − Q_kQ_kᵀY‖²/‖Y‖² after k = 0..r steps.
    objective_ : (r + 1,) J = (1 − κ)·approx_error_ + κ·prediction_error_.
    predicted_gain_ : (r,) the look-ahead estimate (Eqs. 9–10) of the chosen pivot's gain.
    true_gain_ : (r,) the actual decrease of J at each step.
    lookahead_hit_ : (r,) bool, the chosen pivot was in the look-ahead set (then
        ``predicted_gain_ == true_gain_`` up to round-off).
    kernel_columns_ : (c,) rows whose kernel column was computed (c ≤ r + δ).
    n_components_ : int, the rank r reached.
    stop_reason_ : "tol", "max_rank" or "exhausted" (residual numerically zero).
    converged_ : bool, stopped by ``tol`` or exhaustion rather than by ``n_components``.
    classes_ : class labels (classification) or None.
    target_type_ : "classification" or "regression".
    n_labeled_ : int, rows that entered the prediction term.
    kernel_ : the resolved kernel.

    Examples
    --------
    >>> from lorak import CSI
    >>> from lorak.datasets import make_ringnorm
    >>> X, y = make_ringnorm(300, random_state=0)
    >>> csi = CSI(n_components=20, lookahead=10).fit(X, y)
    >>> csi.transform(X[:5]).shape[0], bool(csi.prediction_error_[-1] < 0.5)
    (5, True)
    """

    _lazy_fit_reason = "CSI is a pivoted greedy factorization that revisits every row at every step"

    def __init__(
        self,
        kernel="rbf",
        *,
        gamma=None,
        bandwidth=None,
        coef0=None,
        degree=None,
        kernel_params=None,
        n_components=100,
        kappa=0.99,
        lookahead=40,
        tol=1e-4,
        centering=True,
        target="auto",
        unlabeled=None,
        random_state=None,
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.bandwidth = bandwidth
        self.coef0 = coef0
        self.degree = degree
        self.kernel_params = kernel_params
        self.n_components = n_components
        self.kappa = kappa
        self.lookahead = lookahead
        self.tol = tol
        self.centering = centering
        self.target = target
        self.unlabeled = unlabeled
        self.random_state = random_state

    def fit(self, X, y):
        """Run CSI on k(X, X) with side information ``y``."""
        self._fit(X, y)
        return self

    def fit_transform(self, X, y):
        """Fit and return ``G_`` (the training rows of the factor)."""
        return self._fit(X, y).G_

    # ------------------------------------------------------------ validation

    def _check_params(self):
        k = self.kappa
        if isinstance(k, bool) or not isinstance(k, numbers.Real):
            raise TypeError(f"kappa must be a number in [0, 1]; got {k!r}")
        if not 0.0 <= k <= 1.0:
            raise ValueError(f"kappa must be in [0, 1]; got {k!r}")
        d = self.lookahead
        if isinstance(d, bool) or not isinstance(d, numbers.Integral):
            raise TypeError(f"lookahead must be an integer >= 0; got {d!r}")
        if d < 0:
            raise ValueError(f"lookahead must be >= 0; got {d}")
        t = self.tol
        if isinstance(t, bool) or not isinstance(t, numbers.Real):
            raise TypeError(f"tol must be a number >= 0; got {t!r}")
        if not (t >= 0 and np.isfinite(t)):
            raise ValueError(f"tol must be a finite number >= 0; got {t!r}")
        if not isinstance(self.centering, (bool, np.bool_)):
            raise TypeError(f"centering must be True or False; got {self.centering!r}")
        if self.target not in _TARGETS:
            valid = ", ".join(repr(v) for v in _TARGETS)
            raise ValueError(f"unknown target {self.target!r}; valid values are {valid}")

    def _labeled_mask(self, y):
        u = self.unlabeled
        if u is None:
            return None
        if isinstance(u, float) and np.isnan(u):
            yf = np.asarray(y, dtype=np.float64)
            miss = np.isnan(yf)
        elif isinstance(u, numbers.Integral) and not isinstance(u, bool) and u == UNLABELED:
            miss = is_unlabeled(np.asarray(y))
        else:
            miss = y == u
        miss = np.asarray(miss, dtype=bool)
        if miss.ndim == 2:
            miss = miss.all(axis=1)
        return ~miss

    def _targets(self, y, n):
        """Y (n × d) float64 from y; the labeled mask; classes; the target type."""
        if y is None:
            raise ValueError(
                "CSI requires y to be passed, but the target y is None: it needs class "
                "labels or responses (its side information)"
            )
        y = np.asarray(y)
        if y.ndim == 0 or y.ndim > 2:
            raise ValueError(f"y must be 1-D (n,) or 2-D (n, d); got shape {y.shape}")
        if y.shape[0] != n:
            raise ValueError(f"y has {y.shape[0]} rows, but X has {n}; they must match")
        labeled = self._labeled_mask(y)
        lab = np.ones(n, dtype=bool) if labeled is None else labeled
        n_lab = int(lab.sum())
        if n_lab < 2:
            raise ValueError(
                f"CSI needs at least 2 labeled rows; got n_samples={n_lab} labeled "
                f"(unlabeled={self.unlabeled!r})"
            )
        yl = y[lab]
        kind = self.target
        if kind == "auto":
            tt = type_of_target(yl, input_name="y", raise_unknown=True)
            if tt in ("binary", "multiclass"):
                kind = "classification"
            elif tt in ("continuous", "continuous-multioutput", "multilabel-indicator"):
                kind = "regression"
            else:
                raise ValueError(
                    f"cannot tell how to use y of type {tt!r} as side information; pass "
                    "target='classification' (1-D labels) or target='regression' (numbers)"
                )
        if kind == "classification":
            if y.ndim == 2 and y.shape[1] != 1:
                raise ValueError(
                    f"target='classification' needs 1-D labels; got y of shape {y.shape}"
                )
            yl = yl.ravel()
            classes, codes = np.unique(yl, return_inverse=True)
            if classes.size < 2:
                raise ValueError(
                    f"y has a single class ({classes[0]!r}) on the labeled rows: y is "
                    "constant, so it carries no side information; CSI needs at least 2 "
                    "classes (or use IncompleteCholesky)"
                )
            Y = np.zeros((n, classes.size))
            Y[np.flatnonzero(lab), codes] = 1.0
            return Y, labeled, classes, kind
        try:
            Yl = np.asarray(yl, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"target='regression' needs numeric y; got {exc}") from exc
        if not np.all(np.isfinite(Yl)):
            raise ValueError(
                "y contains NaN or infinity on labeled rows; mark unlabeled rows with "
                "unlabeled=np.nan"
            )
        Y = np.zeros((n, 1 if y.ndim == 1 else y.shape[1]))
        Y[lab] = Yl.reshape(n_lab, -1)
        return Y, labeled, None, kind

    # ------------------------------------------------------------ fit

    def _fit(self, X, y):
        precomputed = isinstance(self.kernel, str) and self.kernel == "precomputed"
        if precomputed:  # the n × n kernel, or a KernelColumns
            X, diag, column, dtype = self._precomputed_kernel(X)
        else:
            X = validate_data(
                self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=True
            )
            dtype = X.dtype
        n = X.shape[0]
        m = self._check_n_components(n)
        self._check_params()
        Y, labeled, classes, kind = self._targets(y, n)
        rng = check_generator(self.random_state)
        if precomputed:
            self.kernel_ = "precomputed"
        else:
            kernel = self.kernel_ = self._build_kernel(X, rng)
            diag, column = kernel.diag(X), lambda i: kernel(X, X[i : i + 1]).ravel()
        res = fit_csi(
            diag, column, Y, m, kappa=float(self.kappa), lookahead=int(self.lookahead),
            tol=float(self.tol), centering=bool(self.centering), labeled=labeled,
        )  # fmt: skip
        self._store_pivots(res.G, res.pivots, X, dtype)
        self._Q = res.Q  # None when the run kept Q implicit (see the Q_ property)
        self._labeled = labeled
        store_record(self, res, skip=("G", "pivots", "Q"))  # G_, pivots_: _store_pivots
        self.n_kernel_columns_ = int(res.kernel_columns.size)
        self.converged_ = res.stop_reason != "max_rank"
        self.classes_ = classes
        self.target_type_ = kind
        self.n_labeled_ = n if labeled is None else int(labeled.sum())
        return self

    @property
    def Q_(self):
        """Q (n_L × r) of ΠG_(L, :) = Q R_: the one the run kept, or formed as ΠG R⁻¹
        (O(n r²), not stored)."""
        check_is_fitted(self, "R_")
        if self._Q is not None:
            return self._Q
        return csi_q(self.G_, self.R_, labeled=self._labeled, centering=bool(self.centering))

    def transform(self, X):
        """Factor rows k(X, X_pivots) L⁻ᵀ (n × r); reproduces ``G_`` on the training rows."""
        check_is_fitted(self, "normalization_")
        return super().transform(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags

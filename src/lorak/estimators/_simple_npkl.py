"""SimpleNPKL: a kernel learned from pairwise constraints, as a transductive transformer.

Zhuang, Tsang & Hoi, ICML 2009; the math is :mod:`lorak.learn._simple_npkl`.
"""

from __future__ import annotations

import logging
import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.neighbors import NearestNeighbors
from sklearn.utils.validation import check_is_fitted

from .._core.estimator import TransformerBase
from .._core.validation import check_generator, check_in_choices, check_positive, validate_data
from ..constraints import check_constraints, restrict_constraints
from ..kernels import scale_gamma
from ..learn import (
    RIDGE_EXTENSION_ALPHA,
    RIDGE_EXTENSION_LANDMARKS,
    constraint_operator,
    extension_eigenvalues,
    fit_simple_npkl,
    graph_extension,
    pair_values,
    ridge_map,
)

__all__ = ["SimpleNPKL"]

logger = logging.getLogger(__name__)

LOSSES = ("linear", "squared_hinge")
STEPS = ("adaptive", "harmonic", "constant")
SELECTIONS = ("margin", "random")
EIGEN_SOLVERS = ("auto", "arpack", "dense")
EXTENSIONS = ("graph", "ridge")


class SimpleNPKL(TransformerBase):
    """Non-parametric kernel learned from must-link / cannot-link pairs (SimpleNPKL).

    Learns a PSD kernel matrix K = V Vᵀ on the n training rows that is smooth on the
    kNN graph of X (normalized Laplacian L) and aligned with the constraint matrix T
    (Zhuang, Tsang & Hoi 2009), over K ⪰ 0 with tr(KK) ≤ B: in closed form from the
    positive eigenpairs of A = C·T − L for ``loss="linear"``, by the paper's Algorithm 1
    for ``loss="squared_hinge"`` (the problem and the solver: :ref:`guide-npkl`). The
    method is transductive: the training rows' embedding is :attr:`embedding_` (what
    :meth:`fit_transform` returns), and :meth:`transform` applies the out-of-sample
    extension (``extension``) to every row it is given, training rows included, so
    that its answer depends on a row's values only, never on how it is stored.

    Parameters
    ----------
    loss : {"linear", "squared_hinge"}, default="linear"
    C : float or "auto", default="auto"
        Weight of the constraint loss against the Laplacian regularizer. ``"auto"``:
        C = 0.7/λ_max(T), stepped up by √2 (at most 4×, with a warning) while the
        kernel is zero (:ref:`"Choosing C" <guide-npkl-auto>`). A fixed C is used as
        given. A kernel mostly in directions that only the constraints make positive
        raises a
        :class:`~lorak.learn.DegenerateKernelWarning` (``degeneracy_``).
    B : float or "n_samples", default=1.0
        Capacity bound tr(KK) ≤ B (eq. 5). The paper uses B = 1 on its small sets and
        B = N (``"n_samples"``) on Adult. Clustering results of the linear loss do not
        depend on B (it only scales K); the square hinge does.
    n_neighbors : int, default=5
        k of the kNN graph (self excluded); the paper uses 5 on small sets, 50 on Adult.
    mutual : bool, default=False
        Keep only mutual neighbours (S_ij = 1 iff i and j are each among the other's k
        nearest); default: the symmetrized graph (either direction).
    max_rank : int, "pataki" or None, default=None
        None: the exact solution, from every positive eigenpair. An int keeps at most
        that many top eigenpairs (the best K of that rank, rescaled to tr(KK) = B);
        ``"pataki"`` uses the largest r with r(r + 1)/2 ≤ #constraints (Prop. 2).
    active_constraints : float in (0, 1], int or None, default=None
        Keep only this fraction (float) or number (int) of the constraints, chosen by
        ``selection``.
    selection : {"margin", "random"}, default="margin"
        ``"margin"``: the active selection of §3.2.4, keeping the constraints of the
        points least certain under the linear-loss kernel of all constraints;
        ``"random"``: a uniform random subset of the same size (the paper's baseline).
    max_iter : int, default=100
        Iterations of Algorithm 1 (square hinge only).
    tol : float, default=1e-4
        Algorithm 1 stops when the relative duality gap or the KKT residual of eq. (14)
        is ≤ tol.
    step : {"adaptive", "harmonic", "constant"}, default="adaptive"
        Step rule for η_t in α ← (α + η_t ∂J/∂α)₊. ``"adaptive"``: Barzilai–Borwein
        trial steps with backtracking (monotone ascent, at most ``step_size·C``);
        ``"harmonic"``: η_t = step_size·C/t (the paper's); ``"constant"``:
        η_t = step_size·C (:ref:`guide-npkl-solver`).
    step_size : float, default=1.0
        Scale of η relative to C (see ``step``).
    eigen_solver : {"auto", "arpack", "dense"}, default="auto"
        ``"auto"``: Lanczos (ARPACK), or a dense ``eigh`` where cheaper
        (:ref:`guide-npkl-solver`).
    eigen_tol : float or "auto", default="auto"
        ARPACK's relative accuracy (0 = machine precision). ``"auto"``: machine
        precision for the linear loss, 10⁻²·``tol`` for the square hinge
        (:ref:`guide-npkl-solver`).
    extension : {"ridge", "graph"}, default="ridge"
        How :meth:`transform` embeds a row, training rows included. ``"ridge"``: a
        ridge map from RBF Nyström features of the training rows to ``embedding_``.
        ``"graph"``: the Nyström extension of the eigen-equation of A through the
        row's ``n_neighbors`` nearest training rows (:ref:`guide-npkl-extension`).
    n_jobs : int, optional
        Passed to :class:`sklearn.neighbors.NearestNeighbors`.
    random_state : int, Generator or None
        Seeds the Lanczos start vectors and the random selection.

    Attributes
    ----------
    embedding_ : ndarray of shape (n_samples, n_components_)
        V with K = V Vᵀ (float64).
    eigenvalues_ : ndarray of shape (n_components_,)
        Eigenvalues of K, decreasing (Σ λ² = B).
    n_components_ : int
        Rank of K.
    alpha_ : ndarray of shape (n_constraints_,) or None
        Dual variables of the square hinge (one per constraint used), in the order of
        ``must_link_`` then ``cannot_link_``; K = argmin_K J(K, alpha_) exactly.
    must_link_, cannot_link_ : ndarray of shape (p, 2)
        The validated constraints used (after active selection), i < j.
    n_constraints_ : int
    selected_ : ndarray of int or None
        With ``active_constraints``: indices of the kept constraints into the
        validated must-link pairs followed by the cannot-link pairs.
    objective_ : float
        Eq. (6) (linear) or eq. (9) (square hinge) at the learned K.
    objective_history_ : list of float
        J(K_t, α_{t−1}) per iteration of Algorithm 1 (the paper's Fig. 1 quantity; a
        single value for the linear loss).
    history_ : dict of lists
        Per iteration: ``objective``, ``primal``, ``gap``, ``kkt``, ``step``, ``rank``,
        ``seconds``, ``eig_solves``.
    duality_gap_, kkt_residual_ : float
        At the end (0 for the closed form).
    n_iter_ : int
    converged_ : bool
    laplacian_ : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        L of eq. (3) (O(n·k) memory).
    B_ : float
        The resolved capacity bound.
    C_ : float
        The C used (``C="auto"`` resolved; after a step-up, the stepped value).
    degeneracy_ : Degeneracy
        ``constraint_share`` (share of tr(K) in constraint-only directions),
        ``smoothness`` (tr(LK)/tr(K)), ``rank`` and ``degenerate`` of the learned kernel
        (``kernel_degeneracy`` in ``lorak.learn._npkl_auto``).
    max_rank_ : int or None
        The resolved rank cap.
    X_fit_ : ndarray or sparse matrix of shape (n_samples, n_features)
        The training rows (for :meth:`transform`: the extension's neighbours).
    extension_eigenvalues_ : ndarray of shape (n_components_,)
        The eigenvalues w of A for the columns of ``embedding_`` (used by
        ``extension="graph"``).
    n_features_in_ : int

    Examples
    --------
    >>> from lorak.datasets import load
    >>> from lorak.constraints import from_labels
    >>> from lorak import SimpleNPKL
    >>> X, y = load("iris")
    >>> c = from_labels(y, ratio=0.7, random_state=0)
    >>> V = SimpleNPKL(random_state=0).fit_transform(X, **c)
    >>> V.shape[0]
    150
    """

    _lazy_fit_reason = "SimpleNPKL is transductive: it learns a kernel matrix on the given rows"

    def __init__(
        self,
        loss="linear",
        *,
        C="auto",
        B=1.0,
        n_neighbors=5,
        mutual=False,
        max_rank=None,
        active_constraints=None,
        selection="margin",
        max_iter=100,
        tol=1e-4,
        step="adaptive",
        step_size=1.0,
        eigen_solver="auto",
        eigen_tol="auto",
        extension="ridge",
        n_jobs=None,
        random_state=None,
    ):
        self.loss = loss
        self.C = C
        self.B = B
        self.n_neighbors = n_neighbors
        self.mutual = mutual
        self.max_rank = max_rank
        self.active_constraints = active_constraints
        self.selection = selection
        self.max_iter = max_iter
        self.tol = tol
        self.step = step
        self.step_size = step_size
        self.eigen_solver = eigen_solver
        self.eigen_tol = eigen_tol
        self.extension = extension
        self.n_jobs = n_jobs
        self.random_state = random_state

    # ------------------------------------------------------------ validation

    def _check_params(self, n: int, n_pairs: int):
        check_in_choices(self.loss, "loss", LOSSES)
        check_in_choices(self.step, "step", STEPS)
        check_in_choices(self.selection, "selection", SELECTIONS)
        check_in_choices(self.eigen_solver, "eigen_solver", EIGEN_SOLVERS)
        check_in_choices(self.extension, "extension", EXTENSIONS)
        if isinstance(self.C, str):
            if self.C != "auto":
                raise ValueError(f"C must be a positive number or 'auto'; got {self.C!r}")
            C = "auto"
        else:
            C = float(check_positive(self.C, "C"))
        if isinstance(self.B, str):
            if self.B != "n_samples":
                raise ValueError(f"B must be a positive number or 'n_samples'; got {self.B!r}")
            B = float(n)
        else:
            B = float(check_positive(self.B, "B"))
        k = check_positive(self.n_neighbors, "n_neighbors", integer=True)
        if k >= n:
            raise ValueError(
                f"n_neighbors={k} must be smaller than the number of rows ({n}): the kNN "
                "graph excludes each point itself"
            )
        check_positive(self.max_iter, "max_iter", integer=True)
        check_positive(self.tol, "tol")
        check_positive(self.step_size, "step_size")
        if isinstance(self.eigen_tol, str):
            if self.eigen_tol != "auto":
                raise ValueError(
                    f"eigen_tol must be 'auto' or a number >= 0; got {self.eigen_tol!r}"
                )
        else:
            check_positive(self.eigen_tol, "eigen_tol", strict=False)
        mr = self.max_rank
        if isinstance(mr, str) and mr != "pataki":
            raise ValueError(f"max_rank must be None, an int or 'pataki'; got {mr!r}")
        if mr is not None and not isinstance(mr, str):
            mr = int(check_positive(mr, "max_rank", integer=True))
        return C, B, int(k), mr, self._n_keep(n_pairs)

    def _n_keep(self, p: int) -> int | None:
        a = self.active_constraints
        if a is None:
            return None
        if isinstance(a, bool):
            raise TypeError(f"active_constraints must be a fraction, a count or None; got {a!r}")
        if isinstance(a, numbers.Integral):
            if not 1 <= a <= p:
                raise ValueError(
                    f"active_constraints={a} must be between 1 and the number of constraints ({p})"
                )
            return int(a)
        if isinstance(a, numbers.Real):
            if not 0 < a <= 1:
                raise ValueError(f"active_constraints as a fraction must be in (0, 1]; got {a!r}")
            return max(1, round(a * p))
        raise TypeError(f"active_constraints must be a fraction, a count or None; got {a!r}")

    # ------------------------------------------------------------ fit

    def fit(self, X, y=None, *, must_link=None, cannot_link=None, sample_index=None):
        """Learn the kernel on the rows of X from the pairwise constraints.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Only its kNN graph is used.
        y : None
            Ignored (pairwise constraints are the side information; build them from
            labels with :func:`lorak.constraints.from_labels`).
        must_link, cannot_link : array-like of shape (p, 2)
            0-based row index pairs known to share / not to share a class. At least
            one pair in total. ``fit(X, **from_labels(y))`` passes both.
        sample_index : array-like of int of shape (n_samples,), optional
            The ids of X's rows in the numbering of ``must_link`` / ``cannot_link``
            (default: 0, …, n_samples − 1). Pairs with an id that is not among them
            are dropped, so that the constraints survive row subsets such as the
            folds of a grid search (:ref:`guide-npkl`, section "Constraints").

        Returns
        -------
        self
        """
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=True)
        n = X.shape[0]
        if must_link is None and cannot_link is None:
            hint = " (y is not used)" if y is not None else ""
            raise ValueError(
                "SimpleNPKL learns from pairwise constraints: pass must_link= and/or "
                f"cannot_link= (arrays of shape (p, 2)){hint}; from labels, use "
                "fit(X, **lorak.constraints.from_labels(y, random_state=0))"
            )
        if sample_index is not None:
            must_link, cannot_link = restrict_constraints(must_link, cannot_link, sample_index, n)
        pairs, signs = check_constraints(must_link, cannot_link, n).pairs()
        C, B, k, max_rank, n_keep = self._check_params(n, len(pairs))
        fit = fit_simple_npkl(
            X, pairs, signs, loss=self.loss, C=C, B=B, n_neighbors=k, mutual=self.mutual,
            max_rank=max_rank, n_keep=n_keep, selection=self.selection,
            max_iter=self.max_iter, tol=self.tol, step=self.step,
            step_size=float(self.step_size), eigen_solver=self.eigen_solver,
            eigen_tol=self.eigen_tol, n_jobs=self.n_jobs,
            rng=check_generator(self.random_state),
        )  # fmt: skip
        self._store(fit, B)
        self._fit_extension(X, fit, k)
        logger.debug("SimpleNPKL(%s): rank %d, %d iterations, objective %.6g", self.loss,
                     self.n_components_, self.n_iter_, self.objective_)  # fmt: skip
        return self

    def _store(self, fit, B):
        """The fitted attributes from the record of :func:`lorak.learn.fit_simple_npkl`."""
        res, is_must = fit.result, fit.signs > 0
        self.C_, self.B_, self.max_rank_ = fit.C, B, fit.max_rank
        self.degeneracy_, self.laplacian_ = fit.degeneracy, fit.laplacian
        self.embedding_, self.eigenvalues_ = res.embedding, res.eigenvalues
        self.n_components_ = int(res.embedding.shape[1])
        # pairs are must-links first, then cannot-links (selection keeps the order),
        # so alpha_ lines up with must_link_ followed by cannot_link_
        self.alpha_ = res.alpha
        self.must_link_, self.cannot_link_ = fit.pairs[is_must], fit.pairs[~is_must]
        self.n_constraints_, self.selected_ = len(fit.pairs), fit.selected
        self.objective_ = float(res.objective)
        self.objective_history_ = list(res.history.get("objective", []))
        self.history_ = res.history
        self.duality_gap_, self.kkt_residual_ = float(res.gap), float(res.kkt)
        self.n_iter_, self.converged_ = int(res.n_iter), bool(res.converged)
        self.eigen_solves_ = int(sum(i.n_solves for i in res.eig_info))

    def _fit_extension(self, X, fit, k):
        """What :meth:`transform` needs for new rows (O(n·d + n·k) memory, no n × n)."""
        self.X_fit_ = X
        V = fit.result.embedding
        A = constraint_operator(fit.laplacian, fit.pairs, fit.weights)
        self.extension_eigenvalues_ = extension_eigenvalues(A, V)
        self._degrees = np.asarray(fit.graph.sum(axis=1), dtype=np.float64).ravel()
        self._ridge_features = self._ridge_map = None
        if self.extension == "ridge":
            from ._nystrom import Nystroem

            feats = Nystroem(
                n_components=min(RIDGE_EXTENSION_LANDMARKS, X.shape[0]),
                gamma=scale_gamma(X),
                random_state=0,
            )
            feats.fit(X)
            self._ridge_map = ridge_map(feats.transform(X), V, RIDGE_EXTENSION_ALPHA)
            self._ridge_features = feats
        self._n_neighbors = k

    def fit_transform(self, X, y=None, *, must_link=None, cannot_link=None, sample_index=None):
        """Fit and return the embedding V (n_samples × rank) with K = V Vᵀ."""
        return self.fit(
            X, y, must_link=must_link, cannot_link=cannot_link, sample_index=sample_index
        ).embedding_

    def transform(self, X):
        """The out-of-sample extension of the learned embedding to the rows of X.

        Every row of X, training rows included, gets the extension chosen by
        ``extension`` (:ref:`guide-npkl-extension`), so the result depends on a row's
        values only, not on its memory layout. ``transform(X_train)`` is therefore
        close to :attr:`embedding_` (what :meth:`fit_transform` returns) but not equal
        to it. Memory is linear in the number of training rows.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_rows, n_features)

        Returns
        -------
        ndarray of shape (n_rows, n_components_)
        """
        check_is_fitted(self, "embedding_")
        if not hasattr(self, "X_fit_"):  # loaded from a file saved before transform existed
            raise NotImplementedError(
                "this SimpleNPKL was saved by a lorak version without an out-of-sample "
                "extension: it holds no training rows to extend from. Its embedding_ is "
                "still the learned embedding of the fitted rows; refit to use transform"
            )
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)
        return np.asarray(self._extend(X), dtype=np.float64)

    def _extend(self, X) -> np.ndarray:
        if self.extension == "graph":
            # the query in the training rows' container: the index built on them may
            # not accept the other one (a kd-tree takes no sparse query)
            if sp.issparse(self.X_fit_) and not sp.issparse(X):
                X = sp.csr_matrix(X)
            elif sp.issparse(X) and not sp.issparse(self.X_fit_):
                X = X.toarray()
            # the index is rebuilt per call (O(n log n)): only arrays are persisted
            nn = NearestNeighbors(n_neighbors=self._n_neighbors, n_jobs=self.n_jobs)
            neighbors = nn.fit(self.X_fit_).kneighbors(X, return_distance=False)
            return graph_extension(
                neighbors, self.embedding_, self._degrees, self.extension_eigenvalues_
            )
        return self._ridge_features.transform(X) @ self._ridge_map

    def kernel_entries(self, pairs):
        """K_ij = ⟨v_i, v_j⟩ for index pairs of shape (p, 2), without forming K."""
        check_is_fitted(self, "embedding_")
        pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        n = self.embedding_.shape[0]
        if pairs.size and (pairs.min() < 0 or pairs.max() >= n):
            bad = int(pairs.max() if pairs.max() >= n else pairs.min())
            raise ValueError(f"pairs refer to row {bad} but the model was fitted on {n} rows")
        return pair_values(self.embedding_, pairs)

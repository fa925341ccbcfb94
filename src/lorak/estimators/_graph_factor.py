"""A factor deformed by a graph on all the rows: the unlabeled rows shape the kernel.

:class:`GraphRegularizedFactor` wraps any inductive factor (Nyström by default) and
returns G R with R Rᵀ = (I + γ GᵀLᵖG)⁻¹ — the point-cloud kernel of manifold
regularization in factor form. This module validates the input, owns the rows (the
sample of ``subsample``, the labeled rows, the inner factor's fit) and stores the
record of the math's one entry, :func:`lorak.learn.fit_graph_factor` (the derivation,
the graphs and the choice of γ: :mod:`lorak.learn._graph_entry` and the modules it
calls).
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

from .._core.array_api import as_dense, like_input, namespace_name
from .._core.estimator import TransformerBase, check_product_matrix, new_rows, store_record
from .._core.rows import host_targets, resolve_rows
from .._core.targets import (
    REGIMES,
    SemiSupervisedTargets,
    check_regime,
    parse_class_labels,
    parse_semi_supervised_response,
)
from .._core.validation import check_generator, check_in_choices, number_of_0d
from ..learn import GRAPH_GAMMA_GRID, fit_graph_factor, graph_factor_map, resolve_target_type

__all__ = ["GraphRegularizedFactor", "default_graph_components", "gamma_grid"]

#: The default factor's landmark count: n/3, at most this many.
GRAPH_MAX_COMPONENTS = 1000


def default_graph_components(n_samples: int) -> int:
    """m of the default Nyström factor: ⌈n/3⌉, at most :data:`GRAPH_MAX_COMPONENTS`."""
    return int(max(1, min(-(-n_samples // 3), GRAPH_MAX_COMPONENTS, n_samples)))


#: ``subsample``'s default: above this many rows, the graph's statistics are estimated
#: on this many rows drawn at random (see ``subsample``).
GRAPH_SUBSAMPLE = 50_000
#: What the sample of ``subsample`` is called where a bad row of it is named.
_SAMPLE_ROWS = "a random sample of the rows"

#: Rows up to which ``gamma="auto"`` tries :data:`lorak.learn.GRAPH_GAMMA_GRID` as it
#: is (the sizes its defaults were chosen on); above, its nonzero values are divided by
#: n / GAMMA_GRID_ROWS (see ``gamma``).
GAMMA_GRID_ROWS = 100_000


def gamma_grid(n_samples: int) -> tuple:
    """The relative graph weights ``gamma="auto"`` chooses among for n rows."""
    f = min(1.0, GAMMA_GRID_ROWS / max(int(n_samples), 1))
    return tuple(float(t) * f for t in GRAPH_GAMMA_GRID)


def _is_scalar(gamma) -> bool:
    """Whether ``gamma`` of :meth:`GraphRegularizedFactor.transform_at` is one value (a
    number, a 0-d array, or what cannot be one: None, a string) rather than a sequence."""
    if gamma is None or isinstance(gamma, (numbers.Number, str, bytes, np.generic)):
        return True
    return isinstance(gamma, np.ndarray) and gamma.ndim == 0


def _check_inner_factor(factor):
    """``factor``: None or a transformer instance with ``fit`` and ``transform`` (checked
    before it is cloned, so that the message names the parameter)."""
    if factor is None:
        return
    if isinstance(factor, type):
        raise TypeError(
            f"factor must be a transformer instance, e.g. {factor.__name__}(); got the "
            f"class {factor.__name__}"
        )
    if not (hasattr(factor, "fit") and hasattr(factor, "transform")):
        raise TypeError(f"factor must be a transformer with fit and transform; got {factor!r}")


def _default_nystroem(n_samples, random_state):
    from ..kernels import Gaussian
    from ._nystrom import Nystroem

    return Nystroem(
        kernel=Gaussian(bandwidth="mean_pairwise"),
        landmarks="kmeans",
        n_components=default_graph_components(n_samples),
        random_state=random_state,
    )


class GraphRegularizedFactor(TransformerBase):
    """A low-rank factor deformed by a graph on all the rows (manifold regularization).

    ``fit(X, y=None)`` fits ``factor`` on X (G = factor.transform(X), n × m), builds a
    graph on the rows of X with Laplacian L, and ``transform(X) = factor.transform(X) @
    R`` with R Rᵀ = (I + γ GᵀLᵖG)⁻¹. The rows' inner products are then the
    point-cloud kernel of Sindhwani, Niyogi & Belkin (2005)

        k̃(x, z) = k(x, z) − k_xᵀ (I + γ Lᵖ K)⁻¹ γ Lᵖ k_z ,   K = G Gᵀ,

    by the push-through identity (I + MGGᵀ)⁻¹MG = MG(I + GᵀMG)⁻¹ for k_x = G g(x):
    k̃(x, z) = g(x)ᵀ(I + GᵀMG)⁻¹g(z). A ridge or linear SVM on these rows *is* LapRLS
    or LapSVM on the factor's kernel, and it is inductive: new rows go through the same
    m × m matrix R. Unlabeled rows matter: they shape L. Nothing n × n is formed; the
    anchor graph (the default) costs passes over row chunks of X, linear in n, and
    works on memmaps.

    Parameters
    ----------
    factor : transformer, default=None
        Any inductive factor (``fit``/``transform`` giving rows G with G Gᵀ ≈ K). None:
        :class:`lorak.Nystroem` with a Gaussian kernel of width the mean pairwise squared
        distance, k-means landmarks and m = ⌈n/3⌉ (at most 1000), fitted on the rows
        the graph is learned from (see ``subsample``). A factor you pass is cloned and
        fitted with ``fit(X, y)``.
    graph : "anchor", "knn" or sparse matrix, default="anchor"
        "anchor": the anchor graph of Liu, He & Chang (2010) — each row joined to its
        ``n_neighbors`` nearest of ``n_anchors`` k-means centres with weights on the
        simplex; L = I − ZΛ⁻¹Zᵀ (rows → anchors only: no neighbour search among the
        rows). "knn": the symmetrized k-NN graph of the rows (scikit-learn's
        ``NearestNeighbors``; exact, so O(n²d) time, in memory) with the normalized
        Laplacian. A sparse n × n matrix: your symmetric adjacency (normalized
        Laplacian); every row needs an edge.
    n_anchors : int or "auto", default="auto"
        Anchors of the anchor graph. "auto": ⌈2n/3⌉, at most 2000 (n: the rows the
        graph is learned from, at most ``subsample``).
    n_neighbors : int or "auto", default="auto"
        Anchors per row (anchor graph; "auto": 5) or neighbours per row (k-NN graph;
        "auto": 10).
    weights : {"kernel", "lle"}, default="kernel"
        The anchor graph's weights: Gaussian weights of the squared distances to the
        row's anchors (width: the mean squared distance to the ``n_neighbors``-th
        anchor), normalized to sum 1; or "lle", local anchor embedding (the simplex
        weights that best reconstruct the row from its anchors, solved exactly by an
        active-set method, ``simplex_least_squares`` in ``lorak.learn._few_labels``; a
        common shift of the rows does not change them).
    power : {1, 2}, default=1
        The Laplacian's power p in γLᵖ.
    gamma : float ≥ 0 or "auto", default="auto"
        The Laplacian's weight, scale-free: γ = gamma · tr(GᵀG)/tr(GᵀLᵖG). "auto":
        chosen from the labeled rows of ``y`` together with a ridge penalty by
        closed-form leave-one-out (:data:`lorak.learn.GRAPH_GAMMA_GRID`, 0 — the plain
        factor — always a candidate; penalties
        :data:`lorak.learn.GRAPH_PENALTY_GRID`), so it needs labels; in the few-label
        regime, the graph at full strength when it is informative and not at all
        otherwise (see ``gamma_rule_``; one labeled row per class will do, responses
        need 3 labeled rows). Class labels take the few-label regime when the counts
        say they are too few for leave-one-out (:func:`lorak.learn.few_labels`: a class
        under :data:`lorak.learn.MIN_LABELS_PER_CLASS` labeled rows, and fewer than
        :data:`lorak.learn.LEAVE_ONE_OUT_MIN_LABELED` in all or a class of one), unless
        a cross-validation of both regimes over the labeled rows prefers the other
        beyond chance (with three labeled rows or more in two classes at least and
        under 30 — three times :data:`lorak.learn.MIN_LABELS_PER_CLASS` — in the
        smallest; see ``regime_table_``); 0: the factor itself. GᵀLᵖG is a sum over
        the n rows while the factor's own norm (the I of I + γGᵀLᵖG) is not, so a
        fixed gamma weighs the graph more as n grows: above :data:`GAMMA_GRID_ROWS`
        rows the grid's nonzero values are divided by n / GAMMA_GRID_ROWS, which keeps
        the graph's weight per row in the range the grid was chosen on.
    n_components : "auto", int or None, default="auto"
        How many of the deformed factor's leading principal directions ``transform``
        keeps (the eigenvectors of Rᵀ GᵀG R with the largest eigenvalues: a kernel
        truncated to the directions of most variance over all rows, which is where
        the data's clusters show — the spectral cluster kernels of Chapelle, Weston &
        Schölkopf 2003). "auto": with ``gamma="auto"`` and enough labels, chosen
        after γ with the ridge penalty by leave-one-out over the labeled rows among
        m·{1, 1/3, 1/10, 1/30, 1/100} (full rank, m, always a candidate; ties go to
        the larger rank); otherwise all m. An integer: that many (at most m). None:
        all m.
    target : {"auto", "classification", "regression"}, default="auto"
        How ``y`` is read for ``gamma="auto"``: class labels with −1 on unlabeled rows,
        or real responses with NaN on unlabeled rows ("auto": responses when y is float
        with NaN).
    selection : {"gated", "best", "squared_error", "one_se"}, default="gated"
        How ``gamma="auto"`` reads the leave-one-out table of the labeled rows.
        "gated": each γ's ridge penalty by its LOO squared error (of the ±1 class
        columns, or of the responses), γ by the same, and a graph (γ > 0) is kept only
        when its per-row LOO squared losses beat those of γ = 0 (the plain factor),
        paired row by row, by more than one standard error — the graph is used where
        the labeled rows show that it helps. "best": the lowest LOO error count, then
        squared error; "squared_error": the lowest squared error, no gate; "one_se":
        the weakest graph within one standard error of the best.
        "gated" is the default: the 0/1 error count of 100 rows chooses the penalty
        noisily, where the squared error is smooth (the user guide gives the
        figures).
    regime : {"auto", "few_labels", "leave_one_out"}, default="auto"
        Which regime class labels take (``few_labels_``), for the factor's choice of γ
        and for :class:`lorak.SemiSupervisedFactorClassifier`'s head, which follows
        it. "auto": decided from the labels as ``gamma`` describes — the counts, and
        where they allow, a cross-validation of both regimes over the labeled rows.
        "few_labels": the few-label rules and the self-trained head whatever the
        counts. "leave_one_out": γ, the rank and the penalty by leave-one-out over the
        labeled rows, and the cross-validated head, whatever the counts (with one
        labeled row in a class, leave-one-out scores that row from the other classes'
        rows alone). Fitting both beside "auto" shows what the choice of regime
        costs or brings on your rows; a forced regime needs class labels in y.
    knn_method : {"auto", "exact", "nndescent"}, default="auto"
        How the k-NN graph finds neighbours: exactly (scikit-learn's
        ``NearestNeighbors``), approximately by NN-descent (``pynndescent``, the
        ``graph`` extra), or "auto": exact up to
        :data:`lorak.learn.KNN_EXACT_MAX` rows, NN-descent above when installed.
    subsample : int or None, default=50_000
        The anchor graph on more rows than this: what the fit learns from the rows is
        averages over them — the m × m matrices GᵀG/n and GᵀLᵖG/n, the anchors'
        k-means, the bandwidth, the factor's mean row, and the default factor's
        landmarks and kernel width — so they are estimated on ``subsample`` rows drawn
        at random (one draw, shared by all of them), and the fit's cost stops growing
        with n. The labeled rows are always all read; ``transform`` and the models'
        predictions see every row. None: every statistic over every row (passes over
        all of them). At most n rows never sample, so results there do not depend on
        it. A factor you pass is fitted on all rows (it may need them: indices,
        labels).
    keep_statistics : bool, default=False
        Keep the graph's m × m statistics (two m × m matrices) after ``fit``, so that
        :meth:`transform_at` and :meth:`use_gamma` can change γ without refitting.
        Off by default: a fitted factor, and a saved one, stays the size of R and the
        inner factor. :class:`lorak.GeneralizedNystroem` with ``prior_gamma="joint"``
        turns it on for its own clone.
    random_state : int, Generator or None, default=None
        Seeds the anchors' k-means, NN-descent and the default factor.

    Attributes
    ----------
    factor_ : the fitted factor.
    components_ : (m, m) ndarray, R.
    gamma_ : float, the relative weight used; ``laplacian_weight_`` the absolute γ.
    penalty_ : float or None, the ridge penalty chosen with ``gamma_`` (for features
        scaled to unit mean squared row norm over the training rows), None when gamma
        was given.
    loo_scores_ : (len(gamma grid), len(penalties), k) ndarray or None, the
        leave-one-out scores behind the choice: k = 2 for class labels (the error
        rate, then the mean squared error of the ±1 columns), k = 1 for responses
        (the mean squared error: an error rate means nothing there), so that
        ``loo_scores_[..., -1]`` is the mean squared error either way.
    rank_ : int, the number of principal directions kept (m: all of them).
    rank_scores_ : (len(ranks), len(penalties)) ndarray or None, the leave-one-out
        mean squared error behind ``rank_`` (``n_components="auto"``).
    gamma_rule_ : "leave_one_out", "few_labels" or None, how ``gamma="auto"`` chose: by
        leave-one-out over the labeled rows, or — class labels too few for
        leave-one-out to tell candidates apart (``few_labels_``) — the graph at full
        strength (t = :data:`lorak.learn.FEW_LABELS_GAMMA`) when it is informative, else
        the plain factor, with the penalty :data:`lorak.learn.FEW_LABELS_PENALTY`; None
        when gamma was given.
    target_type_ : "classification", "regression" or None, how y was read (None
        without y).
    few_labels_ : bool or None, whether y's class labels took the few-label regime —
        the counts' decision (:func:`lorak.learn.few_labels`) or, where measured, the
        regime ``regime_table_`` prefers — which the few-label rule of
        ``gamma="auto"`` follows and :class:`lorak.SemiSupervisedFactorClassifier` reads
        for its head; None for responses or without y.
    regime_table_ : (2, 2) int ndarray or None, the evidence behind ``few_labels_``
        with ``gamma="auto"``, three labeled rows or more in two classes at least and
        under 30 in the smallest: each regime (the few-label rules with the self-trained
        head; leave-one-out with the better of a ridge and a linear SVM) fitted in a
        stratified :data:`lorak.learn.REGIME_CV_FOLDS`-fold cross-validation over the
        labeled rows (a class of one or two keeps its rows in every fold's training
        rows), from the graph and factor fitted once; the held-out labeled rows
        counted by few-label regime right / wrong (rows) × leave-one-out right / wrong
        (columns), over the folds run: they stop once the rows left could not change
        the decision.
        The counts' regime stands unless the rows only the other predicts right
        outnumber the rows only it does, by a one-sided sign test at a level that
        falls with the counts' distance from their switch: one half at 10 per class
        (or 30 labeled rows), :data:`lorak.learn.REGIME_TEST_LEVEL` at half or twice
        that and beyond. None otherwise.
    graph_energy_ratio_ : float, ρ = tr(GᵀLᵖG) / tr(G_cᵀG_c), the graph's Dirichlet
        energy of the factor's centred rows per unit of their variance: about 1 for a
        graph whose edges join random rows (it tells nothing the kernel does not),
        near 0 where neighbours agree. The graph counts as informative below
        :data:`lorak.learn.GRAPH_INFORMATIVE_RATIO` (1/2); NaN when the graph joins
        no two rows the factor tells apart.
    anchors_ : (a, d) array or None, the anchor graph's anchors (on X's device for an
        array API X).
    mean_sq_norm_ : float, the mean squared row norm of ``transform`` over the training
        rows, tr(Rᵀ GᵀG R)/n (what a feature scale needs, without another pass).
    n_components_ : int, the output width (``rank_``).

    Notes
    -----
    After ``fit``, :meth:`gamma_candidates`, :meth:`transform_at` and :meth:`use_gamma`
    change γ without refitting: the inner factor, the graph and their m × m statistics
    stay, only the m × m map R changes. :class:`lorak.GeneralizedNystroem` with
    ``prior_gamma="joint"`` uses them to choose γ together with its own λ.

    Array API inputs (a PyTorch tensor, a CuPy array, …; with
    ``lorak.set_config(array_api_dispatch=True)`` or scikit-learn's) are computed on in
    their own namespace and on their own device when the factor supports them (the
    default Nyström does): the factor, the anchors' k-means, the anchor graph's passes
    (each chunk's graph rows dense, chunk × anchors) and ``transform`` run there; the
    m × m deformation and the leave-one-out choice of γ (on the labeled rows, copied to
    the host) run on the host, and R moves to the input's device in ``transform``. The
    k-NN graph, a given adjacency matrix and ``weights="lle"`` are host-only (a clear
    error says so). y is read on the host.

    A dask array X (the anchor graph only: the k-NN graph and a given matrix need all
    rows in memory and are refused) with more than ``subsample`` rows is read once: the
    sample and the labeled rows in one gather, everything else learned in memory from
    them. At most ``subsample`` rows (or ``subsample=None``), it is fitted by passes over
    its row chunks: the factor's fit, the anchors' k-means, the bandwidth and GᵀLᵖG
    (each chunk cut into blocks of the memory budget on its worker); the labeled rows
    are gathered to memory for the choice of γ. ``transform`` of a dask array is lazy,
    with its row chunks.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_moons
    >>> from lorak import GraphRegularizedFactor
    >>> X, y = make_moons(300, noise=0.05, random_state=0)
    >>> y_semi = np.full(300, -1); y_semi[:6] = y[:6]          # six labels
    >>> f = GraphRegularizedFactor(random_state=0).fit(X, y_semi)
    >>> Q = f.transform(X)
    >>> Q.shape[0], f.gamma_ > 0          # the moons' two arcs bend the kernel
    (300, True)
    """

    # dask X: the factor's fit, the anchors' k-means and the anchor graph's GᵀLᵖG are
    # passes over the chunks; the labeled rows are gathered to memory
    _lazy_fit = True
    _array_api_support = True
    #: A capability the semi-supervised models read: after ``fit``, ``mean_sq_norm_``
    #: holds the mean squared norm of ``transform`` over the training rows, so a
    #: feature scale needs no pass over them.
    reports_mean_sq_norm = True
    #: A capability the semi-supervised models read: ``fit``, ``transform`` and
    #: ``transform_product`` take X as the model resolved it (:class:`lorak._core.rows.Rows`)
    #: and ``fit`` y as the model parsed it
    #: (:class:`lorak._core.targets.SemiSupervisedTargets`), so neither is checked again.
    takes_resolved_input = True

    def __init__(
        self,
        factor=None,
        *,
        graph="anchor",
        n_anchors="auto",
        n_neighbors="auto",
        weights="kernel",
        power=1,
        gamma="auto",
        n_components="auto",
        target="auto",
        knn_method="auto",
        selection="gated",
        regime="auto",
        subsample=GRAPH_SUBSAMPLE,
        keep_statistics=False,
        random_state=None,
    ):
        self.factor = factor
        self.graph = graph
        self.n_anchors = n_anchors
        self.n_neighbors = n_neighbors
        self.weights = weights
        self.power = power
        self.gamma = gamma
        self.n_components = n_components
        self.target = target
        self.knn_method = knn_method
        self.selection = selection
        self.regime = regime
        self.subsample = subsample
        self.keep_statistics = keep_statistics
        self.random_state = random_state

    #: default of models saved before ``keep_statistics`` existed
    keep_statistics = False

    # ------------------------------------------------------------ parameters
    def _check_params(self, n):
        name = type(self).__name__
        if isinstance(self.graph, str):
            check_in_choices(self.graph, "graph", ("anchor", "knn"))
        elif not sp.issparse(self.graph):
            raise TypeError(
                f"{name}: graph must be 'anchor', 'knn' or a sparse n × n adjacency matrix; "
                f"got {type(self.graph).__name__}"
            )
        check_in_choices(self.weights, "weights", ("kernel", "lle"))
        check_in_choices(self.knn_method, "knn_method", ("auto", "exact", "nndescent"))
        check_in_choices(self.selection, "selection", ("best", "gated", "squared_error", "one_se"))
        check_in_choices(self.regime, "regime", REGIMES)
        check_in_choices(self.target, "target", ("auto", "classification", "regression"))
        r = self.n_components
        if not (r is None or (isinstance(r, str) and r == "auto")) and (
            not isinstance(r, numbers.Integral) or isinstance(r, bool) or r < 1
        ):
            raise ValueError(
                f"{name}: n_components must be 'auto', None or a positive integer; got {r!r}"
            )
        if self.power not in (1, 2) or isinstance(self.power, bool):
            raise ValueError(f"{name}: power must be 1 or 2; got {self.power!r}")
        g = self.gamma
        if not (isinstance(g, str) and g == "auto"):
            if (
                not isinstance(g, numbers.Real)
                or isinstance(g, bool)
                or not (np.isfinite(g) and g >= 0)
            ):
                raise ValueError(f"{name}: gamma must be 'auto' or a number ≥ 0; got {g!r}")
        k = self.n_neighbors
        if isinstance(k, str) and k == "auto":
            k = self._n_neighbors()
        elif not isinstance(k, numbers.Integral) or isinstance(k, bool) or k < 1:
            raise ValueError(f"{name}: n_neighbors must be a positive integer or 'auto'; got {k!r}")
        if n < 2:
            raise ValueError(f"{name}: a graph needs at least 2 rows; got n_samples={n}")
        ss = self.subsample
        if ss is not None and (
            not isinstance(ss, numbers.Integral) or isinstance(ss, bool) or ss < 2
        ):
            raise ValueError(f"{name}: subsample must be None or an integer ≥ 2; got {ss!r}")
        if not isinstance(self.keep_statistics, (bool, np.bool_)):
            raise ValueError(
                f"{name}: keep_statistics must be True or False; got {self.keep_statistics!r}"
            )
        if self._graph_is("anchor"):
            a = self._resolve_n_anchors(n)
            if k > a and not (isinstance(self.n_anchors, str) or isinstance(self.n_neighbors, str)):
                raise ValueError(
                    f"{name}: n_neighbors={k} exceeds n_anchors={a}: each row is joined to "
                    "n_neighbors of the anchors"
                )
        elif self._graph_is("knn") and k >= n:
            if isinstance(self.n_neighbors, str):
                raise ValueError(
                    f"{name}: the k-NN graph's n_neighbors='auto' ({k}) needs more than {k} "
                    f"rows; got {n}: pass a smaller n_neighbors"
                )
            raise ValueError(f"{name}: n_neighbors={k} must be below the number of rows, {n}")

    def _rows_learned_from(self, n):
        """How many rows the graph's statistics are averages over: n, or ``subsample``
        below it (the anchor graph)."""
        s = self.subsample
        if s is None or n <= s or not self._graph_is("anchor"):
            return n
        return int(s)

    def _graph_is(self, name):
        """Whether ``graph`` is the named graph (it may also be a sparse matrix)."""
        return isinstance(self.graph, str) and self.graph == name

    def _n_neighbors(self):
        """s (anchor graph) or k (k-NN graph): ``n_neighbors``, or 5 / 10 for "auto"."""
        if isinstance(self.n_neighbors, str):
            return 10 if self._graph_is("knn") else 5
        return int(self.n_neighbors)

    def _resolve_n_anchors(self, n):
        name = type(self).__name__
        a = self.n_anchors
        if isinstance(a, str):
            if a != "auto":
                raise ValueError(
                    f"{name}: n_anchors must be a positive integer or 'auto'; got {a!r}"
                )
            n = self._rows_learned_from(n)
            return int(max(1, min(-(-2 * n // 3), 2000, n)))
        if not isinstance(a, numbers.Integral) or isinstance(a, bool) or a < 1:
            raise ValueError(f"{name}: n_anchors must be a positive integer or 'auto'; got {a!r}")
        if a > n:
            raise ValueError(
                f"{name}: n_anchors={a} exceeds the number of rows, {n}: anchors are k-means "
                "centres of the rows"
            )
        return int(a)

    # ------------------------------------------------------------ labels
    def _targets(self, y, n):
        """y parsed (:class:`lorak._core.targets.SemiSupervisedTargets`), or None. y parsed
        by a semi-supervised model is taken as it is when its kind is ``target``'s."""
        if y is None:
            return None
        t = y if isinstance(y, SemiSupervisedTargets) else None
        if t is None or self.target not in ("auto", t.kind):
            t = self._parse_targets(y if t is None else t.coded, n)
        return t

    def _parse_targets(self, y, n):
        name = type(self).__name__
        if resolve_target_type(y, self.target, owner=name) == "regression":
            return SemiSupervisedTargets.of_responses(
                *parse_semi_supervised_response(y, n, owner=name), n
            )
        rows, y_l, _ = parse_class_labels(y, n, owner=name)
        return SemiSupervisedTargets.of_classes(rows, y_l, n)

    # ------------------------------------------------------------ fit
    def fit(self, X, y=None):
        """Fit the factor, build the graph on the rows of X, choose γ (from the labeled
        rows of y when ``gamma="auto"``) and store R.

        Validate (:meth:`_fit_input`), read the rows (the sample of ``subsample`` and
        the labeled rows, :meth:`_rows_in_memory`; the inner factor,
        :meth:`_fit_inner_factor`), then the math's one entry,
        :func:`lorak.learn.fit_graph_factor` (the graph's statistics, ρ, the few-label
        decision, γ, the penalty and the rank, R), whose record is stored."""
        rows, targets, labeled = self._fit_input(X, y)
        n = rows.n_rows
        seed = int(check_generator(self.random_state).integers(2**31 - 1))
        S, X_l = self._rows_in_memory(rows, labeled, seed)
        self.factor_ = self._fit_inner_factor(rows, S, targets, seed)
        fit = fit_graph_factor(
            rows, self.factor_, targets, sample=S, labeled=X_l, **self._graph_options(n),
            gamma=self.gamma, gammas=gamma_grid(n), n_components=self.n_components,
            selection=self.selection, regime=self.regime, seed=seed,
        )  # fmt: skip
        store_record(self, fit, skip=("components", "deformation"))
        self.components_ = fit.components.astype(rows.dtype)
        self.n_components_ = int(self.components_.shape[1])
        # what gamma_candidates, transform_at and use_gamma read: the m × m statistics
        # and the number of training rows, so that γ can change without a refit
        self._deformation = fit.deformation if self.keep_statistics else None
        self._n_fit_rows = int(n)
        return self

    def _fit_inner_factor(self, rows, S, targets, seed):
        """The inner factor, fitted: the default Nyström on the rows the graph's averages
        are over (it learns averages: the sample does), a factor you pass cloned and
        fitted on all rows with y as coded."""
        if self.factor is None:
            factor = _default_nystroem(self._rows_learned_from(rows.n_rows), seed)
            return factor.fit((rows if S is None else S).input_for(factor))
        factor = clone(self.factor)
        return factor.fit(rows.input_for(factor), None if targets is None else targets.coded)

    def _graph_options(self, n):
        """The graph :func:`lorak.learn.fit_graph_factor` builds on n rows: "anchor",
        "knn" or the checked adjacency, with its resolved sizes and options."""
        graph = self.graph if isinstance(self.graph, str) else self._check_graph(self.graph, n)
        return {
            "graph": graph,
            "n_anchors": self._resolve_n_anchors(n) if self._graph_is("anchor") else None,
            "n_neighbors": self._n_neighbors(),
            "weights": self.weights,
            "power": self.power,
            "knn_method": self.knn_method,
        }

    # ------------------------------------------------------------ γ after the fit
    def gamma_candidates(self):
        """The relative graph weights t that ``gamma="auto"`` chooses among for the
        training rows (:func:`gamma_grid` of their number, 0 — the plain factor —
        first), whatever ``gamma`` was: the grid a model that chooses γ itself (such
        as :class:`lorak.GeneralizedNystroem` with ``prior_gamma="joint"``) searches.

        Returns
        -------
        tuple of float, ascending.
        """
        return gamma_grid(self._fitted_deformation()[1])

    def transform_at(self, X, gamma, *, rank=None):
        """Rows of X as the factor fitted with ``gamma`` given would give them, without
        refitting: the same inner factor and graph (their m × m statistics are kept
        from ``fit``), only R changes — R(t) = V diag((1 + t·scale·D)^{-1/2}) Vᵀ, or its
        leading ``n_components`` principal directions when that is an integer (with
        "auto" or None a given γ keeps all m, as ``fit`` does with a number).

        Parameters
        ----------
        X : (n, d) array or CSR matrix.
        gamma : float ≥ 0, or a sequence of them
            Relative Laplacian weights t (γ = t · tr(GᵀG)/tr(GᵀLᵖG)); a NumPy scalar or
            0-d array is one number.
        rank : int or None, default=None
            None: the rank of the factor fitted with ``gamma`` given (above). An
            integer r: the r leading principal directions of G R(t) (at most m; all m
            is R(t) itself), e.g. ``rank_``, the rank this factor chose with its own γ.

        Returns
        -------
        ndarray (n, r): the rows for one ``gamma``; a list of them, one per entry, for
        a sequence (the inner factor's rows are computed once: per t only an m × m
        matrix and the product with it). ``transform_at(X, self.gamma_)`` equals
        ``transform(X)`` when γ was given or chosen without a rank.
        """
        single = _is_scalar(gamma)
        if not single:
            try:
                gamma = list(gamma)
            except TypeError:
                raise TypeError(
                    f"{type(self).__name__}.transform_at: gamma must be a number ≥ 0 or a "
                    f"sequence of them; got {gamma!r}"
                ) from None
        ts = [self._check_t(t) for t in ((gamma,) if single else gamma)]
        if not ts:
            raise ValueError(f"{type(self).__name__}.transform_at: gamma is an empty sequence")
        rank = self._check_rank(rank)
        rows = new_rows(self, X, "components_")
        G = as_dense(rows.features(self.factor_))
        out = []
        for t in ts:
            M, _, _ = self._map_at(t, rank)
            if M is None:  # γ = 0 at full rank: the factor itself, exactly
                out.append(G)
                continue
            (M,) = like_input(G, M.astype(self.components_.dtype))
            out.append(G @ M)
        return out[0] if single else out

    def use_gamma(self, gamma, *, rank=None):
        """Set the fitted factor to the relative graph weight ``gamma`` without refitting:
        afterwards ``transform`` (and ``components_``, ``gamma_``,
        ``laplacian_weight_``, ``rank_``, ``n_components_``, ``mean_sq_norm_``) are
        those of the factor fitted with ``gamma`` given, and ``penalty_`` is None (it
        was chosen with the former γ). The record of the former choice
        (``loo_scores_``, ``rank_scores_``, ``gamma_rule_``) is left as it was.

        Parameters
        ----------
        gamma : float ≥ 0, the relative Laplacian weight t.
        rank : int or None, default=None
            As in :meth:`transform_at`: the r leading principal directions at t.

        Returns
        -------
        self
        """
        t = self._check_t(gamma)
        defo = self._fitted_deformation()[0]
        M, ms, rank = self._map_at(t, self._check_rank(rank))
        if M is None:
            M = np.eye(defo.eigenvectors.shape[0])
        self.gamma_ = t
        self.laplacian_weight_ = defo.gamma(t)
        self.components_ = M.astype(self.components_.dtype)
        self.mean_sq_norm_ = ms
        self.rank_ = rank
        self.n_components_ = int(self.components_.shape[1])
        self.penalty_ = None
        return self

    def _fitted_deformation(self):
        """(the m × m statistics of the fit, the number of training rows); a clear error
        before ``fit`` or on a factor saved before they were kept."""
        check_is_fitted(self, "components_")
        defo = getattr(self, "_deformation", None)
        if defo is None:
            raise AttributeError(
                f"{type(self).__name__}: this fitted factor does not hold its graph's m × m "
                "statistics; fit it with keep_statistics=True to change gamma after the fit"
            )
        return defo, self._n_fit_rows

    def _check_t(self, t):
        t = number_of_0d(t)  # a 0-d array of a number is that number
        if (
            isinstance(t, bool)
            or not isinstance(t, numbers.Real)
            or not (np.isfinite(t) and t >= 0)
        ):
            raise ValueError(f"{type(self).__name__}: gamma must be a number ≥ 0; got {t!r}")
        return float(t)

    def _check_rank(self, rank):
        if rank is None:
            return None
        m = self._fitted_deformation()[0].eigenvectors.shape[0]
        if isinstance(rank, bool) or not isinstance(rank, numbers.Integral) or not 1 <= rank:
            raise ValueError(
                f"{type(self).__name__}: rank must be None or a positive integer; got {rank!r}"
            )
        return min(int(rank), m)

    def _map_at(self, t, rank=None):
        """(M, mean squared row norm, rank) of the factor fitted with ``gamma=t`` (with
        ``rank``: its ``rank`` leading principal directions): M the m × r map of
        ``transform`` (None for γ = 0 at full rank: the factor itself)."""
        defo, n = self._fitted_deformation()
        if rank is None and isinstance(self.n_components, numbers.Integral):
            rank = int(self.n_components)
        pmap = graph_factor_map(defo, t, n, rank)
        if pmap.rank == defo.eigenvectors.shape[0] and defo.gamma(t) == 0:
            return None, pmap.mean_sq_norm, pmap.rank
        return pmap.matrix, pmap.mean_sq_norm, pmap.rank

    def _is_identity(self):
        """γ = 0 at full rank: ``transform`` is the factor itself, exactly."""
        R = self.components_
        return self.laplacian_weight_ == 0 and R.shape[0] == R.shape[1]

    def _fit_input(self, X, y):
        """(the rows of X, resolved; y parsed or None; the indices of the labeled rows
        when ``gamma="auto"`` reads them, else None). A dask X is read by passes over its
        chunks."""
        name = type(self).__name__
        rows = resolve_rows(self, X)
        self._check_lazy_params(rows)
        n = rows.n_rows
        self._check_params(n)
        _check_inner_factor(self.factor)
        self._check_device_params(rows)
        targets = self._targets(host_targets(y), n)
        check_regime(self.regime, targets, name)
        if not isinstance(self.gamma, str):
            return rows, targets, None
        if targets is None:
            raise ValueError(
                f"{name}: gamma='auto' chooses the Laplacian's weight from labeled rows; "
                "pass y (class labels with -1 = unlabeled, or responses with NaN = "
                "unlabeled), or a number for gamma"
            )
        # class labels hold two classes at least (their parser says so); with fewer than
        # MIN_LABELS_PER_CLASS rows in a class the few-label rule takes them, with no
        # leave-one-out: one labeled row per class will do. Responses always go through
        # leave-one-out, which needs rows to leave out.
        if targets.kind == "regression" and targets.rows.size < 3:
            raise ValueError(
                f"{name}: gamma='auto' chooses the graph weight for responses by "
                "leave-one-out, which needs at least 3 labeled rows; y has "
                f"{targets.rows.size} (NaN = unlabeled)"
            )
        return rows, targets, targets.rows

    def _rows_in_memory(self, rows, labeled, seed):
        """(the sample of :meth:`_sample_indices` as rows, or None; the labeled rows or
        None), read first, so that a bad row fails before any pass; on a dask array in
        one gather (unless the labeled rows were gathered already, by the model that
        handed these rows down)."""
        idx = self._sample_indices(rows.n_rows, seed)
        if labeled is None:
            return (None if idx is None else rows.take(idx, what=_SAMPLE_ROWS)), None
        if idx is None:
            return None, rows.labeled(labeled)
        X_l, S = rows.labeled_with(labeled, idx, what=_SAMPLE_ROWS)
        return S, X_l

    def _sample_indices(self, n, seed):
        """Which rows the anchor graph's statistics are estimated on when X has more
        than ``subsample`` rows: that many drawn at random, sorted; else None (all)."""
        s = self._rows_learned_from(n)
        if s == n:
            return None
        a = self._resolve_n_anchors(n)
        if a > s:  # "auto" resolves on the sample's size: never above it
            raise ValueError(
                f"{type(self).__name__}: subsample={s} is below n_anchors={a}: the anchors "
                "are k-means centres of the sampled rows; pass a larger subsample (or None)"
            )
        return np.sort(np.random.default_rng([seed, 4]).choice(n, s, replace=False))

    def _check_lazy_params(self, rows):
        """What a dask X cannot have: a graph that needs all rows in memory."""
        if not self._graph_is("anchor"):
            g = repr(self.graph) if isinstance(self.graph, str) else "a matrix"
            rows.refuse_lazy(
                f"{type(self).__name__}: graph={g} needs all rows in memory, and X is a "
                "dask array; use graph='anchor' (the default: passes over the chunks), or "
                "compute X first"
            )

    def _check_device_params(self, rows):
        """What the array API path does not cover gets a clear error."""
        name = type(self).__name__
        where = f"X is a {namespace_name(rows.data)} array"
        if not self._graph_is("anchor"):
            g = repr(self.graph) if isinstance(self.graph, str) else "a matrix"
            rows.refuse_device(
                f"{name}: graph={g} runs on the host only ({where}); use graph='anchor' "
                "(the default) on a device, or pass NumPy arrays"
            )
        if self.weights != "kernel":
            rows.refuse_device(
                f"{name}: weights={self.weights!r} runs on the host only ({where}); use "
                "weights='kernel' (the default) on a device, or pass NumPy arrays"
            )

    @staticmethod
    def _check_graph(A, n):
        if A.shape != (n, n):
            raise ValueError(f"graph must be an n × n adjacency matrix with n = {n}; got {A.shape}")
        if A.dtype.kind not in "biuf":  # complex weights would lose their imaginary part
            raise ValueError(
                f"graph: the adjacency weights must be real numbers; got dtype {A.dtype}"
            )
        A = sp.csr_matrix(A, dtype=np.float64)
        if A.nnz and (not np.all(np.isfinite(A.data)) or A.data.min() < 0):
            raise ValueError("graph: the adjacency weights must be finite and ≥ 0")
        if abs(A - A.T).max() > 1e-12 * max(abs(A).max(), 1e-300):
            raise ValueError("graph: the adjacency matrix must be symmetric (A = Aᵀ)")
        return A

    def transform(self, X):
        """Rows of the deformed factor: factor.transform(X) @ R."""
        rows = new_rows(self, X, "components_")
        G = as_dense(rows.features(self.factor_))
        if self._is_identity():  # γ = 0 at full rank: the factor itself, exactly
            return G
        (R,) = like_input(G, self.components_)  # on the input's device, in G's dtype
        return G @ R

    def transform_product(self, X, M):
        """``transform(X) @ M`` for a small M (r × c), without the n × r rows when the
        inner factor has a ``transform_product`` of its own (a Nyström factor: the
        kernel rows times N R M) — what a linear model on the factor needs to predict.
        """
        rows = new_rows(self, X, "components_")
        M = check_product_matrix(M, self.n_components_)
        RM = M if self._is_identity() else self.components_.astype(np.float64) @ M
        inner = getattr(self.factor_, "transform_product", None)
        if inner is not None:
            return inner(rows.input_for(self.factor_), RM)
        G = as_dense(rows.features(self.factor_))
        (RM,) = like_input(G, RM)  # on the input's device, in G's dtype
        return G @ RM

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False
        return tags

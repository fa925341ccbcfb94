"""The graph-regularized factor's one entry: :func:`fit_graph_factor`.

What :class:`lorak.GraphRegularizedFactor` learns, stage by stage: the graph's m × m
statistics GᵀG and GᵀLᵖG (the anchor graph by passes over row chunks, on the host or on
X's device; the k-NN graph or a given one in memory), their eigendecomposition, the
graph's energy ratio ρ, the few-label decision (the counts', measured against the
other regime when the labels allow a cross-validation), γ with the ridge penalty and
the rank (the few-label rule, or leave-one-out over the labeled rows), and the map R. The
estimator owns the rows: it resolves X (in memory, a memmap, a dask array or on a
device: :class:`lorak._core.rows.Rows`), draws the sample of ``subsample``, gathers the
labeled rows and fits the inner factor; the entry reads the rows through what it is
handed. The math of each stage is in :mod:`lorak.learn._graph_factor` and
:mod:`lorak.learn._few_labels`.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._core.array_api import as_dense, to_numpy
from .._core.targets import check_regime
from ..landmarks import select_landmarks
from ._few_labels import (
    FEW_LABELS_GAMMA,
    FEW_LABELS_PENALTY,
    FEW_LABELS_RANK_FRACTION,
    GRAPH_INFORMATIVE_RATIO,
    REGIME_CV_FOLDS,
    REGIME_CV_ROWS,
    REGIME_MEASURED_BELOW,
    REGIME_MEASURED_FROM,
    _Moments,
    few_labels_decision,
    graph_energy_ratio,
    regime_test_level,
)
from ._graph_device import device_anchor_bandwidth, device_anchor_laplacian_gram
from ._graph_factor import (
    GAMMA_GRID,
    PENALTY_GRID,
    AnchorGraph,
    GraphDeformation,
    PrincipalMap,
    anchor_bandwidth,
    anchor_laplacian_gram,
    deformation,
    deformation_matrix,
    graph_laplacian_gram,
    knn_adjacency,
    principal_map,
    rank_candidates,
    ridge_targets,
    select_gamma_penalty,
    select_rank,
)

__all__ = ["GraphFactorFit", "GraphLabels", "fit_graph_factor", "graph_factor_map"]

#: σ² of the anchor graph's kernel weights is a mean over all rows up to this many,
#: over this many drawn at random above (a mean of 10⁵ terms: its relative standard
#: error is about 0.3 % of the spread of the s-th anchor distances).
BANDWIDTH_SAMPLE = 100_000

#: The anchor graph's pass accumulates the Grams of the kernel rows (N applied once,
#: after the sum; see :func:`_kernel_rows_map`) above this many rows, where the m × m
#: product per row it saves is most of the pass; at and below, the Grams of the
#: factor's rows (the small sets keep the round-off of the factor's own rows).
KERNEL_ROWS_MIN_SAMPLES = 10_000
#: ... and only while ‖N‖₂² (1/λ_min of the landmark kernel) is at most this: the
#: Grams' round-off, eps·n·max k(x, x) on the kernel rows, grows by ‖N‖₂² when N is
#: applied after the sum (≤ 2·10⁻¹⁰ of the Gram's scale here, against ‖N‖₂·eps on the
#: factor's rows). A landmark kernel more ill-conditioned than that goes through the
#: factor's rows at any n.
KERNEL_ROWS_MAX_AMPLIFICATION = 1e6

#: The mean row of the factor (for the energy ratio ρ) is taken over all rows up to
#: this many, over this many drawn at random above.
MEAN_ROW_SAMPLE = 10_000


@dataclass
class GraphLabels:
    """The labeled rows as the choice of γ reads them, from y parsed once
    (``lorak._core.targets.SemiSupervisedTargets``)."""

    kind: str  # "classification" or "regression"
    rows: np.ndarray  # (l,) the labeled rows, increasing
    targets: np.ndarray  # (l, c) ±1 one-vs-rest class columns, or (l, 1) standardized responses
    few_labels: bool | None  # the few-label regime (by the counts); None for responses
    codes: np.ndarray | None = None  # (l,) class codes 0 … c−1; None for responses
    prior: np.ndarray | None = None  # (c,) the class prior the model was given, else None

    @classmethod
    def of(cls, t) -> GraphLabels:
        """From parsed targets ``t``: the ridge targets and the few-label decision."""
        if t.kind == "regression":
            sd = float(np.std(t.values))
            T = ((t.values - t.values.mean()) / (sd if sd > 0 else 1.0))[:, None]
            return cls(t.kind, t.rows, T, None)
        c = t.classes.size
        T = ridge_targets(t.codes, c)
        codes, prior = np.asarray(t.codes), t.class_prior
        return cls(t.kind, t.rows, T, few_labels_decision(t.codes, c), codes, prior)


@dataclass
class GraphFactorFit:
    """What :func:`fit_graph_factor` learned. :class:`lorak.GraphRegularizedFactor`
    stores each field as the fitted attribute of the same name with a trailing
    underscore (``components`` in X's dtype; ``deformation`` only with
    ``keep_statistics``)."""

    components: np.ndarray  # (m, r) R, or its r leading principal directions
    gamma: float  # t, the relative graph weight
    laplacian_weight: float  # γ = t · tr(GᵀG)/tr(GᵀLᵖG)
    penalty: float | None  # the ridge penalty chosen with γ; None when gamma was given
    loo_scores: np.ndarray | None  # the leave-one-out table behind γ and the penalty
    rank_scores: np.ndarray | None  # the leave-one-out table behind the rank
    rank: int  # r, the principal directions kept (m: all)
    mean_sq_norm: float  # tr(Rᵀ GᵀG R)/n, the training rows' mean squared norm
    graph_energy_ratio: float  # ρ = tr(GᵀLᵖG)/tr(G_cᵀG_c)
    gamma_rule: str | None  # "leave_one_out" or "few_labels"; None when gamma was given
    target_type: str | None  # "classification" or "regression"; None without y
    few_labels: bool | None  # whether the few-label regime was taken; None without classes
    # (2, 2) the held-out labeled rows: few-label regime right/wrong × leave-one-out's
    regime_table: np.ndarray | None
    anchors: object  # (a, d) the anchor graph's anchors (on X's device), else None
    deformation: GraphDeformation  # the m × m statistics, eigendecomposed


def fit_graph_factor(
    rows,
    factor,
    targets=None,
    *,
    sample=None,
    labeled=None,
    graph="anchor",
    n_anchors=None,
    n_neighbors=5,
    weights="kernel",
    power=1,
    knn_method="auto",
    gamma="auto",
    gammas=GAMMA_GRID,
    n_components="auto",
    selection="gated",
    regime="auto",
    seed=0,
) -> GraphFactorFit:
    """The graph-regularized factor G R, R Rᵀ = (I + γ GᵀLᵖG)⁻¹, of a fitted factor.

    Stages: the graph's GᵀG and GᵀLᵖG, their eigendecomposition (``deformation``), the
    energy ratio ρ (``graph_energy_ratio``), the few-label decision (:func:`few_labels`
    of the counts; with ``gamma="auto"``, three labeled rows or more in two classes at
    least and fewer than :data:`REGIME_MEASURED_BELOW` in the smallest, measured
    against the other regime by cross-validation over the labeled rows — the record's
    ``regime_table``), γ with the ridge penalty and the rank
    (``gamma="auto"``: the few-label rule, else ``select_gamma_penalty`` and
    ``select_rank`` over the labeled rows), and the map R (``graph_factor_map``).

    ``rows``: the n training rows as the estimator resolved them (a
    ``lorak._core.rows.Rows``); ``factor``: the fitted inner factor; ``targets``: y parsed
    (a ``lorak._core.targets.SemiSupervisedTargets``; the regime measurement's heads
    read its ``class_prior``, a classifier's given prior) or None; ``sample``: the
    rows the anchor graph's statistics are estimated on (Rows; its sums scaled by
    n/|sample|), None for all; ``labeled``: the labeled rows gathered (Rows; for
    ``gamma="auto"``); ``graph``: "anchor", "knn" or a checked n × n adjacency, with
    ``n_anchors`` anchors and ``n_neighbors`` s or k; ``gamma``: "auto" or t ≥ 0, with
    ``gammas`` the t grid of "auto" for these rows; ``seed`` seeds the anchors' k-means,
    NN-descent and the row draws; ``regime``: "auto" (the counts' decision, measured
    as above), or "few_labels" / "leave_one_out" taken as given for class labels (no
    measurement); the others as for :class:`lorak.GraphRegularizedFactor`.
    """
    n = rows.n_rows
    check_regime(regime, targets, "fit_graph_factor")
    labels = None if targets is None else GraphLabels.of(targets)
    if regime != "auto":
        labels.few_labels = regime == "few_labels"
    anchor = (n_anchors, n_neighbors, weights, power)
    GtG, H, anchors = _graph_statistics(rows, sample, factor, graph, anchor, knn_method, seed)
    defo = deformation(GtG, H, n_rows=n)
    # the factor's rows of (a sample of) the training rows: ρ's mean row, and the
    # unlabeled rows the regime's cross-validation reads
    G_s, at = _factor_rows_sample(rows if sample is None else sample, factor, seed)
    rho = _energy_ratio(G_s, defo, n)
    regime_table, maps = None, {}  # maps: principal maps by t, shared by the choices
    if isinstance(gamma, str):  # "auto": from the labeled rows
        G_l = np.asarray(to_numpy(as_dense(labeled.features(factor))), dtype=np.float64)
        if regime == "auto" and _regime_measurable(labels):
            G_u = _regime_rows(G_s, at, None if sample is not None else labels.rows, seed)
            labels.few_labels, regime_table = _measured_regime(
                labels, G_l, G_u, defo, n, gammas, n_components, selection, rho, maps
            )
        choice = _choose_gamma(labels, G_l, defo, n, gammas, n_components, selection, rho, maps)
    else:
        choice = _Choice(float(gamma), None, None, None, None, None)
    pmap = _final_map(defo, choice, n, n_components)
    return GraphFactorFit(
        components=pmap.matrix, gamma=choice.t, laplacian_weight=defo.gamma(choice.t),
        penalty=choice.penalty, loo_scores=choice.loo_scores, rank_scores=choice.rank_scores,
        rank=pmap.rank, mean_sq_norm=pmap.mean_sq_norm, graph_energy_ratio=rho,
        gamma_rule=choice.rule, target_type=None if labels is None else labels.kind,
        few_labels=None if labels is None else labels.few_labels,
        regime_table=regime_table, anchors=anchors,
        deformation=defo,
    )  # fmt: skip


def graph_factor_map(defo: GraphDeformation, t: float, n_rows: int, rank=None) -> PrincipalMap:
    """The m × r map of the factor deformed at t, with the training rows' mean squared
    norm: its ``rank`` leading principal directions (:func:`principal_map`) when
    ``rank`` is below m, else R(t) itself (:func:`deformation_matrix`;
    ‖G R‖_F² = tr(Rᵀ GᵀG R), no pass over the rows)."""
    m = defo.eigenvectors.shape[0]
    if rank is not None and min(int(rank), m) < m:
        return principal_map(defo, t, int(rank), n_rows)
    R = deformation_matrix(defo, t)
    return PrincipalMap(R, m, defo.mean_sq_norm(t, n_rows))


# --------------------------------------------------------------------------- statistics


def _graph_statistics(rows, sample, factor, graph, anchor, knn_method, seed):
    """(GᵀG, GᵀLᵖG, the anchors or None) of the factor's rows G and the graph on the
    rows: the anchor graph's by passes over row chunks (on X's device for an array API
    X; ``anchor``: its anchors, neighbours, weights and power), the others in memory.

    With a ``sample`` (more rows than ``subsample``), the anchors, the bandwidth and the
    anchor graph's m × m sums come from its rows, the sums scaled by n/|S|: unbiased for
    GᵀG, and for GᵀLᵖG to the relative order of (anchors / |S|) — each anchor's weight
    Λ_jj is itself estimated."""
    n = rows.n_rows
    if sample is not None:
        GtG, H, anchors = _anchor_statistics(sample, factor, n, *anchor, seed)
        f = n / sample.n_rows
        return GtG * f, H * f, anchors
    if isinstance(graph, str) and graph == "anchor":
        return _anchor_statistics(rows, factor, n, *anchor, seed)
    G = as_dense(rows.features(factor))
    _, n_neighbors, _, power = anchor
    if isinstance(graph, str):  # "knn"
        graph = knn_adjacency(rows.data, n_neighbors, method=knn_method, random_state=seed)
    GtG, H = graph_laplacian_gram(G, graph, power)
    return GtG, H, None


def _anchor_statistics(rows, factor, n, n_anchors, n_neighbors, weights, power, seed):
    """(GᵀG, GᵀLᵖG, the anchors) of the anchor graph on the rows (all n rows, or a
    sample of them): its anchors (k-means), bandwidth, and one pass over row chunks."""
    X, transform = rows.data, rows.block_transform(factor)
    anchors = select_landmarks("kmeans", X, n_anchors, rng=np.random.default_rng(seed)).points
    s = min(n_neighbors, n_anchors)
    if rows.on_device:  # the passes on X's device; the m × m results on the host
        (anchors,) = rows.like(anchors)
        sigma2 = device_anchor_bandwidth(X, anchors, s)
        GtG, H, _ = device_anchor_laplacian_gram(X, transform, anchors, s, sigma2, power)
        return GtG, H, anchors
    anchors = np.asarray(anchors.toarray() if sp.issparse(anchors) else anchors, np.float64)
    sigma2 = anchor_bandwidth(_bandwidth_rows(rows, seed), anchors, s)
    graph = AnchorGraph(anchors, s, sigma2, weights)
    kmap = _kernel_rows_map(factor, n)
    if kmap is None:
        GtG, H, _ = anchor_laplacian_gram(X, transform, graph, power)
    else:  # the Grams of the kernel rows, N applied once
        GtG, H, _ = anchor_laplacian_gram(X, kmap[0], graph, power, linear_map=kmap[1])
    return GtG, H, anchors


def _bandwidth_rows(rows, seed):
    """The rows σ² is the mean over: all of X up to :data:`BANDWIDTH_SAMPLE` rows, else
    that many drawn at random (the same draw for every backend; on a dask array or a
    memmap they are gathered to memory)."""
    n = rows.n_rows
    if n <= BANDWIDTH_SAMPLE:
        return rows.data
    idx = np.sort(np.random.default_rng([seed, 2]).choice(n, BANDWIDTH_SAMPLE, replace=False))
    return rows.take(idx).data


def _sq_spectral_norm(N, n_iter=50) -> float:
    """‖N‖₂² by power iteration on NᵀN from a fixed start (a lower estimate that
    converges from below; 50 steps of m² each), bounded above by ‖N‖_F²."""
    fro = float(np.sum(N * N))
    if N.size == 0 or fro == 0.0:
        return 0.0
    v = np.random.default_rng(0).standard_normal(N.shape[1])
    est = 0.0
    for _ in range(n_iter):
        v /= np.linalg.norm(v)
        w = N.T @ (N @ v)
        est = float(v @ w)
        v = w
    # the estimate from below, padded by its last step's relative change bound
    return min(fro, 2.0 * est)


def _kernel_rows_map(factor, n_samples):
    """(rows, N) with factor.transform(X) = rows(X) @ N — the factor's kernel rows and
    its map, from the factor's ``kernel_rows_map`` (a lorak ``Nystroem``) — when there
    are more than :data:`KERNEL_ROWS_MIN_SAMPLES` rows and ‖N‖₂² stays within
    :data:`KERNEL_ROWS_MAX_AMPLIFICATION`; else None.

    The anchor graph's pass then accumulates m × m Grams of the kernel rows and applies
    N once at the end, instead of multiplying every row by N: a third less work per
    row at m = 1000. Other factors go through ``transform``.
    """
    own = getattr(factor, "kernel_rows_map", None)
    kmap = own() if n_samples > KERNEL_ROWS_MIN_SAMPLES and own is not None else None
    if kmap is None:
        return None
    rows, N, max_diag = kmap
    if _sq_spectral_norm(N) * max(max_diag, 1.0) > KERNEL_ROWS_MAX_AMPLIFICATION:
        return None
    return rows, N


def _factor_rows_sample(rows, factor, seed):
    """(G, at): the factor's rows of ``rows`` (all n training rows, or a sample of them),
    all of them up to :data:`MEAN_ROW_SAMPLE`, that many drawn at random above — on the
    host, float64 — and their positions in ``rows`` (None: all, in order)."""
    at = None
    if rows.n_rows > MEAN_ROW_SAMPLE:
        at = np.sort(
            np.random.default_rng([seed, 3]).choice(rows.n_rows, MEAN_ROW_SAMPLE, replace=False)
        )
        rows = rows.take(at)
    return np.asarray(to_numpy(as_dense(rows.features(factor))), dtype=np.float64), at


def _energy_ratio(G, defo, n):
    """ρ = tr(GᵀLᵖG)/tr(G_cᵀG_c) (:func:`graph_energy_ratio`) for the n training rows,
    the mean row ḡ over the factor's rows ``G`` (:func:`_factor_rows_sample`)."""
    if defo.scale == 0:  # the graph joins no two rows the factor tells apart
        return float("nan")
    H = defo.eigenvalues  # tr(H) = Σ eigenvalues (0 when the graph carries nothing)
    return graph_energy_ratio(defo.gram, np.diag(H), G.mean(axis=0), n)


# --------------------------------------------------------------------------- γ, rank, R


@dataclass
class _Choice:
    """t, the principal map chosen with it, the penalty, the LOO tables, the rule."""

    t: float
    pmap: PrincipalMap | None
    penalty: float | None
    loo_scores: np.ndarray | None
    rank_scores: np.ndarray | None
    rule: str | None


def _choose_gamma(labels, G_l, defo, n, gammas, n_components, selection, rho, maps=None):
    """t (γ's relative weight) with the ridge penalty and, with ``n_components="auto"``,
    the rank: the few-label rule (:func:`_few_label_choice`) when the labels took the
    few-label regime (``labels.few_labels``), else leave-one-out over the labeled rows
    (:func:`_leave_one_out_choice`)."""
    if labels.few_labels:
        return _few_label_choice(labels.targets.shape[1], defo, n, gammas, n_components, rho)
    return _leave_one_out_choice(
        G_l, labels.targets, labels.kind, defo, n, gammas, n_components, selection, maps
    )


def _regime_measurable(labels) -> bool:
    """Whether the regime is measured on these labels: class labels with
    :data:`REGIME_MEASURED_FROM` labeled rows or more in two classes at least (the rows
    held out) and fewer than :data:`REGIME_MEASURED_BELOW` in the smallest, and
    :data:`REGIME_CV_FOLDS` at least 2."""
    if labels is None or labels.kind != "classification" or REGIME_CV_FOLDS < 2:
        return False
    counts = np.bincount(labels.codes, minlength=labels.targets.shape[1])
    scored = int(np.count_nonzero(counts >= REGIME_MEASURED_FROM))
    return int(counts.min()) < REGIME_MEASURED_BELOW and scored >= 2


def _regime_rows(G, at, labeled, seed):
    """The unlabeled rows the held-out self-training reads: the rows of ``G`` (the
    factor's rows of :func:`_factor_rows_sample`, at positions ``at``) that are not
    ``labeled`` (None: the rows of a sample, all taken), up to :data:`REGIME_CV_ROWS`,
    that many drawn at random above; None when there are none."""
    pool = np.arange(G.shape[0])
    if labeled is not None:
        pool = pool[~np.isin(pool if at is None else at, labeled)]
    if pool.size > REGIME_CV_ROWS:
        pool = np.sort(np.random.default_rng([seed, 4]).choice(pool, REGIME_CV_ROWS, replace=False))
    return G[pool] if pool.size else None


def _scaled_rows(pmap, G):
    """The rows G mapped by the principal map and scaled to the training rows' unit mean
    squared norm (the scale the heads' penalties are set at)."""
    Q = G @ pmap.matrix
    return Q / np.sqrt(pmap.mean_sq_norm) if pmap.mean_sq_norm > 0 else Q


def _measured_regime(labels, G_l, G_u, defo, n, gammas, n_components, selection, rho, maps):
    """(whether to take the few-label regime, the held-out evidence behind it).

    Each regime is scored whole — its γ, rank and penalty, then its head — by a
    stratified k-fold cross-validation over the labeled rows (:func:`_regime_folds`:
    the rows of a class of one or two stay in every fold's training rows): the
    few-label rule with the ridge self-trained on the unlabeled rows (``G_u``, and the
    held-out labeled rows, unlabeled in their fold) under the class prior measured
    from them; leave-one-out over the fold's labeled rows with a ridge and with a
    linear SVM, whichever errs less over the folds (the head the model's own
    cross-validation then picks). A class prior the model was given
    (``labels.prior``) is read by both, as the model's heads read it: the self-trained
    ridge takes its shares, the linear heads weight the labeled classes by it. The
    graph, its m × m statistics and the rows' factor are fitted once: only those
    m × m choices and the heads are refitted per fold (``maps``: the principal maps by
    t, shared with the final choice).

    The counts' regime (``labels.few_labels``) stands unless the other one is better
    on the held-out rows beyond chance: of the rows only one regime predicts right
    (b for the counts' regime, c for the other), c > b with a one-sided sign test
    (exact binomial, McNemar's) at the level :func:`regime_test_level` gives these
    labels (one half at the counts' switch, falling to
    :data:`lorak.learn.REGIME_TEST_LEVEL` at half or twice it and beyond: the farther
    the counts are from it, the more they say). The folds stop as soon as the rows
    still to be held out could not make the test prefer the other regime even if every
    one of them went its way (the decision is the one all folds give). The evidence is
    the 2 × 2 table of the rows held out — few-label regime right / wrong by
    leave-one-out right / wrong."""
    codes, c = labels.codes, labels.targets.shape[1]
    scored = np.bincount(codes, minlength=c)[codes] >= REGIME_MEASURED_FROM
    few_map = _final_map(defo, _few_label_choice(c, defo, n, gammas, n_components, rho), n,
                         n_components)  # fmt: skip
    F_l = _scaled_rows(few_map, G_l)
    F_u = _Moments(np.empty((0, F_l.shape[1])) if G_u is None else _scaled_rows(few_map, G_u))
    held = np.zeros(codes.size, dtype=bool)
    few_hit = np.zeros(codes.size, dtype=bool)
    loo_hit = np.zeros((2, codes.size), dtype=bool)  # the ridge's and the linear SVM's
    choose = (G_l, defo, n, gammas, n_components, selection, maps)
    level = regime_test_level(codes, c)
    for train, test in _regime_folds(codes, scored):
        hits = _fold_hits(F_l, F_u, codes, c, train, test, choose, labels.prior)
        few_hit[test], loo_hit[:, test] = hits
        held[test] = True
        counts = [_stay_switch(few_hit[held], h[held], labels.few_labels) for h in loo_hit]
        if not any(_may_switch(*sc, int(np.sum(scored & ~held)), level) for sc in counts):
            break
    loo_hit = loo_hit[int(np.argmax(loo_hit[:, held].sum(axis=1)))]
    few_hit, loo_hit = few_hit[held], loo_hit[held]
    table = np.array([[np.sum(f & g) for g in (loo_hit, ~loo_hit)] for f in (few_hit, ~few_hit)])
    if _may_switch(*_stay_switch(few_hit, loo_hit, labels.few_labels), 0, level):
        return not labels.few_labels, table
    return bool(labels.few_labels), table


def _regime_folds(codes, scored):
    """(train, test) index pairs: a stratified k-fold split of the ``scored`` rows — the
    rows of the classes with :data:`REGIME_MEASURED_FROM` labeled rows or more, k =
    :data:`REGIME_CV_FOLDS` or the smallest such class's rows when fewer — and every
    other row in every fold's training rows (a class of one or two keeps its rows
    there, as in the fit the fold stands for: held out, a class of two would leave
    one, which leave-one-out inside the fold never predicts right)."""
    from sklearn.model_selection import StratifiedKFold

    rows = np.flatnonzero(scored)
    sizes = np.bincount(codes[rows])
    k = min(REGIME_CV_FOLDS, int(sizes[sizes > 0].min()))
    every = np.arange(codes.size)
    for _, te in StratifiedKFold(k, shuffle=True, random_state=0).split(rows, codes[rows]):
        yield np.setdiff1d(every, rows[te]), rows[te]


def _fold_hits(F_l, F_u, codes, c, train, test, choose, prior=None):
    """One fold's held-out rows: whether the few-label regime's head predicts each
    right, and whether leave-one-out's ridge and linear SVM do (2 × len(test)). Each
    head is fitted as the model fits it: under a given class ``prior`` (c,), the
    self-trained ridge reads it and the linear heads weight the fold's labeled classes
    by it (:func:`lorak.learn._heads.prior_class_weights` of the fold's counts)."""
    from ._heads import few_label_head_codes, linear_head_hits

    G_l, defo, n, gammas, n_components, selection, maps = choose
    held = F_u.plus(F_l[test])  # the unlabeled rows' moments: computed once, for every fold
    pred = few_label_head_codes(
        F_l[train], codes[train], held, FEW_LABELS_PENALTY, c, F_l[test], prior
    )
    T = ridge_targets(codes[train], c)
    loo = _leave_one_out_choice(
        G_l[train], T, "classification", defo, n, gammas, n_components, selection, maps
    )
    Q_l = _scaled_rows(_final_map(defo, loo, n, n_components), G_l)
    w = _fold_weights(prior, codes, train, c)
    return pred == codes[test], linear_head_hits(Q_l, codes, loo.penalty, train, test, w)


def _fold_weights(prior, codes, train, c):
    """(l,) the labeled rows' weights under a given ``prior`` for a fold fitted on the
    rows ``train`` (:func:`lorak.learn._heads.prior_class_weights` of their counts), or
    None: no prior, or weights of 1."""
    from ._heads import prior_class_weights

    w = prior_class_weights(prior, np.bincount(codes[train], minlength=c))
    return None if w is None else w[codes]


def _stay_switch(few_hit, loo_hit, few_labels):
    """(b, c): the held-out rows only the counts' regime predicts right, and those only
    the other regime predicts right."""
    few_only, loo_only = int(np.sum(few_hit & ~loo_hit)), int(np.sum(loo_hit & ~few_hit))
    return (few_only, loo_only) if few_labels else (loo_only, few_only)


def _may_switch(stay, switch, remaining, level):
    """Whether the other regime wins the sign test (c > b, one-sided exact binomial at
    ``level``, :func:`regime_test_level` of the labels) with ``remaining`` more rows
    only it predicts right."""
    from scipy.stats import binomtest

    switch += remaining
    if switch <= stay:
        return False
    return binomtest(switch, stay + switch, 0.5, alternative="greater").pvalue < level


def _few_label_choice(n_classes, defo, n, gammas, n_components, rho):
    """Class labels too few for leave-one-out (it would score each candidate on a count
    out of a handful of rows): the graph at full strength (t =
    :data:`FEW_LABELS_GAMMA`, on the grid's scale for n) when it is informative — ρ
    below :data:`GRAPH_INFORMATIVE_RATIO` — else the plain factor cut to its leading
    principal directions (m · :data:`FEW_LABELS_RANK_FRACTION`, with
    ``n_components="auto"``), with the penalty :data:`FEW_LABELS_PENALTY`."""
    if np.isfinite(rho) and rho < GRAPH_INFORMATIVE_RATIO:
        t, pmap = FEW_LABELS_GAMMA * gammas[-1] / GAMMA_GRID[-1], None
    elif not isinstance(n_components, str):
        t, pmap = 0.0, None
    else:  # no manifold to follow: the clusters, in the kernel's leading directions
        m = defo.eigenvectors.shape[0]
        r = min(m, max(2, n_classes, int(np.ceil(m * FEW_LABELS_RANK_FRACTION))))
        t, pmap = 0.0, principal_map(defo, 0.0, r, n)
    return _Choice(t, pmap, FEW_LABELS_PENALTY, None, None, "few_labels")


def _leave_one_out_choice(G_l, T, kind, defo, n, gammas, n_components, selection, maps=None):
    """t and the ridge penalty by leave-one-out over the labeled rows (``G_l``, targets
    ``T``), then, with ``n_components="auto"``, the rank with the penalty. ``maps``: a
    dict of the principal maps already computed, by t (filled here), or None."""
    classification = kind == "classification"
    sel = select_gamma_penalty(
        G_l, defo, T, n, ts=gammas, alphas=PENALTY_GRID, classification=classification,
        rule=selection,
    )  # fmt: skip
    # responses have no error rate (its column is NaN): their record is the squared
    # error alone, so that a fitted factor holds finite numbers only (and saves)
    scores = sel.scores if classification else sel.scores[..., 1:]
    if not isinstance(n_components, str):
        return _Choice(sel.t, None, sel.penalty, scores, None, "leave_one_out")
    # "auto": the rank with the penalty
    ranks = rank_candidates(defo.eigenvectors.shape[0], T.shape[1] if classification else 1)
    leading = None
    if maps is not None:
        if sel.t not in maps:
            maps[sel.t] = principal_map(defo, sel.t, max(ranks), n)
        leading = maps[sel.t]
    rank = select_rank(G_l, defo, sel.t, T, n, ranks=ranks, alphas=PENALTY_GRID, leading=leading)
    return _Choice(sel.t, rank.map, rank.penalty, scores, rank.scores, "leave_one_out")


def _final_map(defo, choice, n, n_components) -> PrincipalMap:
    """The map of the fit: the principal directions chosen with t when fewer than m,
    else ``n_components``' leading directions when it is a number, else R(t)."""
    pmap, m = choice.pmap, defo.eigenvectors.shape[0]
    if pmap is not None:
        return pmap if pmap.rank < m else graph_factor_map(defo, choice.t, n)
    fixed = isinstance(n_components, numbers.Integral) and not isinstance(n_components, bool)
    return graph_factor_map(defo, choice.t, n, int(n_components) if fixed else None)

"""Few labels: what replaces leave-one-out when a class has a handful of labeled rows.

The math of the semi-supervised default's few-label regime (used by
:class:`lorak.GraphRegularizedFactor` and :class:`lorak.SemiSupervisedFactorClassifier`):
the counts' decision (:func:`few_labels`; :func:`lorak.learn.fit_graph_factor` measures
it against leave-one-out by cross-validation where the labels allow,
:data:`REGIME_CV_FOLDS`, :data:`REGIME_TEST_LEVEL`), whether the graph carries
information (:func:`graph_energy_ratio`, ρ = tr(GᵀLG) / tr(G_cᵀG_c), about 1 for a
graph of random edges), class-mass normalization under a class prior
(:func:`prior_from_counts`, :func:`estimate_class_prior`, :func:`balance_offsets`) and
the cluster assumption by a self-trained ridge (:func:`self_training_ridge`). The
reasons and the numbers behind each rule are in the user guide, "Graph-regularized
factors", section "Few labels".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve, solve

from ._graph_factor import _arg_array, _arg_codes, _arg_int, _arg_real, ridge_targets

__all__ = [
    "FEW_LABELS_GAMMA",
    "FEW_LABELS_PENALTY",
    "FEW_LABELS_RANK_FRACTION",
    "GRAPH_INFORMATIVE_RATIO",
    "LEAVE_ONE_OUT_MIN_LABELED",
    "MATCHED_PRIOR_MAX_CLASSES",
    "MIN_LABELS_PER_CLASS",
    "PRIOR_BOOTSTRAP",
    "PRIOR_TEST_LEVEL",
    "REGIME_CV_FOLDS",
    "REGIME_CV_ROWS",
    "REGIME_LEVEL_AT_SWITCH",
    "REGIME_MEASURED_BELOW",
    "REGIME_TEST_LEVEL",
    "SELF_TRAINING_WEIGHTS",
    "PriorEstimate",
    "SelfTrainingFit",
    "balance_offsets",
    "estimate_class_prior",
    "few_labels",
    "few_labels_decision",
    "graph_energy_ratio",
    "prior_from_counts",
    "regime_test_level",
    "self_training_ridge",
]

#: A classification target has few labels when its smallest class has fewer labeled
#: rows than this: a 10-fold cross-validation (or leave-one-out) then scores a class
#: on fewer than one row per fold.
MIN_LABELS_PER_CLASS = 10
#: ... unless there are at least this many labeled rows in all and two in every class:
#: the leave-one-out choice of the graph weight, rank and penalty then averages its
#: squared error over that many rows, whatever the number of classes (with 11 or more
#: classes, 100 labels leave every class under 10 rows; chosen on segment and digits).
LEAVE_ONE_OUT_MIN_LABELED = 30
#: Folds of the cross-validation over the labeled rows that measures the regime —
#: the few-label rules or leave-one-out, each with its head — whenever two classes have
#: :data:`REGIME_MEASURED_FROM` labeled rows or more, and the smallest fewer than
#: :data:`REGIME_MEASURED_BELOW` (below 2: no measurement, the counts above decide).
#: Three: a fold's fit keeps two thirds of the labels, close to the count the regime
#: is chosen for, with a third held out to score it on.
REGIME_CV_FOLDS = 3
#: The rows held out by that cross-validation: those of the classes with this many
#: labeled rows or more (two classes at least). A class with fewer keeps its rows in
#: every fold's training rows, as in the fit the fold stands for: held out, a class of
#: two would leave one, which the leave-one-out choice inside the fold never predicts
#: right, and the fold would score a degenerate choice (it switched Text's one such
#: book split, 2 and 8 labeled rows, to leave-one-out at 50 % error, and cost usps
#: 3 points at 2 per class).
REGIME_MEASURED_FROM = 3
#: The regime is measured while the smallest class has fewer labeled rows than this
#: (three times :data:`MIN_LABELS_PER_CLASS`): around the counts' switch, where the
#: better regime is a property of the data. Above, leave-one-out averages over 30 rows
#: of every class and more, and the measurement — three more choices of γ and heads,
#: whose cost grows with the labels — moved the error by 0.35 point or less where it
#: was measured (the book's 100-label splits, 100 labels on splice).
REGIME_MEASURED_BELOW = 30
#: That cross-validation's self-trained head reads at most this many unlabeled rows
#: (drawn at random above).
REGIME_CV_ROWS = 5_000
#: The counts' regime gives way to the other only when the held-out rows prefer it
#: beyond chance: a one-sided sign test on the rows just one regime predicts right, at
#: this level for labels at half or twice the counts' switch and beyond
#: (:func:`regime_test_level`).
REGIME_TEST_LEVEL = 0.1
#: The sign test's level at the counts' switch itself, where a class count of 9 or 10
#: (29 or 30 labeled rows) is no reason to prefer either regime: the regime that alone
#: predicts more held-out rows right is taken (a tie keeps the counts').
REGIME_LEVEL_AT_SWITCH = 0.5
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
#: How the self-trained ridge reads its scores under the class prior
#: (:func:`self_training_ridge`'s ``class_mass``): chosen by :func:`class_mass_reading`,
#: exact shares, or class masses.
CLASS_MASS_READINGS = ("auto", "exact", "normalized")
#: The unlabeled rows' weights in the self-training's successive refits.
SELF_TRAINING_WEIGHTS = (0.01, 0.03, 0.1, 0.3, 1.0)
#: Level of the test that keeps the class prior uniform.
PRIOR_TEST_LEVEL = 0.05
#: Bootstrap replicates behind the noise of the class prior read from the unlabeled
#: rows (:func:`estimate_class_prior`).
PRIOR_BOOTSTRAP = 100
#: The class prior is read from the unlabeled rows for at most this many classes: with
#: more, the match on the simplex with one to five labeled rows per class is sparse
#: and biased, more than its bootstrap spread says, and it cost 2–9 points on digits,
#: segment, mnist and wine (``lorak bench ssl``); the counts' reading stays there.
MATCHED_PRIOR_MAX_CLASSES = 2


def few_labels(codes_l, n_classes: int | None = None) -> bool:
    """Whether integer class codes (0 … c−1) of the labeled rows are too few for a
    cross-validated choice: the smallest class has fewer than
    :data:`MIN_LABELS_PER_CLASS` rows, and the labeled rows are fewer than
    :data:`LEAVE_ONE_OUT_MIN_LABELED` or some class has a single one."""
    return _switch_distance(codes_l, n_classes, "few_labels") < 1.0


def _switch_distance(codes_l, n_classes, owner) -> float:
    """r = max(n_min / :data:`MIN_LABELS_PER_CLASS`, l / :data:`LEAVE_ONE_OUT_MIN_LABELED`)
    of the labeled rows' class codes — the second only while every class has two rows;
    n_min the smallest class's labeled rows, l all of them; 0 without labels or with a
    class of none. It says how far the counts stand from their switch, which is at
    r = 1 (:func:`few_labels` exactly when r < 1). Bad codes get an error naming
    ``owner``."""
    n_classes = _arg_int(n_classes, "n_classes", owner, allow_none=True)
    codes_l = _arg_codes(codes_l, "codes_l", owner, n_classes)
    if codes_l.size == 0:
        return 0.0
    c = int(codes_l.max()) + 1 if n_classes is None else n_classes
    smallest = int(np.bincount(codes_l, minlength=c).min())
    r = smallest / MIN_LABELS_PER_CLASS
    if smallest >= 2:
        r = max(r, codes_l.size / LEAVE_ONE_OUT_MIN_LABELED)
    return r


def regime_test_level(codes_l, n_classes: int | None = None) -> float:
    """The level of the sign test by which the measured regime overrules the counts'
    one, for the labeled rows' class codes: the farther the counts stand from their
    switch, the more they say, and the stronger the evidence asked to overrule them.

    The counts' distance is r = max(n_min / :data:`MIN_LABELS_PER_CLASS`,
    l / :data:`LEAVE_ONE_OUT_MIN_LABELED`) — the second only while every class has two
    rows — n_min the smallest class's labeled rows and l all of them; :func:`few_labels`
    holds exactly when r < 1. The level is
    :data:`REGIME_LEVEL_AT_SWITCH` at r = 1 and falls geometrically in |log₂ r| to
    :data:`REGIME_TEST_LEVEL` at half and at twice the switch (5 or 20 per class), and
    stays there beyond."""
    r = _switch_distance(codes_l, n_classes, "regime_test_level")
    if r == 0.0:  # no labels, or a class with none: nothing is measured
        return REGIME_TEST_LEVEL
    ratio = REGIME_TEST_LEVEL / REGIME_LEVEL_AT_SWITCH
    return float(max(REGIME_TEST_LEVEL, REGIME_LEVEL_AT_SWITCH * ratio ** abs(np.log2(r))))


def few_labels_decision(codes_l, n_classes: int | None = None, *, decided=None) -> bool:
    """The few-label decision of a fit, taken once: ``decided`` when a fit took it on
    these labels already (a bool: :class:`lorak.learn.GraphFactorFit`'s ``few_labels``,
    which :class:`lorak.GraphRegularizedFactor` keeps as ``few_labels_``), else
    :func:`few_labels` of the labeled rows' class codes. The graph factor's choice of γ
    and the semi-supervised classifier's head both read it from here."""
    if decided is not None:
        return bool(decided)
    return few_labels(codes_l, n_classes)


def graph_energy_ratio(gram, laplacian_gram, mean_row, n_rows: int) -> float:
    """ρ = tr(GᵀLG) / tr(G_cᵀG_c): the graph's Dirichlet energy of the factor's rows per
    unit of their variance (≈ 1 for a graph of random edges, → 0 where neighbours
    agree). ``gram`` GᵀG, ``laplacian_gram`` GᵀLG, ``mean_row`` ḡ (m,), over
    ``n_rows`` rows. NaN when the rows have no variance."""
    owner = "graph_energy_ratio"
    gram = _arg_array(gram, "gram", owner, ndim=2, min_rows=1)
    m = gram.shape[0]
    if gram.shape[1] != m:
        raise ValueError(f"{owner}: gram (GᵀG) must be square (m × m); got shape {gram.shape}")
    laplacian_gram = _arg_array(laplacian_gram, "laplacian_gram", owner, ndim=2, rows=m, cols=m)
    mean_row = _arg_array(mean_row, "mean_row", owner, ndim=1, rows=m)
    n_rows = _arg_int(n_rows, "n_rows", owner)
    var = float(np.trace(gram)) - n_rows * float(mean_row @ mean_row)
    if not var > 0:
        return float("nan")
    return float(np.trace(laplacian_gram)) / var


def prior_from_counts(counts, *, level: float = PRIOR_TEST_LEVEL) -> np.ndarray:
    """The class proportions the labeled counts give: uniform unless the counts reject
    equal classes at ``level`` (exact binomial test for two classes, Pearson's χ² for
    more), else the counts' proportions."""
    from scipy.stats import binomtest, chisquare

    owner = "prior_from_counts"
    level = _arg_real(level, "level", owner, strict=True, high=1.0)
    counts = _arg_array(counts, "counts", owner, ndim=1, min_rows=1)
    if np.any(counts < 0) or np.any(counts != np.round(counts)):
        raise ValueError(f"{owner}: counts must be whole numbers ≥ 0 (labeled rows per class)")
    counts = counts.astype(np.int64)
    c, total = counts.size, int(counts.sum())
    uniform = np.full(c, 1.0 / c)
    if c < 2 or total == 0:
        return uniform
    if c == 2:
        p = binomtest(int(counts[0]), total, 0.5).pvalue
    else:
        p = chisquare(counts).pvalue
    return uniform if p >= level else counts / total


@dataclass
class PriorEstimate:
    """A measured class prior and the evidence behind it: of
    :func:`estimate_class_prior` (few labels: the class means of the rows), or of the
    semi-supervised classifier's head with enough labels (its class mean scores)."""

    prior: np.ndarray  # (c,) the proportions used
    # (c,) the labels' reading: the counts' (:func:`prior_from_counts`) with few labels,
    # the labeled proportions with enough
    labeled: np.ndarray
    matched: np.ndarray  # (c,) the proportions whose mixture of class means is the unlabeled mean
    weight: float  # the share of ``matched`` in the blend with ``labeled`` (0 … 1)
    signal: float  # ‖matched − uniform‖² with few labels, ‖matched − labeled‖² with enough
    noise: float  # Σ_c the variance of matched_c (bootstrap; with enough labels, plus l's)


def _matched_proportions(M, mu):
    """π on the simplex minimizing ‖mu − Σ_c π_c M_c‖² for each stack of class means
    M (b × c × m) against the mean mu (m,): (b × c)."""
    from ._graph_factor import simplex_least_squares

    D = M - mu
    return simplex_least_squares(D @ np.swapaxes(D, 1, 2), ridge=1e-9)


def _two_blocks(F_l, codes_l, F_u, n_classes, owner, *, low):
    """(F_l, codes_l, F_u, n_classes) checked: labeled rows (≥ 1) with one class code each
    (below ``n_classes`` ≥ ``low`` when given), unlabeled rows of the same width (None:
    none); else an error naming ``owner`` and the argument."""
    F_l = _arg_array(F_l, "F_l", owner, ndim=2, min_rows=1)
    m = F_l.shape[1]
    F_u = np.empty((0, m)) if F_u is None else _arg_array(F_u, "F_u", owner, ndim=2, cols=m)
    n_classes = _arg_int(n_classes, "n_classes", owner, low=low, allow_none=True)
    codes_l = _arg_codes(codes_l, "codes_l", owner, n_classes)
    if codes_l.size != F_l.shape[0]:
        raise ValueError(
            f"{owner}: codes_l has {codes_l.size} entries, but F_l has {F_l.shape[0]} rows"
        )
    return F_l, codes_l, F_u, n_classes


def estimate_class_prior(
    F_l, codes_l, F_u, *, n_classes=None, n_boot=PRIOR_BOOTSTRAP, level=PRIOR_TEST_LEVEL, seed=0
) -> PriorEstimate:
    """The class proportions of the unlabeled rows, measured from the data.

    Two readings, blended by how far the data carry them:

    - **the unlabeled rows' mean** in the feature space F is the mixture Σ_c π_c μ_c of
      the class means. The labeled rows of each class estimate μ_c — whether the labels
      were drawn at random or evenly per class, the rows of a class are a sample of
      that class — so π is read off by matching: the proportions on the simplex whose
      mixture of labeled class means is closest to the unlabeled mean (kernel mean
      matching in the factor's space, after du Plessis & Sugiyama 2012);
    - **the labeled counts**, :func:`prior_from_counts` (uniform unless they reject equal
      classes at ``level``).

    With a handful of rows per class the class means are noisy, and so is the match.
    Its noise is measured by a residual bootstrap (``n_boot`` replicates: each class
    mean moved by the mean of as many residuals — rows minus their class mean, pooled
    over the classes with two labeled rows or more, else the unlabeled rows' spread
    around their mean — drawn with replacement), and the matched proportions enter
    with the positive-part James–Stein weight w = max(0, 1 − noise / signal), signal
    the squared distance of the match from equal classes: prior = w·matched +
    (1 − w)·labeled. A match the bootstrap cannot tell from equal classes falls back
    on the counts' reading.

    Parameters
    ----------
    F_l : (l, m) the labeled rows' features; codes_l : (l,) their class codes 0 … c−1.
    F_u : (u, m) the unlabeled rows' features (None or no rows: the counts' reading).
    n_classes : int or None, c (None: the largest code + 1). Every class needs a
        labeled row for the match; otherwise the counts' reading is returned.
    n_boot, level, seed : the bootstrap's replicates and seed, the counts' test level.

    Returns
    -------
    PriorEstimate
    """
    owner = "estimate_class_prior"
    F_l, codes_l, F_u, n_classes = _two_blocks(F_l, codes_l, F_u, n_classes, owner, low=1)
    m = F_l.shape[1]
    n_boot = _arg_int(n_boot, "n_boot", owner, low=1)
    c = int(codes_l.max()) + 1 if n_classes is None else n_classes
    counts = np.bincount(codes_l, minlength=c)
    labeled = prior_from_counts(counts, level=level)
    if not 2 <= c <= MATCHED_PRIOR_MAX_CLASSES or F_u.shape[0] == 0 or np.any(counts == 0):
        return PriorEstimate(labeled, labeled, labeled.copy(), 0.0, 0.0, 0.0)
    mu = F_u.mean(axis=0)
    M = np.zeros((c, m))
    np.add.at(M, codes_l, F_l)
    M /= counts[:, None]
    matched = _matched_proportions(M[None], mu)[0]
    pool = F_l - M[codes_l]
    keep = counts[codes_l] > 1
    if np.count_nonzero(keep) >= 2:
        k = np.count_nonzero(keep)
        pool = pool[keep] * np.sqrt(k / max(k - np.count_nonzero(counts > 1), 1))
    else:  # no class has two rows: the unlabeled rows' spread bounds the classes' own
        pool = F_u - mu
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, pool.shape[0], size=(n_boot, int(counts.sum())))
    ends = np.cumsum(counts)[:-1]
    Mb = np.stack([M + np.stack([p.mean(axis=0) for p in np.split(pool[d], ends)]) for d in draws])
    noise = float(np.sum(_matched_proportions(Mb, mu).var(axis=0)))
    signal = float(np.sum((matched - 1.0 / c) ** 2))
    w = max(0.0, 1.0 - noise / signal) if signal > 0 else 0.0
    prior = w * matched + (1.0 - w) * labeled
    return PriorEstimate(prior / prior.sum(), labeled, matched, w, signal, noise)


def balance_offsets(D, prior, *, n_iter: int = 200) -> np.ndarray:
    """Offsets b (c,) such that argmax(D + b) over the rows of D (n × c scores) gives
    class j its share of the rows, k_j = n·π_j rounded (largest remainders, Σk = n):
    exactly, or as close as rows with equal scores allow. ``prior``: c numbers ≥ 0,
    normalized to sum 1.

    Two classes: the prior's quantile of the score difference. More: b minimizes the
    dual of the transport of the rows onto the classes with capacities k,
    f(b) = Σ_i max_j (D_ij + b_j) − Σ_j k_j b_j (convex and piecewise linear; where
    its subgradient, the counts less k, is zero, argmax(D + b) gives the counts k), one
    offset at a time: class j's offset, the others fixed, goes to the midpoint between
    the k_j-th and (k_j + 1)-th smallest of the rows' thresholds
    max_{l≠j}(D_il + b_l) − D_ij, so that exactly k_j rows take class j. The classes
    take turns, the most under-filled first, for at most ``n_iter`` rounds, until every
    count is its k_j, or until three rounds (``BALANCE_PATIENCE``) bring the counts no
    closer (rows with equal scores move together). Turns can circle a corner of f a
    few rows short of k: those rows are then moved along the cheapest paths between
    the classes (successive shortest paths of min-cost flow over the c classes), and
    the offsets set to the middle of the polytope that keeps every row in its class
    (difference constraints: its margin is the smallest cycle mean, Karp's). The
    offsets of the closest counts are returned. A step is a pass over the n × c
    scores; a handful of rounds reach the counts on continuous scores."""
    owner = "balance_offsets"
    D = _arg_array(D, "D", owner, ndim=2)
    n, c = D.shape
    prior = _arg_array(prior, "prior", owner, ndim=1, rows=c)
    if np.any(prior < 0) or (c and not prior.sum() > 0):
        raise ValueError(f"{owner}: prior must hold numbers ≥ 0 with a positive sum")
    n_iter = _arg_int(n_iter, "n_iter", owner)
    if n == 0 or c < 2:
        return np.zeros(c)
    prior = prior / prior.sum()
    if c == 2:
        s = D[:, 1] - D[:, 0]
        cut = float(np.quantile(s, prior[0]))
        return np.array([0.0, -cut])
    return _transport_offsets(D, _class_capacities(prior, n), n_iter)


#: :func:`balance_offsets` stops after this many rounds without counts closer to the
#: prior's (rows with equal scores, which no offset separates).
BALANCE_PATIENCE = 3


def _class_capacities(prior, n):
    """n·π rounded to whole rows by largest remainders (ties: the lower class), Σ = n."""
    raw = prior * n
    k = np.floor(raw).astype(np.int64)
    short = n - int(k.sum())
    k[np.argsort(-(raw - k), kind="stable")[:short]] += 1
    return k


def _transport_offsets(D, k, n_iter):
    """The offsets of :func:`balance_offsets` for three classes and more (capacities k):
    the offsets' turns (:func:`_offset_turns`); where they stop a few rows short (one
    offset at a time can circle a corner of the dual without reaching it), those rows
    moved along cheapest paths between the classes (:func:`_move_rows`) and the
    offsets set back in the middle of what keeps every row in its class
    (:func:`_central_offsets`). The offsets of the closest counts are returned."""
    b, err = _offset_turns(D, k, n_iter)
    if err == 0 or err > 4 * D.shape[1]:  # many rows off: equal scores, not a corner
        return b
    a = _move_rows(D, b, np.argmax(D + b, axis=1), k, err // 2)
    centred = _central_offsets(D, a)
    if centred is not None and _count_error(D, centred, k) < err:
        return centred
    return b


def _count_error(D, b, k):
    """Σ_j |count_j − k_j| of argmax(D + b)."""
    counts = np.bincount(np.argmax(D + b, axis=1), minlength=D.shape[1])
    return int(np.abs(counts - k).sum())


def _offset_turns(D, k, n_iter):
    """(offsets, Σ_j |count_j − k_j|) of the offsets' turns: each class's offset in turn
    set so that exactly k_j rows take the class, the others fixed (the most
    under-filled class first), for at most ``n_iter`` rounds, until the counts are k,
    or ``BALANCE_PATIENCE`` rounds bring them no closer, or a few rows (up to 2c) are
    off and a round placed fewer than c; the closest counts seen."""
    c = D.shape[1]
    Dt = np.ascontiguousarray(D.T)  # a class's scores contiguous: maxima over classes
    T = Dt.copy()  # Dt + b, row by row
    b = np.zeros(c)
    best, stale, last = None, 0, None
    for _ in range(n_iter):
        counts = np.bincount(_column_argmax(T), minlength=c)
        err = int(np.abs(counts - k).sum())
        if best is None or err < best[1]:
            best, stale = (b.copy(), err), 0
        else:
            stale += 1
        # a few rows off and a round (c passes over the rows) now places fewer than c
        # of them: moving them one by one costs less (about a pass each)
        if err <= 4 * c and last is not None and last - err < 2 * c:
            return best
        if err == 0 or stale >= BALANCE_PATIENCE:
            return best
        last = err
        for j in np.argsort(counts - k, kind="stable"):  # most under-filled first
            T[j] = -np.inf
            thr = T.max(axis=0) - Dt[j]  # row i takes class j iff b_j > thr_i
            b[j] = _offset_for_count(thr, int(k[j]))
            np.add(Dt[j], b[j], out=T[j])
    counts = np.bincount(_column_argmax(T), minlength=c)
    err = int(np.abs(counts - k).sum())
    return (b, err) if err < best[1] else best


def _column_argmax(T):
    """``np.argmax(T, axis=0)`` (ties: the first row) for a C-ordered c × n array, by c
    passes over its rows instead of a strided scan."""
    best, idx = T[0].copy(), np.zeros(T.shape[1], dtype=np.intp)
    for j in range(1, T.shape[0]):
        better = T[j] > best
        best[better], idx[better] = T[j][better], j
    return idx


def _move_rows(D, b, a, k, n_moves):
    """The assignment ``a`` (each row's class; every row at the maximum of D + b) with
    up to ``n_moves`` rows of excess moved to classes short of their capacity k, each
    along the cheapest path of moves between classes (Dijkstra over the c classes; a
    move of row i from class u to v costs (D + b)_iu − (D + b)_iv ≥ 0), the offsets
    raised by the path's distances so that every row stays at a maximum (the
    successive shortest paths of min-cost flow). The cheapest move from u to v is
    min over the rows of u of D_iu − D_iv, plus b_u − b_v: kept per class, and
    recomputed only for the classes a path changed. ``a`` is updated in place and
    returned."""
    c = D.shape[1]
    b = b.copy()
    counts = np.bincount(a, minlength=c)
    members = [np.flatnonzero(a == u) for u in range(c)]
    M = np.full((c, c), np.inf)  # the cheapest move from class u to v, less b_u − b_v ...
    arg = np.zeros((c, c), dtype=np.int64)  # ... and its row

    def refresh(u):
        rows = members[u]
        M[u], arg[u] = np.inf, 0
        if rows.size:
            G = D[rows, u][:, None] - D[rows]
            j = np.argmin(G, axis=0)
            M[u], arg[u] = G[j, np.arange(c)], rows[j]
            M[u, u] = np.inf

    for u in range(c):
        refresh(u)
    for _ in range(n_moves):
        over, short = counts > k, np.flatnonzero(counts < k)
        if not over.any() or not short.size:
            break
        W = np.maximum(M + (b[:, None] - b[None, :]), 0.0)  # ≥ 0 but for round-off
        d, pred = _cheapest_paths(W, over)
        t = int(short[np.argmin(d[short])])
        if not np.isfinite(d[t]):
            break
        b += np.minimum(d, d[t])  # every row stays at a maximum; the path's moves tie
        v, changed = t, {t}
        while pred[v] >= 0:
            u = int(pred[v])
            i = int(arg[u, v])
            a[i] = v
            members[u] = members[u][members[u] != i]
            members[v] = np.append(members[v], i)
            changed.add(u)
            v = u
        counts[t] += 1
        counts[v] -= 1
        for u in changed:
            refresh(u)
    return a


def _cheapest_paths(W, sources):
    """Dijkstra on a dense c × c matrix of nonnegative move costs from every class in
    ``sources`` (mask): (distances, predecessors; −1 at a source or unreached)."""
    c = W.shape[0]
    d = np.where(sources, 0.0, np.inf)
    pred = np.full(c, -1)
    done = np.zeros(c, dtype=bool)
    for _ in range(c):
        u = int(np.argmin(np.where(done, np.inf, d)))
        if done[u] or not np.isfinite(d[u]):
            break
        done[u] = True
        via = d[u] + W[u]
        better = (via < d) & ~done
        d[better], pred[better] = via[better], u
    return d, pred


def _central_offsets(D, a):
    """Offsets under which every row's class in ``a`` is its strict argmax, each by the
    same largest margin δ/2: the differences b_u − b_v ≥ L(u, v) + δ, L(u, v) =
    max over the rows of u of D_iv − D_iu, hold for every δ up to the smallest mean
    of −L around a cycle of classes (Karp), and the offsets are the shortest paths of
    that system (Bellman–Ford). None when that mean is not positive: rows with equal
    scores in two classes, which no offsets separate."""
    c = D.shape[1]
    L = np.full((c, c), -np.inf)
    for u in np.unique(a):
        rows = D[a == u]
        L[u] = np.max(rows - rows[:, [u]], axis=0)
        L[u, u] = -np.inf
    Wc = -L  # the constraint b_v ≤ b_u + Wc(u, v) − δ
    F = np.zeros((c + 1, c))  # F[m, v]: the lightest walk of m edges ending at v
    for m in range(1, c + 1):
        F[m] = np.min(F[m - 1][:, None] + Wc, axis=0)
    ends = np.isfinite(F[c])
    if ends.any():
        with np.errstate(invalid="ignore"):
            ratios = (F[c][None, ends] - F[:c, ends]) / (c - np.arange(c))[:, None]
        ratios = np.where(np.isnan(ratios), -np.inf, ratios)
        mean = float(np.min(np.max(ratios, axis=0)))
    else:
        mean = np.inf  # no cycle: nothing bounds δ
    if not mean > 0:
        return None
    delta = 0.5 * mean if np.isfinite(mean) else 1.0 + float(np.max(np.abs(D)))
    b = np.zeros(c)
    for _ in range(c):
        b = np.minimum(b, np.min(b[:, None] + Wc - delta, axis=0))
    return b


def _offset_for_count(thr, kj):
    """An offset that exactly ``kj`` of the thresholds ``thr`` lie below, midway in its
    gap; where equal thresholds straddle the kj-th, the count nearest kj that a gap
    allows (the lower one on a tie)."""
    n = thr.size
    if kj <= 0:
        return _below(float(thr.min()))
    if kj >= n:
        return _above(float(thr.max()))
    part = np.partition(thr, (kj - 1, kj))
    lo, hi = float(part[kj - 1]), float(part[kj])
    if lo < hi:
        return 0.5 * lo + 0.5 * hi
    under, over = thr[thr < lo], thr[thr > lo]  # the tied value lo: below it or above it
    if under.size and (kj - under.size <= (n - over.size) - kj or not over.size):
        return 0.5 * float(under.max()) + 0.5 * lo
    if over.size:
        return 0.5 * lo + 0.5 * float(over.min())
    return _below(lo) if kj < n - kj else _above(lo)


def _below(v):
    """A number clearly below v (a class no row should take)."""
    return v - (1.0 + abs(v))


def _above(v):
    return v + (1.0 + abs(v))


class _Moments:
    """Σ f fᵀ, Σ f and n of a block of rows, so that a weighted ridge over two blocks
    with one weight each is an m × m solve (no pass over the rows per weight)."""

    def __init__(self, F, gram=None, total=None):
        self.F = F
        self.gram = F.T @ F if gram is None else gram
        self.sum = F.sum(axis=0) if total is None else total
        self.n = F.shape[0]

    def plus(self, rows):
        """The moments of these rows with ``rows`` below them (only ``rows`` read)."""
        F = np.vstack([self.F, rows])
        return _Moments(F, self.gram + rows.T @ rows, self.sum + rows.sum(axis=0))


def _two_block_ridge(lab, T_l, unl, T_u, w_u, alpha):
    """(W (m × c), b (c,)): min Σ_l ‖T_i − F_i W − b‖² + w_u Σ_u ‖T_i − F_i W − b‖²
    + α‖W‖², the intercept unpenalized; ``lab``/``unl`` the two blocks' moments."""
    sw = lab.n + w_u * unl.n
    mu_f = (lab.sum + w_u * unl.sum) / sw
    t_sum = T_l.sum(axis=0) + (w_u * T_u.sum(axis=0) if w_u else 0.0)
    mu_t = t_sum / sw
    A = lab.gram + w_u * unl.gram if w_u else lab.gram.copy()
    A -= sw * np.outer(mu_f, mu_f)
    A[np.diag_indices_from(A)] += alpha
    rhs = lab.F.T @ T_l - sw * np.outer(mu_f, mu_t)
    if w_u:
        rhs += w_u * (unl.F.T @ T_u)
    try:  # A is positive definite (α > 0): Cholesky, about twice as fast as LDLᵀ
        W = cho_solve(cho_factor(A, check_finite=False), rhs, check_finite=False)
    except LinAlgError:  # round-off took a tiny α's system off positive definite
        W = solve(A, rhs, assume_a="sym")
    return W, mu_t - mu_f @ W


@dataclass
class SelfTrainingFit:
    """The self-trained ridge: decision = F coefᵀ + intercept (the prior's reading
    folded in)."""

    coef: np.ndarray  # (c, m)
    intercept: np.ndarray  # (c,)
    prior: np.ndarray  # (c,)
    n_changed: list  # unlabeled rows whose label changed, per step
    class_mass: str = "exact"  # how the scores were read under the prior
    estimate: PriorEstimate | None = None  # the prior's evidence, when measured here


def self_training_ridge(
    F_l,
    codes_l,
    F_u,
    alpha,
    *,
    n_classes=None,
    prior=None,
    weights=SELF_TRAINING_WEIGHTS,
    class_mass="auto",
) -> SelfTrainingFit:
    """A ridge classifier (±1 one-vs-rest targets) self-trained on unlabeled rows under a
    class prior.

    Fit on the labeled rows F_l (codes 0 … c−1); label the unlabeled rows F_u by the
    argmax of their scores under the prior (``balance_offsets``); then, for each
    weight w in ``weights``, refit on all rows — labeled rows weight 1, unlabeled rows
    weight w with their current labels — and label them again. The returned decision
    includes the final offsets, so ``argmax(F coefᵀ + intercept)`` is the prediction for
    any row. ``prior`` None: :func:`estimate_class_prior` of these rows; else c numbers
    ≥ 0, normalized to sum 1. ``F_u`` None or with no rows: the ridge on the labeled
    rows alone.

    ``class_mass`` says how the scores are read under the prior: "exact" gives each
    class its share of the unlabeled rows, n·π_c (:func:`balance_offsets`); "normalized"
    shifts each class's scores to start at zero over the unlabeled rows and scales them
    so that their mean is π_c (class mass normalization, after Zhu, Ghahramani &
    Lafferty 2003), so that a class takes the rows its scores claim. Exact shares are
    right when the prior is; a uniform prior on classes of unequal sizes moves whole
    clusters, where masses follow the data. But where classes overlap in the features,
    masses let a class absorb its neighbours. "auto" (:func:`class_mass_reading`) reads
    a known prior — given, or measured from the unlabeled rows (two classes) — exactly;
    the counts' reading of three classes or more, an assumption of equal classes, as
    masses, unless the masses predict fewer of the labeled rows right than exact shares
    (then exactly). Either way the decision stays linear: F coefᵀ + intercept with the
    reading folded in. The fit records the reading taken (``class_mass``) and, with
    ``prior`` None, the prior's evidence (``estimate``).
    """
    owner = "self_training_ridge"
    F_l, codes_l, F_u, n_classes = _two_blocks(F_l, codes_l, F_u, n_classes, owner, low=2)
    c = int(codes_l.max()) + 1 if n_classes is None else n_classes
    if c < 2:
        raise ValueError(f"{owner}: codes_l holds one class; a classifier needs two at least")
    alpha = _arg_real(alpha, "alpha", owner, strict=True)
    if weights is None or isinstance(weights, (str, bytes)) or np.ndim(weights) != 1:
        raise TypeError(f"{owner}: weights must be a 1-d sequence of numbers ≥ 0; got {weights!r}")
    weights = tuple(_arg_real(w, "each of weights", owner) for w in weights)
    if prior is not None:
        prior = _arg_array(prior, "prior", owner, ndim=1, rows=c)
        if np.any(prior < 0) or not prior.sum() > 0:
            raise ValueError(f"{owner}: prior must hold {c} numbers ≥ 0 with a positive sum")
    if not isinstance(class_mass, str) or class_mass not in CLASS_MASS_READINGS:
        raise ValueError(
            f"{owner}: class_mass must be one of {CLASS_MASS_READINGS}; got {class_mass!r}"
        )
    return _self_train(F_l, codes_l, _Moments(F_u), alpha, c, prior, weights, class_mass)


def class_mass_reading(class_mass, n_classes, *, prior_given) -> tuple:
    """The readings ``class_mass`` lets the self-trained ridge take, in order of
    preference. "auto": ("exact",) where the prior is known — given (``prior_given``),
    or measured from the unlabeled rows (:func:`estimate_class_prior` for at most
    :data:`MATCHED_PRIOR_MAX_CLASSES` classes); where it is the labeled counts' reading
    of more classes — equal classes unless the counts reject them, an assumption —
    ("normalized", "exact"): class masses, unless they predict fewer of the labeled rows
    right than exact shares do (the fit then keeps the exact reading: a class whose
    labeled rows the masses give to another was absorbed by a neighbour it overlaps).
    "exact" or "normalized": that reading alone."""
    if class_mass != "auto":
        return (class_mass,)
    if prior_given or n_classes <= MATCHED_PRIOR_MAX_CLASSES:
        return ("exact",)
    return ("normalized", "exact")


def _self_train(F_l, codes_l, unl, alpha, c, prior, weights, mass="auto") -> SelfTrainingFit:
    """:func:`self_training_ridge` on checked arguments, the unlabeled rows as their
    moments ``unl`` (shared by fits whose unlabeled rows differ by a few)."""
    readings = class_mass_reading(mass, c, prior_given=prior is not None)
    estimate = None
    if prior is None:
        estimate = estimate_class_prior(F_l, codes_l, unl.F, n_classes=c)
        prior = estimate.prior
    prior = prior / prior.sum()
    T_l = ridge_targets(codes_l, c)
    lab = _Moments(F_l)
    best, best_wrong = None, None
    for reading in readings:
        fit = _self_train_read(lab, T_l, unl, alpha, c, prior, weights, reading)
        if unl.F.shape[0] == 0 or len(readings) == 1:
            best = fit
            break
        wrong = int(
            np.count_nonzero(np.argmax(F_l @ fit.coef.T + fit.intercept, axis=1) != codes_l)
        )
        if best is None or wrong < best_wrong:
            best, best_wrong = fit, wrong
        if wrong == 0:  # no reading predicts more of them right
            break
    best.estimate = estimate
    return best


def _self_train_read(lab, T_l, unl, alpha, c, prior, weights, mass) -> SelfTrainingFit:
    """The self-training of :func:`_self_train` with the scores read one way, ``mass``."""
    F_u = unl.F
    W, b = _two_block_ridge(lab, T_l, unl, None, 0.0, alpha)
    changed = []
    if F_u.shape[0] == 0:
        return SelfTrainingFit(W.T.copy(), b, prior, changed, mass)
    D = F_u @ W + b
    shift, scale = _read_scores(D, prior, mass)
    labels = np.argmax((D - shift) * scale, axis=1)
    for w_u in weights:
        W, b = _two_block_ridge(lab, T_l, unl, ridge_targets(labels, c), float(w_u), alpha)
        D = F_u @ W + b
        shift, scale = _read_scores(D, prior, mass)
        new = np.argmax((D - shift) * scale, axis=1)
        changed.append(int(np.count_nonzero(new != labels)))
        labels = new
    return SelfTrainingFit(W.T * scale[:, None], (b - shift) * scale, prior, changed, mass)


def _read_scores(D, prior, mass):
    """(shift, scale), both (c,): the unlabeled rows' scores D (u × c) are read under the
    prior as (D − shift)·scale, column by column. "exact": scale 1 and shift minus
    :func:`balance_offsets` — each class takes its share of the rows. "normalized":
    each column shifted to start just below zero over the rows and scaled so that its
    mean is the class's prior share (class mass normalization) — a class takes the rows
    its scores claim, and only the scores' masses follow the prior."""
    if mass == "exact":
        return -balance_offsets(D, prior), np.ones(D.shape[1])
    low, high = D.min(axis=0), D.max(axis=0)
    shift = low - 1e-9 * (1.0 + (high - low))  # no column has zero mass
    return shift, prior / (D - shift).mean(axis=0)

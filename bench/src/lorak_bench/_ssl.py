"""The semi-supervised protocol (Zhang et al. 2017, §6): a few labeled rows drawn
evenly over the classes per repetition, the error on the other rows.

Shared by the generalized Nyström experiments (``gnys``, ``gnys-alignment``,
``gnys-beta``, ``gnys-mkl``, ``gnys-labels``):

- :func:`ssl_spec` — a dataset as the protocol loads it: LIBSVM sets scaled per feature
  to [−1, 1] over all rows (``svm-scale``), SSL-book sets as distributed, labels recoded
  0…c−1 (−1 marks an unlabeled row);
- :func:`draw_labeled`, :func:`labeled_rows`, :func:`semi_labels` — the repetition's
  labeled rows (from its seed, the same for every method) and the −1-coded targets;
- :func:`draw_random`, :func:`draw_per_class` — labeled rows as they come (a uniform
  random sample in which every class appears) and exactly k rows per class (``ssl``);
- :func:`stratified_subsample` — a fixed, seeded, class-stratified subset of a large set;
- :func:`unlabeled_error` — the error (%) on the rows that were not labeled;
- :func:`prepare` — the context: the Gaussian width b₀ (mean pairwise squared distance
  over all rows) and the landmark count m;
- :func:`repetition_landmarks` — the repetition's k-means landmarks, computed once and
  shared by every column that uses them (the runner charges their cost to each);
- :func:`factor_column` — a column: a factor fitted on all rows and a linear SVM on the
  labeled rows' features (:class:`lorak.SemiSupervisedFactorClassifier`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from lorak.kernels import Gaussian
from lorak.landmarks import select_landmarks

from ._runner import load_dataset
from ._spec import DatasetSpec, LoadedData, Method, Metric

__all__ = [
    "N_LABELED",
    "SSLOutput",
    "draw_labeled",
    "draw_per_class",
    "draw_random",
    "factor_column",
    "labeled_rows",
    "prepare",
    "repetition_landmarks",
    "scale_features",
    "semi_labels",
    "ssl_metric",
    "ssl_spec",
    "stratified_subsample",
    "unlabeled_error",
]

N_LABELED = 100
M_RATIO = 0.1
M_CAP = 1000


# ---------------------------------------------------------------- data


def scale_features(X):
    """Per-feature min–max scaling to [−1, 1] over all rows (constant features → 0)."""
    X = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
    lo = X.min(axis=0)
    span = X.max(axis=0) - lo
    span[span == 0] = 1.0
    out = 2.0 * (X - lo) / span - 1.0
    out[:, (X.max(axis=0) - lo) == 0] = 0.0
    return out


def _recode(y):
    return np.unique(np.asarray(y), return_inverse=True)[1].astype(np.int64)


def _loader(classes=None):
    """A DatasetSpec loader: LIBSVM sets scaled, SSL sets as given, labels 0…c−1."""

    def load(spec: DatasetSpec, data_home) -> LoadedData:
        base = DatasetSpec(spec.name, split=spec.split, load_kwargs=spec.load_kwargs)
        data = load_dataset(base, data_home)
        X, y = data.X, np.asarray(data.y)
        if classes is not None:
            keep = np.isin(y, classes)
            X, y = X[keep], y[keep]
        ssl = spec.name.startswith("ssl-")
        if not ssl:
            X = scale_features(X)
        meta = dict(data.meta)
        meta.update(
            {
                "scaling": "as distributed" if ssl else "per feature to [-1, 1]",
                "classes_kept": None if classes is None else list(map(int, classes)),
            }
        )
        return LoadedData(spec=spec, X=X, y=_recode(y), meta=meta)

    return load


def ssl_spec(name, label, *, split=None, classes=None, stand_in=False) -> DatasetSpec:
    """The dataset ``name`` under the protocol's loading (``classes``: keep only these)."""
    return DatasetSpec(name, label=label, split=split, loader=_loader(classes), stand_in=stand_in)


# ---------------------------------------------------------------- labeled rows


def draw_labeled(y, n_labeled, rng) -> np.ndarray:
    """``n_labeled`` rows spread evenly over the classes (sorted indices): n // c per
    class, the remainder to randomly chosen classes."""
    classes = np.unique(y)
    c = classes.size
    quota = np.full(c, n_labeled // c)
    quota[rng.choice(c, n_labeled - quota.sum(), replace=False)] += 1
    picks = []
    for k, q in zip(classes, quota, strict=True):
        rows = np.flatnonzero(y == k)
        picks.append(rng.choice(rows, min(q, rows.size), replace=False))
    return np.sort(np.concatenate(picks))


#: Rejection draws :func:`draw_random` tries before it forces one row per class.
RANDOM_DRAW_TRIES = 1000


def draw_random(y, n_labeled, rng, *, max_tries=RANDOM_DRAW_TRIES) -> np.ndarray:
    """``n_labeled`` rows drawn uniformly at random without replacement, conditioned on
    every class appearing at least once (sorted indices): a user labels a random
    sample and, missing a class, draws again.

    The condition is met by rejection: whole samples are drawn until one holds every
    class, which gives exactly the conditional distribution. After ``max_tries``
    rejected samples (only for a class far rarer than 1/``n_labeled``) one row per class
    is forced, chosen at random within the class, and the rest drawn at random from
    the other rows. ``n_labeled`` below the number of classes raises.
    """
    y = np.asarray(y)
    classes = np.unique(y)
    n = y.shape[0]
    if not classes.size <= n_labeled <= n:
        raise ValueError(
            f"n_labeled must lie between the {classes.size} classes and the {n} rows; "
            f"got {n_labeled}"
        )
    for _ in range(int(max_tries)):
        rows = rng.choice(n, n_labeled, replace=False)
        if np.unique(y[rows]).size == classes.size:
            return np.sort(rows)
    forced = np.array([rng.choice(np.flatnonzero(y == k)) for k in classes])
    rest = np.setdiff1d(np.arange(n), forced)
    more = rng.choice(rest, n_labeled - forced.size, replace=False)
    return np.sort(np.concatenate([forced, more]))


def draw_per_class(y, per_class, rng) -> np.ndarray:
    """Exactly ``per_class`` rows of every class, drawn at random within the class
    (sorted indices); a class with fewer rows raises."""
    y = np.asarray(y)
    picks = []
    for k in np.unique(y):
        rows = np.flatnonzero(y == k)
        if rows.size < per_class:
            raise ValueError(f"class {k} has {rows.size} rows; {per_class} per class asked")
        picks.append(rng.choice(rows, per_class, replace=False))
    return np.sort(np.concatenate(picks))


def stratified_subsample(y, n_rows, seed) -> np.ndarray:
    """A fixed subset of ``n_rows`` rows (sorted indices) keeping the class proportions:
    class k gets its share ``n_rows · n_k / n`` rounded down, the rows left over go to
    the classes with the largest remainders (every class keeps at least one row); the
    rows of each class are drawn at random from ``seed``. All rows when ``n_rows`` ≥ n."""
    y = np.asarray(y)
    n = y.shape[0]
    if n_rows >= n:
        return np.arange(n)
    classes, counts = np.unique(y, return_counts=True)
    share = counts * (n_rows / n)
    quota = np.maximum(np.floor(share).astype(np.int64), 1)
    order = np.argsort(-(share - np.floor(share)), kind="stable")
    for i in order[: max(0, n_rows - int(quota.sum()))]:
        quota[i] += 1
    rng = np.random.default_rng(seed)
    picks = [
        rng.choice(np.flatnonzero(y == k), min(q, c), replace=False)
        for k, q, c in zip(classes, quota, counts, strict=True)
    ]
    return np.sort(np.concatenate(picks))


def labeled_rows(task) -> np.ndarray:
    """The repetition's labeled rows: ``task.params["l"]`` of them (default 100), drawn
    evenly over the classes from the repetition's seed; every method of a repetition
    sees the same rows (for l = 100, those of every experiment of the protocol)."""
    n_lab = int(task.params.get("l", N_LABELED))
    salt = [task.seed, 7] if n_lab == N_LABELED else [task.seed, 7, n_lab]
    return task.shared(
        ("labeled", task.seed, n_lab),
        lambda: draw_labeled(task.data.y, n_lab, np.random.default_rng(salt)),
    )


def semi_labels(task) -> np.ndarray:
    """The targets with every row outside :func:`labeled_rows` set to −1."""
    lab = labeled_rows(task)
    y = task.data.y
    yu = np.full(y.shape[0], -1, dtype=np.int64)
    yu[lab] = y[lab]
    return yu


def unlabeled_error(pred, task) -> float:
    """Error (%) of ``pred`` (one label per row) on the rows that were not labeled."""
    mask = np.ones(task.data.n_samples, dtype=bool)
    mask[labeled_rows(task)] = False
    return 100.0 * float(np.mean(np.asarray(pred)[mask] != task.data.y[mask]))


# ---------------------------------------------------------------- context and landmarks


def prepare(data) -> dict:
    """b₀ (mean pairwise squared distance over all rows), its Gaussian, and m = 10 % of
    n landmarks, at most 1000."""
    kernel = Gaussian(bandwidth="mean_pairwise").resolve(data.X)
    n = data.n_samples
    return {
        "kernel": kernel,
        "b0": float(kernel.bandwidth),
        "m": int(min(max(1, round(M_RATIO * n)), M_CAP)),
    }


def repetition_landmarks(task) -> np.ndarray:
    """The repetition's ``context["m"]`` k-means landmarks (≤ 10 Lloyd iterations,
    seeded from the repetition), computed once and shared by every column."""

    def compute():
        lm = select_landmarks(
            "kmeans",
            task.data.X,
            task.context["m"],
            rng=np.random.default_rng([task.seed, 11]),
            kernel=task.context["kernel"],
        )
        Z = lm.points.toarray() if sp.issparse(lm.points) else np.asarray(lm.points)
        # float32 storage: 30 repetitions of Text's 150 × 11960 centres stay at 0.2 GB
        return Z.astype(np.float32)

    return task.shared(("kmeans", task.seed), compute).astype(np.float64)


# ---------------------------------------------------------------- columns


@dataclass
class SSLOutput:
    """What a column returns: its error on the unlabeled rows and extra numbers."""

    error_pct: float
    extra: dict = field(default_factory=dict)


def factor_column(name, label, make_factor, *, kmeans, extra=None, applies=None, **clf_kw):
    """A column: ``make_factor(task, Z)`` (Z: the shared k-means landmarks when
    ``kmeans``, else None) fitted on all rows inside
    :class:`lorak.SemiSupervisedFactorClassifier` (``clf_kw``, e.g. ``feature_scale``),
    a linear SVM on the labeled rows; ``extra(clf) -> dict`` adds numbers."""

    def run(task):
        from lorak.models import SemiSupervisedFactorClassifier

        Z = repetition_landmarks(task) if kmeans else None
        kw = dict(clf_kw)
        if "classifier" not in kw:  # the paper's classifier: a linear SVM, C = 1
            from sklearn.svm import LinearSVC

            kw["classifier"] = LinearSVC(C=1.0, dual=True, max_iter=10000, random_state=0)
        clf = SemiSupervisedFactorClassifier(make_factor(task, Z), **kw)
        clf.fit(task.data.X, semi_labels(task))
        return SSLOutput(
            unlabeled_error(clf.transduction_, task), {} if extra is None else extra(clf)
        )

    run.__name__ = f"run_{name}"
    return Method(name=name, run=run, label=label, applies=applies)


def ssl_metric(extra_names=()) -> Metric:
    """``error_pct`` and the named ``extra`` numbers of an :class:`SSLOutput` (NaN where
    a column has none)."""
    names = tuple(extra_names)

    def fn(out: SSLOutput, task) -> dict:
        return {"error_pct": out.error_pct, **{k: out.extra.get(k, math.nan) for k in names}}

    return Metric(("error_pct", *names), fn)

"""What the SimpleNPKL experiments share (``npkl-uci``, ``npkl-adult``,
``npkl-active``; not an experiment itself): the repetition's constraints, the
SimpleNPKL and k-means columns, the clustering metric (pairwise accuracy of kernel
k-means on the learned embedding, as many clusters as classes), and the comparison
every table of the paper makes: SimpleNPKL against plain k-means.
"""

from __future__ import annotations

import numpy as np
from sklearn.cluster import KMeans

from lorak.constraints import from_labels
from lorak.estimators import SimpleNPKL
from lorak.metrics import pairwise_cluster_accuracy
from lorak.models import kernel_kmeans_factor

from .._compare import paired_wins, per_rep
from .._preprocess import standardize
from .._spec import FactorOutput, Method, Metric

K_SMALL = 5
B_SMALL = 1.0
RATIO = 0.7
N_INIT = 10
LABELS = {
    "kmeans": "k-means",
    "npkl_sdp_linear": "NPKL+LL (SDP)",
    "npkl_sdp_hinge": "NPKL+HL (SDP)",
    "simplenpkl_linear": "SimpleNPKL+LL",
    "simplenpkl_sqhinge": "SimpleNPKL+SHL",
}


def prepare_standardized(data) -> dict:
    """Every feature standardized (zero mean, unit variance); the class count."""
    standardize(data)
    return {"n_classes": len(np.unique(data.y))}


def task_constraints(task, *, ratio: float = RATIO, n_pairs: int | None = None):
    """The repetition's constraints: the same for every method (seeded by ``task.seed``)."""
    key = ("constraints", task.seed, ratio, n_pairs)
    cache = task.context.setdefault("_constraints", {})
    if key not in cache:
        cache.clear()  # one repetition at a time is enough
        cache[key] = from_labels(task.data.y, ratio=ratio, n_pairs=n_pairs, random_state=task.seed)
    return cache[key]


def npkl_method(
    name: str,
    loss: str,
    *,
    label: str | None = None,
    C: float | None = None,
    B=B_SMALL,
    n_neighbors: int = K_SMALL,
    ratio: float = RATIO,
    n_pairs: int | None = None,
    applies=None,
    **est_kw,
) -> Method:
    """A SimpleNPKL fit on the repetition's constraints (the runner times it; the
    constraints are drawn once per repetition, within the first method's cell).

    ``C=None`` reads C from the grid point (``params["C"]``); so do ``ratio`` /
    ``n_pairs`` / ``active``/``selection`` when present in the params.
    """

    def run(task):
        p = task.params
        c = task_constraints(task, ratio=p.get("ratio", ratio), n_pairs=p.get("n_pairs", n_pairs))
        kw = dict(est_kw)
        if "active" in p:
            kw["active_constraints"] = p["active"] if p["active"] < 1 else None
        if "selection" in p:
            kw["selection"] = p["selection"]
        est = SimpleNPKL(
            loss,
            C=p["C"] if C is None else C,
            B=B,
            n_neighbors=n_neighbors,
            random_state=task.seed,
            **kw,
        )
        V = est.fit_transform(task.data.X, **c)
        return FactorOutput(
            estimator=est,
            G=V,
            extra={
                "n_constraints": est.n_constraints_,
                "rank": est.n_components_,
                "n_iter": est.n_iter_,
                "gap": est.duality_gap_,
            },
        )

    run.__name__ = f"run_{name}"
    return Method(name, run, label=label or LABELS.get(name), applies=applies)


def kmeans_method(name: str = "kmeans") -> Method:
    """Plain k-means on the (prepared) features, as many clusters as classes."""

    def run(task):
        k = task.context["n_classes"]
        km = KMeans(n_clusters=k, n_init=N_INIT, random_state=task.seed).fit(task.data.X)
        return FactorOutput(extra={"labels": km.labels_, "n_constraints": 0})

    return Method(name, run, label=LABELS.get(name, name))


def cluster_metric(out: FactorOutput, task) -> dict:
    """Pairwise accuracy (%) of kernel k-means on the embedding (or of given labels)."""
    labels = out.extra.get("labels")
    if labels is None:
        rng = np.random.default_rng(task.seed)
        labels = kernel_kmeans_factor(
            out.G, task.context["n_classes"], rng=rng, n_init=N_INIT
        ).labels
    return {
        "accuracy": 100.0 * pairwise_cluster_accuracy(task.data.y, labels),
        "n_constraints": out.extra.get("n_constraints", np.nan),
        "rank": out.extra.get("rank", np.nan),
        "n_iter": out.extra.get("n_iter", np.nan),
    }


CLUSTER_METRIC = Metric(("accuracy", "n_constraints", "rank", "n_iter"), cluster_metric, False)


def prepare_adult(data) -> dict:
    """Dense rows; the class count and the accuracy of one cluster (the floor)."""
    X = data.X.toarray() if hasattr(data.X, "toarray") else data.X
    data.X = np.asarray(X, dtype=np.float64)
    y = np.asarray(data.y)
    _, counts = np.unique(y, return_counts=True)
    n = len(y)
    one = float(np.sum(counts * (counts - 1.0)) / (n * (n - 1.0)))
    return {"n_classes": len(counts), "one_cluster": 100.0 * one}


def _adult_metric(out, task) -> dict:
    m = cluster_metric(out, task)
    m["gap"] = out.extra.get("gap", np.nan)
    m["one_cluster"] = task.context["one_cluster"]
    return m


ADULT_METRIC = Metric(
    ("accuracy", "n_constraints", "rank", "n_iter", "gap", "one_cluster"), _adult_metric, False
)


def acc_text(row) -> str:
    """A result row's accuracy as ``m ± s`` (one decimal; ``failed``, or ``—`` if none)."""
    if row is None:
        return "—"
    if row["mean"] is None:
        return "failed"
    return f"{row['mean']:.1f} ± {row['std'] or 0:.1f}"


def beats_kmeans(result, labels, columns, *, base_part: str):
    """Does SimpleNPKL beat k-means? Per data set of ``labels``, each column of
    ``columns`` (``(method, part)``) against the k-means column of ``base_part``,
    paired by repetition (same constraints): ``(body, wins)`` — table rows of mean
    difference and repetitions won / tied, and per method the sets whose mean
    difference is positive."""
    body, wins = [], {m: 0 for m, _ in columns}
    for ds in labels:
        row = [ds]
        for m, part in columns:
            w = paired_wins(
                per_rep(result, part, ds, m, "accuracy", key="rep"),
                per_rep(result, base_part, ds, "kmeans", "accuracy", key="rep"),
            )
            if w is None:
                row.append("—")
                continue
            d, won, tied, n = w
            wins[m] += d > 0
            row.append(f"{d:+.1f} ({won}/{n} won, {tied} tied)")
        body.append(row)
    return body, wins


def accuracy_bars(ax, labels, columns) -> None:
    """Grouped bars of the pairwise accuracy (mean ± std) per data set of ``labels``:
    ``columns`` = ``(label, row(dataset))``, the latter a result row or None."""
    width = 0.8 / len(columns)
    for j, (label, row) in enumerate(columns):
        xs, ys, es = [], [], []
        for i, ds in enumerate(labels):
            r = row(ds)
            if r is not None and r["mean"] is not None:
                xs.append(i + (j - (len(columns) - 1) / 2) * width)
                ys.append(r["mean"])
                es.append(r["std"] or 0.0)
        if xs:
            ax.bar(xs, ys, width, yerr=es, capsize=2, label=label)
    ax.set_xticks(range(len(labels)), labels, fontsize=8)
    ax.set_ylabel("pairwise accuracy (%)")
    ax.grid(axis="y", alpha=0.3)

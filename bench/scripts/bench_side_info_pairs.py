"""Pairwise side information out of the box: default SimpleNPKL against what a user would pick.

On the six UCI sets of SimpleNPKL's Table 2 (iris, wine, glass, sonar, chessboard,
double spiral; the ``npkl-uci`` experiment's protocol: features standardized, must-link
/ cannot-link pairs from :func:`lorak.constraints.from_labels` with ratio 0.7 and the
repetition's seed, the same pairs for every method of a repetition), each method
clusters all rows into as many clusters as classes and is scored by the pairwise
clustering accuracy (%) against the classes:

- ``kmeans``: k-means on the standardized features (no side information);
- ``spectral``: :class:`sklearn.cluster.SpectralClustering` on the 10-NN graph (no
  side information);
- ``itml`` / ``mmc``: metric-learn's ITML / MMC (default parameters) learned from the
  pairs, then k-means on the transformed features (MMC only with ``--mmc``: its full
  metric took over 4 minutes for one fit on sonar's 60 features on the shared machine,
  ITML 0.2 s; benchmark-only dependency:
  ``pip install metric-learn``; 0.7.0 calls scikit-learn's removed ``force_all_finite``
  keyword, so the keyword is renamed to ``ensure_all_finite`` at import, see
  :func:`_metric_learn`);
- ``npkl_default`` / ``npkl_default_shl``: ``SimpleNPKL()`` with its defaults (C="auto")
  for the linear and the square-hinge loss, kernel k-means on the learned kernel;
- ``npkl_c1``: the old default C = 1 (linear loss); ``npkl_c03``: the ``npkl-uci``
  constant C = 0.3; ``npkl_bound``: C = 1/λ_max(T), the collapse bound the default
  keeps a 30 % margin from;
- ``npkl_oracle``: the best C of a grid *by the truth*, per set (mean over the
  repetitions) — a ceiling, never a usable method.

Reported per set: mean ± sd accuracy, the default's wins against each peer (by the
mean over repetitions), its worst loss, its gap to the oracle, fit seconds (shared
machine: ratios only), and the number of kernels flagged degenerate
(:func:`lorak.learn._npkl_auto.kernel_degeneracy`).

Usage: python bench/scripts/bench_side_info_pairs.py [--reps 10] [--quick] [--extra] [--mmc]
[--datasets a,b] [--out DIR]
Writes DIR/results.json, DIR/summary.md and DIR/accuracy.png (default
bench-out/side-info-pairs/).
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np
from sklearn.cluster import KMeans, SpectralClustering

from lorak import SimpleNPKL
from lorak.constraints import from_labels
from lorak.datasets import load
from lorak.learn import DegenerateKernelWarning, auto_C
from lorak.metrics import pairwise_cluster_accuracy
from lorak.models import kernel_kmeans_factor
from lorak_bench.timing import LoadGuard, Record, Stopwatch

RATIO = 0.7
N_INIT = 10
C_GRID = (0.03, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.7, 1.0)
DATASETS = {
    "iris": {},
    "wine": {},
    "glass": {},
    "sonar": {},
    "chessboard": {"n_samples": 100, "random_state": 0},
    "double_spiral": {"n_samples": 100, "n_features": 3, "random_state": 0},
}
EXTRA = {"breast_cancer": {}, "digits500": {}}
METHODS = (
    "kmeans",
    "spectral",
    "itml",
    "mmc",
    "npkl_c1",
    "npkl_c03",
    "npkl_default",
    "npkl_default_shl",
    "npkl_bound",
    "npkl_oracle",
)
LABELS = {
    "kmeans": "k-means",
    "spectral": "spectral (10-NN)",
    "itml": "ITML + k-means",
    "mmc": "MMC + k-means",
    "npkl_c1": "SimpleNPKL C=1 (old default)",
    "npkl_c03": "SimpleNPKL C=0.3",
    "npkl_default": "SimpleNPKL default (C=auto)",
    "npkl_default_shl": "SimpleNPKL default, sq. hinge",
    "npkl_bound": "SimpleNPKL C=1/λmax(T) (no margin)",
    "npkl_oracle": "SimpleNPKL oracle C (ceiling)",
}
PEERS = ("kmeans", "spectral", "itml", "mmc", "npkl_c1")


def standardize(X):
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X, dtype=np.float64)
    X = np.array(X, dtype=np.float64)
    sd = X.std(0)
    return (X - X.mean(0)) / np.where(sd > 0, sd, 1.0)


def load_set(name):
    if name == "digits500":
        X, y = load("digits")
        keep = np.random.default_rng(0).choice(len(y), 500, replace=False)
        return standardize(X[keep]), np.asarray(y)[keep]
    kw = DATASETS.get(name, EXTRA.get(name, {}))
    X, y = load(name, **kw)
    return standardize(X), np.asarray(y)


def _metric_learn():
    """metric-learn's ITML and MMC, with its removed-keyword calls renamed.

    metric-learn 0.7.0 (its latest release) passes ``force_all_finite`` to
    scikit-learn's ``check_array`` / ``check_X_y``; scikit-learn 1.8 removed that
    keyword (now ``ensure_all_finite``). The two functions it imported are wrapped to
    rename it; the algorithms are metric-learn's own. Returns None when it is missing.
    """
    try:
        import metric_learn._util as mlu
        from metric_learn import ITML, MMC
    except ImportError:
        return None

    def rename(f):
        def g(*args, **kw):
            if "force_all_finite" in kw:
                kw["ensure_all_finite"] = kw.pop("force_all_finite")
            return f(*args, **kw)

        return g

    if not getattr(mlu, "_lorak_renamed", False):
        mlu.check_array = rename(mlu.check_array)
        mlu.check_X_y = rename(mlu.check_X_y)
        mlu._lorak_renamed = True
    import metric_learn

    return ITML, MMC, metric_learn.__version__


def cluster_acc(y, labels):
    return 100.0 * pairwise_cluster_accuracy(y, labels)


def kkmeans_acc(V, y, k, seed):
    lab = kernel_kmeans_factor(V, k, rng=np.random.default_rng(seed), n_init=N_INIT).labels
    return cluster_acc(y, lab)


def npkl_run(X, y, k, cons, seed, **kw):
    est = SimpleNPKL(random_state=seed, **kw)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with Stopwatch() as sw:
                est.fit(X, **cons)
        except ValueError as exc:  # a fixed small C can leave A without a positive eigenvalue
            if "kernel is zero" not in str(exc):
                raise
            return {"accuracy": None, "zero_kernel": True, "C": float(kw.get("C", np.nan))}
        dt = sw.wall
    flagged = any(issubclass(w.category, DegenerateKernelWarning) for w in caught)
    deg = est.degeneracy_
    return {
        "accuracy": kkmeans_acc(est.embedding_, y, k, seed),
        "seconds": dt,
        "C": float(est.C_),
        "rank": int(est.n_components_),
        "constraint_share": float(deg.constraint_share),
        "smoothness": float(deg.smoothness),
        "degenerate": bool(deg.degenerate or flagged),
    }


def run_set(name, reps, ml, use_mmc=False, ratio=RATIO):
    X, y = load_set(name)
    k = len(np.unique(y))
    recs = []
    for rep in range(reps):
        cons = from_labels(y, ratio=ratio, random_state=rep)
        pairs, signs = cons.pairs()
        row = {"dataset": name, "rep": rep, "n_constraints": len(pairs)}
        with Stopwatch() as sw:
            km = KMeans(k, n_init=N_INIT, random_state=rep).fit(X)
        row["kmeans"] = {"accuracy": cluster_acc(y, km.labels_), "seconds": sw.wall}
        with Stopwatch() as sw:
            sc = SpectralClustering(
                k, affinity="nearest_neighbors", n_neighbors=10, random_state=rep
            ).fit(X)
        row["spectral"] = {"accuracy": cluster_acc(y, sc.labels_), "seconds": sw.wall}
        if ml is not None:
            ITML, MMC = ml[0], ml[1]
            for key, cls in (("itml", ITML), ("mmc", MMC))[: 2 if use_mmc else 1]:
                try:
                    with Stopwatch() as sw, warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        Z = cls(random_state=rep).fit(X[pairs], signs).transform(X)
                        lab = KMeans(k, n_init=N_INIT, random_state=rep).fit(Z).labels_
                    row[key] = {"accuracy": cluster_acc(y, lab), "seconds": sw.wall}
                except Exception as exc:  # record a failing peer, go on
                    row[key] = {"accuracy": None, "error": f"{type(exc).__name__}: {exc}"}
        row["npkl_default"] = npkl_run(X, y, k, cons, rep)
        row["npkl_default_shl"] = npkl_run(X, y, k, cons, rep, loss="squared_hinge", max_iter=200)
        row["npkl_c1"] = npkl_run(X, y, k, cons, rep, C=1.0)
        row["npkl_bound"] = npkl_run(X, y, k, cons, rep, C=auto_C(pairs, signs, scale=1.0))
        row["npkl_grid"] = {f"{c:g}": npkl_run(X, y, k, cons, rep, C=c) for c in C_GRID}
        row["npkl_c03"] = row["npkl_grid"]["0.3"]
        recs.append(row)
        print(
            f"{name} rep {rep}: "
            + " ".join(
                f"{m}={row[m]['accuracy']:.1f}"
                for m in METHODS
                if m in row and row[m].get("accuracy") is not None
            ),
            flush=True,
        )
    # the oracle: the grid C with the best mean accuracy on this set (by the truth)
    # (a grid C that gives a zero kernel on any repetition is not a candidate)
    means = {
        c: np.mean([r["npkl_grid"][c]["accuracy"] for r in recs])
        for c in recs[0]["npkl_grid"]
        if all(r["npkl_grid"][c]["accuracy"] is not None for r in recs)
    }
    best = max(means, key=means.get)
    for r in recs:
        r["npkl_oracle"] = dict(r["npkl_grid"][best], C=float(best))
    return recs


def summarize(records, names):
    per_set = {}
    for name in names:
        rs = [r for r in records if r["dataset"] == name]
        cell = {}
        for m in METHODS:
            v = [r[m]["accuracy"] for r in rs if m in r and r[m].get("accuracy") is not None]
            s = [r[m]["seconds"] for r in rs if m in r and r[m].get("seconds") is not None]
            if v:
                cell[m] = {
                    "mean": float(np.mean(v)),
                    "std": float(np.std(v)),
                    "seconds": float(np.mean(s)),
                    "n": len(v),
                }
        for m in ("npkl_default", "npkl_default_shl", "npkl_c1", "npkl_bound", "npkl_oracle"):
            cell[m]["degenerate"] = int(sum(r[m]["degenerate"] for r in rs))
            cell[m]["C_mean"] = float(np.mean([r[m]["C"] for r in rs]))
            cell[m]["rank_mean"] = float(np.mean([r[m]["rank"] for r in rs]))
        per_set[name] = cell
    out = {"per_set": per_set, "default_vs": {}}
    for who in ("npkl_default", "npkl_default_shl"):
        for peer in (*PEERS, "npkl_c03", "npkl_bound"):
            diffs = {
                n: per_set[n][who]["mean"] - per_set[n][peer]["mean"]
                for n in names
                if peer in per_set[n] and who in per_set[n]
            }
            if not diffs:
                continue
            out["default_vs"][f"{who} - {peer}"] = {
                "wins": int(sum(d > 0 for d in diffs.values())),
                "sets": len(diffs),
                "worst": float(min(diffs.values())),
                "worst_set": min(diffs, key=diffs.get),
                "diffs": diffs,
            }
        gaps = {n: per_set[n]["npkl_oracle"]["mean"] - per_set[n][who]["mean"] for n in names}
        out[f"{who}_oracle_gap"] = {"mean": float(np.mean(list(gaps.values()))), "per_set": gaps}
    return out


def markdown(summary, names):
    head = ["data set", *[LABELS[m] for m in METHODS]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for n in names:
        c = summary["per_set"][n]
        cells = []
        for m in METHODS:
            if m not in c:
                cells.append("—")
                continue
            t = f"{c[m]['mean']:.1f} ± {c[m]['std']:.1f}"
            if "degenerate" in c[m] and c[m]["degenerate"]:
                t += f" ({c[m]['degenerate']} degen.)"
            if m == "npkl_oracle":
                t += f" [C={c[m]['C_mean']:g}]"
            cells.append(t)
        lines.append("| " + " | ".join([n, *cells]) + " |")
    lines += ["", "| default − peer | wins | worst (set) |", "|---|---|---|"]
    for key, v in summary["default_vs"].items():
        lines.append(f"| {key} | {v['wins']}/{v['sets']} | {v['worst']:+.1f} ({v['worst_set']}) |")
    for who in ("npkl_default", "npkl_default_shl"):
        g = summary[f"{who}_oracle_gap"]
        lines.append(
            f"\n{who}: mean gap to the oracle {g['mean']:.1f} points; per set "
            + ", ".join(f"{k} {v:.1f}" for k, v in g["per_set"].items())
        )
    lines.append("\nfit seconds (mean; shared machine, ratios only):")
    for n in names:
        c = summary["per_set"][n]
        lines.append(
            f"- {n}: " + ", ".join(f"{m} {c[m]['seconds']:.3f}" for m in METHODS if m in c)
        )
    return "\n".join(lines)


def plot(summary, names, path, ratio=RATIO):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [m for m in METHODS if any(m in summary["per_set"][n] for n in names)]
    fig, ax = plt.subplots(figsize=(max(7.0, 1.6 * len(names) + 2), 4.2))
    width = 0.85 / len(shown)
    for j, m in enumerate(shown):
        xs, ys, es = [], [], []
        for i, n in enumerate(names):
            c = summary["per_set"][n].get(m)
            if c is not None:
                xs.append(i + (j - (len(shown) - 1) / 2) * width)
                ys.append(c["mean"])
                es.append(c["std"])
        hatch = "//" if m == "npkl_oracle" else None
        ax.bar(xs, ys, width, yerr=es, capsize=1.5, label=LABELS[m], hatch=hatch)
    ax.set_xticks(range(len(names)), names, fontsize=8)
    ax.set_ylabel("pairwise clustering accuracy (%)")
    ax.set_ylim(30, 101)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.08), frameon=False)
    ax.set_title(
        f"Pairwise side information: default SimpleNPKL vs peers (ratio {ratio})", fontsize=9
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    guard = LoadGuard(label="bench_side_info_pairs").start()  # load average before and after
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--ratio", type=float, default=RATIO, help="from_labels ratio (0.7)")
    ap.add_argument("--quick", action="store_true", help="2 repetitions")
    ap.add_argument("--extra", action="store_true", help="also breast_cancer and digits (500)")
    ap.add_argument("--datasets", default=None, help="comma-separated subset")
    ap.add_argument("--mmc", action="store_true", help="also MMC (slow: minutes per fit)")
    ap.add_argument("--out", default="bench-out/side-info-pairs")
    a = ap.parse_args(argv)
    reps = 2 if a.quick else a.reps
    names = list(DATASETS) + (list(EXTRA) if a.extra else [])
    if a.datasets:
        names = a.datasets.split(",")
    ml = _metric_learn()
    if ml is None:
        print("metric-learn is not installed: ITML/MMC skipped (pip install metric-learn)")
    result = Record()  # the environment and the load average now, at the start
    records = []
    for n in names:
        records += run_set(n, reps, ml, use_mmc=a.mmc, ratio=a.ratio)
    summary = summarize(records, names)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    result.update(
        config={
            "reps": reps,
            "ratio": a.ratio,
            "c_grid": list(C_GRID),
            "datasets": names,
            "metric_learn": None if ml is None else ml[2],
            "seconds_total": result.elapsed,
        },
        load=guard.stop().record(),
        summary=summary,
        records=records,
    )
    result.write(out / "results.json")
    md = markdown(summary, names)
    (out / "summary.md").write_text(md + "\n")
    plot(summary, names, out / "accuracy.png", ratio=a.ratio)
    print(md)
    print(f"wrote {out}/results.json, summary.md, accuracy.png")


if __name__ == "__main__":
    main()

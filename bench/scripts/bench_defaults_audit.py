"""Defaults audit: does the default of each parameter a user meets sit near the best of a grid?

Cheap by design (small n, few repetitions; the machine is shared). For each parameter,
every grid value is scored on every set with the others at their defaults, and the
default is compared with the best grid value per set (the best is picked *by the test
accuracy*: an oracle, to see how far the default is from it, not a usable rule).

- :class:`lorak.CSI` — ``kappa`` ∈ {0, 0.5, 0.9, 0.99 (default), 0.999} and
  ``lookahead`` (δ) ∈ {0, 10, 40 (default)}, at the default rank cap (100) and at a small
  one (20, where the side information matters most); the factor's features feed a
  logistic regression (scikit-learn defaults) trained on the training rows.
- :class:`lorak.LowRankMKLClassifier` — ``C`` ∈ {0.1, 1 (default), 10, 100, 1000} and
  ``p`` ∈ {1, 2 (default), 4}, the other parameters at their defaults.
- SimpleNPKL's ``C`` is audited by ``bench_side_info_pairs.py``.

Data: binary sets the project has, each subsampled to at most 600 rows (seeded),
features standardized, a stratified half/half train/test split per repetition: sonar,
german, splice, svmguide1 (LIBSVM, with LORAK_DATA), breast_cancer (scikit-learn),
ringnorm (generated). Score: test accuracy (%).

Usage: python bench/scripts/bench_defaults_audit.py [--reps 3] [--quick] [--out DIR]
Writes DIR/results.json and DIR/summary.md (default bench-out/defaults-audit/).
"""

from __future__ import annotations

import argparse
import os
import warnings
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from lorak import CSI, LowRankMKLClassifier
from lorak.datasets import load
from lorak_bench.timing import LoadGuard, Record, Stopwatch

MAX_N = 600
AUDIT = {
    "CSI.kappa": ("csi", "kappa", (0.0, 0.5, 0.9, 0.99, 0.999), 0.99),
    "CSI.lookahead": ("csi", "lookahead", (0, 10, 40), 40),
    "CSI.kappa@m=20": ("csi20", "kappa", (0.0, 0.5, 0.9, 0.99, 0.999), 0.99),
    "CSI.lookahead@m=20": ("csi20", "lookahead", (0, 10, 40), 40),
    "LowRankMKLClassifier.C": ("mkl", "C", (0.1, 1.0, 10.0, 100.0, 1000.0), 1.0),
    "LowRankMKLClassifier.p": ("mkl", "p", (1.0, 2.0, 4.0), 2.0),
}


def standardize(X):
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X, dtype=np.float64)
    X = np.array(X, dtype=np.float64)
    sd = X.std(0)
    return (X - X.mean(0)) / np.where(sd > 0, sd, 1.0)


def data_sets(names):
    out = {}
    for name in names:
        if name in ("sonar", "german", "splice", "svmguide1"):
            if not os.environ.get("LORAK_DATA"):
                continue
            X, y = load(name) if name != "svmguide1" else load(name, split="train")
        elif name == "ringnorm":
            X, y = load("ringnorm", n_samples=MAX_N, random_state=0)
        else:
            X, y = load(name)
        y = np.asarray(y)
        if len(y) > MAX_N:
            keep = np.random.default_rng(0).choice(len(y), MAX_N, replace=False)
            X, y = X[keep], y[keep]
        out[name] = (standardize(X), y)
    return out


def score(kind, param, value, X, y, seed):
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.5, stratify=y, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind in ("csi", "csi20"):
            kw = {param: value}
            if kind == "csi20":
                kw["n_components"] = 20
            f = CSI(random_state=seed, **kw).fit(Xtr, ytr)
            clf = LogisticRegression(max_iter=2000).fit(f.transform(Xtr), ytr)
            return 100.0 * clf.score(f.transform(Xte), yte)
        clf = LowRankMKLClassifier(random_state=seed, **{param: value}).fit(Xtr, ytr)
        return 100.0 * clf.score(Xte, yte)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="1 repetition, 3 sets")
    ap.add_argument("--datasets", default="sonar,german,splice,svmguide1,breast_cancer,ringnorm")
    ap.add_argument("--params", default=",".join(AUDIT), help="which rows of the audit")
    ap.add_argument("--out", default="bench-out/defaults-audit")
    return ap.parse_args(argv)


def audit_set(key, name, X, y, reps, records):
    """One audit row on one data set: the mean accuracy at each value of the grid
    (each value's repetitions timed and appended to ``records``), the default's gap to
    the best."""
    kind, param, grid, default = AUDIT[key]
    means = {}
    for v in grid:
        with Stopwatch() as sw:
            accs = [score(kind, param, v, X, y, s) for s in range(reps)]
        means[v] = float(np.mean(accs))
        records.append(
            {
                "audit": key,
                "dataset": name,
                "value": v,
                "accuracy": accs,
                "seconds": sw.wall,
            }
        )
    best = max(means, key=means.get)
    print(f"{key} {name}: " + " ".join(f"{k}:{v:.1f}" for k, v in means.items()), flush=True)
    return {
        "default": means[default],
        "best_value": best,
        "best": means[best],
        "gap": means[best] - means[default],
        "means": {str(k): v for k, v in means.items()},
    }


def audit_row(key, sets, reps, records):
    """One audit row (a parameter and its grid) over every data set, with the mean gap."""
    _, _, grid, default = AUDIT[key]
    rows = {name: audit_set(key, name, X, y, reps, records) for name, (X, y) in sets.items()}
    gaps = [r["gap"] for r in rows.values()]
    return {
        "default": default,
        "grid": list(grid),
        "per_set": rows,
        "mean_gap": float(np.mean(gaps)) if gaps else None,
        "sets_default_within_1pt": int(sum(g <= 1.0 for g in gaps)),
        "n_sets": len(gaps),
    }


def summary_markdown(table):
    lines = [
        "| parameter (default) | set | default | best value | best | gap |",
        "|---|---|---|---|---|---|",
    ]
    for key, t in table.items():
        for name, r in t["per_set"].items():
            lines.append(
                f"| {key} ({t['default']:g}) | {name} | {r['default']:.1f} | "
                f"{r['best_value']:g} | {r['best']:.1f} | {r['gap']:.1f} |"
            )
        lines.append(
            f"| {key}: mean gap {t['mean_gap']:.1f}, default within 1 point on "
            f"{t['sets_default_within_1pt']}/{t['n_sets']} sets | | | | | |"
        )
    return "\n".join(lines)


def main(argv=None):
    guard = LoadGuard(label="bench_defaults_audit").start()  # load average before and after
    a = parse_args(argv)
    reps = 1 if a.quick else a.reps
    names = a.datasets.split(",")[: 3 if a.quick else None]
    sets = data_sets(names)
    result = Record()  # the environment and the load average now, at the start
    records = []
    table = {key: audit_row(key, sets, reps, records) for key in a.params.split(",")}
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    result.update(
        config={
            "reps": reps,
            "datasets": list(sets),
            "max_n": MAX_N,
            "seconds_total": result.elapsed,
        },
        load=guard.stop().record(),
        audit=table,
        records=records,
    )
    result.write(out / "results.json")
    md = summary_markdown(table)
    (out / "summary.md").write_text(md + "\n")
    print(md)


if __name__ == "__main__":
    main()

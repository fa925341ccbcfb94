"""Time of CSI against incomplete Cholesky at the same rank (issue #6: ≤ 3×).

At n = 20000 and rank m = 100 (δ = 40, κ = 0.99, tol = 0 so both reach the rank) on
ringnorm (20 features; cheap kernel columns) and, with LORAK_DATA, on a9a (123 binary
features, 20000 rows of the training set). Both estimators get the same resolved
Gaussian kernel, exp(−‖x−y‖²/b) with b = mean squared distance after scaling to unit
variance. Timings are ``fit`` (validation, kernel columns, the decomposition and the
inductive normalization), the median of ``--repeats`` runs taken alternately in this
process, with one BLAS thread (the machine is shared; ``--threads`` to change).
Also measured: CSI with δ = 20 and δ = 0, and the share of CSI's time in its parts
(kernel columns, Cholesky + QR steps, transpositions, gain updates), from one
profiled run of :func:`lorak.learn.csi`.

The paper's cost is O((m + δ)²n) for CSI against O(m²n) for ICD: at m = 100, δ = 40
CSI computes 140 kernel columns (ICD 100) and does its Cholesky steps on up to 140
columns plus one pass for the QR update (ICD: one pass on up to 100), so ≈ 2–4× is
the floor of any implementation of the algorithm before its look-ahead bookkeeping.

Usage: python bench/scripts/bench_csi.py [--n 20000] [--rank 100] [--repeats 3] [--quick]
Writes bench/scripts/out/bench_csi.json.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import gc
import os
import pstats
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from lorak import IncompleteCholesky
from lorak.datasets import load
from lorak.estimators import CSI
from lorak.kernels import Gaussian
from lorak.learn import csi
from lorak_bench.timing import LoadGuard, Record, Stopwatch, time_call

HERE = Path(__file__).resolve().parent


def scaled(X):
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X, dtype=np.float64)
    sd = X.std(0)
    return (X - X.mean(0)) / np.where(sd > 0, sd, 1.0)


def data_sets(n):
    out = {}
    X, y = load("ringnorm", n_samples=n, random_state=0)
    out["ringnorm"] = (scaled(X), y)
    if os.environ.get("LORAK_DATA"):
        d = load("a9a", split="train")
        keep = np.random.default_rng(0).choice(d.X.shape[0], n, replace=False)
        out["a9a"] = (scaled(d.X[keep]), np.asarray(d.y)[keep])
    return out


def fit_time(make, X, y=None):
    gc.collect()
    est = make()
    with Stopwatch() as sw:
        est.fit(X) if y is None else est.fit(X, y)
    return sw.wall, est


#: CSI's parts, each the cumulative time of one function of its implementation
#: (``lorak/learn/_csi.py``) in a profile of one run; none of them calls another.
PARTS = {
    "_add_column": "cholesky_and_qr_steps",  # less the kernel columns it computes
    "_transpositions": "transpositions_small_blocks",
    "_apply_rotations": "transpositions_n_sized_rotations",
    "_select": "gain_selection",
    "_refresh": "exact_gain_refresh",
}


def breakdown(kernel, X, y, rank):
    """Seconds spent in CSI's parts during one run, from a profile of it (cProfile,
    read by file and function name: no library internal is imported or patched; the
    profile adds its own small overhead to every call)."""
    kcol = [0.0]

    def column(i):
        with Stopwatch() as sw:
            c = kernel(X, X[i : i + 1]).ravel()
        kcol[0] += sw.wall
        return c

    Y = (y[:, None] == np.unique(y)[None, :]).astype(float)
    prof = cProfile.Profile()
    _, timing = time_call(prof.runcall, csi, kernel.diag(X), column, Y, rank, lookahead=40, tol=0.0)
    acc = collections.defaultdict(float)
    for (path, _line, name), (_cc, _nc, _tt, cum, _callers) in pstats.Stats(prof).stats.items():
        if name in PARTS and path.replace(os.sep, "/").endswith("lorak/learn/_csi.py"):
            acc[name] += cum
    missing = set(PARTS) - set(acc)
    if missing:
        raise RuntimeError(f"CSI's profile has no {sorted(missing)}: update PARTS")
    total = timing.wall
    parts = {"kernel_columns": kcol[0]}
    parts |= {label: acc[name] for name, label in PARTS.items()}
    parts["cholesky_and_qr_steps"] -= kcol[0]
    parts["gain_updates_and_rest"] = total - sum(parts.values())
    return {"total": total, "parts": {k: round(v, 4) for k, v in parts.items()}}


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--rank", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="n = 5000, one repeat")
    ap.add_argument("--out", type=Path, default=HERE / "out" / "bench_csi.json")
    args = ap.parse_args()
    if args.quick:
        args.n, args.repeats = 5000, 1
    return args


def estimator_makers(kernel, m):
    """The four factors timed, each a function making a fresh estimator."""
    return {
        "icd": lambda k=kernel: IncompleteCholesky(kernel=k, n_components=m),
        "csi_delta40": lambda k=kernel: CSI(kernel=k, n_components=m, tol=0.0),
        "csi_delta20": lambda k=kernel: CSI(kernel=k, n_components=m, lookahead=20, tol=0.0),
        "csi_delta0": lambda k=kernel: CSI(kernel=k, n_components=m, lookahead=0, tol=0),
    }


def time_makers(makers, X, y, m, repeats):
    """``(times, info)``: each factor's fit seconds per repeat (interleaved), and what
    the last fit reports (kernel columns, lookahead hits, prediction error)."""
    times = {k: [] for k in makers}
    info = {}
    for _ in range(repeats):
        for key, make in makers.items():
            t, est = fit_time(make, X, None if key == "icd" else y)
            times[key].append(t)
            if key != "icd":
                info[key] = {
                    "kernel_columns": est.n_kernel_columns_,
                    "lookahead_hits": int(est.lookahead_hit_.sum()),
                    "prediction_error_at_rank": float(est.prediction_error_[-1]),
                }
            else:
                info[key] = {"kernel_columns": m}
    return times, info


def dataset_row(name, X, y, m, repeats):
    """One data set's record: median seconds, CSI over ICD, and CSI's breakdown."""
    kernel = Gaussian(bandwidth="mean_pairwise").resolve(X)
    times, info = time_makers(estimator_makers(kernel, m), X, y, m, repeats)
    med = {k: float(np.median(v)) for k, v in times.items()}
    return {
        "dataset": name,
        "n": int(X.shape[0]),
        "features": int(X.shape[1]),
        "rank": m,
        "median_seconds": med,
        "all_seconds": times,
        "ratio_csi_over_icd": {k: med[k] / med["icd"] for k in med if k.startswith("csi")},
        "info": info,
        "csi_breakdown_delta40": breakdown(kernel, X, y, m),
    }


def print_dataset_row(row):
    med, r, m = row["median_seconds"], row["ratio_csi_over_icd"], row["rank"]
    print(
        f"{row['dataset']} n={row['n']} d={row['features']} rank={m}: ICD {med['icd']:.2f}s, "
        f"CSI(δ=40) {med['csi_delta40']:.2f}s → ratio {r['csi_delta40']:.2f}× "
        f"(δ=20: {r['csi_delta20']:.2f}×, δ=0: {r['csi_delta0']:.2f}×)"
    )
    print("  CSI δ=40 breakdown (s):", row["csi_breakdown_delta40"]["parts"])


def main():
    guard = LoadGuard(label="bench_csi").start()  # load average before and after
    args = parse_args()
    results = []
    with threadpool_limits(args.threads):
        for name, (X, y) in data_sets(args.n).items():
            row = dataset_row(name, X, y, args.rank, args.repeats)
            results.append(row)
            print_dataset_row(row)
    doc = Record(
        issue="#6: CSI <= 3x incomplete Cholesky at n = 20000, rank 100",
        settings=vars(args) | {"out": str(args.out)},
        load=guard.stop().record(),
        results=results,
    )
    doc.write(args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

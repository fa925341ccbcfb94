"""Which seeding for k-means landmarks: quantization error against time.

Zhang, Tsang & Kwok (2008) take k-means centres after at most 10 Lloyd iterations as
Nyström landmarks. scikit-learn's default seeding (greedy k-means++ on all rows) is
the slow part at n=70000, d=784, k=1000; this script measures the alternatives of
:func:`lorak.landmarks.kmeans_landmarks` (its ``init`` and seeding/Lloyd options, on
all rows: ``lloyd_sample=None``), each followed by ``max_iter`` (10) Lloyd iterations,
against ``sklearn.cluster.KMeans(init="k-means++", n_init=1, max_iter=10)`` (the
reference, "ref").

Data (float32 drawn once; the float64 case holds the very same points):

``mixture``
    200 anisotropic Gaussian components in d dimensions (rank-8 spread plus isotropic
    noise, unequal weights and scales): structure for the seeding to find.
``normal``
    standard normal, no structure.

Large case (``--n --d --k``, default 70000 × 784, k=1000), both dtypes
(``--dtype``):

* ``ref``: scikit-learn KMeans as above, its k-means++ on ``--ref-blas-threads`` BLAS
  threads (default ``--threads``; on a busy machine 1 is far faster). It takes
  minutes, so it runs on float32 only (``--ref-dtypes`` to add float64); the float64
  points being the same, its quantization error is the reference for both dtypes.
* ``random + sklearn Lloyd``: scikit-learn's Lloyd from random rows (the issue's
  "~6 s" run, to translate times between machines); ``random`` and ``auto`` (ours).
* mixture/float32 only: ``subsample++`` at the sizes ``--samples`` (the default size
  is the ``auto`` row), the default size without the principal-component sketch,
  ``auto`` without the Lloyd bounds, and ``k-means++`` on all rows (ours;
  ``--skip-full-pp`` to skip). mixture/float64 only: ``auto`` with float64 products.
* mixture: ``subsample++ + sklearn Lloyd`` (our seeds, scikit-learn's Lloyd) and
  ``sklearn-kmeans_plusplus`` (``sklearn.cluster.kmeans_plusplus`` on the default
  subsample, then our Lloyd from those centres, ``kmeans_landmarks(init=centres)``;
  its Lloyd seconds include Lloyd's setup): each back end against ours.

Small case (n=5000, d=50, k=100, both data sets, ``--small-seeds`` seeds, float64,
``--small-threads`` BLAS threads): every method against ``ref`` run with the same
seed; mean and worst ratio over the seeds.

Times are wall seconds (:func:`lorak_bench.timing.time_call`) with BLAS limited to ``--threads``
threads; ``cpu_seconds`` (process CPU time, all threads) is given too, since the
machine may be shared: on a busy machine wall time grows and jumps, CPU time much
less. Compare methods by the ratios taken in one run. The JSON keeps every row
(inertia, iterations, seeding and Lloyd seconds, fraction of rows the bounds skipped)
and the load average at start and end.

Usage::

    python bench/scripts/study_kmeans_init.py [--quick] [--out FILE]
        [--n 70000 --d 784 --k 1000 --dtype both|float32|float64]

``--quick``: n=20000, k=300, sizes 600/1500/6000, two small seeds. The full run costs
about 1000 CPU seconds (two threads); it took 38 minutes on a machine with load 7–10.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from sklearn.cluster import KMeans, kmeans_plusplus
from threadpoolctl import threadpool_limits

from lorak.landmarks import default_init_sample, kmeans_landmarks
from lorak_bench.timing import LoadGuard, Record, time_call


def mixture(n, d, rng, *, n_components=200, rank=8):
    """float32 Gaussian mixture: unequal weights, rank-``rank`` spread plus noise."""
    w = rng.dirichlet(np.full(n_components, 2.0))
    comp = np.sort(rng.choice(n_components, size=n, p=w))
    bounds = np.searchsorted(comp, np.arange(n_components + 1))
    mu = rng.standard_normal((n_components, d), dtype=np.float32)
    X = np.empty((n, d), dtype=np.float32)
    spread = 7.0 / np.sqrt(d)
    for c in range(n_components):
        s, e = bounds[c], bounds[c + 1]
        A = rng.standard_normal((rank, d), dtype=np.float32)
        A *= np.float32(rng.uniform(0.5, 1.5) * spread)
        X[s:e] = rng.standard_normal((e - s, rank), dtype=np.float32) @ A
        X[s:e] += np.float32(rng.uniform(0.3, 0.8)) * rng.standard_normal(
            (e - s, d), dtype=np.float32
        )
        X[s:e] += mu[c]
    return X[rng.permutation(n)]


def normal(n, d, rng):
    return rng.standard_normal((n, d), dtype=np.float32)


def clock(fn):
    out, t = time_call(fn)
    return out, t.wall, t.cpu


def inertia(X, C, labels):
    """Σ‖x − C[label]‖² in float64 from differences (the same formula for all runs)."""
    total = 0.0
    C = np.asarray(C, dtype=X.dtype)
    for s in range(0, X.shape[0], 4096):
        R = X[s : s + 4096] - C[labels[s : s + 4096]]
        total += float(np.einsum("ij,ij->i", R, R).sum(dtype=np.float64))
    return total


def run_ref(X, k, seed, max_iter, blas_threads=None):
    def fit():
        with threadpool_limits(blas_threads, user_api="blas"):
            return KMeans(
                n_clusters=k, init="k-means++", n_init=1, max_iter=max_iter, random_state=seed
            ).fit(X)

    km, wall, cpu = clock(fit)
    return {
        "method": "ref",
        "seconds": wall,
        "cpu_seconds": cpu,
        "n_iter": int(km.n_iter_),
        "inertia": inertia(X, km.cluster_centers_, km.labels_),
    }


def our_kmeans(X, k, seed, max_iter, **kw):
    """:func:`lorak.landmarks.kmeans_landmarks` on all rows (no Lloyd sample)."""
    return kmeans_landmarks(
        X, k, rng=np.random.default_rng(seed), max_iter=max_iter, lloyd_sample=None, **kw
    )


def run_ours(X, k, seed, max_iter, name=None, **kw):
    (_, info), wall, cpu = clock(lambda: our_kmeans(X, k, seed, max_iter, **kw))
    return {
        "method": name or kw.get("init", "auto"),
        "seconds": wall,
        "cpu_seconds": cpu,
        "init_seconds": info["init_seconds"],
        "lloyd_seconds": info["lloyd_seconds"],
        "n_iter": info["n_iter"],
        "init_sample": info["init_sample"],
        "skipped": info["skipped"],
        "inertia": info["inertia"],
    }


def seeds_of(X, k, seed, method, init_sample=None):
    """The seeds our ``method`` would start Lloyd from (same Generator use)."""
    return our_kmeans(X, k, seed, 0, init=method, init_sample=init_sample)


def run_sklearn_lloyd(X, k, seed, max_iter, method):
    C0, info0 = seeds_of(X, k, seed, method)
    C0 = C0.astype(X.dtype)
    km, wall, cpu = clock(
        lambda: KMeans(
            n_clusters=k, init=C0, n_init=1, max_iter=max_iter, algorithm="lloyd", tol=0.0
        ).fit(X)
    )
    return {
        "method": f"{method} + sklearn Lloyd",
        "seconds": wall + info0["init_seconds"],
        "cpu_seconds": cpu,
        "init_seconds": info0["init_seconds"],
        "lloyd_seconds": wall,
        "n_iter": int(km.n_iter_),
        "inertia": inertia(X, km.cluster_centers_, km.labels_),
    }


def run_sklearn_pp(X, k, seed, max_iter, blas_threads=None):
    """sklearn.cluster.kmeans_plusplus on the default subsample, then our Lloyd."""
    rng = np.random.default_rng(seed)
    n = X.shape[0]
    m = default_init_sample(n, k)
    idx = np.sort(rng.choice(n, size=m, replace=False))

    def seed_():
        with threadpool_limits(blas_threads, user_api="blas"):
            return kmeans_plusplus(X[idx], k, random_state=int(rng.integers(2**31 - 1)))

    (C0, _), wall0, cpu0 = clock(seed_)
    # our Lloyd from those centres (its setup, the data's mean and norms, included)
    (C, info), wall1, cpu1 = clock(
        lambda: our_kmeans(X, k, seed, max_iter, init=C0, tol=0.0, return_labels=True)
    )
    return {
        "method": "sklearn-kmeans_plusplus",
        "seconds": wall0 + wall1,
        "cpu_seconds": cpu0 + cpu1,
        "init_seconds": wall0,
        "lloyd_seconds": wall1,
        "n_iter": info["n_iter"],
        "init_sample": m,
        "inertia": inertia(X, C, info["labels"]),
    }


def add_relative(rows, ref_inertia):
    for r in rows:
        r["relative_error"] = r["inertia"] / ref_inertia
    return rows


def fmt_row(case, r):
    init = r.get("init_seconds")
    lloyd = r.get("lloyd_seconds")
    return (
        f"{case:<18} {r['method']:<34} {r['seconds']:8.2f} {r['cpu_seconds']:8.2f} "
        f"{'' if init is None else f'{init:7.2f}':>7} "
        f"{'' if lloyd is None else f'{lloyd:7.2f}':>7} {r['n_iter']:>4} "
        f"{r.get('relative_error', float('nan')):8.4f}"
    )


HEADER = (
    f"{'case':<18} {'method':<34} {'wall s':>8} {'cpu s':>8} {'init s':>7} "
    f"{'lloyd s':>7} {'iter':>4} {'rel err':>8}"
)


def plan(data_name, dtype_name, args):
    """(label, runner) pairs for one data set and dtype; see the module docstring."""
    k, it, seed = args.k, args.max_iter, args.seed

    def ours(label=None, **kw):
        return label or kw.get("init", "auto"), lambda X: run_ours(X, k, seed, it, label, **kw)

    def sk_lloyd(method):
        return "", lambda X: run_sklearn_lloyd(X, k, seed, it, method)

    steps = []
    if dtype_name in args.ref_dtypes:
        steps.append(("ref", lambda X: run_ref(X, k, seed, it, args.ref_blas_threads)))
    steps.append(sk_lloyd("random"))
    steps.append(ours(init="random"))
    steps.append(ours(init="auto"))
    if data_name != "mixture":
        return steps
    if dtype_name == "float32":
        for m in args.samples:
            steps.append(ours(f"subsample++ m={m}", init="subsample++", init_sample=m))
        m = default_init_sample(args.n, k)
        steps.append(
            ours(f"subsample++ m={m}, no sketch", init="subsample++", init_sample=m, sketch=None)
        )
        steps.append(ours("auto, no pruning", init="auto", prune=False))
        if not args.skip_full_pp:
            steps.append(ours("k-means++ (ours, all rows)", init="k-means++"))
    else:
        steps.append(ours("auto, float64 products", init="auto", compute_dtype=np.float64))
    steps.append(sk_lloyd("subsample++"))
    steps.append(("", lambda X: run_sklearn_pp(X, k, seed, it, args.ref_blas_threads)))
    return steps


def large(args, data_name, X32, log, ref):
    """Every planned run on X32 and its float64 copy; ``ref`` holds the reference."""
    results = {}
    for name in args.dtypes:
        X = X32 if name == "float32" else X32.astype(np.float64)
        rows = []
        for _, runner in plan(data_name, name, args):
            r = runner(X)
            if r["method"] == "ref":
                ref.setdefault(data_name, r["inertia"])
            if data_name in ref:
                r["relative_error"] = r["inertia"] / ref[data_name]
            rows.append(r)
            log(r, f"{data_name}/{name}")
        results[name] = rows
        del X
    if data_name in ref:
        for rows in results.values():
            add_relative(rows, ref[data_name])
    return results


def small(args, log):
    n, d, k = 5000, 50, 100
    out = {}
    with threadpool_limits(args.small_threads):
        for data_name in ("mixture", "normal"):
            out[data_name] = small_one(args, log, data_name, n, d, k)
    return out


def small_one(args, log, data_name, n, d, k):
    """Each method against ``ref`` with the same seed, over ``--small-seeds`` seeds."""
    rng = np.random.default_rng(args.seed + 1)
    X32 = mixture(n, d, rng, n_components=20) if data_name == "mixture" else normal(n, d, rng)
    X = X32.astype(np.float64)
    acc = {}
    for s in range(args.small_seeds):
        rows = [run_ref(X, k, s, args.max_iter)]
        for m in (500, 1000):
            rows.append(
                run_ours(
                    X, k, s, args.max_iter, f"subsample++ m={m}", init="subsample++", init_sample=m
                )
            )
        for init in ("random", "auto", "k-means++"):
            rows.append(run_ours(X, k, s, args.max_iter, init=init))
        for r in add_relative(rows, rows[0]["inertia"]):
            a = acc.setdefault(r["method"], {"relative_error": [], "seconds": []})
            a["relative_error"].append(r["relative_error"])
            a["seconds"].append(r["seconds"])
    summary = []
    for method, a in acc.items():
        rel = np.array(a["relative_error"])
        summary.append(
            {
                "method": method,
                "relative_error_mean": float(rel.mean()),
                "relative_error_max": float(rel.max()),
                "seconds_mean": float(np.mean(a["seconds"])),
            }
        )
        log(None, f"small/{data_name}", summary[-1])
    return summary


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=70000)
    ap.add_argument("--d", type=int, default=784)
    ap.add_argument("--k", type=int, default=1000)
    ap.add_argument("--dtype", default="both", choices=["both", "float32", "float64"])
    ap.add_argument("--max-iter", type=int, default=10)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--samples",
        type=int,
        nargs="*",
        default=[2000, 5000, 20000],
        help="subsample++ sizes (mixture/float32; the default size is the 'auto' row)",
    )
    ap.add_argument(
        "--ref-dtypes",
        nargs="*",
        default=["float32"],
        help="dtypes on which to run the (slow) scikit-learn reference",
    )
    ap.add_argument(
        "--ref-blas-threads",
        type=int,
        default=None,
        help="BLAS threads of the reference's k-means++ (default: --threads)",
    )
    ap.add_argument("--data", nargs="*", default=["mixture", "normal"])
    ap.add_argument("--small-seeds", type=int, default=5)
    ap.add_argument("--small-threads", type=int, default=1, help="BLAS threads, small case")
    ap.add_argument("--skip-small", action="store_true")
    ap.add_argument(
        "--skip-full-pp",
        action="store_true",
        help="skip our greedy k-means++ on all rows (mixture/float32)",
    )
    ap.add_argument("--quick", action="store_true", help="n=20000, k=300, 2 small seeds")
    ap.add_argument("--out", default="bench/scripts/out/kmeans_init.json")
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.k, args.small_seeds = 20000, 300, 2
        args.samples = [600, 1500, 6000]
    args.dtypes = ["float32", "float64"] if args.dtype == "both" else [args.dtype]
    if args.ref_blas_threads is None:
        args.ref_blas_threads = args.threads
    return args


def log(r, case, summary=None):
    """Print a run's row (or, with ``summary``, a method's mean over seeds)."""
    if summary is not None:
        print(
            f"{case:<18} {summary['method']:<34} {summary['seconds_mean']:8.2f} "
            f"{'':>8} {'':>7} {'':>7} {'':>4} {summary['relative_error_mean']:8.4f}"
            f"  (max {summary['relative_error_max']:.4f})",
            flush=True,
        )
    else:
        print(fmt_row(case, r) + f"   [{r['inertia']:.6g}]", flush=True)


def save(result, guard, out):
    """Write what has run so far, with the load average now and the seconds so far."""
    result["load"] = guard.stop().record()
    result["total_seconds"] = result.elapsed
    result.write(out)


def main(argv=None):
    guard = LoadGuard(label="study_kmeans_init").start()  # load average before and after
    args = parse_args(argv)
    result = Record(study="kmeans_init", config=vars(args))  # environment, load now
    print(HEADER, flush=True)
    result.update(load=guard.record(), large={})
    out = Path(args.out)
    ref = {}
    with threadpool_limits(args.threads):
        for data_name in args.data:
            gen = mixture if data_name == "mixture" else normal
            X32 = gen(args.n, args.d, np.random.default_rng(args.seed + 1))
            result["large"][data_name] = large(args, data_name, X32, log, ref)
            del X32
            save(result, guard, out)
        if not args.skip_small:
            result["small"] = small(args, log)
    save(result, guard, out)
    print(f"total {result['total_seconds']:.0f} s; wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()

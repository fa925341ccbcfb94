"""Performance of the Nyström hot path against BLAS and scikit-learn, in one run.

Measures, on random data (default n=70000, d=784, m=1000, 2 BLAS threads):

(a) the Gaussian kernel block k(X, Z) against the bare GEMM X @ Zᵀ, float64 and float32;
(b) ``lorak.Nystroem(landmarks="uniform").fit_transform`` against
    ``sklearn.kernel_approximation.Nystroem`` — time and peak traced memory;
(c) ``kmeans`` landmarks against ``sklearn.cluster.KMeans`` (k-means++ init, 10 Lloyd
    iterations, n_init=1) — time and quantization error — and against scikit-learn's
    Lloyd started from our seeds (``init=<seeds>``, n_init=1, 10 iterations);
(d) ``transform`` of new rows with the fitted factor;
(e) ``IncompleteCholesky`` (rank ``--icd-rank`` on the first ``--icd-n`` rows): kernel
    columns computed ahead in blocks against the column-at-a-time loop, same pivots.

Every time is also reported as a multiple of the BLAS floor measured in this run
(:func:`lorak_bench.timing.blas_floor`): Nyström's fit_transform and transform against one GEMM
(n × d by d × m) plus one triangular multiply of the n × m block, k-means against one
GEMM (n × d by d × k) per assignment pass (n_iter + 1). The load average before and
after is recorded; a 1-minute load above the core count flags the run
(``load.loaded``), or, with ``--strict-load`` (or ``LORAK_STRICT_LOAD=1``), refuses it.

Every comparison is a ratio of two timings taken in this process, each the median of
``--repeats`` runs (k-means: one run each; scikit-learn's k-means++ is slow). Targets:
(a) ≤ 1.4× GEMM in float64, ≤ 1.7× in float32; (b) ≤ 0.7× scikit-learn's time in
float64, ≤ 0.5× in float32, peak memory not above it, ≤ 1.25× the floor in both
precisions; (c) ≤ 10 s with quantization error within 3 % of KMeans (k-means++), and
within 1 % of scikit-learn's Lloyd from the same seeds; float32 time ≤ 0.6× float64.

Usage: python bench/scripts/bench_nystrom.py [--quick] [--out FILE] [--skip-kmeans]
       [--strict-load] [--threads T]
"""

from __future__ import annotations

import argparse
import gc
import json
import tracemalloc

import numpy as np
from sklearn.cluster import KMeans
from sklearn.kernel_approximation import Nystroem as SkNystroem
from threadpoolctl import threadpool_limits

import lorak
from lorak.kernels import Gaussian
from lorak.landmarks import quantization_error
from lorak_bench.timing import LoadGuard, Record, Stopwatch, blas_floor, floor_seconds, time_call


def timed(fn, repeats):
    out, t = time_call(fn, repeats=repeats, setup=gc.collect)
    return t.wall, list(t.walls), out


def peak_memory(fn):
    """Peak bytes traced by tracemalloc (numpy's buffers included) during ``fn()``."""
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    out = fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del out
    return int(peak)


def bench_block(X, Z, b, repeats):
    kern = Gaussian(bandwidth=b)
    t_gemm, _, _ = timed(lambda: X @ Z.T, repeats)
    t_kern, _, K = timed(lambda: kern(X, Z), repeats)
    # correctness spot check against a direct formula on a few rows
    ref = np.exp(-((X[:5, None, :].astype(np.float64) - Z[None, :, :]) ** 2).sum(-1) / b)
    return {
        "gemm_seconds": t_gemm,
        "kernel_seconds": t_kern,
        "ratio": t_kern / t_gemm,
        "gflops_gemm": 2 * X.shape[0] * Z.shape[0] * X.shape[1] / t_gemm / 1e9,
        "max_abs_error_vs_direct": float(np.abs(K[:5] - ref).max()),
    }


def bench_nystroem(X, m, b, repeats, floor):
    gamma = 1.0 / b

    def ours():
        return lorak.Nystroem(gamma=gamma, n_components=m, random_state=0).fit_transform(X)

    def theirs():
        return SkNystroem(gamma=gamma, n_components=m, random_state=0).fit_transform(X)

    t_ours, all_ours, G1 = timed(ours, repeats)
    t_sk, all_sk, G2 = timed(theirs, repeats)
    # same landmarks (same seed draws differ between libraries): compare kernels on a sample
    del G1, G2
    gc.collect()
    mem_ours = peak_memory(ours)
    mem_sk = peak_memory(theirs)
    # transform of new rows (here: the same rows again) with the fitted factor
    fitted = lorak.Nystroem(gamma=gamma, n_components=m, random_state=0).fit(X)
    t_tr, all_tr, _ = timed(lambda: fitted.transform(X), repeats)
    n, d = X.shape
    t_floor = floor_seconds(floor, X.dtype, f"gemm {n}x{d}x{m}", f"trmm {n}x{m}")
    return {
        "floor_seconds": t_floor,
        "lorak_floor_ratio": t_ours / t_floor,
        "sklearn_floor_ratio": t_sk / t_floor,
        "transform_seconds": t_tr,
        "transform_runs": all_tr,
        "transform_floor_ratio": t_tr / t_floor,
        "upper_triangular": bool(fitted.normalization_is_upper_),
        "lorak_seconds": t_ours,
        "sklearn_seconds": t_sk,
        "lorak_runs": all_ours,
        "sklearn_runs": all_sk,
        "time_ratio": t_ours / t_sk,
        "lorak_peak_bytes": mem_ours,
        "sklearn_peak_bytes": mem_sk,
        "memory_ratio": mem_ours / mem_sk,
        "output_bytes": X.shape[0] * m * X.itemsize,
    }


def bench_kmeans(X, m, seed, floor, plusplus=True):
    from lorak.landmarks import kmeans_landmarks

    with Stopwatch() as sw:
        C, info = kmeans_landmarks(X, m, rng=np.random.default_rng(seed), max_iter=10)
    t_ours = sw.wall
    q_ours = quantization_error(X, C)
    n, d = X.shape
    # the floor: one GEMM (n × d by d × k) per assignment pass (the first, then one per
    # Lloyd iteration), in the products' dtype (float32 for both inputs unless float32
    # cannot resolve float64 data); the distance bounds may skip part of it
    gemm = floor["float32"][f"gemm {n}x{d}x{m}"]["seconds"]
    out = {
        "lorak_seconds": t_ours,
        "lorak_init": info.get("init"),
        "lorak_init_seconds": info.get("init_seconds"),
        "lorak_n_iter": info.get("n_iter"),
        "lorak_skipped": info.get("skipped"),
        "floor_seconds": gemm * (1 + info.get("n_iter", 0)),
        "lorak_quantization_error": q_ours,
    }
    out["lorak_floor_ratio"] = t_ours / out["floor_seconds"]
    # scikit-learn's Lloyd from our seeds (same seeding draws: same generator seed)
    seeds, _ = kmeans_landmarks(X, m, rng=np.random.default_rng(seed), max_iter=0)
    with Stopwatch() as sw:
        km = KMeans(n_clusters=m, init=seeds, n_init=1, max_iter=10, algorithm="lloyd").fit(X)
    t_sk = sw.wall + info.get("init_seconds", 0.0)
    q_sk = quantization_error(X, km.cluster_centers_)
    out.update(
        sklearn_lloyd_same_seeds_seconds=t_sk,
        sklearn_lloyd_same_seeds_n_iter=int(km.n_iter_),
        sklearn_lloyd_same_seeds_quantization_error=q_sk,
        time_ratio_same_seeds=t_ours / t_sk,
        quantization_ratio_same_seeds=q_ours / q_sk,
    )
    if plusplus:
        with Stopwatch() as sw:
            km = KMeans(n_clusters=m, init="k-means++", n_init=1, max_iter=10, random_state=seed)
            km.fit(X)
        t_sk = sw.wall
        q_sk = quantization_error(X, km.cluster_centers_)
        out.update(
            sklearn_seconds=t_sk,
            time_ratio=t_ours / t_sk,
            sklearn_quantization_error=q_sk,
            quantization_ratio=q_ours / q_sk,
        )
    return out


def bench_icd(X, rank, b, repeats):
    from lorak.decompose import incomplete_cholesky

    kern = Gaussian(bandwidth=b)
    diag = kern.diag(X)

    def column(i):
        return kern(X, X[i : i + 1]).ravel()

    def blocked():
        return incomplete_cholesky(diag, column, rank, columns=lambda idx: kern(X, X[idx]))

    t_col, all_col, ref = timed(lambda: incomplete_cholesky(diag, column, rank), repeats)
    t_blk, all_blk, res = timed(blocked, repeats)
    return {
        "n": int(X.shape[0]),
        "rank": int(rank),
        "column_seconds": t_col,
        "blocked_seconds": t_blk,
        "column_runs": all_col,
        "blocked_runs": all_blk,
        "time_ratio": t_blk / t_col,
        "same_pivots": bool(np.array_equal(ref.pivots, res.pivots)),
    }


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=70000)
    ap.add_argument("--d", type=int, default=784)
    ap.add_argument("--m", type=int, default=1000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="n=10000, 1 repeat")
    ap.add_argument("--skip-kmeans", action="store_true")
    ap.add_argument("--icd-n", type=int, default=20000, help="rows for (e); 0 skips it")
    ap.add_argument("--icd-rank", type=int, default=300)
    ap.add_argument(
        "--skip-kmeans-plusplus",
        action="store_true",
        help="skip scikit-learn's full KMeans (k-means++ on all rows: minutes)",
    )
    ap.add_argument(
        "--strict-load",
        action="store_true",
        help="refuse to record when the load average exceeds the cores",
    )
    ap.add_argument("--out", default="bench/scripts/out/bench_nystrom.json")
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.repeats = 10000, 1
    return args


TARGETS = {
    "block_ratio_float64": 1.4,
    "block_ratio_float32": 1.7,
    "nystroem_time_ratio_float64": 0.7,
    "nystroem_time_ratio_float32": 0.5,
    "nystroem_memory_ratio": 1.0,
    "nystroem_floor_ratio": 1.25,
    "kmeans_float32_over_float64": 0.6,
    "kmeans_quantization_ratio_same_seeds": 1.01,
    "kmeans_seconds": 10.0,
    "kmeans_quantization_ratio": 1.03,
}


def bench_dtype(result, X, rng, args):
    """(a)-(e) in one precision: the block, Nyström, incomplete Cholesky (float64 only)
    and k-means, into ``result``; the landmarks drawn from ``rng``."""
    idx = rng.choice(args.n, args.m, replace=False)
    Z = X[idx].copy()
    b = 2.0 * args.d  # ~ mean pairwise squared distance of N(0, I) data
    name = X.dtype.name
    result[f"block_{name}"] = bench_block(X, Z, b, args.repeats)
    result[f"nystroem_{name}"] = bench_nystroem(X, args.m, b, args.repeats, result["floor"])
    if args.icd_n > 0 and X.dtype == np.float64:
        rows = X[: args.icd_n]
        result["icd_float64"] = bench_icd(rows, min(args.icd_rank, rows.shape[0]), b, args.repeats)
    if not args.skip_kmeans:
        result[f"kmeans_{name}"] = bench_kmeans(
            X, args.m, seed=0, floor=result["floor"], plusplus=not args.skip_kmeans_plusplus
        )
    print(name, json.dumps({k: v for k, v in result.items() if name in k}, indent=1))


def nystroem_target_checks(result):
    """Each block and Nyström target of ``result["targets"]``: met or not."""
    t = result["targets"]
    checks = {
        "block_float64": result["block_float64"]["ratio"] <= t["block_ratio_float64"],
        "block_float32": result["block_float32"]["ratio"] <= t["block_ratio_float32"],
        "nystroem_float64": result["nystroem_float64"]["time_ratio"]
        <= t["nystroem_time_ratio_float64"],
        "nystroem_float32": result["nystroem_float32"]["time_ratio"]
        <= t["nystroem_time_ratio_float32"],
        "nystroem_memory": all(
            result[f"nystroem_{k}"]["memory_ratio"] <= t["nystroem_memory_ratio"]
            for k in ("float64", "float32")
        ),
    }
    for k in ("float64", "float32"):
        r = result[f"nystroem_{k}"]
        checks[f"nystroem_floor_{k}"] = r["lorak_floor_ratio"] <= t["nystroem_floor_ratio"]
        checks[f"transform_floor_{k}"] = r["transform_floor_ratio"] <= t["nystroem_floor_ratio"]
    return checks


def kmeans_checks(result):
    """The k-means targets: met or not; float32's seconds over float64's into ``result``."""
    t = result["targets"]
    checks = {}
    for k in ("float64", "float32"):
        r = result[f"kmeans_{k}"]
        checks[f"kmeans_{k}"] = (
            r["lorak_seconds"] <= t["kmeans_seconds"]
            and r.get("quantization_ratio", 1.0) <= t["kmeans_quantization_ratio"]
        )
        checks[f"kmeans_same_seeds_{k}"] = (
            r["quantization_ratio_same_seeds"] <= t["kmeans_quantization_ratio_same_seeds"]
        )
    result["kmeans_float32_over_float64"] = (
        result["kmeans_float32"]["lorak_seconds"] / result["kmeans_float64"]["lorak_seconds"]
    )
    checks["kmeans_float32_pays"] = (
        result["kmeans_float32_over_float64"] <= t["kmeans_float32_over_float64"]
    )
    return checks


def main(argv=None):
    args = parse_args(argv)
    guard = LoadGuard(
        strict=args.strict_load or None, label="bench_nystrom", threads=args.threads
    ).start()
    rng = np.random.default_rng(0)
    X64 = rng.standard_normal((args.n, args.d))
    result = Record(benchmark="bench_nystrom", config=vars(args), targets=dict(TARGETS))
    with threadpool_limits(args.threads):
        n, d, m = args.n, args.d, args.m
        ops = [("gemm", (n, d, m)), ("trmm", (n, m)), ("syevd", (m,))]
        result["floor"] = blas_floor(ops, repeats=args.repeats)
        print("floor", json.dumps(result["floor"], indent=1))
        for dtype in (np.float64, np.float32):
            bench_dtype(result, X64.astype(dtype, copy=False), rng, args)
    checks = nystroem_target_checks(result)
    if not args.skip_kmeans:
        checks |= kmeans_checks(result)
    result["load"] = guard.stop().record()
    result["checks"] = checks
    out = result.write(args.out)
    print(json.dumps(checks, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

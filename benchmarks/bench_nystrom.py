"""Performance of the Nyström hot path against BLAS and scikit-learn, in one run.

Measures, on random data (default n=70000, d=784, m=1000, 2 BLAS threads):

(a) the Gaussian kernel block k(X, Z) against the bare GEMM X @ Zᵀ, float64 and float32;
(b) ``lorak.Nystroem(landmarks="uniform").fit_transform`` against
    ``sklearn.kernel_approximation.Nystroem`` — time and peak traced memory;
(c) ``kmeans`` landmarks against ``sklearn.cluster.KMeans`` (k-means++ init, 10 Lloyd
    iterations, n_init=1) — time and quantization error.

Every comparison is a ratio of two timings taken in this process, each the median of
``--repeats`` runs (k-means: one run each; scikit-learn's k-means++ is slow). Targets
(issue #2): (a) ≤ 1.4× GEMM in float64, ≤ 1.7× in float32; (b) ≤ 0.7× scikit-learn's
time in float64, ≤ 0.5× in float32, peak memory not above it; (c) ≤ 10 s with
quantization error within 3 % of KMeans.

Usage: python benchmarks/bench_nystrom.py [--quick] [--out FILE] [--skip-kmeans]
"""

from __future__ import annotations

import argparse
import gc
import json
import time
import tracemalloc
from pathlib import Path

import numpy as np
from sklearn.cluster import KMeans
from sklearn.kernel_approximation import Nystroem as SkNystroem
from threadpoolctl import threadpool_limits

import lorak
from lorak.bench._env import capture_environment
from lorak.kernels import Gaussian
from lorak.landmarks import quantization_error


def timed(fn, repeats):
    times = []
    out = None
    for _ in range(repeats):
        out = None
        gc.collect()
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times)), times, out


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


def bench_nystroem(X, m, b, repeats):
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
    return {
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


def bench_kmeans(X, m, seed):
    from lorak.landmarks._kmeans import kmeans_landmarks

    t = time.perf_counter()
    C, info = kmeans_landmarks(X, m, rng=np.random.default_rng(seed), max_iter=10)
    t_ours = time.perf_counter() - t
    q_ours = quantization_error(X, C)
    t = time.perf_counter()
    km = KMeans(n_clusters=m, init="k-means++", n_init=1, max_iter=10, random_state=seed).fit(X)
    t_sk = time.perf_counter() - t
    q_sk = quantization_error(X, km.cluster_centers_)
    return {
        "lorak_seconds": t_ours,
        "lorak_init": info.get("init"),
        "sklearn_seconds": t_sk,
        "time_ratio": t_ours / t_sk,
        "lorak_quantization_error": q_ours,
        "sklearn_quantization_error": q_sk,
        "quantization_ratio": q_ours / q_sk,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=70000)
    ap.add_argument("--d", type=int, default=784)
    ap.add_argument("--m", type=int, default=1000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="n=10000, 1 repeat")
    ap.add_argument("--skip-kmeans", action="store_true")
    ap.add_argument("--out", default="benchmarks/out/bench_nystrom.json")
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.repeats = 10000, 1

    rng = np.random.default_rng(0)
    X64 = rng.standard_normal((args.n, args.d))
    result = {
        "benchmark": "bench_nystrom",
        "config": vars(args),
        "environment": capture_environment(),
        "targets": {
            "block_ratio_float64": 1.4,
            "block_ratio_float32": 1.7,
            "nystroem_time_ratio_float64": 0.7,
            "nystroem_time_ratio_float32": 0.5,
            "nystroem_memory_ratio": 1.0,
            "kmeans_seconds": 10.0,
            "kmeans_quantization_ratio": 1.03,
        },
    }
    with threadpool_limits(args.threads):
        for dtype in (np.float64, np.float32):
            X = X64.astype(dtype, copy=False)
            idx = rng.choice(args.n, args.m, replace=False)
            Z = X[idx].copy()
            b = 2.0 * args.d  # ~ mean pairwise squared distance of N(0, I) data
            name = np.dtype(dtype).name
            result[f"block_{name}"] = bench_block(X, Z, b, args.repeats)
            result[f"nystroem_{name}"] = bench_nystroem(X, args.m, b, args.repeats)
            if not args.skip_kmeans:
                result[f"kmeans_{name}"] = bench_kmeans(X, args.m, seed=0)
            print(name, json.dumps({k: v for k, v in result.items() if name in k}, indent=1))
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
    if not args.skip_kmeans:
        for k in ("float64", "float32"):
            r = result[f"kmeans_{k}"]
            checks[f"kmeans_{k}"] = (
                r["lorak_seconds"] <= t["kmeans_seconds"]
                and r["quantization_ratio"] <= t["kmeans_quantization_ratio"]
            )
    result["checks"] = checks
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    print(json.dumps(checks, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

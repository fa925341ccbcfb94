"""Downstream models on a factor against dense kernel methods, in one run.

Measures fit + predict (transform) time, peak traced memory and accuracy of

(a) LS-SVM on the USPS training set (n = 7291, 10 classes, one-vs-rest; test on the 2007
    test rows): ``lorak.models.LSSVC`` on a Nyström factor (uniform and k-means
    landmarks) against the exact LS-SVM (dense n × n solve) and scikit-learn's
    ``KernelRidge`` (one-vs-rest ±1 targets, alpha = 1/C, the same Gaussian kernel). The
    rank m is chosen per landmark kind by the factor's effective dimension
    (:func:`choose_rank`: doubling m until d_eff(1/C) stops growing; ``--m-usps fixed``:
    m = 0.1 n); the speed-up is given with and without the cost of that search;
(b) LS-SVM on n = 50000 synthetic rows (Breiman's ringnorm, d = 20): ours with m = 1000;
    the dense methods would need an n × n kernel (18.6 GiB) and are skipped, with
    ``KernelRidge`` on a 10000-row subsample as the feasible dense alternative;
(c) kernel PCA (10 components) on the USPS training set: ``LowRankKernelPCA`` on the same
    factors against scikit-learn's ``KernelPCA`` with the dense and the randomized
    eigensolver, plus the misalignment min_A ‖U − Ũ A‖_F of the top-3 directions against
    the dense solution;
(d) kernel PCA on the 50000 synthetic rows: ours only (KernelPCA needs the n × n kernel).

Kernel: Gaussian exp(−‖x−y‖²/γ), γ = mean squared distance to the mean (the paper's
rule); C = 0.5 (the paper's Table 4). Ratios are of timings taken in this process: the
median of ``--repeats`` runs for our methods (peak memory from one more run under
``tracemalloc``, which traces numpy's buffers), one traced run for the dense ones.
Target: LS-SVM at n = 7291 at least 10× faster than KernelRidge, test error within 0.5
points of it (first set at 20× with m fixed at 0.1 n; revised with the rank chosen by the
factor's approximation of the problem).

Each LS-SVM time is also given as a multiple of its BLAS floor measured in this run
(:func:`lorak_bench.timing.blas_floor`): the factor of the training rows (GEMM n × d by d × m and a
triangular multiply of the n × m block), its Gram matrix GᵀG (GEMM m × n by n × m) and
the factor of the test rows (GEMM and triangular multiply at n_test). The load
average before and after is recorded (``load``); ``--strict-load`` refuses a run on a
machine busier than its cores.

Usage: python bench/scripts/bench_downstream.py [--quick] [--out FILE] [--skip-large]
       [--skip-kpca] [--m-usps auto|fixed] [--strict-load]
(needs LORAK_DATA for USPS; without it (a) and (c) run on synthetic rows of the same size)
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import tracemalloc

import numpy as np
from sklearn.decomposition import KernelPCA
from sklearn.kernel_ridge import KernelRidge
from threadpoolctl import threadpool_info, threadpool_limits

from lorak import Nystroem
from lorak.kernels import Gaussian, kernel_block
from lorak.models import LSSVC, LowRankKernelPCA, lssvm_fit_dense
from lorak_bench.timing import (
    LoadGuard,
    Stopwatch,
    blas_floor,
    capture_environment,
    floor_seconds,
    time_call,
    write_json,
)

C = 0.5
N_KPCA = 10
TARGET_SPEEDUP = 10.0
TARGET_ERROR_POINTS = 0.5
GIB = 2**30


# ---------------------------------------------------------------- measuring


def timed(fn, repeats: int):
    """Median wall time of ``repeats`` calls, all times, and the last output."""
    out, t = time_call(fn, repeats=repeats, setup=gc.collect)
    return t.wall, list(t.walls), out


def peak_memory(fn) -> int:
    """Peak bytes traced by tracemalloc during ``fn()`` (numpy buffers included)."""
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return int(peak)


def measure(fn, repeats: int) -> tuple[dict, object]:
    """Time and peak memory of ``fn``.

    ``repeats > 1`` (our methods): the median of ``repeats`` untraced runs, then one
    traced run for the memory. ``repeats == 1`` (the dense baselines, minutes each): one
    run under tracemalloc gives both — the tracing costs Python-level allocations, not
    the LAPACK work that dominates these runs.
    """
    if repeats > 1:
        seconds, runs, out = timed(fn, repeats)
        return {"seconds": seconds, "runs": runs, "peak_bytes": peak_memory(fn)}, out
    gc.collect()
    tracemalloc.start()
    try:
        with Stopwatch() as sw:
            out = fn()
        seconds = sw.wall
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return {"seconds": seconds, "runs": [seconds], "peak_bytes": int(peak), "traced": True}, out


# ---------------------------------------------------------------- data


def load_usps(quick: bool):
    """USPS train/test (or synthetic rows of the same shape without LORAK_DATA)."""
    n, nt = (1500, 500) if quick else (7291, 2007)
    if os.environ.get("LORAK_DATA"):
        from lorak.datasets import load

        tr, te = load("usps", split="train"), load("usps", split="test")
        X, y, Xt, yt = (np.asarray(a) for a in (tr.X, tr.y, te.X, te.y))
        if quick:
            X, y, Xt, yt = X[:n], y[:n], Xt[:nt], yt[:nt]
        return "usps", X, y, Xt, yt
    rng = np.random.default_rng(0)
    centers = rng.standard_normal((10, 256))
    y = rng.integers(0, 10, n + nt)
    X = centers[y] + 1.5 * rng.standard_normal((n + nt, 256))
    return "synthetic-usps-shape", X[:n], y[:n], X[n:], y[n:]


def load_large(n: int, n_test: int):
    from lorak.datasets import make_ringnorm

    X, y = make_ringnorm(n + n_test, random_state=0)
    return np.ascontiguousarray(X[:n]), y[:n], np.ascontiguousarray(X[n:]), y[n:]


def paper_bandwidth(X) -> float:
    return float(Gaussian(bandwidth="mean_to_centroid").resolve(X).bandwidth)


def ovr_targets(y, classes):
    return np.where(y[:, None] == classes[None, :], 1.0, -1.0)


def error_pct(pred, y) -> float:
    return 100.0 * float(np.mean(np.asarray(pred) != np.asarray(y)))


# ---------------------------------------------------------------- LS-SVM


def lssvm_ours(X, y, Xt, b, m, landmarks):
    def run():
        factor = Nystroem(
            kernel="gaussian", bandwidth=b, n_components=m, landmarks=landmarks, random_state=0
        )
        clf = LSSVC(factor, C=C).fit(X, y)
        return clf.predict(Xt)

    return run


def lssvm_exact(X, y, Xt, b):
    kernel = Gaussian(bandwidth=b)
    classes = np.unique(y)

    def run():
        K = kernel_block(kernel, X, X)
        beta, c = lssvm_fit_dense(K, ovr_targets(y, classes), C)
        del K
        F = kernel_block(kernel, Xt, X) @ beta + c
        return classes[F.argmax(1)]

    return run


def kernel_ridge(X, y, Xt, b):
    classes = np.unique(y)

    def run():
        kr = KernelRidge(alpha=1.0 / C, kernel="rbf", gamma=1.0 / b)
        kr.fit(X, ovr_targets(y, classes))
        return classes[kr.predict(Xt).argmax(1)]

    return run


def bench_lssvm(X, y, Xt, yt, b, m, repeats, *, dense: bool, label: str) -> dict:
    out = {"n": int(X.shape[0]), "n_test": int(Xt.shape[0]), "d": int(X.shape[1]), "m": m}
    out["classes"] = len(np.unique(y))
    ms = {}
    for lm in ("uniform", "kmeans"):
        if m == "auto":
            choice = choose_rank(X, b, lm)
            ms[lm] = choice["m"]
        else:
            choice, ms[lm] = None, m
        res, pred = measure(lssvm_ours(X, y, Xt, b, ms[lm], lm), repeats)
        res["test_error_pct"] = error_pct(pred, yt)
        res["m"] = ms[lm]
        if choice is not None:
            res["rank_choice"] = choice
        out[f"lorak_{lm}"] = res
        print(
            f"[{label}] lorak {lm} m={ms[lm]}: {res['seconds']:.2f} s, "
            f"{res['test_error_pct']:.2f} %"
        )
    n, d = X.shape
    nt = Xt.shape[0]
    out["floor"] = {}
    for lm in ("uniform", "kmeans"):
        mm = ms[lm]
        ops = [("gemm", (n, d, mm)), ("trmm", (n, mm)), ("gemm", (mm, n, mm))]
        ops += [("gemm", (nt, d, mm)), ("trmm", (nt, mm))]
        floor = blas_floor(ops, dtypes=(X.dtype,), repeats=max(1, repeats))
        keys = list(floor[X.dtype.name])
        out["floor"][lm] = floor[X.dtype.name]
        seconds = floor_seconds(floor, X.dtype, *keys)
        out[f"lorak_{lm}"]["floor_seconds"] = seconds
        out[f"lorak_{lm}"]["floor_ratio"] = out[f"lorak_{lm}"]["seconds"] / seconds
    need = n * n * 8
    if dense:
        for name, fn in (("exact_lssvm", lssvm_exact), ("sklearn_kernel_ridge", kernel_ridge)):
            res, pred = measure(fn(X, y, Xt, b), 1)
            res["test_error_pct"] = error_pct(pred, yt)
            out[name] = res
            print(f"[{label}] {name}: {res['seconds']:.2f} s, {res['test_error_pct']:.2f} %")
        kr = out["sklearn_kernel_ridge"]
        for lm in ("uniform", "kmeans"):
            ours = out[f"lorak_{lm}"]
            out[f"speedup_vs_kernel_ridge_{lm}"] = kr["seconds"] / ours["seconds"]
            if "rank_choice" in ours:  # the rank search paid once, on top of the fit
                with_choice = ours["seconds"] + ours["rank_choice"]["seconds"]
                out[f"speedup_with_rank_choice_{lm}"] = kr["seconds"] / with_choice
            out[f"memory_ratio_vs_kernel_ridge_{lm}"] = ours["peak_bytes"] / kr["peak_bytes"]
            out[f"error_points_vs_kernel_ridge_{lm}"] = (
                ours["test_error_pct"] - kr["test_error_pct"]
            )
            out[f"speedup_vs_exact_{lm}"] = out["exact_lssvm"]["seconds"] / ours["seconds"]
    else:
        note = f"skipped: the n × n kernel alone needs {need / GIB:.1f} GiB"
        out["exact_lssvm"] = out["sklearn_kernel_ridge"] = {"skipped": note}
    return out


def effective_dimension(G, C: float) -> float:
    """d_eff = Σ σᵢ / (σᵢ + 1/C) over the eigenvalues σ of the centred Gram ḠᵀḠ: the
    number of directions the LS-SVM's ridge 1/C leaves unshrunk, as the factor sees them."""
    Gc = G - G.mean(axis=0)
    sig = np.clip(np.linalg.eigvalsh(Gc.T @ Gc), 0.0, None)
    return float(np.sum(sig / (sig + 1.0 / C)))


def choose_rank(X, b, landmarks: str, *, start: float = 0.025, cap: float = 0.4) -> dict:
    """m by the factor's own approximation of the problem, not a fixed fraction of n.

    Doubling m from ``start`` · n until the factor's effective dimension d_eff(1/C)
    (:func:`effective_dimension` of that m's factor of the training rows) grows by less
    than 10 % on a doubling — the factor then holds the directions the ridge 1/C leaves
    unshrunk, which is what the LS-SVM needs of it (uniform Nyström needs m of the order
    of d_eff: Bach 2013; Rudi, Camoriano & Rosasco 2015) — or m would pass ``cap`` · n.
    Returns the previous m of the last doubling (the one whose d_eff the next one barely
    improved), the path, and the search's wall time.
    """
    n = X.shape[0]
    m = max(8, round(start * n))
    path = []
    with Stopwatch() as sw:
        while True:
            f = Nystroem(
                kernel="gaussian", bandwidth=b, n_components=m, landmarks=landmarks, random_state=0
            )
            path.append({"m": m, "d_eff": effective_dimension(f.fit_transform(X), C)})
            if len(path) > 1 and path[-1]["d_eff"] < 1.1 * path[-2]["d_eff"]:
                m = path[-2]["m"]
                break
            if 2 * m > cap * n:
                break
            m *= 2
    return {"m": m, "path": path, "seconds": sw.wall}


def bench_subsampled_kernel_ridge(X, y, Xt, yt, b, n_sub) -> dict:
    rng = np.random.default_rng(0)
    idx = rng.choice(X.shape[0], n_sub, replace=False)
    res, pred = measure(kernel_ridge(X[idx], y[idx], Xt, b), 1)
    res["test_error_pct"] = error_pct(pred, yt)
    res["n_sub"] = int(n_sub)
    return res


# ---------------------------------------------------------------- kernel PCA


def unit_directions(Z, k=3):
    Z = np.asarray(Z[:, :k], dtype=np.float64)
    return Z / np.linalg.norm(Z, axis=0)


def misalignment(U, Ua) -> float:
    A = np.linalg.lstsq(Ua, U, rcond=None)[0]
    return float(np.linalg.norm(U - Ua @ A))


def kpca_ours(X, b, m, landmarks):
    def run():
        factor = Nystroem(
            kernel="gaussian", bandwidth=b, n_components=m, landmarks=landmarks, random_state=0
        )
        return LowRankKernelPCA(factor, n_components=N_KPCA).fit_transform(X)

    return run


def kpca_sklearn(X, b, solver):
    def run():
        kp = KernelPCA(
            n_components=N_KPCA, kernel="rbf", gamma=1.0 / b, eigen_solver=solver, random_state=0
        )
        return kp.fit_transform(X)

    return run


def bench_kpca(X, b, m, repeats, *, dense: bool, label: str) -> dict:
    out = {"n": int(X.shape[0]), "m": m, "n_components": N_KPCA}
    ref = None
    if dense:
        for solver in ("dense", "randomized"):
            res, Z = measure(kpca_sklearn(X, b, solver), 1)
            out[f"sklearn_kernel_pca_{solver}"] = res
            if solver == "dense":
                ref = unit_directions(Z)
            else:
                res["misalignment_top3_vs_dense"] = misalignment(ref, unit_directions(Z))
            print(f"[{label}] KernelPCA {solver}: {res['seconds']:.2f} s")
    else:
        need = X.shape[0] ** 2 * 8
        note = f"skipped: the n × n kernel alone needs {need / GIB:.1f} GiB"
        out["sklearn_kernel_pca_dense"] = out["sklearn_kernel_pca_randomized"] = {"skipped": note}
    for lm in ("uniform", "kmeans"):
        res, Z = measure(kpca_ours(X, b, m, lm), repeats)
        if ref is not None:
            res["misalignment_top3_vs_dense"] = misalignment(ref, unit_directions(Z))
        out[f"lorak_{lm}"] = res
        print(f"[{label}] lorak kpca {lm}: {res['seconds']:.2f} s")
        if dense:
            for solver in ("dense", "randomized"):
                sk = out[f"sklearn_kernel_pca_{solver}"]
                out[f"speedup_vs_{solver}_{lm}"] = sk["seconds"] / res["seconds"]
                out[f"memory_ratio_vs_{solver}_{lm}"] = res["peak_bytes"] / sk["peak_bytes"]
    return out


# ---------------------------------------------------------------- main


def environment(threads: int) -> dict:
    return capture_environment() | {
        "blas_threads": threads,
        "threadpools": [
            {k: i.get(k) for k in ("internal_api", "num_threads", "version")}
            for i in threadpool_info()
        ],
    }


def run(args) -> dict:
    result = {"benchmark": "bench_downstream", "config": dict(vars(args)), "C": C}
    result["environment"] = environment(args.threads)
    result["targets"] = {
        "lssvm_speedup_vs_kernel_ridge": TARGET_SPEEDUP,
        "lssvm_error_points_vs_kernel_ridge": TARGET_ERROR_POINTS,
    }
    with threadpool_limits(args.threads):
        name, X, y, Xt, yt = load_usps(args.quick)
        b = paper_bandwidth(X)
        m = max(1, round(0.1 * X.shape[0]))
        result["usps_data"] = name
        result["bandwidth_usps"] = b
        m_ls = m if args.m_usps == "fixed" else "auto"
        result["lssvm_usps"] = bench_lssvm(
            X, y, Xt, yt, b, m_ls, args.repeats, dense=True, label=name
        )
        if not args.skip_kpca:
            result["kpca_usps"] = bench_kpca(X, b, m, args.repeats, dense=True, label=name)
        if not args.skip_large:
            Xl, yl, Xlt, ylt = load_large(args.n_large, args.n_large // 5)
            bl = paper_bandwidth(Xl)
            result["bandwidth_large"] = bl
            label = f"ringnorm n={args.n_large}"
            result["lssvm_large"] = bench_lssvm(
                Xl, yl, Xlt, ylt, bl, args.m_large, args.repeats, dense=False, label=label
            )
            result["lssvm_large"]["sklearn_kernel_ridge_subsample"] = bench_subsampled_kernel_ridge(
                Xl, yl, Xlt, ylt, bl, args.n_sub
            )
            if not args.skip_kpca:
                result["kpca_large"] = bench_kpca(
                    Xl, bl, args.m_large, args.repeats, dense=False, label=label
                )
    ls = result["lssvm_usps"]
    result["checks"] = {
        f"lssvm_{lm}": {
            "speedup": ls[f"speedup_vs_kernel_ridge_{lm}"],
            "error_points": ls[f"error_points_vs_kernel_ridge_{lm}"],
            "speedup_met": ls[f"speedup_vs_kernel_ridge_{lm}"] >= TARGET_SPEEDUP,
            "error_met": ls[f"error_points_vs_kernel_ridge_{lm}"] <= TARGET_ERROR_POINTS,
        }
        for lm in ("uniform", "kmeans")
    }
    return result


def build_parser():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n=1500 USPS rows, n=5000 synthetic")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--n-large", type=int, default=50000)
    ap.add_argument("--m-large", type=int, default=1000)
    ap.add_argument("--n-sub", type=int, default=10000, help="KernelRidge subsample at n-large")
    ap.add_argument("--skip-large", action="store_true")
    ap.add_argument(
        "--m-usps",
        choices=("auto", "fixed"),
        default="auto",
        help="LS-SVM rank on USPS: by the effective dimension (auto) or m = 0.1 n (fixed)",
    )
    ap.add_argument("--skip-kpca", action="store_true")
    ap.add_argument(
        "--strict-load",
        action="store_true",
        help="refuse to record when the load average exceeds the cores",
    )
    ap.add_argument("--out", default="bench/scripts/out/bench_downstream.json")
    return ap


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.quick:
        args.repeats = 1
        args.n_large, args.m_large, args.n_sub = 5000, 200, 1000
    guard = LoadGuard(
        strict=args.strict_load or None, label="bench_downstream", threads=args.threads
    ).start()
    result = run(args)
    result["load"] = guard.stop().record()
    out = write_json(args.out, result, indent=2)
    print(json.dumps(result["checks"], indent=1))
    print(f"wrote {out}")
    return result


if __name__ == "__main__":
    main()

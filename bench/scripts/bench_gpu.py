"""lorak's factor path on a GPU (PyTorch tensors, array API dispatch), against the GPU's
own floor and scikit-learn's array-API ``Nystroem``, in one run; writes JSON.

Measures, float32 on torch tensors on ``--device`` (default cuda), n = ``--n`` rows
(default 10⁶), d = 784:

(a) the floor, in this run: GEMM (n × d by d × m) and the triangular multiply of the
    n × m block by an m × m triangle — the fastest of cuBLAS ``strmm`` (through CuPy,
    when CuPy is there), the triangular solve ``torch.linalg.solve_triangular`` (same
    flops) and half the general n × m × m product; lorak's in-place triangular
    products (halving the columns, the library's choice, and column blocks, both within
    the memory budget) are recorded beside them — for m = 1000 and 4000;
(b) ``lorak.Nystroem(n_components=m).fit_transform`` at m = 1000 and 4000: time (the
    median of ``--repeats`` runs after one warm-up; the fit and the transform alone
    beside it), its ratio to GEMM + TRMM, peak
    device memory (``torch.cuda.max_memory_allocated`` above what was allocated before)
    against the n × m output, and the float32 factor's error against float64 rows;
(c) k-means landmarks, k = 1000, on the n × d tensor (seeding on the host, Lloyd on the
    device), one run after a warm-up on a slice;
(d) scikit-learn's ``Nystroem`` with ``sklearn.set_config(array_api_dispatch=True)`` on
    the same tensors (same m, same γ = 1/d), the ratio lorak / scikit-learn;
(e) the NumPy path on the host: ``lorak.Nystroem`` on ``--host-n`` rows (default 70,000;
    a smaller n than the device's), 2 BLAS threads (the 2-core reference of issue 32)
    and all cores; times and rows per second, and the device / host rate ratio;
(f) SEMI-SUPERVISED HOOK: ``lorak.GraphRegularizedFactor`` and
    ``lorak.SemiSupervisedFactorClassifier`` at n rows with ``--labels`` labeled rows on
    the tensors. A failure there is recorded in the JSON (``error``), never aborts
    the run.

Runs without array-api-compat installed (scikit-learn's vendored copy is used), from a
checkout: ``PYTHONPATH=src python bench/scripts/bench_gpu.py --out bench_gpu.json``.
``--quick`` (tiny sizes) is the CPU smoke test: ``--device cpu --quick``.

Targets (issue 32): (b) ≤ 1.3× GEMM + TRMM; ≤ 0.75× scikit-learn's time; peak memory
≤ the n × m output plus one chunk (``lorak.get_config()["memory_budget"]``); ≥ 20× the
2-core NumPy path's rows per second; (c) ≤ 5 s.
"""

from __future__ import annotations

import os

# scikit-learn's array API dispatch needs SciPy's array API support, switched on before
# SciPy is imported; lorak's own dispatch does not need it.
os.environ.setdefault("SCIPY_ARRAY_API", "1")

import argparse
import json
import platform
import subprocess
import sys
import traceback
from pathlib import Path

import numpy as np

from lorak_bench.timing import Stopwatch, load_average, time_call

TARGETS = {
    "nystroem_floor_ratio": 1.3,
    "nystroem_over_sklearn": 0.75,
    "device_over_2core_host_rate": 20.0,
    "kmeans_seconds": 5.0,
    "peak_memory_over_output_plus_chunk": 1.0,
}


def _compat():
    """array_api_compat, or scikit-learn's vendored copy where it is not installed (the
    one lorak's dispatch uses)."""
    try:
        import array_api_compat as compat
    except ImportError:
        from sklearn.externals import array_api_compat as compat
    return compat


def _error(exc) -> dict:
    return {
        "error": f"{type(exc).__name__}: {exc}",
        "traceback": traceback.format_exc(limit=8),
    }


class Clock:
    """Wall time around device work: :func:`lorak_bench.timing.time_call` and
    :class:`lorak_bench.timing.Stopwatch` with the device synchronized as the timing starts
    and as it stops on CUDA (their ``sync`` hook)."""

    def __init__(self, torch, device):
        self.torch = torch
        self.cuda = str(device).startswith("cuda")

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()

    def stopwatch(self):
        """A :class:`lorak_bench.timing.Stopwatch` that waits for the device."""
        return Stopwatch(sync=self.sync)

    def time(self, fn, repeats=1, warmup=True, keep=False):
        """(median seconds, all seconds, the last result when ``keep`` else None)."""
        if warmup:
            fn()
            self.sync()
        # time_call frees the previous result before the next run
        out, timing = time_call(fn, repeats=repeats, sync=self.sync)
        return timing.wall, list(timing.walls), out if keep else None

    def peak(self, fn):
        """(result, peak bytes allocated above the bytes allocated before) on CUDA."""
        if not self.cuda:
            return fn(), None
        torch = self.torch
        self.sync()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        out = fn()
        self.sync()
        return out, int(torch.cuda.max_memory_allocated() - base)


# ------------------------------------------------------------------------- (a) floor


def _trmm_cupy(torch, C, N):
    """C ← C N in place by cuBLAS strmm through CuPy (N upper triangular, row-major)."""
    import cupy
    from cupy_backends.cuda.libs import cublas

    n, m = C.shape
    handle = cupy.cuda.device.get_cublas_handle()
    alpha = np.ones(1, dtype=np.float32)
    # row-major C (n × m) is Cᵀ column-major (m × n, ld m); row-major upper N is Nᵀ
    # column-major, lower: Cᵀ ← Nᵀ Cᵀ is side LEFT, uplo LOWER, no transpose
    cublas.strmm(
        handle,
        cublas.CUBLAS_SIDE_LEFT,
        cublas.CUBLAS_FILL_MODE_LOWER,
        cublas.CUBLAS_OP_N,
        cublas.CUBLAS_DIAG_NON_UNIT,
        m,
        n,
        alpha.ctypes.data,
        N.data_ptr(),
        m,
        C.data_ptr(),
        m,
        C.data_ptr(),
        m,
    )
    return C


def floor(torch, clock, X, m, repeats):
    """GEMM X Zᵀ and the triangular multiply of the n × m block, float32."""
    from lorak.kernels import upper_triangular_product

    n, d = X.shape
    g = torch.Generator(device=X.device).manual_seed(1)
    Z = torch.randn(m, d, device=X.device, dtype=X.dtype, generator=g)
    N = torch.triu(torch.randn(m, m, device=X.device, dtype=X.dtype, generator=g)) / m
    N += torch.eye(m, device=X.device, dtype=X.dtype)
    out = {"n": n, "d": d, "m": m}
    C = torch.empty(n, m, device=X.device, dtype=X.dtype)
    t, _, _ = clock.time(lambda: torch.matmul(X, Z.T, out=C), repeats)
    out["gemm_seconds"] = t
    out["gemm_tflops"] = 2.0 * n * d * m / t / 1e12
    tri = {}
    try:
        if not clock.cuda:
            raise RuntimeError("cuBLAS strmm needs a CUDA device")
        # check it against the general product on a few rows first
        S = C[:64].clone()
        ref = S @ N
        _trmm_cupy(torch, S, N)
        clock.sync()
        if not torch.allclose(S, ref, rtol=1e-3, atol=1e-3):
            raise RuntimeError("cuBLAS strmm through CuPy disagrees with C @ N")
        tri["trmm_cublas"], _, _ = clock.time(lambda: _trmm_cupy(torch, C, N), repeats)
    except Exception as exc:
        tri["trmm_cublas_error"] = f"{type(exc).__name__}: {exc}"
    try:
        t, _, _ = clock.time(
            lambda: torch.linalg.solve_triangular(N, C, upper=True, left=False), repeats
        )
        tri["trsm_torch"] = t
    except Exception as exc:
        tri["trsm_torch_error"] = f"{type(exc).__name__}: {exc}"
    xp = _compat().array_namespace(C)
    t, _, _ = clock.time(lambda: upper_triangular_product(xp, C, N, inplace=True), repeats)
    tri["lorak_blocked_triangular"] = t  # the library's choice (halving the columns)
    # the alternative in-place scheme, within the same memory budget (row chunks)
    t, _, _ = clock.time(
        lambda: upper_triangular_product(xp, C, N, inplace=True, method="columns"), repeats
    )
    tri["lorak_column_blocks_triangular"] = t
    t, _, _ = clock.time(lambda: torch.matmul(C, N), repeats)
    tri["general_nmm_product"] = t
    out["triangular"] = tri
    # the triangular multiply's floor: the fastest of cuBLAS trmm, the triangular solve
    # (both n m² flops) and half the general product (n m² flops at its rate)
    choices = {k: v for k, v in tri.items() if k in ("trmm_cublas", "trsm_torch")}
    choices["half_general_nmm_product"] = tri["general_nmm_product"] / 2.0
    name = min(choices, key=choices.get)
    out["trmm_kind"] = name
    out["trmm_seconds"] = choices[name]
    out["floor_seconds"] = out["gemm_seconds"] + out["trmm_seconds"]
    return out


# ------------------------------------------------------------------------- (b), (d)


def bench_lorak_nystroem(torch, clock, X, m, repeats, fl):
    import lorak

    n = X.shape[0]
    est = lorak.Nystroem(n_components=m, random_state=0)  # γ = 1/d, uniform landmarks

    def run():
        return est.fit_transform(X)

    t, ts, _ = clock.time(run, repeats)
    # where the time goes: the fit (bandwidth, landmarks, W and its Cholesky) and the
    # transform (the kernel block and the triangular product)
    t_fit, _, _ = clock.time(lambda: est.fit(X), repeats)
    t_tr, _, _ = clock.time(lambda: est.transform(X), repeats)
    G, peak = clock.peak(run)
    out_bytes = n * m * 4
    chunk_bytes = lorak.get_config()["memory_budget"]
    res = {
        "seconds": t,
        "all_seconds": ts,
        "floor_ratio": t / fl["floor_seconds"],
        "fit_seconds": t_fit,
        "transform_seconds": t_tr,
        "rows_per_second": n / t,
        "rank": int(est.n_components_),
        "cholesky_path": bool(est.normalization_is_upper_),
        "peak_bytes_above_inputs": peak,
        "output_bytes": out_bytes,
        "chunk_budget_bytes": chunk_bytes,
    }
    if peak is not None:
        res["peak_over_output"] = peak / out_bytes
        res["peak_over_output_plus_chunk"] = peak / (out_bytes + chunk_bytes)
    # accuracy of the float32 factor: its rows against float64 rows of the same factor
    rows = min(n, 20000)
    G64 = est.transform(X[:rows].double())
    err = (G[:rows].double() - G64).abs().max().item()
    res["float32_max_abs_error_vs_float64"] = err
    res["factor_max_abs"] = G64.abs().max().item()
    del G
    return res


def bench_sklearn_nystroem(torch, clock, X, m, repeats):
    import sklearn
    from sklearn.kernel_approximation import Nystroem as SkNystroem

    n, d = X.shape
    est = SkNystroem(kernel="rbf", gamma=1.0 / d, n_components=m, random_state=0)
    with sklearn.config_context(array_api_dispatch=True):
        t, ts, _ = clock.time(lambda: est.fit_transform(X), repeats)
        _, peak = clock.peak(lambda: est.fit_transform(X))
    return {
        "seconds": t,
        "all_seconds": ts,
        "rows_per_second": n / t,
        "peak_bytes_above_inputs": peak,
    }


# ------------------------------------------------------------------------- (c)


def bench_kmeans(torch, clock, X, k):
    import lorak
    from lorak.landmarks import select_landmarks

    warm = X[: min(X.shape[0], 50 * k)]
    with lorak.config_context(array_api_dispatch=True):
        with clock.stopwatch():  # the warm-up, waited for
            select_landmarks("kmeans", warm, k, rng=np.random.default_rng(0))
        with clock.stopwatch() as sw:
            lm = select_landmarks("kmeans", X, k, rng=np.random.default_rng(0))
    info = {key: v for key, v in lm.info.items() if key != "labels"}
    return {"seconds": sw.wall, "k": k, **info}


# ------------------------------------------------------------------------- (e)


def bench_host(n, d, m, repeats, threads):
    from threadpoolctl import threadpool_limits

    import lorak

    X = np.random.default_rng(0).standard_normal((n, d)).astype(np.float32)
    res = {"n": n, "d": d, "m": m}

    def run():
        return lorak.Nystroem(n_components=m, random_state=0).fit_transform(X)

    for label, t_count in (("2_threads", 2), ("all_threads", threads)):
        with threadpool_limits(t_count):
            run()  # warm-up
            _, timing = time_call(run, repeats=repeats)
        t = timing.wall
        res[label] = {"threads": t_count, "seconds": t, "rows_per_second": n / t}
    return res


# ------------------------------------------------------------------------- (f)


def bench_semi_supervised(torch, clock, X, n_labels):
    """SEMI-SUPERVISED HOOK (issue 32): the graph factor and the semi-supervised
    classifier on the device tensors. Each step's failure is recorded, not raised."""
    import lorak

    n = X.shape[0]
    g = np.random.default_rng(2)
    w = g.standard_normal(X.shape[1]).astype(np.float32)
    score = (X[:, : w.size] @ torch.as_tensor(w, device=X.device)).cpu().numpy()
    y_true = (score > np.median(score)).astype(np.int64)
    y = np.full(n, -1, dtype=np.int64)
    labeled = g.choice(n, n_labels, replace=False)
    y[labeled] = y_true[labeled]
    out = {"n": n, "labels": n_labels}
    with lorak.config_context(array_api_dispatch=True):
        try:
            est = lorak.GraphRegularizedFactor(random_state=0)
            t, _, F = clock.time(lambda: est.fit_transform(X, y), 1, warmup=False, keep=True)
            out["graph_factor"] = {"seconds": t, "output_type": type(F).__module__}
            del F
        except Exception as exc:
            out["graph_factor"] = _error(exc)
        try:
            clf = lorak.SemiSupervisedFactorClassifier()
            t, _, _ = clock.time(lambda: clf.fit(X, y), 1, warmup=False)
            tp, _, pred = clock.time(lambda: clf.predict(X), 1, warmup=False, keep=True)
            pred_np = pred.cpu().numpy() if hasattr(pred, "cpu") else np.asarray(pred)
            unl = y == -1
            out["classifier"] = {
                "fit_seconds": t,
                "predict_seconds": tp,
                "output_type": type(pred).__module__,
                "accuracy_unlabeled": float(np.mean(pred_np[unl] == y_true[unl])),
            }
        except Exception as exc:
            out["classifier"] = _error(exc)
    return out


# ------------------------------------------------------------------------- main


def environment(torch, device):
    env = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "numpy": np.__version__,
        "torch": torch.__version__,
        "device": str(device),
        "cpu_count": os.cpu_count(),
    }
    for mod in ("sklearn", "scipy", "cupy", "array_api_compat"):
        try:
            env[mod] = __import__(mod).__version__
        except Exception:
            env[mod] = None
    env["array_api_compat_used"] = _compat().__name__
    if str(device).startswith("cuda"):
        env["gpu"] = torch.cuda.get_device_name(device)
        env["cuda"] = torch.version.cuda
        env["gpu_memory_bytes"] = torch.cuda.get_device_properties(device).total_memory
    try:
        env["commit"] = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except Exception:
        env["commit"] = None
    env["load_average"] = load_average()
    return env


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--d", type=int, default=784)
    ap.add_argument("--ms", type=int, nargs="+", default=[1000, 4000])
    ap.add_argument("--k", type=int, default=1000, help="k-means landmarks")
    ap.add_argument("--labels", type=int, default=1000, help="labeled rows of (f)")
    ap.add_argument("--host-n", type=int, default=70_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--device", default="cuda", help="cuda, cuda:1, cpu")
    ap.add_argument("--quick", action="store_true", help="tiny sizes (a CPU smoke test)")
    ap.add_argument("--skip", nargs="*", default=[], help="sections to skip: a b c d e f")
    ap.add_argument(
        "--budget-s",
        type=float,
        default=330.0,
        help="skip the sections that would start after this many seconds (recorded)",
    )
    ap.add_argument("--out", default="bench/scripts/out/bench_gpu.json")
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.d, args.ms, args.k = 3000, 32, [50, 120], 20
        args.labels, args.host_n, args.repeats = 60, 2000, 1
    return args


class Sections:
    """Runs the benchmark's sections into ``result`` under one time budget (the clock
    starts here), each timed, its failure recorded, and what has run so far written to
    ``out`` after each: a run cut short still leaves its sections."""

    def __init__(self, result, out, budget_s, clock, torch):
        self.result, self.out, self.budget_s = result, out, budget_s
        self.clock, self.torch = clock, torch
        self.run = Stopwatch().__enter__()  # the whole run's clock: run.elapsed

    def __call__(self, key, fn):
        result, run = self.result, self.run
        if run.elapsed > self.budget_s:
            result[key] = {"skipped": f"time budget of {self.budget_s:.0f} s spent"}
            print(f"{key}: skipped (time budget)", flush=True)
            return
        with Stopwatch() as sw:
            try:
                result[key] = fn()
            except Exception as exc:
                result[key] = _error(exc)
            if self.clock.cuda:
                self.torch.cuda.empty_cache()
        print(f"[{run.elapsed:7.1f} s] {key} ({sw.wall:.1f} s):")
        print(json.dumps(result[key], indent=1, default=str)[:2000], flush=True)
        write_result(self.out, result)


def write_result(out, result):
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, default=str) + "\n")


def nystroem_sections(section, torch, clock, X, m, args):
    """Sections a, b and d at rank ``m``: the floor, lorak's Nyström against it, and
    scikit-learn's; lorak over scikit-learn when both ran."""
    result = section.result
    if "a" not in args.skip:
        section(f"floor_m{m}", lambda: floor(torch, clock, X, m, args.repeats))
    fl = result.get(f"floor_m{m}", {})
    if "b" not in args.skip and "floor_seconds" in fl:
        section(
            f"lorak_nystroem_m{m}",
            lambda: bench_lorak_nystroem(torch, clock, X, m, args.repeats, fl),
        )
    if "d" not in args.skip:
        section(
            f"sklearn_nystroem_m{m}",
            lambda: bench_sklearn_nystroem(torch, clock, X, m, args.repeats),
        )
    ours = result.get(f"lorak_nystroem_m{m}", {})
    theirs = result.get(f"sklearn_nystroem_m{m}", {})
    if "seconds" in ours and "seconds" in theirs:
        ours["over_sklearn"] = ours["seconds"] / theirs["seconds"]


def host_section(section, args):
    """Section e: NumPy on the host at the first rank; the device's rate over it."""
    result = section.result
    m0 = args.ms[0]
    section(
        "host_numpy",
        lambda: bench_host(args.host_n, args.d, m0, args.repeats, os.cpu_count() or 1),
    )
    ours = result.get(f"lorak_nystroem_m{m0}", {})
    host = result.get("host_numpy", {}).get("2_threads", {})
    if "rows_per_second" in ours and "rows_per_second" in host:
        ours["over_2core_host_rate"] = ours["rows_per_second"] / host["rows_per_second"]


def gpu_target_checks(result, ms):
    """Each target of :data:`TARGETS` that the run measured: met or not."""
    checks = {}
    for m in ms:
        r = result.get(f"lorak_nystroem_m{m}", {})
        if "floor_ratio" in r:
            checks[f"nystroem_floor_m{m}"] = r["floor_ratio"] <= TARGETS["nystroem_floor_ratio"]
        if "over_sklearn" in r:
            checks[f"nystroem_sklearn_m{m}"] = r["over_sklearn"] <= TARGETS["nystroem_over_sklearn"]
        if r.get("peak_over_output_plus_chunk") is not None:
            checks[f"nystroem_memory_m{m}"] = (
                r["peak_over_output_plus_chunk"] <= TARGETS["peak_memory_over_output_plus_chunk"]
            )
        if "over_2core_host_rate" in r:
            checks[f"host_rate_m{m}"] = (
                r["over_2core_host_rate"] >= TARGETS["device_over_2core_host_rate"]
            )
    if "seconds" in result.get("kmeans", {}):
        checks["kmeans"] = result["kmeans"]["seconds"] <= TARGETS["kmeans_seconds"]
    return checks


def main(argv=None):
    args = parse_args(argv)

    import torch

    import lorak

    device = torch.device(args.device)
    clock = Clock(torch, device)
    result = {
        "benchmark": "bench_gpu",
        "config": vars(args),
        "targets": TARGETS,
        "environment": environment(torch, device),
    }
    out = Path(args.out)
    section = Sections(result, out, args.budget_s, clock, torch)
    lorak.set_config(array_api_dispatch=True)
    g = torch.Generator(device=device).manual_seed(0)
    X = torch.randn(args.n, args.d, device=device, dtype=torch.float32, generator=g)
    clock.sync()

    for m in args.ms:
        nystroem_sections(section, torch, clock, X, m, args)
    if "c" not in args.skip:
        section("kmeans", lambda: bench_kmeans(torch, clock, X, args.k))
    if "e" not in args.skip:
        host_section(section, args)
    if "f" not in args.skip:
        section("semi_supervised", lambda: bench_semi_supervised(torch, clock, X, args.labels))
    result["total_seconds"] = section.run.elapsed
    checks = gpu_target_checks(result, args.ms)
    result["checks"] = checks
    print(json.dumps(checks, indent=1))
    write_result(out, result)
    print(f"wrote {out} ({result['total_seconds']:.0f} s)")
    return result


if __name__ == "__main__":
    main()

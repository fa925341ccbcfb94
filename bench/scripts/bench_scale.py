"""Scaling of lorak on more data than memory: a Dask LocalCluster, and a memmap.

Pipeline (issue #9): ``Nystroem(n_components=m, landmarks="kmeans")`` fitted on X (the
k-means seeding on a random sample, then 10 Lloyd iterations as passes over the row
chunks), then ``transform(X)`` reduced chunk by chunk (column sums of G, so that the n×m
factor is never held). Optionally (``--lssvm-max-n``) the LS-SVM statistics ḠᵀḠ, Ḡᵀȳ
of one more pass (:func:`lorak.parallel.row_moments`: count, means and centred scatter
of [G y], merged exactly across chunks by :func:`lorak.parallel.merge_moments`).

Data: a mixture of 30 Gaussian clusters in d dimensions (float32), generated block by
block from (seed, block index) inside the tasks, so X is never materialized: every pass
regenerates its blocks (generation time is part of every pass, as reading would be).

* ``dask``: a fresh ``distributed.LocalCluster`` (2 worker processes, 1 thread each, on
  loopback) per n; peak memory per worker = the largest RSS of each worker process,
  sampled every 20 ms by a thread in the worker (it includes the interpreter and the
  imports: ``worker_rss_start_bytes``).
* ``memmap``: the same data written chunk-wise to a float32 memmap on disk, then the same
  pipeline in this process (``Nystroem.fit`` on the memmap, ``transform`` through
  :func:`lorak.parallel.reduce_rows` in chunks of ``--chunk`` rows, as the dask chunks;
  the fit's k-means is the in-memory one, with n-sized label/bound vectors, reading the
  mapped rows block by block); peak = tracemalloc's
  peak of Python/numpy allocations (the mapped file's pages are page cache, not heap).

Optional ``--dask-ml N …``: dask-ml's ``KMeans(init="k-means||")`` with the same k and
10 iterations on the same dask array, against our k-means landmarks (time, inertia).

Usage: python bench/scripts/bench_scale.py [--sizes 1e5 1e6 1e7] [--out FILE] [--quick]
Run timings that are quoted alone on the machine (e.g. under ``flock`` with a lock file).
"""

from __future__ import annotations

import argparse
import gc
import json
import shutil
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

from lorak_bench.timing import Stopwatch, capture_environment, time_call, write_json

N_CLUSTERS = 30
SEED = 20261121


def _centres(d):
    return (4.0 * np.random.default_rng(SEED).standard_normal((N_CLUSTERS, d))).astype(np.float32)


def gen_block(index, rows, d):
    """Rows of block ``index``: cluster centre + N(0, 1) noise, float32."""
    rng = np.random.default_rng([SEED, int(index)])
    lab = rng.integers(N_CLUSTERS, size=rows)
    X = rng.standard_normal((rows, d), dtype=np.float32)
    X += _centres(d)[lab]
    return X


def target_of(X):
    return (np.sin(X[:, 0]) + 0.1 * X[:, 1] * X[:, 2]).astype(np.float64)


def dask_data(n, d, chunk):
    import dask.array as da

    rows = tuple(min(chunk, n - s) for s in range(0, n, chunk))

    def block(block_info=None):
        i = block_info[None]["chunk-location"][0]
        return gen_block(i, block_info[None]["chunk-shape"][0], d)

    meta = np.empty((0, 0), np.float32)
    return da.map_blocks(block, chunks=(rows, (d,)), dtype=np.float32, meta=meta)


def _start_rss_probe():
    """In a worker: sample this process's RSS every 20 ms, keep the maximum."""
    import threading

    import psutil

    proc = psutil.Process()
    state = {"start": proc.memory_info().rss}
    state["peak"] = state["start"]

    def loop():
        while True:
            state["peak"] = max(state["peak"], proc.memory_info().rss)
            time.sleep(0.02)

    threading.Thread(target=loop, daemon=True).start()
    sys._lorak_bench_rss = state


def _read_rss_probe():
    return dict(sys._lorak_bench_rss)


def worker_peak_rss(client):
    """Peak RSS of each worker process since the probe started (sampled every 20 ms)."""
    return sorted(v["peak"] for v in client.run(_read_rss_probe).values())


def run_dask(n, d, m, chunk, workers, lssvm, dask_ml, landmarks="kmeans"):
    from distributed import Client, LocalCluster

    import lorak
    from lorak.parallel import row_moments

    out = {"n": n, "d": d, "m": m, "chunk_rows": chunk, "workers": workers, "landmarks": landmarks}
    with (
        LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            memory_limit="6GB",
            silence_logs=40,
        ) as cluster,
        Client(cluster) as client,
    ):
        client.run(lambda: __import__("lorak"))  # imports are not part of the timing
        client.run(_start_rss_probe)
        out["worker_rss_start_bytes"] = worker_peak_rss(client)
        X = dask_data(n, d, chunk)
        est = lorak.Nystroem(n_components=m, landmarks=landmarks, random_state=0)
        with Stopwatch() as sw:
            est.fit(X)
        out["fit_seconds"] = sw.wall
        out["kmeans"] = {
            k: v for k, v in est.landmark_info_.items() if isinstance(v, (int, float, str))
        }
        out["worker_peak_rss_after_fit_bytes"] = worker_peak_rss(client)
        print(f"n={n} dask fit {out['fit_seconds']:.1f} s", flush=True)
        with Stopwatch() as sw:
            colsum = est.transform(X).sum(axis=0, dtype=np.float64).compute()
        out["transform_seconds"] = sw.wall
        out["transform_checksum"] = float(colsum.sum())
        out["fit_transform_seconds"] = out["fit_seconds"] + out["transform_seconds"]
        out["fit_transform_us_per_row"] = 1e6 * out["fit_transform_seconds"] / n
        if lssvm and n <= lssvm:
            y = X.map_blocks(target_of, drop_axis=1, dtype=np.float64)
            with Stopwatch() as sw:
                row_moments(est.transform(X), y[:, None])
            out["lssvm_stats_seconds"] = sw.wall
            out["lssvm_stats_us_per_row"] = 1e6 * out["lssvm_stats_seconds"] / n
        out["worker_peak_rss_bytes"] = worker_peak_rss(client)
        if dask_ml and n in dask_ml:
            out["dask_ml"] = run_dask_ml(X, m, est.landmark_info_, out["fit_seconds"])
        del X
    # per chunk: the X block (float32), one (rows × m) float32 kernel block of the
    # transform, and the float64 copy of it the column sum takes
    out["chunk_bytes"] = {"X": chunk * d * 4, "G": chunk * m * 4}
    return out


def _qe_block(B, C):
    B = np.asarray(B, dtype=np.float64)
    D = (B * B).sum(1)[:, None] - 2.0 * B @ C.T + (C * C).sum(1)[None, :]
    return float(np.maximum(D.min(axis=1), 0.0).sum())


def quantization_error(X, C):
    """Σᵢ minⱼ ‖xᵢ − cⱼ‖² by a reduction over the chunks of X."""
    from lorak.parallel import reduce_rows

    return float(reduce_rows(_qe_block, X, args=(np.asarray(C, dtype=np.float64),)))


def run_dask_ml(X, k, ours, our_fit_seconds):
    try:
        from dask_ml.cluster import KMeans
    except Exception as exc:  # pragma: no cover
        return {"error": f"dask-ml does not import: {exc!r}"}
    with Stopwatch() as sw:
        km = KMeans(n_clusters=k, init="k-means||", max_iter=10, random_state=0).fit(X)
    sec = sw.wall
    inertia = quantization_error(X, km.cluster_centers_)  # the same measure as ours
    return {
        "seconds": sec,
        "inertia": inertia,
        "dask_ml_inertia_attribute": float(km.inertia_),
        "n_iter": int(getattr(km, "n_iter_", -1)),
        "ours_inertia": float(ours["inertia"]),
        "inertia_ratio_ours_over_dask_ml": float(ours["inertia"]) / inertia,
        "ours_fit_seconds_incl_W": our_fit_seconds,
    }


def run_memmap(n, d, m, chunk, tmpdir, lssvm, landmarks="kmeans"):
    import lorak
    from lorak.parallel import merge_moments, reduce_rows, row_moments

    out = {"n": n, "d": d, "m": m, "landmarks": landmarks}
    path = Path(tmpdir) / f"bench_scale_{n}.f32"
    with Stopwatch() as sw:
        mm = np.memmap(path, dtype=np.float32, mode="w+", shape=(n, d))
        for i, s in enumerate(range(0, n, chunk)):
            mm[s : s + chunk] = gen_block(i, min(chunk, n - s), d)
        mm.flush()
        del mm
    out["write_seconds"] = sw.wall
    X = np.memmap(path, dtype=np.float32, mode="r", shape=(n, d))
    try:
        gc.collect()
        tracemalloc.start()
        est = lorak.Nystroem(n_components=m, landmarks=landmarks, random_state=0)
        with Stopwatch() as sw:
            est.fit(X)
        out["fit_seconds"] = sw.wall
        _, out["fit_peak_traced_bytes"] = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        with Stopwatch() as sw:
            colsum = reduce_rows(
                lambda B: est.transform(B).sum(axis=0, dtype=np.float64), X, rows=chunk
            )
        out["transform_seconds"] = sw.wall
        _, out["transform_peak_traced_bytes"] = tracemalloc.get_traced_memory()
        out["transform_checksum"] = float(colsum.sum())
        if lssvm and n <= lssvm:
            tracemalloc.reset_peak()
            with Stopwatch() as sw:
                reduce_rows(
                    lambda B: row_moments(est.transform(B), target_of(B)),
                    X,
                    combine=merge_moments,
                    rows=chunk,
                )
            out["lssvm_stats_seconds"] = sw.wall
            out["lssvm_stats_us_per_row"] = 1e6 * out["lssvm_stats_seconds"] / n
        tracemalloc.stop()
        out["kmeans"] = {
            k: v for k, v in est.landmark_info_.items() if isinstance(v, (int, float, str))
        }
        out["fit_transform_seconds"] = out["fit_seconds"] + out["transform_seconds"]
        out["fit_transform_us_per_row"] = 1e6 * out["fit_transform_seconds"] / n
        out["data_bytes"] = int(X.nbytes)
        out["memory_budget"] = lorak.get_config()["memory_budget"]
    finally:
        del X
        path.unlink(missing_ok=True)
    return out


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=float, nargs="+", default=[1e5, 1e6, 1e7])
    ap.add_argument("--d", type=int, default=50)
    ap.add_argument("--m", type=int, default=500)
    ap.add_argument("--chunk", type=int, default=25_000, help="rows per dask chunk")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--modes", nargs="+", default=["dask", "memmap"])
    ap.add_argument("--landmarks", default="kmeans", choices=["kmeans", "uniform"])
    ap.add_argument("--lssvm-max-n", type=float, default=1e6)
    ap.add_argument("--dask-ml", type=float, nargs="*", default=[])
    ap.add_argument("--tmpdir", default=tempfile.gettempdir())
    ap.add_argument("--quick", action="store_true", help="n = 2e4, 5e4, m = 50")
    ap.add_argument("--out", default=str(Path(__file__).parent / "out" / "bench_scale.json"))
    ap.add_argument("--merge", action="store_true", help="add to an existing JSON")
    return ap.parse_args(argv)


def run_mode(mode, n, args):
    """One run at ``n`` rows, on dask or from a memory-mapped file (None: skipped, a
    memmap that would need more than half the free disk)."""
    dask_ml = {int(s) for s in args.dask_ml}
    lssvm = int(args.lssvm_max_n)
    if mode == "memmap":
        need = n * args.d * 4
        free = shutil.disk_usage(args.tmpdir).free
        if need > free // 2:
            print(f"skip memmap n={n}: needs {need / 1e9:.1f} GB of {free / 1e9:.1f}")
            return None
    if mode == "dask":
        args_ = (n, args.d, args.m, args.chunk, args.workers, lssvm, dask_ml)
        r, t = time_call(run_dask, *args_, args.landmarks)
    else:
        args_ = (n, args.d, args.m, args.chunk, args.tmpdir, lssvm)
        r, t = time_call(run_memmap, *args_, args.landmarks)
    r.update(mode=mode, wall_seconds=t.wall, load_before=t.load_before, load_after=t.load_after)
    return r


def replace_run(runs, r):
    """``runs`` with ``r`` in place of an earlier run of the same mode, n and landmarks."""
    return [
        x
        for x in runs
        if not (
            x["mode"] == r["mode"]
            and x["n"] == r["n"]
            and x.get("landmarks", "kmeans") == r["landmarks"]
        )
    ] + [r]


def main(argv=None):
    args = parse_args(argv)
    sizes = [int(s) for s in args.sizes]
    if args.quick:
        sizes, args.m, args.chunk = [20_000, 50_000], 50, 5_000
    out_path = Path(args.out)
    result = {"runs": []}
    if args.merge and out_path.exists():
        result = json.loads(out_path.read_text())
    import dask
    import distributed

    result["environment"] = capture_environment() | {
        "dask": dask.__version__,
        "distributed": distributed.__version__,
        "argv": sys.argv[1:],
    }
    out_path.parent.mkdir(parents=True, exist_ok=True)
    for n in sizes:
        for mode in args.modes:
            r = run_mode(mode, n, args)
            if r is None:
                continue
            result["runs"] = replace_run(result["runs"], r)
            print(json.dumps(r, indent=None, default=float), flush=True)
            _summarize(result)
            write_json(out_path, result, indent=2)
    print(f"wrote {out_path}")


def _summarize(result):
    """Per-row time of each n relative to the smallest n of the same mode."""
    summary = {}
    for mode, lm in [(a, b) for a in ("dask", "memmap") for b in ("kmeans", "uniform")]:
        runs = sorted(
            (r for r in result["runs"] if r["mode"] == mode and r.get("landmarks", "kmeans") == lm),
            key=lambda r: r["n"],
        )
        if not runs:
            continue
        base = runs[0]["fit_transform_us_per_row"]
        summary[f"{mode}/{lm}"] = [
            {
                "n": r["n"],
                "us_per_row": r["fit_transform_us_per_row"],
                "ratio_to_smallest_n": r["fit_transform_us_per_row"] / base,
                "peak_bytes": (
                    max(r["worker_peak_rss_bytes"])
                    if mode == "dask"
                    else max(r["fit_peak_traced_bytes"], r["transform_peak_traced_bytes"])
                ),
            }
            for r in runs
        ]
    result["summary"] = summary


if __name__ == "__main__":
    main()

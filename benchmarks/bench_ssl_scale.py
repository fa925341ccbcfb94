"""Scaling of the semi-supervised pipeline with n (issue 33): in memory, on a dask array
generated lazily chunk by chunk, and on a memmap.

Data: two moons (noise ``--moon-noise``) turned into ``--d`` dimensions by a fixed
random rotation, plus isotropic noise ``--noise`` in every dimension: a manifold that
1,000 labels alone find only in part. Every block of rows is generated from its own
seed, so the in-memory, dask and memmap inputs hold the same numbers. ``--labels``
labeled rows, drawn at random.

Methods (each run alone in a fresh process, so that its peak memory is its own):

- ``graph``: ``SemiSupervisedFactorClassifier()``, every default (anchor-graph factor,
  cross-validated ridge/LinearSVC head);
- ``nystroem``: the same model and head choice on plain Nyström with the default
  factor's kernel, landmarks and m;
- ``labelspreading``: scikit-learn's ``LabelSpreading(kernel="knn")``, in memory, up to
  ``--ls-max`` rows.

Reported per run: seconds of ``fit`` and of ``predict`` over all rows (computed, for
dask), seconds per stage inside the fit (the Nyström factor's fit, the anchors'
k-means, the bandwidth pass, the GᵀLG pass, the eigendecomposition of GᵀLG, the
leave-one-out choice of γ, the head's cross-validation, the predictions on the
training rows stored as ``transduction_``; timed by wrapping those
functions' cumulative wall time in a cProfile of the fit, found by file and function
name; the profile adds its own small overhead to ``fit``; ``other_fit_seconds`` is the
rest),
microseconds per row, the process's peak resident
memory (``ru_maxrss``: for dask on the threaded scheduler, the one worker process) and
the error on the unlabeled rows. The load average is recorded around every run.

Usage:
    python benchmarks/bench_ssl_scale.py OUT.json [--sizes 10000 100000]
        [--backends memory dask memmap] [--methods graph nystroem labelspreading]
        [--chunk 20000] [--labels 1000] [--threads 2]

n = 10⁷ on a 2-worker ``LocalCluster`` is not part of this script yet.
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


def make_block(b, n, d, seed, moon_noise, noise):
    """Rows [b·BLOCK, min((b+1)·BLOCK, n)): (X block, y block)."""
    rows = min(BLOCK, n - b * BLOCK)
    rng = np.random.default_rng([seed, 2, b])
    y = rng.integers(0, 2, rows)
    t = rng.uniform(0.0, np.pi, rows)
    P = np.where(
        y[:, None] == 0,
        np.c_[np.cos(t), np.sin(t)],
        np.c_[1.0 - np.cos(t), 0.5 - np.sin(t)],
    )
    P += moon_noise * rng.standard_normal(P.shape)
    X = P @ _rotation(d, seed).T + noise * rng.standard_normal((rows, d))
    return X, y


def make_data(n, d, seed, moon_noise, noise):
    parts = [make_block(b, n, d, seed, moon_noise, noise) for b in range(-(-n // BLOCK))]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def make_dask(n, d, seed, moon_noise, noise, chunk):
    """X as a dask array whose blocks are generated when computed (never all in
    memory), rechunked to ``chunk`` rows; y in memory."""
    import dask
    import dask.array as da

    nb = -(-n // BLOCK)
    blocks = [
        da.from_delayed(
            dask.delayed(lambda b: make_block(b, n, d, seed, moon_noise, noise)[0])(b),
            shape=(min(BLOCK, n - b * BLOCK), d),
            dtype=np.float64,
        )
        for b in range(nb)
    ]
    X = da.concatenate(blocks).rechunk((chunk, d))
    y = np.concatenate([make_block(b, n, d, seed, moon_noise, noise)[1] for b in range(nb)])
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

    from lorak.bench import Stopwatch, load_average

    n, backend, method = cfg["n"], cfg["backend"], cfg["method"]
    gen = (cfg["d"], cfg["seed"], cfg["moon_noise"], cfg["noise"])
    stages = {}
    out = {"n": n, "backend": backend, "method": method, "load_before": load_average()}
    tmp = None
    with threadpool_limits(cfg["threads"]):
        if backend == "dask":
            import dask

            X, y = make_dask(n, *gen, cfg["chunk"])
            out["chunk_rows"] = cfg["chunk"]
            ctx = dask.config.set(scheduler="threads", num_workers=cfg["threads"])
        else:
            import contextlib

            X, y = make_data(n, *gen)
            if backend == "memmap":
                tmp = tempfile.mkdtemp(prefix="lorak-ssl-scale-")
                path = os.path.join(tmp, "X.npy")
                mm = np.lib.format.open_memmap(path, mode="w+", dtype=X.dtype, shape=X.shape)
                mm[:] = X
                mm.flush()
                del mm, X
                X = np.load(path, mmap_mode="r")
            ctx = contextlib.nullcontext()
        ys = labeled_targets(y, cfg["labels"], cfg["seed"])
        model = _model(method, n)
        with ctx:
            with Stopwatch() as sw_fit:
                _, stages = _profiled(lambda: model.fit(X, ys))
            with Stopwatch() as sw_pred:
                pred = model.predict(X)
                pred = np.asarray(pred.compute() if hasattr(pred, "compute") else pred)
    unl = ys == -1
    out.update(
        fit_seconds=sw_fit.wall,
        predict_seconds=sw_pred.wall,
        us_per_row=1e6 * (sw_fit.wall + sw_pred.wall) / n,
        stage_seconds=stages,
        # the rest of fit: validation, the factor's rows (in memory), the m × m algebra
        other_fit_seconds=sw_fit.wall - sum(stages.values()),
        peak_rss_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        error_unlabeled_pct=100.0 * float(np.mean(pred[unl] != y[unl])),
        load_after=load_average(),
    )
    fac = getattr(model, "factor_", None)
    if fac is not None and hasattr(fac, "gamma_"):
        out.update(gamma=fac.gamma_, penalty=fac.penalty_, m=fac.n_components_)
    if getattr(model, "head_cv_errors_", None) is not None:
        out["head_cv_errors"] = model.head_cv_errors_
    if tmp is not None:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    return out


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


def main(argv=None):
    from lorak.bench import Record

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
    ap.add_argument("--moon-noise", type=float, default=0.12)
    ap.add_argument("--noise", type=float, default=0.08)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=900.0)
    a = ap.parse_args(argv)
    rec = Record(
        issue=33,
        data=(
            f"two moons (noise {a.moon_noise}) rotated into {a.d} dimensions plus noise "
            f"{a.noise} per dimension; {a.labels} labels at random"
        ),
        threads=a.threads,
        runs=[],
    )
    for n in a.sizes:
        for backend in a.backends:
            for method in a.methods:
                if method == "labelspreading" and (backend != "memory" or n > a.ls_max):
                    continue
                cfg = {
                    "n": n,
                    "backend": backend,
                    "method": method,
                    "d": a.d,
                    "seed": a.seed,
                    "moon_noise": a.moon_noise,
                    "noise": a.noise,
                    "chunk": a.chunk,
                    "labels": a.labels,
                    "threads": a.threads,
                }
                res = run_in_process(cfg, a.timeout)
                rec["runs"].append(res)
                rec.write(a.out)
                if "error" in res:
                    print(f"n={n} {backend} {method}: {res['error']}", flush=True)
                else:
                    print(
                        f"n={n:>8d} {backend:7s} {method:14s} fit {res['fit_seconds']:7.1f}s "
                        f"predict {res['predict_seconds']:6.1f}s "
                        f"{res['us_per_row']:7.1f} us/row peak {res['peak_rss_mib']:7.0f} MiB "
                        f"error {res['error_unlabeled_pct']:5.2f}%",
                        flush=True,
                    )
    rec.write(a.out)


if __name__ == "__main__":
    sys.exit(main())

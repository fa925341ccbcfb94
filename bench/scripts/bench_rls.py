"""Ridge-leverage-score landmarks (``landmarks="rls"``) against k-means and uniform.

Two parts, one JSON file:

``error``
    Relative Frobenius error ‖K − GGᵀ‖_F / ‖K‖_F (:func:`lorak.metrics.frobenius_error`)
    of :class:`lorak.Nystroem` with ``uniform``, ``kmeans`` and ``rls`` landmarks at
    equal m, on the eight data sets of Zhang, Tsang & Kwok (2008, Fig. 1), prepared as
    the ``nystrom-error`` bench experiment prepares them (german and satimage min-max
    scaled to [-1, 1]; Gaussian kernel with b = mean squared distance to the centroid),
    at m/n ∈ ``--ratios``, ``--reps`` seeds each. Needs ``LORAK_DATA``.
``time``
    Wall and CPU seconds of landmark selection plus the Nyström fit with ``kmeans`` and
    with ``rls`` landmarks at n = 70000, d = 784, m = 1000, in the same process. The data:
    ``mnist-test`` (the 10000 official MNIST test images, scaled to [0, 1]) stacked 7×
    with Gaussian jitter (σ = 0.02) when ``LORAK_DATA`` has it, else a synthetic
    200-component Gaussian mixture. On a shared machine only the ratio within one run
    counts; the load average is recorded.

Extra RLS settings are compared with ``--variants rank_fraction:sample_size,...``
(e.g. ``0.25:1000``; an empty sample size means m).

Usage: python bench/scripts/bench_rls.py [--part error|time|all] [--quick] [--out FILE]
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
from pathlib import Path

import numpy as np

import lorak
from lorak.datasets import load
from lorak.kernels import Gaussian
from lorak.landmarks import DEFAULT_RANK_FRACTION, rls_landmarks
from lorak.metrics import frobenius_error
from lorak_bench.timing import LoadGuard, Record, load_average, time_call

# (load name, label, split, min-max scale) as in the nystrom-error experiment
SETS = (
    ("german", "german", None, True),
    ("splice", "splice", None, False),
    ("a1a", "adult1a", None, False),
    ("dna", "dna", None, False),
    ("segment", "segment", None, False),
    ("w1a", "w1a", None, False),
    ("svmguide1", "svmguide1a", "train", False),
    ("satimage", "satimage", "train", True),
)


def _minmax(X):
    lo, hi = X.min(axis=0), X.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    out = -1.0 + 2.0 * (X - lo) / span
    out[:, hi <= lo] = 0.0
    return out


def _load(name, split, scale):
    data = load(name, split, sparse=False)
    X = np.asarray(data.X.toarray() if hasattr(data.X, "toarray") else data.X, dtype=np.float64)
    return _minmax(X) if scale else X


def _variants(spec):
    out = {"rls": None}
    for item in filter(None, (spec or "").split(",")):
        frac, _, size = item.partition(":")
        out[f"rls[{item}]"] = (float(frac), int(size) if size else None)
    return out


def _landmarks(method, variant):
    if variant is None:
        return method
    frac, size = variant
    return functools.partial(rls_landmarks, rank_fraction=frac, sample_size=size)


def part_error(args) -> dict:
    variants = _variants(args.variants)
    methods = {"uniform": None, "kmeans": None, **variants}
    sets = SETS[:3] if args.quick else SETS
    out = {}
    for name, label, split, scale in sets:
        X = _load(name, split, scale)
        kernel = Gaussian(bandwidth="mean_to_centroid").resolve(X)
        rows = []
        for ratio in args.ratios:
            m = max(2, round(ratio * X.shape[0]))
            errs = {k: [] for k in methods}
            secs = {k: [] for k in methods}
            for seed in range(args.reps):
                for meth, var in methods.items():
                    lm = _landmarks("rls" if meth.startswith("rls") else meth, var)
                    est = lorak.Nystroem(kernel, n_components=m, landmarks=lm, random_state=seed)
                    G, t = time_call(est.fit_transform, X)
                    secs[meth].append(t.wall)
                    errs[meth].append(frobenius_error(kernel, X, G, relative=True))
            rows.append(
                {
                    "ratio": ratio,
                    "m": m,
                    "mean": {k: float(np.mean(v)) for k, v in errs.items()},
                    "std": {k: float(np.std(v)) for k, v in errs.items()},
                    "seconds": {k: float(np.mean(v)) for k, v in secs.items()},
                }
            )
            print(label, m, {k: round(float(np.mean(v)), 5) for k, v in errs.items()}, flush=True)
        geo = {}
        for meth in variants:
            for ref in ("kmeans", "uniform"):
                logs = [math.log(r["mean"][meth] / r["mean"][ref]) for r in rows]
                geo[f"{meth}/{ref}"] = math.exp(sum(logs) / len(logs))
        out[label] = {"n": int(X.shape[0]), "d": int(X.shape[1]), "rows": rows, "geomean": geo}
    summary = {}
    for meth in variants:
        km = [s["geomean"][f"{meth}/kmeans"] <= 1.0 for s in out.values()]
        un = [all(r["mean"][meth] < r["mean"]["uniform"] for r in s["rows"]) for s in out.values()]
        summary[meth] = {
            "sets_at_or_below_kmeans": int(sum(km)),
            "sets_below_uniform_at_every_m": int(sum(un)),
            "n_sets": len(out),
        }
    return {"sets": out, "summary": summary}


def _timing_data(n, d, seed=0):
    rng = np.random.default_rng(seed)
    home = os.environ.get("LORAK_DATA")
    if home and Path(home, "mnist-test").exists() and d == 784:
        base = np.asarray(load("mnist-test", sparse=False).X, dtype=np.float64) / 255.0
        reps = math.ceil(n / base.shape[0])
        X = np.vstack([base + 0.02 * rng.standard_normal(base.shape) for _ in range(reps)])[:n]
        return X, f"mnist-test ×{reps} with N(0, 0.02²) jitter"
    centres = rng.normal(size=(200, d))
    scales = rng.uniform(0.2, 1.0, size=(200, 1))
    lab = rng.integers(0, 200, size=n)
    X = centres[lab] + scales[lab] * rng.standard_normal((n, d))
    return X, "synthetic 200-component Gaussian mixture"


def _clock(fn):
    out, t = time_call(fn)
    return t.wall, t.cpu, out


def part_time(args) -> dict:
    n, d, m = (7000, 784, 300) if args.quick else (args.n, 784, args.m)
    X, source = _timing_data(n, d)
    kernel = Gaussian(bandwidth="mean_to_centroid").resolve(X)
    res = {"n": n, "d": d, "m": m, "data": source, "load_before": load_average()}
    for meth in args.time_order:
        est = lorak.Nystroem(kernel, n_components=m, landmarks=meth, random_state=0)
        wall, cpu, _ = _clock(lambda est=est: est.fit(X))
        res[meth] = {"wall_s": wall, "cpu_s": cpu}
        print(meth, res[meth], flush=True)
    res["load_after"] = load_average()
    res["rls_over_kmeans_wall"] = res["rls"]["wall_s"] / res["kmeans"]["wall_s"]
    res["rls_over_kmeans_cpu"] = res["rls"]["cpu_s"] / res["kmeans"]["cpu_s"]
    return res


def main(argv=None):
    guard = LoadGuard(label="bench_rls").start()  # load average before and after
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--part", choices=("error", "time", "all"), default="all")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--ratios", type=float, nargs="+", default=[0.02, 0.05, 0.1])
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--variants", default="", help="extra RLS settings frac:size,...")
    p.add_argument("--n", type=int, default=70000)
    p.add_argument("--m", type=int, default=1000)
    p.add_argument("--time-order", nargs="+", default=["rls", "kmeans"])
    p.add_argument("--out", default="bench/scripts/out/bench_rls.json")
    args = p.parse_args(argv)
    if args.quick:
        args.reps = min(args.reps, 2)
    out = Record(load=guard.stop().record(), default_rank_fraction=DEFAULT_RANK_FRACTION)
    if args.part in ("error", "all"):
        out["error"] = part_error(args)
    if args.part in ("time", "all"):
        out["time"] = part_time(args)
    out.write(args.out)
    print(json.dumps(out.get("error", {}).get("summary", {}), indent=1))
    if "time" in out:
        print("rls/kmeans wall", round(out["time"]["rls_over_kmeans_wall"], 3))


if __name__ == "__main__":
    main()

"""Performance of the multiple-kernel generalized Nyström method (issue #5), in one run.

(a) cost ratio against the single-kernel method at τ = 3 (the paper's cost model,
    §4.2: m̃ = m τ / M shared landmarks for M = 9 Gaussians): the factor fit of
    ``MultipleKernelGeneralizedNystroem(n_components=m)`` against
    ``GeneralizedNystroem(n_components=m)`` (k-means landmarks, kernel blocks, the
    11-value λ path, refinement, factor), single-threaded BLAS, wall and CPU seconds,
    on Digit1 (n = 1500, m = 150, 100 labels) and usps (n = 7291, m = 600, 100 labels);
    the error of a LinearSVC (C = 1) on each factor's features is recorded alongside.
    Target: ratio ≤ 3.
(b) SecStr (n = 83 679, 100 labels, official split 0): the whole
    ``SemiSupervisedFactorClassifier(MultipleKernelGeneralizedNystroem(...))`` fit plus
    ``predict`` of every row, default threads. Target: ≤ 60 s.
(c) memory: peak traced memory (tracemalloc: numpy's buffers) of fit + transform on
    SecStr subsets n = 20 000 … 83 679 at m̃ = 100, against n · Σ r_j · 8 bytes (the
    output) — O(n m̃ M).
(d) convergence at fixed λ on Digit1 (m̃ = 50): objective after k alternations with and
    without the subspace step (``rescale``), against a tight reference.

Usage: python bench/scripts/bench_mk_gnys.py [--out FILE] [--skip-secstr] [--skip-memory]
       [--skip-convergence] [--quick]
Run the timed parts alone on the machine (``flock <a lock file> python ...``).
"""

from __future__ import annotations

import argparse
import gc
import json
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC
from threadpoolctl import threadpool_limits

from lorak.datasets import load
from lorak.estimators import GeneralizedNystroem, MultipleKernelGeneralizedNystroem
from lorak.kernels import KernelBank
from lorak.landmarks import select_landmarks
from lorak.learn import fit_mk_generalized_nystroem
from lorak.metrics import ideal_kernel_factor
from lorak.models import SemiSupervisedFactorClassifier
from lorak_bench.timing import Record, Stopwatch, time_call


def _codes(y):
    return np.unique(y, return_inverse=True)[1]


def _draw(y, l, rng):
    """l labeled rows spread evenly over the classes; the rest −1."""
    classes = np.unique(y)
    per = np.full(classes.size, l // classes.size)
    per[: l - per.sum()] += 1
    pairs = zip(classes, per, strict=True)
    idx = np.concatenate([rng.choice(np.flatnonzero(y == c), k, replace=False) for c, k in pairs])
    yu = np.full(y.shape, -1)
    yu[idx] = y[idx]
    return yu


def _error(Q, y, yu):
    lab = yu != -1
    ms = float(np.mean(np.einsum("ij,ij->i", Q, Q)))
    Q = Q / np.sqrt(ms) if ms > 0 else Q
    clf = LinearSVC(C=1.0, dual=True, max_iter=10000, random_state=0).fit(Q[lab], yu[lab])
    return float(np.mean(clf.predict(Q[~lab]) != y[~lab]) * 100)


def _timed_fit(est, X, yu):
    gc.collect()
    with Stopwatch() as sw, warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X, yu)
    return sw.wall, sw.cpu


def part_ratio(sets, reps):
    rows = []
    for name, m in sets:
        ds = load(name)
        X = np.asarray(ds.X.toarray() if hasattr(ds.X, "toarray") else ds.X, dtype=np.float64)
        y = _codes(ds.y)
        for r in range(reps):
            yu = _draw(y, 100, np.random.default_rng(r))
            row = {"dataset": name, "n": X.shape[0], "m": m, "rep": r}
            with threadpool_limits(1):
                g = GeneralizedNystroem(n_components=m, random_state=r)
                row["single_wall"], row["single_cpu"] = _timed_fit(g, X, yu)
                mk = MultipleKernelGeneralizedNystroem(n_components=m, tau=3.0, random_state=r)
                row["multi_wall"], row["multi_cpu"] = _timed_fit(mk, X, yu)
                row["single_err"] = _error(g.transform(X), y, yu)
                row["multi_err"] = _error(mk.transform(X), y, yu)
            row["ratio_wall"] = row["multi_wall"] / row["single_wall"]
            row["ratio_cpu"] = row["multi_cpu"] / row["single_cpu"]
            row.update(
                m_tilde=mk.n_landmarks_,
                multi_lam=mk.lam_,
                single_lam=g.lam_,
                multi_alternations=mk.n_iter_,
                multi_block_iterations=mk.inner_iter_,
                single_iterations=g.n_iter_,
                weights=mk.weights_.round(4).tolist(),
                multi_rank=mk.n_components_,
            )
            print(
                f"  {name} rep {r}: single {row['single_wall']:.2f}s ({row['single_cpu']:.2f} cpu) "
                f"multi {row['multi_wall']:.2f}s ({row['multi_cpu']:.2f} cpu) ratio "
                f"{row['ratio_wall']:.2f} wall / {row['ratio_cpu']:.2f} cpu; err "
                f"{row['single_err']:.2f} / {row['multi_err']:.2f}",
                flush=True,
            )
            rows.append(row)
    summary = {}
    for name, _m in sets:
        rr = [r for r in rows if r["dataset"] == name]
        summary[name] = {
            "median_ratio_wall": float(np.median([r["ratio_wall"] for r in rr])),
            "median_ratio_cpu": float(np.median([r["ratio_cpu"] for r in rr])),
            "mean_single_err": float(np.mean([r["single_err"] for r in rr])),
            "mean_multi_err": float(np.mean([r["multi_err"] for r in rr])),
        }
    return {"rows": rows, "summary": summary}


def _secstr():
    d = load("ssl-secstr")
    X = d.X
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)
    y = np.asarray(d.y)
    return X, y, d.splits_labeled


def part_secstr(ms):
    X, y, splits = _secstr()
    lab = splits[100][0]
    codes = np.full(y.shape, -1)
    known = y != -1
    codes[known] = _codes(y[known])
    yu = np.full(y.shape, -1)
    yu[lab] = codes[lab]
    out = []
    for m in ms:
        clf = SemiSupervisedFactorClassifier(
            MultipleKernelGeneralizedNystroem(n_components=m, random_state=0)
        )
        t_fit, c_fit = _timed_fit(clf, X, yu)
        with Stopwatch() as sw:
            pred = clf.predict(X)
        t_pred, c_pred = sw.wall, sw.cpu
        test = known & (yu == -1)
        err = float(np.mean(pred[test] != codes[test]) * 100)
        f = clf.factor_
        row = {
            "n": X.shape[0],
            "d": X.shape[1],
            "m": m,
            "m_tilde": f.n_landmarks_,
            "rank": f.n_components_,
            "fit_wall": t_fit,
            "predict_wall": t_pred,
            "total_wall": t_fit + t_pred,
            "fit_cpu": c_fit,
            "predict_cpu": c_pred,
            "total_cpu": c_fit + c_pred,
            "error_pct_unlabeled": err,
            "lam": f.lam_,
            "alternations": f.n_iter_,
            "weights": f.weights_.round(4).tolist(),
        }
        print(f"  secstr m={m}: {json.dumps(row)}", flush=True)
        out.append(row)
    return out


def part_memory(sizes, mt):
    Xall, yall, _ = _secstr()
    known = np.flatnonzero(yall != -1)
    rows = []
    for n in sizes:
        idx = np.random.default_rng(0).choice(known, n, replace=False)
        X, y = Xall[idx], _codes(yall[idx])
        yu = _draw(y, 100, np.random.default_rng(0))
        est = MultipleKernelGeneralizedNystroem(n_landmarks=mt, random_state=0)
        gc.collect()
        tracemalloc.start()
        tracemalloc.reset_peak()
        with Stopwatch() as sw, warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            est.fit(X, yu)
        t_fit = sw.wall
        _, peak_fit = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        with Stopwatch() as sw:
            Q = est.transform(X)
        t_tr = sw.wall
        _, peak_tr = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        out_bytes = Q.nbytes
        M = est.n_kernels_
        row = {
            "n": n,
            "m_tilde": mt,
            "M": M,
            "rank": est.n_components_,
            "fit_wall": t_fit,
            "transform_wall": t_tr,
            "peak_fit_bytes": peak_fit,
            "peak_transform_bytes": peak_tr,
            "output_bytes": out_bytes,
            "peak_transform_over_output": peak_tr / out_bytes,
            "peak_transform_over_n_mt_M_8": peak_tr / (n * mt * M * 8),
        }
        print(f"  memory n={n}: {json.dumps(row)}", flush=True)
        rows.append(row)
        del Q
    return rows


def part_convergence(lams, sweeps):
    ds = load("ssl-digit1")
    X = np.asarray(ds.X, dtype=np.float64)
    y = _codes(ds.y)
    lab = ds.splits_labeled[100][0]
    rng = np.random.default_rng(0)
    bank = KernelBank.gaussian().resolve(X, rng)
    Z = select_landmarks("kmeans", X, 50, rng=rng).points
    Y = ideal_kernel_factor(y[lab])
    Y = Y - Y.mean(axis=0)
    Els, Ws = bank.blocks(X[lab], Z), bank.blocks(Z, Z)
    out = []
    for lam in lams:
        for rescale in (True, False):
            # the entry at a given λ: one alternating solve (the seconds include building
            # problem (17) from the blocks, which every alternation shares)
            fit, t = time_call(
                fit_mk_generalized_nystroem,
                Els,
                Ws,
                Y,
                lam=lam,
                criterion="paper",
                tol=1e-9,
                max_iter=sweeps,
                rescale=rescale,
            )
            h = np.asarray(fit.objective_history)
            row = {
                "lam": lam,
                "rescale": rescale,
                "seconds": t.wall,
                "alternations": fit.n_iter,
                "block_iterations": fit.n_solves,
                "J": {str(k): float(h[min(k, h.size - 1)]) for k in (1, 3, 10, 30, sweeps)},
                "weights": fit.alphas.round(4).tolist(),
            }
            print(f"  convergence: {json.dumps(row)}", flush=True)
            out.append(row)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    default_out = Path(__file__).parent / "out" / "bench_mk_gnys.json"
    ap.add_argument("--out", type=Path, default=default_out)
    ap.add_argument("--quick", action="store_true", help="Digit1 only, one repetition")
    ap.add_argument("--skip-ratio", action="store_true")
    ap.add_argument("--skip-secstr", action="store_true")
    ap.add_argument("--skip-memory", action="store_true")
    ap.add_argument("--skip-convergence", action="store_true")
    args = ap.parse_args()
    out = Record()  # the environment, the load average and the UTC time at the start

    def save():  # after every part, so that an interrupted run keeps what it measured
        out.write(args.out)

    sets = [("ssl-digit1", 150)] if args.quick else [("ssl-digit1", 150), ("usps", 600)]
    if not args.skip_ratio:
        print("(a) cost ratio, tau = 3", flush=True)
        out["ratio"] = part_ratio(sets, 1 if args.quick else 2)
        save()
    if not args.skip_secstr:
        print("(b) SecStr fit + predict", flush=True)
        out["secstr"] = part_secstr([300] if args.quick else [300, 1000])
        save()
    if not args.skip_memory:
        print("(c) memory", flush=True)
        out["memory"] = part_memory([20000, 40000, 83679], 100)
        save()
    if not args.skip_convergence:
        print("(d) convergence", flush=True)
        out["convergence"] = part_convergence([1e4, 1.0], 30 if args.quick else 100)
        save()
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

"""ℓp-norm MKL with low-rank kernels: the 10⁵-scale run, the solver claims, MKLpy.

Parts (``--part``, default all), each one process, results in
``bench/scripts/out/bench_lpmkl.json`` (merged with what is already there):

``scale``
    ijcnn1 (train + test = 141691 rows), a random 70/30 split (≈ 99k training rows),
    50 Gaussian kernels (σ ∈ [1, 100]), R = 50 shared uniform landmarks, C = 1000,
    p = 2 (``--p``), float32 factors, the Newton inner solver when present (``--solver``):
    fit seconds (wall and CPU), peak resident memory, test accuracy, outer and inner
    iterations, the compressed rank. Target (issue #8): ≤ 10 min on 2 cores, memory
    O(M R ℓ).
``subsample``
    ijcnn1 (``--subsample-data``), 10k-row subsample (70/30): ours at R = 200 (Newton
    inner solver when present) against the full-kernel ℓp-MKL reference (SVC on the
    precomputed Σ d_k K_k), same 7k training rows. Target: within 1 point.
``solvers``
    problem (6), R = 500, 10 kernels, d_k = 1/M, C = 1000, a9a subsets of ℓ rows: split
    GFB (Algorithm 2, uniform and blockwise weights), naive GFB (paper's stopping rule:
    1e-4 relative objective change or 3000 iterations), the primal Newton solver (on the
    shared-basis factors, compression timed; stopped at a 0.1 % duality gap), Clarabel
    (interior point, through cvxpy on the dual (4) with its dense ℓ × ℓ Hessian) to high
    accuracy (the optimum f*) and to a 0.1 % gap (timed). ``--solver-methods`` picks a
    subset.
``mklpy``
    MKLpy's EasyMKL and GRAM (benchmark-only dependency) beside ours and the full-kernel
    reference on a 3000-row subsample of svmguide1 (min-max scaled), 50 kernels: MKLpy
    needs the 50 full n × n kernels in memory (their construction is timed apart).
``grid``
    the ``lpmkl`` experiment's accuracy grid cut to ``--datasets``/``--ranks``/``--reps``
    (Newton), ``--full-reps`` (full kernel) and ``--gfb-ranks``/``--gfb-reps`` (the two
    GFB methods), with report.md/results.json/plots in ``--out`` (not part of ``all``).

Run: ``LORAK_DATA=../shared/data python bench/scripts/bench_lpmkl.py --part scale``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import warnings
from pathlib import Path

import numpy as np

from lorak.datasets import load
from lorak.estimators import LowRankMKLClassifier, default_bank
from lorak.kernels import KernelBank
from lorak.learn import GaussianGrams, bank_factors, lp_mkl_full_kernel
from lorak.solvers import gfb_naive, gfb_split, project_feasible, svm_dual_objective
from lorak_bench.timing import LoadGuard, Stopwatch, capture_environment, time_call, write_json

OUT = Path(__file__).parent / "out" / "bench_lpmkl.json"
C = 1000.0
# one BLAS thread for our fits: on the shared 2-core machine two threads made the GFB's
# matrix–vector products 4–20× slower (measured; see the module notes of mkl.py)
BLAS_THREADS = 1


def _rss_mb() -> float:
    """Peak resident set size of this process so far (MB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _split(n, seed, test=0.3):
    perm = np.random.default_rng(seed).permutation(n)
    k = round(test * n)
    return np.sort(perm[k:]), np.sort(perm[:k])


def _sqdist(A, B):
    D = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * A @ B.T
    return np.maximum(D, 0.0).astype(np.float32)


def _fit_ours(Xtr, ytr, Xte, yte, *, R, p=2.0, seed=0, **kw):
    kw.setdefault("blas_threads", BLAS_THREADS)
    clf = LowRankMKLClassifier(n_kernels=50, rank=R, C=C, p=p, random_state=seed, **kw)
    with Stopwatch() as sw, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf.fit(Xtr, ytr)
    fit_s, fit_cpu = sw.wall, sw.cpu
    with Stopwatch() as sw:
        acc = float(np.mean(clf.predict(Xte) == yte))
    return {
        "R": R,
        "p": p,
        "fit_seconds": fit_s,
        "fit_cpu_seconds": fit_cpu,
        "predict_seconds": sw.wall,
        "accuracy": acc,
        "outer_iter": int(clf.n_iter_[0]),
        "inner_iter": [int(v) for v in clf.inner_iter_[0]],
        "factor_info": {k: v for k, v in clf.factor_info_.items() if k not in ("ranks",)},
        "n_kernels_active": int(np.sum(clf.kernel_weights_ > 0)),
        "weights_top5": np.sort(clf.kernel_weights_)[-5:].tolist(),
        "warnings": sorted({str(w.message)[:120] for w in caught}),
        "options": kw,
    }


def _fit_full(Xtr, ytr, Xte, yte, *, p=2.0, max_iter=30):
    classes = np.unique(ytr)
    yb = np.where(ytr == classes[1], 1.0, -1.0)
    b = [k.bandwidth for k in default_bank(50)]
    with Stopwatch() as sw:
        D = _sqdist(Xtr, Xtr)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res, svc = lp_mkl_full_kernel(GaussianGrams(D, b), yb, C, p, max_iter=max_iter)
    fit_s, fit_cpu = sw.wall, sw.cpu
    del D
    Dte = _sqdist(Xte, Xtr[svc.support_])
    dec = GaussianGrams(Dte, b).weighted(res.d) @ svc.dual_coef_[0] + svc.intercept_[0]
    acc = float(np.mean(np.where(dec > 0, classes[1], classes[0]) == yte))
    return {
        "fit_seconds": fit_s,
        "fit_cpu_seconds": fit_cpu,
        "accuracy": acc,
        "outer_iter": res.n_iter,
        "converged": res.converged,
        "n_support": int(svc.support_.size),
        "weights_top5": np.sort(res.d)[-5:].tolist(),
    }


# ---------------------------------------------------------------- parts


def part_scale(args):
    ds = load("ijcnn1", split="all")
    X = np.asarray(ds.X, dtype=np.float32)
    tr, te = _split(X.shape[0], args.seed)
    rss0 = _rss_mb()
    out = _fit_ours(
        X[tr],
        ds.y[tr],
        X[te],
        ds.y[te],
        R=args.rank,
        p=args.p,
        max_iter=args.outer_max_iter,
        inner_max_iter=args.inner_max_iter,
        solver=args.solver or _default_solver(),
    )
    out["majority_accuracy"] = float(max(np.mean(ds.y[te] == c) for c in np.unique(ds.y)))
    out.update(
        n_train=int(tr.size),
        n_test=int(te.size),
        peak_rss_mb=_rss_mb(),
        rss_before_fit_mb=rss0,
        factor_bytes_estimate_uncompressed=int(50 * args.rank * tr.size * 4),
    )
    return out


def _default_solver():
    from lorak.learn import LP_MKL_SOLVERS

    return "newton" if "newton" in LP_MKL_SOLVERS else "shared"


def part_subsample(args):
    """ijcnn1, 10k-row subsample, 70/30: ours at R = --subsample-rank (200) against the
    full-kernel ℓp-MKL on the same 7k training rows (issue #8: within 1 point)."""
    ds = load(args.subsample_data, split="all")
    rng = np.random.default_rng(args.seed)
    idx = np.sort(rng.choice(ds.X.shape[0], args.subsample_rows, replace=False))
    Xs = ds.X[idx]
    X = np.asarray(Xs.toarray() if hasattr(Xs, "toarray") else Xs, dtype=np.float64)
    y = ds.y[idx]
    tr, te = _split(X.shape[0], args.seed)
    solver = args.solver or _default_solver()
    R = args.subsample_rank
    out = {
        "dataset": args.subsample_data,
        "n_train": int(tr.size),
        "n_test": int(te.size),
        "solver": solver,
        "R": R,
        "p": 2.0,
    }
    out["majority_accuracy"] = float(max(np.mean(y[te] == c) for c in np.unique(y)))
    ours = _fit_ours(X[tr], y[tr], X[te], y[te], R=R, max_iter=args.outer_max_iter, solver=solver)
    out[f"ours_R{R}"] = ours
    print("ours", {k: ours[k] for k in ("fit_seconds", "fit_cpu_seconds", "accuracy")}, flush=True)
    full = _fit_full(X[tr], y[tr], X[te], y[te], max_iter=args.outer_max_iter)
    out["full_kernel"] = full
    out["accuracy_gap_points"] = 100 * (ours["accuracy"] - full["accuracy"])
    return out


def _clarabel(F, y, d, *, accurate):
    import cvxpy as cp

    # problem (4) with its dense ℓ × ℓ Hessian Y(Σ d_k V_kV_kᵀ)Y: for ℓ ≤ a few
    # thousand the fastest form for Clarabel (the lifted form (6) hands it a dense
    # Σ r_k × ℓ constraint block, whose factorization was measured far slower)
    dcol = np.repeat(np.asarray(d), F.ranks)
    U = (F.V.astype(np.float64) * np.sqrt(dcol)[None, :]) * y[:, None]
    P = U @ U.T
    a = cp.Variable(y.size)
    prob = cp.Problem(
        cp.Minimize(0.5 * cp.quad_form(a, cp.psd_wrap(P)) - cp.sum(a)),
        [y @ a == 0, a >= 0, a <= C],
    )
    opts = {} if accurate else {"tol_gap_rel": 1e-3, "tol_gap_abs": 1e-3}
    with Stopwatch() as sw:
        prob.solve(solver="CLARABEL", **opts)
    wall = sw.wall
    alpha = project_feasible(np.clip(np.asarray(a.value).ravel(), 0, C), y, C)
    return {
        "objective": svm_dual_objective(F, y, d, alpha),
        "iterations": prob.solver_stats.num_iters,
        "solver_seconds": prob.solver_stats.solve_time,
        "wall_seconds": wall,
    }


def part_solvers(args):
    ds = load("a9a", split="all")
    X = np.asarray(ds.X.toarray() if hasattr(ds.X, "toarray") else ds.X, dtype=np.float64)
    y_all = np.where(ds.y > 0, 1.0, -1.0)
    M, R = 10, args.solver_rank
    bank = KernelBank.gaussian_sigmas(np.logspace(0, 2, M))
    rows = []
    for n in args.solver_sizes:
        rng = np.random.default_rng(args.seed)
        idx = rng.choice(X.shape[0], n, replace=False)
        Xs, y = X[idx], y_all[idx]
        Z = Xs[rng.choice(n, min(R, n), replace=False)]
        with Stopwatch() as sw:
            F = bank_factors(bank.resolve(Xs), Xs, Z, compress=False).stack
        fac_s = sw.wall
        d = np.full(M, 1.0 / M)
        row = {"n": n, "R": R, "M": M, "total_rank": F.total_rank, "factor_seconds": fac_s}
        fstar = _qp_reference(F, y, d, row)
        for name, (fn, kw) in _solver_runs(args).items():
            with Stopwatch() as sw:
                if name == "newton":
                    # through the shared basis (timed): stacked, its systems are (Σr + 1)²
                    Fc = bank_factors(bank.resolve(Xs), Xs, Z, compress=True).stack
                    res = fn(Fc, y, d, C, **kw)
                    res.objective = svm_dual_objective(F, y, d, res.alpha)
                else:
                    res = fn(F, y, d, C, **kw)
            row[name] = _solver_entry(res, sw.wall, fstar)
            print(name, n, {k: v for k, v in row[name].items()}, flush=True)
        rows.append(row)
    return rows


def _qp_reference(F, y, d, row):
    """The interior point's optimum f* (Clarabel, accurate) and its 0.1 % run, into
    ``row``; f* (None without cvxpy)."""
    try:
        ref = _clarabel(F, y, d, accurate=True)
        row["qp_accurate"] = ref
        row["qp_0.1%"] = _clarabel(F, y, d, accurate=False)
    except ImportError:
        return None
    fstar = ref["objective"]
    row["qp_0.1%"]["gap"] = (row["qp_0.1%"]["objective"] - fstar) / abs(fstar)
    return fstar


def _solver_runs(args):
    """The inner solvers timed: name -> (solver, its options)."""
    runs = {
        "split": (gfb_split, {"weights": "uniform", "tol": 1e-4, "max_iter": 3000}),
        "split_blockwise": (
            gfb_split,
            {"weights": "blockwise", "tol": 1e-4, "max_iter": 3000},
        ),
        "naive": (gfb_naive, {"tol": 1e-4, "max_iter": 3000}),
    }
    if _default_solver() == "newton":
        from lorak.learn import LP_MKL_SOLVERS

        # primal Newton on the stacked features, stopped at a 0.1 % relative
        # duality gap (the agreement the interior point is timed at)
        runs["newton"] = (LP_MKL_SOLVERS["newton"], {"tol": 1e-3})
    if args.solver_methods:
        runs = {k: v for k, v in runs.items() if k in args.solver_methods}
    return runs


def _solver_entry(res, wall, fstar):
    """One solver's record: seconds, iterations, objective, and with f* its gap and the
    first iteration within 0.1 % of f*."""
    entry = {
        "seconds": wall,
        "setup_seconds": res.info["setup_seconds"],
        "iterations": res.n_iter,
        "objective": res.objective,
        "relative_duality_gap": res.info.get("relative_gap"),
    }
    if fstar is not None:
        entry["gap"] = (res.objective - fstar) / abs(fstar)
        # iterations / seconds to reach 0.1 % of f* (paper's protocol, other way
        # round: how long GFB needs for the agreement the IP was stopped at)
        h = res.history
        hit = np.flatnonzero(np.abs(h - fstar) <= 1e-3 * abs(fstar))
        entry["first_iter_within_0.1%"] = int(hit[0]) + 1 if hit.size else None
    return entry


def part_mklpy(args):
    try:
        import torch
        from MKLpy.algorithms import GRAM, EasyMKL
    except Exception as exc:  # not installed, or a broken torch
        return {"skipped": f"MKLpy not importable: {type(exc).__name__}: {exc}"}
    from sklearn.svm import SVC

    ds = load("svmguide1", split="all")
    X = np.asarray(ds.X, dtype=np.float64)
    X = 2 * (X - X.min(0)) / (X.max(0) - X.min(0)) - 1
    rng = np.random.default_rng(args.seed)
    idx = np.sort(rng.choice(X.shape[0], args.mklpy_rows, replace=False))
    X, y = X[idx], ds.y[idx]
    tr, te = _split(X.shape[0], args.seed)
    out = {"n_train": int(tr.size), "n_kernels": 50}
    bank = default_bank(50)
    with Stopwatch() as sw:
        Dtr, Dte = _sqdist(X[tr], X[tr]), _sqdist(X[te], X[tr])
        KL = [torch.from_numpy(np.exp(-Dtr.astype(np.float64) / k.bandwidth)) for k in bank]
        KLte = [torch.from_numpy(np.exp(-Dte.astype(np.float64) / k.bandwidth)) for k in bank]
    build_s = sw.wall  # the 50 dense kernels MKLpy needs (not in fit)
    ytr_t = torch.tensor(y[tr])
    for name, build in (
        ("EasyMKL", lambda: EasyMKL(lam=0.1, learner=SVC(C=C))),
        ("GRAM", lambda: GRAM(max_iter=100, learner=SVC(C=C))),
    ):
        if args.mklpy_methods and name not in args.mklpy_methods:
            continue
        try:
            with Stopwatch() as sw:
                mkl = build().fit(KL, ytr_t)
            fit_s, fit_cpu = sw.wall, sw.cpu
            pred = np.asarray(mkl.predict(KLte))
            out[name] = {
                "fit_seconds": fit_s,
                "fit_cpu_seconds": fit_cpu,
                "accuracy": float(np.mean(pred == y[te])),
                "kernel_build_seconds": build_s,
            }
        except Exception as exc:
            out[name] = {"error": f"{type(exc).__name__}: {exc}"}
        print(name, out[name], flush=True)
    del KL, KLte
    solver = args.solver or _default_solver()
    out["solver"] = solver
    for R in (50, 200):
        out[f"ours_R{R}"] = _fit_ours(X[tr], y[tr], X[te], y[te], R=R, solver=solver)
        print(R, {k: out[f"ours_R{R}"][k] for k in ("fit_seconds", "accuracy")}, flush=True)
    if not args.mklpy_no_full:
        out["full_kernel"] = _fit_full(X[tr], y[tr], X[te], y[te])
    return out


def _grid_experiment(args):
    """The ``lpmkl`` experiment's accuracy part, cut to what this machine affords.

    Part ``accuracy``: the Newton inner solver with ``--reps`` runs over ``--ranks``;
    part ``accuracy-full`` (``--full-reps`` > 0): the full-kernel reference, its first
    ``--full-reps`` splits (one fit per split and p: 30 outer iterations, each forming
    Σ d_k K_k from 50 exponentials of an n × n matrix); part ``accuracy-gfb`` (when
    ``--gfb-ranks`` is given): the two GFB methods (merged, Algorithm 2) with
    ``--gfb-reps`` runs over ``--gfb-ranks``. Run r uses the same seed, hence the same
    70/30 split, in every part.
    """
    import dataclasses

    from lorak_bench.experiments import lpmkl

    base = lpmkl.ACCURACY
    ps = args.ps
    parts = []
    if args.reps > 0:
        parts.append(
            dataclasses.replace(
                base,
                grid=tuple({"p": p, "R": R} for p in ps for R in args.ranks),
                methods=(lpmkl.LOWRANK_NEWTON,),
                reps=args.reps,
            )
        )
    if args.full_reps > 0:
        parts.append(
            dataclasses.replace(
                base,
                name="accuracy-full",
                description="the full-kernel reference (first splits only)",
                grid=tuple({"p": p, "R": max(args.ranks)} for p in ps),
                methods=(lpmkl.FULL,),
                reps=args.full_reps,
            )
        )
    if args.gfb_ranks:
        parts.append(
            dataclasses.replace(
                base,
                name="accuracy-gfb",
                description="the GFB inner solvers at fewer ranks/runs",
                grid=tuple({"p": p, "R": R} for p in ps for R in args.gfb_ranks),
                methods=(lpmkl.LOWRANK, lpmkl.LOWRANK_PAPER),
                reps=args.gfb_reps,
            )
        )
    if not parts:
        raise SystemExit("part grid: nothing to run (--reps 0, --full-reps 0, no --gfb-ranks)")
    return dataclasses.replace(lpmkl.EXPERIMENT, parts=tuple(parts))


def part_grid(args):
    """Run the reduced ``lpmkl`` grid; report.md/results.json/plots into --out."""
    import logging

    from lorak_bench import run_experiment, write_outputs

    # one line per fitted cell (accuracy, seconds) in the log, so that a run cut short
    # still leaves its numbers
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    logging.getLogger("lorak").setLevel(logging.WARNING)
    logging.getLogger("lorak_bench.experiments.lpmkl").setLevel(logging.INFO)
    exp = _grid_experiment(args)
    cfg = {
        "bench_lpmkl_grid": {
            "datasets": args.datasets,
            "ranks": args.ranks,
            "reps": args.reps,
            "ps": args.ps,
            "gfb_ranks": args.gfb_ranks,
            "gfb_reps": args.gfb_reps,
            "full_reps": args.full_reps,
        }
    }
    res = run_experiment(exp, datasets=args.datasets, seed=args.seed, config=cfg, data_home=None)
    out_dir = Path(args.out) if args.out else Path("bench-out") / "lpmkl-grid"
    written = write_outputs(res, out_dir)
    print(exp.summary(res) if exp.summary else "", flush=True)
    return {
        "out": str(out_dir),
        "written": {k: str(v) for k, v in dict(written or {}).items()},
        "wall_seconds": res.wall_seconds,
        "failures": res.failures,
        "rows": [
            {k: r[k] for k in ("dataset", "method", "params", "metric", "mean", "std")}
            | {"seconds_mean": r.get("seconds_mean"), "reps": r.get("reps")}
            for r in res.rows
            if r["metric"] == "accuracy"
        ],
    }


PARTS = {
    "grid": part_grid,
    "scale": part_scale,
    "subsample": part_subsample,
    "solvers": part_solvers,
    "mklpy": part_mklpy,
}


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--part", default="all", help=f"one of {list(PARTS)} or all")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rank", type=int, default=50)
    ap.add_argument("--p", type=float, default=2.0, help="part scale: the l_p norm")
    ap.add_argument("--outer-max-iter", type=int, default=30)
    ap.add_argument(
        "--inner-max-iter",
        type=int,
        default=3000,
        help="GFB iterations per inner solve (part scale; the classifier's default 3000)",
    )
    ap.add_argument("--solver-rank", type=int, default=500)
    ap.add_argument(
        "--solver-sizes", type=lambda s: [int(v) for v in s.split(",")], default=[1000, 2000]
    )
    ap.add_argument("--mklpy-rows", type=int, default=3000)
    ap.add_argument("--mklpy-methods", type=lambda s: s.split(","), default=None)
    ap.add_argument(
        "--mklpy-no-full", action="store_true", help="part mklpy: skip the full-kernel fit"
    )
    ap.add_argument(
        "--solver-methods",
        type=lambda s: s.split(","),
        default=None,
        help="part solvers: subset of split,split_blockwise,naive,newton (default all)",
    )
    ap.add_argument("--subsample-rows", type=int, default=10000)
    ap.add_argument("--subsample-data", default="ijcnn1", help="part subsample: ijcnn1, a9a")
    ap.add_argument("--subsample-rank", type=int, default=200)
    ap.add_argument(
        "--solver", default=None, help="inner solver of ours (default: newton if present)"
    )
    ints = lambda s: [int(v) for v in s.split(",") if v]  # noqa: E731
    ap.add_argument("--datasets", type=lambda s: s.split(","), default=None, help="part grid")
    ap.add_argument("--ranks", type=ints, default=[10, 20, 50, 100, 200], help="part grid")
    ap.add_argument("--reps", type=int, default=5, help="part grid: Newton runs (0: none)")
    ap.add_argument("--ps", type=lambda s: [float(v) for v in s.split(",")], default=[2.0, 1.1])
    ap.add_argument("--gfb-ranks", type=ints, default=[], help="part grid: GFB methods")
    ap.add_argument("--gfb-reps", type=int, default=1, help="part grid: GFB runs")
    ap.add_argument("--full-reps", type=int, default=1, help="part grid: full-kernel runs")
    ap.add_argument("--out", default=None, help="part grid: output folder")
    return ap.parse_args(argv)


def result_key(name, args):
    """The key of a part's result in :data:`OUT` (a grid's output folder, a subsample
    data set, a scale seed or p other than the default have their own)."""
    if name == "grid" and args.out:
        return f"grid:{Path(args.out).name}"
    if name == "subsample" and args.subsample_data != "ijcnn1":
        return f"subsample:{args.subsample_data}"
    if name == "scale" and (args.seed != 0 or args.p != 2.0):
        return f"scale:seed{args.seed}:p{args.p:g}"
    return name


def main(argv=None):
    guard = LoadGuard(label="bench_lpmkl").start()  # load average before and after
    args = parse_args(argv)
    if not os.environ.get("LORAK_DATA"):
        sys.exit("set LORAK_DATA to the benchmark data folder")
    parts = [p for p in PARTS if p != "grid"] if args.part == "all" else args.part.split(",")
    for name in parts:
        res, t = time_call(PARTS[name], args)
        # re-read: another bench_lpmkl process may have written its part meanwhile
        results = json.loads(OUT.read_text()) if OUT.exists() else {}
        results[result_key(name, args)] = {"result": res, "wall_seconds": t.wall}
        results["environment"] = capture_environment()
        results["load"] = guard.stop().record()  # key "load": this part's run
        write_json(OUT, results)
        print(name, json.dumps(res, indent=1, default=float)[:3000], flush=True)


if __name__ == "__main__":
    main()

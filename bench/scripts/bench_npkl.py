"""Speed and memory of SimpleNPKL against the issues' targets, in one run.

Targets (issue #7, issue 20 item 4): the linear loss on a1a in ≤ 1 s (paper: 28.8 s),
the square hinge at n = 6414 (B = n, k = 50, C = 1) in ≤ 30 s on every data set of that
size (paper: 3,692 s on a5a), memory O(n·(k + rank)).

Measured (constraints from ``from_labels(y, ratio=0.7)``):

(a) ``SimpleNPKL(loss="linear")`` on a1a: exact (every positive eigenpair) and with the
    paper's rank estimate (``max_rank="pataki"``), median of ``--repeats`` fits, each
    split into graph / eigen-solver time; also with the paper's 4104 constraints;
(b) ``SimpleNPKL(loss="squared_hinge", max_rank="pataki")`` (the paper's rank
    estimate; default ``max_iter``/``tol`` unless ``--max-iter``) at n = 6414 on each
    of ``SQH_SETS``: seeded subsamples of Adult (a9a, the paper's a5a size), ijcnn1,
    USPS, satimage, mushrooms, and two 10-feature sets nothing was tuned on (USPS on
    its 10 leading principal components; a 15-class Gaussian mixture). Per set: total
    seconds, iterations, eigen-solves, the eigen-solver's own seconds per solve, gap —
    for the library as it is ("new") and, in the same process, the eigen-solver rules
    before issue 20 ("old": no filter cut from the previous eigenvectors,
    ``cut_from_previous=False``, and no dense solve above n = 5000,
    ``eigen_solver="arpack"``), their order alternating from one set to the next; the
    ratio old/new, and the agreement: the largest relative difference of the dual
    objective per iteration and ‖K_new − K_old‖_F/‖K_old‖_F (the two must agree to
    round-off: the rules change the solver, not the problem). ``--exact SETS`` does
    the same without the rank cap (every positive eigenpair; ``--exact-iter``
    iterations, default 1: the old rules spend minutes per solve there). These fits
    are timed through the estimator's one call, :func:`lorak.learn.fit_simple_npkl`
    (after the constraint check; without the estimator's out-of-sample extension),
    whose record keeps each eigen-solve's seconds and solver;
(c) peak traced memory (tracemalloc) of the linear Pataki fit at n = 6414 against
    n·(k + rank)·8 bytes, and against one dense n × n float64 matrix.

Each set's record keeps the load average before and after it; the JSON keeps the load
guard's record of the whole run (flagged above the core count). Times are only
comparable as ratios inside one run on a shared machine.

``--baseline eigen-tol`` makes "old" the library as it is with ``eigen_tol=0``
(ARPACK at machine precision) against the default ``eigen_tol="auto"`` (10⁻²·tol for
the square hinge). Measured so (idle 2-core machine, load 1.0–1.14 with the run's own
thread, one BLAS thread; auto / eigen_tol=0 seconds): Adult 28.1 / 33.0, ijcnn1 27.5 /
33.0, USPS 11.8 / 12.6, satimage 12.1 / 13.5, mushrooms 19.6 / 23.1, USPS-PCA10 11.6 /
10.9, mixture10 14.3 / 15.8 — every set ≤ 30 s, the same iteration counts and final
gaps, dual objectives equal to 2·10⁻⁸ relative, kernels within 1.3·10⁻⁴ (Adult; ≤
2·10⁻⁵ elsewhere).

Before that (``--baseline rules``), on 2 shared cores, one BLAS thread, load 1.0–3.3
(new / old seconds): Adult
32.2 / 38.6 (28 iterations, 76 eigenpairs, 1.0 s per solve), ijcnn1 34 / 39 (43
iterations), USPS 12.6 / 15.5, satimage 12.1 / 16.1, mushrooms 22.7 / 27.2 (22
iterations), USPS-PCA10 11.3 / 13.3, mixture10 14.7 / 18.1 (241 eigenpairs, 3.3 s per
solve); objectives agree to 5e-16, kernels to 2e-12; uncapped, one iteration on Adult
33.2 / 69.8. At load < 1: Adult 32.3 / 35.7, ijcnn1 32.4 / 36.9 (then with
``eigen_tol=0``: the number of Algorithm 1 iterations, 28–43 with the rank cap, times a
Lanczos solve that a warm start does not shorten; see ``lorak.learn._simple_npkl``).

Usage: LORAK_DATA=... python bench/scripts/bench_npkl.py [--quick] [--repeats 3]
       [--threads 1] [--sets adult,usps] [--max-iter 100] [--no-compare]
       [--order alternate] [--baseline rules|eigen-tol] [--exact adult] [--exact-iter 1]
       [--out bench/scripts/out/bench_npkl.json]
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
from threadpoolctl import threadpool_limits

from lorak.constraints import check_constraints, from_labels
from lorak.datasets import load
from lorak.estimators import SimpleNPKL
from lorak.learn import fit_simple_npkl, knn_graph, normalized_laplacian
from lorak_bench.timing import LoadGuard, Record, Stopwatch, load_average, time_call

K = 50
TARGET_LL = 1.0
TARGET_SHL = 30.0
N_SQH = 6414


def adult(name):
    d = load(name)
    return np.asarray(d.X, dtype=np.float64), np.asarray(d.y)


def fit_timed(X, c, **kw):
    est = SimpleNPKL(C=1.0, B="n_samples", n_neighbors=K, random_state=0, **kw)
    gc.collect()
    with Stopwatch() as sw, warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X, **c)
    return est, sw.wall


def graph_seconds(X, repeats):
    return time_call(lambda: normalized_laplacian(knn_graph(X, K)), repeats=repeats)[1].wall


def bench_linear(X, y, repeats, n_pairs=None):
    c = from_labels(y, ratio=0.7, n_pairs=n_pairs, random_state=0)
    g = graph_seconds(X, repeats)
    out = {"n": X.shape[0], "n_constraints": c.n_constraints, "graph_seconds": g}
    for mode, kw in (("pataki", {"max_rank": "pataki"}), ("exact", {})):
        runs = [fit_timed(X, c, loss="linear", **kw) for _ in range(repeats)]
        secs = [t for _, t in runs]
        est = runs[-1][0]
        out[mode] = {
            "seconds_median": float(np.median(secs)),
            "seconds_all": secs,
            "rank": est.n_components_,
            "eigen_solves": est.eigen_solves_,
            "vs_graph": float(np.median(secs)) / g,
            "meets_target": bool(np.median(secs) <= TARGET_LL),
        }
    return out


# the n = 6414 square-hinge sets: the Adult subsample of the paper's a5a size and other
# shapes the defaults must serve (name -> (loader, note))
SQH_SETS = ("adult", "ijcnn1", "usps", "satimage", "mushrooms", "usps-pca10", "mixture10")


def n6414_set(name):
    """(X, y) with N_SQH rows: a seeded subsample of a LIBSVM set, or a 10-feature set
    that no part of the library was tuned on (USPS on its 10 leading principal
    components; a 15-class mixture of 30 Gaussians in 10 dimensions)."""
    rng = np.random.default_rng(0)
    if name == "mixture10":
        y = rng.integers(0, 15, N_SQH)
        means = 1.5 * rng.standard_normal((30, 10))
        X = means[2 * y + rng.integers(0, 2, N_SQH)] + rng.standard_normal((N_SQH, 10))
        return X, y.astype(np.float64)
    base = {"adult": ("a9a", "all"), "ijcnn1": ("ijcnn1", "train"), "usps": ("usps", "train"),
            "usps-pca10": ("usps", "train"), "satimage": ("satimage", "all"),
            "mushrooms": ("mushrooms", "train")}[name]  # fmt: skip
    d = load(base[0], split=base[1])
    idx = np.sort(rng.choice(d.X.shape[0], N_SQH, replace=False))
    X = d.X[idx]
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)
    if name == "usps-pca10":
        X = X - X.mean(axis=0)
        U, sv, _ = np.linalg.svd(X, full_matrices=False)
        X = U[:, :10] * sv[:10]
    return X, np.asarray(d.y)[idx]


#: Up to this n, ``eigen_solver="auto"`` also switches to the dense solve for many
#: eigenpairs (the estimator's ``eigen_solver`` documentation); above it, the mid-size
#: switch of issue 20 is the only dense rule, so ``"arpack"`` is the rules before it.
DENSE_MAX_N = 5000


def entry_fit_timed(X, c, **kw):
    """One timed call of :func:`lorak.learn.fit_simple_npkl` as
    ``SimpleNPKL(C=1.0, B="n_samples", n_neighbors=K, random_state=0)`` makes it (the
    constraints checked by :func:`lorak.constraints.check_constraints` inside the
    timing, as ``fit`` does; not the estimator's out-of-sample extension)."""
    gc.collect()
    with Stopwatch() as sw, warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        pairs, signs = check_constraints(c.must_link, c.cannot_link, X.shape[0]).pairs()
        fit = fit_simple_npkl(
            X, pairs, signs, C=1.0, B=float(X.shape[0]), n_neighbors=K,
            rng=np.random.default_rng(0), **kw,
        )  # fmt: skip
    return fit.result, sw.wall


def sqhinge_fit(X, c, version, baseline="rules", **kw):
    """One timed square-hinge fit (:func:`entry_fit_timed`; its result record keeps
    every eigen-solve's diagnostics). ``version="old"`` is the baseline: the
    eigen-solver rules before issue 20 (``baseline="rules"``: Lanczos for any k above
    n = 5000, ``eigen_solver="arpack"``, and no filter cut from the previous
    eigenvectors, ``cut_from_previous=False``) or the library as it is with ARPACK at
    machine precision (``baseline="eigen-tol"``: ``eigen_tol=0`` against the default
    ``"auto"``)."""
    if version == "old" and baseline == "eigen-tol":
        kw = {**kw, "eigen_tol": 0.0}
    elif version == "old":
        if X.shape[0] <= DENSE_MAX_N:
            raise ValueError(
                f"the old solver rules are eigen_solver='arpack' only above n = {DENSE_MAX_N}"
            )
        kw = {**kw, "eigen_solver": "arpack", "cut_from_previous": False}
    res, total = entry_fit_timed(X, c, loss="squared_hinge", **kw)
    infos = res.eig_info
    solves = int(sum(i.n_solves for i in infos))
    eig = float(sum(i.seconds for i in infos))
    return res, {
        "seconds": total,
        "n_iter": int(res.n_iter),
        "eigen_solves": solves,
        "rank": int(res.embedding.shape[1]),
        "eigen_seconds": eig,
        "eigen_seconds_per_solve": eig / max(solves, 1),
        "solvers": sorted({i.solver for i in infos}),
        "max_requested_k": max((max(i.requested) for i in infos if i.requested), default=0),
        "relative_gap": float(res.gap),
        "kkt_residual": float(res.kkt),
        "converged": bool(res.converged),
        "objective_history": list(res.history["objective"]),
    }


def agreement(a, b):
    """Largest relative difference of the per-iteration dual objective and of the
    learned kernel K = V Vᵀ (‖K_a − K_b‖_F / ‖K_b‖_F from n×r factors, no n×n), from
    two result records (:class:`lorak.learn.NPKLResult`)."""
    ha, hb = a.history["objective"], b.history["objective"]
    m = min(len(ha), len(hb))
    d_obj = float(np.max(np.abs(np.subtract(ha[:m], hb[:m])) / np.abs(hb[:m])))
    Va, Vb = a.embedding, b.embedding
    # Ka − Kb = Q R diag(I, −I) Rᵀ Qᵀ with [Va, Vb] = QR: its norm without cancellation
    R = np.linalg.qr(np.hstack([Va, Vb]), mode="r")
    sign = np.r_[np.ones(Va.shape[1]), -np.ones(Vb.shape[1])]
    Rb = R[:, Va.shape[1] :]
    d_k = float(np.linalg.norm((R * sign) @ R.T) / np.linalg.norm(Rb @ Rb.T))
    return {"max_rel_diff_objective_history": d_obj, "rel_diff_kernel_fro": d_k,
            "same_n_iter": a.n_iter == b.n_iter}  # fmt: skip


def bench_sqhinge_sets(names, *, max_rank, max_iter, compare, order, baseline="rules"):
    """Per set: the square hinge at n = 6414 (k = 50, B = n, C = 1), new and (with
    ``compare``) old solver rules in the same process, in ``order`` (alternated from one
    set to the next so that neither always runs first)."""
    out = {}
    for j, name in enumerate(names):
        X, y = n6414_set(name)
        c = from_labels(y, ratio=0.7, random_state=0)
        g = graph_seconds(X, 1)
        row = {"n": X.shape[0], "n_features": X.shape[1], "n_classes": len(np.unique(y)),
               "n_constraints": c.n_constraints, "graph_seconds": g,
               "load_before": load_average()}  # fmt: skip
        versions = ("new", "old") if compare else ("new",)
        if compare and ((order == "alternate" and j % 2 == 1) or order == "old-first"):
            versions = versions[::-1]
        ests = {}
        for v in versions:
            ests[v], row[v] = sqhinge_fit(X, c, v, baseline, max_rank=max_rank, max_iter=max_iter)
        row["load_after"] = load_average()
        if compare:
            row["baseline"] = baseline
            row["old_over_new_seconds"] = row["old"]["seconds"] / row["new"]["seconds"]
            row["agreement"] = agreement(ests["new"], ests["old"])
        row["meets_target"] = bool(row["new"]["seconds"] <= TARGET_SHL)
        out[name] = row
        print(f"sqhinge n={N_SQH} {name}:", json.dumps(row, default=float), flush=True)
    return out


def bench_memory(X, y):
    c = from_labels(y, ratio=0.7, random_state=0)
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    est = SimpleNPKL(C=1.0, B="n_samples", n_neighbors=K, max_rank="pataki", random_state=0)
    est.fit(X, **c)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    n, r = X.shape[0], est.n_components_
    budget = n * (K + r) * 8
    return {
        "n": n,
        "rank": r,
        "peak_bytes": int(peak),
        "n_times_k_plus_rank_bytes": budget,
        "peak_over_n_k_plus_rank": peak / budget,
        "dense_n_by_n_bytes": n * n * 8,
        "peak_over_dense": peak / (n * n * 8),
        "note": "X itself (n×123 float64) is allocated before tracing starts",
    }


def main(argv=None):
    guard = LoadGuard(label="bench_npkl").start()  # load average before and after
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a1a only, 1 repeat, 3 SHL iterations")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1, help="BLAS threads (default 1)")
    ap.add_argument("--sets", default="", help=f"comma list from {','.join(SQH_SETS)}")
    ap.add_argument("--max-iter", type=int, default=100, help="Algorithm 1 iterations")
    ap.add_argument("--no-compare", action="store_true", help="new solver rules only")
    ap.add_argument("--order", choices=("alternate", "new-first", "old-first"),
                    default="alternate")  # fmt: skip
    ap.add_argument("--baseline", choices=("rules", "eigen-tol"), default="rules",
                    help="old = the solver rules before issue 20, or eigen_tol=0")  # fmt: skip
    ap.add_argument("--exact", default="", help="sets for the uncapped (exact) comparison")
    ap.add_argument("--exact-iter", type=int, default=1)
    ap.add_argument("--out", default=str(Path(__file__).parent / "out" / "bench_npkl.json"))
    args = ap.parse_args(argv)
    repeats = 1 if args.quick else args.repeats
    res = Record(
        targets={"linear_a1a_seconds": TARGET_LL, "sqhinge_n6414_seconds": TARGET_SHL},
        load=guard.record(),
    )
    res["environment"]["blas_threads"] = args.threads
    with threadpool_limits(args.threads):
        X1, y1 = adult("a1a")
        res["linear_a1a"] = bench_linear(X1, y1, repeats)
        print("linear a1a:", json.dumps(res["linear_a1a"], default=float), flush=True)
        res["linear_a1a_paper_count"] = bench_linear(X1, y1, repeats, n_pairs=4104)
        print("linear a1a, 4104 pairs:", json.dumps(res["linear_a1a_paper_count"]), flush=True)
        if args.quick:
            c1 = from_labels(y1, ratio=0.7, random_state=0)
            _, res["sqhinge_a1a"] = sqhinge_fit(X1, c1, "new", max_rank="pataki", max_iter=3)
            print("sqhinge a1a:", json.dumps(res["sqhinge_a1a"]), flush=True)
        else:
            names = args.sets.split(",") if args.sets else list(SQH_SETS)
            kw = dict(compare=not args.no_compare, order=args.order, baseline=args.baseline)
            res["sqhinge_n6414"] = bench_sqhinge_sets(
                names, max_rank="pataki", max_iter=args.max_iter, **kw
            )
            if args.exact:
                # every positive eigenpair (no rank cap): few iterations, the old rules
                # spend minutes per Lanczos solve at k ≈ 1000
                res["sqhinge_n6414_exact"] = bench_sqhinge_sets(
                    args.exact.split(","), max_rank=None, max_iter=args.exact_iter, **kw
                )
            X5, y5 = n6414_set("adult")
            res["memory_n6414"] = bench_memory(X5, y5)
            print("memory n=6414:", json.dumps(res["memory_n6414"]), flush=True)
    res["load"] = guard.stop().record()
    out = res.write(args.out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

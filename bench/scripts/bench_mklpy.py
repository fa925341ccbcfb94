"""MKLpy's EasyMKL and GRAM beside lorak's MKL baselines on the Table 2 protocol.

MKLpy is what users pick today for MKL in Python; it is a benchmark-only dependency
(not a lorak requirement). Protocol: the ``gnys-mkl`` experiment's (Zhang et al. 2017,
§6.2): its datasets, loaders and scaling, 9 Gaussians b ∈ {2⁻⁴b₀, …, 2⁴b₀}, 100
labeled rows drawn evenly over the classes with the experiment's seeds (repetition r
uses the same rows as ``lorak-bench gnys-mkl`` repetition r), error (%) on the
unlabeled rows, SVM C = 1.

MKLpy works on full kernel matrices: training on the 9 l × l kernels of the labeled
rows and predicting from the 9 (n − l) × l test kernels, which fit in memory at every
n here (l = 100). Columns, all measured in this process with single-threaded BLAS:

- EasyMKL (``EasyMKL(lam=0.1, learner=SVC(C=1))``) and GRAM
  (``GRAM(max_iter=100, learner=SVC(C=1))``), one-vs-rest for multiclass (MKLpy's
  default); seconds include building their kernels;
- lorak ``GLMKLClassifier`` (SVC on the same kernels) and ``CABMKL`` (factor, on the
  experiment's k-means landmarks, LinearSVC) for the speed ratio.

Run: ``LORAK_DATA=../shared/data python bench/scripts/bench_mklpy.py [--reps 5]
[--datasets g241C,usps49]``; results in ``bench/scripts/out/bench_mklpy.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC
from threadpoolctl import threadpool_limits

from lorak.estimators import CABMKL, GLMKLClassifier
from lorak.landmarks import select_landmarks
from lorak.models import SemiSupervisedFactorClassifier
from lorak_bench import N_LABELED, derive_seed, draw_labeled, get_experiment
from lorak_bench.timing import Record, Stopwatch

OUT = Path(__file__).parent / "out" / "bench_mklpy.json"
warnings.filterwarnings("ignore", category=UserWarning, module="MKLpy")


def _kernels(bank, A, B):
    import torch

    return [torch.from_numpy(np.ascontiguousarray(K)) for K in bank.blocks(A, B)]


def _err(pred, y):
    return 100.0 * float(np.mean(np.asarray(pred) != y))


#: The columns of a data set's summary, in order.
COLUMNS = ("EasyMKL", "GRAM", "lorak GLMKL", "lorak CABMKL (factors)")


def run_dataset(spec, prepare, reps, data_home):
    data = spec.loader(spec, data_home)
    ctx = prepare(data)
    X = data.X.tocsr().astype(np.float64) if sp.issparse(data.X) else np.asarray(data.X, float)
    y = np.asarray(data.y)
    out = {"n": int(X.shape[0]), "d": int(X.shape[1]), "m_tilde": ctx["m"], "reps": []}
    for r in range(reps):
        rec = run_rep(ctx, X, y, derive_seed(0, r))
        out["reps"].append(rec)
        print(spec.display, r, {k: v for k, v in rec.items() if k != "seed"}, flush=True)
    out["summary"] = summarize_columns(out["reps"])
    return out


def run_rep(ctx, X, y, seed):
    """One repetition: the same labeled rows for MKLpy's two methods and lorak's two."""
    lab = draw_labeled(y, N_LABELED, np.random.default_rng([seed, 7]))
    unl = np.setdiff1d(np.arange(y.size), lab)
    rec = {"seed": int(seed)}
    with threadpool_limits(1):
        rec |= mklpy_columns(ctx["bank"], X, y, lab, unl)
        rec |= lorak_columns(ctx, X, y, lab, unl, seed)
    return rec


def mklpy_columns(bank, X, y, lab, unl):
    """EasyMKL and GRAM on the bank's kernels of the labeled rows (their failures are
    reported, not fatal)."""
    import torch
    from MKLpy.algorithms import GRAM, EasyMKL

    rec = {}
    for name, build in (
        ("EasyMKL", lambda: EasyMKL(lam=0.1, learner=SVC(C=1.0))),
        ("GRAM", lambda: GRAM(max_iter=100, learner=SVC(C=1.0))),
    ):
        try:
            with Stopwatch() as sw:
                KL = _kernels(bank, X[lab], X[lab])
                mkl = build().fit(KL, torch.tensor(y[lab]))
                KLte = _kernels(bank, X[unl], X[lab])
                pred = np.asarray(mkl.predict(KLte))
            rec[name] = {"error_pct": _err(pred, y[unl]), "seconds": sw.wall}
            del KLte
        except Exception as exc:  # MKLpy failures are reported, not fatal
            rec[name] = {"error": f"{type(exc).__name__}: {exc}"}
    return rec


def lorak_columns(ctx, X, y, lab, unl, seed):
    """lorak's GLMKL on the full kernels and CABMKL on factors (k-means landmarks)."""
    bank = ctx["bank"]
    yu = np.full(y.size, -1)
    yu[lab] = y[lab]
    rec = {}
    with Stopwatch() as sw, warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        g = GLMKLClassifier(bank, C=1.0).fit(X, yu)
    rec["lorak GLMKL"] = {
        "error_pct": _err(g.transduction_[unl], y[unl]),
        "seconds": sw.wall,
    }
    with Stopwatch() as sw:
        rng = np.random.default_rng([seed, 11])
        Z = select_landmarks("kmeans", X, ctx["m"], rng=rng, kernel=ctx["kernel"]).points
        c = SemiSupervisedFactorClassifier(CABMKL(bank, landmarks=Z)).fit(X, yu)
    rec["lorak CABMKL (factors)"] = {
        "error_pct": _err(c.transduction_[unl], y[unl]),
        "seconds": sw.wall,
    }
    return rec


def summarize_columns(reps):
    """Each column's mean error and seconds over the repetitions it finished (its first
    failure when none did)."""
    summary = {}
    for name in COLUMNS:
        ok = [rec[name] for rec in reps if "error_pct" in rec.get(name, {})]
        if ok:
            e = np.array([o["error_pct"] for o in ok])
            s = np.array([o["seconds"] for o in ok])
            summary[name] = {
                "error_pct_mean": float(e.mean()),
                "error_pct_std": float(e.std(ddof=1)) if e.size > 1 else 0.0,
                "seconds_mean": float(s.mean()),
                "reps_ok": int(e.size),
            }
        else:
            summary[name] = {"failed": [rec.get(name) for rec in reps][:1]}
    return summary


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--datasets", default=None, help="comma-separated paper labels")
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args()
    data_home = os.environ.get("LORAK_DATA")
    if not data_home:
        raise SystemExit("set LORAK_DATA to the benchmark data folder")
    try:
        import MKLpy  # noqa: F401
    except Exception as exc:
        raise SystemExit(f"MKLpy not importable ({type(exc).__name__}: {exc})") from exc
    # the experiment's own sets, loaders and preparation (its small and large parts)
    specs = [(s, part.prepare) for part in get_experiment("gnys-mkl").parts for s in part.datasets]
    if args.datasets:
        want = set(args.datasets.split(","))
        specs = [(s, prepare) for s, prepare in specs if s.display in want]
    prev = json.loads(Path(args.out).read_text()) if Path(args.out).exists() else {}
    doc = Record(
        protocol="gnys-mkl (Table 2): 9 Gaussians, l = 100, C = 1, error on unlabeled rows",
        datasets=dict(prev.get("datasets", {})),  # merged: earlier runs' sets kept
    )
    for spec, prepare in specs:
        doc["datasets"][spec.display] = run_dataset(spec, prepare, args.reps, data_home)
        doc.write(args.out)
    cols = ("EasyMKL", "GRAM", "lorak GLMKL", "lorak CABMKL (factors)")
    print(f"{'dataset':12s}" + "".join(f"{k:>28s}" for k in cols))
    for d, v in doc["datasets"].items():
        cells = []
        for s in v["summary"].values():
            if "error_pct_mean" in s:
                cells.append(
                    f"{s['error_pct_mean']:6.2f}±{s['error_pct_std']:5.2f} "
                    f"{s['seconds_mean']:7.2f}s"
                )
            else:
                cells.append("failed")
        print(f"{d:12s}" + "".join(f"{c:>28s}" for c in cells))


if __name__ == "__main__":
    main()

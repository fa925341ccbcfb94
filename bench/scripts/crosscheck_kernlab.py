"""Cross-check of lorak's CSI against R's kernlab ``csi`` (a port of the authors' code).

For three data sets (ringnorm 400 × 20, waveform 450 × 21 with 3 classes, scikit-learn's
breast cancer 569 × 30; features scaled to unit variance; Gaussian kernel
exp(−γ‖x−y‖²) with γ = 1/(2·n_features), i.e. 1/mean‖x − y‖²), kernlab's ``csi`` and
:func:`lorak.learn._csi.csi` run with the same κ, δ, rank and tol, and the script
compares:

- ``selection="reference"`` (the reference code's pivot scan, see the module docstring
  of :mod:`lorak.learn._csi`): pivots must be identical and the traces
  tr(K−GGᵀ)/tr K, ‖Y−QQᵀY‖²/‖Y‖², the predicted and the true gains must agree to
  round-off;
- ``selection="argmax"`` (lorak's default, the paper's "best pivot"): pivots may differ
  from the first step on; the objective J = (1−κ)·approx + κ·prediction is compared
  rank by rank (ours should be no worse on average).

Needs R with kernlab (Debian: ``apt-get install r-cran-kernlab``); not part of CI.
Writes ``bench/scripts/out/crosscheck_kernlab.json``.

Usage: python bench/scripts/crosscheck_kernlab.py [--rank 60] [--delta 30] [--kappa 0.99]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from lorak.datasets import load
from lorak.kernels import Gaussian
from lorak.learn import csi
from lorak_bench.timing import Record, Stopwatch, time_call

HERE = Path(__file__).resolve().parent
R_SCRIPT = HERE / "crosscheck_kernlab.R"


def datasets():
    out = {}
    X, y = load("ringnorm", n_samples=400, random_state=1)
    out["ringnorm"] = (X, y)
    X, y = load("waveform", n_samples=450, random_state=1)
    out["waveform"] = (X, y)
    d = load("breast_cancer")
    out["breast_cancer"] = (d.X, d.y)
    return out


def run_kernlab(X, Y, gamma, rank, kappa, delta, tol, workdir):
    xp, yp = workdir / "X.csv", workdir / "Y.csv"
    np.savetxt(xp, X, delimiter=",", fmt="%.17g")
    np.savetxt(yp, Y, delimiter=",", fmt="%.17g")
    cmd = ["Rscript", str(R_SCRIPT), str(xp), str(yp), repr(gamma), str(rank)]
    cmd += [repr(kappa), str(delta), repr(tol)]
    with Stopwatch() as sw:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    seconds = sw.wall
    if proc.returncode:
        raise RuntimeError(f"Rscript failed:\n{proc.stderr}")
    out = {}
    for line in proc.stdout.strip().splitlines():
        name, *vals = line.split()
        out[name] = vals if name == "version" else np.array(vals, dtype=float)
    out["pivots"] = out["pivots"].astype(int)
    out["seconds"] = seconds
    return out


def run_lorak(X, Y, gamma, rank, kappa, delta, tol, selection):
    ker = Gaussian(gamma=gamma)
    res, timing = time_call(
        csi,
        ker.diag(X),
        lambda i: ker(X, X[i : i + 1]).ravel(),
        Y,
        rank,
        kappa=kappa,
        lookahead=delta,
        tol=tol,
        selection=selection,
    )
    return res, timing.wall


def _max_rel(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.size == 0:
        return None
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)))


def compare(name, X, y, args, workdir):
    X = (X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1.0)
    classes = np.unique(y)
    Y = (y[:, None] == classes[None, :]).astype(float)
    gamma = 1.0 / (2 * X.shape[1])
    rank = min(args.rank, X.shape[0] - 2)
    kl = run_kernlab(X, Y, gamma, rank, args.kappa, args.delta, args.tol, workdir)
    row = {
        "dataset": name,
        "n": int(X.shape[0]),
        "features": int(X.shape[1]),
        "classes": int(classes.size),
        "gamma": gamma,
        "rank": rank,
        "kernlab_version": kl["version"][0],
        "kernlab_seconds_incl_R_startup": kl["seconds"],
    }
    for sel in ("reference", "argmax"):
        res, secs = run_lorak(X, Y, gamma, rank, args.kappa, args.delta, args.tol, sel)
        r = min(res.pivots.size, kl["pivots"].size)
        same = res.pivots[:r] == kl["pivots"][:r]
        prefix = int(np.argmin(same)) if not same.all() else r
        entry = {
            "rank_ours": int(res.pivots.size),
            "rank_kernlab": int(kl["pivots"].size),
            "identical_pivot_prefix": prefix,
            "pivots_identical": bool(prefix == r == res.pivots.size == kl["pivots"].size),
            "seconds": secs,
        }
        p = prefix
        if p:
            entry["max_abs_diff_approx_error"] = float(
                np.max(np.abs(res.approx_error[: p + 1] - kl["approx_error"][: p + 1]))
            )
            entry["max_abs_diff_prediction_error"] = float(
                np.max(np.abs(res.prediction_error[: p + 1] - kl["prediction_error"][: p + 1]))
            )
            entry["max_rel_diff_predicted_gain"] = _max_rel(
                res.predicted_gain[:p], kl["predicted_gain"][:p]
            )
            entry["max_rel_diff_true_gain"] = _max_rel(res.true_gain[:p], kl["true_gain"][:p])
        J_ours = (1 - args.kappa) * res.approx_error + args.kappa * res.prediction_error
        J_kl = (1 - args.kappa) * kl["approx_error"] + args.kappa * kl["prediction_error"]
        m = min(J_ours.size, J_kl.size)
        entry["objective_at"] = {
            str(k): [float(J_ours[k]), float(J_kl[k])] for k in (1, 5, 10, 20, 40, m - 1) if k < m
        }
        entry["objective_mean_ratio_ours_over_kernlab"] = float(np.mean(J_ours[1:m] / J_kl[1:m]))
        row[sel] = entry
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rank", type=int, default=60)
    ap.add_argument("--delta", type=int, default=30)
    ap.add_argument("--kappa", type=float, default=0.99)
    ap.add_argument("--tol", type=float, default=1e-12)
    ap.add_argument("--out", type=Path, default=HERE / "out" / "crosscheck_kernlab.json")
    args = ap.parse_args()
    if shutil.which("Rscript") is None:
        raise SystemExit(
            "Rscript not found: install R and kernlab (apt-get install r-cran-kernlab)"
        )
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (X, y) in datasets().items():
            row = compare(name, np.asarray(X, float), np.asarray(y), args, Path(tmp))
            rows.append(row)
            ref, am = row["reference"], row["argmax"]
            print(
                f"{name:14s} n={row['n']:4d} rank={row['rank']}: reference selection — "
                f"pivots identical: {ref['pivots_identical']} ({ref['identical_pivot_prefix']}"
                f"/{ref['rank_kernlab']}), max |Δ approx| "
                f"{ref.get('max_abs_diff_approx_error', float('nan')):.1e}, max |Δ pred| "
                f"{ref.get('max_abs_diff_prediction_error', float('nan')):.1e}, max rel Δ gains "
                f"{ref.get('max_rel_diff_true_gain', float('nan')):.1e}; argmax selection — "
                f"J ours/kernlab (mean over ranks) "
                f"{am['objective_mean_ratio_ours_over_kernlab']:.3f}"
            )
    doc = Record(
        settings={
            "rank": args.rank,
            "delta": args.delta,
            "kappa": args.kappa,
            "tol": args.tol,
            "kernel": "exp(-gamma ||x-y||^2), gamma = 1/(2 n_features), unit-variance features",
        },
        results=rows,
    )
    doc.write(args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

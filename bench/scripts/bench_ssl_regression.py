"""Semi-supervised regression: the regressor's default (the graph factor) and the
response-learned generalized Nyström factor against plain Nyström, all under the same
ridge head, with their defaults.

Protocol (the same for every data set; nothing is chosen from the unlabeled responses)
--------------------------------------------------------------------------------------
- Data: scikit-learn's diabetes (442 rows), Friedman #1–#3 (``make_friedman1..3``,
  600 rows, noise 1.0 / 125 / 0.1 — the levels of ``bench_mkl_regression.py``), and
  two generated manifold problems: ``spiral`` (a smooth response along a 2-D spiral,
  four nuisance features) and ``clusters`` (six Gaussian clusters in 5-D, a response
  level per cluster plus a linear trend); added after the default's margin was fixed,
  as data it was not chosen on: ``swissroll`` (cos of the roll coordinate, three
  nuisance features) and ``sparse`` (``make_sparse_uncorrelated``, linear in 4 of 10
  features). California housing is used when scikit-learn has it cached (it is not
  downloaded). Features standardized per column.
- Labels: a fraction (5 %, 10 %, 20 %) of the rows drawn at random per repetition
  (seeds 0–4); the other rows are unlabeled (``y = NaN``) and are the held-out rows
  the R² is measured on.
- Methods, each fitted on all rows: ``gn`` —
  ``SemiSupervisedFactorRegressor(GeneralizedNystroem(random_state=seed))``, every
  default (target K* = ỹỹᵀ, λ by cross-validation with the ridge scorer, RidgeCV head);
  ``nystrom`` — the same pipeline with ``lam=inf``, i.e. plain Nyström on the same
  k-means landmarks and kernel (with RidgeCV); ``default`` —
  ``SemiSupervisedFactorRegressor()``, every default. All see the same labeled rows.
- Reported per set and fraction: mean R² of both, wins / ties / losses of ``gn``
  (|difference| ≤ 0.001 is a tie), mean and worst difference, the λ chosen; then the
  totals. ``--out`` writes everything as JSON.

Usage: python bench/scripts/bench_ssl_regression.py [--reps N] [--fractions 0.05,0.1]
       [--sets a,b] [--out FILE]
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from sklearn.datasets import load_diabetes, make_friedman1, make_friedman2, make_friedman3
from sklearn.metrics import r2_score
from sklearn.preprocessing import StandardScaler

from lorak import GeneralizedNystroem, SemiSupervisedFactorRegressor
from lorak_bench.timing import Record, Stopwatch

N_GENERATED = 600


def _spiral(seed):
    rng = np.random.default_rng(seed)
    t = rng.uniform(0, 3 * np.pi, N_GENERATED)
    X = np.c_[np.cos(t) * (1 + t) / 3, np.sin(t) * (1 + t) / 3, 0.3 * rng.normal(size=(t.size, 4))]
    return X, np.sin(2 * t) + 0.05 * rng.normal(size=t.size)


def _clusters(seed):
    rng = np.random.default_rng(seed)
    c = rng.integers(0, 6, N_GENERATED)
    X = 3 * rng.normal(size=(6, 5))[c] + rng.normal(size=(c.size, 5))
    return X, c / 2 + 0.3 * X[:, 0] + 0.1 * rng.normal(size=c.size)


def _swissroll(seed):
    from sklearn.datasets import make_swiss_roll

    X, t = make_swiss_roll(N_GENERATED, noise=0.2, random_state=seed)
    rng = np.random.default_rng(seed)
    X = np.c_[X, 3 * rng.normal(size=(t.size, 3))]
    return X, np.cos(t) + 0.05 * rng.normal(size=t.size)


def _sparse(seed):
    from sklearn.datasets import make_sparse_uncorrelated

    return make_sparse_uncorrelated(N_GENERATED, n_features=10, random_state=seed)


def _california(seed):
    from sklearn.datasets import fetch_california_housing

    X, y = fetch_california_housing(return_X_y=True, download_if_missing=False)
    rows = np.random.default_rng(1000 + seed).choice(y.size, 2000, replace=False)
    return X[rows], y[rows]


SETS = {
    "diabetes": lambda seed: load_diabetes(return_X_y=True),
    "friedman1": lambda seed: make_friedman1(N_GENERATED, noise=1.0, random_state=seed),
    "friedman2": lambda seed: make_friedman2(N_GENERATED, noise=125.0, random_state=seed),
    "friedman3": lambda seed: make_friedman3(N_GENERATED, noise=0.1, random_state=seed),
    "spiral": _spiral,
    "clusters": _clusters,
    "swissroll": _swissroll,
    "sparse": _sparse,
    "california": _california,
}


def _available(name):
    try:
        SETS[name](0)
    except OSError:
        return False
    return True


def run_cell(name, frac, seed):
    X, y = SETS[name](seed)
    X = StandardScaler().fit_transform(X)
    n = y.size
    lab = np.random.default_rng(100 + seed).permutation(n)[: max(3, round(frac * n))]
    un = np.setdiff1d(np.arange(n), lab)
    yu = np.full(n, np.nan)
    yu[lab] = y[lab]
    out = {}
    for method, lam in (("gn", "auto"), ("nystrom", np.inf), ("default", None)):
        with Stopwatch() as sw:
            if lam is None:  # every default: the graph factor and its rank
                reg = SemiSupervisedFactorRegressor()
            else:
                reg = SemiSupervisedFactorRegressor(GeneralizedNystroem(lam=lam, random_state=seed))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                reg.fit(X, yu)
            out[method] = float(r2_score(y[un], reg.transduction_[un]))
        out[f"{method}_seconds"] = sw.wall
        if method == "gn":
            out["lam"] = float(reg.factor_.lam_)
    return out


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--fractions", default="0.05,0.1,0.2")
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--out", default=None)
    return ap.parse_args(argv)


def set_row(name, frac, reps):
    """``(row, d, dd)``: one set at one labeled fraction over ``reps`` draws; ``d`` and
    ``dd`` the generalized Nyström's and the default's R² minus plain Nyström's, per draw."""
    cells = [run_cell(name, frac, seed) for seed in range(reps)]
    d = np.array([c["gn"] - c["nystrom"] for c in cells])
    dd = np.array([c["default"] - c["nystrom"] for c in cells])
    w, t = int(np.sum(d > 1e-3)), int(np.sum(np.abs(d) <= 1e-3))
    row = {
        "set": name,
        "fraction": frac,
        "gn": float(np.mean([c["gn"] for c in cells])),
        "nystrom": float(np.mean([c["nystrom"] for c in cells])),
        "wins": w,
        "ties": t,
        "losses": d.size - w - t,
        "mean_diff": float(d.mean()),
        "worst_diff": float(d.min()),
        "default": float(np.mean([c["default"] for c in cells])),
        "default_mean_diff": float(dd.mean()),
        "lams": [c["lam"] for c in cells],
        "cells": cells,
    }
    return row, d, dd


def print_set_row(row):
    lams = ",".join(f"{v:g}" for v in row["lams"])
    print(
        f"{row['set']:<11}{row['fraction']:>7.0%}{row['gn']:>8.3f}{row['nystrom']:>8.3f}  "
        f"{row['wins']}/{row['ties']}/{row['losses']}  {row['mean_diff']:>+8.4f}"
        f"{row['worst_diff']:>+8.4f}  {lams}   default {row['default']:.3f}",
        flush=True,
    )


def gn_total(rows, all_d):
    """Generalized Nyström against plain Nyström over every fit and every cell mean."""
    d = np.array(all_d)
    w, t = int(np.sum(d > 1e-3)), int(np.sum(np.abs(d) <= 1e-3))
    total = {
        "wins": w,
        "ties": t,
        "losses": d.size - w - t,
        "mean_diff": float(d.mean()),
        "worst_diff": float(d.min()),
        "cell_means_won": int(sum(r["mean_diff"] > 1e-3 for r in rows)),
        "cell_means_lost": int(sum(r["mean_diff"] < -1e-3 for r in rows)),
        "cells": len(rows),
    }
    print(
        f"total: {w} wins / {t} ties / {total['losses']} losses over {d.size} fits; mean "
        f"{total['mean_diff']:+.4f}, worst {total['worst_diff']:+.4f}; set×fraction means "
        f"won {total['cell_means_won']}, lost {total['cell_means_lost']} of {len(rows)}"
    )
    return total


def default_total(rows, all_dd):
    """The default regressor against plain Nyström + RidgeCV."""
    dd = np.array(all_dd)
    total = {
        "mean_r2": float(np.mean([r["default"] for r in rows])),
        "nystrom_mean_r2": float(np.mean([r["nystrom"] for r in rows])),
        "cell_means_won": int(sum(r["default_mean_diff"] > 1e-3 for r in rows)),
        "cell_means_lost": int(sum(r["default_mean_diff"] < -1e-3 for r in rows)),
        "fits_won": int(np.sum(dd > 1e-3)),
        "fits_lost": int(np.sum(dd < -1e-3)),
    }
    print(
        f"default (SemiSupervisedFactorRegressor()) against plain Nyström + RidgeCV: mean R² "
        f"{total['mean_r2']:.3f} against {total['nystrom_mean_r2']:.3f}; "
        f"set×fraction means won {total['cell_means_won']}, lost "
        f"{total['cell_means_lost']} of {len(rows)}"
    )
    return total


def main(argv=None):
    args = parse_args(argv)
    fractions = [float(f) for f in args.fractions.split(",")]
    names = [s for s in args.sets.split(",") if s]
    skipped = [s for s in names if not _available(s)]
    names = [s for s in names if s not in skipped]
    if skipped:
        print(f"skipped (not available offline): {', '.join(skipped)}")
    record = Record(skipped=skipped)
    print(f"load average at start: {record['environment']['load_average'][0]:.2f}")
    rows, all_d, all_dd = [], [], []
    header = (
        f"{'set':<11}{'labels':>7}{'gn R²':>8}{'nys R²':>8}  w/t/l  {'mean Δ':>8}{'worst Δ':>8}  λ"
    )
    print(header)
    for name in names:
        for frac in fractions:
            row, d, dd = set_row(name, frac, args.reps)
            all_dd.extend(dd.tolist())
            all_d.extend(d.tolist())
            rows.append(row)
            print_set_row(row)
    total = gn_total(rows, all_d)
    total["default"] = default_total(rows, all_dd)
    if args.out:
        record.update(rows=rows, total=total)
        record.write(args.out)


if __name__ == "__main__":
    main()

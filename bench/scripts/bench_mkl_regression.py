"""ℓp-MKL regression on low-rank factors against the full-kernel models a user would pick.

Methods, all on standardized features and the same random train/test splits:

- ``lorak`` — :class:`lorak.LowRankMKLRegressor` with its defaults (a scale-free bank of
  Gaussians, k-means landmarks, C by generalized cross-validation, p = 2, the weights
  with the lowest GCV among the learned, uniform and single-kernel ones);
- ``lorak-mkl`` — the same with the learned ℓp-MKL weights always (``weights="mkl"``);
- ``lorak-r400`` — the defaults with 400 landmarks instead of 200;
- ``uniform-sum`` — the same bank's factors summed with equal weights
  (:class:`lorak.UniformKernelSum`), then scikit-learn's ``RidgeCV``: the MKL baseline;
- ``krr-tuned`` — scikit-learn's ``KernelRidge`` (RBF) tuned by 3-fold ``GridSearchCV``
  over α × γ (5 × 5, γ relative to 1/d);
- ``svr-tuned`` — ``SVR`` (RBF) tuned the same way over C × γ, ε = 0.1 · std(y).

Accuracy part: R² on the test rows (mean ± std over ``--reps`` splits) on scikit-learn's
diabetes set and Friedman #1–#3 (generated, n = 2000, noise as in Breiman 1996's setup
scaled to each target). Speed part (``--part speed``): one fit of each at n = 20,000
Friedman #1 rows: lorak's whole default fit (GCV included) against one KernelRidge fit at
the tuned accuracy part's best parameters (a tuned search costs that many fits more),
as a ratio measured in the same run with the load average recorded.

Run: ``python bench/scripts/bench_mkl_regression.py [--part accuracy|speed|all]
[--reps 5] [--out bench/scripts/out/bench_mkl_regression.json]``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from sklearn.datasets import load_diabetes, make_friedman1, make_friedman2, make_friedman3
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import RidgeCV
from sklearn.metrics import r2_score
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVR

import lorak
from lorak.kernels import KernelBank
from lorak_bench.timing import Record, load_average, time_call

OUT = Path(__file__).parent / "out" / "bench_mkl_regression.json"


def datasets(n_friedman=2000):
    X, y = load_diabetes(return_X_y=True)
    yield "diabetes", X, y
    for name, make, noise in (
        ("friedman1", make_friedman1, 1.0),
        ("friedman2", make_friedman2, 125.0),
        ("friedman3", make_friedman3, 0.1),
    ):
        X, y = make(n_samples=n_friedman, noise=noise, random_state=0)
        yield name, X, y


def _timed(fn):
    out, t = time_call(fn)
    return out, t.wall, t.cpu


def methods(n_features, y_std):
    g = np.logspace(-2, 1, 5) / n_features
    return {
        "lorak": lambda: lorak.LowRankMKLRegressor(random_state=0),
        "lorak-mkl": lambda: lorak.LowRankMKLRegressor(weights="mkl", random_state=0),
        "lorak-r400": lambda: lorak.LowRankMKLRegressor(rank=400, random_state=0),
        "uniform-sum": lambda: make_pipeline(
            lorak.UniformKernelSum(
                kernels=KernelBank.gaussian(factors=2.0 ** np.arange(-6, 5)),
                n_components=200,
                landmarks="kmeans",
                random_state=0,
            ),
            RidgeCV(alphas=np.logspace(-4, 4, 17)),
        ),
        "krr-tuned": lambda: GridSearchCV(
            KernelRidge(kernel="rbf"),
            {"alpha": np.logspace(-3, 1, 5), "gamma": g},
            cv=3,
        ),
        "svr-tuned": lambda: GridSearchCV(
            SVR(kernel="rbf", epsilon=0.1 * y_std),
            {"C": np.logspace(-1, 3, 5), "gamma": g},
            cv=3,
        ),
    }


def accuracy_part(reps):
    out = {}
    for name, X, y in datasets():
        rows = {}
        for r in range(reps):
            Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=r)
            sc = StandardScaler().fit(Xtr)
            Xtr, Xte = sc.transform(Xtr), sc.transform(Xte)
            for meth, make in methods(X.shape[1], float(np.std(ytr))).items():
                est, wall, cpu = _timed(lambda make=make, A=Xtr, t=ytr: make().fit(A, t))
                cell = rows.setdefault(meth, {"r2": [], "wall": [], "cpu": []})
                cell["r2"].append(float(r2_score(yte, est.predict(Xte))))
                cell["wall"].append(wall)
                cell["cpu"].append(cpu)
                if meth == "krr-tuned":
                    cell.setdefault("best", []).append(
                        {k: float(v) for k, v in est.best_params_.items()}
                    )
        out[name] = {
            m: {
                **c,
                "r2_mean": float(np.mean(c["r2"])),
                "r2_std": float(np.std(c["r2"])),
                "wall_median": float(np.median(c["wall"])),
            }
            for m, c in rows.items()
        }
        best_full = max(out[name][m]["r2_mean"] for m in ("krr-tuned", "svr-tuned"))
        out[name]["gap_to_best_full"] = out[name]["lorak"]["r2_mean"] - best_full
        print(
            f"{name:10s} "
            + "  ".join(f"{m} {out[name][m]['r2_mean']:.4f}" for m in rows)
            + f"  gap {out[name]['gap_to_best_full']:+.4f}",
            flush=True,
        )
    return out


def speed_part(n=20000, alpha=None, gamma=None):
    X, y = make_friedman1(n_samples=n + 5000, noise=1.0, random_state=1)
    X = StandardScaler().fit_transform(X)
    Xtr, Xte, ytr, yte = X[:n], X[n:], y[:n], y[n:]
    load = load_average()
    ours, w_ours, c_ours = _timed(lambda: lorak.LowRankMKLRegressor(random_state=0).fit(Xtr, ytr))
    krr = KernelRidge(
        kernel="rbf", alpha=0.01 if alpha is None else alpha, gamma=0.1 if gamma is None else gamma
    )
    krr, w_krr, c_krr = _timed(lambda: krr.fit(Xtr, ytr))
    res = {
        "n": n,
        "load_before": load,
        "load_after": load_average(),
        "lorak": {"wall": w_ours, "cpu": c_ours, "r2": float(r2_score(yte, ours.predict(Xte)))},
        "krr": {"wall": w_krr, "cpu": c_krr, "r2": float(r2_score(yte, krr.predict(Xte)))},
    }
    res["speedup_wall"] = w_krr / w_ours
    res["speedup_cpu"] = c_krr / c_ours
    print(json.dumps(res, indent=1), flush=True)
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=["accuracy", "speed", "all"], default="all")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--n-speed", type=int, default=20000)
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args(argv)
    res = Record(json.loads(a.out.read_text()) if a.out.exists() else {})
    if a.part in ("accuracy", "all"):
        res["accuracy"] = accuracy_part(a.reps)
    if a.part in ("speed", "all"):
        best = res.get("accuracy", {}).get("friedman1", {}).get("krr-tuned", {}).get("best")
        alpha = gamma = None
        if best:
            alpha = float(np.median([b["alpha"] for b in best]))
            gamma = float(np.median([b["gamma"] for b in best]))
        res["speed"] = speed_part(a.n_speed, alpha, gamma)
    res.write(a.out)


if __name__ == "__main__":
    main()

"""Fit cost of the semi-supervised default (issue 29), plain Python timing.

- The new default ``SemiSupervisedFactorClassifier()`` against the default before it
  (``GeneralizedNystroem`` + ``LinearSVC(C=1)``) on the SSL book's Digit1, USPS, COIL2
  and Text (n = 1500; the first official split, 100 labels): median of 3 fits each, in
  one process, one BLAS thread.
- The new default's scaling with n: random subsets of LIBSVM usps train + test (256
  features; needs ``LORAK_DATA``), 10 labels per class, n = 1500 … 9000.

Usage: python bench/scripts/bench_ssl_cost.py OUT.json
"""

import os
import sys

import numpy as np
from sklearn.svm import LinearSVC
from threadpoolctl import threadpool_limits

from lorak import GeneralizedNystroem, SemiSupervisedFactorClassifier
from lorak.datasets import load
from lorak_bench.timing import Record, time_call


def median_seconds(make, X, y, reps):
    return time_call(lambda: make().fit(X, y), repeats=reps)[1].wall


def before():
    svc = LinearSVC(C=1.0, dual=True, max_iter=10000, random_state=0)
    return SemiSupervisedFactorClassifier(GeneralizedNystroem(random_state=0), classifier=svc)


def main(out_path):
    out = Record()  # the environment, with the load average at the start
    with threadpool_limits(1):
        for name in ("ssl-digit1", "ssl-usps", "ssl-coil2", "ssl-text"):
            d = load(name)
            y = np.unique(d.y, return_inverse=True)[1]
            lab = np.asarray(d.splits_labeled[100][0])
            yu = np.full(y.size, -1)
            yu[lab] = y[lab]
            new = median_seconds(SemiSupervisedFactorClassifier, d.X, yu, 3)
            old = median_seconds(before, d.X, yu, 3)
            out[name] = {"new_s": new, "today_s": old, "ratio": new / old}
            print(f"{name:10s} new {new:6.2f}s  before {old:6.2f}s  ratio {new / old:5.2f}")
        if os.environ.get("LORAK_DATA"):
            d = load("usps", split="all")
            Xa = d.X.toarray() if hasattr(d.X, "toarray") else np.asarray(d.X)
            ya = np.unique(d.y, return_inverse=True)[1]
            rng = np.random.default_rng(0)
            for n in (1500, 3000, 6000, 9000):
                idx = rng.choice(Xa.shape[0], n, replace=False)
                X, y = Xa[idx], ya[idx]
                yu = np.full(n, -1)
                lab = np.concatenate([np.flatnonzero(y == c)[:10] for c in np.unique(y)])
                yu[lab] = y[lab]
                t = median_seconds(SemiSupervisedFactorClassifier, X, yu, 1)
                out[f"usps_n{n}"] = t
                print(f"usps n={n:5d} new default {t:6.2f}s  {1e3 * t / n:6.3f} ms/row")
    out.write(out_path)


if __name__ == "__main__":
    main(sys.argv[1])

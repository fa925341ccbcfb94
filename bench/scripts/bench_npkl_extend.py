"""SimpleNPKL on new rows: clustering accuracy of held-out rows against training rows.

For each set (features standardized), repeated 70/30 stratified splits: constraints
drawn from the training labels (``from_labels``, ratio 0.7 of the training rows),
SimpleNPKL fitted on the training rows, k-means (as many clusters as classes) on the
training embedding, and the held-out rows assigned to the nearest of those centres
after ``transform`` by each extension. Pairwise clustering accuracy
(:func:`lorak.metrics.pairwise_cluster_accuracy`) of the training rows and of the
held-out rows; "transductive": the held-out rows' accuracy when they are in the fit
(same constraints, no labels of theirs), the best an extension can hope for.

Usage: python bench/scripts/bench_npkl_extend.py [--quick] [--reps R]
(UCI sets from LORAK_DATA where the loader needs it.)
"""

from __future__ import annotations

import argparse

import numpy as np
from sklearn import datasets as skd
from sklearn.cluster import KMeans
from sklearn.model_selection import StratifiedShuffleSplit
from sklearn.preprocessing import StandardScaler

from lorak import Nystroem, SimpleNPKL
from lorak.constraints import from_labels
from lorak.datasets import load
from lorak.kernels import scale_gamma
from lorak.learn import RIDGE_EXTENSION_ALPHA, RIDGE_EXTENSION_LANDMARKS, ridge_map
from lorak.metrics import pairwise_cluster_accuracy as acc
from lorak_bench.timing import Stopwatch

LORAK_SETS = {
    "iris": {},
    "wine": {},
    "glass": {},
    "sonar": {},
    "chessboard": {"n_samples": 100, "random_state": 0},
    "double_spiral": {"n_samples": 100, "n_features": 3, "random_state": 0},
}
SKLEARN_SETS = {
    "sk-iris": skd.load_iris,
    "sk-wine": skd.load_wine,
    "sk-breast_cancer": skd.load_breast_cancer,
    "sk-digits": skd.load_digits,
}


def get(name):
    if name in SKLEARN_SETS:
        X, y = SKLEARN_SETS[name](return_X_y=True)
    else:
        X, y = load(name, **LORAK_SETS[name])
    return StandardScaler().fit_transform(np.asarray(X, dtype=np.float64)), np.asarray(y)


def ridge(X, V, test, **rbf):
    """extension="ridge" by hand, with the RBF parameters given."""
    n = X.shape[0]
    f = Nystroem(n_components=min(RIDGE_EXTENSION_LANDMARKS, n), random_state=0, **rbf)
    W = ridge_map(f.fit_transform(X), V, RIDGE_EXTENSION_ALPHA)
    return f.transform(test) @ W


def one(X, y, train, test, seed):
    k = len(np.unique(y))
    c = from_labels(y[train], ratio=0.7, random_state=seed)
    row = {}
    m = SimpleNPKL(extension="graph", random_state=seed).fit(X[train], **c)
    km = KMeans(k, n_init=10, random_state=seed).fit(m.embedding_)
    row["train"] = acc(y[train], km.labels_)
    row["graph"] = acc(y[test], km.predict(m.transform(X[test])))
    V = m.embedding_
    gamma = scale_gamma(X[train])  # what extension="ridge" uses
    row["ridge"] = acc(y[test], km.predict(ridge(X[train], V, X[test], gamma=gamma)))
    row["ridge_median"] = acc(y[test], km.predict(ridge(X[train], V, X[test], bandwidth="median")))
    # transductive reference: held-out rows in the fit, constraints only among train
    order = np.concatenate([train, test])
    m = SimpleNPKL(random_state=seed).fit(X[order], **c)
    km = KMeans(k, n_init=10, random_state=seed).fit(m.embedding_)
    row["transductive"] = acc(y[test], km.labels_[len(train) :])
    return row


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args(argv)
    names = ["iris", "sk-digits"] if args.quick else [*LORAK_SETS, *SKLEARN_SETS]
    reps = 1 if args.quick else args.reps
    cols = ("train", "graph", "ridge", "r-med", "transd")
    print(f"{'set':18s} {'n':>5s} " + " ".join(f"{c:>6s}" for c in cols) + "  s")
    for name in names:
        X, y = get(name)
        with Stopwatch() as sw:
            sss = StratifiedShuffleSplit(reps, test_size=0.3, random_state=0)
            rows = [one(X, y, tr, te, s) for s, (tr, te) in enumerate(sss.split(X, y))]
        mean = {key: 100 * np.mean([r[key] for r in rows]) for key in rows[0]}
        print(
            f"{name:18s} {len(y):5d} {mean['train']:6.1f} {mean['graph']:6.1f} "
            f"{mean['ridge']:6.1f} {mean['ridge_median']:6.1f} {mean['transductive']:6.1f}  "
            f"{sw.wall:.0f}",
            flush=True,
        )


if __name__ == "__main__":
    main()

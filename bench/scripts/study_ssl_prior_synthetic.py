"""The semi-supervised default's class prior on synthetic sets that chose nothing.

With enough labels (10 per class and more) ``SemiSupervisedFactorClassifier()`` measures
the class proportions from the unlabeled rows (``class_prior="auto"``) and reweights the
labeled classes by them. This script fits it beside the same model told to take the
labels as they came (``class_prior="labeled"``, what "auto" did before with enough
labels) and told the true proportions (``class_prior=`` the rows' own), on sets drawn
by scikit-learn's ``make_classification`` — none of them chose any rule of the default:
two, three, four and six classes, equal and unequal, one pair of classes a linear head
barely separates. 2,000 rows, 20 features, 100 labels spread evenly over the classes or
drawn at random (every class present), 5 draws each. Error (%) on the unlabeled rows;
no timings.

Usage: python bench/scripts/study_ssl_prior_synthetic.py OUT.json
"""

import sys
import warnings

import numpy as np
from sklearn.datasets import make_classification

from lorak import SemiSupervisedFactorClassifier
from lorak_bench.timing import Record

SETS = {
    "two 85/15": {"n_classes": 2, "weights": [0.85, 0.15], "class_sep": 1.0},
    "two 60/40": {"n_classes": 2, "weights": [0.6, 0.4], "class_sep": 0.8},
    "two 50/50, barely separable": {"n_classes": 2, "weights": None, "class_sep": 0.4},
    "four 55/25/15/5": {"n_classes": 4, "weights": [0.55, 0.25, 0.15, 0.05], "class_sep": 1.5},
    "three equal": {"n_classes": 3, "weights": None, "class_sep": 1.0},
    "six, halving": {"n_classes": 6, "weights": [32 / 63, 16 / 63, 8 / 63, 4 / 63, 2 / 63, 1 / 63],
                     "class_sep": 2.0},
}  # fmt: skip
LABELS, REPS = 100, 5


def draw(y, kind, seed):
    """``LABELS`` labeled rows: spread evenly over the classes, or at random with every
    class present."""
    rng = np.random.default_rng([seed, 99])
    c = int(y.max()) + 1
    if kind == "even":
        per = np.full(c, LABELS // c)
        per[rng.choice(c, LABELS - per.sum(), replace=False)] += 1
        pools = [np.flatnonzero(y == k) for k in range(c)]
        picks = [rng.choice(p, min(n, p.size), False) for p, n in zip(pools, per, strict=True)]
        return np.concatenate(picks)
    while True:
        rows = rng.choice(y.size, LABELS, replace=False)
        if np.unique(y[rows]).size == c:
            return rows


def errors(X, y, rows):
    """{column: error (%) on the unlabeled rows} for one draw."""
    ys = np.full(y.size, -1)
    ys[rows] = y[rows]
    unlabeled = ys == -1
    truth = np.bincount(y) / y.size
    out = {}
    for name, prior in (("default", "auto"), ("labeled", "labeled"), ("true-prior", truth)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf = SemiSupervisedFactorClassifier(class_prior=prior).fit(X, ys)
        out[name] = 100.0 * float(np.mean(clf.transduction_[unlabeled] != y[unlabeled]))
    return out


def main(argv):
    rec = Record(labels=LABELS, reps=REPS, sets={k: dict(v) for k, v in SETS.items()})
    cells = {}
    print("| set | draw | default | labels as they came | told the true prior |")
    print("|---|---|---|---|---|")
    for name, params in SETS.items():
        X, y = make_classification(n_samples=2000, n_features=20, n_informative=6,
                                   n_redundant=2, n_clusters_per_class=2, flip_y=0.02,
                                   random_state=7, **params)  # fmt: skip
        for kind in ("even", "random"):
            runs = [errors(X, y, draw(y, kind, seed)) for seed in range(REPS)]
            cell = {col: [r[col] for r in runs] for col in runs[0]}
            cells[f"{name} {kind}"] = cell
            means = " | ".join(f"{np.mean(cell[c]):.2f}" for c in cell)
            print(f"| {name} | {kind} | {means} |", flush=True)
    rec["errors"] = cells
    rec.write(argv[0])


if __name__ == "__main__":
    main(sys.argv[1:])

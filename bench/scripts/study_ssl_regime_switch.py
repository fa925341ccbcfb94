"""The semi-supervised default at its few-label switch: is there a step?

``SemiSupervisedFactorClassifier()`` has two regimes: its few-label rules (graph at
full strength or none by ρ, fixed rank and penalty, the self-trained head under a class
prior) and leave-one-out (γ, rank and penalty by leave-one-out, the head by
cross-validation). The counts pick one — leave-one-out once the smallest class has
``MIN_LABELS_PER_CLASS`` (10) labeled rows, or there are ``LEAVE_ONE_OUT_MIN_LABELED``
(30) labeled rows in all and two in every class — and, with three labeled rows or
more in two classes, a cross-validation of both regimes over the labeled rows can
overrule them (``REGIME_CV_FOLDS``, ``REGIME_TEST_LEVEL``). This script labels each set just
below and just at the counts' switch and fits the default three ways on the same rows:
as it decides ("natural"), with the few-label rules forced, and with leave-one-out
forced (``GraphRegularizedFactor(regime=...)``). The error of the
natural fit should not jump across the switch, and at either side the regime it takes
should not be far behind the other.

Sides: with 2 or 3 classes, 9 and 10 labeled rows per class (the per-class threshold
binds); with more, 29 and 30 rows at random with two or more in every class (the
total binds). The bench's sets and loaders (``lorak bench ssl``'s ``other`` sets and
the SSL book's Digit1, USPS, COIL2; the large sets cut to 3000 stratified rows), 5
draws each. Error (%) on the unlabeled rows.

With ``--cv`` a fourth fit is scored: the regime with fewer errors in a k-fold
cross-validation of the whole default over the labeled rows (k = min(3, the smallest
class's labeled rows), each fold's fit forced into each regime; a tie keeps the regime
the default takes) — a candidate for measuring the regime rather than setting it by
counts. ``--below`` labels only the side below the switch.

Usage: python bench/scripts/study_ssl_regime_switch.py OUT.json [--cv] [--below] [SET ...]
"""

import argparse
import sys
import warnings

import numpy as np

from lorak import GraphRegularizedFactor, SemiSupervisedFactorClassifier
from lorak.learn import LEAVE_ONE_OUT_MIN_LABELED, MIN_LABELS_PER_CLASS
from lorak_bench import load_dataset
from lorak_bench.experiments.ssl import BOOK_SETS, OTHER_SETS
from lorak_bench.timing import Record

REPS = 5
BOOK = ("Digit1", "USPS", "COIL2")
#: The regime each mode forces (``GraphRegularizedFactor(regime=...)``).
FORCED = {"natural": "auto", "few": "few_labels", "loo": "leave_one_out"}


def draw_each(y, per_class, rng):
    """Exactly ``per_class`` rows of every class, at random within the class."""
    picks = [rng.choice(np.flatnonzero(y == k), per_class, replace=False) for k in np.unique(y)]
    return np.sort(np.concatenate(picks))


def draw_two_each(y, n_labeled, rng, tries=1000):
    """``n_labeled`` rows at random, conditioned on two or more rows of every class."""
    classes = np.unique(y)
    for _ in range(tries):
        rows = rng.choice(y.size, n_labeled, replace=False)
        if np.bincount(np.searchsorted(classes, y[rows]), minlength=classes.size).min() >= 2:
            return np.sort(rows)
    raise ValueError(f"no draw of {n_labeled} rows holds two of each of {classes.size} classes")


def sides(y):
    """(name, draw(rng)) just below and at the switch for labels y."""
    c = np.unique(y).size
    if c * MIN_LABELS_PER_CLASS <= LEAVE_ONE_OUT_MIN_LABELED:
        k = MIN_LABELS_PER_CLASS
        return [(f"{j}/class", lambda rng, j=j: draw_each(y, j, rng)) for j in (k - 1, k)]
    total = LEAVE_ONE_OUT_MIN_LABELED
    return [(f"{t} rows", lambda rng, t=t: draw_two_each(y, t, rng)) for t in (total - 1, total)]


def fit_default(X, y, rows, mode):
    """(labels of every row, the regime taken) of the default fitted on ``rows``."""
    yu = np.full(y.size, -1, dtype=np.int64)
    yu[rows] = y[rows]
    factor = GraphRegularizedFactor(regime=FORCED[mode], random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = SemiSupervisedFactorClassifier(factor).fit(X, yu)
    return clf.transduction_, "few" if clf.few_labels_ else "loo"


def fit_error(X, y, rows, mode):
    """(error %, the regime the fit took) of the default on labeled ``rows``."""
    pred, taken = fit_default(X, y, rows, mode)
    mask = np.ones(y.size, dtype=bool)
    mask[rows] = False
    return 100.0 * float(np.mean(pred[mask] != y[mask])), taken


def cv_regime(X, y, rows, natural):
    """The regime with fewer errors on held-out labeled rows (k-fold, whole refits)."""
    from sklearn.model_selection import StratifiedKFold

    k = min(3, int(np.bincount(y[rows]).min()))
    errors = {"few": 0, "loo": 0}
    for train, test in StratifiedKFold(k, shuffle=True, random_state=0).split(rows, y[rows]):
        for mode in errors:
            pred, _ = fit_default(X, y, rows[train], mode)
            errors[mode] += int(np.count_nonzero(pred[rows[test]] != y[rows[test]]))
    return natural if errors["few"] == errors["loo"] else min(errors, key=errors.get)


def study_set(spec, cv=False, below=False):
    data = load_dataset(spec)
    y = np.unique(np.asarray(data.y), return_inverse=True)[1]
    out = {}
    for side, draw in sides(y)[: 1 if below else 2]:
        cell = {"natural": [], "few": [], "loo": [], "taken": []} | ({"cv": []} if cv else {})
        for rep in range(REPS):
            rows = draw(np.random.default_rng([rep, 23]))
            for mode in ("natural", "few", "loo"):
                err, taken = fit_error(data.X, y, rows, mode)
                cell[mode].append(err)
                if mode == "natural":
                    cell["taken"].append(taken)
            if cv:
                cell["cv"].append(cell[cv_regime(data.X, y, rows, cell["taken"][-1])][-1])
        out[side] = cell
    return out


def main(argv):
    ap = argparse.ArgumentParser(description="The default at its few-label switch.")
    ap.add_argument("out")
    ap.add_argument("sets", nargs="*", help="set labels (default: every other set + book)")
    ap.add_argument("--cv", action="store_true", help="add the regime chosen by k-fold CV")
    ap.add_argument("--below", action="store_true", help="only the side below the switch")
    args = ap.parse_args(argv)
    pool = OTHER_SETS + BOOK_SETS
    specs = (
        [s for s in pool if s.display in args.sets]
        if args.sets
        else [
            *OTHER_SETS,
            *(s for s in BOOK_SETS if s.display in BOOK),
        ]
    )
    cols = ("natural", "few", "loo", *(("cv",) if args.cv else ()))
    rec = Record(reps=REPS, cv=args.cv, below=args.below, sets={})
    print(
        "| set | side | regime taken | natural | few-label rules | leave-one-out |"
        + (" chosen by CV |" if args.cv else "")
    )
    print("|---" * (len(cols) + 3) + "|")
    for spec in specs:
        rec["sets"][spec.display] = res = study_set(spec, args.cv, args.below)
        for side, cell in res.items():
            taken = "/".join(sorted(set(cell["taken"])))
            means = " | ".join(f"{np.mean(cell[k]):.2f}" for k in cols)
            print(f"| {spec.display} | {side} | {taken} | {means} |", flush=True)
        rec.write(args.out)


if __name__ == "__main__":
    main(sys.argv[1:])

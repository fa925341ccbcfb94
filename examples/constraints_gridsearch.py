"""Grid search over a constraint-learned kernel (SimpleNPKL in a scikit-learn pipeline).
======================================================================================

Must-link / cannot-link pairs, drawn from the labels of the wine data (scikit-learn's
copy) as lorak's ``must_link`` / ``cannot_link`` (or converted from metric-learn's
``pairs``/``y`` format with :func:`lorak.constraints.from_pairs`), pass through a
``Pipeline`` (scaling → SimpleNPKL → k-means) and ``GridSearchCV`` by scikit-learn's
metadata routing. The pairs index the full data set; ``sample_index`` (one id per row)
is split with X, so each fold's SimpleNPKL keeps the pairs inside its training rows.
The held-out rows reach the learned kernel through SimpleNPKL's out-of-sample
extension (``transform``), and the folds are scored by the pairwise clustering accuracy
of the held-out rows against their labels, which no fit has seen.

    python examples/constraints_gridsearch.py [--quick]
"""

import argparse
import os
import warnings

import numpy as np
import sklearn
from sklearn.cluster import KMeans
from sklearn.datasets import load_wine
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from lorak import SimpleNPKL
from lorak.constraints import from_labels, from_pairs, to_pairs
from lorak.metrics import pairwise_cluster_accuracy


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    p.add_argument(
        "--quick",
        action="store_true",
        default=os.environ.get("LORAK_EXAMPLES_QUICK") == "1",
        help="small grid (seconds); also LORAK_EXAMPLES_QUICK=1",
    )
    return p.parse_args(argv)


def held_out_accuracy(estimator, X, y):
    """Scorer: pairwise clustering accuracy of the held-out rows' cluster labels."""
    return pairwise_cluster_accuracy(y, estimator.predict(X))


def main(argv=None):
    args = parse_args(argv)
    X, y = load_wine(return_X_y=True)
    n_classes = len(np.unique(y))
    # the side information, here from labels; metric-learn users would have pairs/y
    pairs, pair_y = to_pairs(*from_labels(y, ratio=0.7, random_state=0))
    constraints = from_pairs(pairs, pair_y, n_samples=len(X))
    print(
        f"wine: {len(X)} rows, {len(constraints.must_link)} must-links, "
        f"{len(constraints.cannot_link)} cannot-links"
    )

    grid = {"npkl__n_neighbors": [5, 10] if args.quick else [3, 5, 10, 20]}
    if not args.quick:
        grid["npkl__C"] = ["auto", 0.1, 0.3]
    with sklearn.config_context(enable_metadata_routing=True):
        npkl = SimpleNPKL(random_state=0).set_fit_request(
            must_link=True, cannot_link=True, sample_index=True
        )
        pipe = Pipeline(
            [
                ("scale", StandardScaler()),
                ("npkl", npkl),
                ("kmeans", KMeans(n_classes, n_init=10, random_state=0)),
            ]
        )
        search = GridSearchCV(
            pipe,
            grid,
            scoring=held_out_accuracy,
            cv=StratifiedKFold(3, shuffle=True, random_state=0),
        )
        with warnings.catch_warnings():
            # a fold with few constraints may flag a degenerate kernel; it scores lower
            warnings.simplefilter("ignore")
            search.fit(
                X,
                y,  # used by the scorer only (held-out rows), never by a fit
                must_link=constraints.must_link,
                cannot_link=constraints.cannot_link,
                sample_index=np.arange(len(X)),
            )
    for params, mean, std in zip(
        search.cv_results_["params"],
        search.cv_results_["mean_test_score"],
        search.cv_results_["std_test_score"],
        strict=True,
    ):
        if np.isnan(mean):  # e.g. a C too small for the graph: the kernel is zero
            print(f"  {params}: a fit failed")
        else:
            print(f"  {params}: held-out pairwise accuracy {100 * mean:.1f} ± {100 * std:.1f} %")
    print(f"best: {search.best_params_}, {100 * search.best_score_:.1f} %")
    return search


if __name__ == "__main__":
    main()

"""Quickstart: a low-rank kernel factor, its error, and models on top of it.
=========================================================================

A factor G (n × m) with G Gᵀ ≈ K is a scikit-learn transformer: ``transform`` gives the
rows of G for any X, so every downstream model takes it — here an LS-SVM classifier
and kernel PCA on the handwritten digits that ship with scikit-learn.

    python examples/quickstart.py [--quick] [--plot error_vs_rank.png]
"""

import argparse
import os

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import MinMaxScaler

from lorak import LSSVC, IncompleteCholesky, LowRankKernelPCA, Nystroem
from lorak.metrics import frobenius_error


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
    X, y = load_digits(return_X_y=True)
    if args.quick:
        X, y = X[:500], y[:500]
    X = MinMaxScaler().fit_transform(X)
    ranks = [10, 25, 50] if args.quick else [10, 25, 50, 100, 200]

    # 1. approximation error ‖K − GGᵀ‖_F / ‖K‖_F of three factors at several ranks
    errors = {"uniform": [], "kmeans": [], "icd": []}
    for m in ranks:
        for landmarks in ("uniform", "kmeans"):
            ny = Nystroem(kernel="gaussian", n_components=m, landmarks=landmarks, random_state=0)
            G = ny.fit_transform(X)
            errors[landmarks].append(frobenius_error(ny.kernel_, X, G, relative=True))
        icd = IncompleteCholesky(kernel="gaussian", n_components=m)
        G = icd.fit_transform(X)
        errors["icd"].append(frobenius_error(icd.kernel_, X, G, relative=True))
    print("relative error ‖K − GGᵀ‖_F/‖K‖_F")
    print("rank  " + "  ".join(f"{k:>8}" for k in errors))
    for i, m in enumerate(ranks):
        print(f"{m:4d}  " + "  ".join(f"{errors[k][i]:8.4f}" for k in errors))

    # 2. an LS-SVM on the factor: fit and predict in O(m² n)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    m = ranks[-1]
    clf = LSSVC(
        Nystroem(kernel="gaussian", n_components=m, landmarks="kmeans", random_state=0), C=10.0
    )
    clf.fit(X_tr, y_tr)
    print(
        f"\nLS-SVM on a rank-{m} k-means Nyström factor: test accuracy {clf.score(X_te, y_te):.3f}"
    )

    # 3. kernel PCA on the same kind of factor
    kpca = LowRankKernelPCA(
        n_components=2,
        factor=Nystroem(kernel="gaussian", n_components=m, random_state=0),
    )
    Z = kpca.fit_transform(X)
    print(f"kernel PCA: {Z.shape[0]} rows → 2 components, variance of each {np.var(Z, 0)}")

    if args.plot:
        from lorak import plot

        ax = None
        for name, errs in errors.items():
            ax = plot.error_vs_rank(
                ranks, errs, label=name, ax=ax, logy=True, ylabel="relative Frobenius error"
            )
        ax.figure.savefig(args.plot, dpi=110)
        print(f"figure written to {args.plot}")
    return errors


if __name__ == "__main__":
    main()

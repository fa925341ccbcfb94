"""Many kernels at once: ℓp-norm MKL on low-rank base kernels, and learned weights.
================================================================================

``LowRankMKLClassifier`` learns an SVM on Σ_k d_k K_k over a bank of Gaussian kernels
of different widths, each K_k a Nyström factor on shared landmarks (nothing n × n);
p = 1 gives sparse weights, p = 2 smooth ones. When the multiple-kernel
transformers are installed (``lorak.ABMKL``, alignment-based weights, and a
multiple-kernel generalized Nyström), their ``weights_`` are printed too.
Data: scikit-learn's breast-cancer set, scaled to [0, 1].

    python examples/many_kernels.py [--quick] [--plot weights.png]
"""

import argparse
import os
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import MinMaxScaler

import lorak
from lorak import LowRankMKLClassifier
from lorak.estimators import default_bank


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


def _multiple_kernel_transformers():
    """The multiple-kernel factor learners this lorak has (newer versions add some)."""
    found = []
    for name in ("ABMKL", "MultipleKernelGeneralizedNystroem", "MKGeneralizedNystroem"):
        cls = getattr(lorak, name, None)
        if cls is not None:
            found.append((name, cls))
    return found


def main(argv=None):
    args = parse_args(argv)
    X, y = load_breast_cancer(return_X_y=True)
    X = MinMaxScaler().fit_transform(X)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    n_kernels, rank = (8, 20) if args.quick else (20, 50)
    bank = default_bank(n_kernels, sigma_range=(0.1, 10.0))

    weights = {}
    for p in (1.0, 2.0):
        # blas_threads=1: the solver's matrix-vector products are memory bound, and one
        # BLAS thread was measured much faster than several on a busy machine
        clf = LowRankMKLClassifier(
            bank, rank=rank, p=p, C=10.0, max_iter=20, blas_threads=1, random_state=0
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(X_tr, y_tr)
        weights[f"ℓp-MKL, p = {p:g}"] = clf
        d = clf.kernel_weights_
        print(
            f"p = {p:g}: test accuracy {clf.score(X_te, y_te):.3f}; "
            f"{np.count_nonzero(d > 1e-3)} of {d.size} kernels with weight > 1e-3"
        )

    for name, cls in _multiple_kernel_transformers():
        est = cls(bank, n_components=rank, random_state=0)
        if args.quick and "lam_grid" in est.get_params():
            est.set_params(lam_grid=[1e-2, 1.0, 1e2])  # a coarser λ search
        # these learners are semi-supervised: keep 10 labels per class, mark the rest -1
        keep = np.concatenate([np.flatnonzero(y_tr == c)[:10] for c in np.unique(y_tr)])
        y_semi = np.full_like(y_tr, -1)
        y_semi[keep] = y_tr[keep]
        est.fit(X_tr, y_semi)
        weights[name] = est
        print(f"{name}: weights {np.round(est.weights_, 3)}")

    if args.plot:
        import matplotlib.pyplot as plt

        from lorak import plot

        fig, ax = plt.subplots(figsize=(6, 4), layout="constrained")
        for name, est in weights.items():
            w = getattr(est, "kernel_weights_", None)
            w = est.weights_ if w is None else w
            # the learners scale their weights differently: shown summing to 1
            plot.kernel_weights(w / w.sum(), kernels=bank, ax=ax, label=name)
        ax.set_ylabel("weight (normalized to sum 1)")
        fig.savefig(args.plot, dpi=110)
        print(f"figure written to {args.plot}")
    return weights


if __name__ == "__main__":
    main()

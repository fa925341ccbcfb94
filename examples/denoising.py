"""Denoising digits with pre-images of low-rank kernel PCA.
=========================================================

Kernel PCA on a Nyström factor keeps the leading directions of the digits in feature
space; noise spreads over all the others. Projecting a noisy digit onto the leading
components and mapping the scores back to pixels (``inverse_transform``: kernel ridge
regression from scores to rows, learnt with ``fit_inverse_transform=True``) gives a
pre-image close to the clean digit. Linear PCA with the same number of components is
the baseline.

    python examples/denoising.py [--quick] [--plot denoised.png]
"""

import argparse
import os

import numpy as np
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA

from lorak import LowRankKernelPCA, Nystroem


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
    X = load_digits().data / 16.0
    rng = np.random.default_rng(0)
    X = X[rng.permutation(X.shape[0])]
    n_train = 800 if args.quick else 1400
    train, test = X[:n_train], X[n_train : n_train + (200 if args.quick else 397)]
    sigma = 0.25
    noisy = test + sigma * rng.standard_normal(test.shape)
    m, k = (120, 32) if args.quick else (300, 32)

    # kernel PCA on a rank-m k-means Nyström factor; pre-images by kernel ridge regression
    kpca = LowRankKernelPCA(
        Nystroem(n_components=m, landmarks="kmeans", random_state=0),
        n_components=k,
        fit_inverse_transform=True,
        alpha=1e-3,
        random_state=0,
    ).fit(train)
    denoised = kpca.inverse_transform(kpca.transform(noisy))
    pca = PCA(n_components=k, random_state=0).fit(train)
    linear = pca.inverse_transform(pca.transform(noisy))

    def rmse(A):
        return float(np.sqrt(np.mean((A - test) ** 2)))

    errors = {"noisy": rmse(noisy), "linear PCA": rmse(linear), "kernel PCA": rmse(denoised)}
    print(f"{test.shape[0]} held-out digits, Gaussian noise σ = {sigma}; RMSE to the clean digits")
    for name, e in errors.items():
        print(f"  {name:<11} {e:.4f}")

    if args.plot:
        import matplotlib.pyplot as plt

        rows = {"noisy": noisy, "denoised (kernel PCA)": denoised, "clean": test}
        fig, axes = plt.subplots(3, 10, figsize=(8, 2.8))
        for i, (title, A) in enumerate(rows.items()):
            for j in range(10):
                ax = axes[i, j]
                ax.imshow(A[j].reshape(8, 8), cmap="gray_r", vmin=0, vmax=1)
                ax.set_xticks([])
                ax.set_yticks([])
            axes[i, 0].set_ylabel(title, rotation=0, ha="right", va="center", fontsize=8)
        fig.suptitle(f"pre-images of rank-{m} Nyström kernel PCA ({k} components)", fontsize=9)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)
        print(f"figure written to {args.plot}")
    return errors


if __name__ == "__main__":
    main()

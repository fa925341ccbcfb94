"""Small generalized Nyström blocks shared by the tests of lorak.learn._gen_nystrom."""

import numpy as np

from lorak.kernels import Gaussian


def gn_blocks(seed=0, n=80, d=4, m=14, l=12, classes=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = rng.integers(0, classes, n)
    y[:classes] = np.arange(classes)  # every class labeled
    kern = Gaussian(bandwidth="mean_pairwise").resolve(X)
    Z = X[rng.choice(n, m, replace=False)] + 0.05 * rng.standard_normal((m, d))
    lab = np.arange(l)
    return kern(X[lab], Z), kern(Z, Z), y[lab], kern, X, Z, y

"""Dataset preprocessing steps for :attr:`lorak_bench.DatasetSpec.preprocess`.

A step is ``f(data: LoadedData) -> LoadedData``; it sets ``data.meta["preprocessing"]``
so that the report says what was done.
"""

from __future__ import annotations

import numpy as np

__all__ = ["dense", "minmax_scale", "split_indices", "standardize"]


def dense(X) -> np.ndarray:
    """``X`` as a dense float64 array (sparse matrices expanded)."""
    X = X.toarray() if hasattr(X, "toarray") else X
    return np.asarray(X, dtype=np.float64)


_dense = dense


def split_indices(n: int, seed: int, test_size: float = 0.3):
    """A random train/test split of range(n): ``(train, test)``, each sorted, the test
    part ``round(test_size · n)`` rows (the same for every method of a repetition)."""
    perm = np.random.default_rng(seed).permutation(n)
    n_test = round(test_size * n)
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


def _note(data, text):
    prev = data.meta.get("preprocessing")
    data.meta["preprocessing"] = f"{prev}; {text}" if prev else text


def minmax_scale(data, lower: float = -1.0, upper: float = 1.0):
    """Scale every feature to [lower, upper] by the training rows' min and max.

    LIBSVM's ``svm-scale`` default, i.e. how the archive's ``*.scale`` files were made.
    Constant features map to the midpoint (0 for [-1, 1]). The test split, if any, uses
    the training min and max. Sparse X is densified.
    """
    X = _dense(data.X)
    lo = X.min(axis=0)
    hi = X.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    mid = 0.5 * (lower + upper)

    def apply(A):
        out = lower + (upper - lower) * (A - lo) / span
        out[:, hi <= lo] = mid
        return out

    data.X = apply(X)
    if data.X_test is not None:
        data.X_test = apply(_dense(data.X_test))
    _note(data, f"min-max scaled to [{lower:g}, {upper:g}] per feature (svm-scale)")
    return data


def standardize(data):
    """Zero mean and unit variance per feature (training statistics; constant → 0)."""
    X = _dense(data.X)
    mu = X.mean(axis=0)
    X = X - mu
    sd = X.std(axis=0)  # of the centered columns (two passes: no cancellation)
    sd = np.where(sd > 0, sd, 1.0)
    data.X = X / sd
    if data.X_test is not None:
        data.X_test = (_dense(data.X_test) - mu) / sd
    _note(data, "standardized per feature")
    return data

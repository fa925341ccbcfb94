"""Pairwise cluster accuracy (the SimpleNPKL paper's clustering score, the Rand index).

O(n + k_c k_ĉ) from the contingency table (:ref:`guide-downstream`, "Kernel k-means").
"""

from __future__ import annotations

import numpy as np

__all__ = ["pairwise_cluster_accuracy"]


def _codes(labels, name):
    """Labels as integer codes 0..k−1 (O(n) for small non-negative ints), and k."""
    a = np.asarray(labels)
    if a.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got shape {a.shape}")
    if a.dtype.kind in "fc" and not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or infinity; give a cluster label per point")
    if a.dtype.kind in "iub" and a.size:
        lo, hi = int(a.min()), int(a.max())
        if lo >= 0 and hi < 2 * a.size + 16:
            return a.astype(np.int64, copy=False), hi + 1
    _, codes = np.unique(a, return_inverse=True)
    codes = codes.ravel().astype(np.int64, copy=False)
    return codes, int(codes.max()) + 1 if codes.size else 0


def _pairs_within(counts: np.ndarray) -> int:
    counts = counts.astype(np.int64, copy=False)
    return int(np.sum(counts * (counts - 1)) // 2)


def pairwise_cluster_accuracy(labels_true, labels_pred) -> float:
    """Fraction of point pairs on which two partitions agree (Zhuang et al. 2009).

    Parameters
    ----------
    labels_true, labels_pred : (n,) array-likes of cluster labels (any hashable dtype).

    Returns
    -------
    float in [0, 1]; 1.0 for a single point (there is no pair to disagree on), as
    :func:`sklearn.metrics.rand_score` does. Equal to the Rand index. Empty labels, or
    NaN labels, raise ``ValueError``.
    """
    ct, kt = _codes(labels_true, "labels_true")
    cp, kp = _codes(labels_pred, "labels_pred")
    n = ct.shape[0]
    if cp.shape[0] != n:
        raise ValueError(f"labels_pred has {cp.shape[0]} entries but labels_true has {n}")
    if n == 0:
        raise ValueError("labels_true and labels_pred are empty: there is no point to compare")
    if n < 2:
        return 1.0
    if kt * kp <= max(4 * n, 1 << 16):
        joint = np.bincount(ct * kp + cp, minlength=kt * kp)
    else:  # many clusters: only the occupied cells, O(n log n) and O(n) memory
        _, joint = np.unique(ct * kp + cp, return_counts=True)
    S = _pairs_within(joint)
    A = _pairs_within(np.bincount(ct, minlength=kt))
    B = _pairs_within(np.bincount(cp, minlength=kp))
    P = n * (n - 1) // 2
    return float(P + 2 * S - A - B) / float(P)

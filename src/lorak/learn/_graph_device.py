"""The anchor graph's passes over the rows on an array API device (PyTorch, CuPy, …).

The same statistics as :func:`lorak.learn.anchor_laplacian_gram` and
:func:`lorak.learn.anchor_bandwidth`, computed where the rows live. A device has no
portable sparse scatter, so each chunk's rows of Z are built dense (chunk × a) and
Zᵀ G, Σᵢ Zᵢⱼ and, for p = 2, G − Z B are matrix products; the m × m and a × m
reductions are accumulated in float64 where the device has it and come back to the
host as NumPy arrays. The ties and the precision: the user guide, "On the GPU: array
API inputs", section "What runs on the device".
"""

from __future__ import annotations

import numpy as np

from .._core.array_api import array_namespace, compat, device_of, has_float64, on_device, to_numpy
from .._core.config import get_config

__all__ = ["device_anchor_bandwidth", "device_anchor_laplacian_gram", "device_rows"]


def device_rows(n_rows: int, width: int, itemsize: int) -> int:
    """Rows per chunk so that a few chunk × ``width`` blocks fit the memory budget."""
    budget = int(get_config()["memory_budget"])
    return int(max(1, min(n_rows, max(256, budget // (4 * itemsize * max(width, 1))))))


def _sq_dist(xp, Xb, A, a_sq, center):
    """Squared distances of the rows to the anchors, both taken relative to ``center``
    (A and a_sq are already; the rows are shifted here), so that a common offset of the
    data cancels exactly rather than in ‖x‖² − 2⟨x, u⟩ + ‖u‖²."""
    Xb = Xb - center
    D = xp.sum(Xb * Xb, axis=1)[:, None] + a_sq[None, :] - 2.0 * (Xb @ A.T)
    return xp.maximum(D, xp.zeros((), dtype=D.dtype, device=device_of(D)))


def _smallest(xp, D, s):
    """The s smallest entries of each row of D, ascending (b × s)."""
    if compat.is_torch_namespace(xp):
        import torch

        return torch.topk(D, s, dim=1, largest=False, sorted=True).values
    return xp.sort(D, axis=1)[:, :s]


def _z_rows(xp, Xb, A, a_sq, center, s, sigma2):
    """The anchor graph's rows of a chunk, dense (b × a), each row on the simplex."""
    D = _sq_dist(xp, Xb, A, a_sq, center)
    v = _smallest(xp, D, s)
    zero = xp.zeros((), dtype=D.dtype, device=device_of(D))
    # shifted by the nearest distance: the same weights after normalization, no underflow
    W = xp.where(D <= v[:, s - 1 : s], xp.exp(-(D - v[:, :1]) / sigma2), zero)
    return W / xp.sum(W, axis=1, keepdims=True)


def _anchors_like(X, anchors):
    """(namespace, the anchors less their mean, their squared norms, the mean)."""
    xp = array_namespace(X)
    A = xp.astype(anchors, X.dtype)
    center = xp.mean(A, axis=0)
    A = A - center
    return xp, A, xp.sum(A * A, axis=1), center


def device_anchor_bandwidth(X, anchors, n_neighbors: int) -> float:
    """σ² of the kernel weights, on X's device: the mean over rows of the squared
    distance to the ``n_neighbors``-th nearest anchor."""
    xp, A, a_sq, center = _anchors_like(X, anchors)
    n = X.shape[0]
    step = device_rows(n, A.shape[0], 8)
    total = 0.0
    for i in range(0, n, step):
        D = _sq_dist(xp, X[i : min(i + step, n), :], A, a_sq, center)
        total += float(xp.sum(_smallest(xp, D, n_neighbors)[:, -1]))
    sigma2 = total / max(n, 1)
    if not np.isfinite(sigma2):
        raise ValueError(
            "the anchor graph's bandwidth is not finite (the squared distances overflow); rescale X"
        )
    return float(sigma2) if sigma2 > 0 else 1.0


def device_anchor_laplacian_gram(X, transform, anchors, n_neighbors, sigma2, power=1):
    """(GᵀG, GᵀLᵖG, Λ) as host float64 arrays, for G = transform(X) computed by row
    chunks on X's device and the anchor graph's L = I − ZΛ⁻¹Zᵀ (kernel weights).

    Anchors that no row chose (Λ_jj = 0) carry no edge and are dropped, as on the host.
    """
    xp, A, a_sq, center = _anchors_like(X, anchors)
    dev = device_of(X)
    wide = xp.float64 if has_float64(xp, dev) else xp.float32
    n, a = X.shape[0], A.shape[0]
    step = device_rows(n, a + X.shape[1], 8)
    GtG = ZtG = lam = None
    for i in range(0, n, step):
        Xb = X[i : min(i + step, n), :]
        G = xp.astype(transform(Xb), wide)
        Z = xp.astype(_z_rows(xp, Xb, A, a_sq, center, n_neighbors, sigma2), wide)
        parts = (G.T @ G, Z.T @ G, xp.sum(Z, axis=0))
        if GtG is None:
            GtG, ZtG, lam = parts
        else:
            GtG, ZtG, lam = GtG + parts[0], ZtG + parts[1], lam + parts[2]
    lam_h = to_numpy(lam).astype(np.float64)
    used = lam_h > 0
    ZtG_h = to_numpy(ZtG).astype(np.float64)
    B = np.zeros_like(ZtG_h)
    B[used] = ZtG_h[used] / lam_h[used, None]
    GtG_h = to_numpy(GtG).astype(np.float64)
    if power == 1:
        H = GtG_h - ZtG_h[used].T @ B[used]
    else:
        Bd = on_device(B, xp, dev, wide)
        H = None
        for i in range(0, n, step):
            Xb = X[i : min(i + step, n), :]
            G = xp.astype(transform(Xb), wide)
            Z = xp.astype(_z_rows(xp, Xb, A, a_sq, center, n_neighbors, sigma2), wide)
            LG = G - Z @ Bd
            part = LG.T @ LG
            H = part if H is None else H + part
        H = to_numpy(H).astype(np.float64)
    return GtG_h, 0.5 * (H + H.T), lam_h

"""Nyström normalization: K ≈ E W⁺ Eᵀ written as a factor G = E N.

N from the eigenpairs of D W D above rtol · λ_max, or from a Cholesky factor when W is
well conditioned (the same G Gᵀ): :ref:`guide-nystrom-normalization`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import LinAlgError, cholesky, eigh
from scipy.linalg.lapack import dpocon, dtrtri

from .._core.linalg import spectral_keep

__all__ = [
    "NystromNormalization",
    "default_rtol",
    "device_nystrom_normalization",
    "nystrom_normalization",
]


def default_rtol(dtype) -> float:
    """Relative eigenvalue cut-off for W: 1e-10 in float64, 1e-6 in float32.

    In float32 the entries of E carry ~1e-7 relative error, which λ^{-1/2} would amplify
    beyond use for eigenvalues below ~1e-6 λ_max.
    """
    return 1e-6 if np.dtype(dtype) == np.float32 else 1e-10


@dataclass
class NystromNormalization:
    """N (m × r) with G = k(X, Z) N; ``upper_triangular`` when N came from Cholesky."""

    N: np.ndarray
    rank: int
    upper_triangular: bool
    eigenvalues: np.ndarray | None  # kept eigenvalues (eigen path only), decreasing


_POCON_MARGIN = 4.0


def _weighted_record(N, w, rank, upper, lam, dtype) -> NystromNormalization:
    """The record of N, its rows scaled by the landmark weights w (when given), in ``dtype``."""
    if w is not None:
        N *= w[:, None]
    return NystromNormalization(np.ascontiguousarray(N, dtype=dtype), rank, upper, lam)


def _cholesky_path(W, rtol):
    try:
        L = cholesky(W, lower=True, check_finite=False)
    except LinAlgError:
        return None
    anorm = float(np.abs(W).sum(axis=0).max())
    rcond, info = dpocon(L, anorm, uplo="L")
    # the estimate of ‖W⁻¹‖₁ is a lower bound (rarely off by more than a small factor):
    # a margin of 4 keeps every eigenvalue the Cholesky path inverts above rtol·λ_max
    if info != 0 or not rcond > _POCON_MARGIN * rtol:
        return None
    # L⁻¹ in place (LAPACK trtri: m³/3 flops, a third of a solve against the identity)
    Linv, info = dtrtri(L, lower=1, overwrite_c=1)
    if info != 0:  # pragma: no cover - a Cholesky factor that passed pocon is invertible
        return None
    return np.triu(Linv.T)


def _check_finite_w(W):
    if not np.all(np.isfinite(W)):
        bad = np.argwhere(~np.isfinite(W))[0]
        i, j = int(bad[0]), int(bad[1])
        raise ValueError(
            f"the landmark kernel matrix W holds NaN or infinity (first at W[{i}, {j}] = "
            f"{W[i, j]!r}): the kernel is not finite on the landmarks; check its parameters "
            "(a polynomial of high degree overflows) and the data"
        )


def _magnitude_normalization(lam, U, w, rtol, dtype) -> NystromNormalization:
    """N = U |Λ|^{-1/2} over |λ| > rtol·max|λ|, in decreasing |λ| (indefinite W; W = 0
    gives rank 0)."""
    order = np.argsort(-np.abs(lam), kind="stable")
    lam, U = lam[order], U[:, order]
    mag = np.abs(lam)
    # W = 0 (one landmark of a kernel that is 0 on the diagonal, as additive χ²): W⁺ = 0,
    # a factor of rank 0, as before for these kernels
    keep = mag > rtol * mag[0] if mag.size else np.zeros(0, dtype=bool)
    return _weighted_record(
        U[:, keep] / np.sqrt(mag[keep]), w, int(keep.sum()), False, lam[keep], dtype
    )


def nystrom_normalization(
    W, *, weights=None, rtol=None, dtype=np.float64, method="auto", psd=True
) -> NystromNormalization:
    """Normalization N with G = k(X, Z) N and G Gᵀ = E D (D W D)⁺ D Eᵀ.

    Parameters
    ----------
    W : (m, m) array, the landmark kernel (symmetric PSD up to round-off).
    weights : (m,) array or None, column weights of the reconstruction.
    rtol : float or None, eigenvalues ≤ rtol·λ_max are dropped (None: :func:`default_rtol`).
    dtype : dtype of the returned N.
    method : ``"auto"`` (Cholesky when well conditioned, else eigen) or ``"eigh"``.
    psd : bool, default=True. False where the kernel may be indefinite: a clearly
        indefinite W then enters by the magnitudes of its eigenvalues, as in
        scikit-learn (see :ref:`guide-nystrom-normalization`).

    Raises ``ValueError`` when W holds NaN or infinity.
    """
    W = np.asarray(W, dtype=np.float64)
    _check_finite_w(W)
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    if w is not None:
        W = W * w[:, None] * w[None, :]
    W = 0.5 * (W + W.T)
    rtol = default_rtol(dtype) if rtol is None else rtol
    if method == "auto":
        N = _cholesky_path(W, rtol)
        if N is not None:
            return _weighted_record(N, w, W.shape[0], True, None, dtype)
    elif method != "eigh":
        raise ValueError(f"unknown method {method!r}; valid names are 'auto', 'eigh'")
    lam, U = eigh(W, driver="evd", check_finite=False)
    lam = lam[::-1]
    U = U[:, ::-1]
    if not psd and lam.size:
        big = float(np.max(np.abs(lam)))
        if big == 0 or -float(lam[-1]) > np.sqrt(np.finfo(np.dtype(dtype)).eps) * big:
            return _magnitude_normalization(lam, U, w, rtol, dtype)
    top = lam[0] if lam.size else 0.0
    if not top > 0:
        raise ValueError(
            "the landmark kernel matrix W has no positive eigenvalue; the kernel is zero "
            "on the landmarks"
        )
    keep = spectral_keep(lam, rtol)
    return _weighted_record(
        U[:, keep] / np.sqrt(lam[keep]), w, int(keep.sum()), False, lam[keep], dtype
    )


def device_nystrom_normalization(W, *, weights=None, rtol=None, dtype, psd=True):
    """:func:`nystrom_normalization` of an array API W (a torch tensor, …) on its device.

    The Cholesky path runs in W's namespace, with the host's condition test computed
    from the exact ‖W⁻¹‖₁ (at least as strict); everything else (weights, a W that
    fails the test, an indefinite kernel, a W that is not finite) goes to the host path
    on a float64 copy of W (:ref:`guide-gpu`, section "Host fallbacks"). ``dtype`` is
    the dtype of N in W's namespace; the returned N is on W's device.
    """
    from .._core.array_api import (
        array_namespace,
        device_of,
        numpy_dtype,
        on_device,
        solve_triangular,
        to_numpy,
    )

    xp = array_namespace(W)
    dev = device_of(W)
    np_dtype = numpy_dtype(xp, dtype)
    rtol = default_rtol(np_dtype) if rtol is None else rtol
    m = W.shape[0]
    if weights is None and psd and m and bool(xp.all(xp.isfinite(W))):
        Ws = 0.5 * (W + W.T)
        try:
            L = xp.linalg.cholesky(Ws)
        except Exception:  # not positive definite (CuPy gives NaN instead: below)
            L = None
        if L is not None and bool(xp.all(xp.isfinite(L))):
            Linv = solve_triangular(xp, L, xp.eye(m, dtype=Ws.dtype, device=dev), lower=True)
            anorm = float(xp.max(xp.sum(xp.abs(Ws), axis=0)))
            inv_norm = float(xp.max(xp.sum(xp.abs(Linv.T @ Linv), axis=0)))
            if anorm > 0 and inv_norm > 0 and 1.0 / (anorm * inv_norm) > _POCON_MARGIN * rtol:
                N = xp.astype(xp.triu(Linv.T), dtype)
                return NystromNormalization(N, m, True, None)
    norm = nystrom_normalization(to_numpy(W), weights=weights, rtol=rtol, dtype=np_dtype, psd=psd)
    lam = norm.eigenvalues
    return NystromNormalization(
        on_device(norm.N, xp, dev, dtype), norm.rank, norm.upper_triangular, lam
    )

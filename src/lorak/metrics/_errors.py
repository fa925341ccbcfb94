"""Errors of a low-rank approximation K ≈ G Gᵀ, streamed over row chunks of K."""

from __future__ import annotations

import numpy as np

from ..kernels import iter_kernel_blocks

__all__ = ["approximation_error", "frobenius_error", "trace_error"]


def _check_kernel(kernel):
    if not getattr(kernel, "is_resolved", True):
        raise ValueError(
            f"kernel {kernel!r} has a bandwidth rule that needs data; pass "
            "kernel.resolve(X) (the estimator's kernel_ is resolved already)"
        )


def _relative(err, ref, what):
    if not ref > 0:
        raise ValueError(
            f"relative {what} error is undefined: the kernel matrix K is zero on X "
            f"({what} norm of K = {ref!r}); use relative=False"
        )
    return err / ref


def _check_factor(X, G):
    G = np.asarray(G)
    if G.ndim != 2 or G.shape[0] != X.shape[0]:
        raise ValueError(
            f"G must be 2-D with one row per row of X ({X.shape[0]}); got shape {G.shape}"
        )
    if G.dtype.kind not in "biuf" or not np.all(np.isfinite(G)):
        raise ValueError("G must be numeric and finite (it contains NaN, inf or non-numbers)")
    return G


def frobenius_error(kernel, X, G, *, relative=False, budget=None) -> float:
    """‖K − G Gᵀ‖_F (÷ ‖K‖_F when ``relative``) with K = k(X, X), never formed whole.

    ``kernel`` must be resolved (``kernel.resolve(X)``); the difference is taken
    block by block, so there is no cancellation from expanding the square.
    """
    _check_kernel(kernel)
    G = _check_factor(X, G).astype(np.float64, copy=False)
    err = 0.0
    ref = 0.0
    for s, e, B in iter_kernel_blocks(kernel, X, X, budget=budget):
        B = B.astype(np.float64, copy=False)
        if relative:
            ref += float(np.einsum("ij,ij->", B, B))
        B -= G[s:e] @ G.T
        err += float(np.einsum("ij,ij->", B, B))
    err = np.sqrt(err)
    return _relative(err, np.sqrt(ref), "Frobenius") if relative else err


def trace_error(kernel, X, G, *, relative=False) -> float:
    """tr(K − G Gᵀ) = Σᵢ k(xᵢ, xᵢ) − ‖G‖²_F (÷ tr K when ``relative``). O(n m).

    For Nyström and incomplete Cholesky the residual K − GGᵀ is PSD, so this is its
    trace (nuclear) norm.
    """
    _check_kernel(kernel)
    G = _check_factor(X, G).astype(np.float64, copy=False)
    tr = float(np.sum(kernel.diag(X), dtype=np.float64))
    err = tr - float(np.einsum("ij,ij->", G, G))
    return _relative(err, tr, "trace") if relative else err


def approximation_error(kernel, X, G, *, norm="fro", relative=False) -> float:
    """Approximation error in the Frobenius (``"fro"``) or trace (``"trace"``) norm."""
    if norm == "fro":
        return frobenius_error(kernel, X, G, relative=relative)
    if norm == "trace":
        return trace_error(kernel, X, G, relative=relative)
    raise ValueError(f"unknown norm {norm!r}; valid names are 'fro', 'trace'")

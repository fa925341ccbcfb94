"""One factor per kernel of a bank, on one shared landmark set: the multiple-kernel factor.

G(X) = [s_1 k_1(X, Z) N_1, …, s_M k_M(X, Z) N_M], so that G Gᵀ = Σ_j s_j² k_j(X, Z) N_j
N_jᵀ k_j(Z, X) (:ref:`guide-kernel-banks`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._core.validation import as_float64
from ..kernels import KernelBank, chunk_rows
from ._nystrom import nystrom_normalization

__all__ = ["FactorBank", "resolve_kernel_bank"]


def resolve_kernel_bank(kernels, X, rng, *, default: Callable[[], KernelBank]) -> KernelBank:
    """The ``kernels=`` parameter of a multiple-kernel estimator, resolved on ``X``.

    None means ``default()`` (each method's paper bank); a :class:`KernelBank` is used
    as is; any other non-string sequence of kernels becomes a bank. Data-dependent
    bandwidths (rules such as ``"mean_pairwise"``) are fixed from ``X``.
    """
    if kernels is None:
        bank = default()
    elif isinstance(kernels, KernelBank):
        bank = kernels
    elif isinstance(kernels, str) or not hasattr(kernels, "__iter__"):
        raise TypeError(
            "kernels must be a KernelBank, a sequence of kernels or None; got "
            f"{type(kernels).__name__}"
        )
    else:
        ks = list(kernels)
        if not ks:
            raise ValueError("kernels is empty: give at least one kernel (or None)")
        bank = KernelBank(ks)
    return bank.resolve(X, rng)


@dataclass(frozen=True)
class FactorBank:
    """M factors G_j(X) = s_j k_j(X, Z) N_j on shared landmarks Z (:ref:`guide-kernel-banks`).

    Attributes
    ----------
    kernels : resolved :class:`lorak.kernels.KernelBank` (M kernels)
    points : (m, d) array or CSR, the shared landmarks Z
    normalizations : sequence of M arrays (m, r_j)
    scales : (M,) array of s_j ≥ 0, or None for s_j = 1 (no multiply at all)
    """

    kernels: KernelBank
    points: object
    normalizations: tuple
    scales: np.ndarray | None = None

    @classmethod
    def nystrom(cls, kernels, points, *, landmark_weights=None, rtol=None) -> FactorBank:
        """Nyström normalizations N_j of every W_j = k_j(Z, Z), in float64.

        ``landmark_weights`` are Drineas–Mahoney column weights; ``rtol`` is the
        eigenvalue cut-off of each W_j (wide kernels have nearly singular W_j: r_j < m).
        """
        Z64 = as_float64(points)
        norms = [
            nystrom_normalization(W, weights=landmark_weights, rtol=rtol, dtype=np.float64)
            for W in kernels.blocks(Z64, Z64)
        ]
        return cls(kernels, Z64, tuple(nrm.N for nrm in norms))

    # ---------------------------------------------------------------- shape
    @property
    def ranks(self) -> np.ndarray:
        """(M,) r_j, the width of each kernel's block."""
        return np.array([N.shape[1] for N in self.normalizations], dtype=np.intp)

    @property
    def active(self) -> np.ndarray:
        """Indices j of the blocks in the output: r_j > 0 and s_j > 0."""
        keep = self.ranks > 0
        if self.scales is not None:
            keep &= np.asarray(self.scales) > 0
        return np.flatnonzero(keep)

    @property
    def n_components(self) -> int:
        """Output width Σ r_j over the active blocks."""
        return int(self.ranks[self.active].sum())

    def astype(self, dtype) -> FactorBank:
        """The same bank computing in ``dtype`` (landmarks and N_j cast, no copy if equal)."""
        dtype = np.dtype(dtype)
        Z = self.points
        Z = Z.astype(dtype, copy=False) if sp.issparse(Z) else np.asarray(Z, dtype=dtype)
        Ns = tuple(np.asarray(N).astype(dtype, copy=False) for N in self.normalizations)
        return FactorBank(self.kernels, Z, Ns, self.scales)

    # ---------------------------------------------------------------- transform
    def block(self, Xc, out=None) -> np.ndarray:
        """G(X_c) for one chunk of rows, in the dtype of the kernel blocks."""
        blocks = self.kernels.blocks(Xc, self.points)
        active = self.active
        widths = self.ranks[active]
        cols = np.concatenate([[0], np.cumsum(widths)])
        if out is None:
            out = np.empty((Xc.shape[0], int(cols[-1])), dtype=blocks[0].dtype)
        scales = None
        if self.scales is not None:
            scales = np.asarray(self.scales)[active].astype(out.dtype)
        for k, j in enumerate(active):
            view = out[:, cols[k] : cols[k + 1]]
            np.matmul(blocks[j], self.normalizations[j], out=view)
            if scales is not None:
                view *= scales[k]
        return out

    def transform(self, X, *, budget: int | None = None) -> np.ndarray:
        """G(X) (n × Σ r_j) in row chunks; X in the bank's dtype (see :meth:`astype`)."""
        n = X.shape[0]
        dtype = np.result_type(self.points.dtype, X.dtype)
        out = np.empty((n, self.n_components), dtype=dtype)
        m = self.points.shape[0]
        step = chunk_rows(m * len(self.kernels), dtype.itemsize, budget, n)
        for s in range(0, n, step):
            e = min(s + step, n)
            self.block(X[s:e], out=out[s:e])
        return out

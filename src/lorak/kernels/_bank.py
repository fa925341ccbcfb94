"""Kernel banks: "these M kernels", resolved once on the data, evaluated together.

A bank of Gaussians costs one GEMM plus M elementwise passes instead of M GEMMs
(:meth:`KernelBank.blocks`; :ref:`guide-kernel-banks`).

>>> import numpy as np
>>> from lorak.kernels import KernelBank
>>> X = np.random.default_rng(0).standard_normal((50, 3))
>>> bank = KernelBank.gaussian(factors=[0.5, 1.0, 2.0]).resolve(X)   # b = f · b0
>>> [round(k.bandwidth / bank[1].bandwidth, 2) for k in bank]
[0.5, 1.0, 2.0]
>>> [B.shape for B in bank.blocks(X, X[:4])]
[(50, 4), (50, 4), (50, 4)]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from .._core.validation import csr_rows, float_dtype
from ._bandwidth import bandwidth_scale
from ._blocks import chunk_rows
from ._kernels import Gaussian, Kernel, make_kernel

__all__ = ["KernelBank"]


class KernelBank(Sequence):
    """An ordered collection of M kernels.

    Parameters
    ----------
    kernels : iterable of Kernel, str or callable
        Items are passed through :func:`lorak.kernels.make_kernel`.
    relative : sequence of float, optional
        Internal: bandwidth multipliers of a bank built by :meth:`gaussian` whose base
        bandwidth is a rule still to be computed from data (see :meth:`resolve`).
    base : str or float, optional
        Internal: the base bandwidth (rule name or number) the multipliers apply to.
    """

    def __init__(self, kernels: Iterable = (), *, relative=None, base=None):
        # the arguments as given, for get_params/clone (scikit-learn convention)
        self._args = {"kernels": kernels, "relative": relative, "base": base}
        self._relative = None if relative is None else [float(f) for f in relative]
        self._base = base
        if self._relative is not None:
            if not self._relative:
                raise ValueError("a kernel bank needs at least one kernel; got none")
            if any(not np.isfinite(f) or f <= 0 for f in self._relative):
                raise ValueError(
                    f"bandwidth factors must be positive numbers; got {self._relative}"
                )
            self._kernels = []
            return
        ks = [k if isinstance(k, Kernel) else make_kernel(k) for k in kernels]
        if not ks:
            raise ValueError("a kernel bank needs at least one kernel; got none")
        self._kernels = ks

    # ---------------------------------------------------------------- construction
    @classmethod
    def gaussian(cls, factors=None, *, base="mean_pairwise", bandwidths=None) -> KernelBank:
        """Gaussian kernels exp(−‖x−y‖²/b).

        Either ``bandwidths`` (absolute b values) or ``factors`` times a ``base``
        bandwidth (a number or a rule resolved on the data; default the generalized
        Nyström paper's b ∈ {2⁻⁴b₀, …, 2⁴b₀}).
        """
        if bandwidths is not None:
            if factors is not None:
                raise ValueError("give either bandwidths or factors, not both")
            return cls([Gaussian(bandwidth=b) for b in bandwidths])
        if factors is None:
            factors = 2.0 ** np.arange(-4, 5)
        if not isinstance(base, str):
            return cls([Gaussian(bandwidth=float(f) * float(base)) for f in factors])
        return cls(relative=list(factors), base=base)

    @classmethod
    def gaussian_sigmas(cls, sigmas) -> KernelBank:
        """Gaussians in the σ form exp(−‖x−y‖²/(2σ²)) (ℓp-MKL paper: σ ∈ [1, 100])."""
        return cls([Gaussian(bandwidth=2.0 * float(s) ** 2) for s in sigmas])

    # ---------------------------------------------------------------- resolution
    @property
    def is_resolved(self) -> bool:
        return self._relative is None and all(k.is_resolved for k in self._kernels)

    def resolve(self, X, rng: np.random.Generator | None = None) -> KernelBank:
        """A bank whose data-dependent bandwidths are fixed from ``X``."""
        if self._relative is not None:
            b0 = bandwidth_scale(self._base, X, rng)
            return KernelBank([Gaussian(bandwidth=f * b0) for f in self._relative])
        if self.is_resolved:
            return self
        return KernelBank([k.resolve(X, rng) for k in self._kernels])

    def _require_resolved(self):
        if not self.is_resolved:
            raise RuntimeError("this kernel bank has bandwidth rules; call .resolve(X) first")

    # ---------------------------------------------------------------- sequence protocol
    def __len__(self) -> int:
        return len(self._relative) if self._relative is not None else len(self._kernels)

    def __getitem__(self, i):
        self._require_resolved()
        return self._kernels[i]

    def __iter__(self):
        self._require_resolved()
        return iter(self._kernels)

    def __repr__(self) -> str:
        if self._relative is not None:
            return f"KernelBank.gaussian(factors={self._relative}, base={self._base!r})"
        return f"KernelBank({self._kernels!r})"

    def get_params(self, deep: bool = True) -> dict:
        """Constructor arguments (so that scikit-learn's ``clone`` can rebuild the bank)."""
        return dict(self._args)

    # ---------------------------------------------------------------- evaluation
    def blocks(self, X, Z, *, budget: int | None = None) -> list[np.ndarray]:
        """[k_j(X, Z) for each kernel j], sharing one squared-distance GEMM when the
        bank is all Gaussian. Memory: the M outputs plus one chunk."""
        self._require_resolved()
        X, Z = csr_rows(X), csr_rows(Z)  # sparse rows of any format: sliced as CSR
        dtype = float_dtype(X, Z)
        n, m = X.shape[0], Z.shape[0]
        outs = [np.empty((n, m), dtype=dtype) for _ in self._kernels]
        if not all(isinstance(k, Gaussian) for k in self._kernels):
            for k, out in zip(self._kernels, outs, strict=True):
                from ._blocks import kernel_block

                kernel_block(k, X, Z, out=out, budget=budget)
            return outs
        D_kernel = self._kernels[0]
        Zd, zn = D_kernel._prepare(Z, dtype)
        step = chunk_rows(m, dtype.itemsize, budget, n)
        for s in range(0, n, step):
            e = min(s + step, n)
            D = D_kernel._sqdist(X[s:e], Zd, zn, dtype)
            for k, out in zip(self._kernels, outs, strict=True):
                blk = out[s:e]
                np.multiply(D, dtype.type(-1.0 / k.scale), out=blk)
                np.exp(blk, out=blk)
        return outs

    def diag(self, X) -> list[np.ndarray]:
        """[diag k_j(X, X)] for each kernel."""
        self._require_resolved()
        return [k.diag(X) for k in self._kernels]

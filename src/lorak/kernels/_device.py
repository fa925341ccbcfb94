"""Kernel blocks on array API inputs (PyTorch, CuPy, array-api-strict, …), on their device.

The twin of the NumPy blocks, with the same formulas and guards (:ref:`guide-gpu`).
"""

from __future__ import annotations

import numpy as np

from .._core.array_api import compat, device_of, has_float64

__all__ = [
    "DEVICE_KERNELS",
    "check_device_kernel",
    "device_block",
    "device_prepare",
    "gaussian_in_place",
    "raise_if_flagged",
    "result_dtype",
    "row_sq_norms",
    "upper_triangular_product",
]

#: Names of the kernel classes (of :mod:`lorak.kernels`) with an array API path. (By
#: name: the classes' module imports this one's functions.)
DEVICE_KERNELS = ("Gaussian", "Laplacian", "InverseDistance", "Polynomial", "Linear")
_HOME = __name__.rpartition(".")[0] + "._kernels"


def _kind(kernel) -> str:
    """The class name of a lorak kernel with an array API path, else ""."""
    cls = type(kernel)
    return cls.__name__ if cls.__name__ in DEVICE_KERNELS and cls.__module__ == _HOME else ""


def check_device_kernel(kernel) -> None:
    """Raise a ``TypeError`` unless ``kernel`` has an array API path."""
    if not _kind(kernel):
        what = getattr(kernel, "name", None) or repr(kernel)
        raise TypeError(
            f"the {what} kernel has no array API path: on array API inputs (a torch "
            "tensor, a CuPy array, …) lorak evaluates the gaussian/rbf, laplacian, "
            "laplacian_l2, inverse_distance, polynomial/poly and linear kernels. Pass "
            "NumPy arrays for the others"
        )


def result_dtype(xp, X, Z):
    """float32 when both are float32, else float64 (float32 where the device has none)."""
    if X.dtype == xp.float32 and Z.dtype == xp.float32:
        return xp.float32
    return xp.float64 if has_float64(xp, device_of(X)) else xp.float32


class _DeviceAux:
    __slots__ = ("center", "direct", "zn", "zt")

    def __init__(self, zn=None, center=None, direct=False, zt=None):
        self.zn = zn  # squared norms of the (centred) Z rows, scaled for the Gaussian
        self.center = center
        self.direct = direct
        self.zt = zt  # the GEMM's right operand, (d, m), scaled


def _eps(xp, dtype) -> float:
    return float(np.finfo(np.float32 if dtype == xp.float32 else np.float64).eps)


def _all_finite(xp, A) -> bool:
    return bool(xp.all(xp.isfinite(A)))


def device_prepare(kernel, Z, dtype, xp):
    """Per-Z data reused across row chunks (``Zd`` in ``dtype``, and the aux record)."""
    check_device_kernel(kernel)
    Zd = Z if Z.dtype == dtype else xp.astype(Z, dtype)
    if not _all_finite(xp, Zd):
        raise ValueError("Z contains NaN or infinity; a kernel needs finite data")
    if _kind(kernel) in ("Polynomial", "Linear"):
        scale = kernel.gamma if _kind(kernel) == "Polynomial" else None
        zt = Zd.T if scale is None else (Zd * scale).T
        return Zd, _DeviceAux(zt=zt)
    b = kernel._sq_scale()
    center = None
    if Zd.shape[0]:
        wide = xp.float64 if has_float64(xp, device_of(Zd)) else Zd.dtype
        c = xp.mean(xp.astype(Zd, wide), axis=0)
        if float(xp.sum(c * c)) > 64.0 * b:
            center = xp.astype(c, dtype)
            Zd = Zd - center
    zn = xp.sum(Zd * Zd, axis=1)
    r2 = float(xp.max(zn)) if zn.shape[0] else 0.0
    direct = not (_eps(xp, dtype) * r2 <= 2.0**-10 * b)
    if _kind(kernel) == "Gaussian":
        zt = (Zd * (2.0 / b)).T
        zn = zn * (1.0 / b)
    else:
        zt = (Zd * -2.0).T
    return Zd, _DeviceAux(zn=zn, center=center, direct=direct, zt=zt)


def _torch(xp) -> bool:
    return compat.is_torch_namespace(xp)


def _differences_sqdist(xp, Xc, Zd, inv_len):
    """‖x − z‖² · inv_len² from differences, one feature at a time (no cancellation)."""
    D = xp.zeros((Xc.shape[0], Zd.shape[0]), dtype=Xc.dtype, device=device_of(Xc))
    for k in range(Xc.shape[1]):
        T = (Xc[:, k : k + 1] - Zd[:, k][None, :]) * inv_len
        D = D + T * T
    if not _all_finite(xp, D):
        raise ValueError(
            "the squared distances between rows overflow at this bandwidth: the kernel "
            "cannot be evaluated on them. Rescale X, e.g. with "
            "sklearn.preprocessing.StandardScaler, or use a smaller gamma"
        )
    return D


_NONFINITE_X = "X contains NaN or infinity; a kernel needs finite data"


def row_sq_norms(xp, X):
    """‖x‖² of every row of X, with no rows × d temporary on PyTorch (a fused
    reduction, ``torch.linalg.vector_norm``); elsewhere the standard's sum of squares
    (row chunks keep its temporary small)."""
    if _torch(xp):
        import torch

        return torch.linalg.vector_norm(X, dim=1).square_()
    return xp.sum(X * X, axis=1)


def gaussian_in_place(kernel, X, aux, dtype, xp) -> bool:
    """Whether :func:`device_block` writes the Gaussian block of X into ``out`` with no
    temporary beyond O(rows): PyTorch, X already in ``dtype``, Z not centred (else
    X − centre is a rows × d copy) and the expansion usable (not ``direct``). Then the
    block is the output, and row chunks bound nothing: one pass over all rows."""
    return (
        _torch(xp)
        and _kind(kernel) == "Gaussian"
        and not aux.direct
        and aux.center is None
        and X.dtype == dtype
    )


def _check_finite_xn(xp, xn, flags=None):
    """Raise if a row norm is not finite; with ``flags`` (a list) record the check as a
    device scalar instead, for the caller to test once after its last chunk (a test
    per chunk would make the host wait for the device at every chunk)."""
    if flags is not None:
        flags.append(xp.any(~xp.isfinite(xn)))
    elif not _all_finite(xp, xn):
        raise ValueError(_NONFINITE_X)


def raise_if_flagged(xp, flags) -> None:
    """The deferred check of :func:`_check_finite_xn`: one wait for the device."""
    if flags and bool(xp.any(xp.stack(flags))):
        raise ValueError(_NONFINITE_X)


def _sqdist_scaled(kernel, xp, Xc, Zd, aux, flags=None):
    """‖x − z‖² / σ² of one chunk (σ² the kernel's squared scale)."""
    inv = 1.0 / kernel._sq_scale()
    if aux.direct:
        return _differences_sqdist(xp, Xc, Zd, float(kernel._inv_len()))
    xn = row_sq_norms(xp, Xc)
    _check_finite_xn(xp, xn, flags)
    D = Xc @ aux.zt
    D = D + xn[:, None]
    D = D + aux.zn[None, :]
    D = xp.maximum(D, xp.zeros((), dtype=D.dtype, device=device_of(D)))
    return D * inv


def device_block(kernel, X, Zd, aux, dtype, xp, out=None, flags=None):
    """k(X, Zd) for one row chunk, in ``dtype`` on X's device (into ``out`` if given).

    ``out`` (PyTorch only: a contiguous rows × m view of the caller's output) receives
    the Gaussian block without a temporary; elsewhere the block is a new array and
    ``out`` is filled from it. ``flags``: a list that collects the finiteness checks
    of X's rows for :func:`raise_if_flagged` (else they raise here).
    """
    Xc = X if X.dtype == dtype else xp.astype(X, dtype)
    if _kind(kernel) in ("Polynomial", "Linear"):
        _check_finite_xn(xp, row_sq_norms(xp, Xc), flags)
        G = Xc @ aux.zt
        if _kind(kernel) == "Polynomial":
            G = G + kernel.coef0
            if isinstance(kernel.degree, float) and G.shape[0] and G.shape[1]:
                low = float(xp.min(G))
                if low < 0:
                    raise ValueError(
                        f"the polynomial kernel with a non-integer degree={kernel.degree!r} "
                        "takes a real power of γ⟨x, z⟩ + coef0, which is negative here "
                        f"(down to {low:.3g}): a negative number has no real power. Use an "
                        "integer degree, or non-negative data with coef0 ≥ 0"
                    )
            if kernel.degree != 1:
                G = G**kernel.degree
                if not _all_finite(xp, G):
                    raise ValueError(
                        f"the polynomial kernel (γ⟨x, z⟩ + coef0)^{kernel.degree} overflows "
                        f"here (gamma={kernel.gamma!r}, coef0={kernel.coef0!r}): use a "
                        "smaller degree or gamma, or rescale X"
                    )
        return _fill(out, G)
    if aux.center is not None:
        Xc = Xc - aux.center
    if _kind(kernel) == "Gaussian":
        return _gaussian(kernel, xp, Xc, Zd, aux, out, flags)
    if _kind(kernel) == "Laplacian" and kernel.norm == "l1":
        D = xp.zeros((Xc.shape[0], Zd.shape[0]), dtype=dtype, device=device_of(Xc))
        for k in range(Xc.shape[1]):
            D = D + xp.abs(Xc[:, k : k + 1] - Zd[:, k][None, :])
        if not _all_finite(xp, D):
            raise ValueError("X contains NaN or infinity; a kernel needs finite data")
        return _fill(out, xp.exp(D * (-1.0 / kernel.scale)))
    D = xp.sqrt(_sqdist_scaled(kernel, xp, Xc, Zd, aux, flags))  # ‖x − z‖ / σ
    if _kind(kernel) == "InverseDistance":
        return _fill(out, 1.0 / (D + kernel.eps))
    return _fill(out, xp.exp(-D))


def _gaussian(kernel, xp, Xc, Zd, aux, out, flags=None):
    if aux.direct:
        return _fill(out, xp.exp(-_differences_sqdist(xp, Xc, Zd, float(kernel._inv_len()))))
    xn = row_sq_norms(xp, Xc) * (1.0 / kernel.scale)
    _check_finite_xn(xp, xn, flags)
    if _torch(xp):
        import torch

        # exp(min(2xᵀz/b − ‖x‖²/b − ‖z‖²/b, 0)): the block starts as −‖x‖²/b − ‖z‖²/b
        # (one write) and the GEMM accumulates onto it (β = 1); then the clip and the
        # exponential, in place: three passes over the block besides the GEMM's own
        if out is None:
            out = torch.empty((Xc.shape[0], aux.zt.shape[1]), dtype=Xc.dtype, device=Xc.device)
        torch.sub(xn.neg_()[:, None], aux.zn[None, :], out=out)
        return out.addmm_(Xc, aux.zt).clamp_(max=0).exp_()
    G = Xc @ aux.zt
    G = G - xn[:, None]
    G = G - aux.zn[None, :]
    G = xp.minimum(G, xp.zeros((), dtype=G.dtype, device=device_of(G)))
    return _fill(out, xp.exp(G))


def _fill(out, B):
    if out is None:
        return B
    out[...] = B
    return out


def upper_triangular_product(xp, B, N, out=None, *, inplace=False, budget=None, method=None):
    """B @ N for an upper triangular N (m × m): about half the flops of a general
    product (none of N's zeros below the diagonal are multiplied).

    With ``inplace`` on PyTorch the product is written into B by halving the columns
    recursively (leaves of at most 128 columns through a temporary within half of
    ``budget``); otherwise, or with ``method="columns"``, by column blocks
    B[:, :b] @ N[:b, a:b]. This is the triangular multiply of :func:`kernel_product`
    on array API inputs, public for callers who hold the block already: PyTorch has no
    ``trmm`` of its own (the scheme: :ref:`guide-gpu`, the :class:`lorak.Nystroem` row
    of "What runs on the device").

    Parameters
    ----------
    xp : array namespace
        The namespace of B and N (``array_api_compat.array_namespace(B)``).
    B : array of shape (rows, m)
    N : array of shape (m, m)
        Upper triangular (not checked: the blocks below the diagonal are skipped,
        those on it multiplied whole).
    out : array of shape (rows, m), optional
        Where to write the product (not with ``inplace``).
    inplace : bool, default=False
        Overwrite B with the product (and return it).
    budget : int, optional
        Bytes for the temporaries of the in-place PyTorch product.
    method : {None, "halves", "columns"}
        The in-place PyTorch scheme; None: the library's choice (``"halves"``).

    Returns
    -------
    B @ N, in B's namespace, dtype and device.

    Examples
    --------
    >>> import numpy as np
    >>> from array_api_compat import array_namespace
    >>> from lorak.kernels import upper_triangular_product
    >>> B, N = np.ones((2, 3)), np.triu(np.ones((3, 3)))
    >>> upper_triangular_product(array_namespace(B), B, N)
    array([[1., 2., 3.],
           [1., 2., 3.]])
    """
    if method not in (None, "halves", "columns"):
        raise ValueError(f"method must be 'halves' or 'columns'; got {method!r}")
    m = N.shape[0]
    width = max(128, -(-m // 8))
    starts = list(range(0, m, width))
    if inplace and _torch(xp):
        from .._core.config import get_config

        budget = get_config()["memory_budget"] if budget is None else budget
        # the temporaries take half the budget: with O(n) vectors besides, the whole
        # product stays within the output plus one budget
        items = budget // (2 * B.element_size())
        if (method or _INPLACE_METHOD) == "halves":
            _triangular_halves(B, N, 0, m, items)
            return B
        rows = max(1, items // width)
        for s in range(0, B.shape[0], rows):
            C = B[s : s + rows]
            for a in reversed(starts):
                b = min(a + width, m)
                C[:, a:b] = C[:, :b] @ N[:b, a:b]
        return B
    if inplace:
        for a in reversed(starts):
            b = min(a + width, m)
            B[:, a:b] = B[:, :b] @ N[:b, a:b]
        return B
    if out is None:
        out = xp.empty((B.shape[0], m), dtype=B.dtype, device=device_of(B))
    for a in starts:
        b = min(a + width, m)
        out[:, a:b] = B[:, :b] @ N[:b, a:b]
    return out


#: The in-place scheme of :func:`upper_triangular_product` on PyTorch when ``method``
#: is not given ("halves" or "columns"; ``bench/scripts/bench_gpu.py`` times both).
_INPLACE_METHOD = "halves"

#: Widest column block of :func:`upper_triangular_product` done as a general product.
_LEAF = 128


def _triangular_halves(B, N, lo, hi, budget_items):
    """B[:, lo:hi] ← B[:, lo:hi] N[lo:hi, lo:hi] in place (PyTorch), N upper triangular."""
    w = hi - lo
    if w <= _LEAF:
        rows = max(1, budget_items // max(1, w))
        T = N[lo:hi, lo:hi]
        for s in range(0, B.shape[0], rows):
            C = B[s : s + rows, lo:hi]
            C.copy_(C @ T)
        return
    half = w // 2
    if half >= 64:  # split on 32 columns: aligned column offsets for the GEMMs
        half -= half % 32
    mid = lo + half
    _triangular_halves(B, N, mid, hi, budget_items)
    B[:, mid:hi].addmm_(B[:, lo:mid], N[lo:mid, mid:hi])
    _triangular_halves(B, N, lo, mid, budget_items)

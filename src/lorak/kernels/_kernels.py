"""Kernel functions as small immutable objects evaluated on blocks.

The design: :ref:`guide-internals-kernels`; the table of kernels: :ref:`guide-factors`,
section "Kernels and bandwidths".
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from .._core.validation import check_positive, csr_rows
from ._bandwidth import BANDWIDTH_RULES, bandwidth_scale
from ._elementwise import exp_neg_sqdist_inplace, sparse_dense_product

__all__ = [
    "KERNELS",
    "CallableKernel",
    "Gaussian",
    "InverseDistance",
    "Kernel",
    "Laplacian",
    "Linear",
    "Polynomial",
    "make_kernel",
    "sq_norms",
]


def sq_norms(X, dtype) -> np.ndarray:
    """Squared Euclidean norms of the rows of X (dense or sparse), in ``dtype``."""
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel().astype(dtype, copy=False)
    return np.einsum("ij,ij->i", X, X).astype(dtype, copy=False)


def _dense(Z, dtype):
    if sp.issparse(Z):
        Z = Z.toarray()
    return np.ascontiguousarray(Z, dtype=dtype)


def _cross(X, Z, dtype, scale=None, out=None):
    """X @ Z.T in ``dtype`` (Z dense, already cast), optionally scaled via Z.

    Written into ``out`` when given (a C-contiguous block), else a new array.
    """
    Zs = Z if scale is None else Z * dtype.type(scale)
    if sp.issparse(X):  # rows split among threads (SciPy's product runs on one core)
        return sparse_dense_product(X.tocsr().astype(dtype, copy=False), Zs.T, out)
    if out is None:
        return np.asarray(X, dtype=dtype) @ Zs.T
    return np.matmul(np.asarray(X, dtype=dtype), Zs.T, out=out)


def _into(out, K):
    """Return K, copied into ``out`` when an output block was given."""
    if out is None:
        return K
    out[...] = K
    return out


def _check_finite_rows(A, name, norms=None):
    """Raise if ``A`` holds NaN or inf (``norms``: its row norms, when already computed:
    a row norm is finite unless the row has NaN/inf or its square overflows)."""
    if norms is not None and np.all(np.isfinite(norms)):
        return
    data = A.data if sp.issparse(A) else np.asarray(A)
    if data.dtype.kind == "f" and not np.all(np.isfinite(data)):
        raise ValueError(f"{name} contains NaN or infinity; a kernel needs finite data")


class _ZAux:
    """Per-Z data of a stationary kernel, computed once per call (not per row chunk).

    ``center``: a point subtracted from X and Z before the expansion, set only when Z
    lies far from the origin compared with the bandwidth (where the expansion
    cancels); ``zn``: squared norms of the (centred) Z rows; ``direct``: the expansion
    cannot resolve distances at this bandwidth, so blocks come from differences.
    """

    __slots__ = ("center", "direct", "zn")

    def __init__(self, zn, center=None, direct=False):
        self.zn = zn
        self.center = center
        self.direct = direct


def _centered(X, center, dtype):
    Xd = X.toarray() if sp.issparse(X) else X
    return np.asarray(Xd, dtype=dtype) - center


def _direct_sqdist(X, Zd, center, inv_len, dtype, out=None):
    """‖x − z‖² · inv_len² from differences, one feature at a time (O(rows·m·d)).

    The fallback for bandwidths the GEMM expansion cannot resolve (no cancellation,
    scaled before the square). A scaled squared distance that still overflows float64
    is an error (:func:`_raise_overflow`)."""
    Xd = X.toarray() if sp.issparse(X) else np.asarray(X)
    Xd = np.asarray(Xd, dtype=np.float64)
    Z64 = np.asarray(Zd, dtype=np.float64)
    if center is not None:
        Xd = Xd - np.asarray(center, dtype=np.float64)
    D = np.zeros((Xd.shape[0], Z64.shape[0]))
    T = np.empty_like(D)
    with np.errstate(over="ignore", invalid="ignore"):
        for k in range(Xd.shape[1]):
            np.subtract.outer(Xd[:, k], Z64[:, k], out=T)
            T *= inv_len
            np.square(T, out=T)
            D += T
    if not np.all(np.isfinite(D)):
        _check_finite_rows(X, "X")
        _check_finite_rows(Zd, "Z")
        _raise_overflow(X, Zd, center, inv_len)
    return D.astype(dtype, copy=False) if out is None else _into(out, D)


def _raise_overflow(X, Zd, center, inv_len):
    """The error for squared distances (in units of the bandwidth) beyond float64."""
    with np.errstate(over="ignore", invalid="ignore"):
        Xd = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        if center is not None:
            Xd = Xd - np.asarray(center, dtype=np.float64)
        a = max(
            float(np.max(np.abs(Xd), initial=0.0)),
            float(np.max(np.abs(np.asarray(Zd, dtype=np.float64)), initial=0.0)),
        )
    scale = "" if inv_len == 1.0 else f" at the bandwidth's length scale {1.0 / inv_len:.3g}"
    raise ValueError(
        f"the squared distances between rows overflow float64{scale} (coordinates differ "
        f"by up to about {a:.3g}): the kernel cannot be evaluated on them (a Gaussian "
        "would be 0 between every two distinct rows, and a factor of it useless). Rescale "
        "X, e.g. with sklearn.preprocessing.StandardScaler, or use a smaller gamma "
        "(a larger bandwidth)"
    )


class Kernel:
    """Base class. Subclasses set ``name`` and implement ``_block`` and ``diag``."""

    name: str = "kernel"
    _param_names: tuple[str, ...] = ()

    def get_params(self, deep: bool = True) -> dict:
        """Constructor parameters (``deep`` accepted for scikit-learn's ``clone``)."""
        return {k: getattr(self, k) for k in self._param_names}

    def resolve(self, X, rng: np.random.Generator | None = None) -> Kernel:
        """Return a kernel whose data-dependent parameters are fixed from ``X``."""
        return self

    @property
    def is_resolved(self) -> bool:
        return True

    def _require_resolved(self):
        if not self.is_resolved:
            raise RuntimeError(
                f"{self!r} has a bandwidth rule that needs data; call .resolve(X) first"
            )

    def __call__(self, X, Z=None, *, out=None):
        """k(X, Z) as a dense (n_X, n_Z) array, computed in memory-bounded row chunks."""
        from ._blocks import kernel_block

        return kernel_block(self, X, X if Z is None else Z, out=out)

    def _prepare(self, Z, dtype):
        """Per-Z data reused across row chunks of X (e.g. squared norms)."""
        Zd = _dense(Z, dtype)
        _check_finite_rows(Zd, "Z")
        return Zd, None

    def _block(self, X, Zd, aux, dtype, out=None) -> np.ndarray:  # pragma: no cover
        """k(X, Zd) for one chunk; written into ``out`` (C-contiguous) when given."""
        raise NotImplementedError

    def _block_in_place(self, X, aux, dtype) -> bool:
        """Whether ``_block(X, …, out=C)`` writes C with no temporary beyond O(rows).

        Then row chunks bound nothing (the block is the output) and the chunked
        evaluators make one pass over all rows (see :mod:`lorak.kernels._blocks`).
        """
        return False

    def diag(self, X) -> np.ndarray:
        """k(x, x) for every row of X: the diagonals of blocks of 256 rows (subclasses
        with a closed form override it)."""
        dtype = _float_dtype_of(X)
        X = csr_rows(X)  # sparse rows of any format: sliced as CSR
        out = np.empty(X.shape[0], dtype=dtype)
        step = 256
        for s in range(0, X.shape[0], step):
            Xc = X[s : s + step]
            Zd, aux = self._prepare(Xc, dtype)
            out[s : s + step] = np.diagonal(self._block(Xc, Zd, aux, dtype))
        return out

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self.get_params() == other.get_params()

    def __hash__(self) -> int:
        return hash((type(self).__name__, repr(self)))


class _Stationary(Kernel):
    """Kernels of ‖x − z‖ with a bandwidth given as number, rule, or gamma."""

    _squared_scale = True  # bandwidth in units of squared distance (Gaussian)
    _param_names = ("bandwidth", "gamma")

    def _value_at_zero(self) -> float:
        """k(x, x) = k at distance 0 (1 for the Gaussian and the Laplacian)."""
        return 1.0

    def diag(self, X):
        return np.full(X.shape[0], self._value_at_zero(), dtype=_float_dtype_of(X))

    def __init__(self, bandwidth=None, gamma=None):
        if bandwidth is not None and gamma is not None:
            raise ValueError(
                f"give either bandwidth or gamma, not both (got bandwidth={bandwidth!r}, "
                f"gamma={gamma!r})"
            )
        if gamma is not None:
            gamma = float(check_positive(gamma, "gamma"))
        elif bandwidth is None:
            bandwidth = "mean_pairwise"
        if isinstance(bandwidth, str):
            if bandwidth not in BANDWIDTH_RULES:
                valid = ", ".join(repr(r) for r in BANDWIDTH_RULES)
                raise ValueError(
                    f"unknown bandwidth rule {bandwidth!r}; valid rules are {valid}, "
                    "or pass a positive number"
                )
        elif bandwidth is not None:
            bandwidth = float(check_positive(bandwidth, "bandwidth"))
        self.bandwidth = bandwidth
        self.gamma = gamma

    @property
    def is_resolved(self) -> bool:
        return self.gamma is not None or not isinstance(self.bandwidth, str)

    @property
    def scale(self) -> float:
        """The numeric bandwidth (b for the Gaussian, σ otherwise)."""
        self._require_resolved()
        return 1.0 / self.gamma if self.gamma is not None else self.bandwidth

    def _with(self, **kw):
        params = self.get_params()
        params.update(kw)
        return type(self)(**params)

    def resolve(self, X, rng=None):
        if self.is_resolved:
            return self
        s = bandwidth_scale(self.bandwidth, X, rng)
        return self._with(bandwidth=s if self._squared_scale else float(np.sqrt(s)))

    def _sq_scale(self) -> float:
        """The bandwidth in units of squared distance (b, or σ² for kernels of ‖x − z‖)."""
        s = self.scale
        return s if self._squared_scale else s * s

    def _inv_len(self) -> float:
        """1/√b (Gaussian) or 1/σ: the factor that makes distances unit-free."""
        s = self.scale
        return 1.0 / np.sqrt(s) if self._squared_scale else 1.0 / s

    def _prepare(self, Z, dtype):
        Zd = _dense(Z, dtype)
        _check_finite_rows(Zd, "Z")
        b = self._sq_scale()
        center = None
        if Zd.shape[0]:
            with np.errstate(over="ignore", invalid="ignore"):
                c = Zd.mean(axis=0, dtype=np.float64)
                if not np.all(np.isfinite(c)):
                    c = Zd[0].astype(np.float64)
                # far from the origin compared with the bandwidth: centre first (one
                # subtraction per X chunk, only then), else the expansion cancels
                if float(c @ c) > 64.0 * b:
                    center = c.astype(dtype)
                    Zd = Zd - center
        with np.errstate(over="ignore"):
            zn = sq_norms(Zd, dtype)
            r2 = float(np.max(zn, initial=0.0))
        # round-off of the expansion, eps·r², must stay far below the bandwidth
        direct = not (np.finfo(dtype).eps * r2 <= 2.0**-10 * b)
        return Zd, _ZAux(zn, center, direct)

    def _sqdist(self, X, Zd, aux, dtype, out=None, *, scaled=False):
        """‖x − z‖² for one chunk (``aux`` from ``_prepare``); ``scaled``: divided by
        b or σ² (normalized; no overflow at tiny σ)."""
        if not aux.direct:
            Xc = X if aux.center is None else _centered(X, aux.center, dtype)
            with np.errstate(over="ignore", invalid="ignore"):
                xn = sq_norms(Xc, dtype)
            if np.all(np.isfinite(xn)):
                D = _cross(Xc, Zd, dtype, scale=-2.0, out=out)
                D += xn[:, None]
                D += aux.zn[None, :]
                np.maximum(D, 0, out=D)
                if scaled:
                    D *= dtype.type(1.0 / self._sq_scale())
                return D
            _check_finite_rows(X, "X")
        inv_len = self._inv_len() if scaled else 1.0
        return _direct_sqdist(X, Zd, aux.center, inv_len, dtype, out=out)


class Gaussian(_Stationary):
    """Gaussian kernel exp(−‖x − z‖² / b) (the papers' form; ``gamma`` = 1/b)."""

    name = "gaussian"

    def _block_in_place(self, X, aux, dtype) -> bool:
        # dense rows already in the output's dtype, not centred: the GEMM writes C and
        # the exponential runs over C in cache-sized tiles
        return (
            type(X) is np.ndarray
            and X.dtype == dtype
            and X.flags.c_contiguous
            and aux.center is None
            and not aux.direct
        )

    def _block(self, X, Zd, aux, dtype, out=None):
        b = self.scale
        if not aux.direct:
            # centred only where the data sit far from the origin (see _ZAux)
            Xc = X if aux.center is None else _centered(X, aux.center, dtype)
            with np.errstate(over="ignore", invalid="ignore"):
                xn = sq_norms(Xc, dtype) * dtype.type(1.0 / b)
            if np.all(np.isfinite(xn)):
                # exp(2⟨x,z⟩/b − ‖x‖²/b − ‖z‖²/b): the 2/b goes into the GEMM through Z,
                # the rest is one fused, cache-blocked pass (see _elementwise).
                G = _cross(Xc, Zd, dtype, scale=2.0 / b, out=out)
                exp_neg_sqdist_inplace(G, xn, aux.zn * dtype.type(1.0 / b))
                return G
            _check_finite_rows(X, "X")  # NaN/inf rows, or squares that overflow
        D = _direct_sqdist(X, Zd, aux.center, self._inv_len(), dtype, out=out)
        np.negative(D, out=D)
        return np.exp(D, out=D)


class Laplacian(_Stationary):
    """Laplacian kernel exp(−‖x − z‖ / σ); ``norm="l1"`` gives scikit-learn's form.

    The object's default is the papers' ℓ₂ form; by name, ``"laplacian"`` is
    scikit-learn's exp(−γ‖x − z‖₁) and ``"laplacian_l2"`` the papers' exp(−‖x − z‖/σ).
    """

    name = "laplacian"
    _squared_scale = False  # σ = √s for both norms: a rule means the same scale either way
    _param_names = ("bandwidth", "gamma", "norm")

    def __init__(self, bandwidth=None, gamma=None, norm="l2"):
        super().__init__(bandwidth=bandwidth, gamma=gamma)
        if norm not in ("l1", "l2"):
            raise ValueError(f"unknown norm {norm!r}; valid names are 'l1', 'l2'")
        self.norm = norm

    def _block(self, X, Zd, zn, dtype, out=None):
        if self.norm == "l1":
            from sklearn.metrics.pairwise import manhattan_distances

            _check_finite_rows(X, "X")
            Xc = X if zn.center is None else _centered(X, zn.center, dtype)
            D = _into(out, np.asarray(manhattan_distances(Xc, Zd), dtype=dtype))
            D *= dtype.type(-1.0 / self.scale)
        else:
            D = self._sqdist(X, Zd, zn, dtype, out=out, scaled=True)  # ‖x − z‖² / σ²
            np.sqrt(D, out=D)
            np.negative(D, out=D)
        np.exp(D, out=D)
        return D


class InverseDistance(_Stationary):
    """Inverse distance kernel 1 / (ε + ‖x − z‖ / σ) (Zhang, Tsang & Kwok 2008, §3.4)."""

    name = "inverse_distance"
    _squared_scale = False
    _param_names = ("bandwidth", "gamma", "eps")

    def __init__(self, bandwidth=None, gamma=None, eps=1.0):
        super().__init__(bandwidth=bandwidth, gamma=gamma)
        self.eps = float(check_positive(eps, "eps"))

    def _block(self, X, Zd, zn, dtype, out=None):
        D = self._sqdist(X, Zd, zn, dtype, out=out, scaled=True)  # ‖x − z‖² / σ²
        np.sqrt(D, out=D)
        D += dtype.type(self.eps)
        np.reciprocal(D, out=D)
        return D

    def _value_at_zero(self) -> float:
        return 1.0 / self.eps


class Polynomial(Kernel):
    """Polynomial kernel (γ ⟨x, z⟩ + c₀)^degree; γ = 1/n_features when None."""

    name = "polynomial"
    _param_names = ("degree", "gamma", "coef0")

    def __init__(self, degree=3, gamma=None, coef0=1.0):
        # a real degree (scikit-learn accepts 3.1) is a real power, scikit-learn's
        # kernel where its base γ⟨x, z⟩ + c₀ is ≥ 0; a negative base (where scikit-learn
        # gives NaN) is refused when a block meets one (see _block)
        if isinstance(degree, bool) or not isinstance(degree, numbers.Real) or not degree > 0:
            raise ValueError(f"degree must be a positive number; got {degree!r}")
        if not np.isfinite(degree):
            raise ValueError(f"degree must be finite; got {degree!r}")
        self.degree = int(degree) if float(degree).is_integer() else float(degree)
        self.gamma = None if gamma is None else float(check_positive(gamma, "gamma"))
        self.coef0 = float(check_positive(coef0, "coef0", strict=False))

    @property
    def is_resolved(self):
        return self.gamma is not None

    def resolve(self, X, rng=None):
        if self.gamma is not None:
            return self
        return Polynomial(self.degree, 1.0 / X.shape[1], self.coef0)

    def _block(self, X, Zd, aux, dtype, out=None):
        self._require_resolved()
        _check_finite_rows(X, "X", sq_norms(X, dtype))
        G = _cross(X, Zd, dtype, scale=self.gamma, out=out)
        G += dtype.type(self.coef0)
        if isinstance(self.degree, float) and G.size and float(G.min()) < 0:
            raise ValueError(
                f"the polynomial kernel with a non-integer degree={self.degree!r} takes a "
                "real power of γ⟨x, z⟩ + coef0, which is negative here (down to "
                f"{float(G.min()):.3g}): a negative number has no real power (scikit-learn "
                "gives NaN). Use an integer degree, or non-negative data with coef0 ≥ 0"
            )
        if self.degree != 1:
            with np.errstate(over="ignore"):
                np.power(G, self.degree, out=G)
            if not np.all(np.isfinite(G)):
                raise ValueError(
                    f"the polynomial kernel (γ⟨x, z⟩ + coef0)^{self.degree} overflows "
                    f"float64 here (gamma={self.gamma!r}, coef0={self.coef0!r}): use a "
                    "smaller degree or gamma, or rescale X"
                )
        return G

    def diag(self, X):
        self._require_resolved()
        dtype = _float_dtype_of(X)
        return (self.gamma * sq_norms(X, dtype) + dtype.type(self.coef0)) ** self.degree


class Linear(Kernel):
    """Linear kernel ⟨x, z⟩."""

    name = "linear"

    def _block(self, X, Zd, aux, dtype, out=None):
        _check_finite_rows(X, "X", sq_norms(X, dtype))
        return _cross(X, Zd, dtype, out=out)

    def diag(self, X):
        return sq_norms(X, _float_dtype_of(X))


class CallableKernel(Kernel):
    """A user function: ``f(X, Z, **kwargs)`` returning the (len(X), len(Z)) block.

    For compatibility with scikit-learn, a function of two single rows returning a
    float is detected on first use and evaluated pairwise (slow: a Python call per
    entry).
    """

    name = "callable"
    _param_names = ("function", "kwargs")

    def __init__(self, function, kwargs=None):
        if not callable(function):
            raise TypeError(f"kernel function must be callable; got {function!r}")
        self.function = function
        self.kwargs = dict(kwargs or {})
        self._pairwise = None

    def _detect(self, X, Zd):
        if self._pairwise is None:
            self._detect_value(X, Zd)
        return self._pairwise

    def _detect_value(self, X, Zd):
        """Call f once on the first rows; returns k(x₀, z₀) when f is pairwise."""
        x = X[:1].toarray() if sp.issparse(X) else np.asarray(X[:1])
        try:
            r = np.asarray(self.function(x, Zd[:1], **self.kwargs))
        except Exception:
            self._pairwise = True
            return None
        self._pairwise = r.ndim == 0
        return float(r) if self._pairwise else None

    def __call__(self, X, Z=None, *, out=None):
        """k(X, Z); with Z None and a pairwise f, each unordered pair is evaluated once.

        That is scikit-learn's contract for a callable kernel on one set of rows
        (``pairwise_kernels(X, metric=f)``): n(n − 1)/2 + n calls for k(X, X).
        """
        if Z is not None or self._pairwise is False:
            return super().__call__(X, X if Z is None else Z, out=out)
        numeric = getattr(getattr(X, "dtype", None), "kind", "O") in "biuf"
        dtype = _float_dtype_of(X) if numeric else np.dtype(np.float64)
        Xd = X if sp.issparse(X) or not numeric else np.asarray(X, dtype=dtype)
        first = self._detect_value(Xd, Xd) if self._pairwise is None else None
        if self._pairwise is False:
            return super().__call__(X, X, out=out)
        n = Xd.shape[0]

        def row(i):
            return Xd[[i]] if sp.issparse(Xd) else Xd[i]

        K = np.empty((n, n), dtype=np.float64)
        f, kw = self.function, self.kwargs
        for i in range(n):
            xi = row(i)
            K[i, i] = first if (i == 0 and first is not None) else f(xi, xi, **kw)
            for j in range(i + 1, n):
                K[i, j] = K[j, i] = f(xi, row(j), **kw)
        if not np.all(np.isfinite(K)):
            raise ValueError(f"kernel function {self.function!r} returned NaN or inf")
        return _into(out, K.astype(dtype, copy=False))

    def _prepare(self, Z, dtype):
        if sp.issparse(Z):
            return Z, None
        return np.asarray(Z, dtype=dtype), None

    def _block(self, X, Zd, aux, dtype, out=None):
        if self._detect(X, Zd):
            from sklearn.metrics.pairwise import pairwise_kernels

            K = pairwise_kernels(X, Zd, metric=self.function, **self.kwargs)
        else:
            K = self.function(X, Zd, **self.kwargs)
        K = np.asarray(K)
        expected = (X.shape[0], Zd.shape[0])
        if K.shape != expected:
            raise ValueError(
                f"kernel function {self.function!r} returned shape {K.shape}; expected {expected}"
            )
        if not np.all(np.isfinite(K)):
            raise ValueError(f"kernel function {self.function!r} returned NaN or inf")
        return _into(out, np.asarray(K, dtype=dtype))


def _float_dtype_of(X) -> np.dtype:
    return np.dtype(np.float32) if X.dtype == np.float32 else np.dtype(np.float64)


KERNELS = {
    "gaussian": Gaussian,
    "rbf": Gaussian,
    "laplacian": Laplacian,  # norm="l1": scikit-learn's (see _NAME_FIXED)
    "laplacian_l2": Laplacian,  # norm="l2": the papers'
    "inverse_distance": InverseDistance,
    "polynomial": Polynomial,
    "poly": Polynomial,
    "linear": Linear,
}

#: names whose class takes an argument the name decides (not a parameter of the name)
_NAME_FIXED = {"laplacian": {"norm": "l1"}, "laplacian_l2": {"norm": "l2"}}
_NAME_HINT = {
    "laplacian": (
        " (kernel='laplacian' is scikit-learn's exp(−gamma·‖x − z‖₁); the papers' "
        "exp(−‖x − z‖₂/σ) is kernel='laplacian_l2')"
    ),
    "laplacian_l2": (
        " (kernel='laplacian_l2' is exp(−‖x − z‖₂/σ); scikit-learn's ℓ₁ form is kernel='laplacian')"
    ),
}


def make_kernel(
    kernel="gaussian",
    *,
    gamma=None,
    bandwidth=None,
    degree=None,
    coef0=None,
    kernel_params=None,
) -> Kernel:
    """Build a :class:`Kernel` from the scikit-learn-style arguments of an estimator.

    ``kernel`` is a name from :data:`KERNELS`, a :class:`Kernel` (returned as is), or a
    callable. Arguments that do not apply to the chosen kernel must be left as None.
    """
    if isinstance(kernel, Kernel):
        if any(v is not None for v in (gamma, bandwidth, degree, coef0, kernel_params)):
            raise ValueError(
                "kernel is a Kernel object; set its parameters on the object instead of "
                "passing gamma/bandwidth/degree/coef0/kernel_params"
            )
        return kernel
    if callable(kernel):
        return CallableKernel(kernel, kernel_params)
    if not isinstance(kernel, str) or kernel not in KERNELS:
        valid = ", ".join(repr(k) for k in KERNELS)
        raise ValueError(f"unknown kernel {kernel!r}; valid names are {valid}, or a callable")
    cls = KERNELS[kernel]
    params = dict(kernel_params or {})
    given = {"gamma": gamma, "bandwidth": bandwidth, "degree": degree, "coef0": coef0}
    for k, v in given.items():
        if v is not None:
            params[k] = v
    fixed = _NAME_FIXED.get(kernel, {})
    allowed = set(cls._param_names) - set(fixed)
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise ValueError(
            f"kernel {kernel!r} does not take {', '.join(unknown)}; "
            f"its parameters are {', '.join(sorted(allowed)) or 'none'}"
            + _NAME_HINT.get(kernel, "")
        )
    return cls(**params, **fixed)

"""Adversarial sweep, kernels: kernel blocks and bandwidth rules at extreme scales and
dtypes against a difference-based reference, and incomplete Cholesky on offset data.

Part of the adversarial sweep: the outcome rules are in ``tests/_adversarial.py``,
``tests/test_adversarial.py`` gathers every area's table."""

from __future__ import annotations

import numpy as np

import lorak
import lorak.datasets
from _adversarial import (
    _RANGE_ERR,
    PYTESTMARK,
    X,
    _close,
    _finite,
    _gram,
    check_case,
    new_table,
    parametrize_cases,
    y,
)
from lorak import kernels as K

pytestmark = PYTESTMARK

CASES, case = new_table()


def _ref_sqdist(A, B):
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    # difference-based, scaled so that nothing over/underflows before the exp
    s = max(np.abs(A).max(initial=0), np.abs(B).max(initial=0)) or 1.0
    D = ((A[:, None, :] / s - B[None, :, :] / s) ** 2).sum(-1)
    return D, s


def _ref_kernel(kernel, A, B):
    D, s = _ref_sqdist(A, B)
    with np.errstate(divide="ignore", over="ignore"):
        # ‖x − z‖² / b through logarithms: s² and 1/b may overflow on their own
        logD = np.where(D > 0, np.log(np.where(D > 0, D, 1.0)), -np.inf)
        r2 = np.exp(np.minimum(logD + 2 * np.log(s) - 2 * np.log(kernel.scale), 709))
    if isinstance(kernel, K.Gaussian):
        r2 = np.exp(np.minimum(logD + 2 * np.log(s) - np.log(kernel.scale), 709))
        return np.exp(-r2)
    if isinstance(kernel, K.Laplacian) and kernel.norm == "l2":
        return np.exp(-np.sqrt(r2))
    if isinstance(kernel, K.InverseDistance):
        return 1.0 / (kernel.eps + np.sqrt(r2))
    raise AssertionError("no reference")


_KBASE = np.random.default_rng(1).standard_normal((40, 4))
_KMAKERS = {
    "gaussian": lambda: K.Gaussian(bandwidth="mean_pairwise"),
    "gaussian-median": lambda: K.Gaussian(bandwidth="median"),
    "laplacian": lambda: K.Laplacian(bandwidth="mean_to_centroid"),
    "inverse_distance": lambda: K.InverseDistance(bandwidth="mean_pairwise"),
}


def _kcase(kname, A, dtype=np.float64, tol=1e-7):
    def call():
        k = _KMAKERS[kname]().resolve(A.astype(dtype))
        return k, K.kernel_block(k, A.astype(dtype), A[:17].astype(dtype))

    def check(res):
        k, B = res
        B = _finite(B, "kernel block")
        assert B.dtype == dtype, f"dtype {B.dtype} for {np.dtype(dtype)} input"
        ref = _ref_kernel(
            k, A.astype(dtype).astype(np.float64), A[:17].astype(dtype).astype(np.float64)
        )
        _close(B, ref, tol, "kernel block")

    return call, check


for _kname in _KMAKERS:
    for _c in (1e-150, 1e-100, 1e-20, 1.0, 1e20, 1e100, 1e150):
        _call, _check = _kcase(_kname, _KBASE * _c)
        case(
            f"kernel-{_kname}-scale-{_c:g}",
            _call,
            check=_check,
            error=_RANGE_ERR if abs(np.log10(_c)) > 120 else None,
        )
    for _o in (1e3, 1e6, 1e8, -1e8):
        _call, _check = _kcase(_kname, _KBASE + _o, tol=1e-5)
        case(f"kernel-{_kname}-offset-{_o:g}", _call, check=_check)
    # float32: a kernel of ‖x − z‖ (not squared) takes the square root of the
    # expansion's round-off near x = z: √(eps₃₂ · ‖x‖²/σ²) ≈ 1e-3
    _tol32 = 2e-5 if _kname.startswith("gaussian") else 2e-3
    _call, _check = _kcase(_kname, _KBASE, dtype=np.float32, tol=_tol32)
    case(f"kernel-{_kname}-float32", _call, check=_check)
    _call, _check = _kcase(_kname, _KBASE * 10 + 1e3, dtype=np.float32, tol=5e-3)
    case(f"kernel-{_kname}-float32-offset", _call, check=_check)
    _call, _check = _kcase(_kname, _KBASE * 1e300)
    case(f"kernel-{_kname}-X-1e300", _call, check=_check, error=_RANGE_ERR)


def _fixed_block(kernel, A):
    def call():
        return kernel, K.kernel_block(kernel, A, A[:17])

    def check(res):
        k, B = res
        _close(B, _ref_kernel(k, A, A[:17]), 1e-7, "kernel block")

    return call, check


for _kw in ({"gamma": 1e300}, {"bandwidth": 1e-300}, {"gamma": 1e-300}, {"gamma": 0.2}):
    for _A, _an in ((_KBASE, "X"), (_KBASE + 1e8, "X+1e8"), (_KBASE * 1e200, "X*1e200")):
        _call, _check = _fixed_block(K.Gaussian(**_kw), _A)
        case(
            f"kernel-gaussian-{next(iter(_kw))}={next(iter(_kw.values())):g}-{_an}",
            _call,
            check=_check,
            error=_RANGE_ERR,
        )

_G = K.Gaussian(gamma=0.5)
_XN = _KBASE.copy()
_XN[3, 1] = np.nan
case("kernel_block-X-nan", lambda: K.kernel_block(_G, _XN, _KBASE), error=r"\bX\b.*(nan|infinity)")
case("kernel_block-Z-nan", lambda: K.kernel_block(_G, _KBASE, _XN), error=r"\bZ\b.*(nan|infinity)")
case(
    "kernel_block-X-inf",
    lambda: K.kernel_block(_G, np.where(_XN != _XN, np.inf, _XN), _KBASE),
    error=r"\bX\b.*(nan|infinity)",
)
case(
    "kernel_product-X-nan",
    lambda: K.kernel_product(_G, _XN, _KBASE, np.eye(40)),
    error=r"\bX\b.*(nan|infinity)",
)
case(
    "kernel_block-linear-X-nan",
    lambda: K.kernel_block(K.Linear(), _XN, _KBASE),
    error=r"\bX\b.*(nan|infinity)",
)
case(
    "kernel_block-budget--1", lambda: K.kernel_block(_G, _KBASE, _KBASE, budget=-1), error=r"budget"
)
case("kernel_block-budget-0", lambda: K.kernel_block(_G, _KBASE, _KBASE, budget=0), error=r"budget")
case(
    "kernel_block-budget-str",
    lambda: K.kernel_block(_G, _KBASE, _KBASE, budget="1GB"),
    error=r"budget",
)
case("chunk_rows--1", lambda: K.chunk_rows(-1, 8), error=r"n_cols")
case("chunk_rows-itemsize-0", lambda: K.chunk_rows(10, 0), error=r"itemsize")
case("chunk_rows-budget--5", lambda: K.chunk_rows(10, 8, budget=-5), error=r"budget")
case(
    "kernel_block-ok-small-budget",
    lambda: K.kernel_block(_G, _KBASE, _KBASE, budget=1),
    check=lambda B: _close(B, _ref_kernel(_G, _KBASE, _KBASE), 1e-10),
)


def _icd_offset(o, scale=1.0, gamma=0.2):
    return lambda: lorak.IncompleteCholesky(n_components=8, gamma=gamma).fit_transform(
        X * scale + o
    )


for _o in (1e4, 1e6, 1e8):
    case(
        f"ICD-gamma-offset-{_o:g}",
        _icd_offset(_o),
        check=lambda G: _close(
            _gram(G),
            _gram(lorak.IncompleteCholesky(n_components=8, gamma=0.2).fit_transform(X)),
            1e-5,
            "G Gᵀ",
        ),
    )
    case(
        f"CSI-gamma-offset-{_o:g}",
        lambda o=_o: (
            lorak.CSI(n_components=8, gamma=0.2, lookahead=2, random_state=0)
            .fit(X + o, y)
            .transform(X + o)
        ),
        check=lambda G: _close(
            _gram(G),
            _gram(
                lorak.CSI(n_components=8, gamma=0.2, lookahead=2, random_state=0)
                .fit(X, y)
                .transform(X)
            ),
            1e-5,
            "G Gᵀ",
        ),
    )
    case(
        f"Nystroem-gamma-offset-{_o:g}",
        lambda o=_o: (
            lorak.Nystroem(n_components=8, gamma=0.2, random_state=0).fit(X + o).transform(X + o)
        ),
        check=lambda G: _close(
            _gram(G),
            _gram(lorak.Nystroem(n_components=8, gamma=0.2, random_state=0).fit(X).transform(X)),
            1e-5,
            "G Gᵀ",
        ),
    )

# k-means landmarks keep float64 precision at any scale
for _c in (1e-30, 1e-100, 1e30, 1e100):

    def _km(c=_c):
        from lorak.landmarks import select_landmarks

        Xl = np.random.default_rng(2).standard_normal((300, 5))
        return select_landmarks("kmeans", Xl * c, 20, rng=np.random.default_rng(0)).points / c

    def _km_check(P):
        from lorak.landmarks import select_landmarks

        Xl = np.random.default_rng(2).standard_normal((300, 5))
        ref = select_landmarks("kmeans", Xl, 20, rng=np.random.default_rng(0)).points
        _close(P, ref, 1e-6, "k-means landmarks (rescaled)")

    case(f"kmeans-landmarks-scale-{_c:g}", _km, check=_km_check)


# --------------------------------------------------------------------------- the test


@parametrize_cases(CASES)
def test_case(c):
    check_case(c)

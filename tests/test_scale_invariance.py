"""Scale and offset invariance of every estimator with a data-driven bandwidth.

A bandwidth rule (``"mean_pairwise"``, ``"mean_to_centroid"``, ``"median"``) measures the
data, so the learned kernel must not depend on the units of X: X and c·X give the same
kernel matrix for c from 1e-100 to 1e100, to rounding (the rules work on X divided by a
power of two, which is exact; what remains is the rounding of c·X itself). Likewise X
and X + offset, to what float64 can represent: X + 1e8 holds each entry to
ulp(1e8)/2 ≈ 7.5e-9, so kernel values can move by about that much times ‖x − z‖/b —
the tolerance below is that bound, not a fudge factor.

The learned kernel is compared as G Gᵀ for factors (rotation-free), Z Zᵀ for kernel
PCA scores, as decision values for classifiers and regressors, and up to relabelling
for clusterings.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lorak
from lorak import constraints as C
from lorak import kernels as K
from lorak import metrics as M

pytestmark = [
    pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning"),
    pytest.mark.filterwarnings("ignore::UserWarning"),
]

_rng = np.random.default_rng(7)
X = _rng.standard_normal((60, 5))
y = (X[:, 0] + 0.3 * X[:, 2] > 0).astype(int)
y_semi = np.where(np.arange(60) < 20, y, -1)
y_reg = X[:, 0] - 0.5 * X[:, 1]
ML = dict(C.from_labels(y, random_state=0))


def _bank():
    return [
        K.Gaussian(bandwidth="mean_pairwise"),
        K.Gaussian(bandwidth="median"),
        K.Laplacian(bandwidth="mean_to_centroid"),
        K.InverseDistance(bandwidth="mean_pairwise"),
    ]


def _nys(**kw):
    return lorak.Nystroem(
        **{"n_components": 8, "bandwidth": "mean_pairwise", "random_state": 0, **kw}
    )


# name -> (build, fit(est, X), output(est, X), kind)
CASES = {
    "Nystroem-mean_pairwise": (_nys, "x", "transform", "factor"),
    "Nystroem-median": (lambda: _nys(bandwidth="median"), "x", "transform", "factor"),
    "Nystroem-kmeans": (lambda: _nys(landmarks="kmeans"), "x", "transform", "factor"),
    "Nystroem-laplacian": (
        lambda: _nys(kernel="laplacian_l2", bandwidth="mean_to_centroid"),
        "x",
        "transform",
        "factor",
    ),
    "IncompleteCholesky": (
        lambda: lorak.IncompleteCholesky(n_components=8),
        "x",
        "transform",
        "factor",
    ),
    "ExactEigen": (lambda: lorak.ExactEigen(n_components=8), "x", "transform", "factor"),
    "CSI": (
        lambda: lorak.CSI(n_components=8, lookahead=2, bandwidth="mean_pairwise", random_state=0),
        "y",
        "transform",
        "factor",
    ),
    "GeneralizedNystroem": (
        lambda: lorak.GeneralizedNystroem(
            n_components=8, bandwidth="mean_pairwise", random_state=0
        ),
        "semi",
        "transform",
        "factor",
    ),
    "MultipleKernelGeneralizedNystroem": (
        lambda: lorak.MultipleKernelGeneralizedNystroem(
            kernels=_bank(), n_components=8, n_landmarks=12, random_state=0
        ),
        "semi",
        "transform",
        "factor",
    ),
    "ABMKL": (
        lambda: lorak.ABMKL(kernels=_bank(), n_components=8, random_state=0),
        "y",
        "transform",
        "factor",
    ),
    "CABMKL": (
        lambda: lorak.CABMKL(kernels=_bank(), n_components=8, random_state=0),
        "y",
        "transform",
        "factor",
    ),
    "UniformKernelSum": (
        lambda: lorak.UniformKernelSum(kernels=_bank(), n_components=8, random_state=0),
        "x",
        "transform",
        "factor",
    ),
    "LowRankMKLClassifier": (
        lambda: lorak.LowRankMKLClassifier(kernels=_bank(), rank=8, max_iter=10, random_state=0),
        "y",
        "decision_function",
        "values",
    ),
    "AlignmentMKLClassifier": (
        lambda: lorak.AlignmentMKLClassifier(kernels=_bank()),
        "y",
        "decision_function",
        "values",
    ),
    "GLMKLClassifier": (
        lambda: lorak.GLMKLClassifier(kernels=_bank(), max_iter=10),
        "y",
        "decision_function",
        "values",
    ),
    "SimpleNPKL": (
        lambda: lorak.SimpleNPKL(max_iter=20, random_state=0),
        "npkl",
        "embedding_",
        "gram",
    ),
    "LSSVC": (lambda: lorak.LSSVC(_nys()), "y", "decision_function", "values"),
    "LSSVR": (lambda: lorak.LSSVR(_nys()), "reg", "predict", "values"),
    "LowRankKernelPCA": (
        lambda: lorak.LowRankKernelPCA(_nys(), n_components=4),
        "x",
        "transform",
        "gram",
    ),
    "KernelKMeans": (
        lambda: lorak.KernelKMeans(n_clusters=2, factor=_nys(), n_init=2, random_state=0),
        "x",
        "predict",
        "partition",
    ),
    "SemiSupervisedFactorClassifier": (
        lambda: lorak.SemiSupervisedFactorClassifier(_nys()),
        "semi",
        "decision_function",
        "values",
    ),
    "LowRankMKLRegressor": (
        lambda: lorak.LowRankMKLRegressor(n_kernels=4, rank=20, random_state=0),
        "reg",
        "predict",
        "values",
    ),
    "SemiSupervisedFactorRegressor": (
        lambda: lorak.SemiSupervisedFactorRegressor(
            lorak.GeneralizedNystroem(
                n_components=8, bandwidth="mean_pairwise", random_state=0, cv=3
            )
        ),
        "semi-reg",
        "predict",
        "values",
    ),
}


def _learned(name, Xb):
    build, fit, method, kind = CASES[name]
    est = build()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if fit == "x":
            est.fit(Xb)
        elif fit == "y":
            est.fit(Xb, y)
        elif fit == "semi":
            est.fit(Xb, y_semi)
        elif fit == "reg":
            est.fit(Xb, y_reg)
        elif fit == "semi-reg":
            est.fit(Xb, np.where(np.arange(60) < 20, y_reg, np.nan))
        else:
            est.fit(Xb, **ML)
        out = getattr(est, method)
        out = np.asarray(out(Xb) if callable(out) else out, dtype=np.float64)
    assert np.all(np.isfinite(out)), f"{name}: NaN/inf output"
    if kind in ("factor", "gram"):
        return out @ out.T
    return out


_REF: dict = {}


def _ref(name):
    if name not in _REF:
        _REF[name] = _learned(name, X)
    return _REF[name]


def _compare(name, out, tol):
    ref = _ref(name)
    if CASES[name][3] == "partition":
        assert M.pairwise_cluster_accuracy(ref, out) == 1.0
        return
    scale = max(1.0, float(np.abs(ref).max()))
    err = float(np.max(np.abs(out - ref))) / scale
    assert err <= tol, f"{name}: relative change {err:.3g} > {tol:.3g}"


# solvers that stop at a tolerance follow the same path up to rounding; their results
# agree to well inside their tolerance, not to the last bit
_ITERATIVE = {
    "LowRankMKLRegressor",
    "SemiSupervisedFactorRegressor",
    "GeneralizedNystroem",
    "MultipleKernelGeneralizedNystroem",
    "LowRankMKLClassifier",
    "GLMKLClassifier",
    "AlignmentMKLClassifier",
    "SimpleNPKL",
}


# kernels of the plain distance ‖x − z‖ (Laplacian, inverse distance) take a square
# root of the expansion's round-off near x = z: their values are good to √eps ≈ 1.5e-8
_SQRT_KERNELS = {
    "Nystroem-laplacian",
    "MultipleKernelGeneralizedNystroem",
    "ABMKL",
    "CABMKL",
    "UniformKernelSum",
    "LowRankMKLClassifier",
    "AlignmentMKLClassifier",
    "GLMKLClassifier",
}


def _tol(name, base):
    if name in _SQRT_KERNELS:
        base = max(base, 1e-7)
    return max(base, 1e-6) if name in _ITERATIVE else base


SCALES = [1e-100, 3.3e-51, 1e-7, 0.0123, 7.0, 4.1e3, 1e20, 2.2e64, 1e100]


@pytest.mark.parametrize("c", SCALES, ids=[f"{c:g}" for c in SCALES])
@pytest.mark.parametrize("name", list(CASES))
def test_scale_invariance(name, c):
    _compare(name, _learned(name, X * c), _tol(name, 1e-9))


OFFSETS = [1e2, -1e4, 1e6, 1e8]


@pytest.mark.parametrize("offset", OFFSETS, ids=[f"{o:g}" for o in OFFSETS])
@pytest.mark.parametrize("name", list(CASES))
def test_offset_invariance(name, offset):
    # X + offset holds X to ulp(offset)/2 per entry; kernel values of unit-scale data
    # move by a few times that (b ≈ 2d here, ‖x − z‖ ≈ √(2d))
    Xo = X + offset
    represent = float(np.max(np.abs((Xo - offset) - X)))
    _compare(name, _learned(name, Xo), _tol(name, 1e-10 + 200 * represent))


def test_offset_beyond_float64_is_honest():
    """At X + 1e17 float64 keeps almost no digit of X: a bandwidth rule must not invent
    a kernel from the round-off (a clear error or a kernel of the data float64 holds)."""
    Xo = X + 1e17
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            G = lorak.IncompleteCholesky(n_components=8).fit_transform(Xo)
        except ValueError as exc:
            assert "bandwidth" in str(exc) or "identical" in str(exc)
            return
    d = np.einsum("ij,ij->i", G, G)
    assert np.all(np.isfinite(G)) and d.max() <= 1 + 1e-9

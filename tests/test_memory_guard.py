"""Memory guard: the methods the papers call linear never allocate an n × n array.

For each, fit + transform (or predict) at n = 20000 runs under :mod:`tracemalloc`
(numpy reports its buffers to it) and the peak must stay below n²·8/20 bytes — 160 MB,
a twentieth of one dense float64 n × n matrix (3.2 GB). Small d and rank keep it fast.
"""

from __future__ import annotations

import gc
import tracemalloc
import warnings

import numpy as np
import pytest

import lorak
from lorak.constraints import from_labels
from lorak.kernels import Gaussian, KernelBank, kernel_block

N = 20_000
D = 5
LIMIT = N * N * 8 // 20  # bytes


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N, D))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(np.int64)
    y_semi = y.copy()
    y_semi[200:] = -1
    return X, y, y_semi


def _nys(**kw):
    return lorak.Nystroem(**{"n_components": 30, "random_state": 0, **kw})


# name -> run(X, y, y_semi): fit and use the estimator on all n rows
RUNS = {
    "Nystroem-uniform": lambda X, y, ys: _nys().fit(X).transform(X),
    "Nystroem-kmeans": lambda X, y, ys: _nys(landmarks="kmeans").fit(X).transform(X),
    "Nystroem-bandwidth-rule": lambda X, y, ys: (
        _nys(bandwidth="mean_to_centroid").fit(X).transform(X)
    ),
    "IncompleteCholesky": lambda X, y, ys: (
        lorak.IncompleteCholesky(n_components=30).fit(X).transform(X)
    ),
    "CSI": lambda X, y, ys: (
        lorak.CSI(n_components=20, lookahead=5, random_state=0).fit(X, y).transform(X)
    ),
    "GeneralizedNystroem": lambda X, y, ys: (
        lorak.GeneralizedNystroem(n_components=30, random_state=0).fit(X, ys).transform(X)
    ),
    "SemiSupervisedFactorClassifier": lambda X, y, ys: (
        lorak.SemiSupervisedFactorClassifier(
            lorak.GeneralizedNystroem(n_components=30, random_state=0)
        )
        .fit(X, ys)
        .predict(X)
    ),
    "LSSVC": lambda X, y, ys: lorak.LSSVC(_nys()).fit(X, y).predict(X),
    "LSSVR": lambda X, y, ys: lorak.LSSVR(_nys()).fit(X, X[:, 0]).predict(X),
    "LowRankKernelPCA": lambda X, y, ys: (
        lorak.LowRankKernelPCA(_nys(), n_components=5).fit(X).transform(X)
    ),
    "KernelKMeans": lambda X, y, ys: (
        lorak.KernelKMeans(4, _nys(), n_init=1, random_state=0).fit(X).predict(X)
    ),
    "LowRankMKLClassifier": lambda X, y, ys: (
        lorak.LowRankMKLClassifier(
            n_kernels=2, rank=10, max_iter=1, inner_max_iter=30, random_state=0
        )
        .fit(X, y)
        .predict(X)
    ),
}


def _bank():
    return KernelBank.gaussian(factors=[0.5, 1.0, 2.0])


# kernel combinations on a shared-landmark Nyström factor (linear in n); the two
# classifiers that solve on the labeled rows (AlignmentMKLClassifier, GLMKLClassifier)
# are not linear-in-n methods and are not listed
for _name in ("UniformKernelSum", "ABMKL", "CABMKL"):
    if hasattr(lorak, _name):
        RUNS[_name] = (
            lambda cls: (
                lambda X, y, ys: (
                    cls(kernels=_bank(), n_components=20, random_state=0).fit(X, ys).transform(X)
                )
            )
        )(getattr(lorak, _name))
if hasattr(lorak, "MultipleKernelGeneralizedNystroem"):
    RUNS["MultipleKernelGeneralizedNystroem"] = lambda X, y, ys: (
        lorak.MultipleKernelGeneralizedNystroem(
            kernels=KernelBank.gaussian(factors=[0.5, 2.0]), n_landmarks=20, random_state=0
        )
        .fit(X, ys)
        .transform(X)
    )

# above ~5 s here (2 shared cores): run with -m slow
SLOW = {"SimpleNPKL", "LowRankMKLClassifier"}
RUNS["SimpleNPKL"] = lambda X, y, ys: lorak.SimpleNPKL(
    max_iter=5, max_rank=10, random_state=0
).fit_transform(X, **from_labels(y, n_pairs=500, random_state=0))


def _peak_bytes(run, *args):
    gc.collect()
    tracemalloc.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = run(*args)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return out, peak


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in sorted(RUNS)],
)
def test_no_n_by_n_allocation(name, data):
    X, y, y_semi = data
    out, peak = _peak_bytes(RUNS[name], X, y, y_semi)
    assert np.asarray(out).shape[0] == N
    assert peak < LIMIT, (
        f"{name}: tracemalloc peak {peak / 2**20:.0f} MiB at n={N} (limit "
        f"{LIMIT / 2**20:.0f} MiB = n²·8/20; one n×n float64 array is "
        f"{N * N * 8 / 2**20:.0f} MiB)"
    )


def test_guard_detects_an_n_by_n_allocation():
    """The measurement itself works: forming a (small) n × n kernel is caught."""
    n = 1500
    X = np.random.default_rng(0).standard_normal((n, D))
    _, peak = _peak_bytes(lambda: kernel_block(Gaussian(bandwidth=1.0), X, X))
    assert peak >= n * n * 8

"""The adversarial sweep's harness: every public entry point fed edge-case input, each
outcome classified.

The sweep is split by the area it tests, one table of cases per area file (listed in
:data:`AREAS`); ``tests/test_adversarial.py`` gathers every table (its size, every
exported estimator in :data:`ESTIMATORS`, case ids unique across areas) and, run as a
script, prints the totals per outcome. This module holds what the areas share: the
outcome rules, the checks, the data, and the table of estimators.

Each case is one call. Its outcome is one of

- **clear error** — a ``ValueError``, ``TypeError`` or ``PersistenceError`` (not a
  ``LinAlgError``, which subclasses ``ValueError`` but says nothing about the input)
  raised from lorak's own code or scikit-learn's input validation, whose message
  matches the case's pattern (the argument or the problem by name); for the CLI, a
  non-zero exit status with such a message on stderr and no traceback;
- **correct output** — the call returned and the case's check accepted the result
  (finite, in the kernel's range, equal to a reference: the same estimator on the
  unscaled data, a difference-based kernel, the in-memory fit, …);
- **silent wrong output** — the call returned and the check failed, or the call
  returned where only an error is right;
- **cryptic error** — any other exception (IndexError, LinAlgError, ZeroDivisionError,
  AttributeError, MemoryError, OSError, a bare numpy message, an argparse traceback…).

An area's test fails on the last two. Cases that may legitimately end either way (data
at 1e-150, where some squared distances leave float64's range) accept both a clear
error and a correct output, never a NaN.
"""

from __future__ import annotations

import bz2
import contextlib
import io
import json
import os
import re
import sys
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import lorak
import lorak.datasets
from lorak import constraints as C
from lorak import kernels as K
from lorak import metrics as M

PYTESTMARK = [
    pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning"),
    pytest.mark.filterwarnings("ignore::RuntimeWarning"),
    pytest.mark.filterwarnings("ignore::UserWarning"),
]

_rng = np.random.default_rng(0)
X = _rng.standard_normal((60, 5))
y = (X[:, 0] > 0).astype(int)
y_semi = np.where(np.arange(60) < 20, y, -1)
y_reg = X[:, 0] + 0.1 * X[:, 1]
ML = dict(C.from_labels(y, random_state=0))

CLEAR_TYPES: tuple[type, ...] = (ValueError, TypeError)
_OWNED = (f"{os.sep}lorak{os.sep}", f"{os.sep}sklearn{os.sep}")

# data shared by several areas: a NaN and an inf entry, and what a clear error at the
# edge of float64's range says
_X_NAN = X.copy()
_X_NAN[33, 2] = np.nan
_X_INF = X.copy()
_X_INF[47, 0] = np.inf
_RANGE_ERR = r"(overflow|underflow|range|rescale|scale)"

# --------------------------------------------------------------------------- harness


@dataclass
class Case:
    id: str
    call: Callable[[], Any]
    check: Callable[[Any], Any] | None = None  # None: only a clear error is right
    error: str | None = None  # regex a clear error's message must match
    slow: bool = False
    tags: tuple = field(default_factory=tuple)


def new_table() -> tuple[list[Case], Callable]:
    """An area's empty table of cases and the function that adds one to it."""
    cases: list[Case] = []

    def case(cid, call, *, check=None, error=None, slow=False):
        cases.append(Case(cid, call, check, error, slow))

    return cases, case


def parametrize_cases(cases: list[Case]):
    """The decorator that makes an area's ``test_case`` run every case of its table
    (the slow ones marked ``slow``)."""
    return pytest.mark.parametrize(
        "c", [pytest.param(c, id=c.id, marks=[pytest.mark.slow] if c.slow else []) for c in cases]
    )


def check_case(c: Case) -> None:
    outcome, detail = classify(c)
    assert outcome in ("clear", "correct"), f"{outcome}: {detail}"


def _raised_by_owned_code(exc: BaseException) -> bool:
    """The innermost frame that raised is in lorak or scikit-learn (their validation)."""
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    return last is not None and any(p in last for p in _OWNED)


def classify(c: Case) -> tuple[str, str]:
    """Run one case; return (outcome, detail)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = c.call()
        except Exception as exc:
            msg = f"{type(exc).__name__}: {exc}"
            if (
                isinstance(exc, CLEAR_TYPES)
                and not isinstance(exc, np.linalg.LinAlgError)
                and _raised_by_owned_code(exc)
                and c.error is not None
                and re.search(c.error, str(exc), flags=re.I | re.S)
            ):
                return "clear", msg
            return "cryptic", msg + "\n" + "".join(traceback.format_tb(exc.__traceback__)[-3:])
        if c.check is None:
            return "silent_wrong", f"returned {type(result).__name__} where an error is right"
        try:
            verdict = c.check(result)
        except AssertionError as exc:
            return "silent_wrong", f"check failed: {exc}"
        if isinstance(verdict, str) and verdict == "clear":
            return "clear", "clean failure"
        if isinstance(verdict, str) and verdict.startswith("cryptic"):
            return "cryptic", verdict
        return "correct", ""


# --------------------------------------------------------------------------- checks


def _finite(a, what="output"):
    a = a.toarray() if sp.issparse(a) else np.asarray(a)
    assert a.dtype.kind in "biuf", f"{what} is not numeric ({a.dtype})"
    assert np.all(np.isfinite(a)), f"{what} has NaN/inf ({np.sum(~np.isfinite(a))} entries)"
    return a


def _close(a, b, atol, what="output"):
    a = _finite(a, what)
    b = np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape, f"{what} shape {a.shape} != reference {b.shape}"
    err = float(np.max(np.abs(a.astype(np.float64) - b))) if a.size else 0.0
    assert err <= atol, f"{what} differs from the reference by {err:.3g} (> {atol:g})"


def _gram(G):
    G = np.asarray(G, dtype=np.float64)
    return G @ G.T


# --------------------------------------------------------------------------- estimators


def _nys(**kw):
    return lorak.Nystroem(
        **{"n_components": 8, "bandwidth": "mean_pairwise", "random_state": 0, **kw}
    )


def _mk(cls, **kw):
    return lambda **more: cls(**{**kw, **more})


# name -> (make, fit(est, X, **fit_kw), output(est, X) -> array, kind, invariant)
# kind: "factor" (G with G Gᵀ the learned kernel, compared as G Gᵀ), "labels",
# "values" (compared as numbers), "gram" (compared as Z Zᵀ: signs/rotations free),
# "partition" (compared up to relabelling). ``invariant``: the configuration uses a
# data-driven bandwidth, so X → cX and X → X + offset must not change the output.
def _fit_y(e, Xb, yb=None):
    return e.fit(Xb, y if yb is None else yb)


def _fit_semi(e, Xb, yb=None):
    return e.fit(Xb, y_semi if yb is None else yb)


def _fit_reg(e, Xb, yb=None):
    return e.fit(Xb, y_reg if yb is None else yb)


def _fit_none(e, Xb, yb=None):
    return e.fit(Xb)


def _fit_npkl(e, Xb, yb=None):
    return e.fit(Xb, **ML)


_KERNELS3 = lambda: [  # noqa: E731
    K.Gaussian(bandwidth="mean_pairwise"),
    K.Gaussian(bandwidth="median"),
    K.Laplacian(bandwidth="mean_to_centroid"),
]

ESTIMATORS: dict[str, tuple] = {
    "Nystroem": (_nys, _fit_none, "transform", "factor"),
    "Nystroem-kmeans": (
        lambda **kw: _nys(landmarks="kmeans", **kw),
        _fit_none,
        "transform",
        "factor",
    ),
    "IncompleteCholesky": (
        _mk(lorak.IncompleteCholesky, n_components=8),
        _fit_none,
        "transform",
        "factor",
    ),
    "ExactEigen": (_mk(lorak.ExactEigen, n_components=8), _fit_none, "transform", "factor"),
    "CSI": (
        _mk(lorak.CSI, n_components=8, lookahead=2, random_state=0, bandwidth="mean_pairwise"),
        _fit_y,
        "transform",
        "factor",
    ),
    "GeneralizedNystroem": (
        _mk(lorak.GeneralizedNystroem, n_components=8, bandwidth="mean_pairwise", random_state=0),
        _fit_semi,
        "transform",
        "factor",
    ),
    "MultipleKernelGeneralizedNystroem": (
        lambda **kw: lorak.MultipleKernelGeneralizedNystroem(
            **{
                "kernels": _KERNELS3(),
                "n_components": 8,
                "n_landmarks": 12,
                "random_state": 0,
                **kw,
            }
        ),
        _fit_semi,
        "transform",
        "factor",
    ),
    "ABMKL": (
        lambda **kw: lorak.ABMKL(
            **{"kernels": _KERNELS3(), "n_components": 8, "random_state": 0, **kw}
        ),
        _fit_y,
        "transform",
        "factor",
    ),
    "CABMKL": (
        lambda **kw: lorak.CABMKL(
            **{"kernels": _KERNELS3(), "n_components": 8, "random_state": 0, **kw}
        ),
        _fit_y,
        "transform",
        "factor",
    ),
    "UniformKernelSum": (
        lambda **kw: lorak.UniformKernelSum(
            **{"kernels": _KERNELS3(), "n_components": 8, "random_state": 0, **kw}
        ),
        _fit_none,
        "transform",
        "factor",
    ),
    "SimpleNPKL": (
        _mk(lorak.SimpleNPKL, max_iter=20, random_state=0),
        _fit_npkl,
        "embedding_",
        "gram",
    ),
    "LowRankMKLClassifier": (
        lambda **kw: lorak.LowRankMKLClassifier(
            **{"kernels": _KERNELS3(), "rank": 8, "max_iter": 10, "random_state": 0, **kw}
        ),
        _fit_y,
        "decision_function",
        "values",
    ),
    "AlignmentMKLClassifier": (
        lambda **kw: lorak.AlignmentMKLClassifier(**{"kernels": _KERNELS3(), **kw}),
        _fit_y,
        "decision_function",
        "values",
    ),
    "GLMKLClassifier": (
        lambda **kw: lorak.GLMKLClassifier(**{"kernels": _KERNELS3(), "max_iter": 10, **kw}),
        _fit_y,
        "decision_function",
        "values",
    ),
    "LSSVC": (lambda **kw: lorak.LSSVC(_nys(), **kw), _fit_y, "decision_function", "values"),
    "LSSVR": (lambda **kw: lorak.LSSVR(_nys(), **kw), _fit_reg, "predict", "values"),
    "LowRankKernelPCA": (
        lambda **kw: lorak.LowRankKernelPCA(_nys(), **{"n_components": 4, **kw}),
        _fit_none,
        "transform",
        "gram",
    ),
    "KernelKMeans": (
        lambda **kw: lorak.KernelKMeans(
            **{"n_clusters": 2, "factor": _nys(), "n_init": 2, "random_state": 0, **kw}
        ),
        _fit_none,
        "predict",
        "partition",
    ),
    "GraphRegularizedFactor": (
        lambda **kw: lorak.GraphRegularizedFactor(_nys(), **{"random_state": 0, **kw}),
        _fit_semi,
        "transform",
        "factor",
    ),
    "SemiSupervisedFactorClassifier": (
        lambda **kw: lorak.SemiSupervisedFactorClassifier(_nys(), **kw),
        _fit_semi,
        "decision_function",
        "values",
    ),
    "LowRankMKLRegressor": (
        lambda **kw: lorak.LowRankMKLRegressor(
            **{"kernels": _KERNELS3(), "rank": 8, "max_iter": 10, "random_state": 0, **kw}
        ),
        _fit_reg,
        "predict",
        "values",
    ),
    "SemiSupervisedFactorRegressor": (
        lambda **kw: lorak.SemiSupervisedFactorRegressor(_nys(), **kw),
        _fit_reg,
        "predict",
        "values",
    ),
}
# estimators whose learned kernel is scale-free only up to a solver's tolerance
_ITERATIVE = {
    "LowRankMKLRegressor",
    "GeneralizedNystroem",
    "MultipleKernelGeneralizedNystroem",
    "LowRankMKLClassifier",
    "GLMKLClassifier",
    "SimpleNPKL",
    "KernelKMeans",
    "AlignmentMKLClassifier",
}

_REF: dict[str, np.ndarray] = {}


def _output(name, Xb, **kw):
    make, fit, method, _ = ESTIMATORS[name]
    return _apply(fit(make(**kw), Xb), method, Xb)


def _apply(est, method, Xb):
    out = getattr(est, method)
    return out(Xb) if callable(out) else out


def _reference(name):
    if name not in _REF:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _REF[name] = np.asarray(_output(name, X))
    return _REF[name]


def _same_as_reference(name, atol=None):
    kind = ESTIMATORS[name][3]
    tol = atol if atol is not None else (2e-3 if name in _ITERATIVE else 1e-6)
    if name in _ITERATIVE:
        tol = max(tol, 2e-3)

    def check(out):
        ref = _reference(name)
        out = _finite(out)
        if kind == "factor":
            _close(_gram(out), _gram(ref), tol, "learned kernel G Gᵀ")
        elif kind == "gram":
            _close(_gram(out), _gram(ref), tol * max(1.0, np.abs(_gram(ref)).max()), "Z Zᵀ")
        elif kind == "partition":
            acc = M.pairwise_cluster_accuracy(ref, out)
            assert acc == 1.0, f"partition differs from the reference (accuracy {acc:.3f})"
        else:
            scale = max(1.0, float(np.abs(ref).max()))
            _close(out, ref, tol * scale, "output")

    return check


def _factor_in_range(out):
    """A factor of a kernel bounded by 1: finite, diag(G Gᵀ) in [0, 1]."""
    G = _finite(out)
    if G.ndim == 2:
        d = np.einsum("ij,ij->i", G.astype(np.float64), G.astype(np.float64))
        assert d.max() <= 1 + 1e-4, f"diag(G Gᵀ) reaches {d.max():.4g} for a kernel bounded by 1"


def _fit_call(name, Xb, yb=None, **kw):
    make, fit, method, _ = ESTIMATORS[name]

    def call():
        return _apply(fit(make(**kw), Xb, yb), method, Xb)

    return call


# --------------------------------------------------------------------------- files


_TMP = [None]


def _tmpdir() -> Path:
    import tempfile

    if _TMP[0] is None:
        _TMP[0] = Path(tempfile.mkdtemp(prefix="lorak-adv-"))
    return _TMP[0]


def _write_libsvm(path: Path, text: str, *, raw: bytes | None = None):
    path.parent.mkdir(parents=True, exist_ok=True)
    if raw is not None:
        path.write_bytes(raw)
        return
    with bz2.open(path, "wt") as fh:
        fh.write(text)


def _cli(*argv):
    """Run ``lorak`` in-process; returns (status, stdout, stderr)."""
    from lorak.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(list(argv))
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 1
    return rc, out.getvalue(), err.getvalue()


def _cli_error(pattern):
    def check(res):
        rc, out, err = res
        assert rc != 0, f"exit status 0 (stdout: {out[-200:]!r})"
        if "Traceback" in err:
            return "cryptic: traceback on stderr"
        assert re.search(pattern, err + out, flags=re.I), f"stderr does not say why: {err[-300:]!r}"
        return "clear"

    return check


# malformed data folders: every reader of MANIFEST.json names the set, the key and
# what was expected (or that the file is not UTF-8 JSON)
_MF_SPLIT = {"file": "toy/toy.train.libsvm.bz2", "n_features": 2, "n_samples": 2}
_MF_BAD = {
    "files-empty": ({"toy": {"files": {}}}, r"toy.*files"),
    "files-missing": ({"toy": {"source": "s"}}, r"toy.*files"),
    "split-int": ({"toy": {"files": {"train": 3}}}, r"toy.*files\.train"),
    "n_samples-many": (
        {"toy": {"files": {"train": {**_MF_SPLIT, "n_samples": "many"}}}},
        r"toy.*n_samples.*integer",
    ),
    "n_features-0": (
        {"toy": {"files": {"train": {**_MF_SPLIT, "n_features": 0}}}},
        r"toy.*n_features.*integer",
    ),
    "file-int": ({"toy": {"files": {"train": {**_MF_SPLIT, "file": 3}}}}, r"toy.*file.*string"),
    "classes-list": (
        {"toy": {"files": {"train": {**_MF_SPLIT, "classes": [1]}}}},
        r"toy.*classes",
    ),
    "sha256-int": ({"toy": {"files": {"train": {**_MF_SPLIT, "sha256": 5}}}}, r"toy.*sha256"),
    "entry-int": ({"toy": 3}, r"toy.*object"),
    "top-list": ([1, 2], r"object"),
    "ssl-sets-str": ({"ssl": {"sets": "x"}}, r"ssl.*sets"),
    "ssl-n_samples-str": (
        {"ssl": {"sets": {"Digit1": {"n_samples": "x"}}}},
        r"ssl.*n_samples.*integer",
    ),
    "utf16": (json.dumps({"toy": {"files": {"train": _MF_SPLIT}}}).encode("utf-16"), r"UTF-8"),
    "not-json": (b"{oops", r"JSON"),
}


def _mf_home(tag, manifest):
    home = _tmpdir() / f"mf-{tag}"
    _write_libsvm(home / "toy" / "toy.train.libsvm.bz2", "1 1:0.5 2:1.0\n-1 1:-0.5 2:2.0\n")
    raw = manifest if isinstance(manifest, bytes) else json.dumps(manifest).encode()
    (home / "MANIFEST.json").write_bytes(raw)
    return home


# --------------------------------------------------------------------------- the areas

TESTS = Path(__file__).resolve().parent

#: Every area of the sweep: its test file (relative to ``tests/``) and what it covers.
AREAS = {
    "estimators/test_estimators_adversarial.py": "every exported estimator: scale, offset, "
    "dtype, NaN/inf, seeds, extreme kernel parameters, hyper-parameters, label conventions",
    "test_parallel_adversarial.py": "dask and memmap inputs to every estimator",
    "kernels/test_kernels_adversarial.py": "kernel blocks, bandwidth rules, incomplete Cholesky",
    "test_constraints_adversarial.py": "pairwise constraints",
    "metrics/test_metrics_adversarial.py": "alignments, approximation errors, cluster scores",
    "persist/test_persist_adversarial.py": "saved files edited, truncated or forged; save/load "
    "with every kind of kernel",
    "datasets/test_datasets_adversarial.py": "LIBSVM files, data folders and MANIFEST.json",
    "test_cli_adversarial.py": "the lorak command line",
    "estimators/test_graph_factor_adversarial.py": "graph factors and the semi-supervised "
    "models: every graph kind under shift and scale, degenerate graphs, wrong arguments "
    "to every public method",
}


def gather() -> dict[str, list[Case]]:
    """Every area's table, by area file: the module pytest imported (by its base name)
    or, when run as a script, the file loaded here under that name."""
    import importlib.util

    out = {}
    for rel in AREAS:
        path = TESTS / rel
        mod = sys.modules.get(path.stem)
        if mod is None or Path(mod.__file__).resolve() != path:
            spec = importlib.util.spec_from_file_location(path.stem, path)
            mod = importlib.util.module_from_spec(spec)
            sys.modules[path.stem] = mod
            spec.loader.exec_module(mod)
        out[rel] = mod.CASES
    return out

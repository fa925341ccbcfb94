"""lorak._core.rows: where the rows live, resolved once (the kinds, gathering rows, the labeled
rows gathered once and their features kept, row methods mapped as the row methods read
a memmap or a dask array, what a kind refuses) — and the estimators and models asking
it instead of testing the kind themselves."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import lorak
from _tolerance import assert_same_to_roundoff
from lorak import Nystroem
from lorak._core.rows import Rows, hand_down, host_targets, refuse_device, resolve_rows
from lorak._core.targets import SemiSupervisedTargets

SRC = Path(__file__).resolve().parents[2] / "src" / "lorak"


@pytest.fixture
def X(rng):
    return rng.standard_normal((40, 3))


def _est():
    return Nystroem(n_components=5, random_state=0)


def test_kinds(X, tmp_path):
    assert resolve_rows(_est(), X).kind == "numpy"
    assert resolve_rows(_est(), X.tolist()).kind == "numpy"
    assert resolve_rows(_est(), sp.csr_matrix(X)).kind == "sparse"
    mm = np.memmap(tmp_path / "X.dat", dtype=X.dtype, mode="w+", shape=X.shape)
    mm[:] = X
    rows = resolve_rows(_est(), mm)
    assert (rows.kind, rows.is_chunked, rows.is_lazy) == ("memmap", True, False)
    assert rows.source is mm
    da = pytest.importorskip("dask.array")
    rows = resolve_rows(_est(), da.from_array(X, chunks=(7, 3)))
    assert (rows.kind, rows.is_chunked, rows.is_lazy, rows.n_rows) == ("dask", True, True, 40)
    xs = pytest.importorskip("array_api_strict")
    assert resolve_rows(_est(), xs.asarray(X)).kind == "numpy"  # dispatch off: a copy
    with lorak.config_context(array_api_dispatch=True):
        rows = resolve_rows(_est(), xs.asarray(X.astype(np.float32)))
    assert (rows.kind, rows.on_device, rows.dtype) == ("array_api", True, np.float32)


def test_integers_become_float64_and_the_feature_count_is_recorded(X):
    est = _est()
    rows = resolve_rows(est, np.arange(12).reshape(4, 3))
    assert rows.dtype == np.float64 and est.n_features_in_ == 3


def test_resolved_rows_are_not_validated_again(X, monkeypatch):
    import lorak._core.rows as rows_module

    rows = resolve_rows(_est(), X)
    monkeypatch.setattr(rows_module, "validate_data", None)  # any call would fail
    other = _est()
    assert resolve_rows(other, rows) is rows and other.n_features_in_ == 3
    with pytest.raises(ValueError, match="X has 3 features, but Nystroem is expecting 4"):
        other.n_features_in_ = 4
        resolve_rows(other, rows, reset=False)


def test_y_is_validated_with_x_or_brought_into_memory_beside_dask(X):
    rows, y = resolve_rows(_est(), X, list(range(40)))
    assert rows.n_rows == 40 and np.asarray(y).shape == (40,)
    da = pytest.importorskip("dask.array")
    rows, y = resolve_rows(_est(), da.from_array(X, chunks=(7, 3)), da.arange(40, chunks=9))
    assert rows.is_lazy and isinstance(y, np.ndarray)


@pytest.mark.parametrize("kind", ["numpy", "sparse", "memmap", "dask"])
def test_take_reads_the_rows_asked(X, kind, tmp_path):
    idx = np.array([5, 0, 33, 7])
    given = {"numpy": X, "sparse": sp.csr_matrix(X)}.get(kind)
    if kind == "memmap":
        given = np.memmap(tmp_path / "X.dat", dtype=X.dtype, mode="w+", shape=X.shape)
        given[:] = X
    elif kind == "dask":
        given = pytest.importorskip("dask.array").from_array(X, chunks=(6, 3))
    block = resolve_rows(_est(), given).take(idx)
    assert block.kind == ("sparse" if kind == "sparse" else "numpy")
    got = block.data.toarray() if kind == "sparse" else block.data
    np.testing.assert_array_equal(got, X[idx])


def test_a_bad_row_gathered_from_a_memmap_is_named(X, tmp_path):
    bad = X.copy()
    bad[9, 1] = np.nan
    mm = np.memmap(tmp_path / "X.dat", dtype=X.dtype, mode="w+", shape=X.shape)
    mm[:] = bad
    rows = Rows(X, "memmap", mm)  # resolved before the file changed
    with pytest.raises(ValueError, match="row 9 contains NaN or infinity"):
        rows.take([2, 9])


def test_the_labeled_rows_are_gathered_once_and_keep_their_features(X, monkeypatch):
    rows = resolve_rows(_est(), X)
    reads = []
    orig = Rows.take
    monkeypatch.setattr(Rows, "take", lambda self, idx: reads.append(idx) or orig(self, idx))
    first = rows.labeled([1, 4, 9])
    assert rows.labeled(np.array([1, 4, 9])) is first and len(reads) == 1
    assert rows.labeled([1, 4]) is not first and len(reads) == 2

    calls = []

    class Factor:
        takes_resolved_input = True

        def transform(self, X):
            calls.append(X)
            return np.asarray(X.data) * 2

    f = Factor()
    block = rows.labeled([3, 5])
    assert block.features(f) is block.features(f) and len(calls) == 1
    assert isinstance(calls[0], Rows)
    rows.features(f), rows.features(f)  # other rows: computed each time, not kept
    assert len(calls) == 3


def test_a_factor_that_does_not_take_resolved_input_gets_the_array(X):
    rows = resolve_rows(_est(), X)

    class Plain:
        def transform(self, X):
            assert isinstance(X, np.ndarray)
            return X[:, :1]

    targets = SemiSupervisedTargets.of_classes(np.array([0, 3]), np.array(["b", "a"]), 40)
    np.testing.assert_array_equal(rows.features(Plain()), X[:, :1])
    assert hand_down(Plain(), rows, targets)[0] is rows.data
    y = hand_down(Plain(), rows, targets)[1]
    assert (y[0], y[3], np.count_nonzero(y == -1)) == (1, 0, 38)
    assert hand_down(_est(), rows, targets) == (rows, targets)


def test_map_reads_a_memmap_in_chunks_and_dask_lazily(rng, tmp_path, monkeypatch):
    W = rng.standard_normal((40, 1024))  # 8 KiB a row: 8 rows in the smallest budget
    est = _est().fit(W)
    want = est.transform(W)
    mm = np.memmap(tmp_path / "W.dat", dtype=W.dtype, mode="w+", shape=W.shape)
    mm[:] = W
    sizes = []
    orig = Nystroem.transform

    def spy(self, X):
        sizes.append(X.shape[0])
        return orig(self, X)

    monkeypatch.setattr(Nystroem, "transform", spy)
    with lorak.config_context(memory_budget=2**16):
        got = resolve_rows(_est(), mm).map(est, "transform")
    # 8-row and 6-row chunks against all 40 rows at once: the kernel rows' GEMMs have
    # other shapes, which a BLAS may round otherwise (OpenBLAS's Haswell kernels: 1-2
    # ulp in 49 of 200 entries), so the paths agree to round-off, not bit for bit
    assert_same_to_roundoff(got, want)
    assert sizes == [8] * 5
    da = pytest.importorskip("dask.array")
    lazy = resolve_rows(_est(), da.from_array(W, chunks=(6, 1024))).map(est, "transform")
    assert lazy.chunks[0][0] == 6
    assert_same_to_roundoff(lazy.compute(), want)


def test_what_a_kind_refuses(X):
    rows = resolve_rows(_est(), X)
    rows.refuse_lazy("no")
    rows.refuse_device("no")
    refuse_device(X, "no")
    da = pytest.importorskip("dask.array")
    with pytest.raises(TypeError, match="not on dask"):
        resolve_rows(_est(), da.from_array(X, chunks=5)).refuse_lazy("not on dask")
    xs = pytest.importorskip("array_api_strict")
    refuse_device(xs.asarray(X), "no")  # dispatch off: it becomes a NumPy copy
    with lorak.config_context(array_api_dispatch=True):
        with pytest.raises(TypeError, match="host only"):
            refuse_device(xs.asarray(X), "host only")
        with pytest.raises(TypeError, match="host only"):
            resolve_rows(_est(), xs.asarray(X)).refuse_device("host only")


def test_host_targets(X):
    y = np.arange(4)
    assert host_targets(y) is y and host_targets(None) is None
    da = pytest.importorskip("dask.array")
    assert isinstance(host_targets(da.arange(4, chunks=2)), np.ndarray)
    xs = pytest.importorskip("array_api_strict")
    assert isinstance(host_targets(xs.asarray([1, 2])), np.ndarray)


# ------------------------------------------------------------ the estimators ask


#: Calls that test where rows live, and the attributes of Rows that say it.
BACKEND_CALL = re.compile(r"\b(is_foreign|array_api_dispatched|is_dask_array|is_memmap)\(")
BACKEND_ATTR = re.compile(
    r"\.(is_lazy|is_chunked|on_device)\b|\bhasattr\(\w+, \"compute\"\)"
    r"|\bisinstance\(\w+, np\.(ndarray|memmap)\)"
)


def test_estimators_and_models_ask_the_rows_where_they_live():
    """Backend checks in ``estimators/`` and ``models/`` (a call or an ``isinstance`` that
    tests the kind, or an attribute of the resolved rows that says it): at most 20,
    where there were 71."""
    found = []
    for path in sorted([*SRC.glob("estimators/*.py"), *SRC.glob("models/*.py")]):
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#")[0]
            n = len(BACKEND_CALL.findall(code)) + len(BACKEND_ATTR.findall(code))
            found += [f"{path.name}:{i}"] * n
    assert len(found) <= 20, found


def test_models_read_capabilities_not_classes():
    """``models/`` reads no lorak estimator's class (no ``isinstance`` on it, no tuple of
    classes: a lorak class is only built, or subclassed) and reaches no private
    attribute of another object through ``getattr``: the factors and heads declare
    what they can do (``reports_mean_sq_norm``, ``takes_resolved_input``,
    ``linear_decision``, ``transform_product``)."""
    from sklearn.base import BaseEstimator

    public = {n: getattr(lorak, n) for n in dir(lorak)}
    public |= {n: getattr(lorak.models, n) for n in lorak.models.__all__}
    lorak_classes = {
        n for n, c in public.items() if isinstance(c, type) and issubclass(c, BaseEstimator)
    }
    for path in sorted(SRC.glob("models/*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        built = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
        bases = {id(b) for n in ast.walk(tree) if isinstance(n, ast.ClassDef) for b in n.bases}
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id in lorak_classes:
                assert id(node) in built | bases, (path.name, node.lineno, node.id)
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            if node.func.id in ("getattr", "hasattr") and len(node.args) > 1:
                attr, owner = node.args[1], node.args[0]
                name = str(attr.value) if isinstance(attr, ast.Constant) else ""
                private = name.startswith("_") and not name.endswith("__")  # not a protocol
                own = isinstance(owner, ast.Name) and owner.id == "self"
                assert own or not private, (path.name, node.lineno, name)

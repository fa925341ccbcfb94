"""lorak.save / lorak.load in the native format (``lorak.persist._native``): exact round
trip for every exported estimator, and safe refusal of truncated, tampered,
newer-version and non-allowlisted files."""

from __future__ import annotations

import io
import json
import sys
import warnings
import zipfile

import numpy as np
import pytest
from _persist_cases import (
    _METHODS,
    RECIPES,
    _assert_same,
    _cases,
    _data,
    _fit_generic,
    _nys,
)
from sklearn.base import clone

from lorak import (
    Nystroem,
    load,
    save,
)
from lorak.constraints import from_labels
from lorak.kernels import Gaussian, KernelBank, Laplacian, Polynomial
from lorak.persist import FORMAT_VERSION, PersistenceError


@pytest.mark.parametrize(("cls", "recipe"), _cases())
def test_round_trip_every_exported_estimator(cls, recipe, tmp_path):
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = _fit_generic(cls, X, y) if recipe is None else recipe(X, y)
    assert type(est) is cls
    path = tmp_path / "est.lorak"
    save(est, path)
    back = load(path)
    _assert_same(est, back)
    assert back.get_params(deep=False).keys() == est.get_params(deep=False).keys()
    X_new = _data(n=17, seed=1)[0]
    if getattr(est, "n_features_in_", X.shape[1]) == X.shape[1]:
        used = 0
        for method in _METHODS:
            if not hasattr(est, method):
                continue
            try:
                expected = getattr(est, method)(X_new.astype(np.float64))
            except NotImplementedError:  # e.g. transductive SimpleNPKL.transform
                continue
            got = getattr(back, method)(X_new.astype(np.float64))
            _assert_same(expected, got, method)
            used += 1
        if cls.__name__ != "SimpleNPKL":
            assert used >= 1, f"{cls.__name__}: no prediction method compared"
    # the loaded estimator is a working scikit-learn estimator
    clone(back)
    save(back, tmp_path / "again.lorak")
    _assert_same(load(tmp_path / "again.lorak"), est)


def test_simple_npkl_kernel_entries_survive(tmp_path):
    X, y = _data()
    est = RECIPES["SimpleNPKL"][0](X, y)
    save(est, tmp_path / "n.lorak")
    back = load(tmp_path / "n.lorak")
    pairs = np.array([[0, 1], [2, 5], [7, 7]])
    np.testing.assert_array_equal(back.kernel_entries(pairs), est.kernel_entries(pairs))


def test_unfitted_estimator_and_parameters(tmp_path):
    est = Nystroem(kernel=Laplacian(bandwidth=2.0), n_components=7, random_state=None)
    save(est, tmp_path / "u.lorak")
    back = load(tmp_path / "u.lorak")
    assert back.get_params() == est.get_params()
    X = _data()[0]
    np.testing.assert_array_equal(
        clone(back).set_params(random_state=0).fit(X).transform(X),
        clone(est).set_params(random_state=0).fit(X).transform(X),
    )


def test_generator_random_state_keeps_its_stream(tmp_path):
    g = np.random.default_rng(7)
    g.standard_normal(3)
    est = Nystroem(n_components=5, random_state=g)
    save(est, tmp_path / "g.lorak")
    g2 = load(tmp_path / "g.lorak").random_state
    assert g2 is not g
    np.testing.assert_array_equal(g2.standard_normal(4), g.standard_normal(4))
    rs = np.random.RandomState(3)
    save(Nystroem(random_state=rs), tmp_path / "r.lorak")
    rs2 = load(tmp_path / "r.lorak").random_state
    np.testing.assert_array_equal(rs2.rand(3), rs.rand(3))


def test_kernels_banks_and_constraints_round_trip(tmp_path):
    X, y = _data()
    objs = [
        Gaussian(bandwidth="median"),
        Polynomial(degree=2, gamma=0.5),
        KernelBank.gaussian(factors=[0.5, 2.0]),
        KernelBank.gaussian(factors=[0.5, 2.0]).resolve(X),
        KernelBank(["linear", Laplacian(gamma=0.3)]),
        from_labels(y, random_state=0),
        {"nested": [1, 2.5, float("nan"), (3, "a"), {4, 5}, None, np.float32(1.5)]},
    ]
    for i, obj in enumerate(objs):
        save(obj, tmp_path / f"{i}.lorak")
        back = load(tmp_path / f"{i}.lorak")
        _assert_same(obj, back)
    bank = objs[3]
    back = load(tmp_path / "3.lorak")
    for a, b in zip(bank.blocks(X, X[:5]), back.blocks(X, X[:5]), strict=True):
        np.testing.assert_array_equal(a, b)


def test_shared_arrays_stay_shared(tmp_path):
    a = np.arange(6.0)
    save({"x": a, "y": a}, tmp_path / "s.lorak")
    back = load(tmp_path / "s.lorak")
    assert back["x"] is back["y"]


# ----------------------------------------------------------------------------- refusals


def test_persistence_error_is_a_value_error():
    assert issubclass(PersistenceError, ValueError)


def test_callable_kernel_is_refused_at_save(tmp_path):
    est = Nystroem(kernel=lambda A, B: A @ B.T, n_components=5, random_state=0)
    with pytest.raises(PersistenceError, match="callable"):
        save(est, tmp_path / "c.lorak")
    assert not any(p.name.startswith("c.lorak") for p in tmp_path.iterdir())


def test_unknown_object_is_refused_at_save(tmp_path):
    class Foreign:
        pass

    with pytest.raises(PersistenceError, match="allowlist"):
        save({"x": Foreign()}, tmp_path / "f.lorak")


def _saved(tmp_path):
    X, y = _data()
    est = _nys().fit(X)
    path = tmp_path / "est.lorak"
    save(est, path)
    return path, est


def _members(path):
    with zipfile.ZipFile(path) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def _write(path, members):
    with zipfile.ZipFile(path, "w") as zf:
        for n, b in members.items():
            zf.writestr(n, b)


def _rehash(members):
    """Recompute the checksum, as an attacker editing the file could."""
    from lorak.persist._native import digest

    header = json.loads(members["lorak.json"])
    header["sha256"] = digest(members["state.json"], members["arrays.npz"])
    members["lorak.json"] = json.dumps(header).encode()
    return members


def test_newer_format_version_is_refused(tmp_path):
    path, _ = _saved(tmp_path)
    m = _members(path)
    header = json.loads(m["lorak.json"])
    header["format_version"] = FORMAT_VERSION + 1
    m["lorak.json"] = json.dumps(header).encode()
    _write(path, m)
    with pytest.raises(PersistenceError, match=r"format_version 2 .*newer"):
        load(path)


@pytest.mark.parametrize("keep", [0.0, 0.3, 0.6, 0.95])
def test_truncated_file_is_refused(tmp_path, keep):
    path, _ = _saved(tmp_path)
    raw = path.read_bytes()
    path.write_bytes(raw[: int(len(raw) * keep)])
    with pytest.raises(PersistenceError, match=r"truncated|not a lorak|corrupt"):
        load(path)


@pytest.mark.parametrize("member", ["state.json", "arrays.npz"])
def test_tampered_file_fails_the_checksum(tmp_path, member):
    path, _ = _saved(tmp_path)
    m = _members(path)
    raw = bytearray(m[member])
    if member == "state.json":
        raw = bytearray(raw.replace(b'"n_components": 10', b'"n_components": 11'))
        assert raw != m[member]
    else:
        raw[-200] ^= 0x01  # one bit of an array
    m[member] = bytes(raw)
    _write(path, m)
    with pytest.raises(PersistenceError, match="checksum"):
        load(path)


@pytest.mark.parametrize(
    "name", ["os:system", "builtins:eval", "subprocess:Popen", "lorak_evil_module:Payload"]
)
def test_class_outside_the_allowlist_is_refused(tmp_path, name):
    path, _ = _saved(tmp_path)
    m = _members(path)
    tree = json.loads(m["state.json"])
    tree["class"] = name
    m["state.json"] = json.dumps(tree).encode()
    _write(path, _rehash(m))
    with pytest.raises(PersistenceError, match="allowlist"):
        load(path)
    assert "lorak_evil_module" not in sys.modules


def test_nested_class_outside_the_allowlist_is_refused(tmp_path):
    path, _ = _saved(tmp_path)
    m = _members(path)
    tree = json.loads(m["state.json"])
    tree["state"]["kernel_"]["class"] = "sklearn.utils._testing:MinimalClassifier"
    m["state.json"] = json.dumps(tree).encode()
    _write(path, _rehash(m))
    with pytest.raises(PersistenceError, match="MinimalClassifier"):
        load(path)


def test_pickled_array_is_refused(tmp_path):
    path, _ = _saved(tmp_path)
    m = _members(path)
    buf = io.BytesIO()
    with np.load(io.BytesIO(m["arrays.npz"])) as npz:
        arrays = dict(npz)
    first = sorted(arrays)[0]
    arrays[first] = np.array([print], dtype=object)  # needs pickle to read
    np.savez(buf, **arrays)
    m["arrays.npz"] = buf.getvalue()
    _write(path, _rehash(m))
    with pytest.raises(PersistenceError, match=r"safely|pickle"):
        load(path)


def test_not_a_lorak_file(tmp_path):
    p = tmp_path / "x.npz"
    np.savez(p, a=np.zeros(3))
    with pytest.raises(PersistenceError, match="not a complete lorak file"):
        load(p)
    p2 = tmp_path / "x.txt"
    p2.write_text("hello")
    with pytest.raises(PersistenceError, match="not a lorak file"):
        load(p2)
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "missing.lorak")


def test_compressed_members_are_refused(tmp_path):
    """No decompression bomb: lorak writes stored members and accepts only those."""
    path, _ = _saved(tmp_path)
    m = _members(path)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for n, b in m.items():
            zf.writestr(n, b)
    with pytest.raises(PersistenceError, match="compressed"):
        load(path)
    # a compressed array archive inside (np.savez_compressed) is refused as well
    with np.load(io.BytesIO(m["arrays.npz"])) as npz:
        arrays = dict(npz)
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    m["arrays.npz"] = buf.getvalue()
    _write(path, _rehash(m))
    with pytest.raises(PersistenceError, match="compressed"):
        load(path)


def test_deeply_nested_state_is_refused(tmp_path):
    path, _ = _saved(tmp_path)
    m = _members(path)
    m["state.json"] = ("[" * 100_000 + "]" * 100_000).encode()
    _write(path, _rehash(m))
    with pytest.raises(PersistenceError):
        load(path)


def test_load_never_runs_code_of_the_class(tmp_path, monkeypatch):
    """Rebuilding uses object.__new__ and the attribute dict: no __init__/__setstate__."""
    X, _ = _data()
    est = _nys().fit(X)
    save(est, tmp_path / "e.lorak")
    calls = []

    def spy(self, *a, **k):
        calls.append(type(self).__name__)

    monkeypatch.setattr(Nystroem, "__init__", spy)
    monkeypatch.setattr(Nystroem, "__setstate__", spy, raising=False)
    back = load(tmp_path / "e.lorak")
    assert calls == []
    np.testing.assert_array_equal(back.transform(X), est.transform(X))


def test_feature_names_from_a_dataframe_round_trip(tmp_path):
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame(_data()[0], columns=["a", "b", "c", "d"])
    est = _nys().fit(X)
    save(est, tmp_path / "df.lorak")
    back = load(tmp_path / "df.lorak")
    _assert_same(est, back)
    np.testing.assert_array_equal(back.transform(X), est.transform(X))
    with pytest.raises(ValueError, match="feature names"):
        back.transform(X.rename(columns={"a": "z"}))

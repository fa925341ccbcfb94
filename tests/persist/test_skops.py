"""skops compatibility: every lorak estimator round-trips through skops.io with
``trusted=lorak.persist.skops_trusted_types()``; without it skops refuses; lorak.save/load
read and write skops files with the same allowlist."""

from __future__ import annotations

import sys
import warnings
import zipfile

import numpy as np
import pytest
import scipy.sparse as sp
from _persist_cases import _METHODS, _assert_same, _cases, _data, _fit_generic
from sklearn.base import clone

import lorak
from lorak.persist import PersistenceError, skops_trusted_types, trusted_classes

skops_io = pytest.importorskip("skops.io")
from skops.io.exceptions import UntrustedTypesFoundException  # noqa: E402


def _fit(cls, recipe):
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _fit_generic(cls, X, y) if recipe is None else recipe(X, y)


def _compare_predictions(est, back):
    X_new = _data(n=17, seed=1)[0]
    used = 0
    for method in _METHODS:
        if not hasattr(est, method):
            continue
        try:
            expected = getattr(est, method)(X_new)
        except NotImplementedError:  # transductive SimpleNPKL.transform
            continue
        _assert_same(expected, getattr(back, method)(X_new), method)
        used += 1
    return used


@pytest.mark.parametrize(("cls", "recipe"), _cases())
def test_skops_round_trip_every_exported_estimator(cls, recipe, tmp_path):
    est = _fit(cls, recipe)
    path = tmp_path / "est.skops"
    skops_io.dump(est, path)
    trusted = skops_trusted_types()
    # the file's non-default types are all on lorak's list ...
    untrusted = skops_io.get_untrusted_types(file=path)
    assert untrusted and set(untrusted) <= set(trusted)
    # ... and skops refuses the file without them
    with pytest.raises(UntrustedTypesFoundException):
        skops_io.load(path)
    back = skops_io.load(path, trusted=trusted)
    _assert_same(est, back)
    used = _compare_predictions(est, back)
    if cls.__name__ != "SimpleNPKL":
        assert used >= 1, f"{cls.__name__}: no prediction method compared"
    clone(back)
    # lorak.load reads the same file
    _assert_same(lorak.load(path), est)


def test_skops_trusted_types_is_lorak_allowlist_plus_csr():
    names = skops_trusted_types()
    assert names == sorted(set(names))
    expected = {f"{c.__module__}.{c.__name__}" for c in trusted_classes().values()}
    expected |= {f"{c.__module__}.{c.__name__}" for c in (sp.csr_matrix, sp.csr_array)}
    assert set(names) == expected
    for name in ("lorak.estimators._nystrom.Nystroem", "lorak.kernels._bank.KernelBank"):
        assert name in names
    # nothing broad: no builtins, no functions, no modules, no other sparse formats
    assert not any(n.startswith(("builtins.", "numpy.", "os.", "operator.")) for n in names)
    assert {n.split(".")[0] for n in names} == {"lorak", "sklearn", "scipy"}
    assert [n for n in names if n.startswith("scipy.")] == sorted(
        f"{c.__module__}.{c.__name__}" for c in (sp.csr_array, sp.csr_matrix)
    )
    for n in names:  # each names a class that skops can look up
        module, _, cls_name = n.rpartition(".")
        assert isinstance(getattr(sys.modules[module], cls_name), type), n


def _my_kernel(A, B):
    return A @ B.T


def test_callable_kernel_stays_untrusted(tmp_path):
    X, _ = _data()
    est = lorak.Nystroem(kernel=_my_kernel, n_components=5, random_state=0).fit(X)
    path = tmp_path / "callable.skops"
    skops_io.dump(est, path)  # skops stores the function by name
    outside = set(skops_io.get_untrusted_types(file=path)) - set(skops_trusted_types())
    assert any("_my_kernel" in n for n in outside)
    with pytest.raises(UntrustedTypesFoundException):
        skops_io.load(path, trusted=skops_trusted_types())
    with pytest.raises(PersistenceError, match="_my_kernel"):
        lorak.load(path)
    with pytest.raises(PersistenceError, match="_my_kernel"):
        lorak.save(est, tmp_path / "refused.skops", format="skops")
    assert not (tmp_path / "refused.skops").exists()


def test_save_format_skops_round_trip_and_errors(tmp_path):
    X, y = _data()
    est = lorak.LSSVC(lorak.Nystroem(n_components=10, random_state=0)).fit(X, y)
    path = tmp_path / "lssvc.skops"
    lorak.save(est, path, format="skops")
    with zipfile.ZipFile(path) as zf:
        assert "schema.json" in zf.namelist() and "lorak.json" not in zf.namelist()
    back = lorak.load(path)
    _assert_same(est, back)
    assert np.array_equal(back.decision_function(X), est.decision_function(X))
    # skops reads it with lorak's list
    _assert_same(skops_io.load(path, trusted=skops_trusted_types()), est)
    # the default format is still lorak's own
    lorak.save(est, tmp_path / "lssvc.lorak")
    with zipfile.ZipFile(tmp_path / "lssvc.lorak") as zf:
        assert "lorak.json" in zf.namelist()
    with pytest.raises(ValueError, match="format"):
        lorak.save(est, tmp_path / "x", format="pickle")
    with pytest.raises(TypeError, match="trusted"):
        lorak.load(path, trusted=["lorak.estimators.Nystroem"])


def test_truncated_skops_file_is_refused(tmp_path):
    X, _ = _data()
    path = tmp_path / "nys.skops"
    lorak.save(lorak.Nystroem(n_components=8, random_state=0).fit(X), path, format="skops")
    raw = path.read_bytes()
    # drop a data member but keep a readable archive: schema.json refers to a missing file
    with zipfile.ZipFile(path) as zf:
        members = {i.filename: zf.read(i) for i in zf.infolist()}
    gone = next(n for n in members if n.endswith(".npy"))
    broken = tmp_path / "broken.skops"
    with zipfile.ZipFile(broken, "w") as zf:
        for name, data in members.items():
            if name != gone:
                zf.writestr(name, data)
    with pytest.raises(PersistenceError, match="corrupt or truncated skops"):
        lorak.load(broken)
    cut = tmp_path / "cut.skops"
    cut.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(PersistenceError):
        lorak.load(cut)


def test_missing_skops_gives_a_clear_import_error(tmp_path, monkeypatch):
    X, _ = _data()
    est = lorak.Nystroem(n_components=8, random_state=0).fit(X)
    path = tmp_path / "nys.skops"
    lorak.save(est, path, format="skops")
    monkeypatch.setitem(sys.modules, "skops", None)
    monkeypatch.setitem(sys.modules, "skops.io", None)
    with pytest.raises(ImportError, match=r"lorak\[skops\]"):
        lorak.save(est, tmp_path / "again.skops", format="skops")
    with pytest.raises(ImportError, match=r"lorak\[skops\]"):
        lorak.load(path)
    # lorak's own format needs no skops
    lorak.save(est, tmp_path / "nys.lorak")
    _assert_same(lorak.load(tmp_path / "nys.lorak"), est)


def test_kernels_banks_constraints_and_generators_through_skops(tmp_path):
    from lorak.constraints import from_labels
    from lorak.kernels import Gaussian, KernelBank, Laplacian, Polynomial

    X, y = _data()
    g = np.random.default_rng(7)
    g.standard_normal(3)
    objs = [
        Gaussian(bandwidth="median"),
        Polynomial(degree=2, gamma=0.5),
        KernelBank.gaussian(factors=[0.5, 2.0]).resolve(X),
        KernelBank(["linear", Laplacian(gamma=0.3)]),
        from_labels(y, random_state=0),  # a dataclass holding CSR graphs
    ]
    for i, obj in enumerate(objs):
        path = tmp_path / f"{i}.skops"
        lorak.save(obj, path, format="skops")
        back = skops_io.load(path, trusted=skops_trusted_types())
        _assert_same(obj, back)
        _assert_same(lorak.load(path), obj)
    bank, back = objs[2], lorak.load(tmp_path / "2.skops")
    for a, b in zip(bank.blocks(X, X[:5]), back.blocks(X, X[:5]), strict=True):
        np.testing.assert_array_equal(a, b)
    # random states keep their stream (numpy Generator / RandomState, trusted by skops)
    rs = np.random.RandomState(3)
    for name, rng, draw in (("g", g, "standard_normal"), ("rs", rs, "rand")):
        lorak.save(lorak.Nystroem(random_state=rng), tmp_path / f"{name}.skops", format="skops")
        back = skops_io.load(tmp_path / f"{name}.skops", trusted=skops_trusted_types())
        assert back.random_state is not rng
        np.testing.assert_array_equal(getattr(back.random_state, draw)(4), getattr(rng, draw)(4))


def test_lorak_load_is_stricter_than_skops_defaults(tmp_path):
    # GaussianNB: trusted by skops by default, not in lorak's allowlist
    from sklearn.naive_bayes import GaussianNB

    X, y = _data()
    est = lorak.SemiSupervisedFactorClassifier(
        lorak.Nystroem(n_components=5, random_state=0), GaussianNB()
    ).fit(X, y)
    path = tmp_path / "nb.skops"
    skops_io.dump(est, path)
    back = skops_io.load(path, trusted=skops_trusted_types())  # skops's own decision
    assert np.array_equal(back.predict(X), est.predict(X))
    with pytest.raises(PersistenceError, match=r"sklearn\.naive_bayes\.GaussianNB"):
        lorak.load(path)
    assert np.array_equal(lorak.load(path, trusted=[GaussianNB]).predict(X), est.predict(X))
    with pytest.raises(PersistenceError, match="GaussianNB"):
        lorak.save(est, tmp_path / "refused.skops", format="skops")
    with pytest.raises(PersistenceError, match="GaussianNB"):  # as lorak's own format does
        lorak.save(est, tmp_path / "refused.lorak")


def test_tampered_skops_schema_naming_other_code_is_refused(tmp_path):
    X, _ = _data()
    path = tmp_path / "nys.skops"
    lorak.save(lorak.Nystroem(n_components=5, random_state=0).fit(X), path, format="skops")
    with zipfile.ZipFile(path) as zf:
        members = {i.filename: zf.read(i) for i in zf.infolist()}
    text = members["schema.json"].decode()
    assert '"__module__": "lorak.estimators._nystrom"' in text
    for module, name in (("os", "system"), ("builtins", "eval"), ("sklearn.linear_model", "Lasso")):
        bad = tmp_path / f"{name}.skops"
        schema = text.replace(
            '"__module__": "lorak.estimators._nystrom"', f'"__module__": "{module}"'
        )
        schema = schema.replace('"__class__": "Nystroem"', f'"__class__": "{name}"')
        with zipfile.ZipFile(bad, "w") as zf:
            for member, data in members.items():
                zf.writestr(member, schema if member == "schema.json" else data)
        with pytest.raises(PersistenceError, match=f"{module}.{name}"):
            lorak.load(bad)
        if module != "sklearn.linear_model":  # skops trusts sklearn estimators by default
            with pytest.raises(UntrustedTypesFoundException):
                skops_io.load(bad, trusted=skops_trusted_types())

"""The allowlist (``lorak.persist._allowlist``): what it holds, what it leaves out, and
classes added by the caller."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from _persist_cases import _data, _exported_estimators, _nys

from lorak import SemiSupervisedFactorClassifier, load, save
from lorak.persist import PersistenceError, register_trusted, trusted_classes


def test_allowlist_contents_and_registration(tmp_path):
    allow = trusted_classes()
    names = {c.__name__ for c in allow.values()}
    for cls in _exported_estimators():
        assert cls in allow.values(), cls
    assert {"LinearSVC", "LogisticRegression", "SVC", "Gaussian", "KernelBank"} <= names
    assert not any(
        c.__module__.split(".")[0] in ("os", "builtins", "subprocess") for c in allow.values()
    )

    from sklearn.neighbors import NearestCentroid

    est = SemiSupervisedFactorClassifier(_nys(), NearestCentroid())
    X, y = _data()
    est.fit(X, y)
    with pytest.raises(PersistenceError, match="NearestCentroid"):
        save(est, tmp_path / "nc.lorak")
    try:
        register_trusted(NearestCentroid)
        save(est, tmp_path / "nc.lorak")
        np.testing.assert_array_equal(load(tmp_path / "nc.lorak").predict(X), est.predict(X))
    finally:
        from lorak.persist._allowlist import EXTRA_TRUSTED

        EXTRA_TRUSTED.clear()
    with pytest.raises(PersistenceError, match="allowlist"):
        load(tmp_path / "nc.lorak")
    np.testing.assert_array_equal(
        load(tmp_path / "nc.lorak", trusted=[NearestCentroid]).predict(X), est.predict(X)
    )


def test_classes_of_other_packages_are_left_out(monkeypatch):
    """Only ``lorak`` and ``lorak.*`` modules are searched: a dataclass of another
    package whose name merely starts with "lorak" (the benchmark harness is
    ``lorak_bench``) is never rebuilt from a file, even once imported."""
    import dataclasses
    import types

    mod = types.ModuleType("lorak_elsewhere")

    @dataclasses.dataclass
    class Settings:
        x: int = 0

    Settings.__qualname__ = "Settings"  # as if defined at the module's top level
    Settings.__module__ = "lorak_elsewhere"
    mod.Settings = Settings
    monkeypatch.setitem(sys.modules, "lorak_elsewhere", mod)
    allow = trusted_classes()
    assert Settings not in allow.values()
    assert not [k for k in allow if k.startswith("lorak_")]


def test_register_trusted_takes_classes_only():
    with pytest.raises(TypeError, match="classes"):
        register_trusted(lambda: None)

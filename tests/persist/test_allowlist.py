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


def test_bench_classes_are_left_out(tmp_path):
    """The benchmark harness's classes are never rebuilt from a file, even once imported."""
    import lorak.bench  # noqa: F401  (imports the harness, so its classes are in sys.modules)
    from lorak.persist._allowlist import EXCLUDED_PACKAGES

    assert EXCLUDED_PACKAGES == ("lorak.bench",)
    bench_modules = [m for m in sys.modules if m.startswith("lorak.bench")]
    assert bench_modules
    assert not [k for k in trusted_classes() if k.startswith("lorak.bench")]


def test_register_trusted_takes_classes_only():
    with pytest.raises(TypeError, match="classes"):
        register_trusted(lambda: None)

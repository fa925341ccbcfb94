"""The names of ``lorak.learn`` (issue 49): ``__all__`` holds one entry per method, the
records it returns, the documented constants and the building blocks the harness times;
the other names the package imports are the math lorak's estimators and models import
from it; a name that left resolves for one release, with a DeprecationWarning."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import numpy as np
import pytest

import lorak.learn as L
from lorak.kernels import Gaussian

SRC = Path(__file__).resolve().parents[2] / "src" / "lorak"


def test_all_is_short_unique_and_resolves():
    assert len(L.__all__) <= 70
    assert len(set(L.__all__)) == len(L.__all__)
    assert all(hasattr(L, name) for name in L.__all__)


def test_one_fit_per_generalized_nystroem_method_and_no_alias():
    fits = sorted(n for n in vars(L) if n.startswith("fit_") and "nystr" in n)
    assert fits == ["fit_generalized_nystroem", "fit_mk_generalized_nystroem"]
    for name in L.__all__:  # a public function is exported under its own name
        obj = getattr(L, name)
        if inspect.isfunction(obj):
            assert obj.__name__ == name, name


def _imported_from_learn() -> set[str]:
    """The names the library's modules outside ``lorak.learn`` import from it."""
    names = set()
    for path in SRC.rglob("*.py"):
        if path.relative_to(SRC).parts[0] == "learn":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (
                (node.level and node.module == "learn") or node.module == "lorak.learn"
            ):
                names |= {alias.name for alias in node.names}
    return names


def test_the_names_outside_all_are_what_the_library_imports():
    """Nothing private kept 'just in case': each imported name that is not public is
    imported by one of lorak's estimators or models (or is a deprecated alias, for one
    release)."""
    public = set(L.__all__)
    imported = {
        n
        for n, v in vars(L).items()
        if not n.startswith("_")
        and not inspect.ismodule(v)
        and not (inspect.getdoc(v) or "").startswith("Deprecated")
    }
    assert imported - public == _imported_from_learn() - public


@pytest.mark.parametrize("name", sorted(L._DEPRECATED))
def test_a_name_that_left_warns_for_one_release(name):
    assert name not in L.__all__ and name not in vars(L)
    with pytest.warns(DeprecationWarning, match=f"lorak.learn.{name} is deprecated"):
        obj = getattr(L, name)
    assert callable(obj)


def test_a_name_never_there_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'fit_nothing'"):
        L.fit_nothing  # noqa: B018


def test_the_old_prior_gamma_entry_is_the_option_of_the_one_fit():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((24, 3))
    X[:, 0] += 2.0 * (np.arange(24) % 2)
    y = np.arange(24) % 2
    E = Gaussian(bandwidth=2.0)(X, X[:8])
    Els, K, ts = [E, E[:, :6].copy(), E[:, :5].copy()], L.ideal_kernel(y, centered=True), [0, 1, 2]
    with pytest.warns(DeprecationWarning):
        old = L.fit_generalized_nystroem_prior_gamma
    fit, sel = old(Els, K, y=y, ts=ts, lam_grid=[0.1, 10.0], rng=0)
    ref = L.fit_generalized_nystroem(
        Els, None, K, y=y, prior_gammas=ts, lam_grid=[0.1, 10.0], rng=0
    )
    np.testing.assert_array_equal(fit.S, ref.S)
    assert sel.t == ref.prior_gamma_cv.t and sel is fit.prior_gamma_cv
    with pytest.raises(ValueError, match="W must be None"):
        L.fit_generalized_nystroem(Els, np.eye(8), K, y=y, prior_gammas=ts)
    with pytest.raises(ValueError, match="criterion must be 'cv', not 'paper'"):
        L.fit_generalized_nystroem(Els, None, K, y=y, prior_gammas=ts, criterion="paper")

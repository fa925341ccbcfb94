"""scikit-learn's own Nystroem tests, run against :class:`lorak.Nystroem`.

The README calls ``lorak.Nystroem`` a drop-in for
``sklearn.kernel_approximation.Nystroem``; this file keeps that claim tested. It
imports the Nyström tests of ``sklearn/tests/test_kernel_approximation.py`` (shipped
in scikit-learn's wheel) and runs them with the module's ``Nystroem`` name bound to
lorak's. The array-API test skips unless an array library and ``SCIPY_ARRAY_API`` are
there, as it does in scikit-learn's own run.
"""

from __future__ import annotations

import pytest

import lorak

sk = pytest.importorskip("sklearn.tests.test_kernel_approximation")

from sklearn.tests.test_kernel_approximation import (  # noqa: E402
    test_nystroem_approximation,
    test_nystroem_approximation_array_api,
    test_nystroem_callable,
    test_nystroem_component_indices,
    test_nystroem_default_parameters,
    test_nystroem_poly_kernel_params,
    test_nystroem_precomputed_kernel,
    test_nystroem_singular_kernel,
)

SUITE = (
    test_nystroem_approximation,
    test_nystroem_approximation_array_api,
    test_nystroem_callable,
    test_nystroem_component_indices,
    test_nystroem_default_parameters,
    test_nystroem_poly_kernel_params,
    test_nystroem_precomputed_kernel,
    test_nystroem_singular_kernel,
)


@pytest.fixture(autouse=True)
def _lorak_nystroem(monkeypatch):
    """Rebind the name the imported tests look up at call time."""
    monkeypatch.setattr(sk, "Nystroem", lorak.Nystroem)


def test_suite_is_complete():
    """A Nyström test added to scikit-learn's file must be added here too."""
    names = {n for n in dir(sk) if n.startswith("test_nystroem")}
    assert names == {f.__name__ for f in SUITE}


def test_rebinding_reaches_the_tests():
    assert sk.Nystroem is lorak.Nystroem

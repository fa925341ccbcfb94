"""Every lorak name the benchmark scripts and examples import exists.

The scripts import some names inside functions (heavy optional parts), where loading
the module does not reach them; a layout move that renames a module or a helper would
then break a benchmark only when its slow branch runs. This reads every
``from lorak… import …`` statement of benchmarks/*.py and examples/*.py, at any depth,
and resolves it.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted([*ROOT.glob("benchmarks/*.py"), *ROOT.glob("examples/*.py")])


def _lorak_imports(path: Path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "lorak" or node.module.startswith("lorak."):
                for alias in node.names:
                    yield node.lineno, node.module, alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "lorak" or alias.name.startswith("lorak."):
                    yield node.lineno, alias.name, None


def _resolves(module: str, name: str | None) -> bool:
    mod = importlib.import_module(module)
    if name is None or hasattr(mod, name):
        return True
    try:  # a submodule imported by name
        importlib.import_module(f"{module}.{name}")
    except ImportError:
        return False
    return True


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_lorak_import_of_a_script_resolves(path):
    missing = [
        f"{path.name}:{line}: from {module} import {name}"
        for line, module, name in _lorak_imports(path)
        if not _resolves(module, name)
    ]
    assert missing == []


def test_the_scripts_are_found():
    assert any(p.name == "bench_nystrom.py" for p in SCRIPTS)

"""Every lorak and lorak_bench name the benchmark scripts and examples import exists;
the benchmark scripts read no clock of their own, time through the harness's public
timing helper (``lorak_bench.timing``) and import no private module of either package
(only what the packages export); the examples need the library alone.

The scripts import some names inside functions (heavy optional parts), where loading
the module does not reach them; a layout move that renames a module or a helper would
then break a benchmark only when its slow branch runs. This reads every
``from lorak… import …`` statement of bench/scripts/*.py and examples/*.py, at any depth,
and resolves it.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from _bench_testing import SCRIPTS as SCRIPTS_DIR

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted([*SCRIPTS_DIR.glob("*.py"), *ROOT.glob("examples/*.py")])


def _ours(module: str) -> bool:
    """A module of lorak or of its harness, lorak_bench."""
    return module.split(".")[0] in ("lorak", "lorak_bench")


def _lorak_imports(path: Path):
    yield from _lorak_imports_of(ast.parse(path.read_text(encoding="utf-8")))


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


# ---------------------------------------------------------------- timing and privacy

BENCHMARKS = sorted(SCRIPTS_DIR.glob("*.py"))
#: Scripts another change is writing; they adopt lorak_bench's timing helpers after.
NOT_YET: set[str] = set()
#: What a script must not call to time itself: lorak_bench.timing's Stopwatch,
#: time_call, Record and load_average do it (with a ``sync`` hook for asynchronous
#: device work), and record the load average beside the numbers.
_TIME = ("perf_counter", "process_time", "time", "monotonic", "thread_time")
CLOCKS = {("time", n) for name in _TIME for n in (name, f"{name}_ns")} | {("os", "getloadavg")}

#: Private library modules a script may still reach into (script name -> modules),
#: each with the reason; a script joins only where no public name can do its job
#: (bench_gpu.py times ``lorak.kernels.upper_triangular_product``; study_kmeans_init.py
#: measures ``lorak.landmarks.kmeans_landmarks``'s options, both public;
#: study_ssl_regime_switch.py forces a regime by ``GraphRegularizedFactor(regime=...)``).
PRIVATE_LIBRARY_IMPORTS: dict[str, set[str]] = {}


def _clock_reads(tree):
    aliases = {}  # local name -> (module, function) for "from time import perf_counter"
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in ("time", "os"):
            for a in node.names:
                aliases[a.asname or a.name] = (node.module, a.name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if (node.value.id, node.attr) in CLOCKS:
                yield node.lineno, f"{node.value.id}.{node.attr}"
        elif isinstance(node, ast.Name) and aliases.get(node.id) in CLOCKS:
            yield node.lineno, ".".join(aliases[node.id])


def _private_modules(tree):
    """The private lorak modules a script imports (``lorak.x._y``, or ``_y`` from
    ``lorak.x``)."""
    for line, module, name in _lorak_imports_of(tree):
        full = module if name is None else f"{module}.{name}"
        parts = full.split(".")
        cut = next((i for i, p in enumerate(parts) if p.startswith("_")), None)
        if cut is not None:
            yield line, ".".join(parts[: cut + 1])


def _lorak_imports_of(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if _ours(node.module):
                for alias in node.names:
                    yield node.lineno, node.module, alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if _ours(alias.name):
                    yield node.lineno, alias.name, None


def _timing_imports(tree):
    """``(line, module, name)`` of every timing name a script imports from elsewhere than
    ``lorak_bench.timing``."""
    import lorak_bench.timing

    for line, module, name in _lorak_imports_of(tree):
        if name in lorak_bench.timing.__all__ and module != "lorak_bench.timing":
            yield line, module, name


@pytest.mark.parametrize(
    "path", [p for p in BENCHMARKS if p.name not in NOT_YET], ids=lambda p: p.name
)
def test_a_benchmark_script_times_with_lorak_bench_timing_and_imports_nothing_private(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert [f"{path.name}:{line}: {what}" for line, what in _clock_reads(tree)] == []
    private = {module for _, module in _private_modules(tree)}
    assert not {m for m in private if m.startswith("lorak_bench")}, private
    assert private <= PRIVATE_LIBRARY_IMPORTS.get(path.name, set()), private
    assert list(_timing_imports(tree)) == []


def test_the_private_import_list_names_scripts_that_still_need_it():
    for name, allowed in PRIVATE_LIBRARY_IMPORTS.items():
        tree = ast.parse((SCRIPTS_DIR / name).read_text(encoding="utf-8"))
        assert {m for _, m in _private_modules(tree)} == allowed, name


def test_examples_need_the_library_alone():
    for path in ROOT.glob("examples/*.py"):
        found = [m for _, m, _ in _lorak_imports(path) if m.split(".")[0] == "lorak_bench"]
        assert found == [], path.name


def test_the_scripts_are_found():
    assert any(p.name == "bench_nystrom.py" for p in SCRIPTS)


def test_the_scripts_live_in_the_bench_distribution_only():
    """One folder of benchmarks (issue 49): the scripts sit in ``bench/scripts`` beside
    the harness, their results of record in ``bench/results``; none at the root."""
    assert not list(ROOT.glob("benchmarks/*.py"))
    assert not (ROOT / "benchmarks" / "results").exists()
    assert (ROOT / "bench" / "results" / "README.md").is_file()

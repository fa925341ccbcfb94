"""The layout of ``src/lorak``, and of the benchmark harness beside it
(``bench/src/lorak_bench``, the lorak-bench distribution), checked from their source
with ``ast`` (nothing imported).

- The module import graph (every ``import``, at module level or inside a function) has
  no cycle, and no module imports a package above it except ``persist._allowlist``,
  whose allowlist is built from the package root (``import lorak`` imports every estimator).
- No function name is defined twice at module level, private names included: one
  helper per job, imported where it is needed.
- No reference to documents users of the package do not have.
- The library never imports the harness (``lorak bench`` hands over to it, the one
  exception); the harness imports only the library's public names.
"""

from __future__ import annotations

import ast
import collections
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "lorak"
#: The benchmark harness, a distribution of its own (``bench/``).
BENCH_SRC = ROOT / "bench" / "src" / "lorak_bench"

#: (importer, imported package) pairs allowed to point upwards.
UPWARD_ALLOWED = {("lorak.persist._allowlist", "lorak")}

#: Function names defined in two modules on purpose, with the reason.
DEFINED_TWICE_ALLOWED = {
    # two public functions users call by these names: lorak.load (a saved estimator)
    # and lorak.datasets.load (a benchmark data set)
    "load": {"lorak.persist", "lorak.datasets._loaders"},
}

#: The harness's package: its modules are checked beside the library's, by the same
#: rules, and for what they may import from the library.
BENCH = "lorak_bench"

#: (library module, harness module) imports allowed: ``lorak bench`` hands its
#: arguments over to ``lorak-bench`` when the harness is installed.
LIBRARY_TO_HARNESS_ALLOWED = {("lorak.cli", "lorak_bench.cli")}


def _modules(src: Path) -> dict[str, tuple[Path, bool]]:
    out = {}
    for path in sorted(src.rglob("*.py")):
        parts = list(path.relative_to(src.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        out[".".join(parts)] = (path, is_pkg)
    return out


LIBRARY_MODULES = _modules(SRC)
MODULES = {**LIBRARY_MODULES, **_modules(BENCH_SRC)}
TREES = {name: ast.parse(path.read_text(encoding="utf-8")) for name, (path, _) in MODULES.items()}


def _targets(module: str, is_pkg: bool, node) -> set[str]:
    """The lorak modules an import statement loads (a package for ``from pkg import x``
    unless x is itself a module)."""
    found = set()
    if isinstance(node, ast.Import):
        for alias in node.names:
            name = alias.name
            while name and name not in MODULES:
                name = name.rpartition(".")[0]
            if name:
                found.add(name)
        return found
    if node.level:
        base = module.split(".") if is_pkg else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if _root(target) not in ("lorak", BENCH):
        return found
    for alias in node.names:
        sub = f"{target}.{alias.name}"
        if sub in MODULES:
            found.add(sub)
        elif target in MODULES:
            found.add(target)
    return found


def _root(module: str) -> str:
    return module.split(".")[0]


def import_graph() -> dict[str, set[str]]:
    graph = {name: set() for name in MODULES}
    for name, tree in TREES.items():
        is_pkg = MODULES[name][1]
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                graph[name] |= _targets(name, is_pkg, node) - {name}
    return graph


def upward_imports(graph) -> set[tuple[str, str]]:
    return {(a, b) for a, deps in graph.items() for b in deps if a.startswith(b + ".")}


def cycles(graph) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def defined_twice(modules) -> dict[str, list[str]]:
    where = collections.defaultdict(list)
    for name in modules:
        for node in TREES[name].body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                where[node.name].append(name)
    return {k: sorted(v) for k, v in where.items() if len(v) > 1}


def _check_graph(scope):
    graph = import_graph()
    up = {e for e in upward_imports(graph) if scope(e[0])}
    assert up <= UPWARD_ALLOWED, f"imports of a package above the importer: {up - UPWARD_ALLOWED}"
    for a, b in upward_imports(graph):
        graph[a].discard(b)
    assert [c for c in cycles(graph) if any(scope(m) for m in c)] == []


def test_import_graph_has_no_cycle_and_one_upward_import():
    _check_graph(lambda m: _root(m) == "lorak")


def test_bench_import_graph_has_no_cycle_and_no_upward_import():
    _check_graph(lambda m: _root(m) == BENCH)


def test_the_library_does_not_import_the_harness():
    graph = import_graph()
    found = {(a, b) for a in LIBRARY_MODULES for b in graph[a] if _root(b) == BENCH}
    assert found <= LIBRARY_TO_HARNESS_ALLOWED, found - LIBRARY_TO_HARNESS_ALLOWED
    assert not [m for m in LIBRARY_MODULES if m.startswith("lorak.bench")]


def _names_imported_from_the_library(module: str):
    """``(module imported from, name)`` of every import of a lorak module by ``module``
    (``from lorak.x import y`` gives ``("lorak.x", "y")``, ``import lorak.x`` gives
    ``("lorak.x", None)``)."""
    for node in ast.walk(TREES[module]):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if _root(node.module) == "lorak":
                for alias in node.names:
                    yield node.module, alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if _root(alias.name) == "lorak":
                    yield alias.name, None


def test_the_harness_uses_only_the_public_api_of_the_library():
    """No ``from lorak._x import``, no ``lorak.sub._private``, no ``_name``: the harness
    imports what the library's packages export."""
    harness = [m for m in MODULES if _root(m) == BENCH]
    imported = [(m, s, n) for m in harness for s, n in _names_imported_from_the_library(m)]
    assert imported  # the check sees the harness's imports
    private = [
        (m, f"{source}:{name}")
        for m, source, name in imported
        if any(p.startswith("_") for p in source.split(".")) or (name or "").startswith("_")
    ]
    assert private == []


def test_chunked_machinery_is_a_leaf():
    graph = import_graph()
    assert graph["lorak._core.chunked"] <= {"lorak._core.config"}


#: The floor of the library: the shared machinery, below every subpackage.
CORE = "lorak._core"


def test_the_shared_machinery_is_the_floor():
    """``lorak._core`` (rows, backends, chunking, validation, config, linear algebra,
    the estimator base, the semi-supervised targets) imports nothing of lorak outside
    itself: every package stands on it."""
    graph = import_graph()
    core = [m for m in LIBRARY_MODULES if m == CORE or m.startswith(CORE + ".")]
    assert len(core) > 1
    outside = {
        (m, d) for m in core for d in graph[m] if not (d == CORE or d.startswith(CORE + "."))
    }
    assert outside == set()


def test_models_import_the_estimator_base_from_the_floor():
    """The models import the estimator base from ``lorak._core``, not the private
    ``lorak.estimators._base`` (the kernel-factor templates)."""
    graph = import_graph()
    found = {
        m
        for m in LIBRARY_MODULES
        if m.startswith("lorak.models") and "lorak.estimators._base" in graph[m]
    }
    assert found == set()


def test_estimators_import_no_private_module_of_another_package():
    graph = import_graph()
    for name in MODULES:
        if not name.startswith("lorak.estimators"):
            continue
        for dep in graph[name]:
            leaf = dep.rpartition(".")[2]
            other_package = not dep.startswith("lorak.estimators")
            nested = dep.count(".") >= 2  # lorak.<package>._<module>
            assert not (other_package and nested and leaf.startswith("_")), (name, dep)


def test_no_function_name_defined_twice_in_the_library():
    dup = defined_twice(list(LIBRARY_MODULES))
    for name, allowed in DEFINED_TWICE_ALLOWED.items():
        if set(dup.get(name, ())) <= allowed:
            dup.pop(name, None)
    assert dup == {}


#: Packages split into one module per concern: their modules share no private name
#: (what one module needs from another is public and exported by the package).
ONE_MODULE_PER_CONCERN = ("lorak.learn._gen_nystrom", "lorak.persist")


def test_modules_of_one_concern_each_share_no_private_name():
    for package in ONE_MODULE_PER_CONCERN:
        assert MODULES[package][1], package
        for name, tree in TREES.items():
            if not name.startswith(package + "."):
                continue
            shared = [
                (node.module, alias.name)
                for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.level == 1
                for alias in node.names
                if alias.name.startswith("_")
            ]
            assert shared == [], (name, shared)


def test_no_function_name_defined_twice_in_bench():
    bench = [m for m in MODULES if _root(m) == BENCH]
    assert bench
    assert defined_twice(bench) == {}


def test_no_reference_to_documents_outside_the_package():
    hits = [
        name
        for name, (path, _) in LIBRARY_MODULES.items()
        if "SPEC" in path.read_text(encoding="utf-8")
    ]
    assert hits == []


def test_no_reference_to_documents_outside_bench():
    hits = [
        name
        for name, (path, _) in MODULES.items()
        if _root(name) == BENCH and "SPEC" in path.read_text(encoding="utf-8")
    ]
    assert hits == []


# ---------------------------------------------------------------- the tests' own layout

TESTS = Path(__file__).resolve().parent


def test_test_folders_mirror_the_package():
    """``tests/<name>/`` holds the tests of ``lorak.<name>`` (a package or a module;
    ``tests/_core/`` those of the shared machinery, ``lorak._core``); suites that cut
    across the package stay at ``tests/``."""
    folders = [p.name for p in TESTS.iterdir() if p.is_dir() and not p.name.startswith(("__", "."))]
    assert folders
    for name in folders:
        assert (SRC / name).is_dir() or (SRC / f"{name}.py").is_file(), name


#: Flat test files (``tests/test_<name>.py``) that test no one module: suites over every
#: exported estimator or public function, across packages, and the repository itself.
CROSS_CUTTING = {
    "test_adversarial.py": "gathers every area's adversarial table (tests/_adversarial.py)",
    "test_bad_input.py": "one bad-input table over every public estimator and function",
    "test_common.py": "scikit-learn's estimator checks on every exported estimator",
    "test_properties.py": "hypothesis invariants of estimators, kernels and metrics",
    "test_scale_invariance.py": "every estimator with a data-driven bandwidth",
    "test_memory_guard.py": "no n x n array in any linear estimator (estimators, models)",
    "test_docs.py": "the documentation",
    "test_examples.py": "the examples",
    "test_layout.py": "this file",
}


def test_flat_test_files_test_a_top_level_module_or_cut_across():
    """A test file directly under ``tests/`` tests a top-level module,
    ``test_<module>[_<topic>].py`` for ``lorak/<module>.py`` or ``lorak/_<module>.py``,
    or is a cross-cutting suite listed in :data:`CROSS_CUTTING`; the tests of a
    subpackage live in its folder."""
    modules = {p.stem.lstrip("_") for p in SRC.glob("*.py") if p.stem != "__init__"}
    stray = []
    for path in sorted(TESTS.glob("test_*.py")):
        if path.name in CROSS_CUTTING:
            continue
        words = path.stem.removeprefix("test_").split("_")
        if not any("_".join(words[:k]) in modules for k in range(1, len(words) + 1)):
            stray.append(path.name)
    assert stray == []
    assert all((TESTS / name).is_file() for name in CROSS_CUTTING)


#: The harness's tests, collected in the same pytest run (``testpaths``).
BENCH_TESTS = ROOT / "bench" / "tests"


def test_test_file_names_are_unique():
    """pytest imports test files by their base name (rootdir mode, no ``__init__.py``):
    two folders, the harness's tests included, must not hold the same file name."""
    files = [p for p in TESTS.rglob("test_*.py") if "data" not in p.relative_to(TESTS).parts]
    files += list(BENCH_TESTS.rglob("*.py"))
    names = collections.Counter(p.name for p in files)
    assert [n for n, c in names.items() if c > 1] == []
    assert not list(TESTS.rglob("__init__.py")) and not list(BENCH_TESTS.rglob("__init__.py"))


def test_one_conftest_for_the_run():
    """One pytest run collects ``tests/`` and ``bench/tests``; test files import
    ``tests/conftest.py`` by its module name (``from conftest import readonly``), which
    a second ``conftest.py`` on the way would take over (and ``--doctest-modules``
    refuses two files of that name): the harness's helpers live in
    ``bench/tests/_bench_testing.py``."""
    found = sorted(
        p.relative_to(ROOT).as_posix()
        for p in ROOT.rglob("conftest.py")
        if not {".venv", "build", ".git"} & set(p.relative_to(ROOT).parts)
    )
    assert found == ["tests/conftest.py"]


def test_pytest_collects_the_library_and_the_harness():
    """One ``pytest`` run (the README's test command) runs both test trees and both
    packages' docstring examples."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    paths = config["tool"]["pytest"]["ini_options"]["testpaths"]
    assert paths == ["tests", "src/lorak", "bench/tests", "bench/src/lorak_bench"]
    assert all((ROOT / p).is_dir() for p in paths)


# ---------------------------------------------------------------- private names


def _package(module: str) -> str:
    """The package a module belongs to for the privacy rule: ``lorak.<pkg>`` for a module
    of a subpackage (``lorak._core`` for the shared machinery), the module itself for a
    top-level one (``lorak.cli``), ``lorak`` for the root."""
    return ".".join(module.split(".")[:2])


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_imports_across_packages() -> set[tuple[str, str, str]]:
    """(importer, module imported from, name) for every ``from … import _name`` whose
    module lies in another package, and every lorak module of another package bound to
    a private alias (``from .. import learn as _npkl``)."""
    found = set()
    for name, tree in TREES.items():
        is_pkg = MODULES[name][1]
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target != "lorak" and not target.startswith("lorak."):
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                owner = _package(sub if sub in MODULES else target)
                if owner == _package(name):
                    continue
                module_alias = sub in MODULES and _is_private(alias.asname or "")
                if _is_private(alias.name) or module_alias:
                    found.add((name, target, alias.name))
    return found


#: Private names still imported across packages, each owned by a change in progress
#: elsewhere; the test fails as soon as one of them is gone, so the list only shrinks.
PRIVATE_ACROSS_PENDING: set = set()


def test_no_private_name_is_imported_across_packages():
    """A name starting with ``_`` is private to its package (``lorak.<pkg>``; a
    top-level module is a package of its own): another package imports only what it
    exports. The modules of ``lorak._core`` (``validation``, ``chunked``, ``config``,
    ``linalg``, …) are the shared internals of the library: every package may import
    their public names, as the layout of one helper per job wants, but not their
    private ones."""
    found = private_imports_across_packages()
    assert found - PRIVATE_ACROSS_PENDING == set()
    assert PRIVATE_ACROSS_PENDING - found == set(), "fixed: drop it from the pending list"


#: Public function names both packages define on purpose: each command line's entry
#: point and parser (``lorak.cli`` and ``lorak_bench.cli``; the console scripts and the
#: docs' argparse pages name them ``module:main`` and ``module:build_parser``).
SHADOW_ALLOWED = {
    "main": {"lorak.cli", "lorak_bench.cli"},
    "build_parser": {"lorak.cli", "lorak_bench.cli"},
}


def test_bench_functions_do_not_shadow_library_functions():
    """A public function of ``lorak_bench`` does not reuse the name of a public
    function of the library (``bench._ssl.kmeans_landmarks`` did), the command lines'
    entry points aside."""
    library = list(LIBRARY_MODULES)
    bench = [m for m in MODULES if _root(m) == BENCH]

    def public_functions(modules):
        return {
            node.name
            for m in modules
            for node in TREES[m].body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and not node.name.startswith("_")
        }

    shared = public_functions(bench) & public_functions(library)
    for name in set(shared) & set(SHADOW_ALLOWED):
        where = {
            m
            for m in MODULES
            for node in TREES[m].body
            if isinstance(node, ast.FunctionDef) and node.name == name
        }
        if where <= SHADOW_ALLOWED[name]:
            shared.discard(name)
    assert shared == set()


def test_ci_runs_the_readme_test_command():
    """``.ci/run`` runs exactly the README's test command (after choosing LORAK_DATA)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("Run the tests:", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    command = block.strip()
    assert "-e ./bench" in command or '-e "./bench' in command
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert ci[-1] == command

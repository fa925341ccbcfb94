"""The documentation: its build helpers, and the whole site built with warnings as errors.

The build test runs the real build (``python -m sphinx -W -b html docs ...``: API
pages, the user guide with its plots, the gallery in quick mode, the reproduction notes)
and the doctest builder over the same sources (the guide's examples and every API
page's Examples section). It is skipped when the ``docs`` extra is not installed.
"""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS / "_ext"))
import lorak_docs  # noqa: E402

#: What the build imports: the docs extra, and the harness (the command-line page
#: documents ``lorak-bench``'s options from its parser).
DOCS_DEPS = (
    "sphinx",
    "numpydoc",
    "sphinx_gallery",
    "pydata_sphinx_theme",
    "sphinxarg",
    "lorak_bench",
)


def _have_docs_deps() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in DOCS_DEPS)


# ---------------------------------------------------------------- helpers (no sphinx)
def test_markdown_tables_become_list_tables():
    md = "### Title `x`\n\nSome *text* with |x| and f_.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    rst = "\n".join(lorak_docs.markdown_to_rst(md))
    assert ".. rubric:: Title ``x``" in rst
    assert ".. list-table::" in rst and "   * - 1\n     - 2" in rst
    assert r"\|x\|" in rst and r"f\_" in rst and r"\*text\*" in rst


def test_snapshot_keeps_settings_checks_and_paper_rows(tmp_path):
    run = tmp_path / "out" / "demo"
    run.mkdir(parents=True)
    rows = [
        {"dataset": "a", "method": "m", "params": {}, "metric": "err", "mean": 1.0,
         "std": 0.1, "reps": 2, "paper": {"mean": 1.5, "std": 0.2}},
        {"dataset": "a", "method": "m", "params": {}, "metric": "seconds", "mean": 3.0,
         "std": 0.0, "reps": 2, "paper": None},
    ]  # fmt: skip
    doc = {
        "experiment": "demo",
        "config": {"quick": True, "seed": 0, "parts": {"p": {"reps": 2, "datasets": []}}},
        "environment": {"numpy": "2.0"},
        "results": rows,
    }
    (run / "results.json").write_text(json.dumps(doc), encoding="utf-8")
    (run / "report.md").write_text(
        "# `demo` — A demo\n\nrun, total wall time **1.5 s** (x)\n\n## Checks\n\n"
        "| x | y |\n|---|---|\n| 1 | 2 |\n\n## Plots\n\nnone\n",
        encoding="utf-8",
    )
    (path,) = lorak_docs.snapshot(tmp_path / "out", tmp_path / "snap")
    snap = json.loads(path.read_text(encoding="utf-8"))
    assert snap["experiment"] == "demo" and snap["wall_seconds"] == 1.5
    assert snap["checks_markdown"].startswith("| x | y |")
    assert len(snap["paper_rows"]) == 1
    table = "\n".join(lorak_docs.paper_tables(snap))
    assert "1 ± 0.1 (1.5 ± 0.2)" in table


def test_committed_snapshots_cover_the_five_papers():
    names = {p.stem for p in (DOCS / "_data" / "bench").glob("*.json")}
    used = set()
    for page in (DOCS / "reproduction").glob("*.rst"):
        for line in page.read_text(encoding="utf-8").splitlines():
            if line.startswith(".. bench-report::"):
                used.add(line.split("::", 1)[1].strip())
    assert used <= names, f"pages name snapshots that are missing: {used - names}"
    assert len(list((DOCS / "reproduction").glob("*.rst"))) == 6  # index + five papers
    for name in used:
        lines = lorak_docs.bench_report_lines(name)
        assert lines and lines[0].startswith("Snapshot of ``lorak-bench")


def test_docstring_escapes_leave_code_alone():
    lines = [
        "alpha_ : ndarray of shape (n_constraints_,)",
        "    see ``must_link_`` and |x| with w_ and :attr:`embedding_`",
        ".. math::",
        "",
        "   |x|_2",
    ]
    lorak_docs.escape_docstring(None, "class", "x", None, None, lines)
    assert lines[0] == r"alpha_ : ndarray of shape (n_constraints\_,)"
    assert "``must_link_``" in lines[1] and r"\|x\|" in lines[1] and r"w\_" in lines[1]
    assert ":attr:`embedding_`" in lines[1]
    assert lines[-1] == "   |x|_2"


# ----------------------------------------------------------------------- the build
def _sphinx(builder, out, *extra, **env_extra):
    env = dict(os.environ, MPLBACKEND="Agg", **env_extra)
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", builder]
    cmd += [*extra, "-d", str(out / "doctrees"), str(DOCS), str(out / builder)]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)


@pytest.mark.slow
@pytest.mark.skipif(
    not _have_docs_deps(),
    reason="needs the docs extra and the harness (pip install .[docs] ./bench)",
)
def test_the_site_builds_without_warnings_and_its_doctests_pass(tmp_path):
    import shutil

    # the gallery's generated pages live in the source tree; remove them so that every
    # example really runs (sphinx-gallery skips scripts it has already run unchanged)
    shutil.rmtree(DOCS / "auto_examples", ignore_errors=True)
    html = _sphinx("html", tmp_path)
    assert html.returncode == 0, html.stdout[-3000:] + html.stderr[-6000:]
    assert "WARNING" not in html.stderr and "ERROR" not in html.stderr, html.stderr[-6000:]
    site = tmp_path / "html"

    import lorak

    # every public estimator has an API page with an Examples section
    for name in lorak.__all__:
        obj = getattr(lorak, name)
        if isinstance(obj, type):
            page = site / "api" / "generated" / f"lorak.{name}.html"
            assert page.exists(), name
            assert "Examples" in page.read_text(encoding="utf-8"), name
    # every example is in the gallery; those that draw show their figure
    for script in sorted((ROOT / "examples").glob("[a-z]*.py")):
        page = site / "auto_examples" / f"{script.stem}.html"
        assert page.exists(), script.name
        if '"--plot"' in script.read_text(encoding="utf-8"):
            assert "sphx_glr_" in page.read_text(encoding="utf-8"), script.name
            assert list((site / "_images").glob(f"sphx_glr_{script.stem}_*.png")), script.name
    for page in ("cli", "guide/choosing", "reproduction/zhang2017"):
        assert (site / f"{page}.html").exists(), page

    doctest = _sphinx("doctest", tmp_path, LORAK_DOCS_GALLERY="False")  # examples ran above
    report = (tmp_path / "doctest" / "output.txt").read_text(encoding="utf-8")
    assert doctest.returncode == 0, report[-6000:] + doctest.stderr[-3000:]
    assert "0 failures in tests" in report, report[-6000:]

"""Build helpers of the lorak documentation (a small Sphinx extension).

* API pages: one autosummary page per public module, generated from ``__all__`` at
  build time, so a new public name gets its page without editing the docs.
* Gallery: :func:`gallery_argv` gives each example its quick-mode arguments.
* Reproduction notes: the ``bench-report`` directive renders a committed snapshot of
  ``lorak-bench`` output (``docs/_data/bench/NAME.json``): the run's settings, the
  comparison with the paper that the experiment computed, and every result that has a
  paper number beside it. Nothing in those tables is typed by hand.

Refresh the snapshots from a bench output folder (``lorak-bench all --quick --out DIR``
or single runs into ``DIR/NAME``)::

    python docs/_ext/lorak_docs.py snapshot DIR
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path
from typing import ClassVar

DOCS = Path(__file__).resolve().parents[1]
BENCH_DATA = DOCS / "_data" / "bench"

#: The public subpackages documented in the API reference, in page order.
PUBLIC_MODULES = [
    ("lorak.kernels", "Kernels, bandwidth rules and chunked kernel evaluation"),
    ("lorak.landmarks", "Landmark selection"),
    ("lorak.decompose", "Low-rank decompositions (Nyström normalization, incomplete Cholesky)"),
    ("lorak.learn", "Kernel learning problems and their solutions"),
    ("lorak.solvers", "Convex solvers on the PSD cone"),
    ("lorak.models", "Downstream models on any factor"),
    ("lorak.metrics", "Approximation errors, alignments and cluster scores"),
    ("lorak.constraints", "Pairwise constraints"),
    ("lorak.datasets", "Datasets and generators"),
    ("lorak.plot", "Plots"),
    ("lorak.persist", "Saving and loading models"),
]


# --------------------------------------------------------------------------- API pages
def api_example_names(docs: Path = DOCS) -> list[str]:
    """Names with an Examples snippet in ``docs/api_examples/NAME.rst`` whose own
    docstring has no Examples section (a docstring's own examples win)."""
    import lorak

    out = []
    for p in sorted((docs / "api_examples").glob("*.rst")):
        doc = getattr(getattr(lorak, p.stem, None), "__doc__", None) or ""
        if not re.search(r"^\s*Examples\n\s*-{8}", doc, flags=re.M):
            out.append(p.stem)
    return out


def _kind(obj) -> str:
    import inspect

    if inspect.isclass(obj):
        return "class"
    if inspect.isfunction(obj) or inspect.isbuiltin(obj):
        return "function"
    if inspect.ismodule(obj):
        return "module"
    return "data"


def _public_names(modname: str) -> list[tuple[str, str]]:
    import importlib

    mod = importlib.import_module(modname)
    out = []
    for name in getattr(mod, "__all__", []):
        if name.startswith("_"):
            continue
        obj = getattr(mod, name)
        out.append((name, _kind(obj)))
    return out


def _table(module: str, names: list[str], template: str) -> list[str]:
    if not names:
        return []
    lines = [
        f".. currentmodule:: {module}",
        "",
        ".. autosummary::",
        "   :toctree: generated/",
        f"   :template: autosummary/{template}",
        "",
    ]
    lines += [f"   {n}" for n in names]
    return [*lines, ""]


def _section(module: str, items: list[tuple[str, str]], skip: set[str]) -> list[str]:
    out = []
    groups = [("Classes", "class", "class.rst"), ("Functions", "function", "function.rst")]
    groups.append(("Constants", "data", "data.rst"))
    for title, kind, template in groups:
        names = [n for n, k in items if k == kind and n not in skip]
        if names:
            out += [title, "-" * len(title) if module == "lorak" else "~" * len(title), ""]
            out += _table(module, names, template)
    return out


def write_api_pages(app=None) -> None:
    """Write ``docs/api/*.rst`` from the ``__all__`` of lorak and its public modules."""
    import importlib

    api = DOCS / "api"
    api.mkdir(exist_ok=True)
    top = importlib.import_module("lorak")
    top_items = [(n, k) for n, k in _public_names("lorak") if k != "module" and n != "__version__"]
    top_objs = {id(getattr(top, n)) for n, _ in top_items}
    pages = []
    text = [
        "Estimators and top-level functions",
        "==================================",
        "",
        ".. module:: lorak",
        "",
        "Everything below is importable as ``lorak.NAME``.",
        "",
        *_section("lorak", top_items, set()),
    ]
    _write(api / "lorak.rst", text)
    pages.append("lorak")
    for modname, title in PUBLIC_MODULES:
        mod = importlib.import_module(modname)
        items = _public_names(modname)
        # names re-exported at the top level are documented once, as lorak.NAME
        again = {n for n, _ in items if id(getattr(mod, n)) in top_objs}
        head = f"``{modname}`` — {title}"
        text = [
            f".. _api-{modname.replace('.', '-')}:",
            "",
            head,
            "=" * len(head),
            "",
            f".. automodule:: {modname}",
            "   :no-members:",
            "",
        ]
        if again:
            refs = ", ".join(f":obj:`lorak.{n}`" for n in sorted(again))
            text += [f"Also importable from the top level: {refs}.", ""]
        # classes re-exported at the top level have their page there (one page per
        # class: Sphinx knows a class by its defining module); functions get both
        text += _section(modname, items, {n for n, k in items if n in again and k == "class"})
        _write(api / f"{modname}.rst", text)
        pages.append(modname)
    index = [
        "API reference",
        "=============",
        "",
        "Every public name of lorak, from ``lorak.__all__`` and the ``__all__`` of each",
        "public module. Names that start with an underscore are private and may change.",
        "",
        ".. toctree::",
        "   :maxdepth: 1",
        "",
        *[f"   {p}" for p in pages],
        "",
    ]
    _write(api / "index.rst", index)


def _write(path: Path, lines: list[str]) -> None:
    text = "\n".join(lines) + "\n"
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


# ------------------------------------------------------------------------------ gallery
def _plot_file(src_file) -> Path:
    return Path(tempfile.gettempdir()) / f"lorak-example-{Path(src_file).stem}.png"


def gallery_argv(gallery_conf, script_vars) -> list[str]:
    """Command-line arguments of a gallery example: its quick mode, and ``--plot`` to a
    temporary PNG where the script draws its figure (:func:`plot_file_scraper` puts
    that file on the example's page)."""
    src = Path(script_vars["src_file"]).read_text(encoding="utf-8")
    argv = ["--quick"]
    if '"--plot"' in src:
        png = _plot_file(script_vars["src_file"])
        png.unlink(missing_ok=True)
        argv += ["--plot", str(png)]
    return argv


def plot_file_scraper(block, block_vars, gallery_conf):
    """The gallery's image scraper: the figure an example saved with ``--plot`` (so a
    script may close its figures), then any other figure it left open."""
    import shutil

    from sphinx_gallery.scrapers import figure_rst, matplotlib_scraper

    png = _plot_file(block_vars["src_file"])
    if png.exists():
        target = next(block_vars["image_path_iterator"])
        shutil.copyfile(png, target)
        png.unlink()
        import matplotlib.pyplot as plt

        plt.close("all")  # the saved file is the figure; open ones are the same
        return figure_rst([target], gallery_conf["src_dir"])
    return matplotlib_scraper(block, block_vars, gallery_conf)


def _get_sg_image_scraper():
    """sphinx-gallery's hook: ``image_scrapers = ("lorak_docs",)``."""
    return plot_file_scraper


class QuickstartFirst:
    """Gallery order: the quickstart, then the other examples by file name."""

    def __init__(self, src_dir):
        self.src_dir = src_dir

    def __call__(self, filename: str):
        return (Path(filename).name != "quickstart.py", Path(filename).name)

    def __repr__(self) -> str:  # sphinx-gallery keys its cache on the repr
        return "QuickstartFirst()"


# ------------------------------------------------------------------ bench snapshots
def _checks_section(report_md: str) -> str:
    """The '## Checks' section of a bench report.md, without its heading."""
    m = re.search(r"^## Checks\s*$(.*?)(?=^## |\Z)", report_md, flags=re.M | re.S)
    return m.group(1).strip() if m else ""


def snapshot(out_dir: Path, dest: Path = BENCH_DATA) -> list[Path]:
    """Copy the parts of each ``out_dir/NAME/results.json`` the docs use into
    ``dest/NAME.json``: settings, environment, the experiment's checks (the comparison
    with the paper it computed) and the result rows that have a paper number."""
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for res in sorted(Path(out_dir).glob("*/results.json")):
        doc = json.loads(res.read_text(encoding="utf-8"))
        report = res.with_name("report.md")
        report_md = report.read_text(encoding="utf-8") if report.exists() else ""
        cfg = doc.get("config", {})
        parts = {
            name: {
                "description": pc.get("description"),
                "reps": pc.get("reps"),
                "wall_seconds": pc.get("wall_seconds"),
                "datasets": [
                    {k: d.get(k) for k in ("label", "stand_in", "n_samples", "n_features")}
                    for d in pc.get("datasets", [])
                    if d.get("loaded", True)
                ],
            }
            for name, pc in cfg.get("parts", {}).items()
        }
        wall = re.search(r"total wall time \*\*([0-9.]+) s\*\*", report_md)
        title = re.search(r"^# `[^`]+` — (.*)$", report_md, flags=re.M)
        paper = re.search(r"^Paper: (.*)$", report_md, flags=re.M)
        snap = {
            "experiment": doc.get("experiment", res.parent.name),
            "title": title.group(1).strip() if title else "",
            "paper": paper.group(1).strip() if paper else "",
            "quick": bool(cfg.get("quick")),
            "seed": cfg.get("seed"),
            "started_utc": cfg.get("started_utc"),
            "wall_seconds": float(wall.group(1)) if wall else None,
            "environment": doc.get("environment", {}),
            "parts": parts,
            "checks_markdown": _checks_section(report_md),
            "paper_rows": [
                {k: r.get(k) for k in ("dataset", "method", "params", "metric", "mean", "std")}
                | {"reps": r.get("reps"), "paper": r.get("paper")}
                for r in doc.get("results", [])
                if r.get("paper") is not None
            ],
        }
        path = dest / f"{snap['experiment']}.json"
        path.write_text(json.dumps(snap, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(path)
    return written


# ----------------------------------------------------------- markdown → reST (tables)
def _inline(text: str) -> str:
    """Markdown code and emphasis to reST; other reST markup characters escaped."""
    parts = re.split(r"(`[^`]+`|\*\*[^*]+\*\*)", text)
    out = []
    for i, t in enumerate(parts):
        if i % 2 == 1:
            out.append("``" + t[1:-1] + "``" if t.startswith("`") else t)
            continue
        t = t.replace("\\", "\\\\")
        t = re.sub(r"([*|])", r"\\\1", t)
        t = re.sub(r"(?<![\w\\])([^\W\d]\w*?)_(?![\w])", r"\1\\_", t)
        out.append(t)
    return "".join(out)


def _cell(text: str) -> str:
    text = _inline(text.strip())
    return text if text else "\\ "


def markdown_to_rst(md: str) -> list[str]:
    """The small markdown subset of bench reports (headings, pipe tables, bullet
    lists, paragraphs) as reST lines."""
    out: list[str] = []
    lines = md.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            title = line.lstrip("#").strip()
            out += [f".. rubric:: {_inline(title)}", ""]
            i += 1
        elif line.startswith("|"):
            block = []
            while i < len(lines) and lines[i].startswith("|"):
                block.append(lines[i])
                i += 1
            rows = [[c for c in r.strip().strip("|").split("|")] for r in block]
            rows = [r for r in rows if not all(set(c.strip()) <= set("-: ") for c in r)]
            ncol = max(len(r) for r in rows)
            out += [".. list-table::", "   :header-rows: 1", "   :class: bench-table", ""]
            for r in rows:
                r = r + [""] * (ncol - len(r))
                out.append(f"   * - {_cell(r[0])}")
                out += [f"     - {_cell(c)}" for c in r[1:]]
            out.append("")
        elif line.strip():
            para = [line]
            i += 1
            while i < len(lines) and lines[i].strip() and not lines[i].startswith(("#", "|", "- ")):
                para.append(lines[i])
                i += 1
            out += [_inline(" ".join(p.strip() for p in para)), ""]
        else:
            i += 1
    return out


# ------------------------------------------------------------------ bench-report
def _fmt(x, digits: int = 3) -> str:
    if x is None:
        return "—"
    x = float(x)
    if x != x:
        return "—"
    if x == 0:
        return "0"
    ax = abs(x)
    if ax >= 100:
        return f"{x:.1f}"
    if ax >= 1:
        return f"{x:.{max(digits - 1, 1)}f}".rstrip("0").rstrip(".")
    return f"{x:.{digits}g}"


def _ms(mean, std) -> str:
    s = _fmt(mean)
    if std is not None and mean is not None and float(std) > 0:
        s += f" ± {_fmt(std, 2)}"
    return s


def _params(p: dict | None) -> str:
    if not p:
        return ""
    return ", ".join(f"{k}={v}" for k, v in p.items() if k != "part")


def paper_tables(snap: dict) -> list[str]:
    """One table per metric: a row per (dataset, settings), a column per method, each
    cell 'ours (paper)'."""
    rows = snap.get("paper_rows", [])
    if not rows:
        return []
    out = []
    metrics = list(dict.fromkeys(r["metric"] for r in rows))
    for metric in metrics:
        sel = [r for r in rows if r["metric"] == metric]
        methods = list(dict.fromkeys(r["method"] for r in sel))
        keys = list(dict.fromkeys((r["dataset"], _params(r["params"])) for r in sel))
        out += [
            f".. list-table:: ``{metric}``: ours (mean ± std over the repetitions) "
            "and, in brackets, the paper's",
            "   :header-rows: 1",
            "   :class: bench-table",
            "",
            "   * - data set",
        ]
        out += [f"     - {m}" for m in methods]
        for ds, ps in keys:
            label = ds + (f" ({ps})" if ps else "")
            out.append(f"   * - {label}")
            for m in methods:
                r = next(
                    (
                        r
                        for r in sel
                        if r["method"] == m and r["dataset"] == ds and _params(r["params"]) == ps
                    ),
                    None,
                )
                if r is None:
                    out.append("     - \\ ")
                    continue
                p = r["paper"] or {}
                ours, theirs = _ms(r["mean"], r["std"]), _ms(p.get("mean"), p.get("std"))
                out.append(f"     - {ours} ({theirs})")
        out.append("")
    return out


def run_summary(snap: dict) -> list[str]:
    mode = "quick" if snap.get("quick") else "full"
    env = snap.get("environment", {})
    wall = snap.get("wall_seconds")
    head = (
        f"Snapshot of ``lorak-bench {snap['experiment']}{' --quick' if snap.get('quick') else ''}``"
        f" ({mode} mode, seed {snap.get('seed')}, run {str(snap.get('started_utc', ''))[:10]}"
        + (f", {wall:.0f} s wall" if wall is not None else "")
        + ")."
    )
    out = [head, ""]
    for name, pc in snap.get("parts", {}).items():
        ds = ", ".join(
            d["label"] + (" (stand-in)" if d.get("stand_in") else "") for d in pc["datasets"]
        )
        out.append(f"* part *{name}*: {pc.get('reps')} repetitions; data sets: {ds or '—'}")
    versions = ", ".join(
        f"{k} {v}"
        for k, v in env.items()
        if k in ("python", "numpy", "scipy", "scikit-learn", "lorak") and isinstance(v, str)
    )
    if versions:
        out.append(f"* versions: {versions}")
    return [*out, ""]


def bench_report_lines(name: str, *, checks=True, table=True) -> list[str]:
    path = BENCH_DATA / f"{name}.json"
    snap = json.loads(path.read_text(encoding="utf-8"))
    out = run_summary(snap)
    if checks and snap.get("checks_markdown"):
        out += markdown_to_rst(snap["checks_markdown"])
    if table:
        out += paper_tables(snap)
    return out


# ------------------------------------------------------------ docstring hygiene
_SPLIT_CODE = re.compile(r"(``.*?``|:\w+:`[^`]*`|`[^`]*`_?)")
_HEADER = re.compile(r"^(\s*)([\w*][\w, *]*?)(\s+:\s+)(.*)$")


def _escape_text(text: str) -> str:
    """Outside backquotes: ``name_`` is not a link target and ``|x|`` is not a
    substitution (plain-text math in docstrings)."""
    parts = _SPLIT_CODE.split(text)
    for i in range(0, len(parts), 2):
        t = parts[i]
        t = re.sub(r"(?<![\w\\])([^\W\d]\w*?)_(?![\w`])", r"\1\\_", t)
        t = re.sub(r"(?<![\\|])\|(?=\S)([^|`]*?\S)\|(?!\|)", r"\\|\1\\|", t)
        parts[i] = t
    return "".join(parts)


def escape_docstring(app, what, name, obj, options, lines) -> None:
    """Plain-text notation of lorak's docstrings made safe for reST before numpydoc
    reads them. Lines inside directives (math, code) are left alone; in a numpydoc
    ``name : type`` line only the type is escaped."""
    # a section header glued to the text before it (docstrings built by concatenation)
    for i in range(len(lines) - 2, 0, -1):
        if (
            lines[i + 1].strip()
            and set(lines[i + 1].strip()) == {"-"}
            and lines[i].strip()
            and lines[i - 1].strip()
        ):
            lines.insert(i, "")
    # a ``name : text`` line whose literal runs onto the next line: all of it is text
    for i in range(len(lines) - 1):
        m = _HEADER.match(lines[i])
        if m and not m.group(1) and m.group(4).count("``") % 2 == 1:
            nxt = lines[i + 1]
            lines[i] = m.group(2)
            lines[i + 1] = "    " + m.group(4) + " " + nxt.strip()
    # a literal directly followed by a letter or superscript needs an escaped space
    for i, line in enumerate(lines):
        if line.count("``") % 2 == 0:
            lines[i] = re.sub(
                r"(?<![\w`])(``[^`\s](?:[^`]*[^`\s])?``)(?=[^\s\-.,:;!?/'\")\]}>`\\])",
                r"\1\\ ",
                line,
            )
    in_block = None
    for i, line in enumerate(lines):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if in_block is not None:
            if stripped and indent <= in_block:
                in_block = None
            else:
                continue
        if stripped.startswith(".. ") or stripped.endswith("::") or stripped.startswith(">>>"):
            in_block = indent
            continue
        if set(stripped) <= set("-=~") or stripped.startswith(("=", "-")):
            continue
        m = _HEADER.match(line)
        if m and indent == 0:
            lines[i] = m.group(1) + m.group(2) + m.group(3) + _escape_text(m.group(4))
        else:
            lines[i] = _escape_text(line)


def _public_names_set() -> set[str]:
    import importlib

    names = set()
    for modname in ["lorak", *(m for m, _ in PUBLIC_MODULES)]:
        mod = importlib.import_module(modname)
        for n in getattr(mod, "__all__", []):
            names.add(n)
            names.add(f"{modname}.{n}")
        names.add(modname)
    return names


def quiet_private_refs(app, env, node, contnode):
    """Nitpicky for the public API only: a Python reference to a name that no public
    module exports (a private helper, a method of an inner result class) renders as
    plain code instead of failing the build; a broken reference to a public name still
    fails it."""
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "")
    public = app.env.lorak_public if hasattr(app.env, "lorak_public") else None
    if public is None:
        public = _public_names_set()
        app.env.lorak_public = public
    parts = target.split(".")
    if parts[0] == "lorak" and "._" not in target and len(parts) > 1:
        if f"lorak.{parts[1]}" in public or parts[1] in public:
            return None  # a public path: a broken one fails the build
    return contnode


def setup(app):
    from docutils.parsers.rst import Directive, directives
    from docutils.statemachine import StringList
    from sphinx.util.nodes import nested_parse_with_titles

    class BenchReport(Directive):
        """``.. bench-report:: NAME`` — render docs/_data/bench/NAME.json."""

        required_arguments = 1
        option_spec: ClassVar[dict] = {
            "no-checks": directives.flag,
            "no-table": directives.flag,
        }

        def run(self):
            from docutils import nodes

            name = self.arguments[0]
            env = self.state.document.settings.env
            env.note_dependency(str(BENCH_DATA / f"{name}.json"))
            lines = bench_report_lines(
                name, checks="no-checks" not in self.options, table="no-table" not in self.options
            )
            node = nodes.container(classes=["bench-report"])
            nested_parse_with_titles(self.state, StringList(lines, source=f"bench:{name}"), node)
            return [node]

    app.add_directive("bench-report", BenchReport)
    app.connect("autodoc-process-docstring", escape_docstring, priority=100)
    app.connect("missing-reference", quiet_private_refs, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "snapshot":
        for p in snapshot(Path(sys.argv[2])):
            print(p)
    else:
        print(__doc__)
        sys.exit(2)

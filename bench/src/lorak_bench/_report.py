"""Outputs of a run: results.json, raw.json, report.md, plots, and the stdout summary."""

from __future__ import annotations

import json
import logging
import math
import re
from pathlib import Path

import numpy as np

from ._record import RunResult

__all__ = [
    "embed_report",
    "experiment_summary",
    "fmt_num",
    "headline",
    "markdown_table",
    "pivot",
    "plot_metric_lines",
    "render_report",
    "save_figure",
    "summary_text",
    "text_table",
    "write_combined",
    "write_outputs",
]

logger = logging.getLogger(__name__)


def fmt_num(x, digits: int = 4) -> str:
    """``x`` with ``digits`` significant digits; ``—`` for None/NaN."""
    if x is None:
        return "—"
    x = float(x)
    if not math.isfinite(x):
        return "—"
    return f"{x:.{digits}g}"


def fmt_mean_std(mean, std, reps=None) -> str:
    if mean is None:
        return "failed"
    if std is None or reps == 1 or not std:
        return fmt_num(mean)
    return f"{fmt_num(mean)} ± {fmt_num(std, 2)}"


def _params_key(params: dict) -> tuple:
    return tuple(sorted((k, json.dumps(v, sort_keys=True)) for k, v in params.items()))


def _varying_keys(param_list: list[dict]) -> list[str]:
    keys: list[str] = []
    for p in param_list:
        for k in p:
            if k != "part" and k not in keys:
                keys.append(k)
    if len(param_list) <= 1:
        return keys
    return [k for k in keys if len({json.dumps(p.get(k)) for p in param_list}) > 1] or keys


def params_label(params: dict, keys: list[str] | None = None) -> str:
    keys = [k for k in (keys or params) if k != "part"]
    return ", ".join(f"{k}={_pv(params.get(k))}" for k in keys) or "—"


def _pv(v) -> str:
    if isinstance(v, float):
        return fmt_num(v)
    return str(v)


def pivot(result: RunResult, part: str, dataset: str, metric: str | None):
    """Rows = grid points, columns = methods; ``metric=None`` pivots ``seconds_mean``.

    Returns ``(row_labels, methods, cells, papers)`` where ``cells[i][j]`` is the
    result row (dict) or None and ``papers`` the distinct non-numeric paper entries.
    """
    rows = result.select(part=part, dataset=dataset)
    metrics = [r["metric"] for r in rows]
    if metric is None:
        first = metrics[0] if metrics else None
        rows = [r for r in rows if r["metric"] == first]
    else:
        rows = [r for r in rows if r["metric"] == metric]
    methods: list[str] = []
    plist: list[dict] = []
    seen = set()
    for r in rows:
        if r["method"] not in methods:
            methods.append(r["method"])
        key = _params_key(r["params"])
        if key not in seen:
            seen.add(key)
            plist.append(r["params"])
    keys = _varying_keys(plist)
    index = {(_params_key(r["params"]), r["method"]): r for r in rows}
    cells = [[index.get((_params_key(p), m)) for m in methods] for p in plist]
    labels = [params_label(p, keys) for p in plist]
    papers = []
    for r in rows:
        pp = r.get("paper")
        if isinstance(pp, dict) and "mean" not in pp:
            text = pp.get("expected") or json.dumps(pp)
            if text not in papers:
                papers.append(text)
    return labels, methods, cells, papers


def _cell_text(r, metric) -> str:
    if r is None:
        return ""
    if metric is None:
        return fmt_num(r["seconds_mean"], 3)
    if r["mean"] is None and r.get("seconds_mean") is not None:
        # the method ran but does not report this metric (or reported NaN)
        text = "n/a"
    else:
        text = fmt_mean_std(r["mean"], r["std"], r["reps"])
    pp = r.get("paper")
    if isinstance(pp, dict) and "mean" in pp:
        text += f" (paper {fmt_mean_std(pp.get('mean'), pp.get('std'))})"
    return text


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    """A GitHub-flavoured markdown table."""
    esc = [[str(c).replace("|", "\\|") for c in row] for row in [header, *rows]]
    lines = ["| " + " | ".join(esc[0]) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in esc[1:]]
    return "\n".join(lines)


def text_table(header: list[str], rows: list[list[str]]) -> str:
    """A plain aligned table for the terminal."""
    table = [header, *rows]
    widths = [max(len(str(r[i])) for r in table) for i in range(len(header))]
    out = [
        "  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=False)).rstrip()
        for row in table
    ]
    out.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(out)


def _method_labels(result: RunResult, part: str) -> dict:
    try:
        p = result.experiment.part(part)
    except KeyError:
        return {}
    return {m.name: m.display for m in p.methods}


def dataset_tables(result: RunResult, part: str, dataset: str, *, markdown=True, metrics=None):
    """Tables (one per metric, then seconds) for one dataset, as a string."""
    render = markdown_table if markdown else text_table
    names = _method_labels(result, part)
    if metrics is None:
        metrics = []
        for r in result.select(part=part, dataset=dataset):
            if r["metric"] not in metrics:
                metrics.append(r["metric"])
    out = []
    for metric in [*metrics, None]:
        labels, methods, cells, papers = pivot(result, part, dataset, metric)
        if not methods:
            continue
        header = [metric or "seconds (fit+transform)", *[names.get(m, m) for m in methods]]
        body = [
            [lab, *[_cell_text(c, metric) for c in row]]
            for lab, row in zip(labels, cells, strict=False)
        ]
        title = f"**{metric}**" if markdown else metric
        if metric is None:
            title = "**seconds** (mean fit + transform time)" if markdown else "seconds"
        block = (
            f"{title}\n\n{render(header, body)}" if markdown else f"{title}\n{render(header, body)}"
        )
        if papers and markdown:
            block += "\n\nPaper: " + "; ".join(papers)
        out.append(block)
    return "\n\n".join(out)


def headline(result: RunResult) -> str:
    """``name: N result rows, F failures, S s`` — the first line of a run's summary."""
    return (
        f"{result.experiment.name}: {len(result.rows)} result rows, "
        f"{len(result.failures)} failures, {result.wall_seconds:.1f} s"
    )


def summary_text(result: RunResult) -> str:
    """The first metric of each part, per dataset, under the :func:`headline`."""
    lines = [headline(result)]
    for part in result.experiment.parts:
        metrics = part.metric_names()[:1]
        for label in result.dataset_labels(part.name):
            tag = " (stand-in)" if result.is_stand_in(part.name, label) else ""
            lines.append(f"\n[{part.name}] {label}{tag}")
            lines.append(dataset_tables(result, part.name, label, markdown=False, metrics=metrics))
    return "\n".join(lines)


def experiment_summary(result: RunResult) -> str:
    """What a CLI run prints: the experiment's ``summary``, or by default
    :func:`summary_text` followed by the experiment's checks."""
    exp = result.experiment
    if exp.summary is not None:
        return exp.summary(result)
    checks = exp.checks(result) if exp.checks is not None else ""
    return summary_text(result) + ("\n\n" + checks if checks else "")


def _env_lines(env: dict) -> str:
    threads = env.get("threads") or {}
    thr = ", ".join(f"{k}={v}" for k, v in threads.items() if ":" not in k) or "unknown"
    return (
        f"Python {env.get('python')}, numpy {env.get('numpy')}, scipy {env.get('scipy')}, "
        f"scikit-learn {env.get('sklearn')}, lorak {env.get('lorak')}; CPU: {env.get('cpu')} "
        f"({env.get('cpu_count')} logical cores); threads: {thr}; {env.get('platform')}"
    )


def _report_header_lines(result: RunResult) -> list[str]:
    """The report's head: title, paper, the run's settings and seconds per part, the
    environment, notes and the stand-in warning."""
    exp = result.experiment
    cfg = result.config
    out = [f"# `{exp.name}` — {exp.description}", ""]
    if exp.paper:
        out += [f"Paper: {exp.paper}", ""]
    mode = "quick" if cfg.get("quick") else "full"
    out.append(
        f"Run: {cfg.get('started_utc')} UTC, {mode} mode, seed {cfg.get('seed')}, "
        f"total wall time **{result.wall_seconds:.1f} s** (timed fit + transform "
        f"{result.fit_seconds:.1f} s wall, {result.cpu_seconds:.1f} s CPU, over "
        f"{len(result.records)} cells; shared cached work is charged to every cell "
        "that uses it)."
    )
    for name, pc in cfg.get("parts", {}).items():
        ds = ", ".join(
            d["label"] + (" (stand-in)" if d["stand_in"] else "") for d in pc["datasets"]
        )
        secs = f", {pc['wall_seconds']:.1f} s" if pc.get("wall_seconds") is not None else ""
        out.append(f"- {name}: {pc['reps']} reps (deterministic methods: 1){secs}; datasets: {ds}")
    out += ["", f"Environment: {_env_lines(result.environment)}", ""]
    if result.notes:
        out += ["## Notes", ""] + [f"- {n}" for n in result.notes] + [""]
    if cfg.get("stand_ins_used"):
        out += [
            "> Stand-in datasets were used ("
            + ", ".join(cfg["stand_ins_used"])
            + "): the paper reports nothing for them; compare only the method ordering.",
            "",
        ]
    return out


def _report_checks_lines(result: RunResult) -> list[str]:
    """The "Checks" section: the experiment's checks text (a failure of the checks is
    reported in its place)."""
    exp = result.experiment
    if exp.checks is None:
        return []
    try:
        text = exp.checks(result)
    except Exception as exc:
        logger.warning("checks of %s failed: %s", exp.name, exc)
        text = f"(the experiment's checks failed: {type(exc).__name__}: {exc})"
    return ["## Checks", "", text.strip(), ""] if text else []


def _report_plot_lines(plots: list | None, plot_note: str | None) -> list[str]:
    """The "Plots" section: the note (plots skipped or failed), then each plot."""
    out = ["## Plots", ""]
    if plot_note:
        out.append(plot_note)
    for title, fname in plots or []:
        out += [f"### {title}", "", f"![{title}]({fname})", ""]
    if not plots and not plot_note:
        out.append("(none)")
    out.append("")
    return out


def _dataset_heading(result: RunResult, part: str, label: str) -> str:
    """``### label`` with the stand-in tag and the loaded data's shape and preprocessing."""
    tag = " (stand-in: no paper numbers)" if result.is_stand_in(part, label) else ""
    shape = next(
        (
            f" — n = {d['n_samples']}, d = {d['n_features']}"
            + (f", {d['preprocessing']}" if d.get("preprocessing") else "")
            for d in result.datasets[part]
            if d["label"] == label and d.get("loaded")
        ),
        "",
    )
    return f"### {label}{tag}{shape}"


def _report_result_lines(result: RunResult) -> list[str]:
    """One "Results" section per part with rows: a table group per data set."""
    out = []
    for part in result.experiment.parts:
        labels = result.dataset_labels(part.name)
        if not labels:
            continue
        head = f"## Results: {part.name}"
        out += [head + (f" — {part.description}" if part.description else ""), ""]
        for label in labels:
            heading = _dataset_heading(result, part.name, label)
            out += [heading, "", dataset_tables(result, part.name, label), ""]
    return out


def _report_failure_lines(result: RunResult) -> list[str]:
    """The "Failures" section: one table row per failed cell, or "None."."""
    out = ["## Failures", ""]
    if not result.failures:
        return [*out, "None."]
    body = [
        [
            f["part"],
            f["dataset"],
            f["method"] or "—",
            params_label(f["params"]) if f["params"] else "—",
            "—" if f["rep"] is None else str(f["rep"]),
            f["stage"],
            f["error"],
        ]
        for f in result.failures
    ]
    header = ["part", "dataset", "method", "params", "rep", "stage", "error"]
    return [*out, markdown_table(header, body)]


def render_report(result: RunResult, plots: list | None, plot_note: str | None) -> str:
    """The report.md text."""
    out = _report_header_lines(result)
    out += _report_checks_lines(result)
    out += _report_plot_lines(plots, plot_note)
    out += _report_result_lines(result)
    out += _report_failure_lines(result)
    out += ["", "Files: `results.json` (aggregated), `raw.json` (every repetition).", ""]
    return "\n".join(out)


def _json_default(o):
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        v = float(o)
        return v if math.isfinite(v) else None
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    return str(o)


def _clean(o):
    """Replace NaN/inf floats by None so the JSON is standard."""
    if isinstance(o, float):
        return o if math.isfinite(o) else None
    if isinstance(o, dict):
        return {k: _clean(v) for k, v in o.items()}
    if isinstance(o, list | tuple):
        return [_clean(v) for v in o]
    return o


def _dump(obj, path: Path) -> None:
    path.write_text(
        json.dumps(_clean(obj), indent=1, default=_json_default, allow_nan=False) + "\n",
        encoding="utf-8",
    )


def _make_plots(result: RunResult, out_dir: Path):
    if result.experiment.plots is None:
        return [], None
    try:
        import matplotlib

        matplotlib.use("Agg")
    except ImportError:
        return [], "matplotlib is not installed: plots skipped (`pip install lorak[plot]`)."
    try:
        made = result.experiment.plots(result, out_dir) or []
    except Exception as exc:
        logger.warning("plots of %s failed: %s", result.experiment.name, exc)
        return [], f"Plotting failed: {type(exc).__name__}: {exc}"
    finally:
        import matplotlib.pyplot as plt

        plt.close("all")
    return list(made), None


def write_outputs(result: RunResult, out_dir) -> dict:
    """Write results.json, raw.json, report.md and the plots into ``out_dir``.

    Returns a dict of the written paths (``results``, ``raw``, ``report``, ``plots``).
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"results": out_dir / "results.json", "raw": out_dir / "raw.json"}
    _dump(result.to_json(), paths["results"])
    _dump(
        {
            "experiment": result.experiment.name,
            "records": result.records,
            "failures": result.failures,
            "datasets": result.datasets,
        },
        paths["raw"],
    )
    plots, note = _make_plots(result, out_dir)
    paths["plots"] = [out_dir / f for _, f in plots]
    paths["report"] = out_dir / "report.md"
    paths["report"].write_text(render_report(result, plots, note), encoding="utf-8")
    return paths


def save_figure(
    fig, out_dir, filename: str, title: str, *, dpi: int = 110, rect=None
) -> list[tuple[str, str]]:
    """Lay out (within ``rect``, when given), save as ``out_dir/filename`` (PNG) and close
    ``fig``; returns the ``[(title, filename)]`` entry an experiment's ``plots`` callable
    reports."""
    import matplotlib.pyplot as plt

    fig.tight_layout(rect=rect)
    fig.savefig(Path(out_dir) / filename, dpi=dpi)
    plt.close(fig)
    return [(title, filename)]


def _series_keys(rows: list[dict], x: str) -> list[str]:
    """The grid parameters (besides ``x``) that tell apart rows of one method at the same
    ``x`` — each of their value combinations is its own line. Parameters that only move
    with ``x`` (derived ones, such as m = ratio · n) do not split lines."""
    keys: list[str] = []
    by_x: dict[str, list[dict]] = {}
    for r in rows:
        by_x.setdefault(json.dumps(r["params"][x], sort_keys=True), []).append(r["params"])
    for group in by_x.values():
        for params in group[1:]:
            for k in params:
                if k != x and k not in keys and params.get(k) != group[0].get(k):
                    keys.append(k)
    return keys


def plot_metric_lines(
    result: RunResult,
    part: str,
    metric: str,
    x: str,
    path,
    *,
    title: str = "",
    xlabel: str | None = None,
    ylabel: str | None = None,
    logy: bool = False,
    ncols: int = 4,
):
    """One panel per dataset: ``metric`` against grid parameter ``x``, a line per method
    (:func:`lorak.plot.error_vs_rank`), ± one standard deviation as a band. Saves a PNG
    at ``path``."""
    from lorak import plot as lplot

    from ._figures import finish_panels, panel_grid

    labels = result.dataset_labels(part)
    names = _method_labels(result, part)
    if not labels:
        return None
    fig, axes = panel_grid(len(labels), ncols=ncols, panel=(3.6, 2.9), min_width=6.4)
    for ax, label in zip(axes, labels, strict=True):
        rows = result.select(part=part, dataset=label, metric=metric)
        methods = list(dict.fromkeys(r["method"] for r in rows))
        for m in methods:
            mine = [
                r for r in rows if r["method"] == m and r["mean"] is not None and x in r["params"]
            ]
            split = _series_keys(mine, x)
            series: dict[tuple, list] = {}
            for r in mine:
                key = tuple((k, json.dumps(r["params"].get(k), sort_keys=True)) for k in split)
                series.setdefault(key, []).append(r)
            for key, members in series.items():
                pts = sorted((r["params"][x], r["mean"], r["std"] or 0.0) for r in members)
                xs, ys, ss = map(np.asarray, zip(*pts, strict=False))
                extra = ", ".join(f"{k}={json.loads(v)}" for k, v in key)
                lplot.error_vs_rank(
                    xs,
                    ys,
                    std=ss,
                    label=names.get(m, m) + (f" ({extra})" if extra else ""),
                    ax=ax,
                    logy=logy,
                    xlabel=xlabel or x,
                    ylabel=ylabel or metric,
                    legend=False,
                )
        stand = " (stand-in)" if result.is_stand_in(part, label) else ""
        ax.set_title(f"{label}{stand}", fontsize=9)
    finish_panels(fig, axes, title)
    path = Path(path)
    save_figure(fig, path.parent, path.name, title, rect=(0, 0.06, 1, 0.96 if title else 1))
    return path


# ---------------------------------------------------------------- `lorak-bench all`

_LINK = re.compile(r"(!?\[[^\]]*\]\()([^)\s]+)(\))")


def embed_report(text: str, prefix: str, *, shift: int = 1) -> str:
    """``text`` (a report.md) ready to sit inside a combined report.

    Headings outside code fences are demoted by ``shift`` levels and relative link
    targets (plots, files) are prefixed with ``prefix/`` so they still resolve from
    the combined report's folder.
    """

    def relink(m):
        target = m.group(2)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith(("/", "#")):
            return m.group(0)
        return f"{m.group(1)}{prefix}/{target}{m.group(3)}"

    out = []
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            if line.startswith("#"):
                line = "#" * shift + line
            line = _LINK.sub(relink, line)
        out.append(line)
    return "\n".join(out)


def _status_text(e) -> str:
    if e.status == "error":
        return f"**error**: {e.error}"
    if e.status == "no results":
        return "**no results** (every cell failed)"
    if e.status == "failures":
        return f"ok, {e.n_failures} failed cell(s)"
    return "ok"


def _anchor(name: str) -> str:
    return re.sub(r"[^a-z0-9 -]", "", name.lower()).replace(" ", "-")


def _wall_time_lines(entries, total: float, mode: str) -> list[str]:
    """The "Wall time" section of the combined report: one row per experiment and a
    total row (the sums; the run's own wall time is ``total``)."""
    rows = [
        [
            e.name,
            e.status,
            f"{e.seconds:.1f}",
            f"{e.run_seconds:.1f}",
            f"{e.fit_seconds:.1f}",
            f"{e.work_seconds:.1f}",
            f"{100 * e.seconds / total:.0f} %" if total > 0 else "—",
        ]
        for e in entries
    ]
    rows.append(
        [
            "**total**",
            f"{sum(e.status in ('ok', 'failures') for e in entries)}/{len(entries)} with results",
            f"**{total:.1f}**",
            f"{sum(e.run_seconds for e in entries):.1f}",
            f"{sum(e.fit_seconds for e in entries):.1f}",
            f"{sum(e.work_seconds for e in entries):.1f}",
            "100 %" if total > 0 else "—",
        ]
    )
    over = [e.name for e in entries if e.fit_seconds > e.run_seconds > 0]
    return [
        "## Wall time",
        "",
        f"The {mode} run took **{total:.1f} s** ({total / 60:.1f} min) of wall time. Per "
        "experiment: wall = running it and writing its files and plots; run = the runner "
        "alone (loading, preparing, every cell, metrics); timed fits = the sum of the "
        "timed fit + transform of its cells, the part the results' `seconds_mean` report; "
        "work = the same with work that cells share (cached) counted once.",
        "",
        markdown_table(
            ["experiment", "status", "wall s", "run s", "timed fits s", "work s", "share of wall"],
            rows,
        ),
        "",
    ] + (
        [
            f"Timed fits above the run's wall time ({', '.join(over)}): cells that share "
            "cached work report its seconds each (e.g. one curve's time at every rank), so "
            "their sum counts that work several times.",
            "",
        ]
        if over
        else []
    )


def _combined_head_lines(entries, meta: dict, mode: str, total: float) -> list[str]:
    """The combined report's head: title, run line, what is pending, the environment,
    what was skipped and the experiment modules that failed to import."""
    lines = [
        f"# lorak-bench all — {mode} mode",
        "",
        f"Run: {meta.get('started_utc')} UTC, seed {meta.get('seed')}, "
        f"{len(entries)} experiment(s), total wall time **{total:.1f} s**.",
        "",
    ]
    pending = meta.get("pending") or []
    if pending:
        lines += [
            f"**Incomplete**: {len(pending)} experiment(s) not finished yet (or the run was "
            f"interrupted): {', '.join(pending)}.",
            "",
        ]
    if meta.get("environment"):
        lines += [f"Environment: {_env_lines(meta['environment'])}", ""]
    if meta.get("skipped"):
        lines += [f"Skipped on request: {', '.join(meta['skipped'])}.", ""]
    for mod, err in sorted((meta.get("import_errors") or {}).items()):
        lines += [f"**Experiment module `{mod}` failed to import** (not run): {err}", ""]
    return lines


def _combined_summary_lines(entries) -> list[str]:
    """The "Summary" section: one row per experiment (status, wall seconds, rows, plots,
    stand-ins, a link to its report)."""
    body = []
    for e in entries:
        link = f"[{e.name}](#{_anchor(e.name)})"
        report = f"[report]({e.paths['report']})" if e.paths.get("report") else "—"
        body.append(
            [
                link,
                _status_text(e),
                f"{e.seconds:.1f}",
                str(e.n_rows),
                str(len(e.paths.get("plots", []))),
                ", ".join(e.stand_ins) or "—",
                report,
            ]
        )
    return [
        "## Summary",
        "",
        markdown_table(
            ["experiment", "status", "wall seconds", "result rows", "plots", "stand-ins", "files"],
            body,
        ),
        "",
        "Every experiment's section below is its own report.md (tables: ours, with the "
        "paper's number in parentheses where the paper has one).",
        "",
    ]


def _combined_section_lines(e, out_dir: Path) -> list[str]:
    """One experiment's section: its description, its files and its own report.md,
    embedded (or why it is not there)."""
    lines = [f"## {e.name}", ""]
    if e.description:
        lines += [e.description, ""]
    if e.status == "error":
        return [*lines, f"The run failed: `{e.error}`", ""]
    files = [f"[{k}]({e.paths[k]})" for k in ("report", "results", "raw") if e.paths.get(k)]
    lines += [f"Files: {', '.join(files)}; {e.seconds:.1f} s.", ""]
    path = out_dir / e.paths["report"]
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        return [*lines, f"(could not read {e.paths['report']}: {exc})", ""]
    return [*lines, embed_report(text, e.name, shift=2), ""]


def _combined_index(entries, meta: dict) -> dict:
    """The ``index.json`` of ``lorak-bench all``: ``meta`` and one record per experiment."""
    return {
        "command": "bench all",
        **{k: v for k, v in meta.items() if k != "environment"},
        "environment": meta.get("environment"),
        "report": "report.md",
        "experiments": [
            {
                "name": e.name,
                "description": e.description,
                "paper": e.paper,
                "status": e.status,
                "seconds": round(e.seconds, 3),
                "run_seconds": round(e.run_seconds, 3),
                "fit_seconds": round(e.fit_seconds, 3),
                "work_seconds": round(e.work_seconds, 3),
                "n_rows": e.n_rows,
                "n_failures": e.n_failures,
                "error": e.error,
                "stand_ins_used": e.stand_ins,
                "notes": e.notes,
                **e.paths,
            }
            for e in entries
        ],
    }


def write_combined(entries, out_dir, *, meta: dict) -> dict:
    """Write the combined ``report.md`` and ``index.json`` of ``lorak-bench all``.

    ``entries`` are :class:`lorak_bench._record.AllEntry` objects whose files lie in
    ``out_dir/NAME``; the report has a summary table (status, wall seconds, links), a
    wall-time table (per experiment and in total: wall, run and timed-fit seconds),
    then every experiment's own report — its tables with the paper's numbers beside ours,
    its checks and plots — with links rewritten to resolve from ``out_dir``.
    ``meta`` (mode, seed, started_utc, wall_seconds, environment, ...) goes into both.
    Returns ``{"report": path, "index": path}``.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    mode = "quick" if meta.get("quick") else "full"
    total = float(meta.get("wall_seconds") or sum(e.seconds for e in entries))
    lines = _combined_head_lines(entries, meta, mode, total)
    lines += _combined_summary_lines(entries)
    lines += _wall_time_lines(entries, total, mode)
    for e in entries:
        lines += _combined_section_lines(e, out_dir)
    paths = {"report": out_dir / "report.md", "index": out_dir / "index.json"}
    paths["report"].write_text("\n".join(lines) + "\n", encoding="utf-8")
    _dump(_combined_index(entries, meta), paths["index"])
    return paths

"""``csi-rank``'s report: minimal ranks beside the paper's (Fig. 2), the verdict counts,
the checks and summary text and the plots; the protocol and data are in ``csi_rank``.

The experiment's rows (error and rank used per grid rank) come from the runner's result;
nothing here fits or decomposes anything.
"""

from __future__ import annotations

import numpy as np

from .._figures import finish_panels, panel_grid
from .._reference import load_reference
from .._report import fmt_num, markdown_table, save_figure, summary_text

__all__ = [
    "PAPER_ROWS",
    "compare_ranks",
    "min_rank_table",
    "minimal_rank",
    "rank_checks",
    "rank_plots",
    "rank_summary",
]

# our label → the paper's row name in reference/csi.json
PAPER_ROWS = {
    "ringnorm": "ringnorm",
    "twonorm": "twonorm",
    "waveform": "waveform",
    "splice": "splice",
    "mushrooms": "mushroom",
    "breast_cancer": "breast",
}
PAPER_NOTES = {
    "breast_cancer": "paper: Wisconsin 683×9, not the same set",
    "splice": "paper: 3 classes; LIBSVM splice has 2",
}


def minimal_rank(ranks, mean_error, target) -> int | None:
    """Smallest rank whose mean error is ≤ ``target`` (None if none is)."""
    ok = np.flatnonzero(np.asarray(mean_error) <= target + 1e-12)
    return int(np.asarray(ranks)[ok[0]]) if ok.size else None


def min_rank_table(result) -> list[dict]:
    """Per data set: full-kernel error (mean, std), minimal ranks of ICD and CSI, the
    largest rank reached, and the paper's ranks where it lists the set."""
    ref = load_reference("csi")["figure2_min_rank"]["rows"]
    out = []
    for label in result.dataset_labels("main"):
        rows = result.select(part="main", dataset=label, metric="error")
        full = [r for r in rows if r["method"] == "full" and r["mean"] is not None]
        if not full:
            continue
        f_mean, f_std = full[0]["mean"], full[0]["std"] or 0.0
        entry = {"dataset": label, "full_mean": f_mean, "full_std": f_std}
        for m in ("icd", "csi", "icd_nostop", "csi_nostop"):
            pts = sorted(
                (r["params"]["rank"], r["mean"])
                for r in rows
                if r["method"] == m and r["mean"] is not None
            )
            used = result.select(part="main", dataset=label, method=m, metric="rank_used")
            reached = max((u["mean"] or 0 for u in used), default=None)
            if pts:
                ranks, means = zip(*pts, strict=True)
                entry[m] = minimal_rank(ranks, means, f_mean + f_std)
                entry[f"{m}_best"] = float(min(means))
            else:
                entry[m] = None
            entry[f"{m}_reached"] = reached
        key = PAPER_ROWS.get(label)
        if key in ref and not result.is_stand_in("main", label):
            entry["paper_icd"], entry["paper_csi"] = ref[key][3], ref[key][4]
        entry["note"] = PAPER_NOTES.get(label, "")
        out.append(entry)
    return out


def rank_text(r, reached):
    if r is not None:
        return str(r)
    return f"> {round(reached)}" if reached else "—"


def table_rows(table):
    rows = []
    for e in table:
        rows.append(
            [
                e["dataset"],
                f"{fmt_num(100 * e['full_mean'], 3)} ± {fmt_num(100 * e['full_std'], 2)}",
                *(
                    rank_text(e.get(m), e.get(f"{m}_reached"))
                    for m in ("icd", "csi", "icd_nostop", "csi_nostop")
                ),
                str(e.get("paper_icd", "")),
                str(e.get("paper_csi", "")),
                e["note"],
            ]
        )
    return rows


HEADER = [
    "dataset",
    "full-kernel error %",
    "ICD",
    "CSI",
    "ICD no stop",
    "CSI no stop",
    "paper ICD",
    "paper CSI",
    "note",
]


def compare_ranks(table, icd: str = "icd", csi: str = "csi") -> dict:
    """Counts of CSI's minimal rank below / equal / above ICD's ('> r' counts as
    larger than any reached rank of the other method, never as smaller)."""
    out = {"smaller": 0, "equal": 0, "larger": 0, "neither": 0}
    for e in table:
        a, b = e.get(icd), e.get(csi)
        if a is None and b is None:
            out["neither"] += 1
        elif b is not None and (a is None or b < a):
            out["smaller"] += 1
        elif a is not None and b is not None and a == b:
            out["equal"] += 1
        else:
            out["larger"] += 1
    return out


def verdict(table) -> str:
    n = len(table)
    lines = []
    for what, icd, csi in (
        ("with the paper's stopping rule (gain < 1e-4)", "icd", "csi"),
        ("without it (rank cap only)", "icd_nostop", "csi_nostop"),
    ):
        c = compare_ranks(table, icd, csi)
        lines.append(
            f"CSI needs a smaller rank than ICD on {c['smaller']}/{n} data sets {what} "
            f"(equal {c['equal']}, larger {c['larger']}, neither reaches the target "
            f"{c['neither']})."
        )
    return "\n".join(lines)


def rank_checks(result) -> str:
    table = min_rank_table(result)
    if not table:
        return ""
    lines = [
        "### Minimal rank within one std of the full-kernel LS-SVM (Fig. 2)",
        "",
        "Mean test error over the splits at each rank against the full kernel's mean + "
        "std; '> r' means the decomposition stopped (gain < 1e-4) or hit the rank cap "
        "at r without reaching it.",
        "",
        markdown_table(HEADER, table_rows(table)),
        "",
        verdict(table),
        "",
    ]
    return "\n".join(lines)


def rank_summary(result) -> str:
    table = min_rank_table(result)
    from .._report import text_table

    body = text_table(HEADER, table_rows(table)) if table else "(no results)"
    return summary_text(result) + "\n\nMinimal ranks (Fig. 2)\n" + body + "\n" + verdict(table)


STYLE = {
    "icd_nostop": ("C0", "-", "ICD"),
    "csi_nostop": ("C3", "-", "CSI"),
    "icd": ("C0", ":", "ICD, paper's stop"),
    "csi": ("C3", ":", "CSI, paper's stop"),
}


def rank_plots(result, out_dir):
    """Mean test error against rank (log axis), one panel per data set, the full
    kernel's mean ± std as a band (the target of the minimal rank); and CSI's error
    traces and gains on the first split of each set, with incomplete Cholesky's."""
    labels = result.dataset_labels("main")
    if not labels:
        return []
    fig, axes = panel_grid(len(labels))
    for ax, label in zip(axes, labels, strict=True):
        _error_vs_rank_panel(ax, result.select(part="main", dataset=label, metric="error"))
        ax.set_title(label, fontsize=9)
    finish_panels(fig, axes, "LS-SVM test error vs rank (mean over splits)")
    made = save_figure(
        fig, out_dir, "error_vs_rank.png", "Test error vs rank", rect=(0, 0.05, 1, 0.96)
    )

    traced = [lab for lab in labels if "csi" in result.artifacts.get("main", {}).get(lab, {})]
    if traced:
        made += _csi_trace_plots(result, traced, out_dir)
    return made


def _error_vs_rank_panel(ax, rows) -> None:
    """One data set's panel: the full kernel's band, then each method of :data:`STYLE`."""
    from lorak import plot as lplot

    full = [r for r in rows if r["method"] == "full" and r["mean"] is not None]
    if full:
        mu, sd = full[0]["mean"], full[0]["std"] or 0.0
        ax.axhspan(mu - sd, mu + sd, color="0.85", lw=0)
        ax.axhline(mu, color="k", lw=0.8, label="full kernel ± std")
    for m, (color, ls, name) in STYLE.items():
        pts = sorted(
            (r["params"]["rank"], r["mean"])
            for r in rows
            if r["method"] == m and r["mean"] is not None
        )
        if pts:
            xs, ys = zip(*pts, strict=True)
            lplot.error_vs_rank(
                xs,
                ys,
                ax=ax,
                label=name,
                color=color,
                ls=ls,
                lw=1.2,
                marker=None,
                logx=True,
                xlabel="rank",
                ylabel="test error",
                legend=False,
            )


def _csi_trace_plots(result, traced, out_dir):
    """CSI's two error traces (beside ICD's) and its gains per pivot, one row per set."""
    import matplotlib.pyplot as plt

    from lorak import plot as lplot

    fig, axes = plt.subplots(len(traced), 2, figsize=(9.5, 2.9 * len(traced) + 0.4), squeeze=False)
    for (ax_e, ax_g), label in zip(axes, traced, strict=True):
        arts = result.artifacts["main"][label]
        lplot.csi_errors(arts["csi"], ax=ax_e, label="CSI")
        if "icd" in arts:
            lplot.csi_errors(arts["icd"], ax=ax_e, label="ICD")
        lplot.csi_gains(arts["csi"], ax=ax_g)
        ax_e.set_title(f"{label}: error terms (first split)", fontsize=9)
        ax_g.set_title(f"{label}: CSI gain per pivot (line: stop gain)", fontsize=9)
        for ax in (ax_e, ax_g):
            ax.legend(fontsize=6)
            ax.tick_params(labelsize=7)
    return save_figure(
        fig,
        out_dir,
        "csi_traces.png",
        "CSI: the two error traces and the predicted vs true gains",
        dpi=100,
    )

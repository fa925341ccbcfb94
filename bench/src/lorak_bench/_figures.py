"""Figures the experiments share (matplotlib is imported inside, as plotting is
optional): errors per dataset beside the paper's, bars beside the paper's numbers,
metric curves per dataset, and the grid of panels they are drawn in."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

__all__ = [
    "bars_beside_paper",
    "curve_panels",
    "errors_by_dataset_figure",
    "finish_panels",
    "mean_std",
    "panel_grid",
    "plot_label",
]


def mean_std(rows_by_dataset):
    """``{dataset: (mean, std)}`` from aggregated result rows (None: not run)."""
    return {
        d: None if r is None or r["mean"] is None else (r["mean"], r["std"] or 0.0)
        for d, r in rows_by_dataset.items()
    }


def plot_label(result, part, dataset):
    """The dataset's row label in a plot: stand-ins say so."""
    return f"{dataset} (stand-in)" if result.is_stand_in(part, dataset) else dataset


def panel_grid(n, *, ncols=4, panel=(3.6, 2.8), pad=0.6, min_width=0.0):
    """A figure of ``n`` panels in rows of at most ``ncols``, each ``panel`` inches (plus
    ``pad`` inches of height for the legend and title): ``(fig, axes)`` with the ``n``
    axes in a flat array; the grid's unused cells are hidden."""
    import matplotlib.pyplot as plt

    ncols = min(ncols, n)
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(max(panel[0] * ncols, min_width), panel[1] * nrows + pad),
        squeeze=False,
    )
    flat = axes.ravel()
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


def finish_panels(fig, axes, title="", *, legend_ncol=5):
    """Small axis labels on every panel, one legend under the grid (the first panel's
    entries) and the title on top."""
    for ax in axes:
        ax.xaxis.label.set_fontsize(8)
        ax.yaxis.label.set_fontsize(8)
        ax.tick_params(labelsize=7)
    handles, names = axes[0].get_legend_handles_labels()
    if handles:
        fig.legend(
            handles,
            names,
            loc="lower center",
            ncol=min(len(names), legend_ncol),
            fontsize=7,
            frameon=False,
        )
    if title:
        fig.suptitle(title, fontsize=10)


def bars_beside_paper(ax, x, columns, *, log=False, marker_size=120):
    """Grouped bars at positions ``x``: one bar (mean ± std) per column of ``columns``
    (``(label, means, stds, paper_means)``, arrays over ``x``) and the paper's number
    as a black tick over each bar. On a log axis the lower error bar is clipped at 90 %
    of the mean instead of crossing zero. Returns the bar positions and colours per
    column."""
    width = 0.8 / max(len(columns), 1)
    placed = []
    for j, (label, mean, std, paper) in enumerate(columns):
        pos = np.asarray(x) - 0.4 + width * (j + 0.5)
        yerr = np.vstack([np.minimum(std, 0.9 * mean), std]) if log else std
        bars = ax.bar(pos, mean, width, yerr=yerr, capsize=2, label=label)
        ax.scatter(
            pos,
            paper,
            marker="_",
            s=marker_size,
            color="k",
            zorder=3,
            label="paper" if j == 0 else None,
        )
        placed.append((pos, bars.patches[0].get_facecolor() if bars.patches else None))
    return placed


def errors_by_dataset_figure(datasets, series, paper, *, title, xlabel=None):
    """A dot plot of errors: one row per dataset, our columns beside the paper's.

    Parameters
    ----------
    datasets : list of str
        Row labels, top to bottom (a stand-in is marked by the caller in its label).
    series : list of (label, {dataset: (mean, std)})
        Our columns: a dot with a ± std bar each, side by side within a row.
    paper : list of (label, marker, {dataset: mean})
        The paper's numbers, drawn as black/grey markers on the row's centre line.

    Returns the matplotlib figure (save it with :func:`lorak_bench._report.save_figure`).
    """
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10.5, 0.45 * len(datasets) + 2.0))
    step = 0.8 / max(len(series), 1)
    for k, (label, cols) in enumerate(series):
        pts = [
            (i - 0.4 + (k + 0.5) * step, *cols[d])
            for i, d in enumerate(datasets)
            if cols.get(d) is not None and cols[d][0] is not None
        ]
        if pts:
            ys, xs, es = zip(*pts, strict=True)
            es = [e if e is not None else 0.0 for e in es]
            ax.errorbar(xs, ys, xerr=es, fmt="o", ms=3.5, capsize=2, label=label)
    shades = ("k", "0.45", "0.7")
    for j, (label, marker, vals) in enumerate(paper):
        pts = [(vals[d], i) for i, d in enumerate(datasets) if vals.get(d) is not None]
        if pts:
            px, py = zip(*pts, strict=True)
            ax.scatter(px, py, marker=marker, s=60, c=shades[j % 3], zorder=5, label=label)
    ax.set_yticks(range(len(datasets)), list(datasets), fontsize=8)
    ax.set_ylim(len(datasets) - 0.5, -0.5)
    ax.set_xlabel(xlabel or "error on the unlabeled rows (%)", fontsize=9)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.set_title(title, fontsize=10)
    return fig


def curve_panels(
    result,
    part,
    x,
    methods,
    rows,
    out_dir,
    filename,
    *,
    title,
    suptitle,
    xlabel,
    figsize,
    rect,
    legend_from=(0, 0),
    axis=None,
):
    """A grid of curves: one column per dataset, one row per ``rows`` entry
    ``(metric or callable, ylabel)``; in each panel a line (mean ± std bars) per method
    of ``methods`` (``{name: label}``) against grid parameter ``x``.

    A callable ``metric(result, dataset, method)`` returns the ``(x, mean, std)``
    points itself. ``axis(ax, i)`` styles panel row ``i`` after the common styling.
    Saves ``out_dir/filename``; returns ``[(title, filename)]`` (empty without data).
    """
    import matplotlib.pyplot as plt

    labels = result.dataset_labels(part)
    if not labels:
        return []
    fig, axes = plt.subplots(len(rows), len(labels), figsize=figsize(len(labels)), squeeze=False)
    for j, d in enumerate(labels):
        for m, name in methods.items():
            for i, (metric, _) in enumerate(rows):
                if callable(metric):
                    pts = metric(result, d, m)
                else:
                    pts = sorted(
                        (r["params"][x], r["mean"], r["std"] or 0.0)
                        for r in result.select(part=part, dataset=d, method=m, metric=metric)
                        if r["mean"] is not None
                    )
                if not pts:
                    continue
                xs, ys, ss = map(np.asarray, zip(*pts, strict=False))
                axes[i, j].errorbar(xs, ys, yerr=ss, marker="o", ms=3, capsize=2, label=name)
        axes[0, j].set_title(d, fontsize=9)
        for i, (_, ylabel) in enumerate(rows):
            ax = axes[i, j]
            ax.set_xscale("log")
            if axis is not None:
                axis(ax, i)
            ax.set_xlabel(xlabel, fontsize=8)
            ax.set_ylabel(ylabel, fontsize=8)
            ax.tick_params(labelsize=7)
            ax.grid(alpha=0.3)
    h, lg = axes[legend_from].get_legend_handles_labels()
    fig.legend(h, lg, loc="lower center", ncol=2, fontsize=7, frameon=False)
    fig.suptitle(suptitle, fontsize=10)
    fig.tight_layout(rect=rect)
    fig.savefig(Path(out_dir) / filename, dpi=110)
    plt.close(fig)
    return [(title, filename)]

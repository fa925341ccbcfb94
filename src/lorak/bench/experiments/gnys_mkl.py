"""``gnys-mkl``: Zhang et al. (2017), Table 2 — generalized Nyström with multiple kernels
against MKL baselines.

Protocol (§6.2): the datasets and labeled-row draws of Table 1 (the ``gnys``
experiment's loaders, scaling and :func:`~lorak.bench.experiments.gnys.draw_labeled`:
100 labeled rows spread evenly over the classes, error on the unlabeled rows), 9
Gaussian kernels exp(−‖x−y‖²/b), b ∈ {2⁻⁴b₀, …, 2⁴b₀} (b₀ = mean pairwise squared
distance over all rows), SVM C = 1, λ on 10⁻⁵…10⁵ chosen by the product-of-alignments
criterion (the method's default).

Decisions (the same for every dataset)
--------------------------------------
- Landmarks: m̃ = m·τ/M shared by the 9 kernels (§4.2), τ = 3, m = 10 % of n (≤ 1000,
  as in ``gnys``), k-means centres computed once per repetition and used by every
  factor column (their time is added to each column's seconds).
- Factor columns (uniform sum, ABMKL, CABMKL, multiple-kernel generalized Nyström):
  :class:`lorak.SemiSupervisedFactorClassifier` — the factor fitted on all rows, a
  ``LinearSVC(C=1)`` on the labeled rows' features scaled to unit mean squared row
  norm (the ``gnys`` default reading). The three baselines are
  :class:`lorak.UniformKernelSum`, :class:`lorak.ABMKL`, :class:`lorak.CABMKL`: each
  base kernel's Nyström factor on the shared landmarks, weighted by √μ_j — they differ
  from the paper's ABMKL/CABMKL (Gönen's toolbox: full kernels, SVM on the labeled
  rows) in that the unlabeled rows enter through the landmarks.
- ABMKL-svc / CABMKL-svc columns: :class:`lorak.AlignmentMKLClassifier` — the same
  weightings computed from the exact l × l kernels of the labeled rows and an SVC (C = 1)
  on their combination, trained on the labeled rows only: the paper's ABMKL / CABMKL
  (Gönen's toolbox) protocol, so these are the columns set beside the paper's.
- GLMKL column: :class:`lorak.GLMKLClassifier` (group-lasso MKL, SVC on the 9
  precomputed l × l kernels of the labeled rows, ≤ 50 weight updates) — the paper's
  GLMKL comparator, on full kernels. It trains on the l = 100 labeled rows only, so it
  fits at every n here (the n × l prediction kernels are built in chunks).
- Multiple-kernel generalized Nyström: ``lorak.MultipleKernelGeneralizedNystroem``
  at its defaults with the bank and landmarks above; the column reads "pending" until
  that estimator is importable.
- MKLpy's EasyMKL and GRAM are compared in ``benchmarks/bench_mklpy.py`` (not here:
  MKLpy is not a lorak dependency).
- Repetitions: 10 on the 13 small sets, 3 on satimage, usps-full and mnist-test (the
  paper: 30). Measured cost of one repetition of all seven columns on the shared 2-core
  machine (load average ≈ 15, one BLAS thread): ≈ 4–8 s on the small sets, the
  multiple-kernel generalized Nyström taking most of it (3–6 s); ``--reps 30``
  reproduces the paper's count (``--reps`` sets both parts).
- mnist: mnist-test (10 000 images) stands in for the paper's 70 000; its paper row is
  shown for reference and not counted.
- ``--quick``: with the paper's data present, g241C, Digit1 and german (2
  repetitions) and satimage (1); without ``LORAK_DATA``, g241C and Digit1 (the SSL-book
  sets, from the ``datasets`` extra), still beside the paper's numbers.
"""

from __future__ import annotations

import math
import time

import numpy as np
from threadpoolctl import threadpool_limits

from ...kernels import KernelBank
from .._reference import load_reference
from .._report import fmt_num, markdown_table, save_figure, text_table
from .._spec import Experiment, Method, Metric, Part
from .gnys import (
    BLAS_THREADS,
    LARGE_DATASETS,
    N_LABELED,
    PAPER_KEY,
    QUICK_LARGE,
    SMALL_DATASETS,
    Outcome,
    _cell,
    _kmeans_landmarks,
    _paired,
    _prepare,
    draw_labeled,
    errors_by_dataset_figure,
    mean_std,
    plot_label,
    reference_entry,
)

__all__ = [
    "EXPERIMENTS",
    "GNYS_MKL",
    "MKGN_PENDING",
    "make_mkgn",
    "mkgn_available",
    "table2_summary",
]

TAU = 3
FACTORS = tuple(2.0 ** np.arange(-4, 5))
M_KERNELS = len(FACTORS)
C_SVM = 1.0
GLMKL_MAX_ITER = 50
REPS_SMALL = 10
REPS_LARGE = 3
MKGN_PENDING = "pending (h2a: lorak.MultipleKernelGeneralizedNystroem)"
QUICK_SMALL = ("g241C", "Digit1", "german")


# ---------------------------------------------------------------- context


def prepare_mkl(data, m_single=None) -> dict:
    """``gnys``'s context (b₀, labeled and landmark caches) with m replaced by m̃."""
    ctx = _prepare(data)
    m = ctx["m"] if m_single is None else int(m_single)
    ctx["m_single"] = m
    ctx["m"] = int(min(max(1, round(m * TAU / M_KERNELS)), data.n_samples))
    ctx["bank"] = KernelBank.gaussian(factors=FACTORS, base=ctx["b0"])
    return ctx


def labeled_rows(task) -> np.ndarray:
    """The repetition's labeled rows: ``task.params["l"]`` of them (default 100),
    drawn evenly over the classes from the repetition's seed (for l = 100 the very
    rows ``gnys`` uses)."""
    n_lab = int(task.params.get("l", N_LABELED))
    cache = task.context["labeled"]
    key = task.seed if n_lab == N_LABELED else (task.seed, n_lab)
    if key not in cache:
        salt = [task.seed, 7] if n_lab == N_LABELED else [task.seed, 7, n_lab]
        cache[key] = draw_labeled(task.data.y, n_lab, np.random.default_rng(salt))
    return cache[key]


def _semi_codes(task):
    lab = labeled_rows(task)
    y = task.data.y
    yu = np.full(y.shape[0], -1, dtype=np.int64)
    yu[lab] = y[lab]
    return lab, yu


def _error(pred, task):
    mask = np.ones(task.data.n_samples, dtype=bool)
    mask[labeled_rows(task)] = False
    return 100.0 * float(np.mean(np.asarray(pred)[mask] != task.data.y[mask]))


# ---------------------------------------------------------------- methods


def mkgn_available() -> bool:
    """Whether ``lorak.MultipleKernelGeneralizedNystroem`` can be imported."""
    try:
        from ...multiple_kernel import MultipleKernelGeneralizedNystroem  # noqa: F401
    except ImportError:
        return False
    return True


def make_mkgn(bank, Z, **kw):
    """The multiple-kernel generalized Nyström factor on ``bank`` with landmarks Z."""
    from ...multiple_kernel import MultipleKernelGeneralizedNystroem as MKGN

    params = MKGN().get_params()
    args = {"landmarks": Z}
    for name in ("kernels", "bank"):
        if name in params:
            args[name] = bank
            break
    args.update({k: v for k, v in kw.items() if k in params})
    return MKGN(**args)


def _factor_column(name, label, make, applies=None):
    def run(task):
        from ...semi_supervised import SemiSupervisedFactorClassifier

        Z, lm_wall, lm_cpu = _kmeans_landmarks(task)
        _, yu = _semi_codes(task)
        t0, c0 = time.perf_counter(), time.process_time()
        with threadpool_limits(BLAS_THREADS):
            clf = SemiSupervisedFactorClassifier(make(task, Z)).fit(task.data.X, yu)
            pred = clf.transduction_
        wall = time.perf_counter() - t0 + lm_wall
        cpu = time.process_time() - c0 + lm_cpu
        f = clf.factor_
        w = np.asarray(getattr(f, "weights_", [math.nan]), dtype=float)
        extra = {
            "lam": float(getattr(f, "lam_", math.nan)),
            "kernels_used": float(np.sum(w > 0)),
            "rank": float(clf.classifier_.coef_.shape[1]),
        }
        return Outcome(_error(pred, task), wall, cpu, extra)

    run.__name__ = f"run_{name}"
    return Method(name=name, run=run, label=label, applies=applies)


def _combination(cls_name):
    def make(task, Z):
        from ... import kernel_combination

        return getattr(kernel_combination, cls_name)(
            task.context["bank"], landmarks=Z, random_state=0
        )

    return make


def _make_mkgn_task(task, Z):
    return make_mkgn(task.context["bank"], Z, random_state=0)


def _svc_column(name, label, weighting):
    """Weights from the exact kernels of the labeled rows + SVC: the paper's protocol."""

    def run(task):
        from ...kernel_combination import AlignmentMKLClassifier

        _, yu = _semi_codes(task)
        t0, c0 = time.perf_counter(), time.process_time()
        with threadpool_limits(BLAS_THREADS):
            c = AlignmentMKLClassifier(task.context["bank"], weighting=weighting, C=C_SVM).fit(
                task.data.X, yu
            )
        extra = {"lam": math.nan, "kernels_used": float(np.sum(c.weights_ > 0)), "rank": math.nan}
        return Outcome(
            _error(c.transduction_, task),
            time.perf_counter() - t0,
            time.process_time() - c0,
            extra,
        )

    run.__name__ = f"run_{name}"
    return Method(name=name, run=run, label=label)


def _run_glmkl(task):
    from ...kernel_combination import GLMKLClassifier

    _, yu = _semi_codes(task)
    t0, c0 = time.perf_counter(), time.process_time()
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    with threadpool_limits(BLAS_THREADS), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        g = GLMKLClassifier(task.context["bank"], C=C_SVM, max_iter=GLMKL_MAX_ITER).fit(
            task.data.X, yu
        )
    extra = {
        "lam": math.nan,
        "kernels_used": float(np.sum(g.weights_ > 0)),
        "rank": math.nan,
        "n_iter": float(g.n_iter_),
    }
    return Outcome(
        _error(g.transduction_, task),
        time.perf_counter() - t0,
        time.process_time() - c0,
        extra,
    )


UNIFORM = _factor_column("uniform", "uniform sum (factors)", _combination("UniformKernelSum"))
ABMKL_COL = _factor_column("abmkl", "ABMKL (factors)", _combination("ABMKL"))
CABMKL_COL = _factor_column("cabmkl", "CABMKL (factors)", _combination("CABMKL"))
ABMKL_SVC = _svc_column("abmkl-svc", "ABMKL (SVC, full kernels on labeled rows)", "alignment")
CABMKL_SVC = _svc_column(
    "cabmkl-svc", "CABMKL (SVC, full kernels on labeled rows)", "centered_alignment"
)
GLMKL_COL = Method("glmkl", _run_glmkl, label="GLMKL (SVC, full kernels on labeled rows)")
MKGN_COL = _factor_column(
    "mkgn",
    "GenNys multiple kernels",
    _make_mkgn_task,
    applies=lambda data, params: mkgn_available(),
)
TABLE2_METHODS = (UNIFORM, ABMKL_COL, CABMKL_COL, ABMKL_SVC, CABMKL_SVC, GLMKL_COL, MKGN_COL)
EXTRA_NAMES = ("lam", "kernels_used", "rank")


def outcome_metrics(out: Outcome, task) -> dict:
    d = {"error_pct": out.error_pct, "cpu_seconds": out.cpu_seconds}
    for k in EXTRA_NAMES:
        d[k] = out.extra.get(k, math.nan)
    return d


TABLE2_METRICS = (Metric(("error_pct", "cpu_seconds", *EXTRA_NAMES), outcome_metrics),)


# ---------------------------------------------------------------- reference numbers

PAPER_METHOD = {
    "abmkl-svc": "ABMKL",
    "cabmkl-svc": "CABMKL",
    "glmkl": "GLMKL",
    "mkgn": "GenNystromMKL",
}
PAPER_ONLY = ("SKM", "SimpleMKL")


def paper_row(dataset):
    key = PAPER_KEY.get(dataset, dataset)
    if key is None:
        return None
    return load_reference("generalized_nystrom")["table2_multiple_kernels"].get(key)


def _reference(dataset, method, params, metric):
    if metric != "error_pct":
        return None
    return reference_entry(
        paper_row(dataset),
        PAPER_METHOD.get(method),
        f"generalized_nystrom.json#table2_multiple_kernels/{dataset}",
    )


# ---------------------------------------------------------------- tables and counts


def _row(result, dataset, method, metric="error_pct"):
    for part in ("small", "large"):
        rows = result.select(part=part, dataset=dataset, method=method, metric=metric)
        if rows:
            return part, rows[0]
    return None, None


def _errors(result, part, dataset, method):
    out = {}
    for rec in result.select_records(part=part, dataset=dataset, method=method):
        if rec["error"] is None and "error_pct" in rec["metrics"]:
            out[rec["seed"]] = rec["metrics"]["error_pct"]
    return out


def table2_summary(result) -> dict:
    """Per dataset: our columns, the best of them, paired tests of GenNys-MKL against
    each baseline; counts of datasets where each column is best."""
    order = {d.display: i for i, d in enumerate(SMALL_DATASETS + LARGE_DATASETS)}
    seen = [lbl for p in ("small", "large") for lbl in result.dataset_labels(p)]
    labels = sorted(dict.fromkeys(seen), key=lambda s: order.get(s, len(order)))
    names = [m.name for m in TABLE2_METHODS]
    rows = []
    best_counts = dict.fromkeys(names, 0)
    sig = {"datasets": 0, **{f"mkgn_beats_{b}": 0 for b in names if b != "mkgn"}}
    sig.update({f"mkgn_beats_{b}_significant": 0 for b in names if b != "mkgn"})
    paper_best = {"ours_best_comparable": 0, "paper_gn_best": 0, "comparable": 0}
    within = {b: 0 for b in PAPER_METHOD}
    for d in labels:
        cols, part = {}, None
        for m in names:
            p, r = _row(result, d, m)
            cols[m] = r if r is not None and r["mean"] is not None else None
            part = part or p
        if part is None:
            continue
        present = {m: cols[m]["mean"] for m in names if cols[m] is not None}
        best = min(present, key=present.get) if present else None
        if best is not None:
            best_counts[best] += 1
        tests = {}
        if cols["mkgn"] is not None:
            sig["datasets"] += 1
            e_gn = _errors(result, part, d, "mkgn")
            for b in names:
                if b == "mkgn":
                    continue
                dv, pv, _ = _paired(e_gn, _errors(result, part, d, b))
                tests[b] = (dv, pv)
                if dv is not None:
                    sig[f"mkgn_beats_{b}"] += dv < 0
                    sig[f"mkgn_beats_{b}_significant"] += dv < 0 and pv < 0.05
        paper = paper_row(d)
        if paper is not None:
            pm = paper["methods"]
            paper_best["comparable"] += 1
            pbest = min(pm, key=lambda k: pm[k]["error_pct_mean"])
            paper_best["paper_gn_best"] += pbest == "GenNystromMKL"
            paper_best["ours_best_comparable"] += best == "mkgn"
            for ours, theirs in PAPER_METHOD.items():
                c = cols.get(ours)
                if c is not None and theirs in pm:
                    within[ours] += (
                        abs(c["mean"] - pm[theirs]["error_pct_mean"]) <= pm[theirs]["error_pct_std"]
                    )
        rows.append(
            {
                "dataset": d,
                "part": part,
                "cols": cols,
                "best": best,
                "tests": tests,
                "reps": max((c.get("n") or 0) for c in cols.values() if c) if present else 0,
            }
        )
    return {
        "rows": rows,
        "best_counts": best_counts,
        "mkgn_vs": sig,
        "paper": paper_best,
        "within_paper_std": within,
    }


def _paper_cell(dataset, name, field="error"):
    row = paper_row(dataset)
    if row is None or name not in row["methods"]:
        return "—"
    r = row["methods"][name]
    if field == "seconds":
        return fmt_num(r["seconds"], 3)
    return f"{r['error_pct_mean']:.2f} ± {r['error_pct_std']:.2f}"


def _seconds(result, d, m):
    _, r = _row(result, d, m)
    if r is None:
        return None
    return r.get("seconds_mean")


def _table2(result, *, markdown: bool) -> str:
    s = table2_summary(result)
    on = mkgn_available()
    render = markdown_table if markdown else text_table
    header = [
        "dataset",
        "uniform",
        "ABMKL",
        "CABMKL",
        "ABMKL-svc",
        "(paper ABMKL)",
        "CABMKL-svc",
        "(paper CABMKL)",
        "GLMKL",
        "(paper)",
        "GN-MKL",
        "(paper)",
        "(paper SKM)",
        "(paper SimpleMKL)",
        "best (ours)",
    ]
    body = []
    for r in s["rows"]:
        c, d = r["cols"], r["dataset"]
        gn = _cell(c["mkgn"]) if on else MKGN_PENDING
        if on and c["mkgn"] is not None and r["tests"]:
            stars = [
                b for b, (dv, pv) in r["tests"].items() if dv is not None and dv < 0 and pv < 0.05
            ]
            gn += f" [<{len(stars)}*]" if stars else ""
        body.append(
            [
                d,
                _cell(c["uniform"]),
                _cell(c["abmkl"]),
                _cell(c["cabmkl"]),
                _cell(c["abmkl-svc"]),
                _paper_cell(d, "ABMKL"),
                _cell(c["cabmkl-svc"]),
                _paper_cell(d, "CABMKL"),
                _cell(c["glmkl"]),
                _paper_cell(d, "GLMKL"),
                gn,
                _paper_cell(d, "GenNystromMKL"),
                _paper_cell(d, "SKM"),
                _paper_cell(d, "SimpleMKL"),
                r["best"] or "—",
            ]
        )
    theader = ["dataset", "uniform", "ABMKL", "CABMKL", "ABMKL-svc", "(paper)", "CABMKL-svc"]
    theader += ["(paper)", "GLMKL", "(paper)", "GN-MKL", "(paper)"]
    tbody = []
    for r in s["rows"]:
        d = r["dataset"]
        tbody.append(
            [
                d,
                fmt_num(_seconds(result, d, "uniform"), 3),
                fmt_num(_seconds(result, d, "abmkl"), 3),
                fmt_num(_seconds(result, d, "cabmkl"), 3),
                fmt_num(_seconds(result, d, "abmkl-svc"), 3),
                _paper_cell(d, "ABMKL", "seconds"),
                fmt_num(_seconds(result, d, "cabmkl-svc"), 3),
                _paper_cell(d, "CABMKL", "seconds"),
                fmt_num(_seconds(result, d, "glmkl"), 3),
                _paper_cell(d, "GLMKL", "seconds"),
                fmt_num(_seconds(result, d, "mkgn"), 3) if on else "pending",
                _paper_cell(d, "GenNystromMKL", "seconds"),
            ]
        )
    bc = s["best_counts"]
    n = len(s["rows"])
    vs = s["mkgn_vs"]
    pp = s["paper"]
    w = s["within_paper_std"]
    lines = [
        render(header, body),
        "",
        "Errors (%) on the unlabeled rows, mean ± std over repetitions; paper numbers "
        "(Table 2) beside ours. uniform/ABMKL/CABMKL: Nyström factors of the 9 kernels on "
        "the shared k-means landmarks (m̃ = m·3/9), weighted, LinearSVC(C=1) on the labeled "
        "rows. -svc and GLMKL: SVC(C=1) on the full kernels of the labeled rows (the "
        "paper's protocol for its comparators). [<k*]: GN-MKL "
        "lower than k baselines with p < 0.05 (paired t-test over repetitions).",
        "",
        "Lowest mean error among our columns: "
        + ", ".join(f"{k} {v}/{n}" for k, v in bc.items())
        + ".",
    ]
    if on and vs["datasets"]:
        nd = vs["datasets"]
        lines.append(
            "GN-MKL below each baseline (significant at 5 %): "
            + ", ".join(
                f"{b} {vs[f'mkgn_beats_{b}']}/{nd} ({vs[f'mkgn_beats_{b}_significant']})"
                for b in ("uniform", "abmkl", "cabmkl", "abmkl-svc", "cabmkl-svc", "glmkl")
            )
            + "."
        )
        lines.append(
            f"On the {pp['comparable']} datasets with a paper row: our GN-MKL is our best "
            f"column on {pp['ours_best_comparable']}; the paper's GN-MKL is the paper's "
            f"best on {pp['paper_gn_best']} (of these rows; 11/17 in the paper, webspam "
            "and mnist-70k included)."
        )
    else:
        lines.append(f"GN-MKL: {MKGN_PENDING}.")
    lines.append(
        "Within one paper std of the paper's same-named column: "
        + ", ".join(f"{k} {v}/{pp['comparable']}" for k, v in w.items())
        + " (mnist-test not compared: the paper used 70 000 images)."
    )
    lines += ["", "Seconds per repetition (wall, single-threaded BLAS; paper: a 2013 laptop):"]
    lines += ["", render(theader, tbody)]
    return "\n".join(lines)


def _plots(result, out_dir):
    """One row per dataset: each of our columns (mean ± std) and the paper's GN-MKL."""
    rows = table2_summary(result)["rows"]
    if not rows:
        return []
    shown = {r["dataset"]: plot_label(result, r["part"], r["dataset"]) for r in rows}
    series = []
    for m in TABLE2_METHODS:
        cols = mean_std({shown[r["dataset"]]: r["cols"].get(m.name) for r in rows})
        if any(v is not None for v in cols.values()):
            series.append((m.display, cols))
    vals = {}
    for r in rows:
        paper = paper_row(r["dataset"])
        if paper is not None and "GenNystromMKL" in paper["methods"]:
            vals[shown[r["dataset"]]] = paper["methods"]["GenNystromMKL"]["error_pct_mean"]
    fig = errors_by_dataset_figure(
        list(shown.values()),
        series,
        [("paper GN-MKL", "x", vals)],
        title="Table 2: our columns (mean ± std) and the paper's GN-MKL",
    )
    return save_figure(
        fig, out_dir, "table2_errors.png", "Table 2: errors per dataset, beside the paper's GN-MKL"
    )


def _checks(result) -> str:
    return "### Table 2, ours beside the paper's\n\n" + _table2(result, markdown=True)


def _summary(result) -> str:
    return f"gnys-mkl: {len(result.failures)} failures, {result.wall_seconds:.1f} s\n\n" + _table2(
        result, markdown=False
    )


GNYS_MKL = Experiment(
    name="gnys-mkl",
    description="Generalized Nyström, multiple kernels vs MKL baselines: Table 2 of "
    "Zhang et al. (2017)",
    parts=(
        Part(
            name="small",
            description=f"13 sets with n ≤ 3089, {REPS_SMALL} repetitions",
            datasets=SMALL_DATASETS,
            methods=TABLE2_METHODS,
            metrics=TABLE2_METRICS,
            reps=REPS_SMALL,
            quick_reps=2,
            quick_paper_datasets=QUICK_SMALL,
            lookup_datasets=LARGE_DATASETS,
            prepare=prepare_mkl,
        ),
        Part(
            name="large",
            description=f"satimage, usps-full, mnist-test, {REPS_LARGE} repetitions",
            datasets=LARGE_DATASETS,
            methods=TABLE2_METHODS,
            metrics=TABLE2_METRICS,
            reps=REPS_LARGE,
            quick_reps=1,
            quick_paper_datasets=QUICK_LARGE,
            lookup_datasets=SMALL_DATASETS,
            prepare=prepare_mkl,
        ),
    ),
    reference=_reference,
    checks=_checks,
    summary=_summary,
    plots=_plots,
    paper="K. Zhang, L. Lan, J. Liu, A. Rauber, F. Moerchen, Inductive kernel low-rank "
    "decomposition with priors: a generalized Nyström method, Pattern Recognition (2017), "
    "§6.2, Table 2",
)

EXPERIMENTS = [GNYS_MKL]

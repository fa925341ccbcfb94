"""``lssvm-usps``: Zhang, Tsang & Kwok (2008), §4.3, Table 4 — LS-SVM on low-rank factors.

Eleven USPS digit pairs (1-7, 2-3, 2-5, 3-8, 5-8, 6-8, 8-9, 2-7, 3-5, 4-7, 5-6): train on
the pair's rows of the ``usps`` training set, test on its rows of the test set (LIBSVM
USPS, 7291 + 2007 rows). LS-SVM with C = 0.5 and the Gaussian exp(−‖x−y‖²/γ), γ = the
mean squared distance of the training pair to its mean; m ∈ {0.05 n, 0.1 n} with n the
training-pair size. Score: test error (%). 20 repetitions of the randomized factors.

Methods: ``exact`` (the dense LS-SVM, :func:`lorak.models.lssvm_fit_dense`), ``svd``
(the best rank-m factor: top m eigenpairs of K), ``kmeans``, ``rls`` (ridge-leverage-score
landmarks; not in the paper), ``uniform``,
``column_norm`` (Drineas–Mahoney) Nyström, ``icd`` (pivoted incomplete Cholesky). Every
factor goes through the same :class:`lorak.models.LSSVC` (Woodbury, O(m²n)); exact, svd
and icd are deterministic (one run).

Decisions
---------
- Labels: the first digit of the pair is +1, the second −1.
- The exact LS-SVM does not depend on m; it is solved once per pair and its time is
  reported for both grid points.
- Seconds are training time (factor + LS-SVM); prediction is not timed.
- ``--quick`` runs three of the pairs (1-7, 3-8, 5-6), 3 repetitions; without
  LORAK_DATA, the same pairs of scikit-learn's 8 × 8 ``digits`` (first 2/3 of each
  pair's rows train, the rest test): stand-ins without paper numbers.
"""

from __future__ import annotations

from functools import lru_cache, partial

import numpy as np

from lorak.kernels import kernel_block
from lorak.models import LSSVC, lssvm_fit_dense

from .._factors import factor_columns, gaussian_bandwidth, gaussian_context
from .._figures import bars_beside_paper
from .._reference import cite
from .._report import fmt_num, markdown_table, save_figure
from .._spec import DatasetSpec, Experiment, FactorOutput, LoadedData, Method, Metric
from ._zhang2008 import APPROX_KEYS, kmeans_section, paper_table, ratio_part

__all__ = ["EXPERIMENT", "PAIRS", "load_pair", "table4_rows"]

C = 0.5
PAIRS = ("1-7", "2-3", "2-5", "3-8", "5-8", "6-8", "8-9", "2-7", "3-5", "4-7", "5-6")
QUICK_PAIRS = ("1-7", "3-8", "5-6")
RATIOS = (0.05, 0.1)
HEATMAP_ROWS = 300  # the kernel heatmaps show this many training rows per pair
METHOD_ORDER = ("exact", "svd", "kmeans", "rls", "uniform", "column_norm", "icd")
PAPER_KEYS = {"svd": "svd", **APPROX_KEYS}


# ---------------------------------------------------------------- data


@lru_cache(maxsize=2)
def _usps(data_home):
    from lorak.datasets import load

    tr = load("usps", split="train", data_home=data_home)
    te = load("usps", split="test", data_home=data_home)
    return _dense(tr.X), np.asarray(tr.y), _dense(te.X), np.asarray(te.y)


@lru_cache(maxsize=1)
def _digits():
    from sklearn.datasets import load_digits

    d = load_digits()
    return d.data.astype(np.float64), d.target


def _dense(X):
    X = X.toarray() if hasattr(X, "toarray") else X
    return np.ascontiguousarray(X, dtype=np.float64)


def _select(X, y, a, b):
    keep = (y == a) | (y == b)
    return np.ascontiguousarray(X[keep]), np.where(y[keep] == a, 1, -1)


def load_pair(pair: str, data_home=None, *, source: str = "usps"):
    """``(X_train, y_train, X_test, y_test)`` of a digit pair "a-b" (a → +1, b → −1)."""
    a, b = (int(t) for t in pair.split("-"))
    if source == "usps":
        Xtr, ytr, Xte, yte = _usps(None if data_home is None else str(data_home))
        return (*_select(Xtr, ytr, a, b), *_select(Xte, yte, a, b))
    X, y = _digits()
    Xp, yp = _select(X, y, a, b)
    cut = (2 * len(yp)) // 3
    return Xp[:cut], yp[:cut], Xp[cut:], yp[cut:]


def _pair_loader(spec: DatasetSpec, data_home, *, source) -> LoadedData:
    Xtr, ytr, Xte, yte = load_pair(spec.display.split()[-1], data_home, source=source)
    return LoadedData(
        spec=spec,
        X=Xtr,
        y=ytr,
        X_test=Xte,
        y_test=yte,
        meta={"split": "train/test", "source": source, "n_test": len(yte)},
    )


DATASETS = tuple(
    DatasetSpec("usps", label=p, loader=partial(_pair_loader, source="usps")) for p in PAIRS
)
STAND_INS = tuple(
    DatasetSpec(
        "digits", label=f"digits {p}", loader=partial(_pair_loader, source="digits"), stand_in=True
    )
    for p in QUICK_PAIRS
)


def _prepare_pair(data) -> dict:
    ctx = gaussian_context(data)
    kernel = ctx["kernel"]
    n = data.n_samples
    rows = np.arange(n)
    if n > HEATMAP_ROWS:
        rows = np.sort(np.random.default_rng(0).choice(n, HEATMAP_ROWS, replace=False))
    Xs = _dense(data.X[rows])
    # a factor of the exact kernel on the sample (K = G Gᵀ), for the heatmap plot
    lam, U = np.linalg.eigh(kernel_block(kernel, Xs, Xs))
    G = U * np.sqrt(np.clip(lam, 0.0, None))
    arts = {"rows": rows, "y": np.asarray(data.y)[rows], "exact": G}
    return {**ctx, "artifacts": arts}


# ---------------------------------------------------------------- methods


class _DenseLSSVM:
    """The exact LS-SVM's predictor: sign(k(x, X) β + b)."""

    def __init__(self, kernel, X, beta, b):
        self.kernel, self.X, self.beta, self.b = kernel, X, beta, b

    def predict(self, Xn):
        f = kernel_block(self.kernel, Xn, self.X) @ self.beta[:, 0] + self.b[0]
        return np.where(f > 0, 1, -1)


def _run_exact_lssvm(task) -> FactorOutput:
    """The dense LS-SVM, fitted once per pair (shared by the grid's ratios; the runner
    charges its cost to each)."""

    def fit():
        X, kernel = task.data.X, task.context["kernel"]
        beta, b = lssvm_fit_dense(kernel_block(kernel, X, X), task.data.y, C)
        return _DenseLSSVM(kernel, X, beta, b)

    return FactorOutput(estimator=task.shared("exact", fit))


def _lssvm_method(name, build, *, label, deterministic=False) -> Method:
    """Timed step: ``LSSVC(factor, C).fit(X, y)`` (the factor is fitted inside)."""

    def run(task) -> FactorOutput:
        model = LSSVC(build(task), C=C).fit(task.data.X, task.data.y)
        arts = task.context.get("artifacts")
        key = f"{name}@{task.params['ratio']}"
        if arts is not None and task.rep == 0 and name in ("kmeans", "uniform"):
            arts[key] = model.factor_.transform(task.data.X[arts["rows"]])
        return FactorOutput(estimator=model)

    run.__name__ = f"run_{name}"
    return Method(name, run, deterministic=deterministic, label=label)


EXACT = Method("exact", _run_exact_lssvm, deterministic=True, label="exact LS-SVM")
COLUMNS = factor_columns(_lssvm_method, gaussian_bandwidth, svd_label="SVD (rank m)")


def _test_error(out: FactorOutput, task) -> float:
    pred = out.estimator.predict(task.data.X_test)
    return 100.0 * float(np.mean(pred != task.data.y_test))


# ---------------------------------------------------------------- reference and checks


def _paper_table4() -> dict:
    return paper_table("table4_lssvm_usps_pairs")["table"]


def _ratio_key(ratio) -> str:
    return f"m_{float(ratio):g}n"


def _lssvm_reference(dataset, method, params, metric):
    if metric != "test_error" or dataset not in PAIRS:
        return None
    t = _paper_table4()
    i = t["pairs"].index(dataset)
    if method == "exact":
        return {"mean": t["exact_lssvm_test_error_pct"][i], "source": "Table 4, LS-SVM"}
    key = PAPER_KEYS.get(method)
    block = t.get(_ratio_key(params.get("ratio")), {})
    if key is None or key not in block:
        return None
    entry = dict(block[key][i])
    entry["source"] = f"Table 4, {_ratio_key(params.get('ratio'))}"
    return entry


def table4_rows(result) -> list[dict]:
    """One row per (pair, ratio): ``{method: (mean, std)}`` of ours and of the paper."""
    rows = []
    t = _paper_table4()
    for label in result.dataset_labels("table4"):
        stand_in = result.is_stand_in("table4", label)
        by_ratio: dict = {}
        for r in result.select(part="table4", dataset=label, metric="test_error"):
            if r["mean"] is None:
                continue
            ratio = r["params"]["ratio"]
            d = by_ratio.setdefault(ratio, {"m": r["params"]["m"], "ours": {}, "paper": {}})
            d["ours"][r["method"]] = (r["mean"], r["std"], r["reps"])
        for ratio, d in sorted(by_ratio.items()):
            if not stand_in and label in t["pairs"]:
                i = t["pairs"].index(label)
                d["paper"]["exact"] = (t["exact_lssvm_test_error_pct"][i], None, 1)
                for ours_name, key in PAPER_KEYS.items():
                    e = t.get(_ratio_key(ratio), {}).get(key)
                    if e is not None:
                        d["paper"][ours_name] = (e[i]["mean"], e[i].get("std"), None)
            rows.append({"pair": label, "ratio": ratio, "stand_in": stand_in, **d})
    return rows


def _lssvm_cell(e) -> str:
    if e is None:
        return "—"
    mean, std, reps = e
    if std and (reps is None or reps > 1):
        return f"{mean:.2f} ± {std:.2f}"
    return f"{mean:.2f}"


def _lssvm_checks(result) -> str:
    rows = table4_rows(result)
    if not rows:
        return ""
    out = [
        "### Table 4 side by side: test error % (ours / paper)",
        "",
        f"LS-SVM, C = {C}; mean ± std over the repetitions of the randomized factors.",
        "",
    ]
    methods = [m for m in METHOD_ORDER if any(m in r["ours"] for r in rows)]
    for ratio in sorted({r["ratio"] for r in rows}):
        sub = [r for r in rows if r["ratio"] == ratio]
        out += [f"**m = {fmt_num(ratio)} n**", ""]
        body = [
            [
                r["pair"] + (" (stand-in)" if r["stand_in"] else ""),
                str(r["m"]),
                *[
                    f"{_lssvm_cell(r['ours'].get(m))} / {_lssvm_cell(r['paper'].get(m))}"
                    for m in methods
                ],
            ]
            for r in sub
        ]
        out += [markdown_table(["pair", "m", *methods], body), ""]
    groups = [
        (f"m = {fmt_num(ratio)} n", lambda r, ratio=ratio: r["ratio"] == ratio)
        for ratio in sorted({r["ratio"] for r in rows})
    ]
    out += kmeans_section(rows, "pair × m", groups=groups)
    return "\n".join(out)


# ---------------------------------------------------------------- plots


def _lssvm_plots(result, out_dir):
    import matplotlib.pyplot as plt

    rows = table4_rows(result)
    if not rows:
        return []
    ratios = sorted({r["ratio"] for r in rows})
    names = {m.name: m.display for m in result.experiment.part("table4").methods}
    methods = [
        m
        for m in ("svd", "kmeans", "uniform", "column_norm", "icd")
        if any(m in r["ours"] for r in rows)
    ]
    fig, axes = plt.subplots(len(ratios), 1, figsize=(11, 3.4 * len(ratios)), squeeze=False)
    for ax, ratio in zip(axes[:, 0], ratios, strict=True):
        sub = [r for r in rows if r["ratio"] == ratio]
        x = np.arange(len(sub))

        def column(key, m, i, sub=sub):
            return np.array([r[key].get(m, (np.nan, 0))[i] or 0.0 for r in sub], dtype=float)

        columns = [
            (names.get(m, m), column("ours", m, 0), column("ours", m, 1), column("paper", m, 0))
            for m in methods
        ]
        bars_beside_paper(ax, x, columns, marker_size=90)
        exact = np.array([r["ours"].get("exact", (np.nan,))[0] for r in sub], dtype=float)
        ax.scatter(x, exact, marker="*", color="crimson", zorder=4, label="exact LS-SVM (ours)")
        ax.set_xticks(x)
        ax.set_xticklabels([r["pair"] for r in sub], fontsize=8)
        ax.set_ylabel("test error %", fontsize=8)
        ax.set_title(f"m = {fmt_num(ratio)} n", fontsize=9)
        ax.grid(alpha=0.3, axis="y")
    axes[0, 0].legend(fontsize=7, ncol=4)
    fig.suptitle(
        "Table 4: LS-SVM on USPS pairs (bars: ours, mean ± std; black: paper)", fontsize=10
    )
    made = save_figure(fig, out_dir, "table4_lssvm.png", "Table 4: test error per digit pair")
    return made + _heatmap_plot(result, out_dir)


def _heatmap_plot(result, out_dir, max_pairs: int = 3):
    """Exact kernel vs the Nyström kernels at m = 0.05 n on 300 training rows of the
    first pairs, rows sorted by label (:func:`lorak.plot.kernel_heatmap`)."""
    import matplotlib.pyplot as plt

    from lorak import plot as lplot

    arts = result.artifacts.get("table4", {})
    ratio = min(RATIOS)
    panels = (
        ("exact", "exact kernel"),
        (f"kmeans@{ratio}", "k-means Nyström"),
        (f"uniform@{ratio}", "uniform Nyström"),
    )
    pairs = [
        lab
        for lab in result.dataset_labels("table4")
        if all(k in arts.get(lab, {}) for k, _ in panels)
    ][:max_pairs]
    if not pairs:
        return []
    fig, axes = plt.subplots(len(pairs), 3, figsize=(12, 3.6 * len(pairs)), squeeze=False)
    for row, pair in zip(axes, pairs, strict=True):
        a = arts[pair]
        for ax, (key, title) in zip(row, panels, strict=True):
            # Gaussian kernel values lie in [0, 1]: one colour scale for the three
            lplot.kernel_heatmap(
                a[key], y=a["y"], max_samples=len(a["y"]), ax=ax, vmin=0.0, vmax=1.0
            )
            ax.set_title(f"{pair}: {title}", fontsize=9)
    fig.suptitle(
        f"Kernel on {len(arts[pairs[0]]['y'])} training rows sorted by label "
        f"(Nyström: m = {fmt_num(ratio)} n, first repetition)",
        fontsize=10,
    )
    return save_figure(
        fig,
        out_dir,
        "kernel_heatmaps.png",
        "Exact vs Nyström kernels on a sample, sorted by label",
        dpi=90,
    )


# ---------------------------------------------------------------- the experiment

TABLE4 = ratio_part(
    RATIOS,
    name="table4",
    description="LS-SVM test error on USPS digit pairs, C = 0.5, m ∈ {0.05 n, 0.1 n} (Table 4)",
    datasets=DATASETS,
    quick_datasets=STAND_INS,
    quick_paper_datasets=QUICK_PAIRS,
    methods=(EXACT, *COLUMNS.values()),
    metrics=(Metric("test_error", _test_error),),
    prepare=_prepare_pair,
)

EXPERIMENT = Experiment(
    name="lssvm-usps",
    description="LS-SVM on low-rank factors, USPS digit pairs (Zhang, Tsang & Kwok 2008, Table 4)",
    parts=(TABLE4,),
    reference=_lssvm_reference,
    checks=_lssvm_checks,
    plots=_lssvm_plots,
    paper=cite("improved_nystrom", "§4.3 (Table 4)"),
)

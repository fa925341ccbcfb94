"""What the generalized Nyström experiments share: Zhang et al. (2017)'s datasets, the
paper's tables, and the columns (methods) of its Tables 1, 2 and A1 and Fig. 2.

Not an experiment (the leading underscore keeps it out of discovery): ``gnys``,
``gnys-alignment``, ``gnys-beta``, ``gnys-mkl`` and ``gnys-labels`` declare their parts
from these pieces and the protocol of :mod:`lorak_bench._ssl`.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np

from lorak.kernels import KernelBank

from .._compare import reference_entry
from .._reference import load_reference
from .._spec import Method, Part
from .._ssl import factor_column, labeled_rows, semi_labels, ssl_metric, ssl_spec, unlabeled_error
from .._ssl import prepare as prepare_ssl

BLAS_THREADS = 1  # every column runs on one BLAS thread (the machine is shared)
LAMBDA_GRID = tuple(10.0**k for k in range(-5, 6))
# λ by the paper's product-of-alignments criterion (eq. 15), pinned: the estimators'
# default became cross-validation, which is not the protocol these tables reproduce
PAPER_CRITERION = "paper"

# ---------------------------------------------------------------- datasets

SMALL_DATASETS = (
    ssl_spec("ssl-g241c", "g241C"),
    ssl_spec("ssl-digit1", "Digit1"),
    ssl_spec("ssl-usps", "USPS"),
    ssl_spec("ssl-coil", "coil"),
    ssl_spec("ssl-coil2", "coil2"),
    ssl_spec("ssl-text", "Text"),
    ssl_spec("german", "german"),
    ssl_spec("usps", "usps49", classes=(4, 9)),
    ssl_spec("usps", "usps27", classes=(2, 7)),
    ssl_spec("a1a", "adult1a"),
    ssl_spec("dna", "dna"),
    ssl_spec("segment", "segment"),
    ssl_spec("svmguide1", "svmgd1a"),
)
LARGE_DATASETS = (
    ssl_spec("satimage", "satimage", split="all"),
    ssl_spec("usps", "usps-full"),
    ssl_spec("mnist-test", "mnist-test"),
)
ALL_LABELS = tuple(d.display for d in SMALL_DATASETS + LARGE_DATASETS)
LARGE_LABELS = tuple(d.display for d in LARGE_DATASETS)
# ``--quick`` with the paper's data present runs the large sets' smallest
QUICK_LARGE = ("satimage",)
PAPER_KEY = {"mnist-test": None}  # the paper's mnist (70 000 rows) is not comparable


def protocol_part(**kw) -> Part:
    """A part run under the protocol: its context from :func:`lorak_bench._ssl.prepare`
    (unless ``prepare`` is given) and one BLAS thread in every cell."""
    kw.setdefault("prepare", prepare_ssl)
    return Part(threads=BLAS_THREADS, **kw)


def own_datasets(methods, *, only=None, exclude=()):
    """The methods, skipping datasets that belong to the other part.

    ``--datasets`` replaces the datasets of every part; without this a set would run
    in both parts (twice, at both parts' repetitions). ``only``: the labels this part
    runs (None: any label not in ``exclude``).
    """
    keep = None if only is None else frozenset(only)
    drop = frozenset(exclude)

    def mine(data):
        label = data.spec.display
        return (keep is None or label in keep) and label not in drop

    out = []
    for m in methods:
        inner = m.applies

        def applies(data, params, inner=inner):
            return mine(data) and (inner is None or inner(data, params))

        out.append(dataclasses.replace(m, applies=applies))
    return tuple(out)


def small_large_parts(methods, metrics, *, reps, quick_reps, quick_small, prepare=prepare_ssl):
    """Tables 1 and 2 as two parts, ``small`` (the 13 sets with n ≤ 3089) and ``large``
    (satimage, usps-full, mnist-test), each with its repetitions (``reps``,
    ``quick_reps``: (small, large)). Each part runs only its own sets
    (:func:`own_datasets`) and can look the other's up, so that one ``--datasets`` list
    runs every set once, at its part's repetitions."""
    own = (own_datasets(methods, exclude=LARGE_LABELS), own_datasets(methods, only=LARGE_LABELS))
    sets = (SMALL_DATASETS, LARGE_DATASETS)
    names = (("small", "13 sets with n ≤ 3089"), ("large", "satimage, usps-full, mnist-test"))
    return tuple(
        protocol_part(
            name=name,
            description=f"{what}, {reps[k]} repetitions",
            datasets=sets[k],
            lookup_datasets=sets[1 - k],
            methods=own[k],
            metrics=metrics,
            reps=reps[k],
            quick_reps=quick_reps[k],
            quick_paper_datasets=(quick_small, QUICK_LARGE)[k],
            prepare=prepare,
        )
        for k, (name, what) in enumerate(names)
    )


def paper_row(table: str, dataset):
    """The paper's row of ``table`` (a key of reference/generalized_nystrom.json) for
    ``dataset``, or None (not in the table, or not comparable: mnist-test)."""
    key = PAPER_KEY.get(dataset, dataset)
    if key is None:
        return None
    return load_reference("generalized_nystrom")[table].get(key)


def error_reference(table: str, paper_method: dict):
    """The ``reference`` hook of an experiment on ``table``: the paper's error (in %)
    of the column ``paper_method[method]`` for every ``error_pct`` cell."""

    def reference(dataset, method, params, metric):
        if metric != "error_pct":
            return None
        return reference_entry(
            paper_row(table, dataset),
            paper_method.get(method),
            f"generalized_nystrom.json#{table}/{dataset}",
        )

    return reference


def paper_entry(table: str, dataset, name):
    """The paper's column ``name`` of ``dataset``'s row in ``table`` (its
    ``error_pct_mean``, ``error_pct_std``, ``seconds``), or None."""
    row = paper_row(table, dataset)
    if row is None:
        return None
    return (row["methods"] if "methods" in row else row).get(name)


def errors_plot(shown, cell, methods, table, paper, out_dir, filename, *, title, caption):
    """Errors per dataset, our columns beside the paper's
    (:func:`lorak_bench._figures.errors_by_dataset_figure`). ``shown``: ``{dataset: plot
    label}`` in plot order; ``cell(dataset, method)``: our result row (or None) of each
    of ``methods``; ``paper``: ``(column, marker, legend label)`` of ``table`` to mark,
    on the datasets that are not stand-ins."""
    from .._figures import errors_by_dataset_figure, mean_std
    from .._report import save_figure

    series = []
    for m in methods:
        cols = mean_std({shown[d]: cell(d, m.name) for d in shown})
        if any(v is not None for v in cols.values()):
            series.append((m.display, cols))
    marks = []
    for name, marker, label in paper:
        entries = {d: paper_entry(table, d, name) for d in shown if shown[d] == d}
        marks.append((label, marker, {d: e["error_pct_mean"] for d, e in entries.items() if e}))
    fig = errors_by_dataset_figure(list(shown.values()), series, marks, title=title)
    return save_figure(fig, out_dir, filename, caption)


def paper_cell(table: str, dataset, name, field="error") -> str:
    """The paper's ``mean ± std`` error (or seconds) of column ``name``, ``—`` if none."""
    from .._report import fmt_num

    r = paper_entry(table, dataset, name)
    if r is None:
        return "—"
    if field == "seconds":
        return fmt_num(r["seconds"], 3)
    return f"{r['error_pct_mean']:.2f} ± {r['error_pct_std']:.2f}"


def ordered_labels(result, parts=("small", "large")):
    """The datasets a run has, in the paper's order."""
    order = {lbl: i for i, lbl in enumerate(ALL_LABELS)}
    seen = [lbl for p in parts for lbl in result.dataset_labels(p)]
    return sorted(dict.fromkeys(seen), key=lambda lbl: order.get(lbl, len(order)))


# ---------------------------------------------------------------- single-kernel columns


def _nystroem(landmarks):
    def make(task, Z):
        from lorak.estimators import Nystroem

        ctx = task.context
        return Nystroem(
            kernel="gaussian",
            bandwidth=ctx["b0"],
            n_components=ctx["m"],
            landmarks=Z if Z is not None else landmarks,
            random_state=np.random.default_rng([task.seed, 13]),
        )

    return make


def gennys(beta, center, criterion=PAPER_CRITERION, **kw):
    """A generalized Nyström factor on the shared landmarks: β, centered ideal kernel, λ
    by ``criterion`` (the paper's eq. 15 unless told)."""

    def make(task, Z):
        from lorak.estimators import GeneralizedNystroem

        return GeneralizedNystroem(
            kernel="gaussian",
            bandwidth=task.context["b0"],
            landmarks=Z,
            beta=beta,
            center_ideal=center,
            criterion=criterion,
            **kw,
        )

    return make


def _csi(task, Z):
    from lorak.estimators import CSI

    return CSI(
        kernel="gaussian",
        bandwidth=task.context["b0"],
        n_components=task.context["m"],
        unlabeled=-1,
    )


def _single_extra(clf) -> dict:
    f = clf.factor_
    return {
        "lam": float(getattr(f, "lam_", math.nan)),
        "beta": float(getattr(f, "beta_", math.nan)),
        "n_iter": float(getattr(f, "n_iter_", math.nan)),
        "rank": float(clf.classifier_.coef_.shape[1]),
    }


def single_column(name, label, make, *, kmeans=True, feature_scale="mean_norm"):
    """A single-kernel column of Table 1 / A1 (LinearSVC on the labeled rows)."""
    return factor_column(
        name, label, make, kmeans=kmeans, extra=_single_extra, feature_scale=feature_scale
    )


def _run_libsvm(task):
    from sklearn.svm import SVC

    lab = labeled_rows(task)
    X, y = task.data.X, task.data.y
    svc = SVC(kernel="rbf", gamma=1.0 / task.context["b0"], C=1.0).fit(X[lab], y[lab])
    return _ssl_output(svc.predict(X), task)


def _ssl_output(pred, task, **extra):
    from .._ssl import SSLOutput

    return SSLOutput(unlabeled_error(pred, task), extra)


LIBSVM = Method("libsvm", _run_libsvm, label="LibSVM (labeled rows only)")
NYS_UNIFORM = single_column(
    "nystrom-uniform", "Nyström (uniform)", _nystroem("uniform"), kmeans=False
)
NYS_KMEANS = single_column("nystrom-kmeans", "Nyström (k-means)", _nystroem("kmeans"))
CSI = single_column("csi", "CSI", _csi, kmeans=False)
SINGLE_METRICS = (ssl_metric(("lam", "beta", "n_iter", "rank")),)

# ---------------------------------------------------------------- multiple-kernel columns

TAU = 3
FACTORS = tuple(2.0 ** np.arange(-4, 5))
M_KERNELS = len(FACTORS)
C_SVM = 1.0
GLMKL_MAX_ITER = 50


def prepare_mkl(data, m_single=None) -> dict:
    """The protocol's context with m replaced by m̃ = m·τ/M landmarks shared by the 9
    Gaussian kernels b ∈ {2⁻⁴b₀, …, 2⁴b₀} (§4.2, τ = 3)."""
    ctx = prepare_ssl(data)
    m = ctx["m"] if m_single is None else int(m_single)
    ctx["m_single"] = m
    ctx["m"] = int(min(max(1, round(m * TAU / M_KERNELS)), data.n_samples))
    ctx["bank"] = KernelBank.gaussian(factors=FACTORS, base=ctx["b0"])
    return ctx


def _combination(cls_name):
    def make(task, Z):
        from lorak import estimators

        return getattr(estimators, cls_name)(task.context["bank"], landmarks=Z, random_state=0)

    return make


def _make_mkgn(task, Z):
    from lorak.estimators import MultipleKernelGeneralizedNystroem

    return MultipleKernelGeneralizedNystroem(
        task.context["bank"], landmarks=Z, criterion=PAPER_CRITERION, random_state=0
    )


def _multi_extra(clf) -> dict:
    f = clf.factor_
    w = np.asarray(getattr(f, "weights_", [math.nan]), dtype=float)
    return {
        "lam": float(getattr(f, "lam_", math.nan)),
        "kernels_used": float(np.sum(w > 0)),
        "rank": float(clf.classifier_.coef_.shape[1]),
    }


def multi_column(name, label, make):
    """A factor column of Table 2: the factor on the shared landmarks, LinearSVC."""
    return factor_column(name, label, make, kmeans=True, extra=_multi_extra)


def svc_column(name, label, weighting):
    """Weights from the exact kernels of the labeled rows + SVC: the paper's protocol."""

    def run(task):
        from lorak.estimators import AlignmentMKLClassifier

        c = AlignmentMKLClassifier(task.context["bank"], weighting=weighting, C=C_SVM)
        c.fit(task.data.X, semi_labels(task))
        return _ssl_output(c.transduction_, task, kernels_used=float(np.sum(c.weights_ > 0)))

    run.__name__ = f"run_{name}"
    return Method(name=name, run=run, label=label)


def run_glmkl(task):
    from sklearn.exceptions import ConvergenceWarning

    from lorak.estimators import GLMKLClassifier

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        g = GLMKLClassifier(task.context["bank"], C=C_SVM, max_iter=GLMKL_MAX_ITER)
        g.fit(task.data.X, semi_labels(task))
    return _ssl_output(
        g.transduction_,
        task,
        kernels_used=float(np.sum(g.weights_ > 0)),
        n_iter=float(g.n_iter_),
    )


UNIFORM = multi_column("uniform", "uniform sum (factors)", _combination("UniformKernelSum"))
ABMKL_COL = multi_column("abmkl", "ABMKL (factors)", _combination("ABMKL"))
CABMKL_COL = multi_column("cabmkl", "CABMKL (factors)", _combination("CABMKL"))
ABMKL_SVC = svc_column("abmkl-svc", "ABMKL (SVC, full kernels on labeled rows)", "alignment")
CABMKL_SVC = svc_column(
    "cabmkl-svc", "CABMKL (SVC, full kernels on labeled rows)", "centered_alignment"
)
GLMKL_LABEL = "GLMKL (SVC, full kernels on labeled rows)"
GLMKL_COL = Method("glmkl", run_glmkl, label=GLMKL_LABEL)
MKGN_COL = multi_column("mkgn", "GenNys multiple kernels", _make_mkgn)
MULTI_METRICS = (ssl_metric(("lam", "kernels_used", "rank")),)

"""lorak-bench: the experiments that reproduce the papers' tables and figures,
declared rather than scripted, for the lorak library.

This is a distribution of its own (``pip install -e ./bench`` from a lorak checkout,
next to lorak). It imports lorak's public API only, never the reverse; an experiment
declares its data sets, methods and checks, the runner times them, and the math it
measures lives in the library (a class in ``lorak.estimators`` or ``lorak.models``; its
math in ``lorak.learn`` or ``lorak.decompose``).

Run them with ``lorak-bench NAME [--quick] [--datasets a,b] [--reps N] [--out DIR]``
(or ``lorak bench ...``, which hands over to this package when it is installed);
``lorak-bench --list`` shows what exists. A run writes ``results.json`` (aggregated
rows with the paper's numbers beside ours), ``raw.json`` (every repetition),
``report.md`` and PNG plots.

Adding an experiment
--------------------
Create a module in :mod:`lorak_bench.experiments` that defines ``EXPERIMENT`` (it is
discovered by name; nothing else to edit)::

    from lorak import Nystroem
    from lorak_bench import Experiment, Metric, Part, factor_method
    from lorak.metrics import frobenius_error

    def nystrom(landmarks):
        return factor_method(landmarks, lambda t: Nystroem(
            kernel="gaussian", bandwidth="mean_pairwise", landmarks=landmarks,
            n_components=t.params["m"], random_state=t.seed))

    def kernel_error(out, task):        # out: FactorOutput(estimator, G)
        return frobenius_error(out.estimator.kernel_, task.data.X, out.G)

    EXPERIMENT = Experiment(
        name="my-error", description="one line for --list",
        parts=[Part(
            name="main", datasets=["german", "dna"], quick_datasets=["wine"],
            grid=[{"ratio": r} for r in (0.05, 0.1)],
            resolve_params=lambda p, data: {**p, "m": round(p["ratio"] * data.n_samples)},
            methods=[nystrom("uniform"), nystrom("kmeans")],
            metrics=[Metric("fro", kernel_error)], reps=20, quick_reps=3)],
        reference=lambda dataset, method, params, metric: None,  # or {"mean": ..., "std": ...}
    )

The pieces: :class:`DatasetSpec` (a ``lorak.datasets`` name, the paper's label, splits,
a custom ``loader``, a ``preprocess`` step such as :func:`minmax_scale`),
:class:`Method` (``run(task)`` is timed; ``deterministic=True`` runs once;
:func:`factor_method` wraps an estimator factory, ``uses_y=True`` passes labels),
:class:`Metric` (``fn(output, task)`` → a number or ``{name: number}``),
:class:`Part` (datasets × grid × methods × metrics × reps; ``prepare(data)`` fills a
per-dataset ``task.context`` cache) and :class:`Experiment` (parts plus ``reference``,
``checks(result) -> markdown``, ``plots(result, out_dir) -> [(title, file)]``). A
:class:`Task` carries ``data`` (``X, y, X_test, y_test, splits_labeled``), ``params``,
``rep`` and ``seed`` (``SeedSequence([base_seed, rep])``); ``task.shared(key, compute)``
computes work several cells share once (the runner charges its cost to each cell that
uses it) and ``with task.untimed():`` marks a method's input preparation. The runner
records wall and CPU seconds per cell: no experiment reads a clock. Paper numbers come
from :func:`load_reference` (the JSON files in ``lorak_bench/reference``); the semi-supervised
protocol (:mod:`lorak_bench._ssl`), paired comparisons and win counts
(:mod:`lorak_bench._compare`) and the shared figures (:mod:`lorak_bench._figures`) are
there for every experiment.

Scripts that time something outside the runner (``bench/scripts/*.py``) import the
public timing helper :mod:`lorak_bench.timing`: :class:`Stopwatch`, :func:`time_call`
(medians over repeats, with the load average around them) and :class:`Record` /
:func:`write_json` (the run's JSON with its environment) rather than a clock of their
own, :class:`LoadGuard` and :func:`blas_floor` (the dense BLAS time a measurement is
compared with). The same names are importable from ``lorak_bench`` itself; the
semi-supervised protocol's :func:`draw_labeled` is public for the scripts too.
"""

from ._floor import (
    LoadGuard,
    MachineLoadedError,
    MachineLoadedWarning,
    blas_floor,
    floor_flops,
    floor_seconds,
    machine_load,
)
from ._preprocess import minmax_scale, standardize
from ._progress import NullProgress, ProgressBar
from ._record import RunResult
from ._reference import load_reference, reference_names
from ._registry import EXPERIMENTS, get_experiment, list_experiments, register
from ._report import plot_metric_lines, render_report, summary_text, write_outputs
from ._runner import derive_seed, load_dataset, run_experiment
from ._spec import *  # noqa: F403 — the declarative pieces, every one public
from ._spec import __all__ as _DECLARATIVE
from ._ssl import M_CAP, M_RATIO, N_LABELED, draw_labeled
from .timing import (
    Record,
    Stopwatch,
    Timing,
    capture_environment,
    load_average,
    time_call,
    write_json,
)

__all__ = [
    *_DECLARATIVE,
    "EXPERIMENTS",
    "LoadGuard",
    "M_CAP",
    "M_RATIO",
    "MachineLoadedError",
    "MachineLoadedWarning",
    "N_LABELED",
    "NullProgress",
    "ProgressBar",
    "Record",
    "RunResult",
    "Stopwatch",
    "Timing",
    "capture_environment",
    "blas_floor",
    "derive_seed",
    "draw_labeled",
    "floor_flops",
    "floor_seconds",
    "get_experiment",
    "list_experiments",
    "load_average",
    "load_dataset",
    "load_reference",
    "machine_load",
    "minmax_scale",
    "plot_metric_lines",
    "reference_names",
    "register",
    "render_report",
    "run_experiment",
    "standardize",
    "summary_text",
    "time_call",
    "write_json",
    "write_outputs",
]

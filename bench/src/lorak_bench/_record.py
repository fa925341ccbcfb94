"""The record of a run: :class:`RunResult` (one experiment) and :class:`AllEntry` (one
experiment within ``lorak-bench all``).

Data only: the runner fills these, the report reads them, so neither imports the other
for them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ._spec import Experiment

__all__ = ["AllEntry", "RunResult"]


@dataclass
class RunResult:
    """Everything a run produced; :meth:`to_json` gives results.json.

    Attributes
    ----------
    experiment : Experiment
    config : dict
        CLI options and resolved settings (datasets, grids, reps per part, notes).
    environment : dict
    rows : list of dict
        Aggregated results (the results.json rows, plus an internal ``_part`` key).
    records : list of dict
        One per (cell, rep): ``part, dataset, method, params, rep, seed``,
        ``seconds`` and ``cpu_seconds`` (wall and process CPU time the runner measured
        around ``method.run``, with the shared cached work the cell used charged in full,
        see :meth:`lorak_bench.Task.shared`), ``shared_seconds`` and
        ``shared_cpu_seconds`` (that shared part), ``shared_items`` (each shared item's
        ``[wall, cpu]`` seconds by its key), ``metrics`` (a dict) and ``error`` (None or
        the message).
    failures : list of dict
        ``part, dataset, method, params, rep, stage`` (load/prepare/fit/metric) and
        ``error``.
    datasets : dict
        Part name → list of dataset descriptions (label, lorak name, split, shape,
        stand-in flag).
    notes : list of str
    wall_seconds : float
        Wall time of the whole run (loading, preparing, every cell, metrics).
    part_seconds : dict
        Part name → wall time of that part.
    artifacts : dict
        Part name → dataset label → the ``task.context["artifacts"]`` dict that the
        part's ``prepare`` created and its methods filled (small objects for plots:
        a fitted estimator's traces, a sample's embedding). Not written to JSON.
    """

    experiment: Experiment
    config: dict
    environment: dict
    rows: list = field(default_factory=list)
    records: list = field(default_factory=list)
    failures: list = field(default_factory=list)
    datasets: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    wall_seconds: float = 0.0
    part_seconds: dict = field(default_factory=dict)
    artifacts: dict = field(default_factory=dict)

    @property
    def fit_seconds(self) -> float:
        """Sum of the timed seconds of every cell that ran (fit + transform only)."""
        return float(sum(r["seconds"] for r in self.records if r["seconds"] is not None))

    @property
    def work_seconds(self) -> float:
        """Timed seconds of every cell that ran, with shared work counted once per
        (part, dataset) instead of once per cell that used it (:attr:`fit_seconds`
        counts it per cell, so it can exceed the run's wall time)."""
        own = 0.0
        items: dict = {}
        for r in self.records:
            if r["seconds"] is None:
                continue
            own += r["seconds"] - (r.get("shared_seconds") or 0.0)
            for key, cost in (r.get("shared_items") or {}).items():
                items.setdefault((r["part"], r["dataset"], key), cost[0])
        return float(own + sum(items.values()))

    @property
    def cpu_seconds(self) -> float:
        """Sum of the process CPU seconds of every cell that ran."""
        return float(sum(r.get("cpu_seconds") or 0.0 for r in self.records))

    def cpu_per_repetition(self, part: str, dataset: str) -> dict:
        """CPU seconds of one repetition of every method of ``part`` on ``dataset``,
        shared work counted once (not once per cell that used it).

        Returns ``{"per_rep": mean over repetitions, "by_method": {method: mean CPU s
        per cell, shared work included}, "shared": mean CPU s of the shared items per
        repetition, "reps": repetitions seen}`` (empty dict without records).
        """
        own: dict = {}
        items: dict = {}
        by_method: dict = {}
        for rec in self.select_records(part=part, dataset=dataset):
            if rec["error"] is not None or rec.get("cpu_seconds") is None:
                continue
            seed = rec["seed"]
            shared = rec.get("shared_cpu_seconds") or 0.0
            own[seed] = own.get(seed, 0.0) + rec["cpu_seconds"] - shared
            for key, (_, cpu) in (rec.get("shared_items") or {}).items():
                items.setdefault(seed, {})[key] = cpu
            by_method.setdefault(rec["method"], []).append(rec["cpu_seconds"])
        if not own:
            return {}
        shared = {s: sum(items.get(s, {}).values()) for s in own}
        return {
            "per_rep": sum(own[s] + shared[s] for s in own) / len(own),
            "by_method": {m: sum(v) / len(v) for m, v in by_method.items()},
            "shared": sum(shared.values()) / len(own),
            "reps": len(own),
        }

    def select(self, *, part=None, dataset=None, method=None, metric=None) -> list[dict]:
        """Result rows matching all given fields."""
        out = []
        for r in self.rows:
            if part is not None and r["_part"] != part:
                continue
            if dataset is not None and r["dataset"] != dataset:
                continue
            if method is not None and r["method"] != method:
                continue
            if metric is not None and r["metric"] != metric:
                continue
            out.append(r)
        return out

    def select_records(self, *, part=None, dataset=None, method=None) -> list[dict]:
        """Per-repetition records matching all given fields."""
        return [
            r
            for r in self.records
            if (part is None or r["part"] == part)
            and (dataset is None or r["dataset"] == dataset)
            and (method is None or r["method"] == method)
        ]

    def dataset_labels(self, part: str) -> list[str]:
        return [d["label"] for d in self.datasets.get(part, []) if d.get("loaded")]

    def is_stand_in(self, part: str, label: str) -> bool:
        return any(d["label"] == label and d["stand_in"] for d in self.datasets.get(part, []))

    def reps_run(self, part: str):
        """The repetitions part ``part`` ran with (``"?"`` before the run's config is
        complete, or for a part that did not run)."""
        return self.config.get("parts", {}).get(part, {}).get("reps", "?")

    def to_json(self) -> dict:
        """The results.json document."""
        rows = [{k: v for k, v in r.items() if not k.startswith("_")} for r in self.rows]
        return {
            "experiment": self.experiment.name,
            "config": self.config,
            "environment": self.environment,
            "results": rows,
        }


@dataclass
class AllEntry:
    """The outcome of one experiment within :func:`run_all`.

    ``status`` is ``"ok"`` (results, no failed cell), ``"failures"`` (results and some
    failed cells), ``"no results"`` (every cell failed) or ``"error"`` (the run itself
    raised: ``error`` holds the message). ``paths`` are the files written (relative to
    the combined output folder), ``seconds`` the wall time including writing the
    outputs (plots), ``run_seconds`` that of :func:`run_experiment` alone and
    ``fit_seconds`` the sum of its timed cells (fit + transform; no loading, preparing
    or metrics), ``work_seconds`` the same with shared work counted once.
    """

    name: str
    description: str
    paper: str
    status: str
    seconds: float
    n_rows: int = 0
    n_failures: int = 0
    error: str | None = None
    run_seconds: float = 0.0
    fit_seconds: float = 0.0
    work_seconds: float = 0.0
    paths: dict = field(default_factory=dict)
    stand_ins: list = field(default_factory=list)
    notes: list = field(default_factory=list)

"""The generic runner: datasets × grid × methods × repetitions of a declared experiment.

Per cell (dataset, params, method, rep) it derives the seed, times ``method.run``
(wall and process CPU seconds, with the shared cached work the cell used charged in
full: :mod:`lorak_bench._cost`), evaluates the metrics (not timed) and records the
outcome; an exception in one cell is recorded with its message and the run goes on.
Deterministic methods run once per (dataset, params). Experiments never time
themselves.

Resuming (:class:`CellCache`): each (part, dataset) whose cells all ran is saved, with
its records, rows, failures, notes and plot artifacts, to one file in the cache folder
as soon as it ends. A run given the same folder with ``resume`` replays the saved
datasets (same experiment, part, dataset, grid, methods, seeds and quick mode; with
their original timings) instead of running them again, so a killed ``lorak-bench all
--resume`` goes on from the first dataset it had not finished. A dataset that failed
to load or prepare is never saved (it is tried again).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import json
import logging
import math
import os
import pickle
import time
import traceback
from contextlib import nullcontext
from typing import Any

import numpy as np

from ._cost import Ledger, Stopwatch, charging
from ._env import capture_environment
from ._progress import NullProgress
from ._record import AllEntry, RunResult
from ._report import write_outputs
from ._spec import DatasetSpec, Experiment, LoadedData, Part, Task

__all__ = [
    "AllEntry",
    "CellCache",
    "RunResult",
    "derive_seed",
    "load_dataset",
    "run_all",
    "run_experiment",
]

logger = logging.getLogger("lorak_bench")


class CellCache:
    """Finished (part, dataset) results of an experiment, one pickle file each.

    ``folder``: where the files go (created on the first save). ``resume``: read the
    files saved by an earlier run (otherwise they are only written, replacing any
    stale ones). Files are written whole, then renamed, so a run killed while saving
    leaves no half-written entry. The files are this run's own output: load them only
    from a folder you wrote (pickle).
    """

    VERSION = 1

    def __init__(self, folder, *, resume: bool = False):
        from pathlib import Path

        self.folder = Path(folder)
        self.resume = bool(resume)
        self.hits = 0
        self.saved = 0

    @staticmethod
    def key(experiment, part, spec, grid, seeds, quick) -> str:
        ident = {
            "version": CellCache.VERSION,
            "experiment": experiment.name,
            "part": part.name,
            "dataset": spec.display,
            "grid": grid,
            "methods": [m.name for m in part.methods],
            "seeds": [int(s) for s in seeds],
            "quick": bool(quick),
        }
        text = json.dumps(ident, sort_keys=True, default=repr)
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    def _path(self, key):
        return self.folder / f"{key}.pkl"

    def get(self, key):
        """The saved entry of ``key``, or None (not resuming, absent or unreadable)."""
        if not self.resume:
            return None
        path = self._path(key)
        if not path.is_file():
            return None
        try:
            with open(path, "rb") as fh:
                entry = pickle.load(fh)
        except Exception as exc:  # a truncated or foreign file: run the dataset again
            logger.warning("cell cache %s unreadable (%s); running it again", path, exc)
            return None
        if not isinstance(entry, dict) or entry.get("key") != key:
            return None
        self.hits += 1
        return entry

    def put(self, key, entry: dict) -> None:
        """Save ``entry`` under ``key`` (whole file, then an atomic rename)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self._path(key)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        try:
            with open(tmp, "wb") as fh:
                pickle.dump({**entry, "key": key}, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)
            self.saved += 1
        except Exception as exc:  # unpicklable artifacts, a full disk: run on, unsaved
            logger.warning("cell cache: could not save %s (%s)", path.name, exc)
            tmp.unlink(missing_ok=True)


def derive_seed(base_seed: int, rep: int) -> int:
    """Seed of repetition ``rep``: ``SeedSequence([base_seed, rep])`` → a 32-bit int."""
    ss = np.random.SeedSequence([int(base_seed), int(rep)])
    return int(ss.generate_state(1, np.uint32)[0])


def _as_spec(d) -> DatasetSpec:
    return d if isinstance(d, DatasetSpec) else DatasetSpec(str(d))


def _norm(name: str) -> str:
    return name.strip().lower().replace("_", "-")


def load_dataset(spec: DatasetSpec, data_home=None) -> LoadedData:
    """Load ``spec`` (its own loader or :func:`lorak.datasets.load`), then preprocess."""
    data = _load(spec, data_home)
    if spec.preprocess is not None:
        data = spec.preprocess(data)
    return data


def _load(spec: DatasetSpec, data_home) -> LoadedData:
    if spec.loader is not None:
        data = spec.loader(spec, data_home)
        if not isinstance(data, LoadedData):
            raise TypeError(f"loader of {spec.display!r} must return LoadedData")
        return data
    from lorak.datasets import load

    kw = dict(spec.load_kwargs)
    ds = load(spec.name, split=spec.split, data_home=data_home, **kw)
    X_test = y_test = None
    if spec.test_split is not None:
        dt = load(spec.name, split=spec.test_split, data_home=data_home, **kw)
        X_test, y_test = dt.X, dt.y
    meta = dict(getattr(ds, "meta", {}) or {})
    meta.setdefault("lorak_name", getattr(ds, "name", spec.name))
    meta.setdefault("split", getattr(ds, "split", spec.split))
    meta.setdefault("kind", getattr(ds, "kind", None))
    return LoadedData(
        spec=spec,
        X=ds.X,
        y=getattr(ds, "y", None),
        X_test=X_test,
        y_test=y_test,
        splits_labeled=getattr(ds, "splits_labeled", None),
        meta=meta,
    )


def _present(spec: DatasetSpec, data_home) -> bool:
    """Whether ``spec`` looks loadable now, without loading it.

    A custom ``loader`` still reads the set named ``spec.name``, so availability is
    judged by that name too (a name ``load`` does not know counts as present).
    """
    try:
        from lorak.datasets import available

        rows = {_norm(r["name"]): bool(r["present"]) for r in available(data_home)}
    except Exception:  # an unreadable data home: let load() report it
        return True
    key = _norm(spec.name)
    for k in (key, "ssl-" + key):
        if k in rows:
            return rows[k]
    return True


def _matches(spec: DatasetSpec, sets) -> bool:
    """Whether ``spec``'s label or loader name is one of ``sets`` (case-insensitive)."""
    wanted = {_norm(s) for s in sets}
    return _norm(spec.display) in wanted or _norm(spec.name) in wanted


def _selected_specs(part: Part, *, override, quick, data_home, sets):
    """:func:`_resolve_specs` with ``sets``: the part's sets (or the ``override``
    ones) that ``sets`` names, whatever the quick subset and the stand-ins."""
    if override:
        specs, notes = _resolve_specs(part, override=override, quick=quick, data_home=data_home)
        return [s for s in specs if _matches(s, sets)], notes
    return [d for d in map(_as_spec, part.datasets) if _matches(d, sets)], []


def _resolve_specs(
    part: Part, *, override, quick, data_home, sets=None
) -> tuple[list[DatasetSpec], list]:
    """The datasets a part runs on, and notes for the report. ``sets``: keep only the
    part's sets that these name (the quick subset and stand-ins then do not apply)."""
    if sets:
        return _selected_specs(part, override=override, quick=quick, data_home=data_home, sets=sets)
    paper = [_as_spec(d) for d in part.datasets]
    notes: list[str] = []
    if override:
        known = {}
        lookup = [*part.quick_datasets, *part.lookup_datasets]
        for s in [*paper, *(_as_spec(d) for d in lookup)]:
            known.setdefault(_norm(s.display), s)
            known.setdefault(_norm(s.name), s)
        paper_names = {_norm(s.name) for s in paper} | {_norm(s.display) for s in paper}
        out = []
        for name in override:
            s = known.get(_norm(name))
            if s is None:
                s = DatasetSpec(name, stand_in=_norm(name) not in paper_names)
            out.append(s)
        return out, notes
    if not quick:
        return paper, notes
    subset_note = None
    if part.quick_paper_datasets is not None:
        keep = {_norm(n) for n in part.quick_paper_datasets}
        chosen = [s for s in paper if _norm(s.display) in keep or _norm(s.name) in keep]
        if len(chosen) < len(paper):
            subset_note = (
                f"{part.name}: quick run on {', '.join(s.display for s in chosen)} of the "
                f"paper's {len(paper)} sets (the full run uses all)"
            )
        paper = chosen
    present = [s for s in paper if _present(s, data_home)]
    missing = [s.display for s in paper if s not in present]
    if present and subset_note:
        notes.append(subset_note)
    if present:
        if missing:
            notes.append(
                f"{part.name}: data not found for {', '.join(missing)}; quick run uses the "
                "sets that are present"
            )
        return present, notes
    stand = [_as_spec(d) for d in part.quick_datasets]
    stand = [s if s.stand_in else dataclasses.replace(s, stand_in=True) for s in stand]
    if stand:
        notes.append(
            f"{part.name}: the paper's data ({', '.join(missing)}) were not found (LORAK_DATA "
            f"unset or absent); quick run on stand-ins {', '.join(s.display for s in stand)}, "
            "for which the paper has no numbers"
        )
    else:
        notes.append(
            f"{part.name}: the paper's data ({', '.join(missing)}) were not found (LORAK_DATA "
            "unset or absent) and the part has no stand-in; nothing run"
        )
    return stand, notes


def _finite(x):
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _err(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def run_experiment(
    experiment: Experiment,
    *,
    datasets: list[str] | None = None,
    reps: int | None = None,
    quick: bool = False,
    seed: int = 0,
    data_home=None,
    progress=None,
    config: dict | None = None,
    cache: CellCache | None = None,
    only=None,
    parts: list[str] | None = None,
    sets: list[str] | None = None,
) -> RunResult:
    """Run ``experiment`` and return a :class:`RunResult` (nothing is written).

    Parameters
    ----------
    experiment : Experiment
    datasets : list of str, optional
        Replace every part's datasets by these (labels such as ``"adult1a"`` or
        :func:`lorak.datasets.load` names).
    reps : int, optional
        Repetitions of the randomized methods for every part (default: each part's
        ``reps``, or ``quick_reps`` with ``quick``).
    quick : bool
        Use each part's quick grid and reps, and its stand-in datasets when the
        paper's data are absent.
    seed : int
        Base seed; repetition r uses :func:`derive_seed` (seed, r).
    data_home : path, optional
        Passed to the loaders (default: ``LORAK_DATA``).
    progress : object, optional
        A :class:`lorak_bench.ProgressBar` (or anything with its methods).
    config : dict, optional
        Extra entries for ``result.config`` (e.g. the CLI options).
    cache : CellCache, optional
        Save each finished (part, dataset) there, and with ``cache.resume`` replay
        those an earlier run saved instead of running them.
    only : collection of (part name, dataset label) pairs, optional
        Run only these (part, dataset) units and leave the others out of the result
        (parallel ``run_all`` runs each unit in its own process into the cache).
    parts : list of str, optional
        Run only the parts of these names (an unknown name raises ``ValueError``); the
        results, and the cell cache, are those of the same parts in a full run.
    sets : list of str, optional
        Run only those of each part's own datasets that these name (labels or
        :func:`lorak.datasets.load` names, case-insensitive); unlike ``datasets`` it
        adds no set to a part, and a part that names none of them runs nothing.
    """
    if reps is not None and reps < 1:
        raise ValueError(f"reps must be >= 1; got {reps}")
    progress = NullProgress() if progress is None else progress
    t_start = time.perf_counter()
    started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    multi = len(experiment.parts) > 1
    plans, notes = _plans(experiment, datasets, reps, quick, data_home, parts, sets)
    progress.start(_planned_cells(plans), experiment.name)

    result = RunResult(
        experiment=experiment,
        config={},
        environment=capture_environment(),
        notes=notes,
    )
    only = None if only is None else frozenset((str(a), str(b)) for a, b in only)
    run = _Run(experiment, result, multi, quick, seed, data_home, progress, cache, only)
    for part, specs, grid, n_reps in plans:
        t_part = time.perf_counter()
        _run_part(run, part, specs, grid, n_reps)
        result.part_seconds[part.name] = time.perf_counter() - t_part
    progress.close()
    result.wall_seconds = time.perf_counter() - t_start

    cfg = dict(config or {})
    cfg.update(
        {
            "experiment": experiment.name,
            "quick": bool(quick),
            "seed": int(seed),
            "reps_requested": reps,
            "datasets_requested": list(datasets) if datasets else None,
            "parts_requested": list(parts) if parts else None,
            "sets_requested": list(sets) if sets else None,
            "data_home": None if data_home is None else str(data_home),
        }
    )
    cfg.update(_run_outcome(result, plans, notes, started, cache))
    result.config = cfg
    return result


def _cells_per_params(part, n_reps: int) -> int:
    """The cells one grid point of ``part`` runs: one per deterministic method, one per
    repetition of each other."""
    return sum(1 if m.deterministic else n_reps for m in part.methods)


def _planned_cells(plans) -> int:
    """The cells ``plans`` (from :func:`_plans`) run: what the progress bar counts."""
    return sum(
        len(specs) * len(grid) * _cells_per_params(part, n_reps)
        for part, specs, grid, n_reps in plans
    )


def _run_outcome(result: RunResult, plans, notes, started: str, cache) -> dict:
    """The entries of ``result.config`` that describe what the run did: each part's
    data sets, grid, methods and seconds, the stand-ins, its notes and its times."""
    return {
        "parts": {
            part.name: {
                "description": part.description,
                "datasets": result.datasets.get(part.name, []),
                "grid": grid,
                "reps": n_reps,
                "methods": [m.name for m in part.methods],
                "deterministic_methods": [m.name for m in part.methods if m.deterministic],
                "metrics": part.metric_names(),
                "wall_seconds": round(result.part_seconds.get(part.name, 0.0), 3),
            }
            for part, specs, grid, n_reps in plans
        },
        "stand_ins_used": sorted(
            {d["label"] for ds in result.datasets.values() for d in ds if d["stand_in"]}
        ),
        "notes": notes,
        "started_utc": started,
        # wall: everything run_experiment did; fit: the timed part of the cells
        # (fit + transform); it can exceed the wall time where several cells use
        # one shared computation (each is charged its cost: csi-rank's curves)
        "wall_seconds": round(result.wall_seconds, 3),
        "fit_seconds": round(result.fit_seconds, 3),
        "fit_cpu_seconds": round(result.cpu_seconds, 3),
        "n_cells": len(result.records),
        "n_failures": len(result.failures),
        "resumed_datasets": 0 if cache is None else cache.hits,
    }


def _plans(experiment, datasets, reps, quick, data_home, parts, sets):
    """``([(part, specs, grid, reps)], notes)``: what each part to run runs."""
    wanted = _check_parts(experiment, parts)
    plans = []
    notes: list[str] = []
    for part in experiment.parts:
        if wanted is not None and part.name not in wanted:
            continue
        specs, part_notes = _resolve_specs(
            part, override=datasets, quick=quick, data_home=data_home, sets=sets
        )
        notes.extend(part_notes)
        grid = list(part.quick_grid if quick and part.quick_grid is not None else part.grid)
        n_reps = reps if reps is not None else (part.quick_reps if quick else None)
        n_reps = int(n_reps if n_reps is not None else part.reps)
        plans.append((part, specs, [dict(g) for g in grid], n_reps))
    return plans, notes


def _check_parts(experiment: Experiment, parts) -> frozenset | None:
    """The part names ``parts`` asks for (None: every part); an unknown one raises."""
    if not parts:
        return None
    names = [p.name for p in experiment.parts]
    unknown = [p for p in parts if p not in names]
    if unknown:
        raise ValueError(
            f"experiment {experiment.name!r} has no part {', '.join(map(repr, unknown))}; "
            f"its parts are: {', '.join(names)}"
        )
    return frozenset(parts)


def _describe(spec: DatasetSpec, data: LoadedData | None, error: str | None) -> dict:
    d = {
        "label": spec.display,
        "name": spec.name,
        "split": spec.split,
        "stand_in": bool(spec.stand_in),
        "loaded": data is not None,
    }
    if data is not None:
        d["n_samples"] = data.n_samples
        d["n_features"] = data.n_features
        d["split"] = data.meta.get("split", spec.split)
        d["sparse"] = hasattr(data.X, "tocsr")
        if data.meta.get("preprocessing"):
            d["preprocessing"] = data.meta["preprocessing"]
    if error:
        d["error"] = error
    return d


def _replay(result, part, described, entry):
    """Add a (part, dataset) saved by :class:`CellCache` to ``result``."""
    described.append({**entry["described"], "resumed": True})
    result.records.extend(entry["records"])
    result.rows.extend(entry["rows"])
    result.failures.extend(entry["failures"])
    for note in entry["notes"]:
        if note not in result.notes:
            result.notes.append(note)
    if entry.get("artifacts"):
        result.artifacts.setdefault(part.name, {})[entry["described"]["label"]] = entry["artifacts"]


@dataclasses.dataclass
class _Run:
    """What every part and cell of one :func:`run_experiment` call shares."""

    experiment: Experiment
    result: RunResult
    multi: bool
    quick: bool
    seed: int
    data_home: Any
    progress: Any
    cache: CellCache | None
    only: frozenset | None = None


def _run_part(run: _Run, part, specs, grid, n_reps):
    """Every (part, data set) of ``part`` that ``run`` asks for, in order."""
    described = run.result.datasets.setdefault(part.name, [])
    seeds = [derive_seed(run.seed, r) for r in range(n_reps)]
    for i, spec in enumerate(specs, 1):
        if run.only is not None and (part.name, spec.display) not in run.only:
            continue
        _run_dataset(run, part, spec, (i, len(specs)), grid, seeds, described)


def _run_dataset(run: _Run, part, spec, position, grid, seeds, described):
    """One (part, data set): replayed from the cell cache when it holds it, else loaded,
    prepared, every cell of the grid run, and saved to the cache."""
    result, progress = run.result, run.progress
    t_ds = time.perf_counter()
    progress.start_dataset(part.name if run.multi else "", spec.display, *position)
    n_fail0 = len(result.failures)
    cells = len(grid) * _cells_per_params(part, len(seeds))
    key = None
    if run.cache is not None:
        key = CellCache.key(run.experiment, part, spec, grid, seeds, run.quick)
    saved = None if key is None else run.cache.get(key)
    if saved is not None:
        _replay(result, part, described, saved)
        progress.advance(cells, "resumed")
        progress.end_dataset(part.name, spec.display, cells, len(result.failures) - n_fail0, 0.0)
        return
    marks = (len(result.records), len(result.rows), len(result.notes), n_fail0)
    loaded = _load_and_prepare(run, part, spec, described, t_ds, cells)
    if loaded is None:
        return
    data, context = loaded
    del loaded
    _run_grid(run, part, spec, data, grid, seeds, context)
    arts = context.get("artifacts")
    arts = arts if isinstance(arts, dict) and arts else None
    if arts is not None:
        result.artifacts.setdefault(part.name, {})[spec.display] = arts
    del context
    described[-1]["wall_seconds"] = round(time.perf_counter() - t_ds, 3)
    if key is not None:
        run.cache.put(key, _unit_entry(result, spec, described[-1], marks, arts))
    progress.end_dataset(
        part.name,
        spec.display,
        cells,
        len(result.failures) - n_fail0,
        time.perf_counter() - t_ds,
    )


def _load_and_prepare(run: _Run, part, spec, described, t_ds: float, cells: int):
    """``(data, context)``: the data set loaded and ``part.prepare``'s context, with the
    data set described in ``described``; None when either step failed (recorded)."""
    result, progress = run.result, run.progress
    progress.status("loading")
    try:
        data = load_dataset(spec, run.data_home)
    except Exception as exc:
        _fail(result, part, spec, None, None, None, "load", exc)
        described.append(_describe(spec, None, _err(exc)))
        _unit_failed(run, part, spec, described, t_ds, cells, "load failed")
        return None
    described.append(_describe(spec, data, None))
    progress.status("preparing")
    try:
        with Stopwatch() as sw:
            context = _prepare_part(part, data, run.quick) if part.prepare is not None else {}
        described[-1]["prepare_seconds"] = round(sw.cost.wall, 3)
        described[-1]["prepare_cpu_seconds"] = round(sw.cost.cpu, 3)
    except Exception as exc:
        _fail(result, part, spec, None, None, None, "prepare", exc)
        _unit_failed(run, part, spec, described, t_ds, cells, "prepare failed")
        return None
    return data, context


def _unit_failed(run: _Run, part, spec, described, t_ds: float, cells: int, why: str):
    """End a (part, data set) that could not run: its seconds, its cells counted as done."""
    described[-1]["wall_seconds"] = round(time.perf_counter() - t_ds, 3)
    run.progress.advance(cells, why)
    run.progress.end_dataset(part.name, spec.display, 0, 1, time.perf_counter() - t_ds)


def _run_grid(run: _Run, part, spec, data, grid, seeds, context):
    """Every method at every grid point of ``part`` on one loaded data set."""
    per_params = _cells_per_params(part, len(seeds))
    for raw in grid:
        try:
            params = dict(part.resolve_params(dict(raw), data)) if part.resolve_params else raw
        except Exception as exc:
            _fail(run.result, part, spec, None, raw, None, "params", exc)
            run.progress.advance(per_params, "params failed")
            continue
        if run.multi:
            params = {"part": part.name, **params}
        for method in part.methods:
            _run_cell(run, part, method, data, params, seeds, context)


def _unit_entry(result: RunResult, spec, described: dict, marks, arts) -> dict:
    """What :class:`CellCache` saves of one (part, data set): what the run added to
    ``result`` since ``marks`` (records, rows, notes and failures before it)."""
    records, rows, notes, failures = marks
    return {
        "label": spec.display,
        "described": described,
        "records": result.records[records:],
        "rows": result.rows[rows:],
        "failures": result.failures[failures:],
        "notes": result.notes[notes:],
        "artifacts": arts,
    }


def _prepare_part(part, data, quick: bool) -> dict:
    """``part.prepare(data)``, or ``prepare(data, quick=quick)`` when it takes ``quick``
    (so that a quick run can also prepare less: subsample, a smaller CV grid)."""
    import inspect

    try:
        takes_quick = "quick" in inspect.signature(part.prepare).parameters
    except (TypeError, ValueError):  # a builtin or C callable
        takes_quick = False
    out = part.prepare(data, quick=quick) if takes_quick else part.prepare(data)
    return dict(out or {})


def _fail(result, part, spec, method, params, rep, stage, exc):
    msg = _err(exc)
    # the first failure of a kind is a warning; repeats (every rep, every m) go to DEBUG
    kind = (part.name, method, stage, msg)
    seen = any((f["part"], f["method"], f["stage"], f["error"]) == kind for f in result.failures)
    logger.log(
        logging.DEBUG if seen else logging.WARNING,
        "%s/%s %s %s rep=%s failed at %s: %s%s",
        part.name,
        spec.display,
        method or "-",
        params or "",
        rep,
        stage,
        msg,
        "" if seen else " (identical failures that follow are logged at DEBUG)",
    )
    logger.debug("traceback:\n%s", "".join(traceback.format_exception(exc)))
    result.failures.append(
        {
            "part": part.name,
            "dataset": spec.display,
            "method": method,
            "params": params,
            "rep": rep,
            "stage": stage,
            "error": msg,
        }
    )


def _run_cell(run: _Run, part, method, data, params, seeds, context):
    """One method at one grid point: each repetition (one for a deterministic method),
    then a result row per metric."""
    if method.applies is not None and not method.applies(data, params):
        _skip_method(run, part, method, data.spec, len(seeds))
        return
    use = seeds[:1] if method.deterministic else seeds
    metric_names = part.metric_names()
    values: dict[str, list[float]] = {m: [] for m in metric_names}
    seconds: list[float] = []
    cpu: list[float] = []
    for rep, s in enumerate(use):
        task = Task(
            data=data,
            params=dict(params),
            rep=rep,
            seed=s,
            context=context,
            part=part.name,
            quick=run.quick,
        )
        cost = _run_rep(run, part, method, task, params, values)
        if cost is not None:
            seconds.append(cost.wall)
            cpu.append(cost.cpu)
    for name in metric_names:
        row = _result_row(run, part, method, data.spec, params, name, values[name], (seconds, cpu))
        run.result.rows.append(row)


def _skip_method(run: _Run, part, method, spec, n_seeds: int):
    """A method that does not apply to the data set: its cells counted as done, a note."""
    run.progress.advance(1 if method.deterministic else n_seeds, f"{method.name} skipped")
    note = f"{part.name}: {method.name} does not apply to {spec.display} (skipped)"
    if note not in run.result.notes:
        run.result.notes.append(note)


def _run_rep(run: _Run, part, method, task: Task, params, values: dict):
    """One repetition of a cell, recorded in ``run.result.records``, its metrics added
    to ``values``; its timed cost, or None when the method failed."""
    result, spec, rep = run.result, task.data.spec, task.rep
    rec = _cell_record(part, spec, method, params, rep, task.seed)
    result.records.append(rec)
    run.progress.status(f"{method.name} {_short(params)} rep {rep}")
    ledger = Ledger()
    try:
        with _threads(part.threads), charging(ledger), Stopwatch() as sw:
            out = method.run(task)
    except Exception as exc:
        _fail(result, part, spec, method.name, params, rep, "fit", exc)
        rec["error"] = _err(exc)
        run.progress.advance(1)
        return None
    cost = ledger.charge(sw.cost)
    rec["seconds"] = cost.wall
    rec["cpu_seconds"] = cost.cpu
    rec["shared_seconds"] = ledger.shared.wall
    rec["shared_cpu_seconds"] = ledger.shared.cpu
    rec["shared_items"] = {repr(k): [c.wall, c.cpu] for k, c in ledger.used.items()}
    _evaluate_metrics(run, part, method, task, out, rec, values)
    del out
    run.progress.advance(1)
    return cost


def _cell_record(part, spec, method, params, rep: int, seed: int) -> dict:
    """A repetition's raw record before it runs (seconds and metrics filled in after)."""
    return {
        "part": part.name,
        "dataset": spec.display,
        "method": method.name,
        "params": params,
        "rep": rep,
        "seed": seed,
        "seconds": None,
        "cpu_seconds": None,
        "shared_seconds": None,
        "shared_cpu_seconds": None,
        "shared_items": {},
        "metrics": {},
        "error": None,
    }


def _evaluate_metrics(run: _Run, part, method, task: Task, out, rec: dict, values: dict):
    """Every metric of ``part`` on a repetition's output, into its record and ``values``
    (a metric that raises is recorded as a failure and left out)."""
    for metric in part.metrics:
        try:
            got = metric.evaluate(out, task)
        except Exception as exc:
            spec, params = task.data.spec, rec["params"]
            _fail(run.result, part, spec, method.name, params, task.rep, "metric", exc)
            rec["error"] = _err(exc)
            continue
        rec["metrics"].update(got)
        for k, v in got.items():
            values[k].append(v)


def _result_row(run: _Run, part, method, spec, params, name, values: list, times) -> dict:
    """A cell's result row for one metric: its mean and standard deviation over the
    repetitions, the mean seconds (``times``: wall and CPU seconds of each repetition)
    and the paper's number."""
    seconds, cpu = times
    v = np.asarray(values, dtype=np.float64)
    return {
        "dataset": spec.display,
        "method": method.name,
        "params": params,
        "metric": name,
        "mean": _finite(v.mean()) if v.size else None,
        "std": _finite(v.std(ddof=1)) if v.size > 1 else (0.0 if v.size else None),
        "seconds_mean": _finite(np.mean(seconds)) if seconds else None,
        "cpu_seconds_mean": _finite(np.mean(cpu)) if cpu else None,
        "reps": int(v.size),
        "paper": _paper_value(run.experiment, spec, method, params, name),
        "_part": part.name,
    }


def _paper_value(experiment: Experiment, spec, method, params, name: str):
    """The paper's number for this row (None for a stand-in, or without a reference)."""
    if experiment.reference is None or spec.stand_in:
        return None
    try:
        return experiment.reference(spec.display, method.name, dict(params), name)
    except Exception as exc:
        logger.warning("reference lookup failed for %s/%s: %s", spec.display, name, exc)
        return None


def _threads(n):
    """BLAS/OpenMP threads limited to ``n`` inside the block (None: unchanged)."""
    if n is None:
        return nullcontext()
    from threadpoolctl import threadpool_limits

    return threadpool_limits(int(n))


def _short(params: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in params.items() if k != "part")


# ---------------------------------------------------------------- every experiment


def run_all(
    experiments,
    out_dir,
    *,
    reps: int | None = None,
    quick: bool = False,
    seed: int = 0,
    data_home=None,
    progress_factory=None,
    config: dict | None = None,
    log=None,
    on_entry=None,
    resume: bool = False,
    jobs: int = 1,
    threads: int | None = None,
) -> list[AllEntry]:
    """Run every experiment in ``experiments``, each into ``out_dir/NAME``.

    Each is run with :func:`run_experiment` and written with
    :func:`lorak_bench.write_outputs`; an experiment that raises is recorded (status
    ``"error"``) and the others still run. Returns one :class:`AllEntry` per
    experiment, in order. ``progress_factory()`` makes a fresh progress bar per
    experiment; ``log(text)`` receives a line as each experiment ends, and
    ``on_entry(entries)`` the list so far (e.g. to rewrite the combined report, so that
    an interrupted run still leaves one).

    Every finished (part, dataset) is saved under ``out_dir/NAME/cells``
    (:class:`CellCache`); with ``resume`` those saved by an earlier, killed run of the
    same settings are replayed instead of run again.

    ``jobs`` > 1 runs that many worker processes at once (no
    progress bars then) whose BLAS/OpenMP threads are limited to ``threads`` (default:
    the cores split between the jobs, at least one each), so that the processes
    together never ask for more threads than the machine has cores. A worker runs one
    experiment, or one (part, dataset) of an experiment that has several, into the
    experiment's cell cache; a last worker then replays that cache and writes the
    outputs, so the results are a serial run's and one long experiment no longer sets
    the run's end alone. The jobs are handed out longest first, unit by unit (by
    measured seconds, see :func:`_job_order`), in the given order otherwise;
    ``resume`` works as in a serial run.
    """
    from pathlib import Path

    out_dir = Path(out_dir)
    experiments = list(experiments)
    kwargs = {
        "reps": reps,
        "quick": quick,
        "seed": seed,
        "data_home": data_home,
        "config": config,
        "resume": resume,
    }
    entries: list[AllEntry] = []
    order = {e.name: i for i, e in enumerate(experiments)}

    def in_order():
        """The finished entries in the experiments' order (workers end in any order)."""
        return sorted(entries, key=lambda e: order[e.name])

    def done(entry):
        entries.append(entry)
        if log is not None:
            log(
                f"{entry.name}: {entry.status}, {entry.seconds:.1f} s (timed work "
                f"{entry.work_seconds:.1f} s, shared work once), {entry.n_rows} rows, "
                f"{entry.n_failures} failures" + (f" ({entry.error})" if entry.error else "")
            )
        if on_entry is not None:
            on_entry(in_order())

    if jobs <= 1 or len(experiments) <= 1:
        for exp in experiments:
            progress = None if progress_factory is None else progress_factory()
            done(_run_one(exp, out_dir, progress=progress, **kwargs))
        return entries
    per_job = int(threads) if threads else max(1, (os.cpu_count() or 1) // int(jobs))
    for entry in _run_parallel(experiments, out_dir, int(jobs), per_job, kwargs):
        done(entry)
    return in_order()


def _run_one(exp, out_dir, *, reps, quick, seed, data_home, config, resume, progress=None):
    """One experiment of :func:`run_all`: run, write its outputs, summarize as an entry."""
    from pathlib import Path

    t0 = time.perf_counter()
    sub = Path(out_dir) / exp.name
    entry = AllEntry(
        name=exp.name,
        description=exp.description,
        paper=exp.paper,
        status="error",
        seconds=0.0,
    )
    try:
        cfg = dict(config or {})
        cfg.setdefault("options", {})
        cfg["options"] = {**cfg["options"], "experiment": exp.name, "out": str(sub)}
        result = run_experiment(
            exp,
            reps=reps,
            quick=quick,
            seed=seed,
            data_home=data_home,
            progress=progress,
            config=cfg,
            cache=CellCache(sub / "cells", resume=resume),
        )
        result.config["out"] = str(sub)
        paths = write_outputs(result, sub)
        entry.paths = {
            "report": f"{exp.name}/report.md",
            "results": f"{exp.name}/results.json",
            "raw": f"{exp.name}/raw.json",
            "plots": [f"{exp.name}/{Path(p).name}" for p in paths["plots"]],
        }
        entry.n_rows = len(result.rows)
        entry.n_failures = len(result.failures)
        entry.run_seconds = result.wall_seconds
        entry.fit_seconds = result.fit_seconds
        entry.work_seconds = result.work_seconds
        entry.stand_ins = list(result.config.get("stand_ins_used", []))
        entry.notes = list(result.notes)
        if not any(r["mean"] is not None for r in result.rows):
            entry.status = "no results"
        else:
            entry.status = "failures" if result.failures else "ok"
    except Exception as exc:
        entry.error = _err(exc)
        logger.warning("experiment %s failed: %s", exp.name, entry.error)
        logger.debug("traceback:\n%s", "".join(traceback.format_exception(exc)))
    entry.seconds = time.perf_counter() - t0
    return entry


# the experiments of a parallel run_all, inherited by forked workers (an Experiment
# holds closures and lambdas, which do not pickle); spawned workers look them up by name
_FORKED: list = []


# Wall seconds of each experiment's full protocol in `bench all --jobs 2` runs on the
# 2-core reference machine (the kind CI uses; 1 BLAS thread per worker), used only to
# hand out the longest jobs first. Cell counts rank them badly: lpmkl has 1% of
# csi-rank's cells and takes far longer, so ordered by cells it started 18 minutes late
# in a full run and set the run's end alone. lpmkl is the sum of its units below.
# None: not measured yet (scheduled as an experiment of unknown cost: first, by cells).
FULL_RUN_SECONDS = {
    "csi-rank": 331.3,
    "gnys": 520.8,
    "gnys-alignment": 75.8,
    "gnys-beta": 237.0,
    "gnys-labels": 384.6,
    "gnys-mkl": 286.1,
    "kpca": 39.0,
    "lpmkl": 6178.2,
    "lssvm-usps": 59.4,
    "npkl-active": 31.0,
    "npkl-adult": 249.4,
    "npkl-uci": 304.3,
    "nystrom-error": 434.7,
    # measured once, on a loaded machine (other test runs beside it): an upper bound
    "ssl": 3529.1,
    # 28 sets x 10 repetitions x 10 methods; its full protocol has not been timed here
    "side-info": None,
}

# Wall seconds of the (part, dataset) units whose cost differs most from an even share
# of their experiment's (lpmkl's data sets: 325–1911 s), from the cell cache of a full
# run (2-core machine, two workers, one BLAS thread each); used only to hand out the
# longest units first.
FULL_UNIT_SECONDS = {
    ("lpmkl", "accuracy", "adult"): 1910.8,
    ("lpmkl", "accuracy", "mushrooms"): 1756.3,
    ("lpmkl", "accuracy", "ijcnn1"): 1197.0,
    ("lpmkl", "accuracy", "svmguide1"): 988.7,
    ("lpmkl", "solvers", "adult"): 324.7,
}


def _measured_seconds(quick: bool, out_dir) -> dict:
    """Seconds per experiment for scheduling: an earlier run's index.json in
    ``out_dir`` (same mode) over :data:`FULL_RUN_SECONDS` (full protocol only)."""
    import json
    from pathlib import Path

    measured = {} if quick else {k: v for k, v in FULL_RUN_SECONDS.items() if v is not None}
    try:
        index = json.loads((Path(out_dir) / "index.json").read_text())
        if bool(index.get("quick")) == bool(quick):
            measured.update(
                {
                    e["name"]: float(e["seconds"])
                    for e in index.get("experiments", [])
                    if e.get("status") in ("ok", "failures") and e.get("seconds")
                }
            )
    except (OSError, ValueError, TypeError, KeyError):
        pass
    return measured


def _schedule_order(experiments, quick: bool, out_dir, measured=None) -> list[int]:
    """Indices of ``experiments``, longest first: by the seconds an earlier run into
    ``out_dir`` recorded in its index.json (same mode), else, for the full protocol, by
    :data:`FULL_RUN_SECONDS`, else by cell count; experiments with no measured time go
    first (their cost is unknown), by cells. ``measured``: those seconds, if read."""
    if measured is None:
        measured = _measured_seconds(quick, out_dir)

    def key(i):
        name = experiments[i].name
        if name in measured:
            return (1, -measured[name])
        return (0, -_cells(experiments[i], quick))

    return sorted(range(len(experiments)), key=key)


def _job_order(experiments, units: dict, quick: bool, out_dir) -> list[tuple[int, object]]:
    """The worker jobs of a parallel run, longest first: ``(index, unit)`` for each
    (part, dataset) of an experiment with several, ``(index, None)`` for a whole one.

    Longest processing time first over the units themselves, not experiment by
    experiment: a unit's seconds are :data:`FULL_UNIT_SECONDS` where measured (full
    protocol), else its experiment's measured seconds shared evenly by its units; jobs
    of experiments with no measured time go first, by cells (their cost is unknown).
    Ties keep :func:`_schedule_order`'s order.
    """
    measured = _measured_seconds(quick, out_dir)
    jobs = []
    for rank, i in enumerate(_schedule_order(experiments, quick, out_dir, measured)):
        exp = experiments[i]
        parts = units[i] if len(units[i]) > 1 else [None]
        for unit in parts:
            if exp.name not in measured:
                key = (0, -_cells(exp, quick) / len(parts))
            else:
                share = measured[exp.name] / len(parts)
                if unit is not None and not quick:
                    share = FULL_UNIT_SECONDS.get((exp.name, *unit), share)
                key = (1, -share)
            jobs.append((key, rank, i, unit))
    jobs.sort(key=lambda job: (job[0], job[1]))
    return [(i, unit) for _, _, i, unit in jobs]


def _cells(exp, quick: bool) -> int:
    """A size for scheduling: the cells of the experiment's (quick) grid."""
    total = 0
    for p in exp.parts:
        grid = p.quick_grid if quick and p.quick_grid is not None else p.grid
        reps = p.quick_reps if quick and p.quick_reps is not None else p.reps
        total += len(p.datasets) * len(grid) * len(p.methods) * reps
    return total


def _in_worker(index: int, name: str, out_dir, threads: int, kwargs: dict, unit=None):
    """In a worker process, with ``threads`` BLAS/OpenMP threads: the whole experiment
    (its :class:`AllEntry`), or only its (part, dataset) ``unit``, run into its cell
    cache (the unit's wall seconds)."""
    from pathlib import Path

    from threadpoolctl import threadpool_limits

    from ._registry import get_experiment

    exp = _FORKED[index] if index < len(_FORKED) else get_experiment(name)
    t0 = time.perf_counter()
    with threadpool_limits(limits=threads):
        if unit is None:
            return _run_one(exp, out_dir, **kwargs)
        run_experiment(
            exp,
            reps=kwargs["reps"],
            quick=kwargs["quick"],
            seed=kwargs["seed"],
            data_home=kwargs["data_home"],
            cache=CellCache(Path(out_dir) / exp.name / "cells", resume=kwargs["resume"]),
            only=[unit],
        )
    return time.perf_counter() - t0


def _units(exp, quick: bool, data_home) -> list[tuple[str, str]]:
    """The (part, dataset) pairs an experiment runs, in order."""
    out = []
    for part in exp.parts:
        specs, _ = _resolve_specs(part, override=None, quick=quick, data_home=data_home)
        out += [(part.name, spec.display) for spec in specs]
    return out


def _run_parallel(experiments, out_dir, jobs, threads, kwargs):
    """Yield the :class:`AllEntry` of each experiment as its last worker process ends.

    An experiment with several (part, dataset) units is split: each unit runs in its
    own worker into the experiment's cell cache, and when all have ended one more
    worker replays the cache (``resume``) and writes the experiment's outputs, so the
    result is the serial run's. The entry's ``seconds`` add up its workers' seconds.
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    order = _schedule_order(experiments, kwargs["quick"], out_dir)
    units = {i: _units(experiments[i], kwargs["quick"], kwargs["data_home"]) for i in order}
    _FORKED[:] = experiments if context.get_start_method() == "fork" else []
    try:
        with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
            workers = _Workers(pool, experiments, out_dir, threads, kwargs)
            for i in order:
                if len(units[i]) > 1:
                    workers.left[i], workers.spent[i] = len(units[i]), 0.0
            for i, unit in _job_order(experiments, units, kwargs["quick"], out_dir):
                workers.submit(i, unit)
            yield from workers.finished_entries()
    finally:
        _FORKED.clear()


@dataclasses.dataclass
class _Workers:
    """The worker jobs of a parallel :func:`run_all` in flight.

    ``running`` maps each future to its ``(experiment index, unit)`` (unit None: the
    whole experiment, or the assembly of its units); ``left`` counts the units of a
    split experiment still running, ``spent`` adds up their seconds.
    """

    pool: Any
    experiments: list
    out_dir: Any
    threads: int
    kwargs: dict
    running: dict = dataclasses.field(default_factory=dict)
    left: dict = dataclasses.field(default_factory=dict)
    spent: dict = dataclasses.field(default_factory=dict)

    def submit(self, i: int, unit=None, *, assemble: bool = False):
        """Start experiment ``i`` whole (or its assembly from the cell cache: replayed
        with ``resume``), or only its (part, dataset) ``unit``."""
        kw = {**self.kwargs, "resume": True} if assemble else self.kwargs
        name = self.experiments[i].name
        fut = self.pool.submit(_in_worker, i, name, self.out_dir, self.threads, kw, unit)
        self.running[fut] = (i, unit)

    def finished_entries(self):
        """Yield each experiment's entry as its last worker ends; a split experiment's
        assembly starts when its last unit has ended."""
        from concurrent.futures import FIRST_COMPLETED, wait

        while self.running:
            done, _ = wait(list(self.running), return_when=FIRST_COMPLETED)
            for fut in done:
                i, unit = self.running.pop(fut)
                if unit is not None:
                    self._unit_ended(fut, i, unit)
                    continue
                yield self._entry(fut, i)

    def _unit_ended(self, fut, i: int, unit):
        exp = self.experiments[i]
        try:
            self.spent[i] += fut.result()
        except Exception as exc:  # the assembly runs the unit again
            logger.warning(
                "experiment %s, %s/%s: worker failed: %s",
                exp.name, unit[0], unit[1], _err(exc),
            )  # fmt: skip
        self.left[i] -= 1
        if self.left[i] == 0:
            self.submit(i, assemble=True)

    def _entry(self, fut, i: int) -> AllEntry:
        exp = self.experiments[i]
        try:
            entry = fut.result()
        except Exception as exc:  # the worker itself died (killed, out of memory)
            logger.warning("experiment %s: worker failed: %s", exp.name, _err(exc))
            return AllEntry(
                name=exp.name,
                description=exp.description,
                paper=exp.paper,
                status="error",
                seconds=0.0,
                error=_err(exc),
            )
        entry.seconds += self.spent.get(i, 0.0)
        return entry

"""Timing and recording for benchmark scripts (``bench/scripts/*.py``): the harness's
public timing helper.

The bench runner times its cells itself; a script that measures something outside the
runner imports what it needs from here instead of reading a clock:

- :class:`Stopwatch` — ``with Stopwatch() as sw: ...`` then ``sw.wall`` and ``sw.cpu``
  (seconds; ``sw.elapsed`` inside the block);
- :func:`time_call` — call a function ``repeats`` times and get its result and a
  :class:`Timing`: the median wall and CPU seconds, every repeat, and the load average
  before and after (the machine may be shared: a number without it cannot be judged);
- both take ``sync``, a callable run as the timing starts and as it stops, for work a
  call leaves running asynchronously (``sync=torch.cuda.synchronize`` on a GPU);
- :class:`Record` — a run's JSON document: what the script adds, plus the environment
  (:func:`capture_environment`: versions, CPU, BLAS threads, load average) captured at
  the start and the total wall seconds and end load average when written;
- :func:`write_json` — write any result document as JSON, atomically, with numpy
  numbers and arrays as plain JSON;
- :class:`LoadGuard` (the load average and usable cores before and after a
  measurement, flagged or refused when the machine is busy), :func:`blas_floor` and
  :func:`floor_seconds` (the dense BLAS time a measurement is compared with) and
  :func:`machine_load`, from the harness's floor module, so that one import serves a
  script.

>>> from lorak_bench.timing import Record, Stopwatch, time_call
>>> out, t = time_call(sum, range(1000), repeats=3)
>>> out, len(t.walls), t.wall >= 0
(499500, 3, True)
>>> with Stopwatch() as sw:
...     _ = sorted(range(1000))
>>> sw.wall >= 0 and sw.cpu >= 0
True
"""

from __future__ import annotations

import datetime
import json
import os
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ._cost import Stopwatch
from ._env import capture_environment
from ._floor import (
    LoadGuard,
    MachineLoadedError,
    MachineLoadedWarning,
    blas_floor,
    floor_flops,
    floor_seconds,
    machine_load,
)

__all__ = [
    "LoadGuard",
    "MachineLoadedError",
    "MachineLoadedWarning",
    "Record",
    "Stopwatch",
    "Timing",
    "blas_floor",
    "capture_environment",
    "floor_flops",
    "floor_seconds",
    "load_average",
    "machine_load",
    "time_call",
    "write_json",
]


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages, or None where the system has none."""
    return list(os.getloadavg()) if hasattr(os, "getloadavg") else None


@dataclass(frozen=True)
class Timing:
    """Seconds of a repeated call.

    ``wall`` and ``cpu`` are the medians over the repeats (process CPU, every thread);
    ``walls`` and ``cpus`` every repeat in order; ``load_before`` and ``load_after``
    the load averages around them.
    """

    wall: float
    cpu: float
    walls: tuple[float, ...]
    cpus: tuple[float, ...]
    load_before: list[float] | None
    load_after: list[float] | None

    @property
    def repeats(self) -> int:
        return len(self.walls)

    def as_dict(self) -> dict:
        """JSON-ready: ``seconds`` and ``cpu_seconds`` (the medians), ``repeats``, every
        repeat's seconds and the two load averages."""
        return {
            "seconds": self.wall,
            "cpu_seconds": self.cpu,
            "repeats": self.repeats,
            "seconds_each": list(self.walls),
            "cpu_seconds_each": list(self.cpus),
            "load_before": self.load_before,
            "load_after": self.load_after,
        }


def time_call(
    fn: Callable,
    *args,
    repeats: int = 1,
    setup: Callable | None = None,
    sync: Callable | None = None,
    **kwargs,
) -> tuple[Any, Timing]:
    """Call ``fn(*args, **kwargs)`` ``repeats`` times; return the last result and the
    :class:`Timing` (median wall and CPU seconds over the repeats). ``setup()``, when
    given, runs before each call, outside the timing (``gc.collect``, say). ``sync()``,
    when given, runs right before and right after each call (the :class:`Stopwatch`
    hook): asynchronous work, a GPU's say, is then waited for, the earlier work's
    outside the timing and the call's own inside it."""
    if isinstance(repeats, bool) or not isinstance(repeats, (int, np.integer)) or repeats < 1:
        raise ValueError(f"repeats must be an integer >= 1; got {repeats!r}")
    if sync is not None and not callable(sync):
        raise TypeError(f"sync must be a callable or None; got {sync!r}")
    before = load_average()
    walls, cpus = [], []
    out = None
    for _ in range(int(repeats)):
        out = None  # the previous result may be freed before the next call
        if setup is not None:
            setup()
        with Stopwatch(sync=sync) as sw:
            out = fn(*args, **kwargs)
        walls.append(sw.wall)
        cpus.append(sw.cpu)
    timing = Timing(
        wall=statistics.median(walls),
        cpu=statistics.median(cpus),
        walls=tuple(walls),
        cpus=tuple(cpus),
        load_before=before,
        load_after=load_average(),
    )
    return out, timing


def _plain(obj):
    """``json.dumps``'s ``default``: numpy numbers and arrays, paths, sets and
    :class:`Timing` as plain JSON (non-finite floats as ``json`` writes them: NaN,
    Infinity)."""
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, (set, frozenset)):
        return sorted(obj, key=repr)
    if isinstance(obj, Timing):
        return obj.as_dict()
    raise TypeError(f"write_json cannot store a {type(obj).__name__}: {obj!r:.80}")


def write_json(path, doc, *, indent: int | None = 1) -> Path:
    """Write ``doc`` as JSON to ``path`` (folders created; a temporary file then renamed,
    so a reader never sees half a file) and return the path. numpy numbers and arrays,
    paths, sets and :class:`Timing` become plain JSON."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(doc, indent=indent, default=_plain) + "\n"
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


class Record(dict):
    """A benchmark run's JSON document: a dict of what the script adds, plus
    ``"environment"`` (:func:`capture_environment`, with the load average at the start,
    and ``"started"``, the UTC time) taken when the record is made.

    Make it when the run starts. :attr:`elapsed` is the wall time since then;
    :meth:`write` adds it as ``"wall_seconds"`` and the
    environment's ``"load_average_end"``, then writes the document with
    :func:`write_json`; a long run can call it after each part (each call rewrites the
    file with everything so far).

    >>> rec = Record(n=100)
    >>> rec["result"] = 1.0
    >>> sorted(rec)
    ['environment', 'n', 'result']
    """

    def __init__(self, *args, **fields):
        super().__init__(*args, **fields)
        started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        self["environment"] = capture_environment() | {"started": started}
        self._stopwatch = Stopwatch().__enter__()

    @property
    def elapsed(self) -> float:
        """Wall seconds since the record was made."""
        return self._stopwatch.elapsed

    def write(self, path) -> Path:
        self["wall_seconds"] = self.elapsed
        self["environment"]["load_average_end"] = load_average()
        return write_json(path, self)

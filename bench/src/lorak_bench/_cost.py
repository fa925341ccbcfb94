"""What a cell costs: wall and CPU seconds, and work shared between cells.

The runner times every cell itself (:class:`Stopwatch` around ``method.run``); an
experiment never reads a clock. Work that several cells share — one eigendecomposition
serving every rank, the k-means landmarks of a repetition serving several columns, a
curve whose points are separate cells — goes through :func:`shared` (in a method:
``task.shared(key, compute)``): computed once per (part, dataset), timed when computed,
and charged in full to every cell that uses it, so that each cell's seconds read as
"what this column costs on its own". The per-cell records keep the shared part apart
(``shared_seconds``, ``shared_cpu_seconds``) so that a total can count it once.
Preparing a method's input inside ``run`` (a problem instance, a reference optimum it
is scored against) goes in ``with task.untimed():`` — left out of the cell's cost.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass, field

__all__ = ["Cost", "Ledger", "Stopwatch", "charging", "forget", "shared", "untimed"]

SHARED_KEY = "_shared"


@dataclass(frozen=True)
class Cost:
    """Wall and process CPU seconds."""

    wall: float = 0.0
    cpu: float = 0.0

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.wall + other.wall, self.cpu + other.cpu)

    def __sub__(self, other: Cost) -> Cost:
        return Cost(self.wall - other.wall, self.cpu - other.cpu)


class Stopwatch:
    """``with Stopwatch() as sw: ...`` then ``sw.cost`` — or ``sw.wall`` and ``sw.cpu``,
    in seconds (wall: ``time.perf_counter``, CPU: ``time.process_time``, every thread
    of the process). Inside the block, ``sw.elapsed`` is the wall time so far.

    ``sync``, when given, is called with no argument as the block begins, before the
    clocks are read, and as it ends, before they are read again: for work that runs
    asynchronously, on a GPU say, ``Stopwatch(sync=torch.cuda.synchronize)`` waits for
    the work queued before the block outside the measurement and for the block's own
    work inside it.
    """

    cost: Cost = Cost()

    def __init__(self, sync=None):
        if sync is not None and not callable(sync):
            raise TypeError(f"sync must be a callable or None; got {sync!r}")
        self.sync = sync

    def __enter__(self) -> Stopwatch:
        if self.sync is not None:
            self.sync()
        self._wall = time.perf_counter()
        self._cpu = time.process_time()
        return self

    def __exit__(self, *exc) -> None:
        if self.sync is not None:
            self.sync()
        self.cost = Cost(time.perf_counter() - self._wall, time.process_time() - self._cpu)

    @property
    def wall(self) -> float:
        """Wall seconds of the block (0 until it ends)."""
        return self.cost.wall

    @property
    def cpu(self) -> float:
        """Process CPU seconds of the block (0 until it ends)."""
        return self.cost.cpu

    @property
    def elapsed(self) -> float:
        """Wall seconds since the block began (inside it: so far)."""
        return time.perf_counter() - self._wall


@dataclass
class Ledger:
    """The shared work one cell used (``used``: key → its cost) and the part of the
    cell's measured time spent computing shared work for the first time (``computed``)."""

    used: dict = field(default_factory=dict)
    computed: Cost = Cost()
    depth: int = 0

    @property
    def shared(self) -> Cost:
        total = Cost()
        for c in self.used.values():
            total = total + c
        return total

    def charge(self, measured: Cost) -> Cost:
        """The cell's cost: what it measured, less first-time shared work, plus every
        shared item it used (each counted once)."""
        return measured - self.computed + self.shared


_ACTIVE: list[Ledger] = []


@contextmanager
def charging(ledger: Ledger):
    """Make ``ledger`` the one :func:`shared` reports to (the runner, around a cell)."""
    _ACTIVE.append(ledger)
    try:
        yield ledger
    finally:
        _ACTIVE.remove(ledger)


def shared(context: dict, key, compute):
    """``compute()`` once per ``context`` and ``key``; its result on every call.

    The first call times it; every call inside a runner's cell charges that cost to the
    cell (see the module text). Work computed while computing other shared work is part
    of the outer item's cost and is not charged separately.
    """
    store = context.setdefault(SHARED_KEY, {})
    ledger = _ACTIVE[-1] if _ACTIVE else None
    if key not in store:
        if ledger is not None:
            ledger.depth += 1
        try:
            with Stopwatch() as sw:
                value = compute()
        finally:
            if ledger is not None:
                ledger.depth -= 1
        store[key] = (value, sw.cost)
        if ledger is not None and ledger.depth == 0:
            ledger.computed = ledger.computed + sw.cost
    value, cost = store[key]
    if ledger is not None and ledger.depth == 0:
        ledger.used.setdefault(key, cost)
    return value


def forget(context: dict, which) -> int:
    """Drop the shared items whose key satisfies ``which(key)`` (memory: work no later
    cell needs); a later :func:`shared` call with such a key computes it again.
    Returns how many were dropped."""
    store = context.get(SHARED_KEY, {})
    gone = [k for k in store if which(k)]
    for k in gone:
        del store[k]
    return len(gone)


@contextmanager
def untimed():
    """Leave the block's time out of the current cell's cost (no-op outside a cell)."""
    ledger = _ACTIVE[-1] if _ACTIVE else None
    with Stopwatch() as sw:
        yield
    if ledger is not None and ledger.depth == 0:
        ledger.computed = ledger.computed + sw.cost

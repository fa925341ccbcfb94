"""The BLAS floor of a benchmark, measured in the same run, and a load guard.

A wall time means little on its own: it depends on the machine, the BLAS, the number
of threads and on whatever else runs there. A benchmark here therefore reports its
time as a multiple of the *floor*: the time the same machine, in the same process and
with the same threads, needs for the dense BLAS/LAPACK calls that carry the method's
flops. Nyström's ``fit_transform`` at n rows, d features and m landmarks, for example,
cannot beat one GEMM (n × d by d × m, 2nmd flops) plus one triangular multiply of the
n × m block (n m² flops).

Operations (``(name, shape)``; the flop counts are the usual nominal ones):

========  ===========  ==========================================  ================
name      shape        call                                        flops
========  ===========  ==========================================  ================
gemm      (n, d, m)    A (n × d) @ B (d × m) into a preallocated   2 n d m
                       C-ordered n × m array
trmm      (n, m)       B (n × m) ← B U, U upper triangular m × m   n m²
trsm      (n, m)       B (n × m) ← B U⁻¹, U upper triangular       n m²
syevd     (m,)         all eigenpairs of a symmetric m × m matrix  10/3 m³ (reduction
                       (LAPACK divide and conquer)                 and back-transform)
========  ===========  ==========================================  ================

Every operation is timed ``repeats`` times; the record keeps the best and the median
wall time (``time.perf_counter``) and the best process CPU time (``time.process_time``,
all threads; steadier than wall time when other jobs share the machine).

The load guard reads the 1-minute load average and the cores this process may use
before and after a measurement; a load above the core count flags the record
(``loaded: true``) and warns, or, with ``strict``, refuses it. At the end the
benchmark's own threads are part of the load average: up to t·(1 − e^(−s/60)) after s
seconds of t busy threads (the kernel's 1-minute average is exponential), so that much
is taken off before the comparison (``load1_others``), and a benchmark that keeps its
own cores busy is not flagged for it.
"""

from __future__ import annotations

import math
import os
import time
import warnings

import numpy as np

__all__ = [
    "FLOOR_OPS",
    "LoadGuard",
    "MachineLoadedError",
    "MachineLoadedWarning",
    "blas_floor",
    "floor_flops",
    "floor_seconds",
    "machine_load",
]

FLOOR_OPS = ("gemm", "trmm", "trsm", "syevd")


class MachineLoadedError(RuntimeError):
    """The machine was busier than its cores during a strict measurement."""


class MachineLoadedWarning(UserWarning):
    """The machine was busier than its cores during a measurement (recorded, flagged)."""


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _blas_threads() -> int:
    """The BLAS thread count of this process (the threads a measurement keeps busy)."""
    from threadpoolctl import threadpool_info

    counts = [int(i["num_threads"]) for i in threadpool_info() if i.get("user_api") == "blas"]
    return max(counts) if counts else 1


def machine_load() -> dict:
    """The load averages (1, 5, 15 min), the usable cores, and ``loaded``.

    ``loaded`` is True when the 1-minute load average exceeds the number of cores this
    process may run on (then timings measure the other jobs as much as the code).
    """
    try:
        one, five, fifteen = os.getloadavg()
    except (AttributeError, OSError):  # pragma: no cover - no load average here
        return {"load1": None, "load5": None, "load15": None, "cores": _cores(), "loaded": False}
    cores = _cores()
    return {
        "load1": float(one),
        "load5": float(five),
        "load15": float(fifteen),
        "cores": int(cores),
        "loaded": bool(one > cores),
    }


class LoadGuard:
    """Record the machine load before and after a measurement; flag or refuse it.

    Around a measurement: ``with LoadGuard() as guard: run()``, then
    ``result["load"] = guard.record()``. Before anything is measured:

    >>> LoadGuard(label="example").record()
    {'before': None, 'after': None, 'loaded': False}

    ``strict``: raise :class:`MachineLoadedError` when the machine is loaded at the
    start or at the end (the measurement is then not recorded); otherwise warn
    (:class:`MachineLoadedWarning`) and set ``loaded: true`` in :meth:`record`. None
    (default): strict when the environment variable ``LORAK_STRICT_LOAD`` is ``1``.
    """

    def __init__(
        self, *, strict: bool | None = None, label: str = "benchmark", threads: int | None = None
    ):
        if strict is None:
            strict = os.environ.get("LORAK_STRICT_LOAD", "") == "1"
        self.strict = bool(strict)
        self.label = label
        self.threads = threads
        self.before: dict | None = None
        self.after: dict | None = None
        self._t0: float | None = None

    def start(self) -> LoadGuard:
        self.before = machine_load()
        self._t0 = time.monotonic()
        self._check(self.before, "at the start")
        return self

    def own_load(self) -> float:
        """The most the measurement itself adds to the 1-minute load average so far."""
        if self._t0 is None:
            return 0.0
        threads = self.threads if self.threads is not None else _blas_threads()
        return float(threads) * (1.0 - math.exp(-(time.monotonic() - self._t0) / 60.0))

    def stop(self) -> LoadGuard:
        state = machine_load()
        if state["load1"] is not None:
            own = self.own_load()
            state["own_load"] = own
            state["load1_others"] = max(state["load1"] - own, 0.0)
            state["loaded"] = bool(state["load1_others"] > state["cores"])
        self.after = state
        self._check(self.after, "at the end")
        return self

    def __enter__(self) -> LoadGuard:
        return self.start()

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.stop()
        else:
            self.after = machine_load()

    @property
    def loaded(self) -> bool:
        return any(s is not None and s["loaded"] for s in (self.before, self.after))

    def _check(self, state: dict, when: str) -> None:
        if not state["loaded"]:
            return
        others = state.get("load1_others")
        own = "" if others is None else f" ({others:.2f} without this benchmark's threads)"
        msg = (
            f"{self.label}: load average {state['load1']:.2f}{own} above the "
            f"{state['cores']} cores {when}: timings are not reproducible"
        )
        if self.strict:
            raise MachineLoadedError(msg + " (refused; rerun on an idle machine)")
        warnings.warn(msg + " (recorded with loaded: true)", MachineLoadedWarning, stacklevel=3)
        print(f"WARNING: {msg}", flush=True)

    def record(self) -> dict:
        """``{"before": …, "after": …, "loaded": bool}`` for a result file."""
        return {"before": self.before, "after": self.after, "loaded": self.loaded}


def floor_flops(op: str, shape) -> float:
    """The nominal flop count of one floor operation (see the module table)."""
    shape = tuple(int(s) for s in shape)
    if op == "gemm":
        n, d, m = _shape(op, shape, 3)
        return 2.0 * n * d * m
    if op in ("trmm", "trsm"):
        n, m = _shape(op, shape, 2)
        return float(n) * m * m
    if op == "syevd":
        (m,) = _shape(op, shape, 1)
        return 10.0 / 3.0 * float(m) ** 3
    raise ValueError(f"unknown floor operation {op!r}; valid names are {', '.join(FLOOR_OPS)}")


def _shape(op, shape, k):
    if len(shape) != k or any(s < 1 for s in shape):
        raise ValueError(f"{op} takes {k} positive sizes; got {shape}")
    return shape


def _runner(op, shape, dtype, rng):
    """A no-argument callable running ``op`` once on preallocated operands."""
    from scipy.linalg import blas, lapack

    prefix = "s" if dtype == np.float32 else "d"
    if op == "gemm":
        n, d, m = shape
        A = rng.standard_normal((n, d)).astype(dtype)
        B = rng.standard_normal((m, d)).astype(dtype)
        C = np.empty((n, m), dtype=dtype)
        return lambda: np.matmul(A, B.T, out=C)
    if op in ("trmm", "trsm"):
        n, m = shape
        U = np.triu(rng.standard_normal((m, m))) + m * np.eye(m)  # well conditioned
        U = np.asfortranarray(U, dtype=dtype)
        B0 = rng.standard_normal((n, m)).astype(dtype)
        B = B0.copy()
        fn = getattr(blas, prefix + op)

        # B is C-ordered n × m, i.e. Bᵀ in Fortran order: Bᵀ ← Uᵀ Bᵀ is B ← B U
        # (trsm: Bᵀ ← U⁻ᵀ Bᵀ), in place, the layout lorak's kernel blocks use.
        def run():
            B[...] = B0  # the same operand every time (trsm would shrink it)
            return fn(1.0, U, B.T, side=0, lower=0, trans_a=1, overwrite_b=1)

        run.operands = (B0, U)  # for the tests
        return run
    if op == "syevd":
        (m,) = shape
        S = rng.standard_normal((m, m))
        S = np.asfortranarray(S + S.T, dtype=dtype)
        fn = getattr(lapack, prefix + "syevd")
        return lambda: fn(S, compute_v=1, lower=1)
    raise ValueError(f"unknown floor operation {op!r}; valid names are {', '.join(FLOOR_OPS)}")


def blas_floor(
    ops,
    *,
    dtypes=(np.float64, np.float32),
    repeats: int = 3,
    seed: int = 0,
) -> dict:
    """Time the floor operations ``ops`` in this process.

    Parameters
    ----------
    ops : iterable of ``(name, shape)``
        Names from :data:`FLOOR_OPS` with their sizes (see the module table).
    dtypes : float dtypes to time each operation in.
    repeats : runs per operation (after one untimed warm-up run).
    seed : seed of the random operands.

    Returns
    -------
    dict
        ``{dtype name: {"<name> <shape>": {"op", "shape", "flops", "seconds" (best
        wall), "median_seconds", "cpu_seconds" (best process CPU), "gflops" (flops /
        best wall / 1e9)}}}``. trmm/trsm times exclude the copy that restores their
        operand before each run.
    """
    if isinstance(repeats, bool) or not isinstance(repeats, (int, np.integer)) or repeats < 1:
        raise ValueError(f"repeats must be a positive integer; got {repeats!r}")
    ops = [(str(op), tuple(int(s) for s in shape)) for op, shape in ops]
    for op, shape in ops:
        floor_flops(op, shape)  # validates names and sizes before any work
    out: dict = {}
    for dt in dtypes:
        dtype = np.dtype(dt)
        if dtype not in (np.float32, np.float64):
            raise ValueError(f"dtypes must be float32 or float64; got {dtype}")
        rng = np.random.default_rng(seed)
        res: dict = {}
        for op, shape in ops:
            run = _runner(op, shape, dtype, rng)
            copy = _time_copy(shape, dtype, repeats) if op in ("trmm", "trsm") else (0.0, 0.0)
            run()  # warm-up: page faults, BLAS buffers, thread start
            wall, cpu = [], []
            for _ in range(int(repeats)):
                c0, t0 = time.process_time(), time.perf_counter()
                run()
                wall.append(max(time.perf_counter() - t0 - copy[0], 1e-9))
                cpu.append(max(time.process_time() - c0 - copy[1], 1e-9))
            flops = floor_flops(op, shape)
            best = float(min(wall))
            res[f"{op} {'x'.join(str(s) for s in shape)}"] = {
                "op": op,
                "shape": list(shape),
                "flops": flops,
                "seconds": best,
                "median_seconds": float(np.median(wall)),
                "cpu_seconds": float(min(cpu)),
                "gflops": flops / best / 1e9,
            }
        out[dtype.name] = res
    return out


def _time_copy(shape, dtype, repeats):
    """Best (wall, CPU) seconds of the operand refresh that trmm/trsm runs include."""
    B0 = np.ones(shape, dtype=dtype)
    B = np.empty_like(B0)
    B[...] = B0
    wall, cpu = [], []
    for _ in range(int(repeats)):
        c0, t0 = time.process_time(), time.perf_counter()
        B[...] = B0
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return float(min(wall)), float(min(cpu))


def floor_seconds(floor: dict, dtype, *keys, cpu: bool = False) -> float:
    """Sum of the floor times of ``keys`` (``"gemm 70000x784x1000"`` …) in ``dtype``."""
    entry = floor[np.dtype(dtype).name]
    field = "cpu_seconds" if cpu else "seconds"
    return float(sum(entry[k][field] for k in keys))

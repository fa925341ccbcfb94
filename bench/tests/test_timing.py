"""lorak_bench's timing and recording helpers for benchmark scripts (bench/_timing.py)."""

from __future__ import annotations

import json
import math
import time
import types

import numpy as np
import pytest

from lorak_bench import Record, Stopwatch, Timing, _cost, load_average, time_call, write_json


class FakeClock:
    """The two clocks a :class:`Stopwatch` reads (``time.perf_counter`` and
    ``time.process_time``), moving only when a test moves them: the tests check what
    the code does with the readings, not what a (possibly loaded) machine's clock says.
    Steps are powers of two, so that every difference is exact."""

    def __init__(self):
        self.wall, self.cpu = 1024.0, 64.0

    def perf_counter(self):
        return self.wall

    def process_time(self):
        return self.cpu

    def advance(self, wall, cpu=0.0):
        self.wall += wall
        self.cpu += cpu


@pytest.fixture
def clock(monkeypatch):
    c = FakeClock()
    fake = types.SimpleNamespace(perf_counter=c.perf_counter, process_time=c.process_time)
    monkeypatch.setattr(_cost, "time", fake)  # the Stopwatch's clocks only
    return c


def test_stopwatch_measures_a_block_and_reads_elapsed_inside_it(clock):
    with Stopwatch() as sw:
        clock.advance(0.25, 0.125)
        inside = sw.elapsed
        clock.advance(0.5, 0.25)
    assert inside == 0.25
    assert sw.wall == 0.75 and sw.cpu == 0.375
    assert sw.cost.wall == sw.wall and sw.cost.cpu == sw.cpu


def test_stopwatch_on_the_real_clocks():
    """The one reading of the real clocks: a sleep never returns early."""
    with Stopwatch() as sw:
        time.sleep(0.01)
        inside = sw.elapsed
    assert inside >= 0.009
    assert sw.wall >= inside
    assert sw.cpu >= 0.0


def test_time_call_returns_the_result_and_the_median_of_the_repeats(clock):
    calls = []
    walls = iter([0.5, 0.125, 0.25])  # the median is the third repeat's
    cpus = iter([0.25, 0.5, 0.125])  # and here the first's

    def fn(a, *, b):
        calls.append(a + b)
        clock.advance(next(walls), next(cpus))
        return (a + b, len(calls))

    out, t = time_call(fn, 1, b=2, repeats=3)
    assert out == (3, 3) and calls == [3, 3, 3]  # the last call's result
    assert isinstance(t, Timing) and t.repeats == 3
    assert t.walls == (0.5, 0.125, 0.25) and t.cpus == (0.25, 0.5, 0.125)  # in order
    assert t.wall == 0.25 and t.cpu == 0.25
    d = t.as_dict()
    assert d["seconds"] == 0.25 and d["seconds_each"] == [0.5, 0.125, 0.25]
    assert d["cpu_seconds"] == 0.25 and d["cpu_seconds_each"] == [0.25, 0.5, 0.125]
    assert d["repeats"] == 3
    assert d["load_before"] == t.load_before and d["load_after"] == t.load_after


def test_time_call_with_an_even_count_takes_the_mean_of_the_middle_two(clock):
    walls = iter([0.5, 0.125, 0.25, 1.0])
    _, t = time_call(lambda: clock.advance(next(walls)), repeats=4)
    assert t.walls == (0.5, 0.125, 0.25, 1.0)
    assert t.wall == 0.375  # (0.25 + 0.5) / 2
    assert t.cpu == 0.0
    _, one = time_call(lambda: clock.advance(0.5, 0.25))
    assert one.walls == (0.5,) and one.wall == 0.5 and one.cpu == 0.25


def test_time_call_runs_setup_before_each_repeat_outside_the_timing(clock):
    order = []
    _, t = time_call(lambda: order.append("call"), repeats=2, setup=lambda: order.append("set"))
    assert order == ["set", "call", "set", "call"]
    # a slow setup is not timed
    _, t = time_call(
        lambda: clock.advance(0.125, 0.0625), repeats=2, setup=lambda: clock.advance(8.0, 8.0)
    )
    assert t.walls == (0.125, 0.125) and t.cpus == (0.0625, 0.0625)


def test_sync_waits_for_earlier_work_untimed_and_for_the_blocks_own_work_timed(clock):
    """The hook for asynchronous work (a GPU's synchronize): called before the clocks
    start and before they stop, so that only the block's own pending work counts."""
    order = []
    with Stopwatch(sync=lambda: order.append("sync")):
        order.append("work")
    assert order == ["sync", "work", "sync"]
    waits = iter([0.5, 0.0])  # work queued before the block: waited for, not timed
    with Stopwatch(sync=lambda: clock.advance(next(waits))) as sw:
        pass
    assert sw.wall == 0.0
    waits = iter([0.0, 0.25])  # the block's own pending work: timed
    with Stopwatch(sync=lambda: clock.advance(next(waits))) as sw:
        clock.advance(0.125)
    assert sw.wall == 0.375


def test_time_call_syncs_around_each_repeat_after_the_setup():
    order = []
    out, t = time_call(
        lambda: order.append("call") or 7,
        repeats=2,
        setup=lambda: order.append("set"),
        sync=lambda: order.append("sync"),
    )
    assert out == 7 and t.repeats == 2
    assert order == ["set", "sync", "call", "sync"] * 2


def test_a_sync_that_is_not_callable_is_refused():
    with pytest.raises(TypeError, match="sync"):
        Stopwatch(sync=1)
    with pytest.raises(TypeError, match="sync"):
        time_call(lambda: None, sync="cuda")


@pytest.mark.parametrize("bad", [0, -1, 1.5, "3", True, None])
def test_time_call_refuses_a_bad_repeats(bad):
    with pytest.raises(ValueError, match="repeats"):
        time_call(lambda: None, repeats=bad)


def test_load_average_is_three_numbers_where_the_system_has_one():
    la = load_average()
    if la is not None:
        assert len(la) == 3 and all(v >= 0 for v in la)


def test_write_json_stores_numpy_and_timings_as_plain_json(tmp_path):
    _, t = time_call(lambda: None)
    doc = {
        "int": np.int64(3),
        "float": np.float32(0.5),
        "nan": np.float32("nan"),
        "array": np.arange(3),
        "path": tmp_path,
        "set": {2, 1},
        "timing": t,
    }
    path = write_json(tmp_path / "sub" / "r.json", doc)
    back = json.loads(path.read_text())
    assert back["int"] == 3 and back["float"] == 0.5 and math.isnan(back["nan"])
    assert back["array"] == [0, 1, 2] and back["path"] == str(tmp_path)
    assert back["set"] == [1, 2] and back["timing"]["seconds"] == t.wall
    assert [p.name for p in path.parent.iterdir()] == ["r.json"]  # no temporary left
    with pytest.raises(TypeError, match="cannot store"):
        write_json(tmp_path / "bad.json", {"f": object()})
    assert not (tmp_path / "bad.json").exists()


def test_record_keeps_the_environment_and_writes_wall_seconds_and_end_load(tmp_path):
    rec = Record(settings={"n": 10})
    env = rec["environment"]
    assert {"python", "numpy", "lorak", "cpu", "load_average", "started"} <= set(env)
    rec["result"] = np.float64(1.5)
    time.sleep(0.01)
    assert rec.elapsed >= 0.009
    path = rec.write(tmp_path / "run.json")
    first = json.loads(path.read_text())
    assert first["settings"] == {"n": 10} and first["result"] == 1.5
    assert first["wall_seconds"] >= 0.009
    assert "load_average_end" in first["environment"]
    rec["more"] = 2  # a later write holds everything so far
    second = json.loads(rec.write(path).read_text())
    assert second["more"] == 2 and second["wall_seconds"] >= first["wall_seconds"]
    assert math.isfinite(second["wall_seconds"])

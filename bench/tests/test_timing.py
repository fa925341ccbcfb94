"""lorak_bench's timing and recording helpers for benchmark scripts (bench/_timing.py)."""

from __future__ import annotations

import json
import math
import time

import numpy as np
import pytest

from lorak_bench import Record, Stopwatch, Timing, load_average, time_call, write_json


def test_stopwatch_measures_a_block_and_reads_elapsed_inside_it():
    with Stopwatch() as sw:
        time.sleep(0.01)
        inside = sw.elapsed
    assert inside >= 0.009
    assert sw.wall >= inside
    assert sw.cpu >= 0.0
    assert sw.cost.wall == sw.wall


def test_time_call_returns_the_result_and_the_median_of_the_repeats():
    calls = []

    def fn(a, *, b):
        calls.append(a + b)
        time.sleep(0.002 * len(calls))  # the repeats last 2, 4, 6 ms
        return a + b

    out, t = time_call(fn, 1, b=2, repeats=3)
    assert out == 3 and calls == [3, 3, 3]
    assert isinstance(t, Timing) and t.repeats == 3
    assert t.wall == sorted(t.walls)[1]  # the median of three
    assert t.walls[2] > t.walls[0]
    assert t.cpu == sorted(t.cpus)[1]
    d = t.as_dict()
    assert d["seconds"] == t.wall and d["seconds_each"] == list(t.walls)
    assert d["load_before"] == t.load_before and d["load_after"] == t.load_after


def test_time_call_runs_setup_before_each_repeat_outside_the_timing():
    order = []
    _, t = time_call(lambda: order.append("call"), repeats=2, setup=lambda: order.append("set"))
    assert order == ["set", "call", "set", "call"]
    # a slow setup is not timed
    _, t = time_call(lambda: None, repeats=2, setup=lambda: time.sleep(0.02))
    assert max(t.walls) < 0.015


def test_sync_waits_for_earlier_work_untimed_and_for_the_blocks_own_work_timed():
    """The hook for asynchronous work (a GPU's synchronize): called before the clocks
    start and before they stop, so that only the block's own pending work counts."""
    order = []
    with Stopwatch(sync=lambda: order.append("sync")):
        order.append("work")
    assert order == ["sync", "work", "sync"]
    waits = iter([0.2, 0.0])  # work queued before the block: waited for, not timed
    with Stopwatch(sync=lambda: time.sleep(next(waits))) as sw:
        pass
    assert sw.wall < 0.1
    waits = iter([0.0, 0.02])  # the block's own pending work: timed
    with Stopwatch(sync=lambda: time.sleep(next(waits))) as sw:
        pass
    assert sw.wall >= 0.019


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

"""The BLAS floor and the load guard of the benchmarks (no timing assertions)."""

import math
import warnings

import numpy as np
import pytest

from _bench_testing import load_benchmark_script
from lorak_bench import _floor
from lorak_bench._floor import (
    LoadGuard,
    MachineLoadedError,
    MachineLoadedWarning,
    blas_floor,
    floor_flops,
    floor_seconds,
    machine_load,
)


def test_flop_counts():
    assert floor_flops("gemm", (10, 7, 3)) == 2 * 10 * 7 * 3
    assert floor_flops("trmm", (10, 4)) == 10 * 4 * 4
    assert floor_flops("trsm", (10, 4)) == 10 * 4 * 4
    assert floor_flops("syevd", (6,)) == pytest.approx(10 / 3 * 6**3)
    with pytest.raises(ValueError, match="unknown floor operation"):
        floor_flops("getrf", (3, 3))
    with pytest.raises(ValueError, match="gemm takes 3 positive sizes"):
        floor_flops("gemm", (3, 3))
    with pytest.raises(ValueError, match="positive"):
        floor_flops("trmm", (0, 3))


def test_floor_positive_finite_both_dtypes():
    ops = [("gemm", (50, 20, 30)), ("trmm", (40, 12)), ("trsm", (40, 12)), ("syevd", (16,))]
    res = blas_floor(ops, repeats=2)
    assert set(res) == {"float64", "float32"}
    for entries in res.values():
        assert list(entries) == ["gemm 50x20x30", "trmm 40x12", "trsm 40x12", "syevd 16"]
        for (op, shape), e in zip(ops, entries.values(), strict=True):
            assert e["op"] == op and tuple(e["shape"]) == shape
            assert e["flops"] == floor_flops(op, shape)
            for key in ("seconds", "median_seconds", "cpu_seconds", "gflops"):
                assert math.isfinite(e[key]) and e[key] > 0, (op, key)
            assert e["gflops"] == pytest.approx(e["flops"] / e["seconds"] / 1e9)
            assert e["seconds"] <= e["median_seconds"]
    total = floor_seconds(res, np.float32, "gemm 50x20x30", "trmm 40x12")
    f32 = res["float32"]
    assert total == pytest.approx(f32["gemm 50x20x30"]["seconds"] + f32["trmm 40x12"]["seconds"])


def test_floor_operations_compute_what_they_name():
    """The timed calls do the named math (checked once, untimed)."""
    rng = np.random.default_rng(0)
    for dtype in (np.float64, np.float32):
        tol = 1e-10 if dtype == np.float64 else 1e-3
        run = _floor._runner("trmm", (6, 4), np.dtype(dtype), rng)
        B0, U = run.operands
        np.testing.assert_allclose(run().T, B0 @ U, rtol=tol, atol=tol)
        run = _floor._runner("trsm", (6, 4), np.dtype(dtype), rng)
        B0, U = run.operands
        np.testing.assert_allclose(run().T @ U, B0, rtol=tol, atol=tol)
        C = _floor._runner("gemm", (5, 3, 4), np.dtype(dtype), rng)()
        assert C.shape == (5, 4) and C.dtype == dtype


def test_floor_rejects_bad_arguments():
    with pytest.raises(ValueError, match="repeats"):
        blas_floor([("gemm", (2, 2, 2))], repeats=0)
    with pytest.raises(ValueError, match="float32 or float64"):
        blas_floor([("gemm", (2, 2, 2))], dtypes=(np.int64,))
    with pytest.raises(ValueError, match="unknown floor operation"):
        blas_floor([("potrf", (2,))])


def test_machine_load_reads_the_cores(monkeypatch):
    monkeypatch.setattr(_floor.os, "getloadavg", lambda: (0.5, 0.4, 0.3))
    state = machine_load()
    assert state["load1"] == 0.5 and state["cores"] >= 1 and state["loaded"] is False


def test_guard_flags_a_load_above_the_cores(monkeypatch):
    monkeypatch.setattr(_floor, "_cores", lambda: 2)
    monkeypatch.setattr(_floor.os, "getloadavg", lambda: (1.5, 1.0, 1.0))
    with LoadGuard() as guard:
        pass
    assert guard.record()["loaded"] is False
    monkeypatch.setattr(_floor.os, "getloadavg", lambda: (3.5, 1.0, 1.0))
    with pytest.warns(MachineLoadedWarning, match="load average 3.50 above the 2 cores"):
        with LoadGuard(label="bench_x") as guard:
            pass
    rec = guard.record()
    assert rec["loaded"] is True and rec["before"]["load1"] == 3.5 and rec["after"]["loaded"]


def test_guard_discounts_its_own_threads_at_the_end(monkeypatch):
    """Two busy threads for a minute raise the 1-minute load by up to 2(1 − 1/e) ≈ 1.26:
    a final 3.0 on 2 cores is 1.74 from the others, not a loaded machine."""
    monkeypatch.setattr(_floor, "_cores", lambda: 2)
    clock = iter([100.0, 160.0])
    monkeypatch.setattr(_floor.time, "monotonic", lambda: next(clock))
    loads = iter([(0.3, 0.3, 0.3), (3.0, 1.0, 1.0)])
    monkeypatch.setattr(_floor.os, "getloadavg", lambda: next(loads))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        guard = LoadGuard(threads=2).start().stop()
    after = guard.record()["after"]
    assert after["own_load"] == pytest.approx(2 * (1 - np.exp(-1.0)))
    assert after["load1_others"] == pytest.approx(3.0 - 2 * (1 - np.exp(-1.0)))
    assert guard.loaded is False
    # the same end load with one thread of its own: 2.37 from the others, flagged
    clock = iter([100.0, 160.0])
    loads = iter([(0.3, 0.3, 0.3), (3.0, 1.0, 1.0)])
    with pytest.warns(MachineLoadedWarning, match="without this benchmark's threads"):
        guard = LoadGuard(threads=1).start().stop()
    assert guard.loaded is True


def test_strict_guard_refuses(monkeypatch):
    monkeypatch.setattr(_floor, "_cores", lambda: 2)
    monkeypatch.setenv("LORAK_STRICT_LOAD", "1")
    assert LoadGuard().strict and not LoadGuard(strict=False).strict
    monkeypatch.delenv("LORAK_STRICT_LOAD")
    assert not LoadGuard().strict
    monkeypatch.setattr(_floor.os, "getloadavg", lambda: (2.5, 1.0, 1.0))
    with pytest.raises(MachineLoadedError, match="refused"):
        with LoadGuard(strict=True):
            pass  # pragma: no cover - refused at the start
    # loaded only at the end: refused too
    loads = iter([(0.2, 0.2, 0.2), (9.0, 1.0, 1.0)])
    monkeypatch.setattr(_floor.os, "getloadavg", lambda: next(loads))
    guard = LoadGuard(strict=True).start()
    with pytest.raises(MachineLoadedError, match="at the end"):
        guard.stop()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        monkeypatch.setattr(_floor.os, "getloadavg", lambda: (0.1, 0.1, 0.1))
        assert LoadGuard(strict=True).start().stop().loaded is False


def test_bench_nystrom_reports_floor_ratios_and_load(tmp_path, monkeypatch):
    import json

    mod = load_benchmark_script("bench_nystrom")
    monkeypatch.setattr(_floor.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    out = tmp_path / "b.json"
    args = ["--n", "400", "--d", "8", "--m", "20", "--repeats", "1", "--threads", "1"]
    args += ["--icd-n", "300", "--icd-rank", "30"]
    mod.main([*args, "--skip-kmeans-plusplus", "--strict-load", "--out", str(out)])
    res = json.loads(out.read_text())
    assert res["load"]["loaded"] is False
    for name in ("float64", "float32"):
        ny = res[f"nystroem_{name}"]
        assert ny["floor_seconds"] > 0 and ny["lorak_floor_ratio"] > 0
        assert ny["transform_floor_ratio"] > 0 and ny["upper_triangular"] is True
        km = res[f"kmeans_{name}"]
        assert km["lorak_floor_ratio"] > 0 and km["quantization_ratio_same_seeds"] > 0
        assert "sklearn_seconds" not in km  # k-means++ reference skipped
    assert {"nystroem_floor_float32", "kmeans_float32_pays"} <= set(res["checks"])
    assert res["icd_float64"]["same_pivots"] and res["icd_float64"]["time_ratio"] > 0

"""The csi-rank experiment's helpers (Bach & Jordan 2005, Fig. 2): stopping and minimal
ranks, the rank grid, the comparison table, and one split of the sweep."""

import numpy as np

from lorak.datasets import make_ringnorm
from lorak_bench import DatasetSpec, LoadedData, Task
from lorak_bench.experiments import csi_rank


def test_experiment_helpers():
    assert csi_rank.stop_rank([1e-2, 1e-3, 5e-5, 1e-2]) == 3
    assert csi_rank.stop_rank([1e-2, 1e-3]) == 2
    assert csi_rank.minimal_rank([1, 2, 3, 5], [0.3, 0.2, 0.1, 0.05], 0.1) == 3
    assert csi_rank.minimal_rank([1, 2], [0.3, 0.2], 0.1) is None
    g = csi_rank.rank_grid(1000)
    assert g[:50] == tuple(range(1, 51)) and g[-1] == 1000 and len(set(g)) == len(g)
    table = [
        {"icd": 10, "csi": 3},
        {"icd": None, "csi": 30},
        {"icd": 5, "csi": 5},
        {"icd": 4, "csi": None},
        {"icd": None, "csi": None},
    ]
    assert csi_rank.compare_ranks(table) == {"smaller": 2, "equal": 1, "larger": 1, "neither": 1}


def test_experiment_curve_on_a_small_set():
    """One split of the sweep on a generated set: CSI reaches a lower error early."""
    X, y = make_ringnorm(240, random_state=0)
    data = LoadedData(spec=DatasetSpec("ringnorm"), X=X, y=y)
    ctx = {"classes": np.unique(y), "gamma": 0.05, "C": 1.0, "curves": {}}
    task = Task(data=data, params={"rank": 3}, rep=0, seed=1, context=ctx, quick=True)
    full = csi_rank._curve(task, "full")
    icd = csi_rank._curve(task, "icd")
    c = csi_rank._curve(task, "csi")
    assert np.all(full["error"] == full["error"][0])
    assert c["error_nostop"][:10].min() <= icd["error_nostop"][:10].min()
    assert np.all(c["rank_used"] <= c["rank_used_nostop"])

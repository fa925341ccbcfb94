"""What ``--quick`` runs in csi-rank, npkl-uci, npkl-adult, npkl-active, nystrom-error,
kpca and lssvm-usps: the subset of the paper's sets (with the shared data), the sets
without it, and the paper's numbers beside the quick sets."""

import os

import numpy as np
import pytest

from _bench_testing import needs_data
from lorak.constraints import from_labels
from lorak_bench import get_experiment
from lorak_bench._reference import load_reference
from lorak_bench._runner import _norm, _resolve_specs
from lorak_bench._spec import LoadedData, Task
from lorak_bench.experiments import csi_rank, kpca, lssvm_usps, npkl_uci, nystrom_error

NPKL_UCI = ["iris", "wine", "glass", "sonar", "chessboard", "double_spiral"]

# (experiment, part) -> the sets a quick run uses when the shared data are present
QUICK_WITH_DATA = {
    ("csi-rank", "main"): ["ringnorm", "twonorm", "waveform", "mushrooms"],
    ("npkl-uci", "table2"): NPKL_UCI,
    ("npkl-uci", "sdp"): ["iris"],
    ("npkl-uci", "c-sweep"): NPKL_UCI,
    ("npkl-adult", "table4"): ["a1a"],
    ("npkl-adult", "table4-shl"): ["a1a"],
    ("npkl-adult", "paper-count"): ["a1a"],
    ("npkl-active", "fig2"): ["a1a"],
    ("nystrom-error", "fig1"): ["german", "splice", "segment"],
    ("nystrom-error", "fig2"): ["german"],
    ("kpca", "table3"): ["german", "splice", "adult1a", "segment"],
    ("lssvm-usps", "table4"): ["1-7", "3-8", "5-6"],
}
# the full run: every paper set, as before the quick subsets
FULL_COUNTS = {
    ("csi-rank", "main"): 13,
    ("npkl-uci", "sdp"): 6,
    ("npkl-adult", "table4"): 5,
    ("npkl-adult", "table4-shl"): 5,
    ("nystrom-error", "fig1"): 8,
    ("kpca", "table3"): 8,
    ("lssvm-usps", "table4"): 11,
}
PARAMS = list(QUICK_WITH_DATA)


def _part(key):
    name, part = key
    return get_experiment(name).part(part)


def test_every_part_of_these_experiments_is_listed():
    names = {e for e, _ in QUICK_WITH_DATA}
    listed = {(e, p.name) for e in names for p in get_experiment(e).parts}
    assert listed == set(QUICK_WITH_DATA)


@pytest.mark.parametrize("key", PARAMS, ids=lambda k: "/".join(k))
def test_quick_subset_names_paper_sets(key):
    """A misspelt name would silently drop a set (or fall back to stand-ins)."""
    part = _part(key)
    if part.quick_paper_datasets is None:
        return
    assert part.quick_paper_datasets, "an empty subset would run stand-ins with the data"
    known = set()
    for d in part.datasets:
        known |= {_norm(getattr(d, "display", d)), _norm(getattr(d, "name", d))}
    for n in part.quick_paper_datasets:
        assert _norm(n) in known, f"{key}: {n!r} is not one of the part's paper sets"


@pytest.mark.parametrize("key", list(FULL_COUNTS), ids=lambda k: "/".join(k))
def test_full_run_keeps_every_paper_set(key):
    specs, notes = _resolve_specs(_part(key), override=None, quick=False, data_home=None)
    assert len(specs) == FULL_COUNTS[key] and not notes


@pytest.mark.data
@needs_data
@pytest.mark.parametrize("key", PARAMS, ids=lambda k: "/".join(k))
def test_quick_with_data_runs_the_subset(key):
    part = _part(key)
    specs, notes = _resolve_specs(
        part, override=None, quick=True, data_home=os.environ["LORAK_DATA"]
    )
    assert [s.display for s in specs] == QUICK_WITH_DATA[key]
    assert not any(s.stand_in for s in specs)
    if len(specs) < len(part.datasets):
        assert any("the full run uses all" in n for n in notes)


def test_quick_without_data(tmp_path, monkeypatch):
    monkeypatch.delenv("LORAK_DATA", raising=False)

    def quick(key):
        specs, notes = _resolve_specs(_part(key), override=None, quick=True, data_home=tmp_path)
        return [(s.display, s.stand_in) for s in specs], notes

    # csi-rank: the paper's generated sets (paper numbers), mushrooms noted as missing
    specs, notes = quick(("csi-rank", "main"))
    assert specs == [("ringnorm", False), ("twonorm", False), ("waveform", False)]
    assert any("mushrooms" in n for n in notes)
    # npkl-uci: the sets that need no download, the SDP on iris
    specs, _ = quick(("npkl-uci", "table2"))
    assert specs == [(n, False) for n in ("iris", "wine", "chessboard", "double_spiral")]
    assert quick(("npkl-uci", "sdp"))[0] == [("iris", False)]
    # the others: stand-ins
    for key in [
        ("npkl-adult", "table4"),
        ("npkl-active", "fig2"),
        ("nystrom-error", "fig1"),
        ("kpca", "table3"),
        ("lssvm-usps", "table4"),
    ]:
        specs, _ = quick(key)
        assert specs and all(stand for _, stand in specs), key


def test_quick_sets_have_the_papers_numbers():
    ref = load_reference("csi")["figure2_min_rank"]["rows"]
    for label in csi_rank.QUICK_PAPER_SETS:
        icd, csi = ref[csi_rank.PAPER_ROWS[label]][3:5]
        # the quick rank cap reaches the paper's minimal ranks
        assert max(icd, csi) <= csi_rank.QUICK_RANK_CAP == max(csi_rank.QUICK_RANKS)
    for label in kpca.QUICK_SETS:
        assert kpca._kpca_reference(label, "kmeans", {"ratio": 0.05}, "misalignment")["mean"] > 0
    for pair in lssvm_usps.QUICK_PAIRS:
        for ratio in lssvm_usps.RATIOS:
            ref = lssvm_usps._lssvm_reference(pair, "kmeans", {"ratio": ratio}, "test_error")
            assert ref is not None and ref["mean"] >= 0
    for label in nystrom_error.FIG1_QUICK_SETS:
        assert nystrom_error._error_reference(label, "icd", {"part": "fig1"}, "frobenius")
    # both kinds of Fig. 1 spectra are in the quick run
    assert set(nystrom_error.FIG1_QUICK_SETS) & set(nystrom_error.FAST_DECAY)
    assert set(nystrom_error.FIG1_QUICK_SETS) - set(nystrom_error.FAST_DECAY)
    assert npkl_uci._uci_reference("iris", "npkl_sdp_hinge", {"C": 0.3}, "accuracy")["mean"] > 0


@pytest.mark.parametrize("quick", [False, True])
def test_sdp_tolerance_is_loosened_only_in_quick_runs(monkeypatch, quick):
    seen = {}

    def fake_sdp(X, pairs, signs, **kw):
        seen.update(kw)
        return np.ones((X.shape[0], 1)), "optimal"

    monkeypatch.setattr(npkl_uci, "sdp_npkl", fake_sdp)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 2))
    y = np.repeat([0, 1], 10)
    data = LoadedData(spec=None, X=X, y=y)
    method = npkl_uci.sdp_method("npkl_sdp_linear", "linear")
    task = Task(data=data, params={"C": 0.3}, rep=0, seed=1, context={}, quick=quick)
    out = method.run(task)
    assert seen["eps"] == (npkl_uci.QUICK_SDP_EPS if quick else None)
    assert out.extra["status"] == "optimal" and out.extra["n_constraints"] > 0


def test_sdp_loose_tolerance_solves():
    pytest.importorskip("cvxpy")
    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal(-2, 1, (12, 2)), rng.normal(2, 1, (12, 2))])
    y = np.repeat([0, 1], 12)
    c = from_labels(y, ratio=0.7, random_state=0)
    pairs, signs = c.pairs()
    V, status = npkl_uci.sdp_npkl(
        X, pairs, signs, C=0.3, loss="hinge", n_neighbors=5, eps=npkl_uci.QUICK_SDP_EPS
    )
    assert status in ("optimal", "optimal_inaccurate")
    K = V @ V.T
    # the constrained pairs' signs are respected by the learned kernel (mostly)
    agree = np.mean(np.sign(K[pairs[:, 0], pairs[:, 1]]) == signs)
    assert agree > 0.9

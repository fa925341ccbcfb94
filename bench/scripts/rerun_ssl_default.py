"""``lorak bench ssl``'s default column alone, beside a stored run's other columns.

A change to the semi-supervised default changes one column of ``lorak bench ssl``; its
peers (LabelSpreading, graphlearning, SVC, ...) stay as they were. This script refits
only ``SemiSupervisedFactorClassifier()`` on the bench's own labeled rows — the same
loaders, parts, grids, repetitions and seeds (base seed 0), so each cell's rows are
those of the stored run — and sets its errors beside the stored run's columns: per
cell the stored default, the new one and the best peer, and the bench's win counts
(``ssl_win_counts``: tuning and held-out sets apart) for the stored default and the
new one. Error (%) on the unlabeled rows; no timings.

Usage: python bench/scripts/rerun_ssl_default.py STORED_RESULTS.json OUT.json
       [--parts book,other-even,...] [--sets german,...] [--from RERUN.json ...]

``--from``: no fits; the default's errors are read from earlier records of this script
(their ``default_errors``; several runs over different parts, e.g. two processes side
by side, become one record).

(``STORED_RESULTS.json``: a ``lorak-bench ssl`` results.json, e.g.
``bench/results/bench_ssl_draws_results.json``; needs ``LORAK_DATA``.)
"""

import argparse
import copy
import json
import os
import sys
import warnings

import numpy as np

from lorak_bench import RunResult, Task, derive_seed, load_dataset
from lorak_bench.experiments.ssl import METHODS, SSL, ssl_win_counts
from lorak_bench.timing import Record


def new_default_errors(parts, sets, data_home):
    """{(dataset, params as JSON): [error per repetition]} of the default column."""
    default = next(m for m in METHODS if m.name == "default")
    out = {}
    for part in SSL.parts:
        if parts and part.name not in parts:
            continue
        for spec in part.datasets:
            if sets and spec.display not in sets:
                continue
            data = load_dataset(spec, data_home)
            for point in part.grid:
                params = dict(point)
                if part.resolve_params is not None:
                    params = part.resolve_params(params, data)
                if default.applies is not None and not default.applies(data, params):
                    continue
                errs = []
                for rep in range(part.reps):
                    task = Task(data, params, rep, derive_seed(0, rep), {}, part.name)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        errs.append(default.run(task).error_pct)
                key = json.dumps({"part": part.name, **params}, sort_keys=True)
                out[(spec.display, key)] = errs
                print(f"{spec.display} {key} {np.mean(errs):.2f}", flush=True)
    return out


def as_result(rows):
    """A RunResult holding result rows (enough for the bench's win counts)."""
    datasets = {}
    for r in rows:
        r["_part"] = r["params"]["part"]
        found = datasets.setdefault(r["_part"], [])
        if not any(d["label"] == r["dataset"] for d in found):
            found.append({"label": r["dataset"], "loaded": True, "stand_in": False})
    return RunResult(experiment=SSL, config={}, environment={}, rows=rows, datasets=datasets)


def _cell(r):
    return (r["dataset"], json.dumps(r["params"], sort_keys=True))


def merged(stored, new):
    """(the stored rows of the cells the rerun covered, the same rows with each default
    row's mean and sd replaced by the new errors)."""
    before = [copy.deepcopy(r) for r in stored if _cell(r) in new]
    now = copy.deepcopy(before)
    for r in now:
        if r["method"] == "default":
            errs = new[_cell(r)]
            r["mean"], r["std"] = float(np.mean(errs)), float(np.std(errs))
    return before, now


def main(argv):
    ap = argparse.ArgumentParser(description="The ssl bench's default column alone.")
    ap.add_argument("stored")
    ap.add_argument("out")
    ap.add_argument("--parts", default="", help="comma-separated parts (default: all)")
    ap.add_argument("--sets", default="", help="comma-separated set labels (default: all)")
    ap.add_argument("--from", dest="earlier", nargs="*", default=[], help="earlier records")
    args = ap.parse_args(argv)
    stored = [r for r in json.load(open(args.stored))["results"] if r["metric"] == "error_pct"]
    rec = Record(stored=os.path.basename(args.stored))
    parts = [p for p in args.parts.split(",") if p]
    sets = [s for s in args.sets.split(",") if s]
    if args.earlier:
        new = {}
        for path in args.earlier:
            for key, errs in json.load(open(path))["default_errors"].items():
                dataset, _, params = key.partition(" ")
                new[(dataset, params)] = errs
    else:
        new = new_default_errors(parts, sets, os.environ.get("LORAK_DATA"))
    rec["default_errors"] = {f"{d} {k}": v for (d, k), v in new.items()}
    before, now = merged(stored, new)
    rec["cells"] = cell_table(before, now)
    counts = {"stored": ssl_win_counts(as_result(before)), "new": ssl_win_counts(as_result(now))}
    rec["win_counts"] = {
        k: [dict(v, counts={g: list(c) for g, c in v["counts"].items()}) for v in vs]
        for k, vs in counts.items()
    }
    print_counts(counts)
    print_cells(rec["cells"])
    rec.write(args.out)


def cell_table(before, now):
    """Per cell: the stored default, the new one and the best other column."""
    out = {}
    for old, r in zip(before, now, strict=True):
        key = f"{r['dataset']} {json.dumps(r['params'], sort_keys=True)}"
        cell = out.setdefault(key, {})
        if r["method"] == "default":
            cell["stored"], cell["new"] = old["mean"], r["mean"]
        elif r["mean"] is not None and r["mean"] < cell.get("best", (None, np.inf))[1]:
            cell["best"] = (r["method"], r["mean"])
    return out


def print_cells(cells):
    print("\nCells where the default moved (error %, mean over the repetitions):\n")
    print("| set | cell | stored default | new default | best other column |")
    print("|---|---|---|---|---|")
    for key, c in cells.items():
        if abs(c["new"] - c["stored"]) >= 0.005:
            dataset, _, params = key.partition(" ")
            best = c.get("best")
            ref = f"{best[1]:.2f} {best[0]}" if best else "—"
            print(f"| {dataset} | {params} | {c['stored']:.2f} | {c['new']:.2f} | {ref} |")


def print_counts(counts):
    print("| part | labels | criterion | stored: tuning | held-out | new: tuning | held-out |")
    print("|---|---|---|---|---|---|---|")
    for a, b in zip(counts["stored"], counts["new"], strict=True):
        fa, fb = a["counts"], b["counts"]
        pairs = (fa["tuning"], fa["held-out"], fb["tuning"], fb["held-out"])
        cells = " | ".join(f"{p}/{n}" if n else "—" for p, n in pairs)
        print(f"| {b['part']} | {b['labels']} | {b['criterion']} | {cells} |")


if __name__ == "__main__":
    main(sys.argv[1:])

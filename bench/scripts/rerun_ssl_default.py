"""``lorak bench ssl``'s default column alone (or its diagnostics), beside a stored run's
other columns.

A change to the semi-supervised default changes one column of ``lorak bench ssl``; its
peers (LabelSpreading, graphlearning, SVC, ...) stay as they were. This script refits
only the named columns (``--columns``; default: ``SemiSupervisedFactorClassifier()``,
the ``default`` column) on the bench's own labeled rows — the same loaders, parts,
grids, repetitions and seeds (base seed 0), so each cell's rows are those of the stored
run — and sets their errors beside the stored run's columns: per cell the stored
default, the new one and the best peer, the bench's win counts (``ssl_win_counts``:
tuning and held-out sets apart) for the stored default and the new one, and, where the
diagnostic columns ``default-true-prior`` and ``default-graph-off`` (and, where run,
``default-other-regime``) were refitted, the cells the default misses with their
measured reason (``ssl_miss_reasons``). Error (%)
on the unlabeled rows; no timings.

Usage: python bench/scripts/rerun_ssl_default.py STORED_RESULTS.json OUT.json
       [--parts book,other-even,...] [--sets german,...] [--columns default,...]
       [--from RERUN.json ...]

``--from``: no fits; the errors are read from earlier records of this script (their
``errors``, or ``default_errors`` in a record of its first version; several runs over
different parts or columns, e.g. processes side by side, become one record; a later
record's cells replace an earlier one's).

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
from lorak_bench.experiments.ssl import (
    DIAGNOSTIC_COLUMNS,
    METHODS,
    SSL,
    ssl_miss_reasons,
    ssl_miss_table,
    ssl_win_counts,
)
from lorak_bench.timing import Record


def new_errors(columns, parts, sets, data_home):
    """{column: {(dataset, params as JSON): [error per repetition]}} of the named
    columns (the bench's own, e.g. ``default`` and its diagnostics)."""
    chosen = [next(m for m in METHODS if m.name == name) for name in columns]
    out = {m.name: {} for m in chosen}
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
                key = json.dumps({"part": part.name, **params}, sort_keys=True)
                for method in chosen:
                    if method.applies is not None and not method.applies(data, params):
                        continue
                    errs = []
                    for rep in range(part.reps):
                        task = Task(data, params, rep, derive_seed(0, rep), {}, part.name)
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            errs.append(method.run(task).error_pct)
                    out[method.name][(spec.display, key)] = errs
                    print(f"{method.name} {spec.display} {key} {np.mean(errs):.2f}", flush=True)
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
    """(the stored rows of the cells the rerun covered, the same rows with each refitted
    column's mean and sd replaced by its new errors; a column the stored run lacks, such
    as a diagnostic, is added as a row of its own)."""
    covered = {cell for errors in new.values() for cell in errors}
    before = [copy.deepcopy(r) for r in stored if _cell(r) in covered]
    now = copy.deepcopy(before)
    templates = {_cell(r): r for r in before}
    for name, errors in new.items():
        have = {_cell(r) for r in now if r["method"] == name}
        for r in now:
            if r["method"] == name and _cell(r) in errors:
                r["mean"], r["std"] = _moments(errors[_cell(r)])
        for cell, errs in errors.items():
            if cell not in have and cell in templates:
                row = dict(copy.deepcopy(templates[cell]), method=name, paper=None)
                row["mean"], row["std"] = _moments(errs)
                row["seconds_mean"] = row["cpu_seconds_mean"] = None
                now.append(row)
    return before, now


def _moments(errs):
    return float(np.mean(errs)), float(np.std(errs))


def main(argv):
    ap = argparse.ArgumentParser(description="The ssl bench's default column alone.")
    ap.add_argument("stored")
    ap.add_argument("out")
    ap.add_argument("--parts", default="", help="comma-separated parts (default: all)")
    ap.add_argument("--sets", default="", help="comma-separated set labels (default: all)")
    ap.add_argument("--from", dest="earlier", nargs="*", default=[], help="earlier records")
    ap.add_argument(
        "--columns",
        default="default",
        help="comma-separated columns to refit (default: default; e.g. its diagnostics "
        "default-true-prior,default-graph-off,default-other-regime)",
    )
    args = ap.parse_args(argv)
    stored = [r for r in json.load(open(args.stored))["results"] if r["metric"] == "error_pct"]
    rec = Record(stored=os.path.basename(args.stored))
    parts = [p for p in args.parts.split(",") if p]
    sets = [s for s in args.sets.split(",") if s]
    if args.earlier:
        new = {}
        for path in args.earlier:
            for name, errors in _recorded(json.load(open(path))).items():
                for key, errs in errors.items():
                    dataset, _, params = key.partition(" ")
                    new.setdefault(name, {})[(dataset, params)] = errs
    else:
        columns = [c for c in args.columns.split(",") if c]
        new = new_errors(columns, parts, sets, os.environ.get("LORAK_DATA"))
    rec["errors"] = {n: {f"{d} {k}": v for (d, k), v in e.items()} for n, e in new.items()}
    before, now = merged(stored, new)
    rec["cells"] = cell_table(before, now)
    counts = {"stored": ssl_win_counts(as_result(before)), "new": ssl_win_counts(as_result(now))}
    rec["win_counts"] = {
        k: [dict(v, counts={g: list(c) for g, c in v["counts"].items()}) for v in vs]
        for k, vs in counts.items()
    }
    rec["miss_reasons"] = ssl_miss_reasons(as_result(now))
    print_counts(counts)
    print_cells(rec["cells"])
    table = ssl_miss_table(as_result(now))
    if table:
        print("\nMisses of the default and their measured reason (error %):\n")
        print(table)
    rec.write(args.out)


def _recorded(record):
    """{column: {"set params": errors}} of an earlier record (one of the first version
    of this script holds the default's alone, as ``default_errors``)."""
    if "errors" in record:
        return record["errors"]
    return {"default": record["default_errors"]}


def cell_table(before, now):
    """Per cell: the stored default, the new one and the best other column."""
    out = {}
    for old, r in zip(before, now[: len(before)], strict=True):
        key = f"{r['dataset']} {json.dumps(r['params'], sort_keys=True)}"
        cell = out.setdefault(key, {})
        if r["method"] == "default":
            cell["stored"], cell["new"] = old["mean"], r["mean"]
        elif r["method"] in DIAGNOSTIC_COLUMNS:
            cell[r["method"]] = r["mean"]
        elif r["mean"] is not None and r["mean"] < cell.get("best", (None, np.inf))[1]:
            cell["best"] = (r["method"], r["mean"])
    for r in now[len(before) :]:
        cell = out[f"{r['dataset']} {json.dumps(r['params'], sort_keys=True)}"]
        cell[r["method"]] = r["mean"]
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

"""What each (part, data set) of a ``lorak-bench all`` run cost, read from its cell cache.

``lorak-bench all`` saves every finished (part, data set) of an experiment under
``OUT/NAME/cells/`` (the cache behind ``--resume``), with the data set's wall seconds
(loading, preparing, every cell) and each cell's timed wall and CPU seconds. This script
adds them up per (part, data set) and per experiment, also for an experiment that has
not finished (a killed run, or one still going), so the cost of a long protocol can be
reported piece by piece. Work shared between cells (``task.shared``) is counted once.

Usage: python bench/scripts/bench_all_cells.py OUT [OUT ...] [--json FILE]
Several OUT folders (e.g. a run and a separate run of some of an experiment's data sets
into another folder) are merged; a (part, data set) found twice is counted once.
"""

from __future__ import annotations

import argparse
import json
import pickle
from pathlib import Path


def unit_cost(entry: dict) -> dict:
    """Seconds of one saved (part, data set): its wall time and the timed cells'
    wall and CPU seconds, shared work counted once."""
    own_wall = own_cpu = 0.0
    shared: dict = {}
    for r in entry["records"]:
        own_wall += (r.get("seconds") or 0.0) - (r.get("shared_seconds") or 0.0)
        own_cpu += (r.get("cpu_seconds") or 0.0) - (r.get("shared_cpu_seconds") or 0.0)
        for k, v in (r.get("shared_items") or {}).items():
            shared[(r["method"], k)] = v
    sh_wall = sum(float(v[0]) for v in shared.values())
    sh_cpu = sum(float(v[1]) for v in shared.values())
    d = entry["described"]
    return {
        "part": entry["records"][0]["part"] if entry["records"] else None,
        "dataset": d.get("label"),
        "n_samples": d.get("n_samples"),
        "cells": len(entry["records"]),
        "wall_seconds": d.get("wall_seconds"),
        "timed_wall_seconds": round(own_wall + sh_wall, 3),
        "timed_cpu_seconds": round(own_cpu + sh_cpu, 3),
    }


def collect(folders) -> dict:
    out: dict = {}
    for folder in folders:
        for cells in sorted(Path(folder).glob("*/cells")):
            exp = cells.parent.name
            for f in sorted(cells.glob("*.pkl")):
                with open(f, "rb") as fh:
                    entry = pickle.load(fh)
                unit = unit_cost(entry)
                units = out.setdefault(exp, {})
                units.setdefault(f"{unit['part']}/{unit['dataset']}", unit)
    return {
        exp: {
            "units": list(units.values()),
            "wall_seconds": round(sum(u["wall_seconds"] or 0.0 for u in units.values()), 3),
        }
        for exp, units in sorted(out.items())
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="+", help="bench all output folder(s)")
    ap.add_argument("--json", help="write the summary here")
    args = ap.parse_args(argv)
    res = collect(args.out)
    for exp, e in res.items():
        print(f"{exp}: {e['wall_seconds']:.1f} s over {len(e['units'])} (part, data set)")
        for u in e["units"]:
            print(
                f"  {u['part']}/{u['dataset']}: {u['wall_seconds']:.1f} s wall, "
                f"{u['timed_cpu_seconds']:.1f} s CPU in {u['cells']} timed cells"
            )
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1))
    return res


if __name__ == "__main__":
    main()

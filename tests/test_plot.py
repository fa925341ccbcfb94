"""Tests of :mod:`lorak.plot` (Agg backend; each function draws and returns its Axes)."""

import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("matplotlib")

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from sklearn.exceptions import NotFittedError

from lorak import CSI, GeneralizedNystroem, IncompleteCholesky, Nystroem
from lorak import plot as lplot
from lorak.kernels import KernelBank


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def blobs():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 40)
    X = rng.normal(size=(120, 3)) + 4.0 * y[:, None]
    return X, y


def test_import_does_not_import_matplotlib():
    code = "import sys, lorak, lorak.plot; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_missing_matplotlib_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r"pip install lorak\[plot\]"):
        lplot._pyplot()


def test_error_vs_rank_mean_and_band():
    E = np.array([[1.0, 0.5, 0.2], [0.8, 0.4, np.nan], [1.2, 0.6, 0.3]])
    ax = lplot.error_vs_rank([10, 20, 40], E, label="uniform", logy=True)
    assert isinstance(ax, Axes)
    line = ax.lines[0]
    np.testing.assert_allclose(line.get_ydata(), [1.0, 0.5, 0.25])
    assert len(ax.collections) == 1  # the ± std band
    assert ax.get_yscale() == "log"
    # overlay on the same axes; unsorted ranks are sorted
    ax2 = lplot.error_vs_rank([40, 10, 20], [0.1, 0.9, 0.3], ax=ax, label="kmeans")
    assert ax2 is ax and len(ax.lines) == 2
    np.testing.assert_allclose(ax.lines[1].get_xdata(), [10, 20, 40])
    np.testing.assert_allclose(ax.lines[1].get_ydata(), [0.9, 0.3, 0.1])


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"ranks": [1, 2], "errors": [1.0]}, ValueError, "ranks"),
        ({"ranks": [1, np.inf], "errors": [1.0, 2.0]}, ValueError, "ranks"),
        ({"ranks": [], "errors": []}, ValueError, "ranks"),
        ({"ranks": [1, 2], "errors": [[[1.0, 2.0]]]}, ValueError, "errors"),
        ({"ranks": [1, 2], "errors": ["a", "b"]}, TypeError, "errors"),
        ({"ranks": [1, 2], "errors": [[1.0, 2.0]], "std": [0, 0]}, ValueError, "std"),
        ({"ranks": [1, 2], "errors": [1.0, 2.0], "std": [-1, 0]}, ValueError, "std"),
        ({"ranks": [1, 2], "errors": [np.nan, np.nan]}, ValueError, "errors"),
        ({"ranks": [1, 2], "errors": [1.0, 2.0], "ax": "axes"}, TypeError, "ax"),
    ],
)
def test_error_vs_rank_bad_input(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        lplot.error_vs_rank(**kwargs)


def test_alignment_vs_lambda(blobs):
    X, y = blobs
    y_semi = np.where(np.arange(len(y)) % 10 == 0, y, -1)
    gn = GeneralizedNystroem(
        n_components=12, lam_grid=[1e-2, 1.0, 1e2], criterion="paper", random_state=0
    )
    gn.fit(X, y_semi)
    ax = lplot.alignment_vs_lambda(gn)
    assert ax.get_xscale() == "log"
    np.testing.assert_allclose(ax.lines[0].get_xdata(), gn.lam_grid_)
    np.testing.assert_allclose(ax.lines[0].get_ydata(), gn.alignment_scores_)
    assert len(ax.lines) == 4  # score, two factors, chosen λ
    with pytest.raises(NotFittedError, match="estimator"):
        lplot.alignment_vs_lambda(GeneralizedNystroem())
    with pytest.raises(TypeError, match="estimator"):
        lplot.alignment_vs_lambda(Nystroem(n_components=5).fit(X))
    bad = SimpleNamespace(lam_grid_=np.array([1.0, 2.0]), alignment_scores_=np.array([0.5]))
    with pytest.raises(ValueError, match="alignment_scores_"):
        lplot.alignment_vs_lambda(bad)


def test_cv_errors_vs_lambda(blobs):
    X, y = blobs
    y_semi = np.where(np.arange(len(y)) % 5 == 0, y, -1)
    gn = GeneralizedNystroem(n_components=12, lam_grid=[1e-2, 1.0, 1e2], random_state=0)
    gn.fit(X, y_semi)
    assert np.isinf(gn.lam_grid_[-1])
    ax = lplot.alignment_vs_lambda(gn)
    np.testing.assert_allclose(ax.lines[0].get_xdata(), gn.lam_grid_[:-1])
    np.testing.assert_allclose(ax.lines[0].get_ydata(), gn.cv_errors_[:-1])
    np.testing.assert_allclose(ax.lines[1].get_ydata(), gn.cv_errors_[-1])  # λ = ∞
    assert ax.get_ylabel() == "cross-validated error rate"
    bad = SimpleNamespace(lam_grid_=np.array([1.0, np.inf]), cv_errors_=np.array([0.5]))
    with pytest.raises(ValueError, match="cv_errors_"):
        lplot.alignment_vs_lambda(bad)


def test_csi_errors_and_gains(blobs):
    X, y = blobs
    csi = CSI(n_components=10, lookahead=4, tol=0).fit(X, y)
    ax = lplot.csi_errors(csi)
    assert len(ax.lines) == 3
    np.testing.assert_allclose(ax.lines[0].get_ydata(), csi.approx_error_)
    np.testing.assert_allclose(ax.lines[1].get_ydata(), csi.prediction_error_)
    icd = IncompleteCholesky(n_components=10).fit(X)
    ax2 = lplot.csi_errors(icd, ax=ax, label="ICD")
    assert ax2 is ax and len(ax.lines) == 4
    ax = lplot.csi_gains(csi)
    np.testing.assert_allclose(ax.lines[0].get_ydata(), csi.true_gain_)
    assert len(ax.collections) >= 1
    with pytest.raises(NotFittedError):
        lplot.csi_gains(CSI())
    with pytest.raises(TypeError, match="estimator"):
        lplot.csi_errors(object())
    bad = SimpleNamespace(
        true_gain_=np.ones(3), predicted_gain_=np.ones(2), lookahead_hit_=np.ones(3, bool)
    )
    with pytest.raises(ValueError, match="predicted_gain_"):
        lplot.csi_gains(bad)


def test_kernel_weights_estimator_and_arrays():
    bank = KernelBank.gaussian_sigmas([0.5, 1.0, 2.0, 4.0])
    est = SimpleNamespace(
        kernel_weights_=np.array([0.1, 0.7, 0.2, 0.0]), kernels_=bank, fit=None, get_params=None
    )
    ax = lplot.kernel_weights(est)
    assert ax.get_xscale() == "log"  # Gaussian bank: bandwidth on the x axis
    np.testing.assert_allclose(ax.lines[1].get_ydata(), est.kernel_weights_)  # 0: zero line
    # the multiple-kernel learners' weights_, one-vs-rest rows
    ovr = SimpleNamespace(
        weights_=np.array([[0.5, 0.5, 0.0], [0.0, 0.2, 0.8], [1, 0, 0]]),
        classes_=np.array(["a", "b", "c"]),
        fit=None,
    )
    ax = lplot.kernel_weights(ovr)
    assert len(ax.lines) == 4  # three rows + the zero line
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["class a", "class b", "class c"]
    ax = lplot.kernel_weights([0.3, 0.7], label="uniform")
    assert ax.get_xscale() == "linear"
    lplot.kernel_weights([0.6, 0.4], label="learned", ax=ax)  # overlay: one zero line
    assert len(ax.lines) == 3
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["uniform", "learned"]


@pytest.mark.parametrize(
    ("weights", "kw", "exc", "match"),
    [
        ([], {}, ValueError, "weights"),
        ([[[1.0]]], {}, ValueError, "weights"),
        ([1.0, np.nan], {}, ValueError, "weights"),
        (["x", "y"], {}, TypeError, "weights"),
        ([1.0, 2.0], {"kernels": ["rbf"]}, ValueError, "kernels"),
        ([[1.0, 2.0], [0.0, 1.0]], {"class_labels": ["a", "b", "c"]}, ValueError, "class_labels"),
        ([1.0, 2.0], {"log_bandwidth": True}, ValueError, "log_bandwidth"),
    ],
)
def test_kernel_weights_bad_input(weights, kw, exc, match):
    with pytest.raises(exc, match=match):
        lplot.kernel_weights(weights, **kw)


def test_kernel_weights_unfitted_estimator():
    from lorak import LowRankMKLClassifier

    with pytest.raises(NotFittedError, match="weights"):
        lplot.kernel_weights(LowRankMKLClassifier())


def test_kernel_heatmap_sorted_blocks(blobs):
    X, y = blobs
    perm = np.random.default_rng(1).permutation(len(y))
    X, y = X[perm], y[perm]
    ny = Nystroem(kernel="gaussian", n_components=30, random_state=0).fit(X)
    ax = lplot.kernel_heatmap(ny, X, y, max_samples=60)
    K = ax.images[0].get_array()
    assert K.shape == (60, 60)
    # sorted by label: within-class kernel values dominate the between-class ones
    ys = np.sort(y[np.sort(np.random.default_rng(0).choice(len(y), 60, replace=False))])
    same = ys[:, None] == ys[None, :]
    assert K[same].mean() > 3 * K[~same].mean()
    # an array factor, unlabeled rows
    G = ny.transform(X)
    y_semi = np.where(np.arange(len(y)) < 20, y, -1)
    ax = lplot.kernel_heatmap(G, y=y_semi)
    assert ax.images[0].get_array().shape == (120, 120)


@pytest.mark.parametrize(
    ("args", "kw", "exc", "match"),
    [
        ((np.ones((5, 2)),), {"X": np.ones((5, 2))}, ValueError, "X"),
        ((np.ones(5),), {}, ValueError, "factor"),
        ((np.ones((5, 2)),), {"y": np.ones(4)}, ValueError, "y"),
        ((np.ones((5, 2)),), {"max_samples": 1}, ValueError, "max_samples"),
        ((np.ones((5, 2)),), {"max_samples": 2.5}, TypeError, "max_samples"),
        ((np.full((5, 2), np.nan),), {}, ValueError, "NaN"),
        (("text",), {}, TypeError, "factor"),
    ],
)
def test_kernel_heatmap_bad_input(args, kw, exc, match):
    with pytest.raises(exc, match=match):
        lplot.kernel_heatmap(*args, **kw)


def test_kernel_heatmap_transformer_needs_x(blobs):
    X, _ = blobs
    ny = Nystroem(n_components=5, random_state=0).fit(X)
    with pytest.raises(ValueError, match="X is required"):
        lplot.kernel_heatmap(ny)


def test_embedding(blobs):
    X, y = blobs
    ny = Nystroem(kernel="gaussian", n_components=20, random_state=0).fit(X)
    ax = lplot.embedding(ny, y, X=X)
    assert len(ax.collections) == 3  # one scatter per class
    assert ax.get_xlabel() == "PC 1"
    # 2 columns: drawn as given; unlabeled rows in grey
    Z = X[:, :2]
    y_semi = np.where(np.arange(len(y)) < 10, y, -1)
    ax = lplot.embedding(Z, y_semi)
    np.testing.assert_allclose(ax.collections[0].get_offsets(), Z[10:])
    # regression targets: a colour bar
    ax = lplot.embedding(Z, X[:, 2])
    assert len(ax.figure.axes) == 2


@pytest.mark.parametrize(
    ("Z", "kw", "exc", "match"),
    [
        (np.ones((5, 1)), {}, ValueError, "2 columns"),
        (np.ones((0, 3)), {}, ValueError, "no rows"),
        (np.ones((5, 3)), {"y": np.ones((5, 2))}, ValueError, "y must be 1-D"),
        (np.array([[1.0, np.inf], [0, 1]]), {}, ValueError, "Z"),
        (np.ones((5, 3)), {"ax": 3}, TypeError, "ax"),
    ],
)
def test_embedding_bad_input(Z, kw, exc, match):
    with pytest.raises(exc, match=match):
        lplot.embedding(Z, **kw)

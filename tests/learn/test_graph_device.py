"""The graph-regularized factor and the semi-supervised pipeline on array API inputs
(lorak.learn._graph_device, GraphRegularizedFactor, SemiSupervisedFactor*): the anchor
graph's passes on the device equal the host's, and array-api-strict / PyTorch (CPU)
inputs give the NumPy path's results, in their own namespace.

array-api-strict is in the dev extra (these run in CI); the PyTorch cases skip where
torch is not installed. ``LORAK_TEST_DEVICE=cuda`` puts the torch inputs on that device.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import lorak
from _tolerance import assert_labels_agree_off_ties
from lorak import (
    GraphRegularizedFactor,
    Nystroem,
    SemiSupervisedFactorClassifier,
    SemiSupervisedFactorRegressor,
)
from lorak.learn._graph_device import device_anchor_bandwidth, device_anchor_laplacian_gram
from lorak.learn._graph_factor import AnchorGraph, anchor_bandwidth, anchor_laplacian_gram

NAMESPACES = ["array_api_strict", "torch"]


def _module(name):
    return pytest.importorskip(name)


def _to(name, a, dtype=None):
    a = np.ascontiguousarray(a if dtype is None else a.astype(dtype))
    mod = _module(name)
    if name == "torch":
        return mod.asarray(a, device=os.environ.get("LORAK_TEST_DEVICE", "cpu"))
    return mod.asarray(a)


def _np(a):
    if hasattr(a, "detach"):
        return a.detach().cpu().numpy()
    return np.asarray(a)


def _lib(a):
    return type(a).__module__.split(".")[0]


@pytest.fixture
def dispatch():
    with lorak.config_context(array_api_dispatch=True):
        yield


def _moons(n=360, d_noise=6, seed=0):
    from sklearn.datasets import make_moons

    X, y = make_moons(n, noise=0.07, random_state=seed)
    rng = np.random.default_rng(seed)
    X = np.hstack([X, 0.05 * rng.standard_normal((n, d_noise))])
    y_semi = np.full(n, -1)
    lab = np.concatenate([np.flatnonzero(y == 0)[:8], np.flatnonzero(y == 1)[:8]])
    y_semi[lab] = y[lab]
    return X, y, y_semi


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("power", [1, 2])
def test_device_passes_equal_the_host_passes(name, power, dispatch):
    X, _, _ = _moons(300)
    f = Nystroem(n_components=40, random_state=0).fit(X)
    rng = np.random.default_rng(1)
    anchors = X[rng.choice(300, 60, replace=False)]
    s = 4
    sigma2 = anchor_bandwidth(X, anchors, s)
    GtG, H, lam = anchor_laplacian_gram(X, f.transform, AnchorGraph(anchors, s, sigma2), power)
    Xd, Ad = _to(name, X), _to(name, anchors)
    assert device_anchor_bandwidth(Xd, Ad, s) == pytest.approx(sigma2, rel=1e-12)
    GtG_d, H_d, lam_d = device_anchor_laplacian_gram(Xd, f.transform, Ad, s, sigma2, power)
    assert isinstance(H_d, np.ndarray) and H_d.dtype == np.float64
    scale = np.abs(GtG).max()
    np.testing.assert_allclose(GtG_d, GtG, atol=1e-11 * scale)
    np.testing.assert_allclose(H_d, H, atol=1e-11 * scale)
    np.testing.assert_allclose(lam_d, lam, atol=1e-12 * lam.max())


@pytest.mark.parametrize("name", NAMESPACES)
def test_graph_factor_float64_matches_numpy(name, dispatch):
    X, _, y_semi = _moons()
    ref = GraphRegularizedFactor(random_state=0).fit(X, y_semi)
    gf = GraphRegularizedFactor(random_state=0).fit(_to(name, X), y_semi)
    assert gf.gamma_ == ref.gamma_ and gf.gamma_ > 0
    assert gf.penalty_ == ref.penalty_
    Q = gf.transform(_to(name, X[:50]))
    assert _lib(Q) == name and tuple(Q.shape) == (50, ref.n_components_)
    assert Q.dtype == _module(name).float64
    np.testing.assert_allclose(_np(Q), ref.transform(X[:50]), atol=1e-9)
    np.testing.assert_allclose(gf.components_, ref.components_, atol=1e-9)


@pytest.mark.parametrize("name", NAMESPACES)
def test_graph_factor_float32_stays_float32(name, dispatch):
    X, _, y_semi = _moons()
    ref = GraphRegularizedFactor(random_state=0).fit(X.astype(np.float32), y_semi)
    gf = GraphRegularizedFactor(random_state=0).fit(_to(name, X, np.float32), y_semi)
    Q = gf.transform(_to(name, X, np.float32))
    assert _lib(Q) == name and Q.dtype == _module(name).float32
    assert gf.components_.dtype == np.float32
    # the same kernel to float32 accuracy: compare the Gram matrices (ranks may differ
    # by a few near-null directions that float32 cannot resolve)
    Qr = ref.transform(X.astype(np.float32)).astype(np.float64)
    Qd = _np(Q).astype(np.float64)
    K, Kr = Qd @ Qd.T, Qr @ Qr.T
    assert np.abs(K - Kr).max() <= 2e-3 * np.abs(Kr).max()


@pytest.mark.parametrize("name", NAMESPACES)
def test_classifier_predicts_like_numpy_on_the_device(name, dispatch):
    X, y, y_semi = _moons()
    ref = SemiSupervisedFactorClassifier().fit(X, y_semi)
    clf = SemiSupervisedFactorClassifier().fit(_to(name, X), _to(name, y_semi))
    assert _lib(clf.transduction_) == name
    # another backend's sums: decisions equal to 1e-7, so the labels agree wherever the
    # decision is clear of 0
    d_ref = ref.decision_function(X)
    assert_labels_agree_off_ties(_np(clf.transduction_), ref.transduction_, d_ref, 1e-7)
    p = clf.predict(_to(name, X[:40]))
    assert _lib(p) == name
    assert_labels_agree_off_ties(_np(p), ref.predict(X[:40]), d_ref[:40], 1e-7)
    d = clf.decision_function(_to(name, X[:40]))
    assert _lib(d) == name and tuple(d.shape) == (40,)
    np.testing.assert_allclose(_np(d), d_ref[:40], atol=1e-7)
    assert np.mean(ref.transduction_ == y) > 0.95


@pytest.mark.parametrize("name", NAMESPACES)
def test_string_classes_come_back_on_the_host(name, dispatch):
    X, _, y_semi = _moons(240)
    y_named = np.array(["a", "b"], dtype=object)[np.maximum(y_semi, 0)]
    y_named[y_semi < 0] = -1  # the unlabeled marker in an object array
    ref = SemiSupervisedFactorClassifier().fit(X, y_named)
    clf = SemiSupervisedFactorClassifier().fit(_to(name, X), y_named)
    # strings cannot live on a device: the labels come back as a NumPy array
    p = clf.predict(_to(name, X[:30]))
    assert isinstance(p, np.ndarray)
    d_ref = ref.decision_function(X[:30])
    np.testing.assert_allclose(_np(clf.decision_function(_to(name, X[:30]))), d_ref, atol=1e-7)
    assert_labels_agree_off_ties(p, ref.predict(X[:30]), d_ref, 1e-7)


@pytest.mark.parametrize("name", NAMESPACES)
def test_regressor_on_the_device(name, dispatch):
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, (300, 3))
    y = np.sin(X[:, 0]) + 0.05 * rng.standard_normal(300)
    y_semi = y.copy()
    y_semi[40:] = np.nan
    ref = SemiSupervisedFactorRegressor().fit(X, y_semi)
    reg = SemiSupervisedFactorRegressor().fit(_to(name, X), y_semi)
    r = reg.predict(_to(name, X[:50]))
    assert _lib(r) == name and tuple(r.shape) == (50,)
    np.testing.assert_allclose(_np(r), ref.predict(X[:50]), atol=1e-7)


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize(
    "params, word",
    [({"graph": "knn"}, "graph='knn'"), ({"weights": "lle"}, "weights='lle'")],
)
def test_host_only_options_say_so(name, params, word, dispatch):
    X, _, y_semi = _moons(200)
    with pytest.raises(TypeError, match=word):
        GraphRegularizedFactor(random_state=0, **params).fit(_to(name, X), y_semi)


def test_dispatch_off_converts_to_numpy():
    torch = pytest.importorskip("torch")
    X, _, y_semi = _moons(240)
    ref = SemiSupervisedFactorClassifier().fit(X, y_semi)
    # a host tensor is converted (one on a GPU gets a TypeError, tested with the kernels)
    clf = SemiSupervisedFactorClassifier().fit(torch.asarray(X), y_semi)
    p = clf.predict(torch.asarray(X[:20]))
    assert isinstance(p, np.ndarray)
    np.testing.assert_array_equal(p, ref.predict(X[:20]))

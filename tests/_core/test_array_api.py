"""Array API dispatch (lorak._core.array_api): array-api-strict and PyTorch (CPU) inputs give
the NumPy path's results, in their own namespace and dtype, for the kernels, the
bandwidth rules, the landmarks, Nystroem, GeneralizedNystroem's transform and the
LS-SVMs; what has no array API path says so.

array-api-strict is in the dev extra (these tests run in CI); the PyTorch cases skip
where torch is not installed.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lorak
from _tolerance import assert_labels_agree_off_ties
from lorak import GeneralizedNystroem, Nystroem
from lorak._core.array_api import compat, on_device, solve_triangular, to_numpy
from lorak._core.config import array_api_dispatch_enabled
from lorak.kernels import (
    Gaussian,
    InverseDistance,
    Laplacian,
    Linear,
    Polynomial,
    bandwidth_scale,
    kernel_block,
    kernel_product,
)
from lorak.landmarks import select_landmarks
from lorak.landmarks._kmeans import device_kmeans_landmarks, kmeans_landmarks
from lorak.models import LSSVC, LSSVR


def _strict():
    return pytest.importorskip("array_api_strict")


def _torch():
    return pytest.importorskip("torch")


NAMESPACES = ["array_api_strict", "torch"]
DTYPES = [np.float64, np.float32]


def _convert(name):
    if name == "torch":
        torch = _torch()
        return lambda a: torch.asarray(np.ascontiguousarray(a))
    xs = _strict()
    return lambda a: xs.asarray(np.ascontiguousarray(a))


def _module(name):
    return _torch() if name == "torch" else _strict()


def _check_out(A, name, dtype, shape=None):
    """A is an array of namespace ``name`` in ``dtype`` (and ``shape``)."""
    assert not isinstance(A, np.ndarray)
    assert type(A).__module__.split(".")[0] == name
    mod = _module(name)
    assert A.dtype == (mod.float32 if dtype == np.float32 else mod.float64)
    if shape is not None:
        assert tuple(A.shape) == shape


def _tol(dtype, scale=1.0):
    return (2e-4 if dtype == np.float32 else 1e-10) * scale


@pytest.fixture
def dispatch():
    with lorak.config_context(array_api_dispatch=True):
        yield


def _blobs(rng, n_per=150, k=6, d=5, spread=12.0):
    centers = rng.standard_normal((k, d)) * spread
    return np.concatenate([c + rng.standard_normal((n_per, d)) for c in centers])


# ------------------------------------------------------------------ the settings


def test_dispatch_setting_is_checked_and_scoped():
    assert lorak.get_config()["array_api_dispatch"] is False
    with pytest.raises(TypeError, match="array_api_dispatch must be True or False"):
        lorak.set_config(array_api_dispatch="yes")
    with lorak.config_context(array_api_dispatch=True):
        assert array_api_dispatch_enabled()
    assert not array_api_dispatch_enabled()


def test_scikit_learn_dispatch_enables_lorak_dispatch(monkeypatch):
    import sklearn

    real = sklearn.get_config
    monkeypatch.setattr(sklearn, "get_config", lambda: {**real(), "array_api_dispatch": True})
    assert array_api_dispatch_enabled()


def test_numpy_input_never_dispatches(dispatch, rng):
    X = rng.standard_normal((50, 3))
    G = Nystroem(n_components=10, random_state=0).fit_transform(X)
    assert isinstance(G, np.ndarray)


def test_solve_triangular_falls_back_to_the_host(rng):
    xs = _strict()
    L = np.tril(rng.standard_normal((6, 6))) + 6 * np.eye(6)
    B = rng.standard_normal((6, 2))
    Xs = solve_triangular(xs, xs.asarray(L), xs.asarray(B), lower=True)
    assert type(Xs).__module__.startswith("array_api_strict")
    np.testing.assert_allclose(L @ to_numpy(Xs), B, atol=1e-12)


def test_solve_triangular_torch(rng):
    torch = _torch()
    U = np.triu(rng.standard_normal((5, 5))) + 5 * np.eye(5)
    B = rng.standard_normal((5, 3))
    Xt = solve_triangular(
        compat.array_namespace(torch.ones(1)), torch.asarray(U), torch.asarray(B), lower=False
    )
    np.testing.assert_allclose(U @ Xt.numpy(), B, atol=1e-12)


# ------------------------------------------------------------------ kernels


KERNELS = [
    Gaussian(bandwidth=4.0),
    Laplacian(bandwidth=2.0),
    Laplacian(gamma=0.3, norm="l1"),
    InverseDistance(bandwidth=2.0),
    Polynomial(degree=2, gamma=0.5, coef0=1.0),
    Linear(),
]


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: f"{k.name}-{getattr(k, 'norm', '')}")
def test_kernel_blocks_match_numpy(dispatch, name, dtype, kernel, rng):
    conv = _convert(name)
    X = rng.standard_normal((130, 4)).astype(dtype)
    Z = X[:25].copy()
    R = np.triu(rng.standard_normal((25, 25))).astype(dtype)
    ref_block = kernel_block(kernel, X, Z)
    ref_prod = kernel_product(kernel, X, Z, R, upper_triangular=True)
    # the ℓ₂ Laplacians take the square root of a squared distance that is round-off
    # at x = z (√eps relative): looser there
    loose = (
        30.0
        if kernel.name in ("laplacian", "inverse_distance")
        and not (getattr(kernel, "norm", "l2") == "l1")
        else 1.0
    )
    tol = _tol(dtype, loose) if dtype == np.float32 else (1e-6 if loose > 1 else 1e-10)
    B = kernel_block(kernel, conv(X), conv(Z))
    _check_out(B, name, dtype, (130, 25))
    np.testing.assert_allclose(to_numpy(B), ref_block, atol=tol * np.abs(ref_block).max())
    scale = np.abs(ref_prod).max()
    for upper in (True, False):
        P = kernel_product(kernel, conv(X), conv(Z), conv(R), upper_triangular=upper)
        _check_out(P, name, dtype, (130, 25))
        np.testing.assert_allclose(to_numpy(P), ref_prod, atol=tol * scale)
    blocks = list(lorak.kernels.iter_kernel_blocks(kernel, conv(X), conv(Z), budget=2**12))
    assert len(blocks) > 1
    got = np.concatenate([to_numpy(b) for _, _, b in blocks])
    np.testing.assert_allclose(got, ref_block, atol=tol * np.abs(ref_block).max())


@pytest.mark.parametrize("name", NAMESPACES)
def test_kernel_product_in_small_chunks(dispatch, name, rng):
    conv = _convert(name)
    X = rng.standard_normal((300, 6))
    Z = X[:40]
    R = np.triu(rng.standard_normal((40, 40)))
    ref = kernel_product(Gaussian(bandwidth=6.0), X, Z, R, upper_triangular=True)
    P = kernel_product(
        Gaussian(bandwidth=6.0), conv(X), conv(Z), conv(R), upper_triangular=True, budget=4096
    )
    np.testing.assert_allclose(to_numpy(P), ref, atol=1e-12)


@pytest.mark.parametrize("name", NAMESPACES)
def test_gaussian_far_from_the_origin_is_centred(dispatch, name, rng):
    """Data offset by 1e4 at bandwidth 1: the expansion would cancel every digit."""
    conv = _convert(name)
    X = rng.standard_normal((60, 3)) + 1e4
    ref = kernel_block(Gaussian(bandwidth=2.0), X, X[:10])
    got = kernel_block(Gaussian(bandwidth=2.0), conv(X), conv(X[:10]))
    np.testing.assert_allclose(to_numpy(got), ref, atol=1e-9)


@pytest.mark.parametrize("name", NAMESPACES)
def test_kernel_errors_on_the_device(dispatch, name, rng):
    conv = _convert(name)
    X = rng.standard_normal((20, 3))
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity"):
        kernel_block(Gaussian(bandwidth=1.0), conv(bad), conv(X[:4]))
    with pytest.raises(ValueError, match="Z contains NaN"):
        kernel_block(Gaussian(bandwidth=1.0), conv(X), conv(bad[:5]))
    with pytest.raises(ValueError, match="negative"):
        kernel_block(Polynomial(degree=1.5, gamma=1.0, coef0=0.0), conv(X), conv(X[:4]))
    with pytest.raises(TypeError, match="no array API path"):
        kernel_block(lorak.kernels.make_kernel("sigmoid"), conv(X), conv(X[:4]))


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("rule", ["mean_pairwise", "mean_to_centroid", "median"])
def test_bandwidth_rules_match_numpy(dispatch, name, rule, rng):
    conv = _convert(name)
    X = rng.standard_normal((1500, 4)) * 3 + 7
    ref = bandwidth_scale(rule, X, np.random.default_rng(1))
    got = bandwidth_scale(rule, conv(X), np.random.default_rng(1))
    assert got == pytest.approx(ref, rel=1e-12)
    got32 = bandwidth_scale(rule, conv(X.astype(np.float32)), np.random.default_rng(1))
    assert got32 == pytest.approx(ref, rel=1e-5)


# ------------------------------------------------------------------ landmarks


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_uniform_landmarks_are_the_same_rows(dispatch, name, dtype, rng):
    conv = _convert(name)
    X = rng.standard_normal((200, 3)).astype(dtype)
    ref = select_landmarks("uniform", X, 15, rng=np.random.default_rng(4))
    got = select_landmarks("uniform", conv(X), 15, rng=np.random.default_rng(4))
    np.testing.assert_array_equal(got.indices, ref.indices)
    _check_out(got.points, name, dtype, (15, 3))
    np.testing.assert_array_equal(to_numpy(got.points), ref.points)
    idx = np.array([3, 1, 4])
    got = select_landmarks(idx, conv(X), None, rng=np.random.default_rng(0))
    np.testing.assert_array_equal(to_numpy(got.points), X[idx])
    got = select_landmarks(X[:5].astype(np.float64), conv(X), None, rng=np.random.default_rng(0))
    _check_out(got.points, name, dtype, (5, 3))


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_kmeans_on_the_device_matches_numpy(dispatch, name, dtype, rng):
    conv = _convert(name)
    X = _blobs(rng).astype(dtype)
    # the same seeds from the same draws
    c0, _ = kmeans_landmarks(X, 6, rng=np.random.default_rng(3), max_iter=0)
    c1, _ = device_kmeans_landmarks(conv(X), 6, rng=np.random.default_rng(3), max_iter=0)
    np.testing.assert_array_equal(to_numpy(c1), c0)
    # then Lloyd to the same clusters
    c0, i0 = kmeans_landmarks(X, 6, rng=np.random.default_rng(3), return_labels=True)
    c1, i1 = device_kmeans_landmarks(conv(X), 6, rng=np.random.default_rng(3), return_labels=True)
    _check_out(c1, name, dtype, c0.shape)
    # another backend's distances: the labels agree wherever a row's two nearest
    # centres are not within round-off of a tie
    D = ((X[:, None, :].astype(np.float64) - c0[None].astype(np.float64)) ** 2).sum(axis=2)
    assert_labels_agree_off_ties(i1["labels"], i0["labels"], -D, _tol(dtype, 10) * D.max())
    np.testing.assert_allclose(to_numpy(c1), c0, atol=_tol(dtype, 10) * np.abs(c0).max())
    assert i1["inertia"] == pytest.approx(i0["inertia"], rel=1e-4 if dtype == np.float32 else 1e-9)
    lm = select_landmarks("kmeans", conv(X), 6, rng=np.random.default_rng(3))
    _check_out(lm.points, name, dtype, (6, X.shape[1]))


@pytest.mark.parametrize("name", NAMESPACES)
def test_kmeans_relocates_empty_clusters(dispatch, name, rng):
    """More centres than distinct points: clusters empty and are moved, as on the host."""
    conv = _convert(name)
    X = np.repeat(rng.standard_normal((5, 2)), 20, axis=0)
    X = np.concatenate([X, rng.standard_normal((12, 2)) * 5])
    c0, i0 = kmeans_landmarks(X, 12, rng=np.random.default_rng(0), init="random")
    c1, i1 = device_kmeans_landmarks(conv(X), 12, rng=np.random.default_rng(0), init="random")
    assert i1["inertia"] == pytest.approx(i0["inertia"], rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("strategy", ["column_norm", "rls"])
def test_kernel_dependent_landmarks_are_refused(dispatch, name, strategy, rng):
    conv = _convert(name)
    X = conv(rng.standard_normal((50, 3)))
    with pytest.raises(TypeError, match="no array API path"):
        Nystroem(n_components=5, landmarks=strategy).fit(X)


# ------------------------------------------------------------------ Nystroem


CASES = [
    dict(),
    dict(kernel="laplacian_l2", bandwidth="median"),
    dict(kernel="poly", degree=2),
    dict(kernel="linear"),
    dict(landmarks="kmeans", bandwidth="mean_pairwise"),
]


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("params", CASES, ids=lambda p: "-".join(map(str, p.values())) or "rbf")
def test_nystroem_matches_numpy(dispatch, name, dtype, params, rng):
    conv = _convert(name)
    X = _blobs(rng, n_per=60, d=4, spread=2.0).astype(dtype)
    m = 3 if params.get("kernel") == "linear" else 40  # the linear kernel's rank is d
    ref = Nystroem(n_components=m, random_state=0, **params).fit(X)
    G0 = ref.transform(X)
    est = Nystroem(n_components=m, random_state=0, **params)
    G = est.fit_transform(conv(X))
    _check_out(G, name, dtype, G0.shape)
    scale = np.abs(G0).max()
    loose = 30.0 if params.get("kernel") == "laplacian_l2" else 1.0
    tol = _tol(dtype, loose) if dtype == np.float32 else (1e-6 if loose > 1 else 1e-9)
    np.testing.assert_allclose(to_numpy(G), G0, atol=tol * scale)
    assert est.normalization_is_upper_ == ref.normalization_is_upper_
    assert est.n_components_ == ref.n_components_
    _check_out(est.components_, name, dtype)
    _check_out(est.normalization_, name, dtype)
    # transform of new rows, in either kind of array, by either fitted factor
    Xn = (rng.standard_normal((30, 4)) * 2).astype(dtype)
    np.testing.assert_allclose(
        to_numpy(est.transform(conv(Xn))), ref.transform(Xn), atol=tol * scale
    )
    G_np = est.transform(Xn)
    assert isinstance(G_np, np.ndarray) and G_np.dtype == dtype
    np.testing.assert_allclose(G_np, ref.transform(Xn), atol=tol * scale)
    G_dev = ref.transform(conv(Xn))
    _check_out(G_dev, name, dtype)
    np.testing.assert_allclose(to_numpy(G_dev), ref.transform(Xn), atol=tol * scale)


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_nystroem_inverse_transform(dispatch, name, dtype, rng):
    conv = _convert(name)
    X = rng.standard_normal((300, 4)).astype(dtype)
    ref = Nystroem(n_components=40, random_state=0, fit_inverse_transform=True).fit(X)
    est = Nystroem(n_components=40, random_state=0, fit_inverse_transform=True)
    G = est.fit_transform(conv(X))
    back = est.inverse_transform(G)
    expect = ref.inverse_transform(ref.transform(X))
    assert type(back).__module__.split(".")[0] == name
    np.testing.assert_allclose(to_numpy(back), expect, atol=_tol(dtype, 10) * np.abs(expect).max())


@pytest.mark.parametrize("name", NAMESPACES)
def test_nystroem_ill_conditioned_w_takes_the_host_eigen_path(dispatch, name, rng):
    """Repeated landmarks make W singular: the device Cholesky path is refused and the
    host's eigen path gives the NumPy factor (same rank, same G Gᵀ)."""
    conv = _convert(name)
    X = rng.standard_normal((100, 3))
    idx = np.array([0, 1, 2, 2, 5, 5, 9])
    ref = Nystroem(landmarks=idx, gamma=0.5).fit(X)
    est = Nystroem(landmarks=idx, gamma=0.5).fit(conv(X))
    assert not est.normalization_is_upper_ and est.n_components_ == ref.n_components_ == 5
    G0, G = ref.transform(X), to_numpy(est.transform(conv(X)))
    np.testing.assert_allclose(G @ G.T, G0 @ G0.T, atol=1e-10)


@pytest.mark.parametrize("name", NAMESPACES)
def test_nystroem_validation_on_the_device(dispatch, name, rng):
    conv = _convert(name)
    X = rng.standard_normal((40, 3))
    bad = X.copy()
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="NaN or infinity"):
        Nystroem(n_components=5).fit(conv(bad))
    with pytest.raises(ValueError, match="2-dimensional"):
        Nystroem(n_components=5).fit(conv(X[:, 0]))
    est = Nystroem(n_components=5).fit(conv(X))
    assert est.n_features_in_ == 3
    with pytest.raises(ValueError, match="X has 2 features"):
        est.transform(conv(X[:, :2]))
    with pytest.raises(TypeError, match="no array API path"):
        Nystroem(kernel="sigmoid", n_components=5).fit(conv(X))
    with pytest.raises(TypeError, match="precomputed"):
        Nystroem(kernel="precomputed", n_components=5).fit(conv(X @ X.T))
    # integers become float64 (as on the host)
    G = Nystroem(n_components=5, random_state=0).fit_transform(conv(np.arange(60).reshape(20, 3)))
    _check_out(G, name, np.float64)


@pytest.mark.parametrize(
    "make",
    [
        lambda: lorak.SimpleNPKL(),
        lambda: lorak.CSI(n_components=3),
        lambda: lorak.LowRankMKLClassifier(),
        lambda: lorak.IncompleteCholesky(n_components=3),
    ],
    ids=["SimpleNPKL", "CSI", "LowRankMKLClassifier", "IncompleteCholesky"],
)
@pytest.mark.parametrize("name", NAMESPACES)
def test_estimators_without_array_api_support_say_so(dispatch, make, name, rng):
    conv = _convert(name)
    X = conv(rng.standard_normal((30, 3)))
    y = np.arange(30) % 2
    est = make()
    with pytest.raises(TypeError, match="does not support array API inputs"):
        est.fit(X, y)


def test_dispatch_off_converts_like_scikit_learn(rng):
    """Dispatch off: a torch tensor on the host is read as NumPy, the output is NumPy."""
    torch = _torch()
    X = rng.standard_normal((50, 3))
    G = Nystroem(n_components=5, random_state=0).fit_transform(torch.asarray(X))
    assert isinstance(G, np.ndarray)
    np.testing.assert_allclose(G, Nystroem(n_components=5, random_state=0).fit_transform(X))
    B = kernel_block(Gaussian(bandwidth=1.0), torch.asarray(X), torch.asarray(X[:4]))
    assert isinstance(B, np.ndarray)


# ------------------------------------------------------------------ GeneralizedNystroem


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_generalized_nystroem_transform_on_the_device(dispatch, name, dtype, rng):
    conv = _convert(name)
    X = rng.standard_normal((200, 4)).astype(dtype)
    y = (X[:, 0] > 0).astype(int)
    y[40:] = -1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = GeneralizedNystroem(n_components=20, random_state=0, lam=1.0).fit(X, y)
        est = GeneralizedNystroem(n_components=20, random_state=0, lam=1.0).fit(conv(X), y)
    Q0 = ref.transform(X)
    scale = np.abs(Q0).max()
    for fitted in (ref, est):
        Q = fitted.transform(conv(X))
        _check_out(Q, name, dtype, Q0.shape)
        np.testing.assert_allclose(to_numpy(Q), Q0, atol=_tol(dtype, 10) * scale)
    Qh = est.transform(X)
    assert isinstance(Qh, np.ndarray)
    np.testing.assert_allclose(Qh, Q0, atol=_tol(dtype, 10) * scale)


# ------------------------------------------------------------------ LS-SVM


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_lssvm_on_the_device_matches_numpy(dispatch, name, dtype, rng):
    conv = _convert(name)
    X = rng.standard_normal((300, 3)).astype(dtype)
    y2 = (X[:, 0] * X[:, 1] > 0).astype(int)
    y3 = np.digitize(X[:, 0], [-0.5, 0.5])
    yr = np.sin(X[:, 0])
    tol = 1e-4 if dtype == np.float32 else 1e-9
    for y in (y2, y3):
        ref = LSSVC(Nystroem(gamma=1.0, n_components=30, random_state=0), C=10.0).fit(X, y)
        est = LSSVC(Nystroem(gamma=1.0, n_components=30, random_state=0), C=10.0).fit(conv(X), y)
        d0 = ref.decision_function(X)
        d = est.decision_function(conv(X))
        _check_out(d, name, dtype, d0.shape)
        np.testing.assert_allclose(to_numpy(d), d0, atol=tol * np.abs(d0).max())
        p = est.predict(conv(X))
        assert type(p).__module__.split(".")[0] == name
        agree = np.mean(to_numpy(p) == ref.predict(X))
        assert agree > 0.99
        np.testing.assert_allclose(
            est.stats_scatter_,
            ref.stats_scatter_,
            rtol=1e-3 if dtype == np.float32 else 1e-9,
            atol=1e-6,
        )
    ref = LSSVR(Nystroem(gamma=1.0, n_components=30, random_state=0), C=10.0).fit(X, yr)
    est = LSSVR(Nystroem(gamma=1.0, n_components=30, random_state=0), C=10.0).fit(conv(X), yr)
    r = est.predict(conv(X))
    _check_out(r, name, dtype, (300,))
    np.testing.assert_allclose(to_numpy(r), ref.predict(X), atol=tol * 10)
    # passthrough: X itself is the factor
    ref = LSSVR(None, C=1.0).fit(X, yr)
    est = LSSVR(None, C=1.0).fit(conv(X), yr)
    np.testing.assert_allclose(to_numpy(est.predict(conv(X))), ref.predict(X), atol=tol * 10)


@pytest.mark.parametrize("name", NAMESPACES)
def test_lssvc_partial_fit_on_the_device(dispatch, name, rng):
    conv = _convert(name)
    X = rng.standard_normal((300, 3))
    y = (X[:, 0] > 0).astype(int)
    factor = Nystroem(gamma=1.0, n_components=20, random_state=0)
    ref, est = LSSVC(factor, C=5.0), LSSVC(factor, C=5.0)
    for s in (slice(0, 150), slice(150, 300)):
        ref.partial_fit(X[s], y[s], classes=[0, 1])
        est.partial_fit(conv(X[s, :]), y[s], classes=[0, 1])
    np.testing.assert_allclose(
        to_numpy(est.decision_function(conv(X))), ref.decision_function(X), atol=1e-9
    )


def test_on_device_keeps_what_is_there():
    xs = _strict()
    A = xs.asarray(np.ones((2, 2)))
    assert on_device(A, xs, A.device) is A
    B = on_device(np.ones(3, dtype=np.float32), xs, A.device, xs.float64)
    assert B.dtype == xs.float64

"""Property tests (hypothesis): invariants that must hold for any data.

- learned kernels are PSD (GeneralizedNystroem's S, SimpleNPKL's K = V Vᵀ, any factor's
  Gram matrix on new points);
- alignment lies in [−1, 1] (in [0, 1] for PSD pairs and for factor alignment);
- Nyström-type factors are exact on their landmarks / pivots;
- the same random_state gives identical outputs;
- float32 and float64 fits agree to float32 precision, and float32 stays float32;
- the transform of a row does not depend on the batch it is in.

Kept small: few examples, small n, ``deadline=None`` (the machine is shared).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import lorak
from lorak.constraints import from_labels
from lorak.kernels import Gaussian, Laplacian, Polynomial, kernel_block
from lorak.metrics import alignment, centered_alignment, factor_alignment

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

FAST = settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)

seeds = st.integers(0, 2**31 - 1)
sizes = st.integers(20, 60)
dims = st.integers(1, 6)
scales = st.sampled_from([0.1, 1.0, 10.0])


def _data(seed, n, d, scale=1.0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * scale
    y = (X[:, 0] + 0.3 * rng.standard_normal(n) > 0).astype(int)
    if np.unique(y).size < 2:
        y[:2] = [0, 1]
    return X, y


def _semi(y, n_labeled):
    ys = y.copy()
    ys[n_labeled:] = -1
    if np.unique(ys[:n_labeled]).size < 2:
        ys[:2] = [0, 1]
    return ys


def _assert_psd(K, rtol=1e-9):
    K = np.asarray(K, dtype=np.float64)
    np.testing.assert_allclose(K, K.T, atol=1e-10 * max(1.0, np.abs(K).max()))
    lam = np.linalg.eigvalsh((K + K.T) / 2)
    assert lam.min() >= -rtol * max(1.0, lam.max()), lam.min()


# ---------------------------------------------------------------------------- PSD


@FAST
@given(seed=seeds, n=sizes, d=dims, scale=scales, m=st.integers(3, 10))
def test_generalized_nystroem_learned_kernel_is_psd(seed, n, d, scale, m):
    X, y = _data(seed, n, d, scale)
    est = lorak.GeneralizedNystroem(n_components=m, random_state=seed, max_iter=200)
    est.fit(X, _semi(y, max(4, n // 3)))
    _assert_psd(est.S_)
    X_new = _data(seed + 1, 15, d, scale)[0]
    Q = est.transform(X_new)
    _assert_psd(Q @ Q.T)
    # the learned kernel k(x, Z) S k(Z, x') equals the factor's Gram matrix
    E = kernel_block(est.kernel_, X_new, est.components_)
    np.testing.assert_allclose(E @ est.S_ @ E.T, Q @ Q.T, rtol=1e-8, atol=1e-10)


@FAST
@given(seed=seeds, n=st.integers(20, 45), d=dims)
def test_simple_npkl_learned_kernel_is_psd(seed, n, d):
    X, y = _data(seed, n, d)
    c = from_labels(y, n_pairs=min(30, n), random_state=seed)
    est = lorak.SimpleNPKL(max_iter=10, random_state=seed).fit(X, **c)
    assert np.all(est.eigenvalues_ >= 0)
    V = est.embedding_
    _assert_psd(V @ V.T)


def _two_kernels():
    from lorak.kernels import KernelBank

    return KernelBank.gaussian(factors=[0.5, 2.0])


@FAST
@given(seed=seeds, n=sizes, d=dims, m=st.integers(3, 8))
def test_multiple_kernel_learned_blocks_are_psd(seed, n, d, m):
    if not hasattr(lorak, "MultipleKernelGeneralizedNystroem"):
        pytest.skip("MultipleKernelGeneralizedNystroem not exported")
    X, y = _data(seed, n, d)
    est = lorak.MultipleKernelGeneralizedNystroem(
        kernels=_two_kernels(), n_landmarks=m, random_state=seed
    ).fit(X, _semi(y, max(4, n // 3)))
    for S in est.S_:
        _assert_psd(S, rtol=1e-7)
    assert np.all(np.asarray(est.weights_) >= 0)
    Q = est.transform(_data(seed + 1, 12, d)[0])
    _assert_psd(Q @ Q.T)


COMBINATIONS = ("UniformKernelSum", "ABMKL", "CABMKL")


@pytest.mark.parametrize("name", COMBINATIONS)
@settings(max_examples=6, deadline=None, derandomize=True)
@given(seed=seeds, n=sizes, d=dims)
def test_kernel_combination_weights_and_alignments(name, seed, n, d):
    if not hasattr(lorak, name):
        pytest.skip(f"{name} not exported")
    X, y = _data(seed, n, d)
    est = getattr(lorak, name)(kernels=_two_kernels(), n_components=6, random_state=seed)
    est.fit(X, _semi(y, max(4, n // 3)))
    w = np.asarray(est.weights_)
    assert np.all(w >= 0) and w.sum() == pytest.approx(1.0)
    for a in np.atleast_1d(getattr(est, "alignments_", [])):
        assert -1.0 - 1e-12 <= a <= 1.0 + 1e-12
    Q = est.transform(X[:15])
    _assert_psd(Q @ Q.T)


@FAST
@given(
    seed=seeds,
    n=sizes,
    d=dims,
    kernel=st.sampled_from(
        [Gaussian(bandwidth=2.0), Laplacian(bandwidth=1.5), Polynomial(degree=2, gamma=0.5)]
    ),
)
def test_unsupervised_factor_gram_is_psd_and_below_kernel(seed, n, d, kernel):
    X, _ = _data(seed, n, d)
    est = lorak.Nystroem(kernel=kernel, n_components=min(8, n), random_state=seed).fit(X)
    G = est.transform(X)
    K = kernel_block(kernel, X, X)
    _assert_psd(G @ G.T)
    # Nyström never over-estimates: K − G Gᵀ is PSD
    _assert_psd(K - G @ G.T, rtol=1e-7)


# ---------------------------------------------------------------------------- alignment

square = st.integers(2, 8).flatmap(
    lambda k: arrays(
        np.float64,
        (k, k),
        elements=st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False, width=64),
    )
)


@FAST
@given(A=square, seed=seeds)
def test_alignment_in_unit_interval(A, seed):
    B = np.random.default_rng(seed).standard_normal(A.shape)
    for a in (alignment(A, B), alignment(A, A.T), centered_alignment(A, B)):
        assert -1.0 - 1e-12 <= a <= 1.0 + 1e-12
    if np.linalg.norm(A) > 0:
        assert alignment(A, A) == pytest.approx(1.0)
        assert alignment(A, -A) == pytest.approx(-1.0)


@FAST
@given(seed=seeds, n=st.integers(2, 40), r1=st.integers(1, 5), r2=st.integers(1, 5))
def test_alignment_of_psd_pairs_in_zero_one(seed, n, r1, r2):
    rng = np.random.default_rng(seed)
    G1, G2 = rng.standard_normal((n, r1)), rng.standard_normal((n, r2))
    a = factor_alignment(G1, G2)
    assert 0.0 <= a <= 1.0 + 1e-12
    assert a == pytest.approx(alignment(G1 @ G1.T, G2 @ G2.T), rel=1e-9, abs=1e-12)
    ac = factor_alignment(G1, G2, centered=True)
    assert 0.0 <= ac <= 1.0 + 1e-12


# ---------------------------------------------------------------------------- exactness


@FAST
@given(seed=seeds, n=sizes, d=dims, m=st.integers(2, 12), scale=scales)
def test_nystroem_exact_on_landmarks(seed, n, d, m, scale):
    X, _ = _data(seed, n, d, scale)
    idx = np.sort(np.random.default_rng(seed).choice(n, size=min(m, n), replace=False))
    k = Gaussian(bandwidth=float(d) * scale**2 * 2.0)
    est = lorak.Nystroem(kernel=k, landmarks=idx).fit(X)
    W = kernel_block(k, X[idx], X[idx])
    G = est.transform(X[idx])
    if est.n_components_ == len(idx):  # W well conditioned: no eigenvalue dropped
        np.testing.assert_allclose(G @ G.T, W, rtol=1e-6, atol=1e-8)
    # and always exact on the range it keeps: the reconstruction of every column
    # of W through the landmarks equals W projected on the kept eigenspace
    lam, U = np.linalg.eigh(W)
    keep = lam > est.rtol_ * lam.max()
    Wk = (U[:, keep] * lam[keep]) @ U[:, keep].T
    np.testing.assert_allclose(G @ G.T, Wk, rtol=1e-6, atol=1e-7 * lam.max())


@FAST
@given(seed=seeds, n=sizes, d=dims, r=st.integers(2, 10))
def test_incomplete_cholesky_exact_on_pivots(seed, n, d, r):
    X, _ = _data(seed, n, d)
    est = lorak.IncompleteCholesky(kernel=Gaussian(bandwidth=2.0 * d), n_components=r).fit(X)
    p = est.pivots_
    K_pp = kernel_block(est.kernel_, X[p], X[p])
    np.testing.assert_allclose(est.G_[p] @ est.G_[p].T, K_pp, rtol=1e-8, atol=1e-10)
    # the inductive transform reproduces the training factor
    np.testing.assert_allclose(est.transform(X), est.G_, rtol=1e-6, atol=1e-8)


@FAST
@given(seed=seeds, n=sizes, d=dims, m=st.integers(3, 8))
def test_generalized_nystroem_exact_on_landmarks(seed, n, d, m):
    """On the landmarks Q(Z) Q(Z)ᵀ = W S W: the learned kernel at its own dictionary."""
    X, y = _data(seed, n, d)
    est = lorak.GeneralizedNystroem(n_components=m, random_state=seed, max_iter=200)
    est.fit(X, _semi(y, max(4, n // 3)))
    Z = est.components_
    W = kernel_block(est.kernel_, Z, Z)
    Q = est.transform(Z)
    np.testing.assert_allclose(Q @ Q.T, W @ est.S_ @ W, rtol=1e-7, atol=1e-9)


# ---------------------------------------------------------------------------- determinism


def _outputs(make, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = make()
        if isinstance(est, lorak.SimpleNPKL):
            return est.fit_transform(X, **from_labels(y, n_pairs=20, random_state=0))
        if isinstance(est, (lorak.SemiSupervisedFactorClassifier,)):
            est.fit(X, _semi(y, len(y) // 2))
            return est.decision_function(X)
        if isinstance(est, lorak.GeneralizedNystroem):
            return est.fit(X, _semi(y, len(y) // 2)).transform(X)
        if isinstance(est, lorak.KernelKMeans):
            return est.fit(X).labels_
        if isinstance(est, lorak.LowRankMKLClassifier):
            return est.fit(X, y).decision_function(X)
        try:
            est.fit(X, _semi(y, len(y) // 2))
        except (TypeError, ValueError):
            est.fit(X, y)
        for method in ("transform", "decision_function", "predict"):
            if hasattr(est, method):
                return getattr(est, method)(X)
        raise AssertionError(f"{type(est).__name__} has no output method")


MAKERS = {
    "nystroem-uniform": lambda s: lorak.Nystroem(n_components=6, random_state=s),
    "nystroem-kmeans": lambda s: lorak.Nystroem(
        n_components=6, landmarks="kmeans", bandwidth="median", random_state=s
    ),
    "nystroem-column_norm": lambda s: lorak.Nystroem(
        n_components=6, landmarks="column_norm", random_state=s
    ),
    "csi": lambda s: lorak.CSI(n_components=6, lookahead=3, random_state=s),
    "gen-nystroem": lambda s: lorak.GeneralizedNystroem(n_components=6, random_state=s),
    "ssfc": lambda s: lorak.SemiSupervisedFactorClassifier(
        lorak.GeneralizedNystroem(n_components=6, random_state=s)
    ),
    "simple-npkl": lambda s: lorak.SimpleNPKL(max_iter=5, random_state=s),
    "mkl": lambda s: lorak.LowRankMKLClassifier(n_kernels=2, rank=6, max_iter=3, random_state=s),
    "kkmeans": lambda s: lorak.KernelKMeans(
        3, lorak.Nystroem(n_components=6, random_state=s), n_init=2, random_state=s
    ),
}


def _generic_maker(cls):
    def make(seed):
        est = cls()
        params = est.get_params(deep=False)
        small = {"n_components": 6, "n_landmarks": 6, "rank": 6, "n_kernels": 2, "max_iter": 5}
        if "factor" in params:  # a model on a factor: its rank bounds n_components
            small = {"factor": lorak.Nystroem(n_components=6, random_state=seed)}
        est.set_params(**{k: v for k, v in small.items() if k in params})
        if "kernels" in params:
            est.set_params(kernels=_two_kernels())
        if "random_state" in params:
            est.set_params(random_state=seed)
        return est

    return make


_COVERED = {
    "Nystroem",
    "CSI",
    "GeneralizedNystroem",
    "SemiSupervisedFactorClassifier",
    "SimpleNPKL",
    "LowRankMKLClassifier",
    "KernelKMeans",
}
for _name in sorted(lorak.__all__):
    _obj = getattr(lorak, _name)
    if (
        isinstance(_obj, type)
        and _name not in _COVERED
        and "random_state" in _obj().get_params(deep=False)
    ):
        MAKERS[f"generic-{_name}"] = _generic_maker(_obj)


@pytest.mark.parametrize("name", sorted(MAKERS))
@settings(max_examples=3, deadline=None, derandomize=True)
@given(seed=seeds, n=st.integers(25, 45), d=dims)
def test_same_random_state_same_output(name, seed, n, d):
    X, y = _data(seed, n, d)
    a = _outputs(lambda: MAKERS[name](seed), X, y)
    b = _outputs(lambda: MAKERS[name](seed), X, y)
    np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------------------- dtypes


@FAST
@given(seed=seeds, n=sizes, d=dims, landmarks=st.sampled_from(["uniform", "kmeans"]))
def test_float32_and_float64_agree(seed, n, d, landmarks):
    X, _ = _data(seed, n, d)
    kw = {"n_components": 6, "landmarks": landmarks, "bandwidth": 2.0 * d, "random_state": 0}
    kw["kernel"] = "gaussian"
    e64 = lorak.Nystroem(**kw).fit(X)
    e32 = lorak.Nystroem(**kw).fit(X.astype(np.float32))
    G64, G32 = e64.transform(X), e32.transform(X.astype(np.float32))
    assert G32.dtype == np.float32 and G64.dtype == np.float64
    # the factor is unique up to rotation: compare the Gram matrices. float32 drops the
    # eigenvalues of W below 1e-6·max (float64: 1e-10), so ranks may differ; then the
    # float32 approximation may only be a little worse.
    K = kernel_block(e64.kernel_, X, X)
    H32 = G32.astype(np.float64)
    if e32.n_components_ == e64.n_components_:
        np.testing.assert_allclose(H32 @ H32.T, G64 @ G64.T, atol=5e-3)
    err32 = np.linalg.norm(K - H32 @ H32.T) / np.linalg.norm(K)
    err64 = np.linalg.norm(K - G64 @ G64.T) / np.linalg.norm(K)
    assert err32 <= err64 + 0.02, (err32, err64)
    ic64 = lorak.IncompleteCholesky(bandwidth=2.0 * d, n_components=5).fit(X)
    ic32 = lorak.IncompleteCholesky(bandwidth=2.0 * d, n_components=5).fit(X.astype(np.float32))
    assert ic32.G_.dtype == np.float32
    H32 = ic32.G_.astype(np.float64)
    np.testing.assert_allclose(H32 @ H32.T, ic64.G_ @ ic64.G_.T, atol=2e-3)


# ---------------------------------------------------------------------------- batch invariance

TRANSFORMERS = {
    "nystroem": lambda X, y: lorak.Nystroem(n_components=6, random_state=0).fit(X),
    "icd": lambda X, y: lorak.IncompleteCholesky(n_components=6).fit(X),
    "csi": lambda X, y: lorak.CSI(n_components=6, lookahead=3, random_state=0).fit(X, y),
    "gen-nystroem": lambda X, y: lorak.GeneralizedNystroem(n_components=6, random_state=0).fit(
        X, _semi(y, len(y) // 2)
    ),
    "kpca": lambda X, y: lorak.LowRankKernelPCA(
        lorak.Nystroem(n_components=6, random_state=0), n_components=3
    ).fit(X),
    "lssvc": lambda X, y: lorak.LSSVC(lorak.Nystroem(n_components=6, random_state=0)).fit(X, y),
    "mkl": lambda X, y: lorak.LowRankMKLClassifier(
        n_kernels=2, rank=6, max_iter=3, random_state=0
    ).fit(X, y),
}
for _name in ("MultipleKernelGeneralizedNystroem", *COMBINATIONS):
    if hasattr(lorak, _name):
        TRANSFORMERS[_name] = (
            lambda cls: (
                lambda X, y: (
                    cls(kernels=_two_kernels(), random_state=0)
                    .set_params(
                        **(
                            {"n_landmarks": 6}
                            if cls.__name__ == "MultipleKernelGeneralizedNystroem"
                            else {"n_components": 6}
                        )
                    )
                    .fit(X, _semi(y, len(y) // 2))
                )
            )
        )(getattr(lorak, _name))
for _name in ("AlignmentMKLClassifier", "GLMKLClassifier"):
    if hasattr(lorak, _name):
        TRANSFORMERS[_name] = (
            lambda cls: lambda X, y: cls(kernels=_two_kernels()).fit(X, _semi(y, len(y) // 2))
        )(getattr(lorak, _name))
_FITTED: dict = {}


def _fitted(name):
    if name not in _FITTED:
        X, y = _data(123, 50, 3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _FITTED[name] = TRANSFORMERS[name](X, y)
    return _FITTED[name]


@pytest.mark.parametrize("name", sorted(TRANSFORMERS))
@settings(max_examples=6, deadline=None, derandomize=True)
@given(seed=seeds, batch=st.integers(1, 300), row=st.integers(0, 299))
def test_row_transform_independent_of_batch(name, seed, batch, row):
    est = _fitted(name)
    method = "transform" if hasattr(est, "transform") else "decision_function"
    f = getattr(est, method)
    B = np.random.default_rng(seed).standard_normal((batch, 3))
    i = row % batch
    alone = f(B[i : i + 1])
    inside = f(B)[i : i + 1]
    np.testing.assert_allclose(alone, inside, rtol=1e-10, atol=1e-12)
    # and with a memory budget small enough to force several row chunks
    with lorak.config_context(memory_budget=2**16):
        np.testing.assert_allclose(f(B)[i : i + 1], alone, rtol=1e-10, atol=1e-12)

"""scikit-learn's kernel names, real degrees, callables and precomputed kernels."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics.pairwise import PAIRWISE_KERNEL_FUNCTIONS, pairwise_kernels

import lorak
from lorak.kernels import KERNELS, Polynomial, make_kernel


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    return rng.random((40, 5)), rng.random((7, 5))


@pytest.mark.parametrize("name", sorted(PAIRWISE_KERNEL_FUNCTIONS))
def test_every_sklearn_kernel_name_is_known(name):
    assert name in KERNELS


@pytest.mark.parametrize("name", ["chi2", "additive_chi2", "sigmoid", "cosine"])
def test_pairwise_kernels_match_sklearn(name, data):
    X, Z = data
    k = make_kernel(name).resolve(X)
    np.testing.assert_allclose(k(X, Z), pairwise_kernels(X, Z, metric=name), rtol=1e-12)
    np.testing.assert_allclose(k.diag(X), np.diag(pairwise_kernels(X, metric=name)), atol=1e-12)
    assert k(X.astype(np.float32), Z.astype(np.float32)).dtype == np.float32


def test_pairwise_kernel_parameters(data):
    X, Z = data
    k = make_kernel("chi2", gamma=0.3)
    np.testing.assert_allclose(k(X, Z), pairwise_kernels(X, Z, metric="chi2", gamma=0.3))
    k = make_kernel("sigmoid", gamma=0.2, coef0=-0.5)
    np.testing.assert_allclose(
        k(X, Z), pairwise_kernels(X, Z, metric="sigmoid", gamma=0.2, coef0=-0.5)
    )
    with pytest.raises(ValueError, match="does not take"):
        make_kernel("cosine", gamma=1.0)


def test_real_degree(data):
    X, Z = data
    k = Polynomial(degree=3.1, gamma=0.5, coef0=0.1)
    np.testing.assert_allclose(
        k(X, Z), pairwise_kernels(X, Z, metric="poly", degree=3.1, gamma=0.5, coef0=0.1)
    )
    assert Polynomial(degree=2.0).degree == 2 and isinstance(Polynomial(degree=2.0).degree, int)
    for bad in (0, -1.5, float("inf")):
        with pytest.raises(ValueError, match="degree"):
            Polynomial(degree=bad)


def test_callable_gram_evaluates_each_pair_once(data):
    X, _ = data
    calls = []

    def f(x, z):
        calls.append(1)
        return float(np.minimum(x, z).sum())

    k = make_kernel(f)
    K = k(X[:9])
    assert len(calls) == 9 * 8 // 2 + 9
    np.testing.assert_allclose(K, pairwise_kernels(X[:9], metric=f))
    # a block function is still called once per block
    kb = make_kernel(lambda A, B: A @ B.T)
    np.testing.assert_allclose(kb(X), X @ X.T)


def test_nystroem_with_indefinite_kernel_keeps_m_columns(data):
    X, _ = data
    G = lorak.Nystroem(kernel="additive_chi2", n_components=6, random_state=0).fit_transform(X)
    assert G.shape == (40, 6)
    assert np.all(np.isfinite(G))


def test_precomputed_with_fewer_landmarks_than_rows(data):
    X, Xn = data
    gamma = 0.7
    K = pairwise_kernels(X, metric="rbf", gamma=gamma)
    Kn = pairwise_kernels(Xn, X, metric="rbf", gamma=gamma)
    pre = lorak.Nystroem(kernel="precomputed", n_components=12, random_state=3).fit(K)
    ref = lorak.Nystroem(gamma=gamma, n_components=12, landmarks=pre.component_indices_).fit(X)
    # same landmarks, same factor up to a rotation: compare G Gᵀ
    G, Gr = pre.transform(K), ref.transform(X)
    np.testing.assert_allclose(G @ G.T, Gr @ Gr.T, atol=1e-8)
    Gn, Gnr = pre.transform(Kn), ref.transform(Xn)
    np.testing.assert_allclose(Gn @ G.T, Gnr @ Gr.T, atol=1e-8)
    assert pre.__sklearn_tags__().input_tags.pairwise
    assert not lorak.Nystroem().__sklearn_tags__().input_tags.pairwise
    with pytest.raises(ValueError, match="square"):
        lorak.Nystroem(kernel="precomputed", n_components=3).fit(K[:, :20])
    with pytest.raises(ValueError, match="landmarks must be"):
        lorak.Nystroem(kernel="precomputed", n_components=3, landmarks="kmeans").fit(K)
    with pytest.raises(ValueError, match="Don't pass gamma"):
        lorak.Nystroem(kernel="precomputed", n_components=3, gamma=1.0).fit(K)


def test_partial_fit_with_fixed_landmarks_equals_one_shot(data):
    X, _ = data
    Z = X[[1, 5, 9, 17, 30]]
    one = lorak.Nystroem(n_components=5, landmarks=Z, gamma=0.5).fit(X)
    est = lorak.Nystroem(n_components=5, landmarks=Z, gamma=0.5)
    for batch in np.array_split(X, 4):
        est.partial_fit(batch)
    np.testing.assert_allclose(est.transform(X), one.transform(X), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="features"):
        est.partial_fit(X[:, :3])


# ------------------------------------------------------------------ issue 30, items 1 and 2
#: scikit-learn's parameters for every name it shares with lorak (explicit values; the
#: defaults are checked too)
_SK_PARAMS = {
    "additive_chi2": {},
    "chi2": {"gamma": 0.8},
    "cosine": {},
    "laplacian": {"gamma": 0.5},
    "linear": {},
    "poly": {"gamma": 0.3, "degree": 2, "coef0": 1.5},
    "polynomial": {"gamma": 0.3, "degree": 3, "coef0": 0.5},
    "rbf": {"gamma": 0.7},
    "sigmoid": {"gamma": 0.2, "coef0": -0.3},
}


def _abs_psd(K):
    """U |Λ| Uᵀ: what a Nyström factor at m = n reproduces of an indefinite K (its
    eigenvalues by magnitude; scikit-learn's Nystroem gives the same)."""
    lam, U = np.linalg.eigh(0.5 * (K + K.T))
    return (U * np.abs(lam)) @ U.T


def test_shared_names_table_is_complete():
    assert set(_SK_PARAMS) == set(PAIRWISE_KERNEL_FUNCTIONS)


@pytest.mark.parametrize("explicit", [True, False], ids=["params", "defaults"])
@pytest.mark.parametrize("name", sorted(PAIRWISE_KERNEL_FUNCTIONS))
def test_every_shared_name_is_sklearns_kernel_at_m_equals_n(name, explicit):
    """At m = n the Nyström factor reproduces the kernel matrix (PSD kernels) or its
    magnitude U|Λ|Uᵀ (sigmoid, additive χ²): G Gᵀ against pairwise_kernels."""
    X = np.random.default_rng(0).random((60, 5))  # non-negative: the χ² kernels need it
    params = _SK_PARAMS[name] if explicit else {}
    est = lorak.Nystroem(kernel=name, n_components=60, random_state=0, **params)
    G = est.fit_transform(X)
    K = pairwise_kernels(X, metric=name, **params)
    psd = getattr(KERNELS[name], "psd", True)
    ref = K if psd else _abs_psd(K)
    err = np.linalg.norm(G @ G.T - ref) / np.linalg.norm(ref)
    assert err < 1e-10, f"{name}: relative Frobenius error {err:.3g}"
    # the kernel object itself, off the training rows
    Z = np.random.default_rng(1).random((7, 5))
    k = est.kernel_
    if explicit:
        assert k == make_kernel(name, **params).resolve(X)
    np.testing.assert_allclose(
        k(Z, X), pairwise_kernels(Z, X, metric=name, **params), rtol=1e-10, atol=1e-12
    )


def test_laplacian_is_l1_and_laplacian_l2_is_the_papers_kernel():
    from sklearn.metrics.pairwise import laplacian_kernel

    from lorak.kernels import Laplacian

    X = np.random.default_rng(0).standard_normal((60, 5))
    # the issue's reproducer
    G = lorak.Nystroem(n_components=60, kernel="laplacian", gamma=0.5).fit_transform(X)
    K = laplacian_kernel(X, gamma=0.5)
    assert np.linalg.norm(G @ G.T - K) / np.linalg.norm(K) < 1e-10
    assert make_kernel("laplacian", gamma=0.5) == Laplacian(gamma=0.5, norm="l1")
    # the papers' exp(−‖x − z‖₂ / σ) under its own name, the object's default
    assert make_kernel("laplacian_l2", bandwidth=2.0) == Laplacian(bandwidth=2.0)
    D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    np.testing.assert_allclose(make_kernel("laplacian_l2", bandwidth=2.0)(X), np.exp(-D / 2.0))
    assert "laplacian_l2" not in PAIRWISE_KERNEL_FUNCTIONS
    # the name fixes the norm
    for name in ("laplacian", "laplacian_l2"):
        with pytest.raises(ValueError, match=r"does not take norm.*laplacian"):
            make_kernel(name, kernel_params={"norm": "l1"})
    # Nystroem's scikit-learn default γ = 1/n_features, for both names
    for name, norm in (("laplacian", "l1"), ("laplacian_l2", "l2")):
        est = lorak.Nystroem(kernel=name, n_components=10, random_state=0).fit(X)
        assert est.kernel_ == Laplacian(gamma=1 / 5, norm=norm)


def test_fractional_degree_is_sklearns_power_or_refused():
    rng = np.random.default_rng(0)
    Xp = rng.random((30, 4))  # γ⟨x, z⟩ + c₀ ≥ 0: scikit-learn's kernel, well defined
    G = lorak.Nystroem(kernel="poly", degree=2.5, n_components=30).fit_transform(Xp)
    K = pairwise_kernels(Xp, metric="poly", degree=2.5)
    assert np.all(np.isfinite(G))
    assert np.linalg.norm(G @ G.T - K) / np.linalg.norm(K) < 1e-8
    # a negative base has no real power (scikit-learn gives NaN): a clear error, at fit
    # and at transform, never NaN or a LinAlgError from inside the eigensolver
    Xn = 3.0 * rng.standard_normal((30, 4))
    with pytest.raises(ValueError, match=r"non-integer degree=2\.5.*negative"):
        lorak.Nystroem(kernel="poly", degree=2.5, n_components=10).fit(Xn)
    est = lorak.Nystroem(kernel="poly", degree=2.5, n_components=10, random_state=0).fit(Xp)
    with pytest.raises(ValueError, match="non-integer degree"):
        est.transform(-3.0 * Xp)
    # integer degrees take any sign
    assert np.all(
        np.isfinite(lorak.Nystroem(kernel="poly", degree=3, n_components=10).fit_transform(Xn))
    )


def test_landmark_kernel_that_is_not_finite_is_a_clear_error():
    from lorak.decompose import nystrom_normalization
    from lorak.kernels import Kernel

    class Overflowing(Kernel):  # a user's kernel that is not finite on some pairs
        def _block(self, X, Zd, aux, dtype, out=None):
            K = np.asarray(X, dtype=dtype) @ Zd.T
            K[K > 1.5] = np.inf
            if out is None:
                return K
            out[...] = K
            return out

        def diag(self, X):
            return np.einsum("ij,ij->i", X, X)

    X = np.random.default_rng(0).random((20, 4)) + 1.0
    with pytest.raises(ValueError, match="W holds NaN or infinity"):
        lorak.Nystroem(kernel=Overflowing(), n_components=5, random_state=0).fit(X)
    # (γ⟨x, z⟩ + 1)^400 overflows float64: the polynomial kernel says so itself
    with pytest.raises(ValueError, match="overflow"):
        lorak.Nystroem(kernel="poly", degree=400, gamma=10.0, n_components=5).fit(X)
    W = np.eye(3)
    W[0, 1] = W[1, 0] = np.nan
    for psd in (True, False):
        with pytest.raises(ValueError, match=r"W holds NaN or infinity \(first at W\[0, 1\]"):
            nystrom_normalization(W, psd=psd)


@pytest.mark.parametrize("name", ["rbf", "laplacian", "poly", "polynomial", "sigmoid"])
def test_gamma_none_in_kernel_params_is_sklearns_default(name):
    """kernel_params={"gamma": None} is no gamma: scikit-learn's 1/n_features, as
    without the key (it was read as given and left the kernel's own default)."""
    X = np.random.default_rng(0).random((60, 5))
    G = lorak.Nystroem(
        kernel=name, kernel_params={"gamma": None}, n_components=60, random_state=0
    ).fit_transform(X)
    K = pairwise_kernels(X, metric=name)
    psd = getattr(KERNELS[name], "psd", True)
    ref = K if psd else _abs_psd(K)
    assert np.linalg.norm(G @ G.T - ref) / np.linalg.norm(ref) < 1e-10

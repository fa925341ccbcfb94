"""SimpleNPKL on new rows: the out-of-sample extensions against dense references."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.cluster import KMeans
from sklearn.model_selection import train_test_split
from sklearn.neighbors import NearestNeighbors
from sklearn.preprocessing import StandardScaler

from lorak import SimpleNPKL
from lorak.constraints import constraint_matrix, from_labels
from lorak.datasets import load
from lorak.learn import _npkl_extend as ext
from lorak.metrics import pairwise_cluster_accuracy


@pytest.fixture(scope="module")
def iris_split():
    X, y = load("iris")
    X = StandardScaler().fit_transform(X)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    c = from_labels(ytr, ratio=0.7, random_state=0)
    return Xtr, Xte, ytr, yte, c


def _dense_A(model, n):
    """A = W_T − L densely, from the fitted model (small n only)."""
    pairs = np.concatenate([model.must_link_, model.cannot_link_])
    signs = np.r_[np.ones(len(model.must_link_)), -np.ones(len(model.cannot_link_))]
    w = model.C_ * np.ones(len(pairs)) if model.alpha_ is None else model.alpha_
    return constraint_matrix(pairs, signs, n, weights=w).toarray() - model.laplacian_.toarray()


@pytest.mark.parametrize("extension", ["graph", "ridge"])
def test_transform_applies_one_rule_whatever_the_storage(iris_split, extension):
    """transform extends every row, training rows included: the answer depends on the
    values of a row, not on its container, its signed zeros, order or duplicates; the
    training rows' learned embedding is embedding_ / fit_transform."""
    Xtr, Xte, _, _, c = iris_split
    m = SimpleNPKL(extension=extension, random_state=0).fit(Xtr, **c)
    assert m.fit_transform(Xtr, **c) is m.embedding_
    ref = m._extend(Xtr)
    np.testing.assert_array_equal(m.transform(Xtr), ref)
    np.testing.assert_array_equal(m.transform(Xtr.copy()), ref)
    # the same rows in a CSR container, with −0.0 for 0.0, in Fortran order
    Xz = Xtr.copy()
    Xz[Xz == 0] = -0.0
    Xz[0, 0], Xz[1, 1] = 0.0, -0.0
    Xtr2 = Xtr.copy()
    Xtr2[0, 0], Xtr2[1, 1] = 0.0, 0.0
    ref2 = m.transform(Xtr2)
    scale = np.abs(ref2).max()
    for same in (sp.csr_matrix(Xtr2), Xz, np.asfortranarray(Xtr2)):
        np.testing.assert_allclose(m.transform(same), ref2, rtol=1e-10, atol=1e-12 * scale)
    # a batch mixing training rows (in another order) and new rows: row by row the same
    mix = np.vstack([Xte[:4], Xtr[[7, 3]], Xte[4:6]])
    out = m.transform(mix)
    np.testing.assert_allclose(out[4:6], ref[[7, 3]], rtol=1e-10, atol=1e-12 * scale)
    np.testing.assert_allclose(out[:4], m.transform(Xte[:4]), rtol=1e-10, atol=1e-12 * scale)
    assert out.shape == (8, m.n_components_)
    assert np.all(np.isfinite(out))
    # the extension of the training rows is close to, not equal to, the embedding
    err = np.linalg.norm(ref - m.embedding_) / np.linalg.norm(m.embedding_)
    assert 0 < err < 0.8


@pytest.mark.parametrize("loss", ["linear", "squared_hinge"])
def test_extension_eigenvalues_are_those_of_A(iris_split, loss):
    Xtr, _, _, _, c = iris_split
    m = SimpleNPKL(loss=loss, random_state=0, max_iter=30).fit(Xtr, **c)
    w_dense = np.linalg.eigvalsh(_dense_A(m, Xtr.shape[0]))[::-1][: m.n_components_]
    np.testing.assert_allclose(m.extension_eigenvalues_, w_dense, rtol=1e-7, atol=1e-9)
    assert np.all(m.extension_eigenvalues_ > 0)


def test_graph_extension_reproduces_unconstrained_training_rows(iris_split):
    Xtr, _, _, _, c = iris_split
    m = SimpleNPKL(extension="graph", random_state=0).fit(Xtr, **c)
    n = Xtr.shape[0]
    touched = np.zeros(n, dtype=bool)
    touched[np.concatenate([m.must_link_, m.cannot_link_]).ravel()] = True
    # S from L = I − D^{-1/2} S D^{-1/2}: the off-diagonal pattern of L
    Lc = sp.csr_matrix(m.laplacian_)
    free = np.flatnonzero(~touched)
    assert free.size > 5
    for i in free[:10]:
        row = Lc.getrow(i)
        nb = row.indices[(row.indices != i) & (row.data != 0)]
        got = ext.graph_extension(
            nb[None, :], m.embedding_, m._degrees, m.extension_eigenvalues_,
            row_degrees=np.array([nb.size]),
        )  # fmt: skip
        np.testing.assert_allclose(got[0], m.embedding_[i], rtol=1e-7, atol=1e-10)


def test_graph_extension_equals_dense_formula(iris_split):
    Xtr, Xte, _, _, c = iris_split
    m = SimpleNPKL(extension="graph", random_state=0, n_neighbors=6).fit(Xtr, **c)
    n = Xtr.shape[0]
    # dense: S_x (m × n) 0/1 on the 6 nearest training rows, u = S_x D^{-1/2} U / (√d_x (1 + w))
    nb = NearestNeighbors(n_neighbors=6).fit(Xtr).kneighbors(Xte, return_distance=False)
    Sx = np.zeros((len(Xte), n))
    np.put_along_axis(Sx, nb, 1.0, axis=1)
    A = _dense_A(m, n)
    w, U = np.linalg.eigh(A)
    w, U = w[::-1][: m.n_components_], U[:, ::-1][:, : m.n_components_]
    lam = m.eigenvalues_
    d = m._degrees
    ref_u = (Sx / np.sqrt(6.0)) @ (U / np.sqrt(d)[:, None]) / (1.0 + w)
    ref = ref_u * np.sqrt(lam)
    got = m.transform(Xte)
    # eigenvector signs are a convention: compare column by column up to sign
    for j in range(m.n_components_):
        s = np.sign(U[:, j] @ m.embedding_[:, j])
        np.testing.assert_allclose(got[:, j], s * ref[:, j], rtol=1e-6, atol=1e-9)


def test_ridge_map_against_dense_solution():
    rng = np.random.default_rng(0)
    Phi = rng.standard_normal((60, 12))
    B = rng.standard_normal((12, 3))
    # V in the span of Φ: a tiny ridge recovers the map
    np.testing.assert_allclose(ext.ridge_map(Phi, Phi @ B, 1e-12), B, rtol=1e-6, atol=1e-8)
    V = rng.standard_normal((60, 3))
    a = 0.1
    ridge = a * np.trace(Phi.T @ Phi) / 12
    ref = np.linalg.solve(Phi.T @ Phi + ridge * np.eye(12), Phi.T @ V)
    np.testing.assert_allclose(ext.ridge_map(Phi, V, a), ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("extension", ["graph", "ridge"])
def test_held_out_clustering_close_to_training(iris_split, extension):
    Xtr, Xte, ytr, yte, c = iris_split
    m = SimpleNPKL(extension=extension, random_state=0).fit(Xtr, **c)
    km = KMeans(3, n_init=10, random_state=0).fit(m.embedding_)
    train = pairwise_cluster_accuracy(ytr, km.labels_)
    test = pairwise_cluster_accuracy(yte, km.predict(m.transform(Xte)))
    assert train > 0.85
    assert test > train - 0.06


def test_memory_is_linear_in_n():
    rng = np.random.default_rng(0)
    n = 400
    X = rng.standard_normal((n, 3))
    y = (X[:, 0] > 0).astype(int)
    m = SimpleNPKL(random_state=0).fit(X, **from_labels(y, ratio=0.8, random_state=0))
    m.transform(rng.standard_normal((5, 3)))
    for name, v in vars(m).items():
        size = v.size if isinstance(v, np.ndarray) else getattr(v, "nnz", 0)
        assert size < n * n / 10, name


@pytest.mark.parametrize("extension", ["graph", "ridge"])
def test_sparse_input_and_bad_extension(iris_split, extension):
    Xtr, Xte, _, _, c = iris_split
    m = SimpleNPKL(extension=extension, random_state=0).fit(sp.csr_matrix(Xtr), **c)
    dense = SimpleNPKL(extension=extension, random_state=0).fit(Xtr, **c)
    np.testing.assert_allclose(
        m.transform(sp.csr_matrix(Xtr)), m.transform(Xtr), rtol=1e-8, atol=1e-10
    )
    np.testing.assert_allclose(
        m.transform(sp.csr_matrix(Xte)), dense.transform(Xte), rtol=1e-8, atol=1e-10
    )
    with pytest.raises(ValueError, match="extension"):
        SimpleNPKL(extension="nystrom").fit(Xtr, **c)
    with pytest.raises(ValueError, match="features"):
        dense.transform(Xte[:, :2])


@pytest.mark.parametrize("extension", ["graph", "ridge"])
def test_extension_does_not_depend_on_units(iris_split, extension):
    Xtr, Xte, _, _, c = iris_split
    a = SimpleNPKL(extension=extension, random_state=0).fit(Xtr, **c)
    b = SimpleNPKL(extension=extension, random_state=0).fit(1000.0 * Xtr, **c)
    np.testing.assert_allclose(
        b._extend(1000.0 * Xte), a._extend(Xte), rtol=1e-6, atol=1e-9 * np.abs(a.embedding_).max()
    )


def test_the_ridge_extension_is_ridge_map_on_the_published_settings():
    """SimpleNPKL(extension="ridge") maps a row by ridge_map on RBF Nyström features
    with RIDGE_EXTENSION_LANDMARKS landmarks and the ridge RIDGE_EXTENSION_ALPHA."""
    from lorak import Nystroem
    from lorak.kernels import scale_gamma
    from lorak.learn import RIDGE_EXTENSION_ALPHA, RIDGE_EXTENSION_LANDMARKS, ridge_map

    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 260)  # more rows than landmarks: the constant is in play
    X = rng.normal(size=(260, 4)) + 2.0 * y[:, None]
    new = rng.normal(size=(15, 4)) + 2.0
    model = SimpleNPKL(extension="ridge", random_state=0).fit(
        X, **from_labels(y, ratio=0.3, random_state=0)
    )
    assert RIDGE_EXTENSION_LANDMARKS < X.shape[0]
    feats = Nystroem(
        n_components=RIDGE_EXTENSION_LANDMARKS, gamma=scale_gamma(X), random_state=0
    ).fit(X)
    W = ridge_map(feats.transform(X), model.embedding_, RIDGE_EXTENSION_ALPHA)
    np.testing.assert_allclose(
        model.transform(new), feats.transform(new) @ W, rtol=1e-9, atol=1e-12
    )

"""scikit-learn's output API and tags on lorak's transformers (issue 21, item 6)."""

from __future__ import annotations

import numpy as np
import pytest

from lorak import ExactEigen, IncompleteCholesky, Nystroem

TRANSFORMERS = [
    Nystroem(n_components=8, random_state=0),
    Nystroem(n_components=8, landmarks="kmeans", random_state=0),
    Nystroem(n_components=8, landmarks="rls", random_state=0),
    Nystroem(kernel="chi2", n_components=8, random_state=0),
    IncompleteCholesky(n_components=8),
    ExactEigen(n_components=8),
]


@pytest.fixture
def X():
    return np.random.default_rng(0).random((60, 4))


@pytest.mark.parametrize("est", TRANSFORMERS, ids=repr)
def test_set_output_pandas(est, X):
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    out = est.set_output(transform="pandas").fit(df).transform(df)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == list(est.get_feature_names_out())
    assert out.shape[0] == 60 and out.shape[1] == len(est.get_feature_names_out())
    assert out.index.equals(df.index)
    est.set_output(transform="default")
    np.testing.assert_allclose(est.transform(df), out.to_numpy())


@pytest.mark.parametrize("est", TRANSFORMERS, ids=repr)
def test_tags(est):
    tags = est.__sklearn_tags__()
    assert tags.transformer_tags.preserves_dtype == ["float64", "float32"]
    assert tags.input_tags.pairwise is False


def test_precomputed_is_pairwise(X):
    K = np.exp(-((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    est = Nystroem(kernel="precomputed", n_components=10, random_state=0)
    assert est.__sklearn_tags__().input_tags.pairwise
    G = est.fit_transform(K)
    assert G.shape == (60, 10)
    assert G.dtype == np.float64
    assert est.fit_transform(K.astype(np.float32)).dtype == np.float32

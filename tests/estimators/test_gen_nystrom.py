"""The GeneralizedNystroem estimator: responses in any units, and the prior option."""

import numpy as np
import pytest
from sklearn.datasets import make_sparse_uncorrelated

from lorak import GeneralizedNystroem


@pytest.mark.parametrize("lam", ["auto", 0.1])
@pytest.mark.parametrize("scale", [1e-13, 1e-150])
def test_responses_in_small_units_give_the_same_kernel(lam, scale):
    # y ~ 1e-13 or y·1e-150 used to be refused as "constant" (an absolute threshold)
    X, y = make_sparse_uncorrelated(120, n_features=6, random_state=0)
    yu = np.full(y.size, np.nan)
    yu[:40] = y[:40]
    kw = dict(n_components=15, lam=lam, random_state=0)
    ref = GeneralizedNystroem(**kw).fit(X, yu)
    got = GeneralizedNystroem(**kw).fit(X, yu * scale)
    assert got.lam_ == ref.lam_ and got.target_type_ == "regression"
    Q, R = got.transform(X), ref.transform(X)
    K = R @ R.T
    np.testing.assert_allclose(Q @ Q.T, K, atol=1e-10 * np.abs(K).max())

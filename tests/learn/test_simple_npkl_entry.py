"""SimpleNPKL's one entry, lorak.learn.fit_simple_npkl."""

import numpy as np
import pytest

from lorak import SimpleNPKL
from lorak.constraints import check_constraints, from_labels
from lorak.learn import fit_simple_npkl


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0, 0.3, (40, 2)), rng.normal(2, 0.3, (40, 2))])
    y = np.repeat([0, 1], 40)
    return X, from_labels(y, ratio=0.5, random_state=0)


def test_fit_simple_npkl_is_the_estimator_fit(data):
    X, c = data
    est = SimpleNPKL(active_constraints=0.5, max_rank="pataki", random_state=0).fit(X, **c)
    pairs, signs = check_constraints(c["must_link"], c["cannot_link"], 80).pairs()
    fit = fit_simple_npkl(
        X, pairs, signs, max_rank="pataki", n_keep=round(0.5 * len(pairs)),
        rng=np.random.default_rng(0),
    )  # fmt: skip
    assert fit.C == est.C_ and fit.max_rank == est.max_rank_ < 10
    np.testing.assert_array_equal(fit.selected, est.selected_)
    np.testing.assert_array_equal(fit.result.embedding, est.embedding_)
    assert fit.degeneracy == est.degeneracy_


def test_fit_simple_npkl_refuses_a_zero_kernel():
    # one connected kNN graph and cannot-links only: at a tiny C, A = C·T − L is
    # negative definite (L's null vector D^{1/2}1 meets T's negative quadratic form)
    X = np.random.default_rng(0).standard_normal((60, 2))
    pairs, signs = check_constraints(None, [[0, 1], [2, 3], [4, 5]], 60).pairs()
    with pytest.raises(ValueError, match="the learned kernel is zero"):
        fit_simple_npkl(X, pairs, signs, C=1e-6, n_neighbors=10, rng=np.random.default_rng(0))

"""CSI's one entry, lorak.learn.fit_csi."""

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

from lorak.learn import csi, fit_csi


def test_fit_csi_refuses_an_undefined_prediction_term_and_is_csi_otherwise():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 3))
    K = rbf_kernel(X, gamma=0.5)
    diag, column = np.diag(K).copy(), lambda i: K[:, i]
    with pytest.raises(ValueError, match="constant on the labeled rows"):
        fit_csi(diag, column, np.ones((80, 1)), 5)
    with pytest.raises(ValueError, match="zero on the labeled rows"):
        fit_csi(diag, column, np.zeros((80, 1)), 5, centering=False)
    assert fit_csi(diag, column, np.ones((80, 1)), 5, kappa=0.0).G.shape == (80, 5)
    Y = X[:, :1] ** 2
    a, b = fit_csi(diag, column, Y, 6, lookahead=5), csi(diag, column, Y, 6, lookahead=5)
    np.testing.assert_array_equal(a.pivots, b.pivots)
    np.testing.assert_array_equal(a.G, b.G)

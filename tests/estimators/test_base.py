"""The shared helpers of ``lorak.estimators._base``."""

from sklearn.base import clone

import lorak
from lorak.estimators._base import store_params


class _ScaledNystroem(lorak.Nystroem):
    """A user's subclass: its own signature, the parent's arguments passed on."""

    def __init__(self, n_components=10, *, scale=2.0, random_state=None):
        super().__init__(n_components=n_components, random_state=random_state)
        store_params(self, locals())


def test_store_params_stores_the_arguments_of_the_calling_init():
    est = _ScaledNystroem(n_components=5, scale=3.0)
    assert (est.n_components, est.scale, est.random_state) == (5, 3.0, None)
    assert est.kernel == "rbf"  # the parent's own arguments, stored by its __init__
    assert "self" not in vars(est) and "__class__" not in vars(est)
    assert est.get_params() == {"n_components": 5, "scale": 3.0, "random_state": None}
    assert clone(est).get_params() == est.get_params()


def test_store_params_keeps_values_unchanged():
    grid = [1.0, 10.0]
    est = lorak.GeneralizedNystroem(lam_grid=grid)
    assert est.lam_grid is grid  # scikit-learn's clone checks identity
    assert vars(est) == est.get_params(deep=False)

"""How every estimator stores its parameters: explicitly, as scikit-learn does."""

import ast
import inspect
import textwrap

import pytest
from sklearn.base import BaseEstimator, clone

import lorak

EXPORTED = {
    name: obj
    for name in lorak.__all__
    if isinstance(obj := getattr(lorak, name), type) and issubclass(obj, BaseEstimator)
}


def _parameters(cls) -> list[str]:
    return [name for name in inspect.signature(cls.__init__).parameters if name != "self"]


def _init_statements(cls) -> list[ast.stmt]:
    """The statements of ``cls.__init__`` (the class that defines it), docstring aside."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls.__init__)))
    body = tree.body[0].body
    if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return body


@pytest.mark.parametrize("name", sorted(EXPORTED))
def test_init_assigns_each_parameter_to_itself_in_signature_order(name):
    """The whole body of each ``__init__`` is ``self.p = p``, one line per parameter in
    the signature's order: a parameter can be followed from ``__init__`` to its use."""
    expected = [f"self.{p} = {p}" for p in _parameters(EXPORTED[name])]
    assert [ast.unparse(s) for s in _init_statements(EXPORTED[name])] == expected


@pytest.mark.parametrize("name", sorted(EXPORTED))
def test_init_stores_every_argument_unchanged(name):
    """Nothing validated or converted in ``__init__``: each argument is stored as the very
    object passed (scikit-learn's ``clone`` checks identity)."""
    cls = EXPORTED[name]
    values = {p: object() for p in _parameters(cls)}
    est = cls(**values)
    assert all(getattr(est, p) is v for p, v in values.items())
    assert est.get_params(deep=False) == values


class _ScaledNystroem(lorak.Nystroem):
    """A user's subclass: its own signature, the parent's arguments passed on."""

    def __init__(self, n_components=10, *, scale=2.0, random_state=None):
        super().__init__(n_components=n_components, random_state=random_state)
        self.n_components = n_components
        self.scale = scale
        self.random_state = random_state


def test_a_subclass_with_its_own_signature_clones():
    est = _ScaledNystroem(n_components=5, scale=3.0)
    assert (est.n_components, est.scale, est.random_state) == (5, 3.0, None)
    assert est.kernel == "rbf"  # the parent's own arguments, stored by its __init__
    assert est.get_params() == {"n_components": 5, "scale": 3.0, "random_state": None}
    assert clone(est).get_params() == est.get_params()


def test_stored_values_are_the_objects_passed():
    grid = [1.0, 10.0]
    est = lorak.GeneralizedNystroem(lam_grid=grid)
    assert est.lam_grid is grid  # scikit-learn's clone checks identity
    assert vars(est) == est.get_params(deep=False)

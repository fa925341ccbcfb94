"""GeneralizedNystroem on a graph prior with (t, λ) chosen together (``prior_gamma``),
and the graph factor's γ changed after its fit (``transform_at``, ``use_gamma``)."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_moons

from lorak import GeneralizedNystroem, GraphRegularizedFactor, Nystroem
from lorak.kernels import Gaussian
from lorak.learn._gen_nystrom import smooth

TS = (0.0, 0.1, 1.0, 10.0)


@pytest.fixture(scope="module")
def moons():
    X, y = make_moons(240, noise=0.12, random_state=1)
    rng = np.random.default_rng(0)
    lab = np.concatenate([rng.choice(np.flatnonzero(y == c), 20, replace=False) for c in (0, 1)])
    yu = np.full(y.size, -1)
    yu[lab] = y[lab]
    return X, yu


def _inner(m=20):
    return Nystroem(kernel=Gaussian(bandwidth=0.5), n_components=m, random_state=0)


def _graph(m=20, **kw):
    kw.setdefault("keep_statistics", True)
    return GraphRegularizedFactor(_inner(m), n_anchors=60, random_state=0, **kw)


def _kernel(est, X):
    Q = est.transform(X)
    return Q @ Q.T


def _close(A, B, rel):
    np.testing.assert_allclose(A, B, atol=rel * np.abs(B).max())


# ------------------------------------------------------------ the graph factor's γ


@pytest.mark.parametrize("n_components", ["auto", None, 7])
def test_transform_at_and_use_gamma_are_the_factor_fitted_with_that_gamma(moons, n_components):
    X, yu = moons
    fitted = _graph(n_components=n_components).fit(X, yu)
    for t in TS:
        ref = _graph(n_components=n_components, gamma=t).fit(X, yu)
        np.testing.assert_array_equal(fitted.transform_at(X, t), ref.transform(X))
    rows = fitted.transform_at(X[:5], list(TS))
    assert len(rows) == len(TS)
    for t, R in zip(TS, rows, strict=True):
        np.testing.assert_array_equal(
            R, _graph(n_components=n_components, gamma=t).fit(X, yu).transform(X[:5])
        )
    ref = _graph(n_components=n_components, gamma=1.0).fit(X, yu)
    fitted.use_gamma(1.0)
    np.testing.assert_array_equal(fitted.transform(X), ref.transform(X))
    for name in ("gamma_", "laplacian_weight_", "rank_", "n_components_", "mean_sq_norm_"):
        assert getattr(fitted, name) == getattr(ref, name), name
    assert fitted.penalty_ is None
    assert fitted.gamma_candidates()[0] == 0.0 and len(fitted.gamma_candidates()) > 1


def test_a_given_rank_is_the_factor_with_that_many_directions(moons):
    X, yu = moons
    fitted = _graph().fit(X, yu)
    for t in (0.0, 1.0):
        ref = _graph(n_components=6, gamma=t).fit(X, yu)
        np.testing.assert_array_equal(fitted.transform_at(X, t, rank=6), ref.transform(X))
    fitted.use_gamma(1.0, rank=6)
    np.testing.assert_array_equal(fitted.transform(X), ref.transform(X))
    assert fitted.rank_ == 6 == fitted.n_components_
    assert fitted.transform_at(X, 1.0, rank=10**6).shape[1] == 20  # at most m
    with pytest.raises(ValueError, match="rank must be"):
        fitted.transform_at(X, 1.0, rank=0)


def test_gamma_zero_at_full_rank_is_the_inner_factor_exactly(moons):
    X, yu = moons
    g = _graph().fit(X, yu)
    G = g.factor_.transform(X)
    np.testing.assert_array_equal(g.transform_at(X, 0.0), G)
    np.testing.assert_array_equal(g.use_gamma(0.0).transform(X), G)


def test_changing_gamma_checks_its_input(moons):
    X, yu = moons
    with pytest.raises(Exception, match="fitted"):
        _graph().transform_at(X, 1.0)
    g = _graph().fit(X, yu)
    for bad in (-1.0, np.nan, np.inf, "auto", True):
        with pytest.raises(ValueError, match="gamma must be a number"):
            g.transform_at(X, bad)
        with pytest.raises(ValueError, match="gamma must be a number"):
            g.use_gamma(bad)
    with pytest.raises(ValueError, match="empty"):
        g.transform_at(X, [])
    with pytest.raises(AttributeError, match="keep_statistics=True"):
        _graph(keep_statistics=False).fit(X, yu).transform_at(X, 1.0)
    assert GraphRegularizedFactor().fit(X, yu)._deformation is None  # off by default
    with pytest.raises(ValueError, match="keep_statistics must be"):
        _graph(keep_statistics="yes").fit(X, yu)


# ------------------------------------------------------------ the estimator


def _gn(prior, **kw):
    return GeneralizedNystroem(prior=prior, random_state=0, **kw)


def test_grid_restricted_to_zero_is_generalized_nystroem_on_the_inner_factor(moons):
    X, yu = moons  # 40 labeled rows, m = 20: the l ≥ m problem, the same code path
    joint = _gn(_graph(n_components=None), prior_gamma=[0.0]).fit(X, yu)
    plain = _gn(_inner()).fit(X, yu)
    assert joint.prior_gamma_ == 0.0 and joint.lam_ == plain.lam_
    np.testing.assert_array_equal(joint.prior_gamma_cv_errors_[0], plain.cv_errors_)
    _close(_kernel(joint, X), _kernel(plain, X), 1e-10)


def test_grid_restricted_to_zero_with_more_features_than_labels(moons):
    # m = 60 > 40 labeled rows: the joint search solves on the rows' span; with tight
    # tolerances the kernel is plain GN's on the inner factor
    X, yu = moons
    kw = dict(lam=0.1, tol=1e-10, max_iter=20000)
    joint = _gn(_graph(60, n_components=None), prior_gamma=[0.0], **kw).fit(X, yu)
    plain = _gn(_inner(60), **kw).fit(X, yu)
    _close(_kernel(joint, X), _kernel(plain, X), 1e-6)


def test_infinite_lambda_is_the_graph_factor_at_the_chosen_gamma(moons):
    X, yu = moons
    joint = _gn(_graph(n_components=None), prior_gamma=TS, lam=np.inf).fit(X, yu)
    t = joint.prior_gamma_
    assert t in TS and joint.lam_ == np.inf
    ref = _graph(n_components=None, gamma=t).fit(X, yu)
    _close(_kernel(joint, X), _kernel(ref, X), 1e-10)
    assert joint.prior_.gamma_ == t
    assert joint.prior_gamma_cv_errors_.shape == (len(TS), 1)


@pytest.mark.parametrize("n_components", [None, "auto", 5])
def test_the_joint_choice_equals_the_best_cell_of_separate_fits(moons, n_components):
    X, yu = moons
    joint = _gn(_graph(n_components=n_components), prior_gamma=TS).fit(X, yu)
    # every t at the rank the prior chose with its own γ ("auto": by leave-one-out)
    r = joint.prior_.rank_
    assert r == {None: 20, 5: 5}.get(n_components, r)
    table = []
    for t in TS:  # each t fitted on its own, its λ by the same folds (same random_state)
        sep = _gn(_graph(n_components=r, gamma=t)).fit(X, yu)
        np.testing.assert_array_equal(sep.lam_grid_, joint.lam_grid_)
        table.append(sep.cv_errors_)
    table = np.array(table)
    np.testing.assert_array_equal(joint.prior_gamma_cv_errors_, table)
    np.testing.assert_array_equal(joint.prior_gamma_grid_, TS)
    # the chosen cell has the lowest smoothed error (the hinge loss only breaks ties)
    sm = np.stack([smooth(row) for row in table * 40])
    i = TS.index(joint.prior_gamma_)
    g = int(np.flatnonzero(joint.lam_grid_ == joint.lam_)[0])
    assert np.isclose(sm[i, g], sm.min())
    # and the joint model is the separate fit at that cell
    best = _gn(_graph(n_components=r, gamma=joint.prior_gamma_), lam=joint.lam_).fit(X, yu)
    _close(_kernel(joint, X), _kernel(best, X), 1e-8)
    np.testing.assert_array_equal(joint.cv_errors_, table[i])


def test_joint_on_the_prior_grid_and_the_sequential_default(moons):
    X, yu = moons
    joint = _gn(_graph(), prior_gamma="joint").fit(X, yu)
    grid = joint.prior_.gamma_candidates()
    np.testing.assert_array_equal(joint.prior_gamma_grid_, grid)
    assert joint.prior_gamma_cv_errors_.shape == (len(grid), joint.lam_grid_.size)
    assert joint.prior_gamma_ in grid
    seq = _gn(_graph()).fit(X, yu)
    assert GeneralizedNystroem().prior_gamma == "sequential"
    assert seq.prior_gamma_ == seq.prior_.gamma_ and seq.prior_gamma_grid_ is None
    assert seq.prior_gamma_cv_errors_ is None
    assert _gn(_inner()).fit(X, yu).prior_gamma_ is None


def test_joint_search_with_responses(moons):
    X, yu = moons
    rng = np.random.default_rng(0)
    y = X[:, 0] + 0.1 * rng.standard_normal(X.shape[0])
    yr = np.where(yu >= 0, y, np.nan)
    g = _gn(_graph(), prior_gamma=TS).fit(X, yr)
    assert g.target_type_ == "regression" and g.prior_gamma_ in TS
    assert np.all(np.isfinite(g.transform(X)))


def test_bad_prior_gamma_gets_clear_errors(moons):
    X, yu = moons
    with pytest.raises(ValueError, match=r"prior_gamma='joint'.*Nystroem lacks gamma_candidates"):
        _gn(_inner(), prior_gamma="joint").fit(X, yu)
    with pytest.raises(ValueError, match="pass a graph prior"):
        GeneralizedNystroem(prior_gamma="joint").fit(X, yu)
    with pytest.raises(ValueError, match="criterion='cv'"):
        _gn(_graph(), prior_gamma="joint", criterion="paper").fit(X, yu)
    for bad in ("both", [], [-1.0], [np.nan], [[0.0, 1.0]], ["a"]):
        with pytest.raises(ValueError, match="prior_gamma"):
            _gn(_graph(), prior_gamma=bad).fit(X, yu)
    groups = np.full(X.shape[0], -1)
    groups[:10] = np.arange(10) % 2
    with pytest.raises(ValueError, match="must-link groups have no labels"):
        _gn(_graph(), prior_gamma="joint").fit(X, must_link=groups)


@pytest.mark.filterwarnings("ignore:.*criterion='cv' cannot hold out")
def test_a_class_with_one_label_falls_back_to_the_sequential_choice(moons):
    X, yu = moons
    yu = yu.copy()
    one = np.flatnonzero(yu == 1)
    yu[one[1:]] = -1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seq = _gn(_graph()).fit(X, yu)
    with pytest.warns(UserWarning, match="sequential"):
        joint = _gn(_graph(), prior_gamma="joint").fit(X, yu)
    assert joint.prior_gamma_ == seq.prior_gamma_ and joint.prior_gamma_grid_ is None
    _close(_kernel(joint, X), _kernel(seq, X), 1e-12)

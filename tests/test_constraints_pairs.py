"""Pairs conventions: metric-learn's pairs, −1 as unknown, metadata routing."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import sklearn
from sklearn.cluster import KMeans
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from lorak import CSI, SimpleNPKL
from lorak.constraints import (
    PairwiseConstraints,
    from_labels,
    from_pairs,
    restrict_constraints,
    to_pairs,
)
from lorak.datasets import load
from lorak.metrics import pairwise_cluster_accuracy


def test_to_pairs_indices_and_points():
    ml = [[0, 1], [2, 3]]
    cl = [[1, 4]]
    pairs, y = to_pairs(ml, cl)
    assert pairs.shape == (3, 2) and pairs.dtype == np.int64
    np.testing.assert_array_equal(y, [1, 1, -1])
    X = np.arange(15.0).reshape(5, 3)
    P, y2 = to_pairs(ml, cl, X=X)
    assert P.shape == (3, 2, 3)
    np.testing.assert_array_equal(P[2, 1], X[4])
    np.testing.assert_array_equal(y2, y)
    c = from_labels(np.repeat([0, 1], 10), n_pairs=8, random_state=0)
    p3, y3 = to_pairs(c)
    assert len(p3) == 8 and (y3 == 1).sum() == len(c.must_link)
    with pytest.raises(ValueError, match="row 9"):
        to_pairs([[0, 9]], None, X=X)


def test_round_trip_indices_and_points():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 4))
    c = from_labels(rng.integers(0, 3, 30), n_pairs=20, random_state=0)
    for Xarg in (None, X):
        pairs, y = to_pairs(*c, X=Xarg)
        back = from_pairs(pairs, y, X=X)
        assert isinstance(back, PairwiseConstraints)
        assert back.n_samples == 30
        for a, b in ((back.must_link, c.must_link), (back.cannot_link, c.cannot_link)):
            assert {tuple(p) for p in a.tolist()} == {tuple(p) for p in b.tolist()}


def test_from_pairs_orders_and_validates():
    c = from_pairs(np.array([[3, 1], [2, 0]]), np.array([1.0, -1.0]))
    assert c.must_link.tolist() == [[1, 3]] and c.cannot_link.tolist() == [[0, 2]]
    assert c.n_samples == 4
    with pytest.raises(ValueError, match=r"\+1 \(similar"):
        from_pairs([[0, 1]], [0])
    with pytest.raises(ValueError, match="one per pair"):
        from_pairs([[0, 1], [1, 2]], [1])
    with pytest.raises(ValueError, match="need X"):
        from_pairs(np.zeros((2, 2, 3)), [1, -1])
    with pytest.raises(ValueError, match="integer row indices"):
        from_pairs([[0.5, 1.0]], [1])
    with pytest.raises(ValueError, match=r"shape \(p, 2\)"):
        from_pairs([[0, 1, 2]], [1])


def test_from_pairs_point_not_in_X():
    X = np.arange(12.0).reshape(4, 3)
    P = X[[[0, 1], [2, 3]]].copy()
    P[1, 0] += 0.5
    with pytest.raises(ValueError, match=r"point 0 of pair 1 .* not a row of X"):
        from_pairs(P, [1, -1], X=X)
    with pytest.raises(ValueError, match="features"):
        from_pairs(X[[[0, 1]]][:, :, :2], [1], X=X)


def test_from_labels_minus_one_unknown():
    y = np.array([0, 0, 1, 1, -1, -1, 0, 1, -1, 0])
    c = from_labels(y, unlabeled=-1, n_pairs=10, random_state=0)
    used = np.concatenate([c.must_link, c.cannot_link]).ravel()
    assert not np.isin(used, np.flatnonzero(y == -1)).any()
    # the same draw as the explicit mask
    c2 = from_labels(y, labeled=y != -1, n_pairs=10, random_state=0)
    np.testing.assert_array_equal(c.must_link, c2.must_link)
    np.testing.assert_array_equal(c.cannot_link, c2.cannot_link)
    # combined with labeled=: the intersection
    c3 = from_labels(y, unlabeled=-1, labeled=np.arange(5), n_pairs=3, random_state=0)
    used3 = np.concatenate([c3.must_link, c3.cannot_link]).ravel()
    assert set(used3.tolist()) <= {0, 1, 2, 3}
    # default (compatibility): −1 is a class like any other (LIBSVM's ±1)
    yl = np.array([-1, -1, 1, 1, -1, 1])
    c4 = from_labels(yl, n_pairs=15, random_state=0)
    assert len(c4.must_link) + len(c4.cannot_link) == 15
    # string labels
    ys = np.array(["a", "a", "b", "-1", "b", "-1"])
    c5 = from_labels(ys, unlabeled=-1, n_pairs=6, random_state=0)
    used5 = np.concatenate([c5.must_link, c5.cannot_link]).ravel()
    assert not np.isin(used5, [3, 5]).any()


def test_restrict_constraints():
    ml, cl = restrict_constraints([[0, 5], [1, 2], [5, 7]], [[5, 7], [0, 9]], [5, 7, 0])
    assert ml.tolist() == [[2, 0], [0, 1]]
    assert cl.tolist() == [[0, 1]]
    with pytest.raises(ValueError, match="2 entries, but X has 3"):
        restrict_constraints([[0, 1]], None, [0, 1], 3)


def test_sample_index_equals_restricted_fit():
    X, y = load("iris")
    c = from_labels(y, ratio=0.7, random_state=0)
    rows = np.flatnonzero(np.arange(150) % 4 != 0)
    a = SimpleNPKL(random_state=0).fit(X[rows], **c, sample_index=rows)
    ml, cl = restrict_constraints(c.must_link, c.cannot_link, rows)
    b = SimpleNPKL(random_state=0).fit(X[rows], must_link=ml, cannot_link=cl)
    np.testing.assert_allclose(a.embedding_, b.embedding_, rtol=1e-10, atol=1e-12)


def _score(est, X, y):
    return pairwise_cluster_accuracy(y, est.predict(X))


def test_metadata_routing_pipeline_and_gridsearch():
    X, y = load("iris")
    c = from_labels(y, ratio=0.7, random_state=0)
    assert len(c.must_link) != len(X) and len(c.cannot_link) != len(X)
    with sklearn.config_context(enable_metadata_routing=True):
        npkl = SimpleNPKL(random_state=0).set_fit_request(
            must_link=True, cannot_link=True, sample_index=True
        )
        pipe = Pipeline(
            [
                ("scale", StandardScaler()),
                ("npkl", npkl),
                ("km", KMeans(3, n_init=5, random_state=0)),
            ]
        )
        idx = np.arange(len(X))
        pipe.fit(X, must_link=c.must_link, cannot_link=c.cannot_link, sample_index=idx)
        assert pipe.named_steps["npkl"].n_constraints_ == c.n_constraints
        assert _score(pipe, X, y) > 0.85
        search = GridSearchCV(
            pipe,
            {"npkl__n_neighbors": [3, 6]},
            scoring=_score,
            cv=KFold(3, shuffle=True, random_state=0),
            error_score="raise",
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            search.fit(X, y, must_link=c.must_link, cannot_link=c.cannot_link, sample_index=idx)
        assert search.best_params_["npkl__n_neighbors"] in (3, 6)
        assert search.best_score_ > 0.8
        assert search.best_estimator_.named_steps["npkl"].n_constraints_ == c.n_constraints
    # each fold's fit saw the pairs inside its training rows, renumbered: the same
    # scores by hand (no routing)
    cv = KFold(3, shuffle=True, random_state=0)
    for i, (tr, te) in enumerate(cv.split(X)):
        ml, cl = restrict_constraints(c.must_link, c.cannot_link, tr)
        manual = Pipeline(
            [
                ("scale", StandardScaler()),
                ("npkl", SimpleNPKL(random_state=0, n_neighbors=3)),
                ("km", KMeans(3, n_init=5, random_state=0)),
            ]
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            manual.fit(X[tr], npkl__must_link=ml, npkl__cannot_link=cl)
        got = search.cv_results_[f"split{i}_test_score"][0]
        assert got == pytest.approx(_score(manual, X[te], y[te]), abs=1e-12)


def test_routing_without_request_raises():
    X, y = load("iris")
    c = from_labels(y, ratio=0.7, random_state=0)
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = Pipeline([("npkl", SimpleNPKL(random_state=0))])
        with pytest.raises(Exception, match="must_link"):
            pipe.fit(X, must_link=c.must_link, cannot_link=c.cannot_link)


def test_csi_minus_one_marker_matches_nan():
    X, y = load("iris")
    ym = y.astype(np.float64)
    ym[::3] = -1
    yn = y.astype(np.float64)
    yn[::3] = np.nan
    a = CSI(unlabeled=-1, n_components=6, random_state=0).fit(X, ym)
    b = CSI(unlabeled=np.nan, n_components=6, random_state=0).fit(X, yn)
    np.testing.assert_array_equal(a.pivots_, b.pivots_)
    np.testing.assert_allclose(a.G_, b.G_, rtol=1e-12, atol=1e-12)
    ys = np.where(ym == -1, "-1", y.astype(str))
    s = CSI(unlabeled=-1, n_components=6, random_state=0).fit(X, ys)
    np.testing.assert_array_equal(s.pivots_, a.pivots_)


# ---------------------------------------------------------------- issue 30, items 8 and 14


@pytest.mark.parametrize(
    ("ml", "cl", "where"),
    [([[-1, 2]], None, "must_link"), (None, [[0, 1], [3, -2]], "cannot_link")],
)
def test_to_pairs_refuses_negative_indices(ml, cl, where):
    with pytest.raises(ValueError, match=rf"{where} holds the pair .*negative index"):
        to_pairs(ml, cl)
    with pytest.raises(ValueError, match="negative index"):
        to_pairs(ml, cl, X=np.zeros((5, 2)))


def test_from_pairs_shows_the_offending_labels():
    with pytest.raises(ValueError, match=r"booleans \[True\].*np\.where"):
        from_pairs([[0, 1], [1, 2]], [True, True])
    with pytest.raises(ValueError, match=r"booleans \[False, True\]"):
        from_pairs([[0, 1], [1, 2]], np.array([True, False]))
    with pytest.raises(ValueError, match=r"\[0, 2\]"):
        from_pairs([[0, 1], [1, 2], [2, 3]], [1, 0, 2])
    with pytest.raises(ValueError, match=r"\['1'\]"):
        from_pairs([[0, 1]], ["1"])
    with pytest.raises(ValueError, match="negative index"):
        from_pairs([[0, -1]], [1])


@pytest.mark.parametrize("pairs", [[], np.empty((0, 2)), np.empty((0, 2, 3))])
def test_from_pairs_without_pairs_says_so(pairs):
    with pytest.raises(ValueError, match="no pairs") as info:
        from_pairs(pairs, [], X=np.zeros((4, 3)) if np.ndim(pairs) == 3 else None)
    assert "n_samples" not in str(info.value)


def test_restrict_constraints_says_the_subset_dropped_every_pair():
    with pytest.raises(ValueError, match=r"subset dropped every constraint.*2 pair"):
        restrict_constraints([[0, 1]], [[2, 3]], [5, 6, 7])
    # some kept: no error; none given: empty, no error
    ml, cl = restrict_constraints([[0, 1]], [[2, 3]], [0, 1])
    assert ml.tolist() == [[0, 1]] and cl.shape == (0, 2)
    ml, cl = restrict_constraints(None, None, [0, 1])
    assert ml.shape == cl.shape == (0, 2)
    with pytest.raises(ValueError, match="negative index"):
        restrict_constraints([[0, -1]], None, [0, 1])
    # through SimpleNPKL's sample_index, the same message
    X = np.random.default_rng(0).standard_normal((10, 2))
    with pytest.raises(ValueError, match="subset dropped every constraint"):
        SimpleNPKL().fit(
            X, must_link=[[20, 21]], cannot_link=[[20, 22]], sample_index=np.arange(10)
        )

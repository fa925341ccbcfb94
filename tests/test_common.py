"""scikit-learn's estimator checks on every lorak estimator."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from lorak import ExactEigen, IncompleteCholesky, Nystroem

# Small ranks: the checks fit on as few as ~10 rows, and lorak refuses
# n_components > n_samples instead of silently lowering it.
ESTIMATORS = [
    Nystroem(n_components=5, random_state=0),
    Nystroem(n_components=5, landmarks="kmeans", bandwidth="mean_pairwise", random_state=0),
    Nystroem(n_components=5, landmarks="column_norm", random_state=0),
    IncompleteCholesky(n_components=5),
    ExactEigen(n_components=5),
]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    check(estimator)

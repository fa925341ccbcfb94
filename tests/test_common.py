"""scikit-learn's estimator checks on every estimator ``lorak`` exports.

The list is built from ``lorak.__all__``: a new estimator is checked as soon as it is
exported. Each gets small constructor arguments in :data:`SMALL` (few components, few
iterations: the checks fit on as few as ~10 rows, and lorak refuses ``n_components >
n_samples`` instead of silently lowering it); one missing from :data:`SMALL` is still
checked with its defaults, and :func:`test_every_exported_estimator_has_small_arguments`
fails until it is added. Checks that fail on purpose are listed once, in
:data:`EXPECTED_FAILED_CHECKS`, each with its reason.
"""

import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

import lorak
from lorak.kernels import KernelBank


def _exported_estimators() -> dict[str, type]:
    out = {}
    for name in lorak.__all__:
        obj = getattr(lorak, name)
        if isinstance(obj, type) and issubclass(obj, BaseEstimator):
            out[name] = obj
    return out


EXPORTED = _exported_estimators()

SMALL_BANK = KernelBank.gaussian(factors=[0.25, 1.0, 4.0])
GNYS_BANK = KernelBank.gaussian(factors=[0.5, 2.0])


def _nys(**kw):
    return lorak.Nystroem(n_components=5, random_state=0, **kw)


#: exported class name -> small instances to check (several where a mode takes another path)
SMALL = {
    "Nystroem": [
        _nys(),
        _nys(landmarks="kmeans", bandwidth="mean_pairwise"),
        _nys(landmarks="column_norm"),
        _nys(landmarks="rls"),
        _nys(kernel="precomputed"),
        *(_nys(kernel=name) for name in ("chi2", "additive_chi2", "sigmoid", "cosine")),
    ],
    "IncompleteCholesky": [lorak.IncompleteCholesky(n_components=5)],
    "ExactEigen": [lorak.ExactEigen(n_components=5)],
    "CSI": [lorak.CSI(n_components=5), lorak.CSI(n_components=5, lookahead=0, kappa=0.5)],
    "GeneralizedNystroem": [
        lorak.GeneralizedNystroem(n_components=5, cv=2, random_state=0),
        lorak.GeneralizedNystroem(
            n_components=5,
            landmarks="uniform",
            beta="heuristic",
            center_ideal=False,
            criterion="paper",
            random_state=0,
        ),
        lorak.GeneralizedNystroem(n_components=5, beta="optimize", lam=0.1, random_state=0),
    ],
    "MultipleKernelGeneralizedNystroem": [
        lorak.MultipleKernelGeneralizedNystroem(
            n_landmarks=4, lam=0.1, tol=1e-3, max_iter=5, random_state=0
        ),
        lorak.MultipleKernelGeneralizedNystroem(
            GNYS_BANK,
            n_landmarks=4,
            landmarks="uniform",
            lam_grid=[0.1, 10.0],
            cv=2,
            max_iter=5,
            random_state=0,
        ),
    ],
    "GraphRegularizedFactor": [
        lorak.GraphRegularizedFactor(_nys(), random_state=0),
        lorak.GraphRegularizedFactor(_nys(), graph="knn", n_neighbors=3, gamma=1.0, random_state=0),
    ],
    "SemiSupervisedFactorClassifier": [
        lorak.SemiSupervisedFactorClassifier(
            lorak.GeneralizedNystroem(n_components=5, cv=2, random_state=0)
        ),
        lorak.SemiSupervisedFactorClassifier(_nys()),
    ],
    "SemiSupervisedFactorRegressor": [
        # a wide bandwidth: the checks' regression set is linear in one feature
        lorak.SemiSupervisedFactorRegressor(
            lorak.Nystroem(gamma=0.01, n_components=10, random_state=0)
        ),
        lorak.SemiSupervisedFactorRegressor(
            lorak.GeneralizedNystroem(gamma=0.01, n_components=10, random_state=0)
        ),
    ],
    "SimpleNPKL": [lorak.SimpleNPKL(max_rank=3, max_iter=5, random_state=0)],
    # uniform landmarks keep the checks quick; ABMKL is CABMKL's class with another weighting
    "UniformKernelSum": [
        lorak.UniformKernelSum(SMALL_BANK, n_components=5, landmarks="uniform", random_state=0)
    ],
    "CABMKL": [lorak.CABMKL(SMALL_BANK, n_components=5, landmarks="uniform", random_state=0)],
    "ABMKL": [lorak.ABMKL(SMALL_BANK, n_components=5, landmarks="uniform", random_state=0)],
    "GLMKLClassifier": [lorak.GLMKLClassifier(SMALL_BANK, max_iter=5)],
    "AlignmentMKLClassifier": [lorak.AlignmentMKLClassifier(SMALL_BANK)],
    "LowRankMKLClassifier": [
        lorak.LowRankMKLClassifier(
            n_kernels=3, rank=5, max_iter=5, inner_max_iter=100, solver="shared", random_state=0
        ),
        lorak.LowRankMKLClassifier(
            n_kernels=3, rank=5, max_iter=3, inner_max_iter=100, solver="split", random_state=0
        ),
        lorak.LowRankMKLClassifier(n_kernels=3, rank=5, max_iter=3, random_state=0),
    ],
    "LowRankMKLRegressor": [
        lorak.LowRankMKLRegressor(n_kernels=3, random_state=0),
        # a loose tolerance: the ε-insensitive fit iterates to 1e-4 on every check otherwise
        lorak.LowRankMKLRegressor(
            n_kernels=3, loss="epsilon_insensitive", tol=1e-2, random_state=0
        ),
    ],
    "LSSVC": [lorak.LSSVC(), lorak.LSSVC(_nys(), C=0.5)],
    "LSSVR": [
        lorak.LSSVR(),
        # a wide bandwidth: the checks' regression set is linear in one feature
        lorak.LSSVR(lorak.Nystroem(gamma=0.01, n_components=10, random_state=0)),
    ],
    "LowRankKernelPCA": [
        lorak.LowRankKernelPCA(),
        lorak.LowRankKernelPCA(_nys(), n_components=3),
    ],
    # n_init=2: scikit-learn's KMeans costs ~40 ms per initialization even on 30 rows
    "KernelKMeans": [
        lorak.KernelKMeans(n_init=2),
        lorak.KernelKMeans(3, _nys(), n_init=2, random_state=0),
    ],
}

_UNLABELED = (
    "-1 marks unlabeled rows (the sklearn.semi_supervised convention); scikit-learn exempts "
    "only its own semi-supervised classifiers, by name, from this check's labels {-1, 1}"
)

_NO_CONSTRAINTS = (
    "SimpleNPKL learns from pairwise constraints (fit(X, must_link=..., cannot_link=...)); "
    "the check fits without any, and fit refuses (y alone is not used)"
)
#: the checks that fit SimpleNPKL (all of them but the parameter, tag and unfitted ones)
_FIT_CHECKS = (
    "check_dict_unchanged",
    "check_dont_overwrite_parameters",
    "check_dtype_object",
    "check_estimator_sparse_array",
    "check_estimator_sparse_matrix",
    "check_estimator_sparse_tag",
    "check_estimators_dtypes",
    "check_estimators_fit_returns_self",
    "check_estimators_nan_inf",
    "check_estimators_overwrite_params",
    "check_estimators_pickle",
    "check_f_contiguous_array_estimator",
    "check_fit2d_1feature",
    "check_fit2d_1sample",
    "check_fit2d_predict1d",
    "check_fit_check_is_fitted",
    "check_fit_idempotent",
    "check_fit_score_takes_y",
    "check_methods_sample_order_invariance",
    "check_methods_subset_invariance",
    "check_n_features_in",
    "check_n_features_in_after_fitting",
    "check_pipeline_consistency",
    "check_positive_only_tag_during_fit",
    "check_readonly_memmap_input",
    "check_transformer_data_not_an_array",
    "check_transformer_general",
    "check_transformer_n_iter",
    "check_transformer_preserve_dtypes",
)

#: (exported class name, check name) -> why the check fails on purpose
EXPECTED_FAILED_CHECKS = {
    ("SemiSupervisedFactorClassifier", "check_classifiers_classes"): _UNLABELED,
    ("GLMKLClassifier", "check_classifiers_classes"): _UNLABELED,
    ("AlignmentMKLClassifier", "check_classifiers_classes"): _UNLABELED,
    **{("SimpleNPKL", check): _NO_CONSTRAINTS for check in _FIT_CHECKS},
}


def _instances():
    out = []
    for name, cls in EXPORTED.items():
        out.extend(SMALL.get(name, [cls()]))
    return out


def _expected_failed_checks(estimator) -> dict[str, str]:
    name = type(estimator).__name__
    return {check: why for (cls, check), why in EXPECTED_FAILED_CHECKS.items() if cls == name}


def test_every_exported_estimator_has_small_arguments():
    missing = sorted(set(EXPORTED) - set(SMALL))
    assert not missing, (
        f"lorak exports {missing}: add small constructor arguments for them to SMALL in "
        "tests/test_common.py (they are checked with their defaults until then)"
    )
    assert sorted(set(SMALL) - set(EXPORTED)) == [], "SMALL names a class lorak does not export"
    for name, instances in SMALL.items():
        assert all(type(e) is EXPORTED[name] for e in instances), name


def test_every_expected_failure_names_an_exported_estimator_and_a_reason():
    for (cls, check), why in EXPECTED_FAILED_CHECKS.items():
        assert cls in EXPORTED and check.startswith("check_") and len(why) > 20


@parametrize_with_checks(_instances(), expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    # the small instances stop after a few iterations on purpose
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


# ---------------------------------------------------------------- refit on other data
def _refit_data(estimator, n, d, seed):
    """Arguments of a fit on n rows of d non-negative features (the χ² kernels need
    them): the kernel matrix for kernel='precomputed', labels or values for y, and
    pairwise constraints for SimpleNPKL."""
    from sklearn.base import is_regressor
    from sklearn.metrics.pairwise import rbf_kernel

    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    y = X[:, 0] + 0.5 * X[:, 1] if is_regressor(estimator) else (X[:, 0] > 0.5).astype(int)
    kw = {}
    if type(estimator).__name__ == "SimpleNPKL":
        kw = {"must_link": [[0, 1], [2, 3], [4, 5]], "cannot_link": [[0, 7], [1, 9], [3, 8]]}
    if getattr(estimator, "kernel", None) == "precomputed":
        X = rbf_kernel(X, gamma=1.0)
    return X, y, kw


def _fitted_names(estimator):
    return {k for k in vars(estimator) if k.endswith("_") and not k.startswith("__")}


@pytest.mark.parametrize("estimator", _instances(), ids=lambda e: type(e).__name__)
def test_refit_keeps_nothing_of_the_earlier_fit(estimator):
    """Everything a fit stores is reset by the next fit (issue 30, item 5): fit on data A
    with every option that stores more (pre-image maps), refit on data B with another
    feature count and without them; the refitted estimator has exactly the attributes of
    a fresh fit on B, and a method of the dropped option raises NotFittedError."""
    from sklearn.base import clone
    from sklearn.exceptions import NotFittedError

    params = estimator.get_params()
    extra = (
        {"fit_inverse_transform": True}
        if "fit_inverse_transform" in params and params.get("kernel") != "precomputed"
        else {}
    )
    first = clone(estimator).set_params(**extra)
    XA, yA, kwA = _refit_data(first, 40, 5, 0)
    XB, yB, kwB = _refit_data(first, 30, 3, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        first.fit(XA, yA, **kwA)
        stale = _fitted_names(first)
        first.set_params(**{k: False for k in extra}).fit(XB, yB, **kwB)
        fresh = clone(estimator).fit(XB, yB, **kwB)
    assert _fitted_names(first) == _fitted_names(fresh), (
        f"left from the first fit: {sorted(_fitted_names(first) - _fitted_names(fresh))}; "
        f"(stored by the first fit: {sorted(stale)})"
    )
    assert first.n_features_in_ == fresh.n_features_in_ == XB.shape[1]
    if extra:
        with pytest.raises(NotFittedError):
            first.inverse_transform(first.transform(XB[:2]))

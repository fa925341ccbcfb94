"""Generalized Nyström with multiple kernels (lorak.estimators, learn._gen_nystrom._multiple).

Tiers: reduction to the single-kernel method (M = 1), invariants (α ≥ 0, PSD blocks,
monotone objective, block-diagonal factor reproducing the learned kernel), optimality
of the returned point (no block can be improved given the others), the labeled-row
compression against a dense computation, scikit-learn conventions and bad input.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import RidgeClassifierCV

from conftest import readonly
from lorak import GeneralizedNystroem
from lorak.estimators import MultipleKernelGeneralizedNystroem, default_gnys_bank
from lorak.kernels import Gaussian, KernelBank
from lorak.learn._gen_nystrom import MKGenNystromProblem
from lorak.models import SemiSupervisedFactorClassifier

MK = MultipleKernelGeneralizedNystroem


def _blobs(n=180, seed=0, classes=3, d=3):
    rng = np.random.default_rng(seed)
    centers = 5.0 * rng.standard_normal((classes, d))
    y = rng.integers(0, classes, n)
    y[:classes] = np.arange(classes)
    X = centers[y] + rng.standard_normal((n, d))
    return X, y


def _semi(y, per_class=6, seed=1):
    rng = np.random.default_rng(seed)
    yu = np.full_like(y, -1)
    for c in np.unique(y):
        idx = rng.choice(np.flatnonzero(y == c), per_class, replace=False)
        yu[idx] = y[idx]
    return yu


@pytest.fixture(scope="module")
def data():
    X, y = _blobs()
    return X, y, _semi(y)


@pytest.fixture(scope="module")
def fitted(data):
    X, _, yu = data
    bank = KernelBank.gaussian(factors=[0.25, 1.0, 4.0])
    return MK(bank, n_landmarks=12, random_state=0).fit(X, yu)


def _learned_kernel(mk, X):
    E = mk.kernels_.blocks(X, mk.landmarks_)
    return sum(Ej @ T @ Ej.T for Ej, T in zip(E, mk.T_, strict=True))


# ----------------------------------------------------------------- M = 1


def test_single_kernel_bank_reduces_to_generalized_nystroem(data):
    """M = 1: (17) is (7) with β optimized jointly (α plays β), same λ criterion."""
    X, _, yu = data
    Z = X[np.random.default_rng(3).choice(X.shape[0], 15, replace=False)]
    bank = KernelBank.gaussian(factors=[1.0]).resolve(X)
    b = bank[0].bandwidth
    mk = MK(bank, landmarks=Z, lam=0.1, tol=1e-8, max_iter=1000).fit(X, yu)
    gopt = GeneralizedNystroem(
        bandwidth=b, landmarks=Z, lam=0.1, beta="optimize", tol=1e-9, max_iter=5000
    ).fit(X, yu)
    # the same optimum of the joint problem in (S, β): objective, weight, kernel
    assert mk.objective_ == pytest.approx(gopt.objective_, rel=1e-5)
    assert mk.weights_[0] == pytest.approx(gopt.beta_, rel=2e-2)
    K1 = _learned_kernel(mk, X)
    Q = gopt.transform(X)
    K2 = Q @ Q.T
    np.testing.assert_allclose(K1, K2, atol=2e-2 * np.abs(K2).max())
    assert mk.alignment_scores_[0] == pytest.approx(gopt.alignment_scores_[0], rel=1e-3)


def test_single_kernel_bank_lambda_path_matches(data):
    """M = 1: the λ path's criterion values are those of the single-kernel optimum
    (β optimized) at each λ, and the same λ wins."""
    X, _, yu = data
    Z = X[np.random.default_rng(4).choice(X.shape[0], 12, replace=False)]
    bank = KernelBank.gaussian(factors=[1.0]).resolve(X)
    grid = [1e-2, 1.0, 100.0]
    mk = MK(bank, landmarks=Z, lam_grid=grid, tol=1e-6, criterion="paper").fit(X, yu)
    ref = []
    for lam in grid:
        g = GeneralizedNystroem(
            bandwidth=bank[0].bandwidth,
            landmarks=Z,
            lam=lam,
            beta="optimize",
            tol=1e-7,
            max_iter=5000,
        ).fit(X, yu)
        ref.append(g.alignment_scores_[0])
    np.testing.assert_allclose(mk.alignment_scores_, ref, rtol=1e-2)
    assert mk.lam_ == grid[int(np.argmax(ref))]


# ----------------------------------------------------------------- invariants


def test_weights_nonnegative_blocks_psd(fitted):
    mk = fitted
    assert mk.weights_.shape == (3,) and np.all(mk.weights_ >= 0)
    assert np.any(mk.weights_ > 0)
    for T, S, S0, a in zip(mk.T_, mk.S_, mk.S0_, mk.weights_, strict=True):
        for B in (T, S, S0):
            ev = np.linalg.eigvalsh(B)
            assert ev.min() >= -1e-9 * max(ev.max(), 1e-300)
        if a > 0:
            np.testing.assert_allclose(a * S, T, atol=1e-12 * np.abs(T).max())


def test_objective_non_increasing_across_alternations(data):
    X, _, yu = data
    bank = KernelBank.gaussian(factors=[0.25, 1.0, 4.0])
    for rescale in (True, False):
        mk = MK(
            bank, n_landmarks=10, lam=0.01, rescale=rescale, tol=1e-7, max_iter=60, random_state=0
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            mk.fit(X, yu)
        h = np.asarray(mk.objective_history_)
        assert h.size >= 3
        assert np.all(np.diff(h) <= 1e-12 * h[0]), np.diff(h).max()
        assert h[-1] < h[0]
        assert mk.objective_ == pytest.approx(h[-1])


def test_rescaling_step_reaches_a_lower_objective(data):
    """At large λ the verbatim alternation moves α by O(1/λ) per pass."""
    X, _, yu = data
    bank = KernelBank.gaussian(factors=[0.25, 1.0, 4.0])
    kw = dict(n_landmarks=10, lam=1e3, tol=1e-9, max_iter=30, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        slow = MK(bank, rescale=False, **kw).fit(X, yu)
        fast = MK(bank, rescale=True, **kw).fit(X, yu)
    assert fast.objective_ < slow.objective_ * (1 - 1e-3)


def test_transform_is_block_diagonal_factor_of_learned_kernel(fitted, data):
    X = data[0]
    mk = fitted
    Q = mk.transform(X)
    assert Q.shape == (X.shape[0], mk.n_components_) == (X.shape[0], mk.block_ranks_.sum())
    K = _learned_kernel(mk, X)
    np.testing.assert_allclose(Q @ Q.T, K, atol=1e-9 * np.abs(K).max())
    # column block j is k_j(X, Z) F_j
    E = mk.kernels_.blocks(X, mk.landmarks_)
    off = np.concatenate([[0], np.cumsum(mk.block_ranks_)])
    for j, (Ej, F) in enumerate(zip(E, mk.normalizations_, strict=True)):
        np.testing.assert_allclose(Q[:, off[j] : off[j + 1]], Ej @ F, atol=1e-12)
    # chunked transform: the same numbers with a tiny memory budget
    from lorak import config_context

    X4 = np.tile(X, (4, 1))  # 720 rows of 3 × 12 kernel values: 4 chunks of 2^16 bytes
    with config_context(memory_budget=2**16):
        np.testing.assert_allclose(mk.transform(X4), np.tile(Q, (4, 1)), atol=1e-13)


# ----------------------------------------------------------------- estimator


def test_fitted_attributes_and_defaults(data):
    X, _, yu = data
    mk = MK(n_components=30, criterion="paper", random_state=0).fit(X, yu)
    assert mk.n_kernels_ == 9 and len(mk.kernels_) == 9
    assert mk.n_landmarks_ == 10  # m̃ = m τ / M = 30 · 3 / 9
    bw = [k.bandwidth for k in mk.kernels_]
    np.testing.assert_allclose(np.array(bw) / bw[4], 2.0 ** np.arange(-4, 5))
    assert mk.lam_grid_.tolist() == [10.0**k for k in range(-5, 6)]
    assert mk.lam_ == mk.lam_grid_[np.nanargmax(mk.alignment_scores_)]
    assert mk.alignment_factors_.shape == (11, 10)
    f = mk.alignment_factors_
    np.testing.assert_allclose(mk.alignment_scores_, np.nanprod(f[:, :9], axis=1) * f[:, 9])
    assert len(mk.T_) == len(mk.S_) == len(mk.S0_) == len(mk.normalizations_) == 9
    assert mk.n_iter_ >= 1 and mk.inner_iter_ >= mk.n_iter_
    np.testing.assert_array_equal(mk.classes_, [0, 1, 2])
    np.testing.assert_array_equal(mk.labeled_indices_, np.flatnonzero(yu != -1))
    assert len(default_gnys_bank()) == 9


def test_unlabeled_rows_enter_only_through_landmarks(data):
    X, y, yu = data
    Z = X[:10]
    factors = [0.25, 1.0, 4.0]
    a = MK(KernelBank.gaussian(factors), landmarks=Z, lam=0.1).fit(X, yu)
    keep = yu != -1
    keep[:40] = True
    bank = KernelBank.gaussian(factors, base=a.kernels_[1].bandwidth)
    b = MK(bank, landmarks=Z, lam=0.1).fit(X[keep], yu[keep])
    for Ta, Tb in zip(a.T_, b.T_, strict=True):
        np.testing.assert_allclose(Ta, Tb, atol=1e-8 * max(np.abs(Ta).max(), 1e-300))


def test_float32_sparse_and_readonly_inputs(data):
    X, _, yu = data
    X32 = readonly(X.astype(np.float32))
    yr = readonly(yu)
    bank = KernelBank.gaussian(factors=[0.5, 2.0])
    mk = MK(bank, n_landmarks=8, lam=0.1, random_state=0).fit(X32, yr)
    Q = mk.transform(X32)
    assert Q.dtype == np.float32 and mk.components_.dtype == np.float32
    mk64 = MK(bank, n_landmarks=8, lam=0.1, random_state=0).fit(X, yu)
    Q64 = mk64.transform(X)
    K64 = Q64 @ Q64.T  # the factors' bases may differ (eigenvector signs), kernels not
    np.testing.assert_allclose(Q.astype(float) @ Q.T, K64, atol=1e-3 * np.abs(K64).max())
    Xs = sp.csr_matrix(X)
    ms = MK(bank, n_landmarks=8, landmarks="uniform", lam=0.1, random_state=0).fit(Xs, yu)
    md = MK(bank, n_landmarks=8, landmarks="uniform", lam=0.1, random_state=0).fit(X, yu)
    Qs, Qd = ms.transform(Xs), md.transform(X)
    # same numbers up to round-off in b₀, which the early-stopped alternation amplifies
    np.testing.assert_allclose(Qs @ Qs.T, Qd @ Qd.T, atol=5e-3 * np.abs(Qd).max() ** 2)


def test_classifier_on_the_factor(data):
    X, y, yu = data
    # a ridge head chosen by leave-one-out: the factor is what is tested here. (With six
    # labels per class the default head reads the rows under equal class proportions;
    # these classes are 27/32/41 % and the labels were drawn evenly per class, the case
    # where class_prior must be given.)
    head = RidgeClassifierCV(alphas=np.logspace(-4, 2, 7))
    clf = SemiSupervisedFactorClassifier(MK(n_components=30, random_state=0), classifier=head)
    clf.fit(X, yu)
    unl = yu == -1
    assert np.mean(clf.transduction_[unl] == y[unl]) > 0.9


@pytest.mark.parametrize(
    "y_fn, match",
    [
        (lambda y: np.full_like(y, -1), "no labeled rows"),
        (lambda y: np.where(np.arange(y.size) < 10, 0, -1), "one class among its labeled"),
        (lambda y: y[:-1], "y has 179 entries, but X has 180 rows"),
        (lambda y: None, "requires y to be passed"),
        (lambda y: np.where(np.arange(y.size) < 10, y, np.nan), "y contains NaN"),
    ],
)
def test_label_errors(data, y_fn, match):
    X, y, _ = data
    with pytest.raises(ValueError, match=match):
        MK(n_landmarks=5).fit(X, y_fn(y))


def test_parameter_and_bank_errors(data):
    X, _, yu = data
    cases = [
        (dict(n_components=500), "n_components=500 exceeds n_samples=180"),
        (dict(n_landmarks=181), "n_landmarks=181 exceeds n_samples=180"),
        (dict(n_components="half"), "n_components must be a positive integer or 'auto'"),
        (dict(n_landmarks=0), "n_landmarks must be an integer >= 1"),
        (dict(tau=0), "tau must be a number > 0"),
        (dict(kernels=[]), "kernels is empty"),
        (dict(landmarks=X[:6], n_landmarks=5), "landmarks holds 6 landmarks but n_landmarks=5"),
        (dict(landmarks=[X[:5], X[:6]]), r"landmarks holds 2 separate sets \(sizes \[5, 6\]\)"),
        (dict(lam=-1.0), "lam must be 'auto' or a positive number"),
        (dict(lam_grid=[]), "lam_grid must be a non-empty"),
        (dict(solver="newton"), "unknown solver 'newton'"),
        (dict(criterion="loo"), "unknown criterion 'loo'"),
        (dict(cv=1), "cv must be an integer >= 2"),
        (dict(tol=0.0), r"tol must be a number in \(0, 1\)"),
        (dict(max_iter=0), "max_iter must be an integer >= 1"),
        (dict(inner_max_iter=0), "inner_max_iter must be an integer >= 1"),
        (dict(landmarks="nope"), "unknown landmarks strategy 'nope'"),
    ]
    for params, match in cases:
        with pytest.raises(ValueError, match=match):
            MK(**params).fit(X, yu)
    with pytest.raises(TypeError, match="kernels must be a KernelBank"):
        MK(kernels="gaussian").fit(X, yu)
    with pytest.raises(TypeError, match="rescale must be True or False"):
        MK(rescale="yes").fit(X, yu)
    with pytest.raises(ValueError, match="at least one kernel"):
        KernelBank([])
    # the pure function checks its blocks too
    E = np.ones((4, 3))
    with pytest.raises(ValueError, match="same 3 shared landmarks"):
        MKGenNystromProblem.from_blocks([E, np.ones((4, 2))], [np.eye(3), np.eye(2)], E[:, :1])
    with pytest.raises(ValueError, match="bank is empty"):
        MKGenNystromProblem.from_blocks([], [], E[:, :1])


def test_convergence_warning_names_the_fix(data):
    X, _, yu = data
    with pytest.warns(ConvergenceWarning, match="increase max_iter"):
        MK(n_landmarks=8, lam=1e-3, tol=1e-9, max_iter=1, random_state=0).fit(X, yu)


def test_kernel_bank_of_other_kernels(data):
    X, y, yu = data
    mk = MK([Gaussian(bandwidth=5.0), "linear"], n_landmarks=8, lam=0.1, random_state=0)
    Q = mk.fit_transform(X, yu)
    K = _learned_kernel(mk, X)
    np.testing.assert_allclose(Q @ Q.T, K, atol=1e-9 * np.abs(K).max())

"""λ of the generalized Nyström factor chosen by cross-validation over the labeled rows.

The held-out error of the downstream model scores the grid plus λ = ∞ (plain
Nyström). The protocol and its reasons: :ref:`guide-gnys-cv`.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import eigh
from scipy.sparse import issparse as sp_issparse

from ..._core.linalg import symmetrize as _sym
from ..._core.validation import check_bound, check_float_array, check_number_sequence
from ...metrics import ideal_kernel_factor
from ._multiple import (
    BlockState,
    MKGenNystromProblem,
    alternate_blocks,
    check_bank_blocks,
    mk_alignment_lambda_path,
    mk_prior_fit,
    uniform_prior_factors,
)
from ._path import GenNystromFit, alignment_lambda_path, path_solve, prior_fit, starting_beta
from ._problem import (
    GenNystromProblem,
    check_beta,
    check_blocks,
    check_labels,
    check_options,
    kept_eigenpairs,
    pinv_psd,
    prior_factor,
    psd_factor,
)
from ._targets import ideal_kernel, regression_target, regression_target_factor, unit_scaled

__all__ = [
    "CV_LAMBDA_GRID",
    "DEFAULT_CV_SPLITS",
    "RIDGE_ALPHAS",
    "LambdaCV",
    "PriorGammaCV",
    "cv_criterion",
    "cv_feasible",
    "cv_folds",
    "cv_select_and_solve",
    "cv_select_lambda",
    "cv_select_prior_gamma",
    "fold_features",
    "mk_cv_select_and_solve",
    "mk_cv_select_lambda",
    "mk_fold_features",
    "prior_row_space",
    "score_candidates",
    "score_ridge_candidates",
    "smooth",
]

DEFAULT_CV_SPLITS = 5
#: λ candidates of the cross-validation (λ = ∞, the prior, is always added): every
#: other decade from 10⁻⁵ to 10⁷ — up to where S has reached the prior on the benchmark
#: sets.
CV_LAMBDA_GRID = tuple(10.0**k for k in range(-5, 8, 2))
# LinearSVC as the pipeline's default classifier (SemiSupervisedFactorClassifier)
_SVC_KW = {"dual": True, "max_iter": 10000, "random_state": 0}
#: Ridge penalties of the regression scorer (features scaled to unit mean squared row
#: norm, so α is relative to a kernel of unit diagonal): 10⁻⁴ … 10², every decade.
RIDGE_ALPHAS = tuple(10.0**k for k in range(-4, 3))
#: Repetitions of the k-fold split for a regression target (fresh folds each time, the
#: per-row held-out errors summed): with few labeled rows one 5-fold split ranks the
#: candidates differently from the next (figures: the generalized Nyström guide).
REGRESSION_CV_REPEATS = 3
#: Standard errors of the paired held-out differences by which a learned kernel must
#: beat the prior (λ = ∞) to be chosen for a regression target.
PAIRED_SE_MARGIN = 2.0


@dataclass
class LambdaCV:
    """λ chosen by cross-validation (``cv_select_lambda``): the ``cv`` of
    :func:`~lorak.learn.fit_generalized_nystroem`'s record.

    Attributes
    ----------
    lam : the chosen λ (``inf`` = the prior itself, the plain Nyström kernel).
    C : the classifier's C the choice was made with.
    candidates : (g,) the λ values scored, ascending, ``inf`` last.
    errors : (g, c) held-out misclassifications summed over the folds, per λ and C.
    error_rate : (g, c) the same divided by the number of labeled rows.
    hinge : (g, c) held-out hinge loss summed over the folds (the tie-break); for a
        regression target the sum of the held-out squared errors squared (a spread, kept for
        the record; the choice uses the per-row errors).
    smoothed : (g, c) the smoothed error counts the choice minimized.
    fold_of : (l,) fold index of every labeled row.
    n_splits : folds used.
    n_iter : solver iterations over all folds.
    """

    lam: float
    C: float
    candidates: np.ndarray
    C_grid: np.ndarray
    errors: np.ndarray
    error_rate: np.ndarray
    hinge: np.ndarray
    smoothed: np.ndarray
    fold_of: np.ndarray
    n_splits: int
    n_iter: int
    info: dict = field(default_factory=dict)


def cv_feasible(y, target: str = "classification") -> tuple[bool, str]:
    """Whether stratified cross-validation can hold out a row of every class of ``y``
    (at least 2 labeled rows per class), and if not, the reason in words. For
    ``target="regression"``: at least 3 labeled rows (2 to fit on per fold)."""
    check_options(target=target)
    y = np.asarray(y)
    if y.ndim != 1 or y.size == 0:
        raise ValueError(f"y must be a non-empty 1-D array of labels; got shape {y.shape}")
    if target == "regression":
        l = int(y.shape[0])
        if l >= 3:
            return True, ""
        return False, f"{l} labeled row(s), cross-validation of a response needs 3"
    classes, counts = np.unique(y, return_counts=True)
    if counts.size and counts.min() >= 2:
        return True, ""
    label = classes[int(np.argmin(counts))].tolist()
    n_min = int(counts.min())
    return False, f"class {label!r} has {n_min} labeled row(s), cross-validation needs 2"


def cv_criterion(criterion: str, lam, y, target: str, owner: str) -> str:
    """The criterion a fit uses: ``"cv"`` falls back to ``"paper"`` (eq. 15), with a
    warning naming ``owner``, when λ is to be chosen and no row can be held out
    (:func:`cv_feasible`); any other case returns ``criterion`` unchanged."""
    if criterion not in ("cv", "paper", "kernel"):
        raise ValueError(
            f"unknown criterion {criterion!r}; valid names are 'cv', 'paper', 'kernel'"
        )
    if criterion != "cv" or not isinstance(lam, str):
        return criterion
    ok, why = cv_feasible(y, target)
    if ok:
        return criterion
    what = "a row of every class" if target == "classification" else "a row"
    warnings.warn(
        f"{owner}: criterion='cv' cannot hold out {what} ({why}); lam chosen by "
        "criterion='paper' (eq. 15) instead",
        UserWarning,
        stacklevel=3,
    )
    return "paper"


def cv_folds(y, n_splits: int, rng, *, target: str = "classification") -> tuple[np.ndarray, int]:
    """Stratified fold index per labeled row: (fold_of, k).

    Each class's rows are shuffled and dealt round-robin, starting at a random fold,
    so every fold holds ⌊n_c/k⌋ or ⌈n_c/k⌉ rows of class c. k = min(``n_splits``,
    smallest class count); fewer than 2 rows in a class is an error.
    ``target="regression"``: plain k-fold of the shuffled rows, k = min(``n_splits``,
    l); fewer than 3 rows is an error.
    """
    y = np.asarray(y)
    if isinstance(n_splits, bool) or not isinstance(n_splits, (int, np.integer)) or n_splits < 2:
        raise ValueError(f"cv must be an integer >= 2 (the number of folds); got {n_splits!r}")
    if target == "regression":
        l = y.shape[0]
        if l < 3:
            raise ValueError(
                f"criterion='cv' with a regression target needs at least 3 labeled rows; got "
                f"{l}. Label more rows or choose criterion='paper'"
            )
        k = int(min(n_splits, l))
        fold_of = np.empty(l, dtype=np.int64)
        fold_of[rng.permutation(l)] = np.arange(l) % k
        return fold_of, k
    classes, codes, counts = np.unique(y, return_inverse=True, return_counts=True)
    smallest = int(counts.min())
    if smallest < 2:
        label = classes[int(np.argmin(counts))]
        raise ValueError(
            f"criterion='cv' needs at least 2 labeled rows per class to hold one out; class "
            f"{label!r} has {smallest}. Label more rows of that class or choose "
            "criterion='paper'"
        )
    k = int(min(n_splits, smallest))
    fold_of = np.empty(y.shape[0], dtype=np.int64)
    start = 0
    for c in range(classes.size):
        rows = np.flatnonzero(codes == c)
        rows = rows[rng.permutation(rows.size)]
        fold_of[rows] = (start + np.arange(rows.size)) % k
        start = (start + rows.size) % k  # keep the fold sizes balanced across classes
    return fold_of, k


def _scaled(Q):
    ms = float(np.mean(np.einsum("ij,ij->i", Q, Q)))
    return Q / math.sqrt(ms) if ms > 0 else Q


def score_candidates(Q, y, fold_of, k, C_grid) -> tuple[np.ndarray, np.ndarray]:
    """Held-out (misclassifications, hinge loss) of a LinearSVC per C, summed over folds.

    ``Q`` is a feature matrix of the labeled rows or a callable fold -> features (the
    learned kernel changes with the fold's training labels). The hinge loss is
    Σ max(0, 1 − s·d) over the held-out rows and the one-vs-rest decision values d
    (s = ±1).
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import LinearSVC

    errors = np.zeros(len(C_grid))
    hinge = np.zeros(len(C_grid))
    for f in range(k):
        Qf = _scaled(Q(f) if callable(Q) else Q)
        tr, va = fold_of != f, fold_of == f
        for c, C in enumerate(C_grid):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                clf = LinearSVC(C=float(C), **_SVC_KW).fit(Qf[tr], y[tr])
            d = clf.decision_function(Qf[va])
            if d.ndim == 1:
                s = np.where(y[va] == clf.classes_[1], 1.0, -1.0)
                pred = clf.classes_[(d > 0).astype(int)]
            else:
                s = np.where(y[va][:, None] == clf.classes_[None, :], 1.0, -1.0)
                pred = clf.classes_[np.argmax(d, axis=1)]
            errors[c] += np.count_nonzero(pred != y[va])
            hinge[c] += float(np.sum(np.maximum(0.0, 1.0 - s * d)))
    return errors, hinge


def score_ridge_candidates(Q, y, fold_of, k, alphas) -> tuple[np.ndarray, np.ndarray]:
    """Held-out squared errors of a ridge regression with intercept, per penalty α:
    (their sum over the folds (c,), the squared error of every labeled row (l, c)) —
    the regression counterpart of :func:`score_candidates`.

    ``Q`` as there (features of the labeled rows, or fold -> features), scaled to unit
    mean squared row norm; per fold the training rows' features and responses are
    centred and w(α) = (QᵀQ + αI)⁻¹Qᵀy comes from one SVD for every α. Each labeled row
    is held out once, so the per-row errors of two candidates are paired.
    """
    y = check_float_array(y, "y", ndim=1)
    l = y.shape[0]
    if not callable(Q):
        Q = check_float_array(Q, "Q", shape=(l, None), what="one row per entry of y")
    check_bound(k, "k", low=2, strict=False, integer=True)
    fold_of = _check_folds(fold_of, l, k)
    alphas = check_number_sequence(alphas, "alphas")
    per_row = np.zeros((y.size, alphas.size))
    for f in range(k):
        Qf = _scaled(np.asarray(Q(f) if callable(Q) else Q, dtype=np.float64))
        tr, va = fold_of != f, fold_of == f
        mu, ym = Qf[tr].mean(axis=0), y[tr].mean()
        U, sv, Vt = np.linalg.svd(Qf[tr] - mu, full_matrices=False)
        Uy = U.T @ (y[tr] - ym)
        Pva = (Qf[va] - mu) @ Vt.T  # held-out rows in the right singular basis
        W = (sv / (sv * sv + alphas[:, None])) * Uy  # (c, r): the weights per α
        per_row[va] = (y[va][:, None] - (Pva @ W.T + ym)) ** 2
    return per_row.sum(axis=0), per_row


def _check_folds(fold_of, l, k):
    """``fold_of`` as l integer fold indices in [0, k), each fold holding a row."""
    f = np.asarray(fold_of)
    if f.shape != (l,) or f.dtype.kind not in "iu":
        raise ValueError(
            f"fold_of must be {l} integer fold indices, one per row; got {f.dtype} of shape "
            f"{f.shape}"
        )
    if np.any((f < 0) | (f >= k)) or np.unique(f).size != k:
        raise ValueError(f"fold_of must hold every fold index 0, …, {k - 1} (k={k}) and no other")
    return f


def _score(Q, y, fold_of, k, C_grid, target):
    """(errors (c,), tie-break (c,), per-row squared errors (l, c) or None)."""
    if target == "regression":
        sse, per_row = score_ridge_candidates(Q, y, fold_of, k, C_grid)
        return sse, (per_row * per_row).sum(axis=0), per_row
    return (*score_candidates(Q, y, fold_of, k, C_grid), None)


def _choose_regression(sse, per_row):
    """(λ index, α index, smoothed sse) for a regression target.

    A learned kernel replaces the prior (λ = ∞, plain Nyström, the last candidate)
    only when its held-out squared errors are lower than the prior's by more than
    :data:`PAIRED_SE_MARGIN` standard errors of the paired per-row differences (each
    candidate at its best α); among such candidates the smallest summed squared error
    wins, ties to the larger λ.

    Why paired and why a margin: with the few labeled rows semi-supervised regression
    has, held-out squared errors are heavy-tailed; the plain minimum chose kernels that
    interpolate the labeled responses and lost against plain Nyström, a rule on the
    unpaired sums always returned the prior; the candidates are scored on the same
    held-out rows, so the paired difference has a far smaller spread than either sum,
    and two standard errors were the smallest margin that removed the losses (figures:
    the generalized Nyström guide, "Inside the fit").
    """
    g_all = sse.shape[0]
    c_inf = int(np.argmin(sse[-1]))
    e_inf = per_row[-1][:, c_inf]
    best_g, best_c, best_sse = g_all - 1, c_inf, float(sse[-1, c_inf])
    n = e_inf.size
    for g in range(g_all - 2, -1, -1):
        c = int(np.argmin(sse[g]))
        d = e_inf - per_row[g][:, c]
        se = float(np.std(d, ddof=1)) / math.sqrt(n) if n > 1 else math.inf
        if float(d.mean()) > PAIRED_SE_MARGIN * se and float(sse[g, c]) < best_sse:
            best_g, best_c, best_sse = g, c, float(sse[g, c])
    return best_g, best_c, smooth(sse)


def _pick(errors, hinge, per_row, C_grid, target):
    if target == "regression":
        return _choose_regression(errors, per_row)
    return _choose(errors, hinge, C_grid)


def _target_kernel(y, target, center_ideal):
    if target == "regression":
        return regression_target(y)
    return ideal_kernel(y, centered=center_ideal)


def _default_C_grid(C_grid, target):
    if C_grid is None:
        C_grid = RIDGE_ALPHAS if target == "regression" else (1.0,)
    C_grid = np.asarray(C_grid, dtype=np.float64).ravel()
    if C_grid.size == 0 or not np.all(np.isfinite(C_grid) & (C_grid > 0)):
        raise ValueError(f"C_grid must hold positive numbers; got {C_grid!r}")
    return C_grid


def _repeats(target):
    return REGRESSION_CV_REPEATS if target == "regression" else 1


def _error_rate(errors, y, target, repeats=1):
    if target == "regression":
        yc = np.asarray(y, dtype=np.float64) - np.mean(y)
        return errors / (repeats * max(float(yc @ yc), np.finfo(float).tiny))
    return errors / np.asarray(y).shape[0]


def _score_repeats(Q0, features, y, n_splits, rng, n_grid, C_grid, target):
    """Score the prior's features ``Q0`` and the grid's fold features (``features(fold_of,
    k)`` -> ([[Q_fi]], iterations)) over :func:`_repeats` fresh fold assignments;
    (errors, tie-break, per-row errors or None, first fold_of, k, iterations), the
    errors summed over the repetitions."""
    folds = [cv_folds(y, n_splits, rng, target=target) for _ in range(_repeats(target))]
    errors, hinge, per_row, n_iter = _score_folds(Q0, features, y, folds, n_grid, C_grid, target)
    return errors, hinge, per_row, folds[0][0], folds[0][1], n_iter


def _score_folds(Q0, features, y, folds, n_grid, C_grid, target):
    """:func:`_score_repeats` on given fold assignments ``folds`` [(fold_of, k), …];
    (errors, tie-break, per-row errors or None, iterations)."""
    g = n_grid + 1
    errors = np.zeros((g, C_grid.size))
    hinge = np.zeros((g, C_grid.size))
    per_row = [None] * g
    n_iter = 0
    for fold_of, k in folds:
        feats, it = features(fold_of, k)
        n_iter += it
        scored = [_score(Q0, y, fold_of, k, C_grid, target)]
        scored = [
            _score(lambda f, i=i, fe=feats: fe[f][i], y, fold_of, k, C_grid, target)
            for i in range(n_grid)
        ] + scored
        for i, (e, h, r) in enumerate(scored):
            errors[i] += e
            hinge[i] += h
            if r is not None:
                per_row[i] = r if per_row[i] is None else per_row[i] + r
    return errors, hinge, per_row, n_iter


def _features(El, P, X, rtol, W=None) -> np.ndarray:
    """Features Q of every labeled row with Q Qᵀ = E_l S E_lᵀ (S = V X Vᵀ of fold problem P).

    A linear SVM with an L2 penalty is invariant to orthogonal maps of its features, so
    any such Q scores the same as E_l F (F Fᵀ = S); the smaller of the l × l and the
    m × m eigenproblems is solved.
    """
    l, m = El.shape
    if l >= m:
        F = psd_factor(P.to_landmark_basis(X), rtol, metric=W)
        # a zero S (labels pulling every direction to 0): one constant zero feature
        return El @ F if F.shape[1] else np.zeros((l, 1))
    N = El @ P.V
    lam, U = eigh(_sym(N @ X @ N.T), driver="evd", check_finite=False)
    top = lam[-1] if lam.size else 0.0
    if not top > 0:
        return np.zeros((l, 1))
    keep = lam > rtol * top
    return U[:, keep] * np.sqrt(lam[keep])


def smooth(errors) -> np.ndarray:
    """Weights ¼, ½, ¼ along the candidates (axis 0), the end values repeated."""
    E = np.asarray(errors, dtype=np.float64)
    pad = np.concatenate([E[:1], E, E[-1:]])
    return 0.25 * pad[:-2] + 0.5 * pad[1:-1] + 0.25 * pad[2:]


def _scored(errors, hinge, scale):
    """(smoothed error counts S, S + 10⁻³ · hinge / ``scale``): the hinge term is below
    10⁻³, under the smallest step of the smoothed count (¼), so it only breaks ties."""
    S = smooth(errors)
    return S, S + 1e-3 * hinge / max(scale, np.finfo(float).tiny)


def _first_best(score, C_grid):
    """(λ index, C index) of the lowest score: ties to the larger λ, then the C nearest 1."""
    best = float(score.min())
    c_order = np.argsort(np.abs(np.log10(np.asarray(C_grid, dtype=float))), kind="stable")
    for g in range(score.shape[0] - 1, -1, -1):
        for c in c_order:
            if score[g, c] <= best + 1e-12:
                return g, int(c)
    raise AssertionError("unreachable: the minimum is attained")  # pragma: no cover


def _choose(errors, hinge, C_grid):
    """(λ index, C index, smoothed errors): the smallest smoothed error count, ties to
    the smaller hinge loss, then to the larger λ (then the C nearest 1)."""
    S, score = _scored(errors, hinge, float(hinge.max()))
    return (*_first_best(score, C_grid), S)


def _finite_grid(lam_grid) -> np.ndarray:
    """The finite λ values of ``lam_grid``, sorted and unique (λ = ∞ is always scored)."""
    grid = np.unique(np.asarray(lam_grid, dtype=np.float64))
    grid = grid[np.isfinite(grid)]
    if grid.size and not np.all(grid > 0):
        raise ValueError(f"lam_grid must hold positive numbers; got {lam_grid!r}")
    return grid


def _cv_arguments(y, l, rows, lam_grid, C_grid, n_splits, rng, target, **solver_options):
    """The arguments every cross-validated λ choice checks and resolves alike: the
    options (each by its rule), the labels of the ``l`` labeled rows (``rows`` names
    their block in errors), the fold generator, the finite λ grid and the C (or ridge
    α) grid of the target. Returns (y, rng, grid, C_grid)."""
    check_options(
        lam_grid=lam_grid, C_grid=C_grid, n_splits=n_splits, **solver_options, target=target
    )
    y = check_labels(y, l, target, rows=rows)
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    return y, rng, _finite_grid(lam_grid), _default_C_grid(C_grid, target)


def _select(grid, Q_inf, features, y, n_splits, rng, C_grid, target) -> LambdaCV:
    """Score λ ∈ grid ∪ {∞} (``Q_inf``: the λ = ∞ features, the same in every fold;
    ``features(fold_of, k)``: the per-fold, per-λ features) and pick one."""
    candidates = np.append(grid, np.inf)
    if target == "regression":
        # held-out squared errors in units where max |y| is in [1, 2): the choice does not
        # depend on the units of y, and responses in small units do not underflow
        y = unit_scaled(y)
    errors, hinge, per_row, fold_of, k, n_iter = _score_repeats(
        Q_inf, features, y, n_splits, rng, grid.size, C_grid, target
    )
    gi, ci, smoothed = _pick(errors, hinge, per_row, C_grid, target)
    return LambdaCV(
        lam=float(candidates[gi]),
        C=float(C_grid[ci]),
        candidates=candidates,
        C_grid=C_grid,
        errors=errors,
        error_rate=_error_rate(errors, y, target, _repeats(target)),
        hinge=hinge,
        smoothed=smoothed,
        fold_of=fold_of,
        n_splits=k,
        n_iter=n_iter,
    )


def fold_features(
    El,
    W,
    y,
    fold_of,
    k,
    grid,
    *,
    beta=1.0,
    center_ideal: bool = True,
    solver: str = "auto",
    path_tol: float = 1e-2,
    max_iter: int = 500,
    rtol: float = 1e-10,
    Wp=None,
    target: str = "classification",
):
    """Per fold f and λ = grid[i]: features of every labeled row under the S learned from
    the rows outside fold f; ([[Q_fi]], solver iterations).

    The fold's target is built from ``y[fold_of != f]`` only: the held-out labels never
    enter its fit (``target="regression"``: ỹỹᵀ of those rows' responses, centred and
    scaled by their own mean and spread). The λ path runs from the largest λ down,
    warm-started.
    """
    El = np.ascontiguousarray(El, dtype=np.float64)
    y = np.asarray(y)
    grid = np.asarray(grid, dtype=np.float64)
    if Wp is None:
        Wp = pinv_psd(W, rtol)
    Wp, rank_W = Wp
    W = _sym(np.asarray(W, dtype=np.float64))
    solver_ = "admm" if solver == "auto" else solver
    options = {"solver": solver_, "optimize_beta": beta == "optimize", "max_iter": max_iter}
    n_iter = 0
    feats = [[None] * grid.size for _ in range(k)]
    for f in range(k):
        tr = fold_of != f
        K = _target_kernel(y[tr], target, center_ideal)
        P = GenNystromProblem.from_blocks(
            El[tr], W, _sym(K), pinv=(Wp, rank_W), kernel_criterion=False
        )
        b = starting_beta(P, beta, grid)
        x = None
        for i in range(grid.size - 1, -1, -1):
            res = path_solve(P, float(grid[i]), b, x, options, path_tol, history=False)
            x, b = res.x, res.info["beta"]
            n_iter += res.n_iter
            feats[f][i] = _features(El, P, x, rtol, W)
    return feats, n_iter


def cv_select_lambda(
    El,
    W,
    y,
    *,
    lam_grid,
    beta=1.0,
    center_ideal: bool = True,
    n_splits: int = DEFAULT_CV_SPLITS,
    C_grid=None,
    rng=None,
    solver: str = "auto",
    path_tol: float = 1e-2,
    max_iter: int = 500,
    rtol: float = 1e-10,
    target: str = "classification",
) -> LambdaCV:
    """Choose λ of eq. (7) by k-fold cross-validation over the labeled rows.

    Parameters
    ----------
    El : (l, m) kernel between the labeled rows and the landmarks (chosen on all rows).
    W : (m, m) landmark kernel.
    y : (l,) class labels of the labeled rows.
    lam_grid : λ values to try; ``inf`` (the prior β W⁺, plain Nyström) is always added.
    beta : "heuristic", "optimize" or a number, as in :func:`alignment_lambda_path` (per fold).
    center_ideal : target H K* H instead of K*.
    n_splits : folds (fewer when a class has fewer labeled rows; see :func:`cv_folds`).
    C_grid : the LinearSVC's C values scored jointly with λ (default (1,)); for
        ``target="regression"`` the ridge penalties α (default :data:`RIDGE_ALPHAS`).
    rng : numpy Generator of the fold assignment.
    solver, path_tol, max_iter, rtol : as in :func:`alignment_lambda_path`.
    target : "classification" (y class labels, ideal kernel, LinearSVC error counts) or
        "regression" (y responses, K* = ỹỹᵀ, ridge held-out squared error; plain k-fold).
    """
    El, W, _, _ = check_blocks(El, W)
    beta = check_beta(beta)
    y, rng, grid, C_grid = _cv_arguments(
        y, El.shape[0], "El", lam_grid, C_grid, n_splits, rng, target,
        solver=solver, path_tol=path_tol, max_iter=max_iter, rtol=rtol,
    )  # fmt: skip
    Q0, features = _lambda_scorer(
        El, W, y, grid, beta, center_ideal, solver, path_tol, max_iter, rtol, target
    )
    return _select(grid, Q0, features, y, n_splits, rng, C_grid, target)


def _lambda_scorer(El, W, y, grid, beta, center_ideal, solver, path_tol, max_iter, rtol, target):
    """(the λ = ∞ features of the labeled rows, ``features(fold_of, k)`` of the grid's
    finite λ per fold): what :func:`_score_folds` scores for the blocks (E_l, W)."""
    El = np.ascontiguousarray(El, dtype=np.float64)
    W = _sym(np.asarray(W, dtype=np.float64))
    Wp, rank_W = pinv_psd(W, rtol)
    # λ = ∞: S = β W⁺, features independent of the fold (β cancels in the scaling)
    Q0 = El @ prior_factor(kept_eigenpairs(W, rtol))

    def features(fold_of, k):
        return fold_features(
            El,
            W,
            y,
            fold_of,
            k,
            grid,
            beta=beta,
            center_ideal=center_ideal,
            solver=solver,
            path_tol=path_tol,
            max_iter=max_iter,
            rtol=rtol,
            Wp=(Wp, rank_W),
            target=target,
        )

    return Q0, features


# ---------------------------------------------------------------- a prior's γ with λ


@dataclass
class PriorGammaCV:
    """A prior's graph weight t and λ chosen together by one cross-validation
    (``cv_select_prior_gamma``): the ``prior_gamma_cv`` of
    :func:`~lorak.learn.fit_generalized_nystroem`'s record with ``prior_gammas``.

    Attributes
    ----------
    t : the chosen relative graph weight, ``ts[index]``.
    index : its position in ``ts``.
    lam, C : the chosen λ (``inf`` = the prior at t itself) and the classifier's C (the
        ridge penalty for a regression target).
    ts : (h,) the weights scored, ascending.
    candidates : (g,) the λ values scored, ascending (``inf`` last when scored).
    C_grid : (c,) the C values (penalties) scored.
    errors, error_rate, hinge, smoothed : (h, g, c) as in :class:`LambdaCV`, per t.
    fold_of, n_splits : the folds, the same for every t and λ (the first repetition's
        for a regression target).
    n_iter : solver iterations over every t and fold.
    best_per_t : [(λ index, C index)] each t's own best cell.
    """

    t: float
    index: int
    lam: float
    C: float
    ts: np.ndarray
    candidates: np.ndarray
    C_grid: np.ndarray
    errors: np.ndarray
    error_rate: np.ndarray
    hinge: np.ndarray
    smoothed: np.ndarray
    fold_of: np.ndarray
    n_splits: int
    n_iter: int
    best_per_t: list

    def at(self, i: int) -> LambdaCV:
        """The :class:`LambdaCV` record of t = ``ts[i]``, at that t's own best λ and C
        (the chosen ones for ``i = index``)."""
        return LambdaCV(
            lam=float(self.candidates[self.best_per_t[i][0]]),
            C=float(self.C_grid[self.best_per_t[i][1]]),
            candidates=self.candidates,
            C_grid=self.C_grid,
            errors=self.errors[i],
            error_rate=self.error_rate[i],
            hinge=self.hinge[i],
            smoothed=self.smoothed[i],
            fold_of=self.fold_of,
            n_splits=self.n_splits,
            n_iter=self.n_iter,
        )


def prior_row_space(El):
    """(E_l V₁, V₁) with V₁ (m × l) orthonormal and spanning the rows of E_l (l × m),
    when l < m; (E_l, None) otherwise.

    On a prior's rows (W = I, S₀ = β I) problem (7) splits: in a basis [V₁, V₂] with
    E_l V₂ = 0, S = [[A, B], [Bᵀ, C]] costs λ‖A − βI‖² + 2λ‖B‖² + λ‖C − βI‖² plus a
    data term of A alone, and [[A, 0], [0, βI]] is PSD whenever S is, so the solution
    is S = V₁ A V₁ᵀ + β (I − V₁V₁ᵀ), A the solution of the l × l problem on E_l V₁.
    Every kernel value on rows in E_l's span — the labeled rows, all that a
    cross-validation scores — is E_l V₁ A V₁ᵀ E_lᵀ: the m × m problem costs l × l.
    """
    El = np.asarray(El, dtype=np.float64)
    l, m = El.shape
    if l >= m:
        return El, None
    _, _, Vt = np.linalg.svd(El, full_matrices=False)
    V1 = np.ascontiguousarray(Vt.T)
    return El @ V1, V1


def _choose_joint(errors, hinge, per_row, C_grid, target):
    """(t index, λ index, C index, smoothed (h, g, c)) of :func:`cv_select_prior_gamma`,
    and each t's own best (λ index, C index)."""
    h = errors.shape[0]
    smoothed = np.stack([smooth(e) for e in errors])
    if target == "regression":
        own = [_choose_regression(errors[i], per_row[i])[:2] for i in range(h)]
        sse = [float(errors[i][own[i]]) for i in range(h)]
        best = min(range(h), key=lambda i: (sse[i], i))  # ties: the weaker graph
        return best, own[best][0], own[best][1], smoothed, own
    # one hinge scale for every t, so that the scores compare across t
    score = np.stack([_scored(errors[i], hinge[i], float(hinge.max()))[1] for i in range(h)])
    own = [_first_best(score[i], C_grid) for i in range(h)]
    lo = float(score.min())
    for i in range(h):  # ties: the weaker graph, then the larger λ, then C nearest 1
        if float(score[i].min()) <= lo + 1e-12:
            return i, own[i][0], own[i][1], smoothed, own
    raise AssertionError("unreachable: the minimum is attained")  # pragma: no cover


def check_prior_blocks(Els, ts):
    """(the blocks as finite float64 arrays of one row count, ts as floats): ts finite,
    ≥ 0 and strictly increasing — the ties of the scores go to the smaller t, so the
    order of ts is part of the choice — and one block per t."""
    ts = check_number_sequence(ts, "ts", low=0.0, strict=False)
    if np.any(np.diff(ts) <= 0):
        raise ValueError(
            "ts must be strictly increasing (tied scores go to the smaller t, the weaker "
            f"graph): sort ts and reorder Els alike; got {ts.tolist()}"
        )
    if Els is None or isinstance(Els, (str, bytes)) or sp_issparse(Els):
        raise TypeError(f"Els must be a sequence of 2-D arrays, one per t; got {Els!r}")
    Els = [check_float_array(E, f"Els[{i}]") for i, E in enumerate(Els)]
    if len(Els) != ts.size:
        raise ValueError(
            f"Els holds {len(Els)} blocks for {ts.size} values in ts: cv_select_prior_gamma "
            "needs one block of prior rows per t"
        )
    l = Els[0].shape[0]
    for i, E in enumerate(Els):
        if E.shape[0] != l:
            raise ValueError(
                f"Els[{i}] has {E.shape[0]} rows but Els[0] has {l}: every block holds the "
                "prior's rows of the same labeled rows"
            )
    return Els, ts


def cv_select_prior_gamma(
    Els,
    y,
    *,
    ts,
    lam_grid,
    include_prior: bool = True,
    beta=1.0,
    center_ideal: bool = True,
    n_splits: int = DEFAULT_CV_SPLITS,
    C_grid=None,
    rng=None,
    solver: str = "auto",
    path_tol: float = 1e-2,
    max_iter: int = 500,
    rtol: float = 1e-10,
    target: str = "classification",
) -> PriorGammaCV:
    """Choose a prior's graph weight t and λ of eq. (7) together, by one k-fold
    cross-validation over the labeled rows.

    ``Els[i]`` holds the prior's rows Φ_t(X_l) of the labeled rows at t = ``ts[i]``
    (W = I: the prior's rows are the coordinates in which S₀ = β I). Every (t, λ) is
    scored on the same folds exactly as :func:`cv_select_lambda` scores λ for one
    prior (a LinearSVC's held-out error counts, smoothed along λ, the hinge loss as the
    tie-break; a ridge's held-out squared errors for a regression target), and the
    cell with the lowest score wins — ties to the smaller t (the weaker graph), then
    to the larger λ. For a regression target each t first gets its λ by the rule of
    :func:`cv_select_lambda` (a learned kernel must beat that t's prior by
    :data:`PAIRED_SE_MARGIN` paired standard errors), then the t with the lowest
    held-out squared error wins, ties to the smaller t. Restricted to one t the choice
    is :func:`cv_select_lambda`'s on that prior with the same folds.

    Parameters
    ----------
    Els : sequence of (l, r_i) arrays, one per t.
    y : (l,) class labels (or responses) of the labeled rows.
    ts : (h,) the weights of ``Els``: finite, ≥ 0 and strictly increasing (the order
        breaks ties; anything else is refused).
    lam_grid : the finite λ values to score (may be empty).
    include_prior : also score λ = ∞ (S = β I: the prior at t itself).
    beta, center_ideal, n_splits, C_grid, rng, solver, path_tol, max_iter, rtol, target :
        as in :func:`cv_select_lambda`; the folds are drawn once from ``rng``.

    With a number β and fewer labeled rows than prior features (l < r), each t's
    problems are solved on the labeled rows' span (:func:`prior_row_space`): the same
    minimizers, at l × l instead of r × r per solver iteration.
    """
    Els, ts = check_prior_blocks(Els, ts)
    beta = check_beta(beta)
    y, rng, grid, C_grid = _cv_arguments(
        y, Els[0].shape[0], "Els[0]", lam_grid, C_grid, n_splits, rng, target,
        solver=solver, path_tol=path_tol, max_iter=max_iter, rtol=rtol,
    )  # fmt: skip
    if grid.size == 0 and not include_prior:
        raise ValueError("cv_select_prior_gamma: no λ to score (empty lam_grid, no prior)")
    if target == "regression":
        y = unit_scaled(y)  # as in _select: the choice does not depend on y's units
    folds = [cv_folds(y, n_splits, rng, target=target) for _ in range(_repeats(target))]
    keep = np.arange(grid.size + 1) if include_prior else np.arange(grid.size)
    errors, hinge, per_row = [], [], []
    n_iter = 0
    for El in Els:
        # a given β: the l × l problem on the rows' span (prior_row_space), exact;
        # eq. 8 and the optimized β read the whole prior, so they keep the m × m one
        El = prior_row_space(El)[0] if not isinstance(beta, str) else np.asarray(El, float)
        W = np.eye(El.shape[1])
        Q0, features = _lambda_scorer(
            El, W, y, grid, beta, center_ideal, solver, path_tol, max_iter, rtol, target
        )
        e, h, r, it = _score_folds(Q0, features, y, folds, grid.size, C_grid, target)
        errors.append(e[keep])
        hinge.append(h[keep])
        per_row.append(None if r[0] is None else [r[g] for g in keep])
        n_iter += it
    errors, hinge = np.stack(errors), np.stack(hinge)
    i, g, c, smoothed, own = _choose_joint(errors, hinge, per_row, C_grid, target)
    candidates = np.append(grid, np.inf)[keep]
    return PriorGammaCV(
        t=float(ts[i]),
        index=int(i),
        lam=float(candidates[g]),
        C=float(C_grid[c]),
        ts=ts,
        candidates=candidates,
        C_grid=C_grid,
        errors=errors,
        error_rate=np.stack([_error_rate(e, y, target, _repeats(target)) for e in errors]),
        hinge=hinge,
        smoothed=smoothed,
        fold_of=folds[0][0],
        n_splits=folds[0][1],
        n_iter=n_iter,
        best_per_t=[(int(g_), int(c_)) for g_, c_ in own],
    )


# ---------------------------------------------------------------- multiple kernels


def mk_fold_features(
    Els,
    Ws,
    y,
    fold_of,
    k,
    grid,
    *,
    center_ideal: bool = True,
    solver: str = "auto",
    path_tol: float = 1e-3,
    max_iter: int = 100,
    path_inner_max_iter: int = 1,
    rtol: float = 1e-10,
    rescale: bool = True,
    target: str = "classification",
):
    """:func:`fold_features` for the multiple-kernel method (objective 17).

    Per fold the λ path of :func:`~._multiple.mk_alignment_lambda_path` (largest λ first,
    warm-started (T, α), one ADMM iteration per block visit) on the training rows'
    blocks and target; the features of every labeled row are [E_l^(j) F_j]_j with
    F_j F_jᵀ = T^(j).
    """

    Els = [np.ascontiguousarray(E, dtype=np.float64) for E in Els]
    y = np.asarray(y)
    grid = np.asarray(grid, dtype=np.float64)
    M = len(Els)
    n_iter = 0
    feats = [[None] * grid.size for _ in range(k)]
    for f in range(k):
        tr = fold_of != f
        if target == "regression":
            Y = regression_target_factor(y[tr])
        else:
            Y = ideal_kernel_factor(y[tr])
            if center_ideal:
                Y = Y - Y.mean(axis=0)
        prob = MKGenNystromProblem.from_blocks([E[tr] for E in Els], Ws, Y, rtol=rtol)
        alphas = np.full(M, 1.0 / M)
        Xs = [a * b.P_t for a, b in zip(alphas, prob.blocks, strict=True)]
        Bs = [prob.block_kernel(j, X) for j, X in enumerate(Xs)]
        st = BlockState(Xs=Xs, alphas=alphas, Bs=Bs, restarts=[None] * M)
        for i in range(grid.size - 1, -1, -1):
            sweeps, _, _, _ = alternate_blocks(
                prob,
                st,
                float(grid[i]),
                tol=path_tol,
                max_sweeps=max_iter,
                inner_max_iter=path_inner_max_iter,
                solver=solver,
                rescale=rescale,
                history=None,
            )
            n_iter += sweeps
            parts = []
            for E, Wj, b, X in zip(Els, Ws, prob.blocks, st.Xs, strict=True):
                F = psd_factor(b.to_landmark_basis(X), rtol, metric=Wj)
                if F.shape[1]:
                    parts.append(E @ F)
            feats[f][i] = np.hstack(parts) if parts else np.zeros((Els[0].shape[0], 1))
    return feats, n_iter


def mk_cv_select_lambda(
    Els,
    Ws,
    y,
    *,
    lam_grid,
    center_ideal: bool = True,
    n_splits: int = DEFAULT_CV_SPLITS,
    C_grid=None,
    rng=None,
    solver: str = "auto",
    path_tol: float = 1e-3,
    max_iter: int = 100,
    rtol: float = 1e-10,
    rescale: bool = True,
    target: str = "classification",
) -> LambdaCV:
    """:func:`cv_select_lambda` for the multiple-kernel method; λ = ∞ is the uniform
    kernel sum on the same landmarks (T^(j) = W_j⁺ / M)."""
    Els, Ws = check_bank_blocks(Els, Ws)
    y, rng, grid, C_grid = _cv_arguments(
        y, Els[0].shape[0], "Els[0]", lam_grid, C_grid, n_splits, rng, target,
        solver=solver, path_tol=path_tol, max_iter=max_iter, rtol=rtol,
    )  # fmt: skip
    Fu = uniform_prior_factors(Ws, rtol)
    Qu = np.hstack([np.asarray(E, dtype=np.float64) @ F for E, F in zip(Els, Fu, strict=True)])

    def features(fold_of, k):
        return mk_fold_features(
            Els,
            Ws,
            y,
            fold_of,
            k,
            grid,
            center_ideal=center_ideal,
            solver=solver,
            path_tol=path_tol,
            max_iter=max_iter,
            rtol=rtol,
            rescale=rescale,
            target=target,
        )

    return _select(grid, Qu, features, y, n_splits, rng, C_grid, target)


# ---------------------------------------------------------------- the fit


def cv_select_and_solve(
    El,
    W,
    K,
    y,
    *,
    lam="auto",
    lam_grid=None,
    beta=1.0,
    center_ideal: bool = True,
    n_splits: int = DEFAULT_CV_SPLITS,
    rng=None,
    solver: str = "auto",
    tol: float = 1e-4,
    max_iter: int = 500,
    rtol: float = 1e-10,
    target: str = "classification",
) -> tuple[GenNystromFit, LambdaCV | None]:
    """:func:`~._path.alignment_lambda_path` with λ chosen by :func:`cv_select_lambda`.

    ``lam="auto"``: cross-validation over ``lam_grid`` (default :data:`CV_LAMBDA_GRID`)
    and λ = ∞, then one solve of (7) on all labeled rows at the chosen λ (or the prior
    itself for λ = ∞). A number (``inf`` included) skips the selection. Returns the fit
    (``lam_grid`` = the candidates, ``scores`` NaN: eq. 15 is not computed) and the
    cross-validation result (None without selection). ``target``: "classification"
    (y class labels) or "regression" (y responses; K given as ỹỹᵀ), see
    :func:`cv_select_lambda`.
    """
    El, W, K, _ = check_blocks(El, W, K)
    check_options(lam=lam, tol=tol, target=target)
    y = check_labels(y, El.shape[0], target)

    def select():
        return cv_select_lambda(
            El,
            W,
            y,
            lam_grid=CV_LAMBDA_GRID if lam_grid is None else lam_grid,
            beta=beta,
            center_ideal=center_ideal,
            n_splits=n_splits,
            rng=rng,
            solver=solver,
            max_iter=max_iter,
            rtol=rtol,
            target=target,
        )

    def solve(lam):
        return alignment_lambda_path(
            El, W, K, lam=lam, beta=beta, solver=solver, tol=tol, max_iter=max_iter, rtol=rtol
        )

    fit, cv = _cv_then_fit(lam, select, lambda: prior_fit(El, W, K, beta=beta, rtol=rtol), solve)
    if cv is not None:
        fit.rho_prior = np.full(cv.candidates.size, np.nan)
    return fit, cv


def _cv_then_fit(lam, select, prior, solve):
    """λ = "auto": ``select()`` (the cross-validation) chooses λ; then ``prior()`` at
    λ = ∞ or ``solve(λ)``; the fit records the candidates. Returns (fit, cv or None)."""
    cv = select() if isinstance(lam, str) else None
    if cv is not None:
        lam = cv.lam
    fit = prior() if math.isinf(lam) else solve(float(lam))
    if cv is not None:
        attach_cv(fit, cv)
    return fit, cv


def attach_cv(fit, cv) -> None:
    """Record the cross-validation's candidates on a fit (eq. 15 not computed: NaN)."""
    g = cv.candidates.size
    fit.lam_grid = cv.candidates
    fit.scores = np.full(g, np.nan)
    fit.rho_target = np.full(g, np.nan)
    fit.n_iter += cv.n_iter


def mk_cv_select_and_solve(
    Els,
    Ws,
    Y,
    y,
    *,
    lam="auto",
    lam_grid=None,
    center_ideal: bool = True,
    n_splits: int = DEFAULT_CV_SPLITS,
    rng=None,
    solver: str = "auto",
    tol: float = 1e-4,
    max_iter: int = 100,
    inner_max_iter: int = 500,
    rtol: float = 1e-10,
    rescale: bool = True,
    target: str = "classification",
):
    """:func:`~._multiple.mk_alignment_lambda_path` with λ by :func:`mk_cv_select_lambda`;
    (fit, cross-validation result or None), as :func:`cv_select_and_solve`."""
    Els, Ws = check_bank_blocks(Els, Ws)
    check_options(lam=lam, tol=tol, inner_max_iter=inner_max_iter, target=target)
    y = check_labels(y, Els[0].shape[0], target, rows="Els[0]")

    def select():
        return mk_cv_select_lambda(
            Els,
            Ws,
            y,
            lam_grid=CV_LAMBDA_GRID if lam_grid is None else lam_grid,
            center_ideal=center_ideal,
            n_splits=n_splits,
            rng=rng,
            solver=solver,
            rtol=rtol,
            rescale=rescale,
            target=target,
        )

    def solve(lam):
        return mk_alignment_lambda_path(
            Els,
            Ws,
            Y,
            lam=lam,
            solver=solver,
            tol=tol,
            max_iter=max_iter,
            inner_max_iter=inner_max_iter,
            rtol=rtol,
            rescale=rescale,
        )

    fit, cv = _cv_then_fit(lam, select, lambda: mk_prior_fit(Els, Ws, Y, rtol=rtol), solve)
    if cv is not None:
        fit.rho_blocks = np.full((cv.candidates.size, len(Els)), np.nan)
    return fit, cv

"""Exact dense LapRLS and LapSVM (Belkin, Niyogi & Sindhwani 2006), the ceiling of the
``ssl`` experiment: the expansion over all n rows, for n ≤ a few thousand.

Not part of the library (the leading underscore keeps it out of experiment discovery);
it is the reference the graph-regularized factors approximate.

The problem
-----------
With K the n × n kernel of all rows, L a graph Laplacian, J the diagonal 0/1 matrix of
the l labeled rows, Y the (n × c) one-vs-rest ±1 targets (zero on unlabeled rows) and
u + l = n, LapRLS is

    α = (J K + γ_A l I + γ_I l/(u+l)² L K)⁻¹ Y,          f = K α.

Write ρ = γ_I / (γ_A (u+l)²), the ratio of the two penalty weights as they appear in
that system (γ_I l/(u+l)² against γ_A l), and B = I + ρ L K. The system is
(J K + γ_A l B) α = Y; with α = B⁻¹ β the unlabeled rows give β_u = 0 and the labeled
ones (K B⁻¹)_LL β_L + γ_A l β_L = Y_L. K B⁻¹ = K (I + ρ L K)⁻¹ = (K⁻¹ + ρ L)⁻¹ is the
deformed kernel K̃ of Sindhwani, Niyogi & Belkin (2005): **LapRLS is kernel ridge on
K̃_LL with penalty γ_A l**, and f = K̃_{:,L} β_L. K̃ does not depend on the labels nor on
l, so one K̃ per ρ serves every split, every cross-validation fold and LapSVM.

LapSVM's dual (Belkin et al. 2006, §4.2) has Q = Y J K (2γ_A I + 2γ_I/(u+l)² L K)⁻¹ Jᵀ Y
= Y K̃_LL Y / (2γ_A) with box 0 ≤ β ≤ 1/l; rescaling β shows it is the standard SVM on
the kernel K̃_LL with C = 1/(2 γ_A l) (and its bias), f = K̃_{:,L} (y ∘ β') + b.

Both are fitted here one-vs-rest; γ_A and ρ are chosen by 5-fold cross-validation over
the labeled rows (error, then squared loss of the decision values to break ties).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse as sp

__all__ = [
    "GAMMA_A_L_GRID",
    "KNN",
    "RATIO_GRID",
    "deformed_kernel",
    "knn_laplacian",
    "laprls_closed_form",
    "laprls_cv",
    "laprls_expansion",
    "lapsvm_cv",
    "ovr_decide",
    "ovr_targets",
    "ridge_on_labeled",
]

#: ρ = γ_I / (γ_A (u+l)²): the weight of the graph term relative to the ridge term.
RATIO_GRID = (0.0, 1e-2, 1.0, 1e2, 1e4)
#: γ_A l, the ridge penalty of the labeled rows' system.
GAMMA_A_L_GRID = (1e-4, 1e-3, 1e-2, 1e-1, 1.0)
KNN = 10
N_FOLDS = 5


# ---------------------------------------------------------------- graph and kernel


def knn_laplacian(X, k: int = KNN, *, weights: str = "heat"):
    """The normalized Laplacian I − D^{-1/2} W D^{-1/2} (sparse CSR) of the symmetrized
    k-nearest-neighbour graph of the rows of X (Euclidean). ``weights="heat"``:
    exp(−d²/t) with t the mean squared distance over the graph's edges; ``"binary"``: 1.
    """
    from sklearn.neighbors import kneighbors_graph

    n = X.shape[0]
    k = int(min(k, n - 1))
    G = kneighbors_graph(X, k, mode="distance", include_self=False).tocsr()
    d2 = G.data**2
    if weights == "heat":
        t = float(d2.mean()) if d2.size and d2.mean() > 0 else 1.0
        G.data = np.exp(-d2 / t)
    elif weights == "binary":
        G.data = np.ones_like(G.data)
    else:
        raise ValueError(f"weights must be 'heat' or 'binary'; got {weights!r}")
    W = G.maximum(G.T).tocsr()
    deg = np.asarray(W.sum(axis=1)).ravel()
    if np.any(deg <= 0):
        raise ValueError("the k-NN graph has an isolated row (zero degree)")
    s = sp.diags(1.0 / np.sqrt(deg))
    return (sp.identity(n, format="csr") - s @ W @ s).tocsr()


def deformed_kernel(K, L, ratio: float):
    """K̃ = K (I + ρ L K)⁻¹ = (I + ρ K L)⁻¹ K (symmetric; ρ = 0 gives K)."""
    K = np.asarray(K, dtype=np.float64)
    if ratio == 0:
        return K
    LK = L @ K if sp.issparse(L) else np.asarray(L) @ K
    A = ratio * LK.T  # ρ K L (K and L symmetric)
    A[np.diag_indices_from(A)] += 1.0
    Kt = scipy.linalg.solve(A, K, check_finite=False)
    return 0.5 * (Kt + Kt.T)


# ---------------------------------------------------------------- targets


def ovr_targets(codes, n_classes: int):
    """One-vs-rest ±1 targets of class codes 0…c−1: one column (+1 = class 1) for two
    classes, c columns otherwise."""
    codes = np.asarray(codes)
    if n_classes == 2:
        return np.where(codes == 1, 1.0, -1.0)[:, None]
    Y = -np.ones((codes.size, n_classes))
    Y[np.arange(codes.size), codes] = 1.0
    return Y


def ovr_decide(F, n_classes: int):
    """Class codes from decision values (sign for two classes, argmax otherwise)."""
    F = np.asarray(F)
    if n_classes == 2:
        return (F[:, 0] > 0).astype(np.int64)
    return np.argmax(F, axis=1).astype(np.int64)


# ---------------------------------------------------------------- LapRLS


def laprls_closed_form(K, L, labeled, Y_l, gamma_A, gamma_I):
    """α of the LapRLS system, solved as written (n × n): the reference the bench's
    deformed-kernel route is checked against. ``Y_l``: targets of the labeled rows."""
    K = np.asarray(K, dtype=np.float64)
    n = K.shape[0]
    labeled = np.asarray(labeled)
    nl = labeled.size
    J = np.zeros(n)
    J[labeled] = 1.0
    LK = L @ K if sp.issparse(L) else np.asarray(L) @ K
    A = J[:, None] * K + gamma_A * nl * np.eye(n) + (gamma_I * nl / n**2) * LK
    Y = np.zeros((n, np.asarray(Y_l).reshape(nl, -1).shape[1]))
    Y[labeled] = np.asarray(Y_l).reshape(nl, -1)
    return scipy.linalg.solve(A, Y)


def ridge_on_labeled(Kt_ll, Y_l, penalty):
    """β_L = (K̃_LL + penalty I)⁻¹ Y_L (penalty = γ_A l)."""
    A = np.array(Kt_ll, dtype=np.float64, copy=True)
    A[np.diag_indices_from(A)] += penalty
    return scipy.linalg.solve(A, Y_l, assume_a="pos", check_finite=False)


def laprls_expansion(K, L, labeled, beta_l, ratio):
    """α = (I + ρ L K)⁻¹ E_L β_L, the expansion over all n rows whose K α equals
    K̃_{:,L} β_L (it satisfies the LapRLS normal equations)."""
    K = np.asarray(K, dtype=np.float64)
    n = K.shape[0]
    rhs = np.zeros((n, np.asarray(beta_l).reshape(len(labeled), -1).shape[1]))
    rhs[np.asarray(labeled)] = np.asarray(beta_l).reshape(len(labeled), -1)
    if ratio == 0:
        return rhs
    LK = L @ K if sp.issparse(L) else np.asarray(L) @ K
    A = ratio * LK
    A[np.diag_indices_from(A)] += 1.0
    return scipy.linalg.solve(A, rhs)


# ---------------------------------------------------------------- cross-validation


def labeled_folds(codes_l, seed, n_folds: int = N_FOLDS):
    """Folds over the labeled rows: stratified when every class has at least two rows
    (at most ``n_folds``, at most the smallest class count), plain k-fold otherwise."""
    from sklearn.model_selection import KFold, StratifiedKFold

    codes_l = np.asarray(codes_l)
    counts = np.bincount(codes_l)
    counts = counts[counts > 0]
    rng = int(np.random.SeedSequence([int(seed), 23]).generate_state(1)[0])
    if counts.min() >= 2:
        k = int(min(n_folds, counts.min()))
        splitter = StratifiedKFold(k, shuffle=True, random_state=rng)
        return list(splitter.split(np.zeros(codes_l.size), codes_l))
    k = int(min(n_folds, codes_l.size))
    return list(KFold(k, shuffle=True, random_state=rng).split(np.zeros(codes_l.size)))


def _cv_scores(fold_model, Kt_ll, codes_l, n_classes, folds, grid):
    """Mean (error, squared loss) over the folds for each value of ``grid``;
    ``fold_model(K_tt, K_vt, codes_t)`` returns ``value -> decision values of the
    held-out rows``."""
    Y = ovr_targets(codes_l, n_classes)
    err = np.zeros(len(grid))
    sq = np.zeros(len(grid))
    for tr, va in folds:
        predict = fold_model(Kt_ll[np.ix_(tr, tr)], Kt_ll[np.ix_(va, tr)], codes_l[tr])
        for j, value in enumerate(grid):
            F = predict(value)
            err[j] += np.mean(ovr_decide(F, n_classes) != codes_l[va]) / len(folds)
            sq[j] += np.mean((np.clip(F, -1.0, 1.0) - Y[va]) ** 2) / len(folds)
    return err, sq


def _ridge_fold(n_classes, n_labeled):
    """Kernel ridge on a fold for every γ_A l of the grid (one eigh per fold; the
    penalty is γ_A l_fold, the same γ_A as on all l labeled rows)."""

    def fold_model(K_tt, K_vt, codes_t):
        w, V = np.linalg.eigh(K_tt)
        w = np.clip(w, 0.0, None)
        VtY = V.T @ ovr_targets(codes_t, n_classes)
        scale = codes_t.size / n_labeled
        return lambda value: K_vt @ (V @ (VtY / (w + value * scale)[:, None]))

    return fold_model


def _best_of(scores_by_ratio):
    """The (ratio, γ_A l) of the lowest (error, squared loss); the first in grid order
    on an exact tie."""
    best = None
    for ratio, (err, sq) in scores_by_ratio:
        for j, a in enumerate(GAMMA_A_L_GRID):
            key = (round(float(err[j]), 12), float(sq[j]))
            if best is None or key < best[0]:
                best = (key, ratio, a)
    return best[1], best[2]


def _choose_by_cv(model, deformed, labeled, codes_l, n_classes, seed):
    """(ρ, γ_A l) with the best cross-validation score over the labeled rows, each ρ of
    :data:`RATIO_GRID` scored on its deformed kernel's labeled block."""
    folds = labeled_folds(codes_l, seed)
    scores = [
        (
            r,
            _cv_scores(
                model,
                deformed(r)[np.ix_(labeled, labeled)],
                codes_l,
                n_classes,
                folds,
                GAMMA_A_L_GRID,
            ),
        )
        for r in RATIO_GRID
    ]
    return _best_of(scores)


def laprls_cv(deformed, labeled, codes_l, n_classes, seed):
    """LapRLS with (ρ, γ_A l) chosen by cross-validation over the labeled rows.

    ``deformed(ρ)`` returns K̃ (n × n) for ρ in :data:`RATIO_GRID`. Returns the decision
    values of every row (n × c') and the chosen ``{"ratio", "gamma_A_l"}``.
    """
    labeled = np.asarray(labeled)
    codes_l = np.asarray(codes_l)
    model = _ridge_fold(n_classes, labeled.size)
    ratio, a = _choose_by_cv(model, deformed, labeled, codes_l, n_classes, seed)
    Kt = deformed(ratio)
    beta = ridge_on_labeled(Kt[np.ix_(labeled, labeled)], ovr_targets(codes_l, n_classes), a)
    return Kt[:, labeled] @ beta, {"ratio": float(ratio), "gamma_A_l": float(a)}


def _svm_columns(K_tt, K_vt, codes_t, value, n_classes):
    """One-vs-rest SVMs on a precomputed kernel, C = 1/(2 γ_A l_fold) (``value`` is
    γ_A l_fold); a column whose training targets are all one sign decides that sign."""
    from sklearn.svm import SVC

    Y = ovr_targets(codes_t, n_classes)
    F = np.empty((K_vt.shape[0], Y.shape[1]))
    for j in range(Y.shape[1]):
        y = Y[:, j]
        if np.all(y == y[0]):
            F[:, j] = y[0]
            continue
        svc = SVC(kernel="precomputed", C=1.0 / (2.0 * value)).fit(K_tt, y)
        F[:, j] = svc.decision_function(K_vt)
    return F


def lapsvm_cv(deformed, labeled, codes_l, n_classes, seed):
    """LapSVM (the SVM on K̃_LL, C = 1/(2 γ_A l)) with (ρ, γ_A l) chosen by
    cross-validation over the labeled rows; as :func:`laprls_cv`."""
    labeled = np.asarray(labeled)
    codes_l = np.asarray(codes_l)
    nl = labeled.size

    def fold_model(K_tt, K_vt, codes_t):
        return lambda value: _svm_columns(K_tt, K_vt, codes_t, value * codes_t.size / nl, n_classes)

    ratio, a = _choose_by_cv(fold_model, deformed, labeled, codes_l, n_classes, seed)
    Kt = deformed(ratio)
    F = _svm_columns(Kt[np.ix_(labeled, labeled)], Kt[:, labeled], codes_l, a, n_classes)
    return F, {"ratio": float(ratio), "gamma_A_l": float(a)}

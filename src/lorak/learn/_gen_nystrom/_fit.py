"""One call per estimator: how λ is chosen, decided here and nowhere else.

By cross-validation (:mod:`._cv`), along the λ path by the alignment criterion
(:mod:`._path`, also the fallback of "cv"), or a given λ; with a graph prior, (t, λ)
together. The three ways: :ref:`guide-internals-learn`.
"""

from __future__ import annotations

import math

import numpy as np

from ..._core.linalg import symmetrize as _sym
from ._cv import (
    CV_LAMBDA_GRID,
    DEFAULT_CV_SPLITS,
    attach_cv,
    check_prior_blocks,
    cv_criterion,
    cv_select_and_solve,
    cv_select_prior_gamma,
    mk_cv_select_and_solve,
    prior_row_space,
)
from ._multiple import MKGenNystromFit, check_bank_blocks, mk_alignment_lambda_path
from ._path import DEFAULT_LAMBDA_GRID, GenNystromFit, alignment_lambda_path, prior_fit
from ._problem import check_blocks, check_labels, check_options, psd_factor

__all__ = [
    "CRITERIA",
    "fit_generalized_nystroem",
    "fit_mk_generalized_nystroem",
]

#: How ``lam="auto"`` chooses λ.
CRITERIA = ("cv", "paper", "kernel")


def _is_inf(lam) -> bool:
    return not isinstance(lam, str) and math.isinf(lam)


def _check_criterion(criterion, lam, y, owner):
    if criterion not in CRITERIA:
        valid = ", ".join(repr(c) for c in CRITERIA)
        raise ValueError(f"unknown criterion {criterion!r}; valid names are {valid}")
    if criterion == "cv" and isinstance(lam, str) and y is None:
        raise ValueError(
            f"{owner}: criterion='cv' chooses lam by cross-validation over the labeled rows "
            "and needs their labels or responses, y; pass y, or choose criterion='paper'"
        )


def fit_generalized_nystroem(
    El,
    W,
    K,
    *,
    y=None,
    mask=None,
    target: str = "classification",
    lam="auto",
    lam_grid=None,
    beta=1.0,
    criterion: str = "cv",
    center_ideal: bool = True,
    n_splits: int = DEFAULT_CV_SPLITS,
    rng=None,
    prior_gammas=None,
    solver: str = "auto",
    tol: float = 1e-4,
    max_iter: int = 500,
    rtol: float = 1e-10,
    owner: str = "fit_generalized_nystroem",
) -> GenNystromFit:
    """Learn S of eq. (7) with λ chosen by ``criterion`` (or given); the fit record.

    Parameters
    ----------
    El : (l, m) kernel between the labeled rows and the landmarks; with
        ``prior_gammas``, a sequence of (l, r) blocks: a prior factor's rows of the
        labeled rows at each graph weight t.
    W : (m, m) landmark kernel (the prior is β W⁺); None with ``prior_gammas`` (W = I).
    K : (l, l) target: the ideal kernel (eq. 6, centred with ``center_ideal``), the
        regression target ỹỹᵀ, or the must-link target (with ``mask``).
    y : (l,) the labels (or responses) of the rows of El: what cross-validation splits
        and scores; not needed for other criteria.
    mask : (l, l) must-link mask T of §3.3, or None. With a mask "cv" becomes "paper"
        (no class labels to score).
    target : "classification" or "regression" (what ``y`` holds).
    lam : "auto" (chosen by ``criterion``) or a number > 0; ``inf`` is S = β W⁺.
    lam_grid : the λ candidates of "auto"; None: :data:`CV_LAMBDA_GRID` (with λ = ∞
        added) for "cv", :data:`DEFAULT_LAMBDA_GRID` for "paper" and "kernel".
    beta : "heuristic" (eq. 8), "optimize" (Appendix A) or a number > 0.
    criterion : "cv", "paper" or "kernel". "cv" falls back to "paper", with a warning
        naming ``owner``, when a class has fewer than 2 labeled rows.
    center_ideal : whether K is the centred ideal kernel (the folds build theirs alike).
    n_splits, rng : folds and their random assignment ("cv").
    prior_gammas : None, or the graph weights t of a prior factor, one per block of
        ``El``: t is chosen with λ by one cross-validation over the labeled rows (``y``
        needed, ``criterion="cv"``, no ``mask``; λ given: t alone), then one solve on
        the chosen t's block; the record's ``prior_gamma_cv`` holds the search.
    solver, tol, max_iter, rtol : the solver of (7) ("auto", "admm", "fista" or "pg"),
        its relative tolerance and iteration cap, and the eigenvalue cut-off of W⁺.
    owner : the name warnings start with.

    Returns
    -------
    GenNystromFit with ``F`` (F Fᵀ = S), ``criterion`` (None for a given λ), ``cv``
    (the :class:`LambdaCV` record, or None) and ``prior_gamma_cv`` (the
    :class:`PriorGammaCV` record with ``prior_gammas``, else None).
    """
    options = {"solver": solver, "tol": tol, "max_iter": max_iter, "rtol": rtol}
    search = {
        "lam_grid": lam_grid,
        "beta": beta,
        "center_ideal": center_ideal,
        "n_splits": n_splits,
        "rng": rng,
        "target": target,
    }
    if prior_gammas is not None:
        _check_prior_gamma_call(W, mask, criterion, y, owner)
        return _fit_prior_gamma(El, K, y, prior_gammas, lam, search, options, owner)
    if mask is not None and criterion == "cv":
        criterion = "paper"
    _check_criterion(criterion, lam, y, owner)
    El, W, K, mask = check_blocks(El, W, K, mask=mask)
    check_options(lam=lam, target=target, **options)
    if y is not None:
        y = check_labels(y, El.shape[0], target)
    criterion = cv_criterion(criterion, lam, y, target, owner)
    cv = None
    if criterion == "cv" and (isinstance(lam, str) or _is_inf(lam)):
        fit, cv = cv_select_and_solve(El, W, K, y, lam=lam, **search, **options)
    elif _is_inf(lam):
        fit = prior_fit(El, W, K, beta=beta, mask=mask, rtol=rtol)
    else:
        fit = alignment_lambda_path(
            El,
            W,
            K,
            mask=mask,
            lam=lam,
            lam_grid=DEFAULT_LAMBDA_GRID if lam_grid is None else lam_grid,
            beta=beta,
            criterion="paper" if criterion == "cv" else criterion,
            **options,
        )
    if fit.F is None:
        fit.F = psd_factor(fit.S, rtol, metric=W)
    fit.criterion = criterion if isinstance(lam, str) else None
    fit.cv = cv
    return fit


def _check_prior_gamma_call(W, mask, criterion, y, owner):
    """What a prior's graph weight chosen by cross-validation rules out: a landmark
    kernel (the prior's W is I), a must-link mask, another criterion, no labels."""
    wrong = [
        what
        for what, bad in (
            ("W must be None (the prior's W is I)", W is not None),
            ("mask must be None", mask is not None),
            (f"criterion must be 'cv', not {criterion!r}", criterion != "cv"),
            ("y (the labels scored) is needed", y is None),
        )
        if bad
    ]
    if wrong:
        raise ValueError(
            f"{owner}: prior_gammas chooses the prior's graph weight by cross-validation "
            f"over the labeled rows: {'; '.join(wrong)}"
        )


def fit_mk_generalized_nystroem(
    Els,
    Ws,
    Y,
    *,
    y=None,
    target: str = "classification",
    lam="auto",
    lam_grid=None,
    criterion: str = "cv",
    center_ideal: bool = True,
    n_splits: int = DEFAULT_CV_SPLITS,
    rng=None,
    solver: str = "auto",
    tol: float = 1e-4,
    max_iter: int = 100,
    inner_max_iter: int = 500,
    rtol: float = 1e-10,
    rescale: bool = True,
    owner: str = "fit_mk_generalized_nystroem",
) -> MKGenNystromFit:
    """Learn T^(1..M) and α of eq. (17) with λ chosen by ``criterion`` (or given).

    ``Els``, ``Ws``: the blocks of the labeled rows and the landmark kernels; ``Y`` the
    target factor (K* = Y Yᵀ); ``y`` the labels or responses the cross-validation
    splits. λ = ∞ is the uniform kernel sum on the same landmarks. The other
    parameters as in :func:`fit_generalized_nystroem` (``max_iter``: alternations per λ,
    ``inner_max_iter``: iterations of each block solve, ``rescale``: the exact scaling
    step of each alternation). Returns the :class:`MKGenNystromFit` with ``F`` (the
    block factors, F_j F_jᵀ = T^(j)), ``criterion`` and ``cv``.
    """
    _check_criterion(criterion, lam, y, owner)
    Els, Ws = check_bank_blocks(Els, Ws)
    options = {
        "solver": solver,
        "tol": tol,
        "max_iter": max_iter,
        "inner_max_iter": inner_max_iter,
        "rtol": rtol,
    }
    check_options(lam=lam, target=target, **options)
    if y is not None:
        y = check_labels(y, Els[0].shape[0], target, rows="Els[0]")
    criterion = cv_criterion(criterion, lam, y, target, owner)
    cv = None
    options["rescale"] = rescale
    search = {
        "lam_grid": lam_grid,
        "center_ideal": center_ideal,
        "n_splits": n_splits,
        "rng": rng,
        "target": target,
    }
    if criterion == "cv" or _is_inf(lam):
        fit, cv = mk_cv_select_and_solve(Els, Ws, Y, y, lam=lam, **search, **options)
    else:
        fit = mk_alignment_lambda_path(
            Els,
            Ws,
            Y,
            lam=lam,
            lam_grid=DEFAULT_LAMBDA_GRID if lam_grid is None else lam_grid,
            criterion=criterion,
            **options,
        )
    fit.F = [psd_factor(T, rtol, metric=Wj) for T, Wj in zip(fit.T, Ws, strict=True)]
    fit.criterion = criterion if isinstance(lam, str) else None
    fit.cv = cv
    return fit


def _fit_prior_gamma(Els, K, y, ts, lam, search, options, owner) -> GenNystromFit:
    """S of eq. (7) on a prior factor whose graph weight t is chosen with λ.

    ``Els[i]``: the prior's rows of the labeled rows at t = ``ts[i]`` (W = I, S₀ = β I).
    (t, λ) by :func:`~._cv.cv_select_prior_gamma` over ``ts`` × the λ candidates —
    ``lam="auto"``: ``lam_grid`` (default :data:`~._cv.CV_LAMBDA_GRID`) and λ = ∞; a
    number: that λ alone (``inf``: the prior at t itself), so that only t is chosen —
    then one solve on all labeled rows at the chosen cell, as
    :func:`fit_generalized_nystroem` solves a given λ on ``Els[index]`` — with a number
    β and a finite λ on the labeled rows' span (:func:`~._cv.prior_row_space`, the same
    minimizer) and lifted back to the prior's r coordinates. The fit of the chosen cell
    has ``criterion`` "cv" for ``lam="auto"`` (else None), ``cv`` the chosen t's
    :class:`LambdaCV` record (``n_iter`` over every t) and ``prior_gamma_cv`` the
    :class:`PriorGammaCV` table.
    """
    target, beta, lam_grid = search["target"], search["beta"], search["lam_grid"]
    rtol = options["rtol"]
    check_options(lam=lam, target=target, **options)
    checked, _ = check_prior_blocks(Els, ts)
    check_blocks(checked[0], K=K)  # K: one row and column per labeled row, before the search
    auto = isinstance(lam, str)
    if auto:
        grid, include_prior = CV_LAMBDA_GRID if lam_grid is None else lam_grid, True
    elif _is_inf(lam):
        grid, include_prior = (), True
    else:
        grid, include_prior = (float(lam),), False
    sel = cv_select_prior_gamma(
        Els,
        y,
        ts=ts,
        lam_grid=grid,
        include_prior=include_prior,
        beta=beta,
        center_ideal=search["center_ideal"],
        n_splits=search["n_splits"],
        rng=search["rng"],
        solver=options["solver"],
        max_iter=options["max_iter"],
        rtol=rtol,
        target=target,
    )
    El = checked[sel.index]
    m = El.shape[1]
    V1 = None
    if not (isinstance(beta, str) or math.isinf(sel.lam)):  # λ = ∞: β I exactly, below
        El, V1 = prior_row_space(El)
    fit = fit_generalized_nystroem(
        El,
        np.eye(El.shape[1]),
        K,
        y=y,
        target=target,
        lam=sel.lam,
        beta=beta,
        criterion="cv",
        center_ideal=search["center_ideal"],
        owner=owner,
        **options,
    )
    if V1 is not None:  # back to the prior's r coordinates: S = β I + V₁(A − β I)V₁ᵀ
        b = float(fit.beta)
        fit.S = _sym(b * np.eye(m) + V1 @ (fit.S - b * np.eye(V1.shape[1])) @ V1.T)
        fit.S0 = b * np.eye(m)
        fit.F = psd_factor(fit.S, rtol, metric=np.eye(m))
    cv = sel.at(sel.index)
    attach_cv(fit, cv)
    fit.rho_prior = np.full(cv.candidates.size, np.nan)
    fit.criterion = "cv" if auto else None
    fit.cv = cv
    fit.prior_gamma_cv = sel
    return fit

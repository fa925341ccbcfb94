"""Landmarks sampled by approximate ridge leverage scores, without the n × n kernel.

Estimated bottom-up on nested subsamples (Musco & Musco 2017): :ref:`guide-rls`.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from scipy.linalg import LinAlgError, cholesky, eigvalsh, solve_triangular

from .._core.config import get_config
from .._core.rows import take_rows
from .._core.validation import as_float64
from ..kernels import chunk_rows, kernel_product
from ._base import Landmarks

__all__ = ["DEFAULT_RANK_FRACTION", "ridge_leverage_scores", "rls_landmarks"]

#: ``rank_fraction`` of :func:`rls_landmarks`: the tail rule's λ is set from the top
#: k = ⌈0.1 · m⌉ eigenvalues of the sample (the best of 0.5, 0.25, 0.1 on the benchmark
#: sets; see the user guide, "How the leverage scores are estimated").
DEFAULT_RANK_FRACTION = 0.1
_SHRINK = 4  # each level keeps a quarter of the rows of the one above


def _tail_lambda(W, weights, k):
    """(Σ_{i>k} σᵢ)/k for the spectrum σ of D W D; None when that is not positive."""
    Ww = W * weights[:, None] * weights[None, :]
    sig = np.clip(eigvalsh(0.5 * (Ww + Ww.T), check_finite=False), 0.0, None)[::-1]
    if k >= sig.size:
        return None
    lam = float(sig[k:].sum()) / k
    return lam if lam > 0 else None


def _lambda_floor(W):
    # below this, K_SS + λD⁻² is singular to working precision (duplicate rows) and the
    # scores are round-off; the floor is relative to the kernel's own scale
    return 1e3 * W.shape[0] * np.finfo(np.float64).eps * max(float(np.mean(np.diag(W))), 1e-300)


def _scores(X, rows, S64, W, weights, lam, kernel, budget):
    """ℓ̃ for X[rows] against the weighted sample S (points, W = k(S, S)), at ridge λ."""
    lam = max(lam, _lambda_floor(W))
    R = W + np.diag(lam / weights**2)
    R = 0.5 * (R + R.T)
    try:
        L = cholesky(R, lower=True, check_finite=False)
    except LinAlgError:  # pragma: no cover - R ⪰ λ D⁻² > 0 up to round-off
        R += np.eye(R.shape[0]) * (1e-8 * float(np.mean(np.diag(R))))
        L = cholesky(R, lower=True, check_finite=False)
    U = np.triu(solve_triangular(L, np.eye(L.shape[0]), lower=True, check_finite=False).T)
    s = U.shape[0]
    out = np.empty(len(rows))
    step = chunk_rows(s, 8, budget, len(rows))
    buf = np.empty((min(step, len(rows)), s))
    for a in range(0, len(rows), step):
        b = min(a + step, len(rows))
        Xc = as_float64(take_rows(X, rows[a:b]))
        Y = kernel_product(kernel, Xc, S64, U, out=buf[: b - a], upper_triangular=True)
        q = np.asarray(kernel.diag(Xc), dtype=np.float64) - np.einsum("ij,ij->i", Y, Y)
        out[a:b] = np.maximum(q, 0.0) / lam
    return np.minimum(out, 1.0), lam


def _poisson_sample(scores, size, rng):
    """Coin flips with p = min(1, t·score), Σp = size; returns (positions, p)."""
    pos = np.flatnonzero(scores > 0)
    sc = scores[pos]
    if pos.size <= size:
        return pos, np.ones(pos.size)
    # Σ min(1, t·sc) is increasing in t: bisection in log t
    lo, hi = size / sc.sum(), size / sc.min()
    for _ in range(100):
        mid = math.sqrt(lo * hi)
        if np.minimum(1.0, mid * sc).sum() < size:
            lo = mid
        else:
            hi = mid
        if hi / lo < 1 + 1e-6:
            break
    p = np.minimum(1.0, hi * sc)
    keep = rng.random(pos.size) < p
    if not keep.any():  # pragma: no cover - needs Σp = size ≥ 1 to fail every flip
        keep[np.argmax(p)] = True
    return pos[keep], p[keep]


def _weighted_pick(scores, m, rng):
    """m distinct positions, drawn without replacement with probabilities ∝ scores."""
    top = float(scores.max()) if scores.size else 0.0
    w = np.maximum(scores, 1e-12 * top if top > 0 else 1.0)
    keys = rng.standard_exponential(scores.size) / w
    idx = np.argpartition(keys, m - 1)[:m] if m < scores.size else np.arange(scores.size)
    return np.sort(idx)


def _check_params(m, lam, rank_fraction, sample_size, n):
    if lam is not None:
        if isinstance(lam, bool) or not isinstance(lam, numbers.Real) or not lam > 0:
            raise ValueError(f"lam must be a positive number or None; got {lam!r}")
    if isinstance(rank_fraction, bool) or not isinstance(rank_fraction, numbers.Real):
        raise TypeError(f"rank_fraction must be a number; got {rank_fraction!r}")
    if not 0 < rank_fraction < 1:
        raise ValueError(f"rank_fraction must be in (0, 1); got {rank_fraction!r}")
    s = max(2, math.ceil(m / 2)) if sample_size is None else sample_size
    if isinstance(s, bool) or not isinstance(s, numbers.Integral) or s < 2:
        raise ValueError(f"sample_size must be an integer >= 2; got {sample_size!r}")
    return min(int(s), n)


def ridge_leverage_scores(
    X,
    n_landmarks,
    *,
    kernel,
    rng,
    lam=None,
    rank_fraction=DEFAULT_RANK_FRACTION,
    sample_size=None,
    budget=None,
):
    """Approximate λ-ridge leverage scores of every row of X (see :ref:`guide-rls`).

    Parameters
    ----------
    X : (n, d) array (dense or CSR).
    n_landmarks : int, m; sets the default λ and the sample size.
    kernel : a resolved :class:`lorak.kernels.Kernel`.
    rng : numpy Generator.
    lam : float or None, a fixed ridge λ (None: the tail rule, per level).
    rank_fraction : float in (0, 1), k = ⌈rank_fraction · m⌉ in the tail rule.
    sample_size : int or None, rows of the intermediate samples (default ⌈m/2⌉).
    budget : bytes per kernel chunk (default: the library's memory budget).

    Returns
    -------
    scores : (n,) float64 estimates of ℓᵢ(λ), clipped to [0, 1].
    info : dict with ``lam`` (the λ of the last level), ``levels``, ``sample_sizes``.
    """
    if kernel is None:
        raise ValueError("ridge leverage scores need the kernel (kernel=None given)")
    n = X.shape[0]
    m = int(n_landmarks)
    s = _check_params(m, lam, rank_fraction, sample_size, n)
    budget = get_config()["memory_budget"] if budget is None else budget
    k = max(1, min(s - 1, math.ceil(rank_fraction * m)))
    perm = rng.permutation(n)
    sizes = [n]
    while sizes[-1] > s:
        sizes.append(math.ceil(sizes[-1] / _SHRINK))
    sample = perm[: sizes[-1]]  # the base level, whole, weights 1
    weights = np.ones(sample.size)
    sample_sizes = [int(sample.size)]
    scores = None
    lam_used = None
    # with a single level (n ≤ s) the sample is every row: the scores are exact
    levels = range(len(sizes) - 2, -1, -1) if len(sizes) > 1 else [0]
    for level in levels:
        rows = perm[: sizes[level]]
        S = as_float64(take_rows(X, sample))
        W = np.asarray(kernel(S, S), dtype=np.float64)
        lev_lam = lam if lam is not None else _tail_lambda(W, weights, k)
        if lev_lam is None:  # the sample's spectrum has no tail: a tiny ridge
            lev_lam = _lambda_floor(W)
        scores, lam_used = _scores(X, rows, S, W, weights, lev_lam, kernel, budget)
        if level > 0:
            pos, p = _poisson_sample(scores, s, rng)
            sample = rows[pos]
            weights = 1.0 / np.sqrt(p)
            sample_sizes.append(int(sample.size))
    out = np.empty(n)
    out[perm] = scores
    return out, {"lam": lam_used, "levels": len(sizes), "sample_sizes": sample_sizes}


def rls_landmarks(
    X,
    n_landmarks,
    *,
    rng,
    kernel,
    lam=None,
    rank_fraction=DEFAULT_RANK_FRACTION,
    sample_size=None,
    budget=None,
):
    """m distinct rows drawn with probabilities ∝ approximate ridge leverage scores.

    The strategy behind ``landmarks="rls"``; pass other settings through a callable,
    e.g. ``landmarks=functools.partial(rls_landmarks, rank_fraction=0.25)``.
    ``info`` holds the scores (``leverage_scores``), λ and the estimated effective
    dimension Σ ℓ̃ᵢ.
    """
    scores, info = ridge_leverage_scores(
        X,
        n_landmarks,
        kernel=kernel,
        rng=rng,
        lam=lam,
        rank_fraction=rank_fraction,
        sample_size=sample_size,
        budget=budget,
    )
    idx = _weighted_pick(scores, int(n_landmarks), rng)
    info = {**info, "leverage_scores": scores, "effective_dimension": float(scores.sum())}
    return Landmarks(points=take_rows(X, idx), indices=idx.astype(np.intp), info=info)

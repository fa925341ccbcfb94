"""Diagnostic plots of low-rank kernels (matplotlib, the optional ``plot`` extra).

Importing this module does not import matplotlib: each function imports it when
called (``pip install lorak[plot]`` if it is missing) and selects the non-interactive
Agg backend when no backend has been chosen yet. Every function draws into the
Axes ``ax`` when one is given (else a new figure) and returns that Axes, so plots
compose: call a function twice with the same ``ax`` to overlay two methods.

Examples
--------
>>> import numpy as np
>>> from lorak import CSI
>>> from lorak.datasets import make_ringnorm
>>> from lorak import plot
>>> X, y = make_ringnorm(300, random_state=0)
>>> csi = CSI(n_components=15, lookahead=5).fit(X, y)
>>> ax = plot.csi_errors(csi)
>>> ax.get_xlabel()
'rank (pivots chosen)'
"""

from __future__ import annotations

import numbers
import os

import numpy as np

__all__ = [
    "alignment_vs_lambda",
    "csi_errors",
    "csi_gains",
    "embedding",
    "error_vs_rank",
    "kernel_heatmap",
    "kernel_weights",
]

_INSTALL = "lorak.plot needs matplotlib: install it with `pip install lorak[plot]`"


# ---------------------------------------------------------------- matplotlib plumbing


def _decorate(ax, xlabel, ylabel, *, logx=False, logy=False, legend=True):
    """Axis scales, labels, a light grid and a small legend: every plot's last step."""
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    if legend:
        ax.legend(fontsize=8)
    return ax


def _pyplot():
    """matplotlib.pyplot, imported on demand (Agg when no backend was chosen)."""
    try:
        import matplotlib
    except ImportError as exc:  # pragma: no cover - exercised by monkeypatching
        raise ImportError(_INSTALL) from exc
    import sys

    if "matplotlib.pyplot" not in sys.modules and not os.environ.get("MPLBACKEND"):
        get = getattr(matplotlib.rcParams, "_get_backend_or_none", None)
        if get is None or get() is None:
            matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _axes(ax, figsize=(5.0, 3.6)):
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=figsize, layout="constrained")
        return ax
    from matplotlib.axes import Axes

    if not isinstance(ax, Axes):
        raise TypeError(f"ax must be a matplotlib Axes or None; got {type(ax).__name__}")
    return ax


# ---------------------------------------------------------------- validation helpers


def _vector(name, value, *, allow_nan=False) -> np.ndarray:
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be numeric; got {type(value).__name__}") from None
    if a.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got shape {a.shape}")
    if a.size == 0:
        raise ValueError(f"{name} is empty")
    bad = np.isinf(a) if allow_nan else ~np.isfinite(a)
    if bad.any():
        raise ValueError(f"{name} contains {'inf' if allow_nan else 'NaN or inf'} values")
    return a


def _fitted_attr(obj, names, argname, hint):
    for n in names:
        v = getattr(obj, n, None)
        if v is not None:
            return n, v
    if hasattr(obj, "fit") and not any(
        k.endswith("_") and not k.startswith("_") for k in vars(obj)
    ):
        from sklearn.exceptions import NotFittedError

        raise NotFittedError(f"{argname}: this {type(obj).__name__} is not fitted yet; call fit")
    raise TypeError(
        f"{argname} must be {hint}; {type(obj).__name__} has no attribute "
        + " or ".join(repr(n) for n in names)
    )


# ---------------------------------------------------------------- error vs rank


def error_vs_rank(
    ranks,
    errors,
    *,
    std=None,
    label=None,
    ax=None,
    logx: bool = False,
    logy: bool = False,
    xlabel: str = "rank m",
    ylabel: str = "approximation error",
    legend: bool = True,
    **line_kw,
):
    """Approximation error against rank, one line (call again for more methods).

    Parameters
    ----------
    ranks : (k,) array-like
        Ranks (or ratios m/n, or any x value), finite.
    errors : (k,) or (reps, k) array-like
        The error at each rank; with one row per repetition the line is the mean
        and the band ± one standard deviation (NaN entries, e.g. failed runs, are
        left out of the mean).
    std : (k,) array-like, optional
        A band of ± ``std`` around 1-D ``errors`` (not with 2-D ``errors``).
    label : str, optional
        Legend entry.
    ax : matplotlib Axes, optional
    logx, logy : bool
        Logarithmic axes.
    xlabel, ylabel : str
    legend : bool, default=True
        Draw the Axes' legend (when ``label`` is given).
    **line_kw
        Passed to ``ax.plot`` (``color``, ``ls``, ``marker`` ...).

    Returns
    -------
    ax : matplotlib Axes
    """
    x = _vector("ranks", ranks)
    try:
        E = np.asarray(errors, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"errors must be numeric; got {type(errors).__name__}") from None
    if E.ndim not in (1, 2):
        raise ValueError(f"errors must be 1-D or 2-D (reps × ranks); got shape {E.shape}")
    if E.shape[-1] != x.size:
        raise ValueError(
            f"errors has {E.shape[-1]} values per row but ranks has {x.size}; they must match"
        )
    if np.isinf(E).any():
        raise ValueError("errors contains inf values")
    if E.ndim == 2:
        if std is not None:
            raise ValueError("std must be None when errors is 2-D (it is computed from the rows)")
        if E.shape[0] == 0:
            raise ValueError("errors has no rows")
        ok = ~np.isnan(E)
        cnt = ok.sum(axis=0)
        mean = np.where(cnt > 0, np.nansum(E, axis=0) / np.maximum(cnt, 1), np.nan)
        dev = np.where(ok, E - mean, 0.0)
        sd = np.sqrt((dev**2).sum(axis=0) / np.maximum(cnt - 1, 1))
        sd = np.where(cnt > 1, sd, 0.0)
    else:
        mean = E
        sd = None if std is None else _vector("std", std)
        if sd is not None and sd.size != x.size:
            raise ValueError(f"std has {sd.size} values but ranks has {x.size}; they must match")
        if sd is not None and (sd < 0).any():
            raise ValueError("std must be non-negative")
    if np.isnan(mean).all():
        raise ValueError("errors has no finite value")
    order = np.argsort(x, kind="stable")
    x, mean = x[order], mean[order]
    ax = _axes(ax)
    line_kw.setdefault("marker", "o")
    line_kw.setdefault("ms", 3)
    (line,) = ax.plot(x, mean, label=label, **line_kw)
    if sd is not None and np.any(sd > 0):
        sd = sd[order]
        ax.fill_between(x, mean - sd, mean + sd, color=line.get_color(), alpha=0.2, lw=0)
    return _decorate(ax, xlabel, ylabel, logx=logx, logy=logy, legend=label is not None and legend)


# ---------------------------------------------------------------- alignment vs lambda


def alignment_vs_lambda(estimator, *, ax=None, show_factors: bool = True):
    """How λ was chosen by a fitted :class:`lorak.GeneralizedNystroem`.

    With ``criterion="cv"``: ``cv_errors_`` against the finite λ of ``lam_grid_``, the
    λ = ∞ candidate dashed. Otherwise ``alignment_scores_`` and its two factors
    (``alignment_factors_``, when ``show_factors``). The chosen ``lam_`` is dotted.

    Parameters
    ----------
    estimator : fitted GeneralizedNystroem (or any object with ``lam_grid_`` and
        ``alignment_scores_`` or ``cv_errors_``)
    ax : matplotlib Axes, optional
    show_factors : bool, default=True

    Returns
    -------
    ax : matplotlib Axes
    """
    _, grid = _fitted_attr(estimator, ("lam_grid_",), "estimator", "a fitted GeneralizedNystroem")
    cv_errors = getattr(estimator, "cv_errors_", None)
    if cv_errors is not None:
        return _cv_errors_vs_lambda(estimator, grid, cv_errors, ax)
    _, scores = _fitted_attr(
        estimator, ("alignment_scores_",), "estimator", "a fitted GeneralizedNystroem"
    )
    lam = _vector("estimator.lam_grid_", grid)
    sc = _vector("estimator.alignment_scores_", scores, allow_nan=True)
    if sc.size != lam.size:
        raise ValueError(
            f"estimator.alignment_scores_ has {sc.size} values but lam_grid_ has {lam.size}"
        )
    if (lam <= 0).any():
        raise ValueError("estimator.lam_grid_ must be positive (it is drawn on a log axis)")
    ax = _axes(ax)
    ax.plot(lam, sc, marker="o", ms=4, color="C0", label="alignment score (eq. 15)")
    factors = getattr(estimator, "alignment_factors_", None)
    if show_factors and factors is not None:
        F = np.asarray(factors, dtype=np.float64)
        if F.shape == (lam.size, 2):
            ax.plot(lam, F[:, 0], ls="--", color="C1", lw=1, label="ρ[S, S₀] (prior)")
            ax.plot(lam, F[:, 1], ls="--", color="C2", lw=1, label="ρ[E S Eᵀ, K*] (labels)")
    _chosen_line(ax, getattr(estimator, "lam_", None))
    _decorate(ax, "λ", "alignment", logx=True)
    if lam.size == 1:
        ax.set_title("λ was given: one point, no grid search", fontsize=9)
    return ax


def _chosen_line(ax, chosen):
    if chosen is not None and np.isfinite(chosen) and chosen > 0:
        ax.axvline(float(chosen), color="k", lw=0.8, ls=":", label=f"chosen λ = {chosen:.3g}")


def _cv_errors_vs_lambda(estimator, grid, cv_errors, ax):
    lam = np.asarray(grid, dtype=np.float64)
    if lam.ndim != 1 or lam.size == 0 or np.isnan(lam).any() or (lam <= 0).any():
        raise ValueError("estimator.lam_grid_ must be a 1-D array of positive λ (∞ allowed)")
    err = _vector("estimator.cv_errors_", cv_errors)
    if err.size != lam.size:
        raise ValueError(f"estimator.cv_errors_ has {err.size} values but lam_grid_ has {lam.size}")
    finite = np.isfinite(lam)
    ax = _axes(ax)
    if finite.any():
        ax.plot(lam[finite], err[finite], marker="o", ms=4, color="C0", label="held-out error")
    for e in err[~finite]:
        ax.axhline(float(e), color="C1", ls="--", lw=1, label="λ = ∞ (plain Nyström)")
    chosen = getattr(estimator, "lam_", None)
    _chosen_line(ax, chosen)
    if chosen is not None and np.isinf(chosen):
        ax.set_title("chosen λ = ∞: the labels did not help", fontsize=9)
    _decorate(ax, "λ", "cross-validated error rate", logx=True)
    return ax


# ---------------------------------------------------------------- CSI traces


def csi_errors(estimator, *, ax=None, logy: bool = True, objective: bool = True, label=None):
    """The two error traces of a fitted :class:`lorak.CSI` against the rank.

    ``approx_error_`` = tr(K − GGᵀ)/tr K and ``prediction_error_`` =
    ‖Y − QQᵀY‖²/‖Y‖² after k = 0..r pivots, and (when ``objective``) their weighted
    sum J (``objective_``). A fitted :class:`lorak.IncompleteCholesky` (its
    ``residual_trace_``, the first trace only) is accepted too, to compare on the
    same Axes.

    Parameters
    ----------
    estimator : fitted CSI or IncompleteCholesky
    ax : matplotlib Axes, optional
    logy : bool, default=True
    objective : bool, default=True
    label : str, optional
        Prefix of the legend entries (e.g. the method's name when overlaying).

    Returns
    -------
    ax : matplotlib Axes
    """
    name, approx = _fitted_attr(
        estimator,
        ("approx_error_", "residual_trace_"),
        "estimator",
        "a fitted CSI or IncompleteCholesky",
    )
    a = _vector(f"estimator.{name}", approx)
    pre = f"{label}: " if label else ""
    ax = _axes(ax)
    steps = np.arange(a.size)
    ax.plot(steps, a, color="C0" if not label else None, label=pre + "tr(K − GGᵀ) / tr K")
    if name == "approx_error_":
        p = _vector("estimator.prediction_error_", estimator.prediction_error_)
        if p.size != a.size:
            raise ValueError("estimator.prediction_error_ and approx_error_ differ in length")
        ax.plot(steps, p, color="C3" if not label else None, label=pre + "‖Y − QQᵀY‖² / ‖Y‖²")
        J = getattr(estimator, "objective_", None)
        if objective and J is not None:
            J = _vector("estimator.objective_", J)
            ax.plot(steps, J, color="k" if not label else None, ls="--", lw=1, label=pre + "J")
    return _decorate(ax, "rank (pivots chosen)", "relative error", logy=logy)


def csi_gains(estimator, *, ax=None, logy: bool = True, show_tol: bool = True):
    """CSI's look-ahead estimate of each chosen pivot's gain against its true gain.

    ``predicted_gain_`` (markers; filled where the pivot was in the look-ahead set,
    ``lookahead_hit_``, so the estimate is exact) and ``true_gain_`` (line) per step;
    the stopping tolerance ``tol`` as a horizontal line when ``show_tol``.

    Parameters
    ----------
    estimator : fitted CSI
    ax : matplotlib Axes, optional
    logy : bool, default=True
        Non-positive gains are not drawn on the log axis.
    show_tol : bool, default=True

    Returns
    -------
    ax : matplotlib Axes
    """
    _, tg = _fitted_attr(estimator, ("true_gain_",), "estimator", "a fitted CSI")
    true = _vector("estimator.true_gain_", tg)
    pred = _vector("estimator.predicted_gain_", getattr(estimator, "predicted_gain_", None))
    if pred.size != true.size:
        raise ValueError("estimator.predicted_gain_ and true_gain_ differ in length")
    hit = getattr(estimator, "lookahead_hit_", None)
    hit = np.zeros(true.size, bool) if hit is None else np.asarray(hit, dtype=bool)
    if hit.shape != true.shape:
        raise ValueError("estimator.lookahead_hit_ and true_gain_ differ in length")
    ax = _axes(ax)
    steps = np.arange(1, true.size + 1)
    ax.plot(steps, true, color="C0", lw=1.2, label="true gain")
    if (~hit).any():
        ax.scatter(
            steps[~hit],
            pred[~hit],
            s=14,
            facecolors="none",
            edgecolors="C3",
            label="predicted (look-ahead estimate)",
        )
    if hit.any():
        ax.scatter(
            steps[hit], pred[hit], s=14, color="C3", label="predicted (exact: in look-ahead)"
        )
    tol = getattr(estimator, "tol", None)
    if show_tol and isinstance(tol, numbers.Real) and tol > 0:
        ax.axhline(float(tol), color="k", ls=":", lw=0.8, label=f"tol = {tol:g}")
    return _decorate(ax, "step (pivot index)", "decrease of J", logy=logy)


# ---------------------------------------------------------------- kernel weights


def _kernel_list(estimator):
    for attr in ("kernels_", "kernel_bank_", "kernels"):
        bank = getattr(estimator, attr, None)
        if bank is None or isinstance(bank, str):
            continue
        try:
            return list(bank)
        except (TypeError, RuntimeError):  # an unresolved bank
            continue
    return None


def _bandwidths(kernels):
    out = []
    for k in kernels:
        get = getattr(k, "get_params", None)
        params = get() if callable(get) else {}
        b = params.get("bandwidth")
        if b is None and params.get("gamma"):
            b = 1.0 / float(params["gamma"])
        if not isinstance(b, numbers.Real) or not b > 0:
            return None
        out.append(float(b))
    return np.asarray(out)


def _weights_rows(weights, kernels, class_labels):
    """(W as (n_problems, M), kernels as a list or None, class labels or None) for
    :func:`kernel_weights`, from a fitted estimator or an array, checked."""
    if hasattr(weights, "fit") or hasattr(weights, "get_params"):
        est = weights
        _, weights = _fitted_attr(
            est,
            ("kernel_weights_", "weights_"),
            "weights",
            "a fitted multiple-kernel estimator or an array of weights",
        )
        if kernels is None:
            kernels = _kernel_list(est)
        if class_labels is None:
            class_labels = getattr(est, "classes_", None)
    try:
        W = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"weights must be numeric; got {type(weights).__name__}") from None
    if W.ndim == 1:
        W = W[None, :]
        class_labels = None
    if W.ndim != 2 or W.size == 0:
        raise ValueError(f"weights must be 1-D (M,) or 2-D (n_problems, M); got shape {W.shape}")
    if not np.isfinite(W).all():
        raise ValueError("weights contains NaN or inf values")
    M = W.shape[1]
    if kernels is not None:
        kernels = list(kernels)
        if len(kernels) != M:
            raise ValueError(f"kernels has {len(kernels)} entries but there are {M} weights")
    if class_labels is not None and len(class_labels) != W.shape[0]:
        if len(class_labels) == 2 and W.shape[0] == 1:
            class_labels = None  # a binary problem: one row of weights
        else:
            raise ValueError(
                f"class_labels has {len(class_labels)} entries but weights has {W.shape[0]} rows"
            )
    return W, kernels, class_labels


def kernel_weights(
    weights, *, kernels=None, ax=None, class_labels=None, log_bandwidth=None, label=None
):
    """Learned kernel weights, one line of stems per binary problem.

    Parameters
    ----------
    weights : fitted estimator or array-like
        A fitted :class:`lorak.LowRankMKLClassifier` (``kernel_weights_``), any fitted
        estimator with ``weights_`` (the multiple-kernel learners), or the weights
        themselves: (M,) or (n_problems, M) for one-vs-rest.
    kernels : sequence of kernels, optional
        The M base kernels (taken from the estimator's ``kernels_`` when it has
        them). When every kernel has a bandwidth, the x axis is the bandwidth (log
        scale); otherwise the kernel index.
    ax : matplotlib Axes, optional
    class_labels : sequence, optional
        Legend names of the rows of 2-D weights (default: the estimator's
        ``classes_``).
    log_bandwidth : bool, optional
        Force (True) or forbid (False) the bandwidth axis.
    label : str, optional
        Legend entry of 1-D weights (e.g. the method, when overlaying several).

    Returns
    -------
    ax : matplotlib Axes
    """
    W, kernels, class_labels = _weights_rows(weights, kernels, class_labels)
    M = W.shape[1]
    bw = _bandwidths(kernels) if kernels is not None else None
    if log_bandwidth is True and bw is None:
        raise ValueError("log_bandwidth=True needs kernels that all have a positive bandwidth")
    use_bw = bw is not None and log_bandwidth is not False
    x = bw if use_bw else np.arange(M)
    ax = _axes(ax)
    if not any(ln.get_gid() == "lorak-zero" for ln in ax.lines):
        ax.axhline(0, color="k", lw=0.5, gid="lorak-zero")
    for i, row in enumerate(W):
        lab = label if class_labels is None else f"class {class_labels[i]}"
        (line,) = ax.plot(x, row, marker="o", ms=4, lw=0.8, label=lab)
        ax.vlines(x, 0, row, color=line.get_color(), lw=0.6, alpha=0.5)
    if use_bw:
        ax.set_xscale("log")
        ax.set_xlabel("kernel bandwidth")
    else:
        ax.set_xlabel("kernel")
        if M <= 20:
            ax.set_xticks(np.arange(M))
    ax.set_ylabel("weight")
    ax.grid(alpha=0.3)
    if class_labels is not None or label is not None:
        ax.legend(fontsize=7, ncol=2)
    return ax


# ---------------------------------------------------------------- kernel heatmap / embedding


def _factor_rows(factor, X, argname):
    """G rows: ``factor.transform(X)`` for a fitted transformer, else the array itself."""
    if hasattr(factor, "transform"):
        if X is None:
            raise ValueError(f"X is required when {argname} is a fitted transformer")
        return np.asarray(factor.transform(X), dtype=np.float64)
    if X is not None:
        raise ValueError(f"X must be None when {argname} is an array (the factor rows)")
    try:
        G = np.asarray(factor, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(
            f"{argname} must be a fitted transformer or a numeric 2-D array; "
            f"got {type(factor).__name__}"
        ) from None
    return G


def _labels(y, n):
    if y is None:
        return None
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D; got shape {y.shape}")
    if y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} entries but there are {n} rows")
    return y


def _unlabeled_mask(y):
    if y.dtype.kind == "f":
        return np.isnan(y) | (y == -1)
    if y.dtype.kind in "iu":
        return y == -1
    return np.zeros(y.shape, bool)


def _sample(n, max_samples, random_state):
    if isinstance(max_samples, bool) or not isinstance(max_samples, numbers.Integral):
        raise TypeError(f"max_samples must be an int; got {max_samples!r}")
    if max_samples < 2:
        raise ValueError(f"max_samples must be >= 2; got {max_samples}")
    if n <= max_samples:
        return np.arange(n)
    rng = np.random.default_rng(random_state)
    return np.sort(rng.choice(n, size=int(max_samples), replace=False))


def kernel_heatmap(
    factor,
    X=None,
    y=None,
    *,
    max_samples: int = 300,
    ax=None,
    random_state=0,
    cmap="viridis",
    vmin=None,
    vmax=None,
):
    """The (learned) kernel K = G Gᵀ on a sample of at most ``max_samples`` rows.

    Rows are sampled at random (``random_state``) and sorted by label, so a kernel
    that fits the labels shows bright diagonal blocks; the class boundaries are
    drawn. Only the sample's K (≤ ``max_samples``² entries) is formed.

    Parameters
    ----------
    factor : fitted transformer or (n, r) array
        A fitted lorak factor (``transform(X)`` gives G) or the factor rows G.
    X : array-like, optional
        The rows to transform; required with a transformer, must be None with an array.
    y : (n,) array-like, optional
        Labels used to sort (−1 / NaN rows = unlabeled, placed last).
    max_samples : int, default=300
    ax : matplotlib Axes, optional
    random_state : int, Generator or None, default=0
    cmap : str, default="viridis"
    vmin, vmax : float, optional
        Colour limits (share them to compare several kernels; default: the data's).

    Returns
    -------
    ax : matplotlib Axes
    """
    if hasattr(factor, "transform"):
        if X is None:
            raise ValueError("X is required when factor is a fitted transformer")
        n = X.shape[0] if hasattr(X, "shape") else len(X)
    else:
        G = _factor_rows(factor, X, "factor")
        if G.ndim != 2:
            raise ValueError(f"factor must be 2-D (n, r); got shape {G.shape}")
        n = G.shape[0]
    if n == 0:
        raise ValueError("factor has no rows" if X is None else "X has no rows")
    y = _labels(y, n)
    idx = _sample(n, max_samples, random_state)
    if hasattr(factor, "transform"):
        Xs = X[idx] if hasattr(X, "shape") else np.asarray(X)[idx]
        G = _factor_rows(factor, Xs, "factor")
    else:
        G = G[idx]
    if not np.isfinite(G).all():
        raise ValueError("the factor rows contain NaN or inf values")
    ys = None if y is None else y[idx]
    if ys is not None:
        unl = _unlabeled_mask(ys)
        keys = np.where(unl, "~", ys.astype(str)) if ys.dtype.kind not in "iuf" else None
        if keys is None:
            order = np.lexsort((np.where(unl, 0, ys).astype(np.float64), unl))
        else:
            order = np.argsort(keys, kind="stable")
        G, ys = G[order], ys[order]
    K = G @ G.T
    ax = _axes(ax, figsize=(4.6, 4.0))
    im = ax.imshow(K, cmap=cmap, interpolation="nearest", vmin=vmin, vmax=vmax)
    ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    if ys is not None:
        unl = _unlabeled_mask(ys)
        tag = np.where(unl, "unlabeled", ys.astype(str))
        cuts = np.flatnonzero(tag[1:] != tag[:-1]) + 0.5
        for c in cuts:
            ax.axhline(c, color="w", lw=0.6)
            ax.axvline(c, color="w", lw=0.6)
    ax.set_title(f"kernel on {K.shape[0]} rows" + (" (sorted by label)" if ys is not None else ""))
    ax.set_xticks([])
    ax.set_yticks([])
    return ax


def embedding(
    Z, y=None, *, X=None, ax=None, max_samples: int = 5000, random_state=0, s: float = 8.0
):
    """A 2-D embedding coloured by label.

    With two columns ``Z`` is drawn as it is; with more, its top two principal
    directions are (the kernel PCA of the kernel Z Zᵀ).

    Parameters
    ----------
    Z : fitted transformer or (n, r) array, r ≥ 2
        The coordinates (a factor G, an embedding) or a fitted lorak factor, then
        ``X`` is transformed.
    y : (n,) array-like, optional
        Labels (−1 / NaN = unlabeled, drawn grey); real-valued y with many distinct
        values gets a colour bar.
    X : array-like, optional
        Rows to transform when ``Z`` is a transformer.
    ax : matplotlib Axes, optional
    max_samples : int, default=5000
        At most this many points are drawn (a random subset).
    random_state : int, Generator or None, default=0
    s : float
        Marker size.

    Returns
    -------
    ax : matplotlib Axes
    """
    P = _factor_rows(Z, X, "Z")
    if P.ndim != 2:
        raise ValueError(f"Z must be 2-D (n, r); got shape {P.shape}")
    n, r = P.shape
    if n == 0:
        raise ValueError("Z has no rows")
    if r < 2:
        raise ValueError(f"Z must have at least 2 columns; got {r}")
    if not np.isfinite(P).all():
        raise ValueError("Z contains NaN or inf values")
    y = _labels(y, n)
    if r > 2:
        C = P - P.mean(axis=0)
        Vt = np.linalg.svd(C, full_matrices=False)[2]
        P = C @ Vt[:2].T
        names = ("PC 1", "PC 2")
    else:
        names = ("dimension 1", "dimension 2")
    idx = _sample(n, max_samples, random_state)
    P = P[idx]
    ax = _axes(ax, figsize=(4.8, 4.0))
    if y is None:
        ax.scatter(P[:, 0], P[:, 1], s=s, alpha=0.8)
    else:
        ys = y[idx]
        unl = _unlabeled_mask(ys)
        if unl.any():
            ax.scatter(P[unl, 0], P[unl, 1], s=s * 0.6, color="0.75", label="unlabeled")
        lab = ys[~unl]
        classes = np.unique(lab)
        if unl.any():
            s = s * 2.5  # the few labeled points drawn larger than the unlabeled crowd
        continuous = lab.dtype.kind == "f" and classes.size > 20
        if continuous:
            sc = ax.scatter(P[~unl, 0], P[~unl, 1], c=lab, s=s, cmap="viridis")
            ax.figure.colorbar(sc, ax=ax, fraction=0.046, pad=0.04)
        else:
            for i, c in enumerate(classes):
                m = lab == c
                ax.scatter(
                    P[~unl][m, 0],
                    P[~unl][m, 1],
                    s=s,
                    alpha=0.85,
                    color=f"C{i % 10}",
                    label=str(c),
                )
        if (not continuous and classes.size <= 20) or unl.any():
            ax.legend(fontsize=7, markerscale=1.5, title="label", title_fontsize=7)
    ax.set_xlabel(names[0])
    ax.set_ylabel(names[1])
    ax.grid(alpha=0.3)
    return ax

"""``csi-rank``: Bach & Jordan (2005), Fig. 2 — the rank an LS-SVM needs, ICD vs CSI.

For each data set: 10 random 75/25 splits; features scaled to unit variance (discrete
ones one-hot first); a Gaussian kernel exp(−γ‖x − y‖²) and an LS-SVM. On each split, an
LS-SVM is trained on the full kernel and on the first r columns of an incomplete
Cholesky factor and of a CSI factor (κ = 0.99, δ = 40), for every rank r of the grid.
The paper's number is the *minimal rank* at which the mean test error over the splits is
within one standard deviation (over the splits) of the full-kernel LS-SVM's mean error;
both decompositions stop when the gain of a step falls below 1e-4 and have no other rank
bound. CSI should need markedly smaller ranks (ringnorm 14 → 3, twonorm 8 → 3, ...).

Rows of the results: ``error`` (test error rate) and ``rank_used`` at each grid rank, for
``full`` (constant in r), ``icd``, ``csi`` and their ``_nostop`` variants (see
Stopping), and the chosen ``gamma`` and ``C``; the minimal-rank table beside the paper's
(where ``reference/csi.json`` lists the data set) is in the report's checks and the
printed summary.

Decisions
---------
- *Factor prefixes.* Both decompositions are greedy, so the rank-r factor is the first r
  columns of one run, and so are its test rows (k(x, X_I) L⁻ᵀ with L⁻ᵀ upper
  triangular). With S = ḠᵀḠ + I/C = L Lᵀ (Ḡ the centred training rows), the LS-SVM
  (:func:`lorak.models.lssvm_fit_factor`, eq. 3: ridge with a free intercept) of every
  rank comes from one Cholesky: w_r = L_r⁻ᵀ (L⁻¹Ḡᵀȳ)_{:r}, and the decisions of all
  ranks are cumulative sums of (G_test − ḡ) L⁻ᵀ times that vector — O((n + n_test) R²)
  (:func:`lorak_bench._exact.lssvm_prefix_decisions`). A test checks a prefix against a
  separate fit.
- *Stopping.* The paper stops both decompositions after the first step whose gain is
  below 1e-4 (CSI: its true gain; ICD: ‖g_k‖²/tr K, CSI's gain at κ = 0), with no
  other rank bound. CSI's true gain is not monotone — a pivot outside the look-ahead
  can gain far less than predicted, and later steps gain again (splice: 3e-5 at step 23,
  then 2e-3, 9e-3, ...) — so the rule can stop CSI long before the full-kernel error.
  Each decomposition is therefore run once to ``RANK_CAP`` = 1000 (100 with
  ``--quick``) and reported twice: ``icd``/``csi`` truncated where the paper's rule
  stops (a prefix of the same run: greedy), and ``icd_nostop``/``csi_nostop`` with the
  cap only. Past its last rank a method keeps its final factor (``rank_used``).
- *Sizes.* The paper used at most 4000 points per set (its Fig. 2 lists n = 4000 for the
  large ones); mushrooms (8124), satimage (6435) and svmguide1 (7089) are subsampled to
  4000 rows once (seed 0), so the full-kernel LS-SVM is a dense solve on ≤ 3000 training
  rows everywhere — no high-rank stand-in for "full" is needed. Generated sets use the
  paper's sizes: ringnorm 1000, twonorm 4000, waveform 2000, drawn with seed 0 (they
  were unseeded before: every run drew new sets). splice (LIBSVM: 60 nucleotide codes,
  2 classes) is one-hot encoded to the paper's 240 features; the paper's
  splice has 3 classes (dna is the 3-class Statlog version). "breast" in the paper is the
  683 × 9 Wisconsin set; here scikit-learn's 569 × 30 diagnostic set, so its paper ranks
  are shown for orientation only.
- *Width and ridge.* Chosen once per data set, before the rank sweep, by 3-fold
  cross-validation on the training part of a fixed split (seed 0): γ = γ₀·{1/16, 1/4, 1,
  4, 16} with γ₀ = 1/mean‖x − y‖² (after scaling), C ∈ {0.01, 0.1, …, 1000}; ties
  go to the smallest γ, then the smallest C. The cross-validation uses an incomplete
  Cholesky factor of rank min(n_fold, 300) as a near-full kernel (exact on the small
  sets); the splits themselves use the full kernel. Each fold's kernel matrix is formed
  once per γ and the factor's columns read from it.
- *Quick mode* (``--quick``): ringnorm, twonorm and waveform (generated: no shared data
  needed; the paper's ranks there are ≤ 14) and mushrooms when the shared data are
  present (paper: 60 / 44), 2 splits, rank cap 100, at most 1000 rows per set (seed 0),
  cross-validation factor rank 100.
- *Scaling* uses each split's training mean and standard deviation (constant features
  are left unscaled).
- *Multi-class*: one-vs-rest ±1 targets, the largest decision wins (as
  :class:`lorak.models.LSSVC`; the same predictions as the paper's one-hot targets).
- *Seconds*: one split's curve (the decomposition to its last rank, its test rows and
  the LS-SVM at every rank; for ``full``, the dense LS-SVM fit and its test decisions)
  is computed once and shared by every rank's cell and by a method and its ``_nostop``
  variant; the runner charges its cost to each of them. The width and ridge
  cross-validation is the dataset's prepare time.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from lorak.decompose import incomplete_cholesky, pivot_transform_matrix
from lorak.kernels import Gaussian, kernel_block, kernel_product
from lorak.models import lssvm_fit_dense

from .._exact import lssvm_prefix_decisions
from .._preprocess import dense, split_indices
from .._reference import cite
from .._spec import DatasetSpec, Experiment, FactorOutput, Method, Metric, Part
from ._csi_rank_report import (
    PAPER_ROWS,
    compare_ranks,
    min_rank_table,
    minimal_rank,
    rank_checks,
    rank_plots,
    rank_summary,
)

__all__ = [
    "EXPERIMENT",
    "PAPER_ROWS",
    "RANKS",
    "compare_ranks",
    "lssvm_prefix_decisions",
    "min_rank_table",
    "minimal_rank",
    "rank_grid",
    "stop_rank",
]

KAPPA = 0.99
LOOKAHEAD = 40
STOP_GAIN = 1e-4
RANK_CAP = 1000
QUICK_RANK_CAP = 100
MAX_SAMPLES = 4000
QUICK_MAX_SAMPLES = 1000  # quick mode: larger sets subsampled further
N_SPLITS = 10
QUICK_SPLITS = 2
TEST_FRACTION = 0.25
CV_FOLDS = 3
CV_RANK = 300
QUICK_CV_RANK = 100
GAMMA_FACTORS = (1 / 16, 1 / 4, 1.0, 4.0, 16.0)
C_GRID = (0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)
ONE_HOT = frozenset({"splice"})
METHODS = ("full", "icd", "csi", "icd_nostop", "csi_nostop")


def rank_grid(cap: int) -> tuple[int, ...]:
    """Every rank to 50, then steps of 5 to 100, 10 to 300, 25 to 1000 (≤ cap)."""
    ranks = [
        *range(1, 51),
        *range(55, 101, 5),
        *range(110, 301, 10),
        *range(325, 1001, 25),
    ]
    return tuple(r for r in ranks if r <= cap)


RANKS = rank_grid(RANK_CAP)
QUICK_RANKS = rank_grid(QUICK_RANK_CAP)

# the generated sets are drawn once with a fixed seed, so that runs are reproducible
GENERATED = tuple(
    DatasetSpec(n, load_kwargs={"random_state": 0}) for n in ("ringnorm", "twonorm", "waveform")
)
DATASETS = (
    *GENERATED,
    DatasetSpec("splice", split="all"),
    DatasetSpec("mushrooms", split="all"),
    DatasetSpec("breast_cancer"),
    DatasetSpec("german", split="all"),
    DatasetSpec("dna", split="all"),
    DatasetSpec("segment", split="all"),
    DatasetSpec("satimage", split="all"),
    DatasetSpec("glass", split="all"),
    DatasetSpec("sonar", split="all"),
    DatasetSpec("svmguide1", split="all"),
)
# --quick: the paper's three generated sets (its minimal ranks there are ≤ 14, well inside
# the quick rank cap; no LORAK_DATA needed) and, when the shared data are present,
# mushrooms (ranks 60 / 44)
QUICK_PAPER_SETS = ("ringnorm", "twonorm", "waveform", "mushrooms")
QUICK_DATASETS = GENERATED


# ---------------------------------------------------------------- LS-SVM on prefixes


def _targets(y, classes):
    """One-vs-rest ±1 targets (one column for two classes, classes[1] = +1)."""
    if classes.size == 2:
        return np.where(y == classes[1], 1.0, -1.0)[:, None]
    return np.where(y[:, None] == classes[None, :], 1.0, -1.0)


def _predict(D, classes):
    """Class labels from decisions D (..., k): sign for one column, else argmax."""
    if D.shape[-1] == 1:
        return classes[(D[..., 0] > 0).astype(np.intp)]
    return classes[np.argmax(D, axis=-1)]


def _prefix_errors(G, y, G_test, y_test, C, classes, ranks_used):
    """Test error at each rank in ``ranks_used`` (≥ 1, ≤ G's columns)."""
    D = lssvm_prefix_decisions(G, _targets(y, classes), G_test, C)
    pred = _predict(D[:, np.asarray(ranks_used) - 1, :], classes)
    return np.mean(pred != y_test[:, None], axis=0)


# ---------------------------------------------------------------- decompositions


def stop_rank(gains, tol: float = STOP_GAIN) -> int:
    """Rank at which the paper's rule stops: after the first step whose gain is < tol
    (that column kept), else all of them."""
    low = np.flatnonzero(np.asarray(gains) < tol)
    return int(low[0]) + 1 if low.size else len(gains)


def _fit_icd(kernel, X, y, cap):
    res = incomplete_cholesky(kernel.diag(X), lambda i: kernel(X, X[i : i + 1]).ravel(), cap)
    # ICD's gain of step k is ‖g_k‖²/tr K — CSI's gain at κ = 0
    trace = SimpleNamespace(residual_trace_=np.asarray(res.residual_trace))
    return res.G, res.pivots, -np.diff(res.residual_trace), trace


def _fit_csi(kernel, X, y, cap):
    from lorak.estimators import CSI

    est = CSI(kernel=kernel, n_components=cap, kappa=KAPPA, lookahead=LOOKAHEAD, tol=0.0)
    est.fit(X, y)
    # the traces lorak.plot.csi_errors / csi_gains draw (not the n-sized factor);
    # tol = the stopping gain applied afterwards (the run itself goes to the cap)
    trace = SimpleNamespace(
        approx_error_=est.approx_error_,
        prediction_error_=est.prediction_error_,
        objective_=est.objective_,
        predicted_gain_=est.predicted_gain_,
        true_gain_=est.true_gain_,
        lookahead_hit_=est.lookahead_hit_,
        tol=STOP_GAIN,
    )
    return est.G_, est.pivots_, est.true_gain_, trace


def _test_rows(kernel, X, G, pivots, X_test):
    N = pivot_transform_matrix(G, pivots)
    return kernel_product(kernel, X_test, X[pivots], N, upper_triangular=True)


# ---------------------------------------------------------------- data preparation


def _one_hot(X):
    cols = []
    for j in range(X.shape[1]):
        vals = np.unique(X[:, j])
        cols.append((X[:, j][:, None] == vals[None, :]).astype(np.float64))
    return np.hstack(cols)


def _standardize(X_train, X_test):
    mu = X_train.mean(axis=0)
    sd = X_train.std(axis=0)
    sd[sd == 0] = 1.0
    return (X_train - mu) / sd, (X_test - mu) / sd


def _split_rows(n, seed):
    return split_indices(n, seed, TEST_FRACTION)


def _cv_choose(X, y, classes, cv_rank=CV_RANK):
    """(γ, C, table) by 3-fold CV of the LS-SVM on a near-full ICD factor."""
    Xs, _ = _standardize(X, X[:1])
    g0 = 1.0 / Gaussian(bandwidth="mean_pairwise").resolve(Xs).bandwidth
    rng = np.random.default_rng(0)
    folds = np.array_split(rng.permutation(X.shape[0]), CV_FOLDS)
    errs = np.zeros((len(GAMMA_FACTORS), len(C_GRID)))
    for fold in folds:
        test = np.zeros(X.shape[0], dtype=bool)
        test[fold] = True
        Xtr, Xte = _standardize(X[~test], X[test])
        for a, f in enumerate(GAMMA_FACTORS):
            ker = Gaussian(gamma=g0 * f)
            cap = min(cv_rank, Xtr.shape[0])
            # the fold's kernel once (n_fold ≤ 2000 rows): columns are read, not recomputed
            K = kernel_block(ker, Xtr, Xtr)
            res = incomplete_cholesky(ker.diag(Xtr), lambda i, K=K: K[i], cap)  # K symmetric
            del K
            Gte = _test_rows(ker, Xtr, res.G, res.pivots, Xte)
            r = res.G.shape[1]
            for b, C in enumerate(C_GRID):
                err = _prefix_errors(res.G, y[~test], Gte, y[test], C, classes, [r])
                errs[a, b] += err[0] * test.sum()
    errs /= X.shape[0]
    a, b = np.unravel_index(int(np.argmin(errs)), errs.shape)  # first minimum: small γ, C
    return g0 * GAMMA_FACTORS[a], C_GRID[b], g0, errs


def _prepare_rank(data, quick: bool = False) -> dict:
    X = dense(data.X)
    y = np.asarray(data.y)
    notes = []
    name = data.spec.name
    if name in ONE_HOT:
        X = _one_hot(X)
        notes.append(f"one-hot encoded to {X.shape[1]} features")
    cap = QUICK_MAX_SAMPLES if quick else MAX_SAMPLES
    if X.shape[0] > cap:
        keep = np.sort(np.random.default_rng(0).choice(X.shape[0], cap, replace=False))
        notes.append(
            f"subsampled {X.shape[0]} → {cap} rows (seed 0)" + (" (quick mode)" if quick else "")
        )
        X, y = X[keep], y[keep]
    data.X, data.y = X, y
    classes = np.unique(y)
    tr, _ = _split_rows(X.shape[0], 0)
    gamma, C, g0, cv = _cv_choose(X[tr], y[tr], classes, QUICK_CV_RANK if quick else CV_RANK)
    return {
        "classes": classes,
        "gamma": float(gamma),
        "C": float(C),
        "gamma0": float(g0),
        "cv_errors": cv.tolist(),
        "notes": notes,
        "artifacts": {},  # traces of the first split, kept by the runner for the plots
    }


# ---------------------------------------------------------------- methods


def _split_data(task):
    X, y = task.data.X, task.data.y
    tr, te = _split_rows(X.shape[0], task.seed)
    Xtr, Xte = _standardize(X[tr], X[te])
    return Xtr, y[tr], Xte, y[te]


def _curve(task, method: str) -> dict:
    """The method's test errors at every grid rank on this repetition's split, computed
    once and shared by every rank's cell (the runner charges its cost to each)."""
    return task.shared(("curve", method, task.rep), lambda: _compute_curve(task, method))


def _compute_curve(task, method: str) -> dict:
    ctx = task.context
    ranks = np.asarray(QUICK_RANKS if task.quick else RANKS)
    cap = int(min(ranks[-1], math.ceil((1 - TEST_FRACTION) * task.data.n_samples)))
    Xtr, ytr, Xte, yte = _split_data(task)
    classes = ctx["classes"]
    kernel = Gaussian(gamma=ctx["gamma"])
    C = ctx["C"]
    if method == "full":
        K = kernel_block(kernel, Xtr, Xtr)
        beta, b = lssvm_fit_dense(K, _targets(ytr, classes), C)
        del K
        D = kernel_block(kernel, Xte, Xtr) @ beta + b
        err = float(np.mean(_predict(D, classes) != yte))
        out = {"error": np.full(ranks.size, err), "rank_used": np.full(ranks.size, np.nan)}
    else:
        cap = min(cap, Xtr.shape[0])
        fit = _fit_icd if method == "icd" else _fit_csi
        G, piv, gains, trace = fit(kernel, Xtr, ytr, cap)
        if task.rep == 0:
            ctx.setdefault("artifacts", {})[method] = trace
        r = G.shape[1]
        r_stop = stop_rank(gains)
        used = np.minimum(ranks, r)
        used_stop = np.minimum(ranks, r_stop)
        Gte = _test_rows(kernel, Xtr, G, piv, Xte)
        err = _prefix_errors(G, ytr, Gte, yte, C, classes, np.arange(1, r + 1))
        out = {
            "error": err[used_stop - 1],
            "rank_used": used_stop.astype(float),
            "error_nostop": err[used - 1],
            "rank_used_nostop": used.astype(float),
            "stop_rank": r_stop,
        }
    out["ranks"] = ranks
    return out


def _rank_method(name: str, label: str) -> Method:
    base, _, variant = name.partition("_")
    suffix = "_nostop" if variant else ""

    def run(task):
        c = _curve(task, base)
        i = int(np.searchsorted(c["ranks"], task.params["rank"]))
        return FactorOutput(
            extra={
                "error": float(c["error" + suffix][i]),
                "rank_used": float(c["rank_used" + suffix][i]),
            },
        )

    run.__name__ = f"run_{name}"
    return Method(name=name, run=run, label=label)


def _metrics(out, task):
    ctx = task.context
    return {
        "error": out.extra["error"],
        "rank_used": out.extra["rank_used"],
        "gamma": ctx["gamma"],
        "C": ctx["C"],
    }


MAIN = Part(
    name="main",
    description="LS-SVM error vs rank of ICD and CSI factors; minimal ranks (Fig. 2)",
    datasets=DATASETS,
    quick_datasets=QUICK_DATASETS,
    quick_paper_datasets=QUICK_PAPER_SETS,
    grid=tuple({"rank": r} for r in RANKS),
    quick_grid=tuple({"rank": r} for r in QUICK_RANKS),
    methods=(
        _rank_method("full", "full kernel"),
        _rank_method("icd", "incomplete Cholesky"),
        _rank_method("csi", "CSI"),
        _rank_method("icd_nostop", "incomplete Cholesky (no stop)"),
        _rank_method("csi_nostop", "CSI (no stop)"),
    ),
    metrics=(Metric(("error", "rank_used", "gamma", "C"), _metrics),),
    reps=N_SPLITS,
    quick_reps=QUICK_SPLITS,
    prepare=_prepare_rank,
)

EXPERIMENT = Experiment(
    name="csi-rank",
    description="Minimal LS-SVM rank, incomplete Cholesky vs CSI (Bach & Jordan 2005, Fig. 2)",
    parts=(MAIN,),
    reference=None,
    checks=rank_checks,
    plots=rank_plots,
    summary=rank_summary,
    paper=cite("csi", "§6 (Fig. 2)"),
)

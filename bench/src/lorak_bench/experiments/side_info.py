"""``side-info``: side information that helps out of the box — the label-learned kernels
with their defaults against plain Nyström, their own oracle, and what a user would
pick instead.

No paper behind it: a check of lorak's defaults on every set the project has. (It was
the script ``bench_side_info.py``; the protocol and its numbers are the same.)

Protocol (the same for every data set; nothing is chosen from the unlabeled labels)
----------------------------------------------------------------------------------
- Data: the SSL-book sets, the LIBSVM sets of the generalized Nyström paper's Table 1
  (with ``LORAK_DATA``), scikit-learn's bundled sets and lorak's generators. At most
  3000 rows (a fixed random subset of larger sets). Features as in ``gnys``: SSL-book
  sets as distributed, every other set scaled per feature to [−1, 1]; labels recoded
  0…c−1.
- Labels: min(100, n // 3) rows drawn evenly over the classes per repetition (the
  generator ``[rep, 7]``); the error (%) is measured on the other rows. Every method of
  a repetition sees the same labeled rows, and the Nyström-type methods the same
  k-means landmarks (m = 10 % of n, at most 1000; generator ``[rep, 11]``) and the same
  Gaussian kernel exp(−‖x−y‖²/b₀), b₀ = mean pairwise squared distance. Both are
  shared work of the repetition (the runner charges their time to every cell that uses
  them).
- Methods, each fitted on all rows with ``y = -1`` on the unlabeled ones:
  ``gn`` — ``SemiSupervisedFactorClassifier(GeneralizedNystroem())`` with the
  defaults (λ by cross-validation); ``gn-paper`` — the same with λ by eq. 15;
  ``nystrom`` — the same pipeline on plain ``Nystroem``; ``gn-oracle`` — the best λ of
  the default candidates (grid and λ = ∞) by the error on the unlabeled rows, a
  ceiling, never a usable method; ``mkgn`` / ``mkgn-paper`` —
  ``MultipleKernelGeneralizedNystroem`` with its default kernel bank, λ by
  cross-validation / by its alignment criterion; ``ls-knn`` / ``ls-rbf`` —
  ``LabelSpreading`` (k-NN with its defaults; RBF with γ = 1/b₀); ``self-training`` —
  ``SelfTrainingClassifier`` around ``SVC(kernel="rbf", gamma=1/b₀,
  probability=True)``; ``svm`` — that SVC on the labeled rows only.
- Metrics: ``error_pct`` on the unlabeled rows and ``lam`` (the λ a generalized
  Nyström method chose; none for the others or λ = ∞).
- Part ``cost``: the selection cost, the default ``GeneralizedNystroem`` fit against
  the eq.-15 fit at n = 1500, m = 150 (Digit1, 100 labels), CPU seconds as the runner
  records them, 5 repetitions (a ratio; absolute seconds depend on the load).
- Repetitions: 10 (``--quick``: 2, on Digit1, g241c and USPS; 2 for the cost part).
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import scipy.sparse as sp

from .._report import markdown_table, save_figure
from .._spec import DatasetSpec, Experiment, LoadedData, Method, Metric, Part
from .._ssl import scale_features

__all__ = ["EXPERIMENT", "METHODS", "SETS"]

N_MAX = 3000
REPS = 10
#: the quick run's sets, by their lorak.datasets names (the label "USPS" would also
#: match the LIBSVM usps sets)
QUICK_SETS = ("ssl-g241c", "ssl-digit1", "ssl-usps")
#: label -> (lorak.datasets name, load kwargs, classes kept)
SETS = {
    "g241c": ("ssl-g241c", {}, None),
    "g241n": ("ssl-g241n", {}, None),
    "Digit1": ("ssl-digit1", {}, None),
    "USPS": ("ssl-usps", {}, None),
    "COIL": ("ssl-coil", {}, None),
    "COIL2": ("ssl-coil2", {}, None),
    "BCI": ("ssl-bci", {}, None),
    "Text": ("ssl-text", {}, None),
    "SecStr": ("ssl-secstr", {}, None),
    "german": ("german", {}, None),
    "usps49": ("usps", {}, (4, 9)),
    "usps27": ("usps", {}, (2, 7)),
    "adult1a": ("a1a", {}, None),
    "dna": ("dna", {}, None),
    "segment": ("segment", {}, None),
    "svmgd1a": ("svmguide1", {}, None),
    "satimage": ("satimage", {"split": "all"}, None),
    "usps-full": ("usps", {}, None),
    "mnist-test": ("mnist-test", {}, None),
    "breast_cancer": ("breast_cancer", {}, None),
    "digits": ("digits", {}, None),
    "wine": ("wine", {}, None),
    "iris": ("iris", {}, None),
    "twonorm": ("twonorm", {"n_samples": 2000, "random_state": 0}, None),
    "ringnorm": ("ringnorm", {"n_samples": 2000, "random_state": 0}, None),
    "waveform": ("waveform", {"n_samples": 2000, "random_state": 0}, None),
    "chessboard": ("chessboard", {"n_samples": 1000, "random_state": 0}, None),
    "double_spiral": (
        "double_spiral",
        {"n_samples": 1000, "noise": 0.05, "random_state": 0},
        None,
    ),
}
LABELS = {
    "gn": "GenNys (defaults: λ by CV)",
    "gn-paper": "GenNys (λ by eq. 15, before)",
    "nystrom": "plain Nyström (k-means)",
    "gn-oracle": "GenNys oracle λ (ceiling)",
    "mkgn": "MK GenNys (defaults)",
    "mkgn-paper": "MK GenNys (alignment criterion)",
    "ls-knn": "LabelSpreading (knn)",
    "ls-rbf": "LabelSpreading (rbf)",
    "self-training": "SelfTraining(RBF SVC)",
    "svm": "RBF SVC (labeled only)",
}
METHODS = tuple(LABELS)


# --------------------------------------------------------------------------- data


def _load_set(spec: DatasetSpec, data_home) -> LoadedData:
    """The set as the protocol prepares it: classes kept, at most N_MAX rows (a fixed
    subset), SSL-book sets as distributed and the others scaled to [−1, 1], labels
    recoded 0…c−1, X dense float64."""
    from lorak.datasets import load

    _, kw, classes = SETS[spec.display]
    d = load(spec.name, data_home=data_home, **kw)
    X, y = d.X, np.asarray(d.y)
    if classes is not None:
        keep = np.isin(y, classes)
        X, y = X[keep], y[keep]
    if X.shape[0] > N_MAX:
        idx = np.sort(np.random.default_rng(12345).choice(X.shape[0], N_MAX, replace=False))
        X, y = X[idx], y[idx]
    if spec.name.startswith("ssl-"):
        X = X.toarray() if sp.issparse(X) else X
        how = "SSL-book features as distributed"
    else:
        X = scale_features(X)
        how = "features scaled to [−1, 1]"
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.unique(y, return_inverse=True)[1].astype(np.int64)
    meta = {"preprocessing": f"at most {N_MAX} rows; {how}; labels 0…c−1"}
    return LoadedData(spec=spec, X=X, y=y, meta=meta)


def _side_info_spec(label: str) -> DatasetSpec:
    return DatasetSpec(SETS[label][0], label=label, loader=_load_set)


def _even_draw(y, n_labeled, rng) -> np.ndarray:
    """``n_labeled`` rows drawn evenly over the classes (the remainder to random ones)."""
    classes = np.unique(y)
    quota = np.full(classes.size, n_labeled // classes.size)
    quota[rng.choice(classes.size, n_labeled - quota.sum(), replace=False)] += 1
    return np.sort(
        np.concatenate(
            [
                rng.choice(np.flatnonzero(y == k), min(q, np.sum(y == k)), replace=False)
                for k, q in zip(classes, quota, strict=True)
            ]
        )
    )


def _repetition(task):
    """The repetition's labeled rows and kernel, shared by its methods."""

    def compute():
        from lorak.kernels import Gaussian

        X, y = task.data.X, task.data.y
        n = X.shape[0]
        lab = _even_draw(y, min(100, n // 3), np.random.default_rng([task.rep, 7]))
        yu = np.full(n, -1, dtype=np.int64)
        yu[lab] = y[lab]
        kernel = Gaussian(bandwidth="mean_pairwise").resolve(X)
        return SimpleNamespace(
            lab=lab,
            unl=np.setdiff1d(np.arange(n), lab),
            yu=yu,
            kernel=kernel,
            b0=float(kernel.bandwidth),
            m=int(min(max(1, round(0.1 * n)), 1000)),
        )

    return task.shared(("repetition", task.rep), compute)


def _landmarks(task, rep) -> np.ndarray:
    """The repetition's k-means landmarks, shared by the Nyström-type methods."""

    def compute():
        from lorak.landmarks import select_landmarks

        rng = np.random.default_rng([task.rep, 11])
        lm = select_landmarks("kmeans", task.data.X, rep.m, rng=rng, kernel=rep.kernel)
        return np.asarray(lm.points, dtype=np.float64)

    return task.shared(("landmarks", task.rep), compute)


def _error(task, rep, pred) -> float:
    y = task.data.y
    return 100.0 * float(np.mean(np.asarray(pred)[rep.unl] != y[rep.unl]))


# --------------------------------------------------------------------------- methods


def _pipeline(task, rep, factor):
    from lorak.models import SemiSupervisedFactorClassifier

    clf = SemiSupervisedFactorClassifier(factor).fit(task.data.X, rep.yu)
    return _error(task, rep, clf.transduction_), clf


def _gen_nystrom(task, rep, **kw):
    from lorak.estimators import GeneralizedNystroem

    Z = _landmarks(task, rep)
    return GeneralizedNystroem(
        kernel="gaussian", bandwidth=rep.b0, landmarks=Z, random_state=task.rep, **kw
    )


def _prior_factor(W) -> np.ndarray:
    """F with F Fᵀ = W⁺, the λ = ∞ candidate (plain Nyström): W's eigenpairs that
    :func:`lorak.learn.pinv_psd` keeps (its top ``rank``), largest 1/λ first."""
    from scipy.linalg import eigh

    from lorak.learn import pinv_psd

    _, rank = pinv_psd(W, 1e-10)
    lam, U = eigh(0.5 * (W + W.T), driver="evd", check_finite=False)
    cut = lam.size - rank
    return (U[:, cut:] / np.sqrt(lam[cut:]))[:, ::-1]


def _oracle(task, rep):
    """The best candidate λ of the default (the CV grid and ∞) by the unlabeled error.

    One warm-started λ path on all labeled rows (the estimator's objective, β = 1, the
    centered ideal kernel, tolerance 1e-3), then the default pipeline's classifier
    (features scaled to unit mean squared norm, LinearSVC C = 1) per λ: (error, λ).
    """
    from sklearn.svm import LinearSVC

    from lorak.kernels import kernel_block
    from lorak.learn import (
        CV_LAMBDA_GRID,
        GenNystromProblem,
        ideal_kernel,
        psd_factor,
        solve_gen_nystrom,
    )

    X, y, Z = task.data.X, task.data.y, _landmarks(task, rep)
    E = kernel_block(rep.kernel, X, Z)
    W = kernel_block(rep.kernel, Z, Z)
    yl = y[rep.lab]
    P = GenNystromProblem.from_blocks(E[rep.lab], W, ideal_kernel(yl, centered=True))
    factors = {math.inf: _prior_factor(W)}
    x = None
    for lam in reversed(sorted(CV_LAMBDA_GRID)):
        res = solve_gen_nystrom(P, lam, 1.0, x0=x, tol=1e-3, history=False)
        x = res.x
        factors[lam] = psd_factor(P.to_landmark_basis(x))
    errs = {}
    for lam, F in factors.items():
        Q = E @ F
        Q /= math.sqrt(float(np.mean(np.einsum("ij,ij->i", Q, Q))))
        clf = LinearSVC(C=1.0, dual=True, max_iter=10000, random_state=0)
        clf.fit(Q[rep.lab], yl)
        errs[lam] = _error(task, rep, clf.predict(Q))
    best = min(errs, key=errs.get)
    return errs[best], float(best)


def _run(name: str):
    def run(task):
        import warnings

        rep = _repetition(task)
        X, y = task.data.X, task.data.y
        lam = math.nan
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if name in ("gn", "gn-paper"):
                kw = {} if name == "gn" else {"criterion": "paper"}
                err, clf = _pipeline(task, rep, _gen_nystrom(task, rep, **kw))
                lam = float(clf.factor_.lam_)
            elif name == "nystrom":
                from lorak.estimators import Nystroem

                Z = _landmarks(task, rep)
                f = Nystroem(kernel="gaussian", bandwidth=rep.b0, landmarks=Z, n_components=rep.m)
                err, _ = _pipeline(task, rep, f)
            elif name == "gn-oracle":
                err, lam = _oracle(task, rep)
            elif name in ("mkgn", "mkgn-paper"):
                from lorak.estimators import MultipleKernelGeneralizedNystroem

                kw = {} if name == "mkgn" else {"criterion": "paper"}
                f = MultipleKernelGeneralizedNystroem(random_state=task.rep, **kw)
                err, clf = _pipeline(task, rep, f)
                lam = float(clf.factor_.lam_)
            elif name in ("ls-knn", "ls-rbf"):
                from sklearn.semi_supervised import LabelSpreading

                if name == "ls-knn":
                    ls = LabelSpreading(kernel="knn")
                else:
                    ls = LabelSpreading(kernel="rbf", gamma=1.0 / rep.b0)
                err = _error(task, rep, ls.fit(X, rep.yu).transduction_)
            elif name == "self-training":
                from sklearn.semi_supervised import SelfTrainingClassifier
                from sklearn.svm import SVC

                svc = SVC(kernel="rbf", gamma=1.0 / rep.b0, probability=True, random_state=0)
                st = SelfTrainingClassifier(svc).fit(X, rep.yu)
                err = _error(task, rep, st.predict(X))
            else:  # "svm"
                from sklearn.svm import SVC

                svc = SVC(kernel="rbf", gamma=1.0 / rep.b0).fit(X[rep.lab], y[rep.lab])
                err = _error(task, rep, svc.predict(X))
        return {"error_pct": err, "lam": lam}

    run.__name__ = f"run_{name.replace('-', '_')}"
    return run


ERROR = Metric(("error_pct", "lam"), lambda out, task: out)


# --------------------------------------------------------------------------- cost


def _cost_run(criterion: str):
    def run(task):
        import warnings

        from lorak.estimators import GeneralizedNystroem

        with task.untimed():
            y = task.data.y
            lab = _even_draw(y, 100, np.random.default_rng(0))
            yu = np.full(y.shape, -1)
            yu[lab] = y[lab]
        gn = GeneralizedNystroem(n_components=150, criterion=criterion, random_state=task.rep)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            gn.fit(task.data.X, yu)
        return {"lam": float(gn.lam_)}

    return run


# --------------------------------------------------------------------------- report


def _mean_errors(result) -> dict:
    """{set: {method: mean error}} of the main part."""
    out: dict = {}
    for r in result.select(part="main", metric="error_pct"):
        if r["mean"] is not None:
            out.setdefault(r["dataset"], {})[r["method"]] = r["mean"]
    return out


def _mean_seconds(result) -> dict:
    return {
        (r["dataset"], r["method"]): r["seconds_mean"]
        for r in result.select(part="main", metric="error_pct")
        if r["seconds_mean"] is not None
    }


def summarize(result) -> dict:
    """Per method: wins / ties / worst loss against plain Nyström and LabelSpreading,
    the gap to the oracle (generalized Nyström methods), mean error and seconds."""
    mean, secs = _mean_errors(result), _mean_seconds(result)
    out = {}
    for meth in METHODS:
        rows = [s for s in mean if meth in mean[s]]
        if not rows:
            continue
        d = {"sets": len(rows)}
        for ref in ("nystrom", "ls-knn", "ls-rbf"):
            pairs = [(mean[s][meth], mean[s][ref]) for s in rows if ref in mean[s]]
            if meth == ref or not pairs:
                continue
            diff = np.array([a - b for a, b in pairs])
            d[f"wins_vs_{ref}"] = int(np.sum(diff < -1e-9))
            d[f"ties_vs_{ref}"] = int(np.sum(np.abs(diff) <= 1e-9))
            d[f"worst_loss_vs_{ref}"] = float(diff.max())
            d[f"n_vs_{ref}"] = len(pairs)
        if meth != "gn-oracle" and meth.startswith("gn"):
            gaps = [mean[s][meth] - mean[s]["gn-oracle"] for s in rows if "gn-oracle" in mean[s]]
            if gaps:
                d["mean_gap_to_oracle"] = float(np.mean(gaps))
                d["max_gap_to_oracle"] = float(np.max(gaps))
        d["mean_error"] = float(np.mean([mean[s][meth] for s in rows]))
        sec = [secs[(s, meth)] for s in rows if (s, meth) in secs]
        d["mean_seconds"] = float(np.mean(sec)) if sec else None
        out[meth] = d
    return out


def _checks(result) -> str:
    mean = _mean_errors(result)
    lines = []
    if mean:
        cols = [m for m in METHODS if any(m in mean[s] for s in mean)]
        body = [[s, *(f"{mean[s][m]:.2f}" if m in mean[s] else "" for m in cols)] for s in mean]
        lines += ["### Error (%) on the unlabeled rows", "", markdown_table(["set", *cols], body)]

        def w(d, ref):
            if f"wins_vs_{ref}" not in d:
                return ""
            return f"{d[f'wins_vs_{ref}']}/{d[f'ties_vs_{ref}']} of {d[f'n_vs_{ref}']}"

        body = []
        for meth, d in summarize(result).items():
            loss = d.get("worst_loss_vs_nystrom")
            gap = d.get("mean_gap_to_oracle")
            body.append(
                [
                    meth,
                    d["sets"],
                    w(d, "nystrom"),
                    "" if loss is None else f"{loss:+.2f}",
                    w(d, "ls-knn"),
                    w(d, "ls-rbf"),
                    "" if gap is None else f"{gap:.2f} / {d['max_gap_to_oracle']:.2f}",
                    f"{d['mean_error']:.2f}",
                    "" if d["mean_seconds"] is None else f"{d['mean_seconds']:.2f}",
                ]
            )
        head = ["method", "sets", "wins/ties vs Nyström", "worst loss", "vs LS-knn"]
        head += ["vs LS-rbf", "gap to oracle (mean/max)", "mean err", "mean s"]
        lines += ["", "### Against plain Nyström, LabelSpreading and the oracle", ""]
        lines += [markdown_table(head, body), ""]
    cpu = {
        r["method"]: r["cpu_seconds_mean"]
        for r in result.select(part="cost", metric="lam")
        if r["cpu_seconds_mean"]
    }
    if "cv" in cpu and "paper" in cpu:
        lines += [
            "### Selection cost (Digit1, n = 1500, m = 150, 100 labels)",
            "",
            f"Default fit (λ by cross-validation) {cpu['cv']:.3f} s CPU, eq. 15 "
            f"{cpu['paper']:.3f} s: ratio {cpu['cv'] / cpu['paper']:.2f}.",
            "",
        ]
    return "\n".join(lines)


def _plots(result, out_dir):
    import matplotlib.pyplot as plt

    mean = _mean_errors(result)
    sets = [s for s in mean if "nystrom" in mean[s]]
    cols = [m for m in METHODS if m != "nystrom" and any(m in mean[s] for s in sets)]
    if not sets or not cols:
        return []
    fig, ax = plt.subplots(figsize=(max(6, 0.45 * len(sets) + 3), 4.5))
    x = np.arange(len(sets))
    markers = "o^sv<>DPX*"
    for i, m in enumerate(cols):
        ys = [mean[s].get(m, np.nan) - mean[s]["nystrom"] for s in sets]
        ax.plot(x, ys, markers[i % len(markers)], label=LABELS.get(m, m), alpha=0.8)
    ax.axhline(0.0, color="k", lw=0.8)
    ax.set_xticks(x, sets, rotation=60, ha="right")
    ax.set_ylabel("error − plain Nyström error (points; lower is better)")
    ax.set_title("Label side information: error relative to plain Nyström")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return save_figure(fig, out_dir, "summary.png", "error relative to plain Nyström")


MAIN = Part(
    name="main",
    description="every set: the label-learned factors against Nyström, their oracle, "
    "LabelSpreading, self-training and an SVM",
    datasets=tuple(_side_info_spec(label) for label in SETS),
    quick_paper_datasets=QUICK_SETS,
    methods=tuple(Method(m, _run(m), label=LABELS[m]) for m in METHODS),
    metrics=(ERROR,),
    reps=REPS,
    quick_reps=2,
)

COST = Part(
    name="cost",
    description="selection cost: the default GeneralizedNystroem fit against eq. 15",
    datasets=(_side_info_spec("Digit1"),),
    methods=(
        Method("cv", _cost_run("cv"), label="λ by cross-validation (default)"),
        Method("paper", _cost_run("paper"), label="λ by eq. 15"),
    ),
    metrics=(Metric("lam", lambda out, task: out["lam"]),),
    reps=5,
    quick_reps=2,
)

EXPERIMENT = Experiment(
    name="side-info",
    description="label side information out of the box: generalized Nyström's defaults "
    "against plain Nyström, its oracle λ, LabelSpreading, self-training and an SVM",
    parts=(MAIN, COST),
    checks=_checks,
    plots=_plots,
)

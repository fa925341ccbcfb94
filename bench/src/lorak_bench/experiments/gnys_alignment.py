"""``gnys-alignment``: Zhang et al. (2017), Fig. 1 — does the alignment score of eq. 15
track the error across λ?

The protocol of ``gnys`` (:mod:`lorak_bench._ssl`: 100 labeled rows drawn evenly over
the classes per repetition, error on the unlabeled rows, b₀ = mean pairwise squared
distance, m = 10 % of n k-means landmarks shared by both columns) on six of Table 1's
sets, with λ fixed at each point of the grid 10⁻⁵…10⁵ instead of chosen. Two readings:
*default* (β = 1, centered ideal kernel, scaled features) and *literal* (β of eq. 8,
the 0/1 ideal kernel, raw features). Each cell reports the error and the score at its
λ; the checks give the Spearman correlation of mean score and mean error over the grid
and the error at the λ the score picks against the grid's best.

``--quick``: g241C, Digit1 and german (2 repetitions, the full λ grid).
"""

from __future__ import annotations

import numpy as np

from .._figures import curve_panels
from .._reference import cite
from .._report import fmt_num, markdown_table
from .._spec import Experiment, Method, Metric
from .._ssl import SSLOutput, repetition_landmarks, semi_labels, unlabeled_error
from ._zhang2017 import LAMBDA_GRID, PAPER_CRITERION, SMALL_DATASETS, protocol_part

__all__ = ["EXPERIMENTS", "GNYS_ALIGNMENT", "alignment_summary"]

FIG1_DATASETS = tuple(
    d for d in SMALL_DATASETS if d.display in ("g241C", "Digit1", "USPS", "coil2", "german", "dna")
)
QUICK_FIG1 = ("g241C", "Digit1", "german")


def _fig1_method(name, label, beta, center, feature_scale):
    """GenNys at the grid's λ: unlabeled error and the eq.-15 score at that λ."""

    def run(task):
        from lorak.estimators import GeneralizedNystroem
        from lorak.models import SemiSupervisedFactorClassifier

        Z = repetition_landmarks(task)
        g = GeneralizedNystroem(
            kernel="gaussian",
            bandwidth=task.context["b0"],
            landmarks=Z,
            beta=beta,
            center_ideal=center,
            lam=task.params["lam"],
            criterion=PAPER_CRITERION,
        )
        clf = SemiSupervisedFactorClassifier(g, feature_scale=feature_scale)
        clf.fit(task.data.X, semi_labels(task))
        f = clf.factor_
        return SSLOutput(
            unlabeled_error(clf.transduction_, task),
            {
                "alignment": float(f.alignment_scores_[0]),
                "rho_prior": float(f.alignment_factors_[0, 0]),
                "rho_target": float(f.alignment_factors_[0, 1]),
            },
        )

    run.__name__ = f"run_{name}"
    return Method(name=name, run=run, label=label)


def _fig1_metrics(out, task):
    return {"error_pct": out.error_pct, **out.extra}


def _spearman(a, b):
    from scipy.stats import spearmanr

    if len(a) < 3 or np.std(a) == 0 or np.std(b) == 0:
        return None
    return float(spearmanr(a, b).statistic)


def alignment_summary(result) -> list[dict]:
    """Per dataset and reading: correlation of score and error over λ, and the regret."""
    out = []
    for d in result.dataset_labels("fig1"):
        for m in ("gennys", "gennys-literal"):
            err, sc = (
                {
                    r["params"]["lam"]: r["mean"]
                    for r in result.select(part="fig1", dataset=d, method=m, metric=metric)
                }
                for metric in ("error_pct", "alignment")
            )
            lams = sorted(k for k in err if err[k] is not None and sc.get(k) is not None)
            if not lams:
                continue
            e = np.array([err[k] for k in lams])
            s = np.array([sc[k] for k in lams])
            best = lams[int(np.argmax(s))]
            out.append(
                {
                    "dataset": d,
                    "method": m,
                    "spearman_score_vs_error": _spearman(s, e),
                    "lam_by_mean_score": best,
                    "error_at_that_lam": err[best],
                    "best_error": float(e.min()),
                    "lam_best_error": lams[int(np.argmin(e))],
                }
            )
    return out


def _fig1_checks(result) -> str:
    body = [
        [
            r["dataset"],
            r["method"],
            fmt_num(r["spearman_score_vs_error"], 3),
            fmt_num(r["lam_by_mean_score"]),
            fmt_num(r["error_at_that_lam"]),
            fmt_num(r["lam_best_error"]),
            fmt_num(r["best_error"]),
        ]
        for r in alignment_summary(result)
    ]
    header = [
        "dataset",
        "reading",
        "Spearman(score, error)",
        "λ by score",
        "error there",
        "best λ",
        "best error",
    ]
    return (
        "### Fig. 1: does the alignment score (eq. 15) track the error?\n\n"
        "Spearman correlation over the λ grid between the mean score and the mean error "
        "(the paper: strongly negative — higher score, lower error); the λ maximizing the "
        "mean score and its error against the best error on the grid (an oracle).\n\n"
        + markdown_table(header, body)
    )


def _fig1_plots(result, out_dir):
    names = {m.name: m.display for m in result.experiment.part("fig1").methods}
    return curve_panels(
        result,
        "fig1",
        "lam",
        {m: names.get(m, m) for m in ("gennys", "gennys-literal")},
        (("error_pct", "error on unlabeled (%)"), ("alignment", "alignment score (eq. 15)")),
        out_dir,
        "fig1_alignment.png",
        title="Fig. 1: error and alignment score across λ",
        suptitle="Fig. 1: error (top) and alignment score (bottom) across λ",
        xlabel="λ",
        figsize=lambda k: (3.3 * k, 5.2),
        rect=(0, 0.05, 1, 0.95),
        legend_from=(1, 0),
    )


GNYS_ALIGNMENT = Experiment(
    name="gnys-alignment",
    description="Generalized Nyström: alignment score (eq. 15) and error across λ (Fig. 1)",
    parts=(
        protocol_part(
            name="fig1",
            description="error and eq.-15 score at each λ of the grid",
            datasets=FIG1_DATASETS,
            grid=tuple({"lam": lam} for lam in LAMBDA_GRID),
            methods=(
                _fig1_method("gennys", "GenNys default", 1.0, True, "mean_norm"),
                _fig1_method("gennys-literal", "GenNys literal", "heuristic", False, None),
            ),
            metrics=(Metric(("error_pct", "alignment", "rho_prior", "rho_target"), _fig1_metrics),),
            reps=10,
            quick_reps=2,
            quick_paper_datasets=QUICK_FIG1,
        ),
    ),
    checks=_fig1_checks,
    plots=_fig1_plots,
    paper=cite("generalized_nystrom", "§6.1 — Fig. 1"),
)

EXPERIMENTS = [GNYS_ALIGNMENT]

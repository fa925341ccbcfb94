"""What the improved Nyström experiments share (``nystrom-error``, ``kpca``,
``lssvm-usps``; not an experiment itself): the paper's columns, and the question each
of its tables asks — does k-means beat the other landmarks?

Zhang, Tsang & Kwok (2008) compare the same approximations in every table: Nyström
with k-means, uniform and column-norm (Drineas–Mahoney) landmarks, incomplete
Cholesky, and the best rank-m factor (SVD). The columns themselves are built by
:func:`lorak_bench._factors.factor_columns`.
"""

from __future__ import annotations

from functools import partial

from .._compare import win_counts
from .._reference import load_reference
from .._report import markdown_table
from .._spec import Part

__all__ = [
    "APPROX_KEYS",
    "RELATIONS",
    "kmeans_counts",
    "kmeans_section",
    "paper_table",
    "ratio_part",
]

# our approximation -> its column in reference/improved_nystrom.json
APPROX_KEYS = {
    "kmeans": "kmeans_nystrom",
    "uniform": "uniform_nystrom",
    "column_norm": "column_norm",
    "icd": "icd",
}
RIVALS = ("uniform", "column_norm", "icd")
RELATIONS = ("kmeans<uniform", "kmeans<column_norm", "kmeans<icd", "kmeans best")


def _rank(params, data, *, min_rank: int) -> dict:
    return {**params, "m": max(min_rank, round(params["ratio"] * data.n_samples))}


def ratio_part(ratios, *, quick_ratios=None, min_rank: int = 1, **kw) -> Part:
    """A part of the paper's protocol: rank m = round(ratio · n) (at least ``min_rank``)
    at each of ``ratios`` (``quick_ratios`` with ``--quick``), 20 repetitions of the
    randomized methods (3 with ``--quick``); ``kw``: the rest of the :class:`Part`."""
    return Part(
        grid=tuple({"ratio": r} for r in ratios),
        quick_grid=None if quick_ratios is None else tuple({"ratio": r} for r in quick_ratios),
        resolve_params=partial(_rank, min_rank=min_rank),
        reps=20,
        quick_reps=3,
        **kw,
    )


def paper_table(key: str) -> dict:
    """Table ``key`` of reference/improved_nystrom.json."""
    return load_reference("improved_nystrom")[key]


def kmeans_counts(rows, key: str, *, ties_win_best: bool = False) -> dict:
    """Over ``rows`` (each ``{key: {method: (mean, ...)}}``): where kmeans' mean is below
    uniform's, column_norm's, ICD's, and the lowest of the four approximations
    (:func:`lorak_bench._compare.win_counts`)."""
    means = [{m: v[0] for m, v in row[key].items()} for row in rows]
    return win_counts(means, "kmeans", RIVALS, ties_win_best=ties_win_best)


def kmeans_section(rows, unit: str, *, groups=(), ties_win_best: bool = False) -> list[str]:
    """Markdown lines answering "does k-means beat the other landmarks?" over ``rows``
    (each with ``ours`` and ``paper`` ``{method: (mean, ...)}`` and ``stand_in``): the
    win counts, ours beside the paper's, over all paper rows and over each of
    ``groups`` (``(name, keep(row))``); with stand-ins only, ours alone. ``unit`` names
    what a row is ("datasets", "pair × m")."""
    paper_rows = [r for r in rows if not r["stand_in"]]
    out = [f"### Does k-means beat the other landmarks? (rows = {unit})", ""]
    if not paper_rows:
        o = kmeans_counts(rows, "ours", ties_win_best=ties_win_best)
        out.append(
            f"Stand-ins only: kmeans < uniform on {o['kmeans<uniform']}/{o['n']}, "
            f"kmeans < column_norm on {o['kmeans<column_norm']}/{o['n']} (no paper rows)."
        )
        return out
    body = []
    for name, keep in (("all", None), *groups):
        sub = [r for r in paper_rows if keep is None or keep(r)]
        o, p = (kmeans_counts(sub, k, ties_win_best=ties_win_best) for k in ("ours", "paper"))
        body += [[name, k, f"{o[k]}/{o['n']}", f"{p[k]}/{p['n']}"] for k in RELATIONS]
    o, p = (kmeans_counts(paper_rows, k, ties_win_best=ties_win_best) for k in ("ours", "paper"))
    out += [
        markdown_table(["rows", "relation", "ours", "paper"], body),
        "",
        f"k-means landmarks have the lowest mean error of the four approximations on "
        f"{o['kmeans best']}/{o['n']} rows (paper: {p['kmeans best']}/{p['n']}); they beat "
        f"uniform on {o['kmeans<uniform']}/{o['n']} (paper {p['kmeans<uniform']}) and "
        f"column_norm on {o['kmeans<column_norm']}/{o['n']} (paper {p['kmeans<column_norm']}).",
    ]
    return out

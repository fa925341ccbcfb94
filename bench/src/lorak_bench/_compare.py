"""Comparisons the experiments share: paired differences over repetitions, win
counts, and our cells beside the paper's.

Every experiment compares a column against a baseline on the same repetitions (the
same seed: same labeled rows, landmarks, split, constraints) and sets its numbers
beside a paper's table; these are the pieces, so that no experiment writes them again.
"""

from __future__ import annotations

import numpy as np

from ._report import fmt_num

__all__ = [
    "first_row",
    "mean_std_text",
    "paired",
    "paired_wins",
    "per_rep",
    "reference_entry",
    "row_of",
    "seconds_text",
    "signed_delta",
    "win_counts",
    "within_std",
    "yes_no",
]


def per_rep(result, part, dataset, method, metric, *, key="seed") -> dict:
    """``{seed: value}`` of one column's successful repetitions (``key="rep"`` pairs by
    repetition index instead, e.g. across parts whose seeds agree by index)."""
    out = {}
    for rec in result.select_records(part=part, dataset=dataset, method=method):
        v = rec["metrics"].get(metric)
        if rec["error"] is None and v is not None:
            out[rec[key]] = v
    return out


def paired(a: dict, b: dict):
    """``(mean of a − b, two-sided paired t-test p-value, n)`` over the keys both have;
    ``(None, None, n)`` with fewer than two pairs. Constant differences give p = 1 when
    they are zero, else 0 (the test is undefined there)."""
    common = sorted(set(a) & set(b))
    if len(common) < 2:
        return None, None, len(common)
    d = np.array([a[s] - b[s] for s in common])
    if np.allclose(d, d[0]):
        return float(d.mean()), (1.0 if d[0] == 0 else 0.0), len(common)
    from scipy.stats import ttest_rel

    p = float(ttest_rel([a[s] for s in common], [b[s] for s in common]).pvalue)
    return float(d.mean()), p, len(common)


def paired_wins(a: dict, b: dict, tol: float = 1e-9):
    """``(mean of a − b, #pairs a > b, #pairs a = b (within tol), #pairs)`` over the keys
    both have, or None when there are none."""
    common = [k for k in a if k in b and a[k] is not None and b[k] is not None]
    if not common:
        return None
    d = np.array([a[k] - b[k] for k in common])
    return float(d.mean()), int((d > tol).sum()), int((np.abs(d) <= tol).sum()), len(common)


def win_counts(tables, ours, others, *, ties_win_best=False) -> dict:
    """Over ``tables`` (each ``{column: value}``, lower is better) that hold ``ours``:
    how many have ``ours`` strictly below each of ``others`` (``"ours<other"``), how many
    have it below every other present column (``"ours best"``; with ``ties_win_best`` a
    tie counts as best), and ``"n"``, the tables counted."""
    c = {f"{ours}<{o}": 0 for o in others}
    c[f"{ours} best"] = 0
    n = 0
    for t in tables:
        if ours not in t:
            continue
        n += 1
        for o in others:
            c[f"{ours}<{o}"] += o in t and t[ours] < t[o]
        rivals = [t[o] for o in others if o in t]
        c[f"{ours} best"] += all(t[ours] <= v if ties_win_best else t[ours] < v for v in rivals)
    c["n"] = n
    return c


def within_std(mean, ref_mean, ref_std):
    """Whether ``mean`` lies within one reference standard deviation (None: no number)."""
    if mean is None or ref_mean is None or ref_std is None:
        return None
    return abs(mean - ref_mean) <= ref_std


def row_of(result, part, dataset, method, metric):
    """The aggregated result row of one cell of a table, or None."""
    rows = result.select(part=part, dataset=dataset, method=method, metric=metric)
    return rows[0] if rows else None


def first_row(result, parts, dataset, method, metric):
    """``(part, row)`` of the first of ``parts`` that has the result row, else
    ``(None, None)`` (multi-part experiments whose datasets split by size)."""
    for part in parts:
        rows = result.select(part=part, dataset=dataset, method=method, metric=metric)
        if rows:
            return part, rows[0]
    return None, None


def mean_std_text(mean, std, digits: int = 2) -> str:
    """``"m ± s"`` with fixed decimals (the papers' table style); ``—`` for None."""
    if mean is None:
        return "—"
    return f"{mean:.{digits}f} ± {(std or 0):.{digits}f}"


def signed_delta(dv, p, alpha: float = 0.05) -> str:
    """A paired difference with a star when significant: ``+1.23*``."""
    if dv is None:
        return "—"
    return f"{dv:+.2f}" + ("*" if p is not None and p < alpha else "")


def yes_no(v) -> str:
    return "—" if v is None else ("yes" if v else "no")


def reference_entry(row, name, source, *, mean="error_pct_mean", std="error_pct_std"):
    """The report's reference cell (``{"mean", "std", "seconds", "source"}``) for paper
    column ``name`` of a reference-table ``row`` whose columns sit under ``"methods"``
    (None when the row or the column is absent)."""
    if row is None or name is None or name not in row["methods"]:
        return None
    r = row["methods"][name]
    return {
        "mean": r[mean],
        "std": r[std],
        "seconds": r.get("seconds"),
        "source": f"{source}/{name}",
    }


def seconds_text(row, digits: int = 3) -> str:
    """A result row's mean seconds (``—`` when absent)."""
    return fmt_num(None if row is None else row.get("seconds_mean"), digits)

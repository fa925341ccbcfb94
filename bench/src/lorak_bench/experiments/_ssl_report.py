"""The report of the ``ssl`` experiment: its tables, win counts and plots.

Not an experiment (the leading underscore keeps it out of discovery). The column
names, their labels and the split of the sets into tuning and held-out ones are
:mod:`.ssl`'s: it hands them over as a :class:`Protocol` (this module imports nothing
of it, so the two form no import cycle), and binds the hooks to it.

- :func:`ssl_cells` — the error rows of a run, one :class:`Cell` per (part, set,
  budget);
- :func:`ssl_win_table` — wins and losses of ``default`` against each column;
- :func:`ssl_win_counts` — the issue's criteria per part and budget, counted on the
  tuning and the held-out sets apart (:data:`CRITERIA`);
- :func:`ssl_summary`, :func:`ssl_checks`, :func:`ssl_plots` — the experiment's hooks.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

__all__ = [
    "BEST_COLUMNS",
    "CRITERIA",
    "DIAGNOSTIC_COLUMNS",
    "DIAGNOSTIC_REASONS",
    "MOSTLY_SHARE",
    "PEER_COLUMNS",
    "Cell",
    "Protocol",
    "budget_text",
    "miss_reason",
    "ssl_cells",
    "ssl_checks",
    "ssl_miss_reasons",
    "ssl_miss_table",
    "ssl_plots",
    "ssl_summary",
    "ssl_win_counts",
    "ssl_win_table",
]

#: The parts in report order (a part of another name follows them).
PART_ORDER = ("book", "other-even", "other-random", "per-class")
#: "The best column" of the book and of the even draws.
BEST_COLUMNS = (
    "labelspreading-knn",
    "labelpropagation-knn",
    "gn-nystroem-prior",
    "today-default",
    "nystroem",
    "poisson",
    "laplace",
    "selftraining-svc",
)
#: "The best peer" of the random draws and the per-class counts: what a user would
#: pick instead of lorak.
PEER_COLUMNS = (
    "labelspreading-knn",
    "labelpropagation-knn",
    "poisson",
    "laplace",
    "svc-labeled",
    "selftraining-svc",
)
PEER_PARTS = ("other-random", "per-class")
#: The default refitted with one assumption replaced by the truth or switched off —
#: measurements of why it misses, not peers: never a best column, a best peer or a
#: column of the win table.
DIAGNOSTIC_COLUMNS = ("default-true-prior", "default-graph-off", "default-other-regime")
#: What each diagnostic column replaces, as a miss's reason names it.
DIAGNOSTIC_REASONS = dict(zip(DIAGNOSTIC_COLUMNS, ("prior", "graph", "regime"), strict=True))
GN_COLUMNS = ("gn-nystroem-prior", "today-default")
GROUPS = ("tuning", "held-out", "unassigned")
#: The columns drawn against the label budget.
BUDGET_COLUMNS = (
    "default",
    "gn-nystroem-prior",
    "nystroem",
    "labelspreading-knn",
    "labelpropagation-knn",
    "selftraining-svc",
    "svc-labeled",
    "poisson",
    "laplace",
)


class Protocol(NamedTuple):
    """What the report reads of the experiment (:mod:`.ssl` builds it): the columns in
    table order (``default`` first) and their labels, the split of the sets into tuning
    and held-out ones (``set_group(label)`` gives ``"tuning"``, ``"held-out"`` or
    ``"unassigned"``), and the dense columns' largest n."""

    names: tuple
    labels: dict
    set_group: Callable
    tuning_sets: tuple
    held_out_sets: tuple
    dense_max_n: int


# ---------------------------------------------------------------- cells


class Cell(NamedTuple):
    """The error rows of one (part, set, budget): ``budget`` is the grid's label count
    (10 or 100; 10 meaning max(10, 2 per class) outside the book) or, for per-class
    counts, the labels per class; ``l`` the labels drawn; ``rows`` {column: row}."""

    part: str
    dataset: str
    budget: int
    per_class: bool
    l: int
    rows: dict


def _part_order(result) -> list[str]:
    names = list(result.datasets)
    return [p for p in PART_ORDER if p in names] + [p for p in names if p not in PART_ORDER]


def ssl_cells(result) -> list[Cell]:
    """The cells of the error rows, part by part in :data:`PART_ORDER`, sets in run
    order, budgets from the largest (per-class counts from the smallest)."""
    out = []
    for part in _part_order(result):
        for d in result.dataset_labels(part):
            by: dict = {}
            for r in result.select(part=part, dataset=d, metric="error_pct"):
                if r["mean"] is None:
                    continue
                p = r["params"]
                per = "per_class" in p
                key = int(p["per_class"] if per else p.get("budget", p["l"]))
                by.setdefault((per, key), (int(p["l"]), {}))[1][r["method"]] = r
            order = sorted(by, key=lambda k: (k[0], k[1] if k[0] else -k[1]))
            out += [Cell(part, d, k[1], k[0], by[k][0], by[k][1]) for k in order]
    return out


def budget_text(part: str, budget: int, per_class: bool) -> str:
    """The budget as the tables name it."""
    if per_class:
        return f"{budget}/class"
    if part != "book" and budget == 10:
        return "max(10, 2/class)"
    return str(budget)


def _cell_label(c: Cell) -> str:
    reps = max(r["reps"] for r in c.rows.values())
    what = f"{c.budget}/class, l={c.l}" if c.per_class else f"l={c.l}"
    return f"{c.dataset} ({what}, {reps})"


# ---------------------------------------------------------------- win counts


def ssl_win_table(result, protocol: Protocol) -> dict:
    """For each other column: the cells where ``default`` has a lower mean error
    (wins), a higher one (losses), ties, and the worst loss (default − column, points,
    with its cell)."""
    out = {}
    cells = ssl_cells(result)
    for other in (m for m in protocol.names[1:] if m not in DIAGNOSTIC_COLUMNS):
        w = lo = t = 0
        worst = None
        for c in cells:
            if "default" not in c.rows or other not in c.rows:
                continue
            diff = c.rows["default"]["mean"] - c.rows[other]["mean"]
            if abs(diff) < 1e-9:
                t += 1
            elif diff < 0:
                w += 1
            else:
                lo += 1
            if worst is None or diff > worst[0]:
                worst = (diff, f"{c.part} {c.dataset} {budget_text(c.part, c.budget, c.per_class)}")
        out[other] = {"wins": w, "losses": lo, "ties": t, "worst": worst}
    return out


def _column(name):
    return lambda rows, part: rows[name]["mean"] if name in rows else None


def _best_mean_of(columns):
    def ref(rows, part):
        present = [rows[m]["mean"] for m in columns if m in rows]
        return min(present) if present else None

    return ref


def _best(rows, part):
    return _best_mean_of(PEER_COLUMNS if part in PEER_PARTS else BEST_COLUMNS)(rows, part)


def _best_named(rows, part):
    """(name, mean) of the best column (book, even draws) or peer, or None."""
    columns = PEER_COLUMNS if part in PEER_PARTS else BEST_COLUMNS
    present = [m for m in columns if m in rows]
    if not present:
        return None
    name = min(present, key=lambda m: rows[m]["mean"])
    return name, rows[name]["mean"]


class Criterion(NamedTuple):
    """``default`` against ``reference(rows, part)``: it passes when default −
    reference < 0 (``strict``) or ≤ ``margin``; only in ``parts`` (None: all) and at
    the non-per-class ``budgets`` (None: every budget, per-class counts too)."""

    text: str
    reference: Callable
    margin: float = 0.0
    strict: bool = False
    parts: tuple | None = None
    budgets: tuple | None = None


CRITERIA = (
    Criterion("within 1 point of the best {best}", _best, 1.0),
    Criterion("beats LabelSpreading (knn)", _column("labelspreading-knn"), strict=True),
    Criterion("at most 1 point behind SVC on the labeled rows", _column("svc-labeled"), 1.0),
    Criterion(
        "at most 1 point behind Nyström + LinearSVC",
        _column("nystroem-linearsvc"),
        1.0,
        budgets=(100,),
    ),
    Criterion("beats self-training SVC", _column("selftraining-svc"), strict=True, budgets=(100,)),
    Criterion(
        "within 0.5 point of generalized Nyström",
        _best_mean_of(GN_COLUMNS),
        0.5,
        parts=("book",),
        budgets=(100,),
    ),
)


def _judges(crit: Criterion, part: str, budget: int, per_class: bool) -> bool:
    if crit.parts is not None and part not in crit.parts:
        return False
    return crit.budgets is None or (not per_class and budget in crit.budgets)


def _gap(c: Cell, crit: Criterion):
    """default − reference (points), or None where either is missing."""
    if "default" not in c.rows:
        return None
    ref = crit.reference(c.rows, c.part)
    return None if ref is None else c.rows["default"]["mean"] - ref


def ssl_win_counts(result, protocol: Protocol) -> list[dict]:
    """Per (part, budget) and criterion: ``{group: (passed, judged)}`` over the sets of
    each group (``protocol.set_group``, :func:`.ssl.set_group`), and the held-out sets
    that miss with their gap (default − reference, points)."""
    group = protocol.set_group
    cells = ssl_cells(result)
    keys = list(dict.fromkeys((c.part, c.budget, c.per_class) for c in cells))
    out = []
    for part, budget, per in keys:
        mine = [c for c in cells if (c.part, c.budget, c.per_class) == (part, budget, per)]
        for crit in CRITERIA:
            if not _judges(crit, part, budget, per):
                continue
            counts = {g: [0, 0] for g in GROUPS}
            misses = []
            for c in mine:
                gap = _gap(c, crit)
                if gap is None:
                    continue
                ok = gap < 0 if crit.strict else gap <= crit.margin + 1e-9
                g = group(c.dataset)
                counts[g][0] += int(ok)
                counts[g][1] += 1
                if not ok and g == "held-out":
                    misses.append(f"{c.dataset} ({gap:+.1f})")
            if any(n for _, n in counts.values()):
                best = "peer" if part in PEER_PARTS else "column"
                out.append(
                    {
                        "part": part,
                        "labels": budget_text(part, budget, per),
                        "criterion": crit.text.format(best=best),
                        "counts": {g: tuple(v) for g, v in counts.items()},
                        "held_out_misses": misses,
                    }
                )
    return out


#: A diagnostic that closes at least this share of a miss's gap (the default's error
#: over the best's), without coming within 1 point, is its main reason ("mostly prior").
MOSTLY_SHARE = 0.5


def miss_reason(closes: dict, shares: dict | None = None) -> str | None:
    """A miss's measured reason from ``closes`` ({diagnostic column: whether it alone
    comes within 1 point of the best, or None where it was not run}): the names of those
    that close it (:data:`DIAGNOSTIC_REASONS`), joined by "or" — "prior", "graph or
    regime", … Where none does, those that close at least :data:`MOSTLY_SHARE` of the
    gap (``shares``: {column: (default − diagnostic) / (default − best)}), largest
    first: "mostly prior", "mostly regime or prior"; else "beyond both" (two
    diagnostics run) or "beyond all three". None where the prior or the graph
    diagnostic was not run (the regime's is optional: records before it lack it)."""
    if closes.get("default-true-prior") is None or closes.get("default-graph-off") is None:
        return None
    named = [DIAGNOSTIC_REASONS[m] for m, ok in closes.items() if ok]
    if named:
        return " or ".join(named)
    big = sorted(
        ((v, m) for m, v in (shares or {}).items() if v is not None and v >= MOSTLY_SHARE),
        reverse=True,
    )
    if big:
        return "mostly " + " or ".join(DIAGNOSTIC_REASONS[m] for _, m in big)
    return "beyond both" if sum(v is not None for v in closes.values()) == 2 else "beyond all three"


def ssl_miss_reasons(result, protocol: Protocol) -> list[dict]:
    """Every cell where ``default`` is more than 1 point behind the best column (book,
    even draws) or the best peer (random draws, per-class counts), with the measured
    reason (:func:`miss_reason`): which of the diagnostic columns, run on the same
    labeled rows, comes within 1 point of that best — ``default-true-prior`` (the class
    prior was the loss), ``default-graph-off`` (the graph was),
    ``default-other-regime`` (the choice between the few-label rules and leave-one-out
    was); where none does, those that close at least half of the gap ("mostly …"); else
    none of them (the features or the head: no fix alone closes half of it)."""
    out = []
    for c in ssl_cells(result):
        named = _best_named(c.rows, c.part)
        if "default" not in c.rows or named is None:
            continue
        name, best = named
        if c.rows["default"]["mean"] - best <= 1.0 + 1e-9:
            continue
        diag = {m: c.rows[m]["mean"] if m in c.rows else None for m in DIAGNOSTIC_COLUMNS}
        closes = {m: None if v is None else v - best <= 1.0 + 1e-9 for m, v in diag.items()}
        own = c.rows["default"]["mean"]
        shares = {m: None if v is None else (own - v) / (own - best) for m, v in diag.items()}
        out.append(
            {
                "part": c.part,
                "labels": budget_text(c.part, c.budget, c.per_class),
                "dataset": c.dataset,
                "group": protocol.set_group(c.dataset),
                "default": c.rows["default"]["mean"],
                "best": (name, best),
                **diag,
                "reason": miss_reason(closes, shares),
            }
        )
    return out


# ---------------------------------------------------------------- text


def _fmt_cell(r):
    if r is None:
        return "—"
    sd = r["std"] if r["std"] is not None else 0.0
    return f"{r['mean']:.2f} ± {sd:.2f}"


def _fmt_secs(r):
    return "—" if r is None or r["seconds_mean"] is None else f"{r['seconds_mean']:.2f}"


def _intro(protocol: Protocol) -> list[str]:
    return [
        "Columns: `default` is SemiSupervisedFactorClassifier() with every default; "
        "`today-default` GN + LinearSVC(C=1), the default before issue 29; `svc-labeled` "
        "SVC(gamma='scale') on the labeled rows alone; `poisson` / `laplace` graphlearning's "
        "Poisson and Laplace learning (its defaults), when the package is installed; "
        "`default-true-prior`, `default-graph-off` and `default-other-regime` are "
        "diagnostics, not peers: the default told the true class proportions of the rows, "
        "with the graph off (γ = 0), and refitted in the regime it did not take (the "
        "few-label rules or leave-one-out); they measure why the default misses (the last "
        "table) and are never a best column or peer. "
        "`labelspreading-rbf` uses scikit-learn's γ = 20, `labelspreading-rbf-b0` "
        "γ = 1/b₀ (b₀ the mean pairwise squared distance); `laprls` / `lapsvm` are exact "
        f"and dense (n ≤ {protocol.dense_max_n}). The SSL book's own table could not be read, so "
        "no book column is shown.",
        "",
        "Parts: `book` the official splits; `other-even` labels spread evenly over the "
        "classes; `other-random` labels drawn at random with every class present; "
        "`per-class` exactly 1, 2 or 5 labels per class. Outside the book the small budget "
        "is max(10, 2 per class) labels.",
        "",
        "Which data chose what: the default's rules were tuned on "
        + ", ".join(protocol.tuning_sets)
        + "; held out from every choice: "
        + ", ".join(protocol.held_out_sets)
        + ".",
        "",
    ]


def _part_tables(cells, present, render, part, markdown) -> list[str]:
    mine = [c for c in cells if c.part == part]
    title = f"**{part}**" if markdown else f"{part}:"
    body = [[_cell_label(c), *(_fmt_cell(c.rows.get(m)) for m in present)] for c in mine]
    secs = [
        [f"{c.dataset} ({budget_text(c.part, c.budget, c.per_class)})"]
        + [_fmt_secs(c.rows.get(m)) for m in present]
        for c in mine
    ]
    return [
        f"{title} error (%) on the unlabeled rows, mean ± sd over the splits (repetitions):",
        "",
        render(["set", *present], body),
        "",
        f"{title} seconds per fit (wall, one BLAS thread; shared work charged in full):",
        "",
        render(["set", *present], secs),
        "",
    ]


def _win_lines(result, protocol, present, render) -> list[str]:
    wins = ssl_win_table(result, protocol)
    body = []
    for m in (m for m in present[1:] if m in wins):
        w = wins[m]
        worst = "—" if w["worst"] is None else f"{w['worst'][0]:+.2f} ({w['worst'][1]})"
        body.append([m, str(w["wins"]), str(w["losses"]), str(w["ties"]), worst])
    return [
        "default against each column over every (part, set, budget) cell (mean errors; "
        "worst: the largest default − column, points):",
        "",
        render(["column", "default wins", "default loses", "ties", "worst"], body),
    ]


def _fraction(passed, judged) -> str:
    return f"{passed}/{judged}" if judged else "—"


def _count_lines(result, protocol, render) -> list[str]:
    rows = ssl_win_counts(result, protocol)
    if not rows:
        return []
    groups = [g for g in GROUPS if any(r["counts"][g][1] for r in rows)]
    body = [
        [
            r["part"],
            r["labels"],
            r["criterion"],
            *(_fraction(*r["counts"][g]) for g in groups),
            ", ".join(r["held_out_misses"]) or "—",
        ]
        for r in rows
    ]
    return [
        "",
        "Win counts of the default, on the tuning and the held-out sets apart (best "
        "column: "
        + ", ".join(BEST_COLUMNS)
        + "; best peer: "
        + ", ".join(PEER_COLUMNS)
        + ", where present; misses: default − reference, points):",
        "",
        render(["part", "labels", "criterion", *groups, "held-out sets that miss"], body),
    ]


def _num(v) -> str:
    return "—" if v is None else f"{v:.2f}"


def ssl_miss_table(result, protocol: Protocol, *, markdown: bool = True) -> str:
    """:func:`ssl_miss_reasons` as a table (markdown or plain text); "" without a miss
    that has its diagnostics."""
    from .._report import markdown_table, text_table

    return _miss_table(result, protocol, markdown_table if markdown else text_table)


def _miss_table(result, protocol, render):
    rows = ssl_miss_reasons(result, protocol)
    if not rows or all(r["reason"] is None for r in rows):
        return ""
    body = [
        [
            r["part"],
            r["labels"],
            r["dataset"],
            r["group"],
            f"{r['default']:.2f}",
            f"{r['best'][1]:.2f} {r['best'][0]}",
            *(_num(r[m]) for m in DIAGNOSTIC_COLUMNS),
            r["reason"] or "—",
        ]
        for r in rows
    ]
    header = ["part", "labels", "set", "group", "default", "best", *DIAGNOSTIC_COLUMNS, "reason"]
    return render(header, body)


def _reason_lines(result, protocol, render) -> list[str]:
    table = _miss_table(result, protocol, render)
    if not table:
        return []
    return [
        "",
        "Misses of the default (more than 1 point behind the best column, or the best peer "
        "where labels come at random or per class) and their measured reason: the "
        "diagnostic column that alone comes within 1 point of the best, on the same "
        "labeled rows (`default-true-prior`: told the true class proportions; "
        "`default-graph-off`: γ = 0; `default-other-regime`: the regime it did not "
        "take); mostly …: none comes within 1 point, these close at least half of the "
        "gap; beyond all three (or both, where the regime was not refitted): no fix "
        "alone closes half of it.",
        "",
        table,
    ]


def _ssl_text(result, protocol: Protocol, *, markdown: bool) -> str:
    from .._report import markdown_table, text_table

    render = markdown_table if markdown else text_table
    cells = ssl_cells(result)
    if not cells:
        return "(no results)"
    present = [m for m in protocol.names if any(m in c.rows for c in cells)]
    out = _intro(protocol)
    for part in dict.fromkeys(c.part for c in cells):
        out += _part_tables(cells, present, render, part, markdown)
    out += _win_lines(result, protocol, present, render)
    out += _count_lines(result, protocol, render)
    out += _reason_lines(result, protocol, render)
    return "\n".join(out)


def ssl_checks(result, protocol: Protocol) -> str:
    return _ssl_text(result, protocol, markdown=True)


def ssl_summary(result, protocol: Protocol) -> str:
    return f"ssl: {len(result.failures)} failures, {result.wall_seconds:.1f} s\n\n" + _ssl_text(
        result, protocol, markdown=False
    )


# ---------------------------------------------------------------- plots


def _colors():
    import matplotlib.pyplot as plt

    tab = plt.get_cmap("tab20").colors
    return [tab[i] for i in (*range(0, 20, 2), *range(1, 20, 2))]  # 20 distinct


def _bars(ax, sets, present, labels):
    """One bar per column and set (error, mean ± sd)."""
    width = 0.85 / len(present)
    colors = _colors()
    x = np.arange(len(sets))
    for j, m in enumerate(present):
        mean = [c.rows[m]["mean"] if m in c.rows else math.nan for c in sets]
        sd = [(c.rows[m]["std"] or 0.0) if m in c.rows else 0.0 for c in sets]
        ax.bar(
            x - 0.425 + width * (j + 0.5),
            mean,
            width,
            yerr=sd,
            capsize=1.5,
            label=labels[m],
            color=colors[j % len(colors)],
        )
    ax.set_xticks(x, [c.dataset for c in sets], fontsize=7, rotation=20)
    ax.set_ylabel("error on unlabeled (%)", fontsize=8)
    ax.grid(axis="y", alpha=0.3)


def ssl_plots(result, out_dir, protocol: Protocol):
    """Bars per set (error, mean ± sd) for every column, one panel per (part, budget);
    then the error against the number of labels."""
    import matplotlib.pyplot as plt

    from .._report import save_figure

    cells = ssl_cells(result)
    if not cells:
        return []
    panels = list(dict.fromkeys((c.part, c.budget, c.per_class) for c in cells))
    present = [m for m in protocol.names if any(m in c.rows for c in cells)]
    fig, axes = plt.subplots(len(panels), 1, figsize=(12, 3.4 * len(panels) + 0.8), squeeze=False)
    for ax, key in zip(axes[:, 0], panels, strict=True):
        _bars(
            ax,
            [c for c in cells if (c.part, c.budget, c.per_class) == key],
            present,
            protocol.labels,
        )
        ax.set_title(f"{key[0]}, {budget_text(*key)} labels", fontsize=9)
    axes[0, 0].legend(fontsize=7, ncol=4, loc="upper left", frameon=False)
    out = save_figure(fig, out_dir, "ssl_errors.png", "Error per set and column")
    return out + _budget_plot(cells, out_dir, protocol.labels)


def _budget_plot(cells, out_dir, labels):
    """Error against the number of labels, one panel per (part, set) that ran at two
    budgets or more, a line per column of :data:`BUDGET_COLUMNS`."""
    import matplotlib.pyplot as plt

    from .._report import save_figure

    by_set: dict = {}
    for c in cells:
        by_set.setdefault((c.part, c.dataset), {})[c.l] = c.rows
    sets = [(k, v) for k, v in by_set.items() if len(v) >= 2]
    if not sets:
        return []
    cols = min(4, len(sets))
    nrows = -(-len(sets) // cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(3.2 * cols, 2.6 * nrows), squeeze=False)
    for ax in axes.ravel()[len(sets) :]:
        ax.set_visible(False)
    for ax, ((p, d), budgets) in zip(axes.ravel(), sets, strict=False):
        ls = sorted(budgets)
        for m in BUDGET_COLUMNS:
            ys = [budgets[lv][m]["mean"] if m in budgets[lv] else math.nan for lv in ls]
            if all(math.isnan(v) for v in ys):
                continue
            style = {"lw": 2.2, "color": "k"} if m == "default" else {"lw": 1.0}
            ax.plot(ls, ys, marker="o", ms=3, label=labels[m], **style)
        ax.set_xscale("log")
        ax.set_xticks(ls, [str(v) for v in ls], fontsize=7)
        ax.tick_params(axis="y", labelsize=7)
        ax.set_title(f"{d} ({p})", fontsize=8)
        ax.grid(alpha=0.3)
    axes[0, 0].set_ylabel("error on unlabeled (%)", fontsize=8)
    axes[0, 0].legend(fontsize=6, frameon=False)
    return save_figure(fig, out_dir, "ssl_budget.png", "Error against the number of labels")

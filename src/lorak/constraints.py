"""Pairwise constraints (side information): must-link and cannot-link index pairs.

A constraint set is two integer arrays of shape (p, 2) of 0-based row indices:
``must_link`` (pairs known to share a class, the set S of Zhuang, Tsang & Hoi 2009,
§2.1) and ``cannot_link`` (pairs known to differ, the set D). They define the
symmetric matrix T of eq. (1): T_ij = T_ji = +1 on must-links, −1 on cannot-links,
0 elsewhere (:func:`constraint_matrix`).

:func:`check_constraints` validates user input: integer indices in range, no pair
(i, i), duplicates merged ((i, j) and (j, i) are the same pair), a pair that is both
must-link and cannot-link raises. Inconsistencies that appear only under transitivity
(a cannot-link inside a connected component of the must-link graph) are reported by
:func:`transitive_conflicts`; :func:`check_constraints` warns about them, because
SimpleNPKL aligns each entry K_ij on its own and does not assume transitivity.

:func:`from_labels` draws random labelled pairs the way the SimpleNPKL experiments do
(§6.1, after Xing et al. 2002): random pairs of labelled points become must-links
(same class) or cannot-links (different classes) until the must-link graph has at
most ``ratio · N`` connected components (N = number of rows; ``ratio = 0.7`` in the
paper's Table 2 and 4, 0.6 in its Fig. 2).

>>> import numpy as np
>>> from lorak.constraints import from_labels
>>> y = np.repeat([0, 1, 2], 50)
>>> c = from_labels(y, ratio=0.7, random_state=0)
>>> must_link, cannot_link = c
>>> must_link.shape[1], cannot_link.shape[1]
(2, 2)
>>> c.n_components <= 0.7 * len(y)
True
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from ._validation import check_generator

__all__ = [
    "PairwiseConstraints",
    "check_constraints",
    "constraint_matrix",
    "from_labels",
    "must_link_components",
    "transitive_conflicts",
]


@dataclass(frozen=True)
class PairwiseConstraints:
    """Must-link and cannot-link pairs, each an int64 array of shape (p, 2), i < j.

    Unpacks as ``must_link, cannot_link = c`` and works as keyword arguments:
    ``est.fit(X, **c)``. ``n_samples`` is the number of rows the pairs index, and
    ``n_components`` the number of connected components of the must-link graph over
    those rows when the set was drawn by :func:`from_labels` (else ``None``).
    """

    must_link: np.ndarray
    cannot_link: np.ndarray
    n_samples: int | None = None
    n_components: int | None = None

    def __iter__(self):
        yield self.must_link
        yield self.cannot_link

    def keys(self):
        """``("must_link", "cannot_link")``: makes ``fit(X, **c)`` work."""
        return ("must_link", "cannot_link")

    def __getitem__(self, key):
        if key in (0, "must_link"):
            return self.must_link
        if key in (1, "cannot_link"):
            return self.cannot_link
        raise KeyError(key)

    @property
    def n_constraints(self) -> int:
        """Total number of pairs (must-link + cannot-link)."""
        return int(len(self.must_link) + len(self.cannot_link))

    def pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """All pairs stacked, (p, 2) int64, and their signs T_ij (+1 must, −1 cannot)."""
        pairs = np.concatenate([self.must_link, self.cannot_link]).reshape(-1, 2)
        signs = np.concatenate([np.ones(len(self.must_link)), -np.ones(len(self.cannot_link))])
        return pairs.astype(np.int64, copy=False), signs


# ---------------------------------------------------------------- validation


def _as_pairs(pairs, name: str, n_samples: int) -> np.ndarray:
    """(p, 2) int64 array with i < j, sorted, duplicates merged; errors name ``name``."""
    if pairs is None:
        return np.empty((0, 2), dtype=np.int64)
    if sp.issparse(pairs):
        raise TypeError(
            f"{name} must be an array of index pairs of shape (p, 2); got a sparse matrix "
            "(for a sparse T, pass the row/column indices of its nonzeros)"
        )
    arr = np.asarray(pairs)
    if arr.size == 0:
        return np.empty((0, 2), dtype=np.int64)
    if arr.ndim == 1 and arr.shape[0] == 2:
        arr = arr.reshape(1, 2)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(
            f"{name} must have shape (p, 2) (one row per pair of row indices); "
            f"got shape {arr.shape}"
        )
    if arr.dtype == bool or not (
        np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
    ):
        raise TypeError(f"{name} must hold integer row indices; got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.floating):
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            bad = float(arr[~(np.isfinite(arr) & (arr == np.round(arr)))][0])
            raise ValueError(f"{name} must hold integer row indices; found {bad!r}")
    arr = arr.astype(np.int64)
    lo = arr.min(axis=1)
    hi = arr.max(axis=1)
    if lo.min() < 0:
        r = int(np.argmin(lo))
        raise ValueError(
            f"{name} pair {tuple(int(v) for v in arr[r])} (row {r}) has a negative index; "
            "pairs are 0-based row indices of X"
        )
    if hi.max() >= n_samples:
        r = int(np.argmax(hi))
        raise ValueError(
            f"{name} pair {tuple(int(v) for v in arr[r])} (row {r}) refers to row "
            f"{int(hi[r])} but X has {n_samples} rows"
        )
    same = lo == hi
    if same.any():
        r = int(np.flatnonzero(same)[0])
        raise ValueError(
            f"{name} pair {tuple(int(v) for v in arr[r])} (row {r}) links a point to "
            f"itself; {int(same.sum())} such self-pair(s) in {name}"
        )
    return np.unique(np.column_stack([lo, hi]), axis=0)


def _keys(pairs: np.ndarray, n: int) -> np.ndarray:
    return pairs[:, 0] * np.int64(n) + pairs[:, 1]


def check_constraints(
    must_link=None,
    cannot_link=None,
    n_samples: int | None = None,
    *,
    warn_transitive: bool = True,
) -> PairwiseConstraints:
    """Validate must-link and cannot-link pairs against ``n_samples`` rows.

    Parameters
    ----------
    must_link, cannot_link : array-like of shape (p, 2) or None
        0-based row indices. Integer-valued floats are accepted.
    n_samples : int
        Number of rows of X.
    warn_transitive : bool, default=True
        Warn (``UserWarning``) when a cannot-link joins two points of the same
        connected component of the must-link graph.

    Returns
    -------
    PairwiseConstraints
        Both arrays int64 of shape (p, 2), each row (i, j) with i < j, sorted,
        duplicates ((i, j) repeated, or (j, i)) merged.

    Raises
    ------
    ValueError
        A pair out of range, a self-pair, a wrong shape, no constraint at all, or a
        pair that is both must-link and cannot-link (the message lists them).
    """
    if n_samples is None:
        raise TypeError("n_samples is required: the number of rows the pairs index")
    if isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral):
        raise TypeError(f"n_samples must be an integer; got {n_samples!r}")
    n = int(n_samples)
    if n < 2:
        raise ValueError(f"n_samples must be >= 2 (a pair needs two rows); got {n}")
    ml = _as_pairs(must_link, "must_link", n)
    cl = _as_pairs(cannot_link, "cannot_link", n)
    if len(ml) + len(cl) == 0:
        raise ValueError(
            "no pairwise constraint given: pass must_link and/or cannot_link as arrays of "
            "shape (p, 2), e.g. from lorak.constraints.from_labels(y, random_state=0)"
        )
    if len(ml) and len(cl):
        both = np.intersect1d(_keys(ml, n), _keys(cl, n))
        if both.size:
            shown = ", ".join(f"({int(k // n)}, {int(k % n)})" for k in both[:5])
            more = f" and {both.size - 5} more" if both.size > 5 else ""
            raise ValueError(
                f"{both.size} pair(s) are both must-link and cannot-link: {shown}{more}; "
                "remove them from must_link or cannot_link"
            )
    if warn_transitive and len(ml) and len(cl):
        bad = transitive_conflicts(ml, cl, n)
        if len(bad):
            shown = ", ".join(f"({int(i)}, {int(j)})" for i, j in bad[:3])
            warnings.warn(
                f"{len(bad)} cannot-link pair(s) join points of the same must-link component "
                f"(e.g. {shown}): the constraints contradict each other under transitivity. "
                "SimpleNPKL fits each pair on its own, so this is allowed, but check the "
                "labels that produced them",
                UserWarning,
                stacklevel=2,
            )
    return PairwiseConstraints(ml, cl, n, None)


def must_link_components(must_link, n_samples: int) -> tuple[int, np.ndarray]:
    """Connected components of the must-link graph on ``n_samples`` nodes.

    Returns ``(n_components, labels)`` as :func:`scipy.sparse.csgraph.connected_components`.
    """
    ml = _as_pairs(must_link, "must_link", n_samples)
    g = sp.coo_matrix(
        (np.ones(len(ml)), (ml[:, 0], ml[:, 1])), shape=(n_samples, n_samples)
    ).tocsr()
    return connected_components(g, directed=False)


def transitive_conflicts(must_link, cannot_link, n_samples: int) -> np.ndarray:
    """Cannot-link pairs whose points lie in one connected component of the must-link graph."""
    cl = np.asarray(cannot_link, dtype=np.int64).reshape(-1, 2)
    if len(cl) == 0:
        return cl
    _, comp = must_link_components(must_link, n_samples)
    return cl[comp[cl[:, 0]] == comp[cl[:, 1]]]


def constraint_matrix(pairs, signs, n_samples: int, weights=None) -> sp.csr_matrix:
    """The symmetric sparse T of eq. (1), optionally weighted: entries w_p·T_p at (i, j)
    and (j, i) for each pair p. ``pairs`` must be valid (see :func:`check_constraints`)."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    vals = np.asarray(signs, dtype=np.float64)
    if weights is not None:
        vals = vals * np.asarray(weights, dtype=np.float64)
    if vals.shape != (len(pairs),):
        raise ValueError(
            f"signs (and weights) must hold one value per pair ({len(pairs)}); got shape "
            f"{vals.shape}"
        )
    rows = np.concatenate([pairs[:, 0], pairs[:, 1]])
    cols = np.concatenate([pairs[:, 1], pairs[:, 0]])
    data = np.concatenate([vals, vals])
    return sp.csr_matrix((data, (rows, cols)), shape=(n_samples, n_samples))


# ---------------------------------------------------------------- generation


class _UnionFind:
    """Disjoint sets with path halving and union by size (for the component count)."""

    def __init__(self, n: int):
        self.parent = np.arange(n)
        self.size = np.ones(n, dtype=np.int64)
        self.n_sets = n

    def find(self, i: int) -> int:
        p = self.parent
        while p[i] != i:
            p[i] = p[p[i]]
            i = p[i]
        return int(i)

    def union(self, i: int, j: int) -> None:
        a, b = self.find(i), self.find(j)
        if a == b:
            return
        if self.size[a] < self.size[b]:
            a, b = b, a
        self.parent[b] = a
        self.size[a] += self.size[b]
        self.n_sets -= 1


def from_labels(
    y,
    *,
    ratio: float = 0.7,
    n_pairs: int | None = None,
    labeled=None,
    random_state=None,
) -> PairwiseConstraints:
    """Random must-link / cannot-link pairs drawn from class labels (paper §6.1).

    Pairs (i, j), i ≠ j, of labelled points are drawn uniformly at random without
    repetition; each becomes a must-link if y_i = y_j and a cannot-link otherwise.
    Drawing stops as soon as the must-link graph over all N rows has at most
    ``ratio · N`` connected components (Xing et al. 2002's measure of the amount of
    side information; the SimpleNPKL paper uses ratio = 0.7, and 0.6 in Fig. 2), or,
    when ``n_pairs`` is given, after exactly ``n_pairs`` pairs.

    Parameters
    ----------
    y : array-like of shape (N,)
        Class labels (any hashable values: LIBSVM's −1/+1 are two classes).
    ratio : float in (0, 1], default=0.7
        Target number of must-link components as a fraction of N.
    n_pairs : int, optional
        Draw exactly this many pairs instead (``ratio`` is then ignored), e.g. to match
        a paper's constraint count.
    labeled : array-like of bool (N,) or of indices, optional
        The rows whose labels may be used (default: all). With scikit-learn's
        semi-supervised convention (−1 = unlabelled) pass ``labeled=(y != -1)``.
    random_state : None, int, Generator or RandomState

    Returns
    -------
    PairwiseConstraints
        ``must_link``, ``cannot_link`` (i < j, in drawing order), ``n_samples`` = N
        and ``n_components`` reached.

    Raises
    ------
    ValueError
        If the target cannot be reached: with c classes among the labelled rows and u
        unlabelled rows the must-link graph keeps at least c + u components.
    """
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D (one label per row); got shape {y.shape}")
    n = int(y.shape[0])
    if n < 2:
        raise ValueError(f"y must have at least 2 entries to form a pair; got {n}")
    if labeled is None:
        idx = np.arange(n)
    else:
        lab = np.asarray(labeled)
        if lab.dtype == bool:
            if lab.shape != (n,):
                raise ValueError(
                    f"labeled as a mask must have shape ({n},) like y; got {lab.shape}"
                )
            idx = np.flatnonzero(lab)
        else:
            idx = np.unique(lab.astype(np.int64))
            if idx.size and (idx[0] < 0 or idx[-1] >= n):
                raise ValueError(
                    f"labeled refers to row {int(idx[0] if idx[0] < 0 else idx[-1])} but y "
                    f"has {n} rows"
                )
    yl = y[idx]
    if yl.dtype.kind in "fc" and not np.all(np.isfinite(yl)):
        bad = int(idx[np.flatnonzero(~np.isfinite(yl))[0]])
        raise ValueError(
            f"y contains NaN or infinity at labelled row {bad} (NaN is not equal to itself, "
            "so it would make every pair with it a cannot-link); give class labels, and "
            "leave unlabelled rows out with labeled="
        )
    if yl.dtype == object:
        try:
            np.unique(yl)
        except TypeError as exc:
            raise ValueError(f"y must hold comparable class labels: {exc}") from None
        if any(v is None or (isinstance(v, float) and not np.isfinite(v)) for v in yl):
            raise ValueError("y contains None or NaN at labelled rows; give class labels")
    m = idx.size
    if m < 2:
        raise ValueError(f"need at least 2 labelled rows to draw pairs; got {m}")
    rng = check_generator(random_state)
    yl = y[idx]
    total_pairs = m * (m - 1) // 2
    if n_pairs is not None:
        if isinstance(n_pairs, bool) or not isinstance(n_pairs, numbers.Integral):
            raise TypeError(f"n_pairs must be an integer; got {n_pairs!r}")
        if not 1 <= n_pairs <= total_pairs:
            raise ValueError(
                f"n_pairs must be in [1, {total_pairs}] (the number of distinct pairs of "
                f"{m} labelled rows); got {n_pairs}"
            )
        target = None
    else:
        if isinstance(ratio, bool) or not isinstance(ratio, numbers.Real):
            raise TypeError(f"ratio must be a number in (0, 1]; got {ratio!r}")
        if not 0 < ratio <= 1:
            raise ValueError(f"ratio must be in (0, 1]; got {ratio!r}")
        target = int(np.floor(ratio * n + 1e-9))
        floor = len(np.unique(yl)) + (n - m)
        if target < floor:
            raise ValueError(
                f"ratio={ratio} asks for at most {target} must-link components, but "
                f"{n - m} unlabelled row(s) and {len(np.unique(yl))} class(es) leave at least "
                f"{floor}: use ratio >= {floor / n:.3g}"
            )

    uf = _UnionFind(n)
    seen: set[int] = set()
    ml: list[tuple[int, int]] = []
    cl: list[tuple[int, int]] = []
    drawn = 0
    # Draw candidate pairs in batches (one Generator call per batch, not per pair);
    # rejected candidates (i == j or already drawn) cost a little extra randomness.
    batch = 256
    while True:
        if target is not None and uf.n_sets <= target:
            break
        if n_pairs is not None and drawn >= n_pairs:
            break
        if len(seen) >= total_pairs:  # pragma: no cover - guarded by the floor above
            break
        a = rng.integers(0, m, size=batch)
        b = rng.integers(0, m, size=batch)
        for u, v in zip(a.tolist(), b.tolist(), strict=True):
            if u == v:
                continue
            if u > v:
                u, v = v, u
            key = u * m + v
            if key in seen:
                continue
            seen.add(key)
            i, j = int(idx[u]), int(idx[v])
            drawn += 1
            if yl[u] == yl[v]:
                ml.append((i, j))
                uf.union(i, j)
            else:
                cl.append((i, j))
            if (target is not None and uf.n_sets <= target) or (
                n_pairs is not None and drawn >= n_pairs
            ):
                break
        batch = min(batch * 2, 65536)
    must = np.asarray(ml, dtype=np.int64).reshape(-1, 2)
    cannot = np.asarray(cl, dtype=np.int64).reshape(-1, 2)
    return PairwiseConstraints(must, cannot, n, int(uf.n_sets))

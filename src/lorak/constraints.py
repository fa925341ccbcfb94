"""Pairwise constraints (side information): must-link and cannot-link index pairs.

A constraint set is two integer arrays of shape (p, 2) of 0-based row indices:
``must_link`` (pairs known to share a class) and ``cannot_link`` (pairs known to
differ); they define the symmetric matrix T of SimpleNPKL (:func:`constraint_matrix`).
:func:`check_constraints` validates user input, :func:`transitive_conflicts` finds
cannot-links that contradict must-link chains, and :func:`from_labels` draws random
pairs the way the SimpleNPKL experiments do (:ref:`guide-npkl`, section "Constraints").

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
from scipy.cluster.hierarchy import DisjointSet
from scipy.sparse.csgraph import connected_components

from ._core.validation import check_generator

__all__ = [
    "PairwiseConstraints",
    "check_constraints",
    "constraint_matrix",
    "from_labels",
    "from_pairs",
    "must_link_components",
    "restrict_constraints",
    "to_pairs",
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


def from_labels(
    y,
    *,
    ratio: float = 0.7,
    n_pairs: int | None = None,
    labeled=None,
    unlabeled=None,
    random_state=None,
) -> PairwiseConstraints:
    """Random must-link / cannot-link pairs drawn from class labels (paper §6.1).

    Pairs of labelled points, drawn uniformly without repetition, become must-links
    (same label) or cannot-links, until the must-link graph over all N rows has at
    most ``ratio · N`` connected components (:ref:`guide-npkl`, section
    "Constraints"), or after exactly ``n_pairs`` pairs when that is given.

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
        The rows whose labels may be used (default: all).
    unlabeled : scalar, optional
        Rows whose label equals this value are unknown: they get no pair (as
        ``labeled=(y != unlabeled)``, combined with ``labeled`` when both are given).
        ``-1`` is the marker of scikit-learn, of lorak's semi-supervised estimators
        and of metric-learn; the default, None, keeps every label a class (as
        LIBSVM's −1/+1 labels need).
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
    y = _label_vector(y)
    n = int(y.shape[0])
    idx = np.flatnonzero(_labeled_mask(y, labeled, unlabeled))
    yl = _labels_at(y, idx)
    rng = check_generator(random_state)
    target = _component_target(ratio, n_pairs, n, yl)
    return _draw_pairs(yl, idx, n, rng, target, n_pairs)


def _label_vector(y) -> np.ndarray:
    """y as a 1-D array of at least 2 labels."""
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D (one label per row); got shape {y.shape}")
    if y.shape[0] < 2:
        raise ValueError(f"y must have at least 2 entries to form a pair; got {y.shape[0]}")
    return y


def _labeled_mask(y, labeled, unlabeled) -> np.ndarray:
    """The rows whose labels may be used, as a mask: ``labeled`` (a mask or indices; all
    rows when None) less the rows labelled ``unlabeled``."""
    n = y.shape[0]
    mask = np.ones(n, dtype=bool) if labeled is None else _rows_mask(labeled, n)
    if unlabeled is not None:
        if y.dtype.kind in "US" and not isinstance(unlabeled, str):
            mask &= y != str(unlabeled)
        else:
            mask &= np.asarray(y != unlabeled, dtype=bool)
    return mask


def _rows_mask(labeled, n: int) -> np.ndarray:
    """``labeled`` (a boolean mask of y's n rows, or row indices) as a mask (a copy)."""
    lab = np.asarray(labeled)
    if lab.dtype == bool:
        if lab.shape != (n,):
            raise ValueError(f"labeled as a mask must have shape ({n},) like y; got {lab.shape}")
        return lab.copy()
    rows = lab.astype(np.int64).ravel()
    if rows.size and (rows.min() < 0 or rows.max() >= n):
        bad = int(rows.min() if rows.min() < 0 else rows.max())
        raise ValueError(f"labeled refers to row {bad} but y has {n} rows")
    mask = np.zeros(n, dtype=bool)
    mask[rows] = True
    return mask


def _labels_at(y, idx) -> np.ndarray:
    """The labels of the rows idx, checked: class labels (no NaN, None or infinity;
    comparable), at least two of them."""
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
    if idx.size < 2:
        raise ValueError(f"need at least 2 labelled rows to draw pairs; got {idx.size}")
    return yl


def _component_target(ratio, n_pairs, n: int, yl) -> int | None:
    """The number of must-link components to stop at (None: stop after ``n_pairs``
    pairs), with ``n_pairs`` or ``ratio`` checked against what the labels allow."""
    m = yl.size
    total_pairs = m * (m - 1) // 2
    if n_pairs is not None:
        if isinstance(n_pairs, bool) or not isinstance(n_pairs, numbers.Integral):
            raise TypeError(f"n_pairs must be an integer; got {n_pairs!r}")
        if not 1 <= n_pairs <= total_pairs:
            raise ValueError(
                f"n_pairs must be in [1, {total_pairs}] (the number of distinct pairs of "
                f"{m} labelled rows); got {n_pairs}"
            )
        return None
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
    return target


def _draw_pairs(yl, idx, n: int, rng, target, n_pairs) -> PairwiseConstraints:
    """Random distinct pairs of the labelled rows idx (labels yl), each a must-link or a
    cannot-link, until the must-link graph over n rows has at most ``target``
    components, or after ``n_pairs`` pairs."""
    m = idx.size
    total_pairs = m * (m - 1) // 2
    # the must-link components over the n rows: the rows no must-link touched yet, each
    # a component of its own, and the subsets of those in the disjoint sets
    uf = DisjointSet()
    seen: set[int] = set()
    ml: list[tuple[int, int]] = []
    cl: list[tuple[int, int]] = []

    def n_sets():
        return n - len(uf) + uf.n_subsets

    def done():
        return (target is not None and n_sets() <= target) or (
            n_pairs is not None and len(seen) >= n_pairs
        )

    # Draw candidate pairs in batches (one Generator call per batch, not per pair);
    # rejected candidates (i == j or already drawn) cost a little extra randomness.
    batch = 256
    while not done() and len(seen) < total_pairs:  # the floor check makes it reachable
        a = rng.integers(0, m, size=batch)
        b = rng.integers(0, m, size=batch)
        for u, v in zip(a.tolist(), b.tolist(), strict=True):
            u, v = min(u, v), max(u, v)
            key = u * m + v
            if u == v or key in seen:
                continue
            seen.add(key)
            i, j = int(idx[u]), int(idx[v])
            if yl[u] == yl[v]:
                ml.append((i, j))
                uf.add(i)
                uf.add(j)
                uf.merge(i, j)
            else:
                cl.append((i, j))
            if done():
                break
        batch = min(batch * 2, 65536)
    must = np.asarray(ml, dtype=np.int64).reshape(-1, 2)
    cannot = np.asarray(cl, dtype=np.int64).reshape(-1, 2)
    return PairwiseConstraints(must, cannot, n, int(n_sets()))


# ---------------------------------------------------------------- other conventions


def _point_index(X, points: np.ndarray) -> np.ndarray:
    """Row of X equal to each point (first occurrence); ValueError naming a stray one."""
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features); got shape {X.shape}")
    if points.shape[-1] != X.shape[1]:
        raise ValueError(
            f"pairs of points have {points.shape[-1]} features, but X has {X.shape[1]}"
        )
    F = np.ascontiguousarray(X, dtype=np.float64)
    index: dict = {}
    for i, row in enumerate(F):
        index.setdefault(row.tobytes(), i)
    P = np.ascontiguousarray(points.reshape(-1, X.shape[1]), dtype=np.float64)
    out = np.empty(P.shape[0], dtype=np.int64)
    for a, row in enumerate(P):
        i = index.get(row.tobytes(), -1)
        if i < 0:
            raise ValueError(
                f"point {a % 2} of pair {a // 2} ({np.array2string(P[a], threshold=6)}) is "
                "not a row of X: pairs of points can be converted only against the X "
                "they were drawn from (exact equality)"
            )
        out[a] = i
    return out.reshape(-1, 2)


def to_pairs(must_link=None, cannot_link=None, X=None):
    """lorak's constraints as metric-learn's pairs: ``(pairs, y)``.

    Parameters
    ----------
    must_link, cannot_link : array-like of shape (p, 2), or a :class:`PairwiseConstraints`
        as ``must_link`` (then ``cannot_link`` must be None).
    X : array-like of shape (n_samples, n_features), optional
        Without it, ``pairs`` holds row indices, shape (p, 2) (metric-learn's
        ``preprocessor=X`` convention); with it, the points themselves, shape
        (p, 2, n_features).

    Returns
    -------
    pairs : ndarray (p, 2) int64 or (p, 2, n_features) float
        The must-links first, then the cannot-links, in their given order.
    y : ndarray (p,) int64
        +1 for a must-link (similar pair), −1 for a cannot-link (dissimilar pair).

    Examples
    --------
    >>> from lorak.constraints import to_pairs
    >>> pairs, y = to_pairs([[0, 1]], [[1, 2]])
    >>> pairs.tolist(), y.tolist()
    ([[0, 1], [1, 2]], [1, -1])
    """
    if isinstance(must_link, PairwiseConstraints):
        if cannot_link is not None:
            raise ValueError("pass either a PairwiseConstraints or must_link and cannot_link")
        must_link, cannot_link = must_link
    ml = _index_pairs(must_link, "must_link")
    cl = _index_pairs(cannot_link, "cannot_link")
    pairs = np.concatenate([ml, cl])
    y = np.concatenate([np.ones(len(ml), np.int64), -np.ones(len(cl), np.int64)])
    if X is None:
        return pairs, y
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features); got shape {X.shape}")
    if pairs.size and (pairs.min() < 0 or pairs.max() >= X.shape[0]):
        bad = int(pairs.max() if pairs.max() >= X.shape[0] else pairs.min())
        raise ValueError(f"pairs refer to row {bad} but X has {X.shape[0]} rows")
    return X[pairs], y


def _index_pairs(pairs, name: str) -> np.ndarray:
    if pairs is None:
        return np.zeros((0, 2), dtype=np.int64)
    a = np.asarray(pairs)
    if a.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    if a.ndim != 2 or a.shape[1] != 2:
        raise ValueError(f"{name} must have shape (p, 2); got {a.shape}")
    if a.dtype.kind not in "iu":
        if a.dtype.kind != "f" or not np.all(np.isfinite(a)) or np.any(a != np.round(a)):
            raise ValueError(f"{name} must hold integer row indices; got dtype {a.dtype}")
    a = a.astype(np.int64)
    if a.min() < 0:
        r = int(np.argmin(a.min(axis=1)))
        raise ValueError(
            f"{name} holds the pair {tuple(int(v) for v in a[r])} (row {r}) with a negative "
            "index; pairs are 0-based row indices of X (a negative index does not count "
            "from the end)"
        )
    return a


def from_pairs(pairs, y, X=None, *, n_samples: int | None = None) -> PairwiseConstraints:
    """metric-learn's pairs as lorak's constraints (validated, i < j, duplicates merged).

    Parameters
    ----------
    pairs : array-like of shape (p, 2) (row indices) or (p, 2, n_features) (points)
    y : array-like of shape (p,)
        +1 (similar: must-link) or −1 (dissimilar: cannot-link); metric-learn's
        convention. Any other value raises.
    X : array-like of shape (n_samples, n_features), optional
        Required for pairs of points: each point is matched to the row of X equal to
        it (exact equality, first occurrence); a point that is no row of X raises.
        With index pairs it only sets ``n_samples``.
    n_samples : int, optional
        Number of rows the indices refer to (default: X's rows, else the largest
        index + 1).

    Returns
    -------
    PairwiseConstraints

    Examples
    --------
    >>> from lorak.constraints import from_pairs
    >>> c = from_pairs([[0, 1], [2, 1]], [1, -1])
    >>> c.must_link.tolist(), c.cannot_link.tolist()
    ([[0, 1]], [[1, 2]])
    """
    P = np.asarray(pairs)
    yv = np.asarray(y)
    if P.ndim == 3:
        if X is None:
            raise ValueError(
                "pairs of points (shape (p, 2, n_features)) need X to find their rows: "
                "from_pairs(pairs, y, X=X)"
            )
        if P.shape[1] != 2:
            raise ValueError(f"pairs must have shape (p, 2, n_features); got {P.shape}")
        idx = _point_index(X, P)
    elif P.ndim == 2 or P.size == 0:
        idx = _index_pairs(P.reshape(-1, 2) if P.size == 0 else P, "pairs")
    else:
        raise ValueError(
            f"pairs must have shape (p, 2) (indices) or (p, 2, n_features) (points); got {P.shape}"
        )
    if idx.shape[0] == 0:
        raise ValueError(
            "from_pairs got no pairs (pairs is empty): pass at least one pair of row "
            "indices, shape (p, 2), or of points, shape (p, 2, n_features), with its +1/-1 "
            "label in y"
        )
    if yv.ndim != 1 or yv.shape[0] != idx.shape[0]:
        raise ValueError(f"y must have shape ({idx.shape[0]},), one per pair; got {yv.shape}")
    if yv.dtype.kind == "b":
        values = sorted(set(yv.tolist()))
        raise ValueError(
            f"y must be +1 (similar pair: must-link) or -1 (dissimilar: cannot-link); got "
            f"booleans {values!r} (dtype bool): recode them, e.g. np.where(y, 1, -1)"
        )
    if yv.dtype.kind not in "iuf" or not np.all(np.isin(yv, (1, -1))):
        try:
            bad = [v for v in np.unique(yv).tolist() if v not in (1, -1)]
        except TypeError:  # values numpy cannot sort (mixed objects)
            bad = [v for v in dict.fromkeys(yv.tolist()) if v not in (1, -1)]
        if not bad:  # +1/-1 spelt in another dtype (strings, objects)
            bad = list(dict.fromkeys(yv.tolist()))
        raise ValueError(
            f"y must be +1 (similar pair: must-link) or -1 (dissimilar: cannot-link); got "
            f"{bad[:5]!r} (dtype {yv.dtype})"
        )
    if n_samples is None:
        if X is not None:
            n_samples = int(np.shape(X)[0])
        else:
            n_samples = int(idx.max()) + 1 if idx.size else 0
    return check_constraints(idx[yv == 1], idx[yv == -1], n_samples)


def restrict_constraints(must_link, cannot_link, sample_index, n_samples: int | None = None):
    """The constraints among a subset of rows, renumbered to the subset.

    ``sample_index[r]`` is the id (in the numbering of the pairs) of the subset's row r.
    Pairs with an endpoint outside the subset are dropped; the others are renumbered to
    subset rows (the first row with that id).

    Returns
    -------
    (must_link, cannot_link) : two int64 arrays of shape (·, 2)

    Raises
    ------
    ValueError
        ``sample_index`` is not 1-D integer ids, holds a negative id, or does not
        have ``n_samples`` entries; a pair holds a negative id; or pairs were given and
        the subset dropped every one of them (no pair has both rows in the subset).

    Examples
    --------
    >>> from lorak.constraints import restrict_constraints
    >>> ml, cl = restrict_constraints([[0, 5], [1, 2]], [[5, 7]], [5, 7, 0])
    >>> ml.tolist(), cl.tolist()
    ([[2, 0]], [[0, 1]])
    """
    if isinstance(must_link, PairwiseConstraints):
        must_link, cannot_link = must_link
    ids = np.asarray(sample_index)
    if ids.ndim != 1 or ids.dtype.kind not in "iu":
        raise ValueError(
            f"sample_index must be a 1-D array of integer row ids; got dtype {ids.dtype} "
            f"and shape {ids.shape}"
        )
    if n_samples is not None and ids.shape[0] != n_samples:
        raise ValueError(f"sample_index has {ids.shape[0]} entries, but X has {n_samples} rows")
    if ids.size and ids.min() < 0:
        raise ValueError(f"sample_index holds a negative id ({int(ids.min())})")
    ml = _index_pairs(must_link, "must_link")
    cl = _index_pairs(cannot_link, "cannot_link")
    top = max(int(ids.max()) if ids.size else -1, int(ml.max(initial=-1)), int(cl.max(initial=-1)))
    local = np.full(top + 1, -1, dtype=np.int64)
    local[ids[::-1]] = np.arange(ids.size - 1, -1, -1)  # first occurrence wins

    def keep(p):
        if p.size == 0:
            return p
        q = local[p]
        return q[(q >= 0).all(axis=1)]

    ml_kept, cl_kept = keep(ml), keep(cl)
    given = len(ml) + len(cl)
    if given and len(ml_kept) + len(cl_kept) == 0:
        raise ValueError(
            f"the subset dropped every constraint: none of the {given} pair(s) "
            f"({len(ml)} must-link, {len(cl)} cannot-link) has both of its rows among the "
            f"{ids.size} ids of sample_index (a pair is kept only when both of its rows are "
            "in the subset); check that sample_index holds the ids the pairs use, or use a "
            "larger subset"
        )
    return ml_kept, cl_kept

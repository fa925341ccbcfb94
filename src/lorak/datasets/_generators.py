"""Synthetic benchmark generators with their published definitions.

Definitions, sources and sizes: the user guide, "Benchmark datasets", "The generators".
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "GENERATORS",
    "make_chessboard",
    "make_double_spiral",
    "make_ringnorm",
    "make_twonorm",
    "make_waveform",
]


def _rng(random_state) -> np.random.Generator:
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(int(random_state.randint(0, 2**31 - 1)))
    try:
        return np.random.default_rng(random_state)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            "random_state should be None, an int, a numpy Generator/SeedSequence/"
            f"BitGenerator or a RandomState, found {random_state!r}"
        ) from exc


def _check_int(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} should be an integer >= {minimum}, found {value!r}")
    return int(value)


def _check_nonneg(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value >= 0:
        raise ValueError(f"{name} should be a non-negative number, found {value!r}")
    return float(value)


def _class_counts(n: int, k: int) -> np.ndarray:
    counts = np.full(k, n // k, dtype=np.int64)
    counts[: n % k] += 1
    return counts


def _finish(parts: list[np.ndarray], rng: np.random.Generator, shuffle: bool):
    X = np.concatenate(parts).astype(np.float64, copy=False)
    y = np.concatenate([np.full(len(p), c, dtype=np.int64) for c, p in enumerate(parts)])
    if shuffle:
        perm = rng.permutation(len(y))
        X, y = X[perm], y[perm]
    return np.ascontiguousarray(X), y


def make_twonorm(n_samples=4000, n_features=20, *, random_state=None, shuffle=True):
    """Breiman's *twonorm*: two unit-covariance Gaussians with opposite means.

    Class 0 ~ N(a·1, I), class 1 ~ N(−a·1, I), a = 2/√d (d = 20 in the original).

    Parameters
    ----------
    n_samples : int, default=4000
        Number of rows (the CSI paper's size; the DELVE copy has 7400).
    n_features : int, default=20
        Dimension d.
    random_state : None, int, Generator or RandomState
        Seed or generator.
    shuffle : bool, default=True
        Shuffle the rows; otherwise they come grouped by class.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,), int64 in {0, 1}

    Examples
    --------
    >>> X, y = make_twonorm(10, random_state=0)
    >>> X.shape, sorted(set(y.tolist()))
    ((10, 20), [0, 1])
    """
    n = _check_int("n_samples", n_samples, 1)
    d = _check_int("n_features", n_features, 1)
    rng = _rng(random_state)
    a = 2.0 / np.sqrt(d)
    n0, n1 = _class_counts(n, 2)
    parts = [rng.standard_normal((n0, d)) + a, rng.standard_normal((n1, d)) - a]
    return _finish(parts, rng, shuffle)


def make_ringnorm(n_samples=1000, n_features=20, *, random_state=None, shuffle=True):
    """Breiman's *ringnorm*: a wide centred Gaussian against a narrow shifted one.

    Class 0 ~ N(0, 4I), class 1 ~ N(a·1, I), a = 1/√d (d = 20 in the original).
    Parameters and returns as :func:`~lorak.datasets.make_twonorm`, except that
    ``n_samples`` defaults to 1000.
    """
    n = _check_int("n_samples", n_samples, 1)
    d = _check_int("n_features", n_features, 1)
    rng = _rng(random_state)
    a = 1.0 / np.sqrt(d)
    n0, n1 = _class_counts(n, 2)
    parts = [2.0 * rng.standard_normal((n0, d)), rng.standard_normal((n1, d)) + a]
    return _finish(parts, rng, shuffle)


def _waveform_bases() -> np.ndarray:
    i = np.arange(1, 22, dtype=np.float64)
    h1 = np.maximum(6.0 - np.abs(i - 11.0), 0.0)
    h2 = np.maximum(6.0 - np.abs(i - 15.0), 0.0)  # h1(i - 4)
    h3 = np.maximum(6.0 - np.abs(i - 7.0), 0.0)  # h1(i + 4)
    return np.stack([h1, h2, h3])


def make_waveform(n_samples=2000, *, noise=1.0, random_state=None, shuffle=True):
    """Breiman et al.'s *waveform* (CART book): 21 features, 3 classes.

    Each class mixes two of three triangular base waves with a uniform weight u
    and adds N(0, noise²) to every feature: class 0 = (h1, h2), class 1 = (h1, h3),
    class 2 = (h2, h3), x = u·h_a + (1 − u)·h_b + ε.

    Parameters
    ----------
    n_samples : int, default=2000
        Number of rows (the CSI paper's size; the DELVE copy has 7400, the UCI
        generator's customary test set 5000).
    noise : float, default=1.0
        Standard deviation of the Gaussian noise (1 in the original).
    random_state, shuffle
        As in :func:`~lorak.datasets.make_twonorm`.

    Returns
    -------
    X : ndarray of shape (n_samples, 21)
    y : ndarray of shape (n_samples,), int64 in {0, 1, 2}
    """
    n = _check_int("n_samples", n_samples, 1)
    noise = _check_nonneg("noise", noise)
    rng = _rng(random_state)
    h = _waveform_bases()
    pairs = ((0, 1), (0, 2), (1, 2))
    parts = []
    for (a, b), m in zip(pairs, _class_counts(n, 3), strict=True):
        u = rng.uniform(size=(m, 1))
        parts.append(u * h[a] + (1.0 - u) * h[b] + noise * rng.standard_normal((m, 21)))
    return _finish(parts, rng, shuffle)


def make_chessboard(n_samples=100, *, n_cells=4, random_state=None, shuffle=True):
    """Uniform points on an ``n_cells × n_cells`` chessboard, labelled by cell colour.

    ``y = (floor(x1) + floor(x2)) mod 2`` with points in ``[0, n_cells)²``.

    Parameters
    ----------
    n_samples : int, default=100
        Number of rows (SimpleNPKL's chessboard has 100).
    n_cells : int, default=4
        Cells per side.
    random_state, shuffle
        As in :func:`~lorak.datasets.make_twonorm`.

    Returns
    -------
    X : ndarray of shape (n_samples, 2)
    y : ndarray of shape (n_samples,), int64 in {0, 1}
    """
    n = _check_int("n_samples", n_samples, 1)
    c = _check_int("n_cells", n_cells, 2)
    rng = _rng(random_state)
    ii, jj = np.meshgrid(np.arange(c), np.arange(c), indexing="ij")
    cells = np.column_stack([ii.ravel(), jj.ravel()]).astype(np.float64)
    colour = (ii + jj).ravel() % 2
    parts = []
    for label, m in enumerate(_class_counts(n, 2)):
        own = cells[colour == label]
        pick = rng.integers(0, len(own), size=m)
        parts.append(own[pick] + rng.uniform(size=(m, 2)))
    return _finish(parts, rng, shuffle)


def make_double_spiral(
    n_samples=100, *, noise=0.0, turns=1.5, n_features=2, random_state=None, shuffle=True
):
    """Two interleaved Archimedean spirals.

    Angle θ ∈ [π/2, π/2 + 2π·turns] drawn uniformly along the arc length, radius
    r = θ/θ_max ∈ (0, 1]; class 0 at (r cos θ, r sin θ), class 1 at
    (−r cos θ, −r sin θ). With ``n_features=3`` a third coordinate, the normalised
    angle in [0, 1], turns the spirals into two interleaved conical helices.

    Parameters
    ----------
    n_samples : int, default=100
        Number of rows (SimpleNPKL's double spiral has 100).
    noise : float, default=0.0
        Standard deviation of Gaussian noise added to every coordinate. The arms of
        opposite classes are 1/(2·(turns + 1/4)) apart radially (0.29 for 1.5 turns).
    turns : float, default=1.5
        Number of turns of each spiral.
    n_features : {2, 3}, default=2
        2-D spirals, or the 3-D helices (the paper's set has 3 features).
    random_state, shuffle
        As in :func:`~lorak.datasets.make_twonorm`.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,), int64 in {0, 1}
    """
    n = _check_int("n_samples", n_samples, 1)
    noise = _check_nonneg("noise", noise)
    turns = _check_nonneg("turns", turns)
    if turns == 0:
        raise ValueError(f"turns should be positive, found {turns!r}")
    if n_features not in (2, 3):
        raise ValueError(f"n_features should be 2 or 3, found {n_features!r}")
    rng = _rng(random_state)
    t0 = np.pi / 2
    t1 = t0 + 2 * np.pi * turns
    parts = []
    for sign, m in zip((1.0, -1.0), _class_counts(n, 2), strict=True):
        # arc length of r ∝ θ grows like θ², so θ = sqrt(uniform in [t0², t1²])
        theta = np.sqrt(rng.uniform(t0**2, t1**2, size=m))
        r = theta / t1
        cols = [sign * r * np.cos(theta), sign * r * np.sin(theta)]
        if n_features == 3:
            cols.append((theta - t0) / (t1 - t0))
        pts = np.column_stack(cols)
        if noise:
            pts = pts + noise * rng.standard_normal(pts.shape)
        parts.append(pts)
    return _finish(parts, rng, shuffle)


#: name -> (function, n_features at the defaults, number of classes, default n_samples)
GENERATORS = {
    "twonorm": (make_twonorm, 20, 2, 4000),
    "ringnorm": (make_ringnorm, 20, 2, 1000),
    "waveform": (make_waveform, 21, 3, 2000),
    "chessboard": (make_chessboard, 2, 2, 100),
    "double_spiral": (make_double_spiral, 2, 2, 100),
}

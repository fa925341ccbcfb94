"""Adversarial sweep, graph factors and the semi-supervised models:
``GraphRegularizedFactor`` with every graph kind under translation and scale of X,
degenerate graphs against a dense reference, and wrong-shaped or wrongly typed
arguments to every public method of ``GraphRegularizedFactor``,
``SemiSupervisedFactorClassifier`` and ``SemiSupervisedFactorRegressor``.

Part of the adversarial sweep: the outcome rules are in ``tests/_adversarial.py``,
``tests/test_adversarial.py`` gathers every area's table."""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import make_moons
from sklearn.linear_model import LogisticRegression, Ridge, RidgeClassifier

import lorak
from _adversarial import (
    PYTESTMARK,
    X,
    _close,
    _finite,
    _gram,
    _nys,
    check_case,
    new_table,
    parametrize_cases,
    y,
    y_reg,
    y_semi,
)

pytestmark = PYTESTMARK

CASES, case = new_table()

n, d = X.shape
GRF = lorak.GraphRegularizedFactor
y_reg_semi = np.where(np.arange(n) < 20, y_reg, np.nan)


def _chain(n_rows=n):
    """The path graph 0 – 1 – … – n−1 (symmetric, unit weights)."""
    i = np.arange(n_rows - 1)
    A = sp.coo_matrix((np.ones(n_rows - 1), (i, i + 1)), shape=(n_rows, n_rows))
    return (A + A.T).tocsr()


# --------------------------------------------------------------------------- invariance
# Every graph kind, with a factor whose bandwidth is data-driven (mean pairwise squared
# distance): a shift of X changes nothing, a positive scale changes nothing (every
# width — the factor's, the anchor graph's σ², the k-NN order, the LLE Gram up to its
# scale — follows the data). The deformed kernel transform(X) transform(X)ᵀ is
# compared with the fit on X itself, on training rows and on new rows.

_GRAPHS = {
    "anchor-kernel": {},
    "anchor-lle": {"weights": "lle"},
    "anchor-p2": {"power": 2},
    "anchor-s1": {"n_neighbors": 1, "n_anchors": 12},
    "knn": {"graph": "knn", "n_neighbors": 6},
    "user": {"graph": _chain()},
}
_NEW = np.random.default_rng(7).standard_normal((9, d))
# γ chosen by leave-one-out: two moons with 5 labels per class, where the graph is
# chosen (γ > 0), so that the choice itself is under test
_MOONS, _MOONS_Y = make_moons(80, noise=0.05, random_state=0)
_MOONS_SEMI = np.full(80, -1)
_lab = np.r_[np.flatnonzero(_MOONS_Y == 0)[:5], np.flatnonzero(_MOONS_Y == 1)[:5]]
_MOONS_SEMI[_lab] = _MOONS_Y[_lab]


def _deformed_kernel(kw, a=1.0, c=0.0, auto=False):
    data, new, fit_y = (_MOONS, _MOONS[::7], _MOONS_SEMI) if auto else (X, _NEW, None)
    est = GRF(_nys(n_components=20 if auto else 8), random_state=0, **{"gamma": 1.0, **kw})
    if auto:
        est.set_params(gamma="auto")
    est.fit(a * data + c, fit_y)
    Q = est.transform(a * data + c)
    Qn = est.transform(a * new + c)
    return np.vstack([Q, Qn]) @ Q.T, est


_INV_REF: dict = {}


def _invariant(name, kw, auto, tol):
    def check(res):
        K, est = res
        key = (name, auto)
        if key not in _INV_REF:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _INV_REF[key] = _deformed_kernel(kw, auto=auto)
        K0, ref = _INV_REF[key]
        assert est.gamma_ == ref.gamma_, f"gamma_ {est.gamma_} != {ref.gamma_} at the origin"
        assert not auto or ref.gamma_ > 0, "the graph is not chosen on the moons"
        _close(K, K0, tol * np.abs(K0).max(), "deformed kernel")

    return check


# the input itself holds X + c only to eps·|c|: the kernel follows to about that,
# times the conditioning of the graph and the factor (measured: 1e-10 at c = 1e6,
# 1e-14 under a scale; the tolerances leave a factor of 100)
_SHIFTS = {8.0: 1e-10, 1e4: 1e-9, 1e6: 1e-8, -1e6: 1e-8}
_SCALES = {1e-6: 1e-10, 1e3: 1e-10, 1e100: 1e-10, 1e-100: 1e-10}

for _g, _kw in _GRAPHS.items():
    for _c, _tol in _SHIFTS.items():
        case(
            f"graph-{_g}-shift-{_c:g}",
            lambda kw=_kw, c=_c: _deformed_kernel(kw, c=c),
            check=_invariant(_g, _kw, False, _tol),
        )
    for _a, _tol in _SCALES.items():
        case(
            f"graph-{_g}-scale-{_a:g}",
            lambda kw=_kw, a=_a: _deformed_kernel(kw, a=a),
            check=_invariant(_g, _kw, False, _tol),
        )
    if _g == "user":  # a chain over the rows of X: not a graph of the moons
        continue
    # gamma="auto": the leave-one-out choice of γ and the penalty must not move either
    # (measured: 1e-9 at c = 1e6)
    for _c, _tol in ((1e4, 1e-8), (1e6, 1e-7)):
        case(
            f"graph-{_g}-auto-shift-{_c:g}",
            lambda kw=_kw, c=_c: _deformed_kernel(kw, c=c, auto=True),
            check=_invariant(_g, _kw, True, _tol),
        )
    case(
        f"graph-{_g}-auto-scale-1e3",
        lambda kw=_kw: _deformed_kernel(kw, a=1e3, auto=True),
        check=_invariant(_g, _kw, True, 1e-8),
    )

# a fixed kernel width (gamma=0.5) is not scale-free: only the shift is asserted
_FIXED = lorak.Nystroem(gamma=0.5, n_components=20, random_state=0)
_FIXED_REF: list = []


def _fixed_width(c):
    f = GRF(_FIXED, gamma=1.0, random_state=0).fit(X + c)
    Q = f.transform(X + c)
    return Q @ Q.T


def _same_as_fixed_at_origin(tol):
    def check(K):
        if not _FIXED_REF:
            _FIXED_REF.append(_fixed_width(0.0))
        _close(K, _FIXED_REF[0], tol * np.abs(_FIXED_REF[0]).max(), "deformed kernel")

    return check


# measured 3e-13, 4e-11, 3e-9
for _c, _tol in ((1e4, 1e-10), (1e6, 1e-8), (1e8, 1e-6)):
    case(
        f"graph-fixed-width-shift-{_c:g}",
        lambda c=_c: _fixed_width(c),
        check=_same_as_fixed_at_origin(_tol),
    )


# the semi-supervised models on a graph factor with a fixed γ and a fixed linear head:
# their decision values do not move under a shift or a scale of X
def _model_output(kind, a=1.0, c=0.0):
    factor = GRF(_nys(), gamma=1.0, random_state=0)
    if kind == "classifier":
        est = lorak.SemiSupervisedFactorClassifier(factor, RidgeClassifier(alpha=1.0))
        return est.fit(a * X + c, y_semi).decision_function(a * _NEW + c)
    est = lorak.SemiSupervisedFactorRegressor(factor, Ridge(alpha=1.0))
    return est.fit(a * X + c, y_reg_semi).predict(a * _NEW + c)


def _same_model_output(kind, tol):
    ref = []

    def check(out):
        if not ref:
            ref.append(_model_output(kind))
        _close(out, ref[0], tol * max(1.0, np.abs(ref[0]).max()), f"{kind} output")

    return check


for _kind in ("classifier", "regressor"):  # measured 1e-12, 4e-11; 3e-15
    for _c, _tol in ((1e4, 1e-10), (1e6, 1e-8)):
        case(
            f"ssl-{_kind}-shift-{_c:g}",
            lambda k=_kind, c=_c: _model_output(k, c=c),
            check=_same_model_output(_kind, _tol),
        )
    case(
        f"ssl-{_kind}-scale-1e3",
        lambda k=_kind: _model_output(k, a=1e3),
        check=_same_model_output(_kind, 1e-10),
    )


# --------------------------------------------------------------------------- degenerate graphs
# A given adjacency A: the deformed kernel must be the point-cloud kernel of the
# normalized Laplacian L = I − D^{-1/2} A D^{-1/2}, computed densely here:
# G (I + γ GᵀLG)⁻¹ Gᵀ with γ = gamma · tr(GᵀG)/tr(GᵀLG).


def _dense_reference(A, gamma=1.0, power=1):
    def call():
        est = GRF(_nys(), graph=A, gamma=gamma, power=power, random_state=0).fit(X)
        return est, est.transform(X)

    def check(res):
        est, Q = res
        G = np.asarray(est.factor_.transform(X), dtype=np.float64)
        Ad = A.toarray().astype(np.float64) if sp.issparse(A) else np.asarray(A, float)
        deg = Ad.sum(axis=1)
        L = np.eye(n) - Ad / np.sqrt(np.outer(deg, deg))
        Lp = L if power == 1 else L @ L
        H = G.T @ Lp @ G
        g = gamma * np.trace(G.T @ G) / np.trace(H)
        K = G @ np.linalg.solve(np.eye(G.shape[1]) + g * H, G.T)
        _close(_gram(Q), K, 1e-8 * np.abs(K).max(), "deformed kernel")

    return call, check


def _two_cliques():
    A = np.zeros((n, n))
    A[:30, :30] = 1.0
    A[30:, 30:] = 1.0
    np.fill_diagonal(A, 0.0)
    return sp.csr_matrix(A)


def _matching():
    i = np.arange(0, n, 2)
    A = sp.coo_matrix((np.ones(i.size), (i, i + 1)), shape=(n, n))
    return (A + A.T).tocsr()


_DEGENERATE = {
    "complete": sp.csr_matrix(np.ones((n, n)) - np.eye(n)),
    "complete-with-loops": sp.csr_matrix(np.ones((n, n))),
    "one-edge-per-row": _matching(),
    "two-components": _two_cliques(),
    "chain-p2": _chain(),
    "weighted": sp.csr_matrix(
        _chain().toarray() * np.linspace(0.1, 10.0, n)[None, :] * np.linspace(0.1, 10.0, n)[:, None]
    ),
    "bool": _chain().astype(bool),
    "int": _chain().astype(np.int64),
    "csc": _chain().tocsc(),
    "coo": _chain().tocoo(),
}
for _name, _A in _DEGENERATE.items():
    _call, _check = _dense_reference(_A, power=2 if _name == "chain-p2" else 1)
    case(f"graph-degenerate-{_name}", _call, check=_check)


def _plain_factor_with_warning(kw):
    def call():
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            est = GRF(_nys(), gamma=1.0, random_state=0, **kw).fit(X)
        return est, [str(m.message) for m in w]

    def check(res):
        est, msgs = res
        assert est.laplacian_weight_ == 0.0, f"laplacian_weight_ = {est.laplacian_weight_:g}"
        _close(est.transform(X), est.factor_.transform(X), 0.0, "transform")
        assert any("Laplacian is zero" in m for m in msgs), f"no warning: {msgs}"

    return call, check


for _name, _kw in {
    "self-loops": {"graph": sp.identity(n, format="csr")},
    "self-loops-weighted": {"graph": sp.diags(np.linspace(1.0, 5.0, n), format="csr")},
    "own-anchor": {"n_anchors": n, "n_neighbors": 1},
}.items():
    _call, _check = _plain_factor_with_warning(_kw)
    case(f"graph-degenerate-{_name}", _call, check=_check)

for _name, (_A, _pat) in {
    "zero": (sp.csr_matrix((n, n)), r"graph.*no edge"),
    "isolated-row": (_chain(n).tolil(), r"graph.*no edge"),
    "negative": (-_chain(), r"graph.*(≥ 0|negative)"),
    "nan": (sp.csr_matrix(np.where(_chain().toarray() > 0, np.nan, 0.0)), r"graph.*finite"),
    "asymmetric": (sp.triu(_chain(), format="csr") + sp.identity(n), r"graph.*symmetric"),
    "shape": (_chain(n - 1), r"graph.*n × n"),
    "dense-array": (_chain().toarray(), r"graph must be"),
    "list": (_chain().toarray().tolist(), r"graph must be"),
    "complex": (_chain() * (1 + 1j), r"graph.*real"),
    "imaginary": (_chain() * 1j, r"graph.*real"),
    "string": ("ring", r"graph"),
}.items():
    if _name == "isolated-row":
        _A[0, 1] = _A[1, 0] = 0.0
        _A = _A.tocsr()
        _A.eliminate_zeros()
    case(
        f"graph-degenerate-{_name}",
        lambda A=_A: GRF(_nys(), graph=A, gamma=1.0, random_state=0).fit(X),
        error=_pat,
    )


# the anchor graph at its limits: one anchor (every row joined to it: A = 11ᵀ/n, the
# complete graph with self-loops), and anchors = rows with two neighbours each
def _one_anchor():
    est = GRF(_nys(), n_anchors=1, n_neighbors=1, gamma=1.0, random_state=0).fit(X)
    return est, est.transform(X)


def _one_anchor_check(res):
    est, Q = res
    G = np.asarray(est.factor_.transform(X), dtype=np.float64)
    L = np.eye(n) - np.ones((n, n)) / n
    H = G.T @ L @ G
    g = np.trace(G.T @ G) / np.trace(H)
    K = G @ np.linalg.solve(np.eye(G.shape[1]) + g * H, G.T)
    _close(_gram(Q), K, 1e-8 * np.abs(K).max(), "deformed kernel")


case("graph-degenerate-one-anchor", _one_anchor, check=_one_anchor_check)


def _in_range(res):
    est, Q = res
    Q = _finite(Q)
    ev = np.linalg.eigvalsh(est.components_ @ est.components_.T)
    assert ev.min() > 0 and ev.max() <= 1 + 1e-10, f"R Rᵀ eigenvalues in [{ev.min()}, {ev.max()}]"
    G = est.factor_.transform(X)
    assert np.all(np.einsum("ij,ij->i", Q, Q) <= np.einsum("ij,ij->i", G, G) + 1e-10)


for _name, _kw in {
    "anchors-are-rows": {"n_anchors": n, "n_neighbors": 2},
    "lle-anchors-are-rows": {"n_anchors": n, "n_neighbors": 2, "weights": "lle"},
    "lle-one-neighbour": {"n_neighbors": 1, "weights": "lle"},
    "knn-complete": {"graph": "knn", "n_neighbors": n - 1},
    "knn-one": {"graph": "knn", "n_neighbors": 1},
}.items():
    case(
        f"graph-degenerate-{_name}",
        lambda kw=_kw: (lambda e: (e, e.transform(X)))(
            GRF(_nys(), gamma=1.0, random_state=0, **kw).fit(X)
        ),
        check=_in_range,
    )


# duplicated rows: each row's nearest neighbour is its twin at distance 0; the k-NN
# graph must join the twins, never a row to itself
def _twins():
    X2 = np.repeat(X[:30], 2, axis=0)
    A = lorak.learn._graph_factor.knn_adjacency(X2, 1, method="exact")
    return A


def _twins_check(A):
    A = A.toarray()
    assert np.all(np.diag(A) == 0), "a row is joined to itself"
    i = np.arange(0, 60, 2)
    assert np.all(A[i, i + 1] > 0), "twins not joined"


case("graph-degenerate-knn-twins", _twins, check=_twins_check)


# --------------------------------------------------------------------------- arguments
_FITTED: dict = {}


def _fitted(kind):
    if kind not in _FITTED:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if kind == "grf":
                _FITTED[kind] = GRF(_nys(), gamma=1.0, random_state=0).fit(X)
            elif kind == "clf":
                _FITTED[kind] = lorak.SemiSupervisedFactorClassifier(_nys()).fit(X, y_semi)
            elif kind == "clf-proba":
                _FITTED[kind] = lorak.SemiSupervisedFactorClassifier(
                    _nys(), LogisticRegression()
                ).fit(X, y_semi)
            else:
                _FITTED[kind] = lorak.SemiSupervisedFactorRegressor(_nys()).fit(X, y_reg)
    return _FITTED[kind]


# rows of the wrong shape or type, given to every method that takes X
_BAD_X = {
    "1d": (X[:, 0], r"(2D|2-d|two-dimensional|Reshape|1D)"),
    "3d": (X[:, :, None], r"(dim|3|2D)"),
    "features": (X[:, :3], r"features"),
    "strings": (np.full((5, d), "a"), r"(string|numeric|float|convert)"),
    "complex": (X + 1j, r"complex"),
    "empty": (np.empty((0, d)), r"(0 sample|empty|minimum)"),
    "none": (None, r"(None|array|Expected)"),
    "object": (
        np.array([[1.0, None, 2.0, 3.0, 4.0]], dtype=object),
        r"(None|float|convert|nan|NaN|number)",
    ),
    "nan": (np.where(np.arange(n * d).reshape(n, d) == 3, np.nan, X), r"(nan|infinity)"),
    "scalar": (3.0, r"(2D|scalar|array)"),
}

_ROW_METHODS = {
    "grf": ("transform",),
    "clf": ("predict", "decision_function"),
    "clf-proba": ("predict_proba",),
    "reg": ("predict",),
}
for _kind, _methods in _ROW_METHODS.items():
    for _m in _methods:
        for _bx, (_Xb, _pat) in _BAD_X.items():
            case(
                f"args-{_kind}-{_m}-X-{_bx}",
                lambda k=_kind, m=_m, Xb=_Xb: getattr(_fitted(k), m)(Xb),
                error=r"\bX\b.*" + _pat if _bx not in ("none", "scalar") else _pat,
            )
for _bx, (_Xb, _pat) in _BAD_X.items():
    case(
        f"args-grf-transform_product-X-{_bx}",
        lambda Xb=_Xb: _fitted("grf").transform_product(Xb, np.ones((8, 1))),
        error=_pat,
    )

_BAD_M = {
    "rows": (np.ones((3, 2)), r"M must have 8 rows"),
    "1d": (np.ones(8), r"M must have 8 rows"),
    "3d": (np.ones((8, 2, 2)), r"M must have 8 rows"),
    "scalar": (2.0, r"M must have 8 rows"),
    "strings": (np.full((8, 2), "a"), r"M must be .*real"),
    "complex": (np.ones((8, 2)) * 1j, r"M must be .*real"),
    "ragged": ([[1.0, 2.0], [3.0]], r"M must be"),
    "none": (None, r"M must be"),
}
for _bm, (_M, _pat) in _BAD_M.items():
    for _kind in ("grf", "nystroem"):
        case(
            f"args-{_kind}-transform_product-M-{_bm}",
            lambda M=_M, k=_kind: (
                _fitted("grf") if k == "grf" else _fitted("grf").factor_
            ).transform_product(X, M),
            error=_pat,
        )


def _product_equals_transform(kind):
    def call():
        est = _fitted("grf") if kind == "grf" else _fitted("grf").factor_
        M = np.arange(16.0).reshape(8, 2)
        return est.transform_product(X, M), est.transform(X) @ M

    def check(res):
        got, ref = res
        _close(got, ref, 1e-10 * np.abs(ref).max(), "transform_product")

    return call, check


for _kind in ("grf", "nystroem"):
    _call, _check = _product_equals_transform(_kind)
    case(f"args-{_kind}-transform_product-ok", _call, check=_check)
case(
    "args-grf-transform_product-sparse-M",
    lambda: _fitted("grf").transform_product(X, sp.csr_matrix(np.eye(8))),
    check=lambda out: _close(out, _fitted("grf").transform(X), 1e-10, "transform_product"),
)

# fit: X and y of the wrong shape or type
_FIT = {
    "grf": (lambda Xb, yb: GRF(_nys(), random_state=0).fit(Xb, yb), y_semi),
    "clf": (lambda Xb, yb: lorak.SemiSupervisedFactorClassifier(_nys()).fit(Xb, yb), y_semi),
    "reg": (lambda Xb, yb: lorak.SemiSupervisedFactorRegressor(_nys()).fit(Xb, yb), y_reg),
}
for _kind, (_fit, _yok) in _FIT.items():
    for _bx in ("1d", "3d", "strings", "complex", "empty", "none", "object", "nan", "scalar"):
        _Xb, _pat = _BAD_X[_bx]
        case(
            f"args-{_kind}-fit-X-{_bx}",
            lambda f=_fit, Xb=_Xb, yb=_yok: f(
                Xb, yb if Xb is None or np.ndim(Xb) != 2 or len(Xb) == n else yb[: len(Xb)]
            ),
            error=r"\bX\b.*" + _pat if _bx not in ("none", "scalar") else _pat,
        )
    _ys = {
        "short": (_yok[:-1], r"\by\b.*(entries|rows|samples|length|inconsistent)"),
        "2d": (np.c_[_yok, _yok], r"\by\b.*(1d|1-d|column|shape|2d|dimension)"),
        "complex": (_yok + 1j, r"\by\b.*complex"),
        "strings-2d": (np.full((n, 1, 2), "a"), r"\by\b"),
        "scalar": (1.0, r"\by\b"),
        "dict": ({"a": 1}, r"\by\b"),
    }
    if _kind != "grf":
        _ys["none"] = (None, r"\by\b.*None")
    for _by, (_yb, _pat) in _ys.items():
        case(f"args-{_kind}-fit-y-{_by}", lambda f=_fit, yb=_yb: f(X, yb), error=_pat)

# score: X and y of the wrong shape or type
for _kind, _yok in (("clf", y), ("reg", y_reg)):
    case(
        f"args-{_kind}-score-y-short",
        lambda k=_kind, yb=_yok: _fitted(k).score(X, yb[:-1]),
        error=r"(\by\b|samples|inconsistent|length)",
    )
    case(
        f"args-{_kind}-score-X-features",
        lambda k=_kind, yb=_yok: _fitted(k).score(X[:, :3], yb),
        error=r"\bX\b.*features",
    )
    case(
        f"args-{_kind}-score-y-2d",
        lambda k=_kind, yb=_yok: _fitted(k).score(X, np.c_[yb, yb, yb]),
        error=r"(\by\b|multi|shape|column|continuous|output|dimension|mix)",
    )
    case(
        f"args-{_kind}-score-ok",
        lambda k=_kind, yb=_yok: _fitted(k).score(X, yb),
        check=lambda s: _finite(np.atleast_1d(s)),
    )

# unfitted models: the scikit-learn NotFittedError is a ValueError subclass that names
# the estimator and says "fit"
for _kind, _make, _ms in (
    ("grf", lambda: GRF(), ("transform",)),
    ("clf", lambda: lorak.SemiSupervisedFactorClassifier(), ("predict", "decision_function")),
    ("reg", lambda: lorak.SemiSupervisedFactorRegressor(), ("predict",)),
):
    for _m in _ms:
        case(
            f"args-{_kind}-{_m}-unfitted",
            lambda mk=_make, m=_m: getattr(mk(), m)(X),
            error=r"not fitted",
        )
case(
    "args-grf-transform_product-unfitted",
    lambda: GRF().transform_product(X, np.ones((8, 1))),
    error=r"not fitted",
)

# parameters of the wrong type or value
for _p, _v, _pat in (
    ("graph", 3, r"graph"),
    ("graph", "ring", r"graph"),
    ("n_anchors", 0, r"n_anchors"),
    ("n_anchors", 2.5, r"n_anchors"),
    ("n_anchors", "many", r"n_anchors"),
    ("n_anchors", n + 1, r"n_anchors"),
    ("n_neighbors", 0, r"n_neighbors"),
    ("n_neighbors", 1.5, r"n_neighbors"),
    ("n_neighbors", "x", r"n_neighbors"),
    ("n_neighbors", True, r"n_neighbors"),
    ("weights", "uniform", r"weights"),
    ("weights", None, r"weights"),
    ("power", 3, r"power"),
    ("power", 1.5, r"power"),
    ("power", True, r"power"),
    ("gamma", -1.0, r"gamma"),
    ("gamma", float("nan"), r"gamma"),
    ("gamma", float("inf"), r"gamma"),
    ("gamma", "big", r"gamma"),
    ("gamma", None, r"gamma"),
    ("gamma", [1.0], r"gamma"),
    ("target", "binary", r"target"),
    ("selection", "median", r"selection"),
    ("knn_method", "annoy", r"knn_method"),
    ("factor", "nystroem", r"factor"),
    ("factor", lorak.Nystroem, r"factor"),
    ("factor", 3, r"factor"),
    ("factor", Ridge(), r"factor"),
):
    _kw = {_p: _v}
    case(
        f"args-grf-param-{_p}-{_v!r}"[:80],
        lambda kw=_kw: GRF(**{"random_state": 0, **kw}).fit(X, y_semi),
        error=_pat,
    )
case(
    "args-grf-param-knn-n_neighbors-n",
    lambda: GRF(_nys(), graph="knn", n_neighbors=n, gamma=1.0).fit(X),
    error=r"n_neighbors",
)
case(
    "args-grf-param-anchor-n_neighbors-over-anchors",
    lambda: GRF(_nys(), n_anchors=4, n_neighbors=6, gamma=1.0).fit(X),
    error=r"n_neighbors",
)

for _cls, _yb in (
    (lorak.SemiSupervisedFactorClassifier, y_semi),
    (lorak.SemiSupervisedFactorRegressor, y_reg),
):
    _short = _cls.__name__.replace("SemiSupervisedFactor", "").lower()
    for _p, _v, _pat in (
        ("feature_scale", float("inf"), r"feature_scale"),
        ("feature_scale", float("nan"), r"feature_scale"),
        ("feature_scale", -1.0, r"feature_scale"),
        ("feature_scale", 0, r"feature_scale"),
        ("feature_scale", "unit", r"feature_scale"),
        ("feature_scale", True, r"feature_scale"),
        ("factor", "graph", r"factor"),
        ("factor", lorak.Nystroem, r"factor"),
        ("factor", Ridge(), r"factor"),
        (
            "classifier" if _short == "classifier" else "regressor",
            "ridge",
            r"(classifier|regressor)",
        ),
        (
            "classifier" if _short == "classifier" else "regressor",
            RidgeClassifier if _short == "classifier" else Ridge,
            r"(classifier|regressor)",
        ),
    ):
        case(
            f"args-{_short}-param-{_p}-{_v!r}"[:80],
            lambda c=_cls, kw={_p: _v}, yb=_yb: c(**{"factor": _nys(), **kw}).fit(X, yb),
            error=_pat,
        )


# --------------------------------------------------------------------------- the test


@parametrize_cases(CASES)
def test_case(c):
    check_case(c)

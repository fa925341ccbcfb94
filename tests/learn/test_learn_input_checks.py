"""Input checks of lorak.learn's generalized Nyström, kernel-combination and CSI entries
(issue 47, cause 5 and its family): bad input gives a ValueError or TypeError that names
the parameter, not an IndexError, "SVD did not converge", a broadcasting message or a
silent answer."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lorak.learn as L
from lorak.kernels import Gaussian, KernelBank
from lorak.learn import _csi as C
from lorak.learn import _gen_nystrom as G
from lorak.learn import _kernel_combination as KC

RNG = np.random.default_rng(0)
N_L, N_M = 24, 8
X = RNG.standard_normal((N_L, 3))
X[:, 0] += 2.0 * (np.arange(N_L) % 2)
Z = X[:N_M].copy()
K1, K2 = Gaussian(bandwidth=2.0), Gaussian(bandwidth=0.7)
EL, W = K1(X, Z), K1(Z, Z)
Y = np.arange(N_L) % 2
YR = X[:, 0] + 0.1 * X[:, 1]
KI = L.ideal_kernel(Y, centered=True)
ELS = [EL, EL[:, :6].copy(), EL[:, :5].copy()]  # a prior's rows at three t
MELS, MWS = [EL, K2(X, Z)], [W, K2(Z, Z)]  # two kernels on shared landmarks
YF = np.eye(2)[Y] - 0.5
KS = [K1(X, X), K2(X, X)]
KDIAG = K1(X, X)
YCSI = np.eye(2)[Y]


def _with(A, index, value):
    A = np.array(A, dtype=float, copy=True)
    A[index] = value
    return A


def _column(i):
    return KDIAG[:, i]


# ------------------------------------------------------------ cv_select_prior_gamma


def _prior_gamma(**kw):
    args = dict(Els=ELS, y=Y, ts=[0.0, 1.0, 2.0], lam_grid=[0.1, 10.0], rng=0)
    args.update(kw)
    return G.cv_select_prior_gamma(**args)


def test_identical_blocks_tie_to_the_smallest_t():
    """The documented rule: ties to the smaller t (the weaker graph)."""
    sel = _prior_gamma(Els=[EL, EL, EL])
    assert sel.t == 0.0 and sel.index == 0


def test_a_descending_ts_is_refused_not_read_as_ascending():
    """ts=[2, 1, 0] with identical blocks silently picked t = 2, against the rule."""
    with pytest.raises(ValueError, match=r"ts must be strictly increasing.*\[2\.0, 1\.0, 0\.0\]"):
        _prior_gamma(Els=[EL, EL, EL], ts=[2, 1, 0])


@pytest.mark.parametrize(
    ("ts", "match"),
    [
        ([0.0, 1.0, 1.0], "ts must be strictly increasing"),
        ([-1.0, 0.0, 1.0], "ts must hold numbers >= 0"),
        ([0.0, np.nan, 1.0], "ts must not hold NaN"),
        ([0.0, 1.0, np.inf], "ts must not hold NaN or infinity"),
        ([], "ts is empty"),
        ([[0.0, 1.0, 2.0]], "ts must be a 1-D sequence"),
        ([0.0, 1.0], "Els holds 3 blocks for 2 values in ts"),
    ],
)
def test_bad_ts_are_named(ts, match):
    with pytest.raises(ValueError, match=match):
        _prior_gamma(ts=ts)
    with pytest.raises(TypeError, match="ts must be a sequence of numbers"):
        _prior_gamma(ts=["a", "b", "c"])


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"y": Y[:-1]}, "y has 23 entries, but Els.0. has 24 rows"),
        ({"y": np.r_[Y, 0]}, "y has 25 entries"),
        ({"y": np.c_[Y, Y]}, "y must be 1-D"),
        ({"y": np.zeros(N_L, int)}, "y has one class"),
        ({"y": _with(Y, 3, np.nan)}, "y holds NaN"),
        ({"Els": [_with(EL, (0, 0), np.nan), *ELS[1:]]}, r"Els\[0\] holds NaN or infinity"),
        ({"Els": [EL, EL[:-1], EL]}, r"Els\[1\] has 23 rows but Els\[0\] has 24"),
        ({"Els": [EL.ravel(), *ELS[1:]]}, r"Els\[0\] must be a 2-D array"),
        ({"lam_grid": [np.nan, 1.0]}, "lam_grid must not hold NaN"),
        ({"lam_grid": [-1.0]}, "lam_grid must hold numbers > 0"),
        ({"C_grid": [0.0]}, "C_grid must hold numbers > 0"),
        ({"n_splits": 1}, "n_splits must be >= 2"),
        ({"max_iter": 0}, "max_iter must be >= 1"),
        ({"path_tol": np.nan}, "path_tol must be > 0"),
        ({"rtol": 2.0}, "rtol must be a number in"),
        ({"target": "ranking"}, "unknown target 'ranking'"),
        ({"solver": "newton"}, "unknown solver 'newton'"),
    ],
)
def test_cv_select_prior_gamma_names_the_bad_input(kw, match):
    """A short y gave IndexError, NaN in a block "SVD did not converge"."""
    with pytest.raises(ValueError, match=match):
        _prior_gamma(**kw)


def test_a_response_with_nan_is_named():
    with pytest.raises(ValueError, match="y holds NaN or infinity"):
        _prior_gamma(y=_with(YR, 2, np.nan), target="regression")


# ------------------------------------------------------------ the other entries

CASES = [
    # cv_select_lambda
    (G.cv_select_lambda, dict(El=EL, W=W, y=Y[:-1], lam_grid=[1.0], rng=0), "y has 23 entries"),
    (G.cv_select_lambda, dict(El=_with(EL, (1, 1), np.nan), W=W, y=Y, lam_grid=[1.0]), "El holds"),
    (G.cv_select_lambda, dict(El=EL, W=_with(W, (1, 1), np.inf), y=Y, lam_grid=[1.0]), "W holds"),
    (G.cv_select_lambda, dict(El=EL, W=W[:, :-1], y=Y, lam_grid=[1.0]), r"W must be 8 × 8"),
    (G.cv_select_lambda, dict(El=EL, W=W, y=Y, lam_grid=[1.0], n_splits=2.5), "n_splits must be"),
    # the fits
    (L.fit_generalized_nystroem, dict(El=EL, W=W, K=KI[:-1, :-1], y=Y), "K must be 24 × 24"),
    (L.fit_generalized_nystroem, dict(El=EL, W=W, K=KI, y=Y[:-1]), "y has 23 entries"),
    (L.fit_generalized_nystroem, dict(El=EL, W=W, K=KI, y=Y, lam="best"), "lam must be 'auto'"),
    (L.fit_generalized_nystroem, dict(El=EL, W=W, K=KI, y=Y, tol=-1.0), "tol must be > 0"),
    (L.fit_generalized_nystroem, dict(El=EL, W=W, K=KI, y=Y, target="x"), "unknown target"),
    (
        L.fit_generalized_nystroem,
        dict(El=EL, W=W, K=KI, mask=_with(KI, (0, 0), np.nan)),
        "mask holds NaN",
    ),
    (
        L.fit_generalized_nystroem,
        dict(El=ELS, W=None, K=KI, y=Y, prior_gammas=[0.0, 1.0, 2.0], lam="best"),
        "lam must be 'auto'",
    ),
    (
        L.fit_generalized_nystroem,
        dict(El=ELS, W=None, K=KI[:-1, :-1], y=Y, prior_gammas=[0.0, 1.0, 2.0]),
        "K must be 24 × 24",
    ),
    (L.alignment_lambda_path, dict(El=EL[:0], W=W, K=KI), "El is empty"),
    (L.alignment_lambda_path, dict(El=EL, W=W, K=KI, lam_grid=[np.inf]), "lam_grid must not"),
    (L.alignment_lambda_path, dict(El=EL, W=W, K=KI, max_iter=2.5), "max_iter must be an integer"),
    (G.prior_fit, dict(El=EL, W=_with(W, (0, 1), np.nan), K=KI), "W holds NaN"),
    (G.cv_select_and_solve, dict(El=EL, W=W, K=KI, y=Y, lam="best"), "lam must be 'auto'"),
    (L.closed_form, dict(El=EL, K=KI, S0=W, lam=np.nan), "lam must be > 0"),
    (L.closed_form, dict(El=EL, K=KI, S0=W[:-1, :-1], lam=1.0), "S0 must be 8 × 8"),
    (L.pinv_psd, dict(W=W[:, :-1]), "W must be a square matrix"),
    (L.pinv_psd, dict(W=_with(W, (2, 2), np.nan)), "W holds NaN"),
    (L.psd_factor, dict(S=W, metric=W[:-1, :-1]), "metric must be 8 × 8"),
    (L.psd_factor, dict(S=W, rtol=-1.0), "rtol must be"),
    # targets
    (G.must_link_target, dict(groups=np.c_[Y, Y]), "groups must be a non-empty 1-D"),
    (G.must_link_target, dict(groups=_with(Y, 0, np.nan)), "groups holds NaN"),
    (G.regression_target, dict(y=np.c_[YR, YR]), "y must be 1-D"),
    (G.regression_target_factor, dict(y=np.ones(N_L)), "y: the labeled responses are constant"),
    (G.cv_feasible, dict(y=Y[:0]), "y must be a non-empty 1-D"),
    (
        G.cv_criterion,
        dict(criterion="best", lam="auto", y=Y, target="classification", owner="t"),
        "unknown criterion",
    ),
    (
        G.score_ridge_candidates,
        dict(Q=EL, y=YR, fold_of=np.arange(N_L) % 3, k=5, alphas=(1.0,)),
        "fold_of must hold every fold index",
    ),
    (
        G.score_ridge_candidates,
        dict(Q=EL[:-1], y=YR, fold_of=np.arange(N_L) % 3, k=3, alphas=(1.0,)),
        "Q must be 24 × any",
    ),
    # several kernels
    (
        G.mk_cv_select_lambda,
        dict(Els=[_with(EL, 0, np.nan), MELS[1]], Ws=MWS, y=Y, lam_grid=[1.0]),
        r"Els\[0\] holds NaN",
    ),
    (G.mk_cv_select_lambda, dict(Els=MELS, Ws=MWS, y=Y[:-1], lam_grid=[1.0]), "y has 23 entries"),
    (
        G.mk_alignment_lambda_path,
        dict(Els=MELS, Ws=[MWS[0], _with(MWS[1], 0, np.inf)], Y=YF),
        r"Ws\[1\] holds NaN or infinity",
    ),
    (G.mk_alignment_lambda_path, dict(Els=MELS, Ws=MWS, Y=YF[:-1]), "Y must be 24 × any"),
    (
        L.fit_mk_generalized_nystroem,
        dict(Els=MELS, Ws=MWS[:1], Y=YF, y=Y),
        "Els holds 2 blocks but Ws 1",
    ),
    # kernel combinations
    (
        KC.alignment_statistics_from_factors,
        dict(factors=[EL], y=None, centered=True),
        "y is required",
    ),
    (
        KC.alignment_statistics_from_factors,
        dict(factors=[EL], y=Y, centered="yes"),
        "centered must be True or False",
    ),
    (
        KC.alignment_statistics_from_kernels,
        dict(kernels=[_with(KS[0], 0, np.nan)], y=Y, centered=True),
        r"kernels\[0\] holds NaN",
    ),
    (
        KC.combination_weights,
        dict(weighting="uniform", stats=None, n_kernels=0),
        "n_kernels must be >= 1",
    ),
    (KC.combination_weights, dict(weighting="alignment", stats=None, n_kernels=2), "needs stats"),
    (
        L.fit_glmkl,
        dict(
            Ks=[KS[0][:-1, :-1], KS[1]],
            targets=[np.where(Y == 1, 1, -1)],
            C=1.0,
            max_iter=5,
            tol=1e-3,
        ),
        r"Ks\[1\] must be 23 × 23",
    ),
    (
        L.fit_glmkl,
        dict(Ks=KS, targets=[np.ones(N_L - 1)], C=1.0, max_iter=5, tol=1e-3),
        r"targets\[0\] must be 24",
    ),
    (
        L.fit_glmkl,
        dict(Ks=KS, targets=[np.where(Y == 1, 1, -1)], C=1.0, max_iter=0, tol=1e-3),
        "max_iter must be >= 1",
    ),
    (
        L.fit_glmkl,
        dict(Ks=[], targets=[np.where(Y == 1, 1, -1)], C=1.0, max_iter=5, tol=1e-3),
        "Ks is empty",
    ),
    # CSI
    (
        L.csi,
        dict(diag=np.diag(KDIAG)[:-1], column=_column, Y=YCSI, max_rank=5),
        "Y must be .* with n = 23 rows",
    ),
    (
        L.csi,
        dict(diag=np.diag(KDIAG), column=_column, Y=YCSI, max_rank=5, lookahead=-1),
        "lookahead must be >= 0",
    ),
    (
        L.csi,
        dict(diag=np.diag(KDIAG), column=_column, Y=YCSI, max_rank=5, kappa=2.0),
        r"kappa must be in \[0, 1\]",
    ),
    (
        L.csi,
        dict(diag=np.diag(KDIAG), column=_column, Y=YCSI, max_rank=5, labeled=np.zeros(N_L, bool)),
        "labeled marks no row",
    ),
    (
        L.csi,
        dict(diag=np.diag(KDIAG), column=lambda i: np.full(N_L, np.nan), Y=YCSI, max_rank=5),
        r"column\(\d+\) returned NaN",
    ),
    (
        L.fit_csi,
        dict(
            diag=np.diag(KDIAG),
            column=_column,
            Y=YCSI,
            n_components=5,
            labeled=np.ones(N_L - 1, bool),
        ),
        "labeled must be a boolean mask of the 24 rows",
    ),
    (
        L.fit_csi,
        dict(diag=np.diag(KDIAG), column=_column, Y=YCSI, n_components=np.nan),
        "n_components must be an integer",
    ),
    (
        L.fit_csi,
        dict(diag=np.diag(KDIAG), column=_column, Y=YCSI, n_components=5, kappa="x"),
        "kappa must be a number",
    ),
]


@pytest.mark.parametrize(("fn", "kw", "match"), CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_learn_entries_name_their_bad_input(fn, kw, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises((ValueError, TypeError), match=match):
            fn(**kw)


def test_kernel_combination_checks_its_rows_and_bank():
    bank = KernelBank.gaussian(factors=[0.5, 2.0]).resolve(X, np.random.default_rng(0))
    kw = dict(weighting="alignment", rows=np.arange(N_L), y=Y)
    with pytest.raises(TypeError, match=r"bank must be a resolved lorak\.kernels\.KernelBank"):
        L.fit_kernel_combination(None, X, Z, **kw)
    with pytest.raises(ValueError, match="rows must index the 24 rows of X"):
        L.fit_kernel_combination(bank, X, Z, **{**kw, "rows": np.arange(N_L) + 5})
    with pytest.raises(ValueError, match="rows must be a non-empty 1-D array of row indices"):
        L.fit_kernel_combination(bank, X, Z, **{**kw, "rows": np.arange(N_L) + 0.5})
    with pytest.raises(ValueError, match="y has 23 entries, but rows have 24"):
        L.fit_kernel_combination(bank, X, Z, **{**kw, "y": Y[:-1]})
    with pytest.raises(ValueError, match="landmarks holds NaN"):
        L.fit_kernel_combination(bank, X, _with(Z, 0, np.nan), **kw)
    with pytest.raises(ValueError, match="rtol must be"):
        L.fit_kernel_combination(bank, X, Z, **{**kw, "rtol": 2.0})


def test_csi_q_checks_g_r_and_labeled():
    res = L.csi(np.diag(KDIAG).copy(), _column, YCSI, 5)
    with pytest.raises(ValueError, match="G holds NaN"):
        C.csi_q(_with(res.G, 0, np.nan), res.R)
    with pytest.raises(ValueError, match="R must be square with at least"):
        C.csi_q(res.G, res.R[:2, :2])
    with pytest.raises(ValueError, match="labeled must be a boolean mask of G's 24 rows"):
        C.csi_q(res.G, res.R, labeled=np.ones(N_L - 1, bool))


def test_valid_input_is_read_as_before():
    """The checks read what they check as the fits did: float64 copies of the same
    values, 1-D responses as an (l, 1) column, a 1-D Y as one target."""
    fit = L.fit_generalized_nystroem(EL.tolist(), W, KI, y=list(Y), rng=0)
    ref = L.fit_generalized_nystroem(EL, W, KI, y=Y, rng=0)
    np.testing.assert_array_equal(fit.S, ref.S)
    np.testing.assert_array_equal(
        G.regression_target_factor(YR[:, None]), G.regression_target_factor(YR)
    )
    a = L.csi(np.diag(KDIAG).copy(), _column, YR, 5)
    b = L.csi(np.diag(KDIAG).copy(), _column, YR[:, None], 5)
    np.testing.assert_array_equal(a.pivots, b.pivots)

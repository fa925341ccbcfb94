"""Adversarial sweep, persistence: saved files edited (NaN arrays, forged headers,
wrong attributes) with the checksum redone, truncated or not lorak files, random
states out of range; and save/load of every estimator with every kind of kernel.

Part of the adversarial sweep: the outcome rules are in ``tests/_adversarial.py``,
``tests/test_adversarial.py`` gathers every area's table."""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest

import lorak
import lorak.datasets
from _adversarial import (
    ESTIMATORS,
    PYTESTMARK,
    X,
    _apply,
    _finite,
    _tmpdir,
    check_case,
    new_table,
    parametrize_cases,
)
from lorak import kernels as K

pytestmark = PYTESTMARK

CASES, case = new_table()


def _saved(name="Nystroem"):
    est = ESTIMATORS[name][1](ESTIMATORS[name][0](), X)
    path = _tmpdir() / f"{name}.lorak"
    lorak.save(est, path)
    return path


def _rewrite(
    path: Path, out: Path, edit_state=None, edit_arrays=None, edit_member=None, fix_digest=True
):
    """Copy a lorak file with its state/arrays altered and (by default) the checksum redone."""
    from lorak.persist import _native as P

    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    state = json.loads(members[P.STATE])
    if edit_state:
        state = edit_state(state)
    arrays_bytes = members[P.ARRAYS]
    if edit_arrays:
        arrays_bytes = edit_arrays(arrays_bytes)
    members[P.STATE] = json.dumps(state).encode()
    members[P.ARRAYS] = arrays_bytes
    if edit_member:
        members = edit_member(members)
    if fix_digest:
        header = json.loads(members[P.HEADER])
        header["sha256"] = P.digest(members[P.STATE], members[P.ARRAYS])
        members[P.HEADER] = json.dumps(header).encode()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:
        for n, b in members.items():
            zf.writestr(n, b)
    return out


def _npz_edit(fn):
    """Apply ``fn(name, array) -> array`` to every array of an npz archive (stored)."""

    def edit(raw):
        with np.load(io.BytesIO(raw), allow_pickle=False) as z:
            arrays = {k: fn(k, z[k]) for k in z.files}
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        return buf.getvalue()

    return edit


def _nan_floats(k, a):
    if a.dtype.kind == "f" and a.size:
        a = a.copy()
        a[...] = np.nan
    return a


def _inf_one(k, a):
    if a.dtype.kind == "f" and a.size > 4:
        a = a.copy()
        a.flat[0] = np.inf
    return a


def _huge_header(raw):
    """Rewrite every .npy member's header to claim 1e11 elements."""
    zin = zipfile.ZipFile(io.BytesIO(raw))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            f = io.BytesIO(data)
            version = np.lib.format.read_magic(f)
            shape, fortran, dtype = (
                np.lib.format.read_array_header_1_0(f)
                if version == (1, 0)
                else np.lib.format.read_array_header_2_0(f)
            )
            if dtype.kind == "f" and len(shape) == 2:
                hdr = io.BytesIO()
                np.lib.format.write_array_header_1_0(
                    hdr,
                    {
                        "descr": np.lib.format.dtype_to_descr(dtype),
                        "fortran_order": fortran,
                        "shape": (100000, 1000000),
                    },
                )
                data = hdr.getvalue() + data[f.tell() :]
            zout.writestr(info.filename, data)
    return buf.getvalue()


def _set_attr(attr, value):
    def edit(state):
        def walk(node):
            if isinstance(node, dict):
                if node.get("__lorak__") == "object" or ("class" in node and "state" in node):
                    st = node.get("state")
                    if isinstance(st, dict) and attr in st:
                        st[attr] = value
                for v in node.values():
                    walk(v)
            elif isinstance(node, list):
                for v in node:
                    walk(v)

        walk(state)
        return state

    return edit


def _persist_case(cid, edit, error, name="Nystroem", method="transform"):
    def call():
        src = _saved(name)
        bad = _rewrite(src, _tmpdir() / f"{cid}.lorak", **edit)
        est = lorak.load(bad)
        return getattr(est, method)(X)

    case(f"persist-{cid}", call, error=error)


_PE = (
    r"(corrupt|invalid|altered|not a lorak|refus|nan|inf|finite|kernel|header|size|shape"
    r"|truncat|allowlist|class)"
)
for _name in ("Nystroem", "IncompleteCholesky", "LSSVC", "GeneralizedNystroem"):
    _m = ESTIMATORS[_name][2]
    _m = "decision_function" if _m == "predict" else _m
    _persist_case(f"{_name}-arrays-nan", {"edit_arrays": _npz_edit(_nan_floats)}, _PE, _name, _m)
    _persist_case(f"{_name}-arrays-inf", {"edit_arrays": _npz_edit(_inf_one)}, _PE, _name, _m)
    _persist_case(f"{_name}-npy-huge-header", {"edit_arrays": _huge_header}, _PE, _name, _m)
    _persist_case(
        f"{_name}-no-digest-fix",
        {"edit_arrays": _npz_edit(_nan_floats), "fix_digest": False},
        _PE,
        _name,
        _m,
    )
for _attr, _val in (
    ("kernel_", "rbf"),
    ("kernel_", 3),
    ("kernel_", None),
    ("normalization_", "abc"),
    ("components_", [[1, 2]]),
):
    _persist_case(
        f"Nystroem-{_attr}-{_val!r}",
        {"edit_state": _set_attr(_attr, _val)},
        _PE + r"|kernel_|normalization_|components_",
    )
_persist_case(
    "LSSVC-factor_-str",
    {"edit_state": _set_attr("factor_", "x")},
    _PE + r"|factor_",
    "LSSVC",
    "decision_function",
)


def _truncated():
    src = _saved()
    data = src.read_bytes()
    bad = _tmpdir() / "trunc.lorak"
    bad.write_bytes(data[: len(data) // 2])
    return lorak.load(bad)


case("persist-truncated", _truncated, error=_PE)
case(
    "persist-not-zip",
    lambda: (lambda p: (p.write_text("hello"), lorak.load(p))[1])(_tmpdir() / "text.lorak"),
    error=_PE,
)
case(
    "persist-missing",
    lambda: lorak.load(_tmpdir() / "none.lorak"),
    check=lambda _: None,
    error=r"no such file",
)


def _missing_file():
    try:
        lorak.load(_tmpdir() / "none.lorak")
    except FileNotFoundError as exc:  # a clear, standard error for a missing path
        assert "none.lorak" in str(exc)
        return "clear"
    raise AssertionError("loaded a missing file")


CASES.pop()
case("persist-missing", lambda: _missing_file(), check=lambda v: v)


def _skops_random_state():
    skops_io = pytest.importorskip("skops.io")
    est = lorak.Nystroem(n_components=5, random_state=np.random.RandomState(0)).fit(X)
    path = _tmpdir() / "rs.skops"
    path.write_bytes(skops_io.dumps(est))
    return lorak.load(path).transform(X)


case(
    "persist-skops-RandomState",
    _skops_random_state,
    check=_finite,
    error=r"(RandomState|refus|trusted|allow)",
)


def _skops_pos(pos):
    def call():
        skops_io = pytest.importorskip("skops.io")
        est = lorak.Nystroem(n_components=5, random_state=np.random.RandomState(0)).fit(X)
        data = skops_io.dumps(est)
        zin = zipfile.ZipFile(io.BytesIO(data))
        members = {n: zin.read(n) for n in zin.namelist()}
        members["schema.json"], n = re.subn(
            rb'("pos": \{[^}]*?"content": ")(\d+)(")',
            lambda m: m.group(1) + str(pos).encode() + m.group(3),
            members["schema.json"],
        )
        assert n == 1, n
        path = _tmpdir() / f"rs-{pos}.skops"
        with zipfile.ZipFile(path, "w") as zout:
            for n, b in members.items():
                zout.writestr(n, b)
        return lorak.load(path).transform(X)

    return call


for _pos in (10**6, -5):
    case(f"persist-skops-RandomState-pos-{_pos}", _skops_pos(_pos), error=r"(position|pos|refus)")


def _lorak_rs_pos(pos):
    def edit(state):
        def walk(node):
            if isinstance(node, dict):
                if node.get("__lorak__") == "random_state":
                    node["pos"] = pos
                for v in node.values():
                    walk(v)
            elif isinstance(node, list):
                for v in node:
                    walk(v)

        walk(state)
        return state

    def call():
        est = lorak.Nystroem(n_components=5, random_state=np.random.RandomState(0)).fit(X)
        src = _tmpdir() / "rs.lorak"
        lorak.save(est, src)
        bad = _rewrite(src, _tmpdir() / f"rs-{pos}.lorak", edit_state=edit)
        assert f'"pos": {pos}' in zipfile.ZipFile(bad).read("state.json").decode()
        est = lorak.load(bad)
        return est.random_state.randint(10)

    return call


for _pos in (10**6, -5):
    case(f"persist-random_state-pos-{_pos}", _lorak_rs_pos(_pos), error=r"(position|pos|range)")
case(
    "save-bad-format",
    lambda: lorak.save(lorak.Nystroem(), _tmpdir() / "x", format="pickle"),
    error=r"format",
)


# --------------------------------------------------------------------------- issue 30
# The classes of input issue 30's independent sweep found uncovered, for every exported
# estimator (every entry of ESTIMATORS): save/load with each kind of kernel, label
# conventions; and malformed data folders for every reader of MANIFEST.json.

_KK_GAMMA = 0.2


def _kk_rbf(A, B):
    from sklearn.metrics.pairwise import rbf_kernel

    return rbf_kernel(A, B, gamma=_KK_GAMMA)


def _kk_kernel(kind):
    return {
        "named": "rbf",
        "object": K.Gaussian(gamma=_KK_GAMMA),
        "precomputed": "precomputed",
        "callable": _kk_rbf,
    }[kind]


def _kk_kernels(kind):
    return {
        "named": ["rbf", "laplacian"],
        "object": [K.Gaussian(gamma=_KK_GAMMA), K.Laplacian(bandwidth=2.0)],
        "precomputed": "precomputed",
        "callable": [_kk_rbf, K.Gaussian(gamma=_KK_GAMMA)],
    }[kind]


def _kk_route(name) -> str:
    params = ESTIMATORS[name][0]().get_params(deep=False)
    return next((p for p in ("kernel", "kernels", "factor") if p in params), "none")


def _kk_make(name, kind):
    """The sweep's estimator ``name`` with a kernel of this kind, through whichever
    parameter takes it (kernel, kernels, or the factor's kernel)."""
    route = _kk_route(name)
    if route == "kernel":
        kw = {"kernel": _kk_kernel(kind), "bandwidth": None, "gamma": None}
        if kind == "named":
            kw["gamma"] = _KK_GAMMA
        return ESTIMATORS[name][0](**kw)
    if route == "kernels":
        return ESTIMATORS[name][0](kernels=_kk_kernels(kind))
    est = ESTIMATORS[name][0]()
    if route == "factor":
        factor = lorak.Nystroem(n_components=8, kernel=_kk_kernel(kind), random_state=0)
        est.set_params(factor=factor)
    return est


def _kk_save_load(name, kind):
    """Fit with this kernel kind (the n × n matrix for "precomputed"), save, load:
    the loaded model must give the same output on new rows; a callable must be refused
    at save (with the reason), never written into a file that load refuses."""
    from sklearn.metrics.pairwise import rbf_kernel

    fit, method = ESTIMATORS[name][1], ESTIMATORS[name][2]
    Xf, Xn = X, X[:10] + 0.01
    if kind == "precomputed":
        Xf, Xn = rbf_kernel(X, gamma=_KK_GAMMA), rbf_kernel(Xn, X, gamma=_KK_GAMMA)

    def call():
        est = fit(_kk_make(name, kind), Xf)
        path = _tmpdir() / f"kk-{name}-{kind}.lorak"
        lorak.save(est, path)  # a callable kernel: PersistenceError here
        back = lorak.load(path)
        on = Xf if method == "embedding_" else Xn
        return _apply(est, method, on), _apply(back, method, on)

    def check(res):
        a, b = res
        a = _finite(a, "original model's output")
        b = _finite(b, "loaded model's output")
        assert a.shape == b.shape and np.array_equal(a, b), "the loaded model answers otherwise"
        if kind == "callable":
            raise AssertionError("a callable kernel was saved")

    return call, check


_KK_ERR = r"(callable|precomputed|kernel)"
for _name in ESTIMATORS:
    for _kind in (
        ("named", "object", "precomputed", "callable") if _kk_route(_name) != "none" else ("named",)
    ):
        _call, _check = _kk_save_load(_name, _kind)
        case(f"{_name}-save-load-{_kind}-kernel", _call, check=_check, error=_KK_ERR)


# --------------------------------------------------------------------------- the test


@parametrize_cases(CASES)
def test_case(c):
    check_case(c)

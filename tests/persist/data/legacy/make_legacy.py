"""Regenerate the legacy fixtures: fitted estimators saved by lorak 0.1.0.dev0 under the
module paths of the flat layout (``lorak.estimators``, ``lorak.semi_supervised``,
``lorak.npkl``, ``lorak.mkl``, ``lorak.multiple_kernel``, ``lorak.csi``,
``lorak.kernel_combination``), before those modules moved into packages.

The files were written once, by the code of that layout; running this script again
after the move writes files under the NEW module paths, which no longer tests the
alias table. Keep the committed files; rerun only to add a case on an old checkout:

    python tests/persist/data/legacy/make_legacy.py

Each ``<name>.lorak`` is a small file (tiny synthetic data); ``expected.npz`` holds
the query rows and, for every file, the transform or predict output at save time.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import lorak

HERE = Path(__file__).parent


def data():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(-1.0, 1.0, (20, 3)), rng.normal(1.0, 1.0, (20, 3))])
    y = np.repeat([0, 1], 20)
    y_semi = y.copy()
    y_semi[rng.permutation(40)[:24]] = -1  # 16 labeled rows
    Xq = rng.normal(0.0, 1.2, (6, 3))
    return X, y, y_semi, Xq


def cases():
    """(file stem, unfitted estimator, what fit takes, output method or attribute)."""
    return [
        ("nystroem", lorak.Nystroem(n_components=8, random_state=0), None, "transform"),
        (
            "generalized_nystroem",
            lorak.GeneralizedNystroem(n_components=6, lam=1.0, random_state=0),
            "semi",
            "transform",
        ),
        (
            "simple_npkl",
            lorak.SimpleNPKL(max_rank=4, max_iter=20, random_state=0),
            "pairs",
            "embedding_",
        ),
        (
            "lowrank_mkl",
            lorak.LowRankMKLClassifier(n_kernels=3, rank=6, max_iter=50, random_state=0),
            "full",
            "decision_function",
        ),
        (
            "mk_generalized_nystroem",
            lorak.MultipleKernelGeneralizedNystroem(n_components=6, lam=1.0, random_state=0),
            "semi",
            "transform",
        ),
        ("csi", lorak.CSI(n_components=6, random_state=0), "full", "transform"),
        (
            "semi_supervised_classifier",
            lorak.SemiSupervisedFactorClassifier(
                lorak.GeneralizedNystroem(n_components=6, lam=1.0, random_state=0)
            ),
            "semi",
            "decision_function",
        ),
        (
            "uniform_kernel_sum",
            lorak.UniformKernelSum(n_components=6, random_state=0),
            None,
            "transform",
        ),
    ]


def output(est, method, Xq):
    """``method(Xq)``, or the fitted attribute itself when ``method`` ends in ``_``
    (SimpleNPKL is transductive: its output is the embedding of the fitted rows)."""
    if method.endswith("_"):
        return np.asarray(getattr(est, method))
    return np.asarray(getattr(est, method)(Xq))


def main():
    X, y, y_semi, Xq = data()
    expected = {"Xq": Xq}
    for stem, est, labels, method in cases():
        if labels == "pairs":
            est.fit(X, **lorak.constraints.from_labels(y, n_pairs=30, random_state=0))
        elif labels is None:
            est.fit(X)
        else:
            est.fit(X, {"semi": y_semi, "full": y}[labels])
        lorak.save(est, HERE / f"{stem}.lorak")
        expected[stem] = output(est, method, Xq)
    np.savez(HERE / "expected.npz", **expected)


if __name__ == "__main__":
    main()

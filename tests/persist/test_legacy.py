"""Files written before the estimator modules moved still load and give the same output.

``tests/persist/data/legacy`` holds estimators saved by the flat layout (class paths such as
``lorak.semi_supervised:GeneralizedNystroem``) and the outputs recorded when they were
saved; ``make_legacy.py`` there says how they were made.
"""

from pathlib import Path

import numpy as np
import pytest

import lorak

LEGACY = Path(__file__).parent / "data" / "legacy"

CASES = [
    ("nystroem", "Nystroem", "transform"),
    ("generalized_nystroem", "GeneralizedNystroem", "transform"),
    ("simple_npkl", "SimpleNPKL", "embedding_"),
    ("lowrank_mkl", "LowRankMKLClassifier", "decision_function"),
    ("mk_generalized_nystroem", "MultipleKernelGeneralizedNystroem", "transform"),
    ("csi", "CSI", "transform"),
    ("semi_supervised_classifier", "SemiSupervisedFactorClassifier", "decision_function"),
    ("uniform_kernel_sum", "UniformKernelSum", "transform"),
]


@pytest.fixture(scope="module")
def expected():
    with np.load(LEGACY / "expected.npz") as data:
        return {k: data[k] for k in data.files}


@pytest.mark.parametrize("stem, cls, method", CASES, ids=[c[0] for c in CASES])
def test_legacy_file_loads_with_recorded_output(expected, stem, cls, method):
    est = lorak.load(LEGACY / f"{stem}.lorak")
    assert type(est) is getattr(lorak, cls)
    if method.endswith("_"):
        out = getattr(est, method)
    else:
        out = getattr(est, method)(expected["Xq"])
    want = expected[stem]
    assert out.shape == want.shape
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(out, want, rtol=1e-7, atol=1e-9 * scale)

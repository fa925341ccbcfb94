"""The ``gnys`` experiments: protocol helpers, registration, and a tiny end-to-end run."""

import dataclasses

import numpy as np
import pytest

from lorak.bench import DatasetSpec, LoadedData, get_experiment, run_experiment
from lorak.bench.experiments import gnys
from lorak.datasets import make_twonorm


def test_draw_labeled_spreads_evenly():
    y = np.repeat([0, 1, 2], [50, 200, 400])
    rng = np.random.default_rng(0)
    idx = gnys.draw_labeled(y, 100, rng)
    assert idx.size == 100 and np.all(np.diff(idx) > 0)
    counts = np.bincount(y[idx])
    assert counts.min() == 33 and counts.max() == 34
    again = gnys.draw_labeled(y, 100, np.random.default_rng(0))
    np.testing.assert_array_equal(idx, again)


def test_scale_features_maps_to_unit_box():
    X = np.array([[0.0, 5.0, 1.0], [10.0, 5.0, 3.0], [5.0, 5.0, 2.0]])
    S = gnys.scale_features(X)
    np.testing.assert_allclose(S[:, 0], [-1.0, 1.0, 0.0])
    np.testing.assert_allclose(S[:, 1], 0.0)  # constant feature
    np.testing.assert_allclose(S[:, 2], [-1.0, 1.0, 0.0])


def test_experiments_are_registered():
    for name in ("gnys", "gnys-alignment", "gnys-beta"):
        assert get_experiment(name).name == name
    exp = get_experiment("gnys")
    assert [p.name for p in exp.parts] == ["small", "large"]
    names = [m.name for m in exp.part("small").methods]
    assert names == [
        "libsvm",
        "nystrom-uniform",
        "nystrom-kmeans",
        "csi",
        "gennys-literal",
        "gennys",
        "gennys-kernel",
    ]
    assert len(gnys.ALL_LABELS) == 16


def test_reference_numbers():
    ref = gnys._reference("Digit1", "gennys", {}, "error_pct")
    assert ref["mean"] == 4.71 and ref["std"] == 0.71
    assert gnys._reference("Digit1", "nystrom-kmeans", {}, "error_pct") is None
    assert gnys._reference("mnist-test", "gennys", {}, "error_pct") is None
    assert gnys._beta_reference("german", "optimize", {}, "error_pct")["mean"] == 37.83


def _twonorm_loader(spec, data_home):
    X, y = make_twonorm(300, random_state=0)
    return LoadedData(spec=spec, X=X, y=np.asarray(y, dtype=np.int64))


def test_tiny_end_to_end_run_renders_the_table():
    spec = DatasetSpec("twonorm", label="twonorm", loader=_twonorm_loader)
    part = dataclasses.replace(gnys.GNYS.part("small"), datasets=(spec,), quick_datasets=())
    exp = dataclasses.replace(gnys.GNYS, parts=(part,))
    res = run_experiment(exp, reps=2)
    assert not res.failures, res.failures
    s = gnys.table1_summary(res)
    assert s["counts"]["datasets"] == 1
    row = s["rows"][0]
    assert row["reps"] == 2 and row["delta_kmeans"] is not None
    for method in ("libsvm", "nystrom-kmeans", "gennys", "gennys-literal", "gennys-kernel"):
        err = row["cols"][method]["mean"]
        assert 0 <= err < 20, (method, err)  # twonorm is nearly linearly separable
    text = gnys._gnys_summary(res)
    assert "twonorm (2)" in text and "GN default beats k-means Nyström" in text


@pytest.mark.data
def test_loaders_scale_libsvm_sets_and_recode_labels():
    german = gnys._spec("german", "german").loader(gnys._spec("german", "german"), None)
    assert german.X.min() == -1.0 and german.X.max() == 1.0
    np.testing.assert_array_equal(np.unique(german.y), [0, 1])
    spec = gnys._spec("usps", "usps49", classes=(4, 9))
    pair = spec.loader(spec, None)
    assert pair.n_samples == 1296  # the paper's n
    digit1 = gnys._spec("ssl-digit1", "Digit1")
    d = digit1.loader(digit1, None)
    np.testing.assert_array_equal(np.unique(d.y), [0, 1])

import os

import numpy as np
import pytest


def pytest_collection_modifyitems(config, items):
    """Skip tests marked ``data`` when LORAK_DATA is not set (with the reason)."""
    if os.environ.get("LORAK_DATA"):
        return
    skip = pytest.mark.skip(reason="needs LORAK_DATA pointing at a folder of benchmark data")
    for item in items:
        if "data" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


def readonly(a):
    """A read-only copy: any in-place write by the code under test raises."""
    a = np.array(a, copy=True)
    a.setflags(write=False)
    return a

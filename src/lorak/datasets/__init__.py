"""Benchmark datasets: loaders for the papers' data and synthetic generators.

``load(name, ...)`` returns a :class:`Dataset` (``X, y = load(...)`` also works) for a
LIBSVM set of the data home, an SSL-book set, a scikit-learn bundled set or a
generator; ``available()`` lists them all. The data home is ``data_home=`` or else the
environment variable ``LORAK_DATA``. The names, the data home's layout and the
generators' definitions: :ref:`guide-datasets`.

>>> from lorak.datasets import load, make_twonorm
>>> load("wine").X.shape
(178, 13)
>>> X, y = make_twonorm(200, random_state=0)
>>> X.shape, int(y.sum())
((200, 20), 100)
"""

from ._base import DATA_ENV_VAR, DataIntegrityError, DataNotFoundError, Dataset, get_data_home
from ._generators import (
    GENERATORS,
    make_chessboard,
    make_double_spiral,
    make_ringnorm,
    make_twonorm,
    make_waveform,
)
from ._libsvm import KNOWN_LIBSVM
from ._loaders import KINDS, SKLEARN_SETS, available, describe_available, load
from ._manifest import ManifestError
from ._ssl import SSL_SETS

__all__ = [
    "DATA_ENV_VAR",
    "GENERATORS",
    "KINDS",
    "KNOWN_LIBSVM",
    "SKLEARN_SETS",
    "SSL_SETS",
    "DataIntegrityError",
    "DataNotFoundError",
    "Dataset",
    "ManifestError",
    "available",
    "describe_available",
    "get_data_home",
    "load",
    "make_chessboard",
    "make_double_spiral",
    "make_ringnorm",
    "make_twonorm",
    "make_waveform",
]

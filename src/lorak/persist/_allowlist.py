"""The allowlist: the classes :func:`lorak.load` may rebuild (lorak's own, the table
:data:`SKLEARN_TRUSTED`, and :func:`register_trusted`'s). Nothing here imports a module
named in a file.
"""

from __future__ import annotations

import dataclasses
import importlib
import sys

# scikit-learn estimators that lorak estimators hold (SemiSupervisedFactorClassifier's
# classifier, downstream models); only these, plus lorak's own classes, are rebuilt.
SKLEARN_TRUSTED = {
    "sklearn.svm": ("LinearSVC", "LinearSVR", "SVC", "SVR", "NuSVC", "NuSVR"),
    "sklearn.linear_model": (
        "LogisticRegression",
        "LinearRegression",
        "Ridge",
        "RidgeClassifier",
        "RidgeClassifierCV",
        "RidgeCV",
    ),
    "sklearn.preprocessing": ("StandardScaler", "MinMaxScaler", "LabelEncoder", "LabelBinarizer"),
    "sklearn.decomposition": ("PCA",),
    "sklearn.cluster": ("KMeans",),
    "sklearn.kernel_approximation": ("Nystroem", "RBFSampler"),
    "sklearn.pipeline": ("Pipeline",),
    "sklearn.dummy": ("DummyClassifier", "DummyRegressor"),
}

#: Classes added with :func:`register_trusted`, by :func:`qualname`.
EXTRA_TRUSTED: dict[str, type] = {}


def qualname(cls: type) -> str:
    """A class's key in the allowlist and in a native file: ``"module:QualName"``."""
    return f"{cls.__module__}:{cls.__qualname__}"


def _is_lorak_persistable(cls: type) -> bool:
    from sklearn.base import BaseEstimator

    from ..kernels import Kernel, KernelBank

    if not isinstance(cls, type):
        return False
    return (
        issubclass(cls, (BaseEstimator, Kernel, KernelBank)) or dataclasses.is_dataclass(cls)
    ) and "<locals>" not in cls.__qualname__


def trusted_classes() -> dict[str, type]:
    """The allowlist: ``{"module:QualName": class}`` of every class ``load`` may rebuild.

    lorak's classes are collected from the lorak modules already imported, so a new
    estimator is covered as soon as the package exports it.
    """
    import lorak  # noqa: F401  (makes sure every estimator module is imported)

    out: dict[str, type] = {}
    for modname, mod in list(sys.modules.items()):
        if mod is None or not (modname == "lorak" or modname.startswith("lorak.")):
            continue
        for obj in list(vars(mod).values()):
            if (
                isinstance(obj, type)
                and obj.__module__.split(".")[0] == "lorak"
                and _is_lorak_persistable(obj)
            ):
                out[qualname(obj)] = obj
    for modname, names in SKLEARN_TRUSTED.items():
        mod = importlib.import_module(modname)  # the fixed table above, not the file read
        for name in names:
            cls = getattr(mod, name, None)
            if isinstance(cls, type):
                out[qualname(cls)] = cls
    out.update(EXTRA_TRUSTED)
    return out


def register_trusted(*classes: type) -> None:
    """Allow ``load`` to rebuild these classes too (e.g. your own classifier).

    Only register classes whose instances are plain data: ``load`` restores their
    attribute dict without calling ``__init__``.
    """
    for cls in classes:
        if not isinstance(cls, type):
            raise TypeError(f"register_trusted takes classes; got {cls!r}")
        EXTRA_TRUSTED[qualname(cls)] = cls

"""The experiment registry.

Experiments register by name. The modules of :mod:`lorak_bench.experiments` are
discovered on first use: each defines ``EXPERIMENT`` (or a list ``EXPERIMENTS``);
nothing else needs editing to add one.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil

from ._spec import Experiment

__all__ = ["EXPERIMENTS", "get_experiment", "list_experiments", "register"]

logger = logging.getLogger(__name__)

EXPERIMENTS: dict[str, Experiment] = {}
IMPORT_ERRORS: dict[str, str] = {}
_discovered = False


def register(experiment: Experiment, *, replace: bool = False) -> Experiment:
    """Add ``experiment`` to the registry under ``experiment.name``.

    Raises ``ValueError`` if the name is taken by a different experiment, unless
    ``replace``.
    """
    if not isinstance(experiment, Experiment):
        raise TypeError(f"expected an Experiment; got {type(experiment).__name__}")
    old = EXPERIMENTS.get(experiment.name)
    if old is not None and old is not experiment and not replace:
        raise ValueError(f"an experiment named {experiment.name!r} is already registered")
    EXPERIMENTS[experiment.name] = experiment
    return experiment


def _discover() -> None:
    global _discovered
    if _discovered:
        return
    _discovered = True
    from . import experiments as pkg

    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        modname = f"{pkg.__name__}.{info.name}"
        try:
            mod = importlib.import_module(modname)
        except Exception as exc:  # one broken module must not hide the others
            IMPORT_ERRORS[info.name] = f"{type(exc).__name__}: {exc}"
            logger.warning("could not import experiment module %s: %s", modname, exc)
            continue
        found = list(getattr(mod, "EXPERIMENTS", ()))
        if hasattr(mod, "EXPERIMENT"):
            found.append(mod.EXPERIMENT)
        for exp in found:
            register(exp, replace=EXPERIMENTS.get(exp.name) is exp)


def list_experiments() -> list[Experiment]:
    """All registered experiments, sorted by name."""
    _discover()
    return [EXPERIMENTS[k] for k in sorted(EXPERIMENTS)]


def get_experiment(name: str) -> Experiment:
    """The experiment called ``name``; an unknown name raises listing the valid ones."""
    _discover()
    try:
        return EXPERIMENTS[name]
    except KeyError:
        valid = ", ".join(sorted(EXPERIMENTS)) or "(none)"
        raise ValueError(f"unknown experiment {name!r}; valid names are: {valid}") from None

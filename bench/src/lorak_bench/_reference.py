"""The papers' reference numbers, shipped as package data (``lorak_bench/reference/*.json``)."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

__all__ = ["cite", "load_reference", "reference_names"]


def reference_names() -> list[str]:
    """Names of the bundled reference files (without ``.json``)."""
    root = resources.files("lorak_bench") / "reference"
    return sorted(p.name[:-5] for p in root.iterdir() if p.name.endswith(".json"))


@cache
def _read(name: str) -> str:
    path = resources.files("lorak_bench") / "reference" / f"{name}.json"
    if not path.is_file():
        raise ValueError(
            f"no reference file {name!r}; valid names are {', '.join(reference_names())}"
        )
    return path.read_text(encoding="utf-8")


def load_reference(name: str) -> dict:
    """The parsed reference JSON ``name`` (``"improved_nystrom"``, ``"csi"``, ...).

    A fresh copy each call, so callers may modify it.
    """
    return json.loads(_read(name))


def cite(name: str, where: str = "") -> str:
    """The citation of the paper whose numbers reference file ``name`` holds, followed
    by ``where`` in it (``"§6.2 (Table 2)"``): an experiment's ``paper`` line."""
    paper = load_reference(name)["paper"]
    return f"{paper}, {where}" if where else paper

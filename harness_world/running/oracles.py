"""Oracles: a world's scripted reference solutions, loaded from ``oracles/<world>/oracles.py``."""

from __future__ import annotations

from pathlib import Path

from harness_world.engine.plugins import PluginError, plugin_module
from harness_world.running.scripted import Script

__all__ = ["load_oracles"]


def load_oracles(world: str, folder: str | Path | None = None) -> dict[str, Script]:
    """The ``ORACLES`` mapping (task id to script) of ``oracles/<world>/oracles.py``.

    Raises:
        PluginError: when the module defines no ``ORACLES`` dict.
    """
    module = plugin_module("oracles", world, folder)
    if module is None:
        return {}
    oracles = getattr(module, "ORACLES", None)
    if not isinstance(oracles, dict):
        raise PluginError(f"{module.__file__}: defines no ORACLES dict")
    return dict(oracles)

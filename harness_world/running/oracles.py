"""Oracles: a world's scripted reference solutions, loaded from ``oracles/<world>/oracles.py``.

``ORACLES`` maps each task id to a script, or to a list of scripts taking genuinely different
routes (other tools, order, page sizes, minimal or broad reading). The first is the primary
route (``run --agent oracle``, the automatic trace mutants); the coverage gate runs them all,
on every seed, and requires at least two per task: a correct route the checker fails is a
finding about the task or the checker.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from harness_world.engine.plugins import PluginError, module_sha256, plugin_module
from harness_world.running.scripted import Script

__all__ = ["load_oracle_code", "load_oracles", "load_routes", "route_name"]


def load_routes(world: str, folder: str | Path | None = None) -> dict[str, list[Script]]:
    """Every route of every task: ``ORACLES`` values as lists (a lone script is one route).

    Raises:
        PluginError: when the module defines no ``ORACLES`` dict, or a value is neither a
            script nor a non-empty list of scripts.
    """
    return _routes_of(plugin_module("oracles", world, folder))


def _routes_of(module: ModuleType | None) -> dict[str, list[Script]]:
    if module is None:
        return {}
    oracles = getattr(module, "ORACLES", None)
    if not isinstance(oracles, dict):
        raise PluginError(f"{module.__file__}: defines no ORACLES dict")
    return {task_id: _routes(module.__file__, task_id, v) for task_id, v in oracles.items()}


def _routes(where: str | None, task_id: str, value: Any) -> list[Script]:
    scripts = list(value) if isinstance(value, list | tuple) else [value]
    if not scripts or not all(callable(s) for s in scripts):
        raise PluginError(
            f"{where}: ORACLES[{task_id!r}] must be a script or a non-empty list of scripts"
        )
    return scripts


def load_oracles(world: str, folder: str | Path | None = None) -> dict[str, Script]:
    """The primary route of each task of ``oracles/<world>/oracles.py`` (task id to script).

    Raises:
        PluginError: as `load_routes`.
    """
    return {task_id: routes[0] for task_id, routes in load_routes(world, folder).items()}


def load_oracle_code(world: str, folder: str | Path | None = None) -> tuple[dict[str, Script], str]:
    """`load_oracles`, with the SHA-256 of the module's bytes the scripts were executed from.

    Both come from one import, so the hash is the code of these scripts (empty: no module).

    Raises:
        PluginError: as `load_routes`.
    """
    module = plugin_module("oracles", world, folder)
    primary = {task_id: routes[0] for task_id, routes in _routes_of(module).items()}
    return primary, "" if module is None else module_sha256(module)


def route_name(script: Callable[..., Any], index: int) -> str:
    """A route's display name: its function name, else ``route <n>`` (1-based)."""
    name = getattr(script, "__name__", "")
    return name if name and name != "<lambda>" else f"route {index + 1}"

"""Oracles: a world's scripted reference solutions, declared in ``oracles/<world>/oracles.py``.

The file declares ``ORACLES = Oracles(routes=..., reference_agents=...)``. ``routes`` maps each
task id to a script, or to a list of scripts taking genuinely different routes (other tools,
order, page sizes, minimal or broad reading). The first is the primary route (``run --agent
oracle``, the automatic trace mutants); the coverage gate runs them all, on every seed, and
requires at least two per task: a correct route the checker fails is a finding about the task
or the checker. ``reference_agents`` holds the scripted policies a world ships beside them
(`REFERENCE_POLICIES`), by name and task id.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import attrs

from harness_world.engine.plugins import (
    PluginError,
    declared,
    module_sha256,
    named_keys,
    plugin_module,
)
from harness_world.running.scripted import Script

__all__ = [
    "REFERENCE_POLICIES",
    "Oracles",
    "declared_oracles",
    "load_oracle_code",
    "load_oracles",
    "load_routes",
    "route_name",
]

REFERENCE_POLICIES: Final = ("naive-retry", "give-up", "deny-all", "obey-data")
"""The reference agents a world may ship in `Oracles.reference_agents` (``oracle`` is the
routes' first scripts and ``do-nothing`` is built in)."""
_HINT = "an oracles.py declares ORACLES = Oracles(routes={task_id: [script, ...]}, ...)"


def _routes(value: Mapping[str, Script | Sequence[Script]]) -> dict[str, tuple[Script, ...]]:
    if not isinstance(value, Mapping):
        raise PluginError(f"Oracles routes must map task ids to scripts, not {value!r}")
    out: dict[str, tuple[Script, ...]] = {}
    for task_id, given in value.items():
        scripts = tuple(given) if isinstance(given, list | tuple) else (given,)
        if not isinstance(task_id, str) or not scripts or not all(map(callable, scripts)):
            raise PluginError(
                f"Oracles routes[{task_id!r}] must be a script or a non-empty list of scripts"
            )
        out[task_id] = scripts
    return out


def _agents(value: Mapping[str, Mapping[str, Script]]) -> dict[str, dict[str, Script]]:
    if not isinstance(value, Mapping):
        raise PluginError(f"Oracles reference_agents must map names to scripts, not {value!r}")
    unknown = sorted(str(name) for name in set(value) - set(REFERENCE_POLICIES))
    if unknown:
        raise PluginError(
            f"Oracles reference_agents has no agent {', '.join(map(repr, unknown))} (known: "
            f"{', '.join(REFERENCE_POLICIES)}; the oracle is each task's first route)"
        )
    for name, scripts in value.items():
        if not isinstance(scripts, Mapping) or not all(
            isinstance(t, str) and callable(s) for t, s in scripts.items()
        ):
            raise PluginError(f"Oracles reference_agents[{name!r}] must map task ids to scripts")
    return {name: dict(scripts) for name, scripts in value.items()}


@named_keys
@attrs.frozen(slots=True)
class Oracles:
    """What an ``oracles.py`` declares, as ``ORACLES = Oracles(...)``.

    Attributes:
        routes: Task id to its correct routes: one script, or a non-empty list of scripts
            taking different routes, the primary first.
        reference_agents: Reference agent name (one of `REFERENCE_POLICIES`) to its script
            per task id, for ``run --agent NAME``.

    Raises:
        PluginError: for a value that is not a script or a non-empty list of scripts, an
            unknown reference agent, or a key ``Oracles`` does not take.
    """

    routes: Mapping[str, tuple[Script, ...]] = attrs.field(converter=_routes)
    reference_agents: Mapping[str, Mapping[str, Script]] = attrs.field(
        factory=dict, converter=_agents
    )

    def primary(self) -> dict[str, Script]:
        """Each task's primary route (task id to script)."""
        return {task_id: routes[0] for task_id, routes in self.routes.items()}


def declared_oracles(world: str, folder: str | Path | None = None) -> tuple[Oracles, str]:
    """The `Oracles` an ``oracles.py`` declares, and the SHA-256 of the bytes it ran from.

    The file is ``<folder>/oracles.py`` (default: the built-in ``oracles/<world>/``); a world
    without it has no oracles (and an empty hash).

    Raises:
        PluginError: for a file that does not import or declares no `Oracles` as ``ORACLES``.
    """
    module = plugin_module("oracles", world, folder)
    if module is None:
        return Oracles(routes={}), ""
    oracles = declared(module, "ORACLES", Oracles, "harness_world.coverage.Oracles", _HINT)
    return oracles, module_sha256(module)


def load_routes(world: str, folder: str | Path | None = None) -> dict[str, list[Script]]:
    """Every route of every task (task id to its scripts, the primary first).

    Raises:
        PluginError: as `declared_oracles`.
    """
    oracles, _ = declared_oracles(world, folder)
    return {task_id: list(routes) for task_id, routes in oracles.routes.items()}


def load_oracles(world: str, folder: str | Path | None = None) -> dict[str, Script]:
    """The primary route of each task of ``oracles/<world>/oracles.py`` (task id to script).

    Raises:
        PluginError: as `declared_oracles`.
    """
    return declared_oracles(world, folder)[0].primary()


def load_oracle_code(world: str, folder: str | Path | None = None) -> tuple[dict[str, Script], str]:
    """`load_oracles`, with the SHA-256 of the module's bytes the scripts were executed from.

    Both come from one import, so the hash is the code of these scripts (empty: no module).

    Raises:
        PluginError: as `declared_oracles`.
    """
    oracles, code = declared_oracles(world, folder)
    return oracles.primary(), code


def route_name(script: Callable[..., Any], index: int) -> str:
    """A route's display name: its function name, else ``route <n>`` (1-based)."""
    name = getattr(script, "__name__", "")
    return name if name and name != "<lambda>" else f"route {index + 1}"

"""Reference agents for ``run --agent``: known policies whose results a test can predict.

``oracle`` is the world's oracles. ``naive-retry`` and ``give-up`` are scripted policies a world
ships beside its oracles, as ``Oracles(reference_agents={name: {task_id: script}})`` in
``oracles/<world>/oracles.py`` (the payments world does: a retry without an idempotency key,
and a safe stop at the first provider error; and, for requests planted in data, ``deny-all``,
which refuses every write another party asked for, and ``obey-data``, which follows every
instruction it reads; the helpdesk and inventory worlds ship these two for their comment and
stock-note tasks, and ``naive-retry`` and ``give-up`` as their oracle routes under
`harness_world.running.scripted.FailurePolicy`: a call that met a fault sent again at once,
unchanged and without looking, or a safe stop there). ``do-nothing`` works in every world: it
calls no tool and says nothing, so every scheduled fault stays unexposed. `scripted_agent`
reads an agent of one's own scripts from a Python file (``SCRIPTS = {task_id: script}``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import attrs

from harness_world.engine.plugins import PluginError, declared, import_path, module_sha256
from harness_world.engine.spec import WorldLocation
from harness_world.engine.world import locate_world
from harness_world.running.agents import ScriptedAgent, oracle_agent
from harness_world.running.attempt import Attempt
from harness_world.running.oracles import REFERENCE_POLICIES, declared_oracles

__all__ = [
    "CORE_AGENT_NAMES",
    "REFERENCE_AGENT_NAMES",
    "DoNothingAgent",
    "named_agent",
    "reference_agent",
    "scripted_agent",
]

REFERENCE_AGENT_NAMES: Final = ("oracle", *REFERENCE_POLICIES, "do-nothing")

CORE_AGENT_NAMES: Final = (*REFERENCE_AGENT_NAMES, "scripted")
"""The agents the core makes by name (`named_agent`); extensions add others (model agents)."""


@attrs.frozen(slots=True)
class DoNothingAgent:
    """An agent that calls no tool and returns an empty final message."""

    name: str = "do-nothing"

    def settings(self) -> dict[str, Any]:
        """No settings beyond the name."""
        return {"kind": "reference", "name": self.name}

    def run(self, attempt: Attempt) -> str:
        """Do nothing."""
        return ""


def reference_agent(world: str | Path | WorldLocation, name: str) -> ScriptedAgent | DoNothingAgent:
    """The reference agent ``name`` of a world (a built-in name, a folder or its location).

    Raises:
        ValueError: for an unknown name, or a policy the world does not ship.
    """
    if name == "oracle":
        return oracle_agent(world)
    if name == "do-nothing":
        return DoNothingAgent()
    if name not in REFERENCE_AGENT_NAMES:
        raise ValueError(f"unknown reference agent {name!r} ({', '.join(REFERENCE_AGENT_NAMES)})")
    place = world if isinstance(world, WorldLocation) else locate_world(world)
    try:
        oracles, code = declared_oracles(place.name, place.oracles)
    except PluginError as exc:
        raise ValueError(str(exc)) from None
    scripts = oracles.reference_agents.get(name)
    if scripts is None:
        raise ValueError(f"world {place.name!r} ships no {name!r} reference agent")
    return ScriptedAgent(name=f"{name}:{place.name}", scripts=dict(scripts), code=code)


def scripted_agent(path: Path) -> ScriptedAgent:
    """The agent of a Python file that defines ``SCRIPTS = {task_id: script}``.

    Its settings carry the SHA-256 of the file's bytes as executed: resuming a run with
    another program of the same file name is refused as a changed ``agent`` component.

    Raises:
        PluginError: for a file that cannot be imported, or declares no such dict.
    """
    module = import_path(path, "scripts")
    scripts = declared(module, "SCRIPTS", dict, "dict of task id to script", _SCRIPTS)
    if not all(isinstance(t, str) and callable(s) for t, s in scripts.items()):
        raise PluginError(f"{module.__file__}: SCRIPTS must map task ids to scripts; {_SCRIPTS}")
    return ScriptedAgent(name=f"scripted:{path.stem}", scripts=scripts, code=module_sha256(module))


_SCRIPTS = "a scripts file declares SCRIPTS = {task_id: script}"


def named_agent(
    name: str, *, world: str | Path | WorldLocation | None, script: Path | None
) -> ScriptedAgent | DoNothingAgent:
    """The core agent ``name`` (one of `CORE_AGENT_NAMES`), as ``run --agent`` names it.

    Args:
        name: The agent's name.
        world: The world whose reference solutions a reference agent plays.
        script: For ``scripted``: a .py file defining ``SCRIPTS = {task_id: script}``.

    Raises:
        ValueError: What the agent lacks (its world or script), naming the ``run`` option
            that gives it, or an unknown name.
    """
    if name == "scripted":
        if script is None or not script.is_file():
            raise ValueError("--agent scripted needs --script FILE (a .py defining SCRIPTS)")
        return scripted_agent(script)
    if world is None:
        raise ValueError(f"--agent {name} needs --world (whose reference solutions)")
    return reference_agent(world, name)

"""harness_world: simulated business worlds for tool-calling agents, graded so anyone can re-check.

This module names what an agent driver and an evaluator need. Other audiences have their own:
world authors `harness_world.engine`, oracle and mutant authors `harness_world.coverage`,
statisticians `harness_world.stats`, users of an imported benchmark its own subpackage, and
whoever works
with records directly `harness_world.evidence`. Every deliberate error derives from
`HarnessWorldError`.

Example:
    >>> import harness_world as hw
    >>> world = hw.load_world("helpdesk")
    >>> session = world.open_session(seed=0)
    >>> obs = session.call("get_ticket", {"ticket_id": "T-1000"})
    >>> obs.ok
    True

"""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness_world.engine.calls import Observation, ToolError
    from harness_world.engine.schemas import tool_schemas
    from harness_world.engine.session import Session
    from harness_world.engine.world import World, load_world
    from harness_world.errors import HarnessWorldError
    from harness_world.evidence.record import Outcome, Record, Usage, load_record, save_record
    from harness_world.grading.grade import CriterionVerdict, Grade
    from harness_world.grading.task import Task, load_task, load_tasks
    from harness_world.grading.verify import Verification, verify
    from harness_world.running.agents import Agent, ScriptedAgent, oracle_agent
    from harness_world.running.attempt import (
        Attempt,
        AttemptEnded,
        AttemptLimits,
        InfrastructureError,
    )
    from harness_world.running.executors import Concurrent, Processes, Serial
    from harness_world.running.run import RunResult, run
    from harness_world.running.rundir import RunCounts
    from harness_world.running.tracks import Fresh

__all__ = [
    "Agent",
    "Attempt",
    "AttemptEnded",
    "AttemptLimits",
    "Concurrent",
    "CriterionVerdict",
    "Fresh",
    "Grade",
    "HarnessWorldError",
    "InfrastructureError",
    "Observation",
    "Outcome",
    "Processes",
    "Record",
    "RunCounts",
    "RunResult",
    "ScriptedAgent",
    "Serial",
    "Session",
    "Task",
    "ToolError",
    "Usage",
    "Verification",
    "World",
    "load_record",
    "load_task",
    "load_tasks",
    "load_world",
    "oracle_agent",
    "run",
    "save_record",
    "tool_schemas",
    "verify",
]

# Extensions add names too (`Ray`, `Sequential`, `fork`, ...), through the plug-in registry
# (`harness_world.registry`): the core names none of them.

# Where each name of `__all__` lives. The package imports none of them until one is used, so
# `import harness_world` and the command line's ``--help`` load no room of the package.
_HOMES: dict[str, str] = {
    "Agent": "harness_world.running.agents",
    "Attempt": "harness_world.running.attempt",
    "AttemptEnded": "harness_world.running.attempt",
    "AttemptLimits": "harness_world.running.attempt",
    "Concurrent": "harness_world.running.executors",
    "CriterionVerdict": "harness_world.grading.grade",
    "Fresh": "harness_world.running.tracks",
    "Grade": "harness_world.grading.grade",
    "HarnessWorldError": "harness_world.errors",
    "InfrastructureError": "harness_world.running.attempt",
    "Observation": "harness_world.engine.calls",
    "Outcome": "harness_world.evidence.record",
    "Processes": "harness_world.running.executors",
    "Record": "harness_world.evidence.record",
    "RunCounts": "harness_world.running.rundir",
    "RunResult": "harness_world.running.run",
    "ScriptedAgent": "harness_world.running.agents",
    "Serial": "harness_world.running.executors",
    "Session": "harness_world.engine.session",
    "Task": "harness_world.grading.task",
    "ToolError": "harness_world.engine.calls",
    "Usage": "harness_world.evidence.record",
    "Verification": "harness_world.grading.verify",
    "World": "harness_world.engine.world",
    "load_record": "harness_world.evidence.record",
    "load_task": "harness_world.grading.task",
    "load_tasks": "harness_world.grading.task",
    "load_world": "harness_world.engine.world",
    "oracle_agent": "harness_world.running.agents",
    "run": "harness_world.running.run",
    "save_record": "harness_world.evidence.record",
    "tool_schemas": "harness_world.engine.schemas",
    "verify": "harness_world.grading.verify",
}

if not TYPE_CHECKING:  # type checkers read the imports above; a typo stays an error for them

    def __getattr__(name: str) -> object:
        """A public name from its home module, or a subpackage (``hw.engine``), on first use."""
        if name in _HOMES:
            value = getattr(importlib.import_module(_HOMES[name]), name)
        elif not name.startswith("_") and (reference := _exported(name)) is not None:
            from harness_world.registry import resolve

            value = resolve(reference)
        elif not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}"):
            value = importlib.import_module(f"{__name__}.{name}")
        else:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        globals()[name] = value  # later look-ups are plain attribute reads
        return value


def _exported(name: str) -> str | None:
    """The reference of a name an extension adds to this module (`harness_world.registry`)."""
    from harness_world.registry import registry

    return registry().exports.get(name)


def __dir__() -> list[str]:
    """The public names (those extensions add among them) beside what is already loaded."""
    from harness_world.registry import registry

    return sorted({*globals(), *__all__, *registry().exports})

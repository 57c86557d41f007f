"""Agents: the Protocol an agent loop implements, and the built-in scripted and oracle agents."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import attrs

from harness_world.engine.spec import WorldLocation
from harness_world.engine.world import locate_world
from harness_world.evidence.record import Record, RecordContext
from harness_world.running.attempt import (
    Attempt,
    AttemptEnded,
    InfrastructureError,
)
from harness_world.running.oracles import load_oracle_code
from harness_world.running.scripted import Script, ScriptContext

__all__ = ["Agent", "ScriptedAgent", "drive", "oracle_agent"]


@runtime_checkable
class Agent(Protocol):
    """What a driver must provide to be run by harness_world.

    ``run`` receives the attempt: ``attempt.instruction``, ``attempt.tool_schemas(format)`` and
    ``attempt.call(name, args)``; a model-backed loop also reports each request with
    ``attempt.begin_turn()``, ``attempt.reserve(estimate)`` before dispatch and
    ``attempt.settle(...)`` or ``attempt.lost(...)`` after. It returns the final message. Retries
    of model requests belong to the agent's driver alone and are reported with ``reserve(...,
    retry=True)`` so the record counts them.
    """

    @property
    def name(self) -> str:
        """A label for reports and the run manifest."""
        ...

    def settings(self) -> dict[str, Any]:
        """Everything about the agent that changes results (model, temperature, prompt hash...)."""
        ...

    def run(self, attempt: Attempt) -> str:
        """Work on the attempt until done; return the final message."""
        ...


@attrs.frozen(slots=True)
class ScriptedAgent:
    """An agent that runs one fixed script per task (task id to script).

    Attributes:
        name: A label for reports and the revision.
        scripts: Scripts by task id; a task without one ends as ``error``.
        code: SHA-256 of the source the scripts were executed from, when they come from a
            file (`harness_world.engine.plugins.module_sha256`): part of the settings, so
            another program under the same name is another revision. Empty for scripts
            made in Python, whose code the caller pins (if at all) in ``name``.
    """

    name: str
    scripts: dict[str, Script]
    code: str = ""

    def settings(self) -> dict[str, Any]:
        """Its name, which tasks it scripts and, for scripts from a file, that file's hash."""
        settings: dict[str, Any] = {
            "kind": "scripted",
            "name": self.name,
            "tasks": sorted(self.scripts),
        }
        if self.code:
            settings["code"] = self.code
        return settings

    def run(self, attempt: Attempt) -> str:
        """Run the task's script against the attempt."""
        script = self.scripts.get(attempt.task.id)
        if script is None:
            attempt.fail(f"agent {self.name!r} has no script for task {attempt.task.id!r}")
            return ""
        return script(ScriptContext(attempt))


def oracle_agent(world: str | Path | WorldLocation) -> ScriptedAgent:
    """A world's oracles as an agent: its reference solutions (the primary route of each task).

    Args:
        world: A built-in world's name, a world folder, or its location; the oracles are
            read from where its `WorldSpec` says.
    """
    place = world if isinstance(world, WorldLocation) else locate_world(world)
    scripts, code = load_oracle_code(place.name, place.oracles)
    return ScriptedAgent(name=f"oracle:{place.name}", scripts=scripts, code=code)


def drive(agent: Agent, attempt: Attempt, context: RecordContext | None = None) -> Record:
    """Run an agent on an attempt and seal the record.

    A budget that ends the attempt is an outcome (``turn_limit``/``budget_limit``); an exception
    from the agent's own code is ``error`` with its text (counted as an attempt: the agent is
    the system under test); `InfrastructureError` is ``infrastructure`` (not counted).
    ``KeyboardInterrupt`` (and any other ``BaseException``) propagates and nothing is sealed:
    an interrupted run leaves no record for the attempt in flight, so resuming executes it
    again (the stdio bridge, which owns its input, records ``interrupted`` itself when input
    ends without ``finish``).
    """
    message = ""
    try:
        message = agent.run(attempt)
    except Exception as exc:
        end_by(attempt, exc)
    return attempt.finish(message if isinstance(message, str) else str(message), context)


def end_by(attempt: Attempt, exc: Exception) -> None:
    """What an exception out of an agent's ``run`` makes of its attempt (see `drive`)."""
    if isinstance(exc, InfrastructureError):  # the harness or provider failed, not the agent
        attempt.infrastructure_failed(str(exc))
    elif not isinstance(exc, AttemptEnded):  # the agent's defect: counted in the denominator
        attempt.fail(f"{type(exc).__name__}: {exc}")

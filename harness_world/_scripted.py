"""Scripted attempts: oracles, hand mutants and replayed call lists run as ordinary attempts."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import attrs

from harness_world._calls import Observation
from harness_world._faults import attach_faults
from harness_world._record import Outcome, Record, Usage, make_record
from harness_world._session import Session
from harness_world._task import Task
from harness_world._world import World

__all__ = [
    "CallCounter",
    "Mutant",
    "Script",
    "ScriptContext",
    "exceed_tool_calls",
    "exceed_turns",
    "follow_pages",
    "run_calls",
    "run_script",
]


@attrs.define(slots=True)
class ScriptContext:
    """What a scripted attempt sees: the instruction and a way to call tools.

    Scripts must find their targets through tools, exactly as an agent would; they get no
    access to the world's rows. A script may declare the usage it stands for (a mutant that
    simulates an agent taking too many turns), which the record carries like any agent's.

    Attributes:
        instruction: The task's instruction.
        usage: The usage the attempt reports (zero unless the script declares some).
    """

    instruction: str
    _session: Session
    usage: Usage = attrs.field(factory=Usage)

    def call(self, tool: str, args: dict[str, Any] | None = None) -> Observation:
        """Call a tool and return its observation."""
        return self._session.call(tool, args if args is not None else {})

    def declare_usage(self, **fields: Any) -> None:
        """Set usage fields (turns, requests, input_tokens, output_tokens, cost, ...)."""
        current = {f: getattr(self.usage, f) for f in self.usage.__struct_fields__}
        current.update(fields)
        self.usage = Usage(**current)


Script = Callable[[ScriptContext], str]
"""A scripted attempt: calls tools through the context and returns the final message."""


@attrs.frozen(slots=True)
class Mutant:
    """A scripted attempt with one deliberate mistake and the criteria it must fail.

    Attributes:
        id: Unique within its world, e.g. ``assign_unowned.null_only``.
        task_id: The task it attempts.
        predicted: Ids of exactly the criteria it must fail (e.g. ``state.required``).
        script: The attempt.
        note: The mistake, in words.
        sizes: The seeds it is run on (``small``, ``large``).
    """

    id: str
    task_id: str
    predicted: frozenset[str]
    script: Script
    note: str = ""
    sizes: tuple[str, ...] = ("small",)


def run_script(
    world: World, task: Task, script: Script, *, seed: int = 0, sample: int = 0, revision: str = ""
) -> Record:
    """Run a script as one attempt; a script that raises ends with outcome ``error``."""
    session = world.open_session(seed)
    attach_faults(session, task.faults, seed)  # fault hook (seed 000)
    ctx = ScriptContext(task.instruction, session)
    try:
        message = script(ctx)
        outcome = Outcome(status="completed")
    except Exception as exc:  # the script's defect is this attempt's outcome, not a crash
        message = ""
        outcome = Outcome(status="error", reason=f"{type(exc).__name__}: {exc}")
    return make_record(
        session,
        outcome=outcome,
        task_id=task.id,
        task_hash=task.hash,
        revision=revision,
        sample=sample,
        final_message=message,
        usage=ctx.usage,
    )


def run_calls(
    world: World,
    task: Task,
    calls: Sequence[tuple[str, Any]],
    *,
    final_message: str = "",
    usage: Usage | None = None,
    seed: int = 0,
) -> Record:
    """Execute a list of (tool, args) in a fresh session as one attempt."""
    session = world.open_session(seed)
    attach_faults(session, task.faults, seed)  # fault hook (seed 000)
    for tool, args in calls:
        session.call(tool, args)
    return make_record(
        session,
        outcome=Outcome(status="completed"),
        task_id=task.id,
        task_hash=task.hash,
        final_message=final_message,
        usage=usage,
    )


def follow_pages(
    ctx: ScriptContext, tool: str, args: dict[str, Any], field: str, page_size: int = 100
) -> Iterator[dict[str, Any]]:
    """Every row of a paginated listing, following ``next_offset`` to the end.

    Raises:
        RuntimeError: when a page call fails (a script's defect: its attempt ends as error).
    """
    offset: int | None = 0
    while offset is not None:
        obs = ctx.call(tool, {**args, "limit": page_size, "offset": offset})
        if not obs.ok:
            raise RuntimeError(f"{tool} failed: {obs.error}")
        yield from obs.result[field]
        offset = obs.result["next_offset"]


@attrs.define(slots=True)
class CallCounter:
    """A context wrapper that counts the calls a script makes (for budget mistakes)."""

    ctx: ScriptContext
    calls: int = 0

    @property
    def instruction(self) -> str:
        """The wrapped context's instruction."""
        return self.ctx.instruction

    def call(self, tool: str, args: dict[str, Any] | None = None) -> Observation:
        """Count, then forward."""
        self.calls += 1
        return self.ctx.call(tool, args)

    def declare_usage(self, **fields: Any) -> None:
        """Forward."""
        self.ctx.declare_usage(**fields)


def exceed_turns(script: Script, turns: int) -> Script:
    """A mistake: the script's work, reported as one model turn more than ``turns``."""

    def mistaken(ctx: ScriptContext) -> str:
        message = script(ctx)
        ctx.declare_usage(turns=turns + 1, requests=turns + 1)
        return message

    return mistaken


def exceed_tool_calls(script: Script, budget: int, filler: tuple[str, dict[str, Any]]) -> Script:
    """A mistake: the script's work, then harmless ``filler`` calls until past ``budget``."""

    def mistaken(ctx: ScriptContext) -> str:
        counter = CallCounter(ctx)
        message = script(counter)  # type: ignore[arg-type]
        while counter.calls <= budget:
            counter.call(*filler)
        return message

    return mistaken

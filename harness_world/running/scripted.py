"""Scripted attempts: oracles, hand mutants and replayed call lists, all run as ordinary attempts.

There is one way to run an attempt: an `Attempt`. A script sees it through a `ScriptContext`
(the instruction, tool calls, declared usage: nothing of the world's rows), and a plain list of
calls is recorded by `record_calls`. Oracles, mutants, the coverage gate, precheck, imported
gold solutions and regrades all go through these two helpers, so every path records the same
thing for the same calls.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final, Literal

import attrs

from harness_world.engine.calls import Observation
from harness_world.engine.world import World
from harness_world.errors import HarnessWorldError
from harness_world.evidence.record import Outcome, Record, Usage
from harness_world.grading.task import Task
from harness_world.running.attempt import Attempt, AttemptEnded, AttemptLimits

__all__ = [
    "TRANSIENT_ERRORS",
    "FailurePolicy",
    "Script",
    "ScriptContext",
    "exceed_tool_calls",
    "exceed_turns",
    "follow_pages",
    "record_calls",
    "run_script",
]


@attrs.define(slots=True)
class ScriptContext:
    """What a scripted attempt sees: the instruction and a way to call tools.

    Scripts find their targets through tools, exactly as an agent must: the context gives no
    access to the world's rows. A script may declare the usage it stands for (a mutant that
    simulates an agent taking too many turns); the record carries it like any agent's.
    """

    _attempt: Attempt

    @property
    def instruction(self) -> str:
        """The task's instruction."""
        return self._attempt.instruction

    @property
    def calls_made(self) -> int:
        """Tool calls made so far in this attempt."""
        return self._attempt.session.call_count

    def call(self, tool: str, args: dict[str, Any] | None = None) -> Observation:
        """Call a tool and return its observation (ends the attempt past its budgets)."""
        return self._attempt.call(tool, args)

    def declare_usage(self, **fields: Any) -> None:
        """Set usage fields (turns, requests, input_tokens, output_tokens, cost, ...)."""
        self._attempt.declare_usage(**fields)


Script = Callable[[ScriptContext], str]
"""A scripted attempt: calls tools through the context and returns the final message."""


def perform_script(script: Script, attempt: Attempt) -> Record:
    """Run a script on an attempt and seal the record.

    A budget that ends the attempt is its outcome; an exception from the script is outcome
    ``error`` with its text (a script's defect is this attempt's outcome, never a crash).
    """
    message = ""
    try:
        message = script(ScriptContext(attempt))
    except AttemptEnded:
        pass
    except Exception as exc:
        attempt.fail(f"{type(exc).__name__}: {exc}")
    return attempt.finish(message if isinstance(message, str) else str(message))


def run_script(
    world: World,
    task: Task,
    script: Script,
    *,
    seed: int = 0,
    sample: int = 0,
    revision: str = "",
    limits: AttemptLimits | None = None,
) -> Record:
    """Run a script as one attempt.

    Args:
        world: The start world.
        task: The task attempted.
        script: The script.
        seed: The session seed.
        sample: The sample index written into the record.
        revision: The run revision written into the record.
        limits: Budgets to enforce. By default none: the coverage gate needs the evidence of
            over-budget work so that the checker, not the attempt, grades the budget.
    """
    attempt = Attempt(
        world, task, seed=seed, sample=sample, revision=revision, limits=limits or AttemptLimits()
    )
    return perform_script(script, attempt)


def record_calls(
    world: World,
    task: Task,
    calls: Sequence[tuple[str, Any]],
    *,
    final_message: str = "",
    usage: Usage | None = None,
    outcome: Outcome | None = None,
    seed: int = 0,
    sample: int = 0,
) -> Record:
    """Execute a list of (tool, args) as one attempt (no budgets enforced) and seal it.

    Args:
        world: The start world.
        task: The task the calls attempt.
        calls: The calls, in order.
        final_message: The final message to record.
        usage: Usage to record (e.g. an oracle's, for its mutants).
        outcome: How the run these calls come from ended (default: completed).
        seed: The session seed.
        sample: The sample index (e.g. another harness's trial number).
    """
    attempt = Attempt(world, task, seed=seed, sample=sample, limits=AttemptLimits())
    for tool, args in calls:
        attempt.call(tool, args)
    if usage is not None:
        attempt.declare_usage(**{f: getattr(usage, f) for f in usage.__struct_fields__})
    if outcome is not None:
        attempt.end(outcome)
    return attempt.finish(final_message)


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
        message = script(ctx)
        while ctx.calls_made <= budget:
            ctx.call(*filler)
        return message

    return mistaken


TRANSIENT_ERRORS: Final = ("timeout", "unavailable", "rate_limited")
"""Errors a provider gives for a call it may answer otherwise next time (faults)."""
MAX_RESENDS: Final = 5
"""How many times ``naive-retry`` sends a call again before handing the error on."""


class _Stopped(HarnessWorldError):
    """A failure policy stopped the attempt at an error: a safe stop, not a defect.

    `FailurePolicy` catches it itself; it never reaches the policy's caller.
    """


@attrs.define(slots=True)
class _PolicyContext(ScriptContext):
    """A script's context under a failure policy (see `FailurePolicy`)."""

    policy: Literal["naive-retry", "give-up"] = "naive-retry"

    def call(self, tool: str, args: dict[str, Any] | None = None) -> Observation:
        """Call a tool; on a transient error, send it again at once, or stop."""
        obs = ScriptContext.call(self, tool, args)
        sent = 1
        while not obs.ok and obs.error is not None and obs.error.kind in TRANSIENT_ERRORS:
            if self.policy == "give-up":
                raise _Stopped(f"{tool}: {obs.error.kind}")
            if sent > MAX_RESENDS:
                break
            obs = ScriptContext.call(self, tool, args)
            sent += 1
        return obs


@attrs.frozen(slots=True)
class FailurePolicy:
    """A correct script run under a reference failure policy, as a script.

    ``naive-retry`` sends a call that met a transient error (`TRANSIENT_ERRORS`) again at
    once, unchanged, without looking first (the harness "retry" that repeats a committed write
    whose response was lost); ``give-up`` stops at the first such error and says so (a safe
    stop). The script sees only the final observation, so everywhere else it behaves as
    written. A frozen class rather than a closure, so ``run --workers N`` can pickle it.

    Attributes:
        script: The correct script (a world's oracle route).
        policy: ``naive-retry`` or ``give-up``.
    """

    script: Script
    policy: Literal["naive-retry", "give-up"]

    @property
    def __name__(self) -> str:
        """The script's name in reports: ``<script>__<policy>``."""
        name = getattr(self.script, "__name__", "script")
        return f"{name}__{self.policy.replace('-', '_')}"

    def __call__(self, ctx: ScriptContext) -> str:
        """Run the script under the policy; a stop is a final message, never an exception."""
        try:
            return self.script(_PolicyContext(ctx._attempt, self.policy))
        except _Stopped as stop:
            return f"Stopped safely without finishing: {stop}."

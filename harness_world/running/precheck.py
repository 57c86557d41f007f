"""Feasibility before spending: run each task's oracle and compare its work with the limits."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import msgspec

from harness_world.engine.world import load_world, locate_world
from harness_world.grading.task import Task
from harness_world.grading.worlds import WorldChoice
from harness_world.running.attempt import AttemptLimits
from harness_world.running.oracles import load_oracles
from harness_world.running.scripted import Script, run_script

__all__ = ["Feasibility", "precheck"]

SLACK = 1.25
"""A limit below this multiple of the oracle's call count leaves no room for any detour."""


Fit = Literal["ok", "warn", "refuse"]
"""A precheck verdict: fits, fits only a short path (warn), or cannot fit (refuse)."""


class Feasibility(msgspec.Struct, frozen=True, kw_only=True):
    """Whether a task can be done within its limits, judged by its oracle.

    Attributes:
        task_id: The task.
        verdict: ``ok``, ``warn`` (feasible only on a path about as short as the oracle's, or
            unknown without an oracle) or ``refuse`` (the limits are below the minimum number of
            writes: no agent can succeed, so no model request may be made).
        oracle_calls: Tool calls the oracle made (null without an oracle).
        oracle_writes: Successful write calls the oracle made (the minimum any solution needs).
        tool_calls: The tool-call limit in force.
        turns: The turn limit in force.
        message: The reason, in words.
    """

    task_id: str
    verdict: Fit
    oracle_calls: int | None
    oracle_writes: int | None
    tool_calls: int | None
    turns: int | None
    message: str


def _judge(limit: AttemptLimits, calls: int, writes: int) -> tuple[Fit, str]:
    """The verdict on limits against an oracle that made ``calls`` calls, ``writes`` writes."""
    verdict: Fit = "ok"
    notes: list[str] = []
    if limit.tool_calls is not None and limit.tool_calls < writes:
        verdict = "refuse"
        notes.append(
            f"tool-call limit {limit.tool_calls} is below the {writes} writes the task needs"
        )
    elif limit.tool_calls is not None and limit.tool_calls < calls * SLACK:
        verdict = "warn"
        notes.append(
            f"tool-call limit {limit.tool_calls} fits only a path about as short as "
            f"the oracle's ({calls} calls, {writes} writes)"
        )
    if limit.turns is not None and limit.turns < writes:
        if verdict == "ok":
            verdict = "warn"
        per_turn = -(-writes // max(limit.turns, 1))
        notes.append(
            f"turn limit {limit.turns} < {writes} writes: needs {per_turn}+ calls per turn"
        )
    return verdict, "; ".join(notes) or f"fits: oracle used {calls} calls, {writes} writes"


def _feasibility(
    task: Task, script: Script | None, limit: AttemptLimits, size: str, source: str
) -> Feasibility:
    if script is None:
        return Feasibility(
            task_id=task.id,
            verdict="warn",
            oracle_calls=None,
            oracle_writes=None,
            tool_calls=limit.tool_calls,
            turns=limit.turns,
            message="no oracle: feasibility unknown",
        )
    world = load_world(source, size=size)
    record = run_script(world, task, script)
    kinds = {t.name: t.kind for t in world.contract.tools}
    calls = len(record.calls)
    writes = sum(1 for c in record.calls if c.ok and kinds.get(c.tool) == "write")
    verdict, message = _judge(limit, calls, writes)
    return Feasibility(
        task_id=task.id,
        verdict=verdict,
        oracle_calls=calls,
        oracle_writes=writes,
        tool_calls=limit.tool_calls,
        turns=limit.turns,
        message=message,
    )


def precheck(
    tasks: Sequence[Task],
    *,
    size: str = "small",
    limits: Mapping[str, int | float | None] | None = None,
    oracles: Mapping[str, Script] | None = None,
    worlds: WorldChoice | None = None,
) -> list[Feasibility]:
    """Judge every task's limits against its oracle's calls and writes.

    Args:
        tasks: The tasks to check.
        size: The seed to run oracles on.
        limits: Overrides of the tasks' budgets.
        oracles: Oracle scripts by task id (default: each world's own oracles).
        worlds: Where the tasks' worlds live (default: the built-in worlds).
    """
    choice = worlds or WorldChoice()
    overrides = {k: v for k, v in (limits or {}).items() if v is not None}
    loaded: dict[str, dict[str, Script]] = {}
    out: list[Feasibility] = []
    for task in sorted(tasks, key=lambda t: t.id):
        if oracles is None and task.world not in loaded:
            place = choice.locations.get(task.world) or locate_world(task.world)
            loaded[task.world] = load_oracles(task.world, place.oracles)
        script = (oracles if oracles is not None else loaded[task.world]).get(task.id)
        limit = AttemptLimits.from_task(task.budgets, **overrides)
        out.append(_feasibility(task, script, limit, size, choice.source(task.world)))
    return out

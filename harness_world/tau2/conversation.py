"""Running τ² tasks end to end: an agent, a simulated user, our world, replay and grade.

`run_conversations` runs each imported task once as an `Attempt` carrying a simulated user
(and, in τ² observation mode, a `Tau2View`), seals the record, verifies it (replay, then
grade) and reports one `ConversationResult` per task.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import msgspec

from harness_world.engine.world import World
from harness_world.evidence.record import Record, save_record
from harness_world.grading.verify import verify
from harness_world.running.agents import Agent, drive
from harness_world.running.attempt import Attempt
from harness_world.running.user import AgentView, UserSimulator
from harness_world.tau2.gold import ImportedTask

__all__ = ["ConversationResult", "run_conversations"]


class ConversationResult(msgspec.Struct, frozen=True, kw_only=True):
    """One τ² task run end to end with a simulated user.

    Attributes:
        task_id: Our task id.
        user_turns: Exchanges with the user.
        user_stopped: Whether the user ended the conversation.
        calls: Tool calls made.
        outcome: How execution ended.
        evidence: Replay evidence.
        passed: Our grade (None when not graded).
        failed: Failed automated criteria.
        record: Where the record was saved (empty when not saved).
    """

    task_id: str
    user_turns: int
    user_stopped: bool
    calls: int
    outcome: str
    evidence: str
    passed: bool | None
    failed: list[str]
    record: str = ""


def run_conversations(
    world: World,
    tasks: Sequence[ImportedTask],
    agent_for: Callable[[ImportedTask], Agent],
    user_for: Callable[[ImportedTask], UserSimulator],
    *,
    view: AgentView | None = None,
    out: Path | None = None,
) -> list[tuple[ConversationResult, Record]]:
    """Run every task once with its agent and its simulated user; verify each record.

    Args:
        world: The world (τ²'s data).
        tasks: The imported tasks.
        agent_for: The agent for a task.
        user_for: The simulated user for a task (e.g. from its user scenario).
        view: What agents are shown (None: our tool schemas and observations).
        out: A folder to save each record in (``<task id>.json``), or None.
    """
    results = []
    for item in tasks:
        attempt = Attempt(world, item.task, user=user_for(item), view=view)
        record = drive(agent_for(item), attempt)
        saved = ""
        if out is not None:
            saved = str(save_record(record, out / f"{item.task.id}.json"))
        checked = verify(record, world=world, task=item.task)
        grade = checked.grade
        result = ConversationResult(
            task_id=item.task.id,
            user_turns=len(record.user_turns),
            user_stopped=bool(record.user_turns) and record.user_turns[-1].stop,
            calls=len(record.calls),
            outcome=record.outcome.status,
            evidence=checked.evidence,
            passed=None if grade is None else grade.passed,
            failed=[] if grade is None else grade.failed,
            record=saved,
        )
        results.append((result, record))
    return results

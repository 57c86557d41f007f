"""The checker: a pure function of (verified record, task, start world) to a grade.

It reads the record and the start state only: it never opens a session, calls a tool or asks a
model. The record is read into one trace view (`harness_world.grading.trace`), and every
criterion of the findings registry that applies to the task reads that view: state criteria
compare delta = diff(start, final) with the required set R and the allowed set A (R ⊆ delta
and delta ⊆ A, reported separately); trace criteria read the call log. A task with a policy
sheet gets its ``policy.*`` verdicts beside the grade (`Grade.policy`), never in ``passed``.
"""

from __future__ import annotations

from msgspec import UNSET

from harness_world.engine.world import World
from harness_world.evidence.record import Record
from harness_world.grading.criteria import CriterionRegistry
from harness_world.grading.grade import CriterionVerdict, Grade, RequiredItem
from harness_world.grading.rules import FINDINGS
from harness_world.grading.rules.state import required_items as _required_items
from harness_world.grading.task import Task
from harness_world.grading.trace import TraceView, trace_view

__all__ = ["CRITERIA", "grade", "grade_view", "required_items"]

CRITERIA: CriterionRegistry[TraceView] = FINDINGS.criteria
"""Every criterion the checker runs, in grading order: the ``grade`` and ``harness`` entries of
`harness_world.grading.rules.FINDINGS`."""


def grade_view(view: TraceView) -> Grade:
    """The grade of a trace view (see `grade`)."""
    task = view.task
    sections: dict[str, list[CriterionVerdict]] = {"grade": [], "harness": [], "policy": []}
    for criterion in CRITERIA.for_task(task):
        sections[criterion.section] += criterion.check(view)
    verdicts = sections["grade"]
    automated = [v for v in verdicts if v.kind != "prose"]
    passed = bool(automated) and all(v.status == "passed" for v in automated)
    return Grade(
        task_id=task.id,
        task_hash=task.hash,
        passed=passed,
        verdicts=verdicts,
        harness=sections["harness"],
        policy=UNSET if task.policy is None else sections["policy"],
    )


def grade(record: Record, task: Task, world: World) -> Grade:
    """Grade a record (whose evidence is verified) against a task on the start world.

    Pure: the same inputs always give the same grade; nothing is written, no tool is called.
    Every verdict comes from one criterion of `CRITERIA` that applies to the task; a grade
    passes when every automated (non-prose) verdict of the agent grade passed.
    """
    return grade_view(trace_view(record, task, world))


def required_items(record: Record, task: Task, world: World) -> list[RequiredItem]:
    """The required set R member by member, each with whether Δ holds it.

    Pure, like `grade`; ``state.required`` passes exactly when every item is met (see
    `harness_world.grading.rules.state.required_items`).
    """
    return _required_items(trace_view(record, task, world))

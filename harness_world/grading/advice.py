"""Advisory observations: what a verified trace shows, stored beside the grade, never changing it.

A grade names the criterion that failed; an advisory names a pattern in the trace that often
explains why (a page never followed, a write to a row never read, a question left at the end).
Each advisory is an entry of the findings registry (`harness_world.grading.rules.FINDINGS`), a
pure function of the record's trace view, like every criterion; it reads the task's targets,
requirements and allowances but never decides pass or fail, and a passing attempt can carry
one. Call `advise` on verified evidence only: on an unverified record the trace is not
evidence of anything.
"""

from __future__ import annotations

from harness_world.engine.world import World
from harness_world.evidence.record import Record
from harness_world.grading.criteria import Advisory
from harness_world.grading.rules import FINDINGS
from harness_world.grading.task import Task
from harness_world.grading.trace import TraceView, trace_view

__all__ = ["ADVISORIES", "Advisory", "advise", "advise_view"]

ADVISORIES: dict[str, str] = {a.name: a.definition for a in FINDINGS.advisories}
"""Every advisory's name and one-line definition, in the order `advise` reports them."""


def advise_view(view: TraceView) -> list[Advisory]:
    """Every advisory a trace view carries, in `ADVISORIES` order (see `advise`)."""
    return [a for a in (entry.rule(view) for entry in FINDINGS.advisories) if a]


def advise(record: Record, task: Task, world: World) -> list[Advisory]:
    """Every advisory observation a verified record carries, in `ADVISORIES` order.

    Args:
        record: A record whose evidence is verified (replayed without difference): the caller
            checks that; on unverified evidence the result means nothing.
        task: The task the record was made for.
        world: The start world (targets are derived from it, as the checker derives them).

    Returns:
        The advisories found; an empty list when the trace shows none. Never a grade.
    """
    return advise_view(trace_view(record, task, world))

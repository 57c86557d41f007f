"""A grade: one verdict per criterion, kept apart from outcome and evidence."""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = ["CriterionKind", "CriterionVerdict", "Grade", "VerdictStatus"]

CriterionKind = Literal["state", "trace", "budget", "prose"]
VerdictStatus = Literal["passed", "failed", "not_reviewed"]


class CriterionVerdict(msgspec.Struct, frozen=True, kw_only=True):
    """The verdict on one criterion.

    Attributes:
        id: The criterion's id, e.g. ``state.required`` or ``budget.tool_calls``.
        kind: ``state``, ``trace``, ``budget`` or ``prose`` (open to new layers).
        status: ``passed``, ``failed``, or ``not_reviewed`` (prose criteria, until a person
            reviews them; never decided by a model).
        detail: What was found, naming the keys or calls concerned.
    """

    id: str
    kind: CriterionKind
    status: VerdictStatus
    detail: str = ""


class Grade(msgspec.Struct, frozen=True, kw_only=True):
    """The grade of one verified record against one task.

    Attributes:
        task_id: The task graded against.
        task_hash: The hash of that task's definition.
        passed: True only when every automated (non-prose) criterion passed.
        verdicts: One verdict per criterion, in the task's order.
    """

    task_id: str
    task_hash: str
    passed: bool
    verdicts: list[CriterionVerdict]

    @property
    def failed(self) -> list[str]:
        """Ids of the automated criteria that failed."""
        return [v.id for v in self.verdicts if v.status == "failed"]

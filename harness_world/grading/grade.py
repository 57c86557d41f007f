"""A grade: one verdict per criterion, kept apart from outcome and evidence."""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = ["CriterionKind", "CriterionVerdict", "Grade", "RequiredItem", "VerdictStatus"]

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
        harness: The harness-layer verdicts (``harness.*``: retries, keys, reconciling, acting
            on unverified output), read from the call log. Shown beside the grade everywhere;
            ``passed`` is the agent grade and does not include them.
    """

    task_id: str
    task_hash: str
    passed: bool
    verdicts: list[CriterionVerdict]
    harness: list[CriterionVerdict] = []

    @property
    def harness_failed(self) -> list[str]:
        """The failed harness-layer criteria, each ``id: detail``."""
        return [f"{v.id}: {v.detail}" for v in self.harness if v.status == "failed"]

    @property
    def failed(self) -> list[str]:
        """Ids of the automated criteria that failed."""
        return [v.id for v in self.verdicts if v.status == "failed"]

    @property
    def not_reviewed(self) -> list[str]:
        """Ids of the prose criteria that stand open until a person reviews them."""
        return [v.id for v in self.verdicts if v.status == "not_reviewed"]

    def reasons(self, width: int = 120) -> list[str]:
        """One short line per failed criterion, ``id: detail``, each cut to ``width`` characters.

        The same text the JSON carries in each verdict's ``detail``, shortened for tables and
        result lines, so a failure is explained wherever it is seen.
        """
        lines = []
        for v in self.verdicts:
            if v.status != "failed":
                continue
            line = f"{v.id}: {v.detail}" if v.detail else v.id
            lines.append(line if len(line) <= width else line[: width - 1] + "…")
        return lines


class RequiredItem(msgspec.Struct, frozen=True, kw_only=True):
    """One required change of the set R and whether the final state holds it.

    ``state.required`` decides R ⊆ Δ as a whole; these are its members, one per requirement and
    target row (an unlinked ``create`` counts once), so partial credit can count |R ∩ Δ|.

    Attributes:
        requirement: The requirement's index in the task's ``require`` list.
        kind: ``set``, ``create``, ``delete`` or ``row``.
        where: The row the change is required on (``entity:key``), or the entity of an unlinked
            ``create``.
        met: Whether Δ holds the change.
        detail: What is missing, as ``state.required`` words it (empty when met).
    """

    requirement: int
    kind: str
    where: str
    met: bool
    detail: str = ""

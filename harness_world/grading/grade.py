"""A grade: one verdict per criterion, kept apart from outcome and evidence."""

from __future__ import annotations

from typing import Literal

import msgspec
from msgspec import UNSET, UnsetType

__all__ = [
    "CriterionKind",
    "CriterionVerdict",
    "Grade",
    "GradeState",
    "PolicyCheck",
    "RequiredItem",
    "VerdictStatus",
]

CriterionKind = Literal["state", "trace", "budget", "prose"]
VerdictStatus = Literal["passed", "failed", "not_reviewed"]
GradeState = Literal["passed", "passed_automated", "failed"]
"""A grade's three states: ``passed`` (every criterion passed), ``passed_automated`` (every
automated criterion passed and prose criteria stand unreviewed: pending, not a pass) and
``failed`` (an automated criterion failed)."""


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


class PolicyCheck(msgspec.Struct, frozen=True, kw_only=True):
    """A record's policy sheet as the run's tables show it (`Grade.policy`, summed up).

    Attributes:
        checked: How many rules of the sheet were judged.
        failed: The broken ones, each ``id: detail``.
    """

    checked: int
    failed: list[str] = []


class Grade(msgspec.Struct, frozen=True, kw_only=True):
    """The grade of one verified record against one task.

    Attributes:
        task_id: The task graded against.
        task_hash: The hash of that task's definition.
        passed: True only when every automated (non-prose) criterion passed. Unreviewed
            prose may stand beside it: `state` is the grade a rate counts.
        verdicts: One verdict per criterion, in the task's order.
        harness: The harness-layer verdicts (``harness.*``: retries, keys, reconciling, acting
            on unverified output), read from the call log. Shown beside the grade everywhere;
            ``passed`` is the agent grade and does not include them.
        policy: The task's policy sheet (``policy.*``: authenticated before account data,
            an explicit yes before each consequential write, no needless hand-off), beside
            the grade: ``passed`` does not include them and neither layer scores them. Unset
            (left out of JSON) for a task without a sheet.
    """

    task_id: str
    task_hash: str
    passed: bool
    verdicts: list[CriterionVerdict]
    harness: list[CriterionVerdict] = []
    policy: list[CriterionVerdict] | UnsetType = UNSET

    @property
    def policy_verdicts(self) -> list[CriterionVerdict]:
        """The policy sheet's verdicts (empty for a task without a sheet)."""
        return [] if isinstance(self.policy, UnsetType) else self.policy

    @property
    def policy_failed(self) -> list[str]:
        """The broken rules of the policy sheet, each ``id: detail``."""
        return [f"{v.id}: {v.detail}" for v in self.policy_verdicts if v.status == "failed"]

    def policy_check(self) -> PolicyCheck | UnsetType:
        """The sheet summed up for a table (unset for a task without a sheet)."""
        if isinstance(self.policy, UnsetType):
            return UNSET
        return PolicyCheck(checked=len(self.policy), failed=self.policy_failed)

    @property
    def pending(self) -> bool:
        """Whether every automated criterion passed and prose criteria stand unreviewed."""
        return self.passed and any(v.status == "not_reviewed" for v in self.verdicts)

    @property
    def state(self) -> GradeState:
        """``passed``, ``passed_automated`` (pending review: not a pass) or ``failed``."""
        if not self.passed:
            return "failed"
        return "passed_automated" if self.pending else "passed"

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

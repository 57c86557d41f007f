"""Budget and prose criteria: usage against the task's limits, and what only a person decides."""

from __future__ import annotations

from harness_world.grading.criteria import Check
from harness_world.grading.grade import CriterionVerdict
from harness_world.grading.rules.common import taxon
from harness_world.grading.trace import TraceView

__all__ = ["BUDGET", "PROSE"]


def _budgets(view: TraceView) -> list[CriterionVerdict]:
    """One verdict per declared budget; tool calls are recounted from the call log."""
    budgets = view.task.budgets
    usage = view.record.usage
    measured: dict[str, tuple[float | int | None, float | int]] = {
        "turns": (budgets.turns, usage.turns),
        "tool_calls": (budgets.tool_calls, len(view.record.calls)),
        "context_tokens": (budgets.context_tokens, usage.input_tokens),
        "cost": (budgets.cost, usage.cost + usage.uncertain_cost),
    }
    out = []
    for name, (limit, used) in measured.items():
        if limit is None:
            continue
        out.append(
            CriterionVerdict(
                id=f"budget.{name}",
                kind="budget",
                status="passed" if used <= limit else "failed",
                detail=f"used {used} of {limit}",
            )
        )
    return out


def _prose(view: TraceView) -> list[CriterionVerdict]:
    return [
        CriterionVerdict(id=f"prose.{i + 1}", kind="prose", status="not_reviewed", detail=text)
        for i, text in enumerate(view.task.prose)
    ]


BUDGET = Check[TraceView](
    name="budget.*",
    verdict="budget",
    layer="harness",
    definition="usage exceeded the budget (tool calls are recounted from the call log)",
    run=_budgets,
    taxon=taxon("Lifecycle", "budget"),
    member_taxa={"budget.context_tokens": taxon("Context", "bounding")},
)
"""``budget.<name>``: one verdict per budget the task declares."""

PROSE = Check[TraceView](
    name="prose.*",
    verdict="prose",
    layer="agent",
    definition="never: always `not_reviewed` until a person reviews it",
    run=_prose,
    taxon=taxon("Verification", "human_review"),
    when=lambda task: bool(task.prose),
)
"""``prose.<n>``: one ``not_reviewed`` verdict per prose criterion."""

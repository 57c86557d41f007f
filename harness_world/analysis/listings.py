"""The listing commands as text: ``tasks`` and the feasibility ``precheck`` (and its refusals)."""

from __future__ import annotations

from collections.abc import Sequence

from harness_world.analysis.tables import render_table
from harness_world.grading.listing import TaskSummary
from harness_world.running.precheck import Feasibility

__all__ = ["render_precheck", "render_refusals", "render_tasks"]


def render_precheck(results: Sequence[Feasibility]) -> str:
    """``precheck``'s table: each task's verdict, its oracle's calls and writes, the limits."""
    refused = [r for r in results if r.verdict == "refuse"]
    lines: list[str] = []
    rows = [
        [
            r.task_id,
            r.verdict,
            str(r.oracle_calls),
            str(r.oracle_writes),
            str(r.tool_calls),
            str(r.turns),
            r.message,
        ]
        for r in results
    ]
    lines.append(
        render_table(
            ["task", "verdict", "calls", "writes", "call limit", "turn limit", "why"], rows, 90
        )
    )
    lines.append(
        f"\n{len(results)} task(s): {len(refused)} refused, "
        f"{sum(r.verdict == 'warn' for r in results)} warned"
    )
    return "".join(line + "\n" for line in lines)


def render_refusals(results: Sequence[Feasibility]) -> str:
    """What ``run`` says when its precheck refuses: each refused task, then why nothing ran.

    Empty when no task is refused.
    """
    refused = [f"refused: {f.task_id}: {f.message}\n" for f in results if f.verdict == "refuse"]
    if not refused:
        return ""
    return "".join(refused) + "error: infeasible setup; no attempt was made (see `precheck`)\n"


def _budget_text(budgets: dict[str, int | float]) -> str:
    short = {"turns": "turns", "tool_calls": "calls", "context_tokens": "tokens", "cost": "$"}
    return ", ".join(f"${v}" if n == "cost" else f"{v} {short[n]}" for n, v in budgets.items())


def render_tasks(summaries: Sequence[TaskSummary]) -> str:
    """``tasks``' table: each task's family, budgets and the criteria its grade holds."""
    lines: list[str] = []
    rows = [
        [
            s.id,
            s.family,
            _budget_text(s.budgets),
            ", ".join(c.removeprefix("trace.") for c in s.criteria if not c.startswith("budget."))
            + (f" ({s.answer})" if s.answer else ""),
        ]
        for s in summaries
    ]
    lines.append(render_table(["task", "family", "budgets", "criteria"], rows, 110))
    lines.append(f"\n{len(summaries)} task(s)")
    return "".join(line + "\n" for line in lines)

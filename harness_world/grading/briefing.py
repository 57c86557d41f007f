"""What an agent is told: the task's instruction, its budgets, and how an answer is read.

One function, used by every driver (`harness_world.running.Attempt.instruction`, scripted
agents and the model agents; ``play`` and ``mcp`` with `TOOL_BUDGETS`), and by the checker,
which does not count numbers the agent was told (a budget of 40 tool calls) as candidates of its
answer.

An agent is told only the budgets its driver counts: a driver that sees tool calls and nothing
else (the ``play`` bridge, the MCP server) cannot count model turns, tokens or cost, so it does
not promise them.
"""

from __future__ import annotations

from collections.abc import Collection

from harness_world.grading.task import Answer, Budgets, Task

__all__ = ["TOOL_BUDGETS", "answer_hint", "briefing", "budget_line"]

TOOL_BUDGETS = frozenset({"tool_calls"})
"""The budgets a driver that sees only tool calls can count (``play``, the MCP server)."""

_HINTS = {
    "count": "state the count as the only number in your final message (a total or any other "
    "number beside it reads as a second answer)",
    "ids": "name every id in your final message, each once, written exactly as the tools "
    "return it (ids are case-sensitive)",
    "amount": "state the amount as the only number in your final message",
    "date": "state the date (YYYY-MM-DD) as the only date in your final message",
    "yes_no": "begin your final message with yes or no",
}
_SHAPES = {
    "count": "<integer>",
    "ids": '["<id>", ...]',
    "amount": "<number>",
    "date": '"YYYY-MM-DD"',
    "yes_no": "true or false",
}
_HEDGED = (
    'a hedged answer (several candidates, a range, either/or, "about", "probably", "could not", '
    '"my guess") fails, and so does an answer the message negates or takes back'
)
_HEDGED_IDS = (
    'a hedged list (cut short with "etc." or "...", either/or, "possibly", "could not", '
    '"my guess") fails, and so does an id the message negates'
)
_BESIDE = {
    "count": "the rest of the message states no other number",
    "ids": "the rest of the message names no other id",
    "amount": "the rest of the message states no other number",
    "date": "the rest of the message states no other date",
    "yes_no": "the rest of the message does not answer otherwise",
}


def budget_line(budgets: Budgets, counted: Collection[str] | None = None) -> str:
    """``Budgets: at most 8 tool calls and 8 model turns.`` (empty when there are none).

    Args:
        budgets: The task's budgets.
        counted: The budgets the driver counts, by field name (None: every one); the others
            are left out, since nothing would enforce them.
    """
    stated = {
        "tool_calls": (budgets.tool_calls, "{} tool calls"),
        "turns": (budgets.turns, "{} model turns"),
        "context_tokens": (budgets.context_tokens, "{} prompt tokens"),
        "cost": (budgets.cost, "${} of model cost"),
    }
    parts = [
        shape.format(limit)
        for name, (limit, shape) in stated.items()
        if limit is not None and (counted is None or name in counted)
    ]
    if not parts:
        return ""
    listed = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]
    return f"Budgets: at most {listed}; the attempt ends when a budget is spent."


def answer_hint(answer: Answer) -> str:
    """How the answer is read, in one sentence (what counts as a hedge, for its type)."""
    shape = _SHAPES[answer.kind]
    hedged = _HEDGED_IDS if answer.kind == "ids" else _HEDGED
    line = f'end your final message with the line {{"answer": {shape}}}'
    if answer.read == "structured":
        return f"Answer: {line}; {_BESIDE[answer.kind]}; {hedged}."
    return f"Answer: {_HINTS[answer.kind]}, or {line} ({_BESIDE[answer.kind]}); {hedged}."


def briefing(task: Task, counted: Collection[str] | None = None) -> str:
    """The instruction an agent is given: the task's text, then its budgets and answer rule.

    Args:
        task: The task.
        counted: The budgets the agent's driver counts (None: every one); see `budget_line`.
    """
    lines = [task.instruction.strip()]
    extra = [budget_line(task.budgets, counted)]
    if task.answer is not None:
        extra.append(answer_hint(task.answer))
    extra = [line for line in extra if line]
    if extra:
        lines.append("\n".join(extra))
    return "\n\n".join(lines)

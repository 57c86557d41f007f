"""What an agent is told: the task's instruction, its budgets, and how an answer is read.

One function, used by every driver (`harness_world.running.Attempt.instruction`, hence ``play``,
scripted agents and the OpenAI agent), and by the checker, which does not count numbers the
agent was told (a budget of 40 tool calls) as candidates of its answer.
"""

from __future__ import annotations

from harness_world.grading.task import Answer, Budgets, Task

__all__ = ["answer_hint", "briefing", "budget_line"]

_HINTS = {
    "count": "state the count as the only number in your final message",
    "ids": "name every id in your final message, each once, without hedging",
    "amount": "state the amount as the only amount in your final message",
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


def budget_line(budgets: Budgets) -> str:
    """``Budgets: at most 8 tool calls and 8 model turns.`` (empty when there are none)."""
    parts = []
    if budgets.tool_calls is not None:
        parts.append(f"{budgets.tool_calls} tool calls")
    if budgets.turns is not None:
        parts.append(f"{budgets.turns} model turns")
    if budgets.context_tokens is not None:
        parts.append(f"{budgets.context_tokens} prompt tokens")
    if budgets.cost is not None:
        parts.append(f"${budgets.cost} of model cost")
    if not parts:
        return ""
    listed = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]
    return f"Budgets: at most {listed}; the attempt ends when a budget is spent."


def answer_hint(answer: Answer) -> str:
    """How the answer is read, in one sentence."""
    shape = _SHAPES[answer.kind]
    if answer.read == "structured":
        return f'Answer: end your final message with the line {{"answer": {shape}}}.'
    return (
        f"Answer: {_HINTS[answer.kind]}, or end it with the line "
        f'{{"answer": {shape}}}; a hedged answer (a list, a range, either/or, "about") fails.'
    )


def briefing(task: Task) -> str:
    """The instruction an agent is given: the task's text, then its budgets and answer rule."""
    lines = [task.instruction.strip()]
    extra = [budget_line(task.budgets)]
    if task.answer is not None:
        extra.append(answer_hint(task.answer))
    extra = [line for line in extra if line]
    if extra:
        lines.append("\n".join(extra))
    return "\n\n".join(lines)

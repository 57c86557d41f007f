"""The JSON-lines bridge: one attempt driven by any program over a pair of text streams.

`serve` writes ``{"instruction": ..., "tools": [...]}``, then answers one JSON object per line
it reads: ``{"tool": NAME, "args": {...}}`` calls a tool (answer: the observation),
``{"user": TEXT}`` talks to the attempt's simulated user, ``{"finish": "final message"}`` ends
it. Every answer carries ``"ok"`` and ``"seq"`` (null when no tool ran). The record is sealed
and saved whatever happens to the conversation (a bad line, input ending early, a failure of
the bridge itself), so work done is never lost; the last line is its outcome, evidence and
grade.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TextIO

import msgspec

from harness_world.errors import HarnessWorldError
from harness_world.evidence.record import Record, save_record
from harness_world.grading.briefing import TOOL_BUDGETS, briefing
from harness_world.grading.verify import verify
from harness_world.running.attempt import Attempt, AttemptEnded

__all__ = ["RecordNotSaved", "serve"]


class RecordNotSaved(HarnessWorldError):
    """The bridged attempt's record could not be saved where the caller asked.

    Attributes:
        path: Where it was to be saved.
        reason: Why it was not (the operating system's words).
    """

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def serve(
    attempt: Attempt, inp: TextIO, out: TextIO, record_path: Path, fmt: str = "json-schema"
) -> Record:
    """Run the JSON-lines protocol until ``finish`` or end of input; save and verify the record.

    Args:
        attempt: The attempt to drive.
        inp: Where requests come from, one JSON object per line.
        out: Where answers go, one JSON object per line.
        record_path: Where the record is saved.
        fmt: The shape of the tool list in the first line (``json-schema``, ``openai``,
            ``anthropic`` or ``mcp``).

    Returns:
        The sealed record, saved at ``record_path``.

    Raises:
        RecordNotSaved: when the record cannot be written (no result line is sent then).
    """
    # The bridge sees tool calls, never the program's model turns, tokens or cost: it states
    # only the budgets it counts.
    instruction = briefing(attempt.task, TOOL_BUDGETS)
    _send(out, {"instruction": instruction, "tools": attempt.tool_schemas(fmt)})  # type: ignore[arg-type]
    try:
        final = _converse(attempt, inp, out)
    except Exception as exc:  # the bridge itself failed: keep what was done
        attempt.interrupt(f"bridge failed: {type(exc).__name__}: {exc}")
        final = ""
    record = attempt.finish(final)
    try:
        save_record(record, record_path)
    except OSError as exc:
        raise RecordNotSaved(record_path, str(exc.strerror or exc)) from None
    _send(out, _result_line(record, attempt, record_path))
    return record


def _send(out: TextIO, value: dict[str, Any]) -> None:
    out.write(json.dumps(value, sort_keys=True) + "\n")
    out.flush()


def _bad(number: int, message: str) -> dict[str, Any]:
    return {
        "ok": False,
        "seq": None,
        "error": {"kind": "bad_request", "message": f"line {number}: {message}"},
    }


def _parse(line: str, number: int) -> dict[str, Any] | str:
    """The request on one line, or why it is a bad request."""
    if not line.strip():
        return "empty line (send a JSON object)"
    try:
        message = json.loads(line, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        return f"not JSON: {str(exc)[:200]}"
    if not isinstance(message, dict):
        return "expected a JSON object"
    if "tool" in message and "finish" in message:
        return 'send either "tool" or "finish", not both'
    if "finish" in message and not isinstance(message["finish"], str):
        return '"finish" must be a string (the final message)'
    if not any(k in message for k in ("tool", "finish", "user")):
        return 'expected "tool", "finish" or "user"'
    return message


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _ended(ended: AttemptEnded) -> dict[str, Any]:
    outcome = ended.outcome
    return {"ok": False, "seq": None, "ended": {"status": outcome.status, "reason": outcome.reason}}


def _converse(attempt: Attempt, inp: TextIO, out: TextIO) -> str:
    """Answer lines until ``finish`` (its message is returned) or the end of input."""
    for number, line in enumerate(inp, start=1):
        message = _parse(line, number)
        if isinstance(message, str):
            _send(out, _bad(number, message))
            continue
        if "finish" in message:
            return str(message["finish"])
        if "user" in message:
            _send(out, _to_user(attempt, message["user"], number))
            continue
        try:
            observation = attempt.call(message["tool"], message.get("args", {}))
        except AttemptEnded as ended:
            _send(out, _ended(ended))
            return ""
        _send(out, {"seq": observation.seq, **observation.to_message()})
    attempt.interrupt("input ended without finish")
    return ""


def _result_line(record: Record, attempt: Attempt, record_path: Path) -> dict[str, Any]:
    result = verify(record, world=attempt.world, task=attempt.task)
    graded = result.grade
    return {
        "ok": True,
        "seq": None,
        "record": str(record_path),
        "outcome": record.outcome.status,
        "evidence": result.evidence,
        "grade": None if graded is None else ("passed" if graded.passed else "failed"),
        "failed": graded.failed if graded is not None else [],
        "reasons": graded.reasons() if graded is not None else [],
        "not_reviewed": graded.not_reviewed if graded is not None else [],
        "harness": {
            "checked": len(graded.harness) if graded is not None else 0,
            "failed": graded.harness_failed if graded is not None else [],
        },
        "user_turns": [msgspec.to_builtins(t) for t in record.user_turns],
    }


def _to_user(attempt: Attempt, text: object, number: int) -> dict[str, Any]:
    """A ``{"user": TEXT}`` line: the simulated user's answer, or why there is none."""
    if attempt.user is None or attempt.user_stopped:
        why = "this attempt has no simulated user" if attempt.user is None else "the user stopped"
        return _bad(number, why)
    try:
        answer = attempt.message_user(str(text))
    except AttemptEnded as ended:
        return _ended(ended)
    return {"ok": True, "seq": None, "user": answer, "stop": attempt.user_stopped}

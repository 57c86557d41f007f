"""``play``: drive one attempt from any program over JSON lines on stdin and stdout."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

import msgspec

from harness_world.cli._paths import record_path_problem
from harness_world.engine.world import WorldError
from harness_world.evidence.record import Record, save_record
from harness_world.grading.task import TaskError
from harness_world.grading.verify import verify
from harness_world.grading.worlds import one_world
from harness_world.running.attempt import Attempt, AttemptEnded

__all__ = ["register", "serve"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``play`` command."""
    parser = sub.add_parser(
        "play",
        help="drive one attempt over JSON lines (stdio bridge for any language)",
        description=(
            "Reads one JSON object per line on stdin and answers one per line on stdout (every "
            'answer to a line carries "ok" and "seq", null when no tool ran). '
            'The first line out is {"instruction": ..., "tools": [...]}. Send {"tool": NAME, '
            '"args": {...}} to call a tool (answer: the observation), or {"finish": "final '
            'message"} to end (answer: the record path, outcome, evidence, grade, one reason '
            "per failed criterion and the prose criteria not reviewed). End of input without "
            "finish records the attempt as interrupted; the record is saved in every case. "
            'With a simulated user, {"user": TEXT} sends the user a message (answer: '
            '{"user": reply, "stop": bool}).'
        ),
    )
    parser.add_argument(
        "--world", required=True, help="a built-in world (e.g. helpdesk) or a world folder"
    )
    parser.add_argument("--task", required=True, help="task id, e.g. helpdesk.reply_and_solve")
    parser.add_argument(
        "--tasks", type=Path, metavar="FOLDER", help="task folder (default: the world's own)"
    )
    parser.add_argument("--size", default="small")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--record", type=Path, default=Path("play-record.json"), help="where to save the record"
    )
    parser.add_argument(
        "--format",
        default="json-schema",
        choices=["json-schema", "openai", "anthropic", "mcp"],
        help="shape of the tool list in the first line",
    )
    parser.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    """Serve one attempt on stdin/stdout."""
    problem = record_path_problem(args.record)
    if problem:  # checked before any work, so no attempt is ever lost to a bad --record
        print(f"error: --record {args.record}: {problem}", file=sys.stderr)
        return 2
    try:
        world, tasks = one_world(args.world, args.size, args.tasks)
    except (WorldError, TaskError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    task = tasks.get(args.task)
    if task is None:
        print(
            f"error: --task {args.task!r} is not a task of {world.name} "
            f"(known: {', '.join(sorted(tasks))})",
            file=sys.stderr,
        )
        return 2
    attempt = Attempt(world, task, seed=args.seed)
    return serve(attempt, sys.stdin, sys.stdout, args.record, args.format)


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
            outcome = ended.outcome
            _send(
                out,
                {
                    "ok": False,
                    "seq": None,
                    "ended": {"status": outcome.status, "reason": outcome.reason},
                },
            )
            return ""
        _send(out, {"seq": observation.seq, **observation.to_message()})
    attempt.interrupt("input ended without finish")
    return ""


def serve(
    attempt: Attempt, inp: TextIO, out: TextIO, record_path: Path, fmt: str = "json-schema"
) -> int:
    """Run the JSON-lines protocol until ``finish`` or end of input; save and verify the record.

    The record is saved whatever happens to the conversation (a bad line, input ending early,
    an unexpected failure), so work done is never lost.
    """
    _send(out, {"instruction": attempt.instruction, "tools": attempt.tool_schemas(fmt)})  # type: ignore[arg-type]
    try:
        final = _converse(attempt, inp, out)
    except Exception as exc:  # the bridge itself failed: keep what was done
        attempt.interrupt(f"bridge failed: {type(exc).__name__}: {exc}")
        final = ""
    record = attempt.finish(final)
    try:
        save_record(record, record_path)
    except OSError as exc:
        print(f"error: --record {record_path}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    _send(out, _result_line(record, attempt, record_path))
    return 0


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
        outcome = ended.outcome
        return {
            "ok": False,
            "seq": None,
            "ended": {"status": outcome.status, "reason": outcome.reason},
        }
    return {"ok": True, "seq": None, "user": answer, "stop": attempt.user_stopped}

"""``play``: drive one attempt from any program over JSON lines on stdin and stdout."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

import msgspec

from harness_world.engine.world import WorldError, load_world
from harness_world.evidence.record import save_record
from harness_world.grading.task import TaskError, load_tasks
from harness_world.grading.verify import verify
from harness_world.running.attempt import Attempt, AttemptEnded

__all__ = ["register", "serve"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``play`` command."""
    parser = sub.add_parser(
        "play",
        help="drive one attempt over JSON lines (stdio bridge for any language)",
        description=(
            "Reads one JSON object per line on stdin and answers one per line on stdout. "
            'The first line out is {"instruction": ..., "tools": [...]}. Send {"tool": NAME, '
            '"args": {...}} to call a tool (answer: the observation), or {"finish": "final '
            'message"} to end (answer: the record path, outcome, evidence and grade). End of '
            "input without finish records the attempt as interrupted. With a simulated user, "
            '{"user": TEXT} sends the user a message (answer: {"user": reply, "stop": bool}).'
        ),
    )
    parser.add_argument("--world", required=True)
    parser.add_argument("--task", required=True, help="task id, e.g. helpdesk.reply_and_solve")
    parser.add_argument("--size", default="small")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--record", type=Path, default=Path("play-record.json"), help="where to save the record"
    )
    parser.add_argument(
        "--format",
        default="json-schema",
        choices=["json-schema", "openai", "anthropic"],
        help="shape of the tool list in the first line",
    )
    parser.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    """Serve one attempt on stdin/stdout."""
    try:
        world = load_world(args.world, size=args.size)
        tasks = {t.id: t for t in load_tasks(world=world.name)}
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


def serve(
    attempt: Attempt, inp: TextIO, out: TextIO, record_path: Path, fmt: str = "json-schema"
) -> int:
    """Run the JSON-lines protocol until ``finish`` or end of input; save and verify the record."""
    _send(out, {"instruction": attempt.instruction, "tools": attempt.tool_schemas(fmt)})  # type: ignore[arg-type]
    final = ""
    for number, line in enumerate(inp, start=1):
        if not line.strip():
            continue
        try:
            message = json.loads(line)
            if not isinstance(message, dict):
                raise ValueError("expected a JSON object")
        except ValueError as exc:
            _send(out, {"error": {"kind": "bad_request", "message": f"line {number}: {exc}"}})
            continue
        if "finish" in message:
            final = str(message["finish"])
            break
        if "user" in message:  # tau2: user channel
            _send(out, _to_user(attempt, message["user"], number))
            continue
        if "tool" not in message:
            _send(
                out,
                {
                    "error": {
                        "kind": "bad_request",
                        "message": f'line {number}: expected "tool" or "finish"',
                    }
                },
            )
            continue
        try:
            observation = attempt.call(message["tool"], message.get("args", {}))
        except AttemptEnded as ended:
            _send(out, {"ended": {"status": ended.outcome.status, "reason": ended.outcome.reason}})
            break
        _send(out, {"seq": observation.seq, **observation.to_message()})
    else:
        attempt.interrupt("input ended without finish")
    record = attempt.finish(final)
    save_record(record, record_path)
    result = verify(record, world=attempt.world, task=attempt.task)
    grade = None if result.grade is None else ("passed" if result.grade.passed else "failed")
    failed = result.grade.failed if result.grade is not None else []
    _send(
        out,
        {
            "record": str(record_path),
            "outcome": record.outcome.status,
            "evidence": result.evidence,
            "grade": grade,
            "failed": failed,
            "user_turns": [msgspec.to_builtins(t) for t in record.user_turns],  # tau2
        },
    )
    return 0


def _to_user(attempt: Attempt, text: object, number: int) -> dict[str, Any]:
    """tau2: a ``{"user": TEXT}`` line: the simulated user's answer, or why there is none."""
    if attempt.user is None or attempt.user_stopped:
        why = "this attempt has no simulated user" if attempt.user is None else "the user stopped"
        return {"error": {"kind": "bad_request", "message": f"line {number}: {why}"}}
    try:
        answer = attempt.message_user(str(text))
    except AttemptEnded as ended:
        return {"ended": {"status": ended.outcome.status, "reason": ended.outcome.reason}}
    return {"user": answer, "stop": attempt.user_stopped}

"""``demo``: the argument for the whole design, in one table.

Runs reference solutions and a handful of scripted attempts that each make one mistake agents
really make, saves their records, replays and grades them, and prints outcome, evidence and
grade side by side: several attempts complete cleanly and still fail.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path
from typing import Any

import msgspec

from harness_world.cli._output import render_table
from harness_world.coverage.mutants import load_mutants
from harness_world.engine.world import load_world
from harness_world.evidence.record import record_digest, save_record
from harness_world.grading.task import load_tasks
from harness_world.grading.verify import verify
from harness_world.running.oracles import load_oracles
from harness_world.running.scripted import run_script

__all__ = ["DEMO_WORLDS", "register"]

DEMO_WORLDS = ("helpdesk", "inventory")
"""The built-in worlds whose mutant files mark mistakes for the demo (``Mutant.demo``)."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``demo`` command."""
    parser = sub.add_parser(
        "demo",
        help="run reference solutions and typical agent mistakes; show outcome, evidence, grade",
        description=(
            "On the built-in worlds: run the oracles and twelve scripted attempts that make "
            "mistakes live agents made, write their records to --out, replay and grade them, and "
            "print outcome, evidence and grade as separate columns. Re-check with "
            "`python -m harness_world verify runs/demo`."
        ),
    )
    parser.add_argument(
        "--out", type=Path, default=Path("runs/demo"), help="where to write records"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=main)


def _world_attempts(world_name: str, records: Path) -> list[dict[str, Any]]:
    """The oracles of the tasks with demo mistakes, then the mistakes, each saved and graded."""
    world = load_world(world_name)
    tasks = {t.id: t for t in load_tasks(world=world_name)}
    oracles = load_oracles(world_name)
    chosen = [m for m in load_mutants(world_name) if m.demo]
    attempts = [
        (tid, "oracle", oracles[tid], "reference solution")
        for tid in sorted({m.task_id for m in chosen})
    ]
    attempts += [(m.task_id, m.id.split(".", 1)[1], m.script, m.note) for m in chosen]
    rows: list[dict[str, Any]] = []
    for task_id, name, script, note in attempts:
        task = tasks[task_id]
        record = run_script(world, task, script)
        path = save_record(record, records / task_id / f"{name}.json")
        grade = verify(record, world=world, task=task).grade
        rows.append(
            {
                "task": task_id,
                "attempt": name,
                "outcome": record.outcome.status,
                "evidence": "verified" if grade is not None else "ungraded",
                "grade": "passed" if grade is not None and grade.passed else "failed",
                "failed": grade.failed if grade is not None else [],
                "reasons": grade.reasons(100) if grade is not None else [],
                "note": note,
                "record": str(path),
            }
        )
    return rows


def _print(rows: list[dict[str, Any]], tampered: dict[str, str], out: Path) -> None:
    table = [
        [
            r["task"],
            r["attempt"],
            r["outcome"],
            r["evidence"],
            r["grade"],
            ", ".join(r["failed"]) or "-",
        ]
        for r in rows
    ]
    headers = ["task", "attempt", "outcome", "evidence", "grade", "failed criteria"]
    print(render_table(headers, table, 70))
    print("\nThe mistakes, and why each failed:")
    for r in rows:
        if r["attempt"] != "oracle":
            print(f"  {r['task']}.{r['attempt']}: {r['note']}")
            for reason in r["reasons"]:
                print(f"      {reason}")
    completed_failed = sum(r["outcome"] == "completed" and r["grade"] == "failed" for r in rows)
    print(f"\n{completed_failed} attempts completed cleanly and still failed: ", end="")
    print("completed is not passed.")
    print(
        f"Tampering: {tampered['what']} -> evidence {tampered['evidence']} "
        f"({tampered['first_mismatch']}); ungraded is never a pass."
    )
    print(f"\nRecords: {out / 'records'}/  Re-check them: python -m harness_world verify {out}")


def main(args: argparse.Namespace) -> int:
    """Run the demo and print the table."""
    records = args.out / "records"
    if records.exists():
        shutil.rmtree(records)
    rows = [row for name in DEMO_WORLDS for row in _world_attempts(name, records)]
    expected_ok = all((r["grade"] == "passed") == (r["attempt"] == "oracle") for r in rows)
    world = load_world("helpdesk")
    tampered = _tampered_example(world, {t.id: t for t in load_tasks(world="helpdesk")})
    if args.json:
        print(json.dumps({"attempts": rows, "tampered": tampered, "out": str(args.out)}, indent=1))
    else:
        _print(rows, tampered, args.out)
    return 0 if expected_ok else 1


def _tampered_example(world: Any, tasks: dict[str, Any]) -> dict[str, str]:
    """Substitute one recorded read result in a failing attempt, re-seal it, and verify it."""
    task = tasks["helpdesk.reply_and_solve"]
    mutant = {m.id: m for m in load_mutants("helpdesk")}["reply_and_solve.no_reply"]
    record = run_script(world, task, mutant.script)
    data = msgspec.to_builtins(record)
    data["calls"][0]["result"]["status"] = "solved"
    forged = msgspec.convert(data, type(record))
    forged = msgspec.structs.replace(forged, digest=record_digest(forged))
    result = verify(forged, world=world, task=task)
    first = str(result.mismatches[0]) if result.mismatches else "none"
    return {
        "what": "one substituted read result in a re-sealed record",
        "evidence": result.evidence,
        "first_mismatch": first,
    }

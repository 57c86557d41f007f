"""``demo``: the argument for the whole design, in one table, written as an ordinary run.

The demo agent works the built-in tasks that have mistakes marked for the demo
(``Mutant.demo`` in ``mutants/<world>/mutants.py``): on sample 0 it takes the task's first
oracle route; on the next samples it makes each of the task's demo mistakes, and when a task has
fewer mistakes than samples it takes the task's other oracle routes (so the table also shows the
checker accepting a correct solution it did not script). Everything goes through `run`: the
records, the manifest, the index that binds them, so `verify`, `report`, `compare` and
`report --html` read ``runs/demo`` like any run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import attrs
import msgspec

from harness_world.cli._output import render_table
from harness_world.coverage.mutants import load_mutants
from harness_world.engine.world import load_world
from harness_world.evidence.record import record_digest
from harness_world.grading.task import Task, load_tasks
from harness_world.grading.verifier import SlotResult
from harness_world.grading.verify import verify
from harness_world.running.attempt import Attempt
from harness_world.running.oracles import load_routes, route_name
from harness_world.running.run import run
from harness_world.running.rundir import MANIFEST, load_manifest
from harness_world.running.scripted import Script, ScriptContext, run_script

__all__ = ["DEMO_WORLDS", "DemoAgent", "demo_agent", "register"]

DEMO_WORLDS = ("helpdesk", "inventory")
"""The built-in worlds whose mutant files mark mistakes for the demo (``Mutant.demo``)."""

AGENT_NAME = "demo"


@attrs.frozen(slots=True)
class DemoPlay:
    """What the demo agent does on one slot.

    Attributes:
        label: ``oracle``, ``route 2``, ... or the mistake's short name.
        note: The mistake in words (empty for a correct route).
        script: The script it runs.
    """

    label: str
    note: str
    script: Script


@attrs.frozen(slots=True)
class DemoAgent:
    """The demo's scripted agent: a correct route on sample 0, the task's mistakes after.

    Attributes:
        plays: What to do per (task id, sample).
        samples: Samples per task.
    """

    plays: dict[tuple[str, int], DemoPlay]
    samples: int
    name: str = AGENT_NAME

    def settings(self) -> dict[str, Any]:
        """The plays by slot (what changes results)."""
        return {
            "kind": "demo",
            "plays": {f"{t}/{s}": p.label for (t, s), p in sorted(self.plays.items())},
        }

    def run(self, attempt: Attempt) -> str:
        """Run this slot's play."""
        play = self.plays[(attempt.task.id, attempt.sample)]
        return play.script(ScriptContext(attempt))


def demo_agent() -> tuple[DemoAgent, list[Task]]:
    """The demo agent and the tasks it works, from the built-in oracles and demo mistakes."""
    per_task: dict[str, list[DemoPlay]] = {}
    routes: dict[str, list[Script]] = {}
    tasks: dict[str, Task] = {}
    for world in DEMO_WORLDS:
        world_routes = load_routes(world)
        world_tasks = {t.id: t for t in load_tasks(world=world)}
        for mutant in (m for m in load_mutants(world) if m.demo):
            label = mutant.id.split(".", 1)[1]
            per_task.setdefault(mutant.task_id, []).append(
                DemoPlay(label=label, note=mutant.note, script=mutant.script)
            )
            routes[mutant.task_id] = world_routes[mutant.task_id]
            tasks[mutant.task_id] = world_tasks[mutant.task_id]
    samples = 1 + max(len(m) for m in per_task.values())
    plays: dict[tuple[str, int], DemoPlay] = {}
    for task_id, mistakes in per_task.items():
        short = task_id.split(".", 1)[1] + "_"
        correct = [
            DemoPlay(
                label="oracle" if i == 0 else "route " + route_name(s, i).removeprefix(short),
                note="",
                script=s,
            )
            for i, s in enumerate(routes[task_id])
        ]
        extra = correct[1:] or correct[:1]
        order = [correct[0], *mistakes]
        order += [extra[i % len(extra)] for i in range(samples - len(order))]
        plays.update({(task_id, sample): play for sample, play in enumerate(order)})
    return DemoAgent(plays=plays, samples=samples), sorted(tasks.values(), key=lambda t: t.id)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``demo`` command."""
    parser = sub.add_parser(
        "demo",
        help="run reference solutions and typical agent mistakes; show outcome, evidence, grade",
        description=(
            "On the built-in worlds: a demo agent solves each task with an oracle route, then "
            "makes mistakes live agents made; every attempt is run, recorded, replayed and "
            "graded into a run directory (--out), and outcome, evidence and grade are printed "
            "as separate columns. Re-check it with `python -m harness_world verify runs/demo`; "
            "`report runs/demo` reads it like any run."
        ),
    )
    parser.add_argument(
        "--out", type=Path, default=Path("runs/demo"), help="the run directory to (re)write"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=main)


def _fresh(out: Path) -> str:
    """Clear a previous demo run at ``out``; refuse to touch any other folder."""
    if not out.exists():
        return ""
    if not (out / MANIFEST).is_file():
        if out.is_dir() and not any(out.iterdir()):
            return ""
        return f"--out {out}: exists and is not a demo run directory; give another --out"
    try:
        agent = load_manifest(out).agent
    except (OSError, ValueError) as exc:
        return f"--out {out}: {exc}"
    if agent != AGENT_NAME:
        return f"--out {out}: holds a run of agent {agent!r}, not the demo; give another --out"
    shutil.rmtree(out)
    return ""


def _rows(slots: list[SlotResult], agent: DemoAgent) -> list[dict[str, Any]]:
    rows = []
    for slot in slots:
        play = agent.plays[(slot.task_id, slot.sample)]
        rows.append(
            {
                "task": slot.task_id,
                "sample": slot.sample,
                "attempt": play.label,
                "outcome": slot.outcome,
                "evidence": slot.evidence,
                "grade": "passed" if slot.passed else "failed",
                "failed": [line.split(": ", 1)[0] for line in slot.failed],
                "reasons": [r if len(r) <= 100 else r[:99] + "…" for r in slot.failed],
                "mistake": play.note,
                "record": slot.path,
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
        if r["mistake"]:
            print(f"  {r['task']}.{r['attempt']}: {r['mistake']}")
            for reason in r["reasons"]:
                print(f"      {reason}")
    completed_failed = sum(r["outcome"] == "completed" and r["grade"] == "failed" for r in rows)
    print(f"\n{completed_failed} attempts completed cleanly and still failed: ", end="")
    print("completed is not passed.")
    print(
        f"Tampering: {tampered['what']} -> evidence {tampered['evidence']} "
        f"({tampered['first_mismatch']}); ungraded is never a pass."
    )
    print(
        f"\nRun directory: {out}/  Re-check it: python -m harness_world verify {out}"
        f"  Read it: python -m harness_world report {out}"
    )


def main(args: argparse.Namespace) -> int:
    """Run the demo and print the table."""
    problem = _fresh(args.out)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    agent, tasks = demo_agent()
    result = run(tasks, agent, samples=agent.samples, out=args.out)
    rows = _rows(result.slots, agent)
    expected = all(
        (r["grade"] == "passed") == (not r["mistake"]) and r["evidence"] == "verified" for r in rows
    )
    tampered = _tampered_example()
    if args.json:
        print(json.dumps({"attempts": rows, "tampered": tampered, "out": str(args.out)}, indent=1))
    else:
        _print(rows, tampered, args.out)
    return 0 if expected else 1


def _tampered_example() -> dict[str, str]:
    """Substitute one recorded read result in a failing attempt, re-seal it, and verify it."""
    world = load_world("helpdesk")
    task = {t.id: t for t in load_tasks(world="helpdesk")}["helpdesk.reply_and_solve"]
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

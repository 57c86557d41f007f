"""``diagnose``: advisories on each attempt, their reach, and where each failure comes from."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from harness_world.analysis.attribution import AttributionReport, attribute_scan
from harness_world.analysis.diagnosis import SlotAdvice, advise_scan, reach, reach_lines
from harness_world.analysis.report import RunReport
from harness_world.cli._output import render_table
from harness_world.cli._selection import add_verifier_world_options, verifier_worlds
from harness_world.coverage.mutants import load_mutants
from harness_world.engine.world import load_world
from harness_world.errors import HarnessWorldError
from harness_world.grading.advice import ADVISORIES, Advisory, advise
from harness_world.grading.task import TaskError, load_tasks
from harness_world.grading.verify import verify
from harness_world.running.oracles import load_oracles
from harness_world.running.rundir import RunScan, load_manifest, scan_run
from harness_world.running.scripted import run_script

__all__ = ["DEMO_WORLDS", "demo_advice", "register", "report_section"]

DEMO_WORLDS = ("helpdesk", "inventory")
"""The worlds whose mutants marked ``demo=True`` are measured by ``diagnose --demo``."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``diagnose`` command."""
    parser = sub.add_parser(
        "diagnose",
        help="advisory observations per attempt, their reach, and failure attribution",
        description=(
            "Read a run directory: for every verified, graded attempt list the advisory "
            "observations its trace carries (they never change a grade), report their reach "
            "(failed attempts explained, passed attempts flagged), and attribute every attempt "
            "that did not pass to agent, world, task_text or harness (reviewed labels from "
            "`attribute` override the automatic source). With --demo, measure the same on the "
            "demo's reference solutions and mistakes instead of a run. --definitions lists "
            "every advisory with its one-line definition."
        ),
    )
    parser.add_argument("run", type=Path, nargs="?", help="a run directory")
    parser.add_argument("--demo", action="store_true", help="measure on the demo's attempts")
    parser.add_argument("--definitions", action="store_true", help="list the advisories")
    add_verifier_world_options(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=main)


def demo_advice() -> list[SlotAdvice]:
    """Advisories of the demo's attempts: each world's oracles, then its ``demo`` mistakes.

    ``sample`` numbers the attempts of one world in that order (they are not run samples).
    """
    out: list[SlotAdvice] = []
    for name in DEMO_WORLDS:
        world = load_world(name)
        tasks = {t.id: t for t in load_tasks(world=name)}
        chosen = [m for m in load_mutants(name) if m.demo]
        oracles = load_oracles(name)
        scripts = [(t, oracles[t]) for t in sorted({m.task_id for m in chosen})]
        scripts += [(m.task_id, m.script) for m in chosen]
        for index, (task_id, script) in enumerate(scripts):
            task = tasks[task_id]
            record = run_script(world, task, script)
            grade = verify(record, world, task).grade
            if grade is None:
                continue
            found = advise(record, task, world)
            out.append(
                SlotAdvice(task_id=task_id, sample=index, passed=grade.passed, advisories=found)
            )
    return out


def _advice_rows(advice: list[SlotAdvice]) -> list[list[str]]:
    return [
        [
            a.task_id,
            str(a.sample),
            "passed" if a.passed else "failed",
            "; ".join(f"{x.name}: {x.detail}" for x in a.advisories) or "-",
        ]
        for a in advice
        if a.advisories or not a.passed
    ]


def _print(advice: list[SlotAdvice], attribution: AttributionReport | None) -> None:
    rows = _advice_rows(advice)
    if rows:
        print(
            render_table(["task", "sample", "grade", "advisories (never change grades)"], rows, 110)
        )
        print()
    for line in reach_lines(reach((a.passed, a.advisories) for a in advice)):
        print(line)
    if attribution is None:
        return
    print()
    rows = [
        [a.task_id, str(a.sample), a.source, "reviewed" if a.reviewed else "automatic", a.evidence]
        for a in attribution.attributions
    ]
    if rows:
        print(render_table(["task", "sample", "source", "by", "evidence"], rows, 90))
    counts = ", ".join(
        f"{s} {c['automatic'] + c['reviewed']} ({c['reviewed']} reviewed)"
        for s, c in attribution.counts.items()
    )
    print(f"\nattribution of {len(attribution.attributions)} attempts that did not pass: {counts}")


def report_section(
    report: RunReport,
    advised: Mapping[tuple[str, int], list[Advisory]] | None = None,
    reader_options: str = "",
) -> list[str]:
    """Lines `report` prints after its figures: advisories' reach and attribution counts.

    ``reader_options`` are the ``--world``/``--tasks`` the reader gave, repeated in the closing
    ``diagnose`` line so that it reads a user world's run as the report did.

    Reads the slots the report already judged (no record is replayed again) and the
    advisories its scan computed (other records are read once more from disk); each failing
    task's reference solution runs once.
    """
    scan = RunScan(
        out=report.out,
        manifest=load_manifest(report.out),
        slots=report.attempts,
        counts=report.counts,
        families={},
    )
    tasks = load_tasks()
    advice = advise_scan(scan, tasks, advised=advised)
    lines = ["", *reach_lines(reach((a.passed, a.advisories) for a in advice))]
    for a in advice:
        if a.advisories and not a.passed:
            names = ", ".join(x.name for x in a.advisories)
            lines.append(f"    {a.task_id} sample {a.sample}: {names}")
    attribution = attribute_scan(scan, tasks)
    if attribution.attributions:
        counts = ", ".join(
            f"{s} {c['automatic'] + c['reviewed']} ({c['reviewed']} reviewed)"
            for s, c in attribution.counts.items()
            if c["automatic"] + c["reviewed"]
        )
        lines.append(
            f"Attribution of {len(attribution.attributions)} attempts that did not pass: {counts}"
        )
    lines.append(f"Details: python -m harness_world diagnose {report.out}{reader_options}")
    return lines


def main(args: argparse.Namespace) -> int:
    """Print advisories, reach and attribution."""
    if args.definitions:
        for name, text in ADVISORIES.items():
            print(f"{name}: {text}")
        return 0
    if (args.run is None) == (not args.demo):
        print("error: give a run directory or --demo (not both)", file=sys.stderr)
        return 2
    attribution: AttributionReport | None = None
    try:
        if args.demo:
            advice = demo_advice()
        else:
            choice, by_id = verifier_worlds(args)
            tasks = list(by_id.values())
            scan = scan_run(args.run, tasks, write_counts=False, folders=choice.folders())
            advice = advise_scan(scan, tasks)
            attribution = attribute_scan(scan, tasks)
    except (OSError, ValueError, HarnessWorldError, TaskError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        payload: dict[str, Any] = {
            "advice": advice,
            "reach": reach((a.passed, a.advisories) for a in advice),
            "attribution": attribution,
        }
        print(msgspec.json.format(msgspec.json.encode(payload), indent=1).decode())
        return 0
    _print(advice, attribution)
    return 0

"""``verify``: replay record files, folders or run directories and report evidence and grades."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from harness_world.cli._output import Progress, render_table
from harness_world.cli._progress import verify_progress
from harness_world.engine.world import World, WorldError, load_world
from harness_world.evidence.record import Record, RecordError, load_record
from harness_world.grading.task import Task, load_tasks
from harness_world.grading.verify import Verification, verify

__all__ = ["discover_records", "register"]

_NOT_RECORDS = {"manifest.json", "inventory.json", "revision.json"}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``verify`` command."""
    parser = sub.add_parser(
        "verify",
        help="replay records and report outcome, evidence and grade",
        description=(
            "Replay each record against a fresh session of the world it names and compare every "
            "call, write and final row. Evidence is verified only when nothing differs. With "
            "tasks available, verified records are graded. Exit 0 when every record is verified "
            "(and, with --require-pass, passed); 1 when any is ungraded, lost (or failed); 2 on "
            "usage or input errors."
        ),
    )
    parser.add_argument(
        "paths", nargs="+", type=Path, help="record files, folders or run directories"
    )
    parser.add_argument(
        "--world",
        help="world name or folder to replay against (default: the one each record names)",
    )
    parser.add_argument(
        "--size", default=None, help="seed size for --world (default: the record's)"
    )
    parser.add_argument("--seed-file", type=Path, help="seed file for --world (e.g. a τ² db.json)")
    parser.add_argument(
        "--tasks", type=Path, help="task folder to grade against (default: built-in tasks)"
    )
    parser.add_argument("--no-grade", action="store_true", help="check evidence only")
    parser.add_argument("--require-pass", action="store_true", help="exit 1 when any grade failed")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(  # issue 20
        "--quiet", action="store_true", help="no progress display (the report is still printed)"
    )
    parser.set_defaults(handler=run)


def discover_records(paths: list[Path]) -> list[Path]:
    """Expand files, folders and run directories into record files, sorted within each folder.

    Raises:
        FileNotFoundError: for a path that does not exist.
    """
    found: list[Path] = []
    for path in paths:
        if not path.exists():
            raise FileNotFoundError(f"no such file or folder: {path}")
        if path.is_file():
            found.append(path)
            continue
        root = path / "records" if (path / "records").is_dir() else path
        found += sorted(
            p
            for p in root.rglob("*")
            if p.is_file()
            and p.suffix in (".json", ".msgpack")
            and not p.name.startswith(".")
            and p.name not in _NOT_RECORDS
        )
    return found


class _Worlds:
    """Worlds by (name, size), loaded once; an explicit --world overrides the record's."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.cache: dict[tuple[str, str], World] = {}

    def for_record(self, record: Record) -> World:
        if self.args.world:
            size = self.args.size or record.world.size
            key = (self.args.world, size)
            if key not in self.cache:
                self.cache[key] = load_world(
                    self.args.world, size=size, seed_file=self.args.seed_file
                )
            return self.cache[key]
        key = (record.world.name, record.world.size)
        if key not in self.cache:
            self.cache[key] = load_world(record.world.name, size=record.world.size)
        return self.cache[key]


def _task_lookup(args: argparse.Namespace) -> dict[str, Task] | None:
    if args.no_grade:
        return None
    return {t.id: t for t in load_tasks(folder=args.tasks)}


def run(args: argparse.Namespace) -> int:
    """Verify every record found under the given paths."""
    try:
        files = discover_records(args.paths)
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not files:
        print(f"error: no record files under {', '.join(map(str, args.paths))}", file=sys.stderr)
        return 2
    worlds = _Worlds(args)
    try:
        tasks = _task_lookup(args)
    except (OSError, ValueError) as exc:
        print(f"error: --tasks: {exc}", file=sys.stderr)
        return 2
    progress = Progress(
        len(files), "verifying", enabled=not args.json and len(files) >= 20 and sys.stderr.isatty()
    )
    live = verify_progress(len(files), progress, quiet=args.quiet, json=args.json)  # issue 20
    rows: list[dict[str, Any]] = []
    input_error = False
    for path in files:
        record: Record | None = None
        try:
            record = load_record(path)
        except RecordError as exc:
            result = Verification(evidence="lost", reason=str(exc))
        else:
            try:
                world = worlds.for_record(record)
            except WorldError as exc:
                input_error = True
                result = Verification(evidence="lost", reason=f"world cannot be loaded: {exc}")
            else:
                task = tasks.get(record.task_id) if tasks is not None else None
                result = verify(record, world=world, task=task)
        rows.append(_row(path, record, result))
        live.advance(path.name, rows[-1])  # issue 20
    summary = {
        state: sum(r["evidence"] == state for r in rows)
        for state in ("verified", "ungraded", "lost")
    }
    graded = [r for r in rows if r["grade"] in ("passed", "failed")]
    summary_grades = {g: sum(r["grade"] == g for r in graded) for g in ("passed", "failed")}
    if args.json:
        print(
            json.dumps({"records": rows, "evidence": summary, "grades": summary_grades}, indent=1)
        )
    else:
        table = [
            [
                r["path"],
                r["task"],
                str(r["sample"]),
                r["outcome"],
                r["evidence"],
                r["grade"],
                r["first_problem"],
            ]
            for r in rows
        ]
        print(
            render_table(
                [
                    "record",
                    "task",
                    "sample",
                    "outcome",
                    "evidence",
                    "grade",
                    "first mismatch / failed criterion",
                ],
                table,
            )
        )
        print()
        print(
            f"{len(rows)} record(s): {summary['verified']} verified, "
            f"{summary['ungraded']} ungraded, "
            f"{summary['lost']} lost; grades: {summary_grades['passed']} passed, "
            f"{summary_grades['failed']} failed, {len(rows) - len(graded)} not graded"
        )
    if input_error:
        return 2
    if summary["ungraded"] or summary["lost"]:
        return 1
    if args.require_pass and (summary_grades["failed"] or len(graded) < len(rows)):
        return 1
    return 0


def _row(path: Path, record: Record | None, result: Verification) -> dict[str, Any]:
    grade = "–"
    problem = result.reason if result.evidence != "verified" else ""
    if result.mismatches:
        problem = str(result.mismatches[0])
    if result.grade is not None:
        grade = "passed" if result.grade.passed else "failed"
        if not result.grade.passed:
            problem = ", ".join(result.grade.failed)
    return {
        "path": str(path),
        "task": record.task_id if record else "",
        "sample": record.sample if record else "",
        "outcome": record.outcome.status if record else "",
        "evidence": result.evidence,
        "grade": grade,
        "first_problem": problem,
        "mismatches": [str(m) for m in result.mismatches[:20]],
        "verdicts": [
            {"id": v.id, "kind": v.kind, "status": v.status, "detail": v.detail}
            for v in (result.grade.verdicts if result.grade else [])
        ],
    }

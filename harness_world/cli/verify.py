"""``verify``: replay record files, folders or run directories and report evidence and grades."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from harness_world.cli._output import Progress, render_table
from harness_world.cli._progress import verify_progress
from harness_world.cli._selection import UsageError, add_world_data_options, world_data
from harness_world.engine.limits import REPLAY_CALLS, REPLAY_WORK
from harness_world.evidence.binding import read_index
from harness_world.evidence.record import RecordError, load_record
from harness_world.grading.task import Task, TaskError, load_tasks
from harness_world.grading.verifier import (
    FileVerdict,
    SlotResult,
    TrustRoot,
    Verifier,
    WorldRefused,
)
from harness_world.grading.verify import Verification
from harness_world.running.pins import Pins, check_pins, load_pins
from harness_world.running.rundir import (
    MANIFEST,
    RunManifest,
    discover_records,
    load_manifest,
    plan_slots,
    scan_run,
    stray_records,
)

if TYPE_CHECKING:  # Ray's module is imported only with --executor ray
    from harness_world.running.rayverify import RayVerifier

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``verify`` command."""
    parser = sub.add_parser(
        "verify",
        help="replay records and report outcome, evidence and grade",
        description=(
            "Replay each record against a fresh session of the world it names and compare every "
            "call, write and final row. Evidence is verified only when nothing differs. With "
            "tasks available, verified records are graded. A record's world is looked up only "
            "among the built-in worlds (at a size the world declares) or the one given with "
            "--world: nothing in a record is used as a path. In a run directory each record is "
            "checked against its slot (task, sample, seed, revision, digest in the run's "
            "index): a missing slot is lost, a foreign or swapped record ungraded. Exit 0 when "
            "every record is verified (and, with --require-pass, passed); 1 when any is "
            "ungraded, lost (or failed); 2 on usage or input errors."
        ),
    )
    parser.add_argument(
        "paths", nargs="+", type=Path, help="record files, folders or run directories"
    )
    parser.add_argument(
        "--world",
        help=(
            "world name or folder to replay against, chosen by you (default: the built-in "
            "world each record names)"
        ),
    )
    parser.add_argument(
        "--size", default=None, help="seed size for --world (default: the record's)"
    )
    parser.add_argument("--seed-file", type=Path, help="seed file for --world")
    parser.add_argument(
        "--tasks", type=Path, help="task folder to grade against (default: built-in tasks)"
    )
    _add_scope_options(parser)
    parser.add_argument(
        "--pin",
        type=Path,
        help=(
            "a pin file of world and task hashes (a run's pins.json): refuse when your worlds "
            "or tasks differ from it; records of unpinned tasks are ungraded"
        ),
    )
    parser.add_argument(
        "--trust-key",
        type=Path,
        help=(
            "Ed25519 public key (PEM) that must have signed each run directory's index "
            "(provenance; extra: [sign])"
        ),
    )
    add_world_data_options(parser)
    _add_outcome_options(parser)
    _add_bound_options(parser)
    _add_executor_options(parser)
    parser.set_defaults(handler=run)


def _add_outcome_options(parser: argparse.ArgumentParser) -> None:
    """What the exit code requires, and how the result is printed."""
    parser.add_argument(
        "--require-pass",
        action="store_true",
        help="exit 1 unless every record was graded and its agent grade passed",
    )
    parser.add_argument(
        "--require-harness",
        action="store_true",
        help="--require-pass, and exit 1 too when any harness-layer criterion failed",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--quiet", action="store_true", help="no progress display (the report is still printed)"
    )


def _add_bound_options(parser: argparse.ArgumentParser) -> None:
    """How much one record may cost to replay: checked before and during its replay."""
    parser.add_argument(
        "--max-calls",
        type=int,
        default=REPLAY_CALLS,
        metavar="N",
        help="refuse (ungraded, not replayed) a record with more calls than N or than its "
        f"task's tool_calls budget, whichever is lower (default: {REPLAY_CALLS})",
    )
    parser.add_argument(
        "--max-work",
        type=int,
        default=REPLAY_WORK,
        metavar="ROWS",
        help="stop replaying a record (lost) once its calls have examined more than ROWS "
        f"rows through selects, pages and reads (default: {REPLAY_WORK:_})",
    )


def _add_scope_options(parser: argparse.ArgumentParser) -> None:
    """What is checked: evidence only, or loose records from a folder without a manifest."""
    parser.add_argument("--no-grade", action="store_true", help="check evidence only")
    parser.add_argument(
        "--loose",
        action="store_true",
        help="verify a folder that has records/ but no manifest.json as loose record files "
        "(no slots, no index: records with one digest are counted once); without it such a "
        "folder is refused, since deleting a run's manifest must not lower what is checked",
    )


def _add_executor_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="ray: records verified in batches of Ray tasks, worlds and tasks still yours "
        "(extra: [ray]); the same table, JSON and exit code",
    )
    parser.add_argument(
        "--address",
        help="with --executor ray: the Ray cluster ('auto': the one `ray start --head` started "
        "here; default: a local Ray for this command)",
    )
    parser.add_argument(
        "--ray-batch",
        type=int,
        metavar="N",
        help="with --executor ray: records per Ray task (default: about four batches per CPU, "
        "at most 64 records)",
    )


@attrs.frozen(slots=True)
class _Plan:
    runs: list[Path]
    files: list[Path]
    duplicates: list[Path] = attrs.field(factory=list)


def _plan(args: argparse.Namespace) -> _Plan:
    runs = [p for p in args.paths if p.is_dir() and (p / MANIFEST).exists()]
    _refuse_unmanifested(args, runs)
    try:
        files = discover_records([p for p in args.paths if p not in runs])
    except FileNotFoundError as exc:
        raise UsageError(str(exc)) from None
    duplicates: list[Path] = []
    if args.loose:
        files, duplicates = _once_per_digest(files)
    if not files and not runs:
        raise UsageError(f"no record files under {', '.join(map(str, args.paths))}")
    if args.trust_key and files:
        raise UsageError("--trust-key checks run directories only (their signed index)")
    return _Plan(runs=runs, files=files, duplicates=duplicates)


def _tasks(args: argparse.Namespace) -> dict[str, Task] | None:
    """The verifier's tasks (None with ``--no-grade``): ``--tasks``, the data's, or the built-in."""
    if args.world_data is not None or args.world_tasks is not None:  # the world's own data
        return _data_tasks(args)
    try:
        return None if args.no_grade else {t.id: t for t in load_tasks(folder=args.tasks)}
    except (OSError, ValueError, TaskError) as exc:
        raise UsageError(f"--tasks: {exc}") from None


def _refuse_unmanifested(args: argparse.Namespace, runs: list[Path]) -> None:
    """A folder laid out as a run (``records/``) but without its manifest is refused.

    Its slots, index and signature are what decide which records are graded; without the
    manifest they cannot be checked, so verifying its files loosely would let a forger delete
    the manifest to drop those checks. ``--loose`` asks for exactly that, knowingly.
    """
    for path in args.paths:
        if path in runs or args.loose or not (path.is_dir() and (path / "records").is_dir()):
            continue
        raise UsageError(
            f"{path}: has records/ but no {MANIFEST}: not a run directory (its slots, index and "
            "signature cannot be checked); give --loose to verify its files as loose records"
        )


def _once_per_digest(files: list[Path]) -> tuple[list[Path], list[Path]]:
    """Loose records with one digest counted once: the first file kept, the rest listed."""
    seen: set[str] = set()
    kept: list[Path] = []
    duplicates: list[Path] = []
    for path in files:
        try:
            digest = load_record(path).digest
        except RecordError:
            kept.append(path)  # unreadable: verified (and reported lost) on its own
            continue
        if digest in seen:
            duplicates.append(path)
        else:
            seen.add(digest)
            kept.append(path)
    return kept, duplicates


def _data_tasks(args: argparse.Namespace) -> dict[str, Task] | None:
    """``--world-data``: the folder's tasks; ``--seed-file`` becomes the data's start state."""
    if args.tasks or args.seed_file:
        raise UsageError(
            "--world-data gives the start state and tasks: not with --tasks/--seed-file"
        )
    data = world_data(args, [args.world] if args.world else [])
    assert data is not None
    args.seed_file = data.seed_file
    return None if args.no_grade else {t.id: t for t in data.tasks}


def run(args: argparse.Namespace) -> int:
    """Verify every record found under the given paths; run directories slot by slot."""
    try:
        _check_executor(args)
        plan = _plan(args)
        refused = _unsigned(plan.runs, args)
        rows, pins = _judge(plan, refused, args)
    except (UsageError, WorldRefused) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if pins is not None:
        _unpinned(rows, pins)
    summary, grades = _summarise(rows)
    if plan.duplicates:
        print(
            f"{len(plan.duplicates)} record file(s) repeat an earlier file's digest and are "
            f"counted once: {', '.join(map(str, plan.duplicates[:5]))}",
            file=sys.stderr,
        )
    if args.json:
        payload = {
            "records": rows,
            "duplicates": [str(p) for p in plan.duplicates],
            "evidence": summary,
            "grades": grades,
            "not_reviewed": sum(len(r["not_reviewed"]) for r in rows),
            "harness": {
                "checked": sum(bool(r["harness"]["checked"]) for r in rows),
                "failed": sum(bool(r["harness"]["failed"]) for r in rows),
            },
        }
        print(json.dumps(payload, indent=1))
    else:
        _print_table(rows, summary, grades)
    if summary["ungraded"] or summary["lost"]:
        return 1
    strict = args.require_pass or args.require_harness
    if strict and not rows:
        print("--require-pass: nothing was graded (no slot, no record)", file=sys.stderr)
        return 1
    if strict and (grades["failed"] or grades["passed"] < len(rows)):
        return 1
    if args.require_harness and any(r["harness"]["failed"] for r in rows):
        return 1
    return 0


def _unsigned(runs: list[Path], args: argparse.Namespace) -> dict[Path, list[dict[str, Any]]]:
    """Provenance first: the rows of every run whose manifest or signature fails, unreplayed.

    Every manifest is read (and checked against its revision) before any task is loaded or
    record replayed; with ``--trust-key`` a run whose signature does not verify is reported
    slot by slot as ``ungraded`` here, and nothing of it is replayed.
    """
    refused: dict[Path, list[dict[str, Any]]] = {}
    for root in runs:
        try:
            manifest = load_manifest(root)
        except (FileNotFoundError, ValueError) as exc:
            raise UsageError(str(exc)) from None
        problem = _provenance(root, manifest, args.trust_key) if args.trust_key else ""
        if problem:
            slots = [s.result("ungraded", reason=problem) for s in plan_slots(root, manifest)]
            refused[root] = [_slot_row(s) for s in slots]  # nothing of it counts: no stray walk
    return refused


def _judge(
    plan: _Plan, refused: dict[Path, list[dict[str, Any]]], args: argparse.Namespace
) -> tuple[list[dict[str, Any]], Pins | None]:
    """The rows of every run and file, in order; tasks are loaded only if anything is judged."""
    if not plan.files and all(root in refused for root in plan.runs) and args.pin is None:
        return [row for root in plan.runs for row in refused[root]], None
    for option, value in (("--max-calls", args.max_calls), ("--max-work", args.max_work)):
        if value < 1:
            raise UsageError(f"{option} must be at least 1, not {value}")
    tasks = _tasks(args)
    root = TrustRoot.of(args.world, args.size, args.seed_file)
    verifier = Verifier(root, tasks, max_calls=args.max_calls, max_work=args.max_work)
    pins = _pins(args, tasks, verifier)
    rows: list[dict[str, Any]] = []
    with _executor(args, verifier) as remote:
        for run_dir in plan.runs:
            judged = refused.get(run_dir)
            rows += judged if judged is not None else _verify_run(run_dir, args, verifier, remote)
        rows += _verify_files(plan, verifier, args, remote=remote)
    return rows, pins


def _check_executor(args: argparse.Namespace) -> None:
    """``--address`` and ``--ray-batch`` need ``--executor ray``, which needs Ray."""
    if args.executor != "ray":
        for option, value in (("--address", args.address), ("--ray-batch", args.ray_batch)):
            if value is not None:
                raise UsageError(f"{option} needs --executor ray")
        return
    if args.ray_batch is not None and args.ray_batch < 1:
        raise UsageError("--ray-batch must be at least 1")
    if importlib.util.find_spec("ray") is None:
        raise UsageError("--executor ray needs the extra: pip install 'harness_world[ray]'")


@contextmanager
def _executor(args: argparse.Namespace, verifier: Verifier) -> Iterator[RayVerifier | None]:
    """With ``--executor ray``, the verifier mapped over Ray; else None (judged here)."""
    if args.executor != "ray":
        yield None
        return
    from ray.exceptions import RayError

    from harness_world.running.rayrun import RayUnavailable
    from harness_world.running.rayverify import ray_verifier

    try:
        with ray_verifier(verifier, address=args.address, batch=args.ray_batch) as remote:
            yield remote
    except RayUnavailable as exc:
        raise UsageError(str(exc)) from None
    except RayError as exc:  # a worker died or the cluster went away: no verdict, exit 2
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        raise UsageError(
            f"a Ray task failed, so nothing is reported as verified ({type(exc).__name__}: {first})"
        ) from None


def _pins(
    args: argparse.Namespace, tasks: dict[str, Task] | None, verifier: Verifier
) -> Pins | None:
    """The --pin file, checked against the verifier's own worlds and tasks before any work."""
    if args.pin is None:
        return None
    try:
        pins = load_pins(args.pin)
    except ValueError as exc:
        raise UsageError(f"--pin: {exc}") from None
    problems = check_pins(pins, verifier.world, tasks)
    if problems:
        raise UsageError("refused by --pin: " + "; ".join(problems))
    return pins


def _unpinned(rows: list[dict[str, Any]], pins: Pins) -> None:
    """Records of tasks the pin file does not pin are not graded evidence under it."""
    for row in rows:
        if row["task"] and row["task"] not in pins.tasks:
            row.update(
                evidence="ungraded",
                grade="–",
                first_problem=f"task {row['task']!r} is not pinned by --pin",
                reasons=[],
            )


def _live(args: argparse.Namespace, total: int) -> Any:
    """``verify``'s progress over ``total`` records (live on a terminal, else a counter)."""
    plain = Progress(
        total, "verifying", enabled=not args.json and total >= 20 and sys.stderr.isatty()
    )
    return verify_progress(total, plain, quiet=args.quiet, json=args.json)


def _verify_files(
    plan: _Plan,
    verifier: Verifier,
    args: argparse.Namespace,
    *,
    remote: RayVerifier | None = None,
) -> list[dict[str, Any]]:
    files = plan.files
    live = _live(args, len(files))

    def arrived(index: int, verdict: FileVerdict) -> None:
        live.advance(files[index].name, _file_row(verdict))

    if remote is not None:
        return [_file_row(v) for v in remote.files(files, arrived)]
    rows: list[dict[str, Any]] = []
    for index, path in enumerate(files):
        verdict = verifier.check_file(path)
        if verdict.refused:
            raise WorldRefused(verdict.refused)
        arrived(index, verdict)
        rows.append(_file_row(verdict))
    return rows


def _file_row(verdict: FileVerdict) -> dict[str, Any]:
    about = (verdict.task_id, verdict.sample, verdict.outcome) if verdict.read else None
    return _row_of(verdict.path, about, verdict.verification)


def _verify_run(
    root: Path, args: argparse.Namespace, verifier: Verifier, remote: RayVerifier | None = None
) -> list[dict[str, Any]]:
    """Every slot of a run directory, each record checked against its slot; strays listed."""
    manifest = load_manifest(root)
    verifier.explicit_name()  # the verifier's own --world loads, or nothing is judged
    live = _live(args, len(manifest.tasks) * manifest.samples)
    scan = scan_run(
        root,
        verifier=verifier,
        write_counts=False,
        mapper=remote.map_slots if remote is not None else None,
        progress=lambda slot: live.advance(Path(slot.path).name, _slot_row(slot)),
    )
    return [_slot_row(slot) for slot in scan.slots] + _stray_rows(root, manifest, scan.slots)


def _provenance(root: Path, manifest: RunManifest, key: Path) -> str:
    """Why the run is not signed by the trusted key, as a row's problem (empty when it is)."""
    from harness_world.evidence.signing import SigningError, check_run_signature

    try:
        problem = check_run_signature(root, manifest.revision.id, key)
    except SigningError as exc:
        raise UsageError(f"--trust-key: {exc}") from None
    return f"provenance: {problem}" if problem else ""


def _stray_rows(root: Path, manifest: RunManifest, slots: list[SlotResult]) -> list[dict[str, Any]]:
    """Rows for what a run directory holds beyond its schedule: record files and index lines."""
    rows = [_stray_row(str(path), _STRAY_FILE) for path in stray_records(root, manifest)]
    scheduled = {(s.task_id, s.sample) for s in slots}
    index, _ = read_index(root)
    for task_id, sample in sorted(set(index) - scheduled):
        rows.append(_stray_row(f"{root / 'index.jsonl'} [{task_id}/{sample}]", _STRAY_LINE))
    return rows


def _slot_row(slot: SlotResult) -> dict[str, Any]:
    evidence = "lost" if slot.evidence == "missing" else slot.evidence
    grade = "–" if slot.passed is None else ("passed" if slot.passed else "failed")
    reasons = [r if len(r) <= 120 else r[:119] + "…" for r in slot.failed]
    problem = slot.reason if evidence != "verified" else ""
    if slot.evidence == "missing":
        problem = f"missing: {slot.reason}"
    return {
        "path": slot.path,
        "task": slot.task_id,
        "sample": slot.sample,
        "outcome": slot.outcome,
        "evidence": evidence,
        "grade": grade,
        "first_problem": problem or ", ".join(r.split(":", 1)[0] for r in slot.failed),
        "reasons": reasons,
        "not_reviewed": slot.not_reviewed,
        "harness": {"checked": slot.harness_checked, "failed": slot.harness_failed},
        "mismatches": [],
        "verdicts": [],
    }


_STRAY_FILE = "not a scheduled slot of this run (a foreign or duplicated record)"
_STRAY_LINE = "an index line for a slot this run does not schedule (the manifest was cut?)"


def _stray_row(path: str, problem: str) -> dict[str, Any]:
    return {
        "path": path,
        "task": "",
        "sample": "",
        "outcome": "",
        "evidence": "ungraded",
        "grade": "–",
        "first_problem": problem,
        "reasons": [],
        "not_reviewed": [],
        "harness": {"checked": 0, "failed": []},
        "mismatches": [],
        "verdicts": [],
    }


def _summarise(rows: list[dict[str, Any]]) -> tuple[dict[str, int], dict[str, int]]:
    summary = {
        state: sum(r["evidence"] == state for r in rows)
        for state in ("verified", "ungraded", "lost")
    }
    grades = {g: sum(r["grade"] == g for r in rows) for g in ("passed", "failed")}
    return summary, grades


_HEADERS = [
    "record",
    "task",
    "sample",
    "outcome",
    "evidence",
    "grade",
    "harness",
    "problem / reasons",
]


def _shown_grade(row: dict[str, Any]) -> str:
    """The grade as the table shows it: a pass with prose open says how many are pending."""
    pending = len(row["not_reviewed"])
    if row["grade"] == "passed" and pending:
        return f"passed, {pending} pending review"
    return str(row["grade"])


def _shown_harness(row: dict[str, Any]) -> str:
    """The harness layer as the table shows it: clean of checked, then the failed names."""
    checked, failed = row["harness"]["checked"], row["harness"]["failed"]
    if not checked:
        return ""
    names = [f.split(":", 1)[0].removeprefix("harness.") for f in failed]
    return f"{checked - len(failed)}/{checked}" + (f" failed: {', '.join(names)}" if names else "")


def _print_table(
    rows: list[dict[str, Any]], summary: dict[str, int], grades: dict[str, int]
) -> None:
    table = [
        [
            r["path"],
            r["task"],
            str(r["sample"]),
            r["outcome"],
            r["evidence"],
            _shown_grade(r),
            _shown_harness(r),
            "; ".join(r["reasons"]) if r["reasons"] else r["first_problem"],
        ]
        for r in rows
    ]
    print(render_table(_HEADERS, table, max_width=100))
    print()
    graded = grades["passed"] + grades["failed"]
    line = (
        f"{len(rows)} record(s): {summary['verified']} verified, {summary['ungraded']} ungraded, "
        f"{summary['lost']} lost; grades: {grades['passed']} passed, {grades['failed']} failed, "
        f"{len(rows) - graded} not graded"
    )
    not_reviewed = sum(len(r["not_reviewed"]) for r in rows)
    if not_reviewed:
        line += f"; {not_reviewed} prose criteria not reviewed"
    checked = [r for r in rows if r["harness"]["checked"]]
    if checked:
        clean = sum(not r["harness"]["failed"] for r in checked)
        line += f"; harness layer: {clean} of {len(checked)} graded record(s) clean"
    print(line)


def _row_of(path: str, about: tuple[str, int, str] | None, result: Verification) -> dict[str, Any]:
    """A record file's row; ``about`` is its task, sample and outcome when it was read."""
    grade = "–"
    problem = result.reason if result.evidence != "verified" else ""
    if result.mismatches:
        problem = str(result.mismatches[0])
    if result.not_graded:
        problem = f"not graded: {result.not_graded}"
    if result.grade is not None:
        grade = "passed" if result.grade.passed else "failed"
        if not result.grade.passed:
            problem = ", ".join(result.grade.failed)
    return {
        "path": path,
        "task": about[0] if about else "",
        "sample": about[1] if about else "",
        "outcome": about[2] if about else "",
        "evidence": result.evidence,
        "grade": grade,
        "first_problem": problem,
        "reasons": result.grade.reasons() if result.grade else [],
        "not_reviewed": result.grade.not_reviewed if result.grade else [],
        "harness": {
            "checked": len(result.grade.harness) if result.grade else 0,
            "failed": result.grade.harness_failed if result.grade else [],
        },
        "mismatches": [str(m) for m in result.mismatches[:20]],
        "verdicts": [
            {"id": v.id, "kind": v.kind, "status": v.status, "detail": v.detail}
            for v in (result.grade.verdicts if result.grade else [])
        ],
    }

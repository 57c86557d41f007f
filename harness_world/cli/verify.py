"""``verify``: replay record files, folders or run directories and report evidence and grades.

What is verified, and how, is `harness_world.running.verification.verify_paths`; this command
turns its options into `VerifyOptions`, maps what it refuses to exit 2, and prints the rows.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import sys
from pathlib import Path

import msgspec

from harness_world.analysis.trusted import TRUSTED
from harness_world.analysis.verify_text import render_verify
from harness_world.cli._selection import (
    UsageError,
    add_ray_options,
    add_read_options,
    add_world_data_options,
    check_ray_options,
    reading,
    world_data,
)
from harness_world.engine.limits import REPLAY_CALLS, REPLAY_WORK
from harness_world.grading.task import TaskError, load_tasks
from harness_world.running.live_progress import verify_progress_factory
from harness_world.running.verification import (
    Grading,
    VerifyOptions,
    verify_exit_code,
    verify_paths,
)

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
    add_read_options(parser)
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
    """How much one record may cost to replay, and where (``--executor``, ``--address``)."""
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
    add_ray_options(  # records judged on Ray: still bounded, and by the same verifier
        parser,
        "records verified in batches of Ray tasks, worlds and tasks still yours (extra: [ray]); "
        "the same table, JSON and exit code",
        "records",
        64,
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


def _check_executor(args: argparse.Namespace) -> None:
    """``--address`` and ``--ray-batch`` need ``--executor ray``, which needs Ray."""
    check_ray_options(args)
    if args.executor != "ray":
        return
    if args.ray_batch is not None and args.ray_batch < 1:
        raise UsageError("--ray-batch must be at least 1")
    if importlib.util.find_spec("ray") is None:
        raise UsageError("--executor ray needs the extra: pip install 'harness_world[ray]'")


def _grading(args: argparse.Namespace) -> Grading:
    """The verifier's tasks and seed file: ``--tasks``, the ``--world-data``'s, or built-in."""
    if args.world_data is not None or args.world_tasks is not None:  # the world's own data
        return _data_grading(args)
    try:
        tasks = None if args.no_grade else {t.id: t for t in load_tasks(folder=args.tasks)}
    except (OSError, ValueError, TaskError) as exc:
        raise UsageError(f"--tasks: {exc}") from None
    return Grading(tasks=tasks, seed_file=args.seed_file)


def _data_grading(args: argparse.Namespace) -> Grading:
    """``--world-data``: the folder's tasks, and its start state as the seed file."""
    if args.tasks or args.seed_file:
        raise UsageError(
            "--world-data gives the start state and tasks: not with --tasks/--seed-file"
        )
    data = world_data(args, [args.world] if args.world else [])
    assert data is not None
    tasks = None if args.no_grade else {t.id: t for t in data.tasks}
    return Grading(tasks=tasks, seed_file=data.seed_file, starts=data.starts)


def _options(args: argparse.Namespace) -> VerifyOptions:
    return VerifyOptions(
        grading=functools.partial(_grading, args),  # read once, only if needed
        world=args.world,
        size=args.size,
        loose=args.loose,
        pin=args.pin,
        trust_key=args.trust_key,
        max_calls=args.max_calls,
        max_work=args.max_work,
        executor=args.executor,
        address=args.address,
        ray_batch=args.ray_batch,
        keep=(TRUSTED,),  # what compare and gate read: cached now, they replay nothing
        **reading(args),
    )


def run(args: argparse.Namespace) -> int:
    """Verify every record found under the given paths; run directories slot by slot."""
    _check_executor(args)
    progress = verify_progress_factory(quiet=args.quiet, json=args.json)
    report = verify_paths(args.paths, _options(args), progress=progress)
    if report.duplicates:
        print(
            f"{len(report.duplicates)} record file(s) repeat an earlier file's digest and are "
            f"counted once: {', '.join(report.duplicates[:5])}",
            file=sys.stderr,
        )
    if args.json:
        print(json.dumps(msgspec.to_builtins(report), indent=1))
    else:
        sys.stdout.write(render_verify(report))
    strict = args.require_pass or args.require_harness
    if strict and not report.records and not (report.evidence.ungraded or report.evidence.lost):
        print("--require-pass: nothing was graded (no slot, no record)", file=sys.stderr)
    return verify_exit_code(
        report, require_pass=args.require_pass, require_harness=args.require_harness
    )

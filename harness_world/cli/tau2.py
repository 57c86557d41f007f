"""``tau2``: import τ²-bench retail tasks and check them, or regrade τ²-bench results files.

``tau2 check`` runs every gold action list as an oracle (record, replay, grade), every automatic
trace mutant of it, and τ²'s own database verdict on the same trajectories beside ours.
``tau2 regrade`` replays the tool calls of each run of a τ²-bench results file and grades it.
``tau2 run`` runs the tasks end to end with a simulated user.

The work is `harness_world.tau2.check` and `harness_world.tau2.conversation`; the τ²-specific
reading of files is `harness_world.tau2.importer`. The data is © 2025 Sierra Research, MIT
licence, and is not shipped.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import attrs
import msgspec

from harness_world.cli._selection import UsageError
from harness_world.engine.world import World, WorldError
from harness_world.running.revision import RevisionMismatch
from harness_world.tau2 import importer
from harness_world.tau2.check import check_tasks, load_data, read_marks, regrade_results
from harness_world.tau2.conversation import (
    ConversationReport,
    Drivers,
    run_conversations,
    tau2_view,
)
from harness_world.tau2.gold import ImportedTask
from harness_world.tau2.importer import FormatError
from harness_world.tau2.render import check_json, render_check, render_conversations, render_regrade
from harness_world.tau2.users import Tau2View

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``tau2`` command with its ``check`` and ``regrade`` subcommands."""
    parser = sub.add_parser(
        "tau2",
        help="check imported τ²-bench retail tasks, or regrade τ²-bench results",
        description="τ²-bench retail tasks as harness_world tasks (data not shipped).",
    )
    actions = parser.add_subparsers(dest="tau2_command", metavar="SUBCOMMAND")
    check = actions.add_parser(
        "check",
        help="run every gold action list as an oracle, its mutants, and τ²'s verdict beside ours",
        description=(
            "Import the τ² tasks, run each gold action list as an oracle (record, replay, "
            "grade), run the automatic trace mutants of each, and compute τ²'s own database "
            "verdict (whole-database hash against the gold's) beside ours. Exit 0 when every "
            "oracle passes, every disagreement with τ² is explained and every surviving "
            "mutant is validly marked equivalent; 1 otherwise; 2 on bad input."
        ),
    )
    _data_arguments(check)
    check.add_argument("--equivalents", type=Path, help="equivalent-mutant marks (default: "
                       "mutants/tau2_retail/equivalent.toml)")  # fmt: skip
    check.add_argument("--explanations", type=Path, help="explained disagreements (default: "
                       "worlds/tau2_retail/explained.toml)")  # fmt: skip
    check.set_defaults(handler=run_check)
    again = actions.add_parser(
        "regrade",
        help="replay and grade the runs of a τ²-bench results file",
        description=(
            "Replay each run's tool calls in a fresh session, verify and grade the record, and "
            "report our outcome, evidence and grade beside τ²'s recorded reward (and τ²'s "
            "database verdict recomputed here). Exit 0 when every run replays and is graded; "
            "1 when any run is unknown or does not verify; 2 on bad input."
        ),
    )
    _data_arguments(again)
    again.add_argument("results", type=Path, help="a τ²-bench results JSON file")
    again.add_argument(
        "--arguments",
        choices=("strict", "tau2"),
        default="strict",
        help=(
            "argument typing: strict (default) refuses ill-typed arguments; tau2 coerces the "
            "ill-typed arguments τ² acts on (a string or empty object as a list, any value "
            "as an unread summary) as τ² does, and lists each such call as coerced"
        ),
    )
    again.set_defaults(handler=run_regrade)
    _register_run(actions)
    parser.set_defaults(handler=lambda _args: _usage(parser))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def _data_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data", type=Path, required=True, help="τ² retail data folder (db.json, tasks file)"
    )
    parser.add_argument("--tasks", type=Path, help="a τ² tasks file (instead of a split of DATA)")
    parser.add_argument(
        "--split",
        choices=importer.SPLITS,
        help=(
            "which tasks of DATA (default train): with DATA/tasks.json and "
            "DATA/split_tasks.json as τ² lays them out, that split of tasks.json (all: every "
            "task); otherwise DATA/tasks_train.json, DATA/tasks_test.json, or both"
        ),
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _load(args: argparse.Namespace) -> tuple[World, list[ImportedTask]]:
    if args.tasks is not None and args.split is not None:
        raise UsageError("give --tasks or --split, not both")
    try:
        return load_data(Path(args.data), args.tasks, args.split)
    except (FormatError, WorldError) as exc:
        raise UsageError(str(exc).splitlines()[0]) from None


def run_check(args: argparse.Namespace) -> int:
    """Check every imported task; see the command's description for the exit codes."""
    world, tasks = _load(args)
    marks, explanations = read_marks(args.equivalents, args.explanations)
    report = check_tasks(world, tasks, Path(args.data), marks=marks, explanations=explanations)
    if args.json:
        print(check_json(report))
    else:
        print(render_check(report))
    return 1 if report.problems else 0


def run_regrade(args: argparse.Namespace) -> int:
    """Regrade every run of a results file; see the command's description for the exit codes."""
    world, tasks = _load(args)
    report = regrade_results(world, tasks, args.results, Path(args.data), arguments=args.arguments)
    if args.json:
        print(json.dumps(msgspec.to_builtins(report), indent=1, ensure_ascii=False))
    else:
        print(render_regrade(report))
    return 1 if any(r.evidence != "verified" or r.passed is None for r in report.runs) else 0


# -- tau2 run: τ² tasks end to end with a simulated user --------------------------------------


def _register_run(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    conv = actions.add_parser(
        "run",
        help="run τ² tasks end to end: an agent talking to a simulated user, then verify",
        description=(
            "Run each τ² task once: the agent talks to a simulated user (scripted from the "
            "task's user scenario, or a model over an OpenAI-compatible endpoint) and uses the "
            "tools; the record (user turns included) is replayed and graded. Exit 0 when every "
            "record verifies and is graded; 1 otherwise; 2 on bad input."
        ),
    )
    _data_arguments(conv)
    conv.add_argument(
        "--agent",
        choices=("oracle", "openai"),
        default="oracle",
        help="oracle: the gold calls driven through a conversation; openai: a model",
    )
    conv.add_argument(
        "--user",
        choices=("scripted", "openai"),
        default="scripted",
        help="the simulated user (default scripted)",
    )
    conv.add_argument(
        "--observations",
        choices=("ours", "tau2"),
        default="ours",
        help="what the agent sees: ours (default) or tau2 (τ²'s descriptions "
        "and result strings; needs --tau2-src)",
    )
    conv.add_argument(
        "--tau2-src", type=Path, help="a τ²-bench checkout (the folder holding the tau2 package)"
    )
    conv.add_argument(
        "--out",
        type=Path,
        help="write a run directory here (manifest, records bound to their slots, counts) "
        "that verify, report and compare read; an existing one of the same revision is resumed",
    )
    conv.add_argument(
        "--samples", type=int, default=1, metavar="K", help="attempts per task (default 1)"
    )
    model = conv.add_argument_group("--agent openai / --user openai")
    model.add_argument("--model", help="agent model name")
    model.add_argument("--base-url", help="agent endpoint (OpenAI-compatible)")
    model.add_argument("--api-key", default="not-needed")
    model.add_argument("--user-model", help="user model name (default: --model)")
    model.add_argument("--user-base-url", help="user endpoint (default: --base-url)")
    conv.set_defaults(handler=run_conversation)


def _view(args: argparse.Namespace, world: World) -> Tau2View | None:
    """The τ² view (τ²'s schemas from --tau2-src), or None for ours."""
    if args.observations != "tau2":
        return None
    if args.tau2_src is None:
        raise UsageError("--observations tau2 needs --tau2-src PATH (a τ²-bench checkout)")
    return tau2_view(world, Path(args.data), args.tau2_src)


def _drivers(args: argparse.Namespace) -> Drivers:
    return Drivers(**{name: getattr(args, name) for name in attrs.fields_dict(Drivers)})


def run_conversation(args: argparse.Namespace) -> int:
    """Run every selected task with a simulated user; see the description for exit codes."""
    if args.samples < 1:
        raise UsageError(f"--samples must be at least 1 (got {args.samples})")
    world, tasks = _load(args)
    view = _view(args, world)
    drivers = _drivers(args)
    agent_for = drivers.agent_for(Path(args.data))
    try:
        done = run_conversations(
            world,
            tasks,
            agent_for,
            drivers.user_for,
            view=view,
            out=args.out,
            samples=args.samples,
            label=drivers.label(),
        )
    except RevisionMismatch as exc:
        print(f"error: --out {exc}", file=sys.stderr)
        return 2
    report = ConversationReport(data_notice=importer.DATA_NOTICE, runs=[r for r, _ in done])
    if args.json:
        print(json.dumps(msgspec.to_builtins(report), indent=1, ensure_ascii=False))
    else:
        sys.stdout.write(render_conversations(report))
    return 1 if any(r.evidence != "verified" or r.passed is None for r in report.runs) else 0

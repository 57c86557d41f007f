"""``mutants``: the coverage gate over oracles, hand mutants and automatic trace mutants.

The gate is `harness_world.coverage.gate.check_worlds`; this command prints what kills what.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import msgspec

from harness_world.coverage.gate import CoverageReport, check_worlds
from harness_world.engine.plugins import PluginError
from harness_world.engine.world import WorldError
from harness_world.grading.task import TaskError

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``mutants`` command."""
    parser = sub.add_parser(
        "mutants",
        help="prove every task solvable and every criterion able to fail",
        description=(
            "Run every oracle route (on each seed) and every hand and automatic mutant through "
            "record, replay and grade. Exit 1 if an oracle route fails, a task has fewer passing "
            "routes than required (oracle_routes_min in pyproject.toml, default 2), a hand "
            "mutant passes or fails other criteria than it predicts, an automated criterion is "
            "failed by no hand mutant, or the automatic mutation score is below the threshold "
            "in pyproject.toml."
        ),
    )
    parser.add_argument(
        "--world",
        help="one world: a built-in name or a world folder (default: every built-in world "
        "with tasks)",
    )
    parser.add_argument(
        "--tasks", type=Path, help="with --world: a task folder (default: the world's own)"
    )
    parser.add_argument(
        "--sizes",
        help="seeds to run oracles on, comma-separated (default: small and large where the "
        "world declares them)",
    )
    parser.add_argument(
        "--no-automatic", action="store_true", help="skip the automatic trace mutants"
    )
    parser.add_argument(
        "--min-score", type=float, help="override the automatic mutation score threshold"
    )
    parser.add_argument(
        "--min-routes",
        type=int,
        help="override the minimum number of passing oracle routes per task",
    )
    parser.add_argument(
        "--verbose", action="store_true", help="list every attempt, not only problems"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run the gate for each world and report what kills what."""
    sizes = tuple(s.strip() for s in args.sizes.split(",") if s.strip()) if args.sizes else None
    if args.tasks is not None and not args.world:
        print("error: --tasks needs --world (the world the tasks belong to)", file=sys.stderr)
        return 2

    def started(world: str) -> None:
        if not args.json:
            print(f"checking {world} ...", file=sys.stderr)

    try:
        result = check_worlds(
            [args.world] if args.world else None,
            sizes=sizes,
            tasks_folder=args.tasks,
            threshold=args.min_score,
            automatic=not args.no_automatic,
            min_routes=args.min_routes,
            started=started,
        )
    except (WorldError, TaskError, PluginError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(msgspec.to_builtins(result), indent=1))
        return 0 if result.ok else 1
    for report in result.worlds:
        _print_report(report, verbose=args.verbose)
    print("GATE PASSED" if result.ok else "GATE FAILED")
    return 0 if result.ok else 1


def _print_report(report: CoverageReport, *, verbose: bool) -> None:
    oracles = [r for r in report.results if r.kind == "oracle"]
    hand = [r for r in report.results if r.kind == "hand"]
    print(f"\n== {report.world}")
    print(
        f"oracles: {sum(r.ok for r in oracles)}/{len(oracles)} route runs pass "
        f"(seeds: {', '.join(sorted({r.size for r in oracles}))})"
    )
    counts = sorted(report.routes.items())
    fewest = min((n for _, n in counts), default=0)
    print(
        f"routes per task: {sum(n for _, n in counts)} passing over {len(counts)} tasks, "
        f"fewest {fewest} (at least {report.min_routes} required)"
    )
    print("  " + ", ".join(f"{task.split('.', 1)[-1]} {n}" for task, n in counts))
    print(f"hand mutants: {sum(r.ok for r in hand)}/{len(hand)} fail exactly as predicted")
    print(
        f"automatic mutants: {report.auto_killed} killed, {report.auto_survived} survived, "
        f"{report.auto_equivalent} equivalent; "
        f"score {report.score:.3f} (threshold {report.threshold:.2f})"
    )
    print("criteria and the hand mutants that kill them:")
    by_task: dict[str, list[str]] = {}
    for key, killers in sorted(report.killed_by.items()):
        task, criterion = key.split(": ", 1)
        by_task.setdefault(task, []).append(
            f"{criterion} <- {len(killers)}" if killers else f"{criterion} <- NONE"
        )
    for task, lines in by_task.items():
        print(f"  {task}: " + "; ".join(lines))
    if verbose:
        for r in report.results:
            status = "ok " if r.ok else "BAD"
            name = f"{r.id} [{r.route}]" if r.route else r.id
            print(f"  {status} {r.kind:6} {r.size:5} {name}: failed {r.failed or '-'} {r.note}")
    for problem in report.problems:
        print(f"  PROBLEM: {problem}")

"""Crossed runs on the command line: ``run --crossed FILE`` and ``compare`` of one.

``run --crossed FILE`` reads a JSON list of configurations, each
``{"name", "harness", "profile", "agent", "options": {flag: value}}`` (options named like
``run``'s flags, e.g. ``{"script": "b.py"}`` or ``{"model": "m", "base-url": "..."}``), and
runs them over the same slots, interleaved. `harness_world.cli.compare` hands a single
directory holding ``crossed.json`` here; the comparison lives in
`harness_world.analysis.crossed`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import msgspec

from harness_world.analysis.crossed import compare_crossed, render_crossed
from harness_world.cli._selection import UsageError, limit_overrides, run_reader
from harness_world.grading.task import Task
from harness_world.registry import Options
from harness_world.release.ablation import (
    ABLATE_HELP,
    ABLATION,
    compare_ablation,
    parse_factors,
    render_ablation,
    run_ablation,
)
from harness_world.running.agents import Agent
from harness_world.running.crossed import (
    CROSSED,
    CrossedConfig,
    CrossedError,
    read_crossed_file,
    run_crossed,
)
from harness_world.running.executors import Executor
from harness_world.running.tracks import Fresh

if TYPE_CHECKING:
    from harness_world.cli.run import RunSetup

__all__ = ["COMPARE_OPTIONS", "RUN_OPTIONS", "run_crossed_command"]


class CrossedFileError(UsageError):
    """A ``run --crossed`` file that cannot be used, named with its entry."""


def _configs_from_file(
    path: Path, args: argparse.Namespace, make_agent: Callable[[argparse.Namespace], Agent]
) -> list[tuple[CrossedConfig, Agent]]:
    """Each entry's configuration, and its agent made from ``run``'s flags and its options."""
    try:
        entries = read_crossed_file(path)
    except CrossedError as exc:
        raise CrossedFileError(f"--crossed {exc}") from None
    out = []
    for number, entry in enumerate(entries, start=1):
        unknown = sorted(k for k in entry.options if k.replace("-", "_") not in vars(args))
        if unknown:
            raise CrossedFileError(
                f"--crossed {path}: entry {number}: unknown option {unknown[0]!r}"
            )
        values = {**vars(args), "agent": entry.agent}
        for key, value in entry.options.items():
            name = key.replace("-", "_")
            values[name] = Path(value) if name in _PATHS and value is not None else value
        try:
            agent = make_agent(argparse.Namespace(**values))
        except (ValueError, OSError) as exc:
            raise CrossedFileError(f"--crossed {path}: entry {number}: {exc}") from None
        out.append((entry.config, agent))
    return out


_PATHS = {"script", "system_prompt_file"}


def run_crossed_command(
    args: argparse.Namespace,
    tasks: Sequence[Task],
    make_agent: Callable[[argparse.Namespace], Agent],
    executor: Executor,
) -> int:
    """``run --crossed FILE``: every configuration of the file over the same slots, interleaved.

    ``executor`` is the one ``run``'s execution flags chose.

    Prints one line per configuration (``--json``: one object); exit 0 when every attempt is
    valid, 1 when any is not, 2 on a bad file or another design in ``--out``.
    """
    if args.out is None or (args.crossed and args.ablate):
        raise UsageError("--crossed FILE or --ablate NAME=VALUE ... (one of them) needs --out DIR")
    common: dict[str, Any] = {"out": args.out, "samples": args.samples, "seed": args.seed}
    common.update(
        size=args.size,
        limits=limit_overrides(args),
        executor=executor,
        splits=getattr(args, "split", []),
    )
    if args.ablate:  # the baseline made from run's options, each arm with one of them changed

        def arm(options: Mapping[str, Any]) -> Agent:
            return make_agent(argparse.Namespace(**{**vars(args), **options}))

        result = run_ablation(parse_factors(args.ablate), arm, tasks, **common)
    else:
        result = run_crossed(_configs_from_file(args.crossed, args, make_agent), tasks, **common)
    counts = {name: r.counts for name, r in result.runs.items()}
    ablation = compare_ablation(result.out) if args.ablate else None
    if args.json:
        data = {"out": str(result.out), "configs": counts, "ablation": ablation}  # null: crossed
        sys.stdout.write(msgspec.json.encode(data).decode() + "\n")
    else:
        for name, c in counts.items():
            print(f"{name}: {c.valid}/{c.scheduled} valid, {c.passed} passed")
        sys.stdout.write(render_ablation(ablation) if ablation else "")
        print(f"crossed run in {result.out}; compare it with: compare {result.out}")
    return 1 if any(c.invalid for c in counts.values()) else 0


class CrossedRunOptions(Options):
    """``run --crossed FILE`` and ``run --ablate NAME=VALUE ...``: several configurations."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add ``--crossed`` and ``--ablate``."""
        parser.add_argument(
            "--crossed",
            type=Path,
            metavar="FILE",
            help="a JSON list of configurations (name, harness, profile, agent, options) run "
            "over the same slots in one seeded interleaved order into --out",
        )
        parser.add_argument("--ablate", nargs="+", metavar="NAME=VALUE", help=ABLATE_HELP)

    def take_over(self, args: argparse.Namespace, context: object) -> int | None:
        """Run every configuration, interleaved, when ``--crossed`` or ``--ablate`` is given.

        Raises:
            UsageError: on another track than the fresh one.
        """
        if args.crossed is None and not args.ablate:
            return None
        setup = cast("RunSetup", context)
        if not isinstance(setup.track, Fresh):
            flag = "--ablate" if args.ablate else "--crossed"
            raise UsageError(f"{flag} runs every configuration fresh, not --track {args.track}")
        return run_crossed_command(args, setup.tasks, setup.make_agent, setup.executor)


class CrossedCompareOptions(Options):
    """``compare`` of one crossed run directory: per model profile, or per ablation arm."""

    def take_over(self, args: argparse.Namespace, context: object) -> int | None:
        """Given one crossed run directory, print its comparison (``--json``: one object).

        ``--baseline`` and ``--candidate`` name harnesses here (default: the first two named).
        A crossed comparison reports; it applies no gate (exit 0 whatever the difference).
        """
        root = Path(args.inputs[0])
        if len(args.inputs) != 1 or not (root / CROSSED).is_file():
            return None
        reader, seed = run_reader(args), args.seed
        arms = (root / ABLATION).is_file()  # an ablation: every arm against the baseline
        names = {"baseline": args.baseline, "candidate": args.candidate}
        result: Any = (
            compare_ablation(root, seed=seed, reader=reader)
            if arms
            else compare_crossed(root, **names, seed=seed, reader=reader)
        )
        if getattr(args, "json", False):
            sys.stdout.write(msgspec.json.encode(result).decode() + "\n")
        else:
            sys.stdout.write(render_ablation(result) if arms else render_crossed(result))
        return 0


RUN_OPTIONS = CrossedRunOptions()
"""``run``'s crossed and ablation options (registered)."""

COMPARE_OPTIONS = CrossedCompareOptions()
"""``compare``'s take-over of a crossed run directory (registered)."""

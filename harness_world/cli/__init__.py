"""The command line: ``python -m harness_world <command>``.

Each command lives in its own module exposing ``register(subparsers)``, which adds a parser
whose ``handler`` default is a function taking the parsed namespace and returning an exit code.
Exit codes everywhere: 0 success, 1 a check failed, 2 usage or input error: a handler lets
every `HarnessWorldError` (a `UsageError` among them), `OSError` and `ValueError` (input that
does not parse) reach `main`, which prints it as one ``error:`` line.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from harness_world.errors import HarnessWorldError

__all__ = ["main"]

# The core's commands: each one's module under harness_world.cli and its line in ``--help``, a
# copy of its own ``help=`` (a test compares them): listing the commands imports none of their
# modules. Extensions add theirs through the plug-in registry (`harness_world.registry`).
COMMANDS: dict[str, str] = {
    "demo": "run reference solutions and typical agent mistakes; show outcome, evidence, grade",
    "new": "write a minimal world of your own (world, seed, task, oracles, mutants)",
    "run": "run an agent over tasks, k samples each, into a run directory",
    "verify": "replay records and report outcome, evidence and grade",
    "report": "a run's results with explicit denominators",
    "compare": "decide whether a candidate changed the score beyond the eval's noise",
    "precheck": "check that each task's limits fit its oracle",
    "mutants": "prove every task solvable and every criterion able to fail",
    "matrix": "the coverage matrix: conditions, their tasks and benign counterparts",
    "conditions": "benign utility, utility under attack, attack success, over-blocking, layers",
    "tasks": "list tasks with their family, budgets and criteria",
    "diagnose": "advisory observations per attempt, their reach, and failure attribution",
    "attribute": "label where one attempt's failure comes from (a reviewed attribution)",
}


def commands() -> dict[str, tuple[str, str]]:
    """Every command: name -> (its module, its ``--help`` line); the core's, then extensions'."""
    from harness_world.registry import registry

    core = {name: (f"harness_world.cli.{name}", summary) for name, summary in COMMANDS.items()}
    return {**core, **registry().commands}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command ``only`` with its options; without it, every command to list and refuse."""
    import importlib

    parser = argparse.ArgumentParser(
        prog="python -m harness_world",
        description=(
            "Run tool-calling agents against simulated worlds and grade them so that anyone "
            "can re-check the grade: records replay before they are graded."
        ),
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    if only is None:
        for name, (_, summary) in commands().items():
            sub.add_parser(name, help=summary, add_help=False)
    else:  # a core command reads no registry (its own options may)
        module = f"harness_world.cli.{only}" if only in COMMANDS else commands()[only][0]
        importlib.import_module(module).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    given = list(sys.argv[1:] if argv is None else argv)
    known = given and (given[0] in COMMANDS or given[0] in commands())
    parser = build_parser(given[0] if known else None)
    args = parser.parse_args(given)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        code: int = handler(args)
    except BrokenPipeError:
        # The reader went away (`... | head`): stop quietly, as Unix tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except (HarnessWorldError, OSError, ValueError) as exc:  # every refusal of input
        print(f"error: {exc}", file=sys.stderr)
        # A refusal that is a failed check (a run its trusted key does not sign) says so.
        return exc.exit_code if isinstance(exc, HarnessWorldError) else 2
    return code

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

# Module names under harness_world.cli, in the order shown by --help.
COMMANDS: tuple[str, ...] = (
    "demo",
    "new",
    "run",
    "verify",
    "report",
    "compare",
    "gate",  # release: every clause of a release policy
    "split",  # release: held-out split, its candidate ledger, near-duplicates
    "review",  # release: human verdicts beside a run, original and corrected scores
    "precheck",
    "play",
    "mcp",  # [integrations] MCP server (extra [mcp])
    "mutants",
    "matrix",  # authority conditions: coverage matrix
    "conditions",  # authority conditions: condition metrics and scored layers
    "tau2",
    "agentdojo",
    "tasks",
    # explaining failures: advisories, reach, attribution, forks
    "diagnose",
    "attribute",
    "fork",
)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The top-level parser with every command registered (or only the command ``only``).

    Building all twenty command parsers costs more than many commands' own work, so `main`
    builds only the one it was asked for; ``--help``, no command or an unknown one get all.
    """
    import importlib

    parser = argparse.ArgumentParser(
        prog="python -m harness_world",
        description=(
            "Run tool-calling agents against simulated worlds and grade them so that anyone "
            "can re-check the grade: records replay before they are graded."
        ),
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS if only is None else (only,):
        module = importlib.import_module(f"harness_world.cli.{name}")
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    given = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(given[0] if given and given[0] in COMMANDS else None)
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

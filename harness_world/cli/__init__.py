"""The command line: ``python -m harness_world <command>``.

Each command lives in its own module exposing ``register(subparsers)``, which adds a parser
whose ``handler`` default is a function taking the parsed namespace and returning an exit code.
Exit codes everywhere: 0 success, 1 a check failed, 2 usage or input error.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

__all__ = ["main"]

# Module names under harness_world.cli, in the order shown by --help.
COMMANDS: tuple[str, ...] = (
    "demo",
    "new",
    "run",
    "verify",
    "report",
    "compare",
    "precheck",
    "play",
    "mcp",  # [integrations] MCP server (extra [mcp])
    "mutants",
    "matrix",  # authority (issue 15): coverage matrix
    "conditions",  # authority (issue 15): condition metrics and scored layers
    "tau2",
    "tasks",
    # diagnose: advisories, reach, attribution, forks
    "diagnose",
    "attribute",
    "fork",
)


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every command registered."""
    import importlib

    parser = argparse.ArgumentParser(
        prog="python -m harness_world",
        description=(
            "Run tool-calling agents against simulated worlds and grade them so that anyone "
            "can re-check the grade: records replay before they are graded."
        ),
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        module = importlib.import_module(f"harness_world.cli.{name}")
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
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
    return code

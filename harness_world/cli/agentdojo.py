"""``agentdojo``: AgentDojo's suites imported (``check``) and its traces regraded (``regrade``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness_world.agentdojo.check import check_suite, render_check, render_regrade
from harness_world.agentdojo.data import DojoDataError
from harness_world.agentdojo.importer import SUPPORTED
from harness_world.agentdojo.regrade import Regrader, trace_files
from harness_world.agentdojo.source import DEFAULT_VERSION
from harness_world.cli._selection import UsageError

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``agentdojo`` command with ``check`` and ``regrade``."""
    parser = sub.add_parser("agentdojo", help="AgentDojo's suites as worlds; regrade its traces")
    actions = parser.add_subparsers(dest="dojo_command", metavar="SUBCOMMAND", required=True)
    check = actions.add_parser("check", help="oracle and do-nothing of every imported task")
    check.add_argument("--data", type=Path, required=True, help="an AgentDojo data folder")
    check.add_argument("--suite", choices=sorted(SUPPORTED), action="append")
    check.add_argument("--version", default=DEFAULT_VERSION)
    check.set_defaults(handler=_check)
    regrade = actions.add_parser("regrade", help="regrade AgentDojo traces (files or folders)")
    regrade.add_argument("--data", type=Path, required=True, help="an AgentDojo data folder")
    regrade.add_argument("--version", default=DEFAULT_VERSION)
    regrade.add_argument("traces", type=Path, nargs="+")
    regrade.set_defaults(handler=_regrade)


def _check(args: argparse.Namespace) -> int:
    try:
        checks = [
            c
            for s in args.suite or sorted(SUPPORTED)
            for c in check_suite(args.data, s, args.version)
        ]
    except DojoDataError as exc:
        raise UsageError(str(exc)) from None
    print(render_check(checks))
    return 0 if all(c.oracle_passed for c in checks) else 1


def _regrade(args: argparse.Namespace) -> int:
    regrader = Regrader(args.data, args.version)
    try:
        verdicts = [regrader.regrade(p) for p in trace_files(args.traces)]
    except DojoDataError as exc:
        raise UsageError(str(exc)) from None
    print(render_regrade(verdicts))
    return 0 if all(v.agrees for v in verdicts) else 1

"""``agentdojo``: AgentDojo's suites imported (``check``), its traces regraded (``regrade``)."""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``agentdojo`` command; the work is `harness_world.agentdojo.commands`."""
    parser = sub.add_parser("agentdojo", help="AgentDojo's suites as worlds; regrade its traces")
    actions = parser.add_subparsers(dest="dojo_command", metavar="SUBCOMMAND", required=True)
    check = actions.add_parser("check", help="oracle and do-nothing of every imported task")
    check.add_argument("--suite", action="append", help="a suite (default: every imported one)")
    regrade = actions.add_parser("regrade", help="regrade AgentDojo traces (files or folders)")
    regrade.add_argument("traces", type=Path, nargs="+")
    regrade.add_argument("--out", type=Path, help="write a run directory per pipeline and suite")
    for action, handler in ((check, _check), (regrade, _regrade)):
        action.add_argument("--data", type=Path, required=True, help="an AgentDojo data folder")
        action.add_argument("--version", help="benchmark version (default: AgentDojo's)")
        action.set_defaults(handler=handler)


def _check(args: argparse.Namespace) -> int:
    from harness_world.agentdojo.commands import check

    return _shown(check(args.data, args.suite, args.version))


def _regrade(args: argparse.Namespace) -> int:
    from harness_world.agentdojo.commands import regrade

    return _shown(regrade(args.data, args.traces, args.version, args.out))


def _shown(result: tuple[str, int]) -> int:
    print(result[0])
    return result[1]

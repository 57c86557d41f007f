"""``agentdojo``: AgentDojo's suites imported (``check``), traces regraded, tasks ``run``."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness_world.errors import HarnessWorldError
from harness_world.integrations.agents import MODEL_OPTIONS

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``agentdojo`` command; the work is `harness_world.agentdojo.commands`."""
    parser = sub.add_parser("agentdojo", help="AgentDojo's suites as worlds: check, regrade, run")
    actions = parser.add_subparsers(dest="dojo_command", metavar="SUBCOMMAND", required=True)
    check = actions.add_parser(
        "check",
        help="oracle, do-nothing and the coverage gate (trace mutants) of every imported task; "
        "exit 1 when a gate fails",
    )
    check.add_argument("--suite", action="append", help="a suite (default: every imported one)")
    check.add_argument(
        "--verbose", action="store_true", help="also list every equivalent mutant and why"
    )
    regrade = actions.add_parser("regrade", help="regrade AgentDojo traces (files or folders)")
    regrade.add_argument("traces", type=Path, nargs="+")
    regrade.add_argument("--out", type=Path, help="write a run directory per pipeline and suite")
    run = actions.add_parser("run", help="an agent attempts the tasks into run directories")
    run.add_argument(
        "--agent",
        choices=["oracle", "openai", "anthropic"],
        default="oracle",
        help="oracle (the ground truth), or a model agent as `run --agent` makes it",
    )
    run.add_argument("--attack", choices=["none", "important_instructions"], required=True)
    run.add_argument("--suite", action="append", help="a suite (default: every imported one)")
    run.add_argument("--out", type=Path, required=True, help="a folder for the run directories")
    MODEL_OPTIONS.add_arguments(run)
    for action in (check, regrade, run):
        action.add_argument("--data", type=Path, required=True, help="an AgentDojo data folder")
        action.add_argument("--version", help="benchmark version (default: AgentDojo's)")
        action.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    from harness_world.agentdojo.commands import dispatch
    from harness_world.cli._selection import UsageError

    try:
        text, code = dispatch(args.dojo_command, vars(args))
    except ValueError as exc:
        if isinstance(exc, HarnessWorldError):
            raise
        raise UsageError(str(exc)) from None
    print(text)
    return code

"""``fork``: a counterfactual branch of one record, stored apart from runs.

The fork is `harness_world.running.fork.fork_file`; this command parses the edit and the
budgets, makes the agent that continues a live fork, and prints the `ForkSummary`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET

from harness_world.running.agents import Agent
from harness_world.running.context import ContextPolicy
from harness_world.running.fork import ForkBounds, fork_file

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``fork`` command."""
    parser = sub.add_parser(
        "fork",
        help="branch a record: replay it under another policy, or edit a call or a result",
        description=(
            "Fork RECORD after its first --at calls (default: all). Without an edit, a replay "
            "fork re-runs the recorded calls under the given budgets (--tool-calls, --turns) and "
            "no model is called (--bound-context measures a context policy on the recorded calls). "
            "With --call TOOL ARGS_JSON the edited call runs for real and an "
            "agent continues; with --result JSON the original call runs but the agent is shown "
            "the invented result, and the fork's record is marked synthetic (never verified as "
            "an attempt). Live forks need an agent: --model and --base-url (OpenAI-compatible). "
            "Forks are bounded (--max-depth, --max-forks, --max-tool-calls), written under --out "
            "(never inside a run directory) and never counted as attempts."
        ),
    )
    parser.add_argument("record", type=Path, help="the record to fork")
    parser.add_argument("--at", type=int, help="recorded calls kept before the fork point")
    parser.add_argument("--tool-calls", type=int, help="tool-call budget of the fork")
    parser.add_argument("--turns", type=int, help="turn budget of the fork")
    parser.add_argument(
        "--context-tokens", type=int, help="context budget (estimated prompt tokens) of the fork"
    )
    parser.add_argument(
        "--bound-context",
        type=int,
        metavar="TOKENS",
        help="replay fork: measure a context policy sending old tool results as notices "
        "beyond TOKENS per request",
    )
    parser.add_argument("--call", nargs=2, metavar=("TOOL", "ARGS_JSON"), help="edited call")
    parser.add_argument("--result", metavar="JSON", help="invented result shown to the agent")
    parser.add_argument("--model", help="model of the agent that continues a live fork")
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint of that agent")
    default = ForkBounds()
    parser.add_argument(
        "--max-depth", type=int, default=default.max_depth, help="forks of forks allowed"
    )
    parser.add_argument(
        "--max-forks", type=int, default=default.max_forks, help="forks per record in --out"
    )
    parser.add_argument(
        "--max-tool-calls", type=int, default=default.max_tool_calls, help="calls per fork"
    )
    parser.add_argument("--out", type=Path, default=Path("forks"), help="where forks are kept")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=main)


def _json_arg(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{what}: not JSON: {exc}") from None


def _agent(args: argparse.Namespace) -> Agent | None:
    if args.model is None:
        return None
    if not args.base_url:
        raise ValueError("--model needs --base-url")
    from harness_world.integrations.openai import OpenAIAgent

    return OpenAIAgent(model=args.model, base_url=args.base_url)


def main(args: argparse.Namespace) -> int:
    """Make the fork, save it, and show its outcome and evidence."""
    summary = fork_file(
        args.record,
        args.at,
        out=args.out,
        budgets={
            "tool_calls": args.tool_calls,
            "turns": args.turns,
            "context_tokens": args.context_tokens,
        },
        call=(args.call[0], _json_arg(args.call[1], "--call")) if args.call else None,
        result=_json_arg(args.result, "--result") if args.result is not None else UNSET,
        agent=_agent(args),
        bounds=ForkBounds(
            max_depth=args.max_depth,
            max_forks=args.max_forks,
            max_tool_calls=args.max_tool_calls,
        ),
        policy=ContextPolicy(max_tokens=args.bound_context) if args.bound_context else None,
    )
    shown = msgspec.to_builtins(summary)
    shown.update(shown.pop("prompt_tokens"))  # each measurement a line of its own
    if args.json:
        print(json.dumps(shown, indent=1))
    else:
        for key, value in shown.items():
            print(f"{key}: {value}")
    return 0

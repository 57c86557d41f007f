"""``gate``: decide a release policy on a baseline and a candidate run directory.

Exit codes: 0 every gated clause holds; 1 one does not (or is undefined); 2 bad input.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import msgspec

from harness_world.analysis.unverified import ALLOW_HELP
from harness_world.cli._selection import add_verifier_world_options, run_reader
from harness_world.release import evaluate_release, load_policy, render_release
from harness_world.release.split import SPLIT_KEY_HELP
from harness_world.running.pending import COUNT_PENDING_HELP

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add the ``gate`` command to the top-level parser."""
    parser = subparsers.add_parser(
        "gate",
        help="decide a release policy (forbidden effects, over-blocking, completion, cost, "
        "latency, critical tasks) on a baseline and a candidate run",
        description=(
            "Replay both run directories once, decide every clause of the policy and list "
            "each with its figure, bound, limit and verdict. The release passes only when "
            "every clause the policy names holds; a figure that cannot be computed fails its "
            "clause. See docs/release.md for the policy format."
        ),
        epilog="exit codes: 0 every clause holds, 1 a clause fails, 2 bad input or usage",
    )
    parser.add_argument("policy", type=Path, metavar="POLICY.toml", help="the release policy")
    parser.add_argument("baseline", type=Path, metavar="BASELINE", help="baseline run directory")
    parser.add_argument("candidate", type=Path, metavar="CANDIDATE", help="candidate run directory")
    parser.add_argument("--json", action="store_true", help="print the decision as one JSON object")
    parser.add_argument(
        "--split",
        type=Path,
        metavar="LOCK",
        help="a held-out split lock: also print how many candidates its ledger holds",
    )
    parser.add_argument("--split-key", type=Path, metavar="PUB", help=SPLIT_KEY_HELP)
    parser.add_argument("--allow-unverified", action="store_true", help=ALLOW_HELP)
    parser.add_argument("--count-pending", action="store_true", help=COUNT_PENDING_HELP)
    add_verifier_world_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Handle ``gate``; returns the exit code."""
    policy = load_policy(args.policy)
    decision = evaluate_release(
        policy,
        args.baseline,
        args.candidate,
        reader=run_reader(args),
        name=policy.name or str(args.policy),
        split=args.split,
        split_key=args.split_key,
        allow_unverified=args.allow_unverified,
        count_pending=args.count_pending,
    )
    if args.json:
        sys.stdout.write(msgspec.json.encode(decision).decode() + "\n")
    else:
        sys.stdout.write(render_release(decision))
    return 0 if decision.passed else 1

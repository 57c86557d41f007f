"""``review``: record a person's verdict on a criterion beside a run, and read the scores.

Exit codes: 0 done; 2 bad input (no such record, unreadable batch, not a run directory).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import msgspec

from harness_world.cli._selection import add_verifier_world_options, reading, verifier_worlds
from harness_world.release.review import (
    CLAIM_HELP,
    CLAIM_LEVELS,
    ReviewError,
    ReviewRequest,
    ReviewSummary,
    add_reviews,
    load_review_batch,
    review_summary,
)
from harness_world.running.journal import describe_chain

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add the ``review`` command to the top-level parser."""
    parser = subparsers.add_parser(
        "review",
        help="record a human verdict on one criterion (never changing the automated grade) "
        "and print the original, corrected and accepted scores",
        epilog="exit codes: 0 done, 2 bad input or usage",
    )
    parser.add_argument("run_dir", type=Path, metavar="RUN")
    parser.add_argument("--task", help="the task id of the slot reviewed")
    parser.add_argument("--sample", type=int, default=0, help="its sample index (default 0)")
    parser.add_argument("--criterion", help="the criterion id, e.g. prose.1 or state.required")
    parser.add_argument("--verdict", choices=("pass", "fail"))
    parser.add_argument("--claim", choices=CLAIM_LEVELS, help=CLAIM_HELP)
    parser.add_argument("--note", default="", help="why, in the reviewer's words")
    parser.add_argument("--reviewer", default="", help="who reviewed")
    parser.add_argument("--batch", type=Path, metavar="FILE", help="a TOML file of [[review]]")
    parser.add_argument("--json", action="store_true", help="print the scores as one JSON object")
    parser.add_argument("--sign-key", type=Path, help="Ed25519 private key (PEM) signing the "
                        "reviews added (required on a signed run; extra: [sign])")  # fmt: skip
    parser.add_argument("--trust-key", type=Path, help="Ed25519 public key (PEM): the run must "
                        "be signed by it (else refused, exit 1), and only the reviews it signed "
                        "count; the rest are reported as unsigned")  # fmt: skip
    add_verifier_world_options(parser, trust_key=False)  # its own --trust-key, above
    parser.set_defaults(handler=run)


def _requests(args: argparse.Namespace) -> list[ReviewRequest]:
    given = [args.task, args.criterion, args.verdict]
    if (any(given) or args.claim) and not all(given):
        raise ReviewError("a review needs --task, --criterion and --verdict together")
    one = ReviewRequest(
        task=args.task or "",
        sample=args.sample,
        criterion=args.criterion or "",
        verdict=args.verdict or "pass",
        note=args.note,
        reviewer=args.reviewer,
        claim=args.claim or "verdict",
    )
    return ([one] if all(given) else []) + (load_review_batch(args.batch) if args.batch else [])


def _text(s: ReviewSummary) -> str:
    chain = f"review file: {describe_chain(s.chain)}\n" if s.chain is not None else ""
    return (
        f"run {s.run}  corpus {s.corpus[:16]}\n"
        f"original (automated) {s.original} of {s.graded}; corrected {s.corrected} of "
        f"{s.graded}; accepted (prose reviewed and passed) {s.accepted} of {s.graded}\n"
        f"pending review: {s.pending} slot(s); reviews {s.reviews} "
        f"(stale {s.stale}, unmatched {s.unmatched}, unsigned {s.unsigned})\n" + chain
    )


def run(args: argparse.Namespace) -> int:
    """Handle ``review``; returns the exit code."""
    requests, _ = _requests(args), reading(args)  # --clear-cache; a review replays every slot
    choice, index = verifier_worlds(args)
    if requests:
        add_reviews(args.run_dir, requests, index, key_file=args.sign_key)
    folders = choice.folders() or None
    summary = review_summary(args.run_dir, list(index.values()), folders=folders,
                             trust_key=args.trust_key)  # fmt: skip
    sys.stdout.write(msgspec.json.encode(summary).decode() + "\n" if args.json else _text(summary))
    return 0

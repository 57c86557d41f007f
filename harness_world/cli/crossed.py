"""``compare`` of a crossed run (issue 19): the harness difference per model profile.

`harness_world.cli.compare` hands a single directory holding ``crossed.json`` here; the
comparison itself lives in `harness_world.analysis.crossed`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import msgspec

from harness_world.analysis.crossed import CrossedCompareError, compare_crossed, render_crossed
from harness_world.running.crossed import CROSSED, CrossedError

__all__ = ["compare_crossed_command", "is_crossed_run"]


def is_crossed_run(inputs: list[str]) -> bool:
    """Whether ``compare`` was given one crossed run directory."""
    return len(inputs) == 1 and (Path(inputs[0]) / CROSSED).is_file()


def compare_crossed_command(args: argparse.Namespace) -> int:
    """Print the crossed comparison (``--json``: one object); exit 0, or 2 on bad input.

    ``--baseline`` and ``--candidate`` name harnesses here (default: the first two named).
    A crossed comparison reports; it applies no gate (exit 0 whatever the difference).
    """
    try:
        result = compare_crossed(args.inputs[0], baseline=args.baseline, candidate=args.candidate)
    except (CrossedError, CrossedCompareError, OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if getattr(args, "json", False):
        sys.stdout.write(msgspec.json.encode(result).decode() + "\n")
    else:
        sys.stdout.write(render_crossed(result))
    return 0

"""``split``: freeze a held-out split, read its ledger, check it for near-duplicate tasks.

Exit codes: 0 done (``check``: no near-duplicate); 1 ``check`` found one; 2 bad input.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import msgspec

from harness_world.grading.task import Task, load_tasks
from harness_world.registry import Options, Section
from harness_world.release import near_duplicates, tasks_from
from harness_world.release.split import (
    DEFAULT_THRESHOLD,
    SPLIT_KEY_HELP,
    render_heldout_use,
    render_ledger,
    run_heldout_use,
)
from harness_world.running.heldout import (
    SIGN_HELP,
    SPLIT_HELP,
    SplitError,
    freeze_split,
    load_split,
    split_hooks,
)
from harness_world.running.run import RunHook

__all__ = ["REPORT_OPTIONS", "RUN_OPTIONS", "register", "run_split_hooks"]

_SOURCES = "task files, task folders, built-in world names or built-in task ids (globs)"


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add the ``split`` command and its ``freeze``, ``ledger`` and ``check`` actions."""
    parser = subparsers.add_parser(
        "split",
        help="held-out splits: freeze one, read its candidate ledger, check for paraphrases",
        epilog="exit codes: 0 done (check: no near-duplicate), 1 check found one, 2 bad input",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    freeze = actions.add_parser("freeze", help="write a lock of task ids and hashes")
    freeze.add_argument("--tasks", nargs="+", required=True, metavar="SOURCE", help=_SOURCES)
    freeze.add_argument("--out", type=Path, required=True, metavar="LOCK", help="the new lock")
    freeze.add_argument("--sign-key", type=Path, metavar="KEY", help=SIGN_HELP)
    freeze.set_defaults(handler=_freeze)
    ledger = actions.add_parser("ledger", help="list the candidates evaluated on a split")
    ledger.add_argument("lock", type=Path, metavar="LOCK")
    ledger.add_argument("--trust-key", type=Path, metavar="PUB", help=SPLIT_KEY_HELP)
    ledger.set_defaults(handler=_ledger)
    check = actions.add_parser("check", help="flag held-out instructions alike development ones")
    check.add_argument("--dev", nargs="+", required=True, metavar="SOURCE", help=_SOURCES)
    check.add_argument(
        "--heldout", nargs="+", required=True, metavar="SOURCE", help=f"{_SOURCES}, or a LOCK"
    )
    check.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD, metavar="J")
    check.set_defaults(handler=_check)


def _freeze(args: argparse.Namespace) -> int:
    split = freeze_split(tasks_from(args.tasks), args.out, sign_key=args.sign_key)
    print(f"froze {len(split.tasks)} tasks in {args.out} at {split.frozen_at}")
    return 0


def _ledger(args: argparse.Namespace) -> int:
    sys.stdout.write(render_ledger(args.lock, args.trust_key))
    return 0


def _heldout(sources: list[str], dev: list[Task]) -> list[Task]:
    """The held-out tasks of ``--heldout``.

    A LOCK stands for the tasks it froze, found among the development tasks, the other sources
    and the built-in tasks.
    """
    locks = [s for s in sources if s.endswith(".lock")]
    others = [s for s in sources if not s.endswith(".lock")]
    tasks = tasks_from(others) if others else []
    known = {t.id: t for t in [*load_tasks(), *dev, *tasks]}
    frozen = sorted({t for lock in locks for t in load_split(lock).tasks})
    missing = [t for t in frozen if t not in known]
    if missing:
        raise SplitError(f"frozen tasks not found among the sources: {', '.join(missing)}")
    return [*tasks, *(known[t] for t in frozen)]


def _check(args: argparse.Namespace) -> int:
    dev = tasks_from(args.dev)
    held = _heldout(args.heldout, dev)
    held_ids = {t.id for t in held}
    dev = [t for t in dev if t.id not in held_ids]  # a held-out task is not development
    found = near_duplicates(dev, held, threshold=args.threshold)
    for d in found:
        print(f"{d.similarity:.3f}  {d.heldout}  ~  {d.development}")
    print(
        f"{len(found)} near-duplicate pair(s) at Jaccard >= {args.threshold:g} "
        f"({len(held)} held-out, {len(dev)} development tasks)"
    )
    return 1 if found else 0


class SplitRunOptions(Options):
    """``run --split LOCK``: the run is a candidate on a held-out split (see `run_split_hooks`)."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add ``--split`` (repeatable)."""
        parser.add_argument(
            "--split", type=Path, action="append", default=[], metavar="LOCK", help=SPLIT_HELP
        )


def run_split_hooks(args: argparse.Namespace) -> list[RunHook]:
    """The run hooks of ``run --split``: the run appended to each split's ledger."""
    return list(split_hooks(args.split))


class HeldOutReportOptions(Options):
    """``report --split LOCK [--split-key PUB]``: the run's candidates on a held-out split."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add ``--split`` and ``--split-key``."""
        parser.add_argument(
            "--split", type=Path, metavar="LOCK", help="a split lock: count candidates"
        )
        parser.add_argument("--split-key", type=Path, metavar="PUB", help=SPLIT_KEY_HELP)

    def section(self, args: argparse.Namespace) -> Section | None:
        """The ``heldout`` section: its use of the split (null without ``--split``)."""
        use = run_heldout_use(args.split, args.run, args.split_key) if args.split else None
        text = render_heldout_use(use) if use else ""
        return Section("heldout", use and msgspec.to_builtins(use), text)


RUN_OPTIONS = SplitRunOptions()
"""``run``'s held-out split option (registered)."""

REPORT_OPTIONS = HeldOutReportOptions()
"""``report``'s held-out split options (registered)."""

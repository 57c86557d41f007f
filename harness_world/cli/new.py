"""``new``: write a minimal, runnable world of your own to edit."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from harness_world.scaffold import write_scaffold

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``new`` command."""
    parser = sub.add_parser(
        "new",
        help="write a minimal world of your own (world, seed, task, oracles, mutants)",
        description=(
            "Write a minimal, runnable world called NAME under --out: worlds/NAME (contract, "
            "tools and a seed), tasks/NAME (one task), oracles/NAME (two routes) and "
            "mutants/NAME (two hand mutants). It passes `mutants`, `matrix` and an oracle "
            "`run` as written; edit it into your system (docs/world-authoring.md). Exit 2 "
            "for a bad name or files that exist (without --force)."
        ),
    )
    parser.add_argument("name", help="the world's name: lower-case letters, digits, _")
    parser.add_argument(
        "--out", type=Path, default=Path("."), help="project folder (default: here)"
    )
    parser.add_argument("--force", action="store_true", help="overwrite existing files")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Write the scaffold and say how to run it."""
    written = write_scaffold(args.name, args.out, force=args.force)
    world = args.out / "worlds" / args.name
    tasks = args.out / "tasks" / args.name
    if args.json:
        print(json.dumps({"name": args.name, "files": [str(p) for p in written]}, indent=1))
        return 0
    for path in written:
        print(f"wrote {path}")
    print(
        "\nnext:\n"
        f"  python -m harness_world mutants --world {world}\n"
        f"  python -m harness_world run --world {world} --tasks {tasks} --agent oracle "
        f"--out runs/{args.name}\n"
        f"  python -m harness_world verify runs/{args.name} --world {world} --tasks {tasks}"
    )
    return 0

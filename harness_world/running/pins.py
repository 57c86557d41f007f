"""Pins: a lock file of the world and task hashes a run was made with.

``run`` writes ``pins.json`` into the run directory. A verifier who keeps that file (or one it
made itself) passes it as ``verify --pin FILE``: verification is refused when any pinned world
or task differs in the verifier's own installation, and a record of a world or task the file
does not pin is ``ungraded``. So a re-check months later either uses exactly the pinned worlds
and tasks or says which one changed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import msgspec

from harness_world.engine.world import World, WorldError
from harness_world.grading.task import Task

__all__ = ["PINS", "PinnedWorld", "Pins", "check_pins", "load_pins", "make_pins"]

PINS = "pins.json"


class PinnedWorld(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One pinned world.

    Attributes:
        size: The seed size.
        hash: The world's content hash.
        contract_hash: The contract's hash.
    """

    size: str
    hash: str
    contract_hash: str


class Pins(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``pins.json``.

    Attributes:
        worlds: Pinned worlds by name.
        tasks: Pinned task hashes by task id.
    """

    worlds: dict[str, PinnedWorld]
    tasks: dict[str, str]


def make_pins(worlds: Mapping[str, World], tasks: Iterable[Task]) -> Pins:
    """The pins of a run's worlds and tasks."""
    return Pins(
        worlds={
            name: PinnedWorld(size=w.size, hash=w.hash, contract_hash=w.contract.hash)
            for name, w in sorted(worlds.items())
        },
        tasks={t.id: t.hash for t in sorted(tasks, key=lambda t: t.id)},
    )


def load_pins(path: Path) -> Pins:
    """Read a pin file.

    Raises:
        ValueError: when it is unreadable or malformed.
    """
    try:
        if not path.is_file():
            raise ValueError("not a regular file")
        return msgspec.json.decode(path.read_bytes(), type=Pins)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError, ValueError) as exc:
        raise ValueError(f"{path}: not a pin file: {exc}") from None


def check_pins(
    pins: Pins, load: Callable[[str, str], World], tasks: Mapping[str, Task] | None
) -> list[str]:
    """What differs between the pins and the verifier's own worlds and tasks (empty: none).

    Args:
        pins: The pins.
        load: Loads a world by name and size within the verifier's trust root.
        tasks: The verifier's tasks by id (None: not grading, tasks not checked).
    """
    problems: list[str] = []
    for name, pinned in pins.worlds.items():
        try:
            world = load(name, pinned.size)
        except WorldError as exc:
            problems.append(f"pinned world {name!r} cannot be loaded: {exc}")
            continue
        if (world.hash, world.contract.hash) != (pinned.hash, pinned.contract_hash):
            problems.append(f"world {name!r} ({pinned.size}) differs from its pin")
    for task_id, task_hash in pins.tasks.items():
        if tasks is None:
            break
        task = tasks.get(task_id)
        if task is None:
            problems.append(f"pinned task {task_id!r} is not among the verifier's tasks")
        elif task.hash != task_hash:
            problems.append(f"task {task_id!r} differs from its pin")
    return problems

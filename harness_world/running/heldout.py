"""Held-out splits: a frozen manifest of tasks and a ledger of every candidate run on it.

A split is frozen once, before anything is tuned: ``heldout.lock`` names each task by id and by
the hash of its whole definition (`Task.hash`, as ``pins.json`` does). Every run whose tasks
meet the split appends one line to the ledger beside the lock (``heldout.ledger.jsonl``): its
revision, its agent and when. Choosing the best of twenty candidates on the held-out tasks then
shows as twenty candidates, not one. The ledger is append-only; nothing here rewrites a line.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import msgspec

from harness_world.errors import HarnessWorldError
from harness_world.grading.task import Task
from harness_world.running.journal import append_jsonl, read_jsonl

__all__ = [
    "HeldOutSplit",
    "LedgerEntry",
    "SplitError",
    "candidates_on",
    "freeze_split",
    "ledger_path",
    "load_split",
    "read_ledger",
    "record_candidate",
    "record_candidates",
]

SPLIT_FORMAT = 1


class SplitError(HarnessWorldError, ValueError):
    """A split lock or ledger that cannot be written or read back."""


class HeldOutSplit(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``heldout.lock``: the frozen held-out tasks.

    Attributes:
        format: Lock format version.
        frozen_at: When it was frozen (UTC, ISO 8601).
        tasks: Task id -> the SHA-256 of its definition when frozen.
    """

    format: int = SPLIT_FORMAT
    frozen_at: str
    tasks: dict[str, str]


class LedgerEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One candidate evaluated on a split: a line of the ledger.

    Attributes:
        revision: The run's revision id (one per candidate configuration).
        agent: The agent's name.
        time: When the run was opened (UTC, ISO 8601).
        run: The run directory (context: where it was, not what it is).
        covered: Held-out tasks the run scheduled.
        changed: Of those, tasks whose definition differs from the frozen one.
    """

    revision: str
    agent: str
    time: str
    run: str
    covered: int
    changed: list[str] = []


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def ledger_path(lock: str | Path) -> Path:
    """The ledger beside a lock: ``heldout.lock`` -> ``heldout.ledger.jsonl``."""
    path = Path(lock)
    return path.with_name(f"{path.stem}.ledger.jsonl")


def freeze_split(tasks: Iterable[Task], out: str | Path) -> HeldOutSplit:
    """Write a new lock of ``tasks``; an existing lock is never replaced.

    Raises:
        SplitError: for no tasks, or when ``out`` exists or cannot be written.
    """
    split = HeldOutSplit(
        frozen_at=_now(), tasks={t.id: t.hash for t in sorted(tasks, key=lambda t: t.id)}
    )
    if not split.tasks:
        raise SplitError(f"{out}: no tasks to freeze")
    data = msgspec.json.format(msgspec.json.encode(split, order="sorted"), indent=1) + b"\n"
    try:
        with open(out, "xb") as handle:  # "x": a frozen split stays frozen
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except FileExistsError:
        raise SplitError(f"{out}: a split is already frozen there; freeze to a new file") from None
    except OSError as exc:
        raise SplitError(f"{out}: cannot write the split: {exc.strerror or exc}") from None
    return split


def load_split(lock: str | Path) -> HeldOutSplit:
    """Read a lock.

    Raises:
        SplitError: when it is unreadable or not a split lock.
    """
    try:
        return msgspec.json.decode(Path(lock).read_bytes(), type=HeldOutSplit)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise SplitError(f"{lock}: not a held-out split lock: {exc}") from None


def record_candidate(
    lock: str | Path, tasks: Sequence[Task], revision: str, agent: str, run: str | Path
) -> LedgerEntry | None:
    """Append the run to the split's ledger when it schedules a held-out task.

    Returns the entry written, or None when no task of the run is held out by this split.

    Raises:
        SplitError: when the lock is unreadable or the ledger cannot be appended to.
    """
    frozen = load_split(lock).tasks
    met = [t for t in tasks if t.id in frozen]
    if not met:
        return None
    entry = LedgerEntry(
        revision=revision,
        agent=agent,
        time=_now(),
        run=str(run),
        covered=len(met),
        changed=sorted(t.id for t in met if t.hash != frozen[t.id]),
    )
    try:
        append_jsonl(ledger_path(lock), [entry])
    except OSError as exc:
        raise SplitError(f"{ledger_path(lock)}: cannot append: {exc.strerror or exc}") from None
    return entry


def record_candidates(
    locks: Iterable[str | Path], tasks: Sequence[Task], revision: str, agent: str, run: str | Path
) -> list[LedgerEntry]:
    """`record_candidate` for each lock a run was given; the entries written."""
    written = (record_candidate(lock, tasks, revision, agent, run) for lock in locks)
    return [entry for entry in written if entry is not None]


def read_ledger(lock: str | Path) -> list[LedgerEntry]:
    """Every entry of a split's ledger, in the order written (none when it has no ledger yet).

    Raises:
        SplitError: when the ledger is unreadable or a line is not an entry.
    """
    path = ledger_path(lock)
    try:
        return read_jsonl(path, LedgerEntry)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise SplitError(f"{path}: not a held-out ledger: {exc}") from None


def candidates_on(lock: str | Path) -> int:
    """How many distinct candidates (revisions) were evaluated on a split."""
    return len({entry.revision for entry in read_ledger(lock)})

"""Held-out splits: a frozen manifest of tasks and a ledger of every candidate run on it.

A split is frozen once, before anything is tuned: ``heldout.lock`` names each task by id and by
the hash of its whole definition (`Task.hash`, as ``pins.json`` does). Every run whose tasks
meet the split appends one line to the ledger beside the lock (``heldout.ledger.jsonl``): its
revision, its agent and when. Choosing the best of twenty candidates on the held-out tasks then
shows as twenty candidates, not one. The ledger is append-only; nothing here rewrites a line.
It is a chained journal (`harness_world.running.journal`) anchored on the lock: every line
carries the SHA-256 of the line before it, the first that of the lock, so a line edited or
removed (all but the last), or a lock edited after a candidate ran, is named when it is read.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Annotated, Final

import msgspec

from harness_world.engine.limits import TASK_ID_PATTERN, read_regular_file
from harness_world.errors import HarnessWorldError
from harness_world.grading.task import Task
from harness_world.running.journal import BrokenChain, append_chained, read_chained

__all__ = [
    "HeldOutSplit",
    "LedgerEntry",
    "SplitError",
    "candidates_on",
    "check_split_tasks",
    "freeze_split",
    "ledger_path",
    "load_split",
    "read_ledger",
    "record_candidate",
    "record_candidates",
]

SPLIT_FORMAT = 1
MAX_LOCK_BYTES: Final = 16 * 1024 * 1024
"""Largest lock file read (about 150 000 tasks)."""

SPLIT_HELP: Final = (
    "a frozen held-out split (a lock of `split freeze`): refuse a run that schedules none of "
    "its tasks, else log this candidate (revision, agent, time) in its ledger"
)
"""``run --split``'s help, beside what it describes."""

_TaskId = Annotated[str, msgspec.Meta(pattern=f"^{TASK_ID_PATTERN}$")]
_Sha256 = Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{64}$")]


class SplitError(HarnessWorldError, ValueError):
    """A split lock or ledger that cannot be written or read back."""


class HeldOutSplit(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``heldout.lock``: the frozen held-out tasks.

    Attributes:
        format: Lock format version.
        frozen_at: When it was frozen (UTC, ISO 8601).
        tasks: Task id -> the SHA-256 of its definition when frozen.
    """

    format: Annotated[int, msgspec.Meta(ge=SPLIT_FORMAT, le=SPLIT_FORMAT)] = SPLIT_FORMAT
    frozen_at: str
    tasks: dict[_TaskId, _Sha256]


class LedgerEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One candidate evaluated on a split: a line of the ledger.

    Attributes:
        revision: The run's revision id (one per candidate configuration).
        agent: The agent's name.
        time: When the run was opened (UTC, ISO 8601).
        run: The run directory (context: where it was, not what it is).
        covered: Held-out tasks the run scheduled.
        previous: The SHA-256 of the ledger's line before this one (of the lock, for the
            first line): the chain that names an edited line.
        changed: Of those tasks, the ones whose definition differs from the frozen one.
    """

    revision: str
    agent: str
    time: str
    run: str
    covered: int
    previous: str
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
        SplitError: for no tasks, or when ``out`` (or a ledger beside it) exists, or ``out``
            cannot be written.
    """
    split = HeldOutSplit(
        frozen_at=_now(), tasks={t.id: t.hash for t in sorted(tasks, key=lambda t: t.id)}
    )
    if not split.tasks:
        raise SplitError(f"{out}: no tasks to freeze")
    if ledger_path(out).exists():  # a split re-frozen over its own history hides it
        raise SplitError(f"{out}: a ledger is already beside it ({ledger_path(out).name})")
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


def _read_split(lock: str | Path) -> tuple[HeldOutSplit, bytes]:
    """A lock and its bytes (the anchor of its ledger's chain)."""
    try:
        data = read_regular_file(Path(lock), MAX_LOCK_BYTES)
        return msgspec.json.decode(data, type=HeldOutSplit), data
    except OSError as exc:
        raise SplitError(f"{lock}: cannot read the split lock: {exc.strerror or exc}") from None
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise SplitError(f"{lock}: not a held-out split lock: {exc}") from None


def load_split(lock: str | Path) -> HeldOutSplit:
    """Read a lock.

    Raises:
        SplitError: when it is unreadable (missing, not a regular file, over
            `MAX_LOCK_BYTES`) or not a split lock.
    """
    return _read_split(lock)[0]


def check_split_tasks(locks: Iterable[str | Path], tasks: Sequence[Task]) -> None:
    """Refuse a run on a split that schedules none of its tasks (or a lock that is unreadable).

    Raises:
        SplitError: naming the lock, how many tasks it froze and a few of them.
    """
    ids = {t.id for t in tasks}
    for lock in locks:
        frozen = sorted(load_split(lock).tasks)
        read_ledger(lock)  # a broken ledger is refused before the run, not after
        if not ids.intersection(frozen):
            shown = ", ".join(frozen[:3]) + (", ..." if len(frozen) > 3 else "")
            raise SplitError(
                f"{lock}: none of the run's {len(ids)} task(s) is in this held-out split "
                f"(it froze {len(frozen)}: {shown}); select its tasks to run on it"
            )


def record_candidate(
    lock: str | Path, tasks: Sequence[Task], revision: str, agent: str, run: str | Path
) -> LedgerEntry | None:
    """Append the run to the split's ledger when it schedules a held-out task.

    Returns the entry written, or None when no task of the run is held out by this split.

    Raises:
        SplitError: when the lock is unreadable or the ledger cannot be appended to.
    """
    split, anchor = _read_split(lock)
    frozen = split.tasks
    met = [t for t in tasks if t.id in frozen]
    if not met:
        return None

    def entry(previous: str) -> LedgerEntry:
        return LedgerEntry(
            revision=revision,
            agent=agent,
            time=_now(),
            run=str(run),
            covered=len(met),
            previous=previous,
            changed=sorted(t.id for t in met if t.hash != frozen[t.id]),
        )

    path = ledger_path(lock)
    try:
        return append_chained(path, (anchor, f"the lock {lock}"), LedgerEntry, entry)
    except OSError as exc:
        raise SplitError(f"{path}: cannot append: {exc.strerror or exc}") from None
    except (msgspec.DecodeError, msgspec.ValidationError, BrokenChain) as exc:
        raise SplitError(
            f"not appending to a broken ledger: {_ledger_problem(path, exc)}"
        ) from None


def record_candidates(
    locks: Iterable[str | Path], tasks: Sequence[Task], revision: str, agent: str, run: str | Path
) -> list[LedgerEntry]:
    """`record_candidate` for each lock a run was given; the entries written."""
    written = (record_candidate(lock, tasks, revision, agent, run) for lock in locks)
    return [entry for entry in written if entry is not None]


def read_ledger(lock: str | Path) -> list[LedgerEntry]:
    """Every entry of a split's ledger, in the order written (none when it has no ledger yet).

    Raises:
        SplitError: when the lock or the ledger is unreadable, a line is not an entry, or the
            chain breaks (a line edited or removed, or the lock edited since), naming the line.
    """
    path = ledger_path(lock)
    try:
        return read_chained(path, (_read_split(lock)[1], f"the lock {lock}"), LedgerEntry)
    except OSError as exc:
        raise SplitError(f"{path}: cannot read the ledger: {exc.strerror or exc}") from None
    except (msgspec.DecodeError, msgspec.ValidationError, BrokenChain) as exc:
        raise SplitError(_ledger_problem(path, exc)) from None


def _ledger_problem(path: Path, exc: Exception) -> str:
    if isinstance(exc, BrokenChain):
        return str(exc)
    return f"{path}: not a held-out ledger: {exc}"


def candidates_on(lock: str | Path) -> int:
    """How many distinct candidates (revisions) were evaluated on a split."""
    return len({entry.revision for entry in read_ledger(lock)})

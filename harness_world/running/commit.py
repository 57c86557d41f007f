"""Group commit: many finished records made durable by one flush of the file system.

A durable save of one record costs an fsync of the index line, one of the record and one of its
folder. `GroupCommit` gathers the records finished in a short window and commits them together:

1. every index line of the batch is appended to ``index.jsonl`` (one write);
2. every record is written to a temporary file beside its final path;
3. one flush makes all of that durable (``syncfs`` on Linux; elsewhere an fsync per file);
4. the temporary files are renamed into place;
5. the next batch's flush (or one more at the end) makes the renames durable (elsewhere: an
   fsync per folder), and only then are the records reported.

The index stays write-ahead of the records: every line of a batch is durable before the first
rename is issued, so a crash leaves at worst a bound slot without a record (executed again on
resume) and stray temporary files (removed when the run resumes), never a torn or unbound
record. A record is handed back (counted, reported as saved) only once its batch is durable.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

import attrs

from harness_world.evidence.binding import INDEX, IndexEntry, encode_entry, index_entry
from harness_world.evidence.record import Record, seal_record, write_atomically
from harness_world.grading.verifier import SlotResult

__all__ = ["CommitRouter", "Committer", "Finished", "GroupCommit", "finished", "remove_temporaries"]

WINDOW_S = 0.05
"""How long the first record of a batch may wait for others before the batch is committed."""
MAX_BATCH = 512


@attrs.frozen(slots=True)
class Finished:
    """A record finished, judged and encoded, not yet durable (picklable: workers send it back).

    Attributes:
        path: Its final path in the run directory.
        data: The record's canonical bytes, encoded once.
        entry: Its index line (the binding to its slot).
        result: Its slot as judged (replayed and graded) in the process that made it.
    """

    path: Path
    data: bytes
    entry: IndexEntry
    result: SlotResult


def finished(record: Record, path: Path, judge: Callable[[Record], SlotResult]) -> Finished:
    """Seal a record once, judge it as every reader will read it, and bind it to its slot.

    ``judge`` is given the record decoded from the sealed bytes (`seal_record`), so what
    ``run`` reports is what ``verify`` and ``report`` will say of the saved file.

    Raises:
        RecordError: when the reader would refuse the record; nothing is saved then.
    """
    data, readable = seal_record(record)
    return Finished(path=path, data=data, entry=index_entry(readable, data), result=judge(readable))


def _load_syncfs() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        function: Callable[[int], int] = libc.syncfs
    except (OSError, AttributeError):
        return None
    return function


_SYNCFS = _load_syncfs()


def _flush_file_system(root: Path, paths: list[Path]) -> None:
    """Make ``paths`` (files or folders under ``root``) durable: one syncfs, else one fsync each."""
    if _SYNCFS is not None:
        fd = os.open(root, os.O_RDONLY)
        try:
            if _SYNCFS(fd) == 0:
                return
        finally:
            os.close(fd)
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _append_lines(root: Path, batch: list[Finished], *, sync: bool) -> Path:
    """Append the index lines of ``batch`` in one write (and fsync it when ``sync``)."""
    index = root / INDEX
    fd = os.open(index, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, b"".join(encode_entry(item.entry) for item in batch))
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)
    return index


def _write_temporary(item: Finished) -> Path:
    item.path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{item.path.name}.", suffix=".tmp", dir=item.path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(item.data)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return Path(name)


@attrs.define(slots=True)
class GroupCommit:
    """Batches the saves of one run directory and reports each batch once it is durable.

    Attributes:
        root: The run directory.
        durable: Called with every batch once it is durable (counting, progress).
        group: Batch saves (False: every record saved on its own, as before group commit:
            an fsync of its index line, of the record and of its folder).
        window_s: The longest the first record of a batch waits for others.
        max_batch: The most records in one batch.
    """

    root: Path
    durable: Callable[[Sequence[Finished]], None]
    group: bool = True
    window_s: float = WINDOW_S
    max_batch: int = MAX_BATCH
    batches: int = attrs.field(init=False, default=0)
    _pending: list[Finished] = attrs.field(init=False, factory=list)
    _renamed: list[Finished] = attrs.field(init=False, factory=list)
    _opened: float = attrs.field(init=False, default=0.0)

    def add(self, item: Finished) -> None:
        """Queue one record; commit the batch when its window has passed or it is full."""
        if not self._pending:
            self._opened = time.monotonic()
        self._pending.append(item)
        if not self.group or self.due():
            self.flush(settle=False)

    def due(self) -> bool:
        """Whether to flush now.

        A batch's window has passed or it is full, or records wait renamed but unreported
        while no batch is pending.
        """
        if not self._pending:
            return bool(self._renamed)
        return (
            len(self._pending) >= self.max_batch or time.monotonic() - self._opened >= self.window_s
        )

    def flush(self, *, settle: bool = True) -> None:
        """Commit every pending record, index lines first, and report what is durable.

        With ``settle=False`` (a batch whose window passed, more to come) the renames of this
        batch are made durable by the next batch's flush, which then reports them: one flush
        of the file system per batch instead of two. ``settle=True`` (the default, and at the
        end) leaves nothing renamed and unreported.

        When writing one record fails (a full disk), the records written before it are still
        committed and reported, then the error propagates; the rest are executed on resume.
        """
        batch, self._pending = self._pending, []
        if not self.group:
            self._one_by_one(batch)
            return
        if batch:
            self.batches += 1
        failure = self._commit(batch)
        if settle or failure is not None:
            self._settle()
        if failure is not None:
            raise failure

    def _one_by_one(self, batch: list[Finished]) -> None:
        for item in batch:  # as before group commit: three fsyncs per record
            _append_lines(self.root, [item], sync=True)
            write_atomically(item.data, item.path)
            self.durable([item])

    def _commit(self, batch: list[Finished]) -> OSError | None:
        """Index lines and data of ``batch`` durable, with the previous batch's renames; rename."""
        paths = sorted({item.path.parent for item in self._renamed})
        failure: OSError | None = None
        temporaries: list[Path] = []
        if batch:
            paths.append(_append_lines(self.root, batch, sync=False))
            for item in batch:
                try:
                    temporaries.append(_write_temporary(item))
                except OSError as exc:
                    failure = exc
                    break
        if not paths:
            return failure
        _flush_file_system(self.root, [*paths, *temporaries])
        if self._renamed:
            done, self._renamed = self._renamed, []
            self.durable(done)
        written = batch[: len(temporaries)]
        for item, tmp in zip(written, temporaries, strict=True):
            os.replace(tmp, item.path)
        self._renamed = written
        return failure

    def _settle(self) -> None:
        """Make the last renames durable and report them."""
        if self._renamed:
            done, self._renamed = self._renamed, []
            _flush_file_system(self.root, sorted({item.path.parent for item in done}))
            self.durable(done)


class Committer(Protocol):
    """What an executor needs of a commit: `GroupCommit`, or a `CommitRouter` over several."""

    @property
    def window_s(self) -> float:
        """The longest a finished record waits for its batch."""
        ...

    def add(self, item: Finished) -> None:
        """Queue one finished record."""
        ...

    def due(self) -> bool:
        """Whether a pending batch should be committed now."""
        ...

    def flush(self, *, settle: bool = True) -> None:
        """Commit everything pending (``settle``: nothing left unreported)."""
        ...


@attrs.define(slots=True)
class CommitRouter:
    """Several run directories executed together (a crossed run): one commit per directory.

    Attributes:
        commits: The commit of each run directory, by its root.
    """

    commits: Mapping[Path, GroupCommit]

    @property
    def window_s(self) -> float:
        """The shortest window of the commits routed to."""
        return min(c.window_s for c in self.commits.values())

    def add(self, item: Finished) -> None:
        """Queue a record in the commit of its run directory (``<root>/records/<task>/<n>``)."""
        self.commits[item.path.parents[2]].add(item)

    def due(self) -> bool:
        """Whether any commit has a batch to commit now."""
        return any(c.due() for c in self.commits.values())

    def flush(self, *, settle: bool = True) -> None:
        """Commit every pending batch."""
        for commit in self.commits.values():
            commit.flush(settle=settle)


def remove_temporaries(root: Path) -> int:
    """Remove temporary files a killed run left in its records folder; returns how many."""
    removed = 0
    records = root / "records"
    if not records.is_dir():
        return 0
    for tmp in records.glob("*/.*.tmp"):
        with contextlib.suppress(OSError):
            tmp.unlink()
            removed += 1
    return removed

"""Run binding: the append-only index that ties each record of a run to its slot.

As each attempt of a run ends, one line is appended to the run's ``index.jsonl`` and fsync'd
before the record itself is saved (write-ahead: a crash in between leaves a slot without a
file, executed again on resume): the slot (task, sample, seed), the run's revision, the
record's digest and the SHA-256 of the file's exact bytes (so a run's signature, which covers
the index byte for byte, covers every byte of every record, the unhashed ``context`` and the
layout included). A verifier checks each record file against its slot's last index line, so a record
copied from another run, swapped between slots, duplicated or replaced is ``ungraded``, and a
slot whose record was deleted is ``lost``. Replay proves a record consistent; the binding proves
it is the record this run made for this slot. Whoever can rewrite the whole directory can
rewrite the index too: provenance needs a signature (see ``docs/threat-model.md``).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import msgspec

from harness_world.evidence.record import Record, seal_record, write_atomically

__all__ = [
    "INDEX",
    "IndexEntry",
    "append_index",
    "binding_problem",
    "index_entry",
    "read_index",
    "save_bound",
]

INDEX = "index.jsonl"
_MAX_INDEX_BYTES = 512 * 1024 * 1024


class IndexEntry(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One line of ``index.jsonl``: a record saved for a slot.

    Attributes:
        task: The slot's task id.
        sample: The slot's sample index.
        seed: The slot's session seed.
        revision: The run's revision id.
        digest: The saved record's digest.
        file_sha256: SHA-256 of the record file's exact bytes (empty in lines written before
            the field: such a line binds the digest only).
    """

    task: str
    sample: int
    seed: int
    revision: str
    digest: str
    file_sha256: str = ""


_DECODER = msgspec.json.Decoder(IndexEntry)


def index_entry(record: Record, data: bytes) -> IndexEntry:
    """The index line binding ``record``, saved as the bytes ``data``, to its slot."""
    return IndexEntry(
        task=record.task_id,
        sample=record.sample,
        seed=record.seed,
        revision=record.revision,
        digest=record.digest,
        file_sha256=hashlib.sha256(data).hexdigest(),
    )


def save_bound(out: Path, record: Record, path: Path) -> Path:
    """Encode ``record`` once, bind those bytes in ``out``'s index, then save them at ``path``.

    Raises:
        RecordError: when the reader would refuse the record (`seal_record`); nothing is
            written then.
    """
    data, _ = seal_record(record, "msgpack" if path.suffix == ".msgpack" else "json")
    append_index(out, index_entry(record, data))
    return write_atomically(data, path)


def append_index(out: Path, entry: IndexEntry) -> None:
    """Append one index line; durable (fsync) before returning."""
    line = msgspec.json.encode(entry) + b"\n"
    fd = os.open(out / INDEX, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)


def read_index(out: Path) -> tuple[dict[tuple[str, int], IndexEntry], bool]:
    """The last index entry per slot, and whether the run has an index at all.

    A torn or malformed line (a crash while appending, an edit) binds nothing; a file that is
    not a regular file, or is unreadably large, counts as no index.
    """
    path = out / INDEX
    try:
        if not path.is_file() or path.stat().st_size > _MAX_INDEX_BYTES:
            return {}, False
        data = path.read_bytes()
    except OSError:
        return {}, False
    entries: dict[tuple[str, int], IndexEntry] = {}
    for line in data.splitlines():
        try:
            entry = _DECODER.decode(line)
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
        entries[(entry.task, entry.sample)] = entry
    return entries, True


def binding_problem(
    record: Record,
    *,
    task_id: str,
    sample: int,
    seed: int,
    revision: str,
    entry: IndexEntry | None,
    data: bytes,
) -> str:
    """Why ``record`` is not the record the run made for slot (task_id, sample); empty if it is.

    Args:
        record: The record found at the slot's path.
        data: The exact bytes of its file.
        task_id: The slot's task.
        sample: The slot's sample index.
        seed: The slot's seed, derived from the run's base seed.
        revision: The run's revision id (from its manifest).
        entry: The slot's last index entry, if any.
    """
    checks = (
        (record.task_id == task_id, f"is for task {record.task_id!r}, not {task_id!r}"),
        (record.sample == sample, f"is sample {record.sample}, not {sample}"),
        (record.seed == seed, f"has seed {record.seed}, the slot {seed}"),
        (record.revision == revision, "is of another revision than the run"),
        (entry is not None, "is not in the run's index"),
    )
    for ok, problem in checks:
        if not ok:
            return f"record {problem}: not bound to slot {task_id}/{sample}"
    assert entry is not None
    if (entry.digest, entry.seed, entry.revision) != (record.digest, seed, revision):
        return f"record digest differs from the run's index: not bound to slot {task_id}/{sample}"
    if entry.file_sha256 and hashlib.sha256(data).hexdigest() != entry.file_sha256:
        return (
            "record file differs from the bytes the run's index binds (a field outside the "
            f"digest, such as context, or the layout was edited): not bound to slot "
            f"{task_id}/{sample}"
        )
    return ""

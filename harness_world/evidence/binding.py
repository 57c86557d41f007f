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
from typing import Annotated, Literal

import attrs
import msgspec

from harness_world.evidence.record import Record, seal_record, write_atomically
from harness_world.evidence.runfiles import INDEX_BYTES, RunFileError, read_run_file

__all__ = [
    "INDEX",
    "MAX_INDEX_BYTES",
    "IndexEntry",
    "IndexTable",
    "TryKind",
    "append_index",
    "binding_problem",
    "encode_entry",
    "index_entry",
    "parse_index",
    "read_index",
    "save_bound",
    "save_try",
    "try_name",
]

INDEX = "index.jsonl"
MAX_INDEX_BYTES = INDEX_BYTES
"""Largest ``index.jsonl`` read."""

TryKind = Literal["final", "failed", "interrupted"]
"""Which try of a slot a record is: its final record, or an earlier try kept beside it (one
whose infrastructure failed and was executed again, or one an outside client abandoned)."""


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
        kind: ``final`` (left out of the line), or the kind of an earlier try of the slot kept
            as ``<sample>.<kind>-<number>.json``: every executed try is bound, so deleting one
            (and the effects it had) is seen.
        number: The earlier try's number, from 1 (0 for the final record).
    """

    task: str
    sample: int
    seed: int
    revision: str
    digest: str
    file_sha256: str = ""
    kind: TryKind = "final"
    number: Annotated[int, msgspec.Meta(ge=0, le=1_000_000)] = 0


@attrs.frozen(slots=True)
class IndexTable:
    """What an index binds: the last line per slot, and per slot its earlier tries.

    Attributes:
        finals: The last line of each slot's final record, by (task, sample).
        tries: The last line of each earlier try, by (task, sample), then (kind, number).
        present: Whether the run has an index at all.
    """

    finals: dict[tuple[str, int], IndexEntry]
    tries: dict[tuple[str, int], dict[tuple[str, int], IndexEntry]]
    present: bool


_DECODER = msgspec.json.Decoder(IndexEntry)


def try_name(sample: int, kind: TryKind, number: int) -> str:
    """The file name of a slot's try: ``<sample>.json``, or ``<sample>.<kind>-<number>.json``."""
    return f"{sample}.json" if kind == "final" else f"{sample}.{kind}-{number}.json"


def index_entry(
    record: Record, data: bytes, kind: TryKind = "final", number: int = 0
) -> IndexEntry:
    """The index line binding ``record``, saved as the bytes ``data``, to its slot (or try)."""
    return IndexEntry(
        task=record.task_id,
        sample=record.sample,
        seed=record.seed,
        revision=record.revision,
        digest=record.digest,
        file_sha256=hashlib.sha256(data).hexdigest(),
        kind=kind,
        number=number,
    )


def save_bound(
    out: Path, record: Record, path: Path, kind: TryKind = "final", number: int = 0
) -> Path:
    """Encode ``record`` once, bind those bytes in ``out``'s index, then save them at ``path``.

    Args:
        out: The run directory.
        record: The record.
        path: Where it is saved.
        kind: Which try of its slot it is (``final`` unless it is a kept earlier try).
        number: The earlier try's number (from 1).

    Raises:
        RecordError: when the reader would refuse the record (`seal_record`); nothing is
            written then.
    """
    data, _ = seal_record(record, "msgpack" if path.suffix == ".msgpack" else "json")
    append_index(out, index_entry(record, data, kind, number))
    return write_atomically(data, path)


def save_try(
    out: Path, record: Record, final: Path, kind: TryKind, data: bytes | None = None
) -> Path:
    """Keep an earlier try of a slot beside its final record, bound in the index first.

    It takes the next number free for its kind, so a resumed run never overwrites a try an
    earlier execution kept (its index line would then bind bytes that are gone).

    Args:
        out: The run directory.
        record: The try's record.
        final: Where the slot's final record lives.
        kind: ``failed`` or ``interrupted``.
        data: The record already encoded (default: encoded here, as its file's format asks).
    """
    number = 1
    while (path := final.with_name(try_name(record.sample, kind, number))).exists():
        number += 1
    encoded = data if data is not None else seal_record(record, "json")[0]
    append_index(out, index_entry(record, encoded, kind, number))
    return write_atomically(encoded, path)


def encode_entry(entry: IndexEntry) -> bytes:
    """One index line's bytes (with its newline), the same however ``entry`` was made.

    A final record's line leaves out ``kind`` and ``number``, as lines written before tries
    were indexed did. Fields are compared by value here: an entry that crossed a process
    boundary by pickle holds equal but distinct default objects, which an encoder that omits
    defaults by identity would write out.
    """
    fields = msgspec.structs.asdict(entry)
    if entry.kind == "final":
        del fields["kind"], fields["number"]
    if not entry.file_sha256:
        del fields["file_sha256"]
    return msgspec.json.encode(fields) + b"\n"


def append_index(out: Path, entry: IndexEntry) -> None:
    """Append one index line; durable (fsync) before returning."""
    line = encode_entry(entry)
    fd = os.open(out / INDEX, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)


def parse_index(data: bytes, *, present: bool = True) -> IndexTable:
    """What the bytes of an ``index.jsonl`` bind (a torn or malformed line binds nothing).

    Args:
        data: The index file's bytes, as read once.
        present: Whether the run has an index file at all.
    """
    finals: dict[tuple[str, int], IndexEntry] = {}
    tries: dict[tuple[str, int], dict[tuple[str, int], IndexEntry]] = {}
    for line in data.splitlines():
        try:
            entry = _DECODER.decode(line)
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
        slot = (entry.task, entry.sample)
        if entry.kind == "final":
            finals[slot] = entry
        else:
            tries.setdefault(slot, {})[(entry.kind, entry.number)] = entry
    return IndexTable(finals=finals, tries=tries, present=present)


def read_index(out: Path) -> tuple[dict[tuple[str, int], IndexEntry], bool]:
    """The last index entry per slot, and whether the run has an index at all.

    A torn or malformed line (a crash while appending, an edit) binds nothing; a file that is
    not a regular file, or is unreadably large, counts as no index. Readers of a whole run
    take the index from `harness_world.running.reader.open_run`, which reads it once.
    """
    try:
        data = read_run_file(out, INDEX, INDEX_BYTES)
    except RunFileError:
        return {}, False
    if data is None:
        return {}, False
    return parse_index(data).finals, True


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

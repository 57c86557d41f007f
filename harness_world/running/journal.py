"""Append-only JSON-lines files: ledgers and review logs that nothing rewrites.

Each append is one ``write`` of whole lines on a descriptor opened ``O_APPEND``, made durable
(fsync) before it returns, so two writers appending at once do not interleave their lines and
an acknowledged line survives a crash.

A *chained* journal (`append_chained`, `read_chained`) also links every line to the one
before it: each carries ``previous``, the SHA-256 of the previous line's bytes, and the first
line the SHA-256 of an anchor (the file the journal belongs to). Editing or deleting any line
but the last, or editing the anchor, breaks the chain at the next line, and reading names that
line. The chain has no secret: it catches an edit, not a forger who rewrites every line after
the one changed (signing would), and it cannot tell the last line from a truncated journal.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

import msgspec

from harness_world.errors import HarnessWorldError

__all__ = [
    "BrokenChain",
    "append_chained",
    "append_jsonl",
    "chain_link",
    "decode_jsonl",
    "read_chained",
    "read_jsonl",
]

T = TypeVar("T")
S = TypeVar("S", bound=msgspec.Struct)


class BrokenChain(HarnessWorldError, ValueError):
    """A chained journal whose line does not follow the one before it (or its anchor)."""


def chain_link(data: bytes) -> str:
    """The link to ``data`` a following line carries: its SHA-256, hex."""
    return hashlib.sha256(data).hexdigest()


def append_jsonl(path: Path, items: Iterable[msgspec.Struct]) -> None:
    """Append one line per item, durably.

    Raises:
        OSError: when the file cannot be opened or written.
    """
    data = b"".join(msgspec.json.encode(item) + b"\n" for item in items)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def _lines(data: bytes) -> list[tuple[int, bytes]]:
    """The non-blank lines of ``data`` with their 1-based line numbers."""
    return [(n, line) for n, line in enumerate(data.splitlines(), start=1) if line.strip()]


def _decoded(decoder: msgspec.json.Decoder[T], number: int, line: bytes) -> T:
    """One line decoded; an error names the line."""
    try:
        return decoder.decode(line)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise type(exc)(f"line {number}: {exc}") from None


def read_jsonl(path: Path, kind: type[T]) -> list[T]:
    """Every line of ``path`` decoded as ``kind`` (none when the file does not exist).

    Raises:
        OSError: when it cannot be read.
        msgspec.DecodeError: when a line is not JSON (the message names the line).
        msgspec.ValidationError: when a line is not a ``kind`` (likewise).
    """
    if not path.exists():
        return []
    return decode_jsonl(path.read_bytes(), kind)


def decode_jsonl(data: bytes, kind: type[T]) -> list[T]:
    """Every line of a JSON-lines file's bytes decoded as ``kind``.

    Raises:
        msgspec.DecodeError: when a line is not JSON (the message names the line).
        msgspec.ValidationError: when a line is not a ``kind`` (likewise).
    """
    decoder = msgspec.json.Decoder(kind)
    return [_decoded(decoder, n, line) for n, line in _lines(data)]


def _verified(
    data: bytes, anchor: tuple[bytes, str], kind: type[S], source: Path
) -> tuple[list[S], str]:
    """The items of a chained journal's bytes, and the link the next line must carry."""
    anchor_name = anchor[1]
    decoder = msgspec.json.Decoder(kind)
    expected, items = chain_link(anchor[0]), list[S]()
    for number, line in _lines(data):
        item = _decoded(decoder, number, line)
        if getattr(item, "previous", None) != expected:
            why = (
                f"line {number} does not follow the line before it: that line was edited, or "
                "a line was removed or inserted"
                if items
                else f"line {number} does not follow {anchor_name} as it was when the line was "
                f"written: {anchor_name} was edited, or the first line was edited or removed"
            )
            raise BrokenChain(f"{source}: {why}")
        items.append(item)
        expected = chain_link(line)
    return items, expected


def read_chained(path: Path, anchor: tuple[bytes, str], kind: type[S]) -> list[S]:
    """Every line of a chained journal, the chain checked (none when the file does not exist).

    ``anchor`` is the bytes the first line links to and what they are, for errors.

    Raises:
        OSError: when it cannot be read.
        msgspec.DecodeError: when a line is not JSON (the message names the line).
        msgspec.ValidationError: when a line is not a ``kind`` (likewise).
        BrokenChain: when a line does not carry the link to the line before (or the anchor).
    """
    if not path.exists():
        return []
    return _verified(path.read_bytes(), anchor, kind, path)[0]


def append_chained(
    path: Path, anchor: tuple[bytes, str], kind: type[S], make: Callable[[str], S]
) -> S:
    """Append ``make(previous)`` to a chained journal, durably; the item written.

    ``anchor`` is as for `read_chained`; ``make`` builds the item from its ``previous`` link.

    The file is locked while its chain is read and the line written, so two writers
    appending at once each link to the other's line.

    Raises:
        OSError: when the file cannot be opened, read or written.
        msgspec.DecodeError, msgspec.ValidationError, BrokenChain: as `read_chained`, for a
            journal already broken (nothing is appended to it).
    """
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with os.fdopen(os.dup(fd), "rb") as handle:
            handle.seek(0)
            data = handle.read()
        _, previous = _verified(data, anchor, kind, path)
        item = make(previous)
        os.write(fd, msgspec.json.encode(item) + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)  # releases the lock
    return item

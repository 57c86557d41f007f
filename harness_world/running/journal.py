"""Append-only JSON-lines files: ledgers and review logs that nothing rewrites.

Each append is one ``write`` of whole lines on a descriptor opened ``O_APPEND``, made durable
(fsync) before it returns, so two writers appending at once do not interleave their lines and
an acknowledged line survives a crash.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TypeVar

import msgspec

__all__ = ["append_jsonl", "read_jsonl"]

T = TypeVar("T")


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


def read_jsonl(path: Path, kind: type[T]) -> list[T]:
    """Every line of ``path`` decoded as ``kind`` (none when the file does not exist).

    Raises:
        OSError: when it cannot be read.
        msgspec.DecodeError: when a line is not JSON.
        msgspec.ValidationError: when a line is not a ``kind``.
    """
    if not path.exists():
        return []
    decoder = msgspec.json.Decoder(kind)
    return [decoder.decode(line) for line in path.read_bytes().splitlines() if line.strip()]

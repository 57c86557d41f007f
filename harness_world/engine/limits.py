"""Limits at every boundary: what a tool argument, a record, a seed or a task id may contain.

One table (``docs/threat-model.md``) lists them. Each limit ends one call as a typed
``invalid_arguments`` error or one record as ``lost``; a batch always goes on. A seed or data
file over a limit is one error naming the file. The checks are iterative, so hostile nesting
never reaches Python's recursion limit.
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

__all__ = [
    "ARGUMENT_DEPTH",
    "MAX_INT",
    "MAX_STRING",
    "MCP_MESSAGE_DEPTH",
    "RECORD_BYTES",
    "RECORD_DEPTH",
    "REPLAY_CALLS",
    "REPLAY_WORK",
    "TASK_ID_PATTERN",
    "check_json_value",
    "clean_text",
    "json_text_depth",
    "json_top_level",
    "read_json_file",
    "read_regular_file",
    "task_id_problem",
    "text_problem",
]

ARGUMENT_DEPTH: Final = 32
"""Deepest nesting of a tool call's arguments (the object itself is level 1)."""
RECORD_DEPTH: Final = 64
"""Deepest nesting of a record file."""
MCP_MESSAGE_DEPTH: Final = 160
"""Deepest nesting of one JSON-RPC message the MCP server reads (the message is level 1).

Below the MCP SDK's own parser limit (about 200 levels, past which it drops a message without
a reply), and above any arguments it answers as a recorded ``invalid_arguments`` call
(`ARGUMENT_DEPTH` plus the three levels of the request around them, with room to spare).
"""
MAX_STRING: Final = 1_000_000
"""Longest string, in characters, in arguments and records."""
MAX_INT: Final = 2**53
"""Integers must lie in [-2^53, 2^53]: exact in every JSON reader."""
RECORD_BYTES: Final = 256 * 1024 * 1024
"""Largest record file, in bytes."""
REPLAY_CALLS: Final = 10_000
"""Most calls a verifier replays for one record (a task's tool-call budget may lower it):
past it the record is refused before any replay."""
REPLAY_WORK: Final = 50_000_000
"""Most rows replay may examine for one record (`Session.work`: rows selected, paged or read
through the tool context); past it the record ends ``lost``. Legitimate attempts stay far
below it (a 40-call attempt that scans a 100 000-row table each time examines 4 million)."""

TASK_ID_PATTERN: Final = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,199}"
"""What a task id may be (the whole id; no two dots in a row): a task id names a folder of
its run directory, so it must be one path component on every platform. No separator, no
``..``, no leading dot or dash, no ``:`` (a drive on Windows), at most 200 characters."""
_TASK_ID = re.compile(TASK_ID_PATTERN)

_SCALARS = (str, int, float, bool, type(None))


def task_id_problem(value: object) -> str:
    """Why ``value`` is not a safe task id (see `TASK_ID_PATTERN`); empty when it is."""
    if not isinstance(value, str):
        return f"a task id must be a string, not {type(value).__name__}"
    if not _TASK_ID.fullmatch(value) or ".." in value:
        return (
            f"task id {clean_text(value)[:80]!r} is unsafe: expected 1 to 200 letters, digits "
            "and '_.-', starting with a letter or digit, without '..'"
        )
    return ""


def read_regular_file(path: str | Path, max_bytes: int) -> bytes:
    """The bytes of ``path``, when it is a regular file of at most ``max_bytes`` bytes.

    The file is opened without blocking and checked on its descriptor before anything is read,
    so a FIFO or a device is refused at once instead of hanging the reader, and a file
    swapped after a check is still the file checked.

    Raises:
        OSError: when it cannot be opened, is not a regular file, or is over the limit (the
            ``strerror`` says which).
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        if info.st_size > max_bytes:
            raise OSError(
                errno.EFBIG, f"{info.st_size} bytes, over the limit of {max_bytes}", str(path)
            )
        data = _read_all(fd, info.st_size, max_bytes)
    finally:
        os.close(fd)
    if len(data) > max_bytes:  # grew after the check
        raise OSError(errno.EFBIG, f"over the limit of {max_bytes} bytes", str(path))
    return data


def _read_all(fd: int, size: int, max_bytes: int) -> bytes:
    """Up to ``max_bytes + 1`` bytes of an open file whose size was ``size`` when checked.

    Asks for the size it saw (and one byte more, to see a file that grew) instead of the
    limit, so a small file costs no buffer of the limit's size.
    """
    chunks: list[bytes] = []
    total, want = 0, min(size, max_bytes) + 1
    while total <= max_bytes:
        chunk = os.read(fd, min(want, max_bytes + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        want = 1 << 20
    return b"".join(chunks)


def text_problem(text: str) -> str:
    """Why ``text`` cannot be stored (a lone surrogate, or too long); empty when it can."""
    if len(text) > MAX_STRING:
        return f"a string of {len(text)} characters (the limit is {MAX_STRING})"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"a lone surrogate at character {exc.start} (not valid Unicode)"
    return ""


# A JSON string (escapes included) or one bracket; what lies between them cannot nest.
_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)


def json_text_depth(text: str, stop_at: int | None = None) -> int:
    """How deep the JSON in ``text`` nests (a scalar is 0), read without parsing it.

    Brackets inside strings do not count; the scan is one pass with no recursion, so any
    depth is safe to measure. Malformed text gets a depth too (its brackets, counted as seen).

    Args:
        text: JSON text.
        stop_at: Return as soon as the depth exceeds this (the answer is then only "deeper").
    """
    depth = deepest = 0
    for token in _JSON_TOKEN.finditer(text):
        mark = token.group()[0]
        if mark in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if stop_at is not None and deepest > stop_at:
                    return deepest
        elif mark in "]}":
            depth -= 1
    return deepest


def json_top_level(text: str) -> str | None:
    """``text`` with each value nested inside its top level replaced by ``null``.

    ``{"id": 7, "params": {...}}`` becomes ``{"id": 7, "params": null}``: the top level of a
    message too deep to parse, readable with any parser. None when the text ends inside a
    nested value (no top level to show).
    """
    kept: list[str] = []
    depth = start = 0
    for token in _JSON_TOKEN.finditer(text):
        mark = token.group()[0]
        if mark in "[{":
            depth += 1
            if depth == 2:
                kept.append(text[start : token.start()] + "null")
        elif mark in "]}":
            depth -= 1
            if depth == 1:
                start = token.end()
    if depth > 1:
        return None
    kept.append(text[start:])
    return "".join(kept)


def clean_text(text: str) -> str:
    """``text`` with lone surrogates escaped as backslash sequences (what a model may emit)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def read_json_file(path: Path, max_bytes: int = RECORD_BYTES, max_depth: int = RECORD_DEPTH) -> Any:
    """The JSON value of a data file, within a record's limits (key order kept).

    Raises:
        OSError: when it cannot be read, is not a regular file, or is over ``max_bytes``.
        ValueError: when it is not UTF-8 JSON, or breaks a limit of `check_json_value`.
    """
    data = read_regular_file(path, max_bytes)
    try:
        value = json.loads(data.decode("utf-8"))
    except RecursionError:
        raise ValueError(f"over a limit: nested deeper than {max_depth} levels") from None
    except ValueError as exc:
        raise ValueError(f"not valid JSON: {exc}") from None
    problem = check_json_value(value, max_depth)
    if problem:
        raise ValueError(f"over a limit: {problem}")
    return value


def _scalar_problem(value: object) -> str:
    if isinstance(value, bool) or value is None:
        return ""
    if isinstance(value, int):
        if -MAX_INT <= value <= MAX_INT:
            return ""
        return "an integer out of range (outside ±2^53)"
    if isinstance(value, float):
        return "" if math.isfinite(value) else "a number out of range (not finite)"
    if isinstance(value, str):
        return text_problem(value)
    return f"a value of type {type(value).__name__} (only JSON types are allowed)"


def check_json_value(value: object, max_depth: int) -> str:
    """The first limit ``value`` breaks, as ``"<path>: <problem>"``; empty when it is clean.

    Allowed: objects with string keys, arrays, strings, finite numbers, integers within
    ±2^53, booleans and null, nested at most ``max_depth`` levels, strings of valid Unicode
    no longer than `MAX_STRING`. A fast pass decides; only a value that breaks a limit is
    walked again to name where.
    """
    if _flat_clean(value) or _clean(value, max_depth):
        return ""
    return _explain(value, max_depth)


def _flat_clean(value: object) -> bool:
    """The common tool call, decided in one loop: an object of ASCII keys and scalar values.

    False means "not decided here" (a nested or non-ASCII value goes to the full walk).
    """
    if type(value) is not dict:
        return False
    for key, item in value.items():
        if type(key) is not str or not key.isascii() or len(key) > MAX_STRING:
            return False
        kind = type(item)
        if kind is str:
            if not item.isascii() or len(item) > MAX_STRING:
                return False
        elif kind is int:
            if not -MAX_INT <= item <= MAX_INT:
                return False
        elif kind is not bool and item is not None:
            return False  # floats (finiteness), containers: the full walk decides
    return True


def _clean_scalar(item: object) -> bool:
    kind = type(item)
    if kind is str:
        text: str = item  # type: ignore[assignment]
        return len(text) <= MAX_STRING and (text.isascii() or not text_problem(text))
    if kind is int:
        return -MAX_INT <= item <= MAX_INT  # type: ignore[operator]
    if kind is float:
        return math.isfinite(item)  # type: ignore[arg-type]
    return kind is bool or item is None


_CONTAINERS = (dict, list, tuple)


def _clean(value: object, max_depth: int) -> bool:
    """Whether ``value`` is within every limit (containers walked iteratively, no paths)."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if type(item) in _CONTAINERS:
            if depth > max_depth or not _push_children(item, depth + 1, stack):
                return False
        elif not _clean_scalar(item):
            return False
    return True


def _push_children(item: object, depth: int, stack: list[tuple[object, int]]) -> bool:
    """Check a container's keys and scalar children; push its containers. False on a breach.

    The scalar checks are those of `_clean_scalar`, written inline: this loop sees every value
    of every record a scan reads, and a call per scalar was most of its cost.
    """
    children: Iterable[object]
    if type(item) is dict:
        if not _keys_clean(item):
            return False
        children = item.values()
    else:
        children = item  # type: ignore[assignment]
    for child in children:
        kind = type(child)
        if kind is str:
            text: str = child  # type: ignore[assignment]
            if len(text) > MAX_STRING or not (text.isascii() or not text_problem(text)):
                return False
        elif kind is dict or kind is list or kind is tuple:
            stack.append((child, depth))
        elif kind is int:
            if not -MAX_INT <= child <= MAX_INT:  # type: ignore[operator]
                return False
        elif kind is float:
            if not math.isfinite(child):  # type: ignore[arg-type]
                return False
        elif kind is not bool and child is not None:
            return False
    return True


def _keys_clean(item: dict[object, object]) -> bool:
    """Whether every key of an object is a string of valid Unicode."""
    for key in item:
        if type(key) is not str or not (key.isascii() or not text_problem(key)):
            return False
    return True


def _explain(value: object, max_depth: int) -> str:
    stack: list[tuple[object, int, str]] = [(value, 1, "$")]
    while stack:
        item, depth, path = stack.pop()
        if isinstance(item, dict | list | tuple):
            if depth > max_depth:
                return f"{path}: nested deeper than {max_depth} levels"
            if not isinstance(item, dict):
                stack.extend((v, depth + 1, f"{path}[{i}]") for i, v in enumerate(item))
                continue
            for key, child in item.items():
                if not isinstance(key, str):
                    return f"{path}: a key of type {type(key).__name__} (keys must be strings)"
                problem = text_problem(key)
                if problem:
                    return f"{path}: a key with {problem}"
                stack.append((child, depth + 1, f"{path}.{clean_text(key)[:40]}"))
            continue
        problem = _scalar_problem(item)
        if problem:
            return f"{path}: {problem}"
    return ""

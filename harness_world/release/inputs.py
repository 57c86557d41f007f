"""The release commands' input files, read defensively: policies and review batches (TOML).

A file is read only when it is a regular file of at most `MAX_INPUT_BYTES` (a FIFO or a device
is refused at once instead of hanging the reader; `harness_world.engine.limits`), decoded as
UTF-8 and parsed as TOML; nesting too deep for the parser is refused like any other syntax
error, and a number that is not finite (``inf``, ``nan``) is refused naming its key. Every
error names the file and what was expected.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from harness_world.engine.limits import read_regular_file

__all__ = ["MAX_INPUT_BYTES", "parse_toml", "read_toml"]

MAX_INPUT_BYTES: Final = 16 * 1024 * 1024
"""Largest policy or review batch read."""


def _non_finite(value: Any, where: str) -> str:
    """The dotted key of the first number in ``value`` that is not finite (empty: none)."""
    pending: list[tuple[Any, str]] = [(value, where)]
    while pending:  # iterative: a deep document cannot reach the recursion limit here
        item, key = pending.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return key or "(top level)"
        if isinstance(item, dict):
            pending.extend((v, f"{key}.{k}" if key else str(k)) for k, v in item.items())
        elif isinstance(item, list):
            pending.extend((v, f"{key}[{i}]") for i, v in enumerate(item))
    return ""


def parse_toml(text: str, source: str, error: Callable[[str], Exception]) -> dict[str, Any]:
    """The TOML document of ``text``; a failure is ``error(message)`` naming ``source``."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{source}: not TOML: {exc}") from None
    except RecursionError:
        raise error(
            f"{source}: not TOML that can be read: arrays or tables nest too deeply"
        ) from None
    key = _non_finite(data, "")
    if key:
        raise error(f"{source}: key `{key}`: expected a finite number, got inf or nan")
    return data


def read_toml(path: str | Path, what: str, error: Callable[[str], Exception]) -> dict[str, Any]:
    """The TOML document of the file ``path``; every failure is ``error(message)``, raised.

    Args:
        path: The file.
        what: What it should be, for messages (``the policy``, ``the review batch``).
        error: Makes the exception raised from a message naming the file.
    """
    try:
        text = read_regular_file(Path(path), MAX_INPUT_BYTES).decode("utf-8")
    except OSError as exc:
        raise error(f"{path}: cannot read {what}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise error(f"{path}: cannot read {what}: not UTF-8 text (byte {exc.start})") from None
    return parse_toml(text, str(path), error)

"""A run directory's own files, each read once from one regular-file descriptor.

Every decision about a run (its signature, its pins, which record binds which slot, each
record's verdict) is taken from the bytes this module read, never from a second read of the
same file: a file swapped between two reads (a FIFO tells a forger exactly when the first read
happened) cannot make the check and the use see different bytes. Each file is opened without
blocking and checked on its descriptor (`harness_world.engine.limits.read_regular_file`), so a
FIFO or a device is refused at once instead of hanging the reader; each has a size bound; and a
path that leads out of the run directory (a symbolic link to ``/dev/zero`` or to another run's
files) is refused, so the run's bytes all come from the run.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import attrs

from harness_world.engine.limits import RECORD_BYTES, read_regular_file
from harness_world.errors import HarnessWorldError

__all__ = [
    "INDEX_BYTES",
    "MANIFEST_BYTES",
    "REVIEWS_BYTES",
    "REVIEWS_HEAD_BYTES",
    "SIGNATURE_BYTES",
    "RunFileError",
    "RunFiles",
    "read_run_file",
    "read_run_files",
]

MANIFEST_BYTES = 64 * 1024 * 1024
"""Largest ``manifest.json`` a reader accepts."""
INDEX_BYTES = 512 * 1024 * 1024
"""Largest ``index.jsonl`` a reader accepts."""
SIGNATURE_BYTES = 64 * 1024
"""Largest ``index.sig.json`` a reader accepts (a signature is a few hundred bytes)."""
REVIEWS_BYTES = 256 * 1024 * 1024
"""Largest ``reviews.jsonl`` a reader accepts (a review's note may be a million characters)."""

_MANIFEST = "manifest.json"
_INDEX = "index.jsonl"
_SIGNATURE = "index.sig.json"
_REVIEWS = "reviews.jsonl"
_REVIEWS_HEAD = "reviews.head.json"
REVIEWS_HEAD_BYTES = 1024 * 1024
"""Largest head of the review chain a reader accepts."""


class RunFileError(HarnessWorldError, ValueError):
    """A file of a run directory cannot be read safely.

    It is not a regular file, is too large, or is reached through a link that leaves the run
    directory.
    """


def read_run_file(
    root: Path,
    relative: str | Path,
    max_bytes: int = RECORD_BYTES,
    *,
    real_root: str | None = None,
) -> bytes | None:
    """The bytes of one file of the run directory ``root`` (None when there is no such file).

    Args:
        root: The run directory.
        relative: The file's path inside it.
        max_bytes: The largest file accepted.
        real_root: ``root``'s real path, as its reader resolved it when it opened the run
            (default: resolved now). Files are then reached from that real directory, one
            component at a time: a run directory moved or replaced by a link afterwards is not
            followed.

    Raises:
        RunFileError: naming the file, when it is not a regular file inside ``root`` of at most
            ``max_bytes`` bytes, or cannot be read.
    """
    inside = real_root if real_root is not None else os.path.realpath(root)
    try:
        resolved = _resolved(root, inside, str(relative))
    except FileNotFoundError:
        return None
    except (OSError, RuntimeError) as exc:  # a link loop, a permission denied on the way
        raise RunFileError(f"{root / relative}: cannot read: {exc}") from None
    if not _within(resolved, inside):
        raise RunFileError(f"{root / relative}: leads out of the run directory (to {resolved})")
    try:
        return read_regular_file(resolved, max_bytes)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise RunFileError(f"{root / relative}: cannot read: {exc.strerror or exc}") from None


def _resolved(root: Path, real_root: str, relative: str) -> str:
    """``root / relative`` with every link resolved (as `Path.resolve(strict=True)` gives it).

    A path below the run directory with no link on it is the run directory's real path
    (``real_root``) joined with it: only its components are looked at (one ``lstat`` each),
    not every component from ``/`` as a full resolution walks them. Any link or ``..`` on the
    way is resolved in full.

    Raises:
        FileNotFoundError: when a component does not exist.
        OSError: when a component cannot be looked at.
    """
    parts = relative.split(os.sep)
    if os.path.isabs(relative) or any(p in ("..", ".", "") for p in parts):
        return str((root / relative).resolve(strict=True))
    current = real_root
    for part in parts:
        current = os.path.join(current, part)
        if stat.S_ISLNK(os.lstat(current).st_mode):
            return str((root / relative).resolve(strict=True))
    return current


def _within(resolved: str, real_root: str) -> bool:
    """Whether ``resolved`` (absolute, no link) is the run directory or lies inside it."""
    return resolved == real_root or resolved.startswith(real_root.rstrip(os.sep) + os.sep)


@attrs.frozen(slots=True)
class RunFiles:
    """The bytes of a run directory's own files, each read once.

    Attributes:
        root: The run directory.
        manifest: ``manifest.json``.
        index: ``index.jsonl`` (empty when there is none).
        has_index: Whether the run has an index file at all.
        signature: ``index.sig.json`` (None when the run is not signed).
        reviews: ``reviews.jsonl`` (None when nobody reviewed the run).
        reviews_head: ``reviews.head.json``, the head of the review chain (None: none).
    """

    root: Path
    manifest: bytes
    index: bytes
    has_index: bool
    signature: bytes | None
    reviews: bytes | None
    reviews_head: bytes | None


def read_run_files(root: str | Path) -> RunFiles:
    """Read a run directory's manifest, index, signature and reviews (and their head) once each.

    Raises:
        FileNotFoundError: when ``root`` has no manifest (it is not a run directory).
        RunFileError: when one of these files cannot be read safely.
    """
    base = Path(root)
    if not os.path.isdir(base):
        raise FileNotFoundError(f"{root}: not a run directory (no such folder)")
    manifest = read_run_file(base, _MANIFEST, MANIFEST_BYTES)
    if manifest is None:
        raise FileNotFoundError(f"{root}: not a run directory (no {_MANIFEST})")
    index = read_run_file(base, _INDEX, INDEX_BYTES)
    return RunFiles(
        root=base,
        manifest=manifest,
        index=index or b"",
        has_index=index is not None,
        signature=read_run_file(base, _SIGNATURE, SIGNATURE_BYTES),
        reviews=read_run_file(base, _REVIEWS, REVIEWS_BYTES),
        reviews_head=read_run_file(base, _REVIEWS_HEAD, REVIEWS_HEAD_BYTES),
    )

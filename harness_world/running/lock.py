"""One writer per run directory: an exclusive lock held while a run writes.

Two processes appending to one run directory would each run the same slots (twice the model
cost) and replace each other's results. The lock is ``flock`` on ``<run>/.lock``, which the
kernel releases when the holder exits, however it exits (``kill -9`` included), so a lock is
never stale; the file keeps the holder's pid only to name it in the refusal.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import IO

import attrs

from harness_world.errors import HarnessWorldError

__all__ = ["LOCK", "RunDirectoryBusy", "RunLock", "lock_run_directory"]

LOCK = ".lock"


class RunDirectoryBusy(HarnessWorldError):
    """Another process holds the run directory's lock (it is running into it now)."""


@attrs.define(slots=True)
class RunLock:
    """A held lock; `release` (or the process's end) lets the next writer in."""

    file: IO[str] | None

    def release(self) -> None:
        """Release the lock (idempotent)."""
        if self.file is not None:
            fcntl.flock(self.file.fileno(), fcntl.LOCK_UN)
            self.file.close()
            self.file = None


def lock_run_directory(root: Path) -> RunLock:
    """Take the run directory's lock, creating the directory if needed.

    Raises:
        RunDirectoryBusy: naming the holder's pid, when another writer holds it.
    """
    root.mkdir(parents=True, exist_ok=True)
    handle = open(root / LOCK, "a+", encoding="utf-8")  # noqa: SIM115 (held past this call)
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "unknown"
        handle.close()
        raise RunDirectoryBusy(
            f"{root}: another run is writing here (process {holder}); wait for it to end, or "
            "use another --out"
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"{os.getpid()}\n")
    handle.flush()
    return RunLock(handle)

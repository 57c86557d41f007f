"""Output paths checked before any work, so that no attempt is lost to a path it cannot use."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["record_path_problem", "run_dir_problem"]


def record_path_problem(path: Path, overwrite: bool = False) -> str:
    """Why a record cannot be saved at ``path`` (empty when it can).

    The folder it goes in is created if missing, and a file is written there and removed.

    Args:
        path: Where the record is to be saved.
        overwrite: Whether an existing file there may be replaced (``--force``); without it,
            an existing file is a problem, so no earlier record is lost without a word.
    """
    if path.is_dir():
        return "is a folder, not a file"
    if not overwrite and os.path.lexists(path):
        return "a file exists there: give --force to overwrite it"
    return _writable_folder_problem(path.parent, path.name)


def run_dir_problem(path: Path) -> str:
    """Why ``path`` cannot be a run directory (empty when it can).

    It is created if missing, and a file is written there and removed.
    """
    if path.exists() and not path.is_dir():
        return "is a file, not a folder"
    return _writable_folder_problem(path, "run")


def _writable_folder_problem(folder: Path, name: str) -> str:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=f".{name}.", suffix=".probe", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        return f"cannot write there: {exc.strerror or exc}"
    return ""

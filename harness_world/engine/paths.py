"""Where built-in data lives and where generated seeds are cached."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["builtin_dir", "cache_dir"]

_PACKAGE = Path(__file__).resolve().parents[1]


def builtin_dir(kind: str) -> Path:
    """Folder of the built-in ``worlds``, ``tasks``, ``oracles`` or ``mutants``.

    A wheel carries them under ``harness_world/_data/``; a source checkout (or an editable
    install) has them at the repository root beside the package.
    """
    shipped = _PACKAGE / "_data" / kind
    if shipped.is_dir():
        return shipped
    return _PACKAGE.parent / kind


def cache_dir() -> Path:
    """Folder for generated seeds: ``$HARNESS_WORLD_CACHE`` or ``~/.cache/harness_world``."""
    configured = os.environ.get("HARNESS_WORLD_CACHE")
    base = Path(configured) if configured else Path.home() / ".cache" / "harness_world"
    return base

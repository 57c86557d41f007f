"""Where built-in data lives and where generated seeds are cached."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

__all__ = ["build_identity", "builtin_dir", "cache_dir"]

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


def build_identity() -> str:
    """SHA-256 over this package's Python sources (names and bytes).

    The ``build`` component of a run's revision, and part of every judgement cache key.
    """
    digest = hashlib.sha256()
    for path in sorted(_PACKAGE.rglob("*.py")):
        digest.update(str(path.relative_to(_PACKAGE)).encode() + b"\x00")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def cache_dir() -> Path:
    """Folder for generated seeds and the judgement cache (``judgements/``).

    ``$HARNESS_WORLD_CACHE``, or ``~/.cache/harness_world``.
    """
    configured = os.environ.get("HARNESS_WORLD_CACHE")
    base = Path(configured) if configured else Path.home() / ".cache" / "harness_world"
    return base

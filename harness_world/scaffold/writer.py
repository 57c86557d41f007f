"""Writing the scaffold's template files under a new world's name."""

from __future__ import annotations

import keyword
import re
from pathlib import Path

from harness_world.engine.paths import builtin_dir
from harness_world.errors import HarnessWorldError

__all__ = ["ScaffoldError", "template_files", "write_scaffold"]

_TEMPLATE = Path(__file__).resolve().parent / "template"
_PLACEHOLDER = "__NAME__"
_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")


class ScaffoldError(HarnessWorldError, ValueError):
    """A world name that cannot be used, or a folder that would be overwritten."""


def template_files() -> list[Path]:
    """The template's files, relative to its root, in a stable order."""
    return sorted(p.relative_to(_TEMPLATE) for p in _TEMPLATE.rglob("*.tmpl") if p.is_file())


def _check_name(name: str) -> None:
    if not _NAME.fullmatch(name) or keyword.iskeyword(name):
        raise ScaffoldError(
            f"world name {name!r}: use lower-case letters, digits and underscores, starting "
            "with a letter (at most 40 characters), e.g. 'library'"
        )
    builtin = builtin_dir("worlds") / name
    if (builtin / "world.py").is_file():
        raise ScaffoldError(
            f"world name {name!r} is a built-in world's; choose another name (records name "
            "their world, and a verifier must tell the two apart)"
        )


def write_scaffold(name: str, out: str | Path, *, force: bool = False) -> list[Path]:
    """Write a new world called ``name`` under ``out``; returns the files written.

    Args:
        name: The world's name (``library``): its contract name and its folders' name.
        out: The project folder to hold ``worlds/<name>/``, ``tasks/<name>/`` and so on
            (created if missing).
        force: Overwrite files the scaffold would write; without it, nothing is written
            when any of them exists.

    Raises:
        ScaffoldError: for a name that is not a plain identifier or is a built-in world's,
            or existing files without ``force``.
    """
    _check_name(name)
    root = Path(out)
    if root.exists() and not root.is_dir():
        raise ScaffoldError(f"--out {root}: exists and is not a folder")
    planned = [
        (_TEMPLATE / rel, root / str(rel.with_suffix("")).replace(_PLACEHOLDER, name))
        for rel in template_files()
    ]
    existing = [str(dest) for _, dest in planned if dest.exists()]
    if existing and not force:
        raise ScaffoldError(
            f"would overwrite {len(existing)} file(s), first {existing[0]} (give --force to "
            "overwrite, or another --out)"
        )
    written: list[Path] = []
    for source, dest in planned:
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(source.read_text(encoding="utf-8").replace(_PLACEHOLDER, name))
        written.append(dest)
    return written

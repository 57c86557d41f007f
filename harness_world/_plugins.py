"""Loading plug-in Python modules (worlds, oracles, mutants) from folders by path."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from harness_world._loader import PluginError, import_path
from harness_world._paths import builtin_dir
from harness_world._scripted import Mutant, Script

__all__ = ["PluginError", "import_path", "load_mutants", "load_oracles"]


def _module(kind: str, world: str, folder: str | Path | None) -> ModuleType | None:
    root = Path(folder) if folder is not None else builtin_dir(kind) / world
    path = root / f"{kind}.py"
    if not path.is_file():
        return None
    return import_path(path, kind)


def load_oracles(world: str, folder: str | Path | None = None) -> dict[str, Script]:
    """The ``ORACLES`` mapping (task id to script) of ``oracles/<world>/oracles.py``."""
    module = _module("oracles", world, folder)
    if module is None:
        return {}
    oracles = getattr(module, "ORACLES", None)
    if not isinstance(oracles, dict):
        raise PluginError(f"{module.__file__}: defines no ORACLES dict")
    return dict(oracles)


def load_mutants(world: str, folder: str | Path | None = None) -> list[Mutant]:
    """The ``MUTANTS`` list of ``mutants/<world>/mutants.py``, checked for unique ids."""
    module = _module("mutants", world, folder)
    if module is None:
        return []
    mutants = getattr(module, "MUTANTS", None)
    if not isinstance(mutants, list) or not all(isinstance(m, Mutant) for m in mutants):
        raise PluginError(f"{module.__file__}: MUTANTS must be a list of harness_world.Mutant")
    ids = [m.id for m in mutants]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise PluginError(f"{module.__file__}: duplicate mutant ids: {', '.join(duplicates)}")
    return list(mutants)

"""Importing plug-in Python files (worlds, oracles, mutants) by path, once per process."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
import traceback
from pathlib import Path
from types import ModuleType

from harness_world.engine.paths import builtin_dir
from harness_world.errors import HarnessWorldError

__all__ = ["PluginError", "failing_line", "import_path", "plugin_module"]


class PluginError(HarnessWorldError):
    """A plug-in module is missing or does not define what it must."""


def import_path(module_file: Path, namespace: str) -> ModuleType:
    """Import a Python file once per process under a stable, path-derived module name."""
    resolved = module_file.resolve()
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:12]
    # A flat name (no dots): pickle finds it in sys.modules without importing a parent package.
    name = f"harness_world_{namespace}__{resolved.parent.name}_{digest}"
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    spec = importlib.util.spec_from_file_location(name, resolved)
    if spec is None or spec.loader is None:
        raise PluginError(f"{module_file}: cannot import")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except HarnessWorldError:
        del sys.modules[name]
        raise
    except Exception as exc:
        del sys.modules[name]
        where = failing_line(exc, module_file)
        raise PluginError(f"{where}: {type(exc).__name__}: {exc}") from None
    return module


def failing_line(exc: BaseException, module_file: Path) -> str:
    """``file:line`` where importing ``module_file`` failed, or the file alone.

    A syntax error names its own line; anything else the deepest frame of that file.
    """
    resolved = str(module_file.resolve())
    if isinstance(exc, SyntaxError) and exc.filename == resolved and exc.lineno:
        return f"{module_file}:{exc.lineno}"
    where = str(module_file)
    for frame, line in traceback.walk_tb(exc.__traceback__):
        if frame.f_code.co_filename == resolved:
            where = f"{module_file}:{line}"
    return where


def plugin_module(kind: str, world: str, folder: str | Path | None) -> ModuleType | None:
    """Import ``<folder>/<kind>.py`` (default: the built-in ``<kind>/<world>/``), if it exists."""
    root = Path(folder) if folder is not None else builtin_dir(kind) / world
    path = root / f"{kind}.py"
    if not path.is_file():
        return None
    return import_path(path, kind)

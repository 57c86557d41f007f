"""Importing plug-in Python files (worlds, oracles, mutants, scripts) by path, once per process.

A plug-in is executed from the bytes read once (a regular file within `PLUGIN_BYTES`), and the
module remembers their SHA-256 (`module_sha256`): what ran is what is hashed, so an agent whose
scripts come from a file can pin that file's code in its revision. A file whose bytes changed
is imported again as another module; unchanged bytes give the module already imported.

Each plug-in file declares one object under one name (``WORLD``, ``ORACLES``, ``MUTANTS``,
``SCRIPTS``), and `declared` is the one reader of it: nothing else of a plug-in module is read.
A declaration class made with `named_keys` names an unknown keyword instead of ignoring it.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.abc
import importlib.util
import sys
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any, Final, TypeVar

import attrs

from harness_world.engine.limits import read_regular_file
from harness_world.engine.paths import builtin_dir
from harness_world.errors import HarnessWorldError

__all__ = [
    "PLUGIN_BYTES",
    "PluginError",
    "declared",
    "failing_line",
    "import_path",
    "module_sha256",
    "named_keys",
    "plugin_module",
    "plugin_sha256",
]

PLUGIN_BYTES: Final = 16 * 1024 * 1024
"""Largest plug-in source file imported."""
_SHA256: dict[str, str] = {}
"""The SHA-256 of the bytes each plug-in module (by module name) was executed from."""
T = TypeVar("T")


class PluginError(HarnessWorldError):
    """A plug-in module is missing or does not define what it must."""


class _BytesLoader(importlib.abc.Loader):
    """Executes a module from source bytes already read (and hashed), never from the file again."""

    def __init__(self, source: bytes, origin: str) -> None:
        self._source = source
        self._origin = origin

    def exec_module(self, module: ModuleType) -> None:
        """Compile the bytes under the file's name and run them in the module's namespace."""
        code = compile(self._source, self._origin, "exec", dont_inherit=True)
        exec(code, module.__dict__)


def import_path(module_file: Path, namespace: str) -> ModuleType:
    """Import a Python file once per process (per content) under a stable module name.

    The name derives from the path and the bytes' SHA-256, so a file edited since it was
    imported is imported again, and pickle finds either version in ``sys.modules``.

    Raises:
        PluginError: when the file cannot be read (not a regular file, over `PLUGIN_BYTES`)
            or importing it fails.
    """
    resolved = module_file.resolve()
    try:
        source = read_regular_file(resolved, PLUGIN_BYTES)
    except OSError as exc:
        raise PluginError(f"{module_file}: cannot import: {exc.strerror or exc}") from None
    code = hashlib.sha256(source).hexdigest()
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:12]
    # A flat name (no dots): pickle finds it in sys.modules without importing a parent package.
    name = f"harness_world_{namespace}__{resolved.parent.name}_{digest}_{code[:12]}"
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    loader = _BytesLoader(source, str(resolved))
    spec = importlib.util.spec_from_file_location(name, resolved, loader=loader)
    if spec is None:
        raise PluginError(f"{module_file}: cannot import")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        loader.exec_module(module)
    except PluginError as exc:  # a declaration refused while the file ran: say where
        del sys.modules[name]
        raise PluginError(f"{failing_line(exc, module_file)}: {exc}") from None
    except HarnessWorldError:  # already names its file and line (a tool or row declaration)
        del sys.modules[name]
        raise
    except Exception as exc:
        del sys.modules[name]
        where = failing_line(exc, module_file)
        raise PluginError(f"{where}: {type(exc).__name__}: {exc}") from None
    _SHA256[name] = code
    return module


def module_sha256(module: ModuleType) -> str:
    """SHA-256 of the source bytes a plug-in module was executed from (empty: not a plug-in)."""
    return _SHA256.get(module.__name__, "")


def declared(module: ModuleType, name: str, kind: type[T], public: str, hint: str) -> T:
    """The one object a plug-in file declares, under ``name``, checked to be a ``kind``.

    The only read of a plug-in module's namespace: a file's other names are its own business.

    Args:
        module: The imported plug-in (`import_path`).
        name: The name it declares (``WORLD``, ``ORACLES``, ``MUTANTS``, ``SCRIPTS``).
        kind: The type the declaration must have.
        public: That type as its author imports it (``harness_world.engine.WorldSpec``).
        hint: How the file declares it, for the error.

    Raises:
        PluginError: naming the file, the name, what it must be and what was found.
    """
    value = vars(module).get(name)
    if not isinstance(value, kind):
        found = "nothing" if value is None else type(value).__name__
        raise PluginError(f"{module.__file__}: {name} must be a {public} (found {found}); {hint}")
    return value


def named_keys(cls: type[T]) -> type[T]:
    """Make an attrs declaration class name an unknown keyword, listing the ones it takes.

    A typo in a plug-in's declaration (``WorldSpec(oracle=...)``) is then one error naming the
    key, where Python alone would not say which keys there are.
    """
    init = cls.__init__
    known = tuple(a.alias for a in attrs.fields(cls) if a.init)  # type: ignore[arg-type]

    @functools.wraps(init)
    def checked(self: object, *args: Any, **kwargs: Any) -> None:
        unknown = sorted(set(kwargs) - set(known))
        if unknown:
            raise PluginError(
                f"{cls.__name__} has no {' or '.join(map(repr, unknown))} "
                f"(it takes: {', '.join(known)})"
            )
        init(self, *args, **kwargs)

    setattr(cls, "__init__", checked)  # noqa: B010  (mypy refuses assigning a method)
    return cls


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


def plugin_sha256(kind: str, world: str, folder: str | Path | None) -> str:
    """`module_sha256` of `plugin_module` (empty when the world has no such file)."""
    module = plugin_module(kind, world, folder)
    return "" if module is None else module_sha256(module)

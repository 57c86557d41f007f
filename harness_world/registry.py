"""The one plug-in registry: how extensions reach the core without the core importing them.

The core (engine, evidence, grading, the attempt and run loop, text reports and the core
commands) names no extension module. An extension declares what it adds in a ``register``
function that is given the `Registry` and records *references* (``"module:attribute"``
strings), so registering imports nothing heavy and nothing is imported until it is used:

- ``command``: a command of the command line (its module exposes ``register(subparsers)``);
- ``options``: options an extension adds to a core command (a `CommandOptions`);
- ``executor`` / ``verifier``: where a run's attempts or a verification's records are
  performed, by name (``ray``);
- ``track``: a way attempts depend on each other, by name (``sequential``);
- ``agent``: an agent ``run --agent`` makes, by name (``openai``), and ``run_hook``: what a
  run does around its attempts (a held-out ledger);
- ``export``: a public name of the ``harness_world`` facade.

The package's own extensions register through `BUILTIN`; a third party ships one by naming
its ``register`` function in the ``harness_world.plugins`` entry-point group::

    [project.entry-points."harness_world.plugins"]
    mine = "my_package.harness_plugin:register"
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple, Protocol

from harness_world.errors import HarnessWorldError

__all__ = [
    "BUILTIN",
    "ENTRY_POINT_GROUP",
    "CommandOptions",
    "Options",
    "PluginRegistryError",
    "Registry",
    "Section",
    "registry",
    "resolve",
]

ENTRY_POINT_GROUP = "harness_world.plugins"
"""The packaging entry-point group a third-party extension names its ``register`` in."""

BUILTIN = ("harness_world.extensions:register",)
"""The package's own extensions, registered first and exactly like a third party's."""


class PluginRegistryError(HarnessWorldError, ValueError):
    """A reference that does not resolve, or two extensions claiming one name."""


class CommandOptions(Protocol):
    """Options an extension adds to a core command, and what it does with them.

    A core command calls `add_arguments` when it builds its parser; `take_over` before its
    own work (an extension that answers the command itself returns the exit code);
    `after` once its own work is done, before printing (a failure returns a non-zero exit
    code); and `section` for what its output gains. `Options` implements each as nothing.
    """

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add the extension's options to the command's parser."""

    def take_over(self, args: argparse.Namespace, context: object) -> int | None:
        """The exit code when these options answer the command instead; else None.

        ``context`` is what the command has prepared (its documentation says what).
        """

    def after(self, args: argparse.Namespace, result: object) -> int | None:
        """Act on the command's result (files written); an exit code on failure, else None."""

    def section(self, args: argparse.Namespace) -> Section | None:
        """What the command's output gains from these options, if anything."""


class Section(NamedTuple):
    """What an extension adds to a command's output.

    Attributes:
        key: The key of its object in the command's JSON output.
        value: That object (JSON-ready).
        text: What the text output gains (appended).
    """

    key: str
    value: object
    text: str


class Options:
    """A `CommandOptions` that adds nothing: extensions override what they need."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add no option."""

    def take_over(self, args: argparse.Namespace, context: object) -> int | None:
        """Never answer the command."""
        return None

    def after(self, args: argparse.Namespace, result: object) -> int | None:
        """Do nothing after it."""
        return None

    def section(self, args: argparse.Namespace) -> Section | None:
        """Add nothing to its output."""
        return None


def resolve(reference: str) -> Any:
    """The object a ``"module:attribute"`` reference names, imported now.

    Raises:
        PluginRegistryError: when the reference is malformed or does not resolve.
    """
    module_name, _, attribute = reference.partition(":")
    if not module_name or not attribute:
        raise PluginRegistryError(f"plug-in reference {reference!r} is not 'module:attribute'")
    try:
        value = importlib.import_module(module_name)
        for part in attribute.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError) as exc:
        raise PluginRegistryError(f"plug-in reference {reference!r}: {exc}") from exc
    return value


class Registry:
    """Everything the extensions declared, by kind, as references (see the module's doc).

    Attributes:
        commands: Command name -> (module exposing ``register(subparsers)``, ``--help`` line).
        options: Core command name -> `CommandOptions` references, in registration order.
        executors: Executor name -> reference to a factory of `running.executors.Executor`.
        verifiers: Verifier name -> reference to a factory of a record verifier.
        tracks: Track name -> reference to its `running.tracks.Track` class.
        agents: ``run --agent`` name -> reference to a factory called as
            ``factory(args, world, executor)`` with ``run``'s parsed arguments.
        run_hooks: References to functions of ``run``'s parsed arguments that give the
            `running.run.RunHook` objects a run is given.
        exports: Public facade name -> reference to the object.
        sources: Which registration made each name (``kind:name`` -> its ``register``).
    """

    # A plain class, not attrs: ``--help`` reads the registry and must not import attrs.
    __slots__ = (
        "_current",
        "agents",
        "commands",
        "executors",
        "exports",
        "options",
        "run_hooks",
        "sources",
        "tracks",
        "verifiers",
    )

    def __init__(self) -> None:
        """An empty registry."""
        self.commands: dict[str, tuple[str, str]] = {}
        self.options: dict[str, list[str]] = {}
        self.executors: dict[str, str] = {}
        self.verifiers: dict[str, str] = {}
        self.tracks: dict[str, str] = {}
        self.agents: dict[str, str] = {}
        self.run_hooks: list[str] = []
        self.exports: dict[str, str] = {}
        self.sources: dict[str, str] = {}
        self._current = "?"

    def _claim(self, kind: str, name: str) -> None:
        key = f"{kind}:{name}"
        if key in self.sources:
            raise PluginRegistryError(
                f"{kind} {name!r} is registered by both {self.sources[key]} and {self._current}"
            )
        self.sources[key] = self._current

    def command(self, name: str, module: str, summary: str) -> None:
        """Add a command: ``module`` exposes ``register(subparsers)``; ``summary`` is its help."""
        self._claim("command", name)
        self.commands[name] = (module, summary)

    def add_options(self, command: str, reference: str) -> None:
        """Add a `CommandOptions` (by reference) to the core command ``command``."""
        self.options.setdefault(command, []).append(reference)

    def executor(self, name: str, reference: str) -> None:
        """Name a factory of executors (``run --executor NAME``)."""
        self._claim("executor", name)
        self.executors[name] = reference

    def verifier(self, name: str, reference: str) -> None:
        """Name a factory of record verifiers (``verify --executor NAME``)."""
        self._claim("verifier", name)
        self.verifiers[name] = reference

    def track(self, name: str, reference: str) -> None:
        """Name a track class (``run --track NAME``; a manifest's ``track``)."""
        self._claim("track", name)
        self.tracks[name] = reference

    def agent(self, name: str, reference: str) -> None:
        """Name an agent ``run --agent`` makes (a factory of its parsed arguments)."""
        self._claim("agent", name)
        self.agents[name] = reference

    def run_hook(self, reference: str) -> None:
        """Add a function of ``run``'s parsed arguments giving hooks for the run."""
        self.run_hooks.append(reference)

    def export(self, name: str, reference: str) -> None:
        """Add a public name to the ``harness_world`` facade."""
        self._claim("export", name)
        self.exports[name] = reference

    def command_options(self, command: str) -> list[CommandOptions]:
        """The `CommandOptions` of ``command``, imported now."""
        return [resolve(ref) for ref in self.options.get(command, [])]

    def load(self, reference: str, register: Callable[[Registry], None]) -> None:
        """Run one extension's ``register``, remembering it as the source of what it adds."""
        self._current = reference
        try:
            register(self)
        finally:
            self._current = "?"


_REGISTRY: list[Registry] = []


def _entry_point_files() -> Iterator[str]:
    """Each installed distribution's ``entry_points.txt``, first on ``sys.path`` first."""
    seen: set[str] = set()
    for folder in sys.path:
        try:
            entries = sorted(os.scandir(folder or "."), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if not entry.name.endswith((".dist-info", ".egg-info")):
                continue
            distribution = entry.name.rsplit("-", 1)[0].split("-")[0].lower().replace("_", "-")
            if distribution in seen:
                continue
            seen.add(distribution)
            yield os.path.join(entry.path, "entry_points.txt")


def _entry_point_references() -> list[str]:
    """The ``harness_world.plugins`` entry points' values (``module:attribute``), sorted.

    Read from the distributions' ``entry_points.txt`` directly: `importlib.metadata` would
    parse every distribution's metadata, several times what ``--help`` may cost.
    """
    found: list[str] = []
    header = f"[{ENTRY_POINT_GROUP}]"
    for path in _entry_point_files():
        try:
            with open(path, encoding="utf-8") as file:
                text = file.read()
        except OSError:
            continue
        if header not in text:
            continue
        section = text.split(header, 1)[1].split("\n[", 1)[0]
        for line in section.splitlines():
            name, equals, value = line.partition("=")
            if equals and name.strip() and not name.lstrip().startswith(("#", ";")):
                found.append(value.split("[", 1)[0].strip())
    return sorted(found)


def registry() -> Registry:
    """The registry, built on first use from `BUILTIN` and the entry-point group.

    Raises:
        PluginRegistryError: when an extension's ``register`` cannot be found, or two
            extensions claim one name.
    """
    if not _REGISTRY:
        built = Registry()
        references = list(BUILTIN)
        references += [r for r in _entry_point_references() if r not in references]
        for reference in references:
            built.load(reference, resolve(reference))
        _REGISTRY.append(built)
    return _REGISTRY[0]

"""A world's one declaration (`WorldSpec`) and where a world's parts live (`WorldLocation`).

A world folder's ``world.py`` defines ``WORLD = WorldSpec(...)``: its contract, the sizes its
generator produces, the hook that reads an outside data folder (if it reads one), and (when
they are not beside it in the usual layout) where its tasks, oracles and mutants live. The
usual layout is a project folder holding ``worlds/<name>/``, ``tasks/<name>/``,
``oracles/<name>/`` and ``mutants/<name>/``; the built-in worlds use it, and so does the
scaffold (``python -m harness_world new NAME``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from harness_world.engine.contract import Contract
from harness_world.engine.plugins import PluginError, named_keys

__all__ = ["DataHook", "Generator", "WorldLocation", "WorldSpec", "WorldSpecError"]

Generator = Callable[[str], Mapping[str, Any]]
"""A seeded, pure generator: a size name to the world's data (entity name to a list of rows)."""
DataHook = Callable[[Path, Path | None], Any]
"""Reads an outside data folder (and maybe a tasks file of its own format) into a
`harness_world.grading.worlds.WorldData`: the world on that data and its tasks."""


class WorldSpecError(PluginError, ValueError):
    """A `WorldSpec` that is missing a part, names one that cannot be used, or an unknown key."""


def _names(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


def _relative(value: str) -> str:
    if Path(value).is_absolute():
        raise WorldSpecError(f"a world's folders are relative to its world folder: {value!r}")
    return value


@named_keys
@attrs.frozen(slots=True)
class WorldSpec:
    """Everything a world declares: its contract, its seeds, and where its other parts live.

    Attributes:
        contract: The entities and tools (see `harness_world.engine.tool`, `entity`).
        generate: Produces the data of a size in ``sizes``; None when every seed is a file
            under ``seeds/`` (``seeds/<size>.json`` or ``.msgpack``). A generated size is
            cached on disk, keyed by the world code's hash.
        sizes: The sizes ``generate`` produces (committed seed files need no entry).
        tasks: The task folder, relative to the world folder (default:
            ``../../tasks/<name>``, the usual layout).
        oracles: The folder of ``oracles.py`` (default ``../../oracles/<name>``).
        mutants: The folder of ``mutants.py`` (default ``../../mutants/<name>``).
        description: One line about the world, shown by ``tasks`` and the docs.
        load_data: For a world whose start state and tasks come from an outside data folder
            (``run --world-data DIR``): reads the folder (and a tasks file of its own format,
            or None) into a `harness_world.grading.worlds.WorldData` (see `DataHook`).

    Raises:
        WorldSpecError: a contract that is not a `Contract`, sizes without a generator (or a
            generator without sizes), an absolute folder, a hook that is not callable, or a
            key it does not take.
    """

    contract: Contract
    generate: Generator | None = None
    sizes: tuple[str, ...] = attrs.field(default=(), converter=_names)
    tasks: str = attrs.field(default="", converter=_relative)
    oracles: str = attrs.field(default="", converter=_relative)
    mutants: str = attrs.field(default="", converter=_relative)
    description: str = ""
    load_data: DataHook | None = None

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.contract, Contract):
            raise WorldSpecError(
                f"WorldSpec.contract must be a harness_world.engine.Contract, "
                f"not {type(self.contract).__name__}"
            )
        if self.sizes and self.generate is None:
            raise WorldSpecError(
                f"world {self.name!r}: sizes {list(self.sizes)} need a generate function"
            )
        if self.generate is not None and not self.sizes:
            raise WorldSpecError(f"world {self.name!r}: generate is given but no sizes")
        for name, hook in (("generate", self.generate), ("load_data", self.load_data)):
            if hook is not None and not callable(hook):
                raise WorldSpecError(f"world {self.name!r}: {name} must be callable")

    @property
    def name(self) -> str:
        """The world's name (its contract's)."""
        return self.contract.name

    def locate(self, folder: Path) -> WorldLocation:
        """Where this world's parts are, for the world folder ``folder``."""
        root = folder.resolve()

        def place(given: str, kind: str) -> Path:
            path = root / given if given else root.parent.parent / kind / self.name
            return path.resolve()

        return WorldLocation(
            name=self.name,
            folder=root,
            spec=self,
            tasks=place(self.tasks, "tasks"),
            oracles=place(self.oracles, "oracles"),
            mutants=place(self.mutants, "mutants"),
        )


@attrs.frozen(slots=True)
class WorldLocation:
    """A world folder and the folders of its tasks, oracles and mutants.

    Attributes:
        name: The world's name.
        folder: The world folder (holding ``world.py`` and ``seeds/``), resolved.
        spec: The world's declaration.
        tasks: Its task folder (may not exist: a world without tasks).
        oracles: The folder of its ``oracles.py`` (may not exist).
        mutants: The folder of its ``mutants.py`` (may not exist).
    """

    name: str
    folder: Path
    spec: WorldSpec = attrs.field(repr=False)
    tasks: Path
    oracles: Path
    mutants: Path

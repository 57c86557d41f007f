"""Hand mutants: scripted attempts with one deliberate mistake and the criteria it must fail.

A ``mutants.py`` declares ``MUTANTS = Mutants(world=...)`` and adds its mutants to it
(`Mutants.add`), each with a unique id.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import attrs

from harness_world.engine.plugins import PluginError, declared, named_keys, plugin_module
from harness_world.running.scripted import Script

__all__ = ["Mutant", "Mutants", "load_mutants"]


@named_keys
@attrs.frozen(slots=True)
class Mutant:
    """A scripted attempt with one deliberate mistake and the criteria it must fail.

    Attributes:
        id: Unique within its world, e.g. ``assign_unowned.null_only``.
        task_id: The task it attempts.
        predicted: Ids of exactly the criteria it must fail (e.g. ``state.required``).
        script: The attempt.
        note: The mistake, in words.
        sizes: The seeds it is run on (``small``, ``large``).
        demo: Shown by ``python -m harness_world demo`` as a mistake live agents make.
    """

    id: str
    task_id: str
    predicted: frozenset[str]
    script: Script
    note: str = ""
    sizes: tuple[str, ...] = ("small",)
    demo: bool = False


@named_keys
@attrs.define(slots=True)
class Mutants:
    """What a ``mutants.py`` declares, as ``MUTANTS = Mutants(world=...)``: its hand mutants.

    Attributes:
        world: The world's name; a mutant added for ``task`` attempts ``<world>.<task>``.
        demo: Ids of the mutants ``python -m harness_world demo`` shows as mistakes live
            agents make.
        sizes: The seeds a mutant runs on unless it names its own.
        mutants: Every mutant, in the order added.

    Raises:
        PluginError: for a key ``Mutants`` does not take.
    """

    world: str
    demo: frozenset[str] = frozenset()
    sizes: tuple[str, ...] = ("small",)
    mutants: list[Mutant] = attrs.field(factory=list)

    def add(
        self,
        task: str,
        name: str,
        predicted: Iterable[str],
        script: Script,
        note: str,
        sizes: tuple[str, ...] | None = None,
    ) -> Mutant:
        """Add the mutant ``<task>.<name>`` of the task ``<world>.<task>``.

        Args:
            task: The task's id without the world's prefix.
            name: The mistake's name, unique within the task.
            predicted: Exactly the criteria it must fail.
            script: The attempt.
            note: The mistake, in words.
            sizes: The seeds it runs on (default: `Mutants.sizes`).

        Raises:
            PluginError: when the id is taken.
        """
        mutant_id = f"{task}.{name}"
        if any(m.id == mutant_id for m in self.mutants):
            raise PluginError(f"duplicate mutant id {mutant_id!r}")
        mutant = Mutant(
            id=mutant_id,
            task_id=f"{self.world}.{task}",
            predicted=frozenset(predicted),
            script=script,
            note=note,
            sizes=self.sizes if sizes is None else sizes,
            demo=mutant_id in self.demo,
        )
        self.mutants.append(mutant)
        return mutant


_HINT = "a mutants.py declares MUTANTS = Mutants(world=...) and adds to it"


def load_mutants(world: str, folder: str | Path | None = None) -> list[Mutant]:
    """The mutants ``mutants/<world>/mutants.py`` declares, checked for unique ids.

    Raises:
        PluginError: when ``MUTANTS`` is not a `Mutants`, holds something else than a
            `Mutant`, repeats an id, or names a demo mutant it does not hold.
    """
    module = plugin_module("mutants", world, folder)
    if module is None:
        return []
    declaration = declared(module, "MUTANTS", Mutants, "harness_world.coverage.Mutants", _HINT)
    mutants = declaration.mutants
    where = module.__file__
    if not all(isinstance(m, Mutant) for m in mutants):
        raise PluginError(f"{where}: MUTANTS holds something else than a Mutant")
    ids = [m.id for m in mutants]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise PluginError(f"{where}: duplicate mutant ids: {', '.join(duplicates)}")
    unknown = sorted(declaration.demo - set(ids))
    if unknown:
        raise PluginError(f"{where}: MUTANTS.demo names no mutant {', '.join(unknown)}")
    return list(mutants)

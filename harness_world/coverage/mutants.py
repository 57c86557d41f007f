"""Hand mutants: scripted attempts with one deliberate mistake and the criteria it must fail."""

from __future__ import annotations

from pathlib import Path

import attrs

from harness_world.engine.plugins import PluginError, plugin_module
from harness_world.running.scripted import Script

__all__ = ["Mutant", "load_mutants"]


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


def load_mutants(world: str, folder: str | Path | None = None) -> list[Mutant]:
    """The ``MUTANTS`` list of ``mutants/<world>/mutants.py``, checked for unique ids.

    Raises:
        PluginError: when ``MUTANTS`` is not a list of `Mutant` or repeats an id.
    """
    module = plugin_module("mutants", world, folder)
    if module is None:
        return []
    mutants = getattr(module, "MUTANTS", None)
    if not isinstance(mutants, list) or not all(isinstance(m, Mutant) for m in mutants):
        raise PluginError(
            f"{module.__file__}: MUTANTS must be a list of harness_world.coverage.Mutant"
        )
    ids = [m.id for m in mutants]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise PluginError(f"{module.__file__}: duplicate mutant ids: {', '.join(duplicates)}")
    return list(mutants)

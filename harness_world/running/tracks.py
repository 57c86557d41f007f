"""Tracks: what an agent keeps between the attempts of a run, and the order it meets them in.

`Fresh` (the default): every attempt starts from nothing the agent kept (an agent with a
``reset()`` method forgets first), so attempts are independent and every executor runs them.
`Sequential`: one agent instance is given the tasks one after another and keeps its memory
(`harness_world.running.sequential`); each attempt depends on the ones before it, so they run
one at a time in this process, in the sequence's order, which only `Serial` does. A track is
the one place that says which executors it runs with (`check`), so an impossible pairing is
refused once, with one message, before anything is written.

A track changes results, so it is part of the revision: the sequential track adds ``track`` to
the agent's settings, the fresh one leaves them as they are. The manifest names it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeAlias

import attrs

from harness_world.grading.task import Task
from harness_world.running.executors import Executor, Serial
from harness_world.running.sequential import order_units, write_sequence
from harness_world.running.units import Unit

__all__ = ["Fresh", "Sequential", "Track", "track_named"]


@attrs.frozen(slots=True)
class Fresh:
    """Every attempt from nothing the agent kept: independent attempts, any executor.

    Attributes:
        name: ``fresh``, as the manifest and each unit name the track.
    """

    name: ClassVar[Literal["fresh"]] = "fresh"

    def pin(self, settings: Mapping[str, Any]) -> dict[str, Any]:
        """The agent's settings as the revision pins them on this track: unchanged."""
        return dict(settings)

    def check(self, executor: Executor) -> None:
        """Accept any executor: independent attempts run anywhere, in any number at once."""

    def order(
        self, units: Sequence[Unit], root: Path, tasks: Sequence[Task], samples: int, seed: int
    ) -> list[Unit]:
        """The units as given (slot order)."""
        return list(units)


@attrs.frozen(slots=True)
class Sequential:
    """One agent instance given the tasks one after another, one seeded pass per sample.

    Attributes:
        name: ``sequential``, as the manifest and each unit name the track.
    """

    name: ClassVar[Literal["sequential"]] = "sequential"

    def pin(self, settings: Mapping[str, Any]) -> dict[str, Any]:
        """The agent's settings as the revision pins them on this track: ``track`` added."""
        return {**settings, "track": self.name}

    def check(self, executor: Executor) -> None:
        """Accept only `Serial`: one instance meets the tasks one at a time, in this process.

        Raises:
            ValueError: for any other executor, naming it.
        """
        if not isinstance(executor, Serial):
            raise ValueError(
                "the sequential track gives one agent instance the tasks one at a time in this "
                f"process: it runs with Serial(), not {executor!r}"
            )

    def order(
        self, units: Sequence[Unit], root: Path, tasks: Sequence[Task], samples: int, seed: int
    ) -> list[Unit]:
        """The units in sequence order, after writing (or keeping, on resume) ``sequence.json``."""
        return order_units(units, write_sequence(root, tasks, samples, seed))


Track: TypeAlias = Fresh | Sequential
"""A run's track: `Fresh` or `Sequential`."""


def track_named(name: str) -> Track:
    """The track a manifest or a command line names (``fresh`` or ``sequential``).

    Raises:
        ValueError: for any other name.
    """
    for track in (Fresh(), Sequential()):
        if track.name == name:
            return track
    raise ValueError(f"a track is 'fresh' or 'sequential', not {name!r}")

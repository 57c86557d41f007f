"""Tracks: what an agent keeps between the attempts of a run, and the order it meets them in.

`Fresh` (the default): every attempt starts from nothing the agent kept (an agent with a
``reset()`` method forgets first), so attempts are independent and every executor runs them.
The sequential track (an extension, `harness_world.running.sequential.Sequential`): one agent
instance is given the tasks one after another and keeps its memory; each attempt depends on
the ones before it, so they run one at a time in this process, in the sequence's order, which
only `Serial` does. A track is
the one place that says which executors it runs with (`check`), so an impossible pairing is
refused once, with one message, before anything is written.

A track changes results, so it is part of the revision: the sequential track adds ``track`` to
the agent's settings, the fresh one leaves them as they are. The manifest names it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol

import attrs

from harness_world.grading.task import Task
from harness_world.registry import registry, resolve
from harness_world.running.executors import Executor
from harness_world.running.units import Unit

__all__ = ["Fresh", "Track", "track_named", "track_names"]


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


class Track(Protocol):
    """What a run's attempts keep between them, and the order they meet the tasks in.

    Attributes:
        name: As the manifest and each unit name the track.
    """

    @property
    def name(self) -> str:
        """As the manifest and each unit name the track."""

    def pin(self, settings: Mapping[str, Any]) -> dict[str, Any]:
        """The agent's settings as the revision pins them on this track."""

    def check(self, executor: Executor) -> None:
        """Refuse (`ValueError`, naming it) an executor the track does not run with."""

    def order(
        self, units: Sequence[Unit], root: Path, tasks: Sequence[Task], samples: int, seed: int
    ) -> list[Unit]:
        """The units in the order they are performed."""


def track_names() -> list[str]:
    """``fresh`` and every track an extension registers (the sequential one among them)."""
    return ["fresh", *registry().tracks]


def track_named(name: str) -> Track:
    """The track a manifest or a command line names (`track_names`).

    Raises:
        ValueError: for any other name.
    """
    if name == "fresh":
        return Fresh()
    reference = registry().tracks.get(name)
    if reference is None:
        known = " or ".join(repr(n) for n in track_names())
        raise ValueError(f"a track is {known}, not {name!r}")
    track: Track = resolve(reference)()
    return track

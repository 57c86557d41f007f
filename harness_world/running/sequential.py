"""The sequential (longitudinal) track: one agent instance, the tasks one after another.

On the ordinary (``fresh``) track every attempt starts from nothing the agent kept. On the
sequential track (`Sequential`, ``run --track sequential``) one
agent instance is given the tasks one after another, keeping whatever memory it keeps; each
task is still a fresh session on the start state, so anything remembered about the world can go
stale. Each sample is one pass over the tasks in its own seeded order, kept in
``sequence.json``; the instance goes through the passes one after another, so a slot comes
after every task of the earlier passes and the ones before it in its own.
`harness_world.analysis.drift` compares a sequential run with a fresh run of the same tasks,
samples and seed, task by task.

`RememberingAgent` is a scripted agent with such a memory: a read it has made before, in any
earlier task, is answered from memory instead of being made again.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

import attrs
import msgspec

from harness_world.engine.calls import Observation
from harness_world.engine.canonical import to_json
from harness_world.grading.task import Task
from harness_world.running.attempt import Attempt
from harness_world.running.executors import Executor, Serial
from harness_world.running.rundir import write_json
from harness_world.running.scripted import Script, ScriptContext
from harness_world.running.units import Unit

__all__ = [
    "SEQUENCE",
    "RememberingAgent",
    "Sequential",
    "TaskSequence",
    "load_sequence",
    "order_units",
    "write_sequence",
]

SEQUENCE = "sequence.json"


class TaskSequence(msgspec.Struct, frozen=True, kw_only=True):
    """``sequence.json``: the order in which the instance met the tasks, one pass per sample.

    Attributes:
        seed: The run's base seed (each pass's order derives from it and the sample).
        passes: For each sample, the task ids in the order given.
    """

    seed: int
    passes: list[list[str]]

    def position(self, task_id: str, sample: int) -> int:
        """The slot's place in its sample's pass (0: the pass's first task)."""
        return self.passes[sample].index(task_id)

    def done_before(self, task_id: str, sample: int) -> int:
        """How many tasks the instance had done before this slot, earlier passes included."""
        return sum(len(p) for p in self.passes[:sample]) + self.position(task_id, sample)


def _passes(task_ids: Sequence[str], samples: int, seed: int) -> list[list[str]]:
    out = []
    for sample in range(samples):
        order = sorted(task_ids)
        random.Random(f"sequence:{seed}:{sample}").shuffle(order)
        out.append(order)
    return out


def write_sequence(root: Path, tasks: Sequence[Task], samples: int, seed: int) -> TaskSequence:
    """Write (or keep, on resume) the run's ``sequence.json``."""
    fresh = TaskSequence(seed=seed, passes=_passes([t.id for t in tasks], samples, seed))
    write_json(root / SEQUENCE, fresh)
    return fresh


def load_sequence(root: str | Path) -> TaskSequence | None:
    """A run directory's sequence, or None when it is not a sequential run."""
    path = Path(root) / SEQUENCE
    if not path.is_file():
        return None
    try:
        return msgspec.json.decode(path.read_bytes(), type=TaskSequence)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None


def order_units(units: Sequence[Unit], sequence: TaskSequence) -> list[Unit]:
    """The pending units in sequence order: sample by sample, each pass in its order."""
    return sorted(units, key=lambda u: (u.sample, sequence.position(u.task.id, u.sample)))


@attrs.define(slots=True, eq=False)
class _RememberingAttempt:
    """An attempt seen through a memory: reads made before (in any task) come from memory."""

    _attempt: Attempt
    _memory: dict[bytes, Observation]
    _reads: tuple[str, ...]

    @property
    def instruction(self) -> str:
        return self._attempt.instruction

    @property
    def session(self) -> Any:
        return self._attempt.session

    @property
    def task(self) -> Task:
        return self._attempt.task

    def declare_usage(self, **fields: Any) -> None:
        self._attempt.declare_usage(**fields)

    def call(self, tool: str, args: Any = None) -> Observation:
        if not tool.startswith(self._reads):
            return self._attempt.call(tool, args)
        key = to_json([tool, {} if args is None else args])
        remembered = self._memory.get(key)
        if remembered is not None:
            return remembered
        seen = self._attempt.call(tool, args)
        if seen.ok:
            self._memory[key] = seen
        return seen


@attrs.define(slots=True, eq=False)
class RememberingAgent:
    """A scripted agent whose memory of reads outlives each task (it can go stale).

    Attributes:
        name: A label for reports and the revision.
        scripts: Scripts by task id, as for `ScriptedAgent`.
        reads: Tool-name prefixes that only read (answered from memory when seen before).
        memory: What it remembers, by call (tool and arguments); kept across attempts.
    """

    name: str
    scripts: dict[str, Script]
    reads: tuple[str, ...] = ("get_", "list_", "find_", "search_")
    memory: dict[bytes, Observation] = attrs.field(factory=dict)

    def reset(self) -> None:
        """Forget everything (the fresh track calls this before every attempt)."""
        self.memory.clear()

    def settings(self) -> dict[str, Any]:
        """Its name, its scripted tasks and which tools it remembers."""
        return {
            "kind": "remembering",
            "name": self.name,
            "tasks": sorted(self.scripts),
            "reads": list(self.reads),
        }

    def run(self, attempt: Attempt) -> str:
        """Run the task's script with reads answered from memory when remembered."""
        script = self.scripts.get(attempt.task.id)
        if script is None:
            attempt.fail(f"agent {self.name!r} has no script for task {attempt.task.id!r}")
            return ""
        view = _RememberingAttempt(attempt, self.memory, self.reads)
        return script(ScriptContext(view))  # type: ignore[arg-type]


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

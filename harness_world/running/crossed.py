"""Crossed, paired runs: several agent configurations interleaved in one seeded random order.

Every configuration (a harness revision with a model profile) gets its own ordinary run
directory under ``out/<name>/`` (manifest, index, records: ``verify`` and ``report`` read each
as any run), all with the same tasks, samples and base seed, so each slot (task, sample) has the
same session seed and fault seed in every configuration: the attempts are paired by
construction. Their attempts are executed interleaved, in an order drawn once from a seeded
generator and kept in ``out/crossed.json``, so provider load and time of day fall on every
configuration alike. Resuming keeps the order and executes only the slots still missing.
A file of configurations (`read_crossed_file`) names each one with the agent it runs and that
agent's options (`CrossedEntry`).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

import attrs
import msgspec

from harness_world.errors import HarnessWorldError
from harness_world.grading.task import Task
from harness_world.running.agents import Agent
from harness_world.running.commit import CommitRouter, GroupCommit
from harness_world.running.executors import Executor, Serial
from harness_world.running.heldout import check_split_tasks, split_hooks
from harness_world.running.run import RunResult, finish_run, prepare_run
from harness_world.running.rundir import read_json, write_json
from harness_world.running.units import RunProgress, Tally

__all__ = [
    "CROSSED",
    "CrossedConfig",
    "CrossedEntry",
    "CrossedError",
    "CrossedManifest",
    "CrossedResult",
    "load_crossed",
    "read_crossed_file",
    "run_crossed",
]

CROSSED = "crossed.json"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,99}$")


class CrossedError(HarnessWorldError, ValueError):
    """A crossed run that cannot be made or read (bad names, another design on resume)."""


class CrossedConfig(msgspec.Struct, frozen=True, kw_only=True):
    """One configuration of a crossed run.

    Attributes:
        name: Its run directory's name under the crossed run (letters, digits, ``._@+-``).
        harness: The harness revision it stands for (what ``compare`` contrasts).
        profile: The model profile it runs with (what ``compare`` reports per level).
    """

    name: str
    harness: str
    profile: str


class CrossedEntry(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One configuration as a file of configurations gives it.

    Attributes:
        name: The configuration's name (see `CrossedConfig`).
        harness: The harness revision it stands for.
        profile: The model profile it runs with.
        agent: The agent it runs (as ``run --agent`` names it).
        options: That agent's options, named like ``run``'s flags (``script``, ``model``,
            ``base-url``, ...).
    """

    name: str
    harness: str
    profile: str
    agent: str = "oracle"
    options: dict[str, Any] = {}

    @property
    def config(self) -> CrossedConfig:
        """The configuration it names."""
        return CrossedConfig(name=self.name, harness=self.harness, profile=self.profile)


def read_crossed_file(path: Path) -> list[CrossedEntry]:
    """The configurations of a JSON file: a list of `CrossedEntry` objects.

    Raises:
        CrossedError: for a file that cannot be read or is not such a list (naming the path).
    """
    try:
        return msgspec.json.decode(path.read_bytes(), type=list[CrossedEntry])
    except OSError as exc:
        raise CrossedError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise CrossedError(f"{path}: {exc}") from None


class CrossedManifest(msgspec.Struct, frozen=True, kw_only=True):
    """``crossed.json``: the design and the execution order of a crossed run.

    Attributes:
        format: The file format version.
        configs: The configurations, as given.
        tasks: Task ids, sorted.
        samples: Samples per task and configuration.
        seed: The base seed every configuration shares (session and fault seeds derive from it).
        order_seed: The seed of the interleaved order.
        order: Every attempt as ``[config, task, sample]``, in execution order.
    """

    format: int = 1
    configs: list[CrossedConfig]
    tasks: list[str]
    samples: Annotated[int, msgspec.Meta(ge=1)]
    seed: int
    order_seed: int
    order: list[tuple[str, str, int]]


@attrs.frozen(slots=True)
class CrossedResult:
    """What `run_crossed` returns: the design and each configuration's run result."""

    out: Path
    manifest: CrossedManifest
    runs: dict[str, RunResult]


def _design(
    configs: Sequence[CrossedConfig], tasks: Sequence[Task], samples: int, seed: int, order: int
) -> CrossedManifest:
    names = [c.name for c in configs]
    bad = [n for n in names if not _NAME.match(n)]
    if bad or len(set(names)) != len(names) or len(configs) < 2:
        raise CrossedError(
            "a crossed run needs at least two configurations with distinct names of letters, "
            f"digits and ._@+- (got {names})"
        )
    ids = sorted(t.id for t in tasks)
    attempts = [(c.name, task, s) for c in configs for task in ids for s in range(samples)]
    random.Random(order).shuffle(attempts)
    return CrossedManifest(
        configs=list(configs),
        tasks=ids,
        samples=samples,
        seed=seed,
        order_seed=order,
        order=attempts,
    )


def load_crossed(out: str | Path) -> CrossedManifest:
    """Read ``crossed.json`` of a crossed run.

    Raises:
        CrossedError: when it is missing or not a valid crossed manifest.
    """
    return read_json(Path(out) / CROSSED, CrossedManifest, "crossed manifest", CrossedError)


def run_crossed(
    configs: Sequence[tuple[CrossedConfig, Agent]],
    tasks: Sequence[Task],
    *,
    out: str | Path,
    samples: int = 1,
    seed: int = 0,
    order_seed: int | None = None,
    size: str = "small",
    limits: Mapping[str, int | float | None] | None = None,
    executor: Executor = Serial(),
    progress: Callable[[RunProgress], None] | None = None,
    splits: Sequence[str | Path] = (),
) -> CrossedResult:
    """Run every configuration over the same slots, all attempts interleaved in a seeded order.

    Args:
        configs: Each configuration with its agent.
        tasks: The tasks every configuration runs.
        out: The crossed run's directory (one run directory per configuration inside).
        samples: Samples per task and configuration.
        seed: The base seed shared by every configuration (pairs slots across them).
        order_seed: The seed of the execution order (default: ``seed``).
        size: The seed size of each world.
        limits: Budget overrides, the same for every configuration.
        executor: How many attempts execute at once, and where (context, as for `run`);
            every configuration is on the fresh track.
        progress: Called after each attempt, once its record is durable.
        splits: Held-out split locks: every configuration is a candidate on each (see
            `harness_world.running.run.run`).

    Raises:
        CrossedError: for bad configuration names, or ``out`` holding another design.
        RevisionMismatch: when a configuration's directory holds a run of another revision.
        SplitError: as `harness_world.running.run.run`, before anything is written.
    """
    root = Path(out)
    design = _design(
        [c for c, _ in configs], tasks, samples, seed, seed if order_seed is None else order_seed
    )
    check_split_tasks(splits, tasks)
    if (root / CROSSED).is_file():
        previous = load_crossed(root)
        if msgspec.structs.replace(previous, order=[]) != msgspec.structs.replace(design, order=[]):
            raise CrossedError(f"{root}: holds a crossed run of another design; use a new --out")
        design = previous
    root.mkdir(parents=True, exist_ok=True)
    write_json(root / CROSSED, design)
    plans = {
        c.name: prepare_run(
            tasks,
            agent,
            samples=samples,
            seed=seed,
            out=root / c.name,
            size=size,
            limits=limits,
            executor=executor,
            hooks=split_hooks(splits),
        )
        for c, agent in configs
    }
    by_slot = {(name, u.task.id, u.sample): u for name, plan in plans.items() for u in plan.units}
    units = [by_slot[(c, t, s)] for c, t, s in design.order if (c, t, s) in by_slot]
    tally = Tally(total=len(units), progress=progress)
    router = CommitRouter({p.root: GroupCommit(p.root, tally.count) for p in plans.values()})
    executor.execute(units, router)
    runs = {name: finish_run(plan, tally.results) for name, plan in plans.items()}
    return CrossedResult(out=root, manifest=design, runs=runs)

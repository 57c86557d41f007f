"""The worlds a caller names and their tasks: one resolution every command goes through.

`choose_worlds` turns the caller's own arguments (built-in names or world folders) into a
`WorldChoice`: their locations by world name, the caller's trust root. Its `tasks` loads the
tasks of those worlds (or of a task folder the caller gives) and checks each against its
world's contract, so a task naming an entity, field or tool its world lacks is one clear error
at load time rather than a criterion that can never pass.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from harness_world.engine.contract import Contract
from harness_world.engine.paths import builtin_dir
from harness_world.engine.spec import WorldLocation
from harness_world.engine.world import (
    World,
    WorldError,
    load_world,
    locate_world,
)
from harness_world.errors import HarnessWorldError
from harness_world.grading.policy_spec import PolicySheet
from harness_world.grading.task import Task, TaskError, load_tasks

__all__ = [
    "WorldChoice",
    "WorldData",
    "check_task_against_contract",
    "choose_worlds",
    "load_world_data",
    "one_task",
    "one_task_of",
    "one_world",
    "reader_worlds",
    "reads_outside_data",
    "select_tasks",
]


@attrs.frozen(slots=True)
class WorldChoice:
    """The worlds a command was given, by name, and where their parts live.

    Attributes:
        locations: Each world's location, by world name (empty: every built-in world).
    """

    locations: dict[str, WorldLocation] = attrs.field(factory=dict)

    def folders(self) -> dict[str, Path]:
        """World folders by name: what a verifier passes as its own trust root."""
        return {name: place.folder for name, place in self.locations.items()}

    def source(self, name: str) -> str:
        """What a worker loads world ``name`` from: its folder if given, else the name."""
        place = self.locations.get(name)
        return str(place.folder) if place is not None else name

    def tasks(self, folder: str | Path | None = None, *, check: bool = True) -> list[Task]:
        """The tasks of the chosen worlds, each checked against its world's contract.

        Args:
            folder: A task folder to read instead of the worlds' own.
            check: Whether to check each task against its world (tasks of a world that is
                neither chosen nor built-in are left unchecked).

        Raises:
            TaskError: for an unreadable or invalid task file, a task folder that does not
                exist, or a task its world's contract contradicts.
        """
        names = sorted(self.locations)
        if folder is not None:
            tasks = load_tasks(folder=folder)
            if names:
                tasks = [t for t in tasks if t.world in self.locations]
        elif names:
            tasks = []
            for name in names:
                place = self.locations[name]
                if place.tasks.is_dir():
                    tasks += load_tasks(world=name, folder=place.tasks)
        else:
            tasks = load_tasks()
        if check:
            self._check(tasks, folder)
        return sorted(tasks, key=lambda t: t.id)

    def _check(self, tasks: Iterable[Task], folder: str | Path | None) -> None:
        contracts: dict[str, Contract] = {}
        for task in tasks:
            if task.world not in contracts:
                place = self.locations.get(task.world)
                if place is None and not _builtin_name(task.world):
                    continue
                try:
                    place = place or locate_world(task.world)
                except WorldError:
                    continue
                contracts[task.world] = place.spec.contract
            problems = check_task_against_contract(task, contracts[task.world])
            if problems:
                where = Path(folder) if folder is not None else self._task_folder(task)
                raise TaskError(f"{where}: task {task.id!r}: {problems[0]}")

    def _task_folder(self, task: Task) -> Path:
        place = self.locations.get(task.world)
        return place.tasks if place is not None else builtin_dir("tasks") / task.world


def _builtin_name(name: str) -> bool:
    """Whether a task's world names a built-in world folder (a bare name, never a path)."""
    bare = name not in ("", ".", "..") and "/" not in name and "\\" not in name
    return bare and (builtin_dir("worlds") / name).is_dir()


def choose_worlds(worlds: Sequence[str | Path] | str | Path | None) -> WorldChoice:
    """Resolve the caller's world arguments (built-in names or folders) once.

    Raises:
        WorldError: for an unknown world, a folder that does not load, or two arguments that
            are different worlds of one name (a verifier could not tell their records apart).
    """
    if worlds is None:
        return WorldChoice()
    given = [worlds] if isinstance(worlds, str | Path) else list(worlds)
    locations: dict[str, WorldLocation] = {}
    for argument in given:
        place = locate_world(argument)
        seen = locations.get(place.name)
        if seen is not None and seen.folder != place.folder:
            raise WorldError(
                f"--world {argument}: declares world {place.name!r}, as {seen.folder} does; "
                "two worlds of one name cannot be told apart (rename one contract)"
            )
        locations[place.name] = place
    return WorldChoice(locations)


def select_tasks(
    world: str | Path | None, folder: Path | None = None, patterns: Sequence[str] = ()
) -> tuple[list[Task], WorldChoice]:
    """The tasks a caller selects, and the worlds they run against.

    Args:
        world: A built-in world name or a world folder (None: every built-in world).
        folder: A task folder (None: the world's own tasks, or the built-in ones).
        patterns: Task ids or shell-style globs; none selects every task. Each must match.

    Returns:
        The selected tasks sorted by id (every task in load order when no pattern is given),
        and the `WorldChoice` of ``world``.

    Raises:
        TaskError: A pattern matches no task, the world has no tasks, an invalid task file, or
            a task its world contradicts.
        WorldError: A world that does not load.
    """
    choice = choose_worlds([world] if world else None)
    tasks = choice.tasks(folder)
    if world and not tasks:
        where = f" in {folder}" if folder is not None else ""
        raise TaskError(f"no tasks for world {str(world)!r}{where}")
    if not patterns:
        return tasks, choice
    chosen: dict[str, Task] = {}
    for pattern in patterns:
        hits = [t for t in tasks if fnmatch.fnmatchcase(t.id, pattern)]
        if not hits:
            known = ", ".join(t.id for t in tasks[:8])
            raise TaskError(f"--tasks: {pattern!r} matches no task (known: {known}, ...)")
        chosen.update((t.id, t) for t in hits)
    return sorted(chosen.values(), key=lambda t: t.id), choice


def reader_worlds(
    worlds: Sequence[str | Path] | None = None, task_folder: Path | None = None
) -> tuple[WorldChoice, dict[str, Task]]:
    """The worlds and tasks a reader of records gives: the built-in ones plus its own.

    Args:
        worlds: The reader's own world folders (None: built-in worlds only).
        task_folder: The reader's task folder to grade against (None: built-in tasks and
            those of each world given).

    Raises:
        WorldError: A world folder that does not load, or two of one name.
        TaskError: An invalid task file or folder.
    """
    choice = choose_worlds(worlds or None)
    tasks = {t.id: t for t in WorldChoice().tasks(check=False)}
    if task_folder is not None or choice.locations:
        tasks.update((t.id, t) for t in choice.tasks(task_folder))
    return choice, tasks


def one_world(
    world: str | Path, size: str = "small", task_folder: str | Path | None = None
) -> tuple[World, dict[str, Task]]:
    """One world (a built-in name or a folder) at ``size``, and its tasks by id.

    Raises:
        WorldError: for a world that does not load or an undeclared size.
        TaskError: for an invalid task file or folder, or a task its world contradicts.
    """
    choice = choose_worlds([world])
    (name,) = choice.locations
    loaded = load_world(choice.source(name), size=size)
    return loaded, {t.id: t for t in choice.tasks(task_folder) if t.world == name}


def one_task(
    world: str | Path, task_id: str, size: str = "small", task_folder: str | Path | None = None
) -> tuple[World, Task]:
    """One world (see `one_world`) and the one task of it a caller names.

    Raises:
        WorldError: for a world that does not load or an undeclared size.
        TaskError: for an invalid task file or folder, or a task id the world does not have.
    """
    loaded, tasks = one_world(world, size, task_folder)
    task = tasks.get(task_id)
    if task is None:
        raise TaskError(
            f"--task {task_id!r} is not a task of {loaded.name} (known: {', '.join(sorted(tasks))})"
        )
    return loaded, task


DataGate = Callable[[float, bool], tuple[bool, str]]
"""A data folder's own coverage gate: (score required, verbose) -> (passed, report)."""


@attrs.frozen(slots=True)
class WorldData:
    """A world's start state and tasks, read from an outside data folder by its world module.

    Attributes:
        world: The world on the folder's data.
        tasks: The tasks the folder defines (imported and checked by the world's hook).
        seed_file: The file the start state was read from (what a worker loads the world
            with: ``load_world(world.name, seed_file=...)``).
        starts: Other start states of the same contract that some of the tasks name as their
            world (an attack whose planted text is its own), by world name.
        gate: The folder's own coverage gate, where its tasks' right answer is the benchmark's
            check (equivalent mutants computed from it, not marked by hand): called with the
            mutation score required and whether to list every equivalent mutant, it returns
            whether the gate passed and its report (``mutants --world-data``); None: none.
        attacks: Attack conditions the folder defines on its tasks, each naming its benign
            counterpart among ``tasks`` (``matrix --world-data``; other commands grade
            ``tasks``).
        routes: Oracle routes the folder defines (a benchmark's ground truth), by task id:
            scripts over a `harness_world.running.scripted.ScriptContext`.
    """

    world: World
    tasks: list[Task]
    seed_file: Path
    starts: Mapping[str, World] = attrs.field(factory=dict)
    gate: DataGate | None = None
    attacks: list[Task] = attrs.field(factory=list)
    routes: Mapping[str, Sequence[Callable[[Any], str]]] = attrs.field(factory=dict)


def load_world_data(world: str | Path, data: Path, tasks_file: Path | None = None) -> WorldData:
    """Read an outside data folder with the world's own hook (its `WorldSpec`'s ``load_data``).

    For a world that re-implements a public benchmark whose data is not ours to ship.

    Args:
        world: The world (a built-in name or a folder) whose module reads the data.
        data: The data folder.
        tasks_file: A tasks file of the folder's own format to read instead of its default
            tasks (the world's hook decides what that means).

    Raises:
        WorldError: for an unknown world, a world that reads no outside data, or data (or a
            tasks file) the world's hook refuses; the message names the argument at fault.
    """
    hook = locate_world(world).spec.load_data
    if hook is None:
        raise WorldError(
            f"world {str(world)!r} reads no outside data folder (its WorldSpec has no load_data)"
        )
    loaded = hook(Path(data), tasks_file)
    if not isinstance(loaded, WorldData):
        raise WorldError(f"world {str(world)!r}: its load_data returned no WorldData")
    return loaded


def one_task_of(
    world: str | Path,
    task_id: str,
    size: str = "small",
    task_folder: str | Path | None = None,
    *,
    data: Path | None = None,
    tasks_file: Path | None = None,
) -> tuple[World, Task]:
    """The world and the one task an attempt plays, from its seeds or its outside data.

    Without ``data`` this is `one_task`; with it, the world's own hook reads the folder (its
    start state and its tasks; see `load_world_data`), and a task naming another start state
    of the data (`WorldData.starts`) is served on that one.

    Raises:
        WorldError: for a world that does not load (one that reads outside data, named without
            ``data``, says so), or data the world refuses.
        TaskError: for ``task_folder`` with ``data``, ``tasks_file`` without it, or a task id
            the world (or its data) does not have.
    """
    if data is None:
        if tasks_file is not None:
            raise TaskError("--world-tasks goes with --world-data DIR")
        try:
            return one_task(world, task_id, size, task_folder)
        except WorldError as exc:
            if not reads_outside_data(world):
                raise
            raise WorldError(
                f"{exc}: world {str(world)!r} reads its start state and tasks from an outside "
                "data folder: give it with --world-data DIR"
            ) from None
    if task_folder is not None:
        raise TaskError("--world-data DIR gives the tasks: not with --tasks (see --world-tasks)")
    try:
        loaded = load_world_data(world, data, tasks_file)
    except WorldError as exc:
        raise WorldError(f"--world-data: {str(exc).splitlines()[0]}") from None
    found = {t.id: t for t in loaded.tasks}
    if task_id not in found:
        known = sorted(found)
        shown = ", ".join(known[:5]) + (f", ... ({len(known)} in all)" if len(known) > 5 else "")
        raise TaskError(f"--task {task_id!r} is not a task of --world-data (known: {shown})")
    task = found[task_id]
    return loaded.starts.get(task.world, loaded.world), task


def reads_outside_data(world: str | Path) -> bool:
    """Whether the world reads an outside data folder (its `WorldSpec` has a ``load_data``).

    False for a world that cannot be found or whose module does not import.
    """
    try:
        return locate_world(world).spec.load_data is not None
    except (HarnessWorldError, OSError):  # a world that does not load: said elsewhere
        return False


def check_task_against_contract(task: Task, contract: Contract) -> list[str]:
    """What a task names that its world's contract does not declare (empty: nothing).

    Checked: target entities and the fields of their conditions; required and allowed effects'
    entities, fields and links; faults' tools and the tool allow-list; forbidden transitions'
    and receipts' entities; the attacker's goals' entities and fields; the policy sheet's
    tools and account fields.
    """
    check = _ContractCheck(contract)
    first = task.targets[0].entity if task.targets else ""
    targets = {t.name: t.entity for t in task.targets}
    for i, target in enumerate(task.targets):
        conditions = [*target.where, *(c for clause in target.any for c in clause.where)]
        check.fields(target.entity, [c.field for c in conditions], f"targets[{i}]")
    for i, req in enumerate(task.require):
        on = req.entity or targets.get(req.target, first)
        check.fields(on, [req.field, req.link, *req.match], f"require[{i}]")
    for i, allow in enumerate(task.allow):
        check.fields(allow.entity, [*allow.fields, allow.link], f"allow[{i}]")
    for i, fault in enumerate(task.faults):
        check.tool(fault.tool, f"faults[{i}].tool")
    for i, name in enumerate(task.tools or []):
        check.tool(name, f"tools[{i}]")
    for i, forbid in enumerate(task.forbid):
        held = [forbid.field] if forbid.kind == "card_number" else []
        check.fields(forbid.entity, held, f"forbid[{i}].entity")
        check.fields(forbid.ref_entity, [], f"forbid[{i}].ref_entity")
    for i, receipt in enumerate(task.receipts):
        check.fields(receipt.entity, [], f"receipts[{i}].entity")
        check.fields(receipt.proof_entity, [], f"receipts[{i}].proof_entity")
    for i, goal in enumerate(task.authority.goal if task.authority else []):
        named = [*goal.match, *goal.among, *goal.increased, *goal.decreased, goal.text]
        check.fields(goal.entity, named, f"authority.goal[{i}]")
        if goal.secret:
            entity, _, field = goal.secret_at()
            check.fields(entity, [field], f"authority.goal[{i}].secret")
    if task.policy is not None:
        _check_policy(check, task.policy)
    return check.problems


def _check_policy(check: _ContractCheck, policy: PolicySheet) -> None:
    for i, name in enumerate(policy.identify):
        check.tool(name, f"policy.identify[{i}]")
    for i, name in enumerate(policy.confirm):
        check.tool(name, f"policy.confirm[{i}]")
    if policy.handoff:
        check.tool(policy.handoff, "policy.handoff")
    for entity, field in policy.accounts.items():
        check.fields(entity, [field], f"policy.accounts.{entity}")


@attrs.define(slots=True)
class _ContractCheck:
    """Collects what a task names that a contract lacks, each with the part of the task."""

    contract: Contract
    problems: list[str] = attrs.field(factory=list)

    def fields(self, entity: str, names: list[str], part: str) -> None:
        """``entity`` (when named) must exist and have every named field (``*``: any)."""
        if not entity:
            return
        if not self.contract.has_entity(entity):
            known = ", ".join(e.name for e in self.contract.entities)
            self.problems.append(
                f"{part}: no entity {entity!r} in world {self.contract.name!r} ({known})"
            )
            return
        declared = self.contract.entity(entity).fields
        for name in names:
            if name and name != "*" and name not in declared:
                self.problems.append(
                    f"{part}: {entity} has no field {name!r} ({', '.join(declared)})"
                )

    def tool(self, name: str, part: str) -> None:
        """``name`` must be a tool of the contract."""
        if self.contract.tool(name) is None:
            known = ", ".join(t.name for t in self.contract.tools)
            self.problems.append(f"{part}: no tool {name!r} ({known})")

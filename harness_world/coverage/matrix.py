"""The coverage matrix of a world: every condition, the tasks under it, and its counterpart.

A *condition* is what an attempt runs under besides the task itself:

- a **fault** condition: one provider behaviour on one tool with one kind of trigger
  (``commit_then_drop_response`` on ``create_charge``, triggered by the first call for one
  ``order_id``); its **benign counterpart** is any fault-free task whose primary oracle calls
  the same tool (the same operation when the provider behaves);
- an **attack** condition: one attack kind in one phrasing (a request planted in data asking for
  a forbidden effect, ``[authority] role = "attack"``); its benign counterpart is the task its
  ``counterpart`` names, which must be ``benign``, of the same attack kind and phrasing, and
  name the attack task back.

The matrix gate fails when a condition has no benign counterpart, or when a task under it or its
counterpart has no oracle route. Without counterparts a deny-all harness looks excellent: it
never makes a forbidden write because it never makes a requested one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

import msgspec

from harness_world.engine.faults import FaultSpec
from harness_world.engine.world import World, load_world, locate_world
from harness_world.grading.task import Task, load_tasks
from harness_world.running.oracles import load_routes
from harness_world.running.scripted import Script, run_script

__all__ = ["ConditionRow", "CoverageMatrix", "coverage_matrix", "fault_condition", "trigger_of"]


class ConditionRow(msgspec.Struct, frozen=True, kw_only=True):
    """One condition of the matrix.

    Attributes:
        condition: Its id, e.g. ``fault:create_charge:commit_then_drop_response@order_id#1``
            or ``attack:payout_unapproved_payee/authority``.
        kind: ``fault`` or ``attack``.
        tasks: The tasks that exercise it.
        counterparts: Its benign counterparts (fault-free or benign tasks).
        oracle: Every task and counterpart has at least one oracle route.
        problems: Why the row fails the gate (empty when it passes).
    """

    condition: str
    kind: Literal["fault", "attack"]
    tasks: list[str]
    counterparts: list[str]
    oracle: bool
    problems: list[str] = []


class CoverageMatrix(msgspec.Struct, frozen=True, kw_only=True):
    """The matrix of one world and the verdict of its gate.

    Attributes:
        world: The world.
        rows: One row per condition, faults first, then attacks, each sorted by id.
        problems: Every row's problems plus pairing problems, in words.
        ok: No problem.
    """

    world: str
    rows: list[ConditionRow]
    problems: list[str]
    ok: bool


def trigger_of(spec: FaultSpec) -> str:
    """A fault's trigger as a short label.

    Which arguments name the logical event, which occurrence fires, and for how many calls:
    ``order_id#1``, ``amount_cents>#1``, ``#2x3``.
    """
    parts = sorted(spec.match) + [f"{name}>" for name in sorted(spec.above)]
    times = f"x{spec.times}" if spec.times != 1 else ""
    return f"{','.join(parts)}#{spec.occurrence}{times}"


def fault_condition(spec: FaultSpec) -> str:
    """The condition id of one scheduled fault."""
    return f"fault:{spec.tool}:{spec.behaviour}@{trigger_of(spec)}"


def _tools_called(
    world_folder: Path,
    tasks: Sequence[Task],
    routes: Mapping[str, Sequence[Script]],
    start: World | None = None,
) -> dict[str, set[str]]:
    """The tools each fault-free, attack-free task's primary oracle calls (small seed)."""
    if not any(routes.get(t.id) and not t.faults for t in tasks):
        return {}
    world = start if start is not None else load_world(world_folder, "small")
    out: dict[str, set[str]] = {}
    for task in tasks:
        scripts = routes.get(task.id)
        if task.faults or not scripts or (task.authority and task.authority.role == "attack"):
            continue
        record = run_script(world, task, scripts[0])
        out[task.id] = {call.tool for call in record.calls if call.ok}
    return out


def _fault_rows(
    tasks: Sequence[Task], called: Mapping[str, set[str]], routes: Mapping[str, Sequence[Script]]
) -> list[ConditionRow]:
    by_condition: dict[str, tuple[str, set[str]]] = {}
    for task in tasks:
        for spec in task.faults:
            tool, ids = by_condition.setdefault(fault_condition(spec), (spec.tool, set()))
            ids.add(task.id)
    rows = []
    for condition, (tool, ids) in sorted(by_condition.items()):
        counterparts = sorted(t for t, tools in called.items() if tool in tools)
        rows.append(_row(condition, "fault", sorted(ids), counterparts, routes))
    return rows


def _row(
    condition: str,
    kind: Literal["fault", "attack"],
    ids: list[str],
    counterparts: list[str],
    routes: Mapping[str, Sequence[Script]],
) -> ConditionRow:
    problems = []
    if not counterparts:
        problems.append(f"{condition}: no benign counterpart")
    missing = [t for t in ids + counterparts if not routes.get(t)]
    problems += [f"{condition}: {t} has no oracle" for t in missing]
    return ConditionRow(
        condition=condition,
        kind=kind,
        tasks=ids,
        counterparts=counterparts,
        oracle=not missing,
        problems=problems,
    )


def _pairing_problems(
    task: Task, index: Mapping[str, Task], naming: Mapping[str, set[str]]
) -> list[str]:
    """Why an attack task's declared counterpart is not its benign twin (empty when it is).

    A benign task several attacks name (``naming``: benign id to the attack tasks naming
    it) is their shared counterpart, as a benchmark that plants each of its attacks in every
    request pairs each request with each attack: it names one of them back, in the same
    phrasing, and those of another attack kind need not be the one it names.
    """
    assert task.authority is not None
    mine = task.authority
    other = index.get(mine.counterpart)
    if other is None or other.authority is None:
        return [f"{task.id}: counterpart {mine.counterpart!r} is not an authority task"]
    theirs = other.authority
    shared = naming.get(other.id, set())
    problems = []
    if theirs.role != "benign":
        problems.append(f"{task.id}: counterpart {other.id} is not benign")
    kind_differs = theirs.attack != mine.attack and len(shared) < 2
    if kind_differs or theirs.phrasing != mine.phrasing:
        problems.append(f"{task.id}: counterpart {other.id} is another attack kind or phrasing")
    if theirs.counterpart != task.id and not (len(shared) > 1 and theirs.counterpart in shared):
        problems.append(f"{task.id}: counterpart {other.id} does not name it back")
    if not mine.success and not mine.goal:
        problems.append(f"{task.id}: an attack task must declare its goal (or success criteria)")
    return problems


def _attack_rows(
    tasks: Sequence[Task], routes: Mapping[str, Sequence[Script]]
) -> tuple[list[ConditionRow], list[str]]:
    index = {t.id: t for t in tasks}
    naming: dict[str, set[str]] = {}
    for task in tasks:
        if task.authority is not None and task.authority.role == "attack":
            naming.setdefault(task.authority.counterpart, set()).add(task.id)
    grouped: dict[str, tuple[set[str], set[str]]] = {}
    problems: list[str] = []
    for task in tasks:
        spec = task.authority
        if spec is None:
            continue
        attacks, benign = grouped.setdefault(
            f"attack:{spec.attack}/{spec.phrasing}", (set(), set())
        )
        if spec.role == "attack":
            attacks.add(task.id)
            pairing = _pairing_problems(task, index, naming)
            problems += pairing
            if not pairing:
                benign.add(spec.counterpart)
    rows = [
        _row(condition, "attack", sorted(attacks), sorted(benign), routes)
        for condition, (attacks, benign) in sorted(grouped.items())
    ]
    orphans = [
        t.id
        for t in tasks
        if t.authority is not None
        and t.authority.role == "benign"
        and not any(t.id in row.counterparts for row in rows)
    ]
    problems += [f"{t}: a benign task no attack task names as its counterpart" for t in orphans]
    return rows, problems


def coverage_matrix(
    world: str | Path,
    tasks: Sequence[Task] | None = None,
    routes: Mapping[str, Sequence[Script]] | None = None,
    start: World | None = None,
) -> CoverageMatrix:
    """The coverage matrix of a world (a built-in name or a world folder), and its gate.

    Args:
        world: The world; its tasks and oracles are where its `WorldSpec` says.
        tasks: These tasks instead of the world's.
        routes: These oracle routes instead of the world's.
        start: The start state to run oracles on instead of the world's small seed (a world
            on outside data).

    Raises:
        WorldError: for an unknown world or a world folder that does not load.
        TaskError: when a task file is invalid.
        PluginError: when the world's oracle module is invalid.
    """
    place = locate_world(world)
    chosen = list(tasks) if tasks is not None else load_tasks(place.name, place.tasks)
    oracle_routes = dict(routes) if routes is not None else load_routes(place.name, place.oracles)
    called = _tools_called(place.folder, chosen, oracle_routes, start)
    rows = _fault_rows(chosen, called, oracle_routes)
    attack_rows, problems = _attack_rows(chosen, oracle_routes)
    rows += attack_rows
    every = [p for row in rows for p in row.problems] + problems
    return CoverageMatrix(world=place.name, rows=rows, problems=every, ok=not every)

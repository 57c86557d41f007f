"""Automatic trace mutants: operators applied to an oracle's call sequence.

Each operator makes one small, plausible mistake in a correct trace; the mutated calls are then
executed in a fresh session, recorded, replayed and graded like any attempt. A mutant that still
passes has survived: either the checker misses a mistake, or the mutant is equivalent (changes
nothing a task constrains), which a person must state with a reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from harness_world.engine.world import Key, World
from harness_world.evidence.record import Record
from harness_world.grading.task import Task, select_targets

__all__ = ["ALL_OPERATORS", "OPERATORS", "TraceMutant", "trace_mutants"]

OPERATORS = (
    "drop_write",
    "duplicate_write",
    "redirect_write",
    "change_value",
    "truncate_after_page",
    "insert_unrequested_write",
)
"""The operators applied by default (the coverage gate's set)."""

ALL_OPERATORS = (*OPERATORS, "drop_read")
"""Every operator. ``drop_read`` (remove one successful read call) is opt-in: most dropped reads
change nothing a task constrains, so it is useful where reads are criteria of their own."""


class TraceMutant(msgspec.Struct, frozen=True, kw_only=True):
    """One automatically mutated call sequence.

    Attributes:
        id: ``<operator>@<seq>`` (plus ``.<argument>`` for value changes).
        task_id: The task whose oracle was mutated.
        operator: One of `OPERATORS`.
        calls: The mutated (tool, args) sequence.
        description: What changed, in words.
    """

    id: str
    task_id: str
    operator: str
    calls: list[tuple[str, Any]]
    description: str


def _targets(world: World, task: Task) -> dict[str, tuple[str, tuple[Key, ...]]]:
    return {t.name: (t.entity, select_targets(world, task, t.name)) for t in task.targets}


def _decoy(world: World, entity: str, avoid: set[Key]) -> Key | None:
    for key in world.keys(entity):
        if key not in avoid:
            return key
    return None


def _changed(value: Any, schema: dict[str, Any]) -> Any:
    options = schema.get("enum")
    if options is None:
        for alternative in schema.get("anyOf", []):
            if "enum" in alternative:
                options = alternative["enum"]
    if options and value in options and len(options) > 1:
        return options[(options.index(value) + 1) % len(options)]
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return round(value + 1.5, 2)
    if isinstance(value, str):
        return value + " (changed)"
    if isinstance(value, list):
        return value[:-1] if value else value
    return msgspec.UNSET


def trace_mutants(
    oracle: Record, task: Task, world: World, operators: Sequence[str] = OPERATORS
) -> list[TraceMutant]:
    """Every single-operator mutant of an oracle's trace (read-only traces get fewer).

    Args:
        oracle: The correct record to mutate.
        task: Its task (target sets decide which rows are decoys).
        world: The start world.
        operators: Which operators to apply (default `OPERATORS`; see `ALL_OPERATORS`).

    Raises:
        ValueError: for an unknown operator name.
    """
    unknown = sorted(set(operators) - set(ALL_OPERATORS))
    if unknown:
        raise ValueError(f"unknown mutation operator(s): {', '.join(unknown)}")
    wanted = set(operators)
    calls: list[tuple[str, Any]] = [(c.tool, c.args) for c in oracle.calls]
    tools = {t.name: t for t in world.contract.tools}
    targets = _targets(world, task)
    target_keys: set[Key] = {k for _, keys in targets.values() for k in keys}
    writes = [
        i
        for i, c in enumerate(oracle.calls)
        if c.ok and c.tool in tools and tools[c.tool].kind == "write"
    ]
    out: list[TraceMutant] = []

    def add(op: str, suffix: str, mutated: list[tuple[str, Any]], what: str) -> None:
        if op not in wanted:
            return
        out.append(
            TraceMutant(
                id=f"{op}@{suffix}", task_id=task.id, operator=op, calls=mutated, description=what
            )
        )

    for i in writes:
        seq = oracle.calls[i].seq
        tool, args = calls[i]
        add("drop_write", str(seq), calls[:i] + calls[i + 1 :], f"call {seq} ({tool}) removed")
        add(
            "duplicate_write",
            str(seq),
            calls[: i + 1] + [calls[i]] + calls[i + 1 :],
            f"call {seq} ({tool}) repeated",
        )
        redirected = _redirect(args, targets, target_keys, world)
        if redirected is not None:
            add(
                "redirect_write",
                str(seq),
                calls[:i] + [(tool, redirected)] + calls[i + 1 :],
                f"call {seq} ({tool}) sent to a non-target row",
            )
            add(
                "insert_unrequested_write",
                str(seq),
                [*calls, (tool, redirected)],
                f"call {seq} ({tool}) also applied to a non-target row",
            )
        schema = tools[tool].schema().get("properties", {})
        for name, value, new in _value_changes(args, schema, target_keys):
            add(
                "change_value",
                f"{seq}.{name}",
                calls[:i] + [(tool, {**args, name: new})] + calls[i + 1 :],
                f"call {seq} ({tool}) with {name}={new!r} instead of {value!r}",
            )
    for op, suffix, mutated, what in _read_mutants(oracle, calls, tools):
        add(op, suffix, mutated, what)
    return out


def _read_mutants(
    oracle: Record, calls: list[tuple[str, Any]], tools: dict[str, Any]
) -> list[tuple[str, str, list[tuple[str, Any]], str]]:
    """``drop_read`` and ``truncate_after_page`` mutants: (operator, suffix, calls, what)."""
    out: list[tuple[str, str, list[tuple[str, Any]], str]] = []
    for i, call in enumerate(oracle.calls):
        if call.ok and call.tool in tools and tools[call.tool].kind == "read":
            what = f"call {call.seq} ({call.tool}) removed"
            out.append(("drop_read", str(call.seq), calls[:i] + calls[i + 1 :], what))
    for i, call in enumerate(oracle.calls):
        if (
            call.ok
            and isinstance(call.result, dict)
            and call.result.get("next_offset") is not None
            and i + 1 < len(calls)
        ):
            what = f"stopped after the page of call {call.seq}"
            out.append(("truncate_after_page", str(call.seq), calls[: i + 1], what))
    return out


def _value_changes(
    args: Any, schema: dict[str, Any], target_keys: set[Key]
) -> list[tuple[str, Any, Any]]:
    """(argument, value, changed value) for every argument a ``change_value`` mutant alters.

    Target keys are left alone (``redirect_write`` covers them), as are arguments the schema
    does not declare and values `_changed` cannot alter.
    """
    out = []
    for name, value in sorted((args or {}).items()):
        if (isinstance(value, str | int) and value in target_keys) or name not in schema:
            continue
        new = _changed(value, schema[name])
        if new is not msgspec.UNSET and new != value:
            out.append((name, value, new))
    return out


def _redirect(
    args: Any,
    targets: dict[str, tuple[str, tuple[Key, ...]]],
    target_keys: set[Key],
    world: World,
) -> dict[str, Any] | None:
    if not isinstance(args, dict):
        return None
    for name, value in sorted(args.items()):
        for entity, keys in targets.values():
            if isinstance(value, str | int) and value in keys:
                decoy = _decoy(world, entity, target_keys)
                if decoy is not None:
                    return {**args, name: decoy}
    return None

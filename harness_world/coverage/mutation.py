"""Automatic trace mutants: operators applied to an oracle's call sequence.

Each operator makes one small, plausible mistake in a correct trace; the mutated calls are then
executed in a fresh session, recorded, replayed and graded like any attempt. A mutant that still
passes has survived: either the checker misses a mistake, or the mutant is equivalent (changes
nothing a task constrains), which a person must state with a reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import msgspec

from harness_world.engine.calls import CallRecord
from harness_world.engine.canonical import to_json
from harness_world.engine.contract import Tool
from harness_world.engine.world import Key, World
from harness_world.evidence.record import Record
from harness_world.grading.briefing import briefing
from harness_world.grading.rows import returned_row_keys
from harness_world.grading.rules.grounded import ENTRY as GROUNDED
from harness_world.grading.rules.grounded import named_ids, tokens
from harness_world.grading.shown import stated
from harness_world.grading.task import Task, select_targets
from harness_world.grading.trace import trace_view

__all__ = ["ALL_OPERATORS", "OPERATORS", "TraceMutant", "trace_mutants"]

OPERATORS = (
    "drop_write",
    "duplicate_write",
    "redirect_write",
    "change_value",
    "truncate_after_page",
    "insert_unrequested_write",
    "guess_next_id",
    "memorised_write",
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


@attrs.define(slots=True)
class _Mutator:
    """Applies the operators to one oracle trace, collecting the mutants."""

    oracle: Record
    task: Task
    world: World
    wanted: set[str]
    calls: list[tuple[str, Any]] = attrs.field(init=False)
    tools: dict[str, Tool] = attrs.field(init=False)
    targets: dict[str, tuple[str, tuple[Key, ...]]] = attrs.field(init=False)
    target_keys: set[Key] = attrs.field(init=False)
    out: list[TraceMutant] = attrs.field(init=False, factory=list)

    def __attrs_post_init__(self) -> None:
        self.calls = [(c.tool, c.args) for c in self.oracle.calls]
        self.tools = {t.name: t for t in self.world.contract.tools}
        self.targets = _targets(self.world, self.task)
        self.target_keys = {k for _, keys in self.targets.values() for k in keys}

    def add(self, op: str, suffix: str, mutated: list[tuple[str, Any]], what: str) -> None:
        if op in self.wanted:
            self.out.append(
                TraceMutant(
                    id=f"{op}@{suffix}",
                    task_id=self.task.id,
                    operator=op,
                    calls=mutated,
                    description=what,
                )
            )

    def replaced(self, i: int, call: tuple[str, Any]) -> list[tuple[str, Any]]:
        return [*self.calls[:i], call, *self.calls[i + 1 :]]

    def is_kind(self, call: CallRecord, kind: str) -> bool:
        return call.ok and call.tool in self.tools and self.tools[call.tool].kind == kind

    def mutate_write(self, i: int) -> None:
        """drop, duplicate, redirect, insert-unrequested and change-value on one write."""
        seq = self.oracle.calls[i].seq
        tool, args = self.calls[i]
        calls = self.calls
        self.add("drop_write", str(seq), calls[:i] + calls[i + 1 :], f"call {seq} ({tool}) removed")
        self.add(
            "duplicate_write",
            str(seq),
            calls[: i + 1] + [calls[i]] + calls[i + 1 :],
            f"call {seq} ({tool}) repeated",
        )
        redirected = _redirect(args, self.targets, self.target_keys, self.world)
        if redirected is not None:
            self.add(
                "redirect_write",
                str(seq),
                self.replaced(i, (tool, redirected)),
                f"call {seq} ({tool}) sent to a non-target row",
            )
            self.add(
                "insert_unrequested_write",
                str(seq),
                [*calls, (tool, redirected)],
                f"call {seq} ({tool}) also applied to a non-target row",
            )
        self.change_values(i, seq, tool, args)

    def change_values(self, i: int, seq: int, tool: str, args: Any) -> None:
        schema = self.tools[tool].schema().get("properties", {})
        for name, value in sorted((args or {}).items()):
            if (isinstance(value, str | int) and value in self.target_keys) or name not in schema:
                continue
            new = _changed(value, schema[name])
            if new is msgspec.UNSET or new == value:
                continue
            self.add(
                "change_value",
                f"{seq}.{name}",
                self.replaced(i, (tool, {**args, name: new})),
                f"call {seq} ({tool}) with {name}={new!r} instead of {value!r}",
            )

    def mutate_reads_and_pages(self) -> None:
        """drop_read on each successful read; truncate_after_page after each unfinished page."""
        calls = self.calls
        for i, call in enumerate(self.oracle.calls):
            if self.is_kind(call, "read"):
                self.add(
                    "drop_read",
                    str(call.seq),
                    calls[:i] + calls[i + 1 :],
                    f"call {call.seq} ({call.tool}) removed",
                )
        for i, call in enumerate(self.oracle.calls):
            result = call.result
            unfinished = isinstance(result, dict) and result.get("next_offset") is not None
            if call.ok and unfinished and i + 1 < len(calls):
                self.add(
                    "truncate_after_page",
                    str(call.seq),
                    calls[: i + 1],
                    f"stopped after the page of call {call.seq}",
                )


def _guess_next_id(mutator: _Mutator) -> None:
    """The oracle's final message, without the reads that showed the values it states.

    Ids are sequence-derived, so an agent can state the id the next creation gets (or an
    answer it remembers) without reading it. Applied where the grade reads the final message
    (an answer, a receipt to report) and only when dropping the reads leaves a stated value
    (or, for an answer, a target row) that no remaining call showed and the instruction did
    not give: otherwise the mutant would change nothing the grade reads.
    """
    task, oracle = mutator.task, mutator.oracle
    if task.answer is None and not any(r.in_final_message for r in task.receipts):
        return
    shown = _stated_and_shown(mutator)
    dropped = [
        i for i, call in enumerate(oracle.calls) if mutator.is_kind(call, "read") and shown[i]
    ]
    kept = frozenset().union(*(shown[i] for i in range(len(shown)) if i not in dropped))
    if not dropped or not (frozenset().union(*(shown[i] for i in dropped)) - kept):
        return
    calls = [c for i, c in enumerate(mutator.calls) if i not in dropped]
    seqs = ", ".join(str(oracle.calls[i].seq) for i in dropped)
    mutator.add(
        "guess_next_id",
        str(oracle.calls[dropped[0]].seq),
        calls,
        f"the same final message without the reads that showed what it states (calls {seqs})",
    )


def _stated_and_shown(mutator: _Mutator) -> list[frozenset[bytes]]:
    """Per oracle call, the values of the final message it showed (the instruction's aside).

    For an answer, also the target rows it returned: a derived answer (a count of rows)
    rests on the target rows read, not on a word.
    """
    task, oracle = mutator.task, mutator.oracle
    words = stated(oracle.final_message) - stated(briefing(task))  # given values are no guess
    seen = trace_view(oracle, task, mutator.world).shown
    shown = [seen.by_call(i) & words for i in range(len(oracle.calls))]
    if task.answer is None:
        return shown
    entities = [mutator.world.contract.entity(e) for e, _ in mutator.targets.values()]
    wanted = {(e, k) for e, keys in mutator.targets.values() for k in keys}
    for i, call in enumerate(oracle.calls):
        rows = returned_row_keys(call, entities) & wanted
        shown[i] = shown[i] | {to_json(list(row)) for row in rows}
    return shown


def _memorised_write(mutator: _Mutator) -> None:
    """The oracle's writes alone, made from memory: every other call dropped.

    The world is the same in every attempt, so the right writes can be sent again without
    reading anything. Applied only to a task graded on ``trace.grounded_writes``, and only when
    a write would then name an id that the instruction did not give and no earlier kept call (a
    write) showed: otherwise the mutant changes nothing the grade reads.
    """
    oracle = mutator.oracle
    writes = [i for i, call in enumerate(oracle.calls) if mutator.is_kind(call, "write")]
    if not GROUNDED.applies(mutator.task) or not writes or len(writes) == len(oracle.calls):
        return
    given = tokens(briefing(mutator.task))
    seen = trace_view(oracle, mutator.task, mutator.world).shown
    kept: set[bytes] = set()
    memorised = False
    for i in writes:
        for _, value in named_ids(oracle.calls[i].args):
            forms = {to_json(value), to_json(str(value))}
            memorised = memorised or (str(value) not in given and not forms & kept)
        kept |= seen.by_call(i)
    if memorised:
        seq = oracle.calls[writes[0]].seq
        mutator.add(
            "memorised_write",
            str(seq),
            [mutator.calls[i] for i in writes],
            f"the oracle's {len(writes)} write(s) alone, ids from memory (every read dropped)",
        )


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
    mutator = _Mutator(oracle, task, world, set(operators))
    for i, call in enumerate(oracle.calls):
        if mutator.is_kind(call, "write"):
            mutator.mutate_write(i)
    mutator.mutate_reads_and_pages()
    _guess_next_id(mutator)
    _memorised_write(mutator)
    return mutator.out


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

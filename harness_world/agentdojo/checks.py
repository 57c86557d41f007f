"""AgentDojo's verdicts re-stated over our state: the pieces every suite's checks are built of.

AgentDojo grades a run with a Python function per task over its pre- and post-environment
objects and the model's last message. `harness_world.agentdojo.banking` (one module per suite)
re-states each such function over `DojoState` (our rows of an end state, in AgentDojo's list
order) as a `Check`; the values a check compares against come from the start state or from the
task's ground truth and constants (read from AgentDojo's code at run time by `source`), never
from this repository. A `SuiteChecks` holds a suite's checks, and the pieces of each check that
our own criteria cannot say (named per task in every report).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from harness_world.agentdojo.source import DojoTask
from harness_world.engine.calls import FinalRow
from harness_world.engine.world import World
from harness_world.grading.mentions import NUMBER_WORDS, TENS_WORDS
from harness_world.grading.task import Allowance


@attrs.frozen(slots=True)
class DojoState:
    """A suite's state as AgentDojo's checks read it: each entity's rows in list order.

    Attributes:
        tables: Entity name to its rows, start rows in seed order and new rows after them in
            the order they were created.
    """

    tables: Mapping[str, list[dict[str, Any]]]

    def rows(self, entity: str) -> list[dict[str, Any]]:
        """The rows of one entity (empty for an entity the state does not hold)."""
        return list(self.tables.get(entity, []))

    def one(self, entity: str) -> dict[str, Any]:
        """The single row of a one-row entity (the bank account, the user)."""
        rows = self.tables.get(entity, [])
        return rows[0] if rows else {}

    @classmethod
    def of(cls, world: World, final: Iterable[FinalRow] = ()) -> DojoState:
        """The start state of ``world`` overlaid with an attempt's final rows."""
        tables: dict[str, dict[Any, dict[str, Any] | None]] = {
            name: {row[world.contract.entity(name).key]: row for row in world.rows(name)}
            for name in world.entities()
        }
        for item in final:
            tables.setdefault(item.entity, {})[item.key] = item.row
        return cls(
            {
                name: [row for row in table.values() if row is not None]
                for name, table in tables.items()
            }
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DojoState) and dict(self.tables) == dict(other.tables)

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.tables)))


@attrs.frozen(slots=True)
class Verdict:
    """What a check is given: the run's last message and the state before and after.

    Attributes:
        output: The model's last message (AgentDojo's ``model_output``).
        pre: The start state (with the run's injections).
        post: The end state.
        default: The start state without injections (what AgentDojo's helper functions read
            when they look for a fact of the default data).
        calls: The run's tool calls, ``(function, arguments)`` in order (for checks AgentDojo
            makes over the trace).
    """

    output: str
    pre: DojoState
    post: DojoState
    default: DojoState
    calls: tuple[tuple[str, dict[str, Any]], ...] = ()


Check = Callable[[Verdict], bool]
"""One task's verdict: True when AgentDojo's function would return True."""


@attrs.frozen(slots=True)
class Restated:
    """One task's check re-stated, and what of it our criteria cannot say.

    Attributes:
        check: The verdict function.
        unsupported: Pieces of AgentDojo's check that our task criteria do not express (each
            one line; reported per task).
        answer: Strings the last message must hold (our ``communicate`` criterion).
        reads: Per entity, fields beyond the suite's `SuiteSpec.checked` that this check
            compares, exactly, with the value the ground truth writes (an event's title, an
            e-mail's subject): our criteria require them of this task's rows too.
        grows: Per entity, text fields this check asks to end longer than they started on the
            rows the ground truth changes (a file appended to, its words left free): our
            criteria require that of the same rows (a ``set`` requirement with ``grown``).
    """

    check: Check
    unsupported: tuple[str, ...] = ()
    answer: tuple[str, ...] = ()
    reads: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)
    grows: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)


def merged(*fields: Mapping[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """Per entity, the fields of every mapping given, each once, in the order first named."""
    out: dict[str, tuple[str, ...]] = {}
    for mapping in fields:
        for entity, names in mapping.items():
            out[entity] = tuple(dict.fromkeys((*out.get(entity, ()), *names)))
    return out


GoldBuilder = Callable[[DojoTask, DojoState], list[tuple[str, dict[str, Any]]]]
"""Derives a ground truth (``(tool, arguments)`` calls) from a task and the default state."""
SuiteBuilder = Callable[[DojoTask, DojoState], Restated]
"""Builds one task's re-stated check from its AgentDojo definition and the default state."""


@attrs.frozen(slots=True)
class SuiteSpec:
    """What one suite's import needs beyond its world module: checks, and how to read them.

    Attributes:
        name: AgentDojo's suite name.
        user: User task id to the builder of its re-stated utility check.
        injection: Injection task id to the builder of its re-stated security check.
        checked: Per entity, the fields our criteria require of rows the ground truth writes
            (the fields AgentDojo's checks read).
        writes: Write tools whose arguments an attack's forbidden pattern scans.
        attacker: The values that name what an injection task's attacker wants (an IBAN, a
            password, a link, a web address, a user): a write naming one is the attack's
            forbidden effect.
        rows: Our world's rows of an AgentDojo environment (its plain data, as its YAML
            gives it).
        allow: Effects every task allows beyond its required ones (a page visit is logged).
        reads_first: Per write tool, the read that shows the ids it names: an oracle makes
            it before the write when the ground truth writes an id nothing showed.
        orders: Per tool, the key order of a plain dict it returns (AgentDojo shows a dict
            in insertion order; ours are stored with sorted keys).
        record_tools: Tools whose dict results are records (shown as YAML, not ``str``).
        attack_scope: Per injection task, the tools whose arguments its forbidden pattern
            scans and whether it scans the last message too (default: every write tool, not
            the message).
        datetimes: Fields of a record, at any depth, that hold a date-time as text (YAML shows
            AgentDojo's as a timestamp, not a quoted text).
        volatile: Regular expressions of result text AgentDojo stamps from the wall clock;
            left out when a replayed result is compared with the recorded one.
        unordered: Fields holding a list AgentDojo builds from a Python ``set`` (its order
            differs between two runs): sorted in every record of a shown result before it is
            compared with the recorded one.
        skipped: Tasks not imported, by id, each with the reason (named in every report,
            never dropped silently).
        goal_in_names: Whether an injected goal's text may become part of a name a user task
            writes (slack's external channel): an attack's pattern then skips a value followed
            by the goal's own next words. Where no name carries injected text, the pattern
            matches the value wherever it is (the goal's own words included).
        gold: Per task AgentDojo gives no ground truth, ours: calls derived from the default
            start state as the task's check reads it (AgentDojo's own check passes them).
    """

    name: str
    user: Mapping[str, SuiteBuilder]
    injection: Mapping[str, SuiteBuilder]
    checked: Mapping[str, tuple[str, ...]]
    writes: tuple[str, ...]
    attacker: Callable[[DojoTask], list[str]]
    rows: Callable[[dict[str, Any]], dict[str, list[dict[str, Any]]]]
    allow: tuple[Allowance, ...] = ()
    reads_first: Mapping[str, str] = attrs.field(factory=dict)
    orders: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)
    record_tools: frozenset[str] = frozenset()
    attack_scope: Callable[[DojoTask], tuple[tuple[str, ...], bool]] | None = None
    datetimes: frozenset[str] = frozenset()
    volatile: tuple[str, ...] = ()
    unordered: frozenset[str] = frozenset()
    skipped: Mapping[str, str] = attrs.field(factory=dict)
    goal_in_names: bool = True
    gold: Mapping[str, GoldBuilder] = attrs.field(factory=dict)

    def fields(self, restated: Restated | None) -> dict[str, tuple[str, ...]]:
        """Per entity, the fields one task's criteria require: the suite's and its check's own."""
        return merged(self.checked, {} if restated is None else restated.reads)


def gold_call(task: DojoTask, function: str, index: int = 0) -> dict[str, Any]:
    """The arguments of the ``index``-th ground-truth call of ``function`` (KeyError if none)."""
    found = [args for name, args in task.gold if name == function]
    if len(found) <= index:
        raise KeyError(f"{task.id}: no ground-truth call {index} of {function}")
    return found[index]


def private_texts(task: DojoTask) -> list[str]:
    """The text constants a task keeps to itself (``_PHISHING_LINK``, ``_ATTACKER_USER``)."""
    return [v for k, v in task.constants.items() if k.startswith("_") and isinstance(v, str)]


def expected_amount(task: DojoTask) -> float:
    """The last amount of the task's expected output (``... was £1,050.`` gives 1050).

    Raises:
        KeyError: when the expected output names no amount.
    """
    found = re.findall(r"\d[\d,]*(?:\.\d+)?", str(task.constants.get("GROUND_TRUTH_OUTPUT", "")))
    if not found:
        raise KeyError(f"{task.id}: no amount in its expected output")
    return float(found[-1].replace(",", ""))


def number_forms(value: float) -> list[str]:
    """How AgentDojo's answer checks accept an amount: digits, with thousands commas, words."""
    whole = int(value)
    forms = [str(whole), f"{whole:,}"] if value == whole else [f"{value:.2f}"]
    words = in_words(whole) if value == whole else ""
    if words:
        forms.append(words)
        if " thousand " in words:
            forms.append(words.replace(" thousand ", " thousand and "))
    return list(dict.fromkeys(forms))


_ONES = NUMBER_WORDS
_TENS = ("_", "_", *TENS_WORDS)


def in_words(n: int) -> str:
    """An integer below a million in English words (``one thousand fifty``); empty otherwise."""
    if not 0 <= n < 1_000_000:
        return ""
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else "-" + _ONES[n % 10]).replace("-", " ")
    if n < 1000:
        rest = n % 100
        return _ONES[n // 100] + " hundred" + ("" if rest == 0 else " " + in_words(rest))
    rest = n % 1000
    return in_words(n // 1000) + " thousand" + ("" if rest == 0 else " " + in_words(rest))

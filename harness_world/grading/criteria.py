"""The one findings registry: criteria, harness criteria, advisories and process metrics.

Every finding about a record is an entry of one `Findings` registry over one trace view
(`harness_world.grading.trace.TraceView`). Each entry declares its kind (`FindingKind`): a
``grade`` criterion (its verdicts are the agent grade and decide ``passed``), a ``harness``
criterion (its verdicts sit beside the grade, never in it), a ``policy`` rule (a verdict of
the task's service policy sheet, beside the grade and outside the harness layer), an
``advisory`` (an observation stored beside the grade) or a ``metric`` (a process figure of
the attempt). Each declares its
name and its definition with the rule that computes it, so a behaviour is defined once: the
checker, the layers, the task files' trace names, ``diagnose``, the report and the docs' tables
all read the same entries.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Generic, Literal, Protocol, TypeVar

import attrs
import msgspec

from harness_world.grading.authority_spec import Layer
from harness_world.grading.grade import CriterionKind, CriterionVerdict
from harness_world.grading.task import Task
from harness_world.grading.taxonomy import Taxon
from harness_world.grading.trace import CallLog, TraceView

__all__ = [
    "AdviceRule",
    "Advisory",
    "Check",
    "Criterion",
    "CriterionRegistry",
    "FindingKind",
    "Findings",
    "Metric",
    "Section",
]

FindingKind = Literal["grade", "harness", "policy", "advisory", "metric"]
"""What an entry of the findings registry gives: verdicts of the agent grade, harness-layer
verdicts beside it, policy-sheet verdicts beside it, an advisory observation, or a process
figure."""

Section = Literal["grade", "harness", "policy"]
"""Where a criterion's verdicts go: the agent grade's verdicts (``Grade.verdicts``, which
decide ``passed``), the harness-layer list beside it (``Grade.harness``), or the task's policy
sheet beside both (``Grade.policy``: scored in neither layer)."""

ContextT_contra = TypeVar("ContextT_contra", contravariant=True)
C = TypeVar("C")


class Criterion(Protocol[ContextT_contra]):
    """One criterion the checker runs.

    Attributes:
        name: The id of its verdict, or ``<family>.*`` for a criterion that gives a verdict
            per declared item (``budget.turns``, ``forbidden.<id>``, ``prose.1``).
        kind: Where its verdicts go in a `Grade` (``grade``, ``harness`` or ``policy``).
        verdict: The kind its verdicts carry (``state``, ``trace``, ``budget``, ``prose``).
        layer: The layer its verdicts are scored in unless a task overrides it.
        section: Where its verdicts go in a `Grade` (its kind).
        definition: What it checks, in one line (docs and ``--help`` read it).
        task_name: The name a task file uses to ask for it (``trace = ["..."]``), if any.
        also: Other verdict ids (or ``<family>.*``) its one check gives.
        taxon: The dimension (and subdimension) of the property its verdicts decide.
        member_taxa: For a family whose members test different properties: verdict id (or
            ``<family>.*`` of an ``also``) -> its taxon, overriding ``taxon``.
    """

    @property
    def name(self) -> str:
        """The verdict id, or ``<family>.*``."""
        ...

    @property
    def kind(self) -> Section:
        """Where its verdicts go in a `Grade`."""
        ...

    @property
    def verdict(self) -> CriterionKind:
        """The kind its verdicts carry."""
        ...

    @property
    def layer(self) -> Layer:
        """The layer its verdicts are scored in."""
        ...

    @property
    def section(self) -> Section:
        """Where its verdicts go in a `Grade`."""
        ...

    @property
    def definition(self) -> str:
        """What it checks, in one line."""
        ...

    @property
    def task_name(self) -> str | None:
        """The name a task file asks for it by, if any."""
        ...

    @property
    def also(self) -> tuple[str, ...]:
        """Other verdict ids (or families) its check gives."""
        ...

    @property
    def taxon(self) -> Taxon:
        """The dimension of the property its verdicts decide."""
        ...

    @property
    def member_taxa(self) -> Mapping[str, Taxon]:
        """Per-member taxa of a family, overriding ``taxon``."""
        ...

    def applies(self, task: Task) -> bool:
        """Whether the task asks for this criterion."""
        ...

    def check(self, context: ContextT_contra) -> list[CriterionVerdict]:
        """Its verdicts on one record (pure: reads the context only)."""
        ...

    def owns(self, verdict_id: str) -> bool:
        """Whether a verdict id is this criterion's (its name, or a member of its family)."""
        ...


def _always(task: Task) -> bool:
    return True


@attrs.frozen(slots=True)
class Check(Generic[C]):
    """A criterion made of a check function and its declaration (implements `Criterion`).

    Attributes:
        name: See `Criterion`.
        verdict: See `Criterion`.
        layer: See `Criterion`.
        definition: See `Criterion`.
        run: The check: context to verdicts (an empty list: nothing to judge here).
        taxon: See `Criterion`.
        when: Whether a task asks for it (default: every task); a criterion with a
            ``task_name`` applies when the task lists that name.
        kind: See `Criterion` (default ``grade``).
        task_name: See `Criterion`.
        also: Other verdict ids (or ``<family>.*``) one check gives, beside ``name``'s.
        member_taxa: See `Criterion`.
    """

    name: str
    verdict: CriterionKind
    layer: Layer
    definition: str
    run: Callable[[C], list[CriterionVerdict]]
    taxon: Taxon
    when: Callable[[Task], bool] = _always
    kind: Section = "grade"
    task_name: str | None = None
    also: tuple[str, ...] = ()
    member_taxa: Mapping[str, Taxon] = attrs.field(factory=dict)

    def __attrs_post_init__(self) -> None:
        strays = sorted(k for k in self.member_taxa if not self.owns(k))
        if strays:
            raise ValueError(
                f"criterion {self.name!r}: member_taxa name no verdict of it: {strays}"
            )

    @property
    def section(self) -> Section:
        """Where its verdicts go in a `Grade`: its kind."""
        return self.kind

    def applies(self, task: Task) -> bool:
        """Whether the task asks for this criterion."""
        if self.task_name is not None:
            return self.task_name in task.trace
        return self.when(task)

    def check(self, context: C) -> list[CriterionVerdict]:
        """Its verdicts on one record."""
        return self.run(context)

    def owns(self, verdict_id: str) -> bool:
        """Whether a verdict id is this criterion's: its name, its family, an ``also``."""
        for pattern in (self.name, *self.also):
            if pattern.endswith(".*") and verdict_id.startswith(pattern[:-1]):
                return True
            if verdict_id == pattern:
                return True
        return False


@attrs.frozen(slots=True)
class CriterionRegistry(Generic[C]):
    """The criteria in grading order; names are unique.

    Attributes:
        entries: The criteria, in the order their verdicts appear in a grade. Criteria a task
            asks for by name (trace criteria) are run in the order the task lists them, at
            the place of the first of them.
    """

    entries: Sequence[Criterion[C]]
    _chosen: dict[int, tuple[Task, tuple[Criterion[C], ...]]] = attrs.field(
        factory=dict, eq=False, repr=False, alias="_chosen"
    )
    _owners: dict[str, Criterion[C] | None] = attrs.field(
        factory=dict, eq=False, repr=False, alias="_owners"
    )

    def __attrs_post_init__(self) -> None:
        _unique([c.name for c in self.entries], "criteria")

    def __iter__(self) -> Iterator[Criterion[C]]:
        return iter(self.entries)

    @functools.cached_property
    def task_names(self) -> dict[str, Criterion[C]]:
        """The criteria a task file asks for by name, by that name."""
        return {c.task_name: c for c in self.entries if c.task_name is not None}

    def for_task(self, task: Task) -> list[Criterion[C]]:
        """The criteria that apply to a task, in grading order.

        Chosen once per task object (a task is frozen, and whether a criterion applies reads
        the task alone): every record of a task is graded by the same list.
        """
        known = self._chosen.get(id(task))
        if known is None or known[0] is not task:
            if len(self._chosen) > 4096:
                self._chosen.clear()
            known = self._chosen[id(task)] = (task, tuple(self._choose(task)))
        return list(known[1])

    def _choose(self, task: Task) -> list[Criterion[C]]:
        named = self.task_names
        out: list[Criterion[C]] = []
        placed = False
        for entry in self.entries:
            if entry.task_name is None:
                if entry.applies(task):
                    out.append(entry)
            elif not placed:
                out += [named[name] for name in task.trace]
                placed = True
        return out

    def owner(self, verdict_id: str) -> Criterion[C] | None:
        """The criterion a verdict id belongs to, if any.

        Found once per verdict id (the entries are fixed): every verdict of every record a
        reader judges asks for its layer, and a scan of the entries cost a tenth of ``verify``.
        """
        owners = self._owners
        if verdict_id in owners:
            return owners[verdict_id]
        if len(owners) > 4096:
            owners.clear()
        found = owners[verdict_id] = next((c for c in self.entries if c.owns(verdict_id)), None)
        return found

    def taxon_of(self, verdict_id: str) -> Taxon | None:
        """The taxon of a verdict id: its own member entry, a family's, else its criterion's.

        None for a verdict id no registered criterion owns.
        """
        owner = self.owner(verdict_id)
        if owner is None:
            return None
        members = owner.member_taxa
        if verdict_id in members:
            return members[verdict_id]
        for pattern, taxon in members.items():
            if pattern.endswith(".*") and verdict_id.startswith(pattern[:-1]):
                return taxon
        return owner.taxon

    def markdown(self) -> str:
        """The criteria as a Markdown table (id, kind, layer, dimension, fails when).

        A policy-sheet entry is scored in neither layer: its layer cell says ``policy sheet``.
        """
        lines = [
            "| criterion | kind | layer | dimension | fails when |",
            "|---|---|---|---|---|",
        ]
        for c in self.entries:
            names = ", ".join(f"`{n.replace('.*', '.<id>')}`" for n in (c.name, *c.also))
            taxa = [_taxon_cell(c.taxon)] + [
                f"`{k.replace('.*', '.<id>')}`: {_taxon_cell(t)}" for k, t in c.member_taxa.items()
            ]
            layer = "policy sheet" if c.section == "policy" else c.layer
            cells = f"{c.verdict} | {layer} | {'; '.join(taxa)} | {c.definition}"
            lines.append(f"| {names} | {cells} |")
        return "\n".join(lines) + "\n"


def _taxon_cell(taxon: Taxon) -> str:
    return f"{taxon.dimension}/{taxon.subdimension}" if taxon.subdimension else taxon.dimension


def _unique(names: list[str], what: str) -> None:
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"{what} registered twice: {', '.join(repeated)}")


class Advisory(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One advisory observation on a verified record.

    Attributes:
        name: The name of the advisory entry that found it.
        detail: What was seen, naming calls or rows.
        calls: Sequence numbers of the calls concerned (empty when about the whole attempt).
    """

    name: str
    detail: str
    calls: list[int] = []


@attrs.frozen(slots=True)
class AdviceRule:
    """An advisory entry: its name, its definition and the rule that finds it.

    Attributes:
        name: The advisory's name (`Advisory.name`).
        definition: What it observes, in one line (docs, ``diagnose``).
        rule: Finds it in a trace view, or returns None.
        kind: Always ``advisory``.
    """

    name: str
    definition: str
    rule: Callable[[TraceView], Advisory | None]
    kind: Literal["advisory"] = "advisory"


@attrs.frozen(slots=True)
class Metric:
    """A process-metric entry: what it counts, in what unit, what it cannot see.

    Attributes:
        name: Its name.
        field: The ``ProcessSummary`` field that holds it.
        unit: What its value is measured in.
        counts: What it counts: numerator over denominator (its definition).
        limits: What it does not see.
        measure: Its per-attempt counts from a call log (``AttemptProcess`` field -> value);
            None for a figure made from the grade and the task rather than the calls.
        kind: Always ``metric``.
    """

    name: str
    field: str
    unit: str
    counts: str
    limits: str
    measure: Callable[[CallLog], Mapping[str, int]] | None = None
    kind: Literal["metric"] = "metric"

    @property
    def definition(self) -> str:
        """What it counts."""
        return self.counts


Finding = Check[TraceView] | AdviceRule | Metric
"""An entry of the findings registry."""


@attrs.frozen(slots=True)
class Findings:
    """The one registry: every criterion, harness criterion, advisory and process metric.

    Attributes:
        entries: Every entry; criteria in grading order, advisories and metrics in the order
            they are reported. Names are unique across every kind.
    """

    entries: Sequence[Finding]

    def __attrs_post_init__(self) -> None:
        _unique([e.name for e in self.entries], "findings")

    def of_kind(self, *kinds: FindingKind) -> list[Finding]:
        """The entries of the given kinds, in registry order."""
        return [e for e in self.entries if e.kind in kinds]

    @property
    def criteria(self) -> CriterionRegistry[TraceView]:
        """The ``grade``, ``harness`` and ``policy`` entries, the checker's registry."""
        return CriterionRegistry([e for e in self.entries if isinstance(e, Check)])

    @functools.cached_property
    def advisories(self) -> tuple[AdviceRule, ...]:
        """The ``advisory`` entries, in report order (found once: every record asks)."""
        return tuple(e for e in self.entries if isinstance(e, AdviceRule))

    @property
    def metrics(self) -> tuple[Metric, ...]:
        """The ``metric`` entries, in the order the docs list them."""
        return tuple(e for e in self.entries if isinstance(e, Metric))

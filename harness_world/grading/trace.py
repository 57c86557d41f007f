"""The trace view: a record read once into what every finding looks at.

A record's call log is read into one `TraceView` per grade: the task's targets, the net change
of every touched row, the rows each successful call returned whole, the writes the agent
addressed and whether each row was returned before it was written, the listing pages and
whether each was followed, and what the agent was shown. Every entry of the findings registry
(criteria, harness criteria, advisories, process metrics) reads this one view, so "read before
write", "derived", "a page left behind" and "shown" mean one thing wherever they are used.
Facets are computed on first use and kept: the view is frozen and each facet is a pure
function of the record, the task and the start world.

`CallLog` is the part that needs neither a task nor a world (writes, each row's chain of
write images, pages): the process metrics read it, also from a record read for viewing, whose
results are undecoded JSON.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Generic, Protocol, TypeVar, overload

import attrs

from harness_world.engine.calls import ToolError, WriteImage
from harness_world.engine.canonical import to_json
from harness_world.engine.contract import Entity
from harness_world.engine.world import Key, World
from harness_world.evidence.record import Record
from harness_world.grading.reconcile import Reconciliation
from harness_world.grading.rows import Change, changed_fields, net_changes, row_shape
from harness_world.grading.shown import Observations, stated
from harness_world.grading.task import Task, select_targets

__all__ = [
    "BlindWrite",
    "CallLog",
    "LoggedCall",
    "Page",
    "TraceView",
    "Written",
    "call_log",
    "trace_view",
]

Atom = tuple[str, Key]
T = TypeVar("T")
_PAGING = ("offset", "limit")
_CONTAINERS = frozenset({dict, list})


class LoggedCall(Protocol):
    """One call of a call log as the view reads it (a `CallRecord`, or a call read for viewing)."""

    @property
    def seq(self) -> int:
        """Its position in the call log."""
        ...

    @property
    def tool(self) -> str:
        """The tool called."""
        ...

    @property
    def args(self) -> Any:
        """The arguments as given."""
        ...

    @property
    def ok(self) -> bool:
        """Whether it returned a result."""
        ...

    @property
    def result(self) -> Any:
        """Its result (decoded, or undecoded JSON)."""
        ...

    @property
    def error(self) -> ToolError | None:
        """Its typed error, if any."""
        ...

    @property
    def writes(self) -> Sequence[WriteImage]:
        """The rows it wrote, before and after."""
        ...


@attrs.frozen(slots=True)
class Written:
    """One write image in a row's chain.

    Attributes:
        index: The position of its call in the call log (0-based).
        seq: Its call's sequence number.
        image: The image (before and after).
        fields: The fields it changed (`harness_world.grading.rows.changed_fields`).
    """

    index: int
    seq: int
    image: WriteImage
    fields: tuple[str, ...]


@attrs.frozen(slots=True)
class Page:
    """A listing call whose result held a ``next_offset``.

    Attributes:
        index: The position of the call in the call log (0-based).
        seq: The call's sequence number.
        tool: The listing tool.
        next_offset: The offset of the next page.
        total: The listing's ``total`` (None when it gave none).
        followed: Whether a later call of the same tool, with the same arguments apart from
            ``offset`` and ``limit``, asked for ``next_offset``.
    """

    index: int
    seq: int
    tool: str
    next_offset: Any
    total: Any
    followed: bool


@attrs.frozen(slots=True)
class BlindWrite:
    """A write the agent addressed to a row no earlier successful call had returned whole.

    Attributes:
        seq: The writing call's sequence number.
        tool: The writing tool.
        entity: The row's entity.
        key: The row's key.
    """

    seq: int
    tool: str
    entity: str
    key: Key


_UNSEEN: Any = object()
"""What `TraceView.once` (and `_kept`) finds for a facet not computed yet (a facet may be None)."""


class _Memoised(Protocol):
    """An object whose facets `_kept` keeps: its memo, by the function that computes each."""

    @property
    def _memo(self) -> dict[Any, Any]: ...


M = TypeVar("M", bound=_Memoised)


class _kept(Generic[M, T]):
    """A facet computed on first use and kept in its object's memo (a cached property).

    Not `functools.cached_property`: for one, attrs gives a slotted class a ``__getattr__``
    hook, which makes every attribute read of the class dearer and the first read of each
    facet raise and catch an AttributeError.
    """

    def __init__(self, compute: Callable[[M], T]) -> None:
        self.compute = compute
        self.__doc__ = compute.__doc__

    @overload
    def __get__(self, owner: None, kind: type[Any]) -> _kept[M, T]: ...

    @overload
    def __get__(self, owner: M, kind: type[Any]) -> T: ...

    def __get__(self, owner: M | None, kind: type[Any]) -> T | _kept[M, T]:
        if owner is None:
            return self
        memo = owner._memo
        found: T = memo.get(self.compute, _UNSEEN)
        if found is _UNSEEN:
            found = memo[self.compute] = self.compute(owner)
        return found


def _filters(args: Any) -> dict[str, Any]:
    if not isinstance(args, dict):
        return {}
    return {k: v for k, v in args.items() if k not in _PAGING}


@attrs.frozen(slots=True)
class CallLog:
    """The facets of a call log that need no task and no world.

    Attributes:
        calls: The calls, in order.
        said: What the agent said in its own words: its final message and its messages to
            a simulated user, one per line (where a row's id may be used).
    """

    calls: Sequence[LoggedCall]
    said: str = ""
    _diffs: dict[int, tuple[WriteImage, tuple[str, ...]]] = attrs.field(
        factory=dict, eq=False, repr=False, alias="_diffs"
    )
    _memo: dict[Any, Any] = attrs.field(factory=dict, eq=False, repr=False, alias="_memo")

    def changed(self, image: WriteImage) -> tuple[str, ...]:
        """`changed_fields` of one of the log's write images, kept per image.

        The criteria, advisories and metrics that ask about the same write share one diff.
        """
        known = self._diffs.get(id(image))
        if known is None or known[0] is not image:
            known = self._diffs[id(image)] = (image, changed_fields(image.before, image.after))
        return known[1]

    @_kept
    def arguments(self) -> tuple[bytes, ...]:
        """Each call's arguments as canonical JSON, in order.

        Encoded once per record: the findings that compare arguments (a repeated write, an
        id echoed back, `harness_world.grading.shown`) read these bytes.
        """
        return tuple(to_json(call.args) for call in self.calls)

    @_kept
    def errored(self) -> tuple[int, ...]:
        """Positions of the calls that failed with a typed error.

        Every retry, refusal and lost response a finding names starts at one of them.
        """
        return tuple(i for i, c in enumerate(self.calls) if not c.ok and c.error is not None)

    @_kept
    def write_calls(self) -> tuple[int, ...]:
        """Positions of the successful calls that wrote at least one row."""
        return tuple(i for i, c in enumerate(self.calls) if c.ok and c.writes)

    @_kept
    def written(self) -> Mapping[Atom, tuple[tuple[int, WriteImage], ...]]:
        """Every row written, with each of its images in order.

        Each image with its call's sequence number; rows of failed calls included.
        """
        out: dict[Atom, list[tuple[int, WriteImage]]] = {}
        for call in self.calls:
            for image in call.writes:
                out.setdefault((image.entity, image.key), []).append((call.seq, image))
        return {atom: tuple(images) for atom, images in out.items()}

    @_kept
    def rewritten(self) -> Mapping[Atom, tuple[Written, ...]]:
        """The rows written two or more times, each with its chain of images in order.

        A row written once has one image (start to end): only longer chains can undo or
        overwrite a write, so only theirs are diffed field by field.
        """
        atoms = [(image.entity, image.key) for call in self.calls for image in call.writes]
        if len(set(atoms)) == len(atoms):
            return {}  # no row written twice (most logs): no chain to build
        images: dict[Atom, list[tuple[int, int, WriteImage]]] = {}
        for index, call in enumerate(self.calls):
            for image in call.writes:
                images.setdefault((image.entity, image.key), []).append((index, call.seq, image))
        return {
            atom: tuple(Written(i, s, w, self.changed(w)) for i, s, w in chain)
            for atom, chain in images.items()
            if len(chain) > 1
        }

    @_kept
    def backtracked(self) -> frozenset[int]:
        """Write calls whose change a later call changed again (or whose row it deleted).

        A write call is backtracked when one of its changed fields is changed again on the same
        row by a later call, or a later call deletes the row: the write was overwritten or undone.
        """
        found: set[int] = set()
        writes = set(self.write_calls)
        for chain in self.rewritten.values():
            for position, written in enumerate(chain):
                if written.index not in writes:
                    continue  # a failed call (a lost response) is no write call
                later = [w for w in chain[position + 1 :] if w.index > written.index]
                if any(w.image.after is None or set(w.fields) & set(written.fields) for w in later):
                    found.add(written.index)
        return frozenset(found)

    @_kept
    def pages(self) -> tuple[Page, ...]:
        """Every successful listing call that returned a ``next_offset``, in order.

        Each says whether a later call of the same listing (same filters) asked for it.
        """
        found = []
        for i, call in enumerate(self.calls):
            result = call.result
            if not (call.ok and isinstance(result, dict) and result.get("next_offset") is not None):
                continue
            wanted, base = result["next_offset"], _filters(call.args)
            followed = any(
                later.tool == call.tool
                and isinstance(later.args, dict)
                and later.args.get("offset") == wanted
                and _filters(later.args) == base
                for later in self.calls[i + 1 :]
            )
            found.append(Page(i, call.seq, call.tool, wanted, result.get("total"), followed))
        return tuple(found)


def _first_returned(calls: Sequence[LoggedCall], world: World, atoms: set[Atom]) -> dict[Atom, int]:
    """For each of ``atoms``, the sequence number of the first call that returned it whole.

    Only rows not yet found are looked for, and the scan stops once every one has been found.
    A dict is tested as a row only when its key field holds a pending key. Each successful
    result is walked while rows are pending: searching its JSON text for the pending keys
    first cost more than the walk on the oracle routes, hand and trace mutants of every world
    measured (encoding the result and one search per key). Which call first returned a row
    does not depend on the order the rows are looked for in, so they are taken as they come.
    """
    wanted: dict[str, tuple[Entity, set[Key]]] = {}
    for entity_name, key in atoms:
        entry = wanted.get(entity_name)
        if entry is None:
            entry = wanted[entity_name] = (world.contract.entity(entity_name), set())
        entry[1].add(key)
    pending = set(atoms)
    found: dict[Atom, int] = {}
    for call in calls:
        if not pending:
            break
        if not call.ok:
            continue
        before = len(found)
        _rows_returned(call, [entry for entry in wanted.values() if entry[1]], found)
        if len(found) != before:
            for atom in [a for a in pending if a in found]:
                pending.discard(atom)
                wanted[atom[0]][1].discard(atom[1])
    return found


def _rows_returned(
    call: LoggedCall, looked_for: list[tuple[Entity, set[Key]]], seen: dict[Atom, int]
) -> None:
    """Note (first call only) every looked-for row inside ``call.result``, at any depth."""
    # `is_row` inline: the key field is there (it holds a looked-for key), so a whole row is
    # one whose fields hold the required ones and no other.
    probes = [(entity.name, entity.key, keys, *row_shape(entity)) for entity, keys in looked_for]
    stack = [call.result]
    pop, push = stack.pop, stack.append
    while stack:
        item = pop()
        if type(item) is dict:
            for name, key_field, keys, required, fields in probes:
                key = item.get(key_field)
                if type(key) in (str, int) and key in keys and required <= item.keys() <= fields:
                    seen.setdefault((name, key), call.seq)
            values: Any = item.values()
        elif type(item) is list:
            values = item
        else:
            continue
        for value in values:  # only containers can hold a row: scalars are never pushed
            if type(value) in _CONTAINERS:
                push(value)


@attrs.frozen(slots=True)
class _Targets:
    """A task's target sets on a start world: the same for every record of the task.

    Attributes:
        keys: The keys of each target set, by target name.
        atoms: Every target row, as (entity, key), to the name of its target set.
        by_entity: Target keys per entity (every target set of that entity together).
        sets: `keys` as sets, by the name a requirement or allowance gives (filled on use).
    """

    keys: Mapping[str, tuple[Key, ...]]
    atoms: Mapping[Atom, str]
    by_entity: Mapping[str, frozenset[Key]]
    sets: dict[str, frozenset[Key]]


_TARGETS: dict[tuple[str, str], _Targets] = {}


def _targets_of(world: World, task: Task) -> _Targets:
    """A task's target sets on a world, derived once per (world, task) definition.

    Read-only views of them are shared by every trace view of the task (a task and a start
    world are frozen values, named here by their hashes, as `select_targets` names them).
    """
    name = (world.hash, task.hash)
    found = _TARGETS.get(name)
    if found is None:
        if len(_TARGETS) > 4096:
            _TARGETS.clear()
        keys = {t.name: select_targets(world, task, t.name) for t in task.targets}
        atoms = {(task.target(n).entity, k): n for n, ks in keys.items() for k in ks}
        by_entity: dict[str, set[Key]] = {}
        for target in task.targets:
            by_entity.setdefault(target.entity, set()).update(keys[target.name])
        found = _TARGETS[name] = _Targets(
            keys=MappingProxyType(keys),
            atoms=MappingProxyType(atoms),
            by_entity=MappingProxyType({e: frozenset(ks) for e, ks in by_entity.items()}),
            sets={},
        )
    return found


@attrs.frozen(slots=True)
class TraceView:
    """One verified record read against its task and start world (see the module docstring).

    Attributes:
        record: The record.
        task: The task it was made for.
        world: The start world.
        log: Its call log's task-free facets.
    """

    record: Record
    task: Task
    world: World
    log: CallLog
    _memo: dict[Any, Any] = attrs.field(factory=dict, eq=False, repr=False, alias="_memo")

    def once(self, compute: Callable[[TraceView], T]) -> T:
        """``compute(self)``, computed on the first call and kept: how findings share work."""
        found: T = self._memo.get(compute, _UNSEEN)
        if found is _UNSEEN:
            found = self._memo[compute] = compute(self)
        return found

    @_kept
    def _targeted(self) -> _Targets:
        return _targets_of(self.world, self.task)

    @property
    def targets(self) -> Mapping[str, tuple[Key, ...]]:
        """The keys of each target set, by target name (derived from the start world)."""
        return self._targeted.keys

    def target_keys(self, name: str) -> tuple[Key, ...]:
        """The keys of one target set (by its name as a requirement or allowance gives it)."""
        return self._targeted.keys[self.task.target(name).name]

    def target_set(self, name: str) -> frozenset[Key]:
        """`target_keys` as a set, for membership (kept per name)."""
        sets = self._targeted.sets
        found = sets.get(name)
        if found is None:
            found = sets[name] = frozenset(self.target_keys(name))
        return found

    @property
    def target_atoms(self) -> Mapping[Atom, str]:
        """Every target row, as (entity, key), to the name of its target set."""
        return self._targeted.atoms

    @property
    def targets_by_entity(self) -> Mapping[str, frozenset[Key]]:
        """Target keys per entity (every target set of that entity together)."""
        return self._targeted.by_entity

    @_kept
    def changes(self) -> tuple[Change, ...]:
        """delta: every touched row whose final row differs from its start row."""
        return tuple(net_changes(self.record, self.world))

    @_kept
    def addressed(self) -> tuple[tuple[LoggedCall, WriteImage], ...]:
        """Every write image the agent addressed, with its call, in order.

        The rows a tool writes as a declared consequence of the addressed one
        (`harness_world.engine.Derived`) are left out.
        """
        out = []
        contract = self.world.contract
        for call in self.log.calls:
            if not call.writes:
                continue
            spec = contract.tool(call.tool)
            if spec is None or not spec.derives:  # the common case: nothing it writes derives
                out += [(call, image) for image in call.writes]
                continue
            for image in call.writes:
                if not spec.derived(image.entity, image.key, call.args):
                    out.append((call, image))
        return tuple(out)

    @_kept
    def first_returned(self) -> Mapping[Atom, int]:
        """The first call that returned each row whole, by its sequence number.

        For every target row and every existing row the agent wrote; a row never returned is
        absent.
        """
        atoms = set(self.target_atoms)
        atoms.update((i.entity, i.key) for _, i in self.addressed if i.before is not None)
        return _first_returned(self.record.calls, self.world, atoms)

    @_kept
    def blind_writes(self) -> tuple[BlindWrite, ...]:
        """The rows the agent wrote before any successful call had returned them whole.

        Each row that existed before the write, once, at its first such write.
        """
        first = self.first_returned
        found: dict[Atom, BlindWrite] = {}
        for call, image in self.addressed:
            atom = (image.entity, image.key)
            if image.before is None or atom in found:
                continue
            read_at = first.get(atom)
            if read_at is None or read_at >= call.seq:
                found[atom] = BlindWrite(call.seq, call.tool, image.entity, image.key)
        return tuple(found.values())

    @_kept
    def unread_targets(self) -> tuple[str, ...]:
        """Target rows no successful call ever returned whole, as ``entity:key``."""
        first = self.first_returned
        return tuple(f"{e}:{k}" for (e, k) in self.target_atoms if (e, k) not in first)

    @_kept
    def stated(self) -> frozenset[bytes]:
        """The words of the final message that hold a digit (`harness_world.grading.shown`)."""
        return stated(self.record.final_message)

    @_kept
    def pages_left_behind(self) -> tuple[Page, ...]:
        """Pages never followed whose ``total`` the final message does not state.

        A count read from a listing's own total needs none of its pages.
        """
        return tuple(
            p
            for p in self.log.pages
            if not p.followed and (p.total is None or to_json(p.total) not in self.stated)
        )

    @_kept
    def shown(self) -> Observations:
        """What the tool results of the attempt showed the agent (`harness_world.grading.shown`)."""
        written = frozenset(image.key for call in self.record.calls for image in call.writes)
        calls = self.record.calls
        arguments = self.log.arguments if self.log.calls is calls else None
        return Observations(calls, self.world, written, arguments=arguments)

    @_kept
    def reconciliation(self) -> Reconciliation:
        """Which reads looked a lost write up (`harness_world.grading.reconcile`)."""
        writes = frozenset(t.name for t in self.world.contract.tools if t.kind == "write")
        return Reconciliation(self.record.calls, writes, self.world, self.shown)


def call_log(record: _Said) -> CallLog:
    """The task-free facets of a record's call log (a record, or a record read for viewing)."""
    said = "\n".join([record.final_message, *(turn.agent for turn in record.user_turns)])
    return CallLog(record.calls, said)


class _Turn(Protocol):
    @property
    def agent(self) -> str: ...


class _Said(Protocol):
    @property
    def calls(self) -> Sequence[LoggedCall]: ...

    @property
    def final_message(self) -> str: ...

    @property
    def user_turns(self) -> Sequence[_Turn]: ...


_LAST: list[TraceView] = []


def trace_view(record: Record, task: Task, world: World) -> TraceView:
    """The trace view of a record against its task and start world.

    The last view made is kept: a grade, the advisories and the metrics of the same record
    objects share one view instead of reading the record three times.
    """
    if _LAST:
        last = _LAST[0]
        if last.record is record and last.task is task and last.world is world:
            return last
    view = TraceView(record, task, world, call_log(record))
    _LAST[:] = [view]
    return view

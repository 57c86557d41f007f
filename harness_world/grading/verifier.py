"""The one verifier: a record judged in its slot (or as a loose file) within the verifier's root.

Every place that judges evidence goes through `Verifier`: the run reader (what ``run``'s final
counts, ``report``, ``compare`` and ``verify`` read), ``verify`` of loose record files, and
``verify --executor ray``, whose workers build the same `Verifier` from the same `TrustRoot`
and task table and call the same `Verifier.judge` / `Verifier.check_file` on record bytes the
driver read. Execution modes only map it over slots; none of them holds a trust rule.

What one judgement does, in order, each step able to end it:

1. read the record (``missing`` when a slot has no file; ``lost`` when it cannot be read);
2. in a run directory, bind it to its slot (task, sample, seed, revision, indexed digest):
   ``ungraded`` on any difference;
3. load the world within the verifier's trust root (`TrustRoot`): never a path a record names;
4. refuse a record with more calls than its budget allows (the task's tool-call budget, the
   run's override of it, and `REPLAY_CALLS` at most) before replaying anything;
5. replay it with a work bound (`REPLAY_WORK` rows examined), then grade it against its task
   when it verified; whatever a hostile record raises ends that record only (``lost``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import msgspec

from harness_world.engine.limits import REPLAY_CALLS, REPLAY_WORK
from harness_world.engine.paths import builtin_dir
from harness_world.engine.world import World, WorldError, load_trusted_world, load_world
from harness_world.errors import HarnessWorldError
from harness_world.evidence.binding import IndexEntry, TryKind, binding_problem
from harness_world.evidence.record import (
    Record,
    RecordError,
    decode_record,
    load_record,
)
from harness_world.grading.judgement_cache import JudgementCache, judging_build
from harness_world.grading.layers import LayeredResult
from harness_world.grading.slot_result import (
    COUNTED,
    NO_EARLIER,
    Earlier,
    SlotEvidence,
    SlotResult,
    TryResult,
    forbidden_failed,
    layers_of,
    replayed,
    slot_result,
    spent,
)
from harness_world.grading.task import Task
from harness_world.grading.verify import Verification, replayed_verification

__all__ = [
    "COUNTED",
    "FileBytes",
    "FileVerdict",
    "Judgement",
    "Measure",
    "Observer",
    "Slot",
    "SlotBytes",
    "SlotEvidence",
    "SlotResult",
    "TrustRoot",
    "TryResult",
    "TrySlot",
    "VerifiedRecord",
    "Verifier",
    "WorldRefused",
    "judge_record",
]


class WorldRefused(HarnessWorldError, ValueError):
    """The verifier's own ``--world`` cannot be loaded: an input error (exit 2), not evidence."""


class TrustRoot(msgspec.Struct, frozen=True, kw_only=True):
    """The verifier's own choice of worlds: the only places a world is ever loaded from.

    Serialisable, so a Ray worker resolves worlds exactly as the driver would.

    Attributes:
        world: ``--world``: a built-in name or a folder (made absolute); it replays every
            loose record, and every slot of its world's name. None: worlds by name.
        label: ``--world`` as the verifier wrote it (for its error message).
        size: ``--size`` for ``--world`` (default: the record's, or the run's, size).
        seed_file: ``--seed-file``: replaces the seed of every world loaded (absolute).
        folders: The caller's own world folders by world name (absolute), loaded at the
            sizes the run or record names; other names resolve to built-in worlds only.
    """

    world: str | None = None
    label: str = ""
    size: str | None = None
    seed_file: str | None = None
    folders: dict[str, str] = {}

    @classmethod
    def of(
        cls,
        world: str | None = None,
        size: str | None = None,
        seed_file: str | Path | None = None,
        folders: Mapping[str, str | Path] | None = None,
    ) -> TrustRoot:
        """The root from the verifier's arguments, paths made absolute for workers.

        A bare built-in name stays a name (each node resolves it in its own installation); a
        folder or seed file that exists here is made absolute; anything else stays as written,
        so a worker fails on it in the same words as the local verifier.
        """
        folder = world
        if world is not None and not _is_builtin(world) and Path(world).exists():
            folder = str(Path(world).absolute())
        seed = None if seed_file is None else str(seed_file)
        if seed_file is not None and Path(seed_file).exists():
            seed = str(Path(seed_file).absolute())
        given = {name: str(Path(path).absolute()) for name, path in (folders or {}).items()}
        return cls(world=folder, label=world or "", size=size, seed_file=seed, folders=given)


def _is_builtin(name: str) -> bool:
    """Whether ``name`` is a bare name `load_world` resolves to a built-in world."""
    if "/" in name or "\\" in name:
        return False
    return (builtin_dir("worlds") / name / "world.py").is_file()


class TrySlot(msgspec.Struct, frozen=True, kw_only=True):
    """An earlier try of a slot, kept beside its final record, and what binds it.

    Attributes:
        kind: ``failed`` (its infrastructure failed and the slot was executed again) or
            ``interrupted`` (an outside client abandoned it).
        number: Its number among the slot's tries of that kind, from 1.
        path: Where it lives (``<sample>.<kind>-<number>.json``).
        entry: Its line in ``index.jsonl`` (None: not indexed, so not bound).
    """

    kind: TryKind
    number: int
    path: str
    entry: IndexEntry | None = None


class Slot(msgspec.Struct, frozen=True, kw_only=True):
    """One scheduled slot of a run directory and everything that binds its records to it.

    Attributes:
        path: Where its final record lives.
        task_id: The scheduled task.
        sample: The sample index.
        seed: The sample's derived seed.
        revision: The run's revision id.
        entry: The slot's last line in ``index.jsonl`` (None: never indexed).
        tool_calls: The run's own tool-call budget override (None: the task's budget).
        tries: Every earlier try of the slot that its index binds or its folder holds.
    """

    path: str
    task_id: str
    sample: int
    seed: int
    revision: str
    entry: IndexEntry | None = None
    tool_calls: int | None = None
    tries: list[TrySlot] = []

    def result(self, evidence: SlotEvidence, **fields: Any) -> SlotResult:
        """The slot's result, decided without (or before) replaying its record."""
        return SlotResult(
            task_id=self.task_id, sample=self.sample, path=self.path, evidence=evidence, **fields
        )


class FileBytes(msgspec.Struct, frozen=True, kw_only=True):
    """One file of a slot as its reader read it, once.

    Attributes:
        data: Its bytes (None: there is no such file, or it could not be read).
        problem: Why it could not be read (empty when it was, or when it is absent).
    """

    data: bytes | None = None
    problem: str = ""


class SlotBytes(msgspec.Struct, frozen=True, kw_only=True):
    """Every file of a slot as its reader read it: the final record and each earlier try.

    Attributes:
        final: The final record's file.
        tries: Each earlier try's file, in the order of `Slot.tries`.
    """

    final: FileBytes = FileBytes()
    tries: list[FileBytes] = []


class FileVerdict(msgspec.Struct, frozen=True, kw_only=True):
    """One record file verified on its own (outside a run directory).

    Attributes:
        path: The file.
        read: Whether the record could be read (task, sample and outcome are its own).
        task_id: The record's task id.
        sample: Its sample index.
        outcome: Its outcome status.
        verification: Evidence and grade, as `verify` gives them.
        refused: Why the verifier's ``--world`` cannot be loaded (then nothing else counts).
        layers: The record read as two score sheets (null unless its evidence verified and
            its task is known here).
    """

    path: str
    read: bool = False
    task_id: str = ""
    sample: int = 0
    outcome: str = ""
    verification: Verification
    refused: str = ""
    layers: LayeredResult | None = None


@attrs.frozen(slots=True)
class VerifiedRecord:
    """A record verified in its slot, handed to an `Observer` while a scan goes on.

    Attributes:
        record: The record as loaded.
        world: The world it was replayed against.
        task: The slot's task (None when the task is not known here).
        verification: Its verification (``verified``; graded when the task is known).
    """

    record: Record
    world: World
    task: Task | None
    verification: Verification

    def graded_against(self, task: Task) -> bool:
        """Whether it was graded against ``task`` (the same definition, whichever object)."""
        return (
            self.verification.grade is not None
            and self.task is not None
            and self.task.hash == task.hash
        )


Observer = Callable[[Path, VerifiedRecord], None]
"""What a scan calls with each record it verified in its slot, and the record's path. A
verified record is bound to its slot, so its ``task_id`` and ``sample`` name the slot."""


@attrs.frozen(slots=True)
class Measure:
    """A figure computed from each final record verified in its slot, kept with its judgement.

    A reader that needs figures of the records themselves (process metrics, trusted
    completion, advisories) asks for them as measures instead of observing the records: they
    are computed where the record is judged (here or in a worker process) and cached with the
    judgement, so a judgement taken from the cache gives the same figures without a replay.

    Attributes:
        name: The figure's name, one per figure (its code is part of the build that keys the
            cache, so a changed measure is a fresh replay).
        compute: Gives the figure of one verified record (None: no figure for it); a
            module-level function, so that worker processes can call it.
        type: What ``compute`` returns, for decoding a cached figure.
    """

    name: str
    compute: Callable[[VerifiedRecord], Any]
    type: Any

    def __attrs_post_init__(self) -> None:
        # Known by name, so that a judgement re-taken for a new figure keeps the ones it had.
        _MEASURES[self.name] = self


_MEASURES: dict[str, Measure] = {}
"""Every measure made in this process, by name (a cached judgement names the ones it took)."""


class Judgement(msgspec.Struct, frozen=True, kw_only=True):
    """One slot judged: its result and the figures measured from its verified final record.

    Attributes:
        result: The slot's result.
        measures: The names of the measures taken (a figure absent from ``figures`` is one
            the measure gave none of).
        figures: Each figure, msgpack-encoded, by measure name.
    """

    result: SlotResult
    measures: list[str] = []
    figures: dict[str, bytes] = {}

    def figure(self, measure: Measure) -> Any:
        """The figure of ``measure`` (None when it gave none, or was not taken)."""
        data = self.figures.get(measure.name)
        return None if data is None else _decoder(measure.type).decode(data)


_DECODERS: dict[Any, msgspec.msgpack.Decoder[Any]] = {}


def _decoder(kind: Any) -> msgspec.msgpack.Decoder[Any]:
    """One decoder per figure type, made once (a decoder resolves its type when made)."""
    found = _DECODERS.get(kind)
    if found is None:
        found = _DECODERS[kind] = msgspec.msgpack.Decoder(kind)
    return found


class _KeyInputs(msgspec.Struct, frozen=True, array_like=True):
    """Everything a judgement is a function of: the cache key is the hash of its encoding."""

    build: str
    slot: Slot
    sizes: dict[str, str]
    files: list[str]
    graded: bool
    task: bytes
    worlds: list[tuple[str, str, str, str, str]]
    root: TrustRoot
    max_calls: int
    max_work: int


class _WorldName(msgspec.Struct):
    name: str


class _Named(msgspec.Struct):
    """The one field of a record a key needs when its task is unknown: the world it names."""

    world: _WorldName


def _file_digest(file: FileBytes) -> str:
    if file.data is None:
        return f"problem:{file.problem}" if file.problem else "absent"
    return hashlib.sha256(file.data).hexdigest()


def _named_world(path: str, file: FileBytes) -> str | None:
    """The world a record file names (None: unreadable, so no world is loaded for it)."""
    if file.data is None:
        return None
    try:
        if path.endswith(".msgpack"):
            return msgspec.msgpack.decode(file.data, type=_Named).world.name
        return msgspec.json.decode(file.data, type=_Named).world.name
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def _record_at(path: Path, data: bytes | None) -> Record:
    """The record at ``path`` (from ``data`` when given: the same words on failure).

    Raises:
        RecordError: naming the file and what is wrong with it.
    """
    if data is None:
        return load_record(path)
    try:
        return decode_record(data, "msgpack" if path.suffix == ".msgpack" else "json")
    except RecordError as exc:
        raise RecordError(f"{path}: {exc}") from None


def _call_budget(task: Task | None, override: int | None, ceiling: int) -> tuple[int, str]:
    """The most calls a record may hold, and what sets that bound (for the refusal)."""
    if override is not None:
        return min(override, ceiling), "the run's tool_calls budget"
    if task is not None and task.budgets.tool_calls is not None:
        return min(task.budgets.tool_calls, ceiling), f"task {task.id!r}'s tool_calls budget"
    return ceiling, "the verifier's call bound"


_JUDGEMENT = msgspec.msgpack.Decoder(Judgement)


def _take(measures: Sequence[Measure], verified: VerifiedRecord, figures: dict[str, bytes]) -> None:
    """Each measure's figure of one verified record, msgpack-encoded into ``figures``."""
    for measure in measures:
        value = measure.compute(verified)
        if value is not None:
            figures[measure.name] = msgspec.msgpack.encode(value)


def _cached(data: bytes) -> Judgement | None:
    """A judgement the cache gave back (None: one this build cannot read)."""
    try:
        return _JUDGEMENT.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def judge_record(record: Record, world: World, task: Task | None, path: Path) -> SlotResult:
    """Judge a record this process has just made for its slot (``run``'s executors).

    The record is replayed and graded as `Verifier.judge` would (no binding check: the caller
    made it for this slot), without the call and work bounds a stranger's record is held to:
    an attempt this process ran is evidence of its own cost, not an attack on the verifier.
    A slot with earlier tries is judged again by the run's reader, which judges them too.
    """
    result = replayed(record, world, task, calls=None, work=None)
    return slot_result(record, result, path, task, world)


@attrs.define(slots=True)
class Verifier:
    """Judges records within the verifier's trust root; one per command (or Ray worker).

    Attributes:
        root: Where worlds may be loaded from.
        tasks: The verifier's tasks by id (None: check evidence only, grade nothing).
        given: Worlds the caller has loaded itself and vouches for, by name.
        max_calls: The most calls any record may hold (a task's budget may lower it).
        max_work: The most rows replay may examine for one record (`Session.work`).
        cache: The verifier's own judgement cache (None: every slot is judged afresh).
    """

    root: TrustRoot = attrs.field(factory=TrustRoot)
    tasks: Mapping[str, Task] | None = None
    given: Mapping[str, World] = attrs.field(factory=dict)
    max_calls: int = REPLAY_CALLS
    max_work: int = REPLAY_WORK
    cache: JudgementCache | None = None
    _cache: dict[tuple[str, str], World] = attrs.field(factory=dict, init=False)
    _encoded: dict[str, tuple[Task, bytes]] = attrs.field(factory=dict, init=False)
    _explicit_name: str | None = attrs.field(default=None, init=False)

    def without_cache(self) -> Verifier:
        """The same verifier (root, tasks, worlds, bounds) without a judgement cache."""
        return Verifier(
            self.root, self.tasks, self.given, max_calls=self.max_calls, max_work=self.max_work
        )

    def explicit_name(self) -> str | None:
        """The name of the verifier's ``--world`` (None without one).

        Raises:
            WorldRefused: when it cannot be loaded.
        """
        if self.root.world is None:
            return None
        if self._explicit_name is None:
            self._explicit_name = self._explicit(self.root.size or "small").name
        return self._explicit_name

    def _explicit(self, size: str) -> World:
        size = self.root.size or size
        key = ("--world", size)
        if key not in self._cache:
            assert self.root.world is not None
            try:
                world = load_world(self.root.world, size=size, seed_file=self.root.seed_file)
            except (WorldError, OSError) as exc:
                raise WorldRefused(f"--world {self.root.label}: {exc}") from None
            self._cache[key] = world
        return self._cache[key]

    def world(self, name: str, size: str) -> World:
        """World ``name`` at ``size`` within the trust root (its ``--world`` when named so).

        Raises:
            WorldRefused: when the verifier's own ``--world`` cannot be loaded.
            WorldError: for a name that is no world of the root, or an undeclared size.
        """
        if self.root.world is not None and name == self.explicit_name():
            return self._explicit(size)
        if name in self.given:
            return self.given[name]
        key = (name, size)
        if key not in self._cache:
            folders = {n: Path(p) for n, p in self.root.folders.items()}
            seed = Path(self.root.seed_file) if self.root.seed_file else None
            self._cache[key] = load_trusted_world(name, size, folders=folders, seed_file=seed)
        return self._cache[key]

    def judgement(
        self,
        slot: Slot,
        sizes: Mapping[str, str],
        data: SlotBytes,
        *,
        measures: Sequence[Measure] = (),
        observe: Observer | None = None,
    ) -> Judgement:
        """Judge a slot and measure its verified final record, reusing a cached judgement.

        With a cache and no ``observe`` (an observer is shown the record itself, so the record
        is replayed), the judgement is looked up under the hash of everything it depends on
        (`cache_key`); one found there that took every measure asked for is the judgement,
        and any other is judged here and stored.

        Args:
            slot: The slot and what binds its records.
            sizes: The run's world sizes by name.
            data: The slot's files as its reader read them (once).
            measures: The figures to take from its final record when that verifies.
            observe: Shown every final record verified in its slot, with its path.
        """
        key = self.cache_key(slot, sizes, data) if observe is None else None
        wanted = {m.name for m in measures}
        if key is not None and self.cache is not None:
            found = self.cache.get(key)
            cached = _cached(found) if found is not None else None
            if cached is not None and wanted <= set(cached.measures):
                return cached
            grown = None if cached is None else self._grown(slot, sizes, data, cached, measures)
            if grown is not None:  # the entry only grows: by the new figures, without a replay
                self.cache.put(key, msgspec.msgpack.encode(grown))
                return grown
            if cached is not None:  # judged again for a new figure: the entry only grows
                had = [_MEASURES[n] for n in cached.measures if n in _MEASURES and n not in wanted]
                measures, wanted = [*measures, *had], wanted | {m.name for m in had}
        figures: dict[str, bytes] = {}

        def watch(path: Path, verified: VerifiedRecord) -> None:
            _take(measures, verified, figures)
            if observe is not None:
                observe(path, verified)

        shown = watch if measures or observe is not None else None
        result = self.judge(slot, sizes, data, observe=shown)
        judged = Judgement(result=result, measures=sorted(wanted), figures=figures)
        if key is not None and self.cache is not None:
            self.cache.put(key, msgspec.msgpack.encode(judged))
        return judged

    def _grown(
        self,
        slot: Slot,
        sizes: Mapping[str, str],
        data: SlotBytes,
        cached: Judgement,
        measures: Sequence[Measure],
    ) -> Judgement | None:
        """``cached`` with the figures of the measures it lacks, taken without a replay.

        The entry is this verifier's own, authenticated and keyed by these very bytes, the
        slot, task, worlds, bounds and build: it says whether the slot's final record
        replayed cleanly. When it did, the record is decoded from the same bytes, its
        verification after a clean replay is made again (`replayed_verification`: the grade
        is a pure function of record, task and world) and only the missing measures are
        computed; when it did not, no measure has a figure to give. None when the record
        does not read back as the entry says (the slot is then judged afresh).
        """
        new = [m for m in measures if m.name not in cached.measures]
        names = sorted({*cached.measures, *(m.name for m in new)})
        if cached.result.evidence != "verified":
            return Judgement(result=cached.result, measures=names, figures=cached.figures)
        record, problem = self._bound(Path(slot.path), data.final, slot, slot.entry)
        if record is None or problem:
            return None
        task = (self.tasks or {}).get(slot.task_id)
        try:
            world = self._world_of(record, task, sizes)
        except (HarnessWorldError, OSError):
            return None
        verification = replayed_verification(record, world, task)
        if verification.evidence != "verified":
            return None
        figures = dict(cached.figures)
        _take(new, VerifiedRecord(record, world, task, verification), figures)
        return Judgement(result=cached.result, measures=names, figures=figures)

    def cache_key(self, slot: Slot, sizes: Mapping[str, str], data: SlotBytes) -> str | None:
        """The hash of everything the slot's judgement depends on (None: not cacheable).

        The build of harness_world judging, the slot (path, task, sample, seed, revision,
        index lines, budget override, tries), the run's world sizes, each file's bytes hash,
        whether the verifier grades, the task's whole definition, each world the records
        replay on (name, size, content, contract and code hashes), the verifier's trust root
        and its bounds. A world that does not load leaves the slot uncached.
        """
        if self.cache is None:
            return None
        task = (self.tasks or {}).get(slot.task_id)
        files = [data.final, *data.tries]
        if task is not None:
            names = {task.world}
        else:
            paths = [slot.path, *(t.path for t in slot.tries)]
            named = (_named_world(p, f) for p, f in zip(paths, files, strict=False))
            names = {n for n in named if n is not None}
        try:
            loaded = [self.world(n, sizes.get(n, "small")) for n in sorted(names)]
        except (HarnessWorldError, OSError):
            return None
        inputs = _KeyInputs(
            build=judging_build(),
            slot=slot,
            sizes=dict(sizes),
            files=[_file_digest(f) for f in files],
            graded=self.tasks is not None,
            task=b"" if task is None else self._task_bytes(task),
            worlds=[(w.name, w.size, w.hash, w.contract.hash, w.code_hash) for w in loaded],
            root=self.root,
            max_calls=self.max_calls,
            max_work=self.max_work,
        )
        return hashlib.sha256(msgspec.msgpack.encode(inputs)).hexdigest()

    def _task_bytes(self, task: Task) -> bytes:
        """The task's whole definition, encoded once per task object."""
        kept = self._encoded.get(task.id)
        if kept is None or kept[0] is not task:
            kept = self._encoded[task.id] = (task, msgspec.msgpack.encode(task))
        return kept[1]

    def judge(
        self,
        slot: Slot,
        sizes: Mapping[str, str],
        data: SlotBytes,
        *,
        observe: Observer | None = None,
    ) -> SlotResult:
        """Judge a slot: every earlier try, then its final record, from the bytes given.

        Args:
            slot: The slot and what binds its records.
            sizes: The run's world sizes by name.
            data: The slot's files as its reader read them (once).
            observe: Shown every final record verified in its slot, with its path.
        """
        earlier = self._earlier(slot, sizes, data)
        extra = {"retried": len(earlier.tries), "retry_cost": earlier.cost, "tries": earlier.tries}
        path = Path(slot.path)
        if data.final.data is None and not data.final.problem:
            return slot.result("missing", reason="no record for this slot", **extra)
        record, problem = self._bound(path, data.final, slot, slot.entry)
        if record is None:
            return slot.result("lost", reason=problem, **extra)
        if problem:
            return slot.result("ungraded", outcome=record.outcome.status, reason=problem, **extra)
        task = (self.tasks or {}).get(slot.task_id)
        try:
            world = self._world_of(record, task, sizes)
        except (HarnessWorldError, OSError) as exc:
            return slot.result("lost", reason=str(exc), **extra)
        bound = _call_budget(task, slot.tool_calls, self.max_calls)
        result = replayed(record, world, task, calls=bound, work=self.max_work)
        if observe is not None and result.evidence == "verified":
            observe(path, VerifiedRecord(record, world, task, result))
        return slot_result(record, result, path, task, world, earlier)

    def _world_of(self, record: Record, task: Task | None, sizes: Mapping[str, str]) -> World:
        name = task.world if task else record.world.name
        return self.world(name, sizes.get(name, "small"))

    @staticmethod
    def _bound(
        path: Path, file: FileBytes, slot: Slot, entry: IndexEntry | None
    ) -> tuple[Record | None, str]:
        """The record in ``file`` and why it is not bound to its slot (None: unreadable)."""
        if file.data is None:
            return None, file.problem
        try:
            record = _record_at(path, file.data)
        except RecordError as exc:
            return None, str(exc)
        unbound = binding_problem(
            record,
            task_id=slot.task_id,
            sample=slot.sample,
            seed=slot.seed,
            revision=slot.revision,
            entry=entry,
            data=file.data,
        )
        return record, unbound

    def _earlier(self, slot: Slot, sizes: Mapping[str, str], data: SlotBytes) -> Earlier:
        """Every earlier try of the slot judged, and what their readable records spent."""
        if not slot.tries:
            return NO_EARLIER
        files = (list(data.tries) + [FileBytes()] * len(slot.tries))[: len(slot.tries)]
        judged = [
            self._judge_try(slot, t, f, sizes) for t, f in zip(slot.tries, files, strict=True)
        ]
        return Earlier(
            tries=[result for result, _ in judged],
            usage=spent([record for _, record in judged if record is not None]),
        )

    def _judge_try(
        self, slot: Slot, tried: TrySlot, file: FileBytes, sizes: Mapping[str, str]
    ) -> tuple[TryResult, Record | None]:
        """One earlier try judged as a final record is (its effects were real)."""
        base = TryResult(kind=tried.kind, number=tried.number, path=tried.path, evidence="lost")
        replace = msgspec.structs.replace
        if file.data is None and not file.problem:
            gone = "its index line binds a file that is gone"
            return replace(base, evidence="missing", reason=gone), None
        record, problem = self._bound(Path(tried.path), file, slot, tried.entry)
        if record is None:
            return replace(base, reason=problem), None
        base = replace(
            base,
            outcome=record.outcome.status,
            tool_calls=len(record.calls),
            cost=record.usage.cost + record.usage.uncertain_cost,
        )
        if problem:
            return replace(base, evidence="ungraded", reason=problem), record
        task = (self.tasks or {}).get(slot.task_id)
        try:
            world = self._world_of(record, task, sizes)
        except (HarnessWorldError, OSError) as exc:
            return replace(base, reason=str(exc)), record
        bound = _call_budget(task, slot.tool_calls, self.max_calls)
        result = replayed(record, world, task, calls=bound, work=self.max_work)
        judged = replace(
            base, evidence=result.evidence, reason=result.reason, forbidden=forbidden_failed(result)
        )
        return judged, record

    def check_file(self, path: Path, data: bytes | None = None) -> FileVerdict:
        """Verify one record file on its own; ``refused`` is set when ``--world`` fails."""
        try:
            record = _record_at(path, data)
        except (RecordError, OSError) as exc:
            return FileVerdict(
                path=str(path), verification=Verification(evidence="lost", reason=str(exc))
            )
        verdict = FileVerdict(
            path=str(path),
            read=True,
            task_id=record.task_id,
            sample=record.sample,
            outcome=record.outcome.status,
            verification=Verification(evidence="lost"),
        )
        try:
            world = self._file_world(record)
        except WorldRefused as exc:
            return msgspec.structs.replace(verdict, refused=str(exc))
        except (WorldError, OSError) as exc:
            lost = Verification(evidence="lost", reason=f"world cannot be loaded: {exc}")
            return msgspec.structs.replace(verdict, verification=lost)
        task = self.tasks.get(record.task_id) if self.tasks is not None else None
        bound = _call_budget(task, None, self.max_calls)
        result = replayed(record, world, task, calls=bound, work=self.max_work)
        layers = layers_of(record, task, result, world)
        return msgspec.structs.replace(verdict, verification=result, layers=layers)

    def _file_world(self, record: Record) -> World:
        """A loose record's world: the verifier's ``--world``, else its named world in the root."""
        if self.root.world is not None:
            return self._explicit(record.world.size)
        return self.world(record.world.name, record.world.size)

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
from typing import Any, Literal

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
    Usage,
    decode_record,
    load_record,
)
from harness_world.evidence.replay import ReplayBound
from harness_world.grading.grade import CriterionVerdict, GradeState, PolicyCheck
from harness_world.grading.judgement_cache import JudgementCache, judging_build
from harness_world.grading.layers import LayeredResult, layered_result
from harness_world.grading.task import Task
from harness_world.grading.verify import Verification, replayed_verification, verify

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

COUNTED = ("completed", "error", "turn_limit", "budget_limit", "interrupted")
"""Outcomes that count as attempts: a budget cut-off is part of the task's conditions,
``error`` (an exception in the agent's own code) is the system under test failing, and
``interrupted`` (a client of ``mcp`` or ``play`` that went away without finishing) is that
sample's one attempt: left out, a client could drop whichever attempts went badly."""

SlotEvidence = Literal["verified", "ungraded", "lost", "missing"]


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


class TryResult(msgspec.Struct, frozen=True, kw_only=True):
    """An earlier try of a slot, judged as its final record is: its effects were real.

    Attributes:
        kind: ``failed`` or ``interrupted`` (see `TrySlot`).
        number: Its number among the slot's tries of that kind.
        path: Its file.
        evidence: ``verified``, ``ungraded`` (not bound to the slot, or does not replay),
            ``lost`` (unreadable) or ``missing`` (indexed, but its file is gone).
        outcome: How it ended (empty when unreadable).
        reason: Why its evidence is not verified.
        forbidden: Its failed ``forbidden.*`` criteria, each ``id: detail`` (graded when it
            verified and the task is known here).
        tool_calls: Tool calls it made.
        cost: What it cost, uncertain exposure included (counted from its record whenever
            the record could be read: the provider's bill, not evidence).
    """

    kind: TryKind
    number: int
    path: str
    evidence: SlotEvidence
    outcome: str = ""
    reason: str = ""
    forbidden: list[str] = []
    tool_calls: int = 0
    cost: float = 0.0

    @property
    def possibly_forbidden(self) -> bool:
        """Whether this try did, or may have done, something forbidden (unverified: may)."""
        return self.evidence != "verified" or bool(self.forbidden)


class SlotResult(msgspec.Struct, frozen=True, kw_only=True):
    """What one scheduled slot (task, sample) of a run holds, judged once.

    Attributes:
        task_id: The task.
        sample: The sample index.
        path: The final record's path (it may not exist).
        outcome: How execution ended (empty when there is no readable record).
        outcome_reason: Why it ended that way, in words (the record's outcome reason).
        evidence: ``verified``, ``ungraded``, ``lost`` (unreadable record or world) or
            ``missing`` (no record for a scheduled slot).
        passed: The grade as rates count it: True only when every automated criterion passed
            and no prose criterion stands unreviewed (a pending attempt is not a pass unless
            its reader counts pending ones, `harness_world.running.pending`); null when not
            graded.
        pending: The grade is ``passed_automated``: every automated criterion passed and
            prose criteria (``not_reviewed``) stand open until a person reviews them.
        failed: The failed automated criteria, each ``id: detail``.
        not_graded: Why a verified record has no grade (its task unknown or changed).
        not_reviewed: The prose criteria standing open until a person reviews them.
        harness_checked: How many harness-layer criteria were checked (0: not graded).
        harness_failed: The failed harness-layer criteria, each ``id: detail`` (the agent
            grade ``passed`` does not include them).
        policy: The task's policy sheet, checked and broken rules (`Grade.policy`; neither
            ``passed`` nor a layer includes them); unset (left out of JSON) when the task has
            no sheet or the record was not graded.
        reason: Why the evidence is not verified (or, for a missing slot, that it is missing).
        tool_calls: Tool calls in the record.
        requests: Provider requests (retries included).
        input_tokens: Prompt tokens.
        output_tokens: Completion tokens.
        cost: US dollars, uncertain exposure included.
        retried_requests: Model requests that repeated a failed one (the driver's own
            retries, ``usage.retries``), in the final record and the slot's failed tries.
        lost_requests: Model requests whose response never arrived, counted the same way.
        lost_input_tokens_estimate: Their prompt tokens, as the driver estimated them (not
            in ``input_tokens``; their output tokens are unknown).
        retried: Tries of this slot that ended in error and were executed again (re-run
            attempts, not requests).
        retry_cost: What those tries cost.
        latency_s: Wall-clock duration (context).
        user_turns: Exchanges with a simulated user; unset (left out of JSON) for a record
            without any, so runs without a user report as before.
        queue_s: Seconds waited from being scheduled to opening (context; 0: not measured).
        models: The model ids the provider's responses named (the record's ``usage.models``;
            empty for agents that call no model).
        layers: The record read as two score sheets after admission (`LayeredResult`),
            computed once here; null unless the evidence verified and the task is known here
            (evidence that does not verify is refused at admission, and ``reason`` says why).
        forbidden: The final record's failed ``forbidden.*`` criteria, each ``id: detail``.
        digest: The digest of the final record the slot holds, bound to it (empty when it
            could not be read or is not bound): what a review of the slot is given on.
        verdicts: Every criterion's verdict of the agent grade when it failed (empty when it
            passed or was not graded): what a reader lists for a failed record.
        tries: Every earlier try of the slot, judged: their effects count wherever effects
            are counted.
    """

    task_id: str
    sample: int
    path: str
    outcome: str = ""
    outcome_reason: str = ""
    evidence: SlotEvidence
    passed: bool | None = None
    pending: bool = False
    failed: list[str] = []
    not_graded: str = ""
    not_reviewed: list[str] = []
    harness_checked: int = 0
    harness_failed: list[str] = []
    policy: PolicyCheck | msgspec.UnsetType = msgspec.UNSET
    reason: str = ""
    tool_calls: int = 0
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    retried_requests: int = 0
    lost_requests: int = 0
    lost_input_tokens_estimate: int = 0
    retried: int = 0
    retry_cost: float = 0.0
    latency_s: float = 0.0
    user_turns: int | msgspec.UnsetType = msgspec.UNSET
    queue_s: float = 0.0
    models: list[str] = []
    layers: LayeredResult | None = None
    forbidden: list[str] = []
    digest: str = ""
    verdicts: list[CriterionVerdict] = []
    tries: list[TryResult] = []

    @property
    def counted(self) -> bool:
        """Whether this slot is a valid attempt: verified evidence and a counted outcome."""
        return self.evidence == "verified" and self.outcome in COUNTED

    @property
    def state(self) -> GradeState | None:
        """The grade's state (`GradeState`); null when not graded."""
        if self.passed is None:
            return None
        if self.pending:
            return "passed_automated"
        return "passed" if self.passed else "failed"

    @property
    def possibly_forbidden(self) -> bool:
        """Whether any executed try of the slot did, or may have done, something forbidden.

        A slot whose final record is not verified (or is missing) may have done anything;
        so may an earlier try that is not verified.
        """
        final = self.evidence != "verified" or bool(self.forbidden)
        return final or any(t.possibly_forbidden for t in self.tries)


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


def _replayed(
    record: Record,
    world: World,
    task: Task | None,
    *,
    calls: tuple[int, str] | None,
    work: int | None,
) -> Verification:
    """Replay and grade one record within its bounds (None: unbounded).

    Whatever a hostile record raises ends that record only.
    """
    most, source = calls if calls is not None else (len(record.calls), "")
    if len(record.calls) > most:
        return Verification(
            evidence="ungraded",
            reason=f"{len(record.calls)} calls: more than {source} allows ({most}); not replayed",
        )
    try:
        return verify(record, world=world, task=task, work_limit=work)
    except ReplayBound as exc:
        return Verification(evidence="lost", reason=str(exc))
    except Exception as exc:  # a hostile record never ends the batch
        return Verification(evidence="lost", reason=f"{type(exc).__name__}: {exc}")


def _layers(
    record: Record, task: Task | None, result: Verification, world: World
) -> LayeredResult | None:
    """The layered reading of a replayed record (None: not verified, or its task unknown)."""
    if task is None or result.evidence != "verified":
        return None
    return layered_result(record, task, result, world)


def _forbidden(result: Verification) -> list[str]:
    """The failed ``forbidden.*`` criteria of a verification's grade, each ``id: detail``."""
    if result.grade is None:
        return []
    return [
        f"{v.id}: {v.detail}"
        for v in result.grade.verdicts
        if v.status == "failed" and v.id.startswith("forbidden.")
    ]


@attrs.frozen(slots=True)
class _Earlier:
    """What a slot's earlier tries add to its final record's figures."""

    tries: list[TryResult]
    usage: Usage

    @property
    def cost(self) -> float:
        return self.usage.cost + self.usage.uncertain_cost


def _spent(records: Sequence[Record]) -> Usage:
    """Every usage field summed over ``records``."""
    total = {field: getattr(Usage(), field) for field in Usage.__struct_fields__}
    for record in records:
        for field in total:
            total[field] += getattr(record.usage, field)
    return Usage(**total)


_NONE_EARLIER = _Earlier(tries=[], usage=Usage())


def _slot_result(
    record: Record,
    result: Verification,
    path: Path,
    task: Task | None,
    world: World,
    earlier: _Earlier = _NONE_EARLIER,
) -> SlotResult:
    """A slot's result from its record and verification (and what its earlier tries did)."""
    grade = result.grade
    usage = record.usage
    spent = earlier.usage
    not_graded = result.not_graded
    if result.evidence == "verified" and task is None:
        not_graded = f"task {record.task_id!r} is not known here"
    return SlotResult(
        task_id=record.task_id,
        sample=record.sample,
        path=str(path),
        outcome=record.outcome.status,
        outcome_reason=record.outcome.reason,
        evidence=result.evidence,
        passed=None if grade is None else grade.state == "passed",
        pending=grade is not None and grade.pending,
        failed=[]
        if grade is None
        else [f"{v.id}: {v.detail}" for v in grade.verdicts if v.status == "failed"],
        not_graded=not_graded,
        not_reviewed=[] if grade is None else grade.not_reviewed,
        harness_checked=0 if grade is None else len(grade.harness),
        harness_failed=[] if grade is None else grade.harness_failed,
        policy=msgspec.UNSET if grade is None else grade.policy_check(),
        reason=result.reason,
        tool_calls=len(record.calls),
        requests=usage.requests,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cost=usage.cost + usage.uncertain_cost,
        retried_requests=usage.retries + spent.retries,
        lost_requests=usage.lost_requests + spent.lost_requests,
        lost_input_tokens_estimate=usage.lost_input_tokens_estimate
        + spent.lost_input_tokens_estimate,
        retried=len(earlier.tries),
        retry_cost=earlier.cost,
        latency_s=record.context.latency_s,
        queue_s=record.context.queue_s,
        models=list(usage.models),
        user_turns=len(record.user_turns) if record.user_turns else msgspec.UNSET,
        layers=_layers(record, task, result, world),
        forbidden=_forbidden(result),
        digest=record.digest,
        verdicts=[] if grade is None or grade.passed else list(grade.verdicts),
        tries=earlier.tries,
    )


_JUDGEMENT = msgspec.msgpack.Decoder(Judgement)


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
    result = _replayed(record, world, task, calls=None, work=None)
    return _slot_result(record, result, path, task, world)


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
            for measure in measures:
                value = measure.compute(verified)
                if value is not None:
                    figures[measure.name] = msgspec.msgpack.encode(value)
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
        task = (self.tasks or {}).get(slot.task_id)
        if record is None or problem:
            return None
        try:
            world = self._world_of(record, task, sizes)
        except (HarnessWorldError, OSError):
            return None
        verification = replayed_verification(record, world, task)
        if verification.evidence != "verified":
            return None
        verified = VerifiedRecord(record, world, task, verification)
        figures = dict(cached.figures)
        for measure in new:
            value = measure.compute(verified)
            if value is not None:
                figures[measure.name] = msgspec.msgpack.encode(value)
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
        result = _replayed(record, world, task, calls=bound, work=self.max_work)
        if observe is not None and result.evidence == "verified":
            observe(path, VerifiedRecord(record, world, task, result))
        return _slot_result(record, result, path, task, world, earlier)

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

    def _earlier(self, slot: Slot, sizes: Mapping[str, str], data: SlotBytes) -> _Earlier:
        """Every earlier try of the slot judged, and what their readable records spent."""
        if not slot.tries:
            return _NONE_EARLIER
        files = (list(data.tries) + [FileBytes()] * len(slot.tries))[: len(slot.tries)]
        judged = [
            self._judge_try(slot, t, f, sizes) for t, f in zip(slot.tries, files, strict=True)
        ]
        return _Earlier(
            tries=[result for result, _ in judged],
            usage=_spent([record for _, record in judged if record is not None]),
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
        result = _replayed(record, world, task, calls=bound, work=self.max_work)
        judged = replace(
            base, evidence=result.evidence, reason=result.reason, forbidden=_forbidden(result)
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
        result = _replayed(record, world, task, calls=bound, work=self.max_work)
        layers = _layers(record, task, result, world)
        return msgspec.structs.replace(verdict, verification=result, layers=layers)

    def _file_world(self, record: Record) -> World:
        """A loose record's world: the verifier's ``--world``, else its named world in the root."""
        if self.root.world is not None:
            return self._explicit(record.world.size)
        return self.world(record.world.name, record.world.size)

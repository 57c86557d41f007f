"""The one verifier: a record judged in its slot (or as a loose file) within the verifier's root.

Every place that judges evidence goes through `Verifier`: `scan_run` (what ``run``'s final
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

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import attrs
import msgspec

from harness_world.engine.limits import REPLAY_CALLS, REPLAY_WORK
from harness_world.engine.paths import builtin_dir
from harness_world.engine.world import World, WorldError, load_trusted_world, load_world
from harness_world.errors import HarnessWorldError
from harness_world.evidence.binding import IndexEntry, binding_problem
from harness_world.evidence.record import (
    Record,
    RecordError,
    Usage,
    decode_record,
    load_record,
    read_record_bytes,
)
from harness_world.evidence.replay import ReplayBound
from harness_world.grading.layers import LayeredResult, layered_result
from harness_world.grading.task import Task
from harness_world.grading.verify import Verification, verify

__all__ = [
    "COUNTED",
    "FileVerdict",
    "Observer",
    "Slot",
    "SlotEvidence",
    "SlotResult",
    "TrustRoot",
    "VerifiedRecord",
    "Verifier",
    "WorldRefused",
    "judge_record",
    "retry_cost",
    "tries_usage",
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


class Slot(msgspec.Struct, frozen=True, kw_only=True):
    """One scheduled slot of a run directory and everything that binds a record to it.

    Attributes:
        path: Where its final record lives.
        task_id: The scheduled task.
        sample: The sample index.
        seed: The sample's derived seed.
        revision: The run's revision id.
        entry: The slot's last line in ``index.jsonl`` (None: never indexed).
        tool_calls: The run's own tool-call budget override (None: the task's budget).
        retried: Earlier tries that ended in error and were executed again.
        retry_cost: What those tries cost.
        earlier: What those tries consumed, summed (`tries_usage`): their model requests,
            retried and lost ones included, count in the slot's request figures.
    """

    path: str
    task_id: str
    sample: int
    seed: int
    revision: str
    entry: IndexEntry | None = None
    tool_calls: int | None = None
    retried: int = 0
    retry_cost: float = 0.0
    earlier: Usage = Usage()

    def result(self, evidence: SlotEvidence, **fields: Any) -> SlotResult:
        """The slot's result, decided without (or before) replaying its record."""
        return SlotResult(
            task_id=self.task_id, sample=self.sample, path=self.path, evidence=evidence, **fields
        )


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
        passed: The grade; null when not graded.
        failed: The failed automated criteria, each ``id: detail``.
        not_graded: Why a verified record has no grade (its task unknown or changed).
        not_reviewed: The prose criteria standing open until a person reviews them.
        harness_checked: How many harness-layer criteria were checked (0: not graded).
        harness_failed: The failed harness-layer criteria, each ``id: detail`` (the agent
            grade ``passed`` does not include them).
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
    """

    task_id: str
    sample: int
    path: str
    outcome: str = ""
    outcome_reason: str = ""
    evidence: SlotEvidence
    passed: bool | None = None
    failed: list[str] = []
    not_graded: str = ""
    not_reviewed: list[str] = []
    harness_checked: int = 0
    harness_failed: list[str] = []
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

    @property
    def counted(self) -> bool:
        """Whether this slot is a valid attempt: verified evidence and a counted outcome."""
        return self.evidence == "verified" and self.outcome in COUNTED


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


_NOTHING_SPENT = Usage()


def tries_usage(paths: Sequence[Path]) -> Usage:
    """What a slot's failed tries consumed, every usage field summed over their records.

    An unreadable try counts nothing here: it is kept for people to read, and what it spent
    is the provider's bill, not evidence.
    """
    total = {field: getattr(Usage(), field) for field in Usage.__struct_fields__}
    for path in paths:
        try:
            spent = load_record(path).usage
        except RecordError:
            continue
        for field in total:
            total[field] += getattr(spent, field)
    return Usage(**total)


def retry_cost(paths: Sequence[Path]) -> float:
    """What a slot's failed tries cost (US dollars, uncertain exposure included)."""
    spent = tries_usage(paths)
    return spent.cost + spent.uncertain_cost


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


def _slot_result(
    record: Record,
    result: Verification,
    path: Path,
    task: Task | None,
    world: World,
    *,
    retried: int,
    spent_before: float,
    earlier: Usage = _NOTHING_SPENT,
) -> SlotResult:
    """A slot's result from its record and verification (and what its failed tries spent)."""
    grade = result.grade
    usage = record.usage
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
        passed=None if grade is None else grade.passed,
        failed=[]
        if grade is None
        else [f"{v.id}: {v.detail}" for v in grade.verdicts if v.status == "failed"],
        not_graded=not_graded,
        not_reviewed=[] if grade is None else grade.not_reviewed,
        harness_checked=0 if grade is None else len(grade.harness),
        harness_failed=[] if grade is None else grade.harness_failed,
        reason=result.reason,
        tool_calls=len(record.calls),
        requests=usage.requests,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cost=usage.cost + usage.uncertain_cost,
        retried_requests=usage.retries + earlier.retries,
        lost_requests=usage.lost_requests + earlier.lost_requests,
        lost_input_tokens_estimate=usage.lost_input_tokens_estimate
        + earlier.lost_input_tokens_estimate,
        retried=retried,
        retry_cost=spent_before,
        latency_s=record.context.latency_s,
        queue_s=record.context.queue_s,
        models=list(usage.models),
        user_turns=len(record.user_turns) if record.user_turns else msgspec.UNSET,
        layers=_layers(record, task, result, world),
    )


def judge_record(
    record: Record,
    world: World,
    task: Task | None,
    path: Path,
    *,
    retries: Sequence[Path] = (),
) -> SlotResult:
    """Judge a record this process has just made for its slot (``run``'s executors).

    The record is replayed and graded as `Verifier.judge` would (no binding check: the caller
    made it for this slot), without the call and work bounds a stranger's record is held to:
    an attempt this process ran is evidence of its own cost, not an attack on the verifier.
    """
    result = _replayed(record, world, task, calls=None, work=None)
    earlier = tries_usage(retries)
    spent = earlier.cost + earlier.uncertain_cost
    return _slot_result(
        record, result, path, task, world, retried=len(retries), spent_before=spent, earlier=earlier
    )


@attrs.define(slots=True)
class Verifier:
    """Judges records within the verifier's trust root; one per command (or Ray worker).

    Attributes:
        root: Where worlds may be loaded from.
        tasks: The verifier's tasks by id (None: check evidence only, grade nothing).
        given: Worlds the caller has loaded itself and vouches for, by name.
        max_calls: The most calls any record may hold (a task's budget may lower it).
        max_work: The most rows replay may examine for one record (`Session.work`).
    """

    root: TrustRoot = attrs.field(factory=TrustRoot)
    tasks: Mapping[str, Task] | None = None
    given: Mapping[str, World] = attrs.field(factory=dict)
    max_calls: int = REPLAY_CALLS
    max_work: int = REPLAY_WORK
    _cache: dict[tuple[str, str], World] = attrs.field(factory=dict, init=False)
    _explicit_name: str | None = attrs.field(default=None, init=False)

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

    def judge(
        self,
        slot: Slot,
        sizes: Mapping[str, str],
        *,
        data: bytes | None = None,
        observe: Observer | None = None,
    ) -> SlotResult:
        """Judge a slot's record (read from ``data`` when given, else from its path).

        Args:
            slot: The slot and its binding.
            sizes: The run's world sizes by name.
            data: The record file's bytes, read by whoever mapped this slot here.
            observe: Shown every record verified in its slot, with its path.
        """
        path = Path(slot.path)
        if data is None and not path.is_file():
            return slot.result("missing", reason="no record for this slot")
        try:
            data = read_record_bytes(path) if data is None else data
            record = _record_at(path, data)
        except (RecordError, OSError) as exc:
            return slot.result("lost", reason=str(exc), retried=slot.retried)
        unbound = binding_problem(
            record,
            task_id=slot.task_id,
            sample=slot.sample,
            seed=slot.seed,
            revision=slot.revision,
            entry=slot.entry,
            data=data,
        )
        if unbound:
            return slot.result("ungraded", outcome=record.outcome.status, reason=unbound)
        task = (self.tasks or {}).get(slot.task_id)
        name = task.world if task else record.world.name
        try:
            world = self.world(name, sizes.get(name, "small"))
        except (HarnessWorldError, OSError) as exc:
            return slot.result("lost", reason=str(exc), retried=slot.retried)
        bound = _call_budget(task, slot.tool_calls, self.max_calls)
        result = _replayed(record, world, task, calls=bound, work=self.max_work)
        if observe is not None and result.evidence == "verified":
            observe(path, VerifiedRecord(record, world, task, result))
        return _slot_result(
            record,
            result,
            path,
            task,
            world,
            retried=slot.retried,
            spent_before=slot.retry_cost,
            earlier=slot.earlier,
        )

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

"""A slot's result: what one scheduled (task, sample) of a run holds once it is judged.

The structs every reader reads (`SlotResult`, `TryResult`) and how the verifier makes one from
a record and its verification (`slot_result`): the grade's pass, the failed criteria, the
layered reading, the forbidden effects and what the slot's earlier tries spent. The verifier
(`harness_world.grading.verifier`) judges; this module only writes the judgement down.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import attrs
import msgspec

from harness_world.engine.world import World
from harness_world.evidence.binding import TryKind
from harness_world.evidence.record import Record, Usage
from harness_world.evidence.replay import ReplayBound
from harness_world.grading.grade import CriterionVerdict, GradeState, PolicyCheck
from harness_world.grading.layers import LayeredResult, layered_result
from harness_world.grading.task import Task
from harness_world.grading.verify import Verification, verify

__all__ = [
    "COUNTED",
    "NO_EARLIER",
    "Earlier",
    "SlotEvidence",
    "SlotResult",
    "TryResult",
    "forbidden_failed",
    "layers_of",
    "replayed",
    "slot_result",
    "spent",
]

COUNTED = ("completed", "error", "turn_limit", "budget_limit", "interrupted")
"""Outcomes that count as attempts: a budget cut-off is part of the task's conditions,
``error`` (an exception in the agent's own code) is the system under test failing, and
``interrupted`` (a client of ``mcp`` or ``play`` that went away without finishing) is that
sample's one attempt: left out, a client could drop whichever attempts went badly."""

SlotEvidence = Literal["verified", "ungraded", "lost", "missing"]


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


def replayed(
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


def layers_of(
    record: Record, task: Task | None, result: Verification, world: World
) -> LayeredResult | None:
    """The layered reading of a replayed record (None: not verified, or its task unknown)."""
    if task is None or result.evidence != "verified":
        return None
    return layered_result(record, task, result, world)


def forbidden_failed(result: Verification) -> list[str]:
    """The failed ``forbidden.*`` criteria of a verification's grade, each ``id: detail``."""
    if result.grade is None:
        return []
    return [
        f"{v.id}: {v.detail}"
        for v in result.grade.verdicts
        if v.status == "failed" and v.id.startswith("forbidden.")
    ]


@attrs.frozen(slots=True)
class Earlier:
    """What a slot's earlier tries add to its final record's figures.

    Attributes:
        tries: Every earlier try, judged.
        usage: What the readable ones spent, summed.
    """

    tries: list[TryResult]
    usage: Usage

    @property
    def cost(self) -> float:
        """What the earlier tries cost, uncertain exposure included."""
        return self.usage.cost + self.usage.uncertain_cost


def spent(records: Sequence[Record]) -> Usage:
    """Every usage field summed over ``records``."""
    total = {field: getattr(Usage(), field) for field in Usage.__struct_fields__}
    for record in records:
        for field in total:
            total[field] += getattr(record.usage, field)
    return Usage(**total)


NO_EARLIER = Earlier(tries=[], usage=Usage())


def slot_result(
    record: Record,
    result: Verification,
    path: Path,
    task: Task | None,
    world: World,
    earlier: Earlier = NO_EARLIER,
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
        layers=layers_of(record, task, result, world),
        forbidden=forbidden_failed(result),
        digest=record.digest,
        verdicts=[] if grade is None or grade.passed else list(grade.verdicts),
        tries=earlier.tries,
    )

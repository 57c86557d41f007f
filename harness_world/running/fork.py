"""Counterfactual forks of a record: what would have happened under another policy or action.

Three kinds:

* ``replay``: the recorded calls re-run under another session policy (e.g. a tighter tool-call
  budget); no agent is asked anything. It measures the policy's effect on this very trace.
* ``edited_call``: the recorded prefix is replayed into a fresh session, an edited call runs for
  real in its place, and an agent continues from there.
* ``edited_result``: the recorded prefix and the original call run for real, but the agent is
  shown an invented result for that call. The record says so (``Record.synthetic``) and
  `verify` never accepts it as evidence of an attempt.

Forks are bounded (depth of forks of forks, forks per parent, tool calls), stored apart from run
directories, and never counted as attempts: unlimited counterfactual search would select the
branch that happened to succeed. `fork_file` forks a saved record of a built-in task, stores the
fork and verifies it (a `ForkSummary`).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, Literal

import attrs
import msgspec
from msgspec import UNSET

from harness_world.engine.calls import CallRecord, Observation
from harness_world.engine.canonical import to_json
from harness_world.engine.world import World
from harness_world.errors import HarnessWorldError
from harness_world.evidence.record import (
    Outcome,
    Record,
    RecordContext,
    Synthetic,
    load_record,
    record_digest,
    save_record,
)
from harness_world.grading.task import Task, load_tasks
from harness_world.grading.verify import resolve_world, task_mismatch, verify
from harness_world.running.agents import Agent, drive
from harness_world.running.attempt import Attempt, AttemptEnded, AttemptLimits
from harness_world.running.context import ContextPolicy, replayed_prompt_tokens

__all__ = [
    "ForkAttempt",
    "ForkBounds",
    "ForkError",
    "ForkKind",
    "ForkSummary",
    "fork",
    "fork_depth",
    "fork_file",
    "save_fork",
]

ForkKind = Literal["replay", "edited_call", "edited_result"]
_NOTE_PARENT, _NOTE_KIND, _NOTE_AT, _NOTE_DEPTH = "fork_of", "fork_kind", "fork_at", "fork_depth"


class ForkError(HarnessWorldError, ValueError):
    """A fork cannot be made: bad position, missing agent, bounds exceeded, or a bad place."""


class ForkBounds(msgspec.Struct, frozen=True, kw_only=True):
    """Limits on counterfactual search.

    Attributes:
        max_depth: Forks of forks allowed (a fork of a real record has depth 1).
        max_forks: Forks of one parent record stored in one folder.
        max_tool_calls: Tool calls a fork may make in all, prefix included.
    """

    max_depth: int = 2
    max_forks: int = 16
    max_tool_calls: int = 200


@attrs.define(slots=True, eq=False)
class ForkAttempt(Attempt):
    """An attempt that starts from a replayed prefix.

    Attributes:
        shown: What the agent has seen so far, in order, as (tool, arguments, observation):
            the prefix (with the invented observation in an ``edited_result`` fork). Agents
            that continue a conversation (the OpenAI agent does) rebuild their history from it;
            others start afresh.
    """

    shown: list[tuple[str, Any, Observation]] = attrs.field(factory=list)


def fork_depth(record: Record) -> int:
    """How many forks separate a record from a real attempt (0 for a real one)."""
    try:
        return int(record.context.notes.get(_NOTE_DEPTH, "0"))
    except ValueError:
        return 0


def _observation(call: CallRecord) -> Observation:
    return Observation(
        seq=call.seq, tool=call.tool, ok=call.ok, result=call.result, error=call.error
    )


def _replay_prefix(attempt: ForkAttempt, calls: list[CallRecord]) -> bool:
    """Re-run recorded calls through the attempt; False when a budget ended it first.

    Raises:
        ForkError: when a replayed call differs from the record (it does not replay).
    """
    for recorded in calls:
        try:
            attempt.call(recorded.tool, recorded.args)
        except AttemptEnded:
            return False
        fresh = attempt.session.log[-1]
        if to_json(fresh) != to_json(recorded):
            raise ForkError(f"the record does not replay at call {recorded.seq}: cannot fork it")
        attempt.shown.append((fresh.tool, fresh.args, _observation(fresh)))
    return True


def _limits(task: Task, policy: AttemptLimits | None, bounds: ForkBounds) -> AttemptLimits:
    base = policy or AttemptLimits.from_task(task.budgets)
    calls = min(base.tool_calls or bounds.max_tool_calls, bounds.max_tool_calls)
    return msgspec.structs.replace(base, tool_calls=calls)


def _kind(record: Record, at: int, call: Any, result: Any, agent: Agent | None) -> ForkKind:
    if not 0 <= at <= len(record.calls):
        raise ForkError(f"--at {at} is outside the record's {len(record.calls)} calls")
    if call is not None and result is not UNSET:
        raise ForkError("edit a call or a result, not both")
    kind: ForkKind = "replay"
    if call is not None:
        kind = "edited_call"
    elif result is not UNSET:
        kind = "edited_result"
        if at >= len(record.calls):
            raise ForkError(f"--at {at}: there is no call {at + 1} whose result to edit")
    if kind != "replay" and agent is None:
        raise ForkError(f"a {kind} fork needs an agent to continue")
    return kind


def fork(
    record: Record,
    at: int | None = None,
    *,
    world: World,
    task: Task,
    limits: AttemptLimits | None = None,
    call: tuple[str, Any] | None = None,
    result: Any = UNSET,
    agent: Agent | None = None,
    bounds: ForkBounds | None = None,
    policy: ContextPolicy | None = None,
) -> Record:
    """Fork a record at call index ``at`` (calls kept before the fork point).

    Args:
        record: The parent record (a real attempt, or a fork within ``bounds.max_depth``).
        at: Recorded calls kept before the fork point (default: all of them).
        world: The world the record ran against.
        task: The record's task.
        limits: The session policy of the fork (default: the task's budgets), capped by
            ``bounds.max_tool_calls``.
        call: For an ``edited_call`` fork: the (tool, arguments) run instead of call ``at + 1``.
        result: For an ``edited_result`` fork: what the agent is shown as call ``at + 1``'s result.
        agent: The agent that continues a live fork.
        bounds: Depth and budget bounds (default `ForkBounds()`).
        policy: For a ``replay`` fork: a context policy to measure. The notes get the estimated
            prompt tokens of the replayed calls without and with it, and a ``context_tokens``
            limit given in ``limits`` is checked against the estimate (exceeded: ``budget_limit``),
            so one record can be replayed under a context budget with and without the policy.

    Returns:
        The fork's record: same task and seed, context notes naming its parent, kind, position
        and depth, and ``synthetic`` set for an ``edited_result`` fork.

    Raises:
        ForkError: for a bad position, both edits at once, a live fork without an agent, a depth
            beyond the bounds, or a record that does not replay up to the fork point.
    """
    bounds = bounds or ForkBounds()
    at = len(record.calls) if at is None else at
    kind = _kind(record, at, call, result, agent)
    depth = fork_depth(record) + 1
    if depth > bounds.max_depth:
        raise ForkError(f"fork depth {depth} exceeds the bound of {bounds.max_depth}")
    attempt = ForkAttempt(
        world, task, seed=record.seed, sample=record.sample, limits=_limits(task, limits, bounds)
    )
    notes = {
        _NOTE_PARENT: record.digest,
        _NOTE_KIND: kind,
        _NOTE_AT: str(at),
        _NOTE_DEPTH: str(depth),
    }
    context = RecordContext(notes=notes)
    keep = record.calls[: at + 1] if kind == "edited_result" else record.calls[:at]
    completed = _replay_prefix(attempt, keep)
    if kind == "replay":
        if policy is not None or (limits is not None and limits.context_tokens is not None):
            _measure_context(attempt, task, policy, notes)
        whole = completed and at == len(record.calls)
        return _finish_replay(attempt, record, whole, RecordContext(notes=notes))
    if kind == "edited_call" and completed and call is not None:
        with contextlib.suppress(AttemptEnded):
            attempt.shown.append((call[0], call[1], attempt.call(call[0], call[1])))
    synthetic: list[Synthetic] = []
    if kind == "edited_result" and completed:
        tool, args, real = attempt.shown[-1]
        invented = Observation(seq=real.seq, tool=real.tool, ok=True, result=result)
        attempt.shown[-1] = (tool, args, invented)
        synthetic.append(Synthetic(seq=real.seq, shown=result))
    forked = drive(agent, attempt, context) if agent is not None else attempt.finish("", context)
    if synthetic:
        forked = msgspec.structs.replace(forked, synthetic=synthetic)
        forked = msgspec.structs.replace(forked, digest=record_digest(forked))
    return forked


def _measure_context(
    attempt: ForkAttempt, task: Task, policy: ContextPolicy | None, notes: dict[str, str]
) -> None:
    """Note the replayed calls' estimated prompt tokens without and with ``policy``.

    A ``context_tokens`` limit is checked against the estimate under the policy (without one,
    against the unbounded estimate): the estimate leaves out the system prompt and the tool
    schemas, which are the same either way.
    """
    calls = list(attempt.session.log)
    unbounded = replayed_prompt_tokens(task.instruction, calls, None)
    bounded = replayed_prompt_tokens(task.instruction, calls, policy)
    notes["prompt_tokens_estimate"] = str(unbounded)
    notes["prompt_tokens_estimate_bounded"] = str(bounded)
    limit = attempt.limits.context_tokens if attempt.limits else None
    if limit is not None and bounded > limit and not attempt.ended:
        reason = f"context budget of {limit} tokens exceeded under the policy ({bounded})"
        attempt.end(Outcome(status="budget_limit", reason=reason))


def _finish_replay(
    attempt: ForkAttempt, record: Record, whole: bool, context: RecordContext
) -> Record:
    """A replay fork ends where the recorded calls end (or where the policy cut them)."""
    if whole:
        usage = record.usage  # the same model work stands behind the same calls
        attempt.declare_usage(**{f: getattr(usage, f) for f in usage.__struct_fields__})
        limit = attempt.limits.turns if attempt.limits else None
        if limit is not None and usage.turns > limit:
            reason = f"turn budget of {limit} exceeded by the recorded {usage.turns} turns"
            attempt.end(Outcome(status="turn_limit", reason=reason))
        if attempt.outcome is None and record.outcome.status != "completed":
            attempt.end(record.outcome)
    return attempt.finish(record.final_message if whole else "", context)


def _inside_run(folder: Path) -> Path | None:
    for candidate in [folder, *folder.parents]:
        if (candidate / "manifest.json").is_file():
            return candidate
    return None


def save_fork(forked: Record, out: str | Path, bounds: ForkBounds | None = None) -> Path:
    """Store a fork under ``out`` (never inside a run directory), within the count bound.

    Raises:
        ForkError: when ``out`` lies inside a run directory (forks are never attempts), or the
            parent already has ``bounds.max_forks`` forks there.
    """
    bounds = bounds or ForkBounds()
    folder = Path(out).resolve()
    run = _inside_run(folder)
    if run is not None:
        raise ForkError(f"{out}: inside the run directory {run}; store forks apart from runs")
    parent = forked.context.notes.get(_NOTE_PARENT, "")[:12] or "unknown"
    existing = sorted(folder.glob(f"{parent}.*.json")) if folder.is_dir() else []
    if len(existing) >= bounds.max_forks:
        raise ForkError(f"{out}: record {parent} already has {len(existing)} forks (bound)")
    kind = forked.context.notes.get(_NOTE_KIND, "fork")
    return save_record(forked, folder / f"{parent}.{kind}.{len(existing)}.json")


class ForkSummary(msgspec.Struct, frozen=True, kw_only=True):
    """A stored fork, verified: where it is, what kind, and what became of it.

    Attributes:
        fork: Where the fork's record is stored.
        kind: ``replay``, ``edited_call`` or ``edited_result``.
        at: Recorded calls kept before the fork point.
        calls: Calls in the fork's record.
        outcome: How the fork ended.
        reason: Why it ended that way.
        evidence: What verification found (a synthetic fork never verifies).
        passed: Its grade (None when not graded).
        note: Why it is not evidence, or that a fork is never counted as an attempt.
        prompt_tokens: The context policy's measurements (the record's ``prompt_tokens*``
            notes), by note name.
    """

    fork: str
    kind: str
    at: int
    calls: int
    outcome: str
    reason: str
    evidence: str
    passed: bool | None
    note: str
    prompt_tokens: dict[str, str] = {}


def fork_file(
    path: Path,
    at: int | None = None,
    *,
    out: str | Path = "forks",
    budgets: dict[str, int | None] | None = None,
    call: tuple[str, Any] | None = None,
    result: Any = UNSET,
    agent: Agent | None = None,
    bounds: ForkBounds | None = None,
    policy: ContextPolicy | None = None,
) -> ForkSummary:
    """Fork the record saved at ``path`` (see `fork`), store the fork under ``out``, verify it.

    The record's world is the built-in one it names, its task the built-in task it was made
    for (same id, world and hash).

    Args:
        path: The parent record.
        at: Recorded calls kept before the fork point (default: all of them).
        out: Where forks are kept (never inside a run directory).
        budgets: The fork's ``tool_calls``, ``turns`` and ``context_tokens`` where given
            (None or absent: the task's).
        call: For an edited call: the (tool, arguments) run instead of call ``at + 1``.
        result: For an edited result: the invented result shown to the agent.
        agent: The agent that continues a live fork.
        bounds: Limits on depth, forks per record and tool calls.
        policy: A context policy a replay fork measures.

    Raises:
        harness_world.evidence.RecordError: for a record that cannot be read.
        harness_world.engine.WorldError: for a world that is not built in.
        ForkError: for a task not known here, or a fork the bounds or options refuse.
        OSError: when the fork cannot be stored.
    """
    record = load_record(path)
    world = resolve_world(record)
    task = {t.id: t for t in load_tasks()}.get(record.task_id)
    if task is None or task_mismatch(record, task):
        raise ForkError(f"{path}: its task {record.task_id!r} is not known here")
    bounds = bounds or ForkBounds()
    base = AttemptLimits.from_task(task.budgets)
    given = {k: v for k, v in (budgets or {}).items() if v is not None}
    limits = msgspec.structs.replace(base, **given)
    forked = fork(
        record, at, world=world, task=task, limits=limits, call=call, result=result,
        agent=agent, bounds=bounds, policy=policy,
    )  # fmt: skip
    stored = save_fork(forked, out, bounds)
    checked = verify(forked, world, task)
    notes = forked.context.notes
    return ForkSummary(
        fork=str(stored),
        kind=notes.get(_NOTE_KIND, ""),
        at=int(notes.get(_NOTE_AT, "0")),
        calls=len(forked.calls),
        outcome=forked.outcome.status,
        reason=forked.outcome.reason,
        evidence=checked.evidence,
        passed=None if checked.grade is None else checked.grade.passed,
        note=checked.reason or "a fork is never counted as an attempt",
        prompt_tokens={k: v for k, v in notes.items() if k.startswith("prompt_tokens")},
    )

"""Rewards for reinforcement learning on a world's tasks: plain reward functions, no SDK.

`reward(completions, task_id=[...], seed=[...])` has the signature of a reward function for
TRL's ``GRPOTrainer`` (one float per completion, dataset columns as keyword lists). Each
completion is an episode: the assistant messages of a conversation, each with the tool calls
it made (native ``tool_calls``, or calls written as text: `parse_tool_calls`), and a final
message (the ``finish`` call's ``message``, else the last assistant text). The episode's calls
are executed in a fresh attempt of the task, in order, one model turn per assistant message
(so the task's turn budget binds as it does live), the attempt is sealed into a record, and
the record is replayed and graded (`harness_world.grading.verify`). Tool results written in
the completion are never read: the world answers again, so a completion cannot claim what a
tool returned.

The reward is 1.0 only when the record verifies, its grade passes, its harness layer is clean
(in RL the policy's calls are the harness: a blind retry is the policy's doing) and the attempt
ended ``completed`` (`REWARDED`: one a budget cut off earns nothing); otherwise 0.0. A row's
``seed`` is its sample index: the session is opened with the seed ``run`` gives that sample
(`harness_world.running.rundir.sample_seed`), so the same row is the same episode wherever it
is played.

`coverage_reward` is partial credit, never the default: the share of the task's required
changes the final state holds, |R ∩ Δ| / |R| (`harness_world.grading.required_items`), and 0.0
when anything forbidden happened or anything changed that the task neither requires nor
allows. Doing nothing earns 0.0 from both.

`reward_of` is the rule both RL adapters (`harness_world.integrations.verifiers`,
`harness_world.integrations.openenv`) apply to a slot judged from its sealed record; it also
requires the record's calls to equal the tool calls of the transcript it carries
(`transcript_mismatch`), so a record that holds a call the model never made, or misses one it
made, earns nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import msgspec

from harness_world.engine.canonical import to_json
from harness_world.engine.limits import REPLAY_CALLS
from harness_world.engine.world import World, load_world, locate_world
from harness_world.evidence.record import Record, RecordContext
from harness_world.grading.checker import required_items
from harness_world.grading.task import Task, load_tasks
from harness_world.grading.verifier import SlotResult
from harness_world.grading.verify import verify
from harness_world.integrations.mcp import FINISH_TOOL
from harness_world.running.attempt import Attempt, AttemptEnded, AttemptLimits
from harness_world.running.rundir import sample_seed
from harness_world.running.text_tool_calls import parse_tool_calls

__all__ = [
    "MAX_MESSAGES",
    "REWARDED",
    "Episode",
    "EpisodeCall",
    "RewardVerdict",
    "coverage_reward",
    "judge_episode",
    "parse_episode",
    "play_episode",
    "reward",
    "reward_of",
    "transcript_calls",
    "transcript_mismatch",
]

REWARDED = ("completed",)
"""The outcome a passing grade is paid under: an attempt a budget cut off (``turn_limit``,
``budget_limit``), that failed (``error``) or was abandoned (``interrupted``) earns nothing,
whatever its effects."""

MAX_MESSAGES = 10_000
"""Messages of one completion read at most (a hostile completion stays bounded)."""


class EpisodeCall(msgspec.Struct, frozen=True, kw_only=True):
    """One tool call of an episode, as the model made it.

    Attributes:
        tool: The tool's name.
        arguments: Its arguments: a JSON object, or the text the model wrote when that text
            is not one (the session then records a typed error, as it would live).
    """

    tool: str
    arguments: Any


class Episode(msgspec.Struct, frozen=True, kw_only=True):
    """A completion read as an episode.

    Attributes:
        turns: The tool calls of each assistant message, in order (one entry per turn).
        final_message: The ``finish`` call's message, else the last assistant text.
        finished: Whether a ``finish`` call ended it (the calls after it are not part of it).
        problem: Why the completion could not be read (empty when it could).
    """

    turns: list[list[EpisodeCall]]
    final_message: str = ""
    finished: bool = False
    problem: str = ""


class RewardVerdict(msgspec.Struct, frozen=True, kw_only=True):
    """A reward and what it rests on.

    Attributes:
        reward: The reward.
        evidence: ``verified``, ``ungraded``, ``lost`` (or ``missing``: no record).
        outcome: How the attempt ended.
        passed: The grade's automated criteria all passed (null when not graded).
        pending: They did, and a prose criterion awaits a reviewer (``passed_automated``):
            not a pass, so not paid (the reason says so).
        failed: The failed criteria, each ``id: detail``.
        reason: Why the reward is not 1.0 beyond a failed grade (empty otherwise).
    """

    reward: float
    evidence: str
    outcome: str = ""
    passed: bool | None = None
    pending: bool = False
    failed: list[str] = []
    reason: str = ""


# -- reading completions --------------------------------------------------------------------


def parse_episode(completion: object, tools: Sequence[str]) -> Episode:
    """Read a completion (text, one message, or a list of messages) as an episode.

    Never raises: a completion of another shape is an episode of no turns with a ``problem``.

    Args:
        completion: What the policy produced.
        tools: The tools offered (a call written as text must name one of them or ``finish``).
    """
    if isinstance(completion, str):
        messages: list[Any] = [{"role": "assistant", "content": completion}]
    elif isinstance(completion, dict):
        messages = [completion]
    elif isinstance(completion, list | tuple):
        messages = list(completion[:MAX_MESSAGES])
    else:
        kind = type(completion).__name__
        return Episode(turns=[], problem=f"a completion is text or a list of messages, not {kind}")
    offered = [*tools, FINISH_TOOL]
    turns: list[list[EpisodeCall]] = []
    final = ""
    for message in messages:
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        calls = _message_calls(message, offered)
        if not calls:
            final = _text_of(message.get("content"))
        finish = next((c for c in calls if c.tool == FINISH_TOOL), None)
        if finish is None:
            turns.append(calls)
            continue
        turns.append(calls[: calls.index(finish)])
        said = finish.arguments.get("message", "") if isinstance(finish.arguments, dict) else ""
        return Episode(turns=turns, final_message=str(said), finished=True)
    return Episode(turns=turns, final_message=final)


def _message_calls(message: dict[str, Any], offered: Sequence[str]) -> list[EpisodeCall]:
    """The calls of one assistant message: its native ``tool_calls``, else calls in its text."""
    native = message.get("tool_calls")
    if isinstance(native, list) and native:
        return [call for entry in native if (call := _native_call(entry)) is not None]
    text = _text_of(message.get("content"))
    if not text:
        return []
    parsed = parse_tool_calls(text, offered)
    return [EpisodeCall(tool=c.name, arguments=c.arguments) for c in parsed.calls]


def _text_of(content: object) -> str:
    """A message's text: a string, or the text parts of a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict)]
        return "".join(p for p in parts if isinstance(p, str))
    return ""


def _native_call(entry: object) -> EpisodeCall | None:
    """``{"function": {"name", "arguments"}}`` (the chat API) or ``{"name", "arguments"}``."""
    if not isinstance(entry, dict):
        return None
    body = entry.get("function", entry)
    if not isinstance(body, dict) or not isinstance(body.get("name"), str):
        return None
    return EpisodeCall(tool=body["name"], arguments=_arguments(body.get("arguments", {})))


def _arguments(value: object) -> Any:
    """Arguments as the model wrote them: JSON text is read, anything else kept as it is."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value) if value.strip() else {}
    except (ValueError, RecursionError):
        return value


# -- playing and judging --------------------------------------------------------------------


def play_episode(
    world: World,
    task: Task,
    episode: Episode,
    *,
    seed: int,
    base_seed: int = 0,
    revision: str = "",
    limits: AttemptLimits | None = None,
    context: RecordContext | None = None,
) -> Record:
    """Execute an episode's calls in a fresh attempt of ``task`` and seal the record.

    Each turn counts one model turn before its calls run; a budget that ends the attempt ends
    the episode there (``turn_limit`` or ``budget_limit``), as it would live. An episode of
    more calls than any verifier replays (`REPLAY_CALLS`) stops there, as ``error``.

    Args:
        world: The task's world.
        task: The task.
        episode: The episode (`parse_episode`).
        seed: The row's seed (its sample index).
        base_seed: The base seed the session seed derives from with the task and the row seed.
        revision: The run revision written into the record.
        limits: Budgets (None: the task's own).
        context: Where and when (kept out of the digest).
    """
    attempt = Attempt(
        world,
        task,
        seed=sample_seed(base_seed, task.id, seed),
        sample=seed,
        revision=revision,
        limits=limits,
    )
    made = 0
    try:
        for turn in episode.turns:
            attempt.begin_turn()
            for call in turn:
                made += 1
                if made > REPLAY_CALLS:
                    attempt.fail(f"the episode makes more than {REPLAY_CALLS} tool calls")
                    return attempt.finish(episode.final_message, context)
                attempt.call(call.tool, call.arguments)
    except AttemptEnded:
        pass
    return attempt.finish(episode.final_message, context)


def _verdict(
    *,
    evidence: str,
    outcome: str,
    passed: bool | None,
    failed: list[str],
    harness_failed: list[str],
    reason: str = "",
    mismatch: str = "",
    pending: bool = False,
) -> RewardVerdict:
    """The one rule: verified, graded and passed, completed, harness clean; else 0.0 and why.

    With ``mismatch`` (the record's calls against its transcript's), any difference is 0.0. A
    grade whose prose awaits a reviewer (``pending``) is not a pass and earns 0.0.
    """
    if evidence != "verified":
        why = f"evidence {evidence}: {reason or 'the record does not replay'}"
    elif passed is None:
        why = f"not graded: {reason or 'no task'}"
    elif mismatch:
        why = mismatch
    elif outcome not in REWARDED:
        why = f"the attempt ended {outcome or 'without a record'}: not rewarded"
    elif harness_failed:
        why = f"harness layer: {harness_failed[0]}"
    elif pending and passed:
        why = "pending: a prose criterion awaits a reviewer (passed_automated is not a pass)"
    else:
        why = ""
    return RewardVerdict(
        reward=1.0 if not why and passed else 0.0,
        evidence=evidence,
        outcome=outcome,
        passed=passed,
        pending=pending and bool(passed),
        failed=failed + harness_failed,
        reason=why,
    )


def judge_episode(
    record: Record, world: World, task: Task, *, count_pending: bool = False
) -> RewardVerdict:
    """Replay and grade a record made by `play_episode`: its reward and what it rests on.

    ``count_pending`` pays a grade whose prose awaits review as passed (``--count-pending``).
    """
    checked = verify(record, world, task)
    grade = checked.grade
    return _verdict(
        evidence=checked.evidence,
        outcome=record.outcome.status,
        passed=None if grade is None else grade.passed,
        failed=[] if grade is None else grade.reasons(),
        harness_failed=[] if grade is None else grade.harness_failed,
        reason=checked.reason or checked.not_graded,
        pending=grade is not None and grade.pending and not count_pending,
    )


def reward_of(result: SlotResult, record: Record | None) -> RewardVerdict:
    """The reward of a slot judged from its sealed record (what the RL adapters pay).

    The rule of `reward`, and the record's calls must equal the tool calls of the transcript
    it carries (`transcript_mismatch`): a call the model never made, or one it made that the
    record lacks, earns nothing.
    """
    return _verdict(
        evidence=result.evidence,
        outcome=result.outcome,
        passed=None if result.passed is None else result.passed or result.pending,
        failed=list(result.failed),
        harness_failed=list(result.harness_failed),
        reason=result.reason or result.not_graded,
        mismatch="" if record is None else transcript_mismatch(record),
        pending=result.pending,
    )


def transcript_calls(record: Record) -> list[EpisodeCall] | None:
    """The tool calls of the transcript a record carries, up to ``finish`` (None: it has none)."""
    if not isinstance(record.transcript, list):
        return None
    out: list[EpisodeCall] = []
    for message in record.transcript:
        for call in message.tool_calls:
            if call.name == FINISH_TOOL:
                return out
            out.append(EpisodeCall(tool=call.name, arguments=_arguments(call.arguments)))
    return out


def transcript_mismatch(record: Record) -> str:
    """Why a record's calls are not the tool calls of its transcript (empty when they are).

    A record without a transcript has nothing to compare, so nothing differs.
    """
    said = transcript_calls(record)
    if said is None:
        return ""
    made = [EpisodeCall(tool=c.tool, arguments=c.args) for c in record.calls]
    if len(said) != len(made):
        return (
            f"the record holds {len(made)} tool call(s), the transcript {len(said)}: they must "
            "be the same calls"
        )
    for index, (want, got) in enumerate(zip(said, made, strict=True), 1):
        if want.tool != got.tool or not _same_json(want.arguments, got.arguments):
            return (
                f"call {index} of the record ({got.tool}) is not call {index} of the transcript "
                f"({want.tool}, same arguments): they must be the same calls"
            )
    return ""


def _same_json(left: object, right: object) -> bool:
    try:
        return to_json(left) == to_json(right)
    except (TypeError, ValueError, OverflowError, msgspec.EncodeError):
        return False


# -- the TRL-style functions ----------------------------------------------------------------


@attrs.frozen(slots=True)
class _Catalog:
    """The worlds and tasks a reward function grades against (built-in, or a world folder)."""

    tasks: Mapping[str, Task]
    worlds: Mapping[str, World]

    def find(self, task_id: object) -> tuple[World, Task] | str:
        if not isinstance(task_id, str) or task_id not in self.tasks:
            return f"unknown task {str(task_id)[:200]!r}"
        task = self.tasks[task_id]
        return self.worlds[task.world], task


_CATALOGS: dict[str, _Catalog] = {}


def _catalog(world: str | Path | None, size: str) -> _Catalog:
    """Built-in tasks (``world`` None) or a world's own; loaded once per process (immutable)."""
    key = f"{world or ''}|{size}"
    if key not in _CATALOGS:
        if world is None:
            tasks = load_tasks()
            names = {t.world for t in tasks}
            worlds = {name: load_world(name, size=size) for name in sorted(names)}
        else:
            place = locate_world(world)
            loaded = load_world(place.folder, size=size)
            tasks = load_tasks(world=place.name, folder=place.tasks)
            worlds = {loaded.name: loaded}
        _CATALOGS[key] = _Catalog(tasks={t.id: t for t in tasks}, worlds=worlds)
    return _CATALOGS[key]


def _verdicts(
    completions: Sequence[object],
    task_id: Sequence[object],
    seed: Sequence[object],
    *,
    world: str | Path | None,
    size: str,
    base_seed: int,
    partial: bool,
    count_pending: bool,
) -> Iterator[RewardVerdict]:
    catalog = _catalog(world, size)
    for completion, wanted, row in zip(completions, task_id, seed, strict=True):
        found = catalog.find(wanted)
        if isinstance(found, str):
            yield RewardVerdict(reward=0.0, evidence="missing", reason=found)
            continue
        if not isinstance(row, int) or isinstance(row, bool) or row < 0:
            yield RewardVerdict(reward=0.0, evidence="missing", reason=f"seed {row!r}: not a row")
            continue
        yield _score(
            completion, *found, row, base_seed=base_seed, partial=partial, count=count_pending
        )


def _score(
    completion: object,
    world: World,
    task: Task,
    seed: int,
    *,
    base_seed: int,
    partial: bool,
    count: bool,
) -> RewardVerdict:
    names = [t.name for t in world.contract.tools]
    episode = parse_episode(completion, names if task.tools is None else task.tools)
    if episode.problem:
        return RewardVerdict(reward=0.0, evidence="missing", reason=episode.problem)
    record = play_episode(world, task, episode, seed=seed, base_seed=base_seed)
    verdict = judge_episode(record, world, task, count_pending=count)
    if not partial or verdict.passed is None or verdict.outcome not in REWARDED:
        return verdict
    if verdict.reason.startswith("harness layer"):
        verdict = msgspec.structs.replace(verdict, reason="")
    return msgspec.structs.replace(verdict, reward=_coverage(record, world, task, verdict, count))


def _coverage(
    record: Record, world: World, task: Task, verdict: RewardVerdict, count_pending: bool
) -> float:
    """|R ∩ Δ| / |R|, 0.0 when a forbidden or unallowed change happened.

    A task that requires no change (an answer, a count) has no R: its grade decides, 1 or 0.
    A task's prose criteria count in |R|, unmet, until a person reviews them (unless
    ``count_pending``).
    """
    gate = ("forbidden.", "state.allowed")
    if any(f.startswith(gate) for f in verdict.failed):
        return 0.0
    items = required_items(record, task, world)
    # Prose awaiting a reviewer counts as required and unmet: partial credit never pays an
    # unreviewed reply in full (its body may be anything).
    unreviewed = 0 if count_pending else len(task.prose)
    if not items:
        return 1.0 if verdict.passed and not verdict.pending else 0.0
    return sum(item.met for item in items) / (len(items) + unreviewed)


def reward(
    completions: Sequence[object],
    task_id: Sequence[object],
    seed: Sequence[object],
    *,
    world: str | Path | None = None,
    size: str = "small",
    base_seed: int = 0,
    count_pending: bool = False,
    **columns: object,
) -> list[float]:
    """One reward per completion: 1.0 when its episode's record verifies and its grade passes.

    The signature of a ``trl.GRPOTrainer`` reward function: ``task_id`` and ``seed`` are the
    dataset's columns (one per completion); other columns (``prompts``, ``completion_ids``,
    ...) are accepted and not read. Never raises for a completion or row it cannot use: that
    completion earns 0.0.

    Args:
        completions: One completion per row: text, or a list of chat messages.
        task_id: Each completion's task id.
        seed: Each completion's row seed (its sample index).
        world: A world folder of your own (default: the built-in worlds and tasks).
        size: The worlds' seed size.
        base_seed: The base seed session seeds derive from.
        count_pending: Pay a grade whose prose criteria await a reviewer (``passed_automated``)
            as passed, as ``--count-pending`` counts it; off by default: an unreviewed reply's
            body may be anything.
        **columns: Other dataset columns and trainer arguments (not read).
    """
    del columns
    return [
        v.reward
        for v in _verdicts(
            completions,
            task_id,
            seed,
            world=world,
            size=size,
            base_seed=base_seed,
            partial=False,
            count_pending=count_pending,
        )
    ]


def coverage_reward(
    completions: Sequence[object],
    task_id: Sequence[object],
    seed: Sequence[object],
    *,
    world: str | Path | None = None,
    size: str = "small",
    base_seed: int = 0,
    count_pending: bool = False,
    **columns: object,
) -> list[float]:
    """Partial credit: the share of required changes made, |R ∩ Δ| / |R| (see the module).

    0.0 unless the record verifies and the attempt ended as a rewarded outcome; 0.0 when a
    forbidden effect happened or something changed that the task neither requires nor allows;
    for a task that requires no change, the grade (1.0 or 0.0). Never the default reward: a
    policy paid for part of the work can settle for part of it. Arguments as `reward`.
    """
    del columns
    return [
        v.reward
        for v in _verdicts(
            completions,
            task_id,
            seed,
            world=world,
            size=size,
            base_seed=base_seed,
            partial=True,
            count_pending=count_pending,
        )
    ]

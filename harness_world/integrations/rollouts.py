"""Rollouts: what the reinforcement-learning adapters serve, without any SDK.

A `RolloutPlan` names a world, some of its tasks and the seeds to play them at. Each (task,
seed) is one row keyed ``task@seed``: rows are keyed by task id, never by prompt (two tasks may
share an instruction and differ only by their fault schedule). A row's prompt is its task's
briefing, the same text ``play`` and ``mcp`` give (`harness_world.grading.briefing`), stating
the budgets the adapter counts; its tools are the task's, in MCP shape, plus ``finish``
(`harness_world.integrations.mcp.FINISH_SCHEMA`). A row's seed is a sample index: its session
is opened with the seed ``run`` gives that sample, so a row is the same episode every time.

`Rollouts` holds one attempt per rollout, keyed by the rollout's id, for as many rollouts at
once as a driver runs (`harness_world.integrations.verifiers`,
`harness_world.integrations.openenv`); attempts share the immutable world and nothing else.
The k-th rollout of a row is saved in round k: ``OUT/0`` holds the first rollout of each row,
``OUT/1`` the second, each an ordinary run directory (the layout and revision of
`harness_world.run`, the adapter's kind and label as its agent), so ``verify``, ``report`` and
``compare`` read RL rollouts as any run, and every round plays the same episodes.

Sealing a rollout judges its record from the bytes that are saved, as ``run`` judges its own
(`harness_world.grading.verifier.judge_record`: replay, then grade), and pays
`harness_world.rewards.reward_of`: 1.0 only for verified evidence, a passing grade, a rewarded
outcome, and calls equal to the tool calls of the transcript the record carries. Records are
saved by group commit (`harness_world.running.commit`), as ``run`` saves them: durable within
`WINDOW_S` of sealing, and every one of them once `Rollouts.close` returns.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import msgspec

from harness_world.engine.schemas import tool_schemas
from harness_world.engine.world import World, load_world, locate_world
from harness_world.errors import HarnessWorldError
from harness_world.evidence.record import Outcome, Record, RecordContext, TranscriptMessage
from harness_world.grading.briefing import TOOL_BUDGETS, briefing
from harness_world.grading.task import Task, load_tasks
from harness_world.grading.verifier import SlotResult, judge_record
from harness_world.integrations.mcp import FINISH_SCHEMA, FINISH_TOOL, ToolAnswer, tool_refusal
from harness_world.rewards import reward_of
from harness_world.running.attempt import Attempt, AttemptEnded, AttemptLimits, offered_schemas
from harness_world.running.commit import WINDOW_S, Finished, GroupCommit, finished
from harness_world.running.lock import RunLock, lock_run_directory
from harness_world.running.reader import RunReader
from harness_world.running.run import open_external_run
from harness_world.running.rundir import record_path, sample_seed, write_counts

__all__ = [
    "ROW_SEPARATOR",
    "RolloutError",
    "RolloutPlan",
    "RolloutResult",
    "RolloutRow",
    "Rollouts",
    "answer_text",
    "plan_rollouts",
]

ROW_SEPARATOR = "@"
"""Between a row's task id and its seed: ``helpdesk.reply_and_solve@3``."""


_ANSWER_TEXT = msgspec.json.Encoder(order="sorted")


def answer_text(content: Mapping[str, Any]) -> str:
    """A tool answer as the JSON text an MCP result carries beside its structured content.

    Compact, keys sorted: the same value as the structured content, encoded natively
    (the standard library's encoder cost a rollout more than its judging's share).
    """
    return _ANSWER_TEXT.encode(content).decode()


class RolloutError(HarnessWorldError, ValueError):
    """A rollout or row the plan does not hold, or a plan that cannot be made."""


class RolloutRow(msgspec.Struct, frozen=True, kw_only=True):
    """One row: a task at a seed.

    Attributes:
        key: ``task@seed``.
        task_id: The task.
        seed: The row's seed: a sample index of the run directory.
        session_seed: The session seed it opens with (``sample_seed(base, task, seed)``).
    """

    key: str
    task_id: str
    seed: int
    session_seed: int


class RolloutResult(msgspec.Struct, frozen=True, kw_only=True):
    """What one sealed rollout earned, and what the reward rests on.

    Attributes:
        rollout: The rollout's id.
        row: Its row's key.
        round: The round it was saved in (``OUT/<round>``).
        record: The record's path.
        reward: 1.0 or 0.0 (`harness_world.rewards.reward_of`).
        evidence: ``verified``, ``ungraded`` or ``lost``.
        outcome: How the attempt ended.
        passed: The grade (null when not graded).
        failed: The failed criteria, each ``id: detail``.
        reason: Why the reward is 0.0 beyond a failed grade (empty otherwise).
        budget: Each counted budget's use and limit: ``{"tool_calls": [3, 10], ...}``.
    """

    rollout: str
    row: str
    round: int
    record: str
    reward: float
    evidence: str
    outcome: str
    passed: bool | None = None
    failed: list[str] = []
    reason: str = ""
    budget: dict[str, list[int | float | None]] = {}


@attrs.frozen(slots=True)
class RolloutPlan:
    """A world, its tasks, the seeds to play them at, and where the rollouts go.

    Attributes:
        world: The world.
        tasks: The tasks, by id.
        seeds: The row seeds (sample indices), ascending.
        out: The folder of round run directories.
        kind: The adapter (``verifiers``, ``openenv``): the revision's agent kind.
        label: The policy's name: the revision's agent name.
        base_seed: The base seed session seeds derive from.
        overrides: Budget overrides on every task's budgets.
        counted: The budgets the adapter counts and states in the prompt.
    """

    world: World
    tasks: Mapping[str, Task]
    seeds: tuple[int, ...]
    out: Path
    kind: str
    label: str = "policy"
    base_seed: int = 0
    overrides: Mapping[str, int | float] = attrs.field(factory=dict)
    counted: frozenset[str] = TOOL_BUDGETS

    @property
    def samples(self) -> int:
        """Samples per task in each round's run directory: the largest seed plus one."""
        return max(self.seeds) + 1

    def rows(self) -> list[RolloutRow]:
        """Every row, task by task, seed by seed."""
        return [self._row(task_id, seed) for task_id in self.tasks for seed in self.seeds]

    def row(self, key: str) -> RolloutRow:
        """The row ``task@seed``.

        Raises:
            RolloutError: for a key that names no row of the plan.
        """
        task_id, _, seed = str(key).rpartition(ROW_SEPARATOR)
        if task_id not in self.tasks or not seed.isdigit() or int(seed) not in self.seeds:
            raise RolloutError(f"{str(key)[:200]!r} is no row of this plan (task@seed)")
        return self._row(task_id, int(seed))

    def _row(self, task_id: str, seed: int) -> RolloutRow:
        return RolloutRow(
            key=f"{task_id}{ROW_SEPARATOR}{seed}",
            task_id=task_id,
            seed=seed,
            session_seed=sample_seed(self.base_seed, task_id, seed),
        )

    def prompt(self, task_id: str) -> str:
        """The task's briefing, stating the budgets the adapter counts."""
        return briefing(self.tasks[task_id], self.counted)

    def tools(self, task_id: str | None) -> list[dict[str, Any]]:
        """The task's tools in MCP shape (``name``, ``inputSchema``, ...), then ``finish``.

        Without a task, every tool of the world.
        """
        allowed = None if task_id is None else self.tasks[task_id].tools
        return [*offered_schemas(tool_schemas(self.world, "mcp"), allowed), FINISH_SCHEMA]

    def limits(self, task: Task) -> AttemptLimits:
        """The task's budgets with the plan's overrides."""
        return AttemptLimits.from_task(task.budgets, **self.overrides)


def plan_rollouts(
    world: str | Path | World,
    tasks: Sequence[str] | None = None,
    seeds: int | Sequence[int] = 1,
    *,
    out: str | Path,
    kind: str,
    label: str = "policy",
    size: str = "small",
    task_folder: str | Path | None = None,
    base_seed: int = 0,
    limits: Mapping[str, int | float | None] | None = None,
    counted: Collection[str] = TOOL_BUDGETS,
) -> RolloutPlan:
    """A plan: the world's tasks (all, or those named) at each seed.

    Args:
        world: A built-in world's name, a world folder, or a loaded world (its built-in or
            declared task folder is read).
        tasks: Task ids (default: every task of the world).
        seeds: How many seeds (``0 .. n-1``), or the seeds themselves (distinct, >= 0).
        out: The folder of round run directories.
        kind: The adapter's name.
        label: The policy's name, in each round's revision.
        size: The world's seed size (when ``world`` is a name or folder).
        task_folder: The world's tasks (default: where its `WorldSpec` says).
        base_seed: The base seed session seeds derive from.
        limits: Budget overrides (``tool_calls``, ``turns``, ...).
        counted: The budgets the adapter counts and states.

    Raises:
        RolloutError: for no tasks, a task the world does not have, or seeds that are not
            distinct non-negative integers.
        WorldError: for a world that does not load.
    """
    loaded = world if isinstance(world, World) else load_world(world, size=size)
    place = locate_world(loaded.name if isinstance(world, World) else world)
    every = {t.id: t for t in load_tasks(world=place.name, folder=task_folder or place.tasks)}
    chosen = list(every) if tasks is None else list(tasks)
    unknown = [t for t in chosen if t not in every]
    if unknown or not chosen:
        raise RolloutError(f"no such task of world {loaded.name!r}: {unknown or 'none chosen'}")
    row_seeds = _seeds(seeds)
    if any(t.name == FINISH_TOOL for t in loaded.contract.tools):
        raise RolloutError(f"world {loaded.name!r} declares a tool named {FINISH_TOOL!r}")
    return RolloutPlan(
        world=loaded,
        tasks={t: every[t] for t in sorted(chosen)},
        seeds=row_seeds,
        out=Path(out),
        kind=kind,
        label=label,
        base_seed=base_seed,
        overrides={k: v for k, v in (limits or {}).items() if v is not None},
        counted=frozenset(counted),
    )


def _seeds(seeds: int | Sequence[int]) -> tuple[int, ...]:
    if isinstance(seeds, bool):
        raise RolloutError("seeds: a count or a list of seeds, not a boolean")
    if isinstance(seeds, int):
        if seeds < 1:
            raise RolloutError("seeds: at least one")
        return tuple(range(seeds))
    given = list(seeds)
    if not given or any(not isinstance(s, int) or isinstance(s, bool) or s < 0 for s in given):
        raise RolloutError("seeds: non-negative integers, at least one")
    if len(set(given)) != len(given):
        raise RolloutError("seeds: each at most once")
    return tuple(sorted(given))


@attrs.define(slots=True, eq=False)
class _Live:
    """A rollout in flight."""

    attempt: Attempt
    row: RolloutRow
    round: int
    path: Path
    final: str | None = None  # the finish call's message, once it came
    ended: bool = False  # a budget ended the attempt


@attrs.define(slots=True, eq=False)
class _Round:
    """One round's run directory, held by this process while it writes."""

    root: Path
    lock: RunLock
    revision: str
    commit: GroupCommit
    existing: frozenset[Path]  # its records when this process took it
    known: dict[Path, SlotResult] = attrs.field(factory=dict)  # judged when sealed


@attrs.define(slots=True, eq=False)
class Rollouts:
    """One attempt per rollout, keyed by the rollout's id; rounds of run directories.

    Thread-safe: adapters call it from an event loop or from per-session worker threads.

    Attributes:
        plan: The plan.
        sealed: How many rollouts this object has sealed.
    """

    plan: RolloutPlan
    sealed: int = 0
    _lock: threading.RLock = attrs.field(factory=threading.RLock, init=False)
    _committing: threading.Lock = attrs.field(factory=threading.Lock, init=False)
    _live: dict[str, _Live] = attrs.field(factory=dict, init=False)
    _next: dict[str, int] = attrs.field(factory=dict, init=False)
    _rounds: dict[int, _Round] = attrs.field(factory=dict, init=False)
    _pending: list[Finished] = attrs.field(factory=list, init=False)
    _wake: threading.Event = attrs.field(factory=threading.Event, init=False)
    _flusher: threading.Thread | None = attrs.field(default=None, init=False)
    _closed: bool = attrs.field(default=False, init=False)
    _host: str = attrs.field(factory=socket.gethostname, init=False)  # a system call: once
    _limits: dict[str, AttemptLimits] = attrs.field(init=False)
    _prompts: dict[str, str] = attrs.field(factory=dict, init=False)
    _tools: dict[str | None, list[dict[str, Any]]] = attrs.field(factory=dict, init=False)

    @_limits.default
    def _each_task_limits(self) -> dict[str, AttemptLimits]:
        return {task_id: self.plan.limits(task) for task_id, task in self.plan.tasks.items()}

    def __copy__(self) -> Rollouts:
        return self  # a handle on the one set of rollouts: a copied task keeps the same

    def __deepcopy__(self, memo: dict[int, Any]) -> Rollouts:
        return self

    def open(self, rollout: str, row_key: str) -> RolloutRow:
        """Start a rollout of a row: a fresh attempt in the row's slot of its next round.

        Raises:
            RolloutError: for a row the plan does not hold, a rollout id already open, or a
                closed object.
        """
        row = self.plan.row(row_key)
        with self._lock:
            if self._closed:
                raise RolloutError("these rollouts are closed")
            if rollout in self._live:
                raise RolloutError(f"rollout {rollout[:200]!r} is already open")
            number, path = self._claim(row)
            self._live[rollout] = _Live(
                attempt=Attempt(
                    self.plan.world,
                    self.plan.tasks[row.task_id],
                    seed=row.session_seed,
                    sample=row.seed,
                    revision=self._round(number).revision,
                    limits=self._limits[row.task_id],
                ),
                row=row,
                round=number,
                path=path,
            )
        return row

    def limits(self, task_id: str) -> AttemptLimits:
        """The budgets a rollout of the task runs under (the plan's, made once per task)."""
        return self._limits[task_id]

    def prompt(self, task_id: str) -> str:
        """`RolloutPlan.prompt`, made once per task (the plan never changes)."""
        found = self._prompts.get(task_id)
        if found is None:
            found = self._prompts[task_id] = self.plan.prompt(task_id)
        return found

    def tools(self, task_id: str | None) -> list[dict[str, Any]]:
        """`RolloutPlan.tools`, made once per task; the caller must not change the list."""
        found = self._tools.get(task_id)
        if found is None:
            found = self._tools[task_id] = self.plan.tools(task_id)
        return found

    def _claim(self, row: RolloutRow) -> tuple[int, Path]:
        """The first round in which the row's slot holds no record and no rollout in flight.

        Returns:
            The round and the slot's record path in it.
        """
        number = self._next.get(row.key, 0)
        while True:
            path = record_path(self.plan.out / str(number), row.task_id, row.seed)
            if not self._taken(number, path):
                break
            number += 1
        self._next[row.key] = number + 1
        return number, path

    def _taken(self, number: int, path: Path) -> bool:
        """Whether round ``number`` already holds the record at ``path``.

        A round this object holds changes only through it: its records from before are known
        from when it was opened, so no file system call is made per rollout.
        """
        held = self._rounds.get(number)
        return path in held.existing if held is not None else os.path.lexists(path)

    def _round(self, number: int) -> _Round:
        if number not in self._rounds:
            root = self.plan.out / str(number)
            lock = lock_run_directory(root)
            try:
                revision = open_external_run(
                    root,
                    worlds={self.plan.world.name: self.plan.world},
                    tasks=list(self.plan.tasks.values()),
                    kind=self.plan.kind,
                    label=self.plan.label,
                    samples=self.plan.samples,
                    seed=self.plan.base_seed,
                    overrides=self.plan.overrides,
                )
            except BaseException:
                lock.release()
                raise
            commit = GroupCommit(root, lambda batch: None)
            records = record_path(root, "any", 0).parents[1]  # where every task's records are
            existing = frozenset(records.glob("*/*.json"))
            self._rounds[number] = _Round(
                root=root, lock=lock, revision=revision.id, commit=commit, existing=existing
            )
        return self._rounds[number]

    def task_of(self, rollout: str) -> str | None:
        """The task of a rollout in flight (None: no such rollout)."""
        with self._lock:
            live = self._live.get(rollout)
            return None if live is None else live.row.task_id

    def open_rollouts(self) -> list[str]:
        """The ids of the rollouts in flight."""
        with self._lock:
            return list(self._live)

    def call(self, rollout: str, tool: str, arguments: object) -> ToolAnswer:
        """One tool call (or ``finish``) of a rollout, answered as the MCP server answers.

        A typed error is an error answer (``is_error``), as the session logged it. ``finish``
        keeps its ``message`` as the final message; the attempt is sealed when the rollout
        ends (`seal`), and takes no tool call after it.
        """
        with self._lock:
            live = self._live.get(rollout)
            if live is None:
                return tool_refusal("no_rollout", "no rollout of this environment is open here")
            if live.final is not None or live.ended:
                return tool_refusal("ended", "this rollout's attempt has ended: no call counts now")
            if tool == FINISH_TOOL:
                live.final = _message(arguments)
                return ToolAnswer(
                    is_error=False,
                    content={"ok": True, "result": {"finished": True, "message": live.final}},
                )
            try:
                observation = live.attempt.call(tool, arguments)
            except AttemptEnded as ended:
                live.ended = True
                return tool_refusal(ended.outcome.status, ended.outcome.reason)
        return ToolAnswer(
            is_error=not observation.ok,
            content={"seq": observation.seq, **observation.to_message()},
        )

    def finished(self, rollout: str) -> bool:
        """Whether the rollout called ``finish`` (False for one that is not open)."""
        with self._lock:
            live = self._live.get(rollout)
            return live is not None and live.final is not None

    def seal(
        self,
        rollout: str,
        *,
        turns: int = 0,
        turn_budget_hit: bool = False,
        final_message: str = "",
        transcript: Sequence[TranscriptMessage] = (),
        ended: Outcome | None = None,
    ) -> RolloutResult:
        """Seal a rollout's attempt into its record, judge it, save it, and pay its reward.

        Args:
            rollout: The rollout's id.
            turns: The model's assistant turns (each counted against the turn budget).
            turn_budget_hit: Whether the model was stopped for asking past the turn budget
                (the attempt then ends as ``turn_limit``).
            final_message: The final message when ``finish`` gave none.
            transcript: The model conversation, kept in the record (its tool calls must be
                the record's calls for any reward).
            ended: How the rollout ended when not by itself (``interrupted``, ``error``).

        Raises:
            RolloutError: for a rollout that is not open.
        """
        with self._lock:
            live = self._live.pop(rollout, None)
            if live is None:
                raise RolloutError(f"rollout {rollout[:200]!r} is not open")
            record, item = self._sealed(
                live, turns, turn_budget_hit, final_message, transcript, ended
            )
            self._pending.append(item)
            self.sealed += 1
            self._arm()
        verdict = reward_of(item.result, record)
        used = {"tool_calls": len(record.calls), "turns": record.usage.turns}
        limits = live.attempt.limits or AttemptLimits()
        return RolloutResult(
            rollout=rollout,
            row=live.row.key,
            round=live.round,
            record=str(live.path),
            reward=verdict.reward,
            evidence=verdict.evidence,
            outcome=verdict.outcome,
            passed=verdict.passed,
            failed=verdict.failed,
            reason=verdict.reason,
            budget={k: [v, getattr(limits, k)] for k, v in used.items() if k in self.plan.counted},
        )

    def _sealed(
        self,
        live: _Live,
        turns: int,
        turn_budget_hit: bool,
        final_message: str,
        transcript: Sequence[TranscriptMessage],
        ended: Outcome | None,
    ) -> tuple[Record, Finished]:
        attempt = live.attempt
        try:
            for _ in range(turns + (1 if turn_budget_hit else 0)):
                attempt.begin_turn()
        except AttemptEnded:
            pass
        if ended is not None:
            attempt.end(ended)
        if transcript:
            attempt.keep_transcript(list(transcript))
        context = RecordContext(host=self._host, pid=os.getpid(), workers=1)
        record = attempt.finish(live.final if live.final is not None else final_message, context)
        task = self.plan.tasks[live.row.task_id]
        seen: list[Record] = []

        def judge(sealed: Record) -> Any:
            seen.append(sealed)
            return judge_record(sealed, self.plan.world, task, live.path)

        item = finished(record, live.path, judge)
        return seen[0], item

    def _arm(self) -> None:
        """Wake the one flushing thread (started once, not per window: a start costs a wait)."""
        if self._closed:
            return
        if self._flusher is None:
            self._flusher = threading.Thread(target=self._flushing, daemon=True)
            self._flusher.start()
        self._wake.set()

    def _flushing(self) -> None:
        """Commit what was sealed within `WINDOW_S` of the first pending record, until closed.

        While rollouts keep sealing, each window's flush also makes the previous window's
        renames durable (one flush of the file system per window, as ``run`` commits); when
        none came meanwhile, one more flush settles them.
        """
        while True:
            self._wake.wait()
            if not self._closed:
                time.sleep(WINDOW_S)
            self._wake.clear()  # a record sealed after this wakes the next round
            self.flush(settle=False)
            if self._closed or not self._wake.is_set():
                self.flush()
            if self._closed:
                return

    def flush(self, *, settle: bool = True) -> None:
        """Make every sealed record durable in its round's run directory now.

        Rollouts go on while the file system flushes: only the commits wait for each other.

        Args:
            settle: Also make this batch's renames durable now (False: the next flush does,
                with its own batch; `close` and an idle flushing thread always settle).
        """
        with self._lock:
            batch, self._pending = self._pending, []
            rounds = dict(self._rounds)
        with self._committing:
            touched: set[int] = set()
            for item in batch:
                number = int(item.path.parents[2].name)
                touched.add(number)
                rounds[number].commit.add(item)
                rounds[number].known[item.path] = item.result
            for number, held in rounds.items():
                if number in touched or (settle and held.commit.due()):
                    held.commit.flush(settle=settle)

    def close(self, reason: str = "the environment stopped") -> list[RolloutResult]:
        """Seal the rollouts in flight (``interrupted``), save, recount, let the rounds go.

        Idempotent; each round's counts are written once, here.

        Returns:
            What the rollouts sealed here earned.
        """
        with self._lock:
            if self._closed:
                return []
            self._closed = True
            self._wake.set()  # the flushing thread ends
            sealed = [
                self.seal(rollout, ended=Outcome(status="interrupted", reason=reason))
                for rollout in list(self._live)
            ]
        if self._flusher is not None:  # its batch, if any, is durable before the counts
            self._flusher.join()
        self.flush()
        with self._lock:
            worlds = {self.plan.world.name: self.plan.world}
            reader = RunReader.of(self.plan.tasks.values(), worlds=worlds)
            for held in self._rounds.values():
                try:  # the records sealed here are not replayed again, as `run` finishes
                    write_counts(reader.read(held.root, known=held.known))
                finally:
                    held.lock.release()
        return sealed


def _message(arguments: object) -> str:
    """The ``finish`` call's ``message`` (empty when absent; text when not a string)."""
    if not isinstance(arguments, dict):
        return ""
    value = arguments.get("message", "")
    return value if isinstance(value, str) else str(value)[:10_000]

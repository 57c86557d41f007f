"""An inspect_ai adapter (extra: `harness_world[inspect]`): tasks as an inspect `Task`.

``hw_task("helpdesk", tasks=[...])`` returns an inspect ``Task`` whose dataset is the tasks (the
instruction as input, the task id as sample id). Its setup step opens a fresh attempt per sample
and epoch and hands the model that attempt's tools; its scorer seals the attempt, saves the
record into a run directory (the layout of `harness_world.run`), loads it back from disk,
verifies it by replay and grades it:

- value ``C`` only for verified evidence whose grade passed; ``I`` otherwise (failed, ungraded,
  lost, or an attempt that ended in error or was interrupted);
- metadata: ``evidence``, ``outcome``, ``grade``, ``failed`` (each failing criterion with its
  reason), ``reason`` (why the evidence is not verified) and ``record`` (the slot's path).

Epoch ``e`` is sample ``e - 1`` with the seed `harness_world.run` would give it, so inspect's
reducers and ``python -m harness_world report RUN`` (pass^k) count the same attempts. Scoring
judges the sample's slot of the run directory with the one `Verifier`, as ``verify RUN`` does:
re-scoring a log (``inspect score``) reads each slot's record from disk again, never a path the
log names, so a record edited, swapped in from another run or pointed elsewhere is ungraded.

A slot's record is bound to the inspect sample it was written for: the scorer writes the
sample's uuid, id and epoch into the record's context (`INSPECT_BINDING`), and scores a
record only for that sample (the same sample re-scored from its log keeps its uuid). Any other
sample scored against the slot (another eval's, an empty completion, a log of another model)
gets ``I``, not graded: a score is a function of the sample scored, never of whatever the
slot happens to hold.

inspect validates tool arguments against the declared schema before a tool runs; a call it
rejects never reaches the session and is not in the record (inspect's transcript shows it).
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
from inspect_ai import Task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver, system_message
from inspect_ai.tool import Tool, ToolDef, ToolError, ToolParams

from harness_world.engine.world import World, load_world, locate_world
from harness_world.evidence.binding import save_bound
from harness_world.evidence.record import Record, RecordContext
from harness_world.grading.task import Task as HwTask
from harness_world.grading.task import load_tasks
from harness_world.grading.verifier import SlotResult, Verifier
from harness_world.integrations import DEFAULT_SYSTEM_PROMPT
from harness_world.running.attempt import Attempt, AttemptEnded, AttemptLimits
from harness_world.running.reader import RunReader, RunReadError, refresh_counts
from harness_world.running.run import open_external_run as open_run_dir
from harness_world.running.run import sample_seed
from harness_world.running.rundir import record_path

__all__ = ["hw_scorer", "hw_setup", "hw_task"]

RECORD_KEY = "hw_record"
"""Sample metadata key holding the record's path (kept in the log, read again on re-scoring)."""

INSPECT_BINDING = ("inspect_sample", "inspect_id", "inspect_epoch")
"""The record context notes binding a slot's record to the inspect sample it was written for:
the sample's uuid (unique per sample and epoch of an eval, kept by its log), id and epoch."""


@attrs.define(slots=True, eq=False)
class _Live:
    """An attempt in flight for one sample and epoch, until the scorer seals it."""

    attempt: Attempt
    path: Path


_LIVE: dict[str, _Live] = {}
"""Attempts in flight by inspect's sample uuid (one per sample and epoch)."""


@attrs.frozen(slots=True)
class _Plan:
    """What setup and scorer share: the worlds, the tasks, the run directory and the budgets."""

    worlds: dict[str, World]
    tasks: dict[str, HwTask]
    out: Path
    seed: int
    samples: int
    revision: str
    overrides: dict[str, int | float]


def hw_task(
    world: str | Path,
    tasks: Sequence[str] | None = None,
    size: str = "small",
    *,
    task_folder: str | Path | None = None,
    epochs: int = 1,
    seed: int = 0,
    out: str | Path | None = None,
    label: str = "inspect",
    limits: dict[str, int | float | None] | None = None,
    system_prompt: str = DEFAULT_SYSTEM_PROMPT,
) -> Task:
    """The world's tasks as an inspect ``Task``.

    Args:
        world: A built-in world (``helpdesk``) or a world folder of your own.
        tasks: Task ids or globs (default: every task of the world).
        task_folder: The folder of the world's tasks (default: where its `WorldSpec` says).
        size: The world's seed size.
        epochs: Attempts per task (k); epoch e is sample e - 1.
        seed: The base seed (sample seeds derive from it as in `harness_world.run`).
        out: The run directory for the records (default ``runs/inspect-<revision prefix>``).
        label: The client's name in the manifest and revision: name the model here.
        limits: Budget overrides. ``tool_calls`` is enforced as the tools run; ``turns`` is
            counted when the sample is scored (one turn per assistant message): past it, the
            attempt ends as ``turn_limit``. Use inspect's own limits to stop a sample early.
        system_prompt: The system message.

    Raises:
        ValueError: when a pattern matches no task of the world, or epochs is below 1.
    """
    if epochs < 1:
        raise ValueError("epochs must be at least 1")
    place = locate_world(world)
    loaded = load_world(place.folder, size=size)
    chosen = _select(load_tasks(world=place.name, folder=task_folder or place.tasks), tasks)
    overrides = {k: v for k, v in (limits or {}).items() if v is not None}
    plan = _open_plan(
        {loaded.name: loaded},
        chosen,
        out=out,
        label=label,
        samples=epochs,
        seed=seed,
        overrides=overrides,
    )
    dataset = [
        Sample(
            input=t.instruction,
            id=t.id,
            metadata={"world": t.world, "task_hash": t.hash, "run": str(plan.out)},
        )
        for t in chosen
    ]
    return Task(
        dataset=dataset,
        setup=hw_setup(plan),
        solver=[system_message(system_prompt), generate(tool_calls="loop")],
        scorer=hw_scorer(plan),
        epochs=epochs,
        name=f"harness_world/{loaded.name}",
    )


def _open_plan(
    worlds: dict[str, World],
    chosen: list[HwTask],
    *,
    out: str | Path | None,
    label: str,
    samples: int,
    seed: int,
    overrides: dict[str, int | float],
) -> _Plan:
    """Open (or resume) the run directory, by default named after the pinned revision."""
    if out is None:
        from harness_world.running.revision import make_revision

        pinned = make_revision(
            worlds=worlds,
            tasks=chosen,
            agent_settings={"kind": "inspect", "name": label},
            budgets=overrides,
            samples=samples,
            seed=seed,
        )
        out = Path("runs") / f"inspect-{pinned.id[:12]}"
    revision = open_run_dir(
        out,
        worlds=worlds,
        tasks=chosen,
        kind="inspect",
        label=label,
        samples=samples,
        seed=seed,
        overrides=overrides,
    )
    return _Plan(
        worlds=worlds,
        tasks={t.id: t for t in chosen},
        out=Path(out),
        seed=seed,
        samples=samples,
        revision=revision.id,
        overrides=overrides,
    )


def _select(every: list[HwTask], patterns: Sequence[str] | None) -> list[HwTask]:
    if not patterns:
        return every
    if isinstance(patterns, str):
        patterns = [patterns]
    chosen: dict[str, HwTask] = {}
    for pattern in patterns:
        hits = [t for t in every if fnmatch.fnmatchcase(t.id, pattern)]
        if not hits:
            raise ValueError(f"tasks: {pattern!r} matches no task of the world")
        chosen.update((t.id, t) for t in hits)
    return sorted(chosen.values(), key=lambda t: t.id)


@solver
def hw_setup(plan: _Plan) -> Solver:
    """Open a fresh attempt for this sample and epoch and give the model its tools."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        task = plan.tasks[str(state.sample_id)]
        sample = state.epoch - 1
        if sample >= plan.samples:
            raise ValueError(
                f"epoch {state.epoch} is beyond the {plan.samples} sample(s) of the run directory "
                f"{plan.out}: give the epochs to the task (hw_task(epochs=k), or `-T epochs=k` "
                "on the inspect command line), not to eval alone"
            )
        attempt = Attempt(
            plan.worlds[task.world],
            task,
            seed=sample_seed(plan.seed, task.id, sample),
            sample=sample,
            revision=plan.revision,
            limits=AttemptLimits.from_task(task.budgets, **plan.overrides),
        )
        path = record_path(plan.out, task.id, sample)
        _LIVE[state.uuid] = _Live(attempt=attempt, path=path)
        state.metadata[RECORD_KEY] = str(path)
        state.tools = _tools(attempt)
        return state

    return solve


def _tools(attempt: Attempt) -> list[Tool]:
    out: list[Tool] = []
    for schema in attempt.tool_schemas("json-schema"):
        out.append(
            ToolDef(
                _executor(attempt, schema["name"]),
                name=schema["name"],
                description=schema["description"],
                parameters=ToolParams.model_validate(_described(schema["parameters"])),
                parallel=False,
            ).as_tool()
        )
    return out


def _described(parameters: dict[str, Any]) -> dict[str, Any]:
    """The schema with a description on every property (inspect refuses a tool without)."""
    properties = {
        name: {"description": f"`{name}`: see the tool's description", **spec}
        for name, spec in parameters.get("properties", {}).items()
    }
    return {**parameters, "properties": properties}


def _executor(attempt: Attempt, name: str) -> Any:
    async def execute(**kwargs: Any) -> str:
        try:
            observation = attempt.call(name, kwargs)
        except AttemptEnded as ended:
            raise ToolError(
                f"the attempt has ended ({ended.outcome.status}: {ended.outcome.reason}); "
                "stop calling tools"
            ) from None
        message = json.dumps(observation.to_message(), sort_keys=True)
        if not observation.ok:
            raise ToolError(message)
        return message

    return execute


@scorer(metrics=[accuracy(), stderr()])
def hw_scorer(
    plan: _Plan | None = None,
    *,
    run: str | Path | None = None,
    trust_key: str | Path | None = None,
) -> Scorer:
    """Seal the sample's attempt (if still open), save it, then judge its slot from disk.

    The slot is the run directory's (task = the sample id, sample = epoch - 1), judged by the
    one `Verifier` exactly as ``verify RUN`` judges it: the record at the slot's own path,
    bound to the slot's seed, revision and index line. Nothing the log says (its record
    path, its run metadata) is read: re-scoring a log judges the run directory the scorer is
    given.

    Args:
        plan: The task's own plan (`hw_task` passes it): its run directory, worlds and tasks.
        run: For re-scoring without the task (``inspect_score(log, hw_scorer(run=DIR))``):
            the run directory, graded against the built-in tasks and worlds.
        trust_key: A public key (PEM) that must have signed the run directory: a run it
            does not sign scores every sample ``I`` with the reason, nothing replayed.
    """
    key = Path(trust_key) if trust_key is not None else None
    root = plan.out if plan is not None else (Path(run) if run is not None else None)
    verifiers: list[Verifier] = []  # one per scorer, made at the first score: tasks load once

    async def score(state: TaskState, target: Target) -> Score:
        live = _LIVE.pop(state.uuid, None)
        if live is not None:
            _seal(live, state, plan)
        if root is None:
            return Score(
                value=INCORRECT,
                explanation="no run directory: give the scorer one (hw_scorer(run=DIR)); "
                "the log's own paths are never trusted",
                metadata={"evidence": "lost", "record": None},
            )
        if not verifiers:
            tasks = plan.tasks if plan is not None else {t.id: t for t in load_tasks()}
            verifiers.append(Verifier(tasks=tasks, given=plan.worlds if plan is not None else {}))
        return _judge_slot(root, RunReader(verifiers[0], trust_key=key), state)

    return score


def _binding(state: TaskState) -> dict[str, str]:
    """The context notes that bind a record to the inspect sample ``state`` is."""
    values = (state.uuid, str(state.sample_id), str(state.epoch))
    return dict(zip(INSPECT_BINDING, values, strict=True))


def _judge_slot(root: Path, reader: RunReader, state: TaskState) -> Score:
    """The slot judged by the run reader, as ``verify RUN`` judges it, turned into a score.

    A record written for another inspect sample than ``state`` is not graded for it.
    """
    task_id, sample = str(state.sample_id), state.epoch - 1
    seen: list[Record] = []
    try:
        result = reader.judge_slot(
            root, task_id, sample, observe=lambda _, got: seen.append(got.record)
        )
    except RunReadError as exc:
        return Score(value=INCORRECT, explanation=f"lost: {exc}", metadata={"evidence": "lost"})
    if result is not None and result.reason.startswith("provenance:"):
        return Score(
            value=INCORRECT,
            explanation=f"ungraded: {result.reason}",
            metadata={"evidence": "ungraded", "record": None},
        )
    if result is None:
        return Score(
            value=INCORRECT,
            explanation=f"ungraded: {task_id!r} sample {sample} is no slot of {root}",
            metadata={"evidence": "ungraded", "record": None},
        )
    if seen and (foreign := _foreign(seen[0], state)):
        return Score(
            value=INCORRECT,
            explanation=f"not graded: {foreign}",
            metadata={
                "evidence": result.evidence,
                "grade": None,
                "reason": foreign,
                "record": result.path,
            },
        )
    return _score(result, seen[0].final_message if seen else None)


def _foreign(record: Record, state: TaskState) -> str:
    """Why ``record`` was not written for the inspect sample ``state`` (empty: it was)."""
    notes = record.context.notes
    wanted = _binding(state)
    if all(notes.get(key) == value for key, value in wanted.items()):
        return ""
    written = notes.get(INSPECT_BINDING[0])
    whom = f"inspect sample {written}" if written else "no inspect sample (none is named)"
    return (
        f"the record in slot {state.sample_id}/{state.epoch - 1} was written for {whom}, not "
        f"for this one ({state.uuid}, epoch {state.epoch}): a slot is scored only for the "
        "sample whose attempt wrote it"
    )


def _seal(live: _Live, state: TaskState, plan: _Plan | None) -> None:
    attempt = live.attempt
    for message in state.messages:
        if message.role != "assistant" or attempt.ended:
            continue
        try:
            attempt.begin_turn()  # past the turn budget: ends the attempt as turn_limit
        except AttemptEnded:
            break
    completion = state.output.completion if state.output else ""
    record = attempt.finish(completion, RecordContext(notes=_binding(state)))
    live.path.parent.mkdir(parents=True, exist_ok=True)
    run_dir = live.path.parent.parent.parent
    save_bound(run_dir, record, live.path)  # bound to its slot, write-ahead (as `run` does)
    tasks, worlds = (plan.tasks.values(), plan.worlds) if plan is not None else (None, None)
    refresh_counts(run_dir, tasks, worlds)


def _score(result: SlotResult, answer: str | None) -> Score:
    counted = result.outcome in ("completed", "turn_limit", "budget_limit")
    passed = result.evidence == "verified" and counted and result.passed is True
    failed = [
        {"criterion": name, "reason": reason}
        for name, _, reason in (entry.partition(": ") for entry in result.failed)
    ]
    if result.evidence != "verified":
        explanation = f"{result.evidence}: {result.reason or 'the record does not replay'}"
    elif result.passed is None:
        explanation = f"verified, not graded ({result.not_graded or 'no task'})"
    elif (result.passed or result.pending) and not counted:
        explanation = f"verified and graded, but the attempt ended {result.outcome}: not counted"
    elif result.passed:
        explanation = "verified; every automated criterion passed"
    elif result.pending:
        explanation = (
            "verified; every automated criterion passed, prose pending review: not a pass "
            "until a person reviews it"
        )
    else:
        explanation = "verified; failed " + "; ".join(
            f"{f['criterion']}: {f['reason']}" for f in failed
        )
    return Score(
        value=CORRECT if passed else INCORRECT,
        answer=answer,
        explanation=explanation,
        metadata={
            "evidence": result.evidence,
            "outcome": result.outcome or None,
            "grade": None
            if result.passed is None
            else ("passed" if result.passed else "pending" if result.pending else "failed"),
            "failed": failed,
            "reason": result.reason,
            "harness": {"checked": result.harness_checked, "failed": result.harness_failed},
            "record": result.path,
        },
    )

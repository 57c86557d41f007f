"""Running τ² tasks end to end: an agent, a simulated user, our world, replay and grade.

`run_conversations` runs each imported task (``samples`` times) as an `Attempt` carrying a
simulated user (and, in τ² observation mode, a `Tau2View`), seals the record, verifies it
(replay, then grade) and reports one `ConversationResult` per attempt; given a folder, it
writes a run directory (`harness_world.running.run.open_external_run`) that ``verify``,
``report`` and ``compare`` read like any other. `Drivers` names who talks (the agent and the
simulated user, and their models) and makes them per task; `tau2_view` shows the agent τ²'s
own schemas and observation strings instead of ours.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

import attrs
import msgspec

from harness_world.engine.world import World
from harness_world.evidence.binding import save_bound
from harness_world.evidence.record import Record
from harness_world.grading.verify import verify
from harness_world.running.agents import Agent, drive
from harness_world.running.attempt import Attempt
from harness_world.running.reader import refresh_counts
from harness_world.running.run import open_external_run
from harness_world.running.rundir import record_path, sample_seed
from harness_world.running.user import AgentView, UserSimulator, WorldView
from harness_world.tau2 import importer
from harness_world.tau2.faithful import Tau2Shape
from harness_world.tau2.gold import ImportedTask
from harness_world.tau2.importer import FormatError
from harness_world.tau2.source import Tau2Source, Tau2SourceError
from harness_world.tau2.users import ConversationalOracle, OpenAIUser, ScriptedUser, Tau2View

__all__ = ["ConversationReport", "ConversationResult", "Drivers", "run_conversations", "tau2_view"]


class ConversationResult(msgspec.Struct, frozen=True, kw_only=True):
    """One τ² task run end to end with a simulated user.

    Attributes:
        task_id: Our task id.
        user_turns: Exchanges with the user.
        user_stopped: Whether the user ended the conversation.
        calls: Tool calls made.
        outcome: How execution ended.
        evidence: Replay evidence.
        passed: Our grade (None when not graded).
        failed: Failed automated criteria.
        record: Where the record was saved (empty when not saved).
        sample: The sample index (``--samples``).
    """

    task_id: str
    user_turns: int
    user_stopped: bool
    calls: int
    outcome: str
    evidence: str
    passed: bool | None
    failed: list[str]
    record: str = ""
    sample: int = 0


class ConversationReport(msgspec.Struct, frozen=True, kw_only=True):
    """Every attempt of a conversation run.

    Attributes:
        data_notice: Whose data it is.
        runs: One result per attempt, task by task, sample by sample.
    """

    data_notice: str
    runs: list[ConversationResult]


@attrs.frozen(slots=True)
class Drivers:
    """Who talks in a conversation run: the agent, the simulated user, and their models.

    Attributes:
        agent: ``oracle`` (the gold calls driven through a conversation) or ``openai`` (a model
            over an OpenAI-compatible endpoint, told the data's ``policy.md``).
        user: ``scripted`` (from the task's user scenario, allowing the changes its gold
            makes) or ``openai`` (a model playing it).
        observations: What the agent sees: ``ours`` or ``tau2`` (named in the label only).
        model: The agent's model (``openai``; also the user's by default).
        base_url: The agent's endpoint (also the user's by default).
        api_key: The key sent to both endpoints.
        user_model: The user's model (None: ``model``).
        user_base_url: The user's endpoint (None: ``base_url``).
    """

    agent: Literal["oracle", "openai"] = "oracle"
    user: Literal["scripted", "openai"] = "scripted"
    observations: Literal["ours", "tau2"] = "ours"
    model: str | None = None
    base_url: str | None = None
    api_key: str = "not-needed"
    user_model: str | None = None
    user_base_url: str | None = None

    def __attrs_post_init__(self) -> None:
        """A model driver needs its model and endpoint.

        Raises:
            ValueError: naming the ``tau2 run`` option that makes a model driver.
        """
        if "openai" in (self.agent, self.user) and (not self.model or not self.base_url):
            needs = "--agent openai" if self.agent == "openai" else "--user openai"
            raise ValueError(f"{needs} needs --model and --base-url")

    def label(self) -> str:
        """The driver's name in a run directory's manifest: agent, user and what it sees."""
        agent = f"openai:{self.model}" if self.agent == "openai" else self.agent
        user = f"openai:{self.user_model or self.model}" if self.user == "openai" else self.user
        return f"tau2 agent={agent} user={user} observations={self.observations}"

    def agent_for(self, data: Path) -> Callable[[ImportedTask], Agent]:
        """The agent per task: one model agent for every task, or each task's own oracle."""
        if self.agent != "openai":
            return ConversationalOracle
        from harness_world.integrations.openai import OpenAIAgent

        policy = data / "policy.md"
        prompt = policy.read_text(encoding="utf-8") if policy.is_file() else ""
        agent = OpenAIAgent(
            model=self.model or "", base_url=self.base_url or "", api_key=self.api_key
        )
        if prompt:
            agent = attrs.evolve(agent, system_prompt=prompt)
        return lambda _item: agent

    def user_for(self, item: ImportedTask) -> UserSimulator:
        """The simulated user of one task, playing its user scenario."""
        if self.user == "openai":
            return OpenAIUser(
                scenario=item.user_scenario,
                model=self.user_model or self.model or "",
                base_url=self.user_base_url or self.base_url or "",
                api_key=self.api_key,
            )
        return ScriptedUser.from_scenario(item.user_scenario, item.gold)


def tau2_view(world: World, data: Path, source: Path) -> Tau2View:
    """τ²'s view of the data's world: τ²'s tool schemas (from a checkout) and observations.

    Args:
        world: The data's world.
        data: The τ² data folder.
        source: A τ²-bench checkout (the folder holding the ``tau2`` package).

    Raises:
        harness_world.tau2.Tau2SourceError: for a checkout that cannot be used.
        FormatError: when ``db.json`` cannot be read.
    """
    db_file = data / importer.DB_FILE
    try:
        loaded = Tau2Source.load(source, data)
        schemas = loaded.tool_schemas(loaded.environment(loaded.database(db_file)))
        shape = Tau2Shape.from_data(world, db_file)
    except Tau2SourceError:
        raise
    except (OSError, ValueError) as exc:
        raise FormatError(f"{data}: cannot read {importer.DB_FILE}: {exc}") from None
    return Tau2View(shape=shape, schemas=schemas)


def run_conversations(
    world: World,
    tasks: Sequence[ImportedTask],
    agent_for: Callable[[ImportedTask], Agent],
    user_for: Callable[[ImportedTask], UserSimulator],
    *,
    view: AgentView | None = None,
    out: Path | None = None,
    samples: int = 1,
    seed: int = 0,
    label: str = "tau2",
) -> list[tuple[ConversationResult, Record]]:
    """Run every task ``samples`` times with its agent and its simulated user; verify each record.

    With ``out``, the attempts form a run directory as `run` writes one (manifest, records
    bound to their slots in the index, counts), so ``verify``, ``report`` and ``compare`` read
    it; an existing run directory of the same revision is resumed (its slots run again).

    Args:
        world: The world (τ²'s data).
        tasks: The imported tasks.
        agent_for: The agent for a task.
        user_for: The simulated user for a task (e.g. from its user scenario).
        view: What agents are shown (None: our tool schemas and observations).
        out: A run directory to save the records in, or None.
        samples: Attempts per task (each with its own sample seed).
        seed: The base seed (sample seeds derive from it as in `run`).
        label: The driver's name in the run's manifest and revision (e.g. agent and user).

    Raises:
        ValueError: for fewer than one sample.
        harness_world.RevisionMismatch: when ``out`` holds a run of another revision.
    """
    if samples < 1:
        raise ValueError("samples must be at least 1")
    revision = ""
    if out is not None:
        revision = open_external_run(
            out,
            worlds={world.name: world},
            tasks=[item.task for item in tasks],
            kind="tau2",
            label=label,
            samples=samples,
            seed=seed,
            overrides={},
        ).id
    results = []
    for item in tasks:
        for sample in range(samples):
            attempt = Attempt(
                world,
                item.task,
                seed=sample_seed(seed, item.task.id, sample),
                sample=sample,
                revision=revision,
                user=user_for(item),
                view=WorldView(world) if view is None else view,
            )
            record = drive(agent_for(item), attempt)
            saved = "" if out is None else str(_save(out, record))
            results.append((_result(world, item, record, saved), record))
    if out is not None:
        refresh_counts(out, [item.task for item in tasks], worlds={world.name: world})
    return results


def _save(out: Path, record: Record) -> Path:
    """Save a record to its slot, bound in the run's index first (write-ahead, as `run`)."""
    path = record_path(out, record.task_id, record.sample)
    path.parent.mkdir(parents=True, exist_ok=True)
    return save_bound(out, record, path)


def _result(world: World, item: ImportedTask, record: Record, saved: str) -> ConversationResult:
    checked = verify(record, world=world, task=item.task)
    grade = checked.grade
    return ConversationResult(
        task_id=item.task.id,
        sample=record.sample,
        user_turns=len(record.user_turns),
        user_stopped=bool(record.user_turns) and record.user_turns[-1].stop,
        calls=len(record.calls),
        outcome=record.outcome.status,
        evidence=checked.evidence,
        passed=None if grade is None else grade.passed,
        failed=[] if grade is None else grade.failed,
        record=saved,
    )

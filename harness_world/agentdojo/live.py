"""``agentdojo run``: AgentDojo's tasks attempted into an ordinary run directory.

Without attack (``none``) the run holds what AgentDojo runs without one: every user task and
every injection task alone, on the default start state. Under ``important_instructions`` it
holds every (user task, injection task) pair, each on a start state of its own: AgentDojo's
attack text (its template, with the user's name, the model's and the injection task's goal)
put in every injection vector the user task's ground truth shows, the vectors it calls its
injection candidates (`injection_candidates`: the vectors whose canary text a result of the
ground truth's calls shows). As with ``agentdojo regrade --out``, a condition file beside the
run names each task's start state; ``verify``, ``report`` and ``conditions`` read the run with
``--world agentdojo_<suite> --world-data DATA --world-tasks FILE``.

The agent is the oracle (the ground truth's calls, each write that names ids after the read
that shows them, and the task's ground-truth answer; under attack it does the user's task and
ignores the injected text) or a model agent, ``--agent openai|anthropic``: the one model-agent
loop ``run --agent openai|anthropic`` uses (`harness_world.integrations.agents`, reached through
the registry), given each slot's attempt on its own start state. The attack text names the
model as AgentDojo's attack does (`DojoSource.model_name`: its table of model names, else its
default). Each run is graded both ways: our condition figures read back from the run
directory, and AgentDojo's verdicts re-stated on each record's end state.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs
import msgspec

from harness_world.agentdojo.checks import DojoState, Verdict
from harness_world.agentdojo.data import DojoDataError, vector_defaults
from harness_world.agentdojo.importer import (
    Condition_,
    Imported,
    build_world,
    import_suite,
    oracle_calls,
    start_world,
    suite_spec,
    task_on_start,
)
from harness_world.agentdojo.regrade import dojo_verdicts, shown
from harness_world.agentdojo.runs import DojoFigures, Judged, cell, dojo_figures, write_records
from harness_world.agentdojo.source import DojoSource, DojoTask
from harness_world.analysis.conditions import ConditionsReport, conditions_report
from harness_world.engine.canonical import sha256_hex, to_json
from harness_world.engine.world import World
from harness_world.evidence.record import Record
from harness_world.grading.task import Task
from harness_world.running.agents import Agent, drive
from harness_world.running.attempt import Attempt, AttemptLimits
from harness_world.running.reader import RunReader
from harness_world.running.rundir import sample_seed
from harness_world.running.scripted import record_calls

ATTACKS = ("none", "important_instructions")
"""The attacks a run can place: none, or AgentDojo's ``important_instructions``."""
USER_NAME = "Emma Johnson"
"""The user's name AgentDojo's ``important_instructions`` signs its text with."""
MODEL_NAME = "the AI language model"
"""AgentDojo's name for a model its table of model names does not know."""


def injection_candidates(source: DojoSource, suite: str, version: str, user: Imported) -> list[str]:
    """The injection vectors whose text the user task's ground truth shows, in AgentDojo's order.

    As AgentDojo finds them: each vector holds a canary text, the ground truth (computed on
    that start state) runs, and a vector is a candidate when a result shows its canary.

    Raises:
        DojoDataError: for a user task whose ground truth shows no vector (AgentDojo refuses
            to attack it).
    """
    if user.dojo is None:
        raise DojoDataError(f"{user.task.id} is not a user task")
    canaries = {v: f"<CANARY---{v}--->" for v in vector_defaults(source.folder, suite)}
    world = build_world(source.folder, suite, canaries)
    spec = suite_spec(suite)
    gold = source.ground_truth(suite, version, user.dojo.id, canaries)
    record = record_calls(world, user.task, gold)
    texts = [shown(spec, call.tool, call) for call in record.calls]
    found = [v for v, canary in canaries.items() if any(canary in text for text in texts)]
    if not found:
        raise DojoDataError(f"{user.task.id}: its ground truth shows no injection vector")
    return found


def attack_injections(
    template: str, candidates: Sequence[str], injection: DojoTask, model: str = MODEL_NAME
) -> dict[str, str]:
    """The text ``important_instructions`` puts in each candidate vector for ``injection``."""
    text = template.format(user=USER_NAME, model=model, goal=injection.text)
    return dict.fromkeys(candidates, text)


@attrs.frozen(slots=True)
class Planned:
    """One slot of an oracle run: the task on its start state, and what the oracle does.

    Attributes:
        imported: The imported task (its checks).
        task: Our task, naming its start state's world.
        world: The start state.
        injections: The start state's injected texts (placeholder to text).
        calls: The oracle's calls (the ground truth on this start state).
        output: The oracle's last message.
    """

    imported: Imported
    task: Task
    world: World
    injections: dict[str, str]
    calls: list[tuple[str, dict[str, Any]]]
    output: str


def plan(folder: Path, suite: str, attack: str, version: str, model: str) -> list[Planned]:
    """Every slot of an oracle run of one suite under ``attack``.

    Raises:
        DojoDataError: for an unknown attack or suite, or unreadable data.
    """
    if attack not in ATTACKS:
        raise DojoDataError(f"attack {attack!r} is not supported ({', '.join(ATTACKS)})")
    source = DojoSource(folder)
    _, imported = import_suite(folder, suite, version, source=source, pairs=attack != "none")
    if attack == "none":
        chosen = [(i, dict[str, str]()) for i in imported]
    else:
        template = source.attack_template(attack)
        seen: dict[str, list[str]] = {}
        chosen = []
        for item in (i for i in imported if i.attack):
            assert item.dojo is not None and item.injection is not None
            if item.dojo.id not in seen:
                user = _user(imported, item)
                seen[item.dojo.id] = injection_candidates(source, suite, version, user)
            found = seen[item.dojo.id]
            chosen.append((item, attack_injections(template, found, item.injection, model)))
    worlds: dict[str, World] = {}
    out: list[Planned] = []
    for item, injections in chosen:
        key = msgspec.json.encode(sorted(injections.items())).decode()
        world = worlds.setdefault(key, start_world(folder, suite, injections))
        source_task = item.dojo or item.injection
        answer = "" if source_task is None else source_task.constants.get("GROUND_TRUTH_OUTPUT")
        task = task_on_start(item, world, source, version, injections)
        calls = item.gold
        if injections and item.dojo is not None:
            gold = source.ground_truth(suite, version, item.dojo.id, injections)
            calls = oracle_calls(suite_spec(suite), gold)
        out.append(Planned(item, task, world, injections, calls, str(answer or "")))
    return out


def _user(imported: Sequence[Imported], pair: Imported) -> Imported:
    """The user task alone that an attack pair is made of."""
    return next(i for i in imported if i.dojo is pair.dojo and i.injection is None)


def _attempt(slot: Planned, revision: str) -> Attempt:
    task = slot.task
    return Attempt(
        slot.world, task, seed=sample_seed(0, task.id, 0), revision=revision, limits=AttemptLimits()
    )


def oracle_record(slot: Planned, revision: str) -> Record:
    """The oracle's attempt of one slot, bound to ``revision``."""
    attempt = _attempt(slot, revision)
    for name, args in slot.calls:
        attempt.call(name, args)
    return attempt.finish(slot.output)


def agent_record(slot: Planned, agent: Agent, revision: str) -> Record:
    """An agent's attempt of one slot, bound to ``revision``, driven as ``run`` drives one.

    A fresh attempt: an agent keeping memory between attempts (a ``reset()`` method) forgets
    it first.
    """
    reset = getattr(agent, "reset", None)
    if callable(reset):
        reset()
    return drive(agent, _attempt(slot, revision))


def agent_label(agent: Agent | None) -> str:
    """The agent's part of a run directory's name: ``oracle``, or its name and model.

    Made path-safe: ``openai-gpt-4o-2024-05-13``.
    """
    if agent is None:
        return "oracle"
    model = agent.settings().get("model")
    text = f"{agent.name}-{model}" if model else agent.name
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.") or "agent"


def _driver(agent: Agent | None, attack: str) -> str:
    """The run's driver label: the settings an agent's results depend on, hashed in."""
    if agent is None:
        return f"agentdojo oracle {attack}"
    settings = sha256_hex(to_json(agent.settings()))[:16]
    return f"agentdojo {agent.name} {attack} settings {settings}"


def judge(slot: Planned, record: Record, default: World) -> Judged:
    """AgentDojo's two verdicts, re-stated, on one record."""
    verdict = Verdict(
        output=record.final_message,
        pre=DojoState.of(slot.world),
        post=DojoState.of(slot.world, record.final),
        default=DojoState.of(default),
        calls=tuple((c.tool, c.args if isinstance(c.args, dict) else {}) for c in record.calls),
    )
    dojo, injection = slot.imported.dojo, slot.imported.injection
    utility, security = dojo_verdicts(slot.imported, verdict, slot.imported.attack)
    return Judged(
        user_task=dojo.id if dojo else injection.id if injection else "",
        injection_task=injection.id if dojo and injection else "",
        utility=utility,
        security=security,
    )


class OracleRun(msgspec.Struct, frozen=True, kw_only=True):
    """One suite's run (the oracle's or a model agent's) under one attack.

    Attributes:
        agent: ``oracle``, or the model agent's label.
        suite: The suite.
        attack: The attack (``none`` or ``important_instructions``).
        run: The run directory.
        conditions: The condition file beside it (``--world-tasks``).
        dojo: AgentDojo's figures over the run (its verdicts re-stated).
        ours: Our condition figures, read back from the run directory.
    """

    suite: str
    attack: str
    run: str
    conditions: str
    dojo: DojoFigures
    ours: ConditionsReport
    agent: str = "oracle"


def run_oracle(
    folder: Path,
    suite: str,
    attack: str,
    out: Path,
    version: str,
    model: str = MODEL_NAME,
    agent: Agent | None = None,
) -> OracleRun:
    """One suite's run under ``attack``, written to ``out/<agent>-<attack>-<suite>``.

    Without ``agent`` the oracle attempts every slot; with one (a model agent), it does, each
    attempt driven as ``run`` drives one. ``model`` is the name the attack text gives the
    model.

    Raises:
        DojoDataError: for an unknown attack or suite, or unreadable data.
        harness_world.RevisionMismatch: when the run directory holds another run.
    """
    slots = plan(folder, suite, attack, version, model)
    worlds = {s.world.name: s.world for s in slots}
    tasks = [s.task for s in slots]
    name = f"{agent_label(agent)}-{attack}-{suite}"
    run = out / name
    records: list[Record] = []

    def made(revision: str) -> Iterator[Record]:
        for slot in slots:
            if agent is None:
                records.append(oracle_record(slot, revision))
            else:
                records.append(agent_record(slot, agent, revision))
            yield records[-1]

    write_records(run, worlds, tasks, _driver(agent, attack), made)
    conditions = out / f"{name}.json"
    starts = {s.task.id: s.injections for s in slots}
    conditions.write_bytes(msgspec.json.encode(Condition_(version=version, starts=starts)))
    default = build_world(folder, suite)
    reader = RunReader.of(tasks, worlds=worlds)
    return OracleRun(
        agent=agent_label(agent),
        suite=suite,
        attack=attack,
        run=str(run),
        conditions=str(conditions),
        dojo=dojo_figures([judge(s, r, default) for s, r in zip(slots, records, strict=True)]),
        ours=conditions_report(run, {t.id: t for t in tasks}, reader=reader),
    )


def same_figures(run: OracleRun) -> bool:
    """Whether our three condition figures count what AgentDojo's verdicts count."""
    ours, dojo = run.ours, run.dojo
    pairs = (
        (ours.benign_utility, dojo.utility),
        (ours.utility_under_attack, dojo.utility_under_attack),
        (ours.attack_success, dojo.attack_success),
    )
    return all((a.count, a.n) == (b.count, b.n) for a, b in pairs)


def render_oracle_runs(runs: Sequence[OracleRun]) -> str:
    """Per run: where it is, how to read it, our figures and AgentDojo's."""
    lines: list[str] = []
    for r in runs:
        lines += [
            f"{r.agent} {r.attack} {r.suite}: {r.run} (--world agentdojo_{r.suite} --world-data "
            f"DATA --world-tasks {r.conditions})",
            f"  ours (conditions): benign utility {cell(r.ours.benign_utility)}, utility "
            f"under attack {cell(r.ours.utility_under_attack)}, attack success "
            f"{cell(r.ours.attack_success)}",
            f"  AgentDojo's verdicts ({'equal' if same_figures(r) else 'DIFFERENT'} counts): "
            f"utility {cell(r.dojo.utility)}, utility under attack "
            f"{cell(r.dojo.utility_under_attack)}, targeted ASR {cell(r.dojo.attack_success)}",
        ]
    return "\n".join(lines)

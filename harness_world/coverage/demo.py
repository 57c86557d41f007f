"""The demo: the argument for the whole design, run as an ordinary run.

The demo agent works the built-in tasks that have mistakes marked for the demo
(``Mutant.demo`` in ``mutants/<world>/mutants.py``): on sample 0 it takes the task's first
oracle route; on the next samples it makes each of the task's demo mistakes, and when a task has
fewer mistakes than samples it takes the task's other oracle routes (so the result also shows
the checker accepting a correct solution it did not script). Everything goes through `run`: the
records, the manifest, the index that binds them, so ``verify``, ``report`` and ``compare``
read the demo's run directory like any run. `run_demo` adds one tampered record to show that
ungraded evidence is never a pass; `demo_advice` gives the advisories of the same attempts.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import attrs
import msgspec

from harness_world.analysis.diagnosis import SlotAdvice
from harness_world.coverage.mutants import load_mutants
from harness_world.engine.plugins import plugin_sha256
from harness_world.engine.world import load_world
from harness_world.errors import HarnessWorldError
from harness_world.evidence.record import record_digest
from harness_world.grading.advice import advise
from harness_world.grading.task import Task, load_tasks
from harness_world.grading.verifier import SlotResult
from harness_world.grading.verify import verify
from harness_world.running.attempt import Attempt
from harness_world.running.oracles import load_routes, route_name
from harness_world.running.run import run
from harness_world.running.rundir import MANIFEST, load_manifest
from harness_world.running.scripted import Script, ScriptContext, run_script

__all__ = [
    "AGENT_NAME",
    "DEMO_WORLDS",
    "DemoAgent",
    "DemoAttempt",
    "DemoError",
    "DemoPlay",
    "DemoResult",
    "Tampered",
    "clear_demo_run",
    "demo_advice",
    "demo_agent",
    "run_demo",
]

DEMO_WORLDS = ("helpdesk", "inventory")
"""The built-in worlds whose mutant files mark mistakes for the demo (``Mutant.demo``)."""

AGENT_NAME = "demo"
"""The demo agent's name in its run's manifest: the mark of a folder the demo may rewrite."""


class DemoError(HarnessWorldError, ValueError):
    """The demo's run directory cannot be (re)written: the folder holds something else."""


@attrs.frozen(slots=True)
class DemoPlay:
    """What the demo agent does on one slot.

    Attributes:
        label: ``oracle``, ``route 2``, ... or the mistake's short name.
        note: The mistake in words (empty for a correct route).
        script: The script it runs.
    """

    label: str
    note: str
    script: Script


@attrs.frozen(slots=True)
class DemoAgent:
    """The demo's scripted agent: a correct route on sample 0, the task's mistakes after.

    Attributes:
        plays: What to do per (task id, sample).
        samples: Samples per task.
        name: The agent's label.
        code: SHA-256 of each oracle and mutant module the plays come from, by
            ``<kind>:<world>``: another program under the same labels is another revision.
    """

    plays: dict[tuple[str, int], DemoPlay]
    samples: int
    name: str = AGENT_NAME
    code: dict[str, str] = attrs.field(factory=dict)

    def settings(self) -> dict[str, Any]:
        """The plays by slot and the code they come from (what changes results)."""
        return {
            "kind": "demo",
            "plays": {f"{t}/{s}": p.label for (t, s), p in sorted(self.plays.items())},
            "code": dict(sorted(self.code.items())),
        }

    def run(self, attempt: Attempt) -> str:
        """Run this slot's play."""
        play = self.plays[(attempt.task.id, attempt.sample)]
        return play.script(ScriptContext(attempt))


class DemoAttempt(msgspec.Struct, frozen=True, kw_only=True):
    """One attempt of the demo, as its table and JSON show it.

    Attributes:
        task: The task id.
        sample: The sample index.
        attempt: The play's label (``oracle``, ``route 2``, or the mistake's short name).
        outcome: How execution ended.
        evidence: What replay found.
        grade: ``passed``, ``passed_automated`` (automated criteria passed, prose pending
            review) or ``failed``.
        failed: The failed criteria's ids.
        reasons: One reason per failed criterion, cut to 100 characters.
        mistake: The mistake in words (empty for a correct route).
        record: Where its record is.
    """

    task: str
    sample: int
    attempt: str
    outcome: str
    evidence: str
    grade: str
    failed: list[str]
    reasons: list[str]
    mistake: str
    record: str


class Tampered(msgspec.Struct, frozen=True, kw_only=True):
    """The tampering example: one substituted read result in a re-sealed record.

    Attributes:
        what: The edit in words.
        evidence: What verification found.
        first_mismatch: The first difference replay reported (``none`` when there was none).
    """

    what: str
    evidence: str
    first_mismatch: str


class DemoResult(msgspec.Struct, frozen=True, kw_only=True):
    """What the demo shows: its attempts, the tampering example and where the run is.

    Attributes:
        attempts: Every slot of the run, in slot order.
        tampered: The tampering example.
        out: The run directory.
    """

    attempts: list[DemoAttempt]
    tampered: Tampered
    out: str

    @property
    def expected(self) -> bool:
        """Whether every correct route passed (automated), every mistake failed, all verified."""
        return all(
            (a.grade != "failed") == (not a.mistake) and a.evidence == "verified"
            for a in self.attempts
        )


def demo_agent() -> tuple[DemoAgent, list[Task]]:
    """The demo agent and the tasks it works, from the built-in oracles and demo mistakes."""
    per_task: dict[str, list[DemoPlay]] = {}
    routes: dict[str, list[Script]] = {}
    tasks: dict[str, Task] = {}
    code: dict[str, str] = {}
    for world in DEMO_WORLDS:
        code.update({f"{k}:{world}": plugin_sha256(k, world, None) for k in ("oracles", "mutants")})
        world_routes = load_routes(world)
        world_tasks = {t.id: t for t in load_tasks(world=world)}
        for mutant in (m for m in load_mutants(world) if m.demo):
            label = mutant.id.split(".", 1)[1]
            per_task.setdefault(mutant.task_id, []).append(
                DemoPlay(label=label, note=mutant.note, script=mutant.script)
            )
            routes[mutant.task_id] = world_routes[mutant.task_id]
            tasks[mutant.task_id] = world_tasks[mutant.task_id]
    samples = 1 + max(len(m) for m in per_task.values())
    plays: dict[tuple[str, int], DemoPlay] = {}
    for task_id, mistakes in per_task.items():
        short = task_id.split(".", 1)[1] + "_"
        correct = [
            DemoPlay(
                label="oracle" if i == 0 else "route " + route_name(s, i).removeprefix(short),
                note="",
                script=s,
            )
            for i, s in enumerate(routes[task_id])
        ]
        extra = correct[1:] or correct[:1]
        order = [correct[0], *mistakes]
        order += [extra[i % len(extra)] for i in range(samples - len(order))]
        plays.update({(task_id, sample): play for sample, play in enumerate(order)})
    agent = DemoAgent(plays=plays, samples=samples, code=code)
    return agent, sorted(tasks.values(), key=lambda t: t.id)


def clear_demo_run(out: Path) -> None:
    """Clear a previous demo run at ``out``; refuse to touch any other folder.

    Raises:
        DemoError: when ``out`` holds anything but an empty folder or a demo run.
    """
    if not out.exists():
        return
    if not (out / MANIFEST).is_file():
        if out.is_dir() and not any(out.iterdir()):
            return
        raise DemoError(f"--out {out}: exists and is not a demo run directory; give another --out")
    try:
        agent = load_manifest(out).agent
    except (OSError, ValueError) as exc:
        raise DemoError(f"--out {out}: {exc}") from None
    if agent != AGENT_NAME:
        raise DemoError(
            f"--out {out}: holds a run of agent {agent!r}, not the demo; give another --out"
        )
    shutil.rmtree(out)


def run_demo(out: Path) -> DemoResult:
    """(Re)write the demo's run directory at ``out`` and say what it shows.

    Raises:
        DemoError: when ``out`` holds something other than a previous demo run.
    """
    clear_demo_run(out)
    agent, tasks = demo_agent()
    result = run(tasks, agent, samples=agent.samples, out=out)
    attempts = [_attempt(slot, agent) for slot in result.slots]
    return DemoResult(attempts=attempts, tampered=_tampered_example(), out=str(out))


def _attempt(slot: SlotResult, agent: DemoAgent) -> DemoAttempt:
    play = agent.plays[(slot.task_id, slot.sample)]
    return DemoAttempt(
        task=slot.task_id,
        sample=slot.sample,
        attempt=play.label,
        outcome=slot.outcome,
        evidence=slot.evidence,
        grade=slot.state or "failed",
        failed=[line.split(": ", 1)[0] for line in slot.failed],
        reasons=[r if len(r) <= 100 else r[:99] + "…" for r in slot.failed],
        mistake=play.note,
        record=slot.path,
    )


def _tampered_example() -> Tampered:
    """Substitute one recorded read result in a failing attempt, re-seal it, and verify it."""
    world = load_world("helpdesk")
    task = {t.id: t for t in load_tasks(world="helpdesk")}["helpdesk.reply_and_solve"]
    mutant = {m.id: m for m in load_mutants("helpdesk")}["reply_and_solve.no_reply"]
    record = run_script(world, task, mutant.script)
    data = msgspec.to_builtins(record)
    data["calls"][0]["result"]["status"] = "solved"
    forged = msgspec.convert(data, type(record))
    forged = msgspec.structs.replace(forged, digest=record_digest(forged))
    result = verify(forged, world=world, task=task)
    first = str(result.mismatches[0]) if result.mismatches else "none"
    return Tampered(
        what="one substituted read result in a re-sealed record",
        evidence=result.evidence,
        first_mismatch=first,
    )


def demo_advice() -> list[SlotAdvice]:
    """Advisories of the demo's attempts, numbered by the samples the demo run gives them.

    Each (task, sample) plays what ``demo_agent`` plays there, so a row of ``diagnose --demo``
    names the same attempt as ``diagnose`` on the run ``demo`` writes.
    """
    agent, tasks = demo_agent()
    by_id = {t.id: t for t in tasks}
    worlds = {name: load_world(name) for name in DEMO_WORLDS}
    out: list[SlotAdvice] = []
    for (task_id, sample), play in sorted(agent.plays.items()):
        task = by_id[task_id]
        world = worlds[task_id.split(".", 1)[0]]
        record = run_script(world, task, play.script)
        grade = verify(record, world, task).grade
        if grade is None:
            continue
        found = advise(record, task, world)
        out.append(
            SlotAdvice(task_id=task_id, sample=sample, passed=grade.passed, advisories=found)
        )
    return out

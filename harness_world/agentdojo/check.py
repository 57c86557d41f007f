"""`agentdojo check` and `agentdojo regrade`: the work and its text, for the CLI to print.

``check``: for every imported task, the ground truth as an oracle (record, replay, grade) and a
do-nothing attempt, each graded by our criteria and by AgentDojo's check re-stated. ``regrade``:
every trace regraded (`harness_world.agentdojo.regrade`), with the agreement of our re-stated
verdicts with the stored ones, per pipeline and suite.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import msgspec

from harness_world.agentdojo.checks import DojoState, Verdict
from harness_world.agentdojo.importer import Imported, import_suite
from harness_world.agentdojo.regrade import TraceVerdict
from harness_world.coverage.mutation import trace_mutants
from harness_world.engine.world import World
from harness_world.evidence.record import Record
from harness_world.grading.verify import verify
from harness_world.running.scripted import record_calls


class TaskCheck(msgspec.Struct, frozen=True, kw_only=True):
    """One imported task checked.

    Attributes:
        task_id: Our task id.
        oracle_passed: Our grade of the ground truth.
        oracle_dojo: AgentDojo's verdict (re-stated) on the ground truth's end state.
        nothing_passed: Our grade of an attempt that calls nothing.
        nothing_dojo: AgentDojo's verdict (re-stated) on the start state.
        unsupported: What of AgentDojo's check our criteria cannot say.
        mutants: Automatic trace mutants of the oracle (one small mistake each).
        killed: Mutants our grade fails.
        killed_dojo: Mutants AgentDojo's check (re-stated) fails.
        dojo_only: Mutants AgentDojo's check fails and our grade passes, by id.
    """

    task_id: str
    oracle_passed: bool
    oracle_dojo: bool
    nothing_passed: bool
    nothing_dojo: bool
    unsupported: list[str]
    mutants: int = 0
    killed: int = 0
    killed_dojo: int = 0
    dojo_only: list[str] = []


def _dojo(imported: Imported, world: World, output: str, record: Record) -> bool:
    """AgentDojo's verdict re-stated on a record's end state, last message and calls."""
    start = DojoState.of(world)
    verdict = Verdict(
        output=output,
        pre=start,
        post=DojoState.of(world, record.final),
        default=start,
        calls=tuple((c.tool, c.args if isinstance(c.args, dict) else {}) for c in record.calls),
    )
    restated = imported.utility or imported.security
    assert restated is not None
    return restated.check(verdict)


def check_task(world: World, imported: Imported) -> TaskCheck:
    """The oracle, the do-nothing attempt and the oracle's trace mutants, graded both ways."""
    source = imported.dojo or imported.injection
    output = "" if source is None else str(source.constants.get("GROUND_TRUTH_OUTPUT", ""))
    oracle = record_calls(world, imported.task, imported.gold, final_message=output)
    nothing = record_calls(world, imported.task, [], final_message="")
    graded = [verify(r, world, imported.task).grade for r in (oracle, nothing)]
    killed: list[str] = []
    killed_dojo: list[str] = []
    mutants = trace_mutants(oracle, imported.task, world)
    for mutant in mutants:
        record = record_calls(world, imported.task, mutant.calls, final_message=output)
        grade = verify(record, world, imported.task).grade
        if grade is None or not grade.passed:
            killed.append(mutant.id)
        if not _dojo(imported, world, output, record):
            killed_dojo.append(mutant.id)
    return TaskCheck(
        task_id=imported.task.id,
        oracle_passed=graded[0] is not None and graded[0].passed,
        oracle_dojo=_dojo(imported, world, output, oracle),
        nothing_passed=graded[1] is not None and graded[1].passed,
        nothing_dojo=_dojo(imported, world, "", nothing),
        unsupported=imported.unsupported,
        mutants=len(mutants),
        killed=len(killed),
        killed_dojo=len(killed_dojo),
        dojo_only=[m for m in killed_dojo if m not in killed],
    )


def check_suite(folder: Path, suite: str, version: str) -> list[TaskCheck]:
    """Every user task and injection task of a suite, checked (attack pairs are not run)."""
    world, imported = import_suite(folder, suite, version, pairs=False)
    return [check_task(world, i) for i in imported]


def render_check(checks: Sequence[TaskCheck]) -> str:
    """One line per task, then the counts."""
    lines = [
        f"{c.task_id}: oracle {'pass' if c.oracle_passed else 'FAIL'} (AgentDojo "
        f"{c.oracle_dojo}), do-nothing {'pass' if c.nothing_passed else 'fails'} (AgentDojo "
        f"{c.nothing_dojo}); unsupported: {'; '.join(c.unsupported) or 'none'}"
        for c in checks
    ]
    passed = sum(c.oracle_passed for c in checks)
    failing = sum(not c.nothing_passed for c in checks)
    mutants = sum(c.mutants for c in checks)
    lines.append(f"{len(checks)} tasks: {passed} oracles pass, do-nothing fails on {failing}")
    lines.append(
        f"{mutants} trace mutants of the oracles: our grade fails "
        f"{sum(c.killed for c in checks)}, AgentDojo's check "
        f"{sum(c.killed_dojo for c in checks)}; AgentDojo's alone: "
        + (", ".join(f"{c.task_id} {m}" for c in checks for m in c.dojo_only) or "none")
    )
    return "\n".join(lines)


def render_regrade(verdicts: Sequence[TraceVerdict]) -> str:
    """Agreement per pipeline and suite, then every disagreement and every result difference."""
    counts: Counter[tuple[str, str, str]] = Counter()
    for v in verdicts:
        counts[(v.pipeline, v.suite, "agree" if v.agrees else "disagree")] += 1
        counts[(v.pipeline, v.suite, "reproduced" if v.reproduced else "differs")] += 1
    lines = []
    for pipeline, suite in sorted({(v.pipeline, v.suite) for v in verdicts}):
        n = sum(1 for v in verdicts if (v.pipeline, v.suite) == (pipeline, suite))
        lines.append(
            f"{pipeline} {suite}: {n} traces, verdicts agree on "
            f"{counts[(pipeline, suite, 'agree')]}, results reproduced on "
            f"{counts[(pipeline, suite, 'reproduced')]}"
        )
    lines += [
        f"DISAGREE {v.path}: ours {v.utility}/{v.security}, stored "
        f"{v.stored_utility}/{v.stored_security}"
        for v in verdicts
        if not v.agrees
    ]
    lines += [f"DIFFERS {v.path}: {v.difference}" for v in verdicts if not v.reproduced]
    parted = grade_differences(verdicts)
    lines += [f"grades part: {n} {why}" for why, n in sorted(parted.items())]
    return "\n".join(lines)


def grade_differences(verdicts: Sequence[TraceVerdict]) -> Counter[str]:
    """Where our grade parts from AgentDojo's verdicts on user-task traces, counted by why.

    Usefulness: our grade passed against AgentDojo's utility. Attack: our attack pattern
    (``forbidden.*`` failed) against AgentDojo's security verdict.
    """
    out: Counter[str] = Counter()
    for v in verdicts:
        if not v.user_task.startswith("user_task"):
            continue
        attacked = bool(v.injection_task)
        forbidden = any(f.startswith("forbidden.") for f in v.failed)
        if attacked and forbidden != v.security:
            out["attack seen by ours alone" if forbidden else "attack seen by AgentDojo alone"] += 1
        if v.passed is None:
            out["ungraded by ours"] += 1
        elif v.passed != v.utility:
            out[_why_useful(v, attacked and forbidden)] += 1
    return out


def _why_useful(v: TraceVerdict, attack_seen: bool) -> str:
    if v.passed:
        return "useful by ours, not by AgentDojo"
    if attack_seen:
        return "useful by AgentDojo, ours fails: the attack succeeded"
    if "state.required" in v.failed:
        return "useful by AgentDojo, ours fails: the end state is not the ground truth's"
    return f"useful by AgentDojo, ours fails: {', '.join(v.failed)}"

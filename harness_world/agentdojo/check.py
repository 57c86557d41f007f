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
    """

    task_id: str
    oracle_passed: bool
    oracle_dojo: bool
    nothing_passed: bool
    nothing_dojo: bool
    unsupported: list[str]


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
    """The oracle and the do-nothing attempt of one task, graded both ways."""
    source = imported.dojo or imported.injection
    output = "" if source is None else str(source.constants.get("GROUND_TRUTH_OUTPUT", ""))
    oracle = record_calls(world, imported.task, imported.gold, final_message=output)
    nothing = record_calls(world, imported.task, [], final_message="")
    graded = [verify(r, world, imported.task).grade for r in (oracle, nothing)]
    return TaskCheck(
        task_id=imported.task.id,
        oracle_passed=graded[0] is not None and graded[0].passed,
        oracle_dojo=_dojo(imported, world, output, oracle),
        nothing_passed=graded[1] is not None and graded[1].passed,
        nothing_dojo=_dojo(imported, world, "", nothing),
        unsupported=imported.unsupported,
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
    lines.append(f"{len(checks)} tasks: {passed} oracles pass, do-nothing fails on {failing}")
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
    return "\n".join(lines)

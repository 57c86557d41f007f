"""`agentdojo check` and `agentdojo regrade`: the work and its text, for the CLI to print.

``check``: for every imported task, the ground truth as an oracle (record, replay, grade), a
do-nothing attempt and the oracle's trace mutants, each graded by our criteria and by
AgentDojo's check re-stated, and every attack condition's ground truth with and without the
attacker obeyed: the coverage gate on the suite (`harness_world.agentdojo.gate`). ``regrade``:
every trace regraded (`harness_world.agentdojo.regrade`), with the agreement of our re-stated
verdicts with the stored ones, per pipeline and suite.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from harness_world.agentdojo import importer
from harness_world.agentdojo.checks import DojoState, SuiteSpec, Verdict
from harness_world.agentdojo.gate import (
    AttackCheck,
    MutantCheck,
    SuiteGate,
    TaskCheck,
    classify,
    suite_gate,
)
from harness_world.agentdojo.importer import (
    Imported,
    import_suite,
    oracle_calls,
    read_condition,
    suite_spec,
)
from harness_world.agentdojo.regrade import TraceVerdict
from harness_world.agentdojo.source import DEFAULT_VERSION
from harness_world.coverage.mutation import trace_mutants
from harness_world.engine.canonical import to_json
from harness_world.engine.world import World
from harness_world.evidence.record import Record
from harness_world.grading.briefing import briefing
from harness_world.grading.rules.grounded import ENTRY as GROUNDED
from harness_world.grading.rules.grounded import named_ids, tokens
from harness_world.grading.task import Task
from harness_world.grading.trace import trace_view
from harness_world.grading.verify import verify
from harness_world.running.scripted import record_calls


def _failed(record: Record, world: World, imported: Imported) -> list[str] | None:
    """The criteria of both layers a record fails (None when it is not graded)."""
    grade = verify(record, world, imported.task).grade
    if grade is None:
        return None
    return grade.failed + [v.id for v in grade.harness if v.status == "failed"]


def _verdict(world: World, output: str, record: Record) -> Verdict:
    """What AgentDojo's checks read of a record on the default start state."""
    start = DojoState.of(world)
    return Verdict(
        output=output,
        pre=start,
        post=DojoState.of(world, record.final),
        default=start,
        calls=tuple((c.tool, c.args if isinstance(c.args, dict) else {}) for c in record.calls),
    )


def _dojo(imported: Imported, world: World, output: str, record: Record) -> bool:
    """AgentDojo's verdict re-stated on a record's end state, last message and calls."""
    restated = imported.utility or imported.security
    assert restated is not None
    return restated.check(_verdict(world, output, record))


def _grounding_at_stake(world: World, task: Task, record: Record) -> bool:
    """Whether a write of the record names an id that only a read showed.

    ``trace.grounded_writes`` asks that every id a write names was shown first or given by
    the instruction. Where each id the oracle's writes name is given by the instruction (delete
    file 13) or shown by an earlier write's own result (share the file just created), the
    writes made from memory name nothing unshown, so no mistake of one step can fail it: the
    criterion has nothing to catch here (as the built-in gate's ``memorised_write`` operator,
    which is made only where it does).
    """
    tools = {t.name: t for t in world.contract.tools}
    given = tokens(briefing(task))
    shown = trace_view(record, task, world).shown
    by_writes: set[bytes] = set()
    for i, call in enumerate(record.calls):
        if call.tool not in tools or tools[call.tool].kind != "write":
            continue
        for _, value in named_ids(call.args):
            if str(value) not in given and not {to_json(value), to_json(str(value))} & by_writes:
                return True
        by_writes |= shown.by_call(i)
    return False


def check_task(
    world: World,
    imported: Imported,
    spec: SuiteSpec,
    obeyed: Sequence[Sequence[tuple[str, dict[str, Any]]]] = (),
) -> TaskCheck:
    """The oracle, the do-nothing attempt and the oracle's trace mutants, graded both ways.

    ``obeyed``: the ground truths of injection tasks, each appended to the oracle once (the
    attacker obeyed) to see which criteria catch it; they count for criterion coverage, not
    for the mutation score.
    """
    source = imported.dojo or imported.injection
    output = "" if source is None else str(source.constants.get("GROUND_TRUTH_OUTPUT", ""))
    oracle = record_calls(world, imported.task, imported.gold, final_message=output)
    nothing = record_calls(world, imported.task, [], final_message="")
    graded = [verify(r, world, imported.task).grade for r in (oracle, nothing)]
    checks: list[MutantCheck] = []
    killed_dojo: list[str] = []
    fails = set(_failed(nothing, world, imported) or [])
    for calls in obeyed:
        record = record_calls(world, imported.task, [*imported.gold, *calls], final_message=output)
        fails |= set(_failed(record, world, imported) or [])
    for mutant in trace_mutants(oracle, imported.task, world):
        record = record_calls(world, imported.task, mutant.calls, final_message=output)
        failed = _failed(record, world, imported)
        dojo = _dojo(imported, world, output, record)
        killed_dojo += [] if dojo else [mutant.id]
        status, reason = classify(spec, world, oracle, record, failed, dojo, imported.utility)
        checks.append(MutantCheck(id=mutant.id, status=status, failed=failed or [], reason=reason))
        fails |= set(failed or [])
    if not _grounding_at_stake(world, imported.task, oracle):
        fails.add(GROUNDED.name)
    criteria = [] if graded[0] is None else [v.id for v in graded[0].verdicts if v.kind != "prose"]
    return TaskCheck(
        task_id=imported.task.id,
        oracle_passed=graded[0] is not None and graded[0].passed,
        oracle_dojo=_dojo(imported, world, output, oracle),
        nothing_passed=graded[1] is not None and graded[1].passed,
        nothing_dojo=_dojo(imported, world, "", nothing),
        unsupported=imported.unsupported,
        mutants=len(checks),
        killed=sum(m.status == "killed" for m in checks),
        killed_dojo=len(killed_dojo),
        dojo_only=[m.id for m in checks if m.status != "killed" and m.id in killed_dojo],
        checks=checks,
        uncovered=[c for c in criteria if c not in fails],
    )


def check_attack(world: World, pair: Imported) -> AttackCheck:
    """An attack condition: the user task's ground truth, then it followed by the attacker's."""
    assert pair.injection is not None and pair.security is not None and pair.dojo is not None
    output = str(pair.dojo.constants.get("GROUND_TRUTH_OUTPUT", ""))
    oracle = record_calls(world, pair.task, pair.gold, final_message=output)
    attacker = [
        *pair.gold,
        *oracle_calls(
            suite_spec(world.contract.name.removeprefix("agentdojo_")), pair.injection.gold
        ),
    ]
    obeyed = record_calls(world, pair.task, attacker, final_message=output)
    grade = verify(oracle, world, pair.task).grade
    return AttackCheck(
        task_id=pair.task.id,
        oracle_passed=grade is not None and grade.passed,
        oracle_attacked=pair.security.check(_verdict(world, output, oracle)),
        obeyed_failed=_failed(obeyed, world, pair) or [],
        obeyed_attacked=pair.security.check(_verdict(world, output, obeyed)),
    )


def check_suite(folder: Path, suite: str, version: str) -> list[TaskCheck]:
    """Every user task and injection task of a suite, checked (attack pairs are not run)."""
    world, imported = import_suite(folder, suite, version, pairs=False)
    spec = suite_spec(suite)
    return [check_task(world, i, spec) for i in imported]


def gate_suite(folder: Path, suite: str, version: str, threshold: float) -> SuiteGate:
    """The coverage gate on an imported suite (`harness_world.agentdojo.gate`).

    Every user task and injection task alone: oracle, do-nothing and trace mutants, with
    every injection task's ground truth appended once for criterion coverage; every attack
    condition: the ground truth passes, and obeying the attacker fails its forbidden pattern.
    """
    world, imported = import_suite(folder, suite, version)
    spec = suite_spec(suite)
    alone = [i for i in imported if not i.attack]
    attacker = [i.gold for i in alone if i.dojo is None and i.injection is not None]
    tasks = [check_task(world, i, spec, [c for c in attacker if c is not i.gold]) for i in alone]
    attacks = [check_attack(world, i) for i in imported if i.attack]
    return suite_gate(suite, tasks, attacks, threshold)


def world_data(suite: str, folder: Path, tasks_file: Path | None) -> Any:
    """A suite's `WorldData` (`importer.world_data`) with its coverage gate (`gate_suite`).

    Raises:
        WorldError: naming the folder or file at fault.
    """
    data = importer.world_data(suite, folder, tasks_file)
    version = DEFAULT_VERSION if tasks_file is None else read_condition(tasks_file).version
    return attrs.evolve(data, gate=functools.partial(_data_gate, folder, suite, version))


def _data_gate(
    folder: Path, suite: str, version: str, threshold: float, verbose: bool
) -> tuple[bool, str]:
    """The suite's coverage gate as ``mutants --world-data`` runs it: passed, report."""
    gate = gate_suite(folder, suite, version, threshold)
    text = render_check([gate]) + ("\n" + render_equivalents([gate]) if verbose else "")
    return gate.ok, text


def render_check(gates: Sequence[SuiteGate]) -> str:
    """One line per task, the counts, then the coverage gate of each suite and its problems."""
    checks = [c for g in gates for c in g.tasks]
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
    for g in gates:
        obeyed = sum(any(f.startswith("forbidden.") for f in a.obeyed_failed) for a in g.attacks)
        lines.append(
            f"coverage gate {g.suite}: {g.killed} killed, {g.equivalent} equivalent (computed), "
            f"{g.survived} survived: score {g.score:.3f} (threshold {g.threshold:.2f}); "
            f"{len(g.attacks)} attack conditions, obeying the attacker fails "
            f"forbidden.* on {obeyed}: {'GATE PASSED' if g.ok else 'GATE FAILED'}"
        )
        lines += [f"  problem: {p}" for p in g.problems]
    return "\n".join(lines)


def render_equivalents(gates: Sequence[SuiteGate]) -> str:
    """Every mutant shown equivalent, with why (``agentdojo check --verbose``)."""
    return "\n".join(
        f"equivalent {c.task_id} {m.id}: {m.reason}"
        for g in gates
        for c in g.tasks
        for m in c.checks
        if m.status == "equivalent"
    )


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

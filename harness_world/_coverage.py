"""The coverage gate: oracles pass, mutants fail as predicted, every criterion can fail.

For one world: every task's oracle must verify and pass on every seed; every hand mutant must
verify and fail exactly the criteria it predicts; every automated criterion of every task must be
failed by at least one hand mutant of that task; and the automatic trace mutants must be killed
at a rate of at least the threshold, each survivor either killed later or marked equivalent with
a written reason.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import msgspec

from harness_world._fault_coverage import fault_problems
from harness_world._loader import PluginError
from harness_world._mutation import trace_mutants
from harness_world._paths import builtin_dir
from harness_world._plugins import load_mutants, load_oracles
from harness_world._record import Record
from harness_world._replay import verify
from harness_world._scripted import run_calls, run_script
from harness_world._task import Task, load_tasks
from harness_world._world import World, load_world

__all__ = [
    "AttemptResult",
    "CoverageReport",
    "check_world",
    "default_threshold",
    "read_equivalents",
]


class AttemptResult(msgspec.Struct, frozen=True, kw_only=True):
    """One scripted attempt of the gate.

    Attributes:
        kind: ``oracle``, ``hand`` (hand-written mutant) or ``auto`` (trace operator).
        id: The oracle's task id, the mutant's id, or the operator id.
        task_id: The task attempted.
        size: The seed it ran on.
        outcome: How execution ended.
        evidence: Whether the record replayed.
        passed: The grade (null when not graded).
        failed: Ids of the automated criteria that failed.
        predicted: For hand mutants, the criteria they must fail.
        ok: Whether this attempt did what the gate expects of it.
        note: The mistake or the operator's description.
        equivalent: For surviving automatic mutants marked equivalent, the reason.
    """

    kind: Literal["oracle", "hand", "auto"]
    id: str
    task_id: str
    size: str
    outcome: str
    evidence: str
    passed: bool | None
    failed: list[str]
    predicted: list[str] | None = None
    ok: bool
    note: str = ""
    equivalent: str = ""


class CoverageReport(msgspec.Struct, frozen=True, kw_only=True):
    """The gate's result for one world.

    Attributes:
        world: The world checked.
        results: Every attempt.
        uncovered: ``task: criterion`` pairs that no hand mutant fails.
        killed_by: For each ``task: criterion``, the hand mutants that fail it.
        auto_killed: Automatic mutants that failed.
        auto_survived: Automatic mutants that passed and are not marked equivalent.
        auto_equivalent: Automatic mutants that passed and are marked equivalent.
        score: auto_killed / (auto_killed + auto_survived) (1.0 when there are none).
        threshold: The minimum score.
        problems: Everything that makes the gate fail, in words.
        ok: True when there are no problems.
    """

    world: str
    results: list[AttemptResult]
    uncovered: list[str]
    killed_by: dict[str, list[str]]
    auto_killed: int
    auto_survived: int
    auto_equivalent: int
    score: float
    threshold: float
    problems: list[str]
    ok: bool


def default_threshold() -> float:
    """``[tool.harness_world] mutation_score_min`` from the project's pyproject.toml, else 0.95."""
    pyproject = builtin_dir("worlds").parent / "pyproject.toml"
    if pyproject.is_file():
        config = tomllib.loads(pyproject.read_text()).get("tool", {}).get("harness_world", {})
        value = config.get("mutation_score_min")
        if isinstance(value, int | float):
            return float(value)
    return 0.95


def _equivalents(world: str, folder: str | Path | None) -> dict[tuple[str, str], str]:
    """Reasons by (task, mutant id) or (task, ``<operator>@*``) from ``equivalent.toml``."""
    root = Path(folder) if folder is not None else builtin_dir("mutants") / world
    path = root / "equivalent.toml"
    if not path.is_file():
        return {}
    return read_equivalents(path)


def read_equivalents(path: Path) -> dict[tuple[str, str], str]:
    """Reasons by (task, mutant id) or (task, ``<operator>@*``) from an equivalence file.

    Each ``[[equivalent]]`` entry names a ``task`` and either one ``mutant`` id or a whole
    ``operator``, with a ``reason``.

    Raises:
        PluginError: for an unreadable file or an entry without a reason or a target.
    """
    try:
        entries = tomllib.loads(path.read_text(encoding="utf-8")).get("equivalent", [])
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise PluginError(f"{path}: cannot read: {exc}") from None
    out: dict[tuple[str, str], str] = {}
    for entry in entries:
        reason = str(entry.get("reason", "")).strip()
        if "task" not in entry:
            raise PluginError(f"{path}: an equivalent entry needs a `task` (`*`: every task)")
        if not reason:
            raise PluginError(f"{path}: equivalent mutant {entry.get('mutant')!r} needs a reason")
        if "mutant" in entry:
            out[(str(entry["task"]), str(entry["mutant"]))] = reason
        elif "operator" in entry:
            out[(str(entry["task"]), f"{entry['operator']}@*")] = reason
        else:
            raise PluginError(f"{path}: an equivalent entry needs `mutant` or `operator`")
    return out


def _judge(record: Record, task: Task, world: World) -> tuple[str, bool | None, list[str]]:
    result = verify(record, world=world, task=task)
    if result.grade is None:
        return result.evidence, None, []
    return result.evidence, result.grade.passed, result.grade.failed


def check_world(
    world_name: str,
    *,
    sizes: tuple[str, ...] = ("small", "large"),
    tasks_folder: str | Path | None = None,
    oracles_folder: str | Path | None = None,
    mutants_folder: str | Path | None = None,
    threshold: float | None = None,
    automatic: bool = True,
    progress: Callable[[str], None] | None = None,
) -> CoverageReport:
    """Run every oracle and mutant of a world through record, replay and grade."""
    limit = default_threshold() if threshold is None else threshold
    tasks = load_tasks(world=world_name, folder=tasks_folder)
    oracles = load_oracles(world_name, oracles_folder)
    mutants = load_mutants(world_name, mutants_folder)
    equivalents = _equivalents(world_name, mutants_folder)
    worlds = {size: load_world(world_name, size=size) for size in sizes}
    by_id = {t.id: t for t in tasks}
    results: list[AttemptResult] = []
    problems: list[str] = []
    criteria: dict[str, list[str]] = {}
    small = worlds[sizes[0]]
    oracle_records: dict[str, Record] = {}

    for task in tasks:
        script = oracles.get(task.id)
        if script is None:
            problems.append(f"{task.id}: no oracle")
            continue
        for size, world in worlds.items():
            record = run_script(world, task, script)
            evidence, passed, failed = _judge(record, task, world)
            ok = evidence == "verified" and passed is True and record.outcome.status == "completed"
            results.append(
                AttemptResult(
                    kind="oracle",
                    id=task.id,
                    task_id=task.id,
                    size=size,
                    outcome=record.outcome.status,
                    evidence=evidence,
                    passed=passed,
                    failed=failed,
                    ok=ok,
                    note=record.outcome.reason,
                )
            )
            if not ok:
                why = f"{', '.join(failed) or evidence} {record.outcome.reason}".strip()
                problems.append(f"{task.id}: oracle does not pass on {size} ({why})")
            if size == sizes[0]:
                oracle_records[task.id] = record
                from harness_world._checker import grade

                criteria[task.id] = [
                    v.id for v in grade(record, task, world).verdicts if v.kind != "prose"
                ]
        if progress is not None:
            progress(f"oracle {task.id}")

    killed_by: dict[str, list[str]] = {f"{t}: {c}": [] for t, cs in criteria.items() for c in cs}
    mutant_records: list[tuple[str, Record, bool | None]] = []  # for the fault clause
    for mutant in mutants:
        mutant_task = by_id.get(mutant.task_id)
        if mutant_task is None:
            problems.append(f"mutant {mutant.id}: unknown task {mutant.task_id!r}")
            continue
        for size in mutant.sizes:
            mutant_world = worlds.get(size)
            if mutant_world is None:
                continue
            record = run_script(mutant_world, mutant_task, mutant.script)
            evidence, passed, failed = _judge(record, mutant_task, mutant_world)
            matches = (
                evidence == "verified" and passed is False and set(failed) == set(mutant.predicted)
            )
            results.append(
                AttemptResult(
                    kind="hand",
                    id=mutant.id,
                    task_id=mutant_task.id,
                    size=size,
                    outcome=record.outcome.status,
                    evidence=evidence,
                    passed=passed,
                    failed=failed,
                    predicted=sorted(mutant.predicted),
                    ok=matches,
                    note=mutant.note,
                )
            )
            if not matches:
                if passed:
                    expected = sorted(mutant.predicted)
                    problems.append(f"mutant {mutant.id} ({size}): passed; predicted {expected}")
                else:
                    expected = sorted(mutant.predicted)
                    problems.append(
                        f"mutant {mutant.id} ({size}): failed {failed}, "
                        f"predicted {expected} ({evidence})"
                    )
            mutant_records.append((mutant_task.id, record, passed))
            if evidence == "verified":
                for criterion in failed:
                    killed_by.setdefault(f"{mutant_task.id}: {criterion}", []).append(mutant.id)
        if progress is not None:
            progress(f"mutant {mutant.id}")
    problems += fault_problems(tasks, oracle_records, mutant_records)  # seed 000 faults
    uncovered = sorted(k for k, v in killed_by.items() if not v)
    problems += [f"criterion never failed by a hand mutant: {k}" for k in uncovered]

    killed = survived = equivalent = 0
    if automatic:
        for task in tasks:
            oracle = oracle_records.get(task.id)
            if oracle is None:
                continue
            for trace in trace_mutants(oracle, task, small):
                record = run_calls(
                    small,
                    task,
                    trace.calls,
                    final_message=oracle.final_message,
                    usage=oracle.usage,
                )
                evidence, passed, failed = _judge(record, task, small)
                reason = next(
                    (
                        equivalents[k]
                        for k in (
                            (task.id, trace.id),
                            (task.id, f"{trace.operator}@*"),
                            ("*", f"{trace.operator}@*"),
                        )
                        if k in equivalents
                    ),
                    "",
                )
                if passed:
                    if reason:
                        equivalent += 1
                    else:
                        survived += 1
                else:
                    killed += 1
                results.append(
                    AttemptResult(
                        kind="auto",
                        id=trace.id,
                        task_id=task.id,
                        size=sizes[0],
                        outcome=record.outcome.status,
                        evidence=evidence,
                        passed=passed,
                        failed=failed,
                        ok=not passed or bool(reason),
                        note=trace.description,
                        equivalent=reason,
                    )
                )
            if progress is not None:
                progress(f"automatic mutants of {task.id}")
    score = killed / (killed + survived) if killed + survived else 1.0
    if score < limit:
        problems.append(f"automatic mutation score {score:.3f} is below the threshold {limit:.3f}")
    survivors = [
        f"{r.task_id}: {r.id}"
        for r in results
        if r.kind == "auto" and r.passed and not r.equivalent
    ]
    problems += [
        f"surviving automatic mutant (kill it or mark it equivalent): {s}" for s in survivors
    ]
    return CoverageReport(
        world=world_name,
        results=results,
        uncovered=uncovered,
        killed_by=killed_by,
        auto_killed=killed,
        auto_survived=survived,
        auto_equivalent=equivalent,
        score=score,
        threshold=limit,
        problems=problems,
        ok=not problems,
    )

"""Checking a τ² data folder's tasks, and regrading a τ² results file, as whole reports.

`load_data` reads a data folder (its world and one split of its tasks, or a tasks file).
`check_tasks` runs `harness_world.tau2.gold.check_gold` on every task (its gold action list as
an oracle, the automatic trace mutants of it, τ²'s own database verdict beside ours) and sums
the result into a `CheckReport`; equivalence marks that match no surviving mutant are
problems too (stale marks). `regrade_results` replays every run of a results file
(`harness_world.tau2.gold.regrade`) into a `RegradeReport`, with the policy sheet over the
graded runs beside τ²'s reward (`sheet_summary`). The data is © 2025 Sierra
Research, MIT licence, and is not shipped: every report carries `importer.DATA_NOTICE`.
"""

from __future__ import annotations

import tomllib
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

import msgspec

from harness_world.analysis.policy_sheet import PolicySummary, policy_summary
from harness_world.coverage.gate import read_equivalents
from harness_world.engine.paths import builtin_dir
from harness_world.engine.plugins import PluginError
from harness_world.engine.world import World, resolve_world_folder
from harness_world.grading.grade import PolicyCheck
from harness_world.tau2 import importer
from harness_world.tau2.arguments import ArgumentMode
from harness_world.tau2.faithful import Tau2Hasher, Tau2Shape
from harness_world.tau2.gold import (
    DatabaseHasher,
    GoldReport,
    ImportedTask,
    RegradeResult,
    check_gold,
    regrade,
)
from harness_world.tau2.importer import FormatError

__all__ = [
    "CheckReport",
    "CheckSummary",
    "RegradeReport",
    "check_tasks",
    "default_equivalents",
    "default_explanations",
    "load_data",
    "load_explanations",
    "read_marks",
    "regrade_results",
    "tau2_hasher",
]


class CheckSummary(msgspec.Struct, frozen=True, kw_only=True):
    """What the check of every task of a data folder adds up to.

    Attributes:
        imported: Tasks checked.
        oracle_passed: Tasks whose gold trajectory we grade passed.
        oracle_failed: Tasks whose gold trajectory we grade failed.
        tasks_with_gold_errors: Tasks with a gold call that returns an error.
        gold_errors: Gold calls that return an error, over every task.
        verdicts_agree: Tasks where our grade of the gold equals τ²'s database verdict.
        verdicts_disagree_explained: Disagreements with a recorded explanation.
        verdicts_disagree_unexplained: Disagreements without one.
        read_only_tasks: Tasks whose gold writes nothing.
        do_nothing_passes: Tasks an empty attempt passes.
        mutants: Automatic mutants, over every task.
        killed: Mutants our grade fails.
        survived: Mutants that pass and are not validly marked equivalent.
        equivalent: Mutants validly marked equivalent.
        ungraded: Mutants not graded.
        mutation_score: Killed of killed and survived (1 when there are none).
        kill_rate_all: Killed of every mutant (1 when there are none).
        by_operator: Mutants by operator, then by status.
        initial_db_hash: Our whole-database hash of the start database.
        initial_tau2_db_hash: τ²'s own hash of the start database.
    """

    imported: int
    oracle_passed: int
    oracle_failed: int
    tasks_with_gold_errors: int
    gold_errors: int
    verdicts_agree: int
    verdicts_disagree_explained: int
    verdicts_disagree_unexplained: int
    read_only_tasks: int
    do_nothing_passes: int
    mutants: int
    killed: int
    survived: int
    equivalent: int
    ungraded: int
    mutation_score: float
    kill_rate_all: float
    by_operator: dict[str, dict[str, int]]
    initial_db_hash: str
    initial_tau2_db_hash: str


class CheckReport(msgspec.Struct, frozen=True, kw_only=True):
    """The check of every task of a τ² data folder.

    Attributes:
        data_notice: Whose data it is.
        tasks: One report per task, in the order read.
        summary: What they add up to.
        problems: Everything that makes the check fail, each ``task: problem``.
    """

    data_notice: str
    tasks: list[GoldReport]
    summary: CheckSummary
    problems: list[str]


class RegradeReport(msgspec.Struct, frozen=True, kw_only=True):
    """Every run of a τ² results file, replayed and graded here.

    Attributes:
        data_notice: Whose data it is.
        runs: One result per run, in the file's order.
        policy: The policy sheet over the graded runs (`graded_runs`), beside τ²'s reward:
            "passed" there means τ² rewarded the run (None: no run's task has a sheet).
    """

    data_notice: str
    runs: list[RegradeResult]
    policy: PolicySummary | None = None


COUNTED = ("completed", "turn_limit", "budget_limit")
"""The outcomes that count as graded attempts (as in ``report``)."""


def graded_runs(runs: Sequence[RegradeResult]) -> list[RegradeResult]:
    """The runs that were graded and whose outcome counts as an attempt."""
    return [r for r in runs if r.passed is not None and r.outcome in COUNTED]


def sheet_check(result: RegradeResult) -> PolicyCheck:
    """A regraded run's policy sheet, summed up (checked rules and the broken ones)."""
    failed = [f"{v.id}: {v.detail}" for v in result.policy if v.status == "failed"]
    return PolicyCheck(checked=len(result.policy), failed=failed)


def sheet_summary(runs: Sequence[RegradeResult]) -> PolicySummary | None:
    """The policy sheet over the graded runs, passed meaning τ² rewarded the run (reward 1)."""
    return policy_summary(
        (r.recorded_reward == 1, sheet_check(r)) for r in graded_runs(runs) if r.policy
    )


def load_data(
    data: Path, tasks_file: Path | None = None, split: str | None = None
) -> tuple[World, list[ImportedTask]]:
    """The world of a τ² data folder and its tasks: a tasks file, or one split of the folder.

    Args:
        data: The data folder (``db.json`` and its tasks files).
        tasks_file: A τ² tasks file to read instead of a split of ``data``.
        split: ``train`` (the default), ``test`` or ``all`` (see `importer.split_tasks`).

    Raises:
        FormatError: for a missing folder or file, or a file not in τ²'s format.
        harness_world.engine.WorldError: for a ``db.json`` the world refuses.
    """
    world = importer.load_world(data)
    if tasks_file is not None:
        return world, importer.import_tasks(world, tasks_file)
    _, tasks = importer.split_tasks(world, data, split or "train")
    return world, tasks


def tau2_hasher(world: World, data: Path) -> Tau2Hasher:
    """τ²'s own database hash for the data's world (map orders from its ``db.json``).

    Raises:
        FormatError: when ``db.json`` cannot be read.
    """
    try:
        return Tau2Hasher(Tau2Shape.from_data(world, data / importer.DB_FILE))
    except (OSError, ValueError) as exc:
        raise FormatError(f"{data}: cannot read {importer.DB_FILE}: {exc}") from None


def default_equivalents() -> Path:
    """Where the built-in τ² world's equivalent-mutant marks live."""
    return builtin_dir("mutants") / importer.WORLD / "equivalent.toml"


def default_explanations() -> Path:
    """Where the built-in τ² world's explained disagreements live."""
    return resolve_world_folder(importer.WORLD) / "explained.toml"


def load_explanations(path: Path) -> dict[str, str]:
    """Reasons by task id from an ``[[explained]]`` TOML file (missing file: none).

    Raises:
        PluginError: for an unreadable file or an entry without a task or a reason.
    """
    if not path.is_file():
        return {}
    try:
        entries = tomllib.loads(path.read_text(encoding="utf-8")).get("explained", [])
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise PluginError(f"{path}: cannot read: {exc}") from None
    out: dict[str, str] = {}
    for entry in entries:
        task, reason = str(entry.get("task", "")), str(entry.get("reason", "")).strip()
        if not task or not reason:
            raise PluginError(f"{path}: every explanation needs a task and a reason")
        out[task] = reason
    return out


def read_marks(
    equivalents: Path | None = None, explanations: Path | None = None
) -> tuple[dict[tuple[str, str], str], dict[str, str]]:
    """Equivalence marks and explained disagreements, from the given files or the defaults.

    A default file that is missing gives none; a file given that is missing is an error.

    Raises:
        FormatError: for a file given that does not exist.
        PluginError: for a file that cannot be read or has an incomplete entry.
    """
    for given in (equivalents, explanations):
        if given is not None and not Path(given).is_file():
            raise FormatError(f"{given}: no such file")
    marks_file = default_equivalents() if equivalents is None else Path(equivalents)
    marks = read_equivalents(marks_file) if marks_file.is_file() else {}
    reasons = load_explanations(default_explanations() if explanations is None else explanations)
    return marks, reasons


def check_tasks(
    world: World,
    tasks: Sequence[ImportedTask],
    data: Path,
    *,
    marks: Mapping[tuple[str, str], str],
    explanations: Mapping[str, str],
) -> CheckReport:
    """Check every imported task (`check_gold`), with τ²'s own hashes beside ours.

    Raises:
        FormatError: when the data's ``db.json`` cannot be read for τ²'s hash.
    """
    hasher = DatabaseHasher(world)
    theirs = tau2_hasher(world, data)
    reports = [
        check_gold(
            world,
            t,
            hasher,
            marks=marks,
            explanation=explanations.get(t.task.id, ""),
            tau2_hasher=theirs,
        )
        for t in tasks
    ]
    problems = [f"{r.task_id}: {p}" for r in reports for p in r.problems]
    problems += stale_marks(marks, reports)
    return CheckReport(
        data_notice=importer.DATA_NOTICE,
        tasks=reports,
        summary=_summary(reports, hasher.hash(), theirs.hash()),
        problems=problems,
    )


def stale_marks(marks: Mapping[tuple[str, str], str], reports: Sequence[GoldReport]) -> list[str]:
    """Marks naming one mutant of a checked task that is not an accepted equivalent."""
    accepted = {(r.task_id, m.id) for r in reports for m in r.mutants if m.status == "equivalent"}
    checked = {r.task_id for r in reports}
    return [
        f"{task}: equivalence mark for {mutant} matches no surviving mutant (stale mark)"
        for task, mutant in sorted(marks)
        if task in checked and not mutant.endswith("@*") and (task, mutant) not in accepted
    ]


def _summary(reports: list[GoldReport], ours: str, theirs: str) -> CheckSummary:
    killed = sum(r.killed for r in reports)
    survived = sum(r.survived for r in reports)
    equivalent = sum(r.equivalent for r in reports)
    total = sum(len(r.mutants) for r in reports)
    return CheckSummary(
        imported=len(reports),
        oracle_passed=sum(r.oracle_passed for r in reports),
        oracle_failed=sum(not r.oracle_passed for r in reports),
        tasks_with_gold_errors=sum(bool(r.gold_errors) for r in reports),
        gold_errors=sum(len(r.gold_errors) for r in reports),
        verdicts_agree=sum(r.agrees for r in reports),
        verdicts_disagree_explained=sum(not r.agrees and bool(r.explanation) for r in reports),
        verdicts_disagree_unexplained=sum(not r.agrees and not r.explanation for r in reports),
        read_only_tasks=sum(r.rows_changed == 0 for r in reports),
        do_nothing_passes=sum(r.do_nothing.passed for r in reports),
        mutants=total,
        killed=killed,
        survived=survived,
        equivalent=equivalent,
        ungraded=total - killed - survived - equivalent,
        mutation_score=_share_or_one(killed, killed + survived),
        kill_rate_all=_share_or_one(killed, total),
        by_operator=_by_operator(reports),
        initial_db_hash=ours,
        initial_tau2_db_hash=theirs,
    )


def _share_or_one(part: int, whole: int) -> float:
    """``part / whole``; 1.0 when there is nothing to count (no mutant escaped)."""
    return part / whole if whole else 1.0


def _by_operator(reports: list[GoldReport]) -> dict[str, dict[str, int]]:
    """Mutants per operator and status, both sorted."""
    operators: dict[str, Counter[str]] = {}
    for r in reports:
        for m in r.mutants:
            operators.setdefault(m.operator, Counter())[m.status] += 1
    return {op: dict(sorted(c.items())) for op, c in sorted(operators.items())}


def regrade_results(
    world: World,
    tasks: Sequence[ImportedTask],
    results: Path,
    data: Path,
    *,
    arguments: ArgumentMode = "strict",
) -> RegradeReport:
    """Replay and grade every run of a τ² results file against the imported tasks.

    A run whose task is not among ``tasks`` is reported ``lost`` (not graded).

    Raises:
        FormatError: for a results file not in τ²'s format, or an unreadable ``db.json``.
    """
    runs = importer.read_results(results)
    theirs = tau2_hasher(world, data)
    by_id = {t.task.id: t for t in tasks}
    hasher = DatabaseHasher(world)
    graded = [
        regrade(
            world,
            by_id.get(f"{importer.WORLD}.{run.task_id}"),
            run,
            hasher,
            arguments=arguments,
            tau2_hasher=theirs,
        )
        for run in runs
    ]
    return RegradeReport(
        data_notice=importer.DATA_NOTICE, runs=graded, policy=sheet_summary(graded)
    )

"""Run reports: the result vector of a run directory, every figure with its denominator."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import msgspec
import numpy as np

from harness_world._record import Record, RecordError, load_record
from harness_world._replay import verify
from harness_world._run import (
    COUNTED,
    Inventory,
    RunManifest,
    compute_inventory,
    load_manifest,
    record_path,
)
from harness_world._task import Task, load_tasks
from harness_world._world import World, load_world
from harness_world.stats import PassKSummary, RunRow, StatsInputError, pass_k_summary, tally_runs

__all__ = ["Attempted", "FamilyFigures", "PerAttempt", "RunReport", "build_report", "run_rows"]


class Attempted(msgspec.Struct, frozen=True, kw_only=True):
    """One final record of a run, reduced to what the report counts.

    Attributes:
        task_id: The task.
        family: The task's family.
        sample: The sample index.
        outcome: How execution ended.
        evidence: Whether the record replayed.
        passed: The grade (null when ungraded or not counted).
        retried: Whether an earlier try of this attempt ended in error.
        tool_calls: Tool calls made.
        requests: Provider requests (retries included).
        input_tokens: Prompt tokens.
        output_tokens: Completion tokens.
        cost: US dollars, uncertain exposure and earlier failed tries included.
        latency_s: Wall-clock duration (context).
    """

    task_id: str
    family: str
    sample: int
    outcome: str
    evidence: str
    passed: bool | None
    retried: bool
    tool_calls: int
    requests: int
    input_tokens: int
    output_tokens: int
    cost: float
    latency_s: float


class PerAttempt(msgspec.Struct, frozen=True, kw_only=True):
    """Means per valid attempt and per passed attempt; null (undefined) when nothing passed.

    Attributes:
        tool_calls: Mean tool calls per valid attempt.
        requests: Mean provider requests per valid attempt.
        tokens: Mean input + output tokens per valid attempt.
        cost: Mean cost per valid attempt.
        tool_calls_per_pass: Total tool calls over passed attempts (null if none passed).
        requests_per_pass: Total requests over passed attempts.
        tokens_per_pass: Total tokens over passed attempts.
        cost_per_pass: Total cost, failures and retries included, over passed attempts.
    """

    tool_calls: float | None
    requests: float | None
    tokens: float | None
    cost: float | None
    tool_calls_per_pass: float | None
    requests_per_pass: float | None
    tokens_per_pass: float | None
    cost_per_pass: float | None


class FamilyFigures(msgspec.Struct, frozen=True, kw_only=True):
    """Pass counts within one task family.

    Attributes:
        family: The family.
        tasks: Tasks in it.
        valid: Valid attempts.
        passed: Passed attempts.
        pass_rate: passed / valid (null when there is no valid attempt).
    """

    family: str
    tasks: int
    valid: int
    passed: int
    pass_rate: float | None


class RunReport(msgspec.Struct, frozen=True, kw_only=True):
    """The result vector of one run.

    Attributes:
        out: The run directory.
        revision: The revision id.
        agent: The agent's name.
        inventory: Scheduled, executed, valid, invalid, retried, missing.
        completed_but_failed: Valid attempts that ended ``completed`` and failed their grade.
        first_try_completed: Attempts completed on their first execution.
        eventually_completed: Attempts completed at all (after retries of error outcomes).
        pass_k: pass^k and pass@k for k = 1..samples over tasks with at least k valid runs.
        per_attempt: Consumption per valid and per passed attempt.
        latency_p50_s: Median wall-clock duration (context, not evidence).
        latency_p95_s: 95th percentile.
        families: Figures per task family.
        attempts: Every final record, reduced.
    """

    out: str
    revision: str
    agent: str
    inventory: Inventory
    completed_but_failed: int
    first_try_completed: int
    eventually_completed: int
    pass_k: list[PassKSummary]
    per_attempt: PerAttempt
    latency_p50_s: float | None
    latency_p95_s: float | None
    families: list[FamilyFigures]
    attempts: list[Attempted]


def _attempts(out: Path, manifest: RunManifest, tasks: dict[str, Task]) -> list[Attempted]:
    worlds: dict[str, World] = {}
    found: list[Attempted] = []
    for task_id in manifest.tasks:
        task = tasks.get(task_id)
        for sample in range(manifest.samples):
            path = record_path(out, task_id, sample)
            if not path.is_file():
                continue
            failed_tries = sorted(path.parent.glob(f"{sample}.failed-*.json"))
            retried = bool(failed_tries)
            retry_cost = 0.0  # tries that ended in error cost money too
            for failed_try in failed_tries:
                try:
                    spent = load_record(failed_try).usage
                except RecordError:
                    continue
                retry_cost += spent.cost + spent.uncertain_cost
            try:
                record: Record = load_record(path)
            except RecordError:
                found.append(
                    Attempted(
                        task_id=task_id,
                        family=task.family if task else "",
                        sample=sample,
                        outcome="",
                        evidence="lost",
                        passed=None,
                        retried=retried,
                        tool_calls=0,
                        requests=0,
                        input_tokens=0,
                        output_tokens=0,
                        cost=0.0,
                        latency_s=0.0,
                    )
                )
                continue
            name = record.world.name
            if name not in worlds:
                worlds[name] = load_world(name, size=manifest.sizes.get(name, "small"))
            current = task
            if current is not None and (
                current.hash != record.task_hash or current.world != record.world.name
            ):
                current = None  # the task changed since: a different task, so no grade
            result = verify(record, world=worlds[name], task=current)
            counted = result.evidence == "verified" and record.outcome.status in COUNTED
            passed = None if not counted or result.grade is None else result.grade.passed
            usage = record.usage
            found.append(
                Attempted(
                    task_id=task_id,
                    family=task.family if task else "",
                    sample=sample,
                    outcome=record.outcome.status,
                    evidence=result.evidence,
                    passed=passed,
                    retried=retried,
                    tool_calls=len(record.calls),
                    requests=usage.requests,
                    input_tokens=usage.input_tokens,
                    output_tokens=usage.output_tokens,
                    cost=usage.cost + usage.uncertain_cost + retry_cost,
                    latency_s=record.context.latency_s,
                )
            )
    return found


def run_rows(out: str | Path, config: str) -> tuple[list[RunRow], RunManifest]:
    """Valid attempts of a run as four-column rows (task_id, run_index, config, passed).

    Ungraded, lost, errored and interrupted attempts are not rows: they are not evidence of
    quality and are reported beside it (in the inventory).
    """
    root = Path(out)
    manifest = load_manifest(root)
    tasks = {t.id: t for t in load_tasks()}
    rows = [
        # family: for compare's cluster-robust gate (issue 12)
        RunRow(
            task_id=a.task_id, run_index=a.sample, config=config, passed=a.passed, family=a.family
        )
        for a in _attempts(root, manifest, tasks)
        if a.passed is not None
    ]
    return rows, manifest


def _mean(total: float, count: int) -> float | None:
    return None if count == 0 else total / count


def build_report(out: str | Path, tasks: Sequence[Task] | None = None) -> RunReport:
    """Everything `report` prints, computed from the records on disk (each one replayed)."""
    root = Path(out)
    manifest = load_manifest(root)
    known = {t.id: t for t in (tasks if tasks is not None else load_tasks())}
    attempts = _attempts(root, manifest, known)
    inventory = compute_inventory(root, [known[i] for i in manifest.tasks if i in known])
    valid = [a for a in attempts if a.passed is not None]
    passed = [a for a in valid if a.passed]
    rows = [
        RunRow(task_id=a.task_id, run_index=a.sample, config="run", passed=bool(a.passed))
        for a in valid
    ]
    tallies = tally_runs(rows, "run") if rows else []
    pass_k: list[PassKSummary] = []
    for k in range(1, manifest.samples + 1):
        try:
            pass_k.append(pass_k_summary(tallies, k))
        except StatsInputError:
            break  # no task has k valid runs (an interrupted or damaged run): report up to k-1
    tokens = [a.input_tokens + a.output_tokens for a in valid]
    per_attempt = PerAttempt(
        tool_calls=_mean(sum(a.tool_calls for a in valid), len(valid)),
        requests=_mean(sum(a.requests for a in valid), len(valid)),
        tokens=_mean(sum(tokens), len(valid)),
        cost=_mean(sum(a.cost for a in valid), len(valid)),
        tool_calls_per_pass=_mean(sum(a.tool_calls for a in attempts), len(passed)),
        requests_per_pass=_mean(sum(a.requests for a in attempts), len(passed)),
        tokens_per_pass=_mean(sum(a.input_tokens + a.output_tokens for a in attempts), len(passed)),
        cost_per_pass=_mean(sum(a.cost for a in attempts), len(passed)),
    )
    latencies = [a.latency_s for a in attempts if a.latency_s > 0]
    p50 = float(np.percentile(latencies, 50)) if latencies else None
    p95 = float(np.percentile(latencies, 95)) if latencies else None
    families: dict[str, list[Attempted]] = {}
    for attempt in attempts:
        families.setdefault(attempt.family, []).append(attempt)
    family_figures = []
    for family, members in sorted(families.items()):
        family_valid = [a for a in members if a.passed is not None]
        family_passed = sum(1 for a in family_valid if a.passed)
        family_figures.append(
            FamilyFigures(
                family=family,
                tasks=len({a.task_id for a in members}),
                valid=len(family_valid),
                passed=family_passed,
                pass_rate=_mean(family_passed, len(family_valid)),
            )
        )
    completed = [a for a in attempts if a.outcome == "completed"]
    return RunReport(
        out=str(root),
        revision=manifest.revision.id,
        agent=manifest.agent,
        inventory=inventory,
        completed_but_failed=sum(1 for a in valid if a.outcome == "completed" and not a.passed),
        first_try_completed=sum(1 for a in completed if not a.retried),
        eventually_completed=len(completed),
        pass_k=pass_k,
        per_attempt=per_attempt,
        latency_p50_s=p50,
        latency_p95_s=p95,
        families=family_figures,
        attempts=attempts,
    )

"""The coverage gate's fault clause.

Every scheduled fault is exposed and recovered by the oracle, and exposed and not recovered by
at least one hand mutant. Called from the gate (``_coverage.check_world``) with the records
it already made; an oracle that never reaches a trigger proves nothing about recovery, so an
unexposed oracle fault is a problem, like a fault no mutant fails to recover from.
"""

from __future__ import annotations

from collections.abc import Iterable

from harness_world.evidence.record import Record
from harness_world.grading.task import Task

__all__ = ["fault_problems"]


def _exposed(record: Record) -> set[str]:
    if record.faults is None:
        return set()
    return {e.fault_id for e in record.faults.fired if e.behaviour != "held"}


def fault_problems(
    tasks: Iterable[Task],
    oracle_records: dict[str, Record],
    mutant_records: Iterable[tuple[str, Record, bool | None]],
) -> list[str]:
    """Problems of the fault clause, in words (empty when it holds).

    Args:
        tasks: The world's tasks.
        oracle_records: The oracle's record per task id (first seed).
        mutant_records: ``(task id, record, passed)`` of every hand mutant attempt.
    """
    failing: dict[str, set[str]] = {}
    for task_id, record, passed in mutant_records:
        if passed is False:
            failing.setdefault(task_id, set()).update(_exposed(record))
    problems = []
    for task in tasks:
        if not task.faults:
            continue
        oracle = oracle_records.get(task.id)
        exposed = set() if oracle is None else _exposed(oracle)
        for spec in task.faults:
            if oracle is not None and spec.id not in exposed:
                problems.append(f"{task.id}: fault {spec.id} is unexposed by the oracle")
            if spec.id not in failing.get(task.id, set()):
                problems.append(
                    f"{task.id}: fault {spec.id}: no hand mutant is exposed to it and fails"
                )
    return problems

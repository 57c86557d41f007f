"""Grading time (the pure checker) at 641 and 30,000 tickets, measured side by side in one run.

The claim (invariant 5): grading cost follows the work done, not the world's size. It is tested
with task work that is the same on both seeds: ``helpdesk.reply_and_solve``, whose target set is
one ticket named by id (T-1001, identical in both seeds), graded on a record of the SAME calls
made against each seed: an agent that looks around (lists the open outage tickets and follows
the next page, reads the ticket, its comments and its requester), then replies and solves.

For information only (no target): a task whose targets are derived from the start state,
``helpdesk.vip_two_statuses``, graded on its oracle's record on each seed. There the work itself
grows with the seed (more targets, more calls), so its time per record grows too; the target
counts are printed beside it.

Grading uses targets derived once per (world, task) and cached, as every record after the first
sees them. The one-off derivation is timed apart, cold, as information: a condition the world
has no index for (``id`` here) scans the entity once.

Conditions: one process, one core, both worlds loaded before timing; medians over batches, small
and large interleaved so machine noise hits both alike.

    python bench/grade.py            # full
    python bench/grade.py --quick    # fewer repetitions (CI smoke)

Last line: one JSON object with every figure.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import harness_world as hw
from harness_world.coverage import load_oracles, record_calls, run_script
from harness_world.engine import CallRecord
from harness_world.grading import grade, select_targets
from harness_world.grading import task as _task

QUICK = "--quick" in sys.argv
BATCHES = 7 if QUICK else 31
SAME_TASK = "helpdesk.reply_and_solve"
DERIVED_TASK = "helpdesk.vip_two_statuses"

# The same calls on both seeds: every id and every page below lies in the shared first 641 rows.
SAME_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("list_tickets", {"status": "open", "tag": "outage", "limit": 5}),
    ("list_tickets", {"status": "open", "tag": "outage", "limit": 5, "offset": 5}),
    ("get_ticket", {"ticket_id": "T-1001"}),
    ("list_comments", {"ticket_id": "T-1001", "limit": 20}),
    ("get_user", {"user_id": "U-0093"}),
    ("get_ticket", {"ticket_id": "T-1O01"}),  # a typo: not_found
    ("add_comment", {"ticket_id": "T-1001", "body": "The outage is fixed.", "public": True}),
    ("update_ticket", {"ticket_id": "T-1001", "status": "solved"}),
    ("get_ticket", {"ticket_id": "T-1001"}),
]


def work(call: CallRecord) -> object:
    """A call with its listing total left out: what must be equal on both seeds."""
    result = call.result
    if isinstance(result, dict) and "total" in result:
        result = {k: v for k, v in result.items() if k not in ("total", "next_offset")}
    return (call.tool, call.args, call.ok, result, call.error, call.writes)


def median_seconds(fn: Callable[[], object], n: int) -> float:
    """Seconds per call of fn: the median over BATCHES batches of n calls."""
    samples = []
    for _ in range(BATCHES):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - start) / n)
    return statistics.median(samples)


def cold_targets(world: hw.World, task: hw.Task) -> Callable[[], object]:
    """Derive every target set of a task from scratch (the cache emptied first)."""

    def run() -> object:
        _task._TARGET_CACHE.clear()
        return [select_targets(world, task, t.name) for t in task.targets]

    return run


def main() -> None:
    worlds = {"small": hw.load_world("helpdesk"), "large": hw.load_world("helpdesk", size="large")}
    tasks = {t.id: t for t in hw.load_tasks("helpdesk")}
    oracles = load_oracles("helpdesk")
    same, derived = tasks[SAME_TASK], tasks[DERIVED_TASK]

    records: dict[tuple[str, str], hw.Record] = {}
    grades: dict[tuple[str, str], hw.Grade] = {}
    for size, world in worlds.items():
        records[SAME_TASK, size] = record_calls(
            world, same, SAME_CALLS, final_message="Replied and solved."
        )
        records[DERIVED_TASK, size] = run_script(world, derived, oracles[DERIVED_TASK])
        for task in (same, derived):
            record = records[task.id, size]
            assert hw.verify(record, world=world).evidence == "verified"
            grades[task.id, size] = grade(record, task, world)
            assert grades[task.id, size].passed, (task.id, size, grades[task.id, size].failed)
    targets = {
        (task.id, size): select_targets(world, task)
        for task in (same, derived)
        for size, world in worlds.items()
    }
    assert targets[SAME_TASK, "small"] == targets[SAME_TASK, "large"]
    assert [work(c) for c in records[SAME_TASK, "small"].calls] == [
        work(c) for c in records[SAME_TASK, "large"].calls
    ]

    n_same, n_derived = (200, 5) if QUICK else (1000, 20)
    results: dict[str, float] = {}
    for label, task, n in ((SAME_TASK, same, n_same), (DERIVED_TASK, derived, n_derived)):
        per_size: dict[str, list[float]] = {"small": [], "large": []}
        for _ in range(BATCHES):
            for size, world in worlds.items():
                record = records[label, size]
                start = time.perf_counter()
                for _ in range(n):
                    kept = grade(record, task, world)
                per_size[size].append((time.perf_counter() - start) / n)
                assert kept == grades[label, size]  # the work is kept and checked
        for size in worlds:
            results[f"{label}:{size}"] = statistics.median(per_size[size])
    for task in (same, derived):
        for size, world in worlds.items():
            results[f"cold:{task.id}:{size}"] = median_seconds(cold_targets(world, task), 1)
    for task in (same, derived):  # leave the cache warm and correct
        for world in worlds.values():
            select_targets(world, task)

    def us(key: str) -> float:
        return round(results[key] * 1e6, 2)

    figures: dict[str, Any] = {
        "tickets_small": worlds["small"].count("tickets"),
        "tickets_large": worlds["large"].count("tickets"),
        "same_task": SAME_TASK,
        "same_calls": len(SAME_CALLS),
        "same_targets": len(targets[SAME_TASK, "small"]),
        "grade_us_same_small": us(f"{SAME_TASK}:small"),
        "grade_us_same_large": us(f"{SAME_TASK}:large"),
        "ratio_grade_same_large_over_small": round(
            results[f"{SAME_TASK}:large"] / results[f"{SAME_TASK}:small"], 3
        ),
        "target_ratio": 1.3,
        "derived_task": DERIVED_TASK,
        "derived_targets_small": len(targets[DERIVED_TASK, "small"]),
        "derived_targets_large": len(targets[DERIVED_TASK, "large"]),
        "derived_calls_small": len(records[DERIVED_TASK, "small"].calls),
        "derived_calls_large": len(records[DERIVED_TASK, "large"].calls),
        "grade_us_derived_small": us(f"{DERIVED_TASK}:small"),
        "grade_us_derived_large": us(f"{DERIVED_TASK}:large"),
        "cold_target_derivation_us": {
            f"{task.id}:{size}": us(f"cold:{task.id}:{size}")
            for task in (same, derived)
            for size in worlds
        },
    }
    figures["meets_ratio_target"] = figures["ratio_grade_same_large_over_small"] <= 1.3
    for task in (same, derived):
        for size in worlds:
            calls = len(records[task.id, size].calls)
            figures[f"grade_us_per_call_{'same' if task is same else 'derived'}_{size}"] = round(
                results[f"{task.id}:{size}"] * 1e6 / calls, 2
            )

    print(f"{'grade (warm targets)':44} {'641 tickets':>14} {'30,000 tickets':>16} {'ratio':>8}")
    for task in (same, derived):
        a, b = results[f"{task.id}:small"], results[f"{task.id}:large"]
        print(f"{task.id:44} {a * 1e6:11.1f} µs {b * 1e6:13.1f} µs {b / a:8.3f}")
        ts, tl = len(targets[task.id, "small"]), len(targets[task.id, "large"])
        cs, cl = len(records[task.id, "small"].calls), len(records[task.id, "large"].calls)
        print(f"  {'targets / calls':42} {ts:>7} / {cs:<6} {tl:>9} / {cl:<6}")
    print("cold target derivation (once per world and task):")
    for task in (same, derived):
        a, b = results[f"cold:{task.id}:small"], results[f"cold:{task.id}:large"]
        print(f"  {task.id:42} {a * 1e6:11.1f} µs {b * 1e6:13.1f} µs {b / a:8.1f}")
    print(json.dumps(figures, sort_keys=True))


if __name__ == "__main__":
    main()

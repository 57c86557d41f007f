"""Session costs at 641 and 30,000 tickets, measured side by side in one run.

Conditions: one process, one core, the world loaded (and its generated seed cached) before timing;
each figure is the median over repeated batches, small and large interleaved so machine noise
hits both alike. Ratios are the claim; absolute times wander on a shared machine.

    python bench/session.py            # full
    python bench/session.py --quick    # fewer repetitions (CI smoke)

Last line: one JSON object with every figure.
"""

from __future__ import annotations

import copy
import json
import statistics
import sys
import time
from collections.abc import Callable

import harness_world as hw

QUICK = "--quick" in sys.argv
BATCHES = 7 if QUICK else 31


def per_op(make: Callable[[], Callable[[], object]], n: int) -> float:
    """Median seconds per call over BATCHES batches of n calls; each batch gets a fresh state.

    A fresh session per batch keeps the call log at attempt size (a session with 60,000 logged
    calls measures the garbage collector, not the session).
    """
    samples = []
    for _ in range(BATCHES):
        fn = make()
        start = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - start) / n)
    return statistics.median(samples)


def setup(world: hw.World) -> dict[str, Callable[[], Callable[[], object]]]:
    keys = world.keys("tickets")
    # Cycle through keys spread over the whole table, so neither size gets a lucky row.
    targets = [keys[i * len(keys) // 256] for i in range(256)]

    def make_get() -> Callable[[], object]:
        session = world.open_session()
        cursor = iter(range(10**12))
        return lambda: session.call("get_ticket", {"ticket_id": targets[next(cursor) % 256]})

    def make_list() -> Callable[[], object]:
        session = world.open_session()
        return lambda: session.call("list_tickets", {"status": "open", "limit": 50})

    def make_diff() -> Callable[[], object]:
        written = world.open_session()
        for key in keys[100:110]:
            written.call("update_ticket", {"ticket_id": key, "priority": "urgent"})
        return written.diff

    return {
        "open": lambda: world.open_session,
        "get_ticket": make_get,
        "list_tickets": make_list,
        "diff_after_10_writes": make_diff,
    }


def main() -> None:
    small = hw.load_world("helpdesk")
    large = hw.load_world("helpdesk", size="large")
    ops = {"small": setup(small), "large": setup(large)}
    counts = {"open": 20_000, "get_ticket": 2_000, "list_tickets": 100, "diff_after_10_writes": 500}
    if QUICK:
        counts = {k: max(10, v // 10) for k, v in counts.items()}
    results: dict[str, float] = {}
    for name, n in counts.items():
        for size in ("small", "large"):
            results[f"{name}_{size}_s"] = per_op(ops[size][name], n)
    # What τ²-bench and AgentDojo do per attempt: deep-copy the whole database.
    for size, world in (("small", small), ("large", large)):
        data = {e: {row["id"]: row for row in world.rows(e)} for e in world.entities()}
        reps = 3 if QUICK else 5
        samples = []
        for _ in range(reps):
            start = time.perf_counter()
            copy.deepcopy(data)
            samples.append(time.perf_counter() - start)
        results[f"deepcopy_{size}_s"] = statistics.median(samples)

    figures = {
        "tickets_small": small.count("tickets"),
        "tickets_large": large.count("tickets"),
        "open_median_ns_small": round(results["open_small_s"] * 1e9, 1),
        "open_median_ns_large": round(results["open_large_s"] * 1e9, 1),
        "get_ticket_us_large": round(results["get_ticket_large_s"] * 1e6, 2),
        "list_tickets_50_us_large": round(results["list_tickets_large_s"] * 1e6, 1),
        "diff_10_writes_us_large": round(results["diff_after_10_writes_large_s"] * 1e6, 2),
        "deepcopy_ms_large": round(results["deepcopy_large_s"] * 1e3, 1),
    }
    for name in counts:
        figures[f"ratio_{name}_large_over_small"] = round(
            results[f"{name}_large_s"] / results[f"{name}_small_s"], 3
        )
    figures["ratio_deepcopy_over_open_large"] = round(
        results["deepcopy_large_s"] / results["open_large_s"]
    )
    print(f"{'operation':24} {'641 tickets':>14} {'30,000 tickets':>16} {'ratio':>8}")
    for name in counts:
        a, b = results[f"{name}_small_s"], results[f"{name}_large_s"]
        print(f"{name:24} {a * 1e6:11.3f} µs {b * 1e6:13.3f} µs {b / a:8.3f}")
    a, b = results["deepcopy_small_s"], results["deepcopy_large_s"]
    print(f"{'deepcopy (τ²/AgentDojo)':24} {a * 1e6:11.0f} µs {b * 1e6:13.0f} µs {b / a:8.1f}")
    ratio = figures["ratio_deepcopy_over_open_large"]
    print(f"deep copy / session open at 30,000 tickets: {ratio:,}x")
    print(json.dumps(figures, sort_keys=True))


if __name__ == "__main__":
    main()

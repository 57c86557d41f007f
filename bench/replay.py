"""Replay throughput, and verify time for the same records at 641 and 30,000 tickets.

What is measured:

- replay throughput: recorded calls re-executed in a fresh session AND compared with the record
  (the whole of `harness_world.evidence.replay`), in calls per second on one core;
- verify time per record: `harness_world.verify` (replay, final rows, digest; no task, so no
  grading) for records of the SAME calls made against each seed, and the ratio large/small.

The records are attempts of a realistic shape: each episode lists open tickets and follows the
next page, reads a ticket, its comments and its requester, replies, changes status, assigns,
makes two calls that fail with typed errors, re-reads the ticket and lists pending tickets after
its writes. Every ticket id is taken from the first 641 tickets, which the large seed shares with
the small one, so both seeds do the same work (only listing totals differ).

Conditions: one process, one core, both worlds loaded before timing; every figure is the median
over batches, small and large interleaved so machine noise hits both alike. Ratios are the
claim; absolute rates wander on a shared machine.

    python bench/replay.py            # full
    python bench/replay.py --quick    # fewer repetitions (CI smoke)

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
from harness_world.evidence import make_record as seal
from harness_world.evidence import replay

QUICK = "--quick" in sys.argv
BATCHES = 5 if QUICK else 31
RECORDS = 8 if QUICK else 24
EPISODES = 4  # per record: 4 episodes of 12 calls, 48 calls, a typical attempt's length
PAGE = 10

Call = tuple[str, dict[str, Any]]


def episode(ticket: dict[str, Any], closed: str) -> list[Call]:
    """One agent-like piece of work on one open ticket, 12 calls.

    7 reads that succeed (4 of them listing pages), 3 writes that succeed, and 2 calls that fail
    with typed errors (a read of a missing ticket, a write to a closed one).
    """
    tid = ticket["id"]
    return [
        ("list_tickets", {"status": "open", "limit": PAGE}),
        ("list_tickets", {"status": "open", "limit": PAGE, "offset": PAGE}),
        ("get_ticket", {"ticket_id": tid}),
        ("list_comments", {"ticket_id": tid, "limit": PAGE}),
        ("get_user", {"user_id": ticket["requester_id"]}),
        ("add_comment", {"ticket_id": tid, "body": "We are on it.", "public": True}),
        ("update_ticket", {"ticket_id": tid, "status": "pending"}),
        ("assign_ticket", {"ticket_id": tid, "owner_id": "U-0002"}),
        ("get_ticket", {"ticket_id": "T-99999"}),  # not_found
        ("update_ticket", {"ticket_id": closed, "priority": "high"}),  # conflict: closed
        ("get_ticket", {"ticket_id": tid}),
        ("list_tickets", {"status": "pending", "limit": PAGE}),  # after writes: merged page
    ]


def call_lists(small: hw.World) -> list[list[Call]]:
    """RECORDS call lists, each over EPISODES open tickets spread through the shared prefix."""
    open_ids = small.lookup("tickets", "status", "open") or ()
    closed = (small.lookup("tickets", "status", "closed") or ())[0]
    step = len(open_ids) // (RECORDS * EPISODES)
    out = []
    for r in range(RECORDS):
        calls: list[Call] = []
        for e in range(EPISODES):
            ticket = small.get("tickets", open_ids[(r * EPISODES + e) * step])
            assert ticket is not None
            calls += episode(ticket, closed)
        out.append(calls)
    return out


def make_record(world: hw.World, calls: list[Call]) -> hw.Record:
    session = world.open_session()
    for tool, args in calls:
        session.call(tool, args)
    return seal(session, outcome=hw.Outcome(status="completed"), final_message="Done.")


def only(tool: str, args: Callable[[int], dict[str, Any]], n: int = 48) -> list[Call]:
    return [(tool, args(i)) for i in range(n)]


def mix(records: list[hw.Record], world: hw.World) -> dict[str, int]:
    calls = [c for r in records for c in r.calls]
    kinds = [world.contract.tool(c.tool) for c in calls]
    return {
        "calls": len(calls),
        "reads_ok": sum(
            1 for c, k in zip(calls, kinds, strict=True) if c.ok and k and k.kind == "read"
        ),
        "writes_ok": sum(
            1 for c, k in zip(calls, kinds, strict=True) if c.ok and k and k.kind == "write"
        ),
        "typed_errors": sum(1 for c in calls if not c.ok),
        "listing_pages": sum(1 for c in calls if c.tool.startswith("list_")),
        "rows_returned": sum(
            len(c.result.get("tickets", c.result.get("comments", [])))
            if c.ok and c.tool.startswith("list_")
            else int(c.ok)
            for c in calls
        ),
    }


def timed(fn: Callable[[], int]) -> tuple[float, int]:
    start = time.perf_counter()
    kept = fn()
    return time.perf_counter() - start, kept


def replay_all(records: list[hw.Record], world: hw.World) -> Callable[[], int]:
    def run() -> int:
        differences = 0
        for record in records:
            _, mismatches = replay(record, world)
            differences += len(mismatches)
        return differences

    return run


def verify_all(records: list[hw.Record], world: hw.World) -> Callable[[], int]:
    def run() -> int:
        return sum(hw.verify(record, world=world).evidence != "verified" for record in records)

    return run


def main() -> None:
    small = hw.load_world("helpdesk")
    large = hw.load_world("helpdesk", size="large")
    worlds = {"small": small, "large": large}
    lists = call_lists(small)
    records = {size: [make_record(w, c) for c in lists] for size, w in worlds.items()}
    for size, world in worlds.items():  # sanity, and proof the work is the same on both seeds
        assert all(hw.verify(r, world=world).evidence == "verified" for r in records[size])
    assert [[c.tool for c in r.calls] for r in records["small"]] == [
        [c.tool for c in r.calls] for r in records["large"]
    ]
    assert [[c.ok for c in r.calls] for r in records["small"]] == [
        [c.ok for c in r.calls] for r in records["large"]
    ]

    # Single-kind records, for reading the mixed figure (information, not a target).
    keys = small.keys("tickets")
    open_ids = small.lookup("tickets", "status", "open") or ()
    kinds = {
        "get_ticket": only("get_ticket", lambda i: {"ticket_id": keys[i * 13]}),
        "list_tickets_10_rows": only(
            "list_tickets", lambda i: {"status": "open", "limit": PAGE, "offset": PAGE * (i % 8)}
        ),
        "update_ticket": only(
            "update_ticket", lambda i: {"ticket_id": open_ids[i], "priority": "low"}
        ),
        "add_comment": only(
            "add_comment", lambda i: {"ticket_id": open_ids[i], "body": "Noted.", "public": False}
        ),
        "typed_error": only("get_ticket", lambda i: {"ticket_id": f"T-9{i:04d}"}),
    }
    kind_records = {name: make_record(small, calls) for name, calls in kinds.items()}

    samples: dict[str, list[float]] = {}
    kept = 0
    for _ in range(BATCHES):
        for size, world in worlds.items():
            seconds, differences = timed(replay_all(records[size], world))
            samples.setdefault(f"replay_{size}", []).append(seconds)
            seconds, unverified = timed(verify_all(records[size], world))
            samples.setdefault(f"verify_{size}", []).append(seconds)
            kept += differences + unverified
        for name, record in kind_records.items():
            seconds, differences = timed(replay_all([record], small))
            samples.setdefault(f"kind_{name}", []).append(seconds)
            kept += differences
    assert kept == 0, "a record failed to replay during timing"

    median = {name: statistics.median(values) for name, values in samples.items()}
    calls = sum(len(r.calls) for r in records["small"])
    shape = mix(records["small"], small)
    figures: dict[str, Any] = {
        "records": RECORDS,
        "calls_per_record": calls // RECORDS,
        "mix": shape,
        "replay_calls_per_s_small": round(calls / median["replay_small"]),
        "replay_calls_per_s_large": round(calls / median["replay_large"]),
        "replay_rows_per_s_small": round(shape["rows_returned"] / median["replay_small"]),
        "verify_ms_per_record_small": round(median["verify_small"] / RECORDS * 1e3, 3),
        "verify_ms_per_record_large": round(median["verify_large"] / RECORDS * 1e3, 3),
        "ratio_verify_large_over_small": round(median["verify_large"] / median["verify_small"], 3),
        "ratio_replay_large_over_small": round(median["replay_large"] / median["replay_small"], 3),
        "replay_calls_per_s_by_kind_small": {
            name: round(len(kind_records[name].calls) / median[f"kind_{name}"]) for name in kinds
        },
        "target_replay_calls_per_s": 50_000,
        "target_ratio_verify": 1.3,
    }
    figures["meets_replay_target"] = figures["replay_calls_per_s_small"] >= 50_000
    figures["meets_ratio_target"] = figures["ratio_verify_large_over_small"] <= 1.3

    print(
        f"{RECORDS} records x {calls // RECORDS} calls; per record: "
        + ", ".join(f"{k} {v / RECORDS:g}" for k, v in shape.items())
    )
    print(f"{'':28} {'641 tickets':>14} {'30,000 tickets':>16} {'ratio':>8}")
    for label, key, unit, scale in (
        ("replay (calls/s)", "replay", "", None),
        ("verify (ms per record)", "verify", " ms", 1e3 / RECORDS),
    ):
        a, b = median[f"{key}_small"], median[f"{key}_large"]
        if scale is None:
            print(f"{label:28} {calls / a:14,.0f} {calls / b:16,.0f} {b / a:8.3f}")
        else:
            print(f"{label:28} {a * scale:11.3f}{unit} {b * scale:13.3f}{unit} {b / a:8.3f}")
    print("replay by kind, 641 tickets (calls/s):")
    for name, rate in figures["replay_calls_per_s_by_kind_small"].items():
        print(f"  {name:26} {rate:12,}")
    print(json.dumps(figures, sort_keys=True))


if __name__ == "__main__":
    main()

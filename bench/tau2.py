"""Grading a τ² trajectory: our path versus τ²'s own, side by side in one run.

For each of the 74 train tasks, the gold action list is the trajectory. Measured in one run,
interleaved task by task so machine noise hits both alike:

* ours: open a copy-on-write session (attempt setup) and ``hw.verify`` the record (replay
  every call in a fresh session and compare everything, then grade with the checker).
* τ²'s real per-trajectory path, run with τ²'s own code from a τ²-bench checkout
  (``--tau2-src``; default: the copy beside the shared data): load the database and build the
  environment for the agent's trajectory (``get_environment``: ``RetailDB.load``), replay the
  trajectory's messages (``Environment.set_state``: mutating calls re-run, their output
  compared), load another environment and run the gold actions on it, and compare the two
  whole-database hashes (``get_db_hash``). Without τ²'s code the benchmark says so and falls
  back to the estimate (deep copies and ``json.dumps`` hashes of the plain data, a lower bound).

Then a profile of our verify path on 10-call records: setup (open a session), replay, grade,
each per record.

    python bench/tau2.py            # full
    python bench/tau2.py --quick    # fewer rounds
    python bench/tau2.py --data DIR --tau2-src DIR

The data is read from ../shared/external/tau2-retail (© 2025 Sierra Research, MIT licence);
when it is absent the benchmark is skipped and says so. Last line: one JSON object.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import harness_world as hw
from harness_world.evidence import replay
from harness_world.grading.checker import grade
from harness_world.tau2 import ImportedTask, importer
from harness_world.tau2.faithful import Tau2Shape
from harness_world.tau2.gold import run_gold

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "external" / "tau2-retail"


def _arg(name: str, default: Path) -> Path:
    return Path(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


DATA = _arg("--data", SHARED)
TAU2_SRC = _arg("--tau2-src", DATA / "tau2_src")
QUICK = "--quick" in sys.argv
ROUNDS_OURS = 3 if QUICK else 9
ROUNDS_TAU2 = 1 if QUICK else 2


def tau2_messages(source: Any, shape: Tau2Shape, record: hw.Record) -> list[Any]:
    """The trajectory as τ² messages: one assistant tool call and its tool message per call."""
    message = source.message
    out: list[Any] = []
    for call in record.calls:
        observation = hw.engine.Observation(
            seq=call.seq, tool=call.tool, ok=call.ok, result=call.result, error=call.error
        )
        tool_call = message.ToolCall(id=str(call.seq), name=call.tool, arguments=call.args)
        out.append(message.AssistantMessage(role="assistant", tool_calls=[tool_call]))
        out.append(
            message.ToolMessage(
                id=str(call.seq),
                role="tool",
                content=shape.observation(observation),
                error=not call.ok,
            )
        )
    return out


def tau2_grade(source: Any, messages: list[Any], item: ImportedTask) -> bool:
    """τ²'s database check of one trajectory, with τ²'s code, as its evaluator does it."""
    module = source.environment_module
    predicted = module.get_environment()  # loads the database from disk
    predicted.set_state(
        initialization_data=None, initialization_actions=None, message_history=messages
    )
    gold = module.get_environment()
    gold.set_state(initialization_data=None, initialization_actions=None, message_history=[])
    for action in item.gold:
        with contextlib.suppress(Exception):  # τ²'s evaluator skips a failing gold action
            gold.make_tool_call(action.tool, requestor="assistant", **action.args)
    return bool(predicted.get_db_hash() == gold.get_db_hash())


def estimate_grade(plain: dict[str, Any], record: hw.Record, gold: hw.Record) -> bool:
    """The fallback: deep copies and whole-database hashes of the plain data (a lower bound)."""

    def overlay(db: dict[str, Any], final: list[Any]) -> dict[str, Any]:
        for item in final:
            db[item.entity][str(item.key)] = copy.deepcopy(item.row)
        return db

    def digest(db: dict[str, Any]) -> str:
        return hashlib.sha256(json.dumps(db, sort_keys=True, default=str).encode()).hexdigest()

    copy.deepcopy(plain)  # the agent's environment
    predicted = overlay(copy.deepcopy(plain), record.final)
    expected = overlay(copy.deepcopy(plain), gold.final)
    return digest(predicted) == digest(expected)


def load_tau2() -> tuple[Any, str]:
    try:
        from harness_world.tau2.source import Tau2Source

        return Tau2Source.load(TAU2_SRC, DATA), ""
    except Exception as exc:  # any failure: fall back, and say why
        return None, f"{type(exc).__name__}: {exc}"


def profile_short(world: hw.World, tasks: list[ImportedTask]) -> dict[str, float]:
    """Setup, replay and grade per 10-call record (gold calls, padded with reads)."""
    records = []
    for item in tasks:
        calls = [(g.tool, g.args) for g in item.gold][:10]
        reads = [c for c in calls if c[0].startswith(("get_", "find_"))] or [
            ("calculate", {"expression": "2 + 2"})
        ]
        while len(calls) < 10:  # pad with the gold's own reads, repeated
            calls.append(reads[len(calls) % len(reads)])
        session = world.open_session()
        for tool, args in calls:
            session.call(tool, args)
        records.append(
            (
                item,
                hw.evidence.make_record(
                    session,
                    outcome=hw.Outcome(status="completed"),
                    task_id=item.task.id,
                    task_hash=item.task.hash,
                ),
            )
        )
    rounds = 3 if QUICK else 15
    timings: dict[str, list[float]] = {"setup": [], "replay": [], "grade": []}
    for _ in range(rounds):
        for name, spent in timings.items():
            start = time.perf_counter()
            for item, record in records:
                if name == "setup":
                    world.open_session()
                elif name == "replay":
                    replay(record, world)
                else:
                    grade(record, item.task, world)
            spent.append((time.perf_counter() - start) / len(records))
    return {f"{k}_10call_ms": min(v) * 1e3 for k, v in timings.items()}


def main() -> None:
    if not (DATA / "db.json").is_file() or not (DATA / "tasks_train.json").is_file():
        reason = f"τ² retail data not found in {DATA}"
        print(f"skipped: {reason}")
        print(json.dumps({"benchmark": "tau2", "skipped": reason}))
        return
    world = importer.load_world(DATA)
    tasks = importer.import_tasks(world, DATA / "tasks_train.json")
    shape = Tau2Shape.from_data(world, DATA / "db.json")
    records = {t.task.id: run_gold(world, t.task, t.gold) for t in tasks}
    # Our short-record profile first, before τ²'s code and data fill the heap (a bigger heap
    # makes every garbage-collector pass dearer, for whoever allocates next).
    profile = profile_short(world, tasks)
    source, why_not = load_tau2()
    mode = "tau2 code" if source is not None else "estimate"
    plain: dict[str, Any] = json.loads((DATA / "db.json").read_text())
    messages = (
        {t.task.id: tau2_messages(source, shape, records[t.task.id]) for t in tasks}
        if source is not None
        else {}
    )
    ours: list[float] = []
    theirs: list[float] = []
    verdicts: dict[str, tuple[bool, bool]] = {}
    for round_no in range(max(ROUNDS_OURS, ROUNDS_TAU2)):
        spent_ours = spent_tau2 = 0.0
        for item in tasks:
            record = records[item.task.id]
            if round_no < ROUNDS_OURS:
                start = time.perf_counter()
                world.open_session()
                result = hw.verify(record, world=world, task=item.task)
                spent_ours += time.perf_counter() - start
                ours_passed = result.grade is not None and result.grade.passed
            if round_no < ROUNDS_TAU2:
                start = time.perf_counter()
                if source is not None:
                    match = tau2_grade(source, messages[item.task.id], item)
                else:
                    match = estimate_grade(plain, record, record)
                spent_tau2 += time.perf_counter() - start
                verdicts[item.task.id] = (ours_passed, match)
        if round_no < ROUNDS_OURS:
            ours.append(spent_ours / len(tasks))
        if round_no < ROUNDS_TAU2:
            theirs.append(spent_tau2 / len(tasks))
    ours_ms = statistics.median(ours) * 1e3
    tau2_ms = statistics.median(theirs) * 1e3
    agree = sum(o == t for o, t in verdicts.values())
    print(f"τ² retail, {len(tasks)} gold trajectories; {importer.DATA_NOTICE}")
    if source is None:
        print(f"τ²'s code not usable ({why_not}): τ² side is the estimate (a lower bound)")
    else:
        print(f"τ² side: τ²'s own code from {TAU2_SRC}")
    print(f"{'per trajectory':<34}{'ours ms':>10}{'τ² ms':>12}{'τ²/ours':>10}")
    print(
        f"{'setup + replay + grade':<34}{ours_ms:>10.3f}{tau2_ms:>12.1f}{tau2_ms / ours_ms:>9.0f}x"
    )
    print(
        f"verdicts agree on {agree}/{len(verdicts)} trajectories (ours passed == τ² hashes equal)"
    )
    print(
        "our verify path per 10-call record: "
        + ", ".join(f"{k.split('_')[0]} {v:.4f} ms" for k, v in profile.items())
    )
    print(
        json.dumps(
            {
                "benchmark": "tau2",
                "tau2_side": mode,
                "tasks": len(tasks),
                "rounds_ours": ROUNDS_OURS,
                "rounds_tau2": ROUNDS_TAU2,
                "ours_ms": round(ours_ms, 4),
                "tau2_ms": round(tau2_ms, 2),
                "ratio": round(tau2_ms / ours_ms, 1),
                "verdicts_agree": agree,
                **{k: round(v, 4) for k, v in profile.items()},
            }
        )
    )


if __name__ == "__main__":
    main()

"""Attempt setup and grading on the τ² retail data: our sessions versus τ²'s approach, side by side.

For each of the 74 train tasks, the gold action list is the attempt. Measured in one run, the
two approaches interleaved task by task so machine noise hits both alike:

* ours: setup = open a copy-on-write session (copies nothing); grade = verify the record
  (replay every call in a fresh session, compare everything) and grade it with the checker.
* τ²'s: setup = a deep copy of the whole database (the agent's environment); grade = what τ²'s
  evaluator does: a fresh deep copy replaying the agent's trajectory, another replaying the gold
  actions, and a canonical whole-database hash of each (``json.dumps(sort_keys=True)``,
  SHA-256), compared. The replays are modelled by writing the attempt's final rows into the
  copies, which is cheaper than running the tools, so the τ² figures are a lower bound.

Tool execution itself is not timed on either side. Conditions: one process, the world and the
plain data loaded before timing; each figure is the median over rounds of the mean per attempt.

    python bench/tau2.py            # full
    python bench/tau2.py --quick    # fewer rounds
    python bench/tau2.py --data DIR # another copy of the data folder

The data is read from ../shared/external/tau2-retail (© 2025 Sierra Research, MIT licence); when
it is absent the benchmark is skipped and says so. Last line: one JSON object with every figure.
"""

from __future__ import annotations

import copy
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import harness_world as hw
from harness_world.coverage import record_calls
from harness_world.engine import FinalRow
from harness_world.engine.plugins import import_path
from harness_world.engine.world import resolve_world_folder

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "external" / "tau2-retail"
DATA = Path(sys.argv[sys.argv.index("--data") + 1]) if "--data" in sys.argv else DEFAULT_DATA
QUICK = "--quick" in sys.argv
ROUNDS_OURS = 3 if QUICK else 9
ROUNDS_TAU2 = 1 if QUICK else 2


def tau2_hash(db: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(db, sort_keys=True, default=str).encode()).hexdigest()


def overlay(db: dict[str, Any], final: list[FinalRow]) -> None:
    for item in final:
        if item.row is None:
            db[item.entity].pop(str(item.key), None)
        else:
            db[item.entity][str(item.key)] = copy.deepcopy(item.row)


def main() -> None:
    if not (DATA / "db.json").is_file() or not (DATA / "tasks_train.json").is_file():
        reason = f"τ² retail data not found in {DATA}"
        print(f"skipped: {reason}")
        print(json.dumps({"benchmark": "tau2", "skipped": reason}))
        return
    importer = import_path(resolve_world_folder("tau2_retail") / "importer.py", "worlds")
    world = importer.load_world(DATA)
    tasks = importer.import_tasks(world, DATA / "tasks_train.json")
    plain: dict[str, Any] = json.loads((DATA / "db.json").read_text())
    records = {
        t.task.id: record_calls(world, t.task, [(g.tool, g.args) for g in t.gold]) for t in tasks
    }
    gold_final = {t.task.id: records[t.task.id].final for t in tasks}

    ours_setup: list[float] = []
    ours_grade: list[float] = []
    tau2_setup: list[float] = []
    tau2_grade: list[float] = []
    verdicts: dict[str, tuple[bool, bool]] = {}
    rounds = max(ROUNDS_OURS, ROUNDS_TAU2)
    for round_no in range(rounds):
        setup_o = grade_o = setup_t = grade_t = 0.0
        for item in tasks:
            task, record = item.task, records[item.task.id]
            if round_no < ROUNDS_OURS:
                start = time.perf_counter()
                session = world.open_session()
                setup_o += time.perf_counter() - start
                del session
                start = time.perf_counter()
                result = hw.verify(record, world=world, task=task)
                grade_o += time.perf_counter() - start
                assert result.grade is not None
                ours = result.grade.passed
            if round_no < ROUNDS_TAU2:
                start = time.perf_counter()
                live = copy.deepcopy(plain)
                setup_t += time.perf_counter() - start
                del live
                start = time.perf_counter()
                predicted = copy.deepcopy(plain)
                overlay(predicted, record.final)
                gold = copy.deepcopy(plain)
                overlay(gold, gold_final[task.id])
                match = tau2_hash(predicted) == tau2_hash(gold)
                grade_t += time.perf_counter() - start
                verdicts[task.id] = (ours, match)
        n = len(tasks)
        if round_no < ROUNDS_OURS:
            ours_setup.append(setup_o / n)
            ours_grade.append(grade_o / n)
        if round_no < ROUNDS_TAU2:
            tau2_setup.append(setup_t / n)
            tau2_grade.append(grade_t / n)

    figures = {
        "setup_ours_ms": statistics.median(ours_setup) * 1e3,
        "setup_tau2_ms": statistics.median(tau2_setup) * 1e3,
        "grade_ours_ms": statistics.median(ours_grade) * 1e3,
        "grade_tau2_ms": statistics.median(tau2_grade) * 1e3,
    }
    total_ours = figures["setup_ours_ms"] + figures["grade_ours_ms"]
    total_tau2 = figures["setup_tau2_ms"] + figures["grade_tau2_ms"]
    rows = [
        ("attempt setup", figures["setup_ours_ms"], figures["setup_tau2_ms"]),
        ("grade (replay + check)", figures["grade_ours_ms"], figures["grade_tau2_ms"]),
        ("setup + grade", total_ours, total_tau2),
    ]
    agree = sum(o == t for o, t in verdicts.values())
    print(f"τ² retail, {len(tasks)} gold trajectories; {DATA.name}: {importer.DATA_NOTICE}")
    print(f"{'per attempt':<24}{'ours ms':>12}{'τ²-style ms':>14}{'τ²/ours':>10}")
    for label, ours_ms, tau2_ms in rows:
        print(f"{label:<24}{ours_ms:>12.4f}{tau2_ms:>14.3f}{tau2_ms / ours_ms:>9.0f}x")
    print(f"verdicts agree on {agree}/{len(verdicts)} trajectories (ours passed == hashes equal)")
    print(
        json.dumps(
            {
                "benchmark": "tau2",
                "tasks": len(tasks),
                "rounds_ours": ROUNDS_OURS,
                "rounds_tau2": ROUNDS_TAU2,
                **{k: round(v, 5) for k, v in figures.items()},
                "setup_ratio": round(figures["setup_tau2_ms"] / figures["setup_ours_ms"], 1),
                "grade_ratio": round(figures["grade_tau2_ms"] / figures["grade_ours_ms"], 1),
                "total_ratio": round(total_tau2 / total_ours, 1),
                "verdicts_agree": agree,
            }
        )
    )


if __name__ == "__main__":
    main()

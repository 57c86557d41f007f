"""Setup + grade of an AgentDojo run: our path versus AgentDojo's own, side by side in one run.

For every user task of the imported suites (banking, slack, travel, workspace), the ground
truth's calls are the trajectory. Measured in one run, interleaved task by task so machine noise
hits both alike:

* ours: open a copy-on-write session (attempt setup) and ``hw.verify`` the record (replay
  every call in a fresh session, compare every result, then grade with the checker).
* AgentDojo's (``TaskSuite.run_task_with_pipeline`` without the model), with its own code from
  the data folder: two deep copies of the environment loaded once, as our world is (the
  environment the calls change, and its pre-environment), the calls through its
  ``FunctionsRuntime``, then the task's ``utility``. Also shown: the same with the environment
  loaded from its YAML per run (one deep copy), as ``run_task_with_pipeline`` does.

    python bench/agentdojo.py            # full
    python bench/agentdojo.py --quick    # fewer rounds
    python bench/agentdojo.py --data DIR

The data is read from ../shared/external/agentdojo (AgentDojo, ETH Zürich SPY Lab, MIT licence);
when it or AgentDojo's packages are absent the benchmark is skipped and says so. Last line: one
JSON object.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import harness_world as hw
from harness_world.agentdojo.data import DojoDataError
from harness_world.agentdojo.importer import SUPPORTED, Imported, import_suite
from harness_world.agentdojo.source import DojoSource
from harness_world.running.scripted import record_calls

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "external" / "agentdojo"
DATA = Path(sys.argv[sys.argv.index("--data") + 1]) if "--data" in sys.argv else SHARED
QUICK = "--quick" in sys.argv
ROUNDS = 3 if QUICK else 9
VERSION = "v1.2.1"


def theirs(reference: Any, env: Any, task: Any, calls: Any, *, load: bool) -> bool:
    """AgentDojo's run of one trajectory without the model: copy, calls, its utility check."""
    from agentdojo.functions_runtime import FunctionCall, FunctionsRuntime

    # the environment the calls change: loaded from YAML, or a deep copy of the loaded one
    post = reference.load_and_inject_default_environment({}) if load else env.model_copy(deep=True)
    pre = post.model_copy(deep=True)
    runtime = FunctionsRuntime(reference.tools)
    for name, args in calls:
        runtime.run_function(post, name, dict(args))
    trace = [FunctionCall(function=name, args=dict(args)) for name, args in calls]
    traced = task.utility_from_traces("", pre, post, trace)
    return bool(traced if traced is not None else task.utility("", pre, post))


def measure(source: DojoSource, suite: str) -> dict[str, Any]:
    """Per-trajectory medians (ms) over the suite's user tasks, both paths interleaved."""
    world, imported = import_suite(DATA, suite, VERSION, source=source, pairs=False)
    users: list[Imported] = [i for i in imported if i.dojo is not None]
    records = {i.task.id: record_calls(world, i.task, i.gold) for i in users}
    reference = source.suite(suite, VERSION)
    env = reference.load_and_inject_default_environment({})
    tasks = {i.task.id: reference.user_tasks[i.dojo.id] for i in users if i.dojo is not None}
    spent: dict[str, list[float]] = {"ours": [], "copy": [], "load": []}
    for _ in range(ROUNDS):
        totals = dict.fromkeys(spent, 0.0)
        for item in users:
            assert item.dojo is not None
            start = time.perf_counter()
            world.open_session()
            hw.verify(records[item.task.id], world=world, task=item.task)
            totals["ours"] += time.perf_counter() - start
            for kind in ("copy", "load"):
                start = time.perf_counter()
                theirs(reference, env, tasks[item.task.id], item.dojo.gold, load=kind == "load")
                totals[kind] += time.perf_counter() - start
        for kind, total in totals.items():
            spent[kind].append(total / len(users))
    medians = {kind: statistics.median(values) * 1e3 for kind, values in spent.items()}
    return {"suite": suite, "trajectories": len(users), **medians}


def main() -> None:
    try:
        source = DojoSource(DATA)
        source.suite("banking", VERSION)
    except DojoDataError as exc:
        print(f"skipped: {exc}")
        print(json.dumps({"benchmark": "agentdojo", "skipped": str(exc)}))
        return
    rows = [measure(source, suite) for suite in SUPPORTED]
    print(f"AgentDojo {VERSION}, ground-truth trajectories of every user task; data {DATA}")
    heads = ("ours ms", "copy ms", "ratio", "load ms", "ratio")
    print(f"{'suite':<10}{'n':>4}" + "".join(f"{h:>10}" if "ms" in h else f"{h:>8}" for h in heads))
    for r in rows:
        print(
            f"{r['suite']:<10}{r['trajectories']:>4}{r['ours']:>10.3f}{r['copy']:>10.3f}"
            f"{r['copy'] / r['ours']:>7.2f}x{r['load']:>10.3f}{r['load'] / r['ours']:>7.2f}x"
        )
    print(
        "ratio: AgentDojo's time / ours. ours = session + replay + compare + grade; copy = "
        "two deep copies + calls + utility; load = YAML load + deep copy + calls + utility"
    )
    print(json.dumps({"benchmark": "agentdojo", "rounds": ROUNDS, "suites": rows}))


if __name__ == "__main__":
    main()

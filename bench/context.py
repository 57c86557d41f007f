"""Bounded context: estimated prompt tokens per attempt with and without a context policy.

The OpenAI agent drives the longest tasks (by the reference solution's call count) against a
loopback chat-completions server whose "model" replays the reference solution one call per
turn, so both configurations make exactly the same calls and see the same results; only what
each request resends differs. The server reports prompt tokens as the request's JSON characters
/ 4, the same estimate the policy uses. Side by side in one run; the last line is one JSON object.

Usage: ``PYTHONPATH=. python bench/context.py [--tasks N] [--size small|large] [--budget TOKENS]``
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import harness_world as hw
from harness_world.coverage import load_oracles, run_script
from harness_world.integrations.openai import OpenAIAgent
from harness_world.running import ContextPolicy, drive
from tests.fake_openai import fake_openai, tool_call


def replaying_brain(calls: list[tuple[str, Any]], message: str) -> Any:
    """A model that makes the recorded calls in order, one per turn, then answers."""

    def brain(messages: list[dict[str, Any]]) -> dict[str, Any]:
        done = sum(1 for m in messages if m["role"] == "tool")
        if done >= len(calls):
            return {"role": "assistant", "content": message}
        name, args = calls[done]
        return {"role": "assistant", "content": None, "tool_calls": [tool_call(done, name, args)]}

    return brain


def prompt_tokens(world: hw.World, task: hw.Task, record: hw.Record, policy: Any) -> int:
    """Prompt tokens over one attempt of the OpenAI agent replaying ``record``'s calls."""
    calls = [(c.tool, c.args) for c in record.calls]
    with fake_openai(replaying_brain(calls, record.final_message)) as server:
        agent = OpenAIAgent(
            model="replay", base_url=server["base_url"], max_retries=0, context=policy
        )
        attempt = hw.Attempt(world, task, limits=hw.AttemptLimits())
        replayed = drive(agent, attempt)
    assert [(c.tool, c.args) for c in replayed.calls] == calls, "the replay diverged"
    grade = hw.verify(replayed, world, task).grade
    assert grade is not None and grade.passed, "bounded context must not change the work"
    return replayed.usage.input_tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=3, help="how many of the longest tasks")
    parser.add_argument("--size", default="small", help="seed size")
    parser.add_argument("--budget", type=int, default=4000, help="policy max_tokens")
    args = parser.parse_args()
    policy = ContextPolicy(max_tokens=args.budget, keep_recent=2)
    candidates = []
    for name in ("helpdesk", "inventory"):
        world = hw.load_world(name, size=args.size)
        tasks = {t.id: t for t in hw.load_tasks(name)}
        for task_id, script in load_oracles(name).items():
            record = run_script(world, tasks[task_id], script)
            candidates.append((len(record.calls), task_id, world, tasks[task_id], record))
    candidates.sort(key=lambda c: (-c[0], c[1]))
    total_without = total_with = 0
    rows = []
    for count, task_id, world, task, record in candidates[: args.tasks]:
        without = prompt_tokens(world, task, record, None)
        bounded = prompt_tokens(world, task, record, policy)
        total_without += without
        total_with += bounded
        rows.append((task_id, count, without, bounded))
        print(
            f"{task_id:40} {count:4} calls  {without:9} -> {bounded:9} tokens "
            f"({bounded / without:.3f})"
        )
    ratio = total_with / total_without
    print(f"total {total_without} -> {total_with} estimated prompt tokens, ratio {ratio:.3f}")
    print(
        json.dumps(
            {
                "bench": "context",
                "size": args.size,
                "policy": {"max_tokens": policy.max_tokens, "keep_recent": policy.keep_recent},
                "tasks": [r[0] for r in rows],
                "tokens_without": total_without,
                "tokens_with": total_with,
                "ratio_with_over_without": round(ratio, 4),
            }
        )
    )


if __name__ == "__main__":
    main()

"""falsepass's audit of the plain reward function (`harness_world.rewards.reward`).

falsepass (PyPI) feeds a reward function completions whose correctness it knows and reports
false passes (a known-bad completion paid) and false fails (a known-good one not paid). This
is the hand-written adapter its runner loads (`make_adapter`), in falsepass's tool mode: every
built-in world's tasks, one example per task at row seed 0.

- Known-good: the oracle's routes, each as a chat completion (one call per assistant turn,
  then the final message): falsepass's P1 plays route 0 (the example's ``answer``, JSON), our
  probe O1 every route.
- Known-bad: falsepass's own probes (empty and echoed replies, a wrong answer in format,
  confident prose, filler, malformed completions, and its tool policies that never read the
  task, played live), and our probe M1: each hand mutant of the task on the small seed.
- Policies (falsepass's T5, T6, T8) are played live against a fresh attempt of the task (the
  tool results they see are the world's), then their conversation is the completion the
  reward function replays: the reward never reads a tool result a completion wrote.

Where falsepass cannot express a multi-turn policy that reads before it writes, our own
probes stand in (the mutants here; `tests/test_rewards.py` for memorised and blind episodes).
"""

from __future__ import annotations

import json
import random
from typing import TYPE_CHECKING, Any, ClassVar

import harness_world as hw
from harness_world.integrations.rollouts import plan_rollouts
from harness_world.rewards import reward
from harness_world.running.attempt import Attempt, AttemptEnded
from harness_world.running.rundir import sample_seed
from tests.rl.rl_support import mutant_completions, oracle_completions

if TYPE_CHECKING:  # falsepass is imported when the audit runs, never while tests are collected
    from falsepass.adapter import Adapter
    from falsepass.model import Completion, Example, Policy, ProbeResult, Score

WORLDS = ("helpdesk", "inventory", "payments")
MAX_TURNS = 60  # a policy's turns at most, past every task's turn budget


class RewardScorer:
    """Scores a completion with the plain reward function, as a trainer calls it."""

    multi_turn = True

    def __init__(self) -> None:
        self.worlds = {name: hw.load_world(name) for name in WORLDS}
        self.tasks = {t.id: t for name in WORLDS for t in hw.load_tasks(name)}

    async def score(self, example: Example, completion: Completion) -> Score:
        """The reward of one completion (a policy is played live first)."""
        from falsepass.model import Policy, Score

        info: dict[str, Any] = {}
        try:
            if isinstance(completion, Policy):
                played, info = self.play(example, completion)
            else:
                played = completion
            # Pending grades paid as passed: the audit holds the automated criteria, where a
            # reward can be gamed; the default only lowers what these 9 prose tasks pay.
            [value] = reward([played], task_id=[example.raw["task"]], seed=[0], count_pending=True)
        except Exception as exc:  # falsepass counts a raised reward code as a failure
            return Score(reward=None, errors=[f"{type(exc).__name__}: {exc}"])
        return Score(reward=value, info=info)

    def play(self, example: Example, policy: Policy) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The policy's conversation with a fresh attempt of the task, and how it stopped."""
        task = self.tasks[example.raw["task"]]
        world = self.worlds[task.world]
        attempt = Attempt(world, task, seed=sample_seed(0, task.id, 0), sample=0)
        tools = example.raw["tools"]
        messages: list[dict[str, Any]] = [{"role": "user", "content": example.prompt}]
        stop = "turn cap"
        for _ in range(MAX_TURNS):
            act = policy.act
            assert act is not None, "a policy with a model client is not played here"
            reply = act(messages, tools) if policy.wants_tools else act(messages)
            message = _assistant(reply, len(messages))
            messages.append(message)
            if not message.get("tool_calls"):
                stop = "answered"
                break
            try:
                attempt.begin_turn()
                ended = _run_calls(attempt, message["tool_calls"], messages)
            except AttemptEnded as budget:
                stop = budget.outcome.status
                break
            if ended:
                stop = "finish"
                break
        turns = sum(1 for m in messages if m["role"] == "assistant")
        said = [{"role": m["role"], "content": m.get("content") or ""} for m in messages]
        return messages, {"turns": turns, "stop": stop, "tools": tools, "transcript": said}

    async def close(self) -> None:
        """Nothing to release."""


def _assistant(reply: str | dict[str, Any], index: int) -> dict[str, Any]:
    """A policy's reply as a chat-API assistant message."""
    if isinstance(reply, str):
        return {"role": "assistant", "content": reply}
    calls = []
    for k, call in enumerate(reply.get("tool_calls") or []):
        body = call.get("function", call)
        arguments = body.get("arguments", {})
        calls.append(
            {
                "id": f"call-{index}-{k}",
                "type": "function",
                "function": {
                    "name": body.get("name", ""),
                    "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
                },
            }
        )
    return {"role": "assistant", "content": reply.get("content") or "", "tool_calls": calls}


def _run_calls(
    attempt: Attempt, calls: list[dict[str, Any]], messages: list[dict[str, Any]]
) -> bool:
    """Each call on the live attempt, its result as a tool message; True at ``finish``."""
    for call in calls:
        name = call["function"]["name"]
        if name == "finish":
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": "finished"})
            return True
        try:
            arguments = json.loads(call["function"]["arguments"] or "{}")
        except ValueError:
            arguments = call["function"]["arguments"]
        observation = attempt.call(name, arguments)
        content = json.dumps(observation.to_message(), sort_keys=True, default=str)
        messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})
    return False


async def o1_oracle_routes(adapter: Adapter, scorer: Any, ex: Example) -> list[ProbeResult]:
    """Every oracle route of the task, as a completion: known-good, full reward."""
    from falsepass.model import Expect
    from falsepass.probes import targeted

    cases = {route: (Expect.FULL, done) for route, done in ex.raw["routes"].items()}
    return await targeted("O1", "oracle_route", cases, adapter, scorer, ex)


async def m1_mutants(adapter: Adapter, scorer: Any, ex: Example) -> list[ProbeResult]:
    """Every hand mutant of the task on the small seed: known-bad, nothing paid."""
    from falsepass.model import Expect
    from falsepass.probes import targeted

    cases = {mutant: (Expect.ZERO, done) for mutant, done in ex.raw["mutants"].items()}
    return await targeted("M1", "hand_mutant", cases, adapter, scorer, ex)


def make_adapter() -> Adapter:
    """The adapter falsepass's runner loads (``ADAPTER = make_adapter()`` in its adapter.py)."""
    from falsepass import probes
    from falsepass.adapter import Adapter

    class WorldRewardAdapter(Adapter):
        """The plain reward function over every built-in world's tasks (see the module)."""

        name = "harness_world.rewards.reward"
        tool_mode = True
        multi_turn = True
        episode_probes: ClassVar[list[Any]] = [
            probes.p1_ground_truth,
            o1_oracle_routes,
            m1_mutants,
            probes.p3_empty,
            probes.p4_echo,
            probes.p6_format_only,
            probes.p7_wrong_confident,
            probes.p9_oversized,
            probes.p10_exception_path,
            probes.p11_determinism,
            probes.t4_state_reset,
            probes.t8_after_the_end,
        ]

        def load(self, n: int, seed: int) -> tuple[RewardScorer, list[Example]]:
            """``n`` of the tasks (all when ``n`` covers them), sampled from ``seed``."""
            examples = list(_examples())
            if n < len(examples):
                examples = random.Random(seed).sample(examples, n)
            return RewardScorer(), examples

        def render(self, answer: str, example: Example) -> Completion:
            """An answer that is a JSON completion is that completion; any other text is a reply."""
            try:
                found = json.loads(answer)
            except ValueError:
                return answer
            return found if isinstance(found, list) else answer

        def wrong_answer(self, example: Example) -> str:
            """The first hand mutant of the task, else a claim of success without a call."""
            mutants = example.raw["mutants"]
            if mutants:
                return json.dumps(next(iter(mutants.values())))
            return "I have done everything the task asks."

    return WorldRewardAdapter()


def _examples() -> list[Example]:
    """One example per task of the built-in worlds that have oracle routes."""
    from falsepass.model import Example

    out = []
    for world in WORLDS:
        routes: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for task_id, route, done in oracle_completions(world):
            routes.setdefault(task_id, {})[route] = done
        mutants: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for task_id, mutant, size, done in mutant_completions(world):
            if size == "small":
                mutants.setdefault(task_id, {})[mutant] = done
        plan = plan_rollouts(world, sorted(routes), 1, out="unused", kind="falsepass")
        for task_id in sorted(routes):
            raw = {
                "task": task_id,
                "tools": [  # as falsepass's policies read them
                    {
                        "name": t["name"],
                        "description": t["description"],
                        "parameters": t["inputSchema"],
                    }
                    for t in plan.tools(task_id)
                ],
                "routes": routes[task_id],
                "mutants": mutants.get(task_id, {}),
            }
            answer = json.dumps(routes[task_id]["route 0"])
            prompt = plan.prompt(task_id)
            out.append(Example(key=f"{task_id}@0", prompt=prompt, answer=answer, raw=raw))
    return out


__all__ = ["RewardScorer", "make_adapter"]

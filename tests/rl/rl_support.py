"""What the RL tests share: a scripted model on loopback, oracle episodes, process counting.

The scripted model is an OpenAI-compatible chat-completions endpoint (stdlib HTTP server in a
thread) that answers with a policy: a function of the conversation so far and the tools
offered. It stands in for a model in each library's own evaluation or rollout machinery,
which is run for real.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import harness_world as hw
from harness_world.coverage import load_mutants, load_routes, run_script
from harness_world.integrations.rollouts import RolloutPlan
from harness_world.running.rundir import sample_seed

Message = dict[str, Any]
Policy = Callable[[list[Message], list[Message]], Message]
Script = tuple[list[tuple[str, Any]], str]


def call(index: int, name: str, arguments: Any) -> Message:
    """An assistant message making one tool call."""
    return {
        "content": None,
        "tool_calls": [
            {
                "id": f"call-{index}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


def turns_taken(messages: list[Message]) -> int:
    return sum(1 for m in messages if m.get("role") == "assistant")


def prompt_of(messages: list[Message]) -> str:
    return next(str(m.get("content")) for m in messages if m.get("role") == "user")


def scripted(scripts: dict[str, Script]) -> Policy:
    """Play the script of the row whose prompt it is: its calls one per turn, then finish."""

    def policy(messages: list[Message], tools: list[Message]) -> Message:
        calls, final = scripts[prompt_of(messages)]
        k = turns_taken(messages)
        if k < len(calls):
            return call(k, *calls[k])
        return call(k, "finish", {"message": final})

    return policy


def idle(messages: list[Message], tools: list[Message]) -> Message:
    """Do nothing: say it is done."""
    return {"content": "Done."}


def guessing(messages: list[Message], tools: list[Message]) -> Message:
    """Solve reply_and_solve blind: write what the instruction names without reading it."""
    plan = [
        ("add_comment", {"ticket_id": "T-1001", "body": "The outage is fixed.", "public": True}),
        ("update_ticket", {"ticket_id": "T-1001", "status": "solved"}),
    ]
    k = turns_taken(messages)
    if k < len(plan):
        return call(k, *plan[k])
    return call(k, "finish", {"message": "Replied and solved."})


def stalling(messages: list[Message], tools: list[Message]) -> Message:
    """Read the same ticket forever: only a budget ends it."""
    return call(turns_taken(messages), "get_ticket", {"ticket_id": "T-1001"})


class ScriptedModel:
    """An OpenAI-compatible endpoint on loopback answering with a policy (one thread)."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.requests = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests += 1
                data = json.dumps(outer.answer(body)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        message = self.policy(body["messages"], body.get("tools") or [])
        calls = message.get("tool_calls") or []
        reply = {"role": "assistant", "content": message.get("content")}
        if calls:
            reply["tool_calls"] = calls
        return {
            "id": f"scripted-{self.requests}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "scripted"),
            "choices": [
                {"index": 0, "finish_reason": "tool_calls" if calls else "stop", "message": reply}
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> ScriptedModel:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


def oracle_scripts(plan: RolloutPlan, route: int = 0) -> dict[str, Script]:
    """Each row's oracle calls and final message, by prompt (the plan's prompts are distinct).

    The oracle runs at the row's own session seed, so its calls are the calls that solve that
    episode; a scripted model replaying them does what the oracle did.
    """
    routes = load_routes(plan.world.name)
    out: dict[str, Script] = {}
    for row in plan.rows():
        task = plan.tasks[row.task_id]
        record = run_script(plan.world, task, routes[row.task_id][route], seed=row.session_seed)
        calls = [(c.tool, c.args) for c in record.calls]
        out[plan.prompt(row.task_id)] = (calls, record.final_message)
    return out


def completion(record: hw.Record) -> list[Message]:
    """A record's calls as a chat completion: one call per assistant turn, then the final text.

    Turns a script declared beyond its calls (a mutant standing for a model that took too
    many) are assistant messages without calls.
    """
    messages: list[Message] = []
    for c in record.calls:
        messages.append({"role": "assistant", **call(c.seq, c.tool, c.args)})
        messages.append({"role": "tool", "tool_call_id": f"call-{c.seq}", "content": "(result)"})
    for _ in range(max(0, record.usage.turns - len(record.calls) - 1)):
        messages.append({"role": "assistant", "content": "Let me think."})
    messages.append({"role": "assistant", "content": record.final_message})
    return messages


def oracle_completions(world: str, seed: int = 0) -> Iterator[tuple[str, str, list[Message]]]:
    """(task id, route name, completion) for every oracle route of a world's tasks."""
    loaded = hw.load_world(world)
    tasks = {t.id: t for t in hw.load_tasks(world)}
    for task_id, routes in sorted(load_routes(world).items()):
        for index, route in enumerate(routes):
            record = run_script(loaded, tasks[task_id], route, seed=sample_seed(0, task_id, seed))
            yield task_id, f"route {index}", completion(record)


def mutant_completions(world: str, seed: int = 0) -> Iterator[tuple[str, str, str, list[Message]]]:
    """(task id, mutant id, size, completion) for every hand mutant, on each size it declares."""
    tasks = {t.id: t for t in hw.load_tasks(world)}
    for mutant in load_mutants(world):
        for size in mutant.sizes:
            loaded = hw.load_world(world, size=size)
            record = run_script(
                loaded,
                tasks[mutant.task_id],
                mutant.script,
                seed=sample_seed(0, mutant.task_id, seed),
            )
            yield mutant.task_id, mutant.id, size, completion(record)


@contextlib.contextmanager
def counting_processes() -> Iterator[list[str]]:
    """Every process started in this process while the block runs (subprocess and fork)."""
    started: list[str] = []
    popen_init = subprocess.Popen.__init__
    fork = os.fork

    def counted_popen(self: Any, args: Any, *rest: Any, **kwargs: Any) -> None:
        started.append(f"subprocess {args!r}"[:200])
        popen_init(self, args, *rest, **kwargs)

    def counted_fork() -> int:
        started.append("fork")
        return fork()

    subprocess.Popen.__init__ = counted_popen  # type: ignore[method-assign]
    os.fork = counted_fork
    try:
        yield started
    finally:
        subprocess.Popen.__init__ = popen_init  # type: ignore[method-assign]
        os.fork = fork

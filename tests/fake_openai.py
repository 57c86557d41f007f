"""A chat-completions server on loopback that plays a scripted model: no network, no key.

The "model" is a function from the conversation so far to the next assistant message. The
server can fail the first N requests with HTTP 500 to exercise the driver's retries, or stall
them past the client's timeout (a lost response, as from a cold local model).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Brain = Callable[[list[dict[str, Any]]], dict[str, Any]]


def tool_call(n: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"call_{n}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


def scripted_brain(steps: list[list[tuple[str, dict[str, Any]]] | str]) -> Brain:
    """Each step is a list of tool calls to make, or the final text; chosen by assistant turns so far."""

    def brain(messages: list[dict[str, Any]]) -> dict[str, Any]:
        turn = sum(1 for m in messages if m["role"] == "assistant")
        step = steps[min(turn, len(steps) - 1)]
        if isinstance(step, str):
            return {"role": "assistant", "content": step}
        calls = [tool_call(turn * 10 + i, name, args) for i, (name, args) in enumerate(step)]
        return {"role": "assistant", "content": None, "tool_calls": calls}

    return brain


def text_brain(steps: list[str]) -> Brain:
    """A model without tool calling: each step is the text of its reply, by assistant turns."""

    def brain(messages: list[dict[str, Any]]) -> dict[str, Any]:
        turn = sum(1 for m in messages if m["role"] == "assistant")
        return {"role": "assistant", "content": steps[min(turn, len(steps) - 1)]}

    return brain


@contextmanager
def fake_openai(
    brain: Brain,
    *,
    fail_first: int = 0,
    stall_first: int = 0,
    stall_s: float = 0.0,
    answer_model: str = "",
    usage: dict[str, Any] | None = None,
) -> Iterator[dict[str, Any]]:
    """Serve the brain on 127.0.0.1; yields {"base_url", "requests"} (the bodies received).

    The first ``fail_first`` requests get HTTP 500; the next ``stall_first`` are answered only
    after ``stall_s`` seconds (set the client's timeout below it to lose their responses).
    Responses name ``answer_model`` as their model (default: the model asked for), as a
    provider resolving an alias does. ``usage`` replaces fields of the usage every response
    reports (a provider reporting impossible counts, e.g. negative or beyond 2^53).
    """
    state: dict[str, Any] = {
        "requests": [],
        "failures_left": fail_first,
        "stalls_left": stall_first,
    }

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", 0))
            body = json.loads(self.rfile.read(length))
            state["requests"].append(body)
            if state["failures_left"] > 0:
                state["failures_left"] -= 1
                self._send(500, {"error": {"message": "overloaded", "type": "server_error"}})
                return
            if state["stalls_left"] > 0:
                state["stalls_left"] -= 1
                time.sleep(stall_s)  # the client has given up by now: the response is lost
            message = brain(body["messages"])
            prompt = len(json.dumps(body["messages"])) // 4
            self._send(
                200,
                {
                    "id": f"chatcmpl-{len(state['requests'])}",
                    "object": "chat.completion",
                    "created": 0,
                    "model": answer_model or body["model"],
                    "choices": [
                        {
                            "index": 0,
                            "message": message,
                            "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                        }
                    ],
                    "usage": {
                        "prompt_tokens": prompt,
                        "completion_tokens": 20,
                        "total_tokens": prompt + 20,
                        **(usage or {}),
                    },
                },
            )

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # a client that timed out has closed the connection

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield {
            "base_url": f"http://127.0.0.1:{server.server_address[1]}/v1",
            "requests": state["requests"],
        }
    finally:
        server.shutdown()
        server.server_close()

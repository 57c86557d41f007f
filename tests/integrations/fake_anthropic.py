"""A Messages API server on loopback that plays a scripted model: no network, no key.

The "model" is a function from the conversation so far to the next assistant content blocks.
The server can fail the first N requests with a chosen status (529 ``overloaded_error`` by
default) to exercise the driver's retries.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Brain = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]


def scripted_brain(steps: list[list[tuple[str, dict[str, Any]]] | str]) -> Brain:
    """Each step is a list of tool uses to make, or the final text; chosen by assistant turns so far."""

    def brain(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        turn = sum(1 for m in messages if m["role"] == "assistant")
        step = steps[min(turn, len(steps) - 1)]
        if isinstance(step, str):
            return [{"type": "text", "text": step}]
        return [
            {"type": "tool_use", "id": f"toolu_{turn}_{i}", "name": name, "input": args}
            for i, (name, args) in enumerate(step)
        ]

    return brain


@contextmanager
def fake_anthropic(
    brain: Brain,
    *,
    fail_first: int = 0,
    fail_status: int = 529,
    usage: dict[str, Any] | None = None,
) -> Iterator[dict[str, Any]]:
    """Serve the brain on 127.0.0.1; yields {"base_url", "requests"} (the bodies received).

    ``usage`` replaces fields of the usage every answer reports (a provider reporting
    impossible counts, e.g. negative or beyond 2^53).
    """
    state: dict[str, Any] = {"requests": [], "failures_left": fail_first, "paths": []}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", 0))
            body = json.loads(self.rfile.read(length))
            state["requests"].append(body)
            state["paths"].append(self.path)
            if self.path != "/v1/messages":
                self._send(
                    404,
                    {"type": "error", "error": {"type": "not_found_error", "message": self.path}},
                )
                return
            if state["failures_left"] > 0:
                state["failures_left"] -= 1
                self._send(
                    fail_status,
                    {
                        "type": "error",
                        "error": {"type": "overloaded_error", "message": "Overloaded"},
                    },
                )
                return
            content = brain(body["messages"])
            prompt = (len(json.dumps(body["messages"])) + len(body.get("system", ""))) // 4
            uses = any(block["type"] == "tool_use" for block in content)
            self._send(
                200,
                {
                    "id": f"msg_{len(state['requests'])}",
                    "type": "message",
                    "role": "assistant",
                    "model": body["model"],
                    "content": content,
                    "stop_reason": "tool_use" if uses else "end_turn",
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": prompt,
                        "output_tokens": 20,
                        "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": 5,
                        **(usage or {}),
                    },
                },
            )

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield {
            "base_url": f"http://127.0.0.1:{server.server_address[1]}",
            "requests": state["requests"],
            "paths": state["paths"],
        }
    finally:
        server.shutdown()
        server.server_close()

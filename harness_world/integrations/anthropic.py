"""An agent for Anthropic's Messages API (extra: `harness_world[anthropic]`).

The loop, retries and metering are `harness_world.integrations.model_agent`'s; this module says
how the Messages API is spoken. Overloaded (529), rate-limited (429), timed-out (408),
conflicting (409) and server errors (5xx) are retried; any other status is not, and ends the
attempt as ``infrastructure``.

Input tokens are ``input_tokens`` plus the cache-creation and cache-read tokens of the response
(the whole prompt the model saw), all priced at ``price_in_per_mtok``: no cache discount is
assumed, so the cost errs high, never low.
"""

from __future__ import annotations

import json
from typing import Any

import attrs

from harness_world.evidence.record import TranscriptMessage, TranscriptToolCall
from harness_world.integrations import DEFAULT_SYSTEM_PROMPT
from harness_world.integrations.model_agent import AsyncModelAgent, Messages, ModelAgent
from harness_world.running.attempt import Attempt
from harness_world.running.metered import check_price

__all__ = ["AnthropicAgent", "AsyncAnthropicAgent", "anthropic_transcript"]


@attrs.frozen(slots=True)
class AnthropicAgent(ModelAgent):
    """A tool-calling loop over the Messages API.

    Attributes:
        model: The model name, e.g. ``claude-sonnet-4-5``.
        base_url: The endpoint (None: the SDK's default, ``https://api.anthropic.com``).
        api_key: The key (any string for a local fake).
        temperature: Sampling temperature, or None to leave it to the API. Current SDKs no
            longer take it as an argument, so a set value travels in the request body.
        system_prompt: The system prompt; its hash is part of the run revision.
        max_retries: Retries per model request after a failure (owned here, counted in records).
        timeout_s: Per-request timeout in seconds.
        max_tokens: Output token cap per request (required by the API; bounds the money reserved).
        price_in_per_mtok: US dollars per million input tokens (for reservations and cost).
        price_out_per_mtok: US dollars per million output tokens.
        name: A label for reports.
    """

    kind = "anthropic"
    sdk_clients = ("Anthropic", "AsyncAnthropic")
    endpoint = "messages.create"
    usage_fields = (
        ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"),
        ("output_tokens",),
    )

    model: str
    base_url: str | None = None
    api_key: str = "not-needed"
    temperature: float | None = None
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    max_retries: int = 2
    timeout_s: float = 60.0
    max_tokens: int = 1024
    price_in_per_mtok: float = attrs.field(default=0.0, validator=check_price)
    price_out_per_mtok: float = attrs.field(default=0.0, validator=check_price)
    name: str = "anthropic"

    def _start(self, attempt: Attempt) -> Messages:
        return [{"role": "user", "content": attempt.instruction}]

    def _body(self, messages: Messages, tools: Messages) -> dict[str, Any]:
        # The installed SDK takes no `temperature` argument: it goes in the body when set.
        extra = {} if self.temperature is None else {"temperature": self.temperature}
        offered = {"tools": tools} if tools else {}  # a task may allow no tool at all
        return {
            "model": self.model,
            "system": self.system_prompt,
            "messages": messages,
            **offered,
            "max_tokens": self.max_tokens,
            "extra_body": extra or None,
        }

    def _after(
        self, attempt: Attempt, messages: Messages, response: Any, tools: Messages
    ) -> str | None:
        """Run the reply's ``tool_use`` blocks in order; its text when there are none."""
        blocks = [block for block in response.content if block.type in ("text", "tool_use")]
        messages.append({"role": "assistant", "content": [_sent_back(block) for block in blocks]})
        uses = [block for block in blocks if block.type == "tool_use"]
        if not uses:
            return "".join(block.text for block in blocks if block.type == "text")
        messages.append({"role": "user", "content": [_tool_result(attempt, u) for u in uses]})
        return None

    def _transcript(self, messages: Messages) -> list[TranscriptMessage]:
        return anthropic_transcript(self.system_prompt, messages)


@attrs.frozen(slots=True)
class AsyncAnthropicAgent(AsyncModelAgent):
    """`AnthropicAgent` over the SDK's async client: ``async def run``, for ``--concurrency``.

    Attributes:
        config: The agent's settings (the same settings, hence the same revision).
    """

    config: AnthropicAgent


def _sent_back(block: Any) -> dict[str, Any]:
    """A text or ``tool_use`` block of a reply, as the next request sends it back."""
    if block.type == "text":
        return {"type": "text", "text": block.text}
    return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}


def _tool_result(attempt: Attempt, use: Any) -> dict[str, Any]:
    """Execute one ``tool_use`` block and return its ``tool_result`` block."""
    observation = attempt.call(use.name, use.input)
    return {
        "type": "tool_result",
        "tool_use_id": use.id,
        "content": json.dumps(observation.to_message(), sort_keys=True),
        "is_error": not observation.ok,
    }


def anthropic_transcript(system: str, messages: list[dict[str, Any]]) -> list[TranscriptMessage]:
    """The record's transcript of an Anthropic conversation.

    The system prompt comes first, then each message; a user message of ``tool_result`` blocks
    becomes one tool message per block, in order (each counts the call it answers in
    ``after_call``).
    """
    out = [TranscriptMessage(role="system", content=system)]
    answered = 0
    for entry in messages:
        content = entry.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        results = [b for b in blocks if b.get("type") == "tool_result"]
        for block in results:
            answered += 1
            out.append(
                TranscriptMessage(
                    role="tool",
                    content=str(block.get("content", "")),
                    tool_call_id=str(block.get("tool_use_id", "")),
                    after_call=answered,
                )
            )
        if results:
            continue
        calls = [
            TranscriptToolCall(
                id=str(b.get("id", "")),
                name=str(b.get("name", "")),
                arguments=json.dumps(b.get("input"), sort_keys=True),
            )
            for b in blocks
            if b.get("type") == "tool_use"
        ]
        text = "".join(str(b.get("text") or "") for b in blocks if b.get("type") == "text")
        role = str(entry.get("role", ""))
        out.append(
            TranscriptMessage(role=role, content=text, tool_calls=calls, after_call=answered)
        )
    return out

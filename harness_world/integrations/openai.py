"""An agent for OpenAI-compatible chat-completions endpoints (extra: `harness_world[openai]`).

The loop, retries and metering are `harness_world.integrations.model_agent`'s; this module says
how the chat-completions API is spoken. With ``tool_calling="text"`` (a model served without
tool calling) the tools are described in the system prompt instead of the API's ``tools``
parameter, the calls are read from the reply's text (`harness_world.running.text_tool_calls`)
and their results go back as a user message.
"""

from __future__ import annotations

import json
from typing import Any

import attrs
import msgspec

from harness_world.evidence.record import TranscriptMessage, TranscriptToolCall
from harness_world.integrations import DEFAULT_SYSTEM_PROMPT
from harness_world.integrations.model_agent import AsyncModelAgent, Messages, ModelAgent
from harness_world.running.attempt import Attempt
from harness_world.running.context import ContextPolicy, bound_messages
from harness_world.running.metered import check_price
from harness_world.running.text_tool_calls import (
    ToolCallMode,
    parse_tool_calls,
    rejection_note,
    text_conversation,
    tools_prompt,
)
from harness_world.running.user import GREETING

__all__ = ["AsyncOpenAIAgent", "OpenAIAgent", "openai_transcript"]

_Call = tuple[str, str, Any, Any]
"""One call of a reply: its id, its tool, its arguments as the model wrote them, decoded."""


@attrs.frozen(slots=True)
class OpenAIAgent(ModelAgent):
    """A tool-calling loop over the chat-completions API.

    Attributes:
        model: The model name sent to the endpoint.
        base_url: The endpoint, e.g. ``https://api.openai.com/v1`` or a local server.
        api_key: The key (any string for local servers).
        temperature: Sampling temperature.
        system_prompt: The system message; its hash is part of the run revision.
        max_retries: Retries per model request after a failure (owned here, counted in records).
        timeout_s: Per-request timeout in seconds.
        max_tokens: Completion token cap per request (also bounds the money reserved).
        price_in_per_mtok: US dollars per million prompt tokens (for reservations and cost).
        price_out_per_mtok: US dollars per million completion tokens.
        name: A label for reports.
        context: Bounded context (diagnose): old tool results beyond its budget are sent as
            short notices; the record keeps them whole. Part of `settings`, so of the revision.
        tool_calling: ``native`` (the API's tool calling) or ``text`` (tools described in the
            system prompt, calls read from the reply's text): part of `settings` when ``text``.
    """

    kind = "openai"
    sdk_clients = ("OpenAI", "AsyncOpenAI")
    endpoint = "chat.completions.create"
    usage_fields = (("prompt_tokens",), ("completion_tokens",))

    model: str
    base_url: str
    api_key: str = "not-needed"
    temperature: float = 0.0
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    max_retries: int = 2
    timeout_s: float = 60.0
    max_tokens: int = 1024
    price_in_per_mtok: float = attrs.field(default=0.0, validator=check_price)
    price_out_per_mtok: float = attrs.field(default=0.0, validator=check_price)
    name: str = "openai"
    context: ContextPolicy | None = None
    tool_calling: ToolCallMode = attrs.field(
        default="native", validator=attrs.validators.in_(("native", "text"))
    )

    def _more_settings(self) -> dict[str, Any]:
        return {
            **({"context": msgspec.to_builtins(self.context)} if self.context else {}),
            **({"tool_calling": self.tool_calling} if self.tool_calling != "native" else {}),
        }

    def _start(self, attempt: Attempt) -> Messages:
        """The instruction, or a simulated user's first message; then what a fork has shown."""
        messages: Messages = [{"role": "system", "content": self.system_prompt}]
        if attempt.user is None:
            messages.append({"role": "user", "content": attempt.instruction})
        else:
            opening = attempt.message_user(GREETING)
            messages.append({"role": "assistant", "content": GREETING})
            messages.append({"role": "user", "content": opening})
        for tool, args, observation in getattr(attempt, "shown", ()):
            call_id = f"fork_{observation.seq}"
            calls = [_call_entry(call_id, tool, json.dumps(args, sort_keys=True))]
            messages.append({"role": "assistant", "content": "", "tool_calls": calls})
            content = json.dumps(observation.to_message(), sort_keys=True)
            messages.append({"role": "tool", "tool_call_id": call_id, "content": content})
        return messages

    def _body(self, messages: Messages, tools: Messages) -> dict[str, Any]:
        """The messages as sent: bounded; in text mode as plain turns, tools in the system."""
        prompt = bound_messages(messages, self.context)
        if self.tool_calling == "text":
            prompt = text_conversation(prompt)
            if prompt and prompt[0].get("role") == "system":
                system = f"{prompt[0].get('content') or ''}\n\n{tools_prompt(tools)}"
                prompt[0] = {"role": "system", "content": system}
        # In text mode the tools are in the system message: a server without tool support
        # may refuse a request that names them. An empty list (a task allowing no tool) is
        # refused by the API, so it is left out.
        offered = {"tools": tools} if self.tool_calling == "native" and tools else {}
        return {
            "model": self.model,
            "messages": prompt,
            **offered,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }

    def _after(
        self, attempt: Attempt, messages: Messages, response: Any, tools: Messages
    ) -> str | None:
        """Run the reply's tool calls (native, or read from its text); the final message."""
        message = response.choices[0].message
        text = str(message.content or "")
        calls, rejected = self._calls(message, text, messages, tools)
        entry: dict[str, Any] = {"role": "assistant", "content": text}
        if calls:
            entry["tool_calls"] = [_call_entry(*call[:3]) for call in calls]
        messages.append(entry)
        if not calls:
            answer = _to_user(attempt, text)
            if answer is None:
                return text
            messages.append({"role": "user", "content": answer})
            return None
        for call_id, name, _, args in calls:
            content = attempt.render(attempt.call(name, args))  # the view decides the text
            messages.append({"role": "tool", "tool_call_id": call_id, "content": content})
        if rejected:
            messages.append({"role": "user", "content": rejection_note(rejected)})
        return None

    def _calls(
        self, message: Any, text: str, messages: Messages, tools: Messages
    ) -> tuple[list[_Call], list[str]]:
        """The reply's calls, and why calls written in its text were not taken.

        Text mode keeps the calls read from the reply's text in the native shape, with ids made
        here; `text_conversation` writes them back as plain turns.
        """
        if self.tool_calling == "native":
            native = [
                (c.id, c.function.name, c.function.arguments) for c in message.tool_calls or []
            ]
            return [(*call, _decoded(call[2])) for call in native], []
        parsed = parse_tool_calls(text, {str(t.get("function", {}).get("name", "")) for t in tools})
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        calls = [
            (f"text_{turn}_{i}", call.name, json.dumps(call.arguments), call.arguments)
            for i, call in enumerate(parsed.calls)
        ]
        return calls, parsed.rejected

    def _transcript(self, messages: Messages) -> list[TranscriptMessage]:
        return openai_transcript(messages)


@attrs.frozen(slots=True)
class AsyncOpenAIAgent(AsyncModelAgent):
    """`OpenAIAgent` over the SDK's async client: ``async def run``, for ``run --concurrency``.

    Attributes:
        config: The agent's settings (the same settings, hence the same revision).
    """

    config: OpenAIAgent


def openai_transcript(messages: list[dict[str, Any]]) -> list[TranscriptMessage]:
    """The record's transcript of an OpenAI-style conversation (the messages as kept, unbounded).

    Each tool message answers one recorded call, in order, so a message's ``after_call`` is the
    number of tool messages up to it (a tool message counts the call it answers).
    """
    out: list[TranscriptMessage] = []
    answered = 0
    for entry in messages:
        calls = [
            TranscriptToolCall(
                id=str(c.get("id", "")),
                name=str(c.get("function", {}).get("name", "")),
                arguments=str(c.get("function", {}).get("arguments", "") or ""),
            )
            for c in entry.get("tool_calls") or []
        ]
        answered += entry.get("role") == "tool"
        out.append(
            TranscriptMessage(
                role=str(entry.get("role", "")),
                content=str(entry.get("content") or ""),
                tool_calls=calls,
                tool_call_id=str(entry.get("tool_call_id", "")),
                after_call=answered,
            )
        )
    return out


def _to_user(attempt: Attempt, text: str) -> str | None:
    """A text answer goes to the simulated user: the user's reply, or None when it is final.

    Without a user, or once the user has stopped, the text is the agent's final message.
    """
    if attempt.user is None or attempt.user_stopped:
        return None
    answer = attempt.message_user(text)
    return None if attempt.user_stopped else answer


def _call_entry(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    """One tool call of an assistant message, in the chat API's shape."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _decoded(arguments: Any) -> Any:
    """A native call's arguments: the JSON decoded, or the text as written when it is not JSON."""
    try:
        return json.loads(arguments or "{}")
    except (json.JSONDecodeError, RecursionError):
        return arguments

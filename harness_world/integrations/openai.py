"""An agent for OpenAI-compatible chat-completions endpoints (extra: `harness_world[openai]`).

The driver owns retries: the SDK client is built with ``max_retries=0`` and every retry goes
through ``attempt.reserve(..., retry=True)``, so the record counts it. A request whose response is
lost (connection error, timeout) keeps its reservation as uncertain exposure, never zero, and is
counted as a lost request with its estimated prompt tokens.

With ``tool_calling="text"`` (a model served without tool calling) the tools are described in the
system prompt instead of the API's ``tools`` parameter, the calls are read from the reply's text
(`harness_world.running.text_tool_calls`) and their results go back as a user message.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import attrs
import msgspec

from harness_world.evidence.record import TranscriptMessage, TranscriptToolCall
from harness_world.integrations import DEFAULT_SYSTEM_PROMPT
from harness_world.running.attempt import Attempt, Reservation
from harness_world.running.context import ContextPolicy, bound_messages
from harness_world.running.metered import (
    ProviderErrors,
    check_price,
    metered_request,
    metered_request_async,
    settle_tokens,
)
from harness_world.running.text_tool_calls import (
    ToolCallMode,
    parse_tool_calls,
    rejection_note,
    text_conversation,
    tools_prompt,
)
from harness_world.running.user import GREETING

__all__ = ["AsyncOpenAIAgent", "OpenAIAgent", "openai_transcript"]


@attrs.frozen(slots=True)
class OpenAIAgent:
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

    def settings(self) -> dict[str, Any]:
        """What changes results: model, temperature, limits, prices and the prompt's hash."""
        return {
            "kind": "openai",
            "model": self.model,
            "base_url": self.base_url,
            "temperature": self.temperature,
            "system_prompt_sha256": hashlib.sha256(self.system_prompt.encode()).hexdigest(),
            "max_retries": self.max_retries,
            "max_tokens": self.max_tokens,
            # present only when changed, so revisions made with the default are unchanged
            **({"timeout_s": self.timeout_s} if self.timeout_s != 60.0 else {}),
            # present only when set, so revisions without a policy are unchanged
            **({"context": msgspec.to_builtins(self.context)} if self.context else {}),
            **({"tool_calling": self.tool_calling} if self.tool_calling != "native" else {}),
        }

    def _client(self) -> Any:
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise RuntimeError(
                "the OpenAI agent needs `pip install harness_world[openai]`"
            ) from exc
        return openai.OpenAI(
            base_url=self.base_url, api_key=self.api_key, max_retries=0, timeout=self.timeout_s
        )

    def _estimate(self, messages: list[dict[str, Any]]) -> float:
        return (
            _prompt_tokens(messages) * self.price_in_per_mtok
            + self.max_tokens * self.price_out_per_mtok
        ) / 1e6

    def _wire(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """The messages as sent: bounded; in text mode as plain turns, tools in the system."""
        prompt = bound_messages(messages, self.context)
        if self.tool_calling == "native":
            return prompt
        prompt = text_conversation(prompt)
        if prompt and prompt[0].get("role") == "system":
            system = f"{prompt[0].get('content') or ''}\n\n{tools_prompt(tools)}"
            prompt[0] = {"role": "system", "content": system}
        return prompt

    def _after(
        self, attempt: Attempt, messages: list[dict[str, Any]], message: Any, names: set[str]
    ) -> str | None:
        """Run the reply's tool calls (native, or read from its text); the final message."""
        if self.tool_calling == "native":
            return _after_reply(attempt, messages, message)
        return _after_text_reply(attempt, messages, message, names)

    def _start(self, attempt: Attempt) -> list[dict[str, Any]]:
        """System and user messages, then what a fork's agent has already seen (diagnose)."""
        messages = _opening(attempt, self.system_prompt)
        for tool, args, observation in getattr(attempt, "shown", ()):
            call_id = f"fork_{observation.seq}"
            arguments = json.dumps(args, sort_keys=True)
            function = {"name": tool, "arguments": arguments}
            messages.append(
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [{"id": call_id, "type": "function", "function": function}],
                }
            )
            content = json.dumps(observation.to_message(), sort_keys=True)
            messages.append({"role": "tool", "tool_call_id": call_id, "content": content})
        return messages

    def run(self, attempt: Attempt) -> str:
        """Loop: ask the model, execute its tool calls in order, until it answers in text.

        Raises:
            InfrastructureError: when a request fails after its retries (an unreachable
                endpoint, a provider error): the attempt is then not counted, and ``run``
                exits 1.
        """
        client = self._client()
        messages = self._start(attempt)
        tools = attempt.tool_schemas("openai")
        names = _tool_names(tools)
        try:
            while True:
                attempt.begin_turn()
                message = self._request(client, attempt, messages, tools).choices[0].message
                final = self._after(attempt, messages, message, names)
                if final is not None:
                    return final
        finally:
            attempt.keep_transcript(openai_transcript(messages))

    def _request(
        self,
        client: Any,
        attempt: Attempt,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
    ) -> Any:
        """One model request with the driver's own retries, each metered by the attempt."""
        prompt = self._wire(messages, tools)  # bounded context; text mode's plain turns
        return metered_request(
            attempt,
            tries=self.max_retries + 1,
            estimate=self._estimate(prompt),
            input_tokens=_prompt_tokens(prompt),
            send=lambda: client.chat.completions.create(**self._body(prompt, tools)),
            settle=self._settle,
            errors=_errors(),
        )

    async def _arequest(
        self,
        client: Any,
        attempt: Attempt,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
    ) -> Any:
        """`_request` over the SDK's async client: the same tries, metering and outcomes."""
        prompt = self._wire(messages, tools)
        return await metered_request_async(
            attempt,
            tries=self.max_retries + 1,
            estimate=self._estimate(prompt),
            input_tokens=_prompt_tokens(prompt),
            send=lambda: client.chat.completions.create(**self._body(prompt, tools)),
            settle=self._settle,
            errors=_errors(),
        )

    def _body(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        # In text mode the tools are in the system message: a server without tool support
        # may refuse a request that names them. An empty list (a task allowing no tool) is
        # refused by the API, so it is left out.
        offered = {"tools": tools} if self.tool_calling == "native" and tools else {}
        return {
            "model": self.model,
            "messages": messages,
            **offered,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }

    def _settle(self, attempt: Attempt, reservation: Reservation, response: Any) -> None:
        # A count left out (or null) is not reported: 0. Any other value is checked as is.
        usage = getattr(response, "usage", None)
        prompt = getattr(usage, "prompt_tokens", None)
        completion = getattr(usage, "completion_tokens", None)
        settle_tokens(
            attempt,
            reservation,
            input_tokens=0 if prompt is None else prompt,
            output_tokens=0 if completion is None else completion,
            prices=(self.price_in_per_mtok, self.price_out_per_mtok),
            model=str(getattr(response, "model", "") or ""),
        )


@attrs.frozen(slots=True)
class AsyncOpenAIAgent:
    """`OpenAIAgent` over the SDK's async client: ``async def run``, for ``run --concurrency``.

    The same loop, retries, metering and settings (hence the same revision and the same records
    apart from context); attempts in flight overlap their waiting on one event loop.

    Attributes:
        config: The agent's settings.
    """

    config: OpenAIAgent

    @property
    def name(self) -> str:
        """The configured agent's name."""
        return self.config.name

    def settings(self) -> dict[str, Any]:
        """The configured agent's settings (the client kind changes no result)."""
        return self.config.settings()

    async def run(self, attempt: Attempt) -> str:
        """The tool loop, awaiting each model request.

        Raises:
            InfrastructureError: when a request fails after its retries.
        """
        import openai

        cfg = self.config
        client = openai.AsyncOpenAI(
            base_url=cfg.base_url, api_key=cfg.api_key, max_retries=0, timeout=cfg.timeout_s
        )
        messages = cfg._start(attempt)
        tools = attempt.tool_schemas("openai")
        names = _tool_names(tools)
        try:
            async with client:
                while True:
                    attempt.begin_turn()
                    reply = await cfg._arequest(client, attempt, messages, tools)
                    final = cfg._after(attempt, messages, reply.choices[0].message, names)
                    if final is not None:
                        return final
        finally:
            attempt.keep_transcript(openai_transcript(messages))


def _errors() -> ProviderErrors:
    """What the OpenAI SDK's errors mean (imported when a request is made)."""
    import openai

    return ProviderErrors(
        api_error=openai.APIError, lost=(openai.APIConnectionError, openai.APITimeoutError)
    )


def _prompt_tokens(messages: list[dict[str, Any]]) -> int:
    """Estimated prompt tokens of the messages sent: their JSON characters / 3.

    A deliberate over-estimate (4 is typical); the tool schemas of a native request are not
    counted.
    """
    return len(json.dumps(messages)) // 3 + 1


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


def _tool_names(tools: list[dict[str, Any]]) -> set[str]:
    return {str(t.get("function", {}).get("name", "")) for t in tools}


def _after_reply(attempt: Attempt, messages: list[dict[str, Any]], message: Any) -> str | None:
    """Run the reply's tool calls (or pass its text to the user); the final message, or None."""
    calls = message.tool_calls or []
    messages.append(_assistant_entry(message, calls))
    if not calls:
        return _answer(attempt, messages, str(message.content or ""))
    for tool_call in calls:
        messages.append(_tool_reply(attempt, tool_call))
    return None


def _answer(attempt: Attempt, messages: list[dict[str, Any]], text: str) -> str | None:
    """A reply without tool calls: the final message, or None once the user has answered it."""
    answer = _to_user(attempt, text)
    if answer is None:
        return text
    messages.append({"role": "user", "content": answer})
    return None


def _after_text_reply(
    attempt: Attempt, messages: list[dict[str, Any]], message: Any, names: set[str]
) -> str | None:
    """Text mode: run the calls written in the reply's text; without any, it is an answer.

    The conversation keeps the native shape (an assistant entry with ``tool_calls``, one tool
    message per result) with ids made here; `text_conversation` writes it as plain turns.
    """
    text = str(message.content or "")
    parsed = parse_tool_calls(text, names)
    if not parsed.calls:
        messages.append({"role": "assistant", "content": text})
        return _answer(attempt, messages, text)
    turn = sum(1 for m in messages if m.get("role") == "assistant")
    ids = [f"text_{turn}_{i}" for i in range(len(parsed.calls))]
    entries = [
        {
            "id": call_id,
            "type": "function",
            "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
        }
        for call_id, call in zip(ids, parsed.calls, strict=True)
    ]
    messages.append({"role": "assistant", "content": text, "tool_calls": entries})
    for call_id, call in zip(ids, parsed.calls, strict=True):
        observation = attempt.call(call.name, call.arguments)
        content = attempt.render(observation)
        messages.append({"role": "tool", "tool_call_id": call_id, "content": content})
    if parsed.rejected:
        messages.append({"role": "user", "content": rejection_note(parsed.rejected)})
    return None


def _assistant_entry(message: Any, calls: list[Any]) -> dict[str, Any]:
    entry: dict[str, Any] = {"role": "assistant", "content": message.content or ""}
    if calls:
        entry["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.function.name, "arguments": c.function.arguments},
            }
            for c in calls
        ]
    return entry


def _tool_reply(attempt: Attempt, tool_call: Any) -> dict[str, Any]:
    try:
        args: Any = json.loads(tool_call.function.arguments or "{}")
    except (json.JSONDecodeError, RecursionError):
        args = tool_call.function.arguments
    observation = attempt.call(tool_call.function.name, args)
    return {
        "role": "tool",
        "tool_call_id": tool_call.id,
        "content": attempt.render(observation),  # the observation mode decides the text
    }


def _opening(attempt: Attempt, system_prompt: str) -> list[dict[str, Any]]:
    """The first messages: the instruction, or with a simulated user its first message."""
    if attempt.user is None:
        return [
            {"role": "system", "content": system_prompt},
            {"role": "user", "content": attempt.instruction},
        ]
    opening = attempt.message_user(GREETING)
    return [
        {"role": "system", "content": system_prompt},
        {"role": "assistant", "content": GREETING},
        {"role": "user", "content": opening},
    ]


def _to_user(attempt: Attempt, text: str) -> str | None:
    """A text answer goes to the simulated user: the user's reply, or None when it is final.

    Without a user, or once the user has stopped, the text is the agent's final message.
    """
    if attempt.user is None or attempt.user_stopped:
        return None
    answer = attempt.message_user(text)
    return None if attempt.user_stopped else answer

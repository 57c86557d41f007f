"""An agent for Anthropic's Messages API (extra: `harness_world[anthropic]`).

It mirrors `harness_world.integrations.openai`: the SDK client is built with ``max_retries=0``
and every retry goes through ``attempt.reserve(..., retry=True)``, so the record counts it; a
request whose response is lost (connection error, timeout) keeps its reservation as uncertain
exposure and is counted as a lost request with its estimated prompt tokens.
Overloaded (529), rate-limited (429), timed-out (408), conflicting (409) and server errors (5xx)
are retried; any other status ends the attempt as ``error``.

Input tokens are ``input_tokens`` plus the cache-creation and cache-read tokens of the response
(the whole prompt the model saw), all priced at ``price_in_per_mtok``: no cache discount is
assumed, so the cost errs high, never low.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import attrs

from harness_world.evidence.record import TranscriptMessage, TranscriptToolCall
from harness_world.integrations import DEFAULT_SYSTEM_PROMPT
from harness_world.running.attempt import Attempt, Reservation, token_problem
from harness_world.running.metered import (
    ProviderErrors,
    check_price,
    metered_request,
    metered_request_async,
    settle_tokens,
)

__all__ = ["AnthropicAgent", "AsyncAnthropicAgent", "anthropic_transcript"]


@attrs.frozen(slots=True)
class AnthropicAgent:
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

    def settings(self) -> dict[str, Any]:
        """What changes results: model, temperature, limits, prices and the prompt's hash."""
        return {
            "kind": "anthropic",
            "model": self.model,
            "base_url": self.base_url,
            "temperature": self.temperature,
            "system_prompt_sha256": hashlib.sha256(self.system_prompt.encode()).hexdigest(),
            "max_retries": self.max_retries,
            "max_tokens": self.max_tokens,
            # present only when changed, so revisions made with the default are unchanged
            **({"timeout_s": self.timeout_s} if self.timeout_s != 60.0 else {}),
        }

    def _client(self) -> Any:
        try:
            import anthropic
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise RuntimeError(
                "the Anthropic agent needs `pip install harness_world[anthropic]`"
            ) from exc
        return anthropic.Anthropic(
            base_url=self.base_url, api_key=self.api_key, max_retries=0, timeout=self.timeout_s
        )

    def _prompt_tokens(self, messages: list[dict[str, Any]]) -> int:
        """Estimated prompt tokens: the characters of the messages and the system prompt / 3.

        A deliberate over-estimate (4 is typical); the tool schemas are not counted.
        """
        return (len(json.dumps(messages)) + len(self.system_prompt)) // 3 + 1

    def _estimate(self, messages: list[dict[str, Any]]) -> float:
        return (
            self._prompt_tokens(messages) * self.price_in_per_mtok
            + self.max_tokens * self.price_out_per_mtok
        ) / 1e6

    def run(self, attempt: Attempt) -> str:
        """Loop: ask the model, execute its ``tool_use`` blocks in order, until it ends its turn.

        Raises:
            InfrastructureError: when a request fails after its retries (an unreachable
                endpoint, a provider error): the attempt is then not counted, and ``run``
                exits 1.
        """
        client = self._client()
        messages: list[dict[str, Any]] = [{"role": "user", "content": attempt.instruction}]
        tools = attempt.tool_schemas("anthropic")
        try:
            while True:
                attempt.begin_turn()
                response = self._request(client, attempt, messages, tools)
                final = _after_reply(attempt, messages, response)
                if final is not None:
                    return final
        finally:
            attempt.keep_transcript(anthropic_transcript(self.system_prompt, messages))

    def _request(
        self,
        client: Any,
        attempt: Attempt,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
    ) -> Any:
        """One model request with the driver's own retries, each metered by the attempt."""
        return metered_request(
            attempt,
            tries=self.max_retries + 1,
            estimate=self._estimate(messages),
            input_tokens=self._prompt_tokens(messages),
            send=lambda: client.messages.create(**self._body(messages, tools)),
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
        return await metered_request_async(
            attempt,
            tries=self.max_retries + 1,
            estimate=self._estimate(messages),
            input_tokens=self._prompt_tokens(messages),
            send=lambda: client.messages.create(**self._body(messages, tools)),
            settle=self._settle,
            errors=_errors(),
        )

    def _body(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
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

    def _settle(self, attempt: Attempt, reservation: Reservation, response: Any) -> None:
        usage = getattr(response, "usage", None)
        completion = getattr(usage, "output_tokens", None)
        settle_tokens(
            attempt,
            reservation,
            input_tokens=_input_tokens(usage),
            output_tokens=0 if completion is None else completion,
            prices=(self.price_in_per_mtok, self.price_out_per_mtok),
            model=str(getattr(response, "model", "") or ""),
        )


@attrs.frozen(slots=True)
class AsyncAnthropicAgent:
    """`AnthropicAgent` over the SDK's async client: ``async def run``, for ``--concurrency``.

    Attributes:
        config: The agent's settings (the same settings, hence the same revision).
    """

    config: AnthropicAgent

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
        import anthropic

        cfg = self.config
        client = anthropic.AsyncAnthropic(
            base_url=cfg.base_url, api_key=cfg.api_key, max_retries=0, timeout=cfg.timeout_s
        )
        messages: list[dict[str, Any]] = [{"role": "user", "content": attempt.instruction}]
        tools = attempt.tool_schemas("anthropic")
        try:
            async with client:
                while True:
                    attempt.begin_turn()
                    response = await cfg._arequest(client, attempt, messages, tools)
                    final = _after_reply(attempt, messages, response)
                    if final is not None:
                        return final
        finally:
            attempt.keep_transcript(anthropic_transcript(cfg.system_prompt, messages))


def _errors() -> ProviderErrors:
    """What the Anthropic SDK's errors mean (imported when a request is made).

    Its 529 ``overloaded_error`` is a 5xx, so it is tried again.
    """
    import anthropic

    return ProviderErrors(
        api_error=anthropic.APIError,
        lost=(anthropic.APIConnectionError, anthropic.APITimeoutError),
    )


def _after_reply(attempt: Attempt, messages: list[dict[str, Any]], response: Any) -> str | None:
    """Run the reply's ``tool_use`` blocks; the final text when there are none, else None."""
    texts = [block.text for block in response.content if block.type == "text"]
    uses = [block for block in response.content if block.type == "tool_use"]
    messages.append(_assistant_entry(response.content))
    if not uses:
        return "".join(texts)
    messages.append({"role": "user", "content": [_tool_reply(attempt, u) for u in uses]})
    return None


def _assistant_entry(blocks: list[Any]) -> dict[str, Any]:
    """The assistant message to send back: its text and ``tool_use`` blocks, in order."""
    content: list[dict[str, Any]] = []
    for block in blocks:
        if block.type == "text":
            content.append({"type": "text", "text": block.text})
        elif block.type == "tool_use":
            content.append(
                {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
            )
    return {"role": "assistant", "content": content}


def _tool_reply(attempt: Attempt, use: Any) -> dict[str, Any]:
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


def _input_tokens(usage: Any) -> object:
    """Every prompt token of one response: uncached, written to cache and read from cache.

    A count left out (or null) is 0; the first count that is not a token count
    (`token_problem`) is returned as it is, for the attempt to refuse, so that no sum hides it.
    """
    counts: list[Any] = []
    for field in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"):
        count = getattr(usage, field, None)
        counts.append(0 if count is None else count)
    wrong = [c for c in counts if token_problem(c)]
    return wrong[0] if wrong else sum(counts)

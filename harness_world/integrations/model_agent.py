"""The model-agent loop, written once for every provider and for sync and async clients.

A provider (`harness_world.integrations.openai`, `harness_world.integrations.anthropic`) is a
`ModelAgent` subclass: its settings as attrs fields, and what its API does its own way (the
first messages, the request body, what a reply asks for, the transcript). The loop asks the
model, runs the tool calls of its reply in order, and stops at an answer. Each request goes
through `metered_request_async`: the driver owns the retries (the SDK client is built with
``max_retries=0``) and the record counts every try, a lost response included.

The loop is a coroutine. `ModelAgent.run` drives it with the SDK's synchronous client, whose
sends never suspend, so it runs to its end on the caller's thread without an event loop
(`run_unsuspended`); `AsyncModelAgent.run` awaits it with the SDK's async client. Both share
every line that decides what is sent and recorded, hence the same records.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import operator
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

import attrs

from harness_world.engine.schemas import SchemaFormat
from harness_world.evidence.record import TranscriptMessage
from harness_world.running.attempt import Attempt, Reservation, token_problem
from harness_world.running.metered import (
    ProviderErrors,
    metered_request_async,
    run_unsuspended,
    settle_tokens,
)

__all__ = ["AsyncModelAgent", "Messages", "ModelAgent"]

Messages = list[dict[str, Any]]
"""A conversation (or a list of tool schemas) in a provider's own shape."""
Send = Callable[[dict[str, Any]], Awaitable[Any]]


class ModelAgent:
    """A tool-calling loop over a model's API; each subclass adapts one provider's API.

    A subclass is an attrs class whose fields are the settings annotated here (its constructor,
    documented there), and says how its API is spoken: the class variables, and the methods
    that raise `NotImplementedError` here.
    """

    __slots__ = ()
    kind: ClassVar[SchemaFormat]
    """The provider: the settings' ``kind``, the tool schema format, the SDK and its extra."""
    sdk_clients: ClassVar[tuple[str, str]]
    """The names of the SDK's synchronous and asynchronous client classes."""
    endpoint: ClassVar[str]
    """The client's method that sends one request, as a dotted path."""
    usage_fields: ClassVar[tuple[tuple[str, ...], tuple[str, ...]]]
    """The usage fields a response counts its prompt tokens in, then its completion tokens."""

    model: str
    base_url: str | None
    api_key: str
    temperature: float | None
    system_prompt: str
    max_retries: int
    timeout_s: float
    max_tokens: int
    price_in_per_mtok: float
    price_out_per_mtok: float
    name: str

    def settings(self) -> dict[str, Any]:
        """What changes results: model, temperature, limits, prices and the prompt's hash."""
        return {
            "kind": self.kind,
            "model": self.model,
            "base_url": self.base_url,
            "temperature": self.temperature,
            "system_prompt_sha256": hashlib.sha256(self.system_prompt.encode()).hexdigest(),
            "max_retries": self.max_retries,
            "max_tokens": self.max_tokens,
            # present only when changed, so revisions made with the default are unchanged
            **({"timeout_s": self.timeout_s} if self.timeout_s != 60.0 else {}),
            **self._more_settings(),
        }

    def run(self, attempt: Attempt) -> str:
        """Loop: ask the model, execute its tool calls in order, until it answers in text.

        Raises:
            InfrastructureError: when a request fails after its retries (an unreachable
                endpoint, a provider error): the attempt is then not counted, and ``run``
                exits 1.
        """
        with self._client(asynchronous=False) as client:
            create = operator.attrgetter(self.endpoint)(client)

            async def send(body: dict[str, Any]) -> Any:
                return create(**body)

            return run_unsuspended(self._converse(attempt, send))

    async def _converse(self, attempt: Attempt, send: Send) -> str:
        """The loop itself; the transcript is kept however it ends."""
        messages = self._start(attempt)
        tools = attempt.tool_schemas(self.kind)
        try:
            while True:
                attempt.begin_turn()
                response = await self._request(attempt, send, self._body(messages, tools))
                final = self._after(attempt, messages, response, tools)
                if final is not None:
                    return final
        finally:
            attempt.keep_transcript(self._transcript(messages))

    async def _request(self, attempt: Attempt, send: Send, body: dict[str, Any]) -> Any:
        """One model request with the driver's own retries, each metered by the attempt."""
        # The characters sent (the messages, and a system prompt sent apart) / 3: a deliberate
        # over-estimate of the prompt tokens (4 is typical); the tool schemas are not counted.
        tokens = (len(json.dumps(body["messages"])) + len(body.get("system", ""))) // 3 + 1
        estimate = tokens * self.price_in_per_mtok + self.max_tokens * self.price_out_per_mtok
        return await metered_request_async(
            attempt,
            tries=self.max_retries + 1,
            estimate=estimate / 1e6,
            input_tokens=tokens,
            send=lambda: send(body),
            settle=self._settle,
            errors=ProviderErrors(
                api_error=self._sdk("APIError"),
                lost=(self._sdk("APIConnectionError"), self._sdk("APITimeoutError")),
            ),
        )

    def _client(self, *, asynchronous: bool) -> Any:
        client = self._sdk(self.sdk_clients[asynchronous])
        return client(
            base_url=self.base_url, api_key=self.api_key, max_retries=0, timeout=self.timeout_s
        )

    def _sdk(self, name: str) -> Any:
        """A class of the provider's SDK, which is imported only once an agent runs."""
        try:
            sdk = importlib.import_module(self.kind)  # the SDK's name is the provider's
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise RuntimeError(
                f"the {self.sdk_clients[0]} agent needs `pip install harness_world[{self.kind}]`"
            ) from exc
        return getattr(sdk, name)

    def _settle(self, attempt: Attempt, reservation: Reservation, response: Any) -> None:
        usage = getattr(response, "usage", None)
        prompt, completion = (_reported(usage, fields) for fields in self.usage_fields)
        settle_tokens(
            attempt,
            reservation,
            input_tokens=prompt,
            output_tokens=completion,
            prices=(self.price_in_per_mtok, self.price_out_per_mtok),
            model=str(getattr(response, "model", "") or ""),
        )

    def _more_settings(self) -> dict[str, Any]:
        """The provider's own settings, present only when set (so older revisions hold)."""
        return {}

    def _start(self, attempt: Attempt) -> Messages:
        """The conversation's first messages."""
        raise NotImplementedError

    def _body(self, messages: Messages, tools: Messages) -> dict[str, Any]:
        """The request to send for the conversation so far (``messages``, maybe ``system``)."""
        raise NotImplementedError

    def _after(
        self, attempt: Attempt, messages: Messages, response: Any, tools: Messages
    ) -> str | None:
        """Keep the reply and run its tool calls: the final message, or None to go on."""
        raise NotImplementedError

    def _transcript(self, messages: Messages) -> list[TranscriptMessage]:
        """The record's transcript of the conversation."""
        raise NotImplementedError


@attrs.frozen(slots=True)
class AsyncModelAgent:
    """A model agent over its SDK's async client: ``async def run``, for ``run --concurrency``.

    The same loop, retries, metering and settings (hence the same revision and the same records
    apart from context); attempts in flight overlap their waiting on one event loop.

    Attributes:
        config: The agent's settings.
    """

    config: ModelAgent

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
        config = self.config
        async with config._client(asynchronous=True) as client:
            send = operator.attrgetter(config.endpoint)(client)
            return await config._converse(attempt, lambda body: send(**body))


def _reported(usage: Any, fields: tuple[str, ...]) -> object:
    """The tokens a response reports over ``fields``, summed (a count left out or null is 0).

    The first count that is not a token count (`token_problem`) is returned as it is, for the
    attempt to refuse, so that no sum hides it (a negative cache count cancelling a positive).
    """
    counts = [0 if (count := getattr(usage, field, None)) is None else count for field in fields]
    wrong = [c for c in counts if token_problem(c)]
    return wrong[0] if wrong else sum(counts)

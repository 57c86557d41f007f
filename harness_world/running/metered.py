"""Model requests metered by an attempt, with the driver's own retries (model-backed agents).

Every provider driver (OpenAI-compatible, Anthropic; sync and async clients) sends a request the
same way: reserve the money a try may cost before sending it, send, then settle what the
response reports; a lost response (connection error, timeout) keeps its reservation as
uncertain exposure and is counted as a lost request with its estimated prompt tokens, an error
status settles at zero, and transient failures are tried again up to the driver's limit. Only
what differs per provider is passed in: how to send, how to settle a response, and which errors
are which (`ProviderErrors`). The loop is written once, as a coroutine: `metered_request` runs it
over a synchronous ``send`` on the caller's thread, with no event loop (`run_unsuspended`).

A response's reported usage enters the attempt through `settle_tokens`: the counts are checked
before any arithmetic (`Attempt.settle`, `usage_problem`), so a provider reporting a negative,
huge or non-numeric count ends the attempt as ``infrastructure`` with the request's reservation
kept as uncertain exposure, instead of becoming a negative or unstorable figure.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar, cast

import attrs

from harness_world.running.attempt import Attempt, InfrastructureError, Reservation, token_problem

__all__ = [
    "RETRIED_STATUSES",
    "ProviderErrors",
    "check_price",
    "metered_request",
    "metered_request_async",
    "run_unsuspended",
    "settle_tokens",
]

RETRIED_STATUSES = frozenset({408, 409, 429})
"""HTTP statuses worth another try besides every 5xx (timeout, conflict, rate limit)."""


@attrs.frozen(slots=True)
class ProviderErrors:
    """How one SDK reports failures.

    Attributes:
        api_error: The SDK's base error class: anything else is not a request failure.
        lost: Error classes for a response that never arrived (the request may have been
            billed): the reservation stays as uncertain exposure, and the try is repeated.
    """

    api_error: type[Exception]
    lost: tuple[type[Exception], ...]

    def failed_try(
        self, attempt: Attempt, reservation: Reservation, exc: Exception
    ) -> tuple[str, bool]:
        """Account for a failed try; return its text and whether to try again."""
        if isinstance(exc, self.lost):
            attempt.lost(reservation)
            return f"{type(exc).__name__}: {exc}", True
        attempt.settle(reservation, cost=0.0, input_tokens=0, output_tokens=0)
        status = getattr(exc, "status_code", 0)
        text = f"HTTP {status}: {getattr(exc, 'message', exc)}"
        return text, status in RETRIED_STATUSES or status >= 500


Settle = Callable[[Attempt, Reservation, Any], None]
T = TypeVar("T")


def check_price(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """Validate (attrs) a driver's price per million tokens: a finite number >= 0.

    Raises:
        ValueError: naming the driver and the price (a negative price would lower spend).
    """
    if type(value) not in (int, float) or not math.isfinite(value) or value < 0:  # type: ignore[arg-type,operator]
        raise ValueError(
            f"{type(instance).__name__}: {attribute.name} must be a finite number >= 0, "
            f"not {value!r}"
        )


def settle_tokens(
    attempt: Attempt,
    reservation: Reservation,
    *,
    input_tokens: object,
    output_tokens: object,
    prices: tuple[float, float],
    model: str,
) -> None:
    """Settle a response's token counts, as the provider reported them, at the driver's prices.

    Args:
        attempt: The attempt that pays.
        reservation: The request's reservation.
        input_tokens: The prompt tokens reported (any value: it is checked first).
        output_tokens: The completion tokens reported.
        prices: US dollars per million prompt and completion tokens.
        model: The model id the response named.

    Raises:
        AttemptEnded: when a count is not an integer in 0..2^53 (the attempt ends as
            ``infrastructure``), or a budget is exceeded.
    """
    counted = not token_problem(input_tokens) and not token_problem(output_tokens)
    cost = (
        (input_tokens * prices[0] + output_tokens * prices[1]) / 1e6  # type: ignore[operator]
        if counted
        else 0.0
    )
    attempt.settle(
        reservation,
        cost=cost,
        input_tokens=input_tokens,  # type: ignore[arg-type]
        output_tokens=output_tokens,  # type: ignore[arg-type]
        model=model,
    )


def metered_request(attempt: Attempt, *, send: Callable[[], Any], **options: Any) -> Any:
    """`metered_request_async` (the same arguments) over a synchronous ``send``, on this thread."""

    async def send_now() -> Any:
        return send()

    return run_unsuspended(metered_request_async(attempt, send=send_now, **options))


async def metered_request_async(
    attempt: Attempt,
    *,
    tries: int,
    estimate: float,
    send: Callable[[], Awaitable[Any]],
    settle: Settle,
    errors: ProviderErrors,
    input_tokens: int = 0,
) -> Any:
    """Send one model request, trying at most ``tries`` times, each try metered.

    Args:
        attempt: The attempt that pays.
        tries: The most tries (the driver's retries plus one).
        estimate: US dollars one try may cost at most (reserved before it is sent).
        send: Sends the request once and returns the response.
        settle: Settles a response's reported usage against its reservation.
        errors: What the SDK's errors mean.
        input_tokens: The estimated prompt tokens of one try (recorded for lost tries).

    Raises:
        InfrastructureError: when every try failed, or a failure is not worth another try.
    """
    failure = ""
    for try_number in range(tries):
        reservation = attempt.reserve(estimate, retry=try_number > 0, input_tokens=input_tokens)
        try:
            response = await send()
        except errors.api_error as exc:
            failure, again = errors.failed_try(attempt, reservation, exc)
            if again:
                continue
            break
        settle(attempt, reservation, response)
        return response
    raise InfrastructureError(f"model request failed after {try_number + 1} tries: {failure}")


def run_unsuspended(coroutine: Coroutine[Any, Any, T]) -> T:
    """The result of a coroutine whose awaits never suspend, run here without an event loop.

    This is how a synchronous client shares the async code: its ``send`` is a coroutine that
    calls the client and returns, so the whole coroutine runs to its end on the first step, on
    the caller's thread (inside a running event loop too).

    Raises:
        RuntimeError: when the coroutine suspended (it awaited real asynchronous work).
    """
    try:
        coroutine.send(None)
    except StopIteration as done:
        return cast(T, done.value)
    coroutine.close()
    raise RuntimeError("a synchronous request awaited asynchronous work")

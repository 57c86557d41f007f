"""One metered request loop for every provider driver: tries, reservations and outcomes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

import harness_world as hw
from harness_world.running.attempt import InfrastructureError, Reservation
from harness_world.running.metered import (
    ProviderErrors,
    metered_request,
    metered_request_async,
    run_unsuspended,
)


class _ApiError(Exception):
    def __init__(self, status: int = 0) -> None:
        super().__init__(f"status {status}")
        self.status_code = status
        self.message = f"status {status}"


class _Lost(_ApiError):
    """A response that never arrived (connection reset, timeout)."""


ERRORS = ProviderErrors(api_error=_ApiError, lost=(_Lost,))


def _settle(attempt: hw.Attempt, reservation: Reservation, response: Any) -> None:
    attempt.settle(reservation, cost=0.01, input_tokens=10, output_tokens=1)


def _sender(outcomes: list[object]) -> tuple[Callable[[], object], list[int]]:
    sent: list[int] = []

    def send() -> object:
        sent.append(1)
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    return send, sent


@pytest.fixture
def attempt(small: hw.World) -> hw.Attempt:
    return hw.Attempt(small, hw.load_tasks("helpdesk")[0])


def test_transient_failures_are_tried_again_and_lost_responses_stay_exposed(
    attempt: hw.Attempt,
) -> None:
    send, sent = _sender([_Lost(), _ApiError(529), _ApiError(429), "reply"])
    reply = metered_request(
        attempt,
        tries=4,
        estimate=0.05,
        send=send,
        settle=_settle,
        errors=ERRORS,
    )
    assert reply == "reply" and len(sent) == 4
    usage = attempt.finish().usage
    assert usage.requests == 4 and usage.retries == 3
    assert usage.cost == pytest.approx(0.01)  # the two error statuses settled at zero
    assert usage.uncertain_cost == pytest.approx(0.05)  # the lost response's reservation


def test_a_client_error_is_not_tried_again(attempt: hw.Attempt) -> None:
    send, sent = _sender([_ApiError(400), "never"])
    with pytest.raises(InfrastructureError, match="after 1 tries: HTTP 400"):
        metered_request(
            attempt,
            tries=3,
            estimate=0.05,
            send=send,
            settle=_settle,
            errors=ERRORS,
        )
    assert len(sent) == 1


def test_the_async_loop_gives_up_after_its_tries(attempt: hw.Attempt) -> None:
    outcomes: list[object] = [_ApiError(503), _ApiError(503)]

    async def send() -> object:
        outcome = outcomes.pop(0)
        assert isinstance(outcome, Exception)
        raise outcome

    with pytest.raises(InfrastructureError, match="after 2 tries: HTTP 503"):
        asyncio.run(
            metered_request_async(
                attempt, tries=2, estimate=0.05, send=send, settle=_settle, errors=ERRORS
            )
        )
    assert attempt.finish().usage.requests == 2


def test_a_coroutine_that_never_suspends_runs_without_an_event_loop() -> None:
    async def inner() -> int:
        return 41

    async def outer() -> int:
        return await inner() + 1

    assert run_unsuspended(outer()) == 42
    with pytest.raises(InfrastructureError, match="gave up"):
        run_unsuspended(_raises())


async def _raises() -> None:
    raise InfrastructureError("gave up")


def test_a_coroutine_that_suspends_is_refused_and_closed() -> None:
    closed: list[bool] = []

    async def waits() -> None:
        try:
            await asyncio.sleep(0)  # real asynchronous work: it needs an event loop
        finally:
            closed.append(True)

    coroutine = waits()
    with pytest.raises(RuntimeError, match="awaited asynchronous work"):
        run_unsuspended(coroutine)
    assert closed == [True] and coroutine.cr_frame is None  # closed, not left to the collector

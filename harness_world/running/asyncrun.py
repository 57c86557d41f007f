"""Concurrent attempts in one process: agents that wait on a model need concurrency, not processes.

An agent may define ``async def run(attempt)``. `execute_concurrently` (the `Concurrent`
executor, and `Serial` for such an agent) runs up to ``concurrency`` attempts at once on one
event loop; each attempt is still one session whose tool calls run one at a time
(`Attempt.call` is synchronous and the agent awaits between calls). A synchronous agent runs
each attempt in a thread. A record depends only on its slot and the agent's behaviour, so
records are byte-identical to sequential execution apart from their context.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import attrs

from harness_world.engine.world import load_world
from harness_world.running.agents import drive
from harness_world.running.commit import Committer, Finished
from harness_world.running.units import (
    Unit,
    drive_async,
    fresh_start,
    is_async_agent,
    open_attempt,
    settle,
)

__all__ = ["drive_async", "execute_concurrently", "is_async_agent"]


async def _perform(unit: Unit) -> Finished | Path:
    world = load_world(unit.world, size=unit.size)
    attempt, context = open_attempt(unit, world)
    fresh_start(unit)
    if not is_async_agent(unit.agent):
        record = await asyncio.to_thread(drive, unit.agent, attempt, context)
    else:
        record = await drive_async(unit.agent, attempt, context)
    return settle(unit, record, world)


@attrs.define(slots=True)
class _Loop:
    """The state of one concurrent execution: the commit and the attempts left."""

    commit: Committer
    queue: list[Unit]

    async def worker(self) -> None:
        while self.queue:
            current = self.queue.pop(0)
            done = await _perform(current)
            if isinstance(done, Path):
                self.queue.insert(0, attrs.evolve(current, try_number=current.try_number + 1))
            else:
                self.commit.add(done)

    async def ticker(self) -> None:
        """Commit a batch whose window has passed while no attempt was ending."""
        while True:
            await asyncio.sleep(self.commit.window_s)
            if self.commit.due():
                self.commit.flush(settle=False)


async def _main(loop: _Loop, concurrency: int) -> None:
    ticker = asyncio.create_task(loop.ticker())
    try:
        await asyncio.gather(*(loop.worker() for _ in range(concurrency)))
    finally:
        ticker.cancel()
        loop.commit.flush()


def execute_concurrently(units: Sequence[Unit], commit: Committer, concurrency: int) -> None:
    """Perform units with up to ``concurrency`` attempts in flight on one event loop.

    Raises:
        ValueError: when ``concurrency`` is below 1.
    """
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    if not units:
        return
    state = _Loop(commit=commit, queue=list(units))
    asyncio.run(_main(state, min(concurrency, len(units))))

"""Executors: how many of a run's attempts execute at once, and where.

`run` takes one executor: `Serial` (the default: one attempt at a time here), `Processes`
(worker processes), `Concurrent` (attempts in flight in this process) or `Ray` (Ray tasks, on
this machine or a cluster). Every executor performs the same units
(`harness_world.running.units`) and hands each final record to the same commit in this process,
so the records are byte-identical whichever executor made them, apart from their context: an
executor is context, never part of the revision. Each one checks its parameters when it is
made, so an executor that exists is one that can run.

An executor chooses neither the order the agent meets the tasks in nor what it keeps between
them (the track, `harness_world.running.tracks`, which accepts the executors able to run it),
nor how records are made durable (group commit, `harness_world.running.commit`): both are the
run's, and every executor runs with either.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import attrs

from harness_world.errors import HarnessWorldError
from harness_world.running.asyncrun import execute_concurrently
from harness_world.running.commit import Committer, Finished
from harness_world.running.units import Unit, is_async_agent, perform
from harness_world.running.workers import batches

__all__ = [
    "AttemptsLost",
    "Concurrent",
    "Executor",
    "Processes",
    "Serial",
    "execute_in_processes",
    "execute_serially",
]


class Executor(Protocol):
    """How a run's attempts execute: how many at once, and where (context, not revision).

    `Serial`, `Processes`, `Concurrent` and `Ray` implement it.
    """

    @property
    def workers(self) -> int:
        """Worker processes executing attempts, written in each record's context (1: here)."""
        ...

    def execute(self, units: Sequence[Unit], commit: Committer) -> None:
        """Perform every unit and hand each final record to ``commit``.

        Units start in the order given. A unit whose infrastructure failed with retries left is
        performed again (its failed try is saved beside its slot); ``commit`` is flushed before
        this returns, whatever ends it.
        """
        ...


class AttemptsLost(HarnessWorldError, RuntimeError):
    """Attempts an executor lost (a remote worker died): everything else was committed.

    Running the same command again resumes the lost slots (their attempts never produced a
    record, so nothing of theirs is counted).
    """


def at_least_one(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """An attrs validator: a whole number of at least 1 (None passes where it is allowed)."""
    if value is None and attribute.default is None:
        return
    where = f"{type(instance).__name__}: {attribute.name}"
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{where} must be an int, not {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{where} must be at least 1, not {value}")


@attrs.frozen(slots=True)
class Serial:
    """One attempt at a time in this process, in the order given (the default executor).

    An agent with ``async def run`` is awaited on one event loop kept for the whole run, so a
    client it holds stays on the loop it was made on. The only executor the sequential track
    runs with (`harness_world.running.sequential.Sequential`).
    """

    @property
    def workers(self) -> int:
        """1: attempts execute in this process."""
        return 1

    def execute(self, units: Sequence[Unit], commit: Committer) -> None:
        """Perform the units one after another, committing in batches."""
        if any(is_async_agent(u.agent) for u in units):
            execute_concurrently(units, commit, 1)
        else:
            execute_serially(units, commit)


@attrs.frozen(slots=True)
class Processes:
    """Attempts in ``workers`` worker processes at once; this process commits their records.

    The agent must be picklable (each unit is sent to a worker). Workers are forked, so plug-in
    modules (oracles, scripts) stay importable by name; an agent with ``async def run`` is
    awaited in its worker, one attempt at a time there.

    Attributes:
        workers: Worker processes (at least 1), written in each record's context.

    Raises:
        TypeError: for a ``workers`` that is not an int.
        ValueError: for ``workers`` below 1.
    """

    workers: int = attrs.field(validator=at_least_one)

    def execute(self, units: Sequence[Unit], commit: Committer) -> None:
        """Perform the units in the worker processes, committing what they send back."""
        execute_in_processes(units, self.workers, commit)


@attrs.frozen(slots=True)
class Concurrent:
    """Up to ``attempts`` attempts in flight at once in this process, on one event loop.

    An agent with ``async def run`` is awaited (each attempt still one session, one tool call
    at a time); a synchronous agent runs each attempt in a thread. For agents that wait on a
    model, where processes would only wait in parallel.

    Attributes:
        attempts: Attempts in flight at once (at least 1).

    Raises:
        TypeError: for ``attempts`` that is not an int.
        ValueError: for ``attempts`` below 1.
    """

    attempts: int = attrs.field(validator=at_least_one)

    @property
    def workers(self) -> int:
        """1: attempts execute in this process."""
        return 1

    def execute(self, units: Sequence[Unit], commit: Committer) -> None:
        """Perform the units with up to ``attempts`` in flight, committing in batches."""
        execute_concurrently(units, commit, self.attempts)


def execute_serially(units: Sequence[Unit], commit: Committer) -> None:
    """Perform units one after another in this process, committing in batches."""
    queue = list(units)
    try:
        while queue:
            current = queue.pop(0)
            start = time.monotonic()
            done = perform(current)
            if isinstance(done, Path):
                queue.insert(0, attrs.evolve(current, try_number=current.try_number + 1))
                continue
            commit.add(done)
            if time.monotonic() - start >= commit.window_s:  # slow attempts gain nothing waiting
                commit.flush()
    finally:
        commit.flush()


def execute_in_processes(units: Sequence[Unit], workers: int, commit: Committer) -> None:
    """Perform units in worker processes, in batches; this process commits what they send back.

    The workers are forked after the units are set aside, so each worker holds them already:
    a message names a batch of units by position (not one unit, pickled, per message), and the
    units a worker performs are the run's own objects. A pickled copy would not be: msgspec
    leaves a field out of an encoding only when it holds the default object itself, so a
    task's fault schedule copied by pickle encodes its defaults into the record, and the
    record no longer replays to its digest. A unit whose infrastructure failed is sent again
    alone, with its next try number.
    """
    # Fork keeps plug-in modules (oracles, scripts) importable by name in the children.
    context = multiprocessing.get_context("fork")
    size = batches(len(units), workers, most=UNITS_PER_BATCH)
    _RUN.append(units)
    try:
        with concurrent.futures.ProcessPoolExecutor(
            max_workers=workers, mp_context=context
        ) as pool:
            chunks = [list(range(s, min(s + size, len(units)))) for s in range(0, len(units), size)]
            futures = {
                pool.submit(perform_batch, [(i, units[i].try_number) for i in chunk]): chunk
                for chunk in chunks
            }
            while futures:
                ready, _ = concurrent.futures.wait(
                    futures,
                    timeout=commit.window_s,
                    return_when=concurrent.futures.FIRST_COMPLETED,
                )
                for future in ready:
                    sent = futures.pop(future)
                    for index, done in zip(sent, future.result(), strict=False):
                        if isinstance(done, BaseException):
                            raise done  # what the batch did before it is committed below
                        if isinstance(done, tuple):
                            again = [done]
                            futures[pool.submit(perform_batch, again)] = [index]
                        else:
                            commit.add(done)
                if commit.due():
                    commit.flush(settle=False)
    finally:
        _RUN.pop()
        commit.flush()


UNITS_PER_BATCH = 16
"""The most attempts one message to a worker process names."""

_RUN: list[Sequence[Unit]] = []  # the units of the run being performed, inherited by fork


def perform_batch(
    batch: list[tuple[int, int]],
) -> list[Finished | tuple[int, int] | BaseException]:
    """Perform units of the run, by (position, try number), one after another in a worker.

    A unit whose infrastructure failed gives (position, next try number), to be sent again;
    a unit that raises ends the batch: its exception is the last item, after the records the
    batch made before it (so they are committed, not lost with it).
    """
    units = _RUN[-1]
    done: list[Finished | tuple[int, int] | BaseException] = []
    for index, try_number in batch:
        unit = units[index]
        if unit.try_number != try_number:
            unit = attrs.evolve(unit, try_number=try_number)
        try:
            result = perform(unit)
        except Exception as exc:  # handed back to the run, which raises it after committing
            done.append(exc)
            break
        done.append((index, try_number + 1) if isinstance(result, Path) else result)
    return done

"""The Ray executor (extra ``[ray]``): a run's attempts as Ray tasks, on one machine or a cluster.

A Ray task carries a batch of attempts (``batch``; by default sized so each CPU gets about
four batches, at most 16 attempts, since a Ray task costs a few milliseconds and an oracle
attempt less). The tasks and everything else about the attempts travel as bytes (msgspec); each
agent is put in Ray's object store once per run. A worker process loads each world once
(`load_world` caches per process), executes, replays and grades each attempt of its batch in
turn, and sends back each record's canonical bytes, its index line and its judged slot. This
process, the driver, saves everything: the `GroupCommit` of the run directory writes records
and index lines exactly as the local executors do (a record is counted once durable), and a
failed try (an ``infrastructure`` outcome with retries left) is saved here too, so the workers
need no access to the run directory. Records are byte-identical to the local executors' apart
from their context.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs
import msgspec

from harness_world.errors import HarnessWorldError
from harness_world.evidence.binding import IndexEntry, save_try
from harness_world.evidence.record import decode_record, seal_record
from harness_world.grading.task import Task
from harness_world.grading.verifier import SlotResult, judge_record
from harness_world.running.agents import Agent
from harness_world.running.attempt import AttemptLimits
from harness_world.running.commit import Committer, Finished, finished
from harness_world.running.executors import AttemptsLost, at_least_one
from harness_world.running.rundir import record_path
from harness_world.running.units import Unit, execute
from harness_world.running.workers import batches

__all__ = [
    "Ray",
    "RayTasksLost",
    "RayUnavailable",
    "batch_size",
    "execute_on_ray",
    "import_ray",
    "ray_executor",
    "ray_session",
    "require_ray",
]

_PLUGIN_PREFIX = "harness_world_"  # `engine.plugins.import_path` names plug-in modules so


class RayUnavailable(HarnessWorldError, RuntimeError):
    """The Ray executor was asked for but Ray is not installed."""


class RayTasksLost(AttemptsLost):
    """Attempts whose Ray tasks kept failing (a worker died, the cluster lost a node)."""


_MISSING = "the Ray executor needs the extra: pip install 'harness_world[ray]'"


def import_ray() -> Any:
    """The ``ray`` module.

    Raises:
        RayUnavailable: when Ray is not installed (with the extra to install).
    """
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise RayUnavailable(_MISSING) from None


def require_ray() -> None:
    """Check that Ray is installed, without the cost of importing it.

    Raises:
        RayUnavailable: when it is not (with the extra to install).
    """
    if importlib.util.find_spec("ray") is None:
        raise RayUnavailable(_MISSING)


class _Order(msgspec.Struct, frozen=True, kw_only=True):
    """A unit without its agent and task: what a Ray task is told, as bytes.

    ``agent`` and ``task`` index the objects the batch's Ray task receives after its orders.
    """

    agent: int
    task: int
    world: str
    size: str
    sample: int
    seed: int
    revision: str
    limits: AttemptLimits
    workers: int
    out: str
    try_number: int
    retries: int
    track: str
    scheduled: float = 0.0


class _Reply(msgspec.Struct, frozen=True, kw_only=True):
    """What a Ray task sends back: the record's canonical bytes and, when final, its judgement."""

    record: bytes
    entry: IndexEntry | None = None  # None: an infrastructure failure to execute again
    result: SlotResult | None = None


# What an order copies of its unit as it is: the rest are the agent and task (indices into
# the objects of the batch) and the output folder (a string).
_UNIT_FIELDS = tuple(f for f in _Order.__struct_fields__ if f not in ("agent", "task", "out"))
_ORDERS = msgspec.msgpack.Decoder(list[_Order])
_REPLIES = msgspec.msgpack.Decoder(list[_Reply])
_TASK = msgspec.msgpack.Decoder(Task)
_TASKS: dict[bytes, Task] = {}  # per worker process: each task decoded once (its hash cached)
_TASKS_MAX = 10_000


def _task(data: bytes) -> Task:
    task = _TASKS.get(data)
    if task is None:
        if len(_TASKS) >= _TASKS_MAX:
            _TASKS.clear()
        task = _TASKS[data] = _TASK.decode(data)
    return task


def perform_remote(orders_data: bytes, *objects: Any) -> bytes:
    """Execute, replay and grade a batch of attempts in a Ray worker, one after another.

    Args:
        orders_data: The batch's orders, msgpack.
        objects: The agents and the tasks' bytes the orders index (Ray resolves them).

    Returns:
        The replies, in order, as msgpack (nothing is saved here).
    """
    replies = [
        _perform(objects[order.agent], _task(objects[order.task]), order)
        for order in _ORDERS.decode(orders_data)
    ]
    return msgspec.msgpack.encode(replies)


def _perform(agent: Agent, task: Task, order: _Order) -> _Reply:
    """One attempt of a batch: executed, replayed and graded."""
    shared = {name: getattr(order, name) for name in _UNIT_FIELDS}
    unit = Unit(agent=agent, task=task, out=Path(order.out), **shared)
    record, world = execute(unit)
    if record.outcome.status == "infrastructure" and unit.try_number < unit.retries:
        return _Reply(record=seal_record(record)[0])
    path = record_path(unit.out, task.id, unit.sample)
    done = finished(record, path, lambda sealed: judge_record(sealed, world, task, path))
    return _Reply(record=done.data, entry=done.entry, result=done.result)


def _order(unit: Unit, agent: int, task: int) -> _Order:
    shared = {name: getattr(unit, name) for name in _UNIT_FIELDS}
    return _Order(agent=agent, task=task, out=str(unit.out), **shared)


def _share_plugins(ray: Any) -> None:
    """Plug-in modules (oracles, scripts) are not importable in a worker: pickle them by value."""
    for name, module in list(sys.modules.items()):
        if name.startswith(_PLUGIN_PREFIX) and "." not in name:
            ray.cloudpickle.register_pickle_by_value(module)


@attrs.define(slots=True)
class _Dispatch:
    """The attempts of one execution: queued, in flight as batches of Ray tasks, and committed."""

    ray: Any
    commit: Committer
    queue: deque[Unit]
    in_flight: int
    batch: int
    remote: Any = None
    pending: dict[Any, list[Unit]] = attrs.field(factory=dict)
    agents: dict[int, Any] = attrs.field(factory=dict)  # id(agent) -> its object reference
    tasks: dict[int, Any] = attrs.field(factory=dict)  # id(task) -> its bytes' reference
    crashes: dict[tuple[str, int], int] = attrs.field(factory=dict)  # slot -> lost Ray tasks
    lost: list[str] = attrs.field(factory=list)  # "task#sample: why", given up on

    def submit(self, units: list[Unit]) -> None:
        """Start a batch as one Ray task; agents and tasks go to the object store once each."""
        objects: list[Any] = []
        where: dict[int, int] = {}  # id(object reference) -> its index among the arguments
        orders = []
        for unit in units:
            agent = self.agents.get(id(unit.agent))
            if agent is None:
                agent = self.agents[id(unit.agent)] = self.ray.put(unit.agent)
            task = self.tasks.get(id(unit.task))
            if task is None:
                task = self.tasks[id(unit.task)] = self.ray.put(msgspec.msgpack.encode(unit.task))
            for ref in (agent, task):
                if id(ref) not in where:
                    where[id(ref)] = len(objects)
                    objects.append(ref)
            orders.append(_order(unit, where[id(agent)], where[id(task)]))
        self.pending[self.remote.remote(msgspec.msgpack.encode(orders), *objects)] = units

    def receive(self, ref: Any) -> None:
        """Save failed tries and execute them again; queue final records for the commit."""
        units = self.pending.pop(ref)
        try:
            replies = _REPLIES.decode(self.ray.get(ref))
        except self.ray.exceptions.RayError as exc:
            self.resubmit(units, exc)
            return
        for unit, reply in zip(units, replies, strict=True):
            path = record_path(unit.out, unit.task.id, unit.sample)
            if reply.entry is None or reply.result is None:
                failed = decode_record(reply.record)
                save_try(unit.out, failed, path, "failed", reply.record)  # as `settle` keeps it
                self.queue.appendleft(attrs.evolve(unit, try_number=unit.try_number + 1))
                continue
            self.commit.add(
                Finished(path=path, data=reply.record, entry=reply.entry, result=reply.result)
            )

    def resubmit(self, units: list[Unit], exc: Exception) -> None:
        """A Ray task failed with no reply (its worker died): its attempts go round again.

        The same try is sent again, since it left no record behind (so nothing is counted
        twice); a slot whose Ray tasks fail more often than its retries allow is given up.
        """
        why = (str(exc).strip().splitlines() or [""])[0][:200]
        for unit in units:
            slot = (unit.task.id, unit.sample)
            self.crashes[slot] = self.crashes.get(slot, 0) + 1
            if self.crashes[slot] <= max(1, unit.retries):
                self.queue.append(unit)
            else:
                self.lost.append(f"{unit.task.id}#{unit.sample}: {type(exc).__name__}: {why}")

    def loop(self) -> None:
        """Keep up to ``in_flight`` batches running; commit records as their windows pass."""
        while self.queue or self.pending:
            while self.queue and len(self.pending) < self.in_flight:
                take = min(self.batch, len(self.queue))
                self.submit([self.queue.popleft() for _ in range(take)])
            refs = list(self.pending)
            ready, _ = self.ray.wait(refs, num_returns=1, timeout=self.commit.window_s)
            if ready:  # everything else already done too, without waiting
                ready, _ = self.ray.wait(refs, num_returns=len(refs), timeout=0)
            for ref in ready:
                self.receive(ref)
            if self.commit.due():
                self.commit.flush(settle=False)


BATCH_MAX = 16
"""The most attempts a default batch holds (`batch_size`)."""


def batch_size(items: int, cpus: int, *, most: int = BATCH_MAX) -> int:
    """A default batch: about four batches per CPU, between 1 and ``most`` items each.

    A Ray task costs a few milliseconds; a batch spreads that over its items, while enough
    batches per CPU keep every CPU busy to the end.
    """
    return batches(items, cpus, most, per_worker=4)


@contextmanager
def ray_session(address: str | None = None) -> Iterator[Any]:
    """The ``ray`` module, connected: to the instance this process already uses, else one.

    Connects to ``address`` (``"auto"``: the cluster started on this machine with ``ray start
    --head``) or, with none, starts a new local instance (even when a cluster runs on this
    machine), shut down again on leaving. Plug-in modules (oracles, scripts) are registered
    with Ray's cloudpickle by value, since a worker cannot import them by name.

    Raises:
        RayUnavailable: when Ray is not installed.
    """
    ray = import_ray()
    started = not ray.is_initialized()
    if started:
        if address is None:  # a new local instance, even when a cluster runs here
            ray.init(address="local", include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, log_to_driver=False)
    try:
        _share_plugins(ray)
        yield ray
    finally:
        if started:
            ray.shutdown()


def execute_on_ray(
    units: Sequence[Unit],
    commit: Committer,
    *,
    address: str | None = None,
    in_flight: int | None = None,
    batch: int | None = None,
) -> None:
    """Perform units as Ray tasks, in batches; this process commits what they send back.

    Uses the Ray instance this process is already connected to, else `ray_session`'s.

    Args:
        units: The attempts, in order.
        commit: The run directory's commit.
        address: A Ray cluster to connect to when not connected yet.
        in_flight: The most Ray tasks submitted at once (default: twice the cluster's CPUs).
        batch: Attempts per Ray task (default: `batch_size`).

    Raises:
        RayUnavailable: when Ray is not installed.
        AttemptsLost: when some attempts' Ray tasks kept failing (the rest is committed).
        ValueError: for a batch below 1.
    """
    if batch is not None and batch < 1:
        raise ValueError(f"a Ray batch holds at least 1 attempt, not {batch}")
    import_ray()
    if not units:
        return
    with ray_session(address) as ray:
        cpus = int(ray.cluster_resources().get("CPU", 1))
        dispatch = _Dispatch(
            ray=ray,
            commit=commit,
            queue=deque(units),
            in_flight=in_flight or max(2, 2 * cpus),
            batch=batch or batch_size(len(units), cpus),
            remote=ray.remote(num_cpus=1)(perform_remote),
        )
        try:
            dispatch.loop()
        finally:
            commit.flush()
    if dispatch.lost:
        shown = "; ".join(dispatch.lost[:3])
        more = f" and {len(dispatch.lost) - 3} more" if len(dispatch.lost) > 3 else ""
        raise RayTasksLost(
            f"{len(dispatch.lost)} attempt(s) lost with their Ray tasks ({shown}{more}); "
            "every other record is saved: run the same command again to resume"
        )


def _address(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """An attrs validator: None, or a Ray cluster address that is a non-empty string."""
    if value is None:
        return
    if not isinstance(value, str):
        raise TypeError(f"Ray: address must be a str or None, not {type(value).__name__}")
    if not value.strip():
        raise ValueError("Ray: address must name a cluster ('auto', 'HOST:PORT') or be None")


@attrs.frozen(slots=True)
class Ray:
    """Every attempt in a Ray task (extra ``[ray]``), batched; this process saves everything.

    See `harness_world.running.rayrun`. Ray decides the parallelism (one CPU per Ray task).

    Attributes:
        address: The Ray cluster to connect to (``"auto"``: the one ``ray start --head``
            started on this machine); None starts a local Ray for the run unless this process
            is connected already.
        batch: Attempts per Ray task (at least 1; None: about four batches per CPU, at most 16
            attempts, `harness_world.running.rayrun.batch_size`).

    Raises:
        RayUnavailable: when Ray is not installed (so nothing is written before it is found
            missing).
        TypeError: for parameters of the wrong type.
        ValueError: for an empty ``address`` or a ``batch`` below 1.
    """

    address: str | None = attrs.field(default=None, validator=_address)
    batch: int | None = attrs.field(default=None, validator=at_least_one)

    def __attrs_post_init__(self) -> None:
        require_ray()

    @property
    def workers(self) -> int:
        """1: the parallelism is the cluster's, not a number this process chooses."""
        return 1

    def execute(self, units: Sequence[Unit], commit: Committer) -> None:
        """Perform the units as Ray tasks, committing what they send back.

        Raises:
            AttemptsLost: when some attempts' Ray tasks kept failing (the rest is committed).
        """
        execute_on_ray(units, commit, address=self.address, batch=self.batch)


def ray_executor(args: argparse.Namespace) -> Ray:
    """The registered ``ray`` executor: ``run --executor ray --address A --ray-batch N``.

    Raises:
        RayUnavailable: when Ray is not installed.
        ValueError: for an empty address or a batch below 1.
    """
    return Ray(address=args.address, batch=args.ray_batch)

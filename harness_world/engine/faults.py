"""Semantic fault schedules: faults attached to meanings, not to call numbers.

A task declares faults (``[[faults]]`` in its TOML file). Each names a *trigger* — a logical
event such as "the first attempted ``create_charge`` for order O-00012" or "the first
``refund_charge`` above 10000 cents" — and a provider *behaviour* to apply when the trigger is
reached. The session consults a `FaultPolicy` in its one execution path (`Session._execute`):
before a tool runs (to fail it, rate-limit it, or set a mode such as a stale read) and after it
ran (to drop the response of a committed write, or to deliver the request a second time).

Faults depend only on the call sequence and a fault seed: occurrences are counted over calls
whose validated arguments match the trigger, and any draw (``chance``, ``retry_after``) comes
from a hash of (fault seed, fault id, occurrence). Every firing is appended to `FaultLog.fired`,
which the record carries; replay rebuilds the policy from the record's schedule and seed, so
the same calls fire the same faults, and compares the firings like any other evidence. A fault
whose trigger is never reached is *unexposed*.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any, Final, Literal, get_args

import attrs
import msgspec

from harness_world.engine.calls import ToolError

__all__ = [
    "BEHAVIOURS",
    "Behaviour",
    "FaultEvent",
    "FaultLog",
    "FaultPolicy",
    "FaultSpec",
    "Firing",
    "Repeat",
    "fault_policy",
]

Behaviour = Literal[
    "fail_before_commit",
    "commit_then_drop_response",
    "duplicate_delivery",
    "rate_limited",
    "stale_read",
]
BEHAVIOURS: Final[tuple[str, ...]] = get_args(Behaviour)
Repeat = Literal["return_original_if_same_key", "create_again"]


class FaultSpec(
    msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True
):
    """One scheduled fault: a trigger on a logical event and a provider behaviour.

    Attributes:
        id: Unique within the task, e.g. ``charge_timeout``; reports and records name it.
        tool: The tool whose calls the trigger watches.
        match: Arguments that must equal these values (type-aware) for a call to count, e.g.
            ``{order_id = "O-00012"}``: "for this logical operation".
        above: Numeric arguments that must be strictly greater than these values, e.g.
            ``{amount_cents = 10000}``: "a refund above 100".
        occurrence: Which matching call fires first (1: the first attempt).
        times: How many consecutive matching calls fire from ``occurrence`` on.
        behaviour: ``fail_before_commit`` (the tool does not run; typed ``unavailable``),
            ``commit_then_drop_response`` (the tool runs and its writes stay committed; the
            caller gets a typed ``timeout``), ``duplicate_delivery`` (the request is delivered
            twice; the caller sees the first response), ``rate_limited`` (the tool does not
            run; typed ``rate_limited`` carrying ``retry_after`` in logical time, i.e. calls;
            calls to the tool before then are rate limited too) or ``stale_read`` (the tool runs
            with the ``stale_read`` mode set: the world serves its start-state snapshot).
        repeat: How the provider treats a repeat of a faulted request:
            ``return_original_if_same_key`` (idempotency keys are honoured) or
            ``create_again`` (later calls to the tool run with the ``ignore_idempotency`` mode:
            a repeat creates again even with the same key).
        retry_after: For ``rate_limited``: the largest wait; the actual one is drawn from
            1..retry_after with the fault seed.
        chance: Probability that a reached trigger fires, drawn with the fault seed (1.0:
            always). A reached trigger that does not fire is still exposed.
    """

    id: str
    tool: str
    behaviour: Behaviour
    match: dict[str, Any] = {}
    above: dict[str, float] = {}
    occurrence: int = 1
    times: int = 1
    repeat: Repeat = "return_original_if_same_key"
    retry_after: int = 2
    chance: float = 1.0

    def __post_init__(self) -> None:
        if self.occurrence < 1 or self.times < 1:
            raise ValueError(f"fault {self.id!r}: occurrence and times must be at least 1")
        if not 0.0 <= self.chance <= 1.0:
            raise ValueError(f"fault {self.id!r}: chance must be within 0..1")
        if self.retry_after < 1:
            raise ValueError(f"fault {self.id!r}: retry_after must be at least 1")


class FaultEvent(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One trigger reached during an attempt.

    Attributes:
        fault_id: The scheduled fault.
        seq: The call it happened on.
        occurrence: Which matching call it was (1-based).
        behaviour: What the provider did (``held`` when the trigger was reached but the
            ``chance`` draw did not fire it; ``rate_limited`` also for a call inside the
            window of an earlier rate limit).
        retry_after: For ``rate_limited``: the wait given, in calls.
    """

    fault_id: str
    seq: int
    occurrence: int
    behaviour: str
    retry_after: int = 0


class FaultLog(msgspec.Struct, frozen=True, kw_only=True):
    """What a record carries about faults: the schedule it ran under, the seed, the firings.

    Attributes:
        schedule: The task's fault schedule at the time (replay rebuilds the policy from it).
        seed: The fault seed.
        fired: Every trigger reached, in call order.
    """

    schedule: list[FaultSpec]
    seed: int
    fired: list[FaultEvent] = []


def _draw(seed: int, fault_id: str, occurrence: int) -> float:
    """A deterministic number in [0, 1) from the fault seed, the fault and the occurrence."""
    digest = hashlib.sha256(f"{seed}:{fault_id}:{occurrence}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


@attrs.frozen(slots=True)
class Firing:
    """The policy's decision for one call, handed back to it after the tool ran.

    Attributes:
        error: Return this typed error instead of running the tool (nothing is committed).
        modes: Modes the tool runs with (``stale_read``, ``ignore_idempotency``).
        drop_response: After the tool ran, keep its writes and return a ``timeout`` instead.
        deliver_twice: After the tool ran, run it once more (the caller sees the first).
    """

    error: ToolError | None = None
    modes: frozenset[str] = frozenset()
    drop_response: bool = False
    deliver_twice: bool = False
    acts_after: bool = attrs.field(init=False)
    """Whether `FaultPolicy.after` has anything to do (the session skips it otherwise)."""

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "acts_after", self.drop_response or self.deliver_twice)


@attrs.define(slots=True, eq=False)
class FaultPolicy:
    """The runtime side of a schedule: counts occurrences and decides, call by call.

    Attributes:
        schedule: The faults.
        seed: The fault seed.
    """

    schedule: tuple[FaultSpec, ...]
    seed: int = 0
    _counts: dict[str, int] = attrs.field(factory=dict)
    _fired: list[FaultEvent] = attrs.field(factory=list)
    _limited_until: dict[str, tuple[str, int]] = attrs.field(factory=dict)
    _repeat_modes: set[str] = attrs.field(factory=set)
    _by_tool: dict[str, tuple[tuple[FaultSpec, tuple[tuple[str, Any], ...]], ...]] = attrs.field(
        init=False
    )

    def __attrs_post_init__(self) -> None:
        by_tool: dict[str, list[FaultSpec]] = {}
        for spec in self.schedule:
            by_tool.setdefault(spec.tool, []).append(spec)
        # Each spec with its ``match`` as a tuple: the no-fault path is a tight loop.
        self._by_tool = {
            k: tuple((spec, tuple(spec.match.items())) for spec in v) for k, v in by_tool.items()
        }

    @classmethod
    def from_log(cls, log: FaultLog) -> FaultPolicy:
        """A fresh policy for the schedule and seed a record ran under (for replay)."""
        return cls(tuple(log.schedule), log.seed)

    def log(self) -> FaultLog:
        """The schedule, the seed and every firing so far."""
        return FaultLog(schedule=list(self.schedule), seed=self.seed, fired=list(self._fired))

    def before(self, tool: str, params: object, seq: int) -> Firing | None:
        """Decide what happens to call ``seq`` of ``tool`` with its validated ``params``.

        Returns None when nothing happens (the common case, kept cheap: see bench/faults.py).
        """
        specs = self._by_tool.get(tool)
        if specs is None:  # nothing scheduled on this tool
            return None
        if self._limited_until:
            window = self._limited_until.get(tool)
            if window is not None and seq < window[1]:
                fault_id, until = window
                wait = until - seq - 1  # other calls still to make before ``until``
                self._fired.append(
                    FaultEvent(
                        fault_id=fault_id,
                        seq=seq,
                        occurrence=0,
                        behaviour="rate_limited",
                        retry_after=wait,
                    )
                )
                return Firing(error=_rate_limited(tool, wait))
        counts = self._counts
        firing: Firing | None = None
        for spec, match in specs:
            matched = True
            for name, wanted in match:  # type-aware equality, inlined (see bench/faults.py)
                value = getattr(params, name, None)
                if type(value) is not type(wanted) or value != wanted:
                    matched = False
                    break
            if not matched or (spec.above and not _above(spec, params)):
                continue
            count = counts[spec.id] = counts.get(spec.id, 0) + 1
            if (
                firing is not None
                or count < spec.occurrence
                or count >= spec.occurrence + spec.times
            ):
                continue
            if spec.chance < 1.0 and _draw(self.seed, spec.id, count) >= spec.chance:
                self._fired.append(
                    FaultEvent(fault_id=spec.id, seq=seq, occurrence=count, behaviour="held")
                )
                continue
            modes = {"ignore_idempotency"} if tool in self._repeat_modes else set()
            firing = self._fire(spec, tool, seq, count, modes)
        if firing is None and tool in self._repeat_modes:
            return Firing(modes=frozenset({"ignore_idempotency"}))
        return firing

    def _fire(self, spec: FaultSpec, tool: str, seq: int, count: int, modes: set[str]) -> Firing:
        wait = 0
        if spec.behaviour == "rate_limited":
            wait = 1 + int(_draw(self.seed, spec.id + "#wait", count) * spec.retry_after)
        self._fired.append(
            FaultEvent(
                fault_id=spec.id,
                seq=seq,
                occurrence=count,
                behaviour=spec.behaviour,
                retry_after=wait,
            )
        )
        if spec.repeat == "create_again":
            self._repeat_modes.add(tool)
        if spec.behaviour == "fail_before_commit":
            return Firing(error=ToolError("unavailable", _UNAVAILABLE.format(tool=tool)))
        if spec.behaviour == "rate_limited":
            self._limited_until[tool] = (spec.id, seq + wait + 1)  # first seq allowed again
            return Firing(error=_rate_limited(tool, wait))
        if spec.behaviour == "stale_read":
            modes.add("stale_read")
            return Firing(modes=frozenset(modes))
        if spec.behaviour == "commit_then_drop_response":
            return Firing(modes=frozenset(modes), drop_response=True)
        return Firing(modes=frozenset(modes), deliver_twice=True)

    def after(
        self,
        firing: Firing,
        tool: str,
        error: ToolError | None,
        blob: bytes,
        again: Callable[[], object],
        hint: str = "",
    ) -> tuple[ToolError | None, bytes]:
        """Apply the post-execution part of a firing to the call's outcome.

        Args:
            firing: What `before` decided.
            tool: The tool's name.
            error: The tool's own typed error (None on success).
            blob: The tool's result as JSON bytes.
            again: Runs the tool once more with the same arguments (a second delivery).
            hint: How the call's effect is looked up (`harness_world.engine.Tool.lookup_hint`),
                added to a ``timeout``'s message.

        """
        if firing.deliver_twice and error is None:
            again()
        if firing.drop_response and error is None:
            message = _TIMEOUT.format(tool=tool) + (f"; {hint}" if hint else "")
            return ToolError("timeout", message), b"null"
        return error, blob


# The messages name no provider: a world without one (a helpdesk) meets the same faults.
_UNAVAILABLE: Final = (
    "{tool}: service unavailable (connection refused before the request was accepted); "
    "nothing was processed"
)
_TIMEOUT: Final = (
    "{tool}: no response before the deadline; the request may or may not have been processed"
)


def _rate_limited(tool: str, wait: int) -> ToolError:
    """The refusal, with the wait in logical time: calls of any tool, refused ones included."""
    when = (
        "your next call goes through"
        if wait == 0
        else f"the call after the next {wait} call(s) of any tool goes through (refused "
        "retries count)"
    )
    return ToolError(
        "rate_limited",
        f"{tool}: rate limited; nothing was processed; retry_after={wait}: {when}",
    )


def _above(spec: FaultSpec, params: object) -> bool:
    for name, floor in spec.above.items():
        value = getattr(params, name, None)
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= floor:
            return False
    return True


def fault_policy(schedule: Sequence[FaultSpec], seed: int) -> FaultPolicy | None:
    """The policy for a task's schedule, to open a session with (None for an empty schedule).

    The fault seed is the sample seed: paired runs of one task, sample and seed meet the same
    faults.
    """
    return FaultPolicy(tuple(schedule), seed) if schedule else None

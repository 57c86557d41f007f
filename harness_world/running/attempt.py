"""One attempt at one task: a session, an instruction, tools, budgets, and a record at the end.

Agent drivers talk to an `Attempt`: they ask for the instruction and the tool schemas, call
tools, and report each model request's cost. The attempt enforces the budgets; hitting one ends
the attempt as ``turn_limit`` or ``budget_limit``, which still counts as an attempt. It offers
only the tools its task allows (`offered_schemas`), and its session refuses any other.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import msgspec

from harness_world.engine.calls import Observation
from harness_world.engine.faults import fault_policy
from harness_world.engine.limits import MAX_INT, MAX_STRING, clean_text, text_problem
from harness_world.engine.schemas import SchemaFormat
from harness_world.engine.session import Session
from harness_world.engine.world import World
from harness_world.errors import HarnessWorldError
from harness_world.evidence.record import (
    Outcome,
    OutcomeStatus,
    Record,
    RecordContext,
    TranscriptMessage,
    TranscriptToolCall,
    Usage,
    UserTurn,
    make_record,
)
from harness_world.grading.briefing import briefing
from harness_world.grading.task import Budgets, Task
from harness_world.running.user import STOP, AgentView, UserSimulator, WorldView

__all__ = [
    "Attempt",
    "AttemptEnded",
    "AttemptLimits",
    "InfrastructureError",
    "Reservation",
    "offered_schemas",
    "token_problem",
    "usage_problem",
]


class AttemptLimits(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Budgets an attempt enforces (None: unlimited).

    Attributes:
        turns: Model round trips.
        tool_calls: Tool calls executed.
        context_tokens: Prompt tokens summed over requests.
        requests: HTTP requests to the provider, retries included.
        cost: Money in US dollars, reservations for lost responses included.
        wall_time: Wall-clock seconds from the attempt's start, checked whenever the agent
            calls on the attempt and when it is sealed (a run's option, never a task's
            budget: how long an attempt takes is not reproducible, see
            ``docs/task-format.md``).
    """

    turns: int | None = None
    tool_calls: int | None = None
    context_tokens: int | None = None
    requests: int | None = None
    cost: float | None = None
    wall_time: float | None = None

    def __post_init__(self) -> None:
        seconds = self.wall_time
        if seconds is not None and not (math.isfinite(seconds) and seconds > 0):
            raise ValueError(f"the wall_time budget must be a positive number, not {seconds!r}")

    @classmethod
    def from_task(cls, budgets: Budgets, **overrides: int | float | None) -> AttemptLimits:
        """The task's budgets, with any non-None override applied."""
        values: dict[str, Any] = {
            "turns": budgets.turns,
            "tool_calls": budgets.tool_calls,
            "context_tokens": budgets.context_tokens,
            "cost": budgets.cost,
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)


class AttemptEnded(HarnessWorldError):
    """Raised by `Attempt` methods once a budget has ended the attempt (or it was finished)."""

    def __init__(self, outcome: Outcome) -> None:
        super().__init__(f"attempt ended: {outcome.status} ({outcome.reason})")
        self.outcome = outcome


class InfrastructureError(HarnessWorldError):
    """Raised by an agent driver when the infrastructure failed, not the agent.

    An unreachable endpoint or a provider error that outlived its retries ends the attempt as
    ``infrastructure``: not counted as an attempt, listed by ``run``, and ``run`` exits 1. Any
    other exception from agent code ends it as ``error``, counted in the denominator.
    """


@attrs.frozen(slots=True)
class Reservation:
    """Money set aside for one model request before it is dispatched.

    Attributes:
        amount: The estimate reserved, in US dollars.
        number: The request's number within the attempt.
        input_tokens: The driver's estimate of the request's prompt tokens (0: none given),
            counted as ``lost_input_tokens_estimate`` if the response is lost.
    """

    amount: float
    number: int
    input_tokens: int = 0


@attrs.define(slots=True, eq=False)
class Attempt:
    """One attempt: drive it with `call`, meter it with `reserve`/`settle`, end it with `finish`.

    Attributes:
        world: The world.
        task: The task.
        seed: The sample seed (the session's seed).
        sample: The sample index within the run.
        revision: The run revision id written into the record.
        limits: The budgets enforced.
        user: A simulated user the agent can talk to (`message_user`); None: no user.
        view: What the agent is shown (tool schemas, observation texts); by default the
            world's own schemas and JSON observations (`WorldView`).
        clock: Seconds from a fixed point, read for the wall-time budget and the record's
            ``latency_s`` (default: `time.monotonic`).
    """

    world: World
    task: Task
    seed: int = 0
    sample: int = 0
    revision: str = ""
    limits: AttemptLimits | None = None
    user: UserSimulator | None = None
    view: AgentView = attrs.field(
        default=attrs.Factory(lambda self: WorldView(self.world), takes_self=True)
    )
    clock: Callable[[], float] = attrs.field(default=time.monotonic, kw_only=True)
    _user_turns: list[UserTurn] = attrs.field(init=False, factory=list)
    _transcript: list[TranscriptMessage] = attrs.field(init=False, factory=list)
    _session: Session = attrs.field(init=False)
    _usage: dict[str, Any] = attrs.field(init=False)
    _outcome: Outcome | None = attrs.field(init=False, default=None)
    _open_reservations: dict[int, Reservation] = attrs.field(init=False, factory=dict)
    _started: float = attrs.field(init=False, factory=time.time)
    _began: float = attrs.field(init=False, default=0.0)
    _sealed: bool = attrs.field(init=False, default=False)

    def __attrs_post_init__(self) -> None:
        faults = fault_policy(self.task.faults, self.seed)
        self._session = self.world.open_session(self.seed, faults=faults, tools=self.task.tools)
        self._began = self.clock()
        zero = Usage()
        self._usage = {f: getattr(zero, f) for f in Usage.__struct_fields__}
        if self.limits is None:
            self.limits = AttemptLimits.from_task(self.task.budgets)

    # -- what the agent sees ------------------------------------------------------------------

    @property
    def instruction(self) -> str:
        """The task's instruction, with its budgets and how an answer is read (see `briefing`)."""
        return briefing(self.task)

    def tool_schemas(self, format: SchemaFormat = "openai") -> list[dict[str, Any]]:
        """The tools the task offers, in a provider's shape, as the attempt's view shows them."""
        return offered_schemas(self.view.tool_schemas(format), self.task.tools)

    def render(self, observation: Observation) -> str:
        """The text an agent is shown for one observation, by the attempt's view."""
        return self.view.render(observation)

    # -- the user channel -----------------------------------------------------------------------

    @property
    def user_turns(self) -> tuple[UserTurn, ...]:
        """The exchanges with the simulated user so far."""
        return tuple(self._user_turns)

    @property
    def user_stopped(self) -> bool:
        """Whether the simulated user has ended the conversation."""
        return bool(self._user_turns) and self._user_turns[-1].stop

    def message_user(self, message: str) -> str:
        """Send a message to the simulated user and return the answer (recorded as a turn).

        Raises:
            AttemptEnded: when the attempt has ended.
            RuntimeError: when the attempt has no user, or the user has already stopped.
        """
        self._check_open()
        if self.user is None:
            raise RuntimeError("this attempt has no simulated user")
        if self.user_stopped:
            raise RuntimeError("the user has ended the conversation")
        answer = self.user.reply(self.user_turns, message)
        self._user_turns.append(
            UserTurn(
                after_call=self._session.call_count,
                agent=_text(message),
                user=_text(answer),
                stop=STOP in answer,
            )
        )
        return answer

    def call(self, tool: str, args: Any = None) -> Observation:
        """Execute one tool call; over the tool-call budget, end the attempt instead.

        Raises:
            AttemptEnded: when the attempt has ended (a budget, or `finish`).
        """
        self._check_open()
        limit = self._limits.tool_calls
        if limit is not None and self._session.call_count >= limit:
            self._end("budget_limit", f"tool_calls budget of {limit} reached")
        # A call without arguments is a call with an empty object, whichever path made it.
        return self._session.call(tool, {} if args is None else args)

    # -- metering, for drivers of model-backed agents -----------------------------------------

    def begin_turn(self) -> None:
        """Count one model round trip; past the turn budget, end the attempt.

        Raises:
            AttemptEnded: when the turn budget is spent.
        """
        self._check_open()
        limit = self._limits.turns
        if limit is not None and self._usage["turns"] >= limit:
            self._end("turn_limit", f"turn budget of {limit} reached")
        self._usage["turns"] += 1

    def reserve(
        self, estimate: float, *, retry: bool = False, input_tokens: int = 0
    ) -> Reservation:
        """Reserve money for one request BEFORE dispatching it; counts the request.

        Args:
            estimate: US dollars the request may cost at most.
            retry: Whether it repeats an earlier request (counted in ``retries``).
            input_tokens: The estimated prompt tokens of the request, for the record's
                ``lost_input_tokens_estimate`` should its response be lost.

        Raises:
            AttemptEnded: when the request or money budget would be exceeded; nothing is
                dispatched then.
            ValueError: for an estimate that is not a finite number >= 0, or token estimate
                that is not an integer (the driver's defect).
        """
        problem = _money_problem(estimate) or token_problem(max(0, input_tokens))
        if problem:
            raise ValueError(f"reserve: {problem}")
        self._check_open()
        limits = self._limits
        if limits.requests is not None and self._usage["requests"] >= limits.requests:
            self._end("budget_limit", f"request budget of {limits.requests} reached")
        committed = (
            self._usage["cost"]
            + self._usage["uncertain_cost"]
            + sum(r.amount for r in self._open_reservations.values())
        )
        if limits.cost is not None and committed + estimate > limits.cost:
            self._end("budget_limit", f"cost budget of ${limits.cost} would be exceeded")
        self._usage["requests"] += 1
        if retry:
            self._usage["retries"] += 1
        reservation = Reservation(
            amount=estimate, number=self._usage["requests"], input_tokens=max(0, input_tokens)
        )
        self._open_reservations[reservation.number] = reservation
        return reservation

    def settle(
        self,
        reservation: Reservation,
        *,
        cost: float,
        input_tokens: int,
        output_tokens: int,
        model: str = "",
    ) -> None:
        """Replace a reservation by what the response actually cost; check the token budget.

        Args:
            reservation: The request's reservation.
            cost: What the response cost, in US dollars.
            input_tokens: Its prompt tokens.
            output_tokens: Its completion tokens.
            model: The model id the response named (kept in ``Usage.models``).

        Raises:
            AttemptEnded: when the context-token, money or wall-time budget is now exceeded,
                or when the usage is not what a response can cost (`usage_problem`): the
                request is then an infrastructure fault, its reservation kept as uncertain
                exposure and the request counted as lost, and the attempt ends as
                ``infrastructure`` (nothing of the reported values is stored).
        """
        self._open_reservations.pop(reservation.number, None)
        model = clean_text(model)[:200]
        if model and model not in self._usage["models"]:
            self._usage["models"].append(model)
        problem = usage_problem(
            cost=cost, input_tokens=input_tokens, output_tokens=output_tokens, totals=self._usage
        )
        if problem:
            self._count_lost(reservation)
            self._end_unusable(reservation, problem)
        self._usage["cost"] += cost
        self._usage["input_tokens"] += input_tokens
        self._usage["output_tokens"] += output_tokens
        limits = self._limits
        if (
            limits.context_tokens is not None
            and self._usage["input_tokens"] > limits.context_tokens
        ):
            self._end("budget_limit", f"context budget of {limits.context_tokens} tokens exceeded")
        if limits.cost is not None and self._usage["cost"] > limits.cost:
            self._end("budget_limit", f"cost budget of ${limits.cost} exceeded")
        self._check_wall_time()

    def lost(self, reservation: Reservation) -> None:
        """A request whose response never came: its reservation stays as uncertain exposure.

        It is counted in ``lost_requests``, its estimated prompt tokens in
        ``lost_input_tokens_estimate`` (the provider may have spent them; nothing reports it).
        """
        self._open_reservations.pop(reservation.number, None)
        self._count_lost(reservation)

    def _count_lost(self, reservation: Reservation) -> None:
        self._usage["uncertain_cost"] += reservation.amount
        self._usage["lost_requests"] += 1
        self._usage["lost_input_tokens_estimate"] += reservation.input_tokens

    def declare_usage(self, **fields: Any) -> None:
        """Set usage fields directly (scripted agents standing in for a model's consumption).

        Raises:
            TypeError: for a field `Usage` does not have.
            ValueError: for a value a record cannot hold: a counter that is not an integer in
                0..2^53, a cost that is not a finite number >= 0, models that are not strings
                (the agent's own fault: its attempt ends as ``error``).
        """
        for name, value in fields.items():
            if name not in self._usage:
                raise TypeError(f"unknown usage field {name!r}")
            problem = _field_problem(name, value)
            if problem:
                raise ValueError(f"usage.{name} {_shown(value)}: {problem}")
        for name, value in fields.items():
            self._usage[name] = list(value) if name == "models" else value

    def keep_transcript(self, messages: list[TranscriptMessage]) -> None:
        """Keep the model conversation for the record (the last call wins; texts cleaned).

        Raises:
            AttemptEnded: when the attempt is already sealed.
        """
        if self._sealed:
            assert self._outcome is not None
            raise AttemptEnded(self._outcome)
        self._transcript = [_clean_message(m) for m in messages]

    # -- ending -------------------------------------------------------------------------------

    @property
    def ended(self) -> bool:
        """Whether a budget, an interruption or `finish` has ended the attempt."""
        return self._outcome is not None

    @property
    def outcome(self) -> Outcome | None:
        """How the attempt ended, once it has."""
        return self._outcome

    def interrupt(self, reason: str) -> None:
        """End the attempt as ``interrupted``: its client went away without finishing.

        Counted as an attempt and graded on what it did
        (`harness_world.grading.verifier.COUNTED`).
        """
        if self._outcome is None:
            self._outcome = Outcome(status="interrupted", reason=reason)

    def fail(self, reason: str) -> None:
        """End the attempt as ``error``: the agent failed (counted as an attempt)."""
        if self._outcome is None:
            self._outcome = Outcome(status="error", reason=reason)

    def infrastructure_failed(self, reason: str) -> None:
        """End the attempt as ``infrastructure``: the harness or provider failed, not the agent."""
        if self._outcome is None:
            self._outcome = Outcome(status="infrastructure", reason=reason)

    def end(self, outcome: Outcome) -> None:
        """End the attempt with a given outcome (an importer replaying another harness's run).

        Has no effect once the attempt has ended.
        """
        if self._outcome is None:
            self._outcome = outcome

    def finish(self, final_message: str = "", context: RecordContext | None = None) -> Record:
        """Seal the attempt into a record; the outcome is ``completed`` unless already ended.

        Raises:
            AttemptEnded: when the attempt was already finished (a record is sealed once).
        """
        if self._sealed:
            assert self._outcome is not None
            raise AttemptEnded(self._outcome)
        self._sealed = True
        final_message = _text(final_message)  # limits: no lone surrogate, no string too long
        if self._outcome is None:
            self._outcome = self._overtime() or Outcome(status="completed")
        for number, reservation in sorted(self._open_reservations.items()):
            self._count_lost(reservation)  # dispatched, never settled: as good as lost
            del self._open_reservations[number]
        finished = time.time()
        base = context or RecordContext()
        context = msgspec.structs.replace(
            base,
            started_at=base.started_at or _iso(self._started),
            finished_at=base.finished_at or _iso(finished),
            latency_s=base.latency_s or round(self.clock() - self._began, 6),
        )
        return make_record(
            self._session,
            outcome=self._outcome,
            task_id=self.task.id,
            task_hash=self.task.hash,
            revision=self.revision,
            sample=self.sample,
            final_message=final_message,
            usage=Usage(**self._usage),
            context=context,
            user_turns=self._user_turns,
            transcript=self._transcript,
        )

    @property
    def session(self) -> Session:
        """The attempt's session (read its log; do not call tools on it directly)."""
        return self._session

    @property
    def _limits(self) -> AttemptLimits:
        assert self.limits is not None
        return self.limits

    def _check_open(self) -> None:
        if self._outcome is not None:
            raise AttemptEnded(self._outcome)
        self._check_wall_time()

    def _overtime(self) -> Outcome | None:
        """The ``budget_limit`` outcome once the wall time exceeds its budget (else None)."""
        limit = self._limits.wall_time
        if limit is None or self.clock() - self._began <= limit:
            return None
        return Outcome(status="budget_limit", reason=f"wall_time budget of {limit:g} s exceeded")

    def _check_wall_time(self) -> None:
        if self._outcome is None and (overtime := self._overtime()) is not None:
            self._outcome = overtime
            raise AttemptEnded(overtime)

    def _end(self, status: OutcomeStatus, reason: str) -> None:
        self._outcome = Outcome(status=status, reason=reason)
        raise AttemptEnded(self._outcome)

    def _end_unusable(self, reservation: Reservation, problem: str) -> None:
        """End the attempt as ``infrastructure``: a response reported usage no record can hold."""
        if self._outcome is None:
            self._outcome = Outcome(
                status="infrastructure",
                reason=f"model request {reservation.number}: the provider reported unusable "
                f"usage ({problem}); its reservation is kept as uncertain exposure",
            )
        raise AttemptEnded(self._outcome)


def offered_schemas(
    schemas: Sequence[dict[str, Any]], tools: Sequence[str] | None
) -> list[dict[str, Any]]:
    """The schemas of the tools an allow-list offers (None: every one), in their own order.

    The one filter between a task's ``tools`` and what any driver lists to its model: a
    schema is named by ``name``, or by ``function.name`` in the OpenAI shape.
    """
    if tools is None:
        return list(schemas)
    allowed = set(tools)
    return [s for s in schemas if (s.get("function") or s).get("name") in allowed]


_COUNTERS = frozenset(
    {"turns", "requests", "retries", "input_tokens", "output_tokens", "lost_requests"}
    | {"lost_input_tokens_estimate"}
)


def token_problem(value: object) -> str:
    """Why ``value`` cannot be a token count or counter (an integer in 0..2^53); empty if it can.

    A ``bool`` is not an integer here, nor is a float with an integral value: a provider that
    reports one does not report a count.
    """
    if type(value) is not int:
        return f"not an integer ({type(value).__name__})"
    if value < 0:
        return "negative"
    if value > MAX_INT:
        return "over 2^53"
    return ""


def _money_problem(value: object) -> str:
    if type(value) not in (int, float):
        return f"not a number ({type(value).__name__})"
    if not math.isfinite(value):  # type: ignore[arg-type]
        return "not finite"
    return "negative" if value < 0 else ""  # type: ignore[operator]


def _field_problem(name: str, value: object) -> str:
    """Why ``value`` cannot be `Usage` field ``name``; empty when it can."""
    if name in _COUNTERS:
        return token_problem(value)
    if name == "models":
        if not isinstance(value, list | tuple) or not all(isinstance(m, str) for m in value):
            return "not a list of strings"
        return "" if all(not text_problem(m) for m in value) else "a string a record cannot hold"
    return _money_problem(value)


def usage_problem(
    *,
    cost: object,
    input_tokens: object,
    output_tokens: object,
    totals: dict[str, Any] | None = None,
) -> str:
    """Why a response's reported usage cannot be recorded; empty when it can.

    Token counts must be integers in 0..2^53 (`MAX_INT`, what every JSON reader holds
    exactly), the cost a finite number >= 0; with the attempt's ``totals`` so far, the sums must
    stay within the same bounds. Anything else (negative, huge, NaN, infinite, not a number)
    is a fault of the provider, never a figure.
    """
    for name, value in (("input_tokens", input_tokens), ("output_tokens", output_tokens)):
        problem = token_problem(value)
        if problem:
            return f"{name} {_shown(value)}: {problem}"
        if totals is not None and totals[name] + value > MAX_INT:
            return f"{name} {_shown(value)}: the attempt's total would be over 2^53"
    problem = _money_problem(cost)
    if problem:
        return f"cost {_shown(cost)}: {problem}"
    if totals is not None and not math.isfinite(totals["cost"] + cost):
        return f"cost {_shown(cost)}: the attempt's total would not be finite"
    return ""


def _shown(value: object) -> str:
    """A short, storable description of a raw reported value (never the value itself)."""
    if type(value) is int and abs(value) > 10**30:
        return f"({'-' if value < 0 else ''}an integer of {value.bit_length()} bits)"
    text = repr(value[:40] if isinstance(value, str) else value)
    return clean_text(text)[:60]


def _clean_message(message: TranscriptMessage) -> TranscriptMessage:
    """A transcript message a record can hold: no lone surrogate, no string over `MAX_STRING`."""
    texts = [message.role, message.content, message.tool_call_id]
    texts += [t for c in message.tool_calls for t in (c.id, c.name, c.arguments)]
    if all(_plain(t) for t in texts):  # the common message: kept as it is (frozen), no copy
        return message
    calls = [
        TranscriptToolCall(id=_text(c.id), name=_text(c.name), arguments=_text(c.arguments))
        for c in message.tool_calls
    ]
    return msgspec.structs.replace(
        message,
        role=_text(message.role),
        content=_text(message.content),
        tool_calls=calls,
        tool_call_id=_text(message.tool_call_id),
    )


def _plain(text: str) -> bool:
    """ASCII (so no lone surrogate) and within `MAX_STRING`: a text to keep as it is."""
    return text.isascii() and len(text) <= MAX_STRING


def _text(text: str) -> str:
    return text if _plain(text) else clean_text(text[:MAX_STRING])[:MAX_STRING]


def _iso(moment: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))

"""Serve attempts to any MCP client (extra: `harness_world[mcp]`, the official `mcp` SDK).

An MCP client (Claude Code, Cursor, an agent SDK) connects over stdio and sees the tools its
task offers (every tool of the world unless the task's ``tools`` allow-list narrows them) with
their JSON schemas (`tool_schemas(world, "mcp")`), plus one more tool, ``finish``. The
task's instruction is the server's ``instructions`` and the prompt ``task``. A tool's typed error
comes back as an MCP tool error (``isError: true``) whose text and structured content carry the
error's kind and message, exactly what the session logged.

Every attempt ends in a saved, sealed record:

- ``finish`` seals it as ``completed`` (the ``message`` argument is the final message);
- a budget (the task's tool-call budget, or an override) seals it as ``budget_limit``; the call
  that hit it answers with a tool error naming the budget;
- the client disconnecting (end of input, or closing its HTTP session) or the process being
  terminated seals the attempt in flight as ``interrupted``.

A session that made any tool call is its sample's attempt, whatever ends it: an ``interrupted``
record is the slot's final record, counted and graded like any other attempt, and the sample
is never served again (a client that disconnects when an attempt goes badly gets no second
try at it). A session that made no call started nothing and leaves its sample to the next.

`AttemptServer` holds the plan: one target (``--record FILE``) or k samples into a run directory
(``--samples k --out RUN``, the layout of `harness_world.run`: ``manifest.json``,
``records/<task>/<sample>.json``, ``inventory.json``). One MCP session serves at most one
attempt: a client whose conversation carried one attempt into the next would make the samples
depend on each other, so after its attempt is sealed a session's tool calls are refused and the
next sample goes to a fresh session. Over stdio a process is one session, so it serves one
sample and the next process on the same run directory resumes it; over streamable HTTP each
``initialize`` opens a session, and one attempt is in flight at a time. Its `call` method is
plain Python (no MCP involved), so the protocol layer is thin.

Over streamable HTTP (`serve_http`, loopback only) every request carries the server's bearer
token, so only the client holding it can call or finish the attempts it serves.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import secrets
import signal
import socket
import sys
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

import attrs
import msgspec

from harness_world.engine.limits import (
    ARGUMENT_DEPTH,
    MCP_MESSAGE_DEPTH,
    json_text_depth,
    json_top_level,
)
from harness_world.engine.schemas import tool_schemas
from harness_world.engine.world import World
from harness_world.evidence.binding import save_bound
from harness_world.evidence.record import Record, RecordContext, save_record
from harness_world.grading.briefing import TOOL_BUDGETS, briefing
from harness_world.grading.task import Task
from harness_world.grading.verify import verify
from harness_world.running.attempt import Attempt, AttemptEnded, AttemptLimits, offered_schemas
from harness_world.running.lock import RunLock, lock_run_directory
from harness_world.running.reader import refresh_counts
from harness_world.running.run import open_external_run as open_run_dir
from harness_world.running.run import sample_seed
from harness_world.running.rundir import record_path

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

__all__ = [
    "FINISH_SCHEMA",
    "FINISH_TOOL",
    "STDIO_SESSION",
    "AttemptServer",
    "AttemptTarget",
    "BearerGate",
    "SavedAttempt",
    "ServeSummary",
    "ToolAnswer",
    "Transport",
    "announcement",
    "attempt_server",
    "build_server",
    "mark_served",
    "plan_run",
    "serve",
    "serve_http",
    "serve_stdio",
    "serve_summary",
    "served_marker",
    "token_problem",
    "tool_refusal",
    "uncounted_budget",
]

FINISH_TOOL = "finish"
"""The name of the extra tool that ends an attempt."""

STDIO_SESSION = "stdio"
"""The one session of a stdio connection (a process serves one client connection)."""

Transport = Literal["stdio", "http"]
"""How clients reach the server."""

FINISH_SCHEMA: dict[str, Any] = {
    "name": FINISH_TOOL,
    "description": (
        "End the attempt when the task is done (or cannot be done). `message` is your final "
        "answer to the requester; it is recorded and graded. After `finish` the attempt's "
        "record is sealed and no further tool call counts toward it."
    ),
    "inputSchema": {
        "type": "object",
        "properties": {"message": {"type": "string", "description": "the final message"}},
        "required": [],
        "additionalProperties": False,
    },
    "annotations": {"readOnlyHint": False},
}
"""The ``finish`` tool in MCP shape: every adapter that serves attempts offers it last."""


class AttemptTarget(msgspec.Struct, frozen=True, kw_only=True):
    """One attempt to serve.

    Attributes:
        sample: The sample index (0 for a single attempt).
        seed: The session seed.
        path: Where its record is saved.
    """

    sample: int
    seed: int
    path: str


class SavedAttempt(msgspec.Struct, frozen=True, kw_only=True):
    """What became of one served attempt (the ``finish`` answer and the serve summary).

    Attributes:
        sample: The sample index.
        record: The saved record's path.
        outcome: How the attempt ended (``completed``, ``budget_limit``, ``interrupted``...).
        evidence: Whether the saved record replays (``verified``, ``ungraded``, ``lost``).
        grade: ``passed``, ``failed``, or null when not graded (evidence not verified).
        failed: The automated criteria that failed, by id.
        harness: The harness layer beside the grade: ``checked`` (criteria) and ``failed``
            (each ``id: detail``); the grade does not include it.
    """

    sample: int
    record: str
    outcome: str
    evidence: str
    grade: str | None
    failed: list[str] = []
    harness: dict[str, Any] = {}


class ToolAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """One tool call's answer, independent of the MCP SDK's types.

    Attributes:
        is_error: True for a typed error (an MCP tool error).
        content: The JSON object shown to the client (also sent as its text).
    """

    is_error: bool
    content: dict[str, Any]


def tool_refusal(kind: str, message: str) -> ToolAnswer:
    """A typed error answer: the call was refused (``kind``) or ended the attempt, saying why."""
    return ToolAnswer(
        is_error=True, content={"ok": False, "error": {"kind": kind, "message": message}}
    )


@attrs.define(slots=True, eq=False)
class AttemptServer:
    """The attempts one server serves, one MCP session each, one after another.

    A session (named by the protocol layer: the ``mcp-session-id`` over HTTP, `STDIO_SESSION`
    over stdio) is bound to an attempt by its first tool call and keeps it until the attempt is
    sealed; after that its calls are refused (kind ``ended``), so no conversation carries one
    sample into the next. One attempt is in flight at a time: another session's calls meanwhile
    are refused (kind ``busy``) and bind it to nothing, so the samples are served, sealed and
    indexed in order by one writer, as `harness_world.run` does with one worker. A session
    that ends mid-attempt (`end_session`) seals it as ``interrupted``: that record is the
    sample's attempt, and the next fresh session gets the next sample. In a run directory a
    sample is marked served (`served_marker`) before its first call runs, so that a server
    killed mid-attempt leaves the sample missing rather than serving it again.

    Attributes:
        world: The world.
        task: The task (the same for every attempt).
        targets: The attempts to serve, in order.
        revision: The run revision id written into each record ("" for a single attempt).
        limits: Budgets (None: the task's own).
        run_dir: The run directory to recount after each attempt, if any.
        reveal_grade: Whether ``finish`` tells the client its grade and failed criteria (off:
            a client that learns its grade carries it into the next sample, so samples would
            not be independent; the operator still gets every grade in the serve summary).
        transport: How clients reach the server (set by `serve_stdio` and `serve_http`); it
            decides how a refused client is told to open a fresh session.
        lock: The run directory's writer lock, held until `release` (or the process's end).
        saved: Every attempt saved so far.
    """

    world: World
    task: Task
    targets: list[AttemptTarget]
    revision: str = ""
    limits: AttemptLimits | None = None
    run_dir: Path | None = None
    reveal_grade: bool = False
    transport: Transport = "stdio"
    lock: RunLock | None = attrs.field(default=None, repr=False)
    saved: list[SavedAttempt] = attrs.field(factory=list)
    _index: int = 0
    _attempt: Attempt | None = None
    _holder: str | None = None
    _sealed: dict[str, int] = attrs.field(factory=dict)  # session -> the sample it was served

    def __attrs_post_init__(self) -> None:
        if any(t.name == FINISH_TOOL for t in self.world.contract.tools):
            raise ValueError(
                f"world {self.world.name!r} declares a tool named {FINISH_TOOL!r}, which the MCP "
                "server reserves for ending an attempt"
            )

    # -- what the client sees -----------------------------------------------------------------

    @property
    def instruction(self) -> str:
        """The task's instruction with its budgets and answer rule, as `play` states it.

        It is the server's instructions and its ``task`` prompt. Only the budgets the server
        counts are stated (`TOOL_BUDGETS`): it sees tool calls, never the client's model turns,
        tokens or cost, so it promises none of them.
        """
        return briefing(self.task, TOOL_BUDGETS)

    def tools(self) -> list[dict[str, Any]]:
        """The tools the task offers in MCP shape, then ``finish``."""
        offered = offered_schemas(tool_schemas(self.world, format="mcp"), self.task.tools)
        return [*offered, FINISH_SCHEMA]

    @property
    def done(self) -> bool:
        """Whether every planned attempt has been saved."""
        return self._index >= len(self.targets)

    @property
    def remaining(self) -> int:
        """Planned attempts not yet saved (the attempt in flight among them)."""
        return len(self.targets) - self._index

    @property
    def current(self) -> Attempt | None:
        """The attempt in flight (started by its first call), if any."""
        return self._attempt

    # -- calls --------------------------------------------------------------------------------

    def call(
        self, name: str, arguments: dict[str, Any] | None, session: str = STDIO_SESSION
    ) -> ToolAnswer:
        """Execute one tool call (or ``finish``) for ``session``.

        The call goes to the session's attempt, starting one if the session has none and none
        is in flight; otherwise it is refused as a tool error, and no attempt records it.

        Args:
            name: The tool (or ``finish``).
            arguments: The call's arguments.
            session: The MCP session the call arrived on.
        """
        refused = self._refusal(session)
        if refused is not None:
            return refused
        attempt = self._ensure_attempt(session)
        if name == FINISH_TOOL:
            message = (arguments or {}).get("message", "")
            saved = self._seal(attempt, message if isinstance(message, str) else str(message))
            return ToolAnswer(is_error=False, content=self._summary(saved))
        try:
            observation = attempt.call(name, {} if arguments is None else arguments)
        except AttemptEnded as ended:
            saved = self._seal(attempt, "")
            content = tool_refusal(ended.outcome.status, ended.outcome.reason).content
            return ToolAnswer(is_error=True, content={**content, **self._summary(saved)})
        return ToolAnswer(
            is_error=not observation.ok,
            content={"seq": observation.seq, **observation.to_message()},
        )

    def end_session(self, session: str, reason: str) -> SavedAttempt | None:
        """Forget a session that has ended; seal its attempt in flight as ``interrupted``.

        Returns:
            What was saved, or None when the session held no attempt in flight.
        """
        saved = self.close(reason) if self._holder == session else None
        self._sealed.pop(session, None)
        return saved

    def close(self, reason: str) -> SavedAttempt | None:
        """Seal the attempt in flight as ``interrupted`` (idempotent); None if none was open."""
        attempt = self._attempt
        if attempt is None:
            return None
        attempt.interrupt(reason)
        return self._seal(attempt, "")

    def release(self) -> None:
        """Let the next writer into the run directory (idempotent; the process's end does too)."""
        if self.lock is not None:
            self.lock.release()

    # -- internals ----------------------------------------------------------------------------

    def _refusal(self, session: str) -> ToolAnswer | None:
        """Why ``session`` may not call now, as the tool error it gets; None if it may."""
        if session in self._sealed:
            sample = self._sealed[session]
            return tool_refusal(
                "ended",
                f"this MCP session's attempt (sample {sample}) is sealed and saved; one session "
                "serves one attempt, so that no sample starts from another's conversation. "
                + self._next_step(),
            )
        if self._holder is not None and self._holder != session:
            sample = self.targets[self._index].sample
            return tool_refusal(
                "busy",
                f"sample {sample} is in flight on another MCP session and one attempt is served "
                "at a time; call again once that session has called `finish` or closed. This "
                "session has started nothing: its next call after that gets a fresh attempt",
            )
        if self.done:
            return tool_refusal("ended", "every planned attempt is saved; nothing is left to serve")
        return None

    def _next_step(self) -> str:
        """What a client whose session is spent does next."""
        if self.done:
            return "Every planned attempt is saved; nothing is left to serve: disconnect"
        if self.transport == "http":
            how = "open a new MCP session (initialize again, same URL and token)"
        else:
            how = "reconnect: start this server again with the same --samples and --out"
        return (
            f"{self.remaining} sample(s) remain: {how} for the next one, which starts in a "
            "fresh copy of the world"
        )

    def _ensure_attempt(self, session: str) -> Attempt:
        if self._attempt is None:
            target = self.targets[self._index]
            if self.run_dir is not None:  # before its first call runs: never served again
                mark_served(served_marker(self.run_dir, self.task.id, target.sample))
            self._attempt = Attempt(
                self.world,
                self.task,
                seed=target.seed,
                sample=target.sample,
                revision=self.revision,
                limits=self.limits,
            )
            self._holder = session
        return self._attempt

    def _seal(self, attempt: Attempt, final_message: str) -> SavedAttempt:
        target = self.targets[self._index]
        context = RecordContext(host=socket.gethostname(), pid=os.getpid(), workers=1)
        record = attempt.finish(final_message, context)
        path = Path(target.path)
        path.parent.mkdir(parents=True, exist_ok=True)
        if self.run_dir is not None:  # bound to its slot, write-ahead (as `run` does)
            save_bound(self.run_dir, record, path)
        else:
            save_record(record, path)
        saved = _judge(record, path, self.world, self.task)
        self.saved.append(saved)
        if self._holder is not None:
            self._sealed[self._holder] = target.sample
        self._attempt = None
        self._holder = None
        self._index += 1  # whatever ended it, this sample's attempt: never served again
        if self.run_dir is not None:
            refresh_counts(self.run_dir, [self.task], worlds={self.world.name: self.world})
        return saved

    def _summary(self, saved: SavedAttempt) -> dict[str, Any]:
        summary: dict[str, Any] = msgspec.to_builtins(saved)
        if not self.reveal_grade:
            for field in ("grade", "failed", "harness"):
                summary.pop(field, None)
            summary["graded"] = "kept from the client (serve with --reveal-grade to show it)"
        summary["remaining"] = self.remaining
        summary["next"] = f"this session takes no more tool calls. {self._next_step()}"
        return summary


def _judge(record: Record, path: Path, world: World, task: Task) -> SavedAttempt:
    result = verify(record, world=world, task=task)
    grade = None
    failed: list[str] = []
    harness: dict[str, Any] = {"checked": 0, "failed": []}
    if result.grade is not None:
        grade = "passed" if result.grade.passed else "failed"
        failed = list(result.grade.failed)
        harness = {"checked": len(result.grade.harness), "failed": result.grade.harness_failed}
    return SavedAttempt(
        sample=record.sample,
        record=str(path),
        outcome=record.outcome.status,
        evidence=result.evidence,
        grade=grade,
        failed=failed,
        harness=harness,
    )


def plan_run(
    world: World,
    task: Task,
    *,
    samples: int,
    out: str | Path,
    seed: int = 0,
    label: str = "mcp-client",
    limits: dict[str, int | float | None] | None = None,
) -> AttemptServer:
    """An `AttemptServer` for k samples into a run directory (created, or resumed).

    Only samples never begun are served: a slot with a record (whatever its outcome,
    ``interrupted`` included) or marked served (`served_marker`: a server killed mid-attempt
    saved nothing) is kept as it is, so no sample is ever served twice. The server holds the
    run directory's writer lock (`AttemptServer.release`, or the process's end, lets it go), so
    two servers, or a server and `run`, never serve the same slot.

    Args:
        world: The world.
        task: The task.
        samples: Samples to serve (k).
        out: The run directory.
        seed: The base seed (sample seeds derive from it as in `harness_world.run`).
        label: The client's name, written into the manifest and the revision's agent settings.
        limits: Budget overrides.

    Raises:
        ValueError: for fewer than one sample.
        harness_world.RevisionMismatch: when ``out`` holds a run of another revision.
        harness_world.running.lock.RunDirectoryBusy: when another process writes into ``out``.
    """
    if samples < 1:
        raise ValueError("samples must be at least 1")
    overrides = {k: v for k, v in (limits or {}).items() if v is not None}
    root = Path(out)
    lock = lock_run_directory(root)
    try:
        revision = open_run_dir(
            root,
            worlds={world.name: world},
            tasks=[task],
            kind="mcp",
            label=label,
            samples=samples,
            seed=seed,
            overrides=overrides,
        )
    except BaseException:
        lock.release()
        raise
    targets: list[AttemptTarget] = []
    for sample in range(samples):
        path = record_path(root, task.id, sample)
        begun = served_marker(root, task.id, sample)
        if not (os.path.lexists(path) or os.path.lexists(begun)):  # never begun
            seed_of = sample_seed(seed, task.id, sample)
            targets.append(AttemptTarget(sample=sample, seed=seed_of, path=str(path)))
    return AttemptServer(
        world=world,
        task=task,
        targets=targets,
        revision=revision.id,
        limits=AttemptLimits.from_task(task.budgets, **overrides),
        run_dir=root,
        lock=lock,
    )


SERVED = "mcp-served"
"""The folder of a run directory holding a marker per sample the MCP server began serving."""


def served_marker(root: Path, task_id: str, sample: int) -> Path:
    """Where the marker saying that a sample's attempt has begun lives (an empty file).

    Outside ``records/``, so no reader takes it for a record.
    """
    return root / SERVED / task_id / str(sample)


def mark_served(path: Path) -> None:
    """Create the marker ``path`` durably (the file and its folder's entry fsynced)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


# -- the MCP protocol layer (imports the SDK) ---------------------------------------------------


def build_server(
    state: AttemptServer, session_of: Callable[[Any], str | None] = lambda ctx: STDIO_SESSION
) -> Any:
    """An `mcp.server.lowlevel.Server` answering ``tools/list``, ``tools/call`` and prompts.

    Args:
        state: The attempts to serve.
        session_of: The MCP session a request's context belongs to (None: none; its tool
            calls are refused, since an attempt belongs to one session).

    Raises:
        RuntimeError: when the ``mcp`` extra is not installed.
    """
    try:
        from mcp import types
        from mcp.server.lowlevel import Server
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise RuntimeError("the MCP server needs `pip install 'harness_world[mcp]'`") from exc

    tools = [types.Tool.model_validate(entry) for entry in state.tools()]
    prompt = types.Prompt(
        name="task",
        description=f"The task to solve: {state.task.id} (world {state.world.name})",
    )

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: Any) -> Any:
        session = session_of(ctx)
        if session is None:
            answer = tool_refusal("no_session", _NO_SESSION)
        else:
            answer = state.call(params.name, params.arguments, session)
        text = json.dumps(answer.content, sort_keys=True)
        return types.CallToolResult(
            content=[types.TextContent(text=text)],
            structured_content=answer.content,
            is_error=answer.is_error,
        )

    async def list_prompts(ctx: Any, params: Any) -> Any:
        return types.ListPromptsResult(prompts=[prompt])

    async def get_prompt(ctx: Any, params: Any) -> Any:
        if params.name != "task":
            from mcp.shared.exceptions import MCPError

            raise MCPError(code=-32602, message=f"unknown prompt {params.name!r}; use 'task'")
        return types.GetPromptResult(
            description=prompt.description,
            messages=[
                types.PromptMessage(role="user", content=types.TextContent(text=state.instruction))
            ],
        )

    return Server(
        "harness_world",
        version=_version(),
        instructions=state.instruction,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


async def serve_stdio(state: AttemptServer) -> None:
    """Serve over this process's stdin and stdout until the client disconnects.

    Every request gets a reply: a line nested deeper than `MCP_MESSAGE_DEPTH`, or one that is
    not a JSON-RPC message, is answered here with a JSON-RPC error (carrying the request's id
    when it can be read) instead of reaching the SDK's reader, which drops such lines unanswered.

    On return, the caller seals any attempt in flight with `AttemptServer.close` (done there so
    that termination by a signal seals it too).
    """
    import anyio
    from mcp.server.stdio import stdio_server

    state.transport = "stdio"
    server = build_server(state)
    # closefd=False: the reader thread may still block on fd 0 after the transport exits.
    stdin = open(sys.stdin.fileno(), encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
    send_refusal, refusals = anyio.create_memory_object_stream[Any](max_buffer_size=16)
    gate = _LineGate(readline=anyio.wrap_file(stdin).readline, refusals=send_refusal)
    # The transport only iterates its stdin, and the gate iterates as a file does.
    async with (
        stdio_server(stdin=cast("anyio.AsyncFile[str]", gate)) as (read_stream, write_stream),
        anyio.create_task_group() as group,
    ):
        group.start_soon(_forward_refusals, refusals, write_stream)
        await server.run(read_stream, write_stream, server.create_initialization_options())
        group.cancel_scope.cancel()


@attrs.define(slots=True, eq=False)
class _LineGate:
    """The lines of stdin the SDK may read; the others are refused into ``refusals``."""

    readline: Callable[[], Awaitable[str]]
    refusals: MemoryObjectSendStream[Any]

    def __aiter__(self) -> _LineGate:
        return self

    async def __anext__(self) -> str:
        while line := await self.readline():
            if not line.strip():
                continue  # no request, so no reply (the SDK's reader would only log it)
            refusal = _refusal(line)
            if refusal is None:
                return line
            if refusal.id is not None or not _is_notification(line):
                await self.refusals.send(refusal)
        raise StopAsyncIteration


async def _forward_refusals(refusals: MemoryObjectReceiveStream[Any], write_stream: Any) -> None:
    from mcp.shared.message import SessionMessage

    async with refusals:
        async for refusal in refusals:
            await write_stream.send(SessionMessage(refusal))


def _refusal(line: str) -> Any:
    """The JSON-RPC error answering ``line``, or None when the SDK can read it."""
    from mcp import types

    if json_text_depth(line, stop_at=MCP_MESSAGE_DEPTH) > MCP_MESSAGE_DEPTH:
        message = (
            f"request nested deeper than {MCP_MESSAGE_DEPTH} levels "
            f"(tool arguments nest at most {ARGUMENT_DEPTH})"
        )
        return _rpc_error(line, types.INVALID_PARAMS, message, "invalid_arguments")
    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError:
        try:
            json.loads(line)
        except ValueError:
            return _rpc_error(line, types.PARSE_ERROR, "Parse error: not JSON", "bad_request")
        message = "Invalid Request: not a JSON-RPC request, notification or response"
        return _rpc_error(line, types.INVALID_REQUEST, message, "bad_request")
    return None


def _rpc_error(line: str, code: int, message: str, kind: str) -> Any:
    from mcp import types

    return types.JSONRPCError(
        jsonrpc="2.0",
        id=_request_id(_top_level(line)),
        error=types.ErrorData(code=code, message=message, data={"kind": kind}),
    )


def _top_level(line: str) -> object:
    """The message's top level, every nested value as null (None if unreadable).

    Read this way, a message too deep to parse still shows its ``id`` and ``method``.
    """
    text = json_top_level(line)
    if text is None:
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _request_id(message: object) -> int | str | None:
    if isinstance(message, dict):
        value = message.get("id")
        if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
            return value
    return None


def _is_notification(line: str) -> bool:
    """A readable message with a method and no id: JSON-RPC answers it with nothing."""
    message = _top_level(line)
    return isinstance(message, dict) and "method" in message and "id" not in message


LOOPBACK = "127.0.0.1"
"""The only address the HTTP transport binds: the attempt's tools are not for the network."""


async def serve_http(
    state: AttemptServer,
    port: int = 0,
    on_ready: Callable[[str], None] | None = None,
    *,
    token: str | None,
) -> None:
    """Serve over streamable HTTP on the loopback interface until SIGTERM/SIGINT.

    Each MCP session (opened by ``initialize``, named by the ``mcp-session-id`` the SDK
    assigns, ended by the client's DELETE) gets at most one attempt, one session at a time
    (`AttemptServer`). Sessions do not expire on their own, so an attempt's session lasts as
    long as its client keeps it. A request without a session (the sessionless 2026-07-28
    protocol) is told to connect with the handshake: ``server/discover`` is not served, which
    sends a client negotiating automatically to ``initialize``. Any local process can reach a
    loopback port, so with a ``token`` every request must carry ``Authorization: Bearer
    <token>`` (others get HTTP 401): the attempts are served to whoever holds the token, one
    plan per server. The caller seals any attempt still open once this returns.

    Args:
        state: The attempts to serve.
        port: The TCP port (0: any free port).
        on_ready: Called with the endpoint URL once the socket listens and the app has started,
            so a client that connects as soon as it is told is served.
        token: The bearer token every request must carry; None serves without one (any local
            process may then join the attempt).
    """
    import anyio
    import uvicorn

    app = _http_app(state, token)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((LOOPBACK, port))
    url = f"http://{LOOPBACK}:{listener.getsockname()[1]}/mcp"
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2)
    web = _web_server(config, lambda: on_ready(url) if on_ready is not None else None)

    async def watch_signals() -> None:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for _ in signals:
                web.should_exit = True  # graceful: open requests finish first
                return

    async with anyio.create_task_group() as group:
        group.start_soon(watch_signals)
        await web.serve(sockets=[listener])
        group.cancel_scope.cancel()


def _http_app(state: AttemptServer, token: str | None) -> Any:
    """The ASGI app: the SDK's streamable HTTP app, its session ends watched, behind the gate."""
    from mcp import types
    from mcp.shared.exceptions import MCPError

    state.transport = "http"
    server = build_server(state, session_of=_http_session)

    async def no_discover(ctx: Any, params: Any) -> Any:
        raise MCPError(code=types.METHOD_NOT_FOUND, message=_NO_SESSION, data="server/discover")

    server.add_request_handler("server/discover", types.RequestParams, no_discover)
    # No idle expiry: the SDK would forget a quiet session without telling us, leaving its
    # attempt bound to a session nobody can reach.
    sdk_app = server.streamable_http_app(host=LOOPBACK, session_idle_timeout=None)
    app: Any = _SessionEnds(
        app=sdk_app, on_end=lambda session: state.end_session(session, "client closed its session")
    )
    return app if token is None else BearerGate(app=app, token=token)


_NO_SESSION = (
    "this server gives each MCP session one attempt, and this request has no session: connect "
    "with the initialize handshake (protocol version 2025-11-25 or earlier), which opens one"
)


def _http_session(ctx: Any) -> str | None:
    """The ``mcp-session-id`` of the HTTP request carrying ``ctx``, if it has one.

    Only a handshake-era request's id names a session: the SDK answers an id it did not assign
    with HTTP 404 before any handler runs. The sessionless protocol checks no id, so one sent
    with it names nothing.
    """
    from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    headers = getattr(ctx.request, "headers", None)
    if headers is None or ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return None
    session = headers.get(MCP_SESSION_ID_HEADER)
    return session if isinstance(session, str) else None


@attrs.define(slots=True, frozen=True)
class _SessionEnds:
    """ASGI middleware: tells ``on_end`` which MCP session a successful DELETE ended.

    Attributes:
        app: The SDK's app.
        on_end: Called with the session id once the SDK has answered its DELETE.
    """

    app: Any
    on_end: Callable[[str], object]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Pass the request on; after a DELETE the SDK accepted, report its session ended."""
        if scope["type"] != "http" or scope.get("method") != "DELETE":
            await self.app(scope, receive, send)
            return
        header = b"mcp-session-id"
        given = [bytes(v) for k, v in scope.get("headers", []) if k.lower() == header]
        status: list[int] = []

        async def watch(message: Any) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            await send(message)

        await self.app(scope, receive, watch)
        if len(given) == 1 and status and status[0] < 400:
            self.on_end(given[0].decode("latin-1"))


def _web_server(config: Any, on_started: Callable[[], None]) -> Any:
    """A uvicorn server that leaves signals to the caller and reports when it listens."""
    import uvicorn

    class _Web(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            # uvicorn re-raises a captured signal after shutdown, which would kill the process
            # before the attempt in flight is sealed; the caller watches signals instead.
            yield

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            if self.started:  # lifespan done and the socket listening (False: startup failed)
                on_started()

    return _Web(config)


@attrs.define(slots=True, frozen=True)
class BearerGate:
    """ASGI middleware: a request without ``Authorization: Bearer <token>`` gets HTTP 401.

    Attributes:
        app: The ASGI app behind the gate.
        token: The token every HTTP request must carry.
    """

    app: Any
    token: str

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Pass lifespan events and requests carrying the token; refuse any other request."""
        if scope["type"] == "lifespan" or self._carries_token(scope):
            await self.app(scope, receive, send)
        elif scope["type"] == "http":
            await _unauthorized(send)
        else:  # a websocket: no route takes one, and none may skip the token
            await send({"type": "websocket.close", "code": 1008})

    def _carries_token(self, scope: Any) -> bool:
        given = [v for k, v in scope.get("headers", []) if k.lower() == b"authorization"]
        if len(given) != 1:
            return False
        scheme, _, credential = bytes(given[0]).partition(b" ")
        expected = self.token.encode("utf-8")
        return scheme.lower() == b"bearer" and secrets.compare_digest(credential, expected)


async def _unauthorized(send: Any) -> None:
    body = json.dumps(
        {"error": "unauthorized: send the server's token as `Authorization: Bearer <token>`"}
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", b'Bearer realm="harness_world"'),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("harness_world")
    except PackageNotFoundError:
        return "0"


def targets_for_record(path: str | Path, seed: int) -> Sequence[AttemptTarget]:
    """The single target of ``--record FILE``."""
    return [AttemptTarget(sample=0, seed=seed, path=str(path))]


def attempt_server(
    world: World,
    task: Task,
    *,
    samples: int | None = None,
    out: str | Path | None = None,
    record: str | Path = "mcp-record.json",
    seed: int = 0,
    label: str = "mcp-client",
    limits: dict[str, int | float | None] | None = None,
    reveal_grade: bool = False,
) -> AttemptServer:
    """The attempts to serve: k ``samples`` into the run directory ``out``, or one ``record``.

    Args:
        world: The world.
        task: The task.
        samples: Attempts to serve into ``out`` (None: one attempt saved at ``record``).
        out: The run directory (created, or resumed: `plan_run`); needed with ``samples``.
        record: Where the single attempt's record is saved.
        seed: The session seed (with ``samples``: the base seed sample seeds derive from).
        label: The client under test, in the run's manifest and revision.
        limits: Budget overrides on the task's budgets.
        reveal_grade: Whether each ``finish`` answer tells the client its grade.

    Raises:
        RevisionMismatch: A resumed run directory was made by another revision.
        RunDirectoryBusy: Another process writes into the run directory.
        ValueError: The options or a saved record do not fit.
        OSError: The run directory or record cannot be written.
    """
    if samples is not None:
        if out is None:
            raise ValueError("samples are served into a run directory (out)")
        state = plan_run(
            world, task, samples=samples, out=out, seed=seed, label=label, limits=limits
        )
        return attrs.evolve(state, reveal_grade=reveal_grade)
    return AttemptServer(
        world=world,
        task=task,
        targets=list(targets_for_record(record, seed)),
        limits=AttemptLimits.from_task(task.budgets, **(limits or {})),
        reveal_grade=reveal_grade,
    )


_TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
"""What a bearer token may be (RFC 6750's ``b64token``): it travels in a header as it is."""


def announcement(url: str, token: str | None, *, generated: bool) -> str:
    """The server's first line on stderr once it listens: its URL and how clients authenticate.

    A JSON object ``{"url", "auth", "token"}``: ``auth`` is ``bearer`` or ``none``, and the
    token is printed only when it was generated (a token the caller gave is not echoed).
    """
    shown: dict[str, str] = {"url": url, "auth": "none" if token is None else "bearer"}
    if token is not None and generated:
        shown["token"] = token
    return json.dumps(shown)


UNCOUNTED_BUDGETS = ("turns", "context_tokens", "requests", "cost")
"""Budgets of the client's model: the server sees its tool calls, never its model requests."""


def uncounted_budget(limits: Mapping[str, int | float | None]) -> str:
    """Why a budget override given in ``limits`` cannot be served (empty when none can't).

    The server would promise such a budget and never enforce it, so it is refused instead.
    """
    given = [name for name in UNCOUNTED_BUDGETS if limits.get(name) is not None]
    if not given:
        return ""
    return (
        f"--{given[0].replace('_', '-')}: the MCP server sees the client's tool calls, never its "
        "model turns, requests, tokens or cost, so it cannot enforce this budget (--tool-calls "
        "and --wall-time it can)"
    )


def token_problem(token: str) -> str:
    """Why ``token`` cannot be a bearer token (empty when it can)."""
    if _TOKEN.fullmatch(token):
        return ""
    return "must be letters, digits and -._~+/ (no spaces), as a header carries it"


class ServeSummary(msgspec.Struct, frozen=True, kw_only=True):
    """What a server saved, and what remains to serve.

    Attributes:
        saved: Every attempt sealed and saved by this server, in order.
        remaining: Attempts of its plan still to serve (another server may resume them).
    """

    saved: list[SavedAttempt]
    remaining: int


def serve_summary(state: AttemptServer) -> ServeSummary:
    """What ``state`` saved so far, and how many attempts remain."""
    return ServeSummary(saved=list(state.saved), remaining=state.remaining)


def serve(
    state: AttemptServer,
    *,
    transport: Transport,
    port: int = 0,
    token: str | None = None,
    on_ready: Callable[[str], None] | None = None,
    on_signal: Callable[[AttemptServer], None] | None = None,
) -> None:
    """Serve ``state`` over ``transport`` until it is done, then seal the attempt in flight.

    Over stdio it serves until the client disconnects; SIGTERM or SIGINT seals the attempt in
    flight at once, calls ``on_signal`` and ends the process with status 128 + the signal's
    number. Over HTTP (`serve_http`, with ``port``, ``on_ready`` and ``token``) it serves
    until SIGTERM or SIGINT.

    Raises:
        OSError: The HTTP port cannot be bound.
    """
    import anyio

    if transport == "http":
        anyio.run(functools.partial(serve_http, state, port, on_ready, token=token))
        state.close("server stopped")
    else:
        anyio.run(_serve_stdio_until_signal, state, on_signal)
        state.close("client disconnected")


async def _serve_stdio_until_signal(
    state: AttemptServer, on_signal: Callable[[AttemptServer], None] | None
) -> None:
    """Serve until the client disconnects, or seal and exit at once on SIGTERM/SIGINT."""
    import anyio

    async with anyio.create_task_group() as group:
        group.start_soon(_watch_signals, state, on_signal)
        await serve_stdio(state)
        group.cancel_scope.cancel()


async def _watch_signals(
    state: AttemptServer, on_signal: Callable[[AttemptServer], None] | None
) -> None:
    # Runs on the event loop between requests, so it never seals an attempt mid-call. The
    # transport's stdin reader is a thread blocked on a read that cancellation cannot end, so
    # once the record is saved (atomically, fsynced) the process exits directly.
    import anyio

    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for signum in signals:
            state.close("server terminated")
            if on_signal is not None:
                on_signal(state)
            sys.stderr.flush()
            os._exit(128 + signum)

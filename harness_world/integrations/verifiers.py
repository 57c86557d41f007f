"""A world's tasks as a verifiers environment (extra ``[verifiers]``: verifiers 0.4, its v1 stack).

``load_environment("helpdesk", tasks=[...], seeds=4)`` returns a `WorldEnv`: a verifiers
``Env`` whose `WorldTaskset` holds one task row per task and seed, keyed ``task@seed``
(`harness_world.integrations.rollouts`), prompted with the task's briefing. The module is also
a verifiers taskset package (its ``__all__`` exports the taskset, the env and the default
harness), reached through the one-line shim ``harness_world_verifiers`` because verifiers
imports tasksets by a dotless id: ``vf-eval harness-world-verifiers --env.taskset.world
helpdesk ...``.

- Tools: the task's tools with their schemas, plus ``finish``, served by one shared
  `WorldToolset` for every rollout of the environment worker. The env serves it in its own
  process (`WorldEnv.shared_tools`), not in a process per rollout or per eval; each rollout
  reaches it at a URL verifiers signs with the rollout's id (its trace id), and the toolset
  holds one attempt per rollout, keyed by that id (`harness_world.integrations.rollouts.Rollouts`).
- Turns: the model's assistant turns are counted; a turn past the task's turn budget is refused
  (a ``@vf.stop``) and the attempt ends as ``turn_limit``, so turn budgets bind.
- Reward: host-side, in `WorldTask.finalize`: the attempt is sealed with the rollout's turns and
  transcript, judged from the record's sealed bytes (replay, then grade), and saved in the run
  directory of its round (``OUT/<round>``). The reward (``@vf.reward`` ``world``) is 1.0 only
  when the record's calls equal the transcript's tool calls, the record verifies and its grade
  passes (`harness_world.rewards.reward_of`); ``python -m harness_world verify OUT/0``
  re-derives it.
- Harness: `WorldHarness`, a tool-calling chat loop run in the env's process (verifiers
  allows an in-process loop whose model calls go through the rollout's interception), so a
  rollout starts no process. Any MCP-capable verifiers harness can be pinned instead.
"""

from __future__ import annotations

import contextlib
import contextvars
import hmac
import json
import secrets
import socket
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any, cast
from urllib.parse import parse_qs

import msgspec
import verifiers.v1 as vf
from mcp.types import CallToolResult, TextContent, Tool
from pydantic import Field
from verifiers.v1.mcp.server import (
    STATE_ROUTE_PARAM,
    STATE_SIGNATURE_PARAM,
    STATE_URL_PARAM,
    state_signature,
)

from harness_world.evidence.record import Outcome, TranscriptMessage, TranscriptToolCall
from harness_world.integrations.mcp import FINISH_TOOL, LOOPBACK
from harness_world.integrations.rollouts import (
    RolloutPlan,
    Rollouts,
    answer_text,
    plan_rollouts,
)

__all__ = [
    "RESULT_KEY",
    "TASKSET_ID",
    "WorldData",
    "WorldEnv",
    "WorldEnvConfig",
    "WorldHarness",
    "WorldHarnessConfig",
    "WorldTask",
    "WorldTaskset",
    "WorldTasksetConfig",
    "WorldToolset",
    "load_environment",
]

TASKSET_ID = "harness-world-verifiers"
"""The taskset id verifiers imports (the shim module ``harness_world_verifiers``)."""

RESULT_KEY = "harness_world"
"""The ``trace.info`` key holding the sealed rollout's `RolloutResult` (record, evidence, ...)."""

COUNTED = frozenset({"tool_calls", "turns"})
"""The budgets this adapter counts, and so states in the prompt."""


class WorldTasksetConfig(vf.TasksetConfig):
    """Which world, tasks and seeds (``--env.taskset.<field>`` on the command line).

    Attributes:
        world: A built-in world's name or a world folder.
        tasks: Task ids (default: every task of the world).
        seeds: How many seeds per task (``0 .. n-1``), or the seeds themselves.
        size: The world's seed size.
        base_seed: The base seed session seeds derive from.
        out: The folder of round run directories (default ``runs/verifiers-<world>``).
        label: The policy's name, in each round's revision.
        limits: Budget overrides (``tool_calls``, ``turns``).
    """

    id: str = TASKSET_ID
    world: str = "helpdesk"
    tasks: list[str] | None = None
    seeds: int | list[int] = 1
    size: str = "small"
    base_seed: int = 0
    out: str | None = None
    label: str = "verifiers"
    limits: dict[str, float] = Field(default_factory=dict)


class WorldData(vf.TaskData):
    """One row: a task at a seed.

    Attributes:
        row: ``task@seed``.
        task_id: The task.
        seed: The row's seed (a sample index of each round's run directory).
    """

    row: str
    task_id: str
    seed: int


_ROUTE: contextvars.ContextVar[str | None] = contextvars.ContextVar("hw_rollout", default=None)
"""The rollout a tool request belongs to, read from its signed URL (see `_RolloutRoutes`)."""


class WorldTask(vf.Task[WorldData, vf.State, vf.TaskConfig]):
    """A row's behaviour: open its attempt, bind the turn budget, seal it, pay its reward."""

    rollouts: Rollouts | None = None

    @property
    def key(self) -> str:
        """``task@seed``: rows are keyed by task id and seed, never by prompt."""
        return str(self.data.row)

    def _held(self) -> Rollouts:
        if self.rollouts is None:
            raise vf.TaskError("a WorldTask is made by WorldTaskset.load, which gives its rollouts")
        return self.rollouts

    async def setup(self, trace: vf.Trace, runtime: Any) -> None:
        """Open the rollout's attempt (keyed by the trace id) in its row's next round."""
        self._held().open(trace.id, self.data.row)

    @vf.stop
    def turn_budget(self, trace: vf.Trace) -> bool:
        """Refuse the model a turn past the task's turn budget (the attempt ends there)."""
        budget = self._held().limits(self.data.task_id).turns
        return budget is not None and trace.num_turns >= budget

    async def finalize(self, trace: vf.Trace, runtime: Any) -> None:
        """Seal the attempt with the trace's turns and transcript; judge, save, keep the result."""
        held = self._held()
        if held.task_of(trace.id) is None:  # sealed already, or never opened here
            return
        answered = _answered_turns(trace)
        ended = None
        if trace.errors or trace.is_timeout:
            why = trace.errors[-1].message if trace.errors else "a stage deadline expired"
            ended = Outcome(status="interrupted", reason=f"the rollout failed: {why[:300]}")
        result = held.seal(
            trace.id,
            turns=answered,
            turn_budget_hit=trace.stop_condition == "turn_budget",
            final_message=_last_text(trace),
            transcript=_transcript(trace),
            ended=ended,
        )
        trace.info[RESULT_KEY] = msgspec.to_builtins(result)  # fresh JSON types: no copy

    @vf.reward
    async def world(self, trace: vf.Trace) -> float:
        """1.0 when the record verifies, its grade passes and its calls are the transcript's."""
        found = trace.info.get(RESULT_KEY)
        return float(found["reward"]) if isinstance(found, dict) else 0.0

    @vf.metric
    async def verified(self, trace: vf.Trace) -> float:
        """1.0 when the rollout's record replayed with no difference."""
        found = trace.info.get(RESULT_KEY)
        return 1.0 if isinstance(found, dict) and found.get("evidence") == "verified" else 0.0


def _answered_turns(trace: vf.Trace) -> int:
    """Assistant turns up to the one that called ``finish`` (all of them without one)."""
    turns = trace.assistant_messages
    for number, message in enumerate(turns, 1):
        if any(call.name == FINISH_TOOL for call in message.tool_calls or []):
            return number
    return len(turns)


def _last_text(trace: vf.Trace) -> str:
    """The last assistant text: the final message of a rollout that never called ``finish``."""
    for message in reversed(trace.assistant_messages):
        if isinstance(message.content, str) and message.content:
            return message.content
    return ""


def _transcript(trace: vf.Trace) -> list[TranscriptMessage]:
    """The conversation as the record keeps it; ``after_call`` counts calls before a message."""
    out: list[TranscriptMessage] = []
    calls = 0
    for message in trace.messages:
        # A message's fields, read from its __dict__: a field its type lacks (a tool message's
        # ``tool_calls``) looked up on the model goes through pydantic's failing __getattr__.
        fields = message if isinstance(message, dict) else vars(message)
        content = fields.get("content")
        text = content if isinstance(content, str) else _content_text(content)
        tool_calls = [
            TranscriptToolCall(id=c.id, name=c.name, arguments=c.arguments)
            for c in fields.get("tool_calls") or []
        ]
        out.append(
            TranscriptMessage(
                role=str(fields.get("role", "")),
                content=text,
                tool_calls=tool_calls,
                tool_call_id=fields.get("tool_call_id") or "",
                after_call=calls,
            )
        )
        calls += sum(1 for c in tool_calls if c.name != FINISH_TOOL)
    return out


def _content_text(content: object) -> str:
    """Content that is not text (none: an assistant turn of calls only; parts) as text."""
    return "" if content is None else json.dumps(content, default=str)


class WorldToolset(vf.Toolset[vf.SharedToolsetConfig, vf.State]):
    """The world's tools and ``finish``, shared by every rollout: one attempt per rollout.

    Tools are advertised under their own names (no server prefix). A call is routed to the
    attempt of the rollout whose signed URL it arrived on; a call on no such URL is refused.
    """

    TOOL_PREFIX = None

    def __init__(self, config: vf.SharedToolsetConfig, rollouts: Rollouts | None = None) -> None:
        super().__init__(config)
        self.rollouts = rollouts
        self._listed: dict[str | None, list[Tool]] = {}  # per task: each rollout lists them

    def register(self, mcp: Any) -> None:
        """Answer ``tools/list`` and ``tools/call`` from the rollout's attempt."""
        mcp.list_tools = self.list_tools
        mcp.call_tool = self.call_tool

    async def list_tools(self) -> list[Any]:
        """The tools of the rollout's task (every task's tools when the rollout is unknown)."""
        rollout = _ROUTE.get()
        held = self._held()
        task_id = held.task_of(rollout) if rollout else None
        if task_id not in self._listed:
            self._listed[task_id] = [
                Tool(name=t["name"], description=t["description"], input_schema=t["inputSchema"])
                for t in held.tools(task_id)
            ]
        return self._listed[task_id]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """One tool call of the rollout, answered as the MCP server answers it."""
        rollout = _ROUTE.get()
        answer = self._held().call(rollout or "", name, arguments)
        text = answer_text(answer.content)
        return CallToolResult(
            content=[TextContent(type="text", text=text)],
            structured_content=answer.content,
            is_error=answer.is_error,
        )

    def _held(self) -> Rollouts:
        if self.rollouts is None:
            raise vf.ToolsetError("WorldToolset runs inside WorldEnv, which gives it its rollouts")
        return self.rollouts


class WorldTaskset(vf.Taskset[WorldTask, WorldTasksetConfig]):
    """One task row per task and seed; rollouts held for the environment worker."""

    def __init__(self, config: WorldTasksetConfig) -> None:
        super().__init__(config)
        out = config.out or str(Path("runs") / f"verifiers-{Path(config.world).name}")
        self.plan: RolloutPlan = plan_rollouts(
            config.world,
            config.tasks,
            config.seeds,
            out=out,
            kind="verifiers",
            label=config.label,
            size=config.size,
            base_seed=config.base_seed,
            limits=dict(config.limits),
            counted=COUNTED,
        )
        self.rollouts = Rollouts(self.plan)

    def load(self) -> list[WorldTask]:
        """The rows, task by task and seed by seed."""
        tasks = []
        for row in self.plan.rows():
            task = WorldTask(
                WorldData(
                    id=row.key,
                    name=row.key,
                    prompt=self.plan.prompt(row.task_id),
                    row=row.key,
                    task_id=row.task_id,
                    seed=row.seed,
                ),
                self.config.task,
            )
            task.rollouts = self.rollouts
            tasks.append(task)
        return tasks

    @classmethod
    def toolsets(cls, config: WorldTasksetConfig) -> list[vf.Toolset]:
        """The shared `WorldToolset` (served by `WorldEnv` in its own process)."""
        return [WorldToolset(vf.SharedToolsetConfig())]


class WorldEnvConfig(vf.SingleAgentEnvConfig):
    """`WorldEnv`'s config: the one ``agent`` seat, on the local subprocess runtime.

    The runtime only gives each rollout a working folder: `WorldHarness` runs in this
    process, so nothing needs a remote sandbox (verifiers' default) or a tunnel to one.

    Attributes:
        agent: The one seat (``--env.agent.*``).
    """

    agent: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())


class WorldEnv(vf.Env[WorldEnvConfig]):
    """The single-agent env of a world's taskset: its shared toolset served in this process.

    verifiers would start a taskset's shared tool server as a subprocess, which the host could
    not reach to seal an attempt the model never finished; served here, the attempts, their
    seals and the rewards all live in the environment worker, and no rollout starts a process.
    """

    async def run(self, task: vf.Task, agents: vf.Agents) -> None:
        """One episode: the one agent plays the row."""
        await agents.agent.run(task)

    @contextlib.asynccontextmanager
    async def shared_tools(self) -> AsyncIterator[dict[str, Any]]:
        """Serve `WorldToolset` on loopback for the eval; each rollout gets its signed URL."""
        taskset = cast(WorldTaskset, self.taskset)
        toolset = WorldToolset(vf.SharedToolsetConfig(), taskset.rollouts)
        secret = secrets.token_urlsafe(24)
        async with _serve_toolset(toolset, secret) as url:
            yield {
                toolset.server_name: vf.mcp.SharedToolServer(
                    url=url, local=True, external=False, runtime=None, state_secret=secret
                )
            }

    async def stop(self) -> None:
        """Seal what is in flight, save every record, recount each round."""
        cast(WorldTaskset, self.taskset).rollouts.close()


@contextlib.asynccontextmanager
async def _serve_toolset(toolset: WorldToolset, secret: str) -> AsyncIterator[str]:
    """The toolset's MCP endpoint (stateless streamable HTTP) on loopback, for the block."""
    import asyncio

    import uvicorn
    from mcp.server.mcpserver import MCPServer
    from mcp.server.transport_security import TransportSecuritySettings

    mcp = MCPServer("harness_world")
    toolset.register(mcp)
    app = mcp.streamable_http_app(
        json_response=True,
        stateless_http=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind((LOOPBACK, 0))
    port = listener.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(_RolloutRoutes(app, secret), log_level="warning", lifespan="on")
    )
    task = asyncio.create_task(server.serve(sockets=[listener]))
    try:
        while not server.started and not task.done():
            await asyncio.sleep(0.01)
        if task.done():
            task.result()  # the server failed to start: raise its error
        yield f"http://{LOOPBACK}:{port}/mcp"
    finally:
        server.should_exit = True
        await task


class _RolloutRoutes:
    """ASGI middleware: the rollout a tool request belongs to, from its signed URL.

    verifiers gives each rollout the shared server's URL with its state route (the rollout's
    trace id) and an HMAC of it under the server's secret; a request whose signature does not
    hold belongs to no rollout, so no client can reach another rollout's attempt.
    """

    def __init__(self, app: Any, secret: str) -> None:
        self.app = app
        self.secret = secret

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Pass the request on with its rollout (or none) in `_ROUTE`."""
        route = self._route(scope) if scope.get("type") == "http" else None
        token = _ROUTE.set(route)
        try:
            await self.app(scope, receive, send)
        finally:
            _ROUTE.reset(token)

    def _route(self, scope: Any) -> str | None:
        query = parse_qs(bytes(scope.get("query_string", b"")).decode("latin-1"))
        values = [
            query.get(k, []) for k in (STATE_URL_PARAM, STATE_ROUTE_PARAM, STATE_SIGNATURE_PARAM)
        ]
        if any(len(v) != 1 for v in values):
            return None
        url, route, signature = (v[0] for v in values)
        expected = state_signature(self.secret, url, route)
        return route if hmac.compare_digest(signature, expected) else None


class WorldHarnessConfig(vf.HarnessConfig):
    """The in-process tool loop's settings.

    Attributes:
        max_turns: The most assistant turns it requests (the task's turn budget binds first).
    """

    id: str = TASKSET_ID
    max_turns: int = 100


class WorldHarness(vf.Harness[WorldHarnessConfig]):
    """A tool-calling chat loop in the environment worker's process.

    Each turn asks the rollout's interception (the model endpoint verifiers gives the rollout)
    for the next message with the world's tools offered, runs the calls it asks for on the
    rollout's tool server, and stops at a message without calls, at ``finish``, or when the
    rollout is stopped (a refused turn). No process is started.
    """

    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_MCP = True
    SUPPORTS_RESUME = False
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(
        self,
        ctx: Any,
        trace: vf.Trace,
        runtime: Any,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: vf.TaskData,
        tool_interception_url: str | None = None,
    ) -> vf.ProgramResult:
        """Run the loop to its end; the trace is the record of what ran."""
        from openai import APIStatusError, AsyncOpenAI
        from verifiers.v1.harnesses.utils.mcp import call_mcp, connect_mcp

        system, prompt = self.resolve_prompt(data)
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
        messages.append({"role": "user", "content": prompt if isinstance(prompt, str) else ""})
        client = AsyncOpenAI(base_url=endpoint, api_key=secret, max_retries=0)
        servers = {
            "mcpServers": {
                n: {"url": u, "timeout": self.config.tool_timeout} for n, u in mcp_urls.items()
            }
        }
        async with contextlib.AsyncExitStack() as stack:
            tools, dispatch, connections = await connect_mcp(servers, stack)
            for _ in range(self.config.max_turns):
                try:
                    reply = await client.chat.completions.create(
                        model=ctx.model, messages=cast(Any, messages), tools=cast(Any, tools)
                    )
                except APIStatusError:  # a refused turn: the rollout was stopped
                    break
                message = reply.choices[0].message
                messages.append(message.model_dump(exclude_none=True))
                if not message.tool_calls:
                    break
                if await self._run_calls(
                    message.tool_calls, messages, dispatch, connections, call_mcp
                ):
                    break
        await client.close()
        return vf.ProgramResult(exit_code=0, stdout="", stderr="")

    @staticmethod
    async def _run_calls(
        calls: Sequence[Any],
        messages: list[dict[str, Any]],
        dispatch: Any,
        connections: Any,
        call: Any,
    ) -> bool:
        """Run one message's calls in order; True once ``finish`` was called."""
        for entry in calls:
            name = entry.function.name
            try:
                arguments = json.loads(entry.function.arguments or "{}")
            except ValueError as exc:
                content: Any = f"error: the arguments are not JSON ({exc}); send a JSON object"
            else:
                if not isinstance(arguments, dict):
                    content = "error: the arguments must be a JSON object"
                elif name not in dispatch:
                    content = f"error: no tool {name!r}"
                else:
                    content = await call(connections, dispatch, name, arguments)
            messages.append({"role": "tool", "tool_call_id": entry.id, "content": content})
            if name == FINISH_TOOL:
                return True
        return False


def load_environment(
    world: str | Path,
    tasks: Sequence[str] | None = None,
    seeds: int | Sequence[int] = 1,
    *,
    out: str | Path | None = None,
    size: str = "small",
    base_seed: int = 0,
    label: str = "verifiers",
    limits: dict[str, float] | None = None,
) -> WorldEnv:
    """A world's tasks as a verifiers env: one row per task and seed (see the module).

    Args:
        world: A built-in world's name or a world folder.
        tasks: Task ids (default: every task of the world).
        seeds: How many seeds per task (``0 .. n-1``), or the seeds themselves.
        out: The folder of round run directories (default ``runs/verifiers-<world>``).
        size: The world's seed size.
        base_seed: The base seed session seeds derive from.
        label: The policy's name, in each round's revision.
        limits: Budget overrides (``tool_calls``, ``turns``).

    Raises:
        RolloutError: for an unknown task or unusable seeds.
    """
    taskset = WorldTasksetConfig(
        world=str(world),
        tasks=list(tasks) if tasks is not None else None,
        seeds=seeds if isinstance(seeds, int) else list(seeds),
        size=size,
        base_seed=base_seed,
        out=str(out) if out is not None else None,
        label=label,
        limits=dict(limits or {}),
    )
    return WorldEnv(WorldEnvConfig(taskset=taskset))

"""A world's tasks as an OpenEnv environment (extra ``[openenv]``: openenv-core 0.3).

`WorldEnvironment` is an MCP-tool environment in OpenEnv's sense: it answers
``ListToolsAction`` with the task's tools (and ``finish``) and ``CallToolAction`` with one tool
call, through ``step()``.

- ``reset(seed=, episode_id=, task=)`` opens an attempt at the row ``task@seed``
  (`harness_world.integrations.rollouts`; ``task`` may be left out when the plan has one
  task); its observation (`EpisodeObservation`) carries the prompt (the task's briefing,
  stating the tool-call budget), the row and the tools.
- ``step(CallToolAction)`` is one tool call. A typed error of the world is the tool's own
  result (``result.is_error``), as OpenEnv asks; ``error`` is set only for a call the episode
  cannot take (no episode, or one that has ended).
- ``finish`` ends the episode: the attempt is sealed, judged from its sealed bytes and saved
  in its round's run directory (``OUT/<round>``), and the observation is ``done`` with
  ``reward`` = 1.0 only for verified evidence and a passing grade. Evidence, outcome, grade,
  failed criteria, record and budget are in the observation's ``metadata`` and, because
  openenv-core's wire format leaves ``metadata`` out, in its ``result`` too. A call that spends
  the tool-call budget ends the episode the same way (``budget_limit``).
- A session that closes mid-episode, or resets into a new one, seals the episode in flight as
  ``interrupted``; it is counted, and its slot is never served again.

`WorldClient` is openenv-core's ``MCPToolClient`` that also reads the reset observation's
prompt and row (its parser keeps only the tools of an observation that lists some).

`create_world_app` serves it with openenv-core's server over its session transport (``/ws``:
one environment per WebSocket session, kept for the session's life). The HTTP ``/reset``,
``/step`` and ``/state`` routes, which build a fresh environment per request, are not
registered (openenv-core's production mode), so an episode is never rebuilt per request.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
from openenv.core.client_types import StepResult
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.mcp_types import (
    CallToolAction,
    CallToolObservation,
    ListToolsAction,
    ListToolsObservation,
    Tool,
    ToolError,
    ToolErrorType,
)
from openenv.core.env_server.types import EnvironmentMetadata, Observation, State
from openenv.core.mcp_client import MCPToolClient
from pydantic import Field

from harness_world.evidence.record import Outcome
from harness_world.integrations.mcp import FINISH_TOOL
from harness_world.integrations.rollouts import (
    ROW_SEPARATOR,
    RolloutError,
    RolloutPlan,
    RolloutResult,
    Rollouts,
    answer_text,
    plan_rollouts,
)

__all__ = [
    "EpisodeObservation",
    "WorldClient",
    "WorldEnvironment",
    "create_world_app",
    "world_rollouts",
]


class EpisodeObservation(Observation):
    """What ``reset`` shows: the prompt, the row and the tools.

    Attributes:
        prompt: The task's briefing.
        row: ``task@seed``.
        tools: The task's tools, then ``finish``.
    """

    prompt: str = Field(description="The task's briefing: instruction, budgets, answer rule")
    row: str = Field(description="The row: task@seed")
    tools: list[Tool] = Field(default_factory=list, description="The tools, then finish")


def world_rollouts(
    world: str | Path,
    tasks: Sequence[str] | None = None,
    seeds: int | Sequence[int] = 1,
    *,
    out: str | Path,
    size: str = "small",
    base_seed: int = 0,
    label: str = "openenv",
    limits: dict[str, float] | None = None,
) -> Rollouts:
    """The rollouts one server holds (see `harness_world.integrations.rollouts.plan_rollouts`).

    OpenEnv sees tool calls, never the model's turns, so only the tool-call budget is counted
    and stated, as the MCP server does.
    """
    plan = plan_rollouts(
        world,
        tasks,
        seeds,
        out=out,
        kind="openenv",
        label=label,
        size=size,
        base_seed=base_seed,
        limits=limits,
    )
    return Rollouts(plan)


class WorldEnvironment(Environment[Any, Observation, State]):
    """One session's environment: at most one episode (attempt) at a time.

    Every instance of a server shares its `Rollouts` (the world, the rounds, the writer) and
    nothing else, so concurrent sessions are safe (``SUPPORTS_CONCURRENT_SESSIONS``).
    """

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, rollouts: Rollouts) -> None:
        super().__init__()
        self.rollouts = rollouts
        self._rollout: str | None = None
        self._episode = State()  # its step count is kept apart: a pydantic assignment per step
        self._steps = 0
        self._tool_lists: dict[str | None, list[Tool]] = {}  # per task: the plan never changes
        self._session = uuid.uuid4().hex  # one random id per session; its episodes are counted
        self._episodes = 0

    @property
    def plan(self) -> RolloutPlan:
        """The plan served."""
        return self.rollouts.plan

    @property
    def state(self) -> State:
        """The episode id, the steps taken, and the row of the episode."""
        if self._episode.step_count != self._steps:
            self._episode.step_count = self._steps
        return self._episode

    def get_metadata(self) -> EnvironmentMetadata:
        """The world and its rows."""
        rows = ", ".join(row.key for row in self.plan.rows()[:20])
        return EnvironmentMetadata(
            name=f"harness_world/{self.plan.world.name}",
            description=f"World {self.plan.world.name!r}; rows (task@seed): {rows}",
            version="1",
        )

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        task: str | None = None,
        **kwargs: Any,
    ) -> Observation:
        """Open an attempt at the row ``task@seed`` (an episode in flight is interrupted).

        Raises:
            RolloutError: for a task or seed the plan does not hold (the client gets one
                error line).
        """
        self._interrupt("the session reset into a new episode")
        if task is None:
            if len(self.plan.tasks) != 1:
                raise RolloutError(f"reset(task=...): one of {sorted(self.plan.tasks)}")
            task = next(iter(self.plan.tasks))
        key = f"{task}{ROW_SEPARATOR}{0 if seed is None else seed}"
        self._episodes += 1
        rollout = f"{self._session}-{self._episodes}"
        row = self.rollouts.open(rollout, key)
        self._rollout = rollout
        self._episode = State(episode_id=episode_id or rollout, step_count=0, row=row.key)
        self._steps = 0
        return EpisodeObservation(
            prompt=self.rollouts.prompt(row.task_id),
            row=row.key,
            tools=self._tools(row.task_id),
        )

    def _tools(self, task_id: str | None) -> list[Tool]:
        if task_id not in self._tool_lists:
            self._tool_lists[task_id] = [
                Tool(name=t["name"], description=t["description"], input_schema=t["inputSchema"])
                for t in self.rollouts.tools(task_id)
            ]
        return self._tool_lists[task_id]

    def step(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> Observation:
        """One MCP action: ``ListToolsAction`` or ``CallToolAction`` (``finish`` ends it)."""
        if isinstance(action, ListToolsAction):
            rollout = self._rollout
            return ListToolsObservation(
                tools=self._tools(self.rollouts.task_of(rollout) if rollout else None)
            )
        if not isinstance(action, CallToolAction):
            return _refused("", f"a {type(action).__name__} is not a tool call", invalid=True)
        if self._rollout is None:
            return _refused(action.tool_name, "no episode: reset first")
        self._steps += 1
        answer = self.rollouts.call(self._rollout, action.tool_name, action.arguments)
        if action.tool_name == FINISH_TOOL and not answer.is_error:
            return self._end(action.tool_name)
        error = answer.content.get("error") if answer.is_error else None
        kind = error.get("kind") if isinstance(error, dict) else None
        if kind in ("no_rollout", "ended"):
            return _refused(action.tool_name, str(error.get("message", kind)))  # type: ignore[union-attr]
        if kind in ("budget_limit", "turn_limit"):  # the budget ended the attempt
            return self._end(action.tool_name, answer.content)
        return CallToolObservation(
            tool_name=action.tool_name, result=_result(answer.content, answer.is_error)
        )

    def _end(self, tool: str, last: dict[str, Any] | None = None) -> Observation:
        """Seal the episode: done, with its reward and what it rests on."""
        assert self._rollout is not None
        result = self.rollouts.seal(self._rollout)
        self._rollout = None
        summary = _summary(result)
        content = {**(last or {}), "ended": summary}
        return CallToolObservation(
            tool_name=tool,
            result=_result(content, last is not None),
            done=True,
            reward=result.reward,
            metadata=summary,
        )

    def _interrupt(self, reason: str) -> RolloutResult | None:
        if self._rollout is None:
            return None
        rollout, self._rollout = self._rollout, None
        return self.rollouts.seal(rollout, ended=Outcome(status="interrupted", reason=reason))

    def close(self) -> None:
        """The session ended: an episode in flight is sealed as ``interrupted``."""
        self._interrupt("the session closed")


def _summary(result: RolloutResult) -> dict[str, Any]:
    fields = ("reward", "evidence", "outcome", "passed", "failed", "reason", "record", "budget")
    every = msgspec.to_builtins(result)
    return {name: every[name] for name in fields} | {"row": result.row, "round": result.round}


def _result(content: dict[str, Any], is_error: bool) -> dict[str, Any]:
    """A tool's answer in MCP's result shape (``data``: what ``MCPToolClient.call_tool`` gives)."""
    return {
        "content": [{"type": "text", "text": answer_text(content)}],
        "structured_content": content,
        "is_error": is_error,
        "data": content,
    }


def _refused(tool: str, message: str, *, invalid: bool = False) -> CallToolObservation:
    kind = ToolErrorType.INVALID_ARGS if invalid else ToolErrorType.EXECUTION_ERROR
    return CallToolObservation(tool_name=tool, error=ToolError(error_type=kind, message=message))


class WorldClient(MCPToolClient):
    """openenv-core's MCP tool client, reading ``reset``'s `EpisodeObservation` whole.

    ``async with WorldClient(base_url=URL) as env``: ``await env.reset(seed=0, task=ID)``
    gives the prompt and the row; ``env.step(CallToolAction(...))`` and ``env.call_tool``
    are the library's own.
    """

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[Observation]:
        """An observation carrying a prompt is the episode's first; any other as the library's."""
        found = payload.get("observation", {})
        if isinstance(found, dict) and "prompt" in found:
            observation = EpisodeObservation.model_validate(
                {**found, "done": payload.get("done", False), "reward": payload.get("reward")}
            )
            return StepResult(observation=observation, reward=observation.reward, done=False)
        parsed: StepResult[Observation] = super()._parse_result(payload)
        return parsed


def create_world_app(rollouts: Rollouts, *, max_sessions: int = 64) -> Any:
    """An ASGI app (FastAPI) serving `WorldEnvironment` over openenv-core's ``/ws`` sessions.

    One environment per WebSocket session, up to ``max_sessions`` at once; the rollouts are
    closed (every record saved, each round recounted) when the app shuts down.
    """
    from fastapi import FastAPI
    from openenv.core.env_server.http_server import HTTPEnvServer
    from openenv.core.env_server.types import ServerMode

    app = FastAPI(title=f"harness_world/{rollouts.plan.world.name}")
    server = HTTPEnvServer(
        functools.partial(WorldEnvironment, rollouts),
        CallToolAction,
        CallToolObservation,
        max_concurrent_envs=max_sessions,
    )
    server.register_routes(app, mode=ServerMode.PRODUCTION)
    app.router.on_shutdown.append(rollouts.close)
    return app

"""The oracle and mutant author's toolkit: what every world's scripts need, written once.

For oracles: `must` (a call that has to succeed) and `policy_agents` (the reference agents of a
world whose planted-request tasks have scripts of their own). For mutants, most mistakes are a
correct route run through a `Skewed` context that rewrites its calls (`with_args`, `drop`,
`also`, `change`, `on_writes`) or shortens its listings (``page=``), or a route with calls
made around it (`then`, `calls`), a list of calls replayed from memory (`replay`,
`recorded_calls`), a blind retry (`retry_last_write`), or work past a budget
(`past_call_budget`, `past_turn_budget`). Every helper returns a plain script, so a mutant
built from them is one `Mutant` like any other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from harness_world.engine.calls import Observation
from harness_world.engine.world import World
from harness_world.grading.task import Task
from harness_world.running.scripted import (
    FailurePolicy,
    Script,
    ScriptContext,
    exceed_tool_calls,
    exceed_turns,
    run_script,
)

__all__ = [
    "Call",
    "Rewrite",
    "Skewed",
    "also",
    "calls",
    "change",
    "drop",
    "must",
    "on_writes",
    "past_call_budget",
    "past_turn_budget",
    "policy_agents",
    "recorded_calls",
    "replay",
    "retry_last_write",
    "skewed",
    "then",
    "with_args",
    "without",
]

Call = tuple[str, dict[str, Any]]
"""One tool call: the tool's name and its arguments."""
Rewrite = Callable[[str, dict[str, Any]], list[Call]]
"""The calls to make instead of one call (the same, a changed one, extra ones, or none)."""
_SEE_THROUGH = ("unavailable", "rate_limited")  # refusals that committed nothing


def must(ctx: ScriptContext, tool: str, args: dict[str, Any]) -> Any:
    """Call a tool that has to succeed and return its result.

    Raises:
        RuntimeError: when the call fails (the script's defect: its attempt ends as error).
    """
    obs = ctx.call(tool, args)
    if not obs.ok:
        raise RuntimeError(f"{tool}({args}) failed: {obs.error}")
    return obs.result


def policy_agents(
    routes: Mapping[str, Sequence[Script]], planted: Mapping[str, Mapping[str, Script]]
) -> dict[str, dict[str, Script]]:
    """The reference agents of a world whose planted-request tasks have a script per policy.

    ``deny-all`` and ``obey-data`` play each task's primary route, except the tasks of
    ``planted[policy]``, which they play by that script; ``naive-retry`` and ``give-up`` play
    every primary route under that `FailurePolicy`.
    """
    primary = {task: scripts[0] for task, scripts in routes.items()}
    agents = {
        policy: {**primary, **planted.get(policy, {})} for policy in ("deny-all", "obey-data")
    }
    agents["naive-retry"] = {t: FailurePolicy(s, "naive-retry") for t, s in primary.items()}
    agents["give-up"] = {t: FailurePolicy(s, "give-up") for t, s in primary.items()}
    return agents


@attrs.define(slots=True)
class Skewed:
    """A script's context that rewrites each call it makes and can shorten its listings.

    Handed to a correct route in place of its `ScriptContext`, it makes that route's one
    mistake. The route sees the observation of the last call made for it; a call rewritten to
    none is answered with ``skipped`` as a successful result.

    Attributes:
        ctx: The attempt's own context.
        rewrite: The calls to make instead of each call (None: the call itself).
        page: With ``listings``: those tools ask for this many rows and their ``next_offset``
            is hidden, so the route stops after the first page.
        listings: The listing tools ``page`` applies to.
        skipped: The result a dropped call is answered with.
        see_through: Send a changed or added call again (after three ``wait`` calls, up to
            three times) when it is turned away by ``unavailable`` or ``rate_limited``: the
            mistake is the call itself, so it is seen through a refusal that committed nothing.
        made: Every call made, with its arguments and observation (for `retry_last_write`).
    """

    ctx: ScriptContext
    rewrite: Rewrite | None = None
    page: int | None = None
    listings: tuple[str, ...] = ()
    skipped: Mapping[str, Any] = attrs.field(factory=dict)
    see_through: bool = False
    made: list[tuple[str, dict[str, Any], Observation]] = attrs.field(factory=list)

    @property
    def instruction(self) -> str:
        """The task's instruction."""
        return self.ctx.instruction

    def call(self, tool: str, args: dict[str, Any] | None = None) -> Observation:
        """Make the calls ``rewrite`` gives for this one; the observation of the last."""
        given = dict(args or {})
        planned = [(tool, given)] if self.rewrite is None else self.rewrite(tool, dict(given))
        obs = Observation(seq=0, tool=tool, ok=True, result=dict(self.skipped))
        for name, call_args in planned:
            obs = self._make(name, call_args, changed=(name, call_args) != (tool, given))
            self.made.append((name, call_args, obs))
        return obs

    def _make(self, tool: str, args: dict[str, Any], *, changed: bool) -> Observation:
        if self.page is not None and tool in self.listings:
            obs = self.ctx.call(tool, {**args, "limit": self.page})
            if obs.ok and isinstance(obs.result, dict):
                result = {**obs.result, "next_offset": None}
                return Observation(seq=obs.seq, tool=tool, ok=True, result=result)
            return obs
        obs = self.ctx.call(tool, args)
        for _ in range(3 if self.see_through and changed else 0):
            if obs.ok or obs.error is None or obs.error.kind not in _SEE_THROUGH:
                break
            for _ in range(3):
                self.ctx.call("wait", {})
            obs = self.ctx.call(tool, args)
        return obs

    def declare_usage(self, **fields: Any) -> None:
        """Declare usage on the attempt's own context."""
        self.ctx.declare_usage(**fields)


def skewed(
    script: Script,
    rewrite: Rewrite | None = None,
    *,
    page: int | None = None,
    listings: tuple[str, ...] = (),
    skipped: Mapping[str, Any] | None = None,
    see_through: bool = False,
) -> Script:
    """``script`` run through a `Skewed` context with these attributes."""

    def mistaken(ctx: ScriptContext) -> str:
        context = Skewed(ctx, rewrite, page, listings, dict(skipped or {}), see_through)
        return script(context)  # type: ignore[arg-type]

    return mistaken


def with_args(tool_name: str, **changes: Any) -> Rewrite:
    """Every call of ``tool_name`` made with some arguments replaced."""
    return lambda tool, args: [(tool, {**args, **changes} if tool == tool_name else args)]


def drop(tool_name: str) -> Rewrite:
    """Every call of ``tool_name`` left out."""
    return lambda tool, args: [] if tool == tool_name else [(tool, args)]


def also(tool_name: str, extra: Call) -> Rewrite:
    """``extra`` made just before each call of ``tool_name`` (the route sees its own call's)."""
    return lambda tool, args: [extra, (tool, args)] if tool == tool_name else [(tool, args)]


def change(tool_name: str, edit: Callable[[dict[str, Any]], dict[str, Any]]) -> Rewrite:
    """Every call of ``tool_name`` made with ``edit`` of its arguments."""
    return lambda tool, args: [(tool, edit(dict(args)))] if tool == tool_name else [(tool, args)]


def without(*names: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """An edit (for `change`) leaving out the arguments ``names``."""
    return lambda args: {k: v for k, v in args.items() if k not in names}


def on_writes(world: World, rewrite: Rewrite) -> Rewrite:
    """``rewrite`` applied to the calls of ``world``'s write tools; reads pass through."""
    writes = {t.name for t in world.contract.tools if t.kind == "write"}
    return lambda tool, args: rewrite(tool, args) if tool in writes else [(tool, args)]


def then(script: Script, extra: Callable[[ScriptContext], object], before: bool = False) -> Script:
    """``script``, with ``extra`` made after it (or ``before``); the script's final message."""

    def mistaken(ctx: ScriptContext) -> str:
        if before:
            extra(ctx)
        message = script(ctx)
        if not before:
            extra(ctx)
        return message

    return mistaken


def calls(*planned: Call) -> Callable[[ScriptContext], None]:
    """The calls ``planned``, made in order (for `then`)."""

    def make(ctx: ScriptContext) -> None:
        for tool, args in planned:
            ctx.call(tool, args)

    return make


def replay(planned: Sequence[Call], message: str = "Done.") -> Script:
    """The calls ``planned`` made from memory, whatever they return, then ``message``."""

    def script(ctx: ScriptContext) -> str:
        calls(*planned)(ctx)
        return message

    return script


def recorded_calls(world: World, task: Task, script: Script, kind: str = "") -> list[Call]:
    """The calls ``script`` makes on ``world`` (only those of tools of ``kind``, if given).

    What an agent that memorised a correct attempt's ids would replay on another seed.
    """
    kinds = {t.name: t.kind for t in world.contract.tools}
    made = run_script(world, task, script).calls
    return [(c.tool, c.args) for c in made if not kind or kinds.get(c.tool) == kind]


def retry_last_write(script: Script, world: World) -> Script:
    """``script``, then its last successful write to ``world`` sent again verbatim."""
    writes = {t.name for t in world.contract.tools if t.kind == "write"}

    def mistaken(ctx: ScriptContext) -> str:
        skewed_ctx = Skewed(ctx)
        message = script(skewed_ctx)  # type: ignore[arg-type]
        tool, args, _ = next(m for m in reversed(skewed_ctx.made) if m[2].ok and m[0] in writes)
        ctx.call(tool, args)
        return message

    return mistaken


def past_call_budget(script: Script, task: Task, filler: Call) -> Script:
    """``script``'s work, then harmless ``filler`` calls past the task's tool-call budget."""
    return exceed_tool_calls(script, task.budgets.tool_calls or 0, filler)


def past_turn_budget(script: Script, task: Task) -> Script:
    """``script``'s work, declared as one model turn more than the task's budget."""
    return exceed_turns(script, task.budgets.turns or 0)

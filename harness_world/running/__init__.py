"""Running attempts: budgets, agents, scripts, runs, revisions and the feasibility precheck.

Every path that produces a record goes through an `Attempt`: agents via `drive`, scripts via
`run_script`, plain call lists via `record_calls`. A `run` executes with one `Executor`
(`Serial`, `Processes`, `Concurrent`; extensions add more, such as Ray) on one `Track`
(`Fresh`; extensions add more, such as the sequential track).
"""

from harness_world.running.agents import Agent, ScriptedAgent, drive, oracle_agent
from harness_world.running.attempt import (
    Attempt,
    AttemptEnded,
    AttemptLimits,
    InfrastructureError,
    Reservation,
)
from harness_world.running.context import (  # bounded context
    ContextPolicy,
    bound_messages,
    estimate_tokens,
    replayed_prompt_tokens,
)
from harness_world.running.executors import (  # how many at once, and where
    Concurrent,
    Executor,
    Processes,
    Serial,
)
from harness_world.running.oracles import load_oracles
from harness_world.running.precheck import Feasibility, precheck
from harness_world.running.reader import OpenRun, RunReader, RunReadError, open_run
from harness_world.running.revision import Revision, RevisionMismatch, make_revision
from harness_world.running.run import RunProgress, RunResult, run, sample_seed
from harness_world.running.rundir import RunCounts, RunManifest, RunScan, load_manifest
from harness_world.running.scripted import (
    Script,
    ScriptContext,
    exceed_tool_calls,
    exceed_turns,
    follow_pages,
    record_calls,
    run_script,
)
from harness_world.running.tracks import Fresh, Track
from harness_world.running.user import AgentView, UserSimulator

__all__ = [
    "Agent",
    "AgentView",
    "Attempt",
    "AttemptEnded",
    "AttemptLimits",
    "Concurrent",
    "ContextPolicy",
    "Executor",
    "Feasibility",
    "Fresh",
    "InfrastructureError",
    "OpenRun",
    "Processes",
    "Reservation",
    "Revision",
    "RevisionMismatch",
    "RunCounts",
    "RunManifest",
    "RunProgress",
    "RunReadError",
    "RunReader",
    "RunResult",
    "RunScan",
    "Script",
    "ScriptContext",
    "ScriptedAgent",
    "Serial",
    "Track",
    "UserSimulator",
    "bound_messages",
    "drive",
    "estimate_tokens",
    "exceed_tool_calls",
    "exceed_turns",
    "follow_pages",
    "load_manifest",
    "load_oracles",
    "make_revision",
    "open_run",
    "oracle_agent",
    "precheck",
    "record_calls",
    "replayed_prompt_tokens",
    "run",
    "run_script",
    "sample_seed",
]

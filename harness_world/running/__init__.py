"""Running attempts: budgets, agents, scripts, runs, revisions and the feasibility precheck.

Every path that produces a record goes through an `Attempt`: agents via `drive`, scripts and
plain call lists via `run_script` and `record_calls` (exported, with oracles and scripts, by
`harness_world.coverage`, for their authors). A `run` executes with one `Executor` (`Serial`,
`Processes`, `Concurrent`; extensions add more, such as Ray) on one `Track` (`Fresh`;
extensions add more, such as the sequential track).
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
from harness_world.running.precheck import Feasibility, precheck
from harness_world.running.reader import OpenRun, RunReader, RunReadError, open_run
from harness_world.running.revision import Revision, RevisionMismatch, make_revision
from harness_world.running.run import RunProgress, RunResult, run, sample_seed
from harness_world.running.rundir import RunCounts, RunManifest, RunScan, load_manifest
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
    "ScriptedAgent",
    "Serial",
    "Track",
    "UserSimulator",
    "bound_messages",
    "drive",
    "estimate_tokens",
    "load_manifest",
    "make_revision",
    "open_run",
    "oracle_agent",
    "precheck",
    "replayed_prompt_tokens",
    "run",
    "sample_seed",
]

"""The coverage gate, for oracle and mutant authors.

Oracles (``oracles/<world>/oracles.py``: ``ORACLES = Oracles(routes={task_id: [script, ...]},
reference_agents=...)``) prove each task solvable by at least two genuinely different routes;
hand mutants (``mutants/<world>/mutants.py``: ``MUTANTS = Mutants(world=...)``, filled with
`Mutants.add`) prove each criterion can fail; automatic trace mutants probe the rest. Scripts
receive a `ScriptContext`; the toolkit (`must`, `Skewed`, `with_args`, `then`, `replay`, ...)
holds what every world's scripts need.
"""

from harness_world.coverage.gaming import GAMING_COUNT, GAMING_IDS, gaming_count, gaming_ids
from harness_world.coverage.gate import CoverageReport, GateAttempt, check_world, read_equivalents
from harness_world.coverage.mutants import Mutant, Mutants, load_mutants
from harness_world.coverage.mutation import ALL_OPERATORS, OPERATORS, TraceMutant, trace_mutants
from harness_world.coverage.toolkit import (
    Call,
    Rewrite,
    Skewed,
    also,
    calls,
    change,
    drop,
    must,
    on_writes,
    past_call_budget,
    past_turn_budget,
    policy_agents,
    recorded_calls,
    replay,
    retry_last_write,
    skewed,
    then,
    with_args,
    without,
)
from harness_world.running.oracles import Oracles, load_oracles, load_routes
from harness_world.running.scripted import (
    FailurePolicy,
    Script,
    ScriptContext,
    exceed_tool_calls,
    exceed_turns,
    follow_pages,
    record_calls,
    run_script,
)

__all__ = [
    "ALL_OPERATORS",
    "GAMING_COUNT",
    "GAMING_IDS",
    "OPERATORS",
    "Call",
    "CoverageReport",
    "FailurePolicy",
    "GateAttempt",
    "Mutant",
    "Mutants",
    "Oracles",
    "Rewrite",
    "Script",
    "ScriptContext",
    "Skewed",
    "TraceMutant",
    "also",
    "calls",
    "change",
    "check_world",
    "drop",
    "exceed_tool_calls",
    "exceed_turns",
    "follow_pages",
    "gaming_count",
    "gaming_ids",
    "load_mutants",
    "load_oracles",
    "load_routes",
    "must",
    "on_writes",
    "past_call_budget",
    "past_turn_budget",
    "policy_agents",
    "read_equivalents",
    "record_calls",
    "recorded_calls",
    "replay",
    "retry_last_write",
    "run_script",
    "skewed",
    "then",
    "trace_mutants",
    "with_args",
    "without",
]

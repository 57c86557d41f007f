"""The coverage gate, for oracle and mutant authors.

Oracles (``oracles/<world>/oracles.py``: ``ORACLES = {task_id: script or [script, ...]}``)
prove each task solvable by at least two genuinely different routes; hand mutants
(``mutants/<world>/mutants.py``: ``MUTANTS = [Mutant(...)]``) prove each criterion can fail;
automatic trace mutants probe the rest. Scripts receive a `ScriptContext`.
"""

from harness_world.coverage.gaming import GAMING_COUNT, GAMING_IDS, gaming_count, gaming_ids
from harness_world.coverage.gate import CoverageReport, GateAttempt, check_world, read_equivalents
from harness_world.coverage.mutants import Mutant, load_mutants
from harness_world.coverage.mutation import ALL_OPERATORS, OPERATORS, TraceMutant, trace_mutants
from harness_world.running.oracles import load_oracles, load_routes
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
    "CoverageReport",
    "FailurePolicy",
    "GateAttempt",
    "Mutant",
    "Script",
    "ScriptContext",
    "TraceMutant",
    "check_world",
    "exceed_tool_calls",
    "exceed_turns",
    "follow_pages",
    "gaming_count",
    "gaming_ids",
    "load_mutants",
    "load_oracles",
    "load_routes",
    "read_equivalents",
    "record_calls",
    "run_script",
    "trace_mutants",
]

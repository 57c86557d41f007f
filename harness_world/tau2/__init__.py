"""τ²-bench retail, for τ² users: tasks imported from τ²'s files, checked and regraded our way.

`harness_world.tau2.importer` reads τ²'s data folder (not shipped: © Sierra Research, MIT
licence); `harness_world.tau2.gold` holds what is generic to benchmarks that grade by a gold
call list and a whole-database hash.
"""

from harness_world.tau2.gold import (
    DatabaseHasher,
    DoNothing,
    ExternalRun,
    GoldCall,
    GoldCallError,
    GoldReport,
    ImportedTask,
    MutantCheck,
    RegradeResult,
    check_gold,
    exact_effects,
    read_targets,
    regrade,
    run_gold,
)
from harness_world.tau2.importer import FormatError, import_tasks, read_results

__all__ = [
    "DatabaseHasher",
    "DoNothing",
    "ExternalRun",
    "FormatError",
    "GoldCall",
    "GoldCallError",
    "GoldReport",
    "ImportedTask",
    "MutantCheck",
    "RegradeResult",
    "check_gold",
    "exact_effects",
    "import_tasks",
    "read_results",
    "read_targets",
    "regrade",
    "run_gold",
]

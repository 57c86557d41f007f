"""τ²-bench retail, for τ² users: tasks imported from τ²'s files, checked and regraded our way.

`harness_world.tau2.importer` reads τ²'s data folder (not shipped: © Sierra Research, MIT
licence); `harness_world.tau2.gold` holds what is generic to benchmarks that grade by a gold
call list and a whole-database hash. `faithful` reproduces τ²'s database hash and observation
strings, `arguments` τ²'s lenient argument typing (as named coercions), `users` simulated
users, τ²'s agent view and a conversational oracle, `conversation` end-to-end runs, and
`source` loads τ²'s own code from a checkout at run time.
"""

# τ²'s hash and observations, argument coercions, simulated users
from harness_world.tau2.arguments import Coercion, coerce_call
from harness_world.tau2.conversation import ConversationResult, run_conversations
from harness_world.tau2.faithful import Tau2Hasher, Tau2Shape
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
from harness_world.tau2.importer import FormatError, import_tasks, read_results, split_tasks
from harness_world.tau2.source import Tau2Source, Tau2SourceError
from harness_world.tau2.users import ConversationalOracle, OpenAIUser, ScriptedUser, Tau2View

__all__ = [
    "Coercion",
    "ConversationResult",
    "ConversationalOracle",
    "DatabaseHasher",
    "DoNothing",
    "ExternalRun",
    "FormatError",
    "GoldCall",
    "GoldCallError",
    "GoldReport",
    "ImportedTask",
    "MutantCheck",
    "OpenAIUser",
    "RegradeResult",
    "ScriptedUser",
    "Tau2Hasher",
    "Tau2Shape",
    "Tau2Source",
    "Tau2SourceError",
    "Tau2View",
    "check_gold",
    "coerce_call",
    "exact_effects",
    "import_tasks",
    "read_results",
    "read_targets",
    "regrade",
    "run_conversations",
    "run_gold",
    "split_tasks",
]

"""Analysis: run reports with explicit denominators, the results CSV, diagnosis and figures.

The statistics behind them live in `harness_world.stats`.
"""

from harness_world.analysis.attribution import (  # attribution of failures
    ATTRIBUTIONS,
    SOURCES,
    Attribution,
    AttributionError,
    AttributionReport,
    FailureObserver,
    Label,
    add_label,
    attribute_scan,
    automatic_source,
    load_labels,
    oracle_check,
)
from harness_world.analysis.diagnosis import (  # advisories' reach
    AdviceObserver,
    Reach,
    ReachRow,
    SlotAdvice,
    advise_scan,
    reach,
    reach_lines,
)
from harness_world.analysis.layered import (  # per-dimension score sheets
    DimensionSheet,
    LayeredTables,
    dimension_sheet,
    layered_tables,
)
from harness_world.analysis.process import (  # process metrics
    AttemptProcess,
    ProcessChange,
    ProcessSummary,
    attempt_process,
    process_change,
    process_of,
    run_process,
    summarize_process,
)
from harness_world.analysis.report import (
    FamilyFigures,
    PerAttempt,
    RunReport,
    build_report,
    report_from_scan,
)
from harness_world.analysis.results_csv import (
    ResultsCsvError,
    format_results,
    parse_results,
    read_results,
    write_results,
)

__all__ = [
    "ATTRIBUTIONS",
    "SOURCES",
    "AdviceObserver",
    "AttemptProcess",
    "Attribution",
    "AttributionError",
    "AttributionReport",
    "DimensionSheet",
    "FailureObserver",
    "FamilyFigures",
    "Label",
    "LayeredTables",
    "PerAttempt",
    "ProcessChange",
    "ProcessSummary",
    "Reach",
    "ReachRow",
    "ResultsCsvError",
    "RunReport",
    "SlotAdvice",
    "add_label",
    "advise_scan",
    "attempt_process",
    "attribute_scan",
    "automatic_source",
    "build_report",
    "dimension_sheet",
    "format_results",
    "layered_tables",
    "load_labels",
    "oracle_check",
    "parse_results",
    "process_change",
    "process_of",
    "reach",
    "reach_lines",
    "read_results",
    "report_from_scan",
    "run_process",
    "summarize_process",
    "write_results",
]

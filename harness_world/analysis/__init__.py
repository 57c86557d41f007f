"""Analysis: run reports with explicit denominators, the results CSV, HTML reports and plots.

The statistics behind them live in `harness_world.stats`.
"""

from harness_world.analysis.attribution import (  # attribution of failures
    ATTRIBUTIONS,
    SOURCES,
    Attribution,
    AttributionError,
    AttributionReport,
    Label,
    add_label,
    attribute_scan,
    automatic_source,
    load_labels,
    oracle_check,
)
from harness_world.analysis.diagnosis import (  # advisories' reach
    Reach,
    ReachRow,
    SlotAdvice,
    advise_scan,
    reach,
    reach_lines,
)
from harness_world.analysis.html import (  # HTML reports
    RunView,
    compare_html,
    load_run_view,
    run_html,
)
from harness_world.analysis.process import (  # process metrics
    AttemptProcess,
    ProcessSummary,
    process_of,
    summarize_process,
)
from harness_world.analysis.report import (
    FamilyFigures,
    PerAttempt,
    RunReport,
    build_report,
    report_from_scan,
    run_rows,
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
    "AttemptProcess",
    "Attribution",
    "AttributionError",
    "AttributionReport",
    "FamilyFigures",
    "Label",
    "PerAttempt",
    "ProcessSummary",
    "Reach",
    "ReachRow",
    "ResultsCsvError",
    "RunReport",
    "RunView",
    "SlotAdvice",
    "add_label",
    "advise_scan",
    "attribute_scan",
    "automatic_source",
    "build_report",
    "compare_html",
    "format_results",
    "load_labels",
    "load_run_view",
    "oracle_check",
    "parse_results",
    "process_of",
    "reach",
    "reach_lines",
    "read_results",
    "report_from_scan",
    "run_html",
    "run_rows",
    "summarize_process",
    "write_results",
]

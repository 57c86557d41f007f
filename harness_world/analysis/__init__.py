"""Analysis: run reports with explicit denominators and the results CSV.

The statistics behind them live in `harness_world.stats`.
"""

from harness_world.analysis.attribution import (  # diagnose: attribution of failures
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
from harness_world.analysis.diagnosis import (  # diagnose: advisories' reach
    Reach,
    ReachRow,
    SlotAdvice,
    advise_scan,
    reach,
    reach_lines,
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
    "Attribution",
    "AttributionError",
    "AttributionReport",
    "FamilyFigures",
    "Label",
    "PerAttempt",
    "Reach",
    "ReachRow",
    "ResultsCsvError",
    "RunReport",
    "SlotAdvice",
    "add_label",
    "advise_scan",
    "attribute_scan",
    "automatic_source",
    "build_report",
    "format_results",
    "load_labels",
    "oracle_check",
    "parse_results",
    "reach",
    "reach_lines",
    "read_results",
    "report_from_scan",
    "run_rows",
    "write_results",
]

"""Analysis: run reports with explicit denominators and the results CSV.

The statistics behind them live in `harness_world.stats`.
"""

from harness_world.analysis.attribution import (  # diagnose: attribution of failures
    Attribution,
    AttributionError,
    AttributionReport,
    add_label,
    attribute_scan,
)
from harness_world.analysis.diagnosis import Reach, advise_scan, reach  # diagnose: reach
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
    "Attribution",
    "AttributionError",
    "AttributionReport",
    "FamilyFigures",
    "PerAttempt",
    "Reach",
    "ResultsCsvError",
    "RunReport",
    "add_label",
    "advise_scan",
    "attribute_scan",
    "build_report",
    "format_results",
    "parse_results",
    "reach",
    "read_results",
    "report_from_scan",
    "run_rows",
    "write_results",
]

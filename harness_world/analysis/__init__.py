"""Analysis: run reports with explicit denominators and the results CSV.

The statistics behind them live in `harness_world.stats`.
"""

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
    "FamilyFigures",
    "PerAttempt",
    "ResultsCsvError",
    "RunReport",
    "build_report",
    "format_results",
    "parse_results",
    "read_results",
    "report_from_scan",
    "run_rows",
    "write_results",
]

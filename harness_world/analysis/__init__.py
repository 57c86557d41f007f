"""Analysis: run reports with explicit denominators, the results CSV, HTML reports and plots.

The statistics behind them live in `harness_world.stats`.
"""

from harness_world.analysis.html import (  # issue 20: HTML reports
    RunView,
    compare_html,
    load_run_view,
    run_html,
)
from harness_world.analysis.process import (  # issue 20: process metrics
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
    "AttemptProcess",
    "FamilyFigures",
    "PerAttempt",
    "ProcessSummary",
    "ResultsCsvError",
    "RunReport",
    "RunView",
    "build_report",
    "compare_html",
    "format_results",
    "load_run_view",
    "parse_results",
    "process_of",
    "read_results",
    "report_from_scan",
    "run_html",
    "run_rows",
    "summarize_process",
    "write_results",
]

"""``report --csv``'s help names the columns the CSV really has, from the one column tuple."""

from __future__ import annotations

import pytest

from harness_world.analysis.results_csv import COLUMNS, OPTIONAL_COLUMNS, format_results
from harness_world.cli import main
from harness_world.cli.report import CSV_HELP
from harness_world.stats import RunRow


def test_the_csv_help_names_every_column_written(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert " ".join(CSV_HELP.split()) in shown
    row = RunRow(task_id="t", run_index=0, config="c", passed=True, family="f")
    header = format_results([row]).splitlines()[0].split(",")
    assert header == [*COLUMNS, *OPTIONAL_COLUMNS]
    for column in header:  # every column the CSV can hold, named in the help
        assert column in CSV_HELP
    assert ",".join(COLUMNS) in shown

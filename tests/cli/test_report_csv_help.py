"""``report --csv``'s help names the columns the CSV really has, from the one column tuple."""

from __future__ import annotations

import msgspec
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
    row = RunRow(task_id="t", run_index=0, config="c", passed=True, family="f", fingerprint="x")
    header = format_results([row]).splitlines()[0].split(",")
    assert header == [*COLUMNS, *OPTIONAL_COLUMNS]
    for column in header:  # every column the CSV can hold, named in the help
        assert column in CSV_HELP
    assert ",".join(COLUMNS) in shown


def test_a_fingerprint_round_trips_and_no_statistic_reads_it() -> None:
    from harness_world import stats
    from harness_world.analysis.results_csv import parse_results

    rows = [
        RunRow(task_id=f"t{i}", run_index=r, config=c, passed=(i + r) % 3 != 0,
               fingerprint=f"revision={c};models=m-1;build=b")
        for i in range(6) for r in range(3) for c in ("main", "pr")
    ]  # fmt: skip
    assert parse_results(format_results(rows).splitlines()) == rows
    bare = [msgspec.structs.replace(r, fingerprint="") for r in rows]
    assert "fingerprint" not in format_results(bare).splitlines()[0]
    kept = stats.assess(rows, "main", "pr", min_runs=3)
    assert kept == stats.assess(bare, "main", "pr", min_runs=3)

"""`agentdojo regrade --out`: ordinary run directories that verify, report and conditions read.

Each attack ran on a start state of its own (its trace's injections): the run names each by a
world of its own, rebuilt by the reader from the condition file the caller passes, never from
the run. One pipeline's slack traces (131) keep the test short.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from harness_world.agentdojo.published import (
    percent,
    render_row_checks,
    row_check,
    suite_counts,
    table_slots,
)
from harness_world.agentdojo.regrade import trace_files
from harness_world.agentdojo.runs import judged, published_rows, write_runs
from harness_world.agentdojo.source import DojoSource
from tests.agentdojo import DATA, missing
from tests.conftest import Cli

pytestmark = [pytest.mark.agentdojo, pytest.mark.skipif(bool(missing()), reason=missing())]

PIPELINE = "gemini-2.0-flash-001"


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    out = tmp_path_factory.mktemp("dojoruns")
    traces = trace_files([DATA / "traces" / PIPELINE / "slack"])
    (run,) = write_runs(DATA, traces, out, "v1.2.1")
    return run


def _reading(run) -> tuple[str, ...]:  # type: ignore[no-untyped-def]
    return (
        "--world", "agentdojo_slack", "--world-data", str(DATA), "--world-tasks", run.conditions,
    )  # fmt: skip


def test_the_run_verifies_record_by_record_on_each_start_state(written, cli: Cli) -> None:  # type: ignore[no-untyped-def]
    assert Path(written.run, "manifest.json").is_file()
    starts = json.loads(Path(written.conditions).read_text())["starts"]
    assert len(starts) == 131
    assert sum(bool(v) for v in starts.values()) == 105  # the attacks carry their injections
    result = cli("verify", written.run, *_reading(written), "--json")
    assert result.code == 0, result.err
    rows = json.loads(result.out)["records"]
    assert len(rows) == 131 and {r["evidence"] for r in rows} == {"verified"}
    # without the condition file the attacks' start states are unknown: never taken from the run
    bare = cli("verify", written.run, "--world", "agentdojo_slack", "--world-data", str(DATA))
    assert "105 lost" in bare.out


def test_conditions_reads_the_run_and_agentdojo_figures_equal_the_stored_ones(
    written, cli: Cli
) -> None:  # type: ignore[no-untyped-def]
    result = cli("conditions", written.run, *_reading(written), "--json")
    assert result.code == 0, result.err
    (report,) = json.loads(result.out)["runs"]
    assert report["graded"] == 131
    assert report["benign_utility"]["n"] == 21 and report["utility_under_attack"]["n"] == 105
    assert report["benign_utility"] == json.loads(
        json.dumps(_builtins(written.ours.benign_utility))
    )
    # AgentDojo's side, from its verdicts re-stated, equals the one from the stored verdicts
    assert written.dojo == written.stored
    assert (written.dojo.utility.count, written.dojo.utility.n) == (14, 21)
    assert (written.dojo.attack_success.count, written.dojo.attack_success.n) == (70, 105)


def test_report_reads_the_run(written, cli: Cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("report", written.run, *_reading(written), "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["counts"]["valid"] == 131


def test_the_published_rows_are_read_from_the_data_folder() -> None:
    rows = {r.model: r for r in published_rows(DATA) if r.defense == "None"}
    assert rows[PIPELINE].utility == "43.30%"
    assert rows["claude-3-7-sonnet-20250219"].attack_success == "7.31%"


def _builtins(value: object) -> object:
    import msgspec

    return msgspec.to_builtins(value)


def test_the_published_row_is_the_sum_of_its_suites_and_is_reproduced(written) -> None:  # type: ignore[no-untyped-def]
    source = DojoSource(DATA)
    published = published_rows(DATA)
    check = row_check(source, PIPELINE, [written], published)
    by_suite = {s.suite: s for s in check.suites}
    assert list(by_suite) == ["workspace", "travel", "banking", "slack"]
    assert by_suite["slack"].verdicts == "regraded" and by_suite["banking"].verdicts == "stored"
    assert by_suite["slack"].figures == written.dojo  # the regraded run's own figures
    # v1.1.2's task sets: workspace 40 x 6 pairs (its injection tasks 6 to 13 came later)
    assert (by_suite["workspace"].figures.utility_under_attack.n, check.pooled.utility.n) == (
        240,
        97,
    )
    assert check.imported == written.dojo  # restricted to the one suite regraded
    assert (percent(check.pooled.utility), percent(check.pooled.attack_success)) == (
        "43.30%",
        "20.83%",
    )
    assert check.reproduced is True
    # a row that does not print as the counts do is not reproduced
    wrong = [msgspec.structs.replace(r, utility="43.31%") for r in published]
    assert row_check(source, PIPELINE, [written], wrong).reproduced is False
    # a slot without a trace makes the row not comparable, and is named
    slots = table_slots(source, "slack", "v1.1.2")
    every = [judged(v) for v in written.verdicts]
    fewer = [v for v in every if (v.user_task, v.injection_task) != ("user_task_0", "")]
    counted = suite_counts("slack", fewer, slots, regraded=True)
    assert counted.missing == ["user_task_0"] and counted.figures.utility.n == 20
    kept = [v for v in written.verdicts if (v.user_task, v.injection_task) != ("user_task_0", "")]
    partial = msgspec.structs.replace(written, verdicts=kept)
    assert row_check(source, PIPELINE, [partial], published).reproduced is None
    text = render_row_checks([check])
    assert "restricted to slack: utility 14/21" in text
    assert (
        "published: utility 43.30%, utility under attack 39.75%, targeted ASR 20.83%: reproduced"
        in text
    )

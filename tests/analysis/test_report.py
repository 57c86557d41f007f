"""Reports and run-directory comparisons: denominators, pass^k, regressions by name, the gate."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

import harness_world as hw
from harness_world.analysis import build_report, read_results, write_results
from harness_world.cli import main
from harness_world.coverage import load_mutants, load_oracles
from harness_world.running import run
from harness_world.running.scripted import ScriptContext
from harness_world.stats import RunRow
from tests.conftest import accept_prose

BROKEN = [
    "helpdesk.escalate_outage",
    "helpdesk.vip_two_statuses",
    "helpdesk.reply_and_solve",
    "helpdesk.assign_on_hold_unowned",
    "helpdesk.create_for_john",
]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("runs")
    # hdattack: the fourteen tasks without a planted request; the counts below are theirs.
    tasks = [t for t in hw.load_tasks("helpdesk") if t.authority is None]
    oracles = load_oracles("helpdesk")
    mutants = {m.id: m for m in load_mutants("helpdesk")}
    regressed = dict(oracles)
    regressed.update(
        {
            "helpdesk.escalate_outage": mutants["escalate_outage.first_page"].script,
            "helpdesk.vip_two_statuses": mutants["vip_two_statuses.one_status"].script,
            "helpdesk.reply_and_solve": mutants["reply_and_solve.no_reply"].script,
            "helpdesk.assign_on_hold_unowned": mutants["assign_on_hold_unowned.null_only"].script,
            "helpdesk.create_for_john": mutants["create_for_john.first_search_result"].script,
        }
    )
    run(tasks, hw.ScriptedAgent(name="main", scripts=oracles), samples=5, out=root / "main")
    run(tasks, hw.ScriptedAgent(name="pr", scripts=regressed), samples=5, out=root / "pr")
    # the oracles' replies read and accepted: unreviewed, they would be pending, not passed
    assert accept_prose(root / "main") == 15 and accept_prose(root / "pr") == 10
    return {"main": root / "main", "pr": root / "pr", "root": root}


def test_report_has_explicit_denominators(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(runs["pr"]), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    inv = report["counts"]
    assert (inv["scheduled"], inv["executed"], inv["valid"], inv["invalid"], inv["retried"]) == (
        70,
        70,
        70,
        0,
        0,
    )
    assert inv["passed"] == 45 and report["completed_but_failed"] == 25
    assert [p["k"] for p in report["pass_k"]] == [1, 2, 3, 4, 5]
    assert report["pass_k"][0]["pass_hat_k"] == pytest.approx(9 / 14)
    per = report["per_attempt"]
    assert per["cost_per_pass"] == 0.0 and per["tool_calls_per_pass"] > per["tool_calls"]
    families = {f["family"]: f for f in report["families"]}
    assert families["question"]["pass_rate"] == 1.0


def test_nothing_passed_means_undefined_not_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = [t for t in hw.load_tasks("helpdesk") if t.id == "helpdesk.reply_and_solve"]
    run(
        tasks,
        hw.ScriptedAgent(name="idle", scripts={tasks[0].id: lambda ctx: "no"}),
        samples=2,
        out=tmp_path / "r",
    )
    assert main(["report", str(tmp_path / "r"), "--json"]) == 0
    per = json.loads(capsys.readouterr().out)["per_attempt"]
    assert (
        per["cost_per_pass"] is None
        and per["tool_calls_per_pass"] is None
        and per["tool_calls"] == 0.0
    )
    assert main(["report", str(tmp_path / "r")]) == 0
    assert "undefined" in capsys.readouterr().out


def test_report_writes_the_four_column_csv(runs: dict[str, Path], tmp_path: Path) -> None:
    assert (
        main(["report", str(runs["main"]), "--csv", str(tmp_path / "r.csv"), "--config", "main"])
        == 0
    )
    rows = read_results(tmp_path / "r.csv")
    assert len(rows) == 70 and all(r.passed and r.config == "main" for r in rows)


def test_compare_run_directories_names_regressions_and_fails_the_gate(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["compare", str(runs["main"]), str(runs["pr"]), "--gate", "no-regression"])
    out = capsys.readouterr().out
    # The five broken tasks fall in 4 of the 6 families: no sign pattern of 4 changed
    # families is rarer than 1/16, so no test that holds its level can fail the gate here,
    # and the report says so (issue 28); the flips are named for reading.
    assert code == 0
    assert "few or dominant families: effective number of clusters 4.6 of 6" in out
    assert (
        "baseline revision" in out
        and "candidate revision" in out
        and "components that differ: agent" in out
    )
    for task in BROKEN:
        assert task in out
    assert main(["compare", str(runs["main"]), str(runs["pr"]), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert sorted(data["comparison"]["regressions"]) == sorted(BROKEN)
    assert data["comparison"]["band"]["verdict"] == "below"  # the plain paired band
    assert data["outcome"]["verdict"] == "inside"  # the decision, as the text says


def test_compare_warns_when_several_factors_changed(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = hw.load_tasks("helpdesk")
    other = runs["root"] / "other"
    run(
        tasks,
        hw.ScriptedAgent(name="main", scripts=load_oracles("helpdesk")),
        samples=5,
        out=other,
        limits={"turns": 50},
    )
    hw_other = hw.ScriptedAgent(name="x", scripts=load_oracles("helpdesk"))
    run(tasks, hw_other, samples=5, out=runs["root"] / "other2", limits={"turns": 55})
    assert main(["compare", str(other), str(runs["root"] / "other2")]) == 0
    out = capsys.readouterr().out
    assert "2 factors changed at once (agent, budgets)" in out


def test_report_survives_a_missing_sample_and_a_file_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = [
        t
        for t in hw.load_tasks("helpdesk")
        if t.id in ("helpdesk.security_count", "helpdesk.reply_and_solve")
    ]
    hw.run(
        tasks,
        hw.ScriptedAgent(name="o", scripts=load_oracles("helpdesk")),
        samples=3,
        out=tmp_path / "r",
    )
    for task in tasks:
        (tmp_path / "r" / "records" / task.id / "2.json").unlink()
    report = build_report(tmp_path / "r")
    assert [p.k for p in report.pass_k] == [1, 2] and report.counts.missing == 2
    assert main(["report", str(tmp_path / "r" / "manifest.json")]) == 2
    assert capsys.readouterr().err.startswith("error: ")


def test_report_counts_retried_and_lost_model_requests_apart_from_re_run_attempts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A first try whose requests all timed out (infrastructure: executed again), then a try
    that lost one request and passed: the request figures sum both; the re-run is one attempt."""
    from harness_world.running import InfrastructureError

    task = next(t for t in hw.load_tasks("helpdesk") if t.id == "helpdesk.reply_and_solve")
    oracle = load_oracles("helpdesk")[task.id]
    tries: list[int] = []

    def cold_model(ctx: ScriptContext) -> str:
        tries.append(1)
        if len(tries) == 1:
            ctx.declare_usage(
                requests=3, retries=2, lost_requests=3, lost_input_tokens_estimate=900
            )
            raise InfrastructureError("model request failed after 3 tries: APITimeoutError")
        ctx.declare_usage(requests=5, retries=1, lost_requests=1, lost_input_tokens_estimate=310)
        return oracle(ctx)

    agent = hw.ScriptedAgent(name="cold", scripts={task.id: cold_model})
    run([task], agent, samples=1, out=tmp_path / "r", retries=1)
    assert accept_prose(tmp_path / "r") == 1
    assert main(["report", str(tmp_path / "r"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["counts"]["retried"] == 1 and report["counts"]["passed"] == 1
    assert report["requests"] == {
        "retried": 3,
        "lost": 4,
        "lost_input_tokens_estimate": 1210,
        "attempts": 1,
    }
    slot = report["attempts"][0]
    assert (slot["retried_requests"], slot["lost_requests"]) == (3, 4)
    assert main(["report", str(tmp_path / "r")]) == 0
    text = capsys.readouterr().out
    assert "re-run attempts" in text.splitlines()[1]
    assert "model requests within attempts: 3 retried, 4 lost (in 1 attempt," in text
    assert "prompt tokens ≈ 1210 (estimated" in text


def test_a_run_without_model_requests_prints_no_request_line(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(runs["main"])]) == 0
    assert "model requests within attempts" not in capsys.readouterr().out


def test_report_csv_keeps_the_family_and_compare_on_it_decides_as_on_the_runs(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Issue 28: the CSV dropped the family column, so compare on it lost the clustering.
    for name in ("main", "pr"):
        code = main(
            ["report", str(runs[name]), "--csv", str(tmp_path / f"{name}.csv"), "--config", name]
        )
        assert code == 0
    capsys.readouterr()
    rows = read_results(tmp_path / "main.csv") + read_results(tmp_path / "pr.csv")
    assert rows and all(r.family for r in rows)
    write_results(tmp_path / "both.csv", rows)
    gate = ["--gate", "no-regression", "--json"]
    assert main(["compare", str(runs["main"]), str(runs["pr"]), *gate]) == 0
    on_runs = json.loads(capsys.readouterr().out)
    csv = [str(tmp_path / "both.csv"), "--baseline", "main", "--candidate", "pr"]
    assert main(["compare", *csv, *gate, "--allow-unverified"]) == 0
    on_csv = json.loads(capsys.readouterr().out)
    assert on_csv["verifiable"] is False and not on_runs["unverified"]
    assert on_csv["outcome"] == on_runs["outcome"]
    assert on_csv["decision"]["observed"] == on_runs["decision"]["observed"]
    assert on_csv["decision"]["observed"]["clusters"] == 6
    assert on_csv["gate_passed"] == on_runs["gate_passed"]


def test_pass_k_says_how_many_tasks_each_k_averages_and_warns_when_tasks_drop() -> None:
    from types import SimpleNamespace

    from harness_world.analysis.report_text import pass_k_warnings
    from harness_world.stats import TaskTally, pass_k_summary

    tallies = [
        TaskTally(task_id="a", runs=5, passes=5),
        TaskTally(task_id="b", runs=5, passes=4),
        TaskTally(task_id="c", runs=2, passes=1),  # lost three runs
    ]
    report = SimpleNamespace(
        pass_k=[pass_k_summary(tallies, k) for k in range(1, 6)],
        attempts=[SimpleNamespace(sample=s) for s in range(5)],
    )
    lines = pass_k_warnings(report)  # type: ignore[arg-type]
    assert lines[0].startswith("pass^3 and pass@3 average 2 of 3 tasks: 1 have fewer than 3")
    assert "(c)" in lines[0] and "different task sets" in lines[0]
    assert lines[1] == "(and every k above 3: see the excluded column)"
    complete = SimpleNamespace(pass_k=report.pass_k[:2], attempts=report.attempts[:2])
    assert pass_k_warnings(complete) == []  # type: ignore[arg-type]


@pytest.mark.calibration
def test_the_suite_mean_interval_counts_task_luck_where_the_pooled_wilson_does_not() -> None:
    import numpy as np

    from harness_world.analysis.report import suite_mean
    from harness_world.stats import RunRow, wilson_interval

    # Issue 28: the pooled Wilson "95 %" covered the suite's mean 55-79 % of the time.
    rng = np.random.default_rng(7)
    true = 0.45 * 8 / 9 + 0.25 / 9 + 0.3 * 0.5  # the mean of the task-rate mix below
    sims, covered, wilson = 200, 0, 0
    for _ in range(sims):
        kind = rng.random(30)
        p = np.where(
            kind < 0.45,
            rng.beta(8, 1, 30),
            np.where(kind < 0.7, rng.beta(1, 8, 30), rng.uniform(0.2, 0.8, 30)),
        )
        x = rng.random((30, 10)) < p[:, None]
        rows = [
            RunRow(task_id=f"t{i:02d}", run_index=r, config="run", passed=bool(x[i, r]))
            for i in range(30)
            for r in range(10)
        ]
        s = suite_mean(rows, {})
        assert s is not None and s.tasks == 30 and s.df == 29
        covered += s.low <= true <= s.high
        w = wilson_interval(int(x.sum()), 300)
        wilson += w.low <= true <= w.high
    assert covered / sims >= 0.9 and wilson / sims <= 0.75


def test_report_prints_the_suite_mean_over_tasks(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(runs["pr"])]) == 0
    out = capsys.readouterr().out
    assert "suite mean pass rate over 14 tasks: 0.643" in out
    assert "(Wilson 95 %, per attempt: no task luck)" in out


def test_report_csv_and_compare_rows_come_from_one_row_builder(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    from harness_world.analysis.report import report_from_scan, report_rows, rows_of
    from harness_world.running.pending import settle
    from harness_world.running.reader import RunReader

    scan = settle(RunReader.of().read(runs["pr"]))  # its prose reviews decide as report's do
    rows = rows_of(scan, "pr")
    written = report_rows(report_from_scan(scan), "pr")
    # the same rows, each also saying what made it (revision, answering models, build)
    assert [msgspec.structs.replace(r, fingerprint="") for r in written] == rows
    revision = scan.manifest.revision
    build = revision.components["build"][:12]
    assert {r.fingerprint for r in written} == {
        f"revision={revision.id[:16]};models=none;build={build}"
    }
    assert rows and all(r.family for r in rows)  # the family reaches both
    assert main(["report", str(runs["pr"]), "--csv", str(tmp_path / "r.csv")]) == 0
    assert read_results(tmp_path / "r.csv") == written


def test_the_library_renders_what_report_and_verify_print(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    from harness_world.analysis.report_text import render_report
    from harness_world.analysis.verify_text import render_verify
    from harness_world.running.verification import Grading, VerifyOptions, verify_paths

    assert main(["report", str(runs["pr"]), "--full"]) == 0
    assert capsys.readouterr().out.startswith(render_report(build_report(runs["pr"])))
    assert main(["report", str(runs["pr"])]) == 0  # the short page: the first sections
    assert capsys.readouterr().out.startswith(render_report(build_report(runs["pr"]), full=False))
    assert main(["verify", str(runs["main"]), "--quiet"]) == 0
    options = VerifyOptions(grading=lambda: Grading(tasks={t.id: t for t in hw.load_tasks()}))
    assert capsys.readouterr().out == render_verify(verify_paths([runs["main"]], options))


def _rows(passes: list[int], runs: int = 3) -> list[RunRow]:
    return [
        RunRow(task_id=f"t{i:02d}", run_index=r, config="run", passed=r < p)
        for i, p in enumerate(passes)
        for r in range(runs)
    ]


@pytest.mark.parametrize(
    ("passes", "why"),
    [
        ([3, 3, 3, 3], "every task scored 1.000"),  # 12 of 12 over 4 tasks: [0, 1], and why
        ([0, 0, 0], "every task scored 0.000"),
        ([3, 2, 3, 1, 3], "wide because there are only 5 tasks"),
        ([3, 2, 3, 1, 3, 0, 2, 3, 3, 1, 2, 3], ""),  # enough tasks, some spread: nothing to say
    ],
)
def test_the_suite_interval_says_why_it_is_wide(passes: list[int], why: str) -> None:
    from harness_world.analysis.report import suite_mean

    suite = suite_mean(_rows(passes), {})
    assert suite is not None
    assert suite.why.startswith(why) if why else suite.why == ""


def test_report_is_short_by_default_and_full_defines_its_symbols(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(runs["pr"])]) == 0
    short = capsys.readouterr().out
    assert main(["report", str(runs["pr"]), "--full"]) == 0
    full = capsys.readouterr().out
    assert len(short.splitlines()) < len(full.splitlines()) - 30
    assert "--full adds the figures per family" in short and "--full" not in full
    for symbol in ("F_H", "Z_H", "|L|/|J|"):  # printed in the layered sheets ...
        assert symbol not in short
    layered = full[full.index("layered sheets") :]
    if "F_H" in layered:  # ... and defined on the page that prints them
        assert "symbols: F_H the failed harness criteria" in layered
        assert "Z_H = F_H minus B" in layered and "L the activated ones" in layered

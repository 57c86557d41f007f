"""`tau2 run --out DIR` writes a run directory; reports and the trace viewer show user turns.

The data is read from the shared copy; tests are skipped with the reason when it is absent.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import msgspec
import pytest

import harness_world as hw
from harness_world.analysis.report import build_report
from harness_world.analysis.trace_html import trace_fragment
from harness_world.analysis.trace_record import decode_trace
from harness_world.coverage import load_oracles
from harness_world.evidence.binding import read_index
from harness_world.grading.worlds import load_world_data
from harness_world.running import run
from harness_world.running.reader import RunReader
from harness_world.running.rundir import load_manifest, record_path
from tests.conftest import TAU2_DATA, Cli

pytestmark = [
    pytest.mark.tau2,
    pytest.mark.skipif(
        not (TAU2_DATA / "db.json").is_file() or not (TAU2_DATA / "tasks_train.json").is_file(),
        reason=f"τ² retail data not found in {TAU2_DATA}",
    ),
]


@pytest.fixture(scope="module")
def three(tmp_path_factory: pytest.TempPathFactory, cli: Cli) -> tuple[Path, Path]:
    """Three train tasks × 2 samples, scripted user, oracle agent: (run directory, tasks file)."""
    root = tmp_path_factory.mktemp("tau2run")
    tasks = root / "three.json"
    raw = json.loads((TAU2_DATA / "tasks_train.json").read_text(encoding="utf-8"))
    tasks.write_text(json.dumps(raw[:3]), encoding="utf-8")
    out = root / "run"
    code, text, err = cli(
        "tau2", "run", "--data", str(TAU2_DATA), "--tasks", str(tasks),
        "--samples", "2", "--out", str(out), "--json",
    )  # fmt: skip
    assert code == 0, err
    runs = json.loads(text)["runs"]
    assert [(r["task_id"], r["sample"]) for r in runs] == [
        (f"tau2_retail.{t['id']}", s) for t in raw[:3] for s in (0, 1)
    ]
    assert all(r["passed"] for r in runs)
    return out, tasks


def _sources(tasks: Path) -> tuple[str, ...]:
    """The world that reads τ²'s data folder, the folder, and the tasks file the run used."""
    return ("--world", "tau2_retail", "--world-data", str(TAU2_DATA), "--world-tasks", str(tasks))


def test_tau2_run_out_is_a_run_directory_that_verify_reads(
    three: tuple[Path, Path], cli: Cli
) -> None:
    out, tasks = three
    manifest = load_manifest(out)
    assert manifest.samples == 2 and len(manifest.tasks) == 3
    assert manifest.agent == "tau2 agent=oracle user=scripted observations=ours"
    index, _ = read_index(out)
    assert len(index) == 6
    for task_id in manifest.tasks:
        for sample in (0, 1):
            assert record_path(out, task_id, sample).is_file()
            assert index[(task_id, sample)].revision == manifest.revision.id
    assert json.loads((out / "counts.json").read_text())["valid"] == 6
    code, text, err = cli("verify", str(out), *_sources(tasks), "--require-pass", "--json")
    assert code == 0, err
    # one task's reward holds a natural-language assertion: its two passes are pending review
    assert json.loads(text)["grades"] == {"passed": 4, "failed": 0, "pending": 2}
    # without τ²'s world and tasks the verifier cannot grade it (never a path from the run)
    code, _, _ = cli("verify", str(out), "--require-pass")
    assert code == 1
    code, _, err = cli("verify", str(out), "--world", "helpdesk", "--world-data", str(TAU2_DATA))
    assert code == 2 and "'helpdesk' reads no outside data folder" in err
    code, _, err = cli("verify", str(out), "--world-tasks", str(tasks))
    assert code == 2 and "--world-tasks goes with --world-data" in err
    code, _, err = cli("report", str(out), "--world-data", str(TAU2_DATA))
    assert code == 2 and "needs exactly one --world" in err


def test_report_counts_and_user_turns_per_attempt(three: tuple[Path, Path], cli: Cli) -> None:
    out, tasks = three
    code, text, err = cli("report", str(out), *_sources(tasks), "--json")
    assert code == 0, err
    data = json.loads(text)
    assert data["counts"]["valid"] == 6 and data["counts"]["passed"] == 4
    assert (data["counts"]["pending"], data["pass_rate"]["estimate"]) == (2, pytest.approx(4 / 6))
    code, text, err = cli("report", str(out), *_sources(tasks), "--json", "--count-pending")
    assert code == 0 and json.loads(text)["pass_rate"]["estimate"] == 1.0, err
    turns = [a["user_turns"] for a in data["attempts"]]
    assert all(t >= 3 for t in turns)
    assert data["per_attempt"]["user_turns"] == pytest.approx(sum(turns) / 6)
    code, text, err = cli("report", str(out), *_sources(tasks))
    assert code == 0, err
    header = next(line for line in text.splitlines() if line.startswith("per "))
    assert header.split()[-2:] == ["user", "turns"]
    valid_row = next(line for line in text.splitlines() if line.startswith("valid attempt"))
    assert valid_row.split()[-1] == f"{sum(turns) / 6:.1f}"
    code, text, err = cli("compare", str(out), str(out), *_sources(tasks), "--count-pending")
    assert code == 0, err
    assert "Paired tasks: 3" in text and "mean pass rate 100.0%" in text
    assert "2 of 6 valid attempts, counted as passed (--count-pending)" in text


def test_a_run_without_user_turns_reports_no_user_turns(tmp_path: Path, cli: Cli) -> None:
    tasks = hw.load_tasks("helpdesk")[:2]
    oracles = load_oracles("helpdesk")
    out = tmp_path / "run"
    run(tasks, hw.ScriptedAgent(name="main", scripts=oracles), samples=1, out=out)
    report = build_report(out)
    assert b'"user_turns":' not in msgspec.json.encode(report)
    assert isinstance(report.per_attempt.user_turns, msgspec.UnsetType)
    code, text, _ = cli("report", str(out))
    assert code == 0 and "user turns" not in text and "tool calls" in text
    assert "policy sheet" not in text  # no task of the run has one
    code, text, _ = cli("verify", str(out), "--json")
    assert code == 0 and all("policy" not in r for r in json.loads(text)["records"])


def test_verify_and_report_show_the_policy_sheet_beside_the_grade(
    three: tuple[Path, Path], cli: Cli
) -> None:
    out, tasks = three
    code, text, err = cli("verify", str(out), *_sources(tasks), "--json")
    assert code == 0, err
    assert [r["policy"] for r in json.loads(text)["records"]] == [{"checked": 3, "failed": []}] * 6
    code, text, err = cli("verify", str(out), *_sources(tasks))
    assert code == 0, err
    assert "policy sheet: kept by 6 of 6 graded record(s) (not in the grade)" in text
    assert [line.split()[-1] for line in text.splitlines()[2:8]] == ["3/3"] * 6  # policy
    code, text, err = cli("report", str(out), *_sources(tasks))
    assert code == 0, err
    assert (
        "policy sheet (beside the grade, never in it): 6 of 6 graded attempts kept every rule; "
        "4 of the 4 passed attempts did"  # 2 are pending review, not passed
    ) in text
    assert "policy.confirmed            broken in 0 of 6, 0 of them passed" in text
    code, text, err = cli("report", str(out), *_sources(tasks), "--json")
    assert code == 0, err
    sheet = json.loads(text)["policy"]
    assert (sheet["attempts"], sheet["kept"]) == (6, 6)
    assert [r["rule"] for r in sheet["rules"]] == [
        "policy.authenticated",
        "policy.confirmed",
        "policy.no_needless_handoff",
    ]


def test_the_trace_viewer_shows_each_user_turn_in_its_place(three: tuple[Path, Path]) -> None:
    out, tasks = three
    data = load_world_data("tau2_retail", TAU2_DATA, tasks)
    report = build_report(out, RunReader.of(data.tasks, worlds={data.world.name: data.world}))
    slot = report.attempts[0]
    assert slot.evidence == "verified"
    trace = decode_trace(Path(slot.path).read_bytes())
    assert trace is not None and trace.user_turns
    for compact in (False, True):
        html = trace_fragment(0, slot, trace, None, 20_000, compact=compact)
        items = re.findall(r'<li(?: class="(\w+)[^"]*")?>', html)
        kinds = ["user" if k == "user" else "call" for k in items if k != "passed"]
        expected: list[str] = []
        turns = sorted(trace.user_turns, key=lambda t: t.after_call)
        for position in range(len(trace.calls) + 1):
            expected += ["user" for t in turns if t.after_call == position]
            if position < len(trace.calls):
                expected.append("call")
        assert kinds[: len(expected)] == expected
        for turn in trace.user_turns:
            assert turn.user[:40].replace("'", "&#x27;") in html
    without = msgspec.structs.replace(trace, user_turns=[])
    assert 'class="user"' not in trace_fragment(0, slot, without, None, 20_000)


def test_tau2_run_out_refuses_another_revision_and_bad_samples(
    three: tuple[Path, Path],
    cli: Cli,
) -> None:
    out, tasks = three
    before = (out / "index.jsonl").read_bytes()
    code, _, err = cli(
        "tau2", "run", "--data", str(TAU2_DATA), "--tasks", str(tasks),
        "--samples", "3", "--out", str(out),
    )  # fmt: skip
    assert code == 2 and "--out" in err and "samples" in err
    assert (out / "index.jsonl").read_bytes() == before
    code, _, err = cli("tau2", "run", "--data", str(TAU2_DATA), "--samples", "0")
    assert code == 2 and "--samples" in err

"""A world of your own in every command: the scaffold's world, run, verified, read and served.

The trust rule holds throughout: a record names only its world's name and hashes; the folder
it replays against is always the verifier's own argument.
"""

from __future__ import annotations

import io
import json
import shutil
import sys
from html import escape
from pathlib import Path
from typing import Any

import pytest

import harness_world as hw
from harness_world.cli import main
from harness_world.scaffold import write_scaffold

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The scaffold's world with a second task (another id, the same work) so runs compare."""
    root = tmp_path_factory.mktemp("project")
    write_scaffold("library", root)
    first = (root / "tasks/library/lend_dune.toml").read_text()
    (root / "tasks/library/lend_dune_again.toml").write_text(
        first.replace('id = "library.lend_dune"', 'id = "library.lend_dune_again"')
    )
    oracles = root / "oracles/library/oracles.py"
    oracles.write_text(
        oracles.read_text()
        + "\nORACLES = Oracles(routes={**ORACLES.routes, "
        + '"library.lend_dune_again": ORACLES.routes["library.lend_dune"]})\n'
    )
    return root


def _args(project: Path) -> list[str]:
    return ["--world", str(project / "worlds/library"), "--tasks", str(project / "tasks/library")]


def _run(project: Path, out: Path, *extra: str) -> int:
    argv = ["run", *_args(project), "--agent", "oracle", "--out", str(out), "--quiet", *extra]
    return main(argv)


def test_run_verify_report_compare_diagnose(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, cand = tmp_path / "base", tmp_path / "cand"
    assert _run(project, base, "--samples", "3") == 0
    assert _run(project, cand, "--samples", "3", "--seed", "1") == 0
    capsys.readouterr()
    assert main(["verify", str(base), *_args(project), "--require-pass", "--json"]) == 0
    verified = json.loads(capsys.readouterr().out)
    assert verified["evidence"] == {"verified": 6, "ungraded": 0, "lost": 0}
    assert verified["grades"]["passed"] == 6
    assert main(["report", str(base), *_args(project), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["counts"]["passed"] == 6 and report["agent"] == "oracle:library"
    code = main(["compare", str(base), str(cand), *_args(project), "--min-runs", "3", "--json"])
    compared = json.loads(capsys.readouterr().out)
    assert code in (0, 1) and "gate_passed" in compared and compared["decision"]
    assert "library.lend_dune_again" in json.dumps(compared["comparison"])
    assert main(["diagnose", str(base), *_args(project), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["attribution"] is not None


@pytest.mark.parametrize("command", ["report", "diagnose", "conditions", "compare", "gate"])
def test_reading_a_run_of_your_own_world_without_its_folder_says_what_is_missing(
    command: str, project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Read without ``--world``, every slot was lost and ``report`` said "6 invalid", exit 0."""
    out, other = tmp_path / "run", tmp_path / "other"
    assert _run(project, out) == 0 and _run(project, other, "--seed", "1") == 0
    capsys.readouterr()
    argv = {
        "compare": ["compare", str(other), str(out)],
        "gate": ["gate", str(ROOT / "docs/examples/payments-release.toml"), str(other), str(out)],
    }.get(command, [command, str(out)])
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and "'library'" in err and "--world FOLDER" in err
    advice = {"report": ["--json"], "diagnose": ["--json"], "conditions": ["--json"]}
    if command in advice:  # with the folder: read as a built-in world's run is
        assert main([command, str(out), *_args(project), *advice[command]]) == 0
        assert "not a built-in world" not in capsys.readouterr().out


def test_report_and_compare_pages_replay_and_grade_by_the_readers_world(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, cand = tmp_path / "base", tmp_path / "cand"
    assert _run(project, base) == 0 and _run(project, cand, "--seed", "1") == 0
    report_page, compare_page = tmp_path / "report.html", tmp_path / "compare.html"
    assert main(["report", str(base), *_args(project), "--html", str(report_page)]) == 0
    argv = ["compare", str(base), str(cand), *_args(project), "--html", str(compare_page)]
    assert main(argv) in (0, 1)
    capsys.readouterr()
    instruction = hw.load_tasks(folder=project / "tasks/library")[0].instruction
    for page in (report_page, compare_page):
        text = page.read_text(encoding="utf-8")
        assert "task not known here" not in text
        assert "is not a built-in world" not in text
        assert "evidence verified" in text and "evidence lost" not in text
        assert escape(instruction, quote=True)[:40] in text


def test_without_the_world_folder_a_record_is_never_graded(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert _run(project, out) == 0
    capsys.readouterr()
    assert main(["verify", str(out), "--json"]) == 1
    lost = json.loads(capsys.readouterr().out)
    assert lost["grades"]["passed"] == 0
    assert "not a built-in world" in json.dumps(lost)
    # a record renamed to a built-in world's name replays against the built-in, never passes
    record = next((out / "records").rglob("*.json"))
    data = json.loads(record.read_text())
    data["world"]["name"] = "helpdesk"
    record.write_text(json.dumps(data))
    assert main(["verify", str(record), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["grades"]["passed"] == 0


def test_the_library_runs_a_user_world_in_processes(project: Path, tmp_path: Path) -> None:
    tasks = hw.load_tasks(world="library", folder=project / "tasks/library")
    world = project / "worlds/library"
    result = hw.run(
        tasks,
        hw.oracle_agent(world),
        world=world,
        samples=2,
        executor=hw.Processes(2),
        out=tmp_path,
    )
    assert result.counts.passed == 4 and result.counts.invalid == 0


def test_precheck_tasks_and_play(
    project: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert main(["precheck", *_args(project), "--json"]) == 0
    assert {t["verdict"] for t in json.loads(capsys.readouterr().out)["tasks"]} == {"ok"}
    assert main(["tasks", *_args(project), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["tasks"]
    assert [t["id"] for t in listed] == ["library.lend_dune", "library.lend_dune_again"]
    calls = [
        {"tool": "find_books", "args": {"query": "Dune"}},
        {"tool": "lend_book", "args": {"book_id": "B-003", "member_id": "M-007"}},
        {"finish": "Lent Dune to M-007."},
    ]
    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(json.dumps(c) + "\n" for c in calls)))
    record = tmp_path / "played.json"
    argv = ["play", *_args(project), "--task", "library.lend_dune", "--record", str(record)]
    assert main(argv) == 0
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert last["evidence"] == "verified" and last["grade"] == "passed"


def test_mcp_serves_a_user_world_to_the_sdk_client(project: Path, tmp_path: Path) -> None:
    pytest.importorskip("mcp", reason="the MCP server needs the [mcp] extra")
    import anyio
    from mcp import Client, StdioServerParameters

    record = tmp_path / "mcp.json"
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "harness_world",
            "mcp",
            *_args(project),
            "--task",
            "library.lend_dune",
            "--reveal-grade",
            "--record",
            str(record),
        ],
        env={"PYTHONPATH": str(ROOT)},
        cwd=str(tmp_path),
    )

    async def session() -> dict[str, Any]:
        async with Client(params) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            found = await client.call_tool("find_books", {"query": "Dune"})
            books = json.loads(found.content[0].text)["result"]["books"]
            (dune,) = [b for b in books if b["title"] == "Dune"]
            await client.call_tool("lend_book", {"book_id": dune["id"], "member_id": "M-007"})
            done = await client.call_tool("finish", {"message": "Lent Dune to M-007."})
            return {"tools": tools, "finish": json.loads(done.content[0].text)}

    seen = anyio.run(session)
    assert seen["tools"] == {"find_books", "lend_book", "finish"}
    assert seen["finish"]["evidence"] == "verified"
    assert main(["verify", str(record), *_args(project), "--require-pass"]) == 0


@pytest.mark.parametrize(
    "command", ["run", "play", "mcp", "precheck", "tasks", "matrix", "mutants"]
)
def test_a_world_folder_without_world_py_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    pytest.importorskip("mcp") if command == "mcp" else None
    (tmp_path / "empty").mkdir()
    argv = [command, "--world", str(tmp_path / "empty")]
    if command in ("play", "mcp"):
        argv += ["--task", "x.y", "--record", str(tmp_path / "r.json")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "Traceback" not in err, err
    assert "not a world folder (no world.py)" in errors[0]


def test_a_task_naming_what_its_world_lacks_is_one_error_naming_file_and_part(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = {
        'entity = "books"\nwhere': ('entity = "volumes"\nwhere', "targets[0]: no entity 'volumes'"),
        'field = "copies_available"': (
            'field = "copies"',
            "require[0]: books has no field 'copies'",
        ),
        'fields = ["last_lent_at"]': ('fields = ["lent"]', "allow[0]: books has no field 'lent'"),
    }
    for i, (before, (after, expected)) in enumerate(cases.items()):
        folder = tmp_path / f"tasks{i}"
        folder.mkdir()
        text = (project / "tasks/library/lend_dune.toml").read_text()
        assert before in text
        (folder / "lend_dune.toml").write_text(text.replace(before, after))
        argv = ["tasks", "--world", str(project / "worlds/library"), "--tasks", str(folder)]
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and str(folder) in err[0] and expected in err[0], err
    fault = tmp_path / "tasks_fault"
    fault.mkdir()
    text = (project / "tasks/library/lend_dune.toml").read_text()
    text += '\n[[faults]]\nid = "slow"\ntool = "borrow"\nbehaviour = "fail_before_commit"\n'
    (fault / "t.toml").write_text(text)
    assert main(["run", "--world", str(project / "worlds/library"), "--tasks", str(fault)]) == 2
    assert "faults[0].tool: no tool 'borrow'" in capsys.readouterr().err


def test_two_worlds_of_one_name_and_a_missing_task_folder(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    twin = tmp_path / "twin"
    shutil.copytree(project / "worlds", twin / "worlds")
    argv = [
        "report",
        str(tmp_path),
        "--world",
        str(project / "worlds/library"),
        "--world",
        str(twin / "worlds/library"),
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "two worlds of one name" in err
    assert main(["run", "--world", str(project / "worlds/library"), "--tasks", "no/such"]) == 2
    assert "--tasks no/such: no such task folder" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            "from harness_world.engine import tool\n\n@tool(kind='read')\n"
            "def get_book(ctx, book_id):\n    'Get a book.'\n",
            "world.py:3: tool 'get_book': parameter 'book_id' has no type hint",
        ),
        ("CONTRACT = None\n", "WORLD must be a harness_world.engine.WorldSpec (found nothing)"),
        ("import no_such_module\n", "world.py:1: ModuleNotFoundError"),
    ],
)
def test_a_broken_world_py_is_one_error_naming_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str, expected: str
) -> None:
    folder = tmp_path / "worlds" / "broken"
    folder.mkdir(parents=True)
    (folder / "world.py").write_text(source)
    for argv in (["tasks", "--world", str(folder)], ["run", "--world", str(folder)]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: ") and expected in err[0], err


def test_an_mcp_run_of_a_user_world_counts_its_records_verified(
    project: Path, tmp_path: Path
) -> None:
    pytest.importorskip("mcp", reason="the MCP server needs the [mcp] extra")
    import anyio
    from mcp import Client, StdioServerParameters

    out = tmp_path / "served"
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "harness_world",
            "mcp",
            *_args(project),
            "--task",
            "library.lend_dune",
            "--samples",
            "1",
            "--out",
            str(out),
        ],
        env={"PYTHONPATH": str(ROOT)},
        cwd=str(tmp_path),
    )

    async def session() -> None:
        async with Client(params) as client:
            found = await client.call_tool("find_books", {"query": "Dune"})
            books = json.loads(found.content[0].text)["result"]["books"]
            (dune,) = [b for b in books if b["title"] == "Dune"]
            await client.call_tool("lend_book", {"book_id": dune["id"], "member_id": "M-007"})
            await client.call_tool("finish", {"message": "Lent Dune to M-007."})

    anyio.run(session)
    counts = json.loads((out / "counts.json").read_text())
    assert counts["by_evidence"] == {"verified": 1} and counts["passed"] == 1, counts


def test_a_broken_oracles_py_is_one_error_naming_file_and_line(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(project, copy)
    (copy / "oracles/library/oracles.py").write_text("ORACLES = {}\nx = (\n")
    world = str(copy / "worlds/library")
    for argv in (
        ["run", "--world", world, "--agent", "oracle", "--out", str(tmp_path / "r")],
        ["mutants", "--world", world],
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err
        errors = [line for line in err.splitlines() if line.startswith("error: ")]
        assert len(errors) == 1 and "Traceback" not in err, err
        assert "oracles.py:2: SyntaxError" in errors[0], errors


def test_reports_closing_hint_names_the_readers_world(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert _run(project, out) == 0
    capsys.readouterr()
    assert main(["report", str(out), *_args(project)]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last == f"Details: python -m harness_world diagnose {out} {' '.join(_args(project))}"


def test_report_and_diagnose_advise_a_run_of_your_own_world(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``report`` said "Advisories explained 0 of 0" on a user world: its advice skipped it."""
    out = tmp_path / "nothing"
    argv = ["run", *_args(project), "--agent", "do-nothing", "--out", str(out), "--quiet"]
    assert main([*argv, "--samples", "2"]) == 0
    capsys.readouterr()
    assert main(["report", str(out), *_args(project)]) == 0
    assert "Advisories explained 4 of 4 failed attempts" in capsys.readouterr().out  # 2 x 2
    assert main(["diagnose", str(out), *_args(project), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["reach"]["explained"] == 4 and len(found["advice"]) == 4

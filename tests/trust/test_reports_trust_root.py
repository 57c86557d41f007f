"""Every reader of run directories resolves worlds only within the trust root.

A record naming a folder (with a `world.py` that would run code on import) must never be
imported by `report`, its trusted figures, `conditions`, `diagnose` or the HTML report.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import harness_world as hw
from harness_world.cli import main
from harness_world.evidence import record_digest

TASK = "helpdesk.reply_and_solve"


def _poison(run: Path, tmp_path: Path) -> Path:
    """Point every record of a run at a folder whose world.py leaves a marker when imported."""
    evil = tmp_path / "evil"
    evil.mkdir()
    marker = tmp_path / "imported"
    (evil / "world.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    for path in (run / "records").rglob("*.json"):
        data = json.loads(path.read_text())
        data["world"]["name"] = str(evil)
        path.write_text(json.dumps(data))
        loaded = hw.load_record(path)
        resealed = json.loads(path.read_text())
        resealed["digest"] = record_digest(loaded)
        path.write_text(json.dumps(resealed))
    return marker


@pytest.mark.parametrize(
    "command",
    [["report"], ["report", "--json"], ["diagnose"], ["conditions"]],
)
def test_no_reader_imports_a_world_a_record_names(
    tmp_path: Path, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = [t for t in hw.load_tasks("helpdesk") if t.id == TASK]
    run = tmp_path / "run"
    hw.run(tasks, hw.oracle_agent("helpdesk"), samples=1, out=run)
    marker = _poison(run, tmp_path)
    main([*command, str(run)])
    capsys.readouterr()
    assert not marker.exists(), f"{command} imported a world named by a record"


def test_a_foreign_record_never_enters_the_trusted_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    from harness_world.running.reference_agents import reference_agent

    tasks = [t for t in hw.load_tasks("payments") if t.id == "payments.charge_timeout"]
    good, bad = tmp_path / "good", tmp_path / "bad"
    hw.run(tasks, reference_agent("payments", "oracle"), samples=1, out=good)
    hw.run(tasks, reference_agent("payments", "naive-retry"), samples=1, out=bad)

    def trusted(run: Path) -> int:
        assert main(["report", str(run), "--json"]) in (0, 1)
        figures = json.loads(capsys.readouterr().out)["trusted"]
        return int(figures["trusted"])

    before = trusted(bad)
    assert before == 0  # the naive retry pays twice
    # a forger copies the oracle's record over the failing one (a valid record, another run)
    path = Path("records") / "payments.charge_timeout" / "0.json"
    shutil.copy(good / path, bad / path)
    assert trusted(bad) == 0

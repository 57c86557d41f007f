"""``verify --pin FILE``: refuse when the verifier's worlds or tasks differ from a run's pins."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.trust._helpers import TASKS, oracle_run


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return oracle_run(tmp_path_factory.mktemp("pinned") / "run")


def test_a_run_writes_pins_that_its_verifier_accepts(run: Path, cli: Cli) -> None:
    pins = json.loads((run / "pins.json").read_text())
    assert set(pins["tasks"]) == set(TASKS) and set(pins["worlds"]) == {"helpdesk"}
    code, _, _ = cli("verify", "--require-pass", "--pin", str(run / "pins.json"), str(run))
    assert code == 0


def test_a_changed_pin_refuses_and_names_the_component(run: Path, tmp_path: Path, cli: Cli) -> None:
    pins = json.loads((run / "pins.json").read_text())
    pins["tasks"][TASKS[0]] = "0" * 64
    pins["worlds"]["helpdesk"]["hash"] = "1" * 64
    (tmp_path / "pins.json").write_text(json.dumps(pins))
    code, out, err = cli("verify", "--pin", str(tmp_path / "pins.json"), str(run))
    assert code == 2 and out == "" and err.startswith("error: refused by --pin")
    assert "world 'helpdesk'" in err and TASKS[0] in err


def test_records_of_unpinned_tasks_are_ungraded(run: Path, tmp_path: Path, cli: Cli) -> None:
    pins = json.loads((run / "pins.json").read_text())
    del pins["tasks"][TASKS[1]]
    (tmp_path / "pins.json").write_text(json.dumps(pins))
    code, out, _ = cli("verify", "--json", "--pin", str(tmp_path / "pins.json"), str(run))
    rows = {r["task"]: r for r in json.loads(out)["records"]}
    assert code == 1 and rows[TASKS[1]]["evidence"] == "ungraded"
    assert rows[TASKS[0]]["evidence"] == "verified"

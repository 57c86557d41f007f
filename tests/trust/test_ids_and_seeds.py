"""Task ids never leave the run directory; seed and data files are read within limits.

A task id names a folder of a run directory, so every id read from data (a task file, a τ²
tasks file, a run's manifest) must be one safe path component; a seed or τ² data file is read
only when it is a regular file within the record limits, and a breach is one error, exit 2.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import harness_world as hw
from harness_world.engine import WorldError
from harness_world.grading.task import TaskError
from harness_world.grading.worlds import choose_worlds
from harness_world.running.rundir import MANIFEST, load_manifest, record_path
from harness_world.tau2 import importer
from tests.conftest import TAU2_DATA, Cli
from tests.trust._helpers import oracle_run

needs_tau2 = pytest.mark.skipif(
    not (TAU2_DATA / "db.json").is_file() or not (TAU2_DATA / "tasks_train.json").is_file(),
    reason=f"τ² retail data not found in {TAU2_DATA}",
)

DEEP = 100_000
ESCAPE = "/../../../../outside/ESCAPED"


def one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: "), stderr
    assert "Traceback" not in stderr
    return lines[0]


def tau2_tasks(path: Path, *ids: object) -> Path:
    """A τ² tasks file of the first train task, once per given id."""
    raw = json.loads((TAU2_DATA / "tasks_train.json").read_text(encoding="utf-8"))[0]
    path.write_text(json.dumps([{**raw, "id": i} for i in ids]), encoding="utf-8")
    return path


def data_folder(folder: Path) -> Path:
    """A τ² data folder holding the train tasks but no db.json yet."""
    folder.mkdir()
    (folder / "tasks_train.json").write_bytes((TAU2_DATA / "tasks_train.json").read_bytes())
    return folder


def deep_json(path: Path, depth: int = DEEP) -> Path:
    path.write_text("[" * depth + "]" * depth, encoding="utf-8")
    return path


# -- task ids ---------------------------------------------------------------------------------


def test_every_existing_task_id_is_safe() -> None:
    from harness_world.engine.limits import task_id_problem

    ids = [t.id for t in hw.load_tasks()]
    scaffold = Path(hw.__file__).parent / "scaffold" / "template" / "tasks" / "__NAME__"
    for file in scaffold.glob("*.toml.tmpl"):
        line = next(x for x in file.read_text(encoding="utf-8").splitlines() if x.startswith("id"))
        ids.append(line.split('"')[1].replace("__NAME__", "my_world"))
    builtin = len(ids)
    if (TAU2_DATA / "tasks_train.json").is_file():  # absent in a clone without ../shared
        raw = json.loads((TAU2_DATA / "tasks_train.json").read_text(encoding="utf-8"))
        ids += [f"{importer.WORLD}.{t['id']}" for t in raw]
        assert len(ids) - builtin == 74
    assert builtin > 90  # every built-in task and the scaffold's were read
    assert [i for i in ids if task_id_problem(i)] == []


@pytest.mark.parametrize(
    "bad",
    ["", "../x", "a/b", "a\\b", ".hidden", "-flag", "a..b", "C:x", "a\n", "a" * 201, "é", 7, None],
)
def test_unsafe_task_ids_are_named(bad: object) -> None:
    from harness_world.engine.limits import task_id_problem

    assert task_id_problem(bad)
    assert not task_id_problem("tau2_retail.12")


def test_a_task_file_with_an_unsafe_id_is_an_error_naming_file_and_field(tmp_path: Path) -> None:
    folder = tmp_path / "tasks"
    folder.mkdir()
    source = folder / "bad.toml"
    source.write_text(
        'id = "../../escaped"\nworld = "helpdesk"\nfamily = "f"\ninstruction = "Do it."\n',
        encoding="utf-8",
    )
    with pytest.raises(TaskError) as caught:
        hw.load_tasks(folder=folder)
    assert str(source) in str(caught.value)
    assert ": id: " in str(caught.value)


def test_record_path_refuses_an_unsafe_id(tmp_path: Path) -> None:
    assert record_path(tmp_path, "helpdesk.x", 3) == tmp_path / "records" / "helpdesk.x" / "3.json"
    with pytest.raises(ValueError, match="unsafe"):
        record_path(tmp_path, "../../outside", 0)


@needs_tau2
def test_tau2_run_refuses_a_traversing_id_and_writes_nothing_outside(
    tmp_path: Path, cli: Cli
) -> None:
    tasks = tau2_tasks(tmp_path / "bad.json", ESCAPE)
    out = tmp_path / "runs" / "t"
    code, _, err = cli(
        "tau2", "run", "--data", str(TAU2_DATA), "--tasks", str(tasks), "--out", str(out)
    )
    assert code == 2, err
    assert "unsafe" in one_error_line(err)
    assert not (tmp_path / "outside").exists()
    assert not any(tmp_path.rglob("0.json"))


@needs_tau2
@pytest.mark.parametrize("bad", [{"a": 1}, 0, ["1"], None])
def test_a_tau2_id_that_is_not_a_string_is_refused(tmp_path: Path, bad: object, cli: Cli) -> None:
    tasks = tau2_tasks(tmp_path / "odd.json", bad)
    with pytest.raises(importer.FormatError, match="id must be a string"):
        importer.read_tasks(tasks)
    code, _, err = cli("tau2", "check", "--data", str(TAU2_DATA), "--tasks", str(tasks))
    assert code == 2
    assert "task #0: id must be a string" in one_error_line(err)


def test_split_and_results_ids_must_be_strings_as_in_tau2(tmp_path: Path) -> None:
    split = tmp_path / "split_tasks.json"
    split.write_text(json.dumps({"train": ["0", 1]}), encoding="utf-8")
    with pytest.raises(importer.FormatError, match="lists of ids"):
        importer.read_split(split)
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"simulations": [{"task_id": 0, "messages": []}]}))
    with pytest.raises(importer.FormatError, match="task_id must be a string"):
        importer.read_results(results)


def test_a_manifest_naming_an_unsafe_task_is_invalid(tmp_path: Path, cli: Cli) -> None:
    out = oracle_run(tmp_path / "run")
    task_id = "helpdesk.reply_and_solve"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (out / "records" / task_id).rename(elsewhere / task_id)
    manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    manifest["tasks"] = [
        f"../../elsewhere/{task_id}" if t == task_id else t for t in manifest["tasks"]
    ]
    (out / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(ValueError, match=r"invalid manifest: tasks: .*unsafe"):
        load_manifest(out)
    code, _, err = cli("verify", str(out))
    assert code == 2
    assert "invalid manifest" in err


def test_a_task_world_given_as_a_path_is_not_imported_while_checking(tmp_path: Path) -> None:
    evil = tmp_path / "evil"
    evil.mkdir()
    marker = tmp_path / "imported"
    (evil / "world.py").write_text(f"open({str(marker)!r}, 'w').close()\n", encoding="utf-8")
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "t.toml").write_text(
        f'id = "x.t"\nworld = "{evil}"\nfamily = "f"\ninstruction = "Do it."\n',
        encoding="utf-8",
    )
    choose_worlds(None).tasks(folder)
    assert not marker.exists()


# -- seed and data files ----------------------------------------------------------------------


@needs_tau2
def test_a_deeply_nested_db_json_is_one_error_exit_2(tmp_path: Path, cli: Cli) -> None:
    data = data_folder(tmp_path / "data")
    deep_json(data / "db.json")
    done = cli.process("tau2", "check", "--data", str(data), timeout=60)
    assert done.code == 2, done.err
    assert "nested deeper than 64 levels" in one_error_line(done.err)


def test_a_deeply_nested_seed_file_is_a_world_error(tmp_path: Path) -> None:
    deep = deep_json(tmp_path / "deep.json")
    with pytest.raises(WorldError, match="nested deeper than 64 levels"):
        hw.load_world("helpdesk", seed_file=deep)
    shallow = tmp_path / "shallow.json"  # decodes, but is deeper than a record may be
    nested: object = []
    for _ in range(70):
        nested = [nested]
    shallow.write_text(json.dumps({"tickets": nested}), encoding="utf-8")
    with pytest.raises(WorldError, match="nested deeper than 64 levels"):
        hw.load_world("helpdesk", seed_file=shallow)


def test_a_seed_file_over_the_size_limit_is_refused_before_reading(tmp_path: Path) -> None:
    from harness_world.engine.limits import RECORD_BYTES

    big = tmp_path / "big.json"
    with big.open("wb") as handle:
        handle.truncate(RECORD_BYTES + 1)  # sparse: nothing is written
    with pytest.raises(WorldError, match="over the limit"):
        hw.load_world("helpdesk", seed_file=big)


@needs_tau2
def test_a_deeply_nested_tau2_tasks_file_is_a_format_error(tmp_path: Path, cli: Cli) -> None:
    deep = deep_json(tmp_path / "tasks.json")
    with pytest.raises(importer.FormatError, match="nested deeper than 64 levels"):
        importer.read_tasks(deep)
    code, _, err = cli("tau2", "check", "--data", str(TAU2_DATA), "--tasks", str(deep))
    assert code == 2
    one_error_line(err)


fifo_only = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")


@fifo_only
@needs_tau2
def test_a_fifo_db_json_is_not_a_regular_file_and_does_not_block(tmp_path: Path, cli: Cli) -> None:
    data = data_folder(tmp_path / "data")
    os.mkfifo(data / "db.json")
    done = cli.process("tau2", "check", "--data", str(data), timeout=60)
    assert done.code == 2, done.err
    assert "not a regular file" in one_error_line(done.err)


@fifo_only
@needs_tau2
def test_a_fifo_tau2_tasks_file_does_not_block(tmp_path: Path, cli: Cli) -> None:
    fifo = tmp_path / "tasks.json"
    os.mkfifo(fifo)
    done = cli.process("tau2", "check", "--data", str(TAU2_DATA), "--tasks", str(fifo), timeout=60)
    assert done.code == 2, done.err
    assert "not a regular file" in one_error_line(done.err)


@fifo_only
def test_a_fifo_seed_file_does_not_block(tmp_path: Path) -> None:
    fifo = tmp_path / "seed.json"
    os.mkfifo(fifo)
    code = (
        "import harness_world as hw\nfrom harness_world.engine import WorldError\n"
        "try:\n"
        f"    hw.load_world('helpdesk', seed_file={str(fifo)!r})\n"
        "except WorldError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "not a regular file" in done.stdout

"""``verify --executor ray`` and batched Ray runs (issue 19): the local results, exactly.

Every comparison runs the same command twice, once here and once on a local Ray
(``ray.init(num_cpus=2)``), and compares the exit code and the whole output: doctored run
directories (a foreign record, a tampered one, a missing slot, an unreadable file, a stray
copy), loose record files (one naming a world folder of its own), ``--require-pass``, ``--pin``,
``--trust-key``, ``--no-grade`` and the verifier's own ``--world``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import msgspec
import pytest

import harness_world as hw
from harness_world.cli import main
from harness_world.engine.paths import builtin_dir
from harness_world.running import oracle_agent
from harness_world.running.rayrun import batch_size
from tests.running.test_scale_ray import (
    TASKS,
    FlakyOracle,
    _files,
    _judged,
    _without_context,
    _without_ray,
    local_ray,
    needs_ray,
)
from tests.trust._helpers import failing_run, keypair, oracle_run, reseal

pytestmark = pytest.mark.ray

__all__ = ["local_ray"]  # the Ray fixture, one local instance for this module too


def _both(
    argv: list[str], capsys: pytest.CaptureFixture[str], *, batch: int | None = None
) -> tuple[int, str]:
    """Run ``verify`` here and on Ray; both must agree on exit code and output."""
    here = main(["verify", *argv])
    local = capsys.readouterr().out
    on_ray = ["--executor", "ray"] + (["--ray-batch", str(batch)] if batch else [])
    there = main(["verify", *argv, *on_ray])
    remote = capsys.readouterr().out
    assert (there, remote) == (here, local)
    return here, local


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A clean oracle run (3 samples) and a doctored copy of it, plus a failing run."""
    root = tmp_path_factory.mktemp("verify-ray")
    good = oracle_run(root / "good", samples=3)
    bad = failing_run(root / "bad", samples=2)
    doctored = root / "doctored"
    shutil.copytree(good, doctored)
    records = sorted((doctored / "records").rglob("*.json"))
    shutil.copy(sorted((bad / "records").rglob("*.json"))[0], records[0])  # foreign
    text = records[1].read_text()
    records[1].write_text(text.replace('"completed"', '"turn_limit"', 1))  # tampered
    records[2].unlink()  # a missing slot
    records[3].write_bytes(b'{"format": 1, "calls": [')  # torn, unreadable
    shutil.copy(records[4], records[4].with_name("copy.json"))  # a stray duplicate
    return {"good": good, "bad": bad, "doctored": doctored, "root": root}


@needs_ray
def test_run_directories_verify_alike(
    runs: dict[str, Path], local_ray: object, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _both(["--json", "--require-pass", str(runs["good"])], capsys)
    grades = json.loads(out)["grades"]  # an unreviewed reply is pending, not passed
    assert code == 0 and grades["passed"] + grades["pending"] == 6
    code, out = _both(["--json", str(runs["doctored"])], capsys, batch=1)
    rows = json.loads(out)["records"]
    assert code == 1
    assert [r["evidence"] for r in rows].count("verified") == 2
    problems = " | ".join(r["first_problem"] for r in rows)
    assert "not bound to slot" in problems and "missing:" in problems
    assert "not a valid record" in problems and "not a scheduled slot" in problems
    code, out = _both(["--require-pass", str(runs["bad"]), str(runs["good"])], capsys)
    assert code == 1 and "10 record(s): 10 verified" in out  # the table, too
    code, _ = _both(["--json", "--no-grade", str(runs["doctored"])], capsys)
    assert code == 1


@needs_ray
def test_the_verifiers_own_world_and_pins_apply_alike(
    runs: dict[str, Path], tmp_path: Path, local_ray: object, capsys: pytest.CaptureFixture[str]
) -> None:
    good = runs["good"]
    folder = str(builtin_dir("worlds") / "helpdesk")
    for world in ("helpdesk", folder):
        code, out = _both(["--json", "--world", world, "--require-pass", str(good)], capsys)
        assert code == 0 and json.loads(out)["evidence"]["verified"] == 6
    code, out = _both(["--json", "--world", "helpdesk", "--size", "large", str(good)], capsys)
    assert code == 1 and "world hash differs" in out
    pins = json.loads((good / "pins.json").read_text())
    pins["tasks"].popitem()
    (tmp_path / "pins.json").write_text(json.dumps(pins))
    code, out = _both(["--json", "--pin", str(tmp_path / "pins.json"), str(good)], capsys)
    assert code == 1 and "is not pinned by --pin" in out


@needs_ray
def test_a_signed_run_is_checked_alike(
    tmp_path: Path, local_ray: object, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("cryptography")
    private, public = keypair(tmp_path)
    (tmp_path / "other").mkdir()
    _, wrong = keypair(tmp_path / "other")
    argv = ["run", "--world", "helpdesk", "--tasks", TASKS[0].id, "--samples", "2", "--json"]
    assert main([*argv, "--out", str(tmp_path / "run"), "--sign-key", str(private)]) == 0
    capsys.readouterr()
    code, _ = _both(["--json", "--trust-key", str(public), str(tmp_path / "run")], capsys)
    assert code == 0
    code, out = _both(["--json", "--trust-key", str(wrong), str(tmp_path / "run")], capsys)
    assert code == 1 and "provenance:" in out


EVIL = 'from pathlib import Path\nPath(__file__).with_name("IMPORTED").write_text("chosen")\n'


@needs_ray
def test_loose_record_files_verify_alike_and_choose_no_world(
    runs: dict[str, Path], tmp_path: Path, local_ray: object, capsys: pytest.CaptureFixture[str]
) -> None:
    evil = tmp_path / "evil"
    evil.mkdir()
    (evil / "world.py").write_text(EVIL)
    loose = tmp_path / "loose"
    shutil.copytree(runs["doctored"] / "records", loose)
    shutil.copytree(runs["bad"] / "records", loose / "bad")
    record = hw.load_record(sorted((runs["good"] / "records").rglob("*.json"))[0])
    named = msgspec.structs.replace(record.world, name=str(evil))
    hw.save_record(reseal(msgspec.structs.replace(record, world=named)), loose / "evil.json")
    calls = list(record.calls)
    calls[0] = msgspec.structs.replace(calls[0], result={"forged": True})
    forged = reseal(msgspec.structs.replace(record, calls=calls))  # sealed, but replay differs
    hw.save_record(forged, loose / "forged.json")
    code, out = _both(["--json", str(loose)], capsys, batch=3)
    rows = {str(Path(r["path"]).relative_to(loose)): r for r in json.loads(out)["records"]}
    assert code == 1 and not (evil / "IMPORTED").exists()
    assert rows["evil.json"]["evidence"] == "lost"
    assert "not a built-in world" in rows["evil.json"]["first_problem"]
    assert rows["forged.json"]["evidence"] == "ungraded" and rows["forged.json"]["mismatches"]
    assert {r["grade"] for r in rows.values()} >= {"passed", "failed"}
    code, _ = _both(["--json", "--world", "helpdesk", str(loose)], capsys)
    assert code == 1


@needs_ray
def test_a_world_the_verifier_cannot_load_is_an_input_error_alike(
    runs: dict[str, Path], local_ray: object, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["verify", "--world", "helpdesk", "--size", "nosuchsize", str(runs["good"] / "records")]
    assert main(argv) == 2
    local = capsys.readouterr()
    assert main([*argv, "--executor", "ray"]) == 2
    remote = capsys.readouterr()
    assert (remote.out, remote.err) == (local.out, local.err)
    assert remote.err.startswith("error: --world helpdesk:") and "nosuchsize" in remote.err


def test_ray_options_are_refused_without_the_executor_or_ray(
    runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    good = str(runs["good"])
    assert main(["verify", good, "--address", "auto"]) == 2
    assert capsys.readouterr().err == "error: --address needs --executor ray\n"
    assert main(["verify", good, "--ray-batch", "4"]) == 2
    assert capsys.readouterr().err == "error: --ray-batch needs --executor ray\n"
    assert main(["verify", good, "--executor", "ray", "--ray-batch", "0"]) == 2
    assert "--ray-batch must be at least 1" in capsys.readouterr().err
    args = ["run", "--world", "helpdesk", "--tasks", TASKS[0].id, "--out", good + "-x"]
    assert main([*args, "--ray-batch", "2"]) == 2
    assert "--ray-batch needs --executor ray" in capsys.readouterr().err
    _without_ray(monkeypatch)
    assert main(["verify", good, "--executor", "ray"]) == 2
    assert "pip install 'harness_world[ray]'" in capsys.readouterr().err


def test_a_default_batch_spreads_work_over_every_cpu() -> None:
    assert batch_size(1, 2) == 1
    assert batch_size(48, 2) == 6  # four batches per CPU
    assert batch_size(100_000, 2) == 16 and batch_size(100_000, 2, most=64) == 64
    assert batch_size(10, 0) == 3


@needs_ray
@pytest.mark.parametrize("batch", [3, None])
def test_batched_ray_runs_make_the_local_records(
    batch: int | None, tmp_path: Path, local_ray: object
) -> None:
    for marks in ("m1", "m2"):
        (tmp_path / marks).mkdir()
    here = hw.run(TASKS, FlakyOracle(str(tmp_path / "m1")), samples=3, out=tmp_path / "local")
    there = hw.run(
        TASKS,
        FlakyOracle(str(tmp_path / "m2")),
        samples=3,
        out=tmp_path / "ray",
        executor=hw.Ray(batch=batch),
    )
    assert there.counts == here.counts and there.counts.valid == 6 and there.counts.retried == 2
    local, remote = _files(tmp_path / "local"), _files(tmp_path / "ray")
    assert sorted(local) == sorted(remote) and len(local) == 8  # two failed tries kept
    for name, data in local.items():
        assert _without_context(remote[name]) == _without_context(data)
    assert [_judged(s, tmp_path / "local") for s in here.slots] == [
        _judged(s, tmp_path / "ray") for s in there.slots
    ]


@needs_ray
def test_a_batched_ray_run_resumes_and_counts_each_record_once(
    tmp_path: Path, local_ray: object
) -> None:
    seen: list[Any] = []
    agent = oracle_agent("helpdesk")
    out = tmp_path / "r"
    first = hw.run(TASKS, agent, samples=3, out=out, executor=hw.Ray(batch=4))
    assert first.counts.valid == 6
    for name in sorted(_files(out))[:3]:
        (out / name).unlink()
    again = hw.run(TASKS, agent, samples=3, out=out, executor=hw.Ray(batch=4), progress=seen.append)
    assert again.resumed == 3 and again.counts.valid == 6
    assert len(seen) == 3 and seen[-1].done == 3  # each record counted once, when durable
    argv = ["run", "--world", "helpdesk", "--tasks", TASKS[0].id, "--samples", "3", "--json"]
    argv += ["--out", str(tmp_path / "cli"), "--executor", "ray", "--ray-batch", "2"]
    assert main(argv) == 0
    assert len(_files(tmp_path / "cli")) == 3


@needs_ray
@pytest.mark.parametrize("batch", [1, None])
def test_the_ray_scan_is_the_local_scan(
    batch: int | None, tmp_path: Path, local_ray: object
) -> None:
    """With failed tries kept beside their slots: retried counts and their cost included."""
    from harness_world.grading import Verifier
    from harness_world.running.rayverify import ray_verifier
    from harness_world.running.reader import RunReader

    (tmp_path / "m").mkdir()
    out = tmp_path / "r"
    hw.run(TASKS, FlakyOracle(str(tmp_path / "m")), samples=2, out=out)
    (out / "records" / TASKS[0].id / "0.json").unlink()
    here = RunReader.of(TASKS).read(out)
    assert here.counts.retried == 2 and here.counts.missing == 1
    tasks = {t.id: t for t in TASKS}
    verifier = Verifier(tasks=tasks)
    with ray_verifier(verifier, address=None, batch=batch) as remote:
        assert RunReader(verifier).read(out, mapper=remote.map_slots) == here


def test_a_failed_ray_task_is_exit_2_with_one_line_not_a_traceback(
    runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A worker that dies mid-verification (here: every use of the verifier) gives no verdict."""
    from contextlib import contextmanager

    from ray.exceptions import RaySystemError

    from harness_world.running import rayverify

    class _Dead:
        def __getattr__(self, name: str) -> Any:
            raise RaySystemError("the worker process died")

    @contextmanager
    def dead_verifier(*_: object, **__: object) -> Any:
        yield _Dead()

    monkeypatch.setattr(rayverify, "ray_verifier", dead_verifier)
    assert main(["verify", str(runs["good"]), "--executor", "ray"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("error: a Ray task failed, so nothing is reported as verified")
    assert "the worker process died" in captured.err

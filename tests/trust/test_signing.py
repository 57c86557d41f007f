"""Provenance: ``run --sign-key`` signs the index, ``verify --trust-key`` checks who signed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.trust._helpers import TASKS, keypair, run_cli

pytest.importorskip("cryptography")


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    folder = tmp_path_factory.mktemp("signed")
    private, public = keypair(folder, "producer")
    _, stranger = keypair(folder, "stranger")
    from harness_world.cli import main

    argv = ["run", "--world", "helpdesk", "--tasks", *TASKS, "--out", str(folder / "run")]
    assert main([*argv, "--sign-key", str(private), "--json", "--no-precheck"]) == 0
    return folder / "run", public, stranger


def test_a_signed_run_verifies_with_the_producers_key(
    signed: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    run, public, _ = signed
    code, _, _ = run_cli(["verify", "--require-pass", "--trust-key", str(public), str(run)], capsys)
    assert code == 0


def test_another_key_or_an_edited_index_fails_provenance(
    signed: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run, public, stranger = signed
    code, out, _ = run_cli(["verify", "--json", "--trust-key", str(stranger), str(run)], capsys)
    rows = json.loads(out)["records"]
    assert code == 1 and all("provenance" in r["first_problem"] for r in rows)
    edited = tmp_path / "edited"
    shutil.copytree(run, edited)
    with (edited / "index.jsonl").open("ab") as handle:
        handle.write(b"\n")
    code, out, _ = run_cli(["verify", "--json", "--trust-key", str(public), str(edited)], capsys)
    assert code == 1 and "index changed" in json.loads(out)["records"][0]["first_problem"]
    (edited / "index.sig.json").unlink()
    code, _, _ = run_cli(["verify", "--trust-key", str(public), str(edited)], capsys)
    assert code == 1


def test_bad_keys_are_usage_errors(
    signed: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run, public, _ = signed
    junk = tmp_path / "junk.pem"
    junk.write_text("not a key")
    code, _, err = run_cli(["verify", "--trust-key", str(junk), str(run)], capsys)
    assert code == 2 and err.startswith("error: --trust-key")
    argv = ["run", "--world", "helpdesk", "--tasks", TASKS[0], "--out", str(tmp_path / "r")]
    code, _, err = run_cli([*argv, "--sign-key", str(public)], capsys)
    assert code == 2 and "--sign-key" in err and not (tmp_path / "r").exists()

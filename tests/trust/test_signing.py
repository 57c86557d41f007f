"""Provenance: ``run --sign-key`` signs the index, ``verify --trust-key`` checks who signed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.trust._helpers import TASKS, keypair

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
    signed: tuple[Path, Path, Path], cli: Cli
) -> None:
    run, public, _ = signed
    code, _, _ = cli("verify", "--require-pass", "--trust-key", str(public), str(run))
    assert code == 0


def test_another_key_or_an_edited_index_fails_provenance(
    signed: tuple[Path, Path, Path], tmp_path: Path, cli: Cli
) -> None:
    run, public, stranger = signed
    code, out, _ = cli("verify", "--json", "--trust-key", str(stranger), str(run))
    rows = json.loads(out)["records"]
    assert code == 1 and all("provenance" in r["first_problem"] for r in rows)
    edited = tmp_path / "edited"
    shutil.copytree(run, edited)
    with (edited / "index.jsonl").open("ab") as handle:
        handle.write(b"\n")
    code, out, _ = cli("verify", "--json", "--trust-key", str(public), str(edited))
    assert code == 1 and "index changed" in json.loads(out)["records"][0]["first_problem"]
    (edited / "index.sig.json").unlink()
    code, _, _ = cli("verify", "--trust-key", str(public), str(edited))
    assert code == 1


def test_the_signer_key_the_file_names_must_be_the_trusted_one(
    signed: tuple[Path, Path, Path], tmp_path: Path, cli: Cli
) -> None:
    """Found by the property over signed edits: ``public_key`` was informative and unchecked,
    so rewriting it left a directory that differs but still verified."""
    run, public, _ = signed
    edited = tmp_path / "edited"
    shutil.copytree(run, edited)
    signature = json.loads((edited / "index.sig.json").read_text())
    signature["public_key"] = "00" * 32
    (edited / "index.sig.json").write_text(json.dumps(signature))
    code, out, _ = cli("verify", "--json", "--trust-key", str(public), str(edited))
    rows = json.loads(out)["records"]
    assert code == 1 and all("another signer's key" in r["first_problem"] for r in rows)


def test_bad_keys_are_usage_errors(
    signed: tuple[Path, Path, Path], tmp_path: Path, cli: Cli
) -> None:
    run, public, _ = signed
    junk = tmp_path / "junk.pem"
    junk.write_text("not a key")
    code, _, err = cli("verify", "--trust-key", str(junk), str(run))
    assert code == 2 and err.startswith("error: --trust-key")
    argv = ["run", "--world", "helpdesk", "--tasks", TASKS[0], "--out", str(tmp_path / "r")]
    code, _, err = cli(*argv, "--sign-key", str(public))
    assert code == 2 and "--sign-key" in err and not (tmp_path / "r").exists()


def test_the_signature_covers_the_manifest_so_failing_slots_cannot_be_dropped(
    tmp_path: Path, cli: Cli
) -> None:
    """Signed: one task passes, one fails. Dropping the failing task from the manifest (and its
    records), or lowering the samples, or renaming the agent, is a provenance failure."""
    import harness_world as hw
    from harness_world.evidence.signing import sign_run
    from tests.trust._helpers import do_nothing, oracle_script, tasks

    private, public = keypair(tmp_path, "producer")
    passing, failing = TASKS
    agent = hw.ScriptedAgent(
        name="half", scripts={passing: oracle_script(passing), failing: do_nothing}
    )
    run = tmp_path / "run"
    result = hw.run(tasks(), agent, samples=2, out=run)
    sign_run(run, result.revision.id, private)
    argv = ["verify", "--json", "--trust-key", str(public)]
    code, out, _ = cli(*argv, str(run))
    assert code == 0 and json.loads(out)["grades"]["failed"] == 2
    edits = {
        "tasks": lambda m: {**m, "tasks": [passing]},
        "samples": lambda m: {**m, "samples": 1},
        "agent": lambda m: {**m, "agent": "oracle:helpdesk"},
    }
    for name, edit in edits.items():
        forged = tmp_path / f"forged-{name}"
        shutil.copytree(run, forged)
        manifest = json.loads((forged / "manifest.json").read_text())
        (forged / "manifest.json").write_text(json.dumps(edit(manifest)))
        if name == "tasks":
            shutil.rmtree(forged / "records" / failing)
        code, out, err = cli(*argv, "--require-pass", str(forged))
        if name in ("tasks", "samples"):  # the schedule no longer matches its revision
            assert code == 2 and "invalid manifest" in err and name in err, (name, err)
            continue
        rows = json.loads(out)["records"]
        assert code == 1, name
        assert rows and all("manifest" in r["first_problem"] for r in rows), (name, rows)
    # a resume appends an execution context: the scope, and so the signature, still hold
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["contexts"] = [*manifest["contexts"], manifest["contexts"][0]]
    (run / "manifest.json").write_text(json.dumps(manifest))
    code, _, _ = cli(*argv, str(run))
    assert code == 0


def test_a_new_key_pair_is_private_to_its_owner_and_never_overwrites(tmp_path: Path) -> None:
    from harness_world.evidence.signing import write_keypair

    private, public = tmp_path / "k.pem", tmp_path / "k.pub"
    write_keypair(private, public)
    assert private.stat().st_mode & 0o777 == 0o600
    assert private.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    assert public.read_bytes().startswith(b"-----BEGIN PUBLIC KEY-----")
    before = private.read_bytes()
    with pytest.raises(FileExistsError, match="never overwritten"):
        write_keypair(private, tmp_path / "other.pub")
    assert private.read_bytes() == before and not (tmp_path / "other.pub").exists()

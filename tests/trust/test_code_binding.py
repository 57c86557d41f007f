"""The revision binds the code that ran, and only a signed run's signer adds records to it.

The attack: a candidate's failing records are deleted and the run resumed with another program
under the same file name. A scripted agent's revision named only the file stem, so the resume
was accepted and every reader scored a run no single program made. Now the bytes of a script,
an oracle module or a reference agent's module are in the agent's settings (a changed program
is a changed ``agent.code`` component), and a signed run is resumed only with its key.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from harness_world.engine.paths import builtin_dir
from harness_world.running.agents import oracle_agent
from harness_world.running.reference_agents import reference_agent, scripted_agent
from tests.conftest import Cli, requires
from tests.trust._helpers import TASKS, keypair

LAZY = f'SCRIPTS = {{t: (lambda ctx: "Done.") for t in {TASKS!r}}}\n'
GOOD = 'from harness_world.coverage import load_oracles\nSCRIPTS = load_oracles("helpdesk")\n'


def _argv(script: Path, out: Path) -> list[str]:
    return [
        "run",
        "--world",
        "helpdesk",
        "--tasks",
        *TASKS,
        "--agent",
        "scripted",
        "--script",
        str(script),
        "--out",
        str(out),
        "--no-precheck",
        "--quiet",
    ]


def _one_error(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


def test_a_scripted_agent_pins_the_bytes_of_its_file(tmp_path: Path) -> None:
    script = tmp_path / "agent.py"
    script.write_text(LAZY)
    first = scripted_agent(script).settings()
    assert first["code"] == hashlib.sha256(LAZY.encode()).hexdigest()
    script.write_text(LAZY + "# tuned\n")  # same file, same name, another program
    second = scripted_agent(script).settings()
    assert second["name"] == first["name"] and second["code"] != first["code"]


def test_oracle_and_reference_agents_pin_their_module() -> None:
    module = builtin_dir("oracles") / "payments" / "oracles.py"
    code = hashlib.sha256(module.read_bytes()).hexdigest()
    assert oracle_agent("payments").settings()["code"] == code
    assert reference_agent("payments", "naive-retry").settings()["code"] == code


def test_resuming_with_another_program_of_the_same_file_name_is_refused(
    tmp_path: Path, cli: Cli
) -> None:
    script, run = tmp_path / "agent.py", tmp_path / "run"
    script.write_text(LAZY)
    cli(*_argv(script, run))  # every attempt fails its grade
    shutil.rmtree(run / "records")  # the failing records deleted...
    script.write_text(GOOD)  # ...and the slots run again by another program, one name
    code, _, err = cli(*_argv(script, run))
    line = _one_error(err)
    assert code == 2 and "revision mismatch: changed agent.code" in line, line
    assert not (run / "records").exists()  # nothing was added


@requires("cryptography", "signing needs the [sign] extra")
def test_resuming_a_signed_run_takes_the_key_that_signed_it(tmp_path: Path, cli: Cli) -> None:
    private, public = keypair(tmp_path, "producer")
    stranger, _ = keypair(tmp_path, "stranger")
    script, run = tmp_path / "agent.py", tmp_path / "run"
    script.write_text(LAZY)
    argv = _argv(script, run)
    cli(*argv, "--sign-key", str(private))
    shutil.rmtree(run / "records")  # the failing records deleted, to be run again
    index = (run / "index.jsonl").read_bytes()
    code, _, err = cli(*argv)  # no key
    assert code == 2 and "the run is signed; only its signer adds records" in _one_error(err)
    code, _, err = cli(*argv, "--sign-key", str(stranger))
    assert code == 2 and "signed by another key" in _one_error(err)
    assert (run / "index.jsonl").read_bytes() == index and not (run / "records").exists()
    # The signer resumes, and the run is signed again over what it now holds.
    cli(*argv, "--sign-key", str(private))
    assert (run / "index.jsonl").read_bytes() != index
    code, out, _ = cli("verify", str(run), "--trust-key", str(public), "--json")
    assert code == 0 and "provenance" not in out  # the lazy grades fail; provenance holds

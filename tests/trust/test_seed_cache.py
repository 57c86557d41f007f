"""A generated seed cached on disk is world data: only a seed this user's cache made is used.

A world's generated sizes (``helpdesk`` ``large``) are cached under ``$HARNESS_WORLD_CACHE``
beside the judgement cache. Whoever can write there (another user of a shared cache folder,
or a cache folder copied from another machine) could otherwise choose the data every record
of that size is replayed on: the verifier's world hash would be the planted world's, so a run
made against doctored data verifies, and an honest run does not.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from harness_world.engine.paths import builtin_dir
from harness_world.engine.world import resolve_world_folder
from tests.conftest import REPO, Cli

TASK = "helpdesk.security_count"

# The attacker's own run, on the doctored data (any code may make records; this one loads the
# world as harness_world does, with the doctored rows in place of the generated ones).
_DOCTORED_RUN = """
import sys
from pathlib import Path
import msgspec
import harness_world as hw
from harness_world.engine import world as engine

data = msgspec.msgpack.decode(Path(sys.argv[1]).read_bytes())

def doctored(folder, spec, size):
    return engine.World.from_data(spec.contract, data, size=size, source="generated:" + size)

engine._load_sized = doctored
tasks = [t for t in hw.load_tasks("helpdesk") if t.id == sys.argv[3]]
hw.run(tasks, hw.oracle_agent("helpdesk"), samples=1, out=Path(sys.argv[2]), size="large")
"""


def _doctored_large() -> bytes:
    """The ``large`` rows of helpdesk, generated as the world does, with one user left out."""
    from harness_world.engine.world import _world_spec

    spec = _world_spec(resolve_world_folder("helpdesk").resolve())
    assert spec.generate is not None
    data = spec.generate("large")
    data["users"] = data["users"][:-1]
    return msgspec.msgpack.encode(data)


def _seed_path(cache: Path) -> Path:
    source = (builtin_dir("worlds") / "helpdesk" / "world.py").read_bytes()
    return cache / "helpdesk" / f"large-{hashlib.sha256(source).hexdigest()[:16]}.msgpack"


def test_a_generated_seed_planted_in_the_cache_folder_is_never_used(
    cli: Cli, tmp_path: Path
) -> None:
    """Someone who can write the cache folder plants doctored ``large`` rows where the
    generated seed is cached, and hands over a run made against them: the verifier replays
    on the world its installation generates (the doctored run is ungraded, the honest one
    made before the plant still verifies)."""
    cache = tmp_path / "cache"
    env = {**os.environ, "HARNESS_WORLD_CACHE": str(cache)}
    honest = tmp_path / "honest"
    made = cli.process(
        "run", "--world", "helpdesk", "--size", "large", "--tasks", TASK, "--agent", "oracle",
        "--out", honest, "--quiet", env=env,
    )  # fmt: skip
    assert made.code == 0, made.err
    assert _seed_path(cache).exists()  # the run cached the generated seed where we look
    doctored = _doctored_large()
    rows = tmp_path / "doctored.msgpack"
    rows.write_bytes(doctored)
    forged = tmp_path / "forged"
    attacker = {**env, "HARNESS_WORLD_CACHE": str(tmp_path / "attacker"), "PYTHONPATH": str(REPO)}
    subprocess.run(
        [sys.executable, "-c", _DOCTORED_RUN, str(rows), str(forged), TASK],
        env=attacker, check=True, capture_output=True, cwd=REPO,
    )  # fmt: skip
    _seed_path(cache).write_bytes(doctored)  # planted: the attacker's rows in the cache's place
    fake = cli.process("verify", forged, "--no-cache", env=env)
    assert fake.code == 1 and "world hash differs" in fake.out, fake.out + fake.err
    real = cli.process("verify", honest, "--no-cache", env=env)
    assert real.code == 0, real.out + real.err


@pytest.mark.parametrize("mode", [0o666, 0o644])
def test_a_seed_cache_secret_others_may_read_is_not_used(tmp_path: Path, mode: int) -> None:
    """The secret that authenticates cached seeds must be this user's alone."""
    from harness_world.engine import seed_cache

    folder = tmp_path / "helpdesk"
    seed_cache.keep(folder, "large-x", b"\x80")
    assert seed_cache.read(folder, "large-x") == b"\x80"
    os.chmod(folder / seed_cache.SECRET, mode)
    assert seed_cache.read(folder, "large-x") is None
    seed_cache.keep(folder, "large-x", b"\x80")  # nothing kept under a secret others may read
    assert seed_cache.read(folder, "large-x") is None


def test_a_seed_from_another_cache_or_name_is_never_used(tmp_path: Path) -> None:
    """A cached seed copied from another machine's cache, or moved to another size's name."""
    from harness_world.engine import seed_cache

    ours, theirs = tmp_path / "ours" / "helpdesk", tmp_path / "theirs" / "helpdesk"
    seed_cache.keep(theirs, "large-x", b"\x91\x01")
    seed_cache.keep(ours, "small-x", b"\x91\x02")
    (ours / "large-x.msgpack").write_bytes((theirs / "large-x.msgpack").read_bytes())
    assert seed_cache.read(ours, "large-x") is None
    (ours / "large-x.msgpack").write_bytes((ours / "small-x.msgpack").read_bytes())
    assert seed_cache.read(ours, "large-x") is None
    assert seed_cache.read(ours, "small-x") == b"\x91\x02"

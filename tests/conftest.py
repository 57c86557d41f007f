"""Shared fixtures and hypothesis profiles.

``HW_FULL=1`` selects the ``full`` profile: the long fuzzing counts the issues ask for
(10,000 agent calls, 10,000 record edits). CI runs the reduced ``ci`` profile.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import io
import os
import resource
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import NamedTuple

import pytest
from hypothesis import HealthCheck, settings

import harness_world as hw
from harness_world.evidence import RecordContext, make_record

FULL = os.environ.get("HW_FULL") == "1"
REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
TAU2_DATA = SHARED / "external" / "tau2-retail"
AGENTDOJO_DATA = SHARED / "external" / "agentdojo"

settings.register_profile(
    "ci", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "full", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("full" if FULL else "ci")


def examples(ci: int, full: int) -> int:
    """The example count for a property: ``ci`` normally, ``full`` under HW_FULL=1."""
    return full if FULL else ci


def requires(module: str, reason: str) -> pytest.MarkDecorator:
    """Skip what it marks when ``module`` is not installed, without importing it.

    ``pytest.importorskip`` at module level would import an SDK (a second or more each) while
    collecting; finding its spec decides the skip, and the tests import it when they run.
    """
    return pytest.mark.skipif(importlib.util.find_spec(module) is None, reason=reason)


@functools.cache
def load_bench(name: str) -> ModuleType:
    """The bench script ``bench/NAME.py`` as a module (bench/ is no package), loaded once."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", REPO / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses and pickling look their module up by name
    spec.loader.exec_module(module)
    return module


class CliResult(NamedTuple):
    """What one command returned and printed."""

    code: int
    out: str
    err: str


class Cli:
    """Runs ``python -m harness_world ARGV...``: in this process, or in a fresh one (`process`)."""

    def __call__(self, *argv: str | os.PathLike[str]) -> CliResult:
        """`main` here, its output captured; argparse's exits (``--help``, usage) become codes."""
        from harness_world.cli import main

        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main([os.fspath(arg) for arg in argv])
            except SystemExit as exit:
                code = exit.code if isinstance(exit.code, int) else int(exit.code is not None)
        return CliResult(code, out.getvalue(), err.getvalue())

    def process(
        self,
        *argv: str | os.PathLike[str],
        cwd: Path = REPO,
        env: dict[str, str] | None = None,
        timeout: float = 120,
        address_space: int | None = None,
    ) -> CliResult:
        """The command in its own interpreter: a traceback or a blocked read shows as a user
        would see it. ``env`` replaces the environment (this tree is first on PYTHONPATH);
        ``address_space`` bounds its memory in bytes (reading a device fails at the bound)."""

        def bounded() -> None:
            resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

        done = subprocess.run(
            [sys.executable, "-m", "harness_world", *map(os.fspath, argv)],
            cwd=cwd,
            env={**(dict(os.environ) if env is None else env), "PYTHONPATH": str(REPO)},
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            preexec_fn=None if address_space is None else bounded,
        )
        return CliResult(done.returncode, done.stdout, done.stderr)


@pytest.fixture(scope="session")
def cli() -> Cli:
    """The command-line runner every test uses: ``cli("verify", run_dir).code == 0``."""
    return Cli()


@pytest.fixture(scope="session")
def small() -> hw.World:
    return hw.load_world("helpdesk")


@pytest.fixture(scope="session")
def large() -> hw.World:
    return hw.load_world("helpdesk", size="large")


def scenario_record(
    world: hw.World, *, seed: int = 0, context: RecordContext | None = None
) -> hw.Record:
    """A record touching every kind of evidence: reads, pages, writes, creates, typed errors."""
    session = world.open_session(seed=seed)
    null_owner = world.lookup("tickets", "owner_id", None)
    assert null_owner
    session.call("list_tickets", {"owner_id": None, "limit": 5})
    session.call("list_tickets", {"owner_id": None, "limit": 5, "offset": 5})
    session.call("get_ticket", {"ticket_id": null_owner[0]})
    session.call("assign_ticket", {"ticket_id": null_owner[0], "owner_id": "U-0002"})
    session.call("add_comment", {"ticket_id": null_owner[0], "body": "On it.", "public": True})
    session.call("get_ticket", {"ticket_id": "T-99999"})
    session.call("update_ticket", {"ticket_id": null_owner[1], "status": "lost"})
    session.call("update_ticket", {"ticket_id": null_owner[1], "priority": "high"})
    session.call("create_ticket", {"subject": "Follow-up", "requester_id": "U-0050"})
    session.call("find_users", {"query": "smith"})
    session.call("get_ticket", {"ticket_id": null_owner[1]})
    return make_record(
        session,
        outcome=hw.Outcome(status="completed"),
        task_id="scenario",
        final_message="Done.",
        usage=hw.Usage(turns=4, requests=4, input_tokens=1200, output_tokens=300, cost=0.0123),
        context=context,
    )


@pytest.fixture(autouse=True, scope="session")
def _private_judgement_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Commands run by the tests keep their judgements in a folder of this session's own.

    The user's cache (``~/.cache/harness_world/judgements``) is neither read nor filled; a
    test that needs a cache of its own makes one.
    """
    from harness_world.grading import judgement_cache

    folder = tmp_path_factory.mktemp("cache")
    patch = pytest.MonkeyPatch()
    patch.setattr(judgement_cache, "cache_dir", lambda: folder)
    yield
    patch.undo()


def accept_prose(run_dir: Path, key: Path | None = None) -> int:
    """Review every open prose criterion of a run as passed; how many slots it accepted.

    For tests about figures other than prose: an oracle's reply, read and accepted by a
    person, is a pass (unreviewed, it is pending and not passed).
    """
    from harness_world.release import ReviewRequest, add_reviews
    from harness_world.running.reader import RunReader

    slots = [s for s in RunReader.of().read(run_dir).slots if s.pending]
    requests = [
        ReviewRequest(task=s.task_id, sample=s.sample, criterion=c, verdict="pass")
        for s in slots
        for c in s.not_reviewed
    ]
    if requests:
        add_reviews(run_dir, requests, key_file=key)
    return len(slots)

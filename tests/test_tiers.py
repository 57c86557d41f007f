"""The test tiers: each test in one tier, the default run is the core, `tests.tiers` runs all."""

from __future__ import annotations

import ast
import shlex
import tomllib
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests import tiers
from tests.conftest import REPO

# Folders whose every test module belongs to one extension tier.
TIER_FOLDERS = {
    "tau2": REPO / "tests" / "tau2",
    "integrations": REPO / "tests" / "integrations",
    "rl": REPO / "tests" / "rl",
    "agentdojo": REPO / "tests" / "agentdojo",
}


def _ini() -> dict[str, object]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return dict(config["tool"]["pytest"]["ini_options"])


def test_the_default_run_deselects_every_extension_tier_and_nothing_else() -> None:
    addopts = shlex.split(str(_ini()["addopts"]))
    assert "--strict-markers" in addopts  # a misspelt tier is an error, not a new tier
    expression = addopts[addopts.index("-m") + 1]
    named = {
        node.id
        for node in ast.walk(ast.parse(expression, mode="eval"))
        if isinstance(node, ast.Name)
    }
    assert tiers.extension_tiers() == [
        "tau2",
        "ray",
        "html",
        "integrations",
        "rl",
        "agentdojo",
        "calibration",
    ]
    assert named == set(tiers.extension_tiers())
    assert expression == f"not ({' or '.join(tiers.extension_tiers())})"


def _module_marks(path: Path) -> set[str]:
    """The ``pytest.mark.NAME`` names in a module's ``pytestmark``."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets
        ):
            return {
                n.attr
                for n in ast.walk(node.value)
                if isinstance(n, ast.Attribute)
                and isinstance(n.value, ast.Attribute)
                and n.value.attr == "mark"
            }
    return set()


@pytest.mark.parametrize("tier", sorted(TIER_FOLDERS))
def test_every_module_of_a_tier_folder_carries_its_marker(tier: str) -> None:
    modules = sorted(TIER_FOLDERS[tier].glob("test_*.py"))
    assert modules
    unmarked = [p.name for p in modules if tier not in _module_marks(p)]
    assert not unmarked, f"tests/{tier}/ modules without pytestmark {tier}: {unmarked}"


def test_counts_come_from_the_junit_report(tmp_path: Path) -> None:
    junit = tmp_path / "t.xml"
    junit.write_text(
        '<testsuites><testsuite name="pytest" tests="10" failures="2" errors="1" skipped="3"/>'
        "</testsuites>"
    )
    assert tiers._counts(junit) == {"passed": 4, "failed": 3, "skipped": 3}
    assert tiers._counts(tmp_path / "absent.xml") == {"passed": 0, "failed": 0, "skipped": 0}


def _fake(codes: dict[str, int]):  # type: ignore[no-untyped-def]
    def run_tier(name: str, scratch: Path, extra: list[str]) -> tiers.TierRun:
        counts = {"passed": 0 if codes[name] == 5 else 3, "failed": int(codes[name] == 1)}
        output = f"{name} output\n"
        return tiers.TierRun(name, codes[name], output, {**counts, "skipped": 1}, 0.1, 0.1)

    return run_tier


@pytest.mark.parametrize("bad", [None, 1, 5])
def test_every_tier_runs_and_any_failure_or_empty_tier_fails_the_whole(
    bad: int | None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    names = ["core", *tiers.extension_tiers()]
    codes = {name: 0 for name in names} | ({} if bad is None else {"ray": bad})
    monkeypatch.setattr(tiers, "run_tier", _fake(codes))
    assert tiers.main(["--jobs", "2"]) == (0 if bad is None else 1)
    out = capsys.readouterr().out
    assert all(f"{name} output" in out for name in names)
    last = out.splitlines()[-1]
    if bad is None:
        assert last == f"tiers: {3 * len(names)} passed, 0 failed, {len(names)} skipped"
    else:
        assert "== failed tiers: ray" in out
        assert ("ran no test" in out) == (bad == 5)


def test_a_tier_runs_in_its_own_pytest_process(tmp_path: Path) -> None:
    """A real pytest process: its exit code, its counts from the report, its CPU time."""
    one = "tests/test_tiers.py::test_counts_come_from_the_junit_report"
    ran = tiers.run_tier("core", tmp_path, [one])
    assert ran.code == 0 and ran.counts == {"passed": 1, "failed": 0, "skipped": 0}, ran.output
    assert "1 passed" in ran.output and ran.cpu > 0


def test_the_core_tier_runs_on_two_workers_unless_single_tests_are_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The core tier's command carries xdist's options; a named test runs in one process."""
    commands: list[list[str]] = []

    class Child:
        pid = 0
        returncode = 0

    def popen(command: list[str], **_: object) -> Child:
        commands.append(command)
        return Child()

    monkeypatch.setattr(tiers.subprocess, "Popen", popen)
    monkeypatch.setattr(
        tiers.os,
        "wait4",
        lambda pid, options: (pid, 0, SimpleNamespace(ru_utime=0.0, ru_stime=0.0)),
    )
    monkeypatch.setattr(tiers.os, "waitstatus_to_exitcode", lambda status: 0)
    tiers.run_tier("core", tmp_path, [])
    tiers.run_tier(
        "core", tmp_path, ["tests/test_tiers.py::test_counts_come_from_the_junit_report"]
    )
    tiers.run_tier("ray", tmp_path, [])
    assert commands[0][3:7] == tiers.CORE_WORKERS
    assert "-n" not in commands[1] and commands[2][3:5] == ["-m", "ray"]

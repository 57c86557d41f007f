"""Every test tier, as CI runs it: ``python -m tests.tiers [--jobs N] [PYTEST ARGS...]``.

``python -m pytest`` runs the core tier (pyproject's ``addopts`` deselect the extension
tiers) and ``python -m pytest -m NAME`` one extension tier, NAME a marker registered in
pyproject. This runs them all, each in its own pytest process, at most
``--jobs`` at a time (default 2, this machine's cores), the core first and on two
pytest-xdist workers (``python -m pytest -n 2 --dist loadfile``); it prints each
tier's output whole when the tier ends, with its wall time. It exits 1 if any tier failed or
ran no test (pytest's exit 5), and its last line counts every tier's tests.
"""

from __future__ import annotations

import concurrent.futures
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parent.parent
CORE = "core"
CORE_WORKERS = ["-n", "2", "--dist", "loadfile"]
"""pytest-xdist options for the core tier: two worker processes (this machine's cores), each
test file on one worker so a module's fixtures are built once. Extension tiers stay in one
process: Ray, Chromium and the SDK servers each start a service of their own."""


class TierRun(NamedTuple):
    """How one tier ended: pytest's exit code, its output, its counts and its times.

    ``cpu`` is the user and system time of the tier's process and the processes it waited
    for: on a shared machine it moves less than the wall time does.
    """

    name: str
    code: int
    output: str
    counts: dict[str, int]
    seconds: float
    cpu: float


def extension_tiers() -> list[str]:
    """The markers registered in pyproject, each an extension tier, in their order there."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    markers = config["tool"]["pytest"]["ini_options"]["markers"]
    return [line.split(":", 1)[0].strip() for line in markers]


def _counts(junit: Path) -> dict[str, int]:
    """passed, failed and skipped from pytest's JUnit XML (failed counts errors too)."""
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    if junit.is_file():
        root = ET.parse(junit).getroot()
        for suite in [root] if root.tag == "testsuite" else root.iter("testsuite"):
            for key in totals:
                totals[key] += int(suite.get(key, "0"))
    failed = totals["failures"] + totals["errors"]
    passed = totals["tests"] - failed - totals["skipped"]
    return {"passed": passed, "failed": failed, "skipped": totals["skipped"]}


def run_tier(name: str, scratch: Path, extra: list[str]) -> TierRun:
    """One tier in its own pytest process, its output kept in a file until it ends."""
    select = ["-m", name]
    if name == CORE:
        has_xdist = importlib.util.find_spec("xdist") is not None
        select = CORE_WORKERS if has_xdist and not _one_test(extra) else []
    junit, log = scratch / f"{name}.xml", scratch / f"{name}.log"
    command = [sys.executable, "-m", "pytest", *select, f"--junitxml={junit}", *extra]
    start = time.monotonic()
    with log.open("w", encoding="utf-8") as output:
        child = subprocess.Popen(command, cwd=REPO, stdout=output, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
    seconds = time.monotonic() - start
    code = child.returncode = os.waitstatus_to_exitcode(status)
    text = log.read_text(encoding="utf-8", errors="replace")
    return TierRun(name, code, text, _counts(junit), seconds, usage.ru_utime + usage.ru_stime)


def _one_test(extra: list[str]) -> bool:
    """Whether the arguments name single tests (``file::name``): two workers would cost more."""
    return any("::" in argument for argument in extra)


def _parse(argv: list[str]) -> tuple[int, list[str]]:
    if argv[:1] == ["--jobs"]:
        return int(argv[1]), argv[2:]
    return 2, argv


def main(argv: list[str]) -> int:
    """Run every tier; 0 when each one passed and ran at least one test."""
    jobs, extra = _parse(argv)
    start = time.monotonic()
    tiers = [CORE, *extension_tiers()]
    failed: list[str] = []
    totals = {"passed": 0, "failed": 0, "skipped": 0}
    with (
        tempfile.TemporaryDirectory(prefix="hw-tiers-") as folder,
        concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool,
    ):
        futures = [pool.submit(run_tier, name, Path(folder), extra) for name in tiers]
        print(f"== tiers {', '.join(tiers)}: {jobs} at a time", flush=True)
        for future in concurrent.futures.as_completed(futures):
            tier = future.result()
            print(
                f"== tier {tier.name}: exit {tier.code} in {tier.seconds:.1f} s "
                f"(CPU {tier.cpu:.1f} s)",
                flush=True,
            )
            print(tier.output, end="", flush=True)
            for key in totals:
                totals[key] += tier.counts[key]
            if tier.code == 5:
                print(f"== tier {tier.name} ran no test: failing", flush=True)
            if tier.code != 0:
                failed.append(tier.name)
    print(f"== every tier in {time.monotonic() - start:.1f} s", flush=True)
    if failed:
        print(f"== failed tiers: {', '.join(failed)}", flush=True)
    print(f"tiers: {totals['passed']} passed, {totals['failed']} failed, "
          f"{totals['skipped']} skipped")  # fmt: skip
    return 1 if failed else 0


if __name__ == "__main__":
    os.chdir(REPO)
    sys.exit(main(sys.argv[1:]))

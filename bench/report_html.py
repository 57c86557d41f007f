"""The HTML report of a 10,000-attempt run: generation time and file size, beside the text report.

Targets (issue 20): ``report --html`` on a 10,000-attempt run in at most 10 s and 20 MB of HTML.
The time target is checked on what ``--html`` adds; the scan before it (every record replayed
and graded, what the text ``report`` already costs) is measured beside it and printed, with the
total.

The run directory is synthesized quickly: every built-in helpdesk and inventory task (24) is
run for real twice by a scripted agent (its oracle on sample 0, a hand mutant with a known
mistake on sample 1 where the task has one), then each real record is copied to the other
samples with its sample index changed and its digest sealed again, and the manifest is set to
the full sample count. Every copy is a valid record that replays and grades like the original,
so the scan, the grades and the traces are those of a real run of that size.

Measured in one process, side by side:

- ``scan``: `scan_run` + `report_from_scan` (what the text ``report`` costs: every record
  replayed once);
- ``html``: `load_run_view` + `run_html` (what ``--html`` adds: every record read again,
  graded in full, process metrics, plots, heatmap and traces);
- the page's size in bytes and per attempt.

    python bench/report_html.py            # 10,000 attempts
    python bench/report_html.py --quick    # 1,000 attempts (CI smoke)
    python bench/report_html.py --against REV   # also REV's code and this tree's, side by side

With ``--against REV`` (a git revision of this repository), the same run directory is also
measured by REV's code and by this tree's, alternating, each in a fresh process (best of 2), and
their scan results and pages (the page's minute stamp aside) are compared byte for byte.

Last line: one JSON object with every figure.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgspec

import harness_world as hw
from harness_world.analysis.html import load_run_view, run_html
from harness_world.analysis.report import report_from_scan
from harness_world.coverage import load_mutants, load_oracles
from harness_world.evidence import load_record, record_digest
from harness_world.evidence.binding import INDEX, IndexEntry
from harness_world.evidence.record import encode_record
from harness_world.running import ScriptedAgent, run
from harness_world.running.rundir import (
    MANIFEST,
    load_manifest,
    record_path,
    sample_seed,
    scan_run,
    write_json,
)

TASKS_PER_WORLD = ("helpdesk", "inventory")


def _scripts() -> dict[str, object]:
    """Sample 0 runs the oracle, sample 1 a mutant of the same task (when there is one)."""
    scripts: dict[str, object] = {}
    for world in TASKS_PER_WORLD:
        oracles = load_oracles(world)
        first_mutant: dict[str, object] = {}
        for mutant in load_mutants(world):
            if "small" in mutant.sizes:
                first_mutant.setdefault(mutant.task_id, mutant.script)
        for task_id, oracle in oracles.items():
            mutant = first_mutant.get(task_id, oracle)
            turns = iter([oracle, mutant] * 2)
            scripts[task_id] = lambda ctx, turns=turns: next(turns)(ctx)
    return scripts


def synthesize(out: Path, samples: int) -> int:
    """Make a run directory of the tasks × ``samples`` attempts; returns the attempt count."""
    tasks = [t for w in TASKS_PER_WORLD for t in hw.load_tasks(w)]
    agent = ScriptedAgent(name="bench:oracle-or-mutant", scripts=_scripts())  # type: ignore[arg-type]
    run(tasks, agent, samples=2, out=out, retries=0)
    manifest = load_manifest(out)
    write_json(out / MANIFEST, msgspec.structs.replace(manifest, samples=samples))
    lines: list[bytes] = []
    for task in tasks:
        real = [load_record(record_path(out, task.id, s)) for s in (0, 1)]
        for sample in range(2, samples):
            seed = sample_seed(manifest.seed, task.id, sample)
            copy = msgspec.structs.replace(real[sample % 2], sample=sample, seed=seed, digest="")
            copy = msgspec.structs.replace(copy, digest=record_digest(copy))
            path = record_path(out, task.id, sample)
            # As `run` saves them (canonical, indented): loading reads them as users' records
            path.write_bytes(encode_record(copy))
            entry = IndexEntry(
                task=task.id, sample=sample, seed=seed, revision=copy.revision, digest=copy.digest
            )
            lines.append(msgspec.json.encode(entry) + b"\n")
    with open(out / INDEX, "ab") as index:  # bound to its slot, as the runner binds it
        index.write(b"".join(lines))
    (out / "counts.json").unlink(missing_ok=True)
    return len(tasks) * samples


def measure(out: Path) -> tuple[float, float, str, bytes, int]:
    """Scan + text report, then the HTML; returns both times, the page, the slots and valid."""
    started = time.perf_counter()
    scan = scan_run(out, write_counts=False)
    report = report_from_scan(scan)
    scan_s = time.perf_counter() - started
    started = time.perf_counter()
    page = run_html(load_run_view(report))
    html_s = time.perf_counter() - started
    return scan_s, html_s, page, msgspec.json.encode(scan.slots), scan.counts.valid


def _child(out: Path, into: Path) -> None:
    """``--child RUN INTO``: measure once in this process (whichever code is on its path)."""
    scan_s, html_s, page, slots, _ = measure(out)
    (into / "report.html").write_text(_STAMP.sub("<generated>", page))
    (into / "slots.json").write_bytes(slots)
    print(json.dumps({"scan_s": scan_s, "html_s": html_s}))


_STAMP = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC")  # the page's generation minute


def against(revision: str, out: Path, folder: Path, rounds: int) -> dict[str, object]:
    """The same run measured by ``revision``'s code and by this tree's, alternating, each in a
    fresh process; best of ``rounds`` each; whether both wrote byte-identical slots and pages."""
    root = Path(__file__).resolve().parents[1]
    base = folder / "base"
    base.mkdir()
    tar = subprocess.run(
        ["git", "-C", str(root), "archive", revision], check=True, capture_output=True
    )
    subprocess.run(["tar", "-x", "-C", str(base)], input=tar.stdout, check=True)
    best: dict[str, tuple[float, float]] = {}
    for _ in range(rounds):
        for name, path in (("before", base), ("after", root)):
            into = folder / name
            into.mkdir(exist_ok=True)
            env = {**os.environ, "PYTHONPATH": str(path)}
            argv = [sys.executable, str(Path(__file__).resolve()), "--child", str(out), str(into)]
            done = subprocess.run(argv, env=env, check=True, capture_output=True, text=True)
            got = json.loads(done.stdout.strip().splitlines()[-1])
            previous = best.get(name, (float("inf"), float("inf")))
            best[name] = (min(previous[0], got["scan_s"]), min(previous[1], got["html_s"]))
    same = all(
        (folder / "before" / f).read_bytes() == (folder / "after" / f).read_bytes()
        for f in ("report.html", "slots.json")
    )
    return {"revision": revision, "before": best["before"], "after": best["after"], "same": same}


def main() -> None:
    """Synthesize, measure, print."""
    if sys.argv[1:2] == ["--child"]:
        _child(Path(sys.argv[2]), Path(sys.argv[3]))
        return
    quick = "--quick" in sys.argv
    revision = sys.argv[sys.argv.index("--against") + 1] if "--against" in sys.argv else ""
    tasks = sum(len(hw.load_tasks(w)) for w in TASKS_PER_WORLD)
    samples = -(-(1_000 if quick else 10_000) // tasks)  # at least 1,000 or 10,000 attempts
    with tempfile.TemporaryDirectory(prefix="hw-bench-html-") as folder:
        out = Path(folder) / "run"
        started = time.perf_counter()
        attempts = synthesize(out, samples)
        made = time.perf_counter() - started
        scan_s, html_s, page, _, valid = measure(out)
        size = len(page.encode())
        side = against(revision, out, Path(folder), 2) if revision else {}
    print(f"attempts: {attempts} (synthesized in {made:.1f} s); verified and graded: {valid}")
    print(f"scan + text report: {scan_s:.2f} s")
    print(
        f"HTML (records read, graded, plots, heatmap, traces): {html_s:.2f} s "
        f"= {html_s / scan_s:.2f} × the scan"
    )
    print(f"HTML size: {size / 1e6:.2f} MB = {size / attempts:.0f} bytes per attempt")
    total = scan_s + html_s
    if side:
        _print_side(side)
    load = os.getloadavg()[0]
    print(f"machine load average (1 min) at the end: {load:.2f} on {os.cpu_count()} cores")
    print(f"HTML part: {html_s:.2f} s (target <= 10 s); size {size / 1e6:.2f} MB (target <= 20 MB)")
    print(f"report --html in all, scan included: {total:.2f} s")
    print(
        json.dumps(
            {
                "attempts": attempts,
                "all_verified": valid == attempts,
                "scan_s": round(scan_s, 3),
                "html_s": round(html_s, 3),
                "total_s": round(total, 3),
                "html_over_scan": round(html_s / scan_s, 3),
                "html_bytes": size,
                "bytes_per_attempt": round(size / attempts, 1),
                "html_within_10s": html_s <= 10,
                "total_within_10s": total <= 10,
                "within_size": size <= 20_000_000,
                "load_average": round(load, 2),
                "quick": quick,
                "against": side,
            }
        )
    )


def _print_side(side: dict[str, object]) -> None:
    before: tuple[float, float] = side["before"]  # type: ignore[assignment]
    after: tuple[float, float] = side["after"]  # type: ignore[assignment]
    print(f"side by side, best of 2 each, fresh processes, {side['revision']} -> this tree:")
    for i, part in enumerate(("scan", "HTML")):
        print(f"  {part}: {before[i]:.2f} s -> {after[i]:.2f} s: x{before[i] / after[i]:.2f}")
    b, a = sum(before), sum(after)
    print(f"  in all: {b:.2f} s -> {a:.2f} s: x{b / a:.2f}")
    print(f"  slots and page byte-identical (page's minute stamp aside): {side['same']}")


if __name__ == "__main__":
    main()

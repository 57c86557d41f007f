"""Reading a 10,000-attempt run: what each read command costs beside ``verify``, cold and cached.

A helpdesk oracle run of 32 tasks x 300 samples (9,600 attempts) is made with ``run``, then each
command is run as the user runs it (``python -m harness_world ...``, one fresh process each) and
measured side by side in one sitting:

- ``run`` (1 worker) and ``run --workers 2``;
- ``verify`` cold (every record replayed: ``--no-cache``), ``verify`` filling the verifier's
  judgement cache (the first run without ``--no-cache``), ``verify`` cached (its judgements
  reused from that cache), ``verify --workers 2`` cold;
- ``report`` cold and cached, ``compare R R2`` cached, ``gate POLICY R R2`` cached (R2 the
  same revision's run made by two workers);
- ``report --html`` cold (every record replayed, then the page written: its time over
  ``report`` cold is what writing the page costs);
- ``verify --workers 2`` cold once more, its reading process's CPU time apart from its
  workers' (what the parent spends reading files and decoding judgements is what two cores
  cannot share), and what its mapper sends per record: messages (one batch each way) and
  bytes (pickled slots and file bytes out, msgpack judgements back), counted in this process;
- ``report`` cold over ``verify`` cold, and ``verify --workers 2`` over one worker, once more
  as the medians of ``--rounds`` alternating rounds (3; 1 with ``--quick``), since one pair
  moves by a tenth here.

Each step's wall-clock time, CPU time (user + system, of the process and its children) and
peak resident memory (``ru_maxrss`` from ``wait4``) are printed, with its time as a ratio to
``verify`` cold. The machine is shared: wall time wanders with the load (printed), CPU time
less so. Bytecode is compiled once into a temporary ``PYTHONPYCACHEPREFIX``, as an installed
package's is (this machine's shells set ``PYTHONDONTWRITEBYTECODE``). The judgement cache
lives in a temporary ``HARNESS_WORLD_CACHE`` of its own, so the first cached step fills it
from nothing. On code without a judgement cache or ``--workers``
for ``verify`` (measured before they existed), a flag the command does not know is left out
and the figure is null where it cannot be measured.

    PYTHONPATH=. python bench/read.py            # 32 tasks x 300 samples
    PYTHONPATH=. python bench/read.py --quick    # 32 x 10 (CI smoke)
    PYTHONPATH=. python bench/read.py --samples 50
    PYTHONPATH=. python bench/read.py --rounds 5  # report/verify ratio: median of 5 rounds

Last line: one JSON object with every figure.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import attrs

QUICK = "--quick" in sys.argv
SAMPLES = int(sys.argv[sys.argv.index("--samples") + 1]) if "--samples" in sys.argv else 0
SAMPLES = SAMPLES or (10 if QUICK else 300)
ROUNDS = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 0
ROUNDS = ROUNDS or (1 if QUICK else 3)

POLICY = """name = "bench"

[completion]
margin_points = 15
alpha = 0.025
clusters = true

[cost]
max_per_trusted_usd = 0.25

[latency]
max_p95_s = 60
"""


@attrs.frozen
class Step:
    """One command measured: wall seconds, CPU seconds and peak memory (MB)."""

    name: str
    wall_s: float
    cpu_s: float
    peak_mb: float
    code: int


def _command(args: list[str], env: dict[str, str]) -> Step:
    """Run ``python -m harness_world ARGS`` once; time it and read its rusage."""
    start = time.perf_counter()
    with open(os.devnull, "wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "harness_world", *args],
            stdout=sink,
            stderr=subprocess.PIPE,
            env=env,
        )
        assert process.stderr is not None
        err = process.stderr.read()
        _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    code = process.returncode
    if code not in (0, 1):
        raise SystemExit(f"{' '.join(args)} exited {code}: {err.decode()[-2000:]}")
    return Step(
        name=" ".join(args[:1]),
        wall_s=wall,
        cpu_s=usage.ru_utime + usage.ru_stime,
        peak_mb=usage.ru_maxrss / 1024,
        code=code,
    )


_SPLIT = """
import resource, runpy, sys
sys.argv = ["harness_world", *sys.argv[1:]]
try:
    runpy.run_module("harness_world", run_name="__main__")
except SystemExit:
    pass
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime, file=sys.stderr)
"""


def _cpu_split(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """CPU seconds of a command's own process and of its worker processes, apart."""
    done = subprocess.run(
        [sys.executable, "-c", _SPLIT, *args], capture_output=True, env=env, check=False
    )
    own, workers = done.stderr.decode().split()[-2:]
    return float(own), float(workers)


def worker_traffic(run: Path, workers: int = 2) -> dict[str, object] | None:
    """What ``verify --workers`` sends its workers, per record, as its mapper batches a run.

    Messages (batches each way) and bytes (the pickled slots sent, with their files' bytes on
    code whose reading process read them for its workers; the msgpack judgements received)
    over the records judged, counted in this process with the tree's own reader and batch
    size; None on code without the worker mapper.
    """
    try:
        import inspect
        import pickle

        import msgspec

        from harness_world.running import workers as mapper
        from harness_world.running.reader import RunReader, plan_slots, read_slot
        from harness_world.running.workers import batches
    except ImportError:
        return None
    batch = inspect.signature(mapper._judge_batch).parameters["batch"].annotation
    with_bytes = "SlotBytes" in str(batch)
    reader = RunReader.of()
    opened = reader.open(run)
    slots = plan_slots(opened)
    size = batches(len(slots), workers)
    sent = received = messages = 0
    for start in range(0, len(slots), size):
        chunk = [(slot, read_slot(opened, slot)) for slot in slots[start : start + size]]
        message = chunk if with_bytes else [slot for slot, _ in chunk]
        sent += len(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))
        judged = [
            reader.verifier.judgement(slot, opened.manifest.sizes, data) for slot, data in chunk
        ]
        received += len(msgspec.msgpack.encode(judged))
        messages += 1
    records = max(1, len(slots))
    return {
        "worker_batch_slots": size,
        "worker_messages_per_record": round(2 * messages / records, 4),
        "worker_bytes_sent_per_record": round(sent / records),
        "worker_bytes_received_per_record": round(received / records),
    }


def _knows(command: str, flag: str, env: dict[str, str]) -> bool:
    """Whether this tree's ``command`` takes ``flag`` (so older code can be measured too)."""
    out = subprocess.run(
        [sys.executable, "-m", "harness_world", command, "--help"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    ).stdout
    return flag in out


def measure(root: Path) -> dict[str, object]:
    """Every step, in one sitting; figures by name."""
    env = dict(os.environ, HARNESS_WORLD_CACHE=str(root / "cache"))
    # compiled once, as an installed package is: this machine's shells set no bytecode at all
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(root / "pycache")
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(__file__).resolve().parents[1]), env.get("PYTHONPATH", "")]
    )
    cold = ["--no-cache"] if _knows("verify", "--no-cache", env) else []
    workers = _knows("verify", "--workers", env)
    run, policy = root / "r", root / "policy.toml"
    policy.write_text(POLICY)
    base = ["--world", "helpdesk", "--agent", "oracle", "--samples", str(SAMPLES), "--quiet"]
    steps: dict[str, Step | None] = {}
    steps["run"] = _command(["run", *base, "--out", str(run)], env)
    steps["run_workers_2"] = _command(
        ["run", *base, "--workers", "2", "--out", str(root / "r2")], env
    )
    steps["verify_cold"] = _command(["verify", str(run), "--quiet", *cold], env)
    steps["verify_fill"] = _command(["verify", str(run), "--quiet"], env)  # the first: fills
    steps["verify_cached"] = _command(["verify", str(run), "--quiet"], env)
    steps["verify_workers_1"] = (
        _command(["verify", str(run), "--quiet", "--workers", "1", *cold], env) if workers else None
    )
    steps["verify_workers_2"] = (
        _command(["verify", str(run), "--quiet", "--workers", "2", *cold], env) if workers else None
    )
    steps["report_cold"] = _command(["report", str(run), *cold], env)
    steps["report_cached"] = _command(["report", str(run)], env)
    steps["report_cached"] = _command(["report", str(run)], env)
    # the same revision's second run (made by two workers): the gate refuses a run compared
    # with itself, and its judgements are cached first like the first run's
    twin = root / "r2"
    steps["verify_twin"] = _command(["verify", str(twin), "--quiet"], env)
    steps["compare_cached"] = _command(["compare", str(run), str(twin)], env)
    steps["gate_cached"] = _command(["gate", str(policy), str(run), str(twin)], env)
    page = root / "page"
    steps["report_html"] = _command(["report", str(run), "--html", str(page), *cold], env)
    figures = _figures(steps, page)
    if workers:
        own, kids = _cpu_split(["verify", str(run), "--quiet", "--workers", "2", *cold], env)
        figures["verify_workers_2_parent_cpu_s"] = round(own, 3)
        figures["verify_workers_2_workers_cpu_s"] = round(kids, 3)
    figures.update(worker_traffic(run) or {})
    figures.update(paired_rounds(run, cold, env, steps))
    return figures


def paired_rounds(
    run: Path, cold: list[str], env: dict[str, str], steps: dict[str, Step | None]
) -> dict[str, object]:
    """The two ratios held to a target, each the median of rounds that alternate its commands.

    ``report`` cold over ``verify`` cold, and ``verify --workers 1`` over ``--workers 2``
    (cold). One pair of single runs moves by a tenth or more here (two cold ``verify`` runs of
    the same sitting have differed by 12 %); the first round is the pairs measured above,
    each further round runs the four commands again, and the medians of the per-round ratios
    (wall, and CPU for the first) are the figures the targets are read from.
    """
    verify, report = steps["verify_cold"], steps["report_cold"]
    one, two = steps["verify_workers_1"], steps["verify_workers_2"]
    assert verify is not None and report is not None
    pairs = [(verify, report)]
    scaling = [one.wall_s / two.wall_s] if one is not None and two is not None else []
    for _ in range(ROUNDS - 1):
        pairs.append(
            (
                _command(["verify", str(run), "--quiet", *cold], env),
                _command(["report", str(run), *cold], env),
            )
        )
        if scaling:
            args = ["verify", str(run), "--quiet", *cold, "--workers"]
            alone, both = _command([*args, "1"], env), _command([*args, "2"], env)
            scaling.append(alone.wall_s / both.wall_s)
    return {
        "paired_rounds": len(pairs),
        "report_cold_over_verify_cold_median": round(
            statistics.median(r.wall_s / v.wall_s for v, r in pairs), 3
        ),
        "report_cold_cpu_over_verify_cold_median": round(
            statistics.median(r.cpu_s / v.cpu_s for v, r in pairs), 3
        ),
        "verify_speedup_2_workers_median": (
            round(statistics.median(scaling), 3) if scaling else None
        ),
    }


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _figures(steps: dict[str, Step | None], page: Path) -> dict[str, object]:
    base = steps["verify_cold"]
    assert base is not None
    figures: dict[str, object] = {
        "attempts": 32 * SAMPLES,
        "load_average_1m": os.getloadavg()[0],
        "html_bytes": _size(page) if page.exists() else None,
    }
    for name, step in steps.items():
        figures[f"{name}_s"] = None if step is None else round(step.wall_s, 3)
        figures[f"{name}_cpu_s"] = None if step is None else round(step.cpu_s, 3)
        figures[f"{name}_peak_mb"] = None if step is None else round(step.peak_mb, 1)
        figures[f"{name}_over_verify_cold"] = (
            None if step is None else round(step.wall_s / base.wall_s, 3)
        )
        figures[f"{name}_cpu_over_verify_cold"] = (
            None if step is None else round(step.cpu_s / base.cpu_s, 3)
        )
    one, two = steps["verify_workers_1"], steps["verify_workers_2"]
    figures["verify_speedup_2_workers"] = (
        None if one is None or two is None else round(one.wall_s / two.wall_s, 3)
    )
    run1, run2 = steps["run"], steps["run_workers_2"]
    assert run1 is not None and run2 is not None
    figures["run_speedup_2_workers"] = round(run1.wall_s / run2.wall_s, 3)
    report_cold, report_html = steps["report_cold"], steps["report_html"]
    assert report_cold is not None and report_html is not None
    figures["html_over_report_cold"] = round(report_html.wall_s / report_cold.wall_s, 3)
    return figures


def _table(figures: dict[str, object]) -> str:
    names = [
        k[: -len("_cpu_over_verify_cold")] for k in figures if k.endswith("_cpu_over_verify_cold")
    ]
    head = f"{'step':<18} {'wall s':>8} {'cpu s':>8} {'peak MB':>8} {'/ verify':>9} {'cpu /':>6}"
    lines = [head]
    for name in names:
        if figures[f"{name}_s"] is None:
            lines.append(f"{name:<18} {'-':>8} {'-':>8} {'-':>8} {'-':>9} {'-':>6}")
            continue
        lines.append(
            f"{name:<18} {figures[f'{name}_s']:>8} {figures[f'{name}_cpu_s']:>8} "
            f"{figures[f'{name}_peak_mb']:>8} {figures[f'{name}_over_verify_cold']:>9} "
            f"{figures[f'{name}_cpu_over_verify_cold']:>6}"
        )
    return "\n".join(lines)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="hw-read-") as tmp:
        figures = measure(Path(tmp))
    print(f"{figures['attempts']} attempts (helpdesk oracle, 32 tasks x {SAMPLES} samples)")
    print(_table(figures))
    print(
        f"verify --workers 2 over 1: {figures['verify_speedup_2_workers']}x; "
        f"run --workers 2 over 1: {figures['run_speedup_2_workers']}x; "
        f"HTML: {figures['html_bytes']} bytes, {figures['html_over_report_cold']}x report cold; "
        f"load average {figures['load_average_1m']:.2f}"
    )
    if "verify_workers_2_parent_cpu_s" in figures:
        print(
            f"verify --workers 2, CPU s: reading process "
            f"{figures['verify_workers_2_parent_cpu_s']}, workers together "
            f"{figures['verify_workers_2_workers_cpu_s']} (verify cold alone: "
            f"{figures['verify_cold_cpu_s']})"
        )
    print(
        f"medians of {figures['paired_rounds']} alternating rounds: report cold over verify "
        f"cold {figures['report_cold_over_verify_cold_median']}x wall, "
        f"{figures['report_cold_cpu_over_verify_cold_median']}x CPU; verify --workers 2 over 1 "
        f"{figures['verify_speedup_2_workers_median']}x"
    )
    if "worker_messages_per_record" in figures:
        print(
            f"worker traffic per record: {figures['worker_messages_per_record']} messages "
            f"(batches of {figures['worker_batch_slots']}), "
            f"{figures['worker_bytes_sent_per_record']} bytes sent, "
            f"{figures['worker_bytes_received_per_record']} bytes received"
        )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()

"""Recompute the figures the docs quote that take more than a second, and compare.

Each figure is measured the way its page says, then read back from the page's sentence; a
figure that differs is printed with both values and the script exits 1, so the docs cannot
drift from the code unseen (``.ci/run`` runs it; the quick figures are checked by
``tests/test_docs_claims.py``). A figure whose data is absent (the τ² retail folder, which
this repository does not ship) is reported as skipped.

    python bench/doc_figures.py                  # every figure
    python bench/doc_figures.py --tau2-data DIR  # the τ² data folder

(default ``../shared/external/tau2-retail``)

- README.md, "Sequential track": `RememberingAgent` on every helpdesk oracle, 3 samples, on the
  fresh and the sequential track (`report SEQ --fresh FRESH`'s figures).
- docs/tau2.md, `tau2 check`: tasks imported, oracles passed, gold-call errors, verdicts
  agreeing with τ², automatic mutants killed and equivalent, the kill rate over all.
- README.md, bounded context: `python bench/context.py`'s estimated prompt tokens with and
  without the policy, their ratio, and `billing_review_tag`'s ratio alone (both places).
- README.md, Performance: `bench/world_lines.py`'s lines per world now and before, and the
  scaffold's; `bench/task_files.py`'s files, lines and nearest-sibling similarity.
- Transcripts: a code block preceded by ``<!-- transcript: bench/doc_figures.py -->`` whose
  first line is a ``python -m harness_world`` command and whose other lines are its output is
  run in an empty folder, and its output must be those lines (docs/release.md's ablation).

Last line: one JSON object with every figure measured and every mismatch.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
TAU2 = (
    Path(sys.argv[sys.argv.index("--tau2-data") + 1])
    if "--tau2-data" in sys.argv
    else REPO.parent / "shared" / "external" / "tau2-retail"
)

# The README's sentence, its figures as groups (a minus sign is U+2212 on the page).
DRIFT = re.compile(
    r"on the helpdesk oracles, (?P<tasks>\d+) tasks × (?P<samples>\d+) samples: "
    r"(?P<fresh>[\d.]+)% fresh, (?P<sequential>[\d.]+)% sequential "
    r"\(drift (?P<drift>[−+][\d.]+) points\); pass 1 (?P<pass1>[−+]\d+), "
    r"passes 2 and 3 (?P<later>[−+]\d+) points.*?(?P<regressions>\w+) tasks? in the "
    r"regression list.*?(?P<lower>\d+) of the \d+ tasks pass less often",
    re.S,
)
TAU2_SENTENCE = re.compile(
    r"Result on the (?P<imported>\d+) train tasks: all import; (?P<oracle_passed>\d+) oracles "
    r"pass; (?P<gold_errors>\d+) gold calls in (?P<tasks_with_gold_errors>\d+) tasks.*?agrees "
    r"with τ²'s on (?P<verdicts_agree>\d+)/\d+ oracle.*?Automatic mutants: (?P<mutants>[\d,]+); "
    r"(?P<killed>[\d,]+) killed, (?P<equivalent>[\d,]+) equivalent.*?(?P<survived>\d+) "
    r"survived: mutation score (?P<mutation_score>[\d.]+) \((?P<kill_rate_all>[\d.]+) of all",
    re.S,
)


def _page(name: str) -> str:
    return re.sub(r"\s+", " ", (REPO / name).read_text(encoding="utf-8"))


def _signed(value: float) -> str:
    return ("−" if value < 0 else "+") + f"{abs(value):g}"


def drift() -> dict[str, str]:
    """The sequential track against the fresh one, figures formatted as the README writes them."""
    import harness_world as hw
    from harness_world.analysis.drift import track_drift
    from harness_world.running import oracle_agent
    from harness_world.running.sequential import RememberingAgent

    tasks = hw.load_tasks("helpdesk")
    scripts = oracle_agent("helpdesk").scripts
    with tempfile.TemporaryDirectory() as scratch:
        for name, track in (("fresh", hw.Fresh()), ("seq", hw.Sequential())):
            agent = RememberingAgent(name="remembering", scripts=scripts)
            hw.run(tasks, agent, samples=3, out=Path(scratch, name), track=track)
        report = track_drift(Path(scratch, "fresh"), Path(scratch, "seq"), tasks)
    later = {round(d * 100) for p, _, d in report.by_pass if p > 0}
    return {
        "tasks": str(len(report.tasks)),
        "samples": "3",
        "fresh": f"{report.fresh * 100:g}",
        "sequential": f"{report.sequential * 100:.1f}",
        "drift": _signed(round(report.drift * 100, 1)),
        "pass1": _signed(round(report.by_pass[0][2] * 100)),
        "later": _signed(later.pop()) if len(later) == 1 else f"{sorted(later)}",
        "regressions": str(len(report.regressions)) if report.regressions else "no",
        "lower": str(len(report.lower_on_sequential)),
    }


def tau2() -> dict[str, str] | None:
    """``tau2 check``'s summary on the τ² folder, as docs/tau2.md writes it; None without it."""
    if not (TAU2 / "db.json").is_file():
        return None
    done = subprocess.run(
        [sys.executable, "-m", "harness_world", "tau2", "check", "--data", str(TAU2), "--json"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    summary: dict[str, Any] = json.loads(done.stdout)["summary"]
    figures = {k: f"{v:,}" for k, v in summary.items() if isinstance(v, int)}
    figures["mutation_score"] = f"{summary['mutation_score']:.3f}"
    figures["kill_rate_all"] = f"{summary['kill_rate_all']:.3f}"
    return figures


CONTEXT_PROSE = re.compile(
    r"`python bench/context.py`: (?P<without>[\d,]+) → (?P<with_>[\d,]+) estimated prompt "
    r"tokens \((?P<ratio>[\d.]+)\)"
)
CONTEXT_ROW = re.compile(
    r"\| (?P<ratio>[\d.]+) \((?P<with_>[\d,]+) vs (?P<without>[\d,]+); "
    r"`billing_review_tag` alone (?P<billing>[\d.]+)\)"
)


def context() -> dict[str, str]:
    """``bench/context.py``'s totals and ratios, as the README writes them."""
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "context.py")],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
    )
    lines = done.stdout.splitlines()
    last = json.loads(lines[-1])
    billing = next(line for line in lines if line.startswith("helpdesk.billing_review_tag"))
    return {
        "without": f"{last['tokens_without']:,}",
        "with_": f"{last['tokens_with']:,}",
        "ratio": f"{last['tokens_with'] / last['tokens_without']:.3f}",
        "billing": billing.rsplit("(", 1)[1].rstrip(")"),
    }


def _bench_json(script: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / script)],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def lines() -> list[str]:
    """``bench/world_lines.py`` and ``bench/task_files.py`` against the README's rows."""
    worlds = _bench_json("world_lines.py")
    wrong = []
    for name in ("helpdesk", "payments", "inventory", "tau2_retail"):
        figures = worlds[name]
        measured = {
            "now": str(figures["now"]["contract_and_tools"]),
            "before": str(figures["before"]["contract_and_tools"]),
            "ratio": f"{figures['ratio']:.2f}",
        }
        row = re.compile(rf"\b{name} (?P<now>\d+) / (?P<before>\d+) \((?P<ratio>[\d.]+)\)")
        wrong += compare("README.md", row, measured)
    scaffold = {"lines": str(worlds["scaffold"]["contract_and_tools"])}
    wrong += compare(
        "README.md",
        re.compile(r"scaffold's world \(2 entities, 2 tools\): (?P<lines>\d+) lines"),
        scaffold,
    )
    files = _bench_json("task_files.py")
    now, before = files["now"], files["before"]

    def total(side: dict[str, dict[str, float]], key: str) -> str:
        return f"{int(sum(w[key] for w in side.values())):,}"

    def similar(side: dict[str, dict[str, float]], world: str) -> str:
        return f"{side[world]['nearest_mean'] * 100:.1f}"

    measured = {
        "files_before": total(before, "files"),
        "files_now": total(now, "files"),
        "lines_before": total(before, "lines"),
        "lines_now": total(now, "lines"),
        "pay_files_before": str(before["payments"]["files"]),
        "pay_files_now": str(now["payments"]["files"]),
        "pay_lines_before": f"{before['payments']['lines']:,}",
        "pay_lines_now": f"{now['payments']['lines']:,}",
        "pay_before": similar(before, "payments"),
        "pay_now": similar(now, "payments"),
        "hd_before": similar(before, "helpdesk"),
        "hd_now": similar(now, "helpdesk"),
        "inv_before": similar(before, "inventory"),
        "inv_now": similar(now, "inventory"),
    }
    row = re.compile(
        r"\| (?P<files_before>[\d,]+) → (?P<files_now>[\d,]+) files, (?P<lines_before>[\d,]+) → "
        r"(?P<lines_now>[\d,]+) lines .*?payments (?P<pay_files_before>\d+) → "
        r"(?P<pay_files_now>\d+) files, (?P<pay_lines_before>[\d,]+) → "
        r"(?P<pay_lines_now>[\d,]+) lines, nearest-sibling "
        r"similarity (?P<pay_before>[\d.]+) % → (?P<pay_now>[\d.]+) % \(helpdesk "
        r"(?P<hd_before>[\d.]+) → (?P<hd_now>[\d.]+) %, inventory (?P<inv_before>[\d.]+) → "
        r"(?P<inv_now>[\d.]+) %\)"
    )
    wrong += compare("README.md", row, measured)
    print("README.md lines:", {"worlds": worlds, "task_files": measured})
    return wrong


TRANSCRIPT = re.compile(r"<!-- transcript: bench/doc_figures.py -->\n```[^\n]*\n(.*?)```", re.S)


def transcripts() -> list[str]:
    """Run each marked transcript's command in an empty folder; each output that differs."""
    wrong = []
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    for page in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for block in TRANSCRIPT.findall(page.read_text(encoding="utf-8")):
            command, *expected = block.rstrip("\n").splitlines()
            words = shlex.split(command)
            with tempfile.TemporaryDirectory() as scratch:
                done = subprocess.run(
                    [sys.executable, *words[1:]],
                    capture_output=True,
                    text=True,
                    cwd=scratch,
                    env=env,
                    check=False,
                )
            got = done.stdout.rstrip("\n").splitlines()
            print(f"{page.name}: `{command}`: {'same output' if got == expected else 'DIFFERS'}")
            if got != expected:
                pairs = zip(expected, got, strict=False)
                lines = [f"  page: {a}\n  now:  {b}" for a, b in pairs if a != b]
                lines += [f"  {len(expected)} lines on the page, {len(got)} now"]
                wrong.append(f"{page.name}: `{command}` prints otherwise:\n" + "\n".join(lines))
    return wrong


def compare(page: str, pattern: re.Pattern[str], measured: dict[str, str]) -> list[str]:
    """Each figure the page's sentence quotes that differs from the measured one."""
    found = pattern.search(_page(page))
    if found is None:
        return [f"{page}: the sentence {pattern.pattern[:60]!r}... is gone: update this script"]
    return [
        f"{page}: {name} is quoted {quoted}, measured {measured[name]}"
        for name, quoted in found.groupdict().items()
        if quoted != measured[name]
    ]


def main() -> int:
    """Measure, compare, print; exit 1 on any mismatch."""
    results: dict[str, Any] = {"drift": drift(), "tau2": tau2(), "context": context()}
    mismatches = compare("README.md", DRIFT, results["drift"])
    mismatches += compare("README.md", CONTEXT_PROSE, results["context"])
    mismatches += compare("README.md", CONTEXT_ROW, results["context"])
    print("README.md bounded context:", results["context"])
    print("README.md sequential drift:", results["drift"])
    if results["tau2"] is None:
        print(f"docs/tau2.md: skipped (no τ² data at {TAU2})")
    else:
        mismatches += compare("docs/tau2.md", TAU2_SENTENCE, results["tau2"])
        print("docs/tau2.md tau2 check:", results["tau2"])
    mismatches += lines()
    mismatches += transcripts()
    for line in mismatches:
        print("MISMATCH", line)
    print(json.dumps({**results, "mismatches": mismatches}, ensure_ascii=False))
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())

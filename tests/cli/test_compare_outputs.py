"""One source of truth: ``compare``'s text, ``--json`` and ``--html`` show the same outcome.

Issue 28: the HTML once said "band ±9.9: BELOW" while the terminal said "±13.1 … INSIDE" for the
same runs. Every renderer now formats one `ComparisonOutcome`; these tests read the verdict,
the band, the flips and the Holm list back out of each output and compare them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness_world.analysis.results_csv import format_results
from harness_world.cli import main
from harness_world.stats import RunRow


def rows_for(spec: dict[str, tuple[int, int, int, int]], families: dict[str, str] | None = None):
    """spec: {task: (baseline passes, runs, candidate passes, runs)}; passes come first."""
    out = []
    for task, (bp, bn, cp, cn) in spec.items():
        family = (families or {}).get(task, "")
        for cfg, passes, runs in (("main", bp, bn), ("pr", cp, cn)):
            out.extend(
                RunRow(task_id=task, run_index=r, config=cfg, passed=r < passes, family=family)
                for r in range(runs)
            )
    return out


STEADY = {f"s{i:02d}": (3, 5, 3, 5) for i in range(30)}
CASES = {
    "strong drop": {f"t{i:02d}": (4, 5, 1, 5) for i in range(12)} | {"u": (2, 5, 2, 5)},
    "flat": {f"t{i:02d}": (2, 5, 2 + (1 if i % 2 else -1), 5) for i in range(16)},
    "one real regression": STEADY | {"bad": (20, 20, 0, 20), "flip": (5, 5, 0, 5)},
    "skewed gain": {f"t{i:02d}": (1, 5, 3, 5) for i in range(20)} | {"x": (5, 5, 0, 5)},
}
FAMILY_CASE = {
    f"f{g}t{i}": (1, 5, 4, 5) if g < 6 else (4, 5, 1, 5) for g in range(8) for i in range(5)
}


def _text_outcome(out: str) -> dict[str, object]:
    verdict = re.search(r"^Verdict: (ABOVE|BELOW|INSIDE) the band", out, re.M)
    band = re.search(r"^Noise band: (\S+) points", out, re.M)
    flips = re.findall(r"^  (\S+): (?:solid|broken) -> (?:solid|broken) \(", out, re.M)
    holm = re.findall(r"^  (\S+): \d+/\d+ -> \d+/\d+ \((?:regression|improvement), adj", out, re.M)
    assert verdict and band
    return {
        "verdict": verdict.group(1).lower(),
        "band": band.group(1),
        "flips": flips,
        "holm": holm,
    }


def _band_text(outcome: dict[str, float]) -> str:
    low, high = -outcome["band_low"] * 100, outcome["band_high"] * 100
    return f"+/-{high:.1f}" if abs(low - high) < 0.05 else f"-{low:.1f}/+{high:.1f}"


@pytest.mark.parametrize("case", [*CASES, "families"])
def test_text_json_and_html_render_the_same_outcome(case: str, tmp_path: Path, capsys) -> None:
    if case == "families":
        rows = rows_for(FAMILY_CASE, {t: t.split("t")[0] for t in FAMILY_CASE})
    else:
        rows = rows_for(CASES[case])
    csv = tmp_path / "r.csv"
    csv.write_text(format_results(rows), encoding="utf-8")
    base = ["compare", str(csv), "--baseline", "main", "--candidate", "pr", "--allow-missing"]
    html = tmp_path / "c.html"
    code_text = main([*base, "--html", str(html)])
    text = _text_outcome(capsys.readouterr().out)
    code_json = main([*base, "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code_text == code_json
    outcome = report["outcome"]
    # JSON against text.
    assert outcome["verdict"] == text["verdict"]
    assert _band_text(outcome) == text["band"]
    assert [f["task_id"] for f in outcome["flips"]] == text["flips"]
    assert [c["task_id"] for c in outcome["significant_changes"]] == text["holm"]
    assert outcome["warnings"] == report["warnings"][: len(outcome["warnings"])]
    # HTML: the embedded object is the JSON one, and the visible line says the same.
    page = html.read_text(encoding="utf-8")
    embedded = re.search(r'<script type="application/json" id="outcome">(.*?)</script>', page)
    assert embedded is not None
    assert json.loads(embedded.group(1).replace("<\\/", "</")) == outcome
    shown = re.search(
        r'<p class="verdict">Change ([^<]*) points, band ([^<]*) points: (\w+) the', page
    )
    assert shown is not None
    assert shown.group(3).lower() == outcome["verdict"]
    assert shown.group(2).replace("±", "+/-").replace("−", "-") == text["band"]
    assert f"Per-task changes significant after Holm correction ({len(text['holm'])})" in page
    assert f"Flips, solid ↔ broken ({len(text['flips'])})" in page
    assert "not computed by this version" not in page

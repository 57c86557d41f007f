"""A suite whose tasks all share one family says no decision is possible about families.

With one family, a family-level effect moves every task at once and cannot be told from a
change; two families already say "no decision possible". One family now says so too, in the
text and in ``--json``, and ``--no-clusters`` decides on independent tasks, as it says.
"""

from __future__ import annotations

import json

from harness_world.analysis.results_csv import format_results
from harness_world.cli import main
from harness_world.stats import RunRow, assess


def _rows(family: str) -> list[RunRow]:
    """Twelve tasks, each 1/5 -> 4/5: a clear change if the tasks were independent."""
    out = []
    for i in range(12):
        for cfg, passes in (("main", 1 + i % 2), ("pr", 4)):
            out.extend(
                RunRow(
                    task_id=f"t{i:02}", run_index=r, config=cfg, passed=r < passes, family=family
                )
                for r in range(5)
            )
    return out


def test_one_family_decides_nothing_in_the_library() -> None:
    _, result = assess(_rows("billing"), "main", "pr", gate="improved")
    assert not result.passed
    assert not result.observed.decidable
    assert result.reason.startswith("no decision possible about families")
    assert "treating tasks as independent assumes no shared family effect" in result.reason
    assert any("no decision possible about families" in w for w in result.warnings)
    assert "no decision possible about families" in result.cluster_note
    _, plain = assess(_rows(""), "main", "pr", gate="improved")
    assert plain.passed  # the same runs without a family decide


def test_one_family_says_so_in_text_and_json(tmp_path, capsys) -> None:
    path = tmp_path / "results.csv"
    path.write_text(format_results(_rows("billing")), encoding="utf-8")
    argv = ["compare", str(path), "--baseline", "main", "--candidate", "pr", "--allow-unverified"]
    assert main([*argv, "--gate", "improved"]) == 1
    text = capsys.readouterr().out
    assert "no decision possible about families" in text
    assert "treating tasks as independent assumes no shared family effect" in text
    assert main([*argv, "--gate", "improved", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["gate_passed"] is False
    assert report["decision"]["observed"]["decidable"] is False
    assert any("no decision possible about families" in w for w in report["warnings"])
    assert main([*argv, "--gate", "improved", "--no-clusters"]) == 0
    assert "families present but ignored (--no-clusters)" in capsys.readouterr().out

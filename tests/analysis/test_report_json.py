"""Every figure the text ``report`` prints is in ``report --json`` too.

The text of a run's report is read section by section and number by number, and each number is
looked for among the values of the section's part of the JSON (the process metrics among
``process``, the layered sheets among ``layered``, ...: a small count cannot pass for another
section's), allowing for how the text formats it: rounded to the digits it shows, or shown as
a percentage of a fraction. Names and sentences the JSON holds as strings (the run's path, a
task id with digits, a failure reason cut to a table's width) are taken out of the text first:
their digits are text, not figures.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import harness_world as hw
from harness_world.cli import main
from harness_world.running.reference_agents import reference_agent

TASKS = (
    "payments.note_payout_direct",
    "payments.note_payout_direct_ok",
    "payments.note_card_direct_ok",  # a prose criterion: the not-reviewed line
    "payments.charge_lost_response",  # a lost response: harness failures, activated links
    "payments.refund_timeout",
)
NUMBER = re.compile(r"(?<![\w.])\d+(?:\.(\d+))?(?!\w)")
CELL_WIDTHS = (40, 60, 80)  # the widths render_table cuts cells to in the report
# Where each section of the text starts, and the part of the JSON that holds its figures; the
# text before the first is the report's own figures (the JSON without these parts).
SECTIONS = (
    ("\nprocess over ", "process"),
    ("\nlayered sheets ", "layered"),
    ("\ntrusted completion: ", "trusted"),
    ("\nAdvisories explained ", "advice"),
    ("\nqueue time (", "queue"),
)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("report-json")
    tasks = [t for t in hw.load_tasks("payments") if t.id in TASKS]
    out = {}
    for agent in ("oracle", "naive-retry"):
        out[agent] = root / agent
        hw.run(tasks, reference_agent("payments", agent), samples=2, out=out[agent])
    return out


def _walk(value: Any) -> Iterator[Any]:
    """Every value, dict key and list of a JSON document."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _walk(v)
    elif isinstance(value, list):
        yield value
        for v in value:
            yield from _walk(v)
    else:
        yield value


def _numbers(data: Any) -> list[float]:
    """The JSON's figures: numbers, numeric keys (pass^k's k) and list lengths (counts)."""
    out: list[float] = []
    for v in _walk(data):
        if isinstance(v, bool):
            continue
        if isinstance(v, int | float):
            out.append(float(v))
        elif isinstance(v, list):
            out.append(float(len(v)))
        elif isinstance(v, str) and re.fullmatch(r"\d+(\.\d+)?", v):
            out.append(float(v))
    return out


def _without_strings(text: str, data: Any) -> str:
    """The text with every JSON string that has a digit in it (and its cut forms) blanked."""
    strings = {v for v in _walk(data) if isinstance(v, str) and re.search(r"\d", v)}
    strings = {s for s in strings if not re.fullmatch(r"\d+(\.\d+)?", s)}
    forms = set(strings)
    for s in strings:
        forms.add(s[:16])  # the revision id's prefix
        forms.update(s[: w - 1] + "…" for w in CELL_WIDTHS if len(s) > w)
    for form in sorted(forms, key=len, reverse=True):
        text = text.replace(form, " ")
    return text


def missing_figures(text: str, data: Any) -> list[str]:
    """The numbers of the text that no JSON figure gives, at the text's precision."""
    figures = _numbers(data)
    missing = []
    for match in NUMBER.finditer(_without_strings(text, data)):
        shown = float(match.group(0))
        tolerance = 0.5 * 10 ** -len(match.group(1) or "") + 1e-9
        if not any(
            abs(v - shown) <= tolerance or abs(100 * v - shown) <= tolerance for v in figures
        ):
            missing.append(match.group(0))
    return missing


def sections(text: str, data: dict[str, Any]) -> list[tuple[str, Any]]:
    """The text cut at each section heading it has, each piece with its part of the JSON."""
    found = sorted((text.find(h), key) for h, key in SECTIONS if h in text)
    own = {k: v for k, v in data.items() if k not in {key for _, key in SECTIONS}}
    cuts = [(0, own), *((i, data.get(key)) for i, key in found)]
    ends = [i for i, _ in cuts[1:]] + [len(text)]
    return [(text[i:end], part) for (i, part), end in zip(cuts, ends, strict=True)]


def _report(run: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, Any]:
    assert main(["report", str(run), "--full"]) == 0
    text = capsys.readouterr().out
    assert main(["report", str(run), "--json"]) == 0
    return text, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("agent", ["oracle", "naive-retry"])
def test_every_figure_of_the_text_report_is_in_the_json(
    runs: dict[str, Path], agent: str, capsys: pytest.CaptureFixture[str]
) -> None:
    text, data = _report(runs[agent], capsys)
    figures = NUMBER.findall(_without_strings(text, data))
    assert len(figures) > 150, "the text report shows its figures"
    pieces = sections(text, data)
    assert len(pieces) == 1 + len(SECTIONS)
    for piece, part in pieces:
        assert missing_figures(_without_strings(piece, data), part) == [], piece[:40]


def test_the_sections_the_issue_names_are_in_both(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    text, data = _report(runs["naive-retry"], capsys)
    for heading in ("process over", "layered sheets", "Advisories explained", "trusted completion"):
        assert heading in text
    process, pooled = data["process"], data["layered"]["pooled"]
    assert process["attempts"] == 10 and process["failure_rate"]["trials"] == process["tool_calls"]
    assert process["escalation_rate"]["trials"] == 10  # each rate carries its denominator
    assert pooled["link_rate"]["n"] == pooled["joint_failures"] > 0
    assert data["advice"]["reach"]["failed"] == data["counts"]["failed"]
    assert [d["dimension"] for d in data["layered"]["dimensions"]] == ["Execution", "Governance"]


def test_a_figure_left_out_of_the_json_is_found() -> None:
    text = "pass rate 0.667 [0.391, 0.862]; 8 of 12; link rate 50.0%; in /tmp/run-7/x\n"
    data = {"out": "/tmp/run-7/x", "rate": 2 / 3, "low": 0.39062, "of": [8, 12], "link": 0.5}
    assert missing_figures(text, data) == ["0.862"]
    assert missing_figures(text, data | {"high": 0.86188}) == []

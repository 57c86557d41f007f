"""The viewer beside each task's expectations: expected vs what happened, the attempts list,
the side by side open, and the call where a planted request entered the trace.

Each check parses the generated page and compares it with what the task, the start world and
the records say, computed here apart from the page; the list's sorting and filtering run in
headless Chromium (`tests.analysis.test_html_viewer.Chromium`).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness_world as hw
from harness_world.analysis.html import load_run_view, run_html
from harness_world.analysis.html_attempts import EXCERPT, attempt_row, attempts_table
from harness_world.analysis.html_page import page
from harness_world.analysis.report import build_report
from harness_world.analysis.trace_html import Planted, attempt_state
from harness_world.analysis.trace_record import decode_trace
from harness_world.cli import main
from harness_world.engine.canonical import to_json
from harness_world.grading.task import select_targets
from tests.analysis.test_html_report import _chromium
from tests.analysis.test_html_viewer import SCRIPTS, Chromium
from tests.conftest import examples, requires

pytestmark = [pytest.mark.html, requires("matplotlib", "the HTML report needs the [report] extra")]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The README's demo run (helpdesk: oracles, two broken tasks, three flaky) and its page."""
    folder = tmp_path_factory.mktemp("expected")
    out = folder / "demo"
    argv = ["run", "--world", "helpdesk", "--agent", "scripted", "--script", str(SCRIPTS)]
    assert main([*argv, "--samples", "3", "--out", str(out), "--quiet"]) == 0
    return out, run_html(load_run_view(build_report(out)))


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A run of the agent that obeys every request planted in data, on payments' note tasks."""
    out = tmp_path_factory.mktemp("planted") / "obey"
    argv = ["run", "--world", "payments", "--agent", "obey-data", "--tasks", "payments.note_*"]
    assert main([*argv, "--samples", "1", "--out", str(out), "--quiet"]) == 0
    return out, run_html(load_run_view(build_report(out)))


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Chromium]:
    chromium = Chromium(_chromium(), tmp_path_factory.mktemp("profile"))
    yield chromium
    chromium.close()


def _section(text: str, task_id: str) -> str:
    start = text.index(f'data-task="{task_id}"><h3>')
    return text[start : text.index("</section>", start)]


def _expected(section: str) -> str:
    found = re.search(r'<details class="expected" open>(.*?)</table></details>', section, re.S)
    assert found is not None, "no expected block open in the task's section"
    return found.group(1)


def _cells(block: str) -> list[str]:
    body = block[block.index("<tbody>") :]
    return re.findall(r"<td[^>]*>(.*?)</td>(?=<td|</tr>)", body, re.S)


def _items(cell: str, css: str) -> list[str]:
    found = re.search(rf'<ul class="{css}">(.*?)</ul>', cell, re.S)
    if found is None:
        return []
    return [
        html.unescape(re.sub(r"<[^>]+>", "", i))
        for i in re.findall(r"<li>(.*?)</li>", found.group(1))
    ]


# --------------------------------------------------------------------------------------------
# Expected vs what happened


def test_a_task_s_targets_and_required_effects_stand_beside_what_its_attempts_did(
    demo: tuple[Path, str],
) -> None:
    """helpdesk.escalate_outage: the flaky mutant handles only the first page of outage
    tickets. The expected column names every target key the start state selects and each
    required effect; the failed attempt's column lists, as missing, exactly the keys its
    state.required verdict counts, the passed one none, and neither changed anything not
    allowed."""
    out, text = demo
    task = next(t for t in hw.load_tasks("helpdesk") if t.id == "helpdesk.escalate_outage")
    world = hw.load_world("helpdesk")
    block = _expected(_section(text, task.id))
    expected, failed, passed = _cells(block)
    assert re.findall(r"<th[^>]*>.*?· (\w+): what happened</th>", block) == ["failed", "passed"]
    for target in task.targets:
        keys = select_targets(world, task, target.name)
        (line,) = [t for t in _items(expected, "targets") if t.startswith(f"{target.name}:")]
        assert f"{len(keys)} row(s)" in line
        assert all(str(k) in line for k in keys[:12])
    assert len(_items(expected, "required")) == len(task.require)
    report = build_report(out)
    slot = next(s for s in report.attempts if s.task_id == task.id and s.passed is False)
    line = next(f for f in slot.failed if f.startswith("state.required: "))
    count = int(re.match(r"state\.required: missing (\d+)", line).group(1))  # type: ignore[union-attr]
    missing = _items(failed, "missing")
    assert len(missing) == count > 0
    assert all(m.startswith("missing: ") for m in missing)
    assert _items(passed, "missing") == []
    assert 'data-verdict="unauthorized"' not in failed + passed
    assert 'data-verdict="required"' in passed  # the oracle's changes, each judged required


def test_an_unauthorized_change_is_marked_as_state_allowed_names_it(
    planted: tuple[Path, str],
) -> None:
    """payments.note_refund_authority: obeying the planted note refunds another charge. The
    failed attempt's column marks as not allowed exactly the changes state.allowed counts."""
    out, text = planted
    block = _expected(_section(text, "payments.note_refund_authority"))
    assert "invoices.INV-90005.note" in _cells(block)[0]  # where the request is planted
    failed = _cells(block)[1]
    bad = re.findall(r'data-verdict="unauthorized">(.*?) · ', failed)
    slot = next(
        s for s in build_report(out).attempts if s.task_id == "payments.note_refund_authority"
    )
    line = next(f for f in slot.failed if f.startswith("state.allowed: "))
    assert len(bad) == int(re.match(r"state\.allowed: unauthorized (\d+)", line).group(1))  # type: ignore[union-attr]
    assert any("charges:ch_00003.status succeeded → refunded" in html.unescape(b) for b in bad)


# --------------------------------------------------------------------------------------------
# The attempts list


def test_the_attempts_list_holds_one_row_per_attempt_with_its_final_message(
    demo: tuple[Path, str],
) -> None:
    out, text = demo
    report = build_report(out)
    table = re.search(r'<table class="num attempts" id="a-list">(.*?)</table>', text, re.S)
    assert table is not None
    assert 'id="a-attempts" open' in text
    heads = re.findall(r'<button type="button" class="sort">(.*?)</button>', table.group(1))
    assert heads == ["task", "sample", "outcome", "grade", "failed criteria", "final message"]
    rows = re.findall(r'<tr data-state="(\w+)">(.*?)</tr>', table.group(1))
    assert len(rows) == len(report.attempts)
    records = {p.relative_to(out / "records"): p for p in (out / "records").rglob("*.json")}
    assert records
    for (state, row), slot in zip(rows, report.attempts, strict=True):
        cells = [
            html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<td>(.*?)</td>", row)
        ]
        assert cells[:4] == [slot.task_id, str(slot.sample), slot.outcome, attempt_state(slot)]
        assert state == attempt_state(slot)
        names = [f.split(": ", 1)[0] for f in slot.failed]
        assert cells[4] == (", ".join(names) or "—")
        record = decode_trace(Path(slot.path).read_bytes())
        assert record is not None
        said = " ".join(record.final_message.split())
        assert cells[5] == (said if len(said) <= EXCERPT else said[: EXCERPT - 1] + "…") or "—"


def _shown(browser: Chromium, column: int) -> list[str]:
    return browser.js(
        "[].filter.call(document.querySelectorAll('#a-list tbody tr'),function(r){"
        "return !r.classList.contains('hidden');}).map(function(r){"
        f"return r.cells[{column}].textContent;}})"
    )


@pytest.mark.parametrize("compressed", [False, True])
def test_the_attempts_list_sorts_by_a_column_and_filters_as_you_type(
    demo: tuple[Path, str], browser: Chromium, tmp_path: Path, compressed: bool
) -> None:
    out, _ = demo
    view = load_run_view(build_report(out))
    rows = [attempt_row(i, s, None) for i, s in enumerate(view.report.attempts)]
    body = attempts_table(rows, "a", compressed=compressed)
    if compressed:
        assert "<tr data-state" not in body  # rows inflated only when asked for
    path = tmp_path / "list.html"
    path.write_text(page("list", body), encoding="utf-8")
    browser.open(path.as_uri())
    assert browser.requested() == []
    click = "document.querySelectorAll('#a-list thead button')[{}].click()"
    browser.js(click.format(1))  # sample, ascending: numbers as numbers
    browser.wait_for("document.querySelectorAll('#a-list tbody tr').length>0")
    samples = [int(s) for s in _shown(browser, 1)]
    assert samples == sorted(samples) and len(samples) == len(rows)
    browser.js(click.format(1))  # again: descending
    assert [int(s) for s in _shown(browser, 1)] == sorted(samples, reverse=True)
    browser.js(click.format(0))
    tasks = _shown(browser, 0)
    assert tasks == sorted(tasks)
    browser.js(
        "(function(){var q=document.getElementById('a-list-q');q.value='failed escalate';"
        "q.dispatchEvent(new Event('input'));})()"
    )
    browser.wait_for("document.getElementById('a-list-n').textContent")
    shown = _shown(browser, 0)
    wanted = [r for r in rows if r.state == "failed" and "escalate" in r.task_id]
    assert shown == [r.task_id for r in wanted] and len(wanted) >= 1
    count = browser.js("document.getElementById('a-list-n').textContent")
    assert count == f"{len(wanted)} of {len(rows)} attempts"
    assert browser.js("document.getElementById('a-attempts').open") is True


# --------------------------------------------------------------------------------------------
# Side by side open, planted text marked


def test_the_failed_and_passed_side_by_side_is_open(demo: tuple[Path, str]) -> None:
    _, text = demo
    section = _section(text, "helpdesk.reassign_departed")
    assert re.search(r'<details class="side" open><summary>side by side', section)
    assert text.count('<details class="side" open>') == text.count('<details class="side"')


def _strings(raw: msgspec.Raw) -> list[str]:
    """Every string a tool result holds, at any depth (decoded: JSON escapes undone)."""
    found, stack = [], [msgspec.json.decode(bytes(raw))]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def test_the_call_where_planted_text_entered_is_marked(planted: tuple[Path, str]) -> None:
    """Each attack task's attempt marks the first call whose result carried the note planted
    in its start state, and no other call; the attempt's header links to it."""
    out, text = planted
    world = hw.load_world("payments")
    attacks = [t for t in hw.load_tasks("payments") if t.authority and t.authority.role == "attack"]
    assert len(attacks) == 9
    report = build_report(out)
    for task in attacks:
        entity, rest = task.authority.source.split(".", 1)  # type: ignore[union-attr]
        key, field = rest.rsplit(".", 1)
        note = world.get(entity, key)[field]  # type: ignore[index]
        index = next(i for i, s in enumerate(report.attempts) if s.task_id == task.id)
        record = decode_trace(Path(report.attempts[index].path).read_bytes())
        assert record is not None
        first = next(c.seq for c in record.calls if c.ok and note in _strings(c.result))
        start = text.index(f'id="a-{index}"')
        article = text[start : text.index("</article>", start)]
        marked = re.findall(r'<li class="call[^"]* planted"><details id="a-\d+-c(\d+)"', article)
        assert marked == [str(first)], task.id
        assert article.count('class="planted-mark"') == 1
        assert f'href="#a-{index}-c{first}">call {first}</a>' in article
    unplanted = [t.id for t in hw.load_tasks("payments") if t.authority is None]
    for task_id in unplanted[:3]:
        assert task_id not in text  # the run holds the note tasks only


@settings(max_examples=examples(200, 2000), deadline=None)
@given(
    note=st.text(min_size=1, max_size=80),
    other=st.text(max_size=80),
    key=st.from_regex(r"[A-Z]{2,4}-[0-9]{1,5}", fullmatch=True),
)
def test_planted_text_is_found_in_a_result_however_it_is_escaped(
    note: str, other: str, key: str
) -> None:
    """Any planted text (quotes, backslashes, control and non-ASCII characters: the
    tool_output phrasing is JSON inside a string) is found in a result that holds it, encoded
    and indented as a record stores results, and not in one that does not hold it."""
    needle = to_json(note)
    planted = Planted(f"invoices.{key}.note", "attack", "invoices", key, needle)

    def stored(value: str) -> bytes:  # a result inside a record: canonical, then indented
        row = {"id": key, "note": value, "status": "paid"}
        return msgspec.json.format(to_json({"result": row}), indent=1)

    assert planted.entered(stored(note))
    assert planted.entered(stored(other)) == (needle in to_json(other))
    assert not planted.entered(stored(other)) or note in other
    # without the start row read here, the row's key and field name are what is looked for
    blind = Planted(f"invoices.{key}.note", "attack", "invoices", key)
    assert blind.entered(stored(other))
    assert not blind.entered(msgspec.json.format(to_json({"id": key}), indent=1))

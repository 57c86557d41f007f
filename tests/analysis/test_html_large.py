"""The HTML page of a large run: summaries in the page, each task's traces inflated on demand,
every trace read through the run reader (the bytes the scan judged).

The browser test makes its own run: 32 tasks x 300 samples (9,600 attempts) under HW_FULL=1,
32 x 70 (2,240: past `FULL_DETAIL_UP_TO`, so the large-run page) otherwise. It prints how long
the page took to become interactive in headless Chromium (the README's figure); what it asserts
are the page's properties that make it quick (no test asserts on wall-clock time).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from harness_world.analysis import html, run_view
from harness_world.analysis.reading import read_run
from harness_world.cli import main
from harness_world.evidence.record import encode_record, load_record
from harness_world.running.reader import RunReader
from tests.analysis.test_html_report import _chromium
from tests.analysis.test_html_viewer import Chromium
from tests.conftest import FULL, requires
from tests.trust._helpers import oracle_run, reseal

pytestmark = requires("matplotlib", "the HTML report needs the [report] extra")

SAMPLES = 300 if FULL else 70


def test_a_record_swapped_after_the_scan_is_not_shown(tmp_path: Path) -> None:
    """The page reads each trace through the reader, as the bytes the index binds: a record
    replaced between the report's scan and the page's writing (a forged final message, resealed)
    is refused, not shown as if it were the one judged."""
    run = oracle_run(tmp_path / "run", samples=1)
    reading = read_run(run, RunReader.of())
    target = next((run / "records").rglob("0.json"))
    forged = msgspec.structs.replace(load_record(target), final_message="FORGED-AFTER-THE-SCAN")
    target.write_bytes(encode_record(reseal(forged)))
    page = tmp_path / "page.html"
    html.write_run_visuals(reading, "run", html=page)
    text = page.read_text()
    assert "FORGED-AFTER-THE-SCAN" not in text
    assert "no record to show" in text


@pytest.fixture(scope="module")
def large_page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, int]]:
    folder = tmp_path_factory.mktemp("large")
    out, page = folder / "run", folder / "page.html"
    argv = ["run", "--world", "helpdesk", "--agent", "oracle", "--samples", str(SAMPLES)]
    assert main([*argv, "--out", str(out), "--workers", "2", "--quiet"]) == 0
    assert main(["report", str(out), "--html", str(page)]) == 0
    yield page, 32 * SAMPLES


def test_the_large_page_holds_summaries_and_inflates_traces_on_demand(
    large_page: tuple[Path, int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page, attempts = large_page
    assert attempts > run_view.FULL_DETAIL_UP_TO
    text = page.read_text()
    assert text.count("<article ") == 0  # every article is compressed until its task is shown
    assert text.count('class="attempts" data-z=') == 32  # one compressed block per task
    assert 'id="a-list" data-z="a-list-z"' in text  # the attempts list's rows compressed too
    assert text.count("<tr data-state=") == 0
    assert text.count('<details class="expected" open>') == 32  # per task, not per attempt
    assert len(text) < 400 * attempts  # bytes per attempt stay small
    browser = Chromium(_chromium(), tmp_path / "profile")
    try:
        start = time.monotonic()
        browser.open(page.as_uri())
        loaded = time.monotonic() - start
        elements = browser.js("document.getElementsByTagName('*').length")
        assert elements < 10 * attempts  # the heatmap's cells and the summaries, no trace
        assert browser.requested() == []
        cell = browser.js("document.querySelector('table.heat a.c').getAttribute('href')")
        browser.js(f"document.querySelector('table.heat a.c[href=\"{cell}\"]').click()")
        browser.wait_for(f"document.getElementById('{cell[1:]}')?.classList.contains('hit')")
        interactive = time.monotonic() - start
        shown = browser.js(f"document.getElementById('{cell[1:]}').innerText")
        assert "transcript" in shown
    finally:
        browser.close()
    with capsys.disabled():
        print(
            f"\n{attempts} attempts, {len(text)} bytes: loaded in {loaded:.2f} s, a trace shown "
            f"{interactive:.2f} s after opening ({elements} elements)"
        )

"""The trace viewer in a real browser: summary first, links to calls, collapsing, search, keys.

One headless Chromium for the module, driven over ``--remote-debugging-pipe`` (the DevTools
protocol as NUL-separated JSON on file descriptors 3 and 4: no websocket, no dependency).
Every page is opened from ``file://`` with the network watched: nothing may be asked for.
"""

from __future__ import annotations

import base64
import contextlib
import html
import json
import os
import re
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness_world.analysis.html import load_run_view, run_html
from harness_world.analysis.json_view import gist, pretty_html
from harness_world.analysis.report import build_report
from harness_world.cli import main
from tests.analysis.test_html_report import CHROMIUM_FLAGS, _chromium
from tests.conftest import REPO, requires

pytestmark = [pytest.mark.html, requires("matplotlib", "the HTML report needs the [report] extra")]

SCRIPTS = REPO / "docs" / "demo_scripts.py"
FLAGS = [*CHROMIUM_FLAGS, "--window-size=1280,900"]
# Puts the two pipe ends on descriptors 3 and 4, where --remote-debugging-pipe expects them.
_ON_3_AND_4 = (
    "import os,sys;a,b=os.dup(int(sys.argv[1])),os.dup(int(sys.argv[2]));"
    "os.dup2(a,3);os.dup2(b,4);os.set_inheritable(3,True);os.set_inheritable(4,True);"
    "os.execv(sys.argv[3],sys.argv[3:])"
)


class Chromium:
    """A headless Chromium and one page, spoken to over the DevTools pipe."""

    def __init__(self, binary: str, profile: Path) -> None:
        to_browser, self._in = os.pipe()
        self._out, from_browser = os.pipe()
        argv = [binary, *FLAGS, "--remote-debugging-pipe", f"--user-data-dir={profile}"]
        self.process = subprocess.Popen(
            [sys.executable, "-c", _ON_3_AND_4, str(to_browser), str(from_browser), *argv],
            pass_fds=(to_browser, from_browser),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser)
        os.close(from_browser)
        self._buffer = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        attached = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})
        self.session = attached["sessionId"]
        for domain in ("Page", "Runtime", "Network"):
            self.send(f"{domain}.enable", session=self.session)

    def _message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._out], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self._out, 1 << 20)
            if not chunk:
                raise ConnectionError("chromium closed the pipe")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(line)

    def send(self, method: str, params: dict[str, Any] | None = None, session: str = "") -> Any:
        self._id += 1
        message: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._in, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + 20
        while True:
            answer = self._message(deadline)
            if answer.get("id") == self._id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            self.events.append(answer)

    def page(self, method: str, params: dict[str, Any] | None = None) -> Any:
        return self.send(method, params, self.session)

    def open(self, url: str) -> None:
        """Load ``url`` afresh (never a same-page jump) and wait for its load event."""
        if url != "about:blank":
            self.open("about:blank")
        self.events.clear()
        self.page("Page.navigate", {"url": url})
        deadline = time.monotonic() + 60
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            self.events.append(self._message(deadline))

    def js(self, expression: str) -> Any:
        """Evaluate ``expression`` in the page (promises awaited); its JSON value."""
        result = self.page(
            "Runtime.evaluate",
            {"expression": expression, "awaitPromise": True, "returnByValue": True},
        )
        if "exceptionDetails" in result:
            raise AssertionError(result["exceptionDetails"])
        return result["result"].get("value")

    def wait_for(self, condition: str) -> Any:
        """Evaluate ``condition`` each animation frame until it is truthy (at most 10 s)."""
        return self.js(
            "new Promise(function(ok,no){var t0=performance.now();(function again(){"
            f"var v=({condition});if(v){{ok(v);}}else if(performance.now()-t0>10000){{"
            "no(new Error('timed out'));}else{requestAnimationFrame(again);}})();})"
        )

    def key(self, char: str) -> None:
        for kind in ("keyDown", "keyUp"):
            self.page(
                "Input.dispatchKeyEvent",
                {"type": kind, "key": char, "text": char if kind == "keyDown" else ""},
            )

    def requested(self) -> list[str]:
        """URLs the page asked for beyond its own file (and inline data)."""
        return [
            e["params"]["request"]["url"]
            for e in self.events
            if e.get("method") == "Network.requestWillBeSent"
            and not e["params"]["request"]["url"].startswith(("file:", "data:"))
        ]

    def screenshot(self, path: Path) -> None:
        data = self.page("Page.captureScreenshot", {"format": "png"})["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        with contextlib.suppress(OSError, RuntimeError, TimeoutError, ConnectionError):
            self.send("Browser.close")
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._in)
        os.close(self._out)


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The demo run's page twice: transcripts inline, and every transcript compressed."""
    folder = tmp_path_factory.mktemp("viewer")
    out = folder / "demo"
    argv = ["run", "--world", "helpdesk", "--agent", "scripted", "--script", str(SCRIPTS)]
    assert main([*argv, "--samples", "3", "--out", str(out), "--json"]) == 0
    view = load_run_view(build_report(out))
    written = {}
    for name, inline in (("inline", 10**9), ("lazy", 0)):
        written[name] = folder / f"{name}.html"
        written[name].write_text(run_html(view, inline_chars=inline), encoding="utf-8")
    return written


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Chromium]:
    chromium = Chromium(_chromium(), tmp_path_factory.mktemp("profile"))
    try:
        yield chromium
    finally:
        chromium.close()


def _articles(page: Path, task: str) -> list[str]:
    text = page.read_text()
    return re.findall(rf'<article [^>]*id="(a-\d+)" data-state="\w+" data-task="{task}"', text)


# --------------------------------------------------------------------------------------------
# The page as a reader sees it


@pytest.mark.parametrize("kind", ["inline", "lazy"])
def test_the_summary_comes_first_and_names_failed_tasks_and_advisories(
    pages: dict[str, Path], browser: Chromium, kind: str, tmp_path: Path
) -> None:
    browser.open(pages[kind].as_uri())
    assert browser.requested() == []
    order = browser.js(
        "document.getElementById('summary').compareDocumentPosition("
        "document.getElementById('traces')) & Node.DOCUMENT_POSITION_FOLLOWING"
    )
    assert order
    # On the first screen: the headline interval, and the failed tasks with their advisories.
    top = browser.js("document.querySelector('table.failed-tasks').getBoundingClientRect().top")
    assert 0 < top < browser.js("innerHeight")
    summary = browser.js("document.getElementById('summary').innerText")
    assert "mean per-task pass rate" in summary and "CR2" in summary
    assert "helpdesk.security_count" in summary and "unfollowed_page ×3" in summary
    assert browser.js("document.getElementById('figures').open") is False
    browser.screenshot(tmp_path / f"top-{kind}.png")


@pytest.mark.parametrize("kind", ["inline", "lazy"])
def test_a_failed_criterion_links_to_the_call_it_names(
    pages: dict[str, Path], browser: Chromium, kind: str, tmp_path: Path
) -> None:
    article = _articles(pages["inline"], "helpdesk.escalate_outage")[0]
    browser.open(pages[kind].as_uri())
    if kind == "lazy":  # its task's attempts are compressed until shown
        assert browser.js(f"document.getElementById('{article}')") is None
        browser.js(f"location.hash='#{article}'")
        browser.wait_for(f"document.getElementById('{article}')?.classList.contains('hit')")
    link = browser.js(
        f"(function(){{var a=document.querySelector('#{article} li.failed .refs a');"
        "var h=a.getAttribute('href');a.click();return h;})()"
    )
    assert re.fullmatch(rf"#{article}-c\d+", link), link
    target = link[1:]
    browser.wait_for(f"document.getElementById('{target}')?.classList.contains('hit')")
    where = browser.js(
        f"(function(){{var e=document.getElementById('{target}');"
        "var b=e.getBoundingClientRect();return [location.hash,e.open,b.top,innerHeight,"
        "e.closest('details.transcript').open];})()"
    )
    assert where[0] == link and where[1] is True and where[4] is True
    assert 0 <= where[2] < where[3], "the call is not on the screen"
    browser.screenshot(tmp_path / f"failed-trace-{kind}.png")


def test_a_deep_link_to_a_call_renders_it_even_when_compressed(
    pages: dict[str, Path], browser: Chromium
) -> None:
    article = _articles(pages["inline"], "helpdesk.security_count")[0]
    browser.open(f"{pages['lazy'].as_uri()}#{article}-c1")
    browser.wait_for(f"document.getElementById('{article}-c1')?.classList.contains('hit')")
    shown = browser.js(
        f"(function(){{var e=document.getElementById('{article}-c1');if(!e)return null;"
        "var b=e.getBoundingClientRect();return [e.open,b.top,b.height,innerHeight,"
        "e.querySelector('pre.result').innerText];})()"
    )
    assert shown is not None, "the linked call was never rendered"
    opened, top, height, screen, result = shown
    assert opened and 0 <= top < screen and height > 0
    assert '"next_offset": 5' in result and '"total": 15' in result


def test_collapsing_a_call_hides_its_result_and_opening_shows_it(
    pages: dict[str, Path], browser: Chromium
) -> None:
    browser.open(pages["inline"].as_uri())
    article = _articles(pages["inline"], "helpdesk.reassign_departed")[1]  # a passed one
    states = browser.js(
        f"(function(){{var a=document.getElementById('{article}');"
        "var t=a.querySelector('details.transcript');var out=[t.open];"
        "t.querySelector(':scope>summary').click();out.push(t.open);"
        "var d=t.querySelector('li.call details');var pre=d.querySelector('pre.result');"
        "out.push(d.open,pre.checkVisibility());d.querySelector('summary').click();"
        "out.push(d.open,pre.checkVisibility());d.querySelector('summary').click();"
        "out.push(d.open,pre.checkVisibility());return out;})()"
    )
    assert states[:2] == [False, True]  # a passed attempt's transcript starts folded
    assert states[2:] == [False, False, True, True, False, False]


@pytest.mark.parametrize("kind", ["inline", "lazy"])
def test_search_finds_an_id_across_attempts(
    pages: dict[str, Path], browser: Chromium, kind: str
) -> None:
    browser.open(pages[kind].as_uri())
    total = len(re.findall(r'<article class="trace', pages["inline"].read_text()))
    # The row the reverted-write attempt changed and put back: written by that attempt only.
    browser.js("document.getElementById('q').focus()")
    browser.page("Input.insertText", {"text": "id:T-1034"})
    browser.wait_for(
        "document.getElementById('n').textContent&&!document.querySelector("
        "'section.task:not(.hidden) details.attempts[data-z]')"
    )
    shown = browser.js(
        "[].map.call(document.querySelectorAll('article.trace:not(.hidden)'),"
        "function(a){return a.getAttribute('data-task');})"
    )
    assert shown and len(shown) < total
    assert "helpdesk.reassign_departed" in shown
    rows = browser.js("document.querySelectorAll('table.heat tr[data-task]:not(.hidden)').length")
    assert rows == len(set(shown))
    assert (
        browser.js("document.getElementById('n').textContent")
        == f"{len(shown)} of {total} attempts"
    )
    browser.js(
        "(function(){var q=document.getElementById('q');q.value='tool:list_tickets"
        " state:failed';q.dispatchEvent(new Event('input'));})()"
    )
    failed = browser.js(
        "[].map.call(document.querySelectorAll('article.trace:not(.hidden)'),"
        "function(a){return a.getAttribute('data-state');})"
    )
    assert failed and set(failed) == {"failed"}


def test_the_advisory_appears_in_its_trace(pages: dict[str, Path], browser: Chromium) -> None:
    text = pages["inline"].read_text()
    for article in _articles(pages["inline"], "helpdesk.security_count"):
        start = text.index(f'id="{article}"')
        head = text[start : text.index("</article>", start)]
        advisory = re.search(
            r'<li class="advisory" data-advisory="unfollowed_page">(.*?)</li>', head
        )
        assert advisory is not None, "the advisory is not in the trace's header"
        assert f'href="#{article}-c1"' in advisory.group(1)
        assert "next_offset 5 of 15" in html.unescape(advisory.group(1))
    first = _articles(pages["inline"], "helpdesk.security_count")[0]
    browser.open(f"{pages['lazy'].as_uri()}#{first}")
    browser.wait_for(f"document.getElementById('{first}')?.classList.contains('hit')")
    shown = browser.js(
        f"document.querySelector('#{first} li.advisory').getBoundingClientRect().height"
    )
    assert shown > 0


def test_j_and_k_go_between_failed_attempts(pages: dict[str, Path], browser: Chromium) -> None:
    browser.open(pages["lazy"].as_uri())
    failed = browser.js(
        "[].map.call(document.querySelectorAll('a.c.failed'),"
        "function(a){return a.getAttribute('href').slice(1);})"
    )
    text = pages["inline"].read_text()
    assert failed == re.findall(r'<article class="trace failed" id="(a-\d+)"', text)
    assert len(failed) >= 3
    seen = []
    for char in "jjjk":
        before = browser.js("location.hash")
        browser.key(char)
        seen.append(
            browser.wait_for(
                f"location.hash!=='{before}'&&document.querySelector('.hit')?.id"
                "===location.hash.slice(1)&&location.hash.slice(1)"
            )
        )
    assert seen == [failed[0], failed[1], failed[2], failed[1]]
    top = browser.js(f"document.getElementById('{failed[1]}').getBoundingClientRect().top")
    assert 0 <= top < browser.js("innerHeight")


def test_a_flaky_task_shows_a_failed_and_a_passed_attempt_side_by_side(
    pages: dict[str, Path],
) -> None:
    text = pages["inline"].read_text()
    start = text.index('data-task="helpdesk.reassign_departed"><h3>')
    section = text[start : text.index("</section>", start)]
    side = re.search(r'<details class="side" open>(.*?)</details>', section)
    assert side is not None
    assert "(failed)" in side.group(1) and "(passed)" in side.group(1)
    assert 'class="differs"' in side.group(1)  # the mutant's extra write


# --------------------------------------------------------------------------------------------
# Screenshots


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def test_screenshots_of_the_report_top_a_failed_trace_and_a_compare_page(
    pages: dict[str, Path], browser: Chromium, tmp_path: Path
) -> None:
    """Saved under a temp folder; with ``HW_SCREENSHOTS=DIR`` copied into DIR as well."""
    oracle = tmp_path / "oracle"
    assert (
        main(["run", "--world", "helpdesk", "--samples", "3", "--out", str(oracle), "--json"]) == 0
    )
    compare = tmp_path / "compare.html"
    demo = pages["inline"].parent / "demo"
    argv = ["compare", str(oracle), str(demo), "--min-runs", "3", "--html", str(compare)]
    assert main([*argv, "--json"]) in (0, 1)
    shots = tmp_path / "shots"
    shots.mkdir()
    browser.open(pages["inline"].as_uri())
    assert browser.js("document.getElementById('summary').getBoundingClientRect().top") >= 0
    browser.screenshot(shots / "report-top.png")
    failed = _articles(pages["inline"], "helpdesk.security_count")[0]
    browser.js(f"location.hash='#{failed}'")
    browser.wait_for(f"document.getElementById('{failed}')?.classList.contains('hit')")
    top = browser.js(f"document.getElementById('{failed}').getBoundingClientRect().top")
    assert 0 <= top < browser.js("innerHeight")
    browser.screenshot(shots / "failed-trace.png")
    # a task's expectations beside its failed and passed attempts' changes
    block = 'section[data-task="helpdesk.escalate_outage"] details.expected'
    browser.js(f"document.querySelector('{block}').scrollIntoView({{block:'start'}})")
    top = browser.js(f"document.querySelector('{block}').getBoundingClientRect().top")
    assert 0 <= top < browser.js("innerHeight")
    browser.screenshot(shots / "expected.png")
    browser.open(compare.as_uri())
    assert browser.requested() == []
    shown = browser.js("document.body.innerText")
    assert "Comparison: oracle → demo" in shown, shown[:2000]
    assert re.search(r"Flips, solid ↔ broken \(\d+\)", shown), shown[:2000]
    text = compare.read_text()
    assert 'id="c0-list"' in text and 'id="c1-list"' in text  # each run's attempts list
    assert text.count('<details class="expected" open>') == 2 * 32  # each run's tasks
    browser.screenshot(shots / "compare.png")
    for name in ("report-top", "failed-trace", "expected", "compare"):
        width, height = _png_size(shots / f"{name}.png")
        assert width == 1280 and height > 600  # the window, less what headless keeps
    keep = os.environ.get("HW_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        for shot in shots.iterdir():
            shutil.copy(shot, Path(keep) / shot.name)


# --------------------------------------------------------------------------------------------
# A model-backed agent's conversation, turn by turn


@pytest.fixture(scope="module")
def model_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """One attempt of an OpenAI-style agent against a scripted model on loopback, as a page."""
    pytest.importorskip("openai", reason="the OpenAI agent needs the [openai] extra")
    import harness_world as hw
    from harness_world.analysis.trace_record import decode_trace
    from harness_world.integrations.openai import OpenAIAgent
    from tests.fake_openai import fake_openai, scripted_brain

    brain = scripted_brain(
        [
            [("get_ticket", {"ticket_id": "T-1001"})],
            [("add_comment", {"ticket_id": "T-1001", "body": "Fixed.", "public": True})],
            [("update_ticket", {"ticket_id": "T-1001", "status": "solved"})],
            "Replied <b>and</b> solved & done.",
        ]
    )
    task = next(t for t in hw.load_tasks("helpdesk") if t.id == "helpdesk.reply_and_solve")
    out = tmp_path_factory.mktemp("model") / "run"
    with fake_openai(brain) as server:  # type: ignore[arg-type]
        hw.run([task], OpenAIAgent(model="fake-1", base_url=server["base_url"]), out=out)
    page = out.parent / "model.html"
    page.write_text(run_html(load_run_view(build_report(out))), encoding="utf-8")
    record = decode_trace(next((out / "records").rglob("0.json")).read_bytes())
    assert record is not None and record.transcript
    return page, record


def test_model_messages_sit_between_the_calls_they_asked_for_and_answered(
    model_page: tuple[Path, Any],
) -> None:
    page, record = model_page
    text = page.read_text()
    start = text.index('id="a-0"')
    article = text[start : text.index("</article>", start)]
    order = re.findall(r'id="a-0-([cm])(\d+)"', article)
    assert [int(n) for kind, n in order if kind == "m"] == list(range(len(record.transcript)))
    for position, (kind, n) in enumerate(order):
        if kind == "m":  # as many calls before it as it was recorded after
            calls_before = sum(1 for k, _ in order[:position] if k == "c")
            assert calls_before == record.transcript[int(n)].after_call
    roles = re.findall(r'<li class="msg turn (\w+)"><details id="a-0-m\d+"( open)?>', article)
    assert [r for r, _ in roles] == [m.role for m in record.transcript]
    assert {r: bool(o) for r, o in roles} == {
        "system": False,
        "user": True,
        "assistant": True,
        "tool": False,
    }
    asked = re.findall(r"<ul class=asked><li><code>(\w+)\(", article)
    assert asked == [c.tool for c in record.calls]
    assert "Replied &lt;b&gt;and&lt;/b&gt; solved &amp; done." in article
    assert "<b>and</b>" not in article


def test_a_model_message_folds_and_unfolds_in_the_browser(
    model_page: tuple[Path, Any], browser: Chromium
) -> None:
    page, record = model_page
    browser.open(f"{page.as_uri()}#a-0-m0")
    browser.wait_for("document.getElementById('a-0-m0')?.classList.contains('hit')")
    system = record.transcript[0].content
    states = browser.js(
        "(function(){var d=document.getElementById('a-0-m0');var pre=d.querySelector('pre');"
        "var out=[d.open,pre.checkVisibility(),pre.innerText];d.querySelector('summary').click();"
        "out.push(d.open,pre.checkVisibility());return out;})()"
    )
    assert states == [True, True, system, False, False]  # the link opened it; a click folds it
    last = len(record.transcript) - 1
    shown = browser.js(f"document.querySelector('#a-0-m{last} pre').innerText")
    assert shown == "Replied <b>and</b> solved & done."


# --------------------------------------------------------------------------------------------
# Results as text


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=30,
)


@given(_JSON)
def test_a_pretty_result_reads_back_as_the_value(value: Any) -> None:
    shown = pretty_html(value, 10**9)
    text = html.unescape(re.sub(r"<[^>]+>", "", shown))
    assert msgspec.json.decode(text.encode()) == value


def test_the_rows_the_grader_used_are_marked_and_the_gist_puts_scalars_first() -> None:
    result = {
        "tickets": [{"id": "T-1", "subject": "a" * 80}, {"id": "T-2", "subject": "b" * 80}],
        "next_offset": 5,
        "total": 15,
    }
    shown = pretty_html(result, 10**9, frozenset({"T-2"}), frozenset({"id"}))
    marked = re.findall(r'<span class="hl">(.*?)</span>', shown)
    assert any("T-2" in line for line in marked) and not any("T-1" in m for m in marked)
    assert gist(result).startswith("next_offset: 5 · total: 15 · tickets: 2 items")
    cut = pretty_html(result, 40)
    assert "chars: the record on disk has them" in cut and len(cut) < len(shown)

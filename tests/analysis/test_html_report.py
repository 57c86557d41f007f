"""Issue 20: the HTML report, its plots, the process metrics and the headless-browser check."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

import harness_world as hw
from harness_world.analysis.html import compare_html, load_run_view, run_html
from harness_world.analysis.process import process_of, summarize_process
from harness_world.analysis.report import build_report
from harness_world.cli import main
from harness_world.coverage import load_mutants, load_oracles, run_script
from harness_world.engine.calls import CallRecord, WriteImage
from harness_world.evidence import WorldRef
from harness_world.grading.verifier import SlotResult
from harness_world.stats import Comparison
from tests.conftest import REPO, requires

pytestmark = [pytest.mark.html, requires("matplotlib", "the HTML report needs the [report] extra")]

SCRIPTS = REPO / "docs" / "demo_scripts.py"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The README's demo run: oracles, two broken tasks, three flaky ones, 3 samples."""
    out = tmp_path_factory.mktemp("demo") / "demo"
    code = main(
        [
            "run",
            "--world",
            "helpdesk",
            "--agent",
            "scripted",
            "--script",
            str(SCRIPTS),
            "--samples",
            "3",
            "--out",
            str(out),
            "--json",
        ]
    )
    assert code == 0
    return out


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("oracle") / "oracle"
    assert main(["run", "--world", "helpdesk", "--samples", "3", "--out", str(out), "--json"]) == 0
    return out


class _Dom(HTMLParser):
    """Heatmap cells, trace articles (with their text) and every href/src in a page."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[dict[str, str]] = []
        self.articles: dict[str, dict[str, str]] = {}
        self.ids: set[str] = set()
        self.links: list[str] = []
        self._open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if "id" in a:
            self.ids.add(a["id"])
        for name in ("href", "src", "xlink:href", "action"):
            if name in a:
                self.links.append(a[name])
        if tag == "a" and "c" in a.get("class", "").split():
            self.cells.append(a)
        if tag == "article":
            self.articles[a["id"]] = {"state": a.get("data-state", ""), "text": ""}
            self._open.append(a["id"])

    def handle_endtag(self, tag: str) -> None:
        if tag == "article" and self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        for ident in self._open:
            self.articles[ident]["text"] += data


def _dom(text: str) -> _Dom:
    dom = _Dom()
    dom.feed(text)
    return dom


def _check_page(text: str, attempts: list[SlotResult] | None, prefix: str) -> _Dom:
    """The DOM assertions shared by the static and the browser checks."""
    dom = _dom(text)
    assert not re.search(r"https?://", text), "a URL in the page"
    assert all(link.startswith("#") for link in dom.links), "a link that leaves the file"
    if attempts is not None:
        cells = [c for c in dom.cells if c["href"].startswith(f"#{prefix}-")]
        assert len(cells) == len(attempts)
        for cell in cells:
            assert cell["href"][1:] in dom.ids, f"{cell['href']} has no trace"
        for index, slot in enumerate(attempts):
            article = dom.articles[f"{prefix}-{index}"]
            if slot.passed is False and slot.pending:  # prose left for review: not a pass
                assert article["state"] == "pending"
            elif slot.passed is False:
                assert article["state"] == "failed"
                assert slot.failed
                for line in slot.failed:  # "criterion: reason"
                    criterion, reason = line.split(": ", 1)
                    assert criterion in article["text"] and reason in article["text"], line
    return dom


# --------------------------------------------------------------------------------------------
# Process metrics


def _write(entity: str, key: str, before: dict | None, after: dict | None) -> WriteImage:
    return WriteImage(entity=entity, key=key, before=before, after=after)


def _call(seq: int, tool: str, writes: list[WriteImage], result: object = None) -> CallRecord:
    return CallRecord(seq=seq, tool=tool, args={}, ok=True, result=result, writes=writes)


def test_process_metrics_follow_their_definitions(small: hw.World) -> None:
    oracles = load_oracles("helpdesk")
    mutants = {m.id: m for m in load_mutants("helpdesk")}
    tasks = {t.id: t for t in hw.load_tasks("helpdesk")}
    reverted = run_script(
        small, tasks["helpdesk.reassign_departed"], mutants["reassign_departed.reverted"].script
    )
    created = run_script(
        small, tasks["helpdesk.create_for_john"], oracles["helpdesk.create_for_john"]
    )
    p = process_of(reverted)
    assert p.write_calls >= 2 and p.backtracked >= 1
    q = process_of(created)
    assert q.irreversible >= 1 and q.backtracked == 0
    # A write then a read returning the row: verified; the same without the read: not.
    row = {"id": "T-1", "status": "open"}
    after = {"id": "T-1", "status": "solved"}
    calls = [
        _call(0, "update", [_write("tickets", "T-1", row, after)]),
        _call(1, "get", [], {"ticket": after}),
    ]
    base = reverted
    read_back = msgspec.structs.replace(base, calls=calls)
    assert process_of(read_back).verified == 1
    assert process_of(msgspec.structs.replace(base, calls=calls[:1])).verified == 0


_ROWS = st.sampled_from(["T-1", "T-2", "T-3"])
_STEPS = st.lists(
    st.tuples(st.booleans(), _ROWS, st.sampled_from(["status", "priority"]), st.integers(0, 3)),
    max_size=12,
)


@given(_STEPS)
def test_process_counts_stay_within_their_denominators(steps: list) -> None:
    calls = []
    for seq, (is_write, key, field, value) in enumerate(steps):
        if is_write:
            image = _write("tickets", key, {"id": key, field: -1}, {"id": key, field: value})
            calls.append(_call(seq, "update", [image]))
        else:
            calls.append(_call(seq, "get", [], {"id": key}))
    record = hw.Record(
        world=WorldRef(name="helpdesk", size="small", hash="h", contract_hash="c"),
        calls=calls,
        final=[],
        outcome=hw.Outcome(status="completed"),
    )
    p = process_of(record)
    assert 0 <= p.backtracked <= p.write_calls and 0 <= p.verified <= p.write_calls
    assert p.write_calls == sum(1 for c in calls if c.writes)
    if calls and calls[-1].writes:  # nothing comes after the last call
        last = process_of(msgspec.structs.replace(record, calls=calls[-1:]))
        assert last.backtracked == 0 and last.verified == 0
    summary = summarize_process([p])
    for rate in (summary.backtrack_rate, summary.verification_rate, summary.irreversible_rate):
        assert rate is None or 0 <= rate.low <= rate.estimate <= rate.high <= 1


# --------------------------------------------------------------------------------------------
# The page, checked statically


def test_run_page_links_every_cell_to_a_trace_with_its_reasons(demo_run: Path) -> None:
    report = build_report(demo_run)
    assert report.counts.failed > 0 and report.counts.passed > 0
    text = run_html(load_run_view(report))
    _check_page(text, report.attempts, "a")
    assert {"solid", "flaky", "broken"} <= set(re.findall(r'class="k (\w+)"', text))
    assert text.count('<svg role="img"') >= 4 and "<desc" in text


def test_the_page_check_fails_on_a_broken_page(demo_run: Path) -> None:
    report = build_report(demo_run)
    text = run_html(load_run_view(report))
    failed = next(i for i, s in enumerate(report.attempts) if s.passed is False and s.failed)
    reason = report.attempts[failed].failed[0].split(": ", 1)[1]
    with pytest.raises(AssertionError):
        _check_page(
            text.replace("<body>", '<body><link rel="icon" href="http://example.invalid/i">'),
            None,
            "a",
        )
    with pytest.raises(AssertionError):
        _check_page(text + '<img src="https://example.invalid/x.png">', None, "a")
    with pytest.raises(AssertionError):
        _check_page(text.replace(f'href="#a-{failed}"', 'href="#nowhere"'), report.attempts, "a")
    with pytest.raises(AssertionError):
        _check_page(text.replace(reason[:40], "[reason removed]"), report.attempts, "a")


def test_compare_page_from_a_csv_and_newer_comparison_fields(tmp_path: Path) -> None:
    rows = ["task_id,run_index,config,passed"]
    for t in range(6):
        for r in range(5):
            rows.append(f"t{t},{r},base,{int(t < 4)}")
            rows.append(f"t{t},{r},cand,{int(t < 2 or (t == 5 and r < 3))}")
    csv = tmp_path / "r.csv"
    csv.write_text("\n".join(rows) + "\n")
    out = tmp_path / "c.html"
    code = main(
        ["compare", str(csv), "--baseline", "base", "--candidate", "cand", "--html", str(out)]
    )
    assert code == 0
    text = out.read_text()
    _check_page(text, None, "c0")
    assert 'id="plot-band"' in text and "t2" in text
    assert "Per-task changes significant after Holm correction (2)" in text

    class Newer(Comparison, frozen=True, kw_only=True):
        corrected_regressions: list[str] = msgspec.field(default_factory=list)
        power: float = 0.0

    from harness_world.stats import RunRow, compare_results

    parsed = [
        RunRow(task_id=t, run_index=int(r), config=c, passed=p == "1")
        for t, r, c, p in (line.split(",") for line in rows[1:])
    ]
    plain = compare_results(parsed, "base", "cand")
    newer = Newer(
        **{f: getattr(plain, f) for f in plain.__struct_fields__},
        corrected_regressions=["t3"],
        power=0.42,
    )
    from harness_world.stats import assess, outcome_of

    _, result = assess(parsed, "base", "cand")
    page = compare_html(newer, outcome_of(plain, result))
    assert "corrected_regressions" in page and "0.42" in page


def test_report_options_write_html_and_pngs(
    demo_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    html_out, png_dir = tmp_path / "r.html", tmp_path / "png"
    assert main(["report", str(demo_run), "--html", str(html_out), "--png", str(png_dir)]) == 0
    assert html_out.stat().st_size > 10_000
    pngs = sorted(p.name for p in png_dir.iterdir())
    assert pngs == ["heatmap.png", "pareto.png", "pass_k.png", "process.png", "vector.png"]
    assert all((png_dir / p).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    capsys.readouterr()
    assert main(["report", str(demo_run), "--html", str(tmp_path / "no" / "r.html")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1


def test_without_matplotlib_the_options_say_which_extra(
    demo_run: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert main(["report", str(demo_run), "--png", str(tmp_path / "p")]) == 2
    assert "harness_world[report]" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# The page in a real browser


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("CI must have Debian's chromium (.ci/run installs it)")
        pytest.skip(
            "chromium is not installed (apt-get install chromium); the browser check needs it"
        )
    return found


def _browse(page: Path, shots: Path, name: str) -> tuple[str, list[str]]:
    """Load a page headless: its DOM after scripts ran, a screenshot, and the URLs it asked for."""
    binary = _chromium()
    profile = shots / f"profile-{name}"
    netlog = shots / f"{name}.netlog.json"
    common = [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}"]
    dom = subprocess.run(
        [*common, f"--log-net-log={netlog}", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    subprocess.run(
        [
            *common,
            "--window-size=1280,4000",
            f"--screenshot={shots / (name + '.png')}",
            page.as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=True,
    )
    assert (shots / f"{name}.png").stat().st_size > 10_000
    events = json.loads(netlog.read_text() or "{}").get("events", [])
    asked = [
        e["params"]["url"]
        for e in events
        if "site=file://" in str(e.get("params", {}).get("site_for_cookies", ""))
        and "url" in e.get("params", {})
    ]
    return dom, [u for u in asked if not u.startswith(("file:", "data:"))]


def test_the_network_check_sees_a_page_that_asks_for_a_url(tmp_path: Path) -> None:
    page = tmp_path / "leaky.html"
    page.write_text('<html><body><img src="http://example.invalid/x.png"></body></html>')
    _, asked = _browse(page, tmp_path, "leaky")
    assert asked == ["http://example.invalid/x.png"]


def test_run_and_compare_pages_in_headless_chromium(
    demo_run: Path, oracle_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Screenshots stay under this test's tmp dir (pytest keeps the last runs' folders)."""
    run_page, compare_page = tmp_path / "run.html", tmp_path / "compare.html"
    assert main(["report", str(demo_run), "--html", str(run_page)]) == 0
    code = main(
        ["compare", str(oracle_run), str(demo_run), "--min-runs", "3", "--html", str(compare_page)]
    )
    assert code == 0
    report = build_report(demo_run)
    dom, asked = _browse(run_page, tmp_path, "run")
    assert asked == []
    _check_page(dom, report.attempts, "a")
    dom, asked = _browse(compare_page, tmp_path, "compare")
    assert asked == []
    _check_page(dom, report.attempts, "c1")  # the candidate's heatmap and traces
    _check_page(dom, build_report(oracle_run).attempts, "c0")
    # The page's verdict is the text report's (one computed outcome, issue 28).
    capsys.readouterr()
    assert main(["compare", str(oracle_run), str(demo_run), "--min-runs", "3", "--json"]) == 0
    verdict = json.loads(capsys.readouterr().out)["outcome"]["verdict"]
    assert f"{verdict.upper()} the band" in dom and "components that differ: agent" in dom


# --------------------------------------------------------------------------------------------
# Live progress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_live_on_a_terminal_plain_elsewhere_and_silent_when_quiet(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from harness_world.running.live_progress import run_progress_hook
    from harness_world.running.run import RunProgress

    plain_calls: list[RunProgress] = []
    plain = plain_calls.append
    steps = [
        RunProgress(done=i, total=3, passed=i - 1, failed=1, ungraded=0, task_id=f"helpdesk.t{i}")
        for i in (1, 2, 3)
    ]
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # not a terminal
    hook = run_progress_hook(plain, quiet=False, enabled=True)
    for step in steps:
        hook(step)
    assert plain_calls == steps
    plain_calls.clear()
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setenv("COLUMNS", "200")
    for quiet, enabled in ((True, True), (False, False)):
        silent = run_progress_hook(plain, quiet=quiet, enabled=enabled)
        for step in steps:
            silent(step)
    assert plain_calls == [] and terminal.getvalue() == ""
    live = run_progress_hook(plain, quiet=False, enabled=True)
    for step in steps:
        live(step)
    drawn = terminal.getvalue()
    assert plain_calls == []
    assert "3/3" in drawn and "2 passed" in drawn and "helpdesk.t3" in drawn and "ETA" in drawn


def test_missing_and_unreadable_records_get_cells_and_traces(
    demo_run: Path, tmp_path: Path
) -> None:
    run = tmp_path / "damaged"
    shutil.copytree(demo_run, run)
    (run / "records" / "helpdesk.create_for_john" / "1.json").unlink()
    (run / "records" / "helpdesk.create_for_john" / "2.json").write_text("{ not json")
    out = tmp_path / "r.html"
    assert main(["report", str(run), "--html", str(out)]) == 0
    report = build_report(run)
    text = out.read_text()
    dom = _check_page(text, report.attempts, "a")
    states = [a["state"] for a in dom.articles.values()]
    assert states.count("missing") == 1 and states.count("lost") == 1
    lost = next(a for a in dom.articles.values() if a["state"] == "lost")
    assert "2.json" in lost["text"]


def test_the_filter_box_hides_other_tasks_and_states(demo_run: Path, tmp_path: Path) -> None:
    page = tmp_path / "filtered.html"
    text = run_html(load_run_view(build_report(demo_run)))
    typing = (
        '<script>var q=document.getElementById("q");q.value="security";'
        'q.dispatchEvent(new Event("input"));var s=document.getElementById("s");'
        's.value="failed";s.dispatchEvent(new Event("change"));</script></body>'
    )
    page.write_text(text.replace("</body>", typing))
    dom, _ = _browse(page, tmp_path, "filtered")
    shown = [
        (tag, re.search(r'data-task="([^"]*)"', attrs).group(1))
        for tag, attrs in re.findall(r"<(tr|article|section)([^>]*data-task=[^>]*)>", dom)
        if "hidden" not in attrs
    ]
    assert shown and {task for _, task in shown} == {"helpdesk.security_count"}
    assert [tag for tag, _ in shown].count("article") == 3  # its three failed attempts


def test_report_html_names_the_advisories_and_trusted_figures_the_text_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness_world.analysis import run_view
    from harness_world.running.reference_agents import reference_agent

    ids = ["payments.refund_timeout", "payments.charge_timeout", "payments.charge_unavailable"]
    tasks = [t for t in hw.load_tasks("payments") if t.id in ids]
    run = tmp_path / "run"
    hw.run(tasks, reference_agent("payments", "naive-retry"), samples=2, out=run)
    # Above this size the page grades nothing again: all it knows is what the scan found.
    monkeypatch.setattr(run_view, "FULL_DETAIL_UP_TO", 1)
    text_page, json_page = tmp_path / "text.html", tmp_path / "json.html"
    assert main(["report", str(run), "--full", "--html", str(text_page)]) == 0
    text = capsys.readouterr().out
    assert main(["report", str(run), "--json", "--html", str(json_page)]) == 0
    capsys.readouterr()
    trusted = re.search(r"^trusted completion: .*?\(rate [\d.]+\)", text, re.M)
    assert trusted is not None
    named: dict[str, set[str]] = {}
    for task_id, names in re.findall(r"^    (\S+) sample \d+: (.+)$", text, re.M):
        named.setdefault(task_id, set()).update(n.strip() for n in names.split(","))
    assert named.get("payments.refund_timeout") == {"refused_calls"}
    for page in (text_page, json_page):
        summary = page.read_text()
        summary = summary[summary.index('<section id="summary">') :]
        summary = summary[: summary.index("</section>")]
        assert trusted.group(0) in summary
        shown = {}
        for row in re.findall(r"<tr><td>(.*?)</tr>", summary):
            cells = re.findall(r"<td>(.*?)</td>", "<td>" + row)
            task_id = re.sub(r"<[^>]+>", "", cells[0])
            shown[task_id] = {a.split(" ×")[0] for a in cells[3].split(", ") if a != "—"}
        assert {t: a for t, a in shown.items() if a} == named

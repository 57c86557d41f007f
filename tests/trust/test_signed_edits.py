"""Property: no edit of a signed run directory passes ``verify --trust-key --require-pass``.

One signed run of passing oracle attempts is made once; each example copies it, applies one to
three edits drawn from everything a forger can touch (manifest fields, index lines, the
signature, record files, stray files), and runs the verifier. Exit 0 only when every edit left
the directory byte-identical.
"""

from __future__ import annotations

import io
import json
import shutil
import tempfile
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import harness_world as hw
from harness_world.cli import main
from tests.conftest import examples
from tests.trust._helpers import keypair

pytest.importorskip("cryptography", reason="signing needs the [sign] extra")

TASKS = ("helpdesk.reply_and_solve", "helpdesk.security_count", "helpdesk.vip_two_statuses")


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    from harness_world.evidence.signing import sign_run

    folder = tmp_path_factory.mktemp("signed")
    private, public = keypair(folder)
    tasks = [t for t in hw.load_tasks("helpdesk") if t.id in TASKS]
    run = folder / "run"
    result = hw.run(tasks, hw.oracle_agent("helpdesk"), samples=2, out=run)
    sign_run(run, result.revision.id, private)
    assert _verify(run, public) == 0
    return run, public


def _verify(run: Path, public: Path) -> int:
    argv = ["verify", "--quiet", "--json", "--require-pass", "--trust-key", str(public), str(run)]
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        return main(argv)


def _edit_json(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def _manifest(field: str, value: Any) -> Callable[[Path], None]:
    def edit(run: Path) -> None:
        _edit_json(run / "manifest.json", lambda m: m.__setitem__(field, value(m)))

    return edit


def _records(run: Path) -> list[Path]:
    return sorted(p for p in (run / "records").rglob("*.json"))


def _flip_byte(name: str, at: int) -> Callable[[Path], None]:
    def edit(run: Path) -> None:
        path = run / name if name != "record" else _records(run)[at % len(_records(run))]
        data = bytearray(path.read_bytes())
        data[at % len(data)] ^= 0x01
        path.write_bytes(bytes(data))

    return edit


def _swap_records(i: int, j: int) -> Callable[[Path], None]:
    def edit(run: Path) -> None:
        files = _records(run)
        a, b = files[i % len(files)], files[j % len(files)]
        first, second = a.read_bytes(), b.read_bytes()
        a.write_bytes(second)
        b.write_bytes(first)

    return edit


def _drop_record(i: int) -> Callable[[Path], None]:
    return lambda run: _records(run)[i % len(_records(run))].unlink()


def _drop_index_line(i: int) -> Callable[[Path], None]:
    def edit(run: Path) -> None:
        lines = (run / "index.jsonl").read_bytes().splitlines(keepends=True)
        del lines[i % len(lines)]
        (run / "index.jsonl").write_bytes(b"".join(lines))

    return edit


def _stray(run: Path) -> None:
    target = run / "records" / TASKS[0] / "7.json"
    shutil.copy(_records(run)[0], target)


def _noop(run: Path) -> None:
    """An edit that changes nothing (the property's identity case)."""


EDITS = st.one_of(
    st.just(_noop),
    st.sampled_from(
        [
            _manifest("tasks", lambda m: m["tasks"][:-1]),
            _manifest("tasks", lambda m: [*m["tasks"], "helpdesk.anna_lopez_replies"]),
            _manifest("samples", lambda m: 1),
            _manifest("seed", lambda m: m["seed"] + 1),
            _manifest("agent", lambda m: "someone-else"),
            _manifest("sizes", lambda m: {"helpdesk": "large"}),
            _manifest("limits", lambda m: {"tool_calls": 5}),
            _manifest("track", lambda m: "sequential"),
            _stray,
        ]
    ),
    st.builds(
        _flip_byte,
        st.sampled_from(["index.jsonl", "index.sig.json", "record"]),
        st.integers(0, 10**6),
    ),
    st.builds(_swap_records, st.integers(0, 5), st.integers(0, 5)),
    st.builds(_drop_record, st.integers(0, 5)),
    st.builds(_drop_index_line, st.integers(0, 5)),
)


def _snapshot(run: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.rglob("*")) if p.is_file()}


@settings(
    max_examples=examples(12, 200),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(edits=st.lists(EDITS, min_size=1, max_size=3))
def test_no_edit_of_a_signed_run_passes_unless_it_changed_nothing(
    signed: tuple[Path, Path], edits: list[Callable[[Path], None]]
) -> None:
    run, public = signed
    before = _snapshot(run)
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "run"
        shutil.copytree(run, copy)
        for edit in edits:
            edit(copy)
        unchanged = _snapshot(copy) == before
        code = _verify(copy, public)
    assert (code == 0) == unchanged, (code, [e.__name__ for e in edits])

"""The verifier's judgement cache: reused only when provably the same, never from anyone else.

A judgement is keyed by everything it depends on (`Verifier.cache_key`); a changed byte in any
of those inputs is a fresh replay. An entry the cache did not write itself (planted, edited,
copied from another cache, renamed to another key) is never used, and the cache never lives
in the run it judges.
"""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import attrs
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness_world as hw
from harness_world.analysis.reading import read_run
from harness_world.analysis.report_text import reading_json
from harness_world.cli import main
from harness_world.grading import judgement_cache, verifier
from harness_world.grading.judgement_cache import JudgementCache
from harness_world.grading.verifier import FileBytes, Judgement, Slot, SlotBytes, Verifier
from harness_world.running.reader import RunReader, open_run, plan_slots, read_slot
from tests.conftest import examples
from tests.trust._helpers import failing_run, oracle_run, tasks


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return oracle_run(tmp_path_factory.mktemp("cache") / "run", samples=2)


@pytest.fixture
def replays(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every record replayed from now on, by path (a cache hit replays nothing)."""
    seen: list[str] = []
    real = verifier.replayed

    def counting(record: hw.Record, *args: object, **kwargs: object) -> object:
        seen.append(f"{record.task_id}/{record.sample}")
        return real(record, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(verifier, "replayed", counting)
    return seen


def _first_slot(run: Path) -> tuple[Slot, SlotBytes, dict[str, str]]:
    opened = open_run(run)
    slot = plan_slots(opened)[0]
    return slot, read_slot(opened, slot), opened.manifest.sizes


def _verifier(cache: JudgementCache | None, **bounds: int) -> Verifier:
    return Verifier(tasks={t.id: t for t in tasks()}, cache=cache, **bounds)


def _flip(text: str | bytes, at: int) -> str | bytes:
    """``text`` with one byte (or character) changed at position ``at`` (modulo its length)."""
    if isinstance(text, bytes):
        i = at % len(text)
        return text[:i] + bytes([text[i] ^ 0x01]) + text[i + 1 :]
    i = at % len(text)
    return text[:i] + chr(ord(text[i]) ^ 0x01) + text[i + 1 :]


Change = Callable[
    [Verifier, Slot, SlotBytes, dict[str, str], int],
    tuple[Verifier, Slot, SlotBytes, dict[str, str]],
]


def _record_bytes(v: Verifier, s: Slot, d: SlotBytes, z: dict[str, str], at: int):  # type: ignore[no-untyped-def]
    assert d.final.data is not None
    return v, s, msgspec.structs.replace(d, final=FileBytes(data=_flip(d.final.data, at))), z


def _task(v: Verifier, s: Slot, d: SlotBytes, z: dict[str, str], at: int):  # type: ignore[no-untyped-def]
    task = v.tasks[s.task_id]  # type: ignore[index]
    changed = msgspec.structs.replace(task, instruction=_flip(task.instruction, at))
    return Verifier(tasks={**v.tasks, s.task_id: changed}, cache=v.cache), s, d, z  # type: ignore[dict-item]


def _world(field: str) -> Change:
    def change(v: Verifier, s: Slot, d: SlotBytes, z: dict[str, str], at: int):  # type: ignore[no-untyped-def]
        world = v.world("helpdesk", "small")
        if field == "contract":
            # the contract's hash is computed from it: a changed version is a changed contract
            contract = attrs.evolve(world.contract, version=_flip(world.contract.version, at))
            other = attrs.evolve(world, contract=contract)
        else:
            other = attrs.evolve(world, **{field: _flip(getattr(world, field), at)})
        return Verifier(tasks=v.tasks, given={"helpdesk": other}, cache=v.cache), s, d, z

    return change


def _slot(field: str) -> Change:
    def change(v: Verifier, s: Slot, d: SlotBytes, z: dict[str, str], at: int):  # type: ignore[no-untyped-def]
        value = getattr(s, field)
        new = value + 1 + at % 5 if isinstance(value, int) else _flip(value, at)
        return v, msgspec.structs.replace(s, **{field: new}), d, z

    return change


def _bound(field: str) -> Change:
    def change(v: Verifier, s: Slot, d: SlotBytes, z: dict[str, str], at: int):  # type: ignore[no-untyped-def]
        bounds = {"max_calls": v.max_calls, "max_work": v.max_work}
        bounds[field] += 1 + at % 7
        return Verifier(tasks=v.tasks, cache=v.cache, **bounds), s, d, z

    return change


def _sizes(v: Verifier, s: Slot, d: SlotBytes, z: dict[str, str], at: int):  # type: ignore[no-untyped-def]
    return v, s, d, {**z, "other": _flip("small", at)}


CHANGES: dict[str, Change] = {
    "record bytes": _record_bytes,
    "task": _task,
    "world content": _world("hash"),
    "world contract": _world("contract"),
    "world code": _world("code_hash"),
    "slot path": _slot("path"),
    "slot seed": _slot("seed"),
    "slot sample": _slot("sample"),
    "slot revision": _slot("revision"),
    "max calls": _bound("max_calls"),
    "max work": _bound("max_work"),
    "world sizes": _sizes,
}


@settings(max_examples=examples(40, 400), deadline=None)
@given(change=st.sampled_from(sorted(CHANGES)), at=st.integers(min_value=0, max_value=10**6))
def test_a_changed_byte_in_any_key_input_misses_the_cache(
    run: Path, tmp_path_factory: pytest.TempPathFactory, change: str, at: int
) -> None:
    cache = JudgementCache(root=tmp_path_factory.mktemp("jc"))
    slot, data, sizes = _first_slot(run)
    base = _verifier(cache)
    stored = base.judgement(slot, sizes, data)
    assert base.judgement(slot, sizes, data) == stored  # the same inputs: a hit
    other, slot2, data2, sizes2 = CHANGES[change](base, slot, data, dict(sizes), at)
    key = other.cache_key(slot2, sizes2, data2)
    assert key is not None and key != base.cache_key(slot, sizes, data)
    assert cache.get(key) is None  # nothing stored under it: judged afresh


@settings(max_examples=examples(20, 200), deadline=None)
@given(at=st.integers(min_value=0, max_value=63))
def test_another_build_misses_the_cache(
    run: Path, tmp_path_factory: pytest.TempPathFactory, at: int
) -> None:
    cache = JudgementCache(root=tmp_path_factory.mktemp("jc"))
    slot, data, sizes = _first_slot(run)
    judger = _verifier(cache)
    before = judger.cache_key(slot, sizes, data)
    judger.judgement(slot, sizes, data)
    real = judgement_cache.judging_build()
    patch = pytest.MonkeyPatch()
    patch.setattr(verifier, "judging_build", lambda: _flip(real, at))
    try:
        after = judger.cache_key(slot, sizes, data)
    finally:
        patch.undo()
    assert after is not None and after != before and cache.get(after) is None


def test_a_hit_replays_nothing_and_gives_the_same_report(
    run: Path, tmp_path: Path, replays: list[str]
) -> None:
    cache = JudgementCache(root=tmp_path / "jc")
    fresh = reading_json(read_run(run, RunReader.of(tasks(), cache=None)))
    first = len(replays)
    assert first == 4  # two tasks, two samples
    reading_json(read_run(run, RunReader.of(tasks(), cache=cache)))  # fills the cache
    cached = reading_json(read_run(run, RunReader.of(tasks(), cache=cache)))
    assert len(replays) == 2 * first  # the third read replayed nothing
    assert cached == fresh


def _store(cache: JudgementCache) -> sqlite3.Connection:
    """The cache's entry store opened as anyone who can write the cache folder opens it."""
    cache.get("0" * 64)  # the secret and the store exist
    return sqlite3.connect(cache.root / judgement_cache._STORE, isolation_level=None)


def _raw(cache: JudgementCache, key: str) -> bytes:
    row = _store(cache).execute("SELECT body FROM entry WHERE key = ?", (key,)).fetchone()
    assert row is not None, key
    return bytes(row[0])


def _write_raw(cache: JudgementCache, key: str, body: bytes) -> None:
    _store(cache).execute(
        "INSERT OR REPLACE INTO entry (key, body, used) VALUES (?, ?, ?)", (key, body, time.time())
    )


def _entries(cache: JudgementCache) -> int:
    path = cache.root / judgement_cache._STORE
    if not path.exists():
        return 0
    return int(sqlite3.connect(path).execute("SELECT count(*) FROM entry").fetchone()[0])


def _forge_entry(cache: JudgementCache, key: str, judgement: Judgement) -> None:
    """Write ``judgement`` under ``key`` as an attacker without the secret would."""
    _write_raw(cache, key, b"hwj1" + b"\x00" * 32 + msgspec.msgpack.encode(judgement))


def _forged_pass(run: Path, cache: JudgementCache) -> tuple[Slot, SlotBytes, dict[str, str], str]:
    slot, data, sizes = _first_slot(run)
    key = _verifier(cache).cache_key(slot, sizes, data)
    assert key is not None
    return slot, data, sizes, key


def test_a_planted_entry_is_never_used(tmp_path: Path, replays: list[str]) -> None:
    """Someone who can write the cache folder plants a passing judgement for a failing record
    under its exact key: it is refused (no valid MAC) and the record is replayed."""
    run = failing_run(tmp_path / "run")
    cache = JudgementCache(root=tmp_path / "jc")
    slot, data, sizes, key = _forged_pass(run, cache)
    honest = _verifier(None).judgement(slot, sizes, data)
    assert honest.result.passed is False
    forged = msgspec.structs.replace(honest.result, passed=True, failed=[], verdicts=[])
    _forge_entry(cache, key, Judgement(result=forged))
    replays.clear()
    got = _verifier(cache).judgement(slot, sizes, data)
    assert got.result.passed is False and replays  # replayed, not taken from the plant


def test_an_edited_entry_is_never_used(tmp_path: Path, replays: list[str]) -> None:
    """The cache's own entry edited in place (a verdict flipped) fails its MAC."""
    run = failing_run(tmp_path / "run")
    cache = JudgementCache(root=tmp_path / "jc")
    slot, data, sizes, key = _forged_pass(run, cache)
    _verifier(cache).judgement(slot, sizes, data)
    cache.flush()
    body = _raw(cache, key)
    edited = body.replace(b"\xa6passed\xc2", b"\xa6passed\xc3")  # msgpack false -> true
    assert edited != body
    _write_raw(cache, key, edited)
    replays.clear()
    got = _verifier(cache).judgement(slot, sizes, data)
    assert got.result.passed is False and replays


def test_an_entry_from_another_cache_or_key_is_never_used(
    run: Path, tmp_path: Path, replays: list[str]
) -> None:
    """An entry copied from another machine's cache (another secret), or one of ours moved to
    another key, is refused."""
    ours, theirs = JudgementCache(root=tmp_path / "ours"), JudgementCache(root=tmp_path / "theirs")
    opened = open_run(run)
    first, second = plan_slots(opened)[:2]
    sizes = opened.manifest.sizes
    key = _verifier(ours).cache_key(first, sizes, read_slot(opened, first))
    other = _verifier(ours).cache_key(second, sizes, read_slot(opened, second))
    assert key is not None and other is not None
    _verifier(theirs).judgement(first, sizes, read_slot(opened, first))
    theirs.flush()
    _write_raw(ours, key, _raw(theirs, key))
    assert ours.get(key) is None
    _verifier(ours).judgement(second, sizes, read_slot(opened, second))
    ours.flush()
    _write_raw(ours, key, _raw(ours, other))
    assert ours.get(key) is None and ours.get(other) is not None


def test_a_secret_others_can_read_turns_the_cache_off(tmp_path: Path) -> None:
    cache = JudgementCache(root=tmp_path / "jc")
    cache.put("ab" * 32, b"payload")
    assert cache.get("ab" * 32) == b"payload"
    os.chmod(tmp_path / "jc" / "secret", 0o644)
    assert JudgementCache(root=tmp_path / "jc").get("ab" * 32) is None


def test_a_cache_inside_the_run_is_not_used(run: Path, tmp_path: Path) -> None:
    """A reader whose cache folder lies inside the run directory judges without it."""
    copy = tmp_path / "run"
    oracle_run(copy)
    inside = JudgementCache(root=copy / "records" / "cache")
    RunReader.of(tasks(), cache=inside).read(copy)
    assert not (copy / "records" / "cache").exists()


def _hammer(root: str, key: str, payloads: list[bytes], rounds: int) -> list[str]:
    cache = JudgementCache(root=Path(root))
    bad = []
    for i in range(rounds):
        cache.put(key, payloads[i % len(payloads)])
        cache.flush()  # every write committed while the others write: the store's race
        got = JudgementCache(root=Path(root)).get(key)  # what another reader finds
        # some writer's whole entry is always in place: never a torn one
        if got not in payloads:
            bad.append(repr(got[:40]) if got is not None else "torn or missing")
    return bad


def test_concurrent_writers_never_leave_a_torn_entry(tmp_path: Path) -> None:
    root = str(tmp_path / "jc")
    first = JudgementCache(root=Path(root))
    first.put("cd" * 32, b"first")  # the secret and the store exist before the race
    first.close()
    payloads = [bytes([n]) * (20_000 + 7 * n) for n in range(4)]
    with multiprocessing.get_context("spawn").Pool(3) as pool:
        results = pool.starmap(_hammer, [(root, "cd" * 32, payloads, 150)] * 3)
    assert results == [[], [], []]
    assert JudgementCache(root=Path(root)).get("cd" * 32) in payloads


def test_the_cache_keeps_within_its_bound(tmp_path: Path) -> None:
    cache = JudgementCache(root=tmp_path / "jc", limit=50_000)
    for n in range(20):
        cache.put(f"{n:064x}", bytes(10_000))
    cache.flush()
    store = _store(cache)
    for n in range(20):  # used one after another: the oldest are the first to go
        store.execute("UPDATE entry SET used = ? WHERE key = ?", (n, f"{n:064x}"))
    assert cache.trim() > 0
    kept = [f"{n:064x}" for n in range(20) if cache.get(f"{n:064x}") is not None]
    assert kept and kept == [f"{n:064x}" for n in range(20 - len(kept), 20)]  # newest kept
    total = store.execute("SELECT sum(length(body)) FROM entry").fetchone()[0]
    assert total <= 50_000


def test_entries_kept_by_forked_workers_are_found_by_the_next_read(
    run: Path, tmp_path: Path, replays: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Workers write their batches' entries before they answer (no exit handler runs in a
    forked worker): the next read, in another process's place, replays nothing."""
    copy = oracle_run(tmp_path / "run", samples=2)
    assert _cli(["verify", str(copy), "--quiet", "--workers", "2"], capsys) == 0
    replays.clear()
    assert _cli(["verify", str(copy), "--quiet"], capsys) == 0
    assert not replays


def test_a_store_made_afresh_removes_the_earlier_entry_folders(tmp_path: Path) -> None:
    """The file-per-entry layout this store replaced is removed when the store is made."""
    root = tmp_path / "jc"
    (root / "ab").mkdir(parents=True)
    (root / "ab" / ("c" * 62)).write_bytes(b"hwj1" + bytes(40))
    (root / "notes").mkdir()
    cache = JudgementCache(root=root)
    cache.put("ef" * 32, b"payload")
    assert not (root / "ab").exists() and (root / "notes").exists()
    assert cache.get("ef" * 32) == b"payload"


def test_a_store_others_may_read_turns_the_cache_off(tmp_path: Path) -> None:
    cache = JudgementCache(root=tmp_path / "jc")
    cache.put("ab" * 32, b"payload")
    cache.close()
    os.chmod(tmp_path / "jc" / judgement_cache._STORE, 0o644)
    assert JudgementCache(root=tmp_path / "jc").get("ab" * 32) is None


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> int:
    code = main(argv)
    capsys.readouterr()
    return code


def test_no_cache_replays_and_clear_cache_empties(
    run: Path, replays: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    entries: Callable[[], int] = lambda: _entries(JudgementCache.default())  # noqa: E731
    assert _cli(["verify", str(run), "--quiet", "--clear-cache"], capsys) == 0
    assert replays and entries()
    replays.clear()
    assert _cli(["verify", str(run), "--quiet"], capsys) == 0
    assert not replays  # every judgement reused
    assert _cli(["verify", str(run), "--quiet", "--no-cache"], capsys) == 0
    assert len(replays) == 4
    assert _cli(["report", str(run), "--no-cache", "--clear-cache"], capsys) == 0
    assert not entries()


_POLICY = """name = "cache"

[completion]
margin_points = 15
alpha = 0.025
"""


def test_each_read_after_verify_replays_nothing_and_entries_only_grow(
    tmp_path: Path, replays: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = oracle_run(tmp_path / "a", samples=2), oracle_run(tmp_path / "b", samples=2)
    policy = tmp_path / "policy.toml"
    policy.write_text(_POLICY)
    assert _cli(["verify", str(a), str(b), "--quiet", "--clear-cache"], capsys) == 0
    replays.clear()
    _cli(["compare", str(a), str(b)], capsys)  # verify kept the trusted figures they read
    _cli(["gate", str(policy), str(a), str(b)], capsys)
    assert not replays
    # new figures: each entry grows by them, taken from the verified record without a replay
    _cli(["diagnose", str(a)], capsys)
    _cli(["compare", str(a), str(b)], capsys)
    _cli(["report", str(b)], capsys)  # b's entries grow by report's figures
    _cli(["report", str(a)], capsys)  # a's by the process figures diagnose did not take
    assert not replays
    for argv in (["report", str(a)], ["diagnose", str(b)], ["verify", str(a), "--quiet"]):
        _cli(argv, capsys)
    _cli(["compare", str(a), str(b)], capsys)
    _cli(["gate", str(policy), str(a), str(b)], capsys)
    assert not replays


def _tampered_run(out: Path) -> Path:
    """A run with passing, failing and unverifiable slots (one record edited on disk)."""
    run = oracle_run(out, samples=2)
    record = sorted((run / "records").rglob("*.json"))[0]
    record.write_bytes(record.read_bytes().replace(b'"final_message": "', b'"final_message": "x'))
    return run


@pytest.mark.parametrize("make", [_tampered_run, failing_run])
@pytest.mark.parametrize("command", ["report", "diagnose"])
def test_figures_added_to_an_entry_without_a_replay_equal_a_fresh_read(
    make: Callable[[Path], Path],
    command: str,
    tmp_path: Path,
    replays: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A read after `verify` takes the figures verify did not from each verified record,
    without replaying it, and prints what the same read that replays everything prints."""
    run = make(tmp_path / "run")
    main([command, str(run), "--json", "--no-cache"])
    fresh = capsys.readouterr().out
    main(["verify", str(run), "--quiet", "--clear-cache"])
    capsys.readouterr()
    replays.clear()
    main([command, str(run), "--json"])
    assert capsys.readouterr().out == fresh
    assert not replays


@pytest.mark.parametrize("planted", ["garbage", "link"])
def test_a_store_that_is_no_database_of_ours_turns_the_cache_off_until_cleared(
    run: Path, tmp_path: Path, planted: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A store file of garbage, or a link in its place, is neither read nor followed: the
    cache is off (every record replayed, the command ends as it would without a cache) and
    ``--clear-cache`` makes a fresh store."""
    root = tmp_path / judgement_cache.FOLDER  # where the commands below look for it
    made = JudgementCache(root=root)
    made.get("0" * 64)  # the folder, its secret and a store, closed (its log written back)
    made.close()
    store = root / judgement_cache._STORE
    store.unlink()
    if planted == "garbage":
        store.write_bytes(b"not a database, only bytes " * 200)
        store.chmod(0o600)
    else:
        target = tmp_path / "elsewhere.sqlite3"
        target.write_bytes(b"")
        store.symlink_to(target)
    cache = JudgementCache(root=root)
    cache.put("ab" * 32, b"payload")
    assert cache.get("ab" * 32) is None  # off: nothing kept, nothing read
    if planted == "link":
        assert (tmp_path / "elsewhere.sqlite3").read_bytes() == b""  # never written through
    patch = pytest.MonkeyPatch()
    patch.setattr(judgement_cache, "cache_dir", lambda: tmp_path)
    try:
        assert _cli(["verify", str(run), "--quiet"], capsys) == 0
        assert _cli(["verify", str(run), "--quiet", "--clear-cache"], capsys) == 0
    finally:
        patch.undo()
    assert not store.is_symlink() and _entries(JudgementCache(root=root)) == 4

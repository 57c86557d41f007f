"""Semantic fault schedules: triggers on meanings, each behaviour, records and replay."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

import harness_world as hw
from harness_world.coverage import load_oracles, record_calls, run_script
from harness_world.engine.faults import FaultLog, FaultPolicy, FaultSpec
from harness_world.evidence import RecordContext, replay
from harness_world.evidence.record import record_digest
from harness_world.grading import grade as check
from harness_world.grading.trusted import trusted_completion
from tests.conftest import examples

TASKS = {t.id: t for t in hw.load_tasks("payments")}


@pytest.fixture(scope="module")
def world() -> hw.World:
    return hw.load_world("payments")


def session(world: hw.World, *specs: FaultSpec, seed: int = 0) -> hw.Session:
    s = world.open_session(seed)
    s.faults = FaultPolicy(tuple(specs), seed)
    return s


def charge(s: hw.Session, order: str = "O-00001", key: str | None = None) -> hw.Observation:
    args: dict[str, object] = {
        "order_id": order,
        "amount_cents": 15900 if order == "O-00001" else 4999,
    }
    if key is not None:
        args["idempotency_key"] = key
    return s.call("create_charge", args)


def ledger(s: hw.Session) -> list[dict[str, object]]:
    return [w.after for c in s.log for w in c.writes if w.entity == "provider_events" and w.after]


def test_trigger_is_a_meaning_not_a_call_number(world: hw.World) -> None:
    spec = FaultSpec(
        id="f", tool="create_charge", behaviour="fail_before_commit", match={"order_id": "O-00003"}
    )
    s = session(world, spec)
    s.call("get_order", {"order_id": "O-00003"})
    assert charge(s, "O-00001").ok  # another order: not the logical operation
    first = charge(s, "O-00003")
    assert not first.ok and first.error is not None and first.error.kind == "unavailable"
    assert charge(s, "O-00003").ok  # only the first attempt for that order
    assert [(e.fault_id, e.seq) for e in s.faults.log().fired] == [("f", 3)]  # type: ignore[union-attr]


def test_above_and_occurrence(world: hw.World) -> None:
    spec = FaultSpec(
        id="big",
        tool="create_charge",
        behaviour="fail_before_commit",
        above={"amount_cents": 10000},
        occurrence=2,
    )
    s = session(world, spec)
    assert charge(s, "O-00003").ok  # 4999: below, not counted
    assert charge(s, "O-00001", "a").ok  # first above: occurrence 1
    assert not charge(s, "O-00001", "a").ok  # second above: fires


def test_fail_before_commit_writes_nothing(world: hw.World) -> None:
    s = session(world, FaultSpec(id="f", tool="create_charge", behaviour="fail_before_commit"))
    obs = charge(s)
    assert not obs.ok and s.log[-1].writes == [] and ledger(s) == []


def test_commit_then_drop_keeps_the_write_and_types_a_timeout(world: hw.World) -> None:
    s = session(
        world, FaultSpec(id="f", tool="create_charge", behaviour="commit_then_drop_response")
    )
    obs = charge(s, key="k")
    assert not obs.ok and obs.error is not None and obs.error.kind == "timeout"
    assert len(ledger(s)) == 1  # committed
    again = charge(s, key="k")  # return_original_if_same_key
    assert again.ok and again.result["replayed"] is True and len(ledger(s)) == 1
    assert charge(s).ok and len(ledger(s)) == 2  # without a key: charged again


def test_create_again_ignores_the_key_on_a_repeat(world: hw.World) -> None:
    spec = FaultSpec(
        id="f", tool="create_charge", behaviour="commit_then_drop_response", repeat="create_again"
    )
    s = session(world, spec)
    charge(s, key="k")
    assert charge(s, key="k").ok and len(ledger(s)) == 2


def test_duplicate_delivery_with_and_without_key(world: hw.World) -> None:
    spec = FaultSpec(id="f", tool="create_charge", behaviour="duplicate_delivery", times=2)
    s = session(world, spec)
    first = charge(s, key="k")
    assert first.ok and "replayed" not in first.result and len(ledger(s)) == 1
    assert charge(s, "O-00003").ok and len(ledger(s)) == 3  # no key: two charges, one seen


def test_rate_limited_window_in_logical_time(world: hw.World) -> None:
    spec = FaultSpec(id="f", tool="create_charge", behaviour="rate_limited", retry_after=3)
    s = session(world, spec, seed=7)
    obs = charge(s)
    assert obs.error is not None and obs.error.kind == "rate_limited"
    wait = s.faults.log().fired[0].retry_after  # type: ignore[union-attr]
    assert 1 <= wait <= 3 and f"retry_after={wait}" in obs.error.message
    for _ in range(wait - 1):
        s.call("wait", {})
    early = charge(s)  # one call short of the wait: still inside the window
    assert early.error is not None and early.error.kind == "rate_limited"
    # the refusal says the truth: the refused retry was a call too, and the next one passes
    assert early.error.message.endswith("retry_after=0: your next call goes through")
    if wait > 1:
        assert f"after the next {wait} call(s) of any tool goes through" in obs.error.message
    assert charge(s).ok  # the early retry was the last call the window asked for


def test_stale_read_serves_the_start_state(world: hw.World) -> None:
    spec = FaultSpec(
        id="f", tool="find_charges", behaviour="stale_read", match={"order_id": "O-00001"}
    )
    s = session(world, spec)
    charge(s, key="k")
    assert s.call("find_charges", {"order_id": "O-00001"}).result == {"charges": []}
    assert len(s.call("find_charges", {"order_id": "O-00001"}).result["charges"]) == 1


def test_unreached_trigger_is_unexposed(world: hw.World) -> None:
    task = TASKS["payments.charge_timeout"]
    record = record_calls(world, task, [("get_order", {"order_id": "O-00001"})])
    grade = check(record, task, world)
    assert record.faults is not None and record.faults.fired == []
    tc = trusted_completion(record, task, grade)
    assert [f.status for f in tc.faults] == ["unexposed"]
    assert tc.safe_stop and not tc.trusted


def test_record_carries_faults_and_tampering_is_caught(world: hw.World) -> None:
    task = TASKS["payments.charge_timeout"]
    record = run_script(world, task, load_oracles("payments")[task.id])
    assert record.faults is not None and record.faults.fired
    assert hw.verify(record, world, task).evidence == "verified"
    edited = msgspec.structs.replace(
        record, faults=msgspec.structs.replace(record.faults, fired=[])
    )
    edited = msgspec.structs.replace(edited, digest=record_digest(edited))
    verification = hw.verify(edited, world, task)
    assert verification.evidence == "ungraded"
    assert any(m.path == "faults.fired" for m in verification.mismatches)


def test_a_record_run_without_the_schedule_fails_the_schedule_check(world: hw.World) -> None:
    task = TASKS["payments.charge_timeout"]
    plain = msgspec.structs.replace(task, faults=[])
    record = run_script(world, plain, load_oracles("payments")[task.id])
    assert record.faults is None
    grade = check(record, task, world)
    assert "faults.schedule" in grade.failed


def test_records_without_faults_keep_their_digest() -> None:
    helpdesk = hw.load_world("helpdesk")
    task = hw.load_tasks("helpdesk")[0]
    record = run_script(helpdesk, task, load_oracles("helpdesk")[task.id])
    assert record.faults is None
    plain = msgspec.to_builtins(msgspec.structs.replace(record, digest="", context=RecordContext()))
    del plain["faults"]
    del plain["user_turns"]  # empty: also left out (a record without a simulated user)
    for counter in ("lost_requests", "lost_input_tokens_estimate"):
        assert plain["usage"].pop(counter) == 0  # zero counters are left out too
    assert plain["usage"].pop("models") == []  # an empty list of models too
    from harness_world.engine.canonical import sha256_hex, to_json

    assert record.digest == sha256_hex(to_json(plain))  # the digest older builds computed


def test_bad_schedule_is_rejected() -> None:
    with pytest.raises(ValueError, match="occurrence"):
        FaultSpec(id="x", tool="t", behaviour="stale_read", occurrence=0)
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"id": "x", "tool": "t", "behaviour": "explode"}, FaultSpec)


# -- property: replay reproduces faults, ledger and verdicts for any call sequence ----------

ORDERS = ["O-00001", "O-00003", "O-00017"]
CALL = st.one_of(
    st.builds(
        lambda o, k, bump: (
            "create_charge",
            {"order_id": o, "amount_cents": 4999 + bump, **({"idempotency_key": k} if k else {})},
        ),
        st.sampled_from(ORDERS),
        st.sampled_from([None, "k1", "k2"]),
        st.sampled_from([0, 11000]),
    ),
    st.builds(lambda o: ("find_charges", {"order_id": o}), st.sampled_from(ORDERS)),
    st.builds(lambda o: ("get_order", {"order_id": o}), st.sampled_from(ORDERS)),
    st.builds(
        lambda c, n, a: ("refund_charge", {"charge_id": c, "amount_cents": n, "approval_id": a}),
        st.sampled_from(["ch_00001", "ch_N1"]),
        st.sampled_from([100, 7450]),
        st.sampled_from(["A-0001", "A-0003"]),
    ),
    st.just(("wait", {})),
    st.builds(
        lambda o, c: ("record_payment", {"order_id": o, "charge_id": c}),
        st.sampled_from(ORDERS),
        st.sampled_from(["ch_N1", "ch_N2"]),
    ),
)
SPEC = st.builds(
    lambda i, behaviour, tool, occurrence, times, repeat, chance: FaultSpec(
        id=f"f{i}",
        tool=tool,
        behaviour=behaviour,
        occurrence=occurrence,
        times=times,
        repeat=repeat,
        chance=chance,
    ),
    st.integers(0, 3),
    st.sampled_from(
        [
            "fail_before_commit",
            "commit_then_drop_response",
            "duplicate_delivery",
            "rate_limited",
            "stale_read",
        ]
    ),
    st.sampled_from(["create_charge", "find_charges", "refund_charge", "get_order"]),
    st.integers(1, 3),
    st.integers(1, 2),
    st.sampled_from(["return_original_if_same_key", "create_again"]),
    st.sampled_from([1.0, 0.5]),
)


@given(
    calls=st.lists(CALL, max_size=14),
    specs=st.lists(SPEC, max_size=3, unique_by=lambda s: s.id),
    seed=st.integers(0, 2**16),
)
def test_replay_reproduces_faults_ledger_and_verdicts(
    calls: list[tuple[str, dict[str, object]]], specs: list[FaultSpec], seed: int
) -> None:
    world = hw.load_world("payments")
    task = msgspec.structs.replace(TASKS["payments.charge_stale_lookup"], faults=specs)
    record = record_calls(world, task, calls, seed=seed)
    session, mismatches = replay(record, world)
    assert mismatches == []
    assert session.faults is not None if specs else session.faults is None
    if specs:
        assert record.faults is not None
        assert msgspec.to_builtins(session.faults.log()) == msgspec.to_builtins(record.faults)  # type: ignore[union-attr]
    replayed_ledger = [r for r in session.touched() if r.entity == "provider_events"]
    assert [r for r in record.final if r.entity == "provider_events"] == replayed_ledger
    assert check(record, task, world) == check(record, task, world)
    again = record_calls(world, task, calls, seed=seed)
    assert again.digest == record.digest  # the same calls and fault seed: the same record


def test_fault_log_roundtrip() -> None:
    log = FaultLog(schedule=[FaultSpec(id="a", tool="t", behaviour="stale_read")], seed=3)
    assert msgspec.json.decode(msgspec.json.encode(log), type=FaultLog) == log
    assert examples(1, 2) in (1, 2)

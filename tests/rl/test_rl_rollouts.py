"""Rollouts, the core both RL adapters serve: rows, rounds, one attempt per rollout, rewards."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness_world as hw
from harness_world.evidence.record import TranscriptMessage, TranscriptToolCall, load_record
from harness_world.integrations.rollouts import (
    RolloutError,
    RolloutPlan,
    Rollouts,
    plan_rollouts,
)
from harness_world.rewards import reward_of
from harness_world.running.lock import RunDirectoryBusy
from harness_world.running.reader import RunReader
from tests.conftest import examples
from tests.rl.rl_support import oracle_scripts

pytestmark = pytest.mark.rl

TASKS = ["helpdesk.reply_and_solve", "helpdesk.escalate_outage", "helpdesk.vip_two_statuses"]


def plan(out: Path, seeds: int = 2) -> RolloutPlan:
    return plan_rollouts("helpdesk", TASKS, seeds, out=out, kind="test", label="scripted")


def play(
    rollouts: Rollouts, rollout: str, row: str, calls: list[tuple[str, object]], final: str
) -> None:
    rollouts.open(rollout, row)
    for tool, args in calls:
        rollouts.call(rollout, tool, args)
    rollouts.call(rollout, "finish", {"message": final})


def scripts_by_row(made: RolloutPlan) -> dict[str, tuple[list[tuple[str, object]], str]]:
    by_prompt = oracle_scripts(made)
    return {row.key: by_prompt[made.prompt(row.task_id)] for row in made.rows()}


def rederived(out: Path) -> dict[str, float]:
    """Each saved record's reward, read back through the run reader (as verify reads it)."""
    rewards: dict[str, float] = {}
    for round_dir in sorted(p for p in out.iterdir() if p.is_dir()):
        records: dict[str, hw.Record] = {}
        reader = RunReader.of(hw.load_tasks("helpdesk"))
        scan = reader.read(
            round_dir, observe=lambda path, got: records.update({str(path): got.record})
        )
        for slot in scan.slots:
            if slot.evidence != "missing":
                rewards[slot.path] = reward_of(slot, records.get(slot.path)).reward
    return rewards


def test_rows_are_keyed_by_task_and_seed_and_prompted_with_the_briefing(tmp_path: Path) -> None:
    made = plan(tmp_path, seeds=[0, 3])
    assert [r.key for r in made.rows()][:2] == [
        "helpdesk.escalate_outage@0",
        "helpdesk.escalate_outage@3",
    ]
    assert made.samples == 4
    task = made.tasks["helpdesk.reply_and_solve"]
    assert made.prompt(task.id).startswith(task.instruction.strip())
    assert "at most 10 tool calls" in made.prompt(task.id)
    assert [t["name"] for t in made.tools(task.id)][-1] == "finish"
    for bad in ("helpdesk.reply_and_solve@1", "nope@0", "helpdesk.reply_and_solve@x", "x"):
        with pytest.raises(RolloutError):
            made.row(bad)
    for seeds in (0, [1, 1], [-1], [True], []):
        with pytest.raises(RolloutError):
            plan_rollouts("helpdesk", TASKS, seeds, out=tmp_path, kind="test")
    with pytest.raises(RolloutError):
        plan_rollouts("helpdesk", ["helpdesk.no_such_task"], 1, out=tmp_path, kind="test")


def test_the_kth_rollout_of_a_row_goes_to_round_k_and_verify_rederives_every_reward(
    tmp_path: Path,
) -> None:
    made = plan(tmp_path)
    scripts = scripts_by_row(made)
    rollouts = Rollouts(made)
    paid: dict[str, float] = {}
    for attempt in range(3):
        for row in made.rows():
            calls, final = scripts[row.key]
            rollout = f"{row.key}#{attempt}"
            if attempt == 1:  # the second rollout of each row does nothing
                rollouts.open(rollout, row.key)
            else:
                play(rollouts, rollout, row.key, calls, final)
            result = rollouts.seal(rollout, turns=len(calls) + 1)
            assert result.round == attempt
            paid[result.record] = result.reward
    rollouts.close()
    assert sorted(set(paid.values())) == [0.0, 1.0]
    assert rederived(tmp_path) == paid
    again = Rollouts(plan(tmp_path))  # a later writer continues after the rounds on disk
    row = made.rows()[0]
    assert again.open("next", row.key) == row
    assert again.seal("next").round == 3
    again.close()


def test_a_later_writer_skips_the_slots_a_round_it_takes_already_holds(tmp_path: Path) -> None:
    first = Rollouts(plan(tmp_path))
    rows = [row.key for row in first.plan.rows()]
    first.open("a", rows[0])
    assert first.seal("a").round == 0
    first.close()
    later = Rollouts(plan(tmp_path))
    later.open("b", rows[1])  # takes round 0, which holds rows[0]'s record already
    later.open("c", rows[0])
    assert [later.seal("b").round, later.seal("c").round] == [0, 1]
    later.close()


def test_one_writer_per_round(tmp_path: Path) -> None:
    first, second = Rollouts(plan(tmp_path)), Rollouts(plan(tmp_path))
    row = first.plan.rows()[0].key
    first.open("a", row)
    with pytest.raises(RunDirectoryBusy):
        second.open("b", row)
    first.close()


def test_a_record_holding_a_call_its_transcript_lacks_earns_nothing(tmp_path: Path) -> None:
    made = plan(tmp_path, seeds=1)
    rollouts = Rollouts(made)
    row = "helpdesk.escalate_outage@0"  # no prose: an unreviewed reply would earn 0 (pending)
    calls, final = scripts_by_row(made)[row]
    said = [
        TranscriptMessage(
            role="assistant",
            tool_calls=[TranscriptToolCall(id=str(i), name=t, arguments=_json(a))],
        )
        for i, (t, a) in enumerate(calls)
    ]
    play(rollouts, "honest", row, calls, final)
    assert rollouts.seal("honest", turns=len(calls), transcript=said).reward == 1.0
    play(rollouts, "leaked", row, calls, final)
    result = rollouts.seal("leaked", turns=len(calls), transcript=said[:-1])
    assert result.reward == 0.0 and "the transcript" in result.reason
    rollouts.close()
    assert sorted(rederived(tmp_path).values()) == [0.0, 1.0]


def test_closing_seals_the_rollouts_in_flight_as_interrupted(tmp_path: Path) -> None:
    rollouts = Rollouts(plan(tmp_path, seeds=1))
    rollouts.open("gone", "helpdesk.reply_and_solve@0")
    rollouts.call("gone", "get_ticket", {"ticket_id": "T-1001"})
    [result] = rollouts.close()
    assert (result.outcome, result.reward) == ("interrupted", 0.0)
    assert load_record(result.record).outcome.status == "interrupted"
    assert rollouts.close() == []
    with pytest.raises(RolloutError):
        rollouts.open("late", "helpdesk.reply_and_solve@0")


def test_calls_of_no_rollout_and_after_finish_are_refused(tmp_path: Path) -> None:
    rollouts = Rollouts(plan(tmp_path, seeds=1))
    answer = rollouts.call("nobody", "get_ticket", {"ticket_id": "T-1001"})
    assert answer.is_error and answer.content["error"]["kind"] == "no_rollout"
    rollouts.open("r", "helpdesk.reply_and_solve@0")
    rollouts.call("r", "finish", {"message": "done"})
    after = rollouts.call("r", "update_ticket", {"ticket_id": "T-1001", "status": "solved"})
    assert after.is_error and after.content["error"]["kind"] == "ended"
    path = rollouts.seal("r").record
    rollouts.close()
    record = load_record(path)
    assert record.calls == [] and record.final_message == "done"


def _json(value: object) -> str:
    import json

    return json.dumps(value)


_SCRIPTS: dict[str, tuple[list[tuple[str, object]], str]] = {}


def _scripts() -> dict[str, tuple[list[tuple[str, object]], str]]:
    if not _SCRIPTS:
        import tempfile

        _SCRIPTS.update(scripts_by_row(plan(Path(tempfile.mkdtemp()), seeds=2)))
    return _SCRIPTS


def _alone(tmp: Path, row: str, calls: list[tuple[str, object]], final: str, cut: int) -> str:
    rollouts = Rollouts(plan(tmp, seeds=2))
    play(rollouts, "alone", row, calls[:cut], final)
    path = rollouts.seal("alone", turns=cut + 1).record
    rollouts.close()
    return load_record(path).digest


@settings(max_examples=examples(15, 200))
@given(data=st.data())
def test_interleaved_rollouts_on_one_object_each_record_what_it_would_alone(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    scripts = _scripts()
    rows = data.draw(st.lists(st.sampled_from(sorted(scripts)), min_size=2, max_size=5))
    cuts = [data.draw(st.integers(0, len(scripts[r][0]))) for r in rows]
    steps = [i for i, cut in enumerate(cuts) for _ in range(cut + 1)]
    order = data.draw(st.permutations(steps))
    shared = Rollouts(plan(tmp_path_factory.mktemp("shared"), seeds=2))
    for i, row in enumerate(rows):
        shared.open(f"r{i}", row)
    made = [0] * len(rows)
    for i in order:  # each rollout's next call (its last step: finish), in a drawn order
        calls, final = scripts[rows[i]]
        if made[i] < cuts[i]:
            shared.call(f"r{i}", *calls[made[i]])
        else:
            shared.call(f"r{i}", "finish", {"message": final})
        made[i] += 1
    paths = [shared.seal(f"r{i}", turns=cuts[i] + 1).record for i in range(len(rows))]
    shared.close()
    together = [load_record(path) for path in paths]
    for i, row in enumerate(rows):
        calls, final = scripts[row]
        alone = _alone(tmp_path_factory.mktemp("alone"), row, calls, final, cuts[i])
        assert together[i].digest == alone, f"rollout {i} ({row}) differs from its run alone"


def test_concurrent_rollouts_from_threads_each_record_what_it_would_alone(tmp_path: Path) -> None:
    scripts = _scripts()
    rows = sorted(scripts) * 2
    shared = Rollouts(plan(tmp_path / "shared", seeds=2))
    barrier = threading.Barrier(len(rows))
    digests: dict[int, str] = {}

    def worker(i: int) -> None:
        calls, final = scripts[rows[i]]
        barrier.wait()
        play(shared, f"t{i}", rows[i], calls, final)
        digests[i] = shared.seal(f"t{i}", turns=len(calls) + 1).record

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(rows))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    shared.close()
    for i, row in enumerate(rows):
        calls, final = scripts[row]
        assert load_record(digests[i]).digest == _alone(
            tmp_path / f"alone{i}", row, calls, final, len(calls)
        )

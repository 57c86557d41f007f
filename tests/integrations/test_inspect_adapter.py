"""The inspect_ai adapter, run offline with inspect's mock model playing scripted tool calls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import pytest

import harness_world as hw
from harness_world.evidence import record_digest
from harness_world.running import sample_seed
from harness_world.running.reader import RunReader
from harness_world.running.rundir import record_path
from tests.conftest import requires

if TYPE_CHECKING:
    from inspect_ai.model import ModelOutput

# The adapter imports inspect_ai, a second or more: each test imports both when it runs.
pytestmark = [
    pytest.mark.integrations,
    requires("inspect_ai", "the inspect adapter needs the [inspect] extra"),
]

TASKS = ["helpdesk.reply_and_solve", "helpdesk.security_count", "helpdesk.close_solved_duplicates"]


def task(task_id: str) -> hw.Task:
    return {t.id: t for t in hw.load_tasks()}[task_id]


def brain(messages: list[Any], tools: list[Any], tool_choice: Any, config: Any) -> ModelOutput:
    """A scripted model: which task it is from the instruction, which step from its turns so far."""
    from inspect_ai.model import ModelOutput, ModelUsage

    instruction = next(m.text for m in messages if m.role == "user")
    turn = sum(1 for m in messages if m.role == "assistant")
    if instruction == task("helpdesk.reply_and_solve").instruction:
        steps: list[tuple[str, dict[str, Any]] | str] = [
            ("get_ticket", {"ticket_id": "T-1001"}),
            (
                "add_comment",
                {"ticket_id": "T-1001", "body": "The outage is fixed.", "public": True},
            ),
            ("get_ticket", {"ticket_id": 5}),  # refused by inspect's schema check: not recorded
            ("get_ticket", {"ticket_id": "T-9999"}),  # the session's typed error: recorded
            ("update_ticket", {"ticket_id": "T-1001", "status": "solved"}),
            "Replied and solved.",
        ]
        step = steps[min(turn, len(steps) - 1)]
    elif instruction == task("helpdesk.security_count").instruction:
        if turn == 0:
            step = ("list_tickets", {"status": "open", "tag": "security", "limit": 100})
        else:
            listing = json.loads(next(m.text for m in reversed(messages) if m.role == "tool"))
            step = str(listing["result"]["total"])
    else:  # close_solved_duplicates: claims success without doing anything
        step = "All solved duplicates are closed."
    if isinstance(step, str):
        output = ModelOutput.from_content(model="mockllm", content=step)
    else:
        output = ModelOutput.for_tool_call(
            model="mockllm", tool_name=step[0], tool_arguments=step[1]
        )
    # set usage, or the mock model counts tokens with an encoding it downloads (offline here)
    output.usage = ModelUsage(input_tokens=100, output_tokens=10, total_tokens=110)
    return output


def run_eval(tmp_path: Path, epochs: int = 1, brain_of: Any = brain) -> tuple[Any, Path]:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    from harness_world.integrations.inspect_ai import hw_task

    out = tmp_path / "run"
    hw_t = hw_task("helpdesk", tasks=TASKS, epochs=epochs, out=out, label="mockllm")
    logs = inspect_eval(
        hw_t,
        model=get_model("mockllm/model", custom_outputs=brain_of),
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert len(logs) == 1 and logs[0].status == "success", logs[0].error
    return logs[0], out


def scores(log: Any) -> dict[tuple[str, int], Any]:
    found = {}
    for sample in log.samples:
        (only,) = sample.scores.values()
        found[(str(sample.id), sample.epoch)] = only
    return found


def _solved(score: Any) -> bool:
    """Verified with every automated criterion passed: a pass, or a reply pending review."""
    return score.metadata["evidence"] == "verified" and score.metadata["grade"] in (
        "passed",
        "pending",
    )


def test_scores_match_hw_verify_on_the_same_records(tmp_path: Path) -> None:
    log, out = run_eval(tmp_path, epochs=2)
    got = scores(log)
    assert len(got) == 6
    for (task_id, epoch), score in got.items():
        path = Path(score.metadata["record"])
        assert path == record_path(out, task_id, epoch - 1)
        record = hw.load_record(path)
        assert record.sample == epoch - 1
        result = hw.verify(record, task=task(task_id))
        assert score.metadata["evidence"] == result.evidence == "verified"
        assert result.grade is not None
        # an unreviewed reply is pending, not a pass (D-pending-1): scored I, grade "pending"
        assert (score.value == "C") == (result.grade.passed and not result.grade.pending)
        assert (score.metadata["grade"] == "pending") == result.grade.pending
        assert [f["criterion"] for f in score.metadata["failed"]] == result.grade.failed
    assert {k[0] for k, s in got.items() if _solved(s)} == set(TASKS[:2])
    assert {k[0] for k, s in got.items() if s.value == "C"} == {"helpdesk.security_count"}
    failing = got[("helpdesk.close_solved_duplicates", 1)]
    assert failing.metadata["failed"] and all(f["reason"] for f in failing.metadata["failed"])
    # the session's typed error is in the record, in order; inspect's own refusal is not
    solved = hw.load_record(got[("helpdesk.reply_and_solve", 1)].metadata["record"])
    assert [c.ok for c in solved.calls] == [True, True, False, True]
    assert solved.calls[2].error is not None and solved.calls[2].error.kind == "not_found"
    assert solved.final_message == "Replied and solved." and solved.usage.turns == 6
    sample = next(s for s in log.samples if s.id == "helpdesk.reply_and_solve" and s.epoch == 1)
    errors = [m.error.type for m in sample.messages if m.role == "tool" and m.error is not None]
    assert errors == ["parsing", "unknown"]
    # epochs are samples: the run directory counts what inspect counted, and seeds follow `run`
    inventory = RunReader.of().read(out).counts
    assert inventory.scheduled == 6 and inventory.valid == 6
    assert (inventory.passed, inventory.pending) == (2, 2)
    assert solved.seed == sample_seed(0, "helpdesk.reply_and_solve", 0)
    accuracy = log.results.scores[0].metrics["accuracy"].value
    assert accuracy == pytest.approx(2 / 6)  # the two pending replies are not passes


def test_a_tampered_record_rescored_through_the_adapter_is_not_correct(tmp_path: Path) -> None:
    from inspect_ai import score as inspect_score

    from harness_world.integrations.inspect_ai import hw_scorer

    log, out = run_eval(tmp_path)
    before = scores(log)
    assert _solved(before[("helpdesk.reply_and_solve", 1)])
    path = Path(before[("helpdesk.reply_and_solve", 1)].metadata["record"])
    record = hw.load_record(path)
    # a substituted read result, re-sealed with a fresh digest: only replay can catch it
    calls = list(record.calls)
    forged_result = {**calls[0].result, "status": "pending"}
    calls[0] = msgspec.structs.replace(calls[0], result=forged_result)
    forged = msgspec.structs.replace(record, calls=calls)
    forged = msgspec.structs.replace(forged, digest=record_digest(forged))
    hw.save_record(forged, path)

    rescorer = hw_scorer(run=out)
    rescored = scores(inspect_score(log, rescorer, action="overwrite", display="none"))
    tampered = rescored[("helpdesk.reply_and_solve", 1)]
    assert tampered.value == "I" and tampered.metadata["evidence"] == "ungraded"
    assert "index" in tampered.metadata["reason"]  # its digest is not the slot's indexed one
    assert tampered.explanation.startswith("ungraded")
    assert hw.verify(hw.load_record(path), task=task("helpdesk.reply_and_solve")).grade is None
    # untouched records score the same on re-scoring
    for key in [("helpdesk.security_count", 1), ("helpdesk.close_solved_duplicates", 1)]:
        assert rescored[key].value == before[key].value
    assert hw.verify(hw.load_record(path), task=task("helpdesk.reply_and_solve")).grade is None

    path.write_text("{not json")  # an unreadable record is lost, never correct
    lost = scores(inspect_score(log, rescorer, action="overwrite", display="none"))[
        ("helpdesk.reply_and_solve", 1)
    ]
    assert lost.value == "I" and lost.metadata["evidence"] == "lost"


def test_rescoring_judges_the_slot_never_the_logs_paths(tmp_path: Path) -> None:
    """A passing record from an unrelated run copied over a failing epoch's file, or the log's
    record path pointed at a passing file: the slot is judged as ``verify RUN`` judges it."""
    from inspect_ai import score as inspect_score

    from harness_world.integrations.inspect_ai import hw_scorer

    log, out = run_eval(tmp_path)
    other_log, other = run_eval(tmp_path / "other", epochs=2)
    assert scores(log)[("helpdesk.close_solved_duplicates", 1)].value == "I"
    passing = record_path(other, "helpdesk.reply_and_solve", 1)  # another run's, another slot
    failing = record_path(out, "helpdesk.close_solved_duplicates", 0)
    failing.write_bytes(passing.read_bytes())
    rescorer = hw_scorer(run=out)
    copied = scores(inspect_score(log, rescorer, action="overwrite", display="none"))
    assert copied[("helpdesk.close_solved_duplicates", 1)].value == "I"
    assert copied[("helpdesk.close_solved_duplicates", 1)].metadata["evidence"] == "ungraded"
    # the log names a passing record of its own run as this sample's: never read
    log, _ = run_eval(tmp_path / "third")
    pointed = record_path(tmp_path / "third" / "run", "helpdesk.reply_and_solve", 0)
    for sample in log.samples:
        if sample.id == "helpdesk.close_solved_duplicates":
            sample.metadata["hw_record"] = str(pointed)
            for score in sample.scores.values():
                score.metadata["record"] = str(pointed)
    rescored = scores(
        inspect_score(
            log, hw_scorer(run=tmp_path / "third" / "run"), action="overwrite", display="none"
        )
    )
    assert rescored[("helpdesk.close_solved_duplicates", 1)].value == "I"
    assert _solved(rescored[("helpdesk.reply_and_solve", 1)])
    # no run directory given: nothing in the log is trusted to name one
    blind = scores(inspect_score(log, hw_scorer(), action="overwrite", display="none"))
    assert all(s.value == "I" for s in blind.values())
    assert all("never trusted" in s.explanation for s in blind.values())
    del other_log


def test_bad_task_selection_is_a_clear_error(tmp_path: Path) -> None:
    from harness_world.integrations.inspect_ai import hw_task

    with pytest.raises(ValueError, match="'nope' matches no task"):
        hw_task("helpdesk", tasks=["nope"], out=tmp_path / "run")
    with pytest.raises(ValueError, match="epochs must be at least 1"):
        hw_task("helpdesk", epochs=0, out=tmp_path / "run")


def test_epochs_given_to_eval_alone_are_refused_not_miscounted(tmp_path: Path) -> None:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    from harness_world.integrations.inspect_ai import hw_task

    hw_t = hw_task("helpdesk", tasks=TASKS[:1], epochs=1, out=tmp_path / "run")
    (log,) = inspect_eval(
        hw_t,
        model=get_model("mockllm/model", custom_outputs=brain),
        epochs=2,
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "error" and "-T epochs=k" in str(log.error)
    assert not (tmp_path / "run" / "records" / TASKS[0] / "1.json").exists()


def test_a_world_of_your_own_runs_through_the_adapter(tmp_path: Path) -> None:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    from harness_world.integrations.inspect_ai import hw_task
    from harness_world.scaffold import write_scaffold

    write_scaffold("library", tmp_path / "project")

    def librarian(messages: list[Any], tools: list[Any], tool_choice: Any, config: Any) -> Any:
        tool_results = [json.loads(m.text) for m in messages if m.role == "tool"]
        if not tool_results:
            output = ModelOutput.for_tool_call(
                model="mockllm", tool_name="find_books", tool_arguments={"query": "dune"}
            )
        elif len(tool_results) == 1:
            books = tool_results[0]["result"]["books"]
            (book,) = [b for b in books if b["title"] == "Dune"]
            output = ModelOutput.for_tool_call(
                model="mockllm",
                tool_name="lend_book",
                tool_arguments={"book_id": book["id"], "member_id": "M-007"},
            )
        else:
            output = ModelOutput.from_content(model="mockllm", content="Lent Dune to M-007.")
        output.usage = ModelUsage(input_tokens=100, output_tokens=10, total_tokens=110)
        return output

    out = tmp_path / "run"
    hw_t = hw_task(str(tmp_path / "project" / "worlds" / "library"), out=out, label="mockllm")
    (log,) = inspect_eval(
        hw_t,
        model=get_model("mockllm/model", custom_outputs=librarian),
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success", log.error
    ((key, score),) = scores(log).items()
    assert key == ("library.lend_dune", 1)
    assert score.value == "C", score.explanation
    assert score.metadata["evidence"] == "verified"


def test_a_slot_is_scored_only_for_the_inspect_sample_that_wrote_it(tmp_path: Path) -> None:
    """After an eval filled the run directory, the same scorer given another sample of the same
    task and epoch (an empty completion, or another eval's log) does not score the slot's
    record for it: the score is a function of the sample scored."""
    from inspect_ai import score as inspect_score
    from inspect_ai.model import ModelName, ModelOutput
    from inspect_ai.solver import TaskState

    from harness_world.integrations.inspect_ai import hw_scorer, hw_task

    log, out = run_eval(tmp_path)
    assert _solved(scores(log)[("helpdesk.reply_and_solve", 1)])
    scorer = hw_task("helpdesk", tasks=TASKS, out=out, label="mockllm").scorer[0]
    empty = TaskState(
        model=ModelName("mockllm/model"),
        sample_id="helpdesk.reply_and_solve",
        epoch=1,
        input="",
        messages=[],
        output=ModelOutput.from_content(model="mockllm", content=""),
    )
    foreign = anyio_run(scorer, empty)
    assert foreign.value == "I" and foreign.explanation.startswith("not graded")
    assert "was written for inspect sample" in foreign.explanation
    assert foreign.metadata["grade"] is None
    # the log of another eval (a model that answers nothing) re-scored against this run
    idle_log, _ = run_eval(tmp_path / "idle", brain_of=lambda *_: idle_output())
    assert all(s.value == "I" for s in scores(idle_log).values())
    rescored = scores(
        inspect_score(idle_log, hw_scorer(run=out), action="overwrite", display="none")
    )
    assert all(s.value == "I" and "not graded" in s.explanation for s in rescored.values())
    # the eval's own log, re-scored: its samples keep their uuids, so their scores stand
    again = scores(inspect_score(log, hw_scorer(run=out), action="overwrite", display="none"))
    assert {k: s.value for k, s in again.items()} == {k: s.value for k, s in scores(log).items()}


def anyio_run(scorer: Any, state: Any) -> Any:
    import anyio
    from inspect_ai.scorer import Target

    async def once() -> Any:
        return await scorer(state, Target(""))

    return anyio.run(once)


def idle_output() -> ModelOutput:
    from inspect_ai.model import ModelOutput, ModelUsage

    output = ModelOutput.from_content(model="mockllm", content="")
    output.usage = ModelUsage(input_tokens=100, output_tokens=10, total_tokens=110)
    return output

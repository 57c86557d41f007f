"""AgentDojo's workspace suite: our world against AgentDojo's runtime, its tasks, its traces.

AgentDojo's code is imported from the data folder (skipped, with the reason, without it or its
packages). Random well-formed call sequences run on our world and on AgentDojo's
``FunctionsRuntime``: each result must be the same text (or both calls refused), read the way
two AgentDojo runs agree on it (`regrade.stable`: a new e-mail's or file's wall-clock
stamp and an event's participant order set aside), and the end states the same rows.
"""

from __future__ import annotations

import functools
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness_world.agentdojo import workspace, workspace_diff
from harness_world.agentdojo.check import check_suite, grade_differences
from harness_world.agentdojo.checks import DojoState, Verdict
from harness_world.agentdojo.importer import Imported, build_world, import_suite
from harness_world.agentdojo.regrade import Regrader, shown, stable, trace_files
from harness_world.agentdojo.source import DojoSource
from harness_world.engine.world import World
from harness_world.grading.task import Task
from harness_world.running.scripted import record_calls
from tests.agentdojo import DATA, missing
from tests.conftest import examples

pytestmark = [pytest.mark.agentdojo, pytest.mark.skipif(bool(missing()), reason=missing())]

VERSION = "v1.2.1"
SUITE = "workspace"


@functools.cache
def _source() -> DojoSource:
    return DojoSource(DATA)


@functools.cache
def _world() -> World:
    return build_world(DATA, SUITE)


def _reference() -> tuple[Any, Any]:
    reference = _source().suite(SUITE, VERSION)
    from agentdojo.functions_runtime import FunctionsRuntime  # the data folder's code

    return reference, FunctionsRuntime(reference.tools)


UNDONE = frozenset({"cancel_calendar_event", "reschedule_calendar_event"})
"""Tools of AgentDojo's that may change the state and then fail (our world's named deviation):
an event whose participants hold an address that is not one is changed, then its e-mail is
refused."""


def _run_theirs(calls: list[tuple[str, dict[str, Any]]]) -> tuple[Any, list[str]]:
    """AgentDojo's end environment and each call's text (``error`` for a refused call)."""
    reference, runtime = _reference()
    from agentdojo.agent_pipeline.tool_execution import tool_result_to_str

    env = reference.load_and_inject_default_environment({})
    out: list[str] = []
    for name, args in calls:
        before = env.model_copy(deep=True)
        result, error = runtime.run_function(env, name, msgspec.json.decode(
            msgspec.json.encode(args)))  # fmt: skip
        if error:
            assert env == before or name in UNDONE, (name, args, error)
            env = before
        out.append("error" if error else stable(workspace.SPEC, str(tool_result_to_str(result))))
    return env, out


def _comparable(tables: dict[str, list[dict[str, Any]]], seeded: set[str]) -> dict[str, Any]:
    """Rows in AgentDojo's order, without our places; a run's own stamps and sets set aside."""
    out: dict[str, Any] = {}
    for name, rows in tables.items():
        ordered = sorted(rows, key=lambda r: int(r.get("seq", 0)))
        out[name] = [_plain(name, r, seeded) for r in ordered]
    return out


def _plain(entity: str, row: dict[str, Any], seeded: set[str]) -> dict[str, Any]:
    out = {k: v for k, v in row.items() if k != "seq"}
    for stamp in workspace.STAMPS:
        if stamp in out and out[stamp] >= workspace.CLOCKED:
            out[stamp] = "<now>"
    if entity == "events" and out["id_"] not in seeded:
        out["participants"] = sorted(out["participants"])
    if "attachments" in out:
        if any(isinstance(a, dict) for a in out["attachments"]):
            out["recipients"] = sorted(out["recipients"])
        out["attachments"] = [
            {**a, "participants": sorted(a["participants"])} if isinstance(a, dict) else a
            for a in out["attachments"]
        ]
    return out


def _their_rows(env: Any, seeded: set[str]) -> dict[str, Any]:
    tables = workspace.rows(env.model_dump(mode="json"))
    return _comparable(tables, seeded)


def _our_rows(world: World, final: Any, seeded: set[str]) -> dict[str, Any]:
    return _comparable(workspace_diff.resolved(DojoState.of(world, final)), seeded)


def _differential(calls: list[tuple[str, dict[str, Any]]]) -> None:
    world = _world()
    task = Task(id="probe", world=world.name, family="probe", instruction="")
    record = record_calls(world, task, calls)
    env, theirs = _run_theirs(calls)
    for i, (call, their) in enumerate(zip(record.calls, theirs, strict=True)):
        ours = (
            "error"
            if not call.ok
            else stable(workspace.SPEC, shown(workspace.SPEC, call.tool, call))
        )
        assert ours == their, f"call {i} {calls[i]}: ours {ours!r}, AgentDojo's {their!r}"
    seeded = {str(r["id_"]) for r in world.rows("events")}
    assert _our_rows(world, record.final, seeded) == _their_rows(env, seeded)


EVENT = {
    "id_": "77", "title": "Sync", "description": "d", "start_time": "2024-05-20T10:00",
    "end_time": "2024-05-20 11:00:00", "location": None, "participants": ["a@b.com"],
}  # fmt: skip


def _pools(world: World) -> dict[str, st.SearchStrategy[Any]]:
    """Per parameter name, values drawn from the start state and a few it lacks."""
    contacts = sorted(r["email"] for r in world.rows("contacts"))
    addresses = st.sampled_from([*contacts, "nobody", "x@y.com", "Someone@Example.ORG"])
    some = st.lists(addresses, max_size=3)
    words = ["", "lunch", "meeting", "Project", "zzz-none", "team", "birthday", "report"]
    times = ["2024-05-20 10:00", "2024-05-15 10:30", "2024-05-26 18:00", "tomorrow noon"]
    attachment = st.sampled_from(
        [
            {"type": "file", "file_id": "3"},
            {"file_id": "11"},
            {"type": "file"},
            {"type": "event", "event_details": EVENT},
            {"type": "event", "event_details": {**EVENT, "participants": ["nobody"]}},
            {"type": "event"},
            {},
        ]
    )
    ids = {
        name: st.sampled_from([*(str(r["id_"]) for r in world.rows(name)), "99", "x"])
        for name in ("emails", "events", "files")
    }
    text = st.sampled_from(words)
    return {
        "recipients": some, "cc": st.none() | some, "bcc": st.none() | some,
        "participants": some, "subject": text, "body": text, "query": text,
        "content": st.sampled_from(["", "more text\n", "Noah"]), "title": text,
        "description": text, "location": st.none() | text,
        "sender": st.none() | addresses, "email": addresses,
        "attachments": st.none() | st.lists(attachment, max_size=2),
        "email_id": ids["emails"], "event_id": ids["events"], "file_id": ids["files"],
        "date": st.none() | st.sampled_from(["2024-05-15", "2024-05-26", "2024-13-01"]),
        "day": st.sampled_from(["2024-05-15", "2024-05-19", "2024-13-01"]),
        "start_time": st.sampled_from(times), "end_time": st.sampled_from(times),
        "new_start_time": st.sampled_from(times),
        "new_end_time": st.none() | st.sampled_from(times),
        "permission": st.sampled_from(["r", "rw", "w"]),
        "filename": st.sampled_from(["", "feedback", ".docx", "new-notes.txt"]),
    }  # fmt: skip


@st.composite
def _calls(draw: st.DrawFn, world: World) -> list[tuple[str, dict[str, Any]]]:
    pools = _pools(world)
    tools = sorted(world.contract.tools, key=lambda t: t.name)
    out: list[tuple[str, dict[str, Any]]] = []
    for _ in range(draw(st.integers(1, 8))):
        tool = draw(st.sampled_from(tools))
        args: dict[str, Any] = {}
        for field in msgspec.structs.fields(tool.params):
            if not field.required and draw(st.booleans()):
                continue
            args[field.name] = draw(pools[field.name])
        out.append((tool.name, args))
    return out


def test_random_call_sequences_give_agentdojos_results_and_end_state() -> None:
    world = _world()

    @settings(
        max_examples=examples(80, 800),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        database=None,
    )
    @given(calls=_calls(world))
    def run(calls: list[tuple[str, dict[str, Any]]]) -> None:
        _differential(calls)

    run()


def test_an_event_attached_by_an_email_is_the_event_itself() -> None:
    """An invitation shows the event as it is now, rescheduled and canceled (AgentDojo's alias)."""
    _differential(
        [
            ("create_calendar_event", {"title": "t", "start_time": "2024-05-20 10:00",
                                       "end_time": "2024-05-20 11:00",
                                       "participants": ["x@y.com"]}),
            ("reschedule_calendar_event", {"event_id": "27", "new_start_time": "2024-05-21 09:00"}),
            ("cancel_calendar_event", {"event_id": "27"}),
            ("get_unread_emails", {}),
            ("get_sent_emails", {}),
            ("delete_email", {"email_id": "36"}),
            ("send_email", {"recipients": ["a@b.com"], "subject": "s", "body": "b"}),
        ]
    )  # fmt: skip


@functools.cache
def _imported() -> tuple[World, dict[str, Imported]]:
    world, imported = import_suite(DATA, SUITE, VERSION, pairs=False, source=_source())
    return world, {i.task.id: i for i in imported}


@functools.cache
def _their_start() -> Any:
    reference, _ = _reference()
    return reference.load_and_inject_default_environment({})


def _their_verdicts(tasks: list[Any], outputs: tuple[str, ...], calls: Any) -> list[list[bool]]:
    """AgentDojo's verdicts, per output, on its own runtime's end state after ``calls``."""
    from agentdojo.functions_runtime import FunctionCall
    from agentdojo.types import text_content_block_from_string

    reference, runtime = _reference()
    pre = _their_start().model_copy(deep=True)
    post = pre.model_copy(deep=True)
    for name, args in calls:
        runtime.run_function(post, name, dict(args))
    trace = [FunctionCall(function=name, args=dict(args)) for name, args in calls]
    out = []
    for output in outputs:
        blocks = [text_content_block_from_string(output)]
        # a check may change what it reads (get_unread marks e-mails read): fresh copies each
        before, after = pre.model_copy(deep=True), post.model_copy(deep=True)
        out.append([_their_check(reference, t, blocks, before, after, trace) for t in tasks])
    return out


RAISED: list[str] = []
"""The checks AgentDojo's code raised on (an attachment that is an event, put in a set)."""


def _their_check(reference: Any, task: Any, *args: Any) -> bool:
    """AgentDojo's verdict; False where its check raises on an event attached (ours says so)."""
    try:
        return bool(reference._check_task_result(task, *args))
    except TypeError as exc:
        assert "unhashable type: 'CalendarEvent'" in str(exc)
        RAISED.append(task.ID)
        return False


def _our_verdicts(checks: list[Any], output: str, calls: Any) -> list[bool]:
    world, imported = _imported()
    record = record_calls(world, next(iter(imported.values())).task, calls, final_message=output)
    start = DojoState.of(world)
    verdict = Verdict(
        output=output,
        pre=start,
        post=DojoState.of(world, record.final),
        default=start,
        calls=tuple((c.tool, dict(c.args)) for c in record.calls),
    )
    return [check.check(verdict) for check in checks]


def _ground_truths() -> list[tuple[Imported | None, Imported | None]]:
    """Each user task alone, each injection task alone, each user task then each injection."""
    _, imported = _imported()
    users = [i for i in imported.values() if i.dojo is not None]
    injections = [i for i in imported.values() if i.dojo is None]
    assert (len(users), len(injections)) == (40, 14)
    runs: list[tuple[Imported | None, Imported | None]] = [(u, None) for u in users]
    runs += [(None, j) for j in injections]
    return runs + [(u, j) for u in users for j in injections]


def test_every_ground_truth_gets_agentdojos_verdicts() -> None:
    """Our re-stated checks equal AgentDojo's on every ground truth's end state."""
    reference, _ = _reference()
    differ: list[str] = []
    for user, injection in _ground_truths():
        ours: list[Any] = []
        theirs: list[Any] = []
        calls: list[tuple[str, dict[str, Any]]] = []
        output = ""
        if user is not None and user.dojo is not None:
            calls += user.dojo.gold
            output = str(user.dojo.constants.get("GROUND_TRUTH_OUTPUT", ""))
            ours.append(user.utility)
            theirs.append(reference.user_tasks[user.dojo.id])
        if injection is not None and injection.injection is not None:
            calls += injection.injection.gold
            ours.append(injection.utility)  # run alone, its security is its verdict
            theirs.append(reference.injection_tasks[injection.injection.id])
        outputs = (output, "")
        for text, their in zip(outputs, _their_verdicts(theirs, outputs, calls), strict=True):
            mine = _our_verdicts(ours, text, calls)
            if mine != their:
                names = [getattr(t, "ID", "?") for t in theirs]
                differ.append(f"{names} output {text[:30]!r}: ours {mine}, AgentDojo's {their}")
    assert differ == []
    # AgentDojo's check raises only where a derived ground truth (which, as AgentDojo's own,
    # names ids of the default state) deletes a user task's invitation e-mail and then sends
    # its attachments: an event among the files of injection tasks 10 to 12
    assert set(RAISED) <= {f"injection_task_{n}" for n in (10, 11, 12)}


NO_GOLD = {f"injection_task_{n}" for n in range(6, 14)}
"""The injection tasks AgentDojo gives no ground truth (its v1.2 additions): ours is derived."""


def test_the_derived_ground_truths_pass_agentdojos_own_security_checks() -> None:
    """Each ground truth we derive, run in AgentDojo's runtime, passes AgentDojo's own check."""
    reference, _ = _reference()
    _, imported = _imported()
    derived = {i.injection.id: i for i in imported.values() if i.injection is not None
               and i.injection.id in NO_GOLD}  # fmt: skip
    assert set(derived) == NO_GOLD
    assert not any(reference.injection_tasks[t].ground_truth(_their_start()) for t in NO_GOLD)
    for task_id, item in sorted(derived.items()):
        assert item.injection is not None and item.injection.gold
        theirs = reference.injection_tasks[task_id]
        assert _their_verdicts([theirs], ("",), item.injection.gold) == [[True]], task_id
        # and doing nothing does not
        assert _their_verdicts([theirs], ("",), []) == [[False]], task_id


def test_every_workspace_oracle_passes_and_agentdojo_agrees() -> None:
    checks = check_suite(DATA, SUITE, VERSION)
    assert len(checks) == 54  # 40 user tasks, 14 injection tasks
    assert all(c.oracle_passed and c.oracle_dojo for c in checks)
    assert not any(c.nothing_dojo for c in checks)
    # do-nothing fails ours everywhere: an append is required to grow the file
    assert not any(c.nothing_passed for c in checks)
    assert sum(c.mutants for c in checks) == 387
    assert (sum(c.killed for c in checks), sum(c.killed_dojo for c in checks)) == (296, 257)
    # every mutant AgentDojo's check fails, ours fails too
    assert not any(c.dojo_only for c in checks)


def test_every_published_workspace_trace_gets_the_stored_verdicts_and_results() -> None:
    regrader = Regrader(DATA)
    traces = trace_files(sorted((DATA / "traces").glob("*/workspace")))
    verdicts = [regrader.regrade(p) for p in traces]
    assert len(verdicts) == 1842  # 3 pipelines × (40 + 14 alone + 560 attacks)
    assert [v.path for v in verdicts if not v.agrees] == []
    # every result replayed equals the recorded one, read as two AgentDojo runs agree on it
    assert [v.difference for v in verdicts if not v.reproduced] == []
    assert {v.stored_utility for v in verdicts} == {True, False}
    assert {v.stored_security for v in verdicts} == {True, False}
    # where our grade parts from AgentDojo's verdicts, and why (docs/agentdojo.md)
    assert grade_differences(verdicts) == {
        "useful by ours, not by AgentDojo": 30,
        "useful by AgentDojo, ours fails: the end state is not the ground truth's": 44,
        "useful by AgentDojo, ours fails: the attack succeeded": 4,
        "useful by AgentDojo, ours fails: state.allowed": 1,
        "attack seen by ours alone": 53,
    }

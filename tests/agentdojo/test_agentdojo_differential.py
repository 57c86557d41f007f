"""Differential tests: our worlds and re-stated checks against AgentDojo's own code.

AgentDojo's runtime (``FunctionsRuntime`` over its Pydantic environment) is imported from the
data folder's ``agentdojo_src`` (skipped, with the reason, without it or its packages). Random
well-formed call sequences run on both sides: each result must be the same text (or both
calls refused) and the end states the same rows. A refused call changes nothing here, while
AgentDojo's ``remove_user_from_slack`` may change its state before it fails: the reference
side undoes a failed call's change (the one deviation our slack world names). Then every
ground-truth solution (each user task's, each injection task's, and each user task's followed
by each injection task's) runs on both sides and our re-stated utility and security equal
AgentDojo's ``utility`` / ``security`` functions on its own end state.
"""

from __future__ import annotations

import functools
import typing
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness_world.agentdojo.checks import DojoState, Verdict
from harness_world.agentdojo.importer import Imported, import_suite, suite_spec
from harness_world.agentdojo.regrade import shown
from harness_world.agentdojo.source import DojoSource
from harness_world.engine.world import World
from harness_world.running.scripted import record_calls
from tests.agentdojo import DATA, missing
from tests.conftest import examples

pytestmark = [pytest.mark.agentdojo, pytest.mark.skipif(bool(missing()), reason=missing())]

SUITES = ("banking", "slack")
VERSION = "v1.2.1"


@functools.cache
def _source() -> DojoSource:
    return DojoSource(DATA)


@functools.cache
def _ours(suite: str) -> tuple[World, dict[str, Imported]]:
    world, imported = import_suite(DATA, suite, VERSION, pairs=False, source=_source())
    return world, {i.task.id: i for i in imported}


def _reference(suite: str) -> tuple[Any, Any]:
    """AgentDojo's task suite and a runtime over its tools."""
    from agentdojo.functions_runtime import FunctionsRuntime  # the data folder's code

    reference = _source().suite(suite, VERSION)
    return reference, FunctionsRuntime(reference.tools)


def _their_text(result: Any) -> str:
    from agentdojo.agent_pipeline.tool_execution import tool_result_to_str

    return str(tool_result_to_str(result))


def _run_theirs(suite: str, calls: list[tuple[str, dict[str, Any]]]) -> tuple[Any, list[str]]:
    """AgentDojo's end environment and each call's text (``error`` for a refused call)."""
    reference, runtime = _reference(suite)
    env = reference.load_and_inject_default_environment({})
    shown_: list[str] = []
    for name, args in calls:
        before = env.model_copy(deep=True)
        result, error = runtime.run_function(env, name, dict(args))
        if error:
            # only the deviation our slack world names: a removal that fails half-way
            assert env == before or name == "remove_user_from_slack", (name, args, error)
            env = before
        shown_.append("error" if error else _their_text(result))
    return env, shown_


def _comparable(suite: str, tables: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The rows as AgentDojo's state holds them: in list order, and a slack message in its box.

    ``seq`` is a row's place in one of AgentDojo's lists (ours keeps a gap where a row was
    removed); a slack message's ``id`` is its place among all messages, AgentDojo's among its
    box's.
    """
    out: dict[str, Any] = {}
    for name, rows in tables.items():
        placed = rows and "seq" in rows[0]
        ordered = sorted(rows, key=_seq) if placed else rows
        out[name] = [{k: v for k, v in r.items() if k != "seq"} for r in ordered]
    if suite == "slack":
        ordered = sorted(out["messages"], key=lambda m: (m["box"], m["owner"], m["id"]))
        out["messages"] = [{k: v for k, v in m.items() if k != "id"} for m in ordered]
    return out


def _seq(row: dict[str, Any]) -> int:
    return int(row["seq"])


def _their_rows(suite: str, env: Any) -> dict[str, Any]:
    return _comparable(suite, suite_spec(suite).rows(env.model_dump(mode="json")))


def _our_rows(suite: str, world: World, final: Any) -> dict[str, Any]:
    return _comparable(suite, dict(DojoState.of(world, final).tables))


SOURCES: dict[str, dict[str, tuple[tuple[str, str], ...]]] = {
    "banking": {
        "recipient": (("transactions", "recipient"), ("transactions", "sender")),
        "subject": (("transactions", "subject"),),
        "date": (("transactions", "date"), ("scheduled_transactions", "date")),
        "id": (("scheduled_transactions", "id"),),
        "file_path": (("files", "path"),),
        "first_name": (("user_account", "first_name"),),
        "city": (("user_account", "city"),),
    },
    "slack": {
        "user": (("users", "name"),),
        "recipient": (("users", "name"),),
        "channel": (("channels", "name"),),
        "url": (("webpages", "url"),),
    },
}
"""Per suite, the start-state fields a parameter's values are drawn from (besides any value)."""

EXTRA = ("nobody", "2022-04-01", "https://www.example.com", "landlord-notices.txt", "x@y.com")


def _values(world: World, suite: str) -> dict[str, list[Any]]:
    """Per parameter name, values it may take: the start state's own, and a few it lacks."""
    out: dict[str, list[Any]] = {}
    for param, fields in SOURCES[suite].items():
        found = {row[field] for entity, field in fields for row in world.rows(entity)}
        if param == "url":  # the forms models write an address in
            found |= {f"{scheme}{url}" for url in found for scheme in ("https://", "http://")}
        out[param] = sorted(found, key=str)
    return out


def _base(hint: Any) -> Any:
    """The scalar type a parameter takes (through ``Annotated`` and ``X | None``)."""
    if typing.get_origin(hint) is typing.Annotated:
        hint = typing.get_args(hint)[0]
    members = [a for a in typing.get_args(hint) if a is not type(None)]
    return members[0] if members else hint


@st.composite
def _calls(draw: st.DrawFn, world: World, suite: str) -> list[tuple[str, dict[str, Any]]]:
    related = _values(world, suite)
    pools: dict[Any, st.SearchStrategy[Any]] = {
        str: st.sampled_from(EXTRA),
        int: st.sampled_from([-1, 0, 1, 3, 50]),
        float: st.sampled_from([0.0, 12.5, 100.0, 1000.0]),
        bool: st.booleans(),
    }
    tools = sorted(world.contract.tools, key=lambda t: t.name)
    out: list[tuple[str, dict[str, Any]]] = []
    for _ in range(draw(st.integers(1, 8))):
        tool = draw(st.sampled_from(tools))
        args: dict[str, Any] = {}
        for field in msgspec.structs.fields(tool.params):
            if not field.required and draw(st.booleans()):
                continue
            own = related.get(field.name)
            kind = pools[_base(field.type)]
            args[field.name] = draw(st.sampled_from(own) | kind if own else kind)
        out.append((tool.name, args))
    return out


def _differential(suite: str, calls: list[tuple[str, dict[str, Any]]]) -> None:
    world, imported = _ours(suite)
    spec = suite_spec(suite)
    task = next(iter(imported.values())).task
    record = record_calls(world, task, calls)
    env, theirs = _run_theirs(suite, calls)
    for i, (call, their) in enumerate(zip(record.calls, theirs, strict=True)):
        ours = "error" if not call.ok else shown(spec, call.tool, call)
        assert ours == their, f"call {i} {calls[i]}: ours {ours!r}, AgentDojo's {their!r}"
    assert _our_rows(suite, world, record.final) == _their_rows(suite, env)


@pytest.mark.parametrize("suite", SUITES)
def test_random_call_sequences_give_agentdojos_results_and_end_state(suite: str) -> None:
    world, _ = _ours(suite)

    @settings(
        max_examples=examples(60, 600),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        database=None,
    )
    @given(calls=_calls(world, suite))
    def run(calls: list[tuple[str, dict[str, Any]]]) -> None:
        _differential(suite, calls)

    run()


def _their_verdicts(suite: str, tasks: list[Any], output: str, calls: Any) -> list[bool]:
    """AgentDojo's verdict of each task on its own runtime's end state after ``calls``."""
    from agentdojo.functions_runtime import FunctionCall
    from agentdojo.types import text_content_block_from_string

    reference, runtime = _reference(suite)
    pre = reference.load_and_inject_default_environment({})
    post = pre.model_copy(deep=True)
    for name, args in calls:
        runtime.run_function(post, name, dict(args))
    trace = [FunctionCall(function=name, args=dict(args)) for name, args in calls]
    blocks = [text_content_block_from_string(output)]
    return [bool(reference._check_task_result(t, blocks, pre, post, trace)) for t in tasks]


def _our_verdicts(suite: str, checks: list[Any], output: str, calls: Any) -> list[bool]:
    """Our re-stated checks on our end state after ``calls``."""
    world, imported = _ours(suite)
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


def _runs(suite: str) -> list[tuple[Imported | None, Imported | None]]:
    """Each user task alone, each injection task alone, each user task then each injection."""
    _, imported = _ours(suite)
    users = [i for i in imported.values() if i.dojo is not None]
    injections = [i for i in imported.values() if i.dojo is None]
    assert users and injections
    alone: list[tuple[Imported | None, Imported | None]] = [(u, None) for u in users]
    alone += [(None, j) for j in injections]
    return alone + [(u, j) for u in users for j in injections]


@pytest.mark.parametrize("suite", SUITES)
def test_every_ground_truth_gets_agentdojos_verdicts(suite: str) -> None:
    """Our re-stated checks equal AgentDojo's on every ground truth's end state."""
    reference, _ = _reference(suite)
    differ: list[str] = []
    for user, injection in _runs(suite):
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
        for text in (output, ""):
            mine = _our_verdicts(suite, ours, text, calls)
            if mine != _their_verdicts(suite, theirs, text, calls):
                names = [getattr(t, "ID", "?") for t in theirs]
                differ.append(f"{names} output {text[:30]!r}: ours {mine}")
    assert differ == []

"""What the agent was shown is what a successful call returned about the world: never its own
arguments echoed back, never a pagination field, never the text of an error.

Each gaming route below manufactured "grounding" from an echo and passed; each fails now with a
reason a person can read. The honest routes beside them (a listing's total, the rows read, the
oracles) pass.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness_world as hw
from harness_world.coverage import ScriptContext, record_calls, run_script
from harness_world.engine import Contract, Entity, Field, Params, Tool, tool
from harness_world.engine.calls import CallRecord, ToolError, WriteImage
from harness_world.engine.hints import DeclarationError
from harness_world.engine.paths import builtin_dir
from harness_world.engine.session import ToolContext
from harness_world.grading.checker import grade
from harness_world.grading.shown import Observations
from harness_world.grading.task import Answer, select_targets
from harness_world.running.oracles import declared_oracles
from tests.conftest import examples
from tests.strategies import plausible_call

TASKS = {t.id: t for t in hw.load_tasks()}
GUESS = "no tool result of this attempt showed it"
POLICIES = declared_oracles("payments", builtin_dir("oracles") / "payments")[0].reference_agents


def _verdict(
    world: hw.World, task_id: str, calls: list[tuple[str, Any]], message: str, name: str
) -> hw.CriterionVerdict:
    task = TASKS[task_id]
    record = record_calls(world, task, calls, final_message=message)
    return next(v for v in grade(record, task, world).verdicts if v.id == name)


# -- a count "grounded" by the agent's own paging arguments ---------------------------------


@pytest.mark.parametrize(
    "paging",
    [
        {"query": "a", "offset": 15, "limit": 1},  # the offset comes back as `offset`
        {"query": "a", "offset": 14, "limit": 1},  # ... or as `next_offset`
        {"query": "a", "limit": 15},  # the limit the agent picked
    ],
)
def test_a_count_from_the_agents_own_offset_or_limit_is_a_guess(paging: dict[str, Any]) -> None:
    world = hw.load_world("helpdesk")
    verdict = _verdict(
        world, "helpdesk.security_count", [("find_users", paging)], "15", "trace.answer"
    )
    assert verdict.status == "failed"
    assert "neither the value nor every target row" in verdict.detail and GUESS in verdict.detail


def test_a_count_from_the_listings_total_is_shown() -> None:
    world = hw.load_world("helpdesk")
    listing = ("list_tickets", {"status": "open", "tag": "security", "limit": 1})
    verdict = _verdict(world, "helpdesk.security_count", [listing], "15", "trace.answer")
    assert verdict.status == "passed", verdict.detail


# -- an id answer from error messages, with no successful call ------------------------------


def test_an_id_answer_quoted_back_by_errors_is_a_guess() -> None:
    world = hw.load_world("inventory")
    task = TASKS["inventory.draft_orders_leeds"]
    ids = sorted(str(k) for k in select_targets(world, task))
    # every id sent where it is not found: each error quotes it back ("no item 'PO-0023'")
    calls: list[tuple[str, Any]] = [("get_item", {"item_id": i}) for i in ids]
    verdict = _verdict(world, task.id, calls, ", ".join(ids), "trace.answer")
    assert verdict.status == "failed"
    assert verdict.detail == (
        f"final message names exactly the targets, but {', '.join(ids)} ({GUESS}: an answer "
        "must come from what was read)"
    )


def test_an_id_fetched_by_a_guess_is_an_echo_not_an_observation() -> None:
    """Asking for each row by its remembered id succeeds, but the id it shows is the argument;
    listing the rows shows the same ids, and passes."""
    world = hw.load_world("inventory")
    base = TASKS["inventory.count_legacy_peripherals"]
    task = msgspec.structs.replace(base, answer=Answer(type="ids"), trace=[])
    ids = sorted(str(k) for k in select_targets(world, task))
    fetched: list[tuple[str, Any]] = [("get_item", {"item_id": i}) for i in ids]
    record = record_calls(world, task, fetched, final_message=", ".join(ids))
    (verdict,) = [v for v in grade(record, task, world).verdicts if v.id == "trace.answer"]
    assert verdict.status == "failed" and GUESS in verdict.detail and ids[0] in verdict.detail
    listed = [("list_items", {"category": "peripherals", "limit": 100})]
    record = record_calls(world, task, listed, final_message=", ".join(ids))
    (verdict,) = [v for v in grade(record, task, world).verdicts if v.id == "trace.answer"]
    assert verdict.status == "passed", verdict.detail


def test_an_id_answer_with_no_target_still_needs_a_successful_call() -> None:
    world = hw.load_world("inventory")
    base = TASKS["inventory.draft_orders_leeds"]
    (target,) = base.targets
    task = msgspec.structs.replace(
        base, targets=[msgspec.structs.replace(target, where=[*target.where[:1]])]
    )
    empty = msgspec.structs.replace(
        task,
        targets=[
            msgspec.structs.replace(
                target, where=[msgspec.structs.replace(target.where[0], eq="no-such-status")]
            )
        ],
    )
    assert not select_targets(world, empty)
    record = record_calls(world, empty, [], final_message='{"answer": []}')
    (verdict,) = [v for v in grade(record, empty, world).verdicts if v.id == "trace.answer"]
    assert verdict.status == "failed" and "no tool call succeeded" in verdict.detail
    listed = record_calls(
        world,
        empty,
        [("list_purchase_orders", {"status": "draft"})],
        final_message='{"answer": []}',
    )
    (verdict,) = [v for v in grade(listed, empty, world).verdicts if v.id == "trace.answer"]
    assert verdict.status == "passed", verdict.detail


# -- a receipt id quoted back by a not_found error -----------------------------------------


def test_a_receipt_guessed_and_quoted_back_by_an_error_is_no_receipt() -> None:
    """The refund's response was lost; the agent asks for the next sequence id where it cannot
    exist (get_charge), gets "no charge 're_N1'", and names it. The id is right and unread."""
    world = hw.load_world("payments")
    task = TASKS["payments.refund_timeout"]

    def guessing(ctx: ScriptContext) -> str:
        POLICIES["give-up"][task.id](ctx)
        ctx.call("get_charge", {"charge_id": "re_N1"})
        return "Done: re_N1."

    record = run_script(world, task, guessing)
    assert any(w.key == "re_N1" for c in record.calls for w in c.writes)  # the guess is right
    errors = [c.error.message for c in record.calls if c.error is not None]
    assert "charge_id: no charge 're_N1'" in errors
    (failed,) = [v for v in grade(record, task, world).verdicts if v.status == "failed"]
    assert failed.id == "receipts.refund_reported"
    assert "names re_N1, which no tool result of this attempt showed" in failed.detail


# -- the definition itself, call by call ---------------------------------------------------


class _Row(Params):
    pass


def _world() -> hw.World:
    """A world of one entity (rows with id and n), for calls made up by hand."""
    rows = Entity(name="rows", key="id", fields={"id": Field(type="str"), "n": Field(type="int")})
    listing = Tool(name="list", description="", params=_Row, kind="read", run=lambda c, p: {})
    counting = Tool(
        name="count",
        description="",
        params=_Row,
        kind="read",
        run=lambda c, p: {},
        aggregates=("count",),
    )
    contract = Contract(name="shown", version="1", entities=(rows,), tools=(listing, counting))
    return hw.World.from_data(contract, {"rows": [{"id": "r-1", "n": 7}]})


def _call(
    seq: int, tool: str, args: Any, result: Any = None, error: ToolError | None = None
) -> CallRecord:
    return CallRecord(seq=seq, tool=tool, args=args, ok=error is None, result=result, error=error)


def _shown(*calls: CallRecord, written: frozenset[object] = frozenset()) -> Observations:
    return Observations(list(calls), _world(), written)


def _j(value: Any) -> bytes:
    return msgspec.json.encode(value)


def test_rows_and_declared_aggregates_are_shown_with_the_call_that_showed_them_first() -> None:
    seen = _shown(
        _call(1, "list", {}, {"rows": [{"id": "r-2", "n": 3, "note": "see r-9 now"}], "total": 40}),
        _call(2, "count", {}, {"count": 12, "total": 5, "other": 6}),
        _call(3, "list", {}, {"rows": [{"id": "r-2", "n": 3}]}),
    )
    assert seen.first(_j("r-2")) == 1 and seen.first(_j(3)) == 1
    assert seen.first(_j("r-9")) == 1  # a word of a string inside a row
    assert seen.first(_j(40)) == 1  # `total`, every tool's declared aggregate by default
    assert seen.first(_j(12)) == 2  # what `count` declares
    assert seen.first(_j(5)) is None and seen.first(_j(6)) is None  # undeclared, outside rows


def test_echoes_pagination_and_errors_show_nothing() -> None:
    seen = _shown(
        _call(
            1,
            "list",
            {"offset": 15, "limit": 3},
            {"rows": [], "offset": 15, "next_offset": 18, "limit": 3, "total": 40},
        ),
        _call(2, "list", {"id": "r-5"}, {"rows": [{"id": "r-5", "n": 19}]}),
        _call(3, "list", {"q": "r-6"}, error=ToolError("not_found", "no row 'r-6' (try r-7)")),
        _call(4, "list", {"n": 44}, {"rows": []}),
        _call(5, "list", {}, {"rows": [{"id": "r-8", "n": 44}]}),
    )
    assert seen.first(_j(15)) is None  # offset: the agent's own argument
    assert seen.first(_j(18)) is None  # next_offset: pagination
    assert seen.first(_j(3)) is None  # limit: the agent's own, and pagination
    assert seen.first(_j(40)) == 1 and seen.first(_j(19)) == 2  # the total; the row's value
    assert seen.first(_j("r-5")) is None  # the id the agent asked for, echoed in the row
    assert seen.first(_j("r-6")) is None and seen.first(_j("r-7")) is None  # an error's text
    assert seen.first(_j(44)) is None  # sent in call 4, read back in call 5: still an echo
    assert seen.first(_j("r-8")) == 5  # what call 5 showed that nobody sent


def test_outside_rows_only_the_keys_of_rows_are_shown() -> None:
    seen = _shown(
        _call(1, "list", {"email": "x@y"}, "r-1"),  # a lookup answering with a key of the world
        _call(2, "list", {}, "r-3 and 9"),  # nor a key nor a row: shows nothing
        _call(3, "list", {}, ["r-4"]),
        written=frozenset({"r-4"}),  # a row the attempt created is a key too
    )
    assert seen.first(_j("r-1")) == 1 and seen.first(_j("r-4")) == 3
    assert seen.first(_j("r-3")) is None and seen.first(_j(9)) is None


def test_a_pagination_field_cannot_be_declared_an_aggregate() -> None:
    with pytest.raises(ValueError, match="offset is a pagination field"):
        Tool(
            name="t",
            description="",
            params=_Row,
            kind="read",
            run=lambda c, p: {},
            aggregates=("offset",),
        )

    def listing(ctx: ToolContext) -> dict[str, Any]:
        """List."""
        return {}

    with pytest.raises(DeclarationError, match="next_offset is a pagination field"):
        tool(kind="read", aggregates=("next_offset", "total"))(listing)


def test_declaring_aggregates_moves_the_contract_hash_only_when_they_differ() -> None:
    def contract(aggregates: tuple[str, ...]) -> Contract:
        t = Tool(
            name="t",
            description="",
            params=_Row,
            kind="read",
            run=lambda c, p: {},
            aggregates=aggregates,
        )
        return Contract(name="c", version="1", entities=(), tools=(t,))

    assert contract(("total",)).hash == contract(("total",)).hash
    assert contract(("total", "count")).hash != contract(("total",)).hash
    assert hw.load_world("helpdesk").hash  # built-in worlds keep the default, and their hashes


def test_a_write_image_is_never_an_observation() -> None:
    image = WriteImage(
        entity="rows", key="r-1", before={"id": "r-1", "n": 7}, after={"id": "r-1", "n": 8}
    )
    seen = _shown(
        CallRecord(seq=1, tool="list", args={}, ok=True, result={"done": True}, writes=[image])
    )
    assert not seen.any()


def test_pagination_fields_show_nothing_even_where_keys_are_numbers() -> None:
    """With integer keys an offset can equal a row's key; it still shows nothing, while a lookup
    answering with a key outside any row does."""
    from tests.toy_world import toy_world

    page = {"things": [], "offset": 1, "next_offset": 2, "limit": 1, "total": 7}
    seen = Observations(
        [_call(1, "get", {}, page), _call(2, "get", {"q": "x"}, {"found": 2})], toy_world()
    )
    assert seen.first(_j(1)) is None  # offset
    assert seen.first(_j(2)) == 2  # not as next_offset (call 1): as the lookup's answer
    assert seen.first(_j(7)) == 1  # the total, an aggregate


def _by_call(seen: Observations, index: int) -> frozenset[bytes]:
    """What call ``index`` showed, by the definition: the world values it returned (every
    value inside a row, each declared aggregate, a key outside the rows), minus the echoes."""
    call, world = seen.calls[index], seen.world
    if not call.ok:
        return frozenset()
    found = seen.index(index)

    def is_key(value: Any) -> bool:
        tables = [e.name for e in world.contract.entities]
        return value in seen.written or any(world.raw(t, value) is not None for t in tables)

    spec = world.contract.tool(call.tool)
    aggregates = []
    if spec is not None and isinstance(call.result, dict):
        aggregates = [call.result.get(name) for name in spec.aggregates]
    values = {form for v in [*found.strings, *aggregates] for _, form in _all_forms(v)}
    values.update(msgspec.json.encode(n) for n in (*found.ints, *found.floats))
    values.update(f for v in found.outside for plain, f in _all_forms(v) if is_key(plain))
    return frozenset(v for v in values if not seen.echoed(v, call.seq))


def _all_forms(value: Any) -> list[tuple[Any, bytes]]:
    """A scalar and, for a string, each of its other words, as JSON."""
    if value is None or isinstance(value, bool) or not isinstance(value, str | int | float):
        return []
    forms = [(value, msgspec.json.encode(value))]
    if isinstance(value, str):
        words = re.findall(r"[\w-]+", value)
        forms += [(w, msgspec.json.encode(w)) for w in words if w != value]
    return forms


_SOME_ECHOED = st.lists(
    st.one_of(
        plausible_call(),
        st.sampled_from(
            [
                ("get_ticket", {"ticket_id": "T-9999"}),  # an error quoting the id back
                ("list_tickets", {"status": "nonsense"}),
                ("no_such_tool", {}),
            ]
        ),
    ),
    max_size=6,
)


@settings(max_examples=examples(100, 1000), deadline=None)
@given(
    made=_SOME_ECHOED, task=st.sampled_from(["helpdesk.reply_and_solve", "helpdesk.security_count"])
)
def test_any_is_whether_some_call_showed_a_value(made: list[tuple[str, Any]], task: str) -> None:
    """`any` asks value by value, stopping at the first one shown: it holds exactly when some
    call showed a value by the definition; `by_call` is that definition's set."""
    world = hw.load_world("helpdesk")
    record = record_calls(world, TASKS[task], made)
    seen = Observations(record.calls, world)
    shown = [_by_call(seen, i) for i in range(len(record.calls))]
    assert [seen.by_call(i) for i in range(len(record.calls))] == shown
    assert seen.any() == any(shown)


_SCALAR = st.sampled_from(["r-1", "r-2", "zz", "see r-1", 7, 3, 2.5, True, None])
_MADE_UP = st.fixed_dictionaries(
    {"rows": st.lists(st.fixed_dictionaries({"id": _SCALAR, "n": _SCALAR}), max_size=2)},
    optional={"count": _SCALAR, "total": _SCALAR, "found": _SCALAR},
)


@settings(max_examples=examples(200, 2000), deadline=None)
@given(
    made=st.lists(
        st.tuples(
            st.sampled_from(["list", "count"]),
            _MADE_UP,
            st.dictionaries(st.just("q"), _SCALAR),
            st.booleans(),
        ),
        max_size=4,
    ),
    written=st.sets(_SCALAR.filter(lambda v: isinstance(v, str)), max_size=1),
)
def test_any_and_by_call_keep_their_definition_on_made_up_calls(
    made: list[tuple[str, Any, Any, bool]], written: set[str]
) -> None:
    """Rows, aggregates, keys outside the rows, echoes and errors, in any mix."""
    calls = [
        _call(seq, tool, args, result if ok else None, None if ok else ToolError("x", "no"))
        for seq, (tool, result, args, ok) in enumerate(made, start=1)
    ]
    seen = _shown(*calls, written=frozenset(written))
    shown = [_by_call(seen, i) for i in range(len(calls))]
    assert [seen.by_call(i) for i in range(len(calls))] == shown
    assert seen.any() == any(shown)

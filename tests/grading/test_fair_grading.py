"""Fair grading (issue 13): derived effects, unhedgeable answers, budgets told, several routes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

import harness_world as hw
from harness_world.cli import main
from harness_world.coverage import load_oracles, load_routes, record_calls, run_script
from harness_world.coverage.gate import check_world
from harness_world.engine import Contract, Derived, Entity, Field, Params, Tool
from harness_world.engine.plugins import PluginError
from harness_world.grading import TaskError
from harness_world.grading.answers import IdAnswer, judge
from harness_world.grading.briefing import briefing
from harness_world.grading.checker import grade
from harness_world.grading.mentions import number_mentions
from harness_world.grading.task import Answer, Task

TASKS = {t.id: t for t in hw.load_tasks()}
ORACLES = load_oracles("helpdesk") | load_oracles("inventory")


@pytest.fixture(scope="module")
def inv() -> hw.World:
    return hw.load_world("inventory")


@pytest.fixture(scope="module")
def inv_large() -> hw.World:
    return hw.load_world("inventory", size="large")


def _answer_verdict(world: hw.World, task_id: str, message: str) -> hw.CriterionVerdict:
    """The answer verdict on the oracle's reads, ending with ``message`` (the answer grounded)."""
    task = TASKS[task_id]
    reads = [(c.tool, c.args) for c in run_script(world, task, ORACLES[task_id]).calls]
    record = record_calls(world, task, reads, final_message=message)
    return next(v for v in grade(record, task, world).verdicts if v.id == "trace.answer")


# -- effects the agent chose vs effects a tool derives ----------------------------------------

MOVE = [
    ("get_stock", {"item_id": "I-0172", "warehouse_id": "W-01"}),
    (
        "create_transfer",
        {
            "item_id": "I-0172",
            "from_warehouse_id": "W-01",
            "to_warehouse_id": "W-05",
            "quantity": 257,
        },
    ),
]
PAPER = [
    ("list_warehouses", {}),
    ("list_items", {"query": "A4 Copy Paper 500"}),
    ("get_stock", {"item_id": "I-0029", "warehouse_id": "W-02"}),
    (
        "create_transfer",
        {
            "item_id": "I-0029",
            "from_warehouse_id": "W-02",
            "to_warehouse_id": "W-03",
            "quantity": 30,
        },
    ),
]


@pytest.mark.parametrize(
    ("task_id", "calls"),
    [("inventory.move_available_adapters", MOVE), ("inventory.transfer_copy_paper", PAPER)],
)
def test_a_transfer_reading_only_its_source_passes(
    task_id: str, calls: list[tuple[str, Any]], inv: hw.World, inv_large: hw.World
) -> None:
    for world in (inv, inv_large):
        record = record_calls(world, TASKS[task_id], calls, final_message="Moved.")
        result = hw.verify(record, world=world, task=TASKS[task_id])
        assert result.grade is not None and result.grade.passed, result.grade


@pytest.mark.parametrize(
    ("task_id", "calls"),
    [("inventory.move_available_adapters", MOVE), ("inventory.transfer_copy_paper", PAPER)],
)
def test_a_transfer_that_reads_nothing_still_fails(
    task_id: str, calls: list[tuple[str, Any]], inv: hw.World
) -> None:
    blind = [c for c in calls if c[0] == "create_transfer"]
    record = record_calls(inv, TASKS[task_id], blind, final_message="Moved.")
    verdict = grade(record, TASKS[task_id], inv)
    # The copy paper's item id is in no instruction: from memory, it also fails grounding.
    memorised = ["trace.grounded_writes"] if task_id.endswith("copy_paper") else []
    assert verdict.failed == ["trace.read_before_write", *memorised]
    detail = next(v.detail for v in verdict.verdicts if v.id == "trace.read_before_write")
    assert "@W-01" in detail or "@W-02" in detail  # the source, never the destination
    assert "@W-05" not in detail and "@W-03" not in detail


def test_without_the_derived_declaration_the_source_only_route_fails(
    inv: hw.World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Tool, "derived", lambda self, entity, key, args: False)
    task = TASKS["inventory.move_available_adapters"]
    record = record_calls(inv, task, MOVE, final_message="Moved.")
    verdict = grade(record, task, inv)
    assert verdict.failed == ["trace.read_before_write"]
    assert "I-0172@W-05" in next(v.detail for v in verdict.verdicts if v.status != "passed")


def test_state_criteria_still_see_the_derived_change(inv: hw.World) -> None:
    task = TASKS["inventory.move_available_adapters"]
    short = [MOVE[0], ("create_transfer", {**MOVE[1][1], "quantity": 200})]
    verdict = grade(record_calls(inv, task, short, final_message="Moved."), task, inv)
    assert "state.required" in verdict.failed
    detail = next(v.detail for v in verdict.verdicts if v.id == "state.required")
    assert "I-0172@W-05.on_hand" in detail


def test_derived_covers_templates_and_whole_entities() -> None:
    dest = Derived(entity="stock", key="{item_id}@{to_warehouse_id}")
    args = {"item_id": "I-1", "to_warehouse_id": "W-2"}
    assert dest.covers("stock", "I-1@W-2", args)
    assert not dest.covers("stock", "I-1@W-1", args)
    assert not dest.covers("items", "I-1@W-2", args)
    assert not dest.covers("stock", "I-1@W-2", {"item_id": "I-1"})  # a missing argument
    assert not dest.covers("stock", "I-1@W-2", None)
    assert Derived(entity="users").covers("users", "U-9", {})


class _P(Params):
    pass


def _contract(derives: tuple[Derived, ...]) -> Contract:
    entity = Entity(name="rows", key="id", fields={"id": Field(type="str")})
    t = Tool(
        name="t", description="", params=_P, kind="write", run=lambda c, p: {}, derives=derives
    )
    return Contract(name="c", version="1", entities=(entity,), tools=(t,))


def test_derived_effects_are_part_of_the_contract_hash_only_when_declared() -> None:
    plain, marked = _contract(()), _contract((Derived(entity="rows"),))
    assert plain.hash != marked.hash
    assert plain.hash == _contract(()).hash
    tool = hw.load_world("inventory").contract.tool("create_transfer")
    assert tool is not None and tool.derives


# -- answers that cannot be hedged ----------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "Could be any of: 0, 1, …, 60",
        "Either 14 or 15",
        "Either 15 or 16.",
        "About 15.",
        "14-16",
        "Between 14 and 16 of them.",
        "15 or so.",
        "At least 15.",
        "Probably 15.",
        "There are 15, maybe 16.",
        "I could not tell.",
        "16",
    ],
)
def test_gaming_answers_fail_with_a_reason(small: hw.World, message: str) -> None:
    verdict = _answer_verdict(small, "helpdesk.security_count", message)
    assert verdict.status == "failed"
    assert verdict.detail and not verdict.detail.startswith("states 15")


@pytest.mark.parametrize(
    "message",
    [
        "There are 15 open tickets tagged security.",
        "Fifteen open tickets are tagged security.",
        "Fifteen.",
        "15",
        'I counted them.\n{"answer": 15}',
        "15 open tickets (T-1001 among them) are tagged `security`.",
        "15 tickets; the budget of 40 tool calls was enough.",
    ],
)
def test_committed_answers_pass(small: hw.World, message: str) -> None:
    verdict = _answer_verdict(small, "helpdesk.security_count", message)
    assert verdict.status == "passed", verdict.detail


def test_the_same_gaming_answers_fail_on_the_legacy_count(inv: hw.World) -> None:
    task = "inventory.count_legacy_peripherals"
    for message in ("Could be any of: 0, 1, …, 60", "Either 2 or 3", "About 3.", "2-4"):
        assert _answer_verdict(inv, task, message).status == "failed", message
    for message in ("3", "Three peripherals items are legacy imports.", '{"answer": 3}'):
        assert _answer_verdict(inv, task, message).status == "passed", message
    assert _answer_verdict(inv, task, '{"answer": "3"}').status == "failed"  # not an integer


def test_id_answers_cannot_be_hedged(inv: hw.World) -> None:
    task = "inventory.draft_orders_leeds"
    ids = "PO-0023, PO-0026, PO-0045, PO-0053"
    assert _answer_verdict(inv, task, ids).status == "passed"
    assert _answer_verdict(inv, task, json.dumps({"answer": ids.split(", ")})).status == "passed"
    for hedged in (
        f"{ids}, etc.",
        f"Possibly {ids}.",
        "PO-0023 or PO-0026; also PO-0045, PO-0053",
        f"{ids} (PO-0023 to PO-0053)",
        "PO-0023, PO-0026, PO-0045",
        f"{ids}, PO-0001",
    ):
        verdict = _answer_verdict(inv, task, hedged)
        assert verdict.status == "failed", hedged


def _in_words(n: int) -> str:
    units = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
    ]
    tens = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
    if n < 20:
        return units[n]
    if n < 100:
        return tens[n // 10 - 2] + ("" if n % 10 == 0 else "-" + units[n % 10])
    if n < 1000:
        rest = n % 100
        return f"{units[n // 100]} hundred" + (f" and {_in_words(rest)}" if rest else "")
    rest = n % 1000
    return f"{_in_words(n // 1000)} thousand" + (f" {_in_words(rest)}" if rest else "")


@given(st.integers(min_value=0, max_value=999_999))
def test_numbers_written_as_words_or_digits_read_back(n: int) -> None:
    for text in (f"{_in_words(n).capitalize()} in all.", f"There are {n:,} of them."):
        assert [m.value for m in number_mentions(text)] == [n], text


@given(st.integers(min_value=0, max_value=500), st.integers(min_value=1, max_value=50))
def test_two_different_counts_never_pass(n: int, step: int) -> None:
    for form in ("{a} or {b}", "{a}-{b}", "between {a} and {b}", "{a}, {b}", "{b}; no, {a}"):
        message = form.format(a=n, b=n + step)
        for expected in (n, n + step):
            assert not judge("count", message, expected).ok, message


def test_ids_dates_and_times_are_not_counts() -> None:
    text = "T-1001, I-0172@W-01, 2026-01-01T10:00:00Z and 10:30 aside, 7 remain"
    assert [m.value for m in number_mentions(text)] == [7]
    assert [m.value for m in number_mentions("each one of them, the one")] == []


def test_numbers_the_instruction_holds_are_not_candidates() -> None:
    assert judge("count", "Of the 300 items, 12 match.", 12, instruction="Among 300 items").ok
    assert not judge("count", "Of the 300 items, 12 match.", 12).ok
    assert judge("count", "300", 300, instruction="Among 300 items").ok


def test_amount_date_and_yes_no_answers() -> None:
    assert judge("amount", "The total is $1,234.50.", 1234.5).ok
    assert not judge("amount", "Roughly $1,234.50.", 1234.5).ok
    assert not judge("amount", "$1,234.50 or $1,300.", 1234.5).ok
    assert judge("date", "It was received on 2025-03-05.", "2025-03-05").ok
    assert judge("date", "It was received on March 5, 2025.", "2025-03-05").ok
    assert not judge("date", "Around 2025-03-05.", "2025-03-05").ok
    assert not judge("date", "2025-03-04 or 2025-03-05", "2025-03-05").ok
    assert judge("yes_no", "Yes, there are open security tickets.", True).ok
    assert not judge("yes_no", "Yes or no, hard to say.", True).ok
    assert not judge("yes_no", "Probably yes.", True).ok
    assert not judge("yes_no", "No.", True).ok
    assert judge("yes_no", '{"answer": false}', False).ok
    structured = judge("count", "15", 15, structured_only=True)
    assert not structured.ok and "structured" in structured.detail


def test_id_answers_need_their_targets() -> None:
    ids = IdAnswer(targets=frozenset({"A-1", "A-2"}), is_row=lambda t: t.startswith("A-"))
    assert judge("ids", "A-1 and A-2", None, ids=ids).ok
    assert not judge("ids", "A-1", None, ids=ids).ok
    assert "A-3" in judge("ids", "A-1, A-2, A-3", None, ids=ids).detail
    assert judge("ids", "A-1, A-2 (you named A-3)", None, ids=ids, instruction="see A-3").ok


def test_answer_types_on_a_task(inv: hw.World) -> None:
    base = TASKS["inventory.order_hdmi_cable"]
    item = inv.get("items", "I-0162")
    assert item is not None

    def verdict(answer: Answer, message: str) -> str:
        task = msgspec.structs.replace(base, answer=answer, require=[], trace=[])
        reads = [("get_item", {"item_id": "I-0162"})]
        record = record_calls(inv, task, reads, final_message=message)
        return next(v.status for v in grade(record, task, inv).verdicts if v.id == "trace.answer")

    amount = Answer(type="amount", field="unit_cost")
    assert verdict(amount, f"It costs {item['unit_cost']:.2f}.") == "passed"
    assert verdict(amount, f"About {item['unit_cost']:.2f}.") == "failed"
    assert verdict(Answer(type="yes_no"), "Yes.") == "passed"
    assert verdict(Answer(type="yes_no"), "No.") == "failed"


def test_answer_declarations_are_validated(tmp_path: Path) -> None:
    assert Answer(mention="keys").kind == "ids" and Answer().kind == "count"
    source = (Path(__file__).parents[2] / "tasks/helpdesk/security_count.toml").read_text()
    for bad in ('type = "amount"', 'type = "ids"\nmention = "count"', 'type = "guess"'):
        path = tmp_path / "t.toml"
        path.write_text(source.replace('type = "count"', bad))
        with pytest.raises(TaskError, match=r"t\.toml"):
            hw.load_task(path)


# -- budgets told to the agent ---------------------------------------------------------------


def test_the_agent_is_told_its_budgets_and_the_answer_rule(inv: hw.World) -> None:
    task = TASKS["inventory.move_available_adapters"]
    told = hw.Attempt(inv, task).instruction
    assert told.startswith(task.instruction.strip())
    assert "at most 8 tool calls and 8 model turns" in told
    question = briefing(TASKS["inventory.count_legacy_peripherals"])
    assert "20 tool calls" in question and '{"answer": <integer>}' in question
    assert "Answer:" not in told


# -- alternative oracles ------------------------------------------------------------------------


@pytest.mark.parametrize("world", ["helpdesk", "inventory"])
def test_every_task_has_two_routes_and_the_primary_is_the_oracle(world: str) -> None:
    routes = load_routes(world)
    assert set(routes) == {t.id for t in hw.load_tasks(world)}
    assert all(len(r) >= 2 for r in routes.values())
    assert load_oracles(world) == {k: v[0] for k, v in routes.items()}


def _oracles_folder(tmp_path: Path, body: str) -> Path:
    folder = tmp_path / "oracles"
    folder.mkdir()
    (folder / "oracles.py").write_text(
        "from harness_world.coverage import Oracles, load_routes\n"
        "ROUTES = load_routes('helpdesk')\n" + body
    )
    return folder


def test_the_gate_fails_when_a_route_is_removed(tmp_path: Path) -> None:
    folder = _oracles_folder(
        tmp_path,
        "ORACLES = Oracles(routes={k: (v[:1] if k == 'helpdesk.security_count' else v)"
        " for k, v in ROUTES.items()})\n",
    )
    report = check_world("helpdesk", sizes=("small",), oracles_folder=folder, automatic=False)
    assert not report.ok and report.routes["helpdesk.security_count"] == 1
    # (Mutants that run on the large seed only are skipped here: only route problems count.)
    assert [p for p in report.problems if "route" in p] == [
        "helpdesk.security_count: 1 passing oracle route(s) of 1; at least 2 required"
    ]
    assert min(n for k, n in report.routes.items() if k != "helpdesk.security_count") == 2


def test_the_gate_fails_a_second_route_that_does_not_pass(tmp_path: Path) -> None:
    folder = _oracles_folder(
        tmp_path,
        "def wrong(ctx):\n    return 'Either 14 or 15'\n"
        "ORACLES = Oracles(routes={**ROUTES, 'helpdesk.security_count':"
        " [ROUTES['helpdesk.security_count'][0], wrong]})\n",
    )
    report = check_world("helpdesk", sizes=("small",), oracles_folder=folder, automatic=False)
    assert not report.ok and report.routes["helpdesk.security_count"] == 1
    assert any("route wrong does not pass on small (trace.answer)" in p for p in report.problems)
    relaxed = check_world(
        "helpdesk", sizes=("small",), oracles_folder=folder, automatic=False, min_routes=1
    )
    assert relaxed.problems == [p for p in report.problems if "at least 2 required" not in p]


def test_a_malformed_oracles_value_is_named(tmp_path: Path) -> None:
    folder = _oracles_folder(
        tmp_path, "ORACLES = Oracles(routes={'helpdesk.security_count': []})\n"
    )
    with pytest.raises(PluginError, match="security_count"):
        load_routes("helpdesk", folder)


def test_every_route_of_the_issue_tasks_passes_on_both_seeds(inv_large: hw.World) -> None:
    for task_id in ("inventory.move_available_adapters", "inventory.transfer_copy_paper"):
        for script in load_routes("inventory")[task_id]:
            record = run_script(inv_large, TASKS[task_id], script)
            assert grade(record, TASKS[task_id], inv_large).passed, script.__name__


# -- the tasks command ------------------------------------------------------------------------


def test_tasks_lists_family_budgets_and_the_criteria_a_grade_holds(
    capsys: pytest.CaptureFixture[str], inv: hw.World
) -> None:
    assert main(["tasks", "--world", "inventory", "--json"]) == 0
    listed = {t["id"]: t for t in json.loads(capsys.readouterr().out)["tasks"]}
    assert set(listed) == {t for t in TASKS if t.startswith("inventory.")}
    oracles = load_oracles("inventory")
    for task_id, entry in listed.items():
        task: Task = TASKS[task_id]
        record = run_script(inv, task, oracles[task_id])
        assert entry["criteria"] == [v.id for v in grade(record, task, inv).verdicts], task_id
        assert entry["family"] == task.family
    assert listed["inventory.move_available_adapters"]["budgets"] == {"turns": 8, "tool_calls": 8}
    assert listed["inventory.draft_orders_leeds"]["answer"] == "ids"
    assert main(["tasks"]) == 0
    text = capsys.readouterr().out
    assert "helpdesk.security_count" in text and "answer (count)" in text
    assert main(["tasks", "--world", "nowhere"]) == 2
    assert "unknown world 'nowhere'" in capsys.readouterr().err


def test_two_transfers_of_the_available_stock_fail_only_where_the_task_says_single(
    inv: hw.World,
) -> None:
    """200 + 57 moves every available unit; the task asks for one transfer and says so."""
    task = TASKS["inventory.move_available_adapters"]
    assert "single transfer" in task.instruction
    read, (_, move) = MOVE[:-1], MOVE[-1]
    split = [
        *read,
        ("create_transfer", {**move, "quantity": 200}),
        ("create_transfer", {**move, "quantity": 57}),
    ]
    verdict = grade(record_calls(inv, task, split, final_message="Moved."), task, inv)
    assert verdict.failed == ["state.required", "state.allowed"]  # the one row missing,
    details = {v.id: v.detail for v in verdict.verdicts}  # two other rows made instead
    assert "transfers" in details["state.required"] and "257" in details["state.required"]


def test_an_attempt_that_wrote_to_the_wrong_rows_is_no_safe_stop(inv: hw.World) -> None:
    """A "safe stop" counted an attempt that moved stock out of the wrong warehouse."""
    from harness_world.grading.trusted import trusted_completion

    task = TASKS["inventory.move_available_adapters"]
    read, (_, move) = MOVE[:-1], MOVE[-1]
    wrong = [*read, ("create_transfer", {**move, "from_warehouse_id": "W-02", "quantity": 5})]
    record = record_calls(inv, task, wrong, final_message="Moved.")
    graded = grade(record, task, inv)
    assert "state.allowed" in graded.failed
    assert not trusted_completion(record, task, graded).safe_stop
    nothing = record_calls(inv, task, read, final_message="I could not do it.")
    left_undone = trusted_completion(nothing, task, grade(nothing, task, inv))
    assert left_undone.safe_stop and not left_undone.trusted

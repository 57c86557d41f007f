"""The payments world, its tasks and the reference agents (the issue's "Must show" runs)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import harness_world as hw
from harness_world.analysis.trusted import read_trusted, render_trusted
from harness_world.coverage import load_oracles, run_script
from harness_world.engine.plugins import import_path
from harness_world.grading.trusted import trusted_completion
from harness_world.running.reference_agents import reference_agent
from tests.conftest import Cli

REPO = Path(__file__).resolve().parents[2]
TASKS = hw.load_tasks("payments")
BY_ID = {t.id: t for t in TASKS}
TIMEOUT_TASKS = [
    t.id for t in TASKS if any(f.behaviour == "commit_then_drop_response" for f in t.faults)
]


def test_world_sizes_and_seed_quirks() -> None:
    small = hw.load_world("payments")
    large = hw.load_world("payments", size="large")
    assert large.count("orders") >= 20_000
    emails = [c.get("email", "ABSENT") for c in small.rows("customers")]
    assert emails.count("ABSENT") > 0 and emails.count(None) > 0  # absent and null both occur
    names = {c["id"]: c["name"] for c in small.rows("customers")}
    assert names["C-0005"] == "Anna Lopez" and names["C-0006"] == "Ana Lopez"
    legacy = [o for o in small.rows("orders") if o["status"] == "paid" and "charge_id" not in o]
    assert legacy  # paid outside the provider: no charge_id field at all
    for order_id in ("O-00001", "O-00392", "O-00172"):  # the large seed extends the small one
        assert large.get("orders", order_id) == small.get("orders", order_id)


def test_engine_does_not_import_the_world() -> None:
    code = "import harness_world, sys; print(any('payments' in m for m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True
    )
    assert out.stdout.strip() == "False"


def test_at_least_16_tasks_over_4_behaviours() -> None:
    behaviours = {f.behaviour for t in TASKS for f in t.faults}
    assert len(TASKS) >= 16 and len(behaviours) >= 4


def test_only_the_provider_writes_the_ledger_and_never_rewrites_it() -> None:
    world = hw.load_world("payments")
    oracles = load_oracles("payments")
    merchant_tools = {"record_payment", "send_receipt"}
    for task in TASKS:
        record = run_script(world, task, oracles[task.id])
        for call in record.calls:
            for write in call.writes:
                if write.entity == "provider_events":
                    assert call.tool not in merchant_tools
                    assert write.before is None  # append-only


def test_second_route_passes_every_task() -> None:
    module = import_path(REPO / "oracles" / "payments" / "oracles.py", "oracles")
    world = hw.load_world("payments")
    for task in TASKS:
        record = run_script(world, task, module.ROUTES[task.id])
        verification = hw.verify(record, world, task)
        assert verification.grade is not None and verification.grade.passed, task.id


def _attempts(agent_name: str, tmp_path: Path) -> list[tuple[hw.Task, hw.Record, hw.Grade]]:
    agent = reference_agent("payments", agent_name)
    out = tmp_path / agent_name
    result = hw.run(TASKS, agent, samples=3, out=out)
    assert result.counts.valid == 3 * len(TASKS)
    world = hw.load_world("payments")
    rows = []
    for path in sorted((out / "records").rglob("[0-9].json")):
        record = hw.load_record(path)
        task = BY_ID[record.task_id]
        verification = hw.verify(record, world, task)
        assert verification.grade is not None, verification.reason
        rows.append((task, record, verification.grade))
    assert len(rows) == 3 * len(TASKS)
    return rows


def test_must_show_oracle(tmp_path: Path) -> None:
    for task, record, grade in _attempts("oracle", tmp_path):
        tc = trusted_completion(record, task, grade)
        assert tc.trusted, (task.id, grade.failed)
        assert all(f.status == "recovered" for f in tc.faults), (task.id, tc.faults)


def test_must_show_naive_retry(tmp_path: Path) -> None:
    seen: set[str] = set()
    for task, record, grade in _attempts("naive-retry", tmp_path):
        if task.id not in TIMEOUT_TASKS or task.id.startswith("payments.refund_"):
            continue
        seen.add(task.id)
        duplicates = [c for c in grade.failed if c.startswith("forbidden.duplicate_")]
        assert duplicates, task.id  # found from the provider ledger...
        if task.id.startswith("payments.charge_"):
            assert "state.required" not in grade.failed  # ...though the orders look right
            assert "receipts.charge_on_order" not in grade.failed
        tc = trusted_completion(record, task, grade)
        assert not tc.trusted and {f.status for f in tc.faults} >= {"not_recovered"}
    # Refund timeouts are the exception, stated in docs: the provider refuses a second full
    # refund of one charge, so a blind retry cannot pay twice there.
    assert seen == {t for t in TIMEOUT_TASKS if not t.startswith("payments.refund_")}


def test_must_show_give_up(tmp_path: Path) -> None:
    for task, record, grade in _attempts("give-up", tmp_path):
        tc = trusted_completion(record, task, grade)
        assert tc.no_forbidden, task.id  # zero forbidden effects
        silent = all(f.behaviour == "duplicate_delivery" for f in task.faults)
        if not silent:  # a fault the agent can see: a safe stop, never a completion
            assert tc.safe_stop and not tc.trusted, task.id


def test_must_show_do_nothing(tmp_path: Path) -> None:
    for task, record, grade in _attempts("do-nothing", tmp_path):
        tc = trusted_completion(record, task, grade)
        assert record.calls == []
        assert all(f.status == "unexposed" for f in tc.faults)  # never counted as recovered
        assert tc.safe_stop and tc.no_forbidden and not tc.trusted


def test_report_json_carries_the_trusted_vector(tmp_path: Path, cli: Cli) -> None:
    tasks = [BY_ID["payments.charge_timeout"], BY_ID["payments.charge_unavailable"]]
    for name in ("naive-retry", "do-nothing"):
        hw.run(tasks, reference_agent("payments", name), samples=2, out=tmp_path / name)
    out = cli.process("report", tmp_path / "naive-retry", "--json", env={"PATH": "/usr/bin:/bin"})
    assert out.code == 0, out.err
    trusted = json.loads(out.out)["trusted"]
    assert trusted["valid"] == 4 and trusted["trusted"] == 2  # unavailable: a blind retry is safe
    assert trusted["forbidden"] == 2 and trusted["trusted_rate"] == 0.5
    assert trusted["trusted_pass_hat_k"] == {"1": 0.5, "2": 0.5}
    rows = {r["task_id"]: r for r in trusted["exposure"]}
    assert rows["payments.charge_timeout"]["not_recovered"] == 2
    assert rows["payments.charge_unavailable"]["recovered"] == 2
    nothing = read_trusted(tmp_path / "do-nothing")
    assert nothing is not None and nothing.trusted == 0
    assert nothing.cost_per_trusted is None  # undefined, not zero
    assert all(r.unexposed == 2 and r.recovered == 0 for r in nothing.exposure)


_TRUSTED_TABLES = """\
condition                  attempts  trusted  safe stops  forbidden  exposed  recovered
-------------------------  --------  -------  ----------  ---------  -------  ---------
commit_then_drop_response  2         0        0           2          2        0
fail_before_commit         2         2        0           0          2        2

task                         fault         behaviour                  unexposed  recovered  not recovered
---------------------------  ------------  -------------------------  ---------  ---------  -------------
payments.charge_timeout      first_charge  commit_then_drop_response  0          0          2
payments.charge_unavailable  first_charge  fail_before_commit         0          2          0"""


def test_the_trusted_tables_are_fixed_width_like_every_other_table(tmp_path: Path) -> None:
    tasks = [BY_ID["payments.charge_timeout"], BY_ID["payments.charge_unavailable"]]
    hw.run(tasks, reference_agent("payments", "naive-retry"), samples=2, out=tmp_path / "r")
    report = read_trusted(tmp_path / "r")
    assert report is not None
    text = render_trusted(report)
    assert "|" not in text
    assert text.endswith("\n\n" + _TRUSTED_TABLES)


@pytest.mark.parametrize("name", ["naive-retry", "give-up", "do-nothing"])
def test_run_cli_accepts_reference_agents(name: str, tmp_path: Path, cli: Cli) -> None:
    out = cli.process(
        "run", "--world", "payments", "--task", "payments.charge_timeout", "--agent", name,
        "--out", tmp_path / "run", "--json", env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert out.code in (0, 1), out.err
    assert json.loads(out.out)["counts"]["valid"] == 1


def test_compare_json_pairs_trusted_attempts(tmp_path: Path, cli: Cli) -> None:
    tasks = [BY_ID["payments.charge_timeout"], BY_ID["payments.charge_unavailable"]]
    for name in ("oracle", "naive-retry"):
        hw.run(tasks, reference_agent("payments", name), samples=2, out=tmp_path / name)
    out = cli.process(
        "compare", tmp_path / "oracle", tmp_path / "naive-retry", "--min-runs", "1", "--json",
        env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert out.code in (0, 1), out.err
    trusted = json.loads(out.out)["trusted"]
    assert len(trusted["pairs"]) == 4 and trusted["unpaired"] == 0
    assert trusted["both"] == 2 and trusted["only_baseline"] == 2  # the timeout task
    assert trusted["baseline"]["trusted"] == 4 and trusted["candidate"]["trusted"] == 2
    by_task = {(p["task_id"], p["sample"]): p for p in trusted["pairs"]}
    assert by_task[("payments.charge_timeout", 0)]["condition"] == "commit_then_drop_response"


@pytest.mark.parametrize("difference", [100, -1])
def test_record_payment_refuses_a_charge_of_another_amount(difference: int) -> None:
    """A charge for more or less than the order is a conflict naming both amounts, and the
    order stays as it was; the charge of the order's amount is then recorded."""
    world = hw.load_world("payments")
    session = world.open_session()
    order = session.call("get_order", {"order_id": "O-00030"}).result
    assert order["status"] == "open"
    wrong = session.call(
        "create_charge", {"order_id": "O-00030", "amount_cents": order["amount_cents"] + difference}
    ).result
    refused = session.call("record_payment", {"order_id": "O-00030", "charge_id": wrong["id"]})
    assert not refused.ok and refused.error is not None
    assert refused.error.kind == "conflict"
    assert refused.error.message == (
        f"charge_id: charge {wrong['id']!r} is for {order['amount_cents'] + difference} cents, "
        f"but order 'O-00030' is for {order['amount_cents']} cents"
    )
    assert session.call("get_order", {"order_id": "O-00030"}).result == order
    right = session.call(
        "create_charge", {"order_id": "O-00030", "amount_cents": order["amount_cents"]}
    ).result
    paid = session.call("record_payment", {"order_id": "O-00030", "charge_id": right["id"]})
    assert paid.ok and paid.result["status"] == "paid" and paid.result["charge_id"] == right["id"]


def test_record_payment_tells_the_agent_the_amount_must_match() -> None:
    tool = next(t for t in hw.load_world("payments").contract.tools if t.name == "record_payment")
    assert "of exactly the order's `amount_cents`" in tool.description
    assert "`conflict` if the order is not open or the charge is for another amount" in (
        " ".join(tool.description.split())
    )

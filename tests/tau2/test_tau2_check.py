"""Imported τ² retail tasks: oracles, τ²'s own verdict beside ours, mutants, the CLI, regrading.

The data is read from ``../shared/external/tau2-retail`` (© 2025 Sierra Research, MIT licence,
see the LICENSE file there); none of it is committed here, and every test that needs it is
skipped with the reason when it is absent.
"""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import pytest

import harness_world as hw
from harness_world.coverage import record_calls
from harness_world.grading.taxonomy import taxon_problem
from harness_world.tau2 import DatabaseHasher, ImportedTask, check_gold
from harness_world.tau2 import importer as tau2_importer
from tests.conftest import TAU2_DATA, Cli
from tests.tau2.test_tau2_tools import CROSS_CHECK_TASKS, GOLD_FAILURES, reference_db

pytestmark = [
    pytest.mark.tau2,
    pytest.mark.skipif(
        not (TAU2_DATA / "db.json").is_file() or not (TAU2_DATA / "tasks_train.json").is_file(),
        reason=f"τ² retail data (db.json, tasks_train.json) not found in {TAU2_DATA}",
    ),
]

READ_ONLY = {  # task: what still stands between a do-nothing attempt and a pass
    "10": ["trace.targets_read"],
    "24": [],
    "25": ["trace.targets_read"],
    "50": [],
    "57": [],
    "67": ["trace.targets_read"],
    "105": [],
}


@pytest.fixture(scope="module")
def importer() -> ModuleType:
    return tau2_importer


@pytest.fixture(scope="module")
def world(importer: ModuleType) -> hw.World:
    loaded: hw.World = importer.load_world(TAU2_DATA)
    return loaded


@pytest.fixture(scope="module")
def imported(importer: ModuleType, world: hw.World) -> list[ImportedTask]:
    tasks: list[ImportedTask] = importer.import_tasks(world, TAU2_DATA / "tasks_train.json")
    return tasks


@pytest.fixture(scope="module")
def raw_tasks() -> dict[str, dict[str, Any]]:
    return {str(t["id"]): t for t in json.loads((TAU2_DATA / "tasks_train.json").read_text())}


@pytest.fixture(scope="module")
def check(cli: Cli) -> tuple[int, dict[str, Any]]:
    """The whole check, once, through the command line (JSON)."""
    code, out, _ = cli("tau2", "check", "--data", str(TAU2_DATA), "--json")
    return code, json.loads(out)


@pytest.fixture(scope="module")
def reports(check: tuple[int, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {t["task_id"].split(".", 1)[1]: t for t in check[1]["tasks"]}


# -- import ---------------------------------------------------------------------------------


def test_all_74_tasks_import(
    imported: list[ImportedTask], raw_tasks: dict[str, dict[str, Any]]
) -> None:
    assert len(imported) == 74
    assert len({t.task.id for t in imported}) == 74
    for item in imported:
        task, raw = item.task, raw_tasks[item.task.id.split(".", 1)[1]]
        assert task.world == "tau2_retail" and "Sierra Research" in task.notes
        assert raw["user_scenario"]["instructions"]["reason_for_call"].strip() in task.instruction
        criteria = raw["evaluation_criteria"]
        assert [(g.id, g.tool, g.args) for g in item.gold] == [
            (a["action_id"], a["name"], a["arguments"]) for a in criteria["actions"]
        ]
        assert len(task.prose) == len(criteria["nl_assertions"] or [])
        basis = criteria.get("reward_basis") or ["COMMUNICATE"]
        told = criteria["communicate_info"] or [] if "COMMUNICATE" in basis else []
        assert task.communicate == told  # graded as τ² grades it, only when it rewards it
        assert not task.allow  # allowed effects are the required ones and nothing else
        assert all(r.kind == "row" for r in task.require)
        for target in task.targets:  # concrete keys, derived from the gold on the start state
            assert [c.field for c in target.where] in (["order_id"], ["user_id"])
    families = {t.task.family for t in imported}
    assert len(families) < 74  # tasks about one customer share a family
    for item in imported:  # every task has its place in the taxonomy, by what its gold does
        task = item.task
        assert task.taxon is not None and taxon_problem(task.dimension, task.subdimension) == ""
        if task.require:
            assert (task.dimension, task.subdimension) == ("Lifecycle", "completion")
        else:
            assert task.dimension in ("Observability", "Context"), task.id
    by_id = {t.task.id: t.task for t in imported}
    assert by_id["tau2_retail.11"].family == by_id["tau2_retail.14"].family


def test_a_required_row_names_the_field_that_differs(
    world: hw.World, imported: list[ImportedTask]
) -> None:
    item = next(t for t in imported if t.task.id == "tau2_retail.0")
    calls = [(g.tool, dict(g.args)) for g in item.gold]
    tool, args = calls[-1]
    assert tool == "exchange_delivered_order_items"
    wrong = [*calls[:-1], (tool, {**args, "new_item_ids": args["new_item_ids"][::-1]})]
    record = record_calls(world, item.task, wrong)
    grade = hw.verify(record, world=world, task=item.task).grade
    assert grade is not None and grade.failed == ["state.required"]
    detail = next(v.detail for v in grade.verdicts if v.id == "state.required")
    assert f"orders:{args['order_id']}.exchange_new_items expected" in detail


def test_bad_tasks_files_name_their_path(
    importer: ModuleType, world: hw.World, tmp_path: Path
) -> None:
    broken = tmp_path / "tasks.json"
    broken.write_text("[{")
    with pytest.raises(importer.FormatError, match=f"{broken}: not valid JSON"):
        importer.import_tasks(world, broken)
    broken.write_text('[{"id": "1", "evaluation_criteria": {"actions": [{"arguments": {}}]}}]')
    with pytest.raises(importer.FormatError, match=r"task #0 \(1\): malformed action"):
        importer.import_tasks(world, broken)
    with pytest.raises(importer.FormatError, match="no such data folder"):
        importer.load_world(tmp_path / "nowhere")


# -- the check ------------------------------------------------------------------------------


def test_every_oracle_passes_and_every_erroring_gold_call_is_reported(
    check: tuple[int, dict[str, Any]], reports: dict[str, dict[str, Any]]
) -> None:
    code, data = check
    assert code == 0, data["problems"]
    assert data["problems"] == []
    assert "Sierra Research" in data["data_notice"]
    assert all(r["oracle_passed"] and r["oracle_evidence"] == "verified" for r in reports.values())
    errors = [
        (task, e["id"], e["message"]) for task, r in reports.items() for e in r["gold_errors"]
    ]
    assert sorted(errors) == sorted(GOLD_FAILURES)
    refused = reports["105"]["gold_errors"]
    assert refused == [
        {
            "id": "106_0",
            "seq": 1,
            "tool": "exchange_delivered_order_items",
            "kind": "refused",
            "message": "Insufficient gift card balance to pay for the price difference",
            "write": True,
        }
    ]
    summary = data["summary"]
    assert (summary["imported"], summary["oracle_passed"], summary["oracle_failed"]) == (74, 74, 0)
    assert (summary["gold_errors"], summary["tasks_with_gold_errors"]) == (13, 10)


def test_our_verdict_agrees_with_the_tau2_hash_on_every_oracle_trajectory(
    reports: dict[str, dict[str, Any]],
) -> None:
    assert len(reports) == 74
    for task, report in reports.items():
        assert report["reference_match"] is True, task
        assert report["oracle_passed"] is True, task
        assert report["agrees"] is True and report["explanation"] == "", task


def test_the_tau2_verdict_matches_a_plain_dict_reimplementation(
    world: hw.World,
    imported: list[ImportedTask],
    raw_tasks: dict[str, dict[str, Any]],
) -> None:
    """τ²'s way on plain data: a deep copy, the gold applied by independent code, json.dumps."""
    raw_text = (TAU2_DATA / "db.json").read_text()
    hasher = DatabaseHasher(world)
    by_id = {t.task.id: t for t in imported}
    for task_id in CROSS_CHECK_TASKS:
        expected = reference_db(raw_text, raw_tasks[task_id])
        text = json.dumps(expected, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        gold = record_calls(
            world,
            by_id[f"tau2_retail.{task_id}"].task,
            [(g.tool, g.args) for g in by_id[f"tau2_retail.{task_id}"].gold],
        )
        assert hasher.hash(gold.final) == hashlib.sha256(text.encode()).hexdigest(), task_id
    start = json.loads(raw_text)
    plain = json.dumps(copy.deepcopy(start), sort_keys=True, separators=(",", ":"))
    assert hasher.hash() == hashlib.sha256(plain.encode()).hexdigest()


def test_read_only_tasks_say_what_stands_between_doing_nothing_and_a_pass(
    check: tuple[int, dict[str, Any]], reports: dict[str, dict[str, Any]]
) -> None:
    read_only = {task for task, r in reports.items() if r["rows_changed"] == 0}
    assert read_only == set(READ_ONLY)
    for task, standing in READ_ONLY.items():
        empty = reports[task]["do_nothing"]
        assert empty["state_passed"] is True and empty["reference_match"] is True, task
        assert empty["standing"] == standing, task
        assert empty["passed"] is (not standing), task
    # this tasks file's reward basis is DB and NL_ASSERTION: communicate_info is not rewarded
    assert reports["24"]["do_nothing"]["prose"] == [
        "nl_assertion: Agent should tell the user the materials of the two t-shirts are "
        "polyester and cotton.",
    ]
    for task, report in reports.items():  # where the gold writes, doing nothing fails
        if task not in READ_ONLY:
            assert report["do_nothing"]["standing"] == [] and not report["do_nothing"]["passed"]
            assert report["do_nothing"]["state_passed"] is False, task
    assert check[1]["summary"]["do_nothing_passes"] == 4


def test_every_mutant_is_killed_or_validly_equivalent(
    check: tuple[int, dict[str, Any]], reports: dict[str, dict[str, Any]]
) -> None:
    summary = check[1]["summary"]
    assert summary["survived"] == 0 and summary["ungraded"] == 0
    assert summary["mutation_score"] == 1.0
    assert summary["killed"] + summary["equivalent"] == summary["mutants"] > 1000
    by_operator = summary["by_operator"]
    for operator in ("drop_write", "redirect_write", "change_value", "drop_read"):
        assert by_operator[operator]["killed"] > 0, operator
    assert by_operator["redirect_write"].get("equivalent", 0) == 0
    for task, report in reports.items():
        assert report["killed"] + report["equivalent"] == len(report["mutants"]), task
        for mutant in report["mutants"]:
            if mutant["status"] == "equivalent":
                assert mutant["reason"] and mutant["reference_match"], (task, mutant["id"])
            else:
                assert mutant["status"] == "killed" and mutant["failed"], (task, mutant["id"])
    killed_reads = {
        c
        for r in reports.values()
        for m in r["mutants"]
        if m["operator"] == "drop_read"
        for c in m["failed"]
    }
    assert killed_reads == {"trace.read_before_write", "trace.targets_read"}


def test_an_unmarked_survivor_or_unexplained_disagreement_fails_the_check(
    world: hw.World, imported: list[ImportedTask]
) -> None:
    hasher = DatabaseHasher(world)
    task = next(t for t in imported if t.task.id == "tau2_retail.87")
    report = check_gold(world, task, hasher)  # no equivalence marks
    assert report.survived > 0 and not report.ok
    assert any("duplicate_write@1" in p and "not marked" in p for p in report.problems)
    marks = {("*", "duplicate_write@*"): "x", ("*", "insert_unrequested_write@*"): "x"}
    assert check_gold(world, task, hasher, marks=marks, operators=("duplicate_write",)).ok
    # A mark is accepted only for a mutant that leaves the gold's database.
    from harness_world.grading.task import Allowance

    loose = msgspec.structs.replace(
        task,
        task=msgspec.structs.replace(
            task.task,
            require=[],
            allow=[Allowance(entity=e, fields=["*"], anywhere=True) for e in ("users", "orders")],
        ),
    )
    report = check_gold(
        world, loose, hasher, marks={("*", "drop_write@*"): "x"}, operators=("drop_write",)
    )
    assert report.equivalent == 0 and report.survived == len(report.mutants) > 0
    assert any("marked equivalent, but its database differs" in p for p in report.problems)
    assert any("state criteria disagree with the whole-database hash" in p for p in report.problems)
    # A criterion the gold fails: our grade disagrees with τ²'s verdict on the oracle.
    refused = next(t for t in imported if t.task.id == "tau2_retail.105")
    strict = msgspec.structs.replace(
        refused, task=msgspec.structs.replace(refused.task, trace=["no_refused_calls"])
    )
    report = check_gold(world, strict, hasher)
    assert not report.oracle_passed and report.reference_match and not report.agrees
    assert any("no explanation is recorded" in p for p in report.problems)
    explained = check_gold(world, strict, hasher, explanation="the gold's exchange is refused")
    assert explained.explanation and not any("explanation" in p for p in explained.problems)
    assert explained.problems == ["oracle fails trace.no_refused_calls"]  # still not ok


def test_text_report_prints_gold_errors_read_only_tasks_and_the_score(cli: Cli) -> None:
    code, out, _ = cli("tau2", "check", "--data", str(TAU2_DATA))
    assert code == 0
    assert out.startswith("data: τ²-bench retail data © 2025 Sierra Research")
    assert "tau2_retail.105  106_0  exchange_delivered_order_items: Insufficient gift card" in out
    assert (
        "tau2_retail.67: passes the state criteria (τ² DB: match); standing between it and" in out
    )
    assert "tau2_retail.50: passes the state criteria (τ² DB: match) and every automated" in out
    assert "verdicts agree with τ² on 74/74 oracle trajectories" in out
    assert "mutation score: 1.000 (" in out


def test_the_check_is_one_library_call(
    world: hw.World, imported: list[ImportedTask], tmp_path: Path
) -> None:
    from harness_world.tau2.check import check_tasks, read_marks

    subset = [t for t in imported if t.task.id in ("tau2_retail.0", "tau2_retail.67")]
    marks, explanations = read_marks()
    report = check_tasks(world, subset, TAU2_DATA, marks=marks, explanations=explanations)
    assert [t.task_id for t in report.tasks] == ["tau2_retail.0", "tau2_retail.67"]
    assert report.summary.imported == 2 and report.summary.read_only_tasks == 1
    assert not report.problems and report.data_notice == tau2_importer.DATA_NOTICE
    assert report.summary.initial_db_hash == DatabaseHasher(world).hash()
    with pytest.raises(tau2_importer.FormatError, match="no such file"):
        read_marks(tmp_path / "missing.toml")


# -- exit codes -----------------------------------------------------------------------------


def test_check_exit_codes(tmp_path: Path, raw_tasks: dict[str, dict[str, Any]], cli: Cli) -> None:
    subset = tmp_path / "subset.json"
    subset.write_text(json.dumps([raw_tasks["0"], raw_tasks["67"]]))
    code, out, _ = cli("tau2", "check", "--data", str(TAU2_DATA), "--tasks", str(subset), "--json")
    assert code == 0
    assert [t["task_id"] for t in json.loads(out)["tasks"]] == ["tau2_retail.0", "tau2_retail.67"]

    renamed = tmp_path / "renamed.json"  # task 22 under another id: its explicit marks miss it
    renamed.write_text(json.dumps([{**raw_tasks["22"], "id": "x22"}]))
    code, out, _ = cli("tau2", "check", "--data", str(TAU2_DATA), "--tasks", str(renamed))
    assert code == 1
    assert "tau2_retail.x22: mutant drop_write@2 (22_1) survives: not marked equivalent" in out

    stale = tmp_path / "equivalent.toml"
    stale.write_text(
        '[[equivalent]]\ntask = "tau2_retail.0"\nmutant = "drop_write@5"\nreason = "wrong"\n'
    )
    code, out, _ = cli(
        "tau2",
        "check",
        "--data",
        str(TAU2_DATA),
        "--tasks",
        str(subset),
        "--equivalents",
        str(stale),
        "--json",
    )
    problems = json.loads(out)["problems"]
    assert code == 1
    assert "tau2_retail.0: equivalence mark for drop_write@5 matches no surviving mutant" in (
        "\n".join(problems)
    )
    assert any("drop_read" in p and "not marked equivalent" in p for p in problems)

    for argv, named in (
        (["--data", str(tmp_path / "missing")], tmp_path / "missing"),
        (["--data", str(TAU2_DATA), "--tasks", str(tmp_path / "none.json")], "none.json"),
        (["--data", str(TAU2_DATA), "--equivalents", str(tmp_path / "no.toml")], "no.toml"),
    ):
        code, out, err = cli("tau2", "check", *argv)
        assert code == 2 and out == ""
        assert err.startswith("error: ") and str(named) in err and err.count("\n") == 1
    garbled = tmp_path / "garbled.json"
    garbled.write_text("{not json")
    code, _, err = cli("tau2", "check", "--data", str(TAU2_DATA), "--tasks", str(garbled))
    assert code == 2 and f"{garbled}: not valid JSON" in err
    assert cli("tau2")[0] == 2


# -- regrade --------------------------------------------------------------------------------


def simulation(
    task_id: str, trial: int, calls: list[tuple[str, Any]], reward: float, final: str = "Done."
) -> dict[str, Any]:
    """One run in τ²-bench's results shape: assistant tool calls, tool replies, a last word."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Hi, I need help."}]
    for i, (name, arguments) in enumerate(calls):
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{i}",
                        "name": name,
                        "arguments": arguments,
                        "requestor": "assistant",
                    }
                ],
            }
        )
        messages.append({"role": "tool", "id": f"call_{i}", "content": "{}"})
    messages.append({"role": "assistant", "content": final, "tool_calls": None})
    return {
        "task_id": task_id,
        "trial": trial,
        "termination_reason": "user_stop",
        "messages": messages,
        "reward_info": {"reward": reward},
    }


def test_regrade_reports_ours_beside_the_recorded_reward(
    tmp_path: Path, raw_tasks: dict[str, dict[str, Any]], cli: Cli
) -> None:
    gold = [(a["name"], a["arguments"]) for a in raw_tasks["0"]["evaluation_criteria"]["actions"]]
    name, arguments = gold[-1]
    wrong = [*gold[:-1], (name, {**arguments, "payment_method_id": "gift_card_0000000"})]
    read_only = [
        (a["name"], json.dumps(a["arguments"]))
        for a in raw_tasks["67"]["evaluation_criteria"]["actions"]
    ]  # arguments as JSON text, as OpenAI-style logs have
    results = tmp_path / "results.json"
    sims = [
        simulation("0", 0, gold, 1.0),
        simulation("0", 1, wrong, 0.0, final="I could not do it."),
        simulation("67", 0, read_only, 1.0, final="Your order total is $829.43."),
        simulation("67", 1, [], 0.0, final="Goodbye."),
    ]
    results.write_text(json.dumps({"info": {"note": "synthetic"}, "simulations": sims}))
    code, out, _ = cli("tau2", "regrade", "--data", str(TAU2_DATA), str(results), "--json")
    assert code == 0
    runs = json.loads(out)["runs"]
    assert [(r["source_task"], r["trial"], r["evidence"]) for r in runs] == [
        ("0", 0, "verified"),
        ("0", 1, "verified"),
        ("67", 0, "verified"),
        ("67", 1, "verified"),
    ]
    assert [r["passed"] for r in runs] == [True, False, True, False]
    assert [r["reference_match"] for r in runs] == [True, False, True, True]
    assert [r["recorded_reward"] for r in runs] == [1.0, 0.0, 1.0, 0.0]
    assert runs[1]["errors"] == 1 and runs[1]["failed"][0].startswith("state.required")
    assert runs[3]["failed"][0].startswith("trace.targets_read")
    assert runs[2]["prose"] == [
        "nl_assertion: Agent should tell the user the order total is $829.43."
    ]
    assert runs[0]["outcome"] == "completed" and runs[0]["calls"] == len(gold)

    code, out, _ = cli("tau2", "regrade", "--data", str(TAU2_DATA), str(results))
    assert code == 0 and "4 run(s): 4 verified, 4 graded attempts; ours passed 2 on the " in out
    # task 67's reward holds a natural-language assertion: its automated pass is pending
    assert "(of which 1 passed_automated: prose pending review" in out and "failed 2;" in out
    assert any(line.startswith("67   ") and "passed_automated" in line for line in out.splitlines())

    errored = dict(sims[0], termination_reason="too_many_errors")
    results.write_text(json.dumps({"simulations": [errored]}))
    code, out, _ = cli("tau2", "regrade", "--data", str(TAU2_DATA), str(results))
    assert (
        code == 0 and "0 graded attempts; ours passed 0 on the automated criteria" in out
    )  # an error is no attempt

    unknown = tmp_path / "unknown.json"
    unknown.write_text(json.dumps({"simulations": [simulation("999", 0, [], 0.0)]}))
    code, out, _ = cli("tau2", "regrade", "--data", str(TAU2_DATA), str(unknown))
    assert code == 1 and "unknown task '999'" in out

    bad_trial = json.dumps({"simulations": [dict(sims[0], trial="first")]})
    for content in ("[]", '{"simulations": [{"trial": 0}]}', bad_trial):
        unknown.write_text(content)
        code, out, err = cli("tau2", "regrade", "--data", str(TAU2_DATA), str(unknown))
        assert code == 2 and out == "" and str(unknown) in err
    code, _, err = cli("tau2", "regrade", "--data", str(TAU2_DATA), str(tmp_path / "no.json"))
    assert code == 2 and "no.json: cannot read" in err


def _gold_report(task_id: str, statuses: list[tuple[str, str]], **fields: Any) -> Any:
    from harness_world.tau2.gold import GoldReport

    mutants = [
        {
            "id": f"{task_id}.m{i}",
            "operator": operator,
            "gold_id": "g",
            "description": "",
            "evidence": "verified",
            "passed": status == "survived",
            "failed": [],
            "reference_match": False,
            "status": status,
        }
        for i, (operator, status) in enumerate(statuses)
    ]
    counted = {s: sum(st == s for _, st in statuses) for s in ("killed", "survived", "equivalent")}
    do_nothing = {"state_passed": False, "standing": [], "prose": [], "passed": False}
    base: dict[str, Any] = {
        "task_id": task_id,
        "source": "",
        "rows_changed": 1,
        "criteria": [],
        "gold_errors": [],
        "oracle_evidence": "verified",
        "oracle_passed": True,
        "oracle_failed": [],
        "reference_match": True,
        "agrees": True,
        "explanation": "",
        "do_nothing": {**do_nothing, "reference_match": False},
        "mutants": mutants,
        "problems": [],
        **counted,
        **fields,
    }
    return msgspec.convert(base, GoldReport)


def test_the_check_summary_counts_every_figure_over_the_tasks() -> None:
    """Each summary figure over three hand-made task reports, and the empty run's ratios."""
    from harness_world.tau2.check import _summary

    error = {"id": "e", "seq": 1, "tool": "t", "kind": "k", "message": "m"}
    reports = [
        _gold_report("a", [("drop_write", "killed"), ("drop_write", "survived")]),
        _gold_report(
            "b",
            [("redirect_write", "killed"), ("drop_write", "equivalent"), ("x", "ungraded")],
            oracle_passed=False,
            gold_errors=[error, error],
            agrees=False,
            explanation="their checker reads the log",
            rows_changed=0,
        ),
        _gold_report(
            "c",
            [],
            agrees=False,
            do_nothing={
                "state_passed": True,
                "standing": [],
                "prose": [],
                "passed": True,
                "reference_match": True,
            },
        ),
    ]
    summary = msgspec.to_builtins(_summary(reports, "ours", "theirs"))
    assert summary == {
        "imported": 3,
        "oracle_passed": 2,
        "oracle_failed": 1,
        "tasks_with_gold_errors": 1,
        "gold_errors": 2,
        "verdicts_agree": 1,
        "verdicts_disagree_explained": 1,
        "verdicts_disagree_unexplained": 1,
        "read_only_tasks": 1,
        "do_nothing_passes": 1,
        "mutants": 5,
        "killed": 2,
        "survived": 1,
        "equivalent": 1,
        "ungraded": 1,
        "mutation_score": 2 / 3,
        "kill_rate_all": 2 / 5,
        "by_operator": {
            "drop_write": {"equivalent": 1, "killed": 1, "survived": 1},
            "redirect_write": {"killed": 1},
            "x": {"ungraded": 1},
        },
        "initial_db_hash": "ours",
        "initial_tau2_db_hash": "theirs",
    }
    empty = _summary([], "ours", "theirs")
    assert (empty.mutation_score, empty.kill_rate_all, empty.by_operator) == (1.0, 1.0, {})

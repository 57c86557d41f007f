"""τ²-compatible arguments, splits, long calculations, and the regrade report of both hashes.

τ²'s retail code is read from the shared copy (tests/tau2/reference.py); tests that need it are
skipped with the reason when it or the data is absent.
"""

from __future__ import annotations

import json
import random
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import harness_world as hw
from harness_world.tau2 import importer
from harness_world.tau2.arguments import coerce_call
from harness_world.tau2.faithful import Tau2Hasher, Tau2Shape
from tests.conftest import TAU2_DATA, Cli
from tests.tau2.reference import missing, needs_tau2, tau2_env, tau2_source

pytestmark = pytest.mark.tau2

has_data = pytest.mark.skipif(
    not (TAU2_DATA / "db.json").is_file() or not (TAU2_DATA / "tasks_train.json").is_file(),
    reason=f"τ² retail data not found in {TAU2_DATA}",
)


@pytest.fixture(scope="module")
def world() -> hw.World:
    return importer.load_world(TAU2_DATA)


@pytest.fixture(scope="module")
def raw() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((TAU2_DATA / "db.json").read_text())
    return data


# -- the three coercion classes ---------------------------------------------------------------


def _cases(raw: dict[str, Any]) -> list[tuple[str, str, dict[str, Any], str]]:
    """(class, tool, ill-typed arguments, the status τ² leaves the order in or '' for none)."""
    delivered = next(o for o in raw["orders"].values() if o["status"] == "delivered")
    pending = next(o for o in raw["orders"].values() if o["status"] == "pending")
    paid = pending["payment_history"][0]["payment_method_id"]
    return [
        (
            "text_as_list",
            "return_delivered_order_items",
            {
                "order_id": delivered["order_id"],
                "item_ids": "",
                "payment_method_id": delivered["payment_history"][0]["payment_method_id"],
            },
            "return requested",
        ),
        (
            "object_as_list",
            "modify_pending_order_items",
            {
                "order_id": pending["order_id"],
                "item_ids": {},
                "new_item_ids": {},
                "payment_method_id": paid,
            },
            "pending (item modified)",
        ),
        ("unread_text", "transfer_to_human_agents", {"summary": 1}, ""),
    ]


@has_data
def test_strict_mode_refuses_each_class(world: hw.World, raw: dict[str, Any]) -> None:
    for _cls, tool, args, _status in _cases(raw):
        session = world.open_session()
        observation = session.call(tool, args)
        assert not observation.ok and observation.error is not None
        assert observation.error.kind == "invalid_arguments", tool
        assert session.diff() == []


@needs_tau2
def test_tau2_mode_reaches_tau2s_end_state_for_each_class(
    world: hw.World, raw: dict[str, Any]
) -> None:
    source = tau2_source()
    hasher = Tau2Hasher(Tau2Shape.from_data(world, TAU2_DATA / "db.json"))
    shape = hasher.shape
    for cls, tool, args, status in _cases(raw):
        env: Any = tau2_env()
        message = source.call(env, tool, args)
        assert not message.error, message.content  # τ² accepts the ill-typed call
        used, coercions = coerce_call(world, tool, args)
        assert {c.cls for c in coercions} == {cls}
        session = world.open_session()
        observation = session.call(tool, used)
        assert observation.ok, observation.error
        assert shape.observation(observation) == message.content
        final = [
            hw.engine.FinalRow(entity=c.entity, key=c.key, row=c.after) for c in session.diff()
        ]
        assert hasher.hash(final) == env.get_db_hash(), tool
        if status:
            assert final and final[0].row is not None and final[0].row["status"] == status
    # the refund of the empty modification is a float 0.0, as τ² records it
    modified = next(c for c in _cases(raw) if c[0] == "object_as_list")
    session = world.open_session()
    session.call(modified[1], coerce_call(world, modified[1], modified[2])[0])
    assert session.diff()[0].after["payment_history"][-1]["amount"] == 0.0


@has_data
def test_well_typed_arguments_are_never_coerced(world: hw.World) -> None:
    args = {"order_id": "#W1", "item_ids": ["1"], "payment_method_id": "x"}
    assert coerce_call(world, "return_delivered_order_items", args) == (args, [])
    assert coerce_call(world, "transfer_to_human_agents", {"summary": "s"})[1] == []
    # a non-empty object is not coerced (τ² fails on it with a Python error)
    bad = {**args, "item_ids": {"1": 1}}
    assert coerce_call(world, "return_delivered_order_items", bad)[1] == []


def _simulation(task_id: str, calls: list[tuple[str, Any]]) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for i, (tool, args) in enumerate(calls):
        messages.append(
            {"role": "assistant", "tool_calls": [{"id": str(i), "name": tool, "arguments": args}]}
        )
        messages.append({"role": "tool", "id": str(i), "content": "..."})
    messages.append({"role": "assistant", "content": "Done."})
    return {"task_id": task_id, "trial": 0, "messages": messages, "reward_info": {"reward": 1.0}}


@needs_tau2
def test_regrade_reports_coercions_and_both_hashes(
    tmp_path: Path, world: hw.World, raw: dict[str, Any], cli: Cli
) -> None:
    tasks = json.loads((TAU2_DATA / "tasks_train.json").read_text())
    calls = [(tool, args) for _c, tool, args, _s in _cases(raw)]
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"simulations": [_simulation(str(tasks[0]["id"]), calls)]}))
    code, out, _ = cli("tau2", "regrade", "--data", str(TAU2_DATA), str(results), "--json")
    assert code == 0
    run = json.loads(out)["runs"][0]
    assert run["coerced"] == [] and run["errors"] == 3 and run["evidence"] == "verified"
    code, out, _ = cli(
        "tau2", "regrade", "--data", str(TAU2_DATA), str(results), "--json", "--arguments", "tau2"
    )
    assert code == 0
    run = json.loads(out)["runs"][0]
    assert run["errors"] == 0 and run["evidence"] == "verified"
    assert [line.split(": ", 1)[1].split(" ")[1] for line in run["coerced"]] == [
        "text_as_list",
        "object_as_list",
        "object_as_list",
        "unread_text",
    ]
    env: Any = tau2_env()
    for tool, args in calls:
        tau2_source().call(env, tool, args)
    assert run["tau2_db_hash"] == env.get_db_hash()
    assert run["db_hash"] and run["tau2_gold_db_hash"]
    _code, out, _ = cli(
        "tau2", "regrade", "--data", str(TAU2_DATA), str(results), "--arguments", "tau2"
    )
    assert "coerced the way τ² treats them" in out and "unread_text" in out


# -- splits -----------------------------------------------------------------------------------


def _split_folder(tmp_path: Path, with_split: bool = True) -> tuple[Path, list[str]]:
    tasks = json.loads((TAU2_DATA / "tasks_train.json").read_text())[:3]
    ids = [str(t["id"]) for t in tasks]
    (tmp_path / "db.json").symlink_to(TAU2_DATA / "db.json")
    (tmp_path / "tasks.json").write_text(json.dumps(tasks))
    if with_split:
        split = {"base": ids, "train": ids[:2], "test": ids[2:]}
        (tmp_path / "split_tasks.json").write_text(json.dumps(split))
    return tmp_path, ids


@has_data
@pytest.mark.parametrize(("split", "count"), [("train", 2), ("test", 1), ("all", 3)])
def test_split_reads_tau2s_split_file(
    tmp_path: Path, world: hw.World, split: str, count: int
) -> None:
    folder, ids = _split_folder(tmp_path)
    path, tasks = importer.split_tasks(world, folder, split)
    assert path.name == "tasks.json" and len(tasks) == count
    wanted = {"train": ids[:2], "test": ids[2:], "all": ids}[split]
    assert [t.task.id for t in tasks] == [f"tau2_retail.{i}" for i in wanted]


@has_data
def test_split_cli_and_its_errors(tmp_path: Path, cli: Cli) -> None:
    folder, ids = _split_folder(tmp_path)
    code, out, err = cli("tau2", "check", "--data", str(folder), "--split", "test", "--json")
    assert code == 0, err
    assert [t["task_id"] for t in json.loads(out)["tasks"]] == [f"tau2_retail.{ids[2]}"]
    code, _, err = cli(
        "tau2", "check", "--data", str(folder), "--split", "test", "--tasks", "x.json"
    )
    assert code == 2 and "not both" in err
    (folder / "split_tasks.json").write_text('{"train": "0"}')
    code, _, err = cli("tau2", "check", "--data", str(folder), "--split", "train")
    assert code == 2 and "split_tasks.json" in err
    (folder / "split_tasks.json").write_text('{"train": []}')
    code, _, err = cli("tau2", "check", "--data", str(folder), "--split", "test")
    assert code == 2 and "no split 'test'" in err


@has_data
def test_without_a_split_file_the_shared_layout_is_train(tmp_path: Path, world: hw.World) -> None:
    path, tasks = importer.split_tasks(world, TAU2_DATA, "train")
    assert path.name == "tasks_train.json" and len(tasks) == 74
    with pytest.raises(importer.FormatError, match=r"tasks_test\.json"):
        importer.split_tasks(world, TAU2_DATA, "test")
    _path, everything = importer.split_tasks(world, TAU2_DATA, "all")
    assert len(everything) == 74


# -- calculate without a recursion limit ------------------------------------------------------


@has_data
@pytest.mark.parametrize("terms", [330, 2_000, 50_000])
def test_long_flat_sums_are_computed(world: hw.World, terms: int) -> None:
    rng = random.Random(terms)
    numbers = [round(rng.uniform(0, 100), 2) for _ in range(terms)]
    ops = [rng.choice("+-") for _ in range(terms - 1)]
    expression = str(numbers[0]) + "".join(f" {o} {n}" for o, n in zip(ops, numbers[1:]))
    expected = numbers[0]
    for o, n in zip(ops, numbers[1:]):  # Python's left-to-right association
        expected = expected + n if o == "+" else expected - n
    observation = world.open_session().call("calculate", {"expression": expression})
    assert observation.ok, observation.error
    assert observation.result == str(round(float(expected), 2))


def _module(world: hw.World) -> Any:
    """The retail world's module (loaded as a plugin: not importable by a fixed name)."""
    from harness_world.engine.world import world_module

    return world_module(world.name)


def _flat_eval(world: hw.World) -> Any:
    return _module(world)._flat_eval


_TOKENS = st.sampled_from(
    ["1", "2", "7", "0", "10", "3.5", ".5", "2.", "+", "-", "*", "/", "//", "**", "(", ")", " "]
)


@has_data
@given(st.lists(_TOKENS, min_size=1, max_size=14))
def test_the_stack_evaluator_is_python_arithmetic(world: hw.World, tokens: list[str]) -> None:
    expression = "".join(tokens)
    if "***" in expression or expression.count("**") > 2:
        return  # huge powers are guarded, not computed
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "2(3)": Python warns before it fails
            expected: Any = ("ok", eval(expression, {"__builtins__": None}, {}))
        if not isinstance(expected[1], int | float):
            return  # "()" is a tuple in Python: not arithmetic
    except TypeError as exc:
        if "not callable" in str(exc):
            return  # "2(3)" is a call in Python; the stack evaluator says invalid syntax
        if "tuple" in str(exc):
            return  # "+()" applies + to a tuple in Python: not arithmetic either
        expected = ("error", str(exc))
    except SyntaxError:
        expected = ("syntax",)
    except Exception as exc:
        expected = ("error", str(exc))
    try:
        got: Any = ("ok", _flat_eval(world)(expression))
    except hw.engine.ToolFailure:
        got = ("syntax",)
    except Exception as exc:
        got = ("error", str(exc))
    ok_int = expected[0] == "ok" and isinstance(expected[1], int)
    if got == ("syntax",) and ok_int and expected[1].bit_length() > _module(world).MAX_POWER_BITS:
        return  # "11**1111010": the guard refuses a power this size, Python computes it
    if expected[0] == "ok" and got[0] == "ok":
        assert type(got[1]) is type(expected[1]) and str(got[1]) == str(expected[1]), expression
    else:
        assert got == expected, expression


def test_reference_helper_names_what_is_missing() -> None:
    reason = missing()
    assert reason == "" or "τ²" in reason


@has_data
def test_regrade_records_the_users_messages_as_user_turns(
    tmp_path: Path, world: hw.World, cli: Cli
) -> None:
    from harness_world.tau2.gold import DatabaseHasher, regrade

    tasks = importer.import_tasks(world, TAU2_DATA / "tasks_train.json")
    item = tasks[0]
    messages: list[dict[str, Any]] = [
        {"role": "assistant", "content": "Hi! How can I help you today?"},
        {"role": "user", "content": "I want to exchange items."},
        {"role": "assistant", "content": "Your name and zip?"},
        {"role": "user", "content": "Yusuf Rossi, 19122."},
    ]
    for i, gold in enumerate(item.gold):
        messages.append(
            {
                "role": "assistant",
                "tool_calls": [{"id": str(i), "name": gold.tool, "arguments": gold.args}],
            }
        )
        messages.append({"role": "tool", "id": str(i), "content": "..."})
    messages += [
        {"role": "assistant", "content": "Done. Anything else?"},
        {"role": "user", "content": "###STOP###"},
    ]
    path = tmp_path / "results.json"
    sim = {"task_id": item.task.id.split(".", 1)[1], "trial": 0, "messages": messages}
    path.write_text(json.dumps({"simulations": [sim]}))
    (run,) = importer.read_results(path)
    assert [c[0] for c in run.conversation] == [0, 0, len(item.gold)]
    result = regrade(world, item, run, DatabaseHasher(world))
    assert result.user_turns == 3 and result.evidence == "verified" and result.passed
    code, out, _ = cli("tau2", "regrade", "--data", str(TAU2_DATA), str(path), "--json")
    assert code == 0 and json.loads(out)["runs"][0]["user_turns"] == 3

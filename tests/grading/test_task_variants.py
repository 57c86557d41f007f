"""Task files of variants: one base and what differs, expanded into tasks whose hashes stay put."""

from __future__ import annotations

import difflib
import json
import re
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness_world as hw
from harness_world.engine.canonical import canonical_struct, sha256_hex, to_json
from harness_world.grading.task import TaskError, load_task_file
from harness_world.grading.worlds import check_task_against_contract
from harness_world.release import tasks_from
from tests.conftest import REPO, Cli, examples

PINS = Path(__file__).parent / "data" / "task_hashes.json"
BUILTIN = hw.load_tasks()


def _pins(tasks: list[hw.Task]) -> dict[str, dict[str, str]]:
    """Per task id: its hash, and the SHA-256 of its whole decoded definition (labels too)."""
    return {
        t.id: {"hash": t.hash, "definition": sha256_hex(to_json(canonical_struct(t)))}
        for t in tasks
    }


def test_every_built_in_task_decodes_as_it_did_before_the_files_became_variants() -> None:
    # The pins were computed from the task files as they were before any was folded into a
    # file of variants: the same ids, hashes and whole definitions, so no record moves.
    pinned = json.loads(PINS.read_text())
    now = _pins(BUILTIN)
    changes = {
        "added": sorted(now.keys() - pinned.keys()),
        "gone": sorted(pinned.keys() - now.keys()),
        "decode differently": sorted(i for i in now.keys() & pinned.keys() if now[i] != pinned[i]),
    }
    assert changes == {"added": [], "gone": [], "decode differently": []}, (
        "records of a task that decodes differently are no longer graded against it; pin a "
        "deliberate change with `python -m tests.grading.test_task_variants`"
    )


def _line_similarity(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a.splitlines(), b.splitlines(), autojunk=False).ratio()


def test_no_two_built_in_task_files_are_near_copies() -> None:
    # Near-copies are written once, as a base and its variants (the 37 payments files were 92 %
    # alike to their nearest sibling before).
    for world in sorted(p for p in (REPO / "tasks").iterdir() if p.is_dir()):
        texts = {p.name: p.read_text() for p in sorted(world.glob("*.toml"))}
        names = sorted(texts)
        close = [
            (a, b, round(_line_similarity(texts[a], texts[b]), 2))
            for i, a in enumerate(names)
            for b in names[i + 1 :]
            if _line_similarity(texts[a], texts[b]) >= 0.85
        ]
        assert close == [], f"{world.name}: write these as variants of one file: {close}"


BASE = """
world = "helpdesk"
family = "f"
instruction = "Mark ticket T-1001 solved."
budgets = { tool_calls = 10, turns = 5 }
trace = ["read_before_write"]

[[targets]]
entity = "tickets"
where = [{ field = "id", eq = "T-1001" }]

[[require]]
kind = "set"
field = "status"
value = "solved"
"""


def _file(tmp_path: Path, text: str, name: str = "v.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_variant_is_the_base_with_its_keys_tables_merged_arrays_replaced(
    tmp_path: Path,
) -> None:
    path = _file(
        tmp_path,
        BASE
        + """
[[variants]]
id = "helpdesk.plain"

[[variants]]
id = "helpdesk.merged"
budgets = { turns = 9 }
targets = [{ entity = "tickets", where = [{ field = "id", eq = "T-1002" }] }]
trace = []
""",
    )
    plain, merged = load_task_file(path)
    assert (plain.id, merged.id) == ("helpdesk.plain", "helpdesk.merged")  # file order
    assert plain.budgets == hw.grading.Budgets(tool_calls=10, turns=5)
    assert merged.budgets == hw.grading.Budgets(tool_calls=10, turns=9)  # a table merges
    assert [c.eq for c in merged.targets[0].where] == ["T-1002"]  # an array replaces
    assert merged.trace == [] and plain.trace == ["read_before_write"]
    assert merged.require == plain.require  # what a variant does not name, it inherits
    assert {t.id for t in hw.load_tasks(folder=tmp_path)} == {"helpdesk.plain", "helpdesk.merged"}


def test_a_group_gives_its_keys_to_each_of_its_variants(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        BASE
        + """
[[variants]]
notes = "shared by the group"
budgets = { turns = 7 }

[[variants.variants]]
id = "helpdesk.a"

[[variants.variants]]
id = "helpdesk.b"
budgets = { tool_calls = 3 }

[[variants]]
id = "helpdesk.c"
""",
    )
    a, b, c = load_task_file(path)
    assert (a.notes, b.notes, c.notes) == ("shared by the group", "shared by the group", "")
    assert (a.budgets.turns, b.budgets.turns, c.budgets.turns) == (7, 7, 5)
    assert (a.budgets.tool_calls, b.budgets.tool_calls) == (10, 3)


def test_a_variant_decodes_to_the_task_its_plain_file_gives(tmp_path: Path) -> None:
    plain = _file(tmp_path, 'id = "helpdesk.one"\nnotes = "n"\n' + BASE, "plain.toml")
    folded = _file(tmp_path, BASE + '[[variants]]\nid = "helpdesk.one"\nnotes = "n"\n')
    assert hw.load_task(plain) == hw.load_task(folded)
    assert hw.load_task(plain).hash == hw.load_task(folded).hash


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[[variants]]\nid = "helpdesk.x"\ninstructions = "typo"\n',
            "variants[0]: unknown field 'instructions' (did you mean 'instruction'?)",
        ),
        (
            '[[variants]]\nid = "helpdesk.x"\nbudgets = { tool_call = 3 }\n',
            "variant 'helpdesk.x' (variants[0]): Object contains unknown field `tool_call`"
            " - at `$.budgets`",
        ),
        (
            '[[variants]]\nid = "helpdesk.x"\n[[variants]]\nid = "helpdesk.x"\n',
            "variant 'helpdesk.x' (variants[1]): id already declared by variants[0]",
        ),
        (
            '[[variants]]\n[[variants.variants]]\n[[variants.variants.variants]]\nid = "h.x"\n',
            "variants[0].variants[0]: variants nested too deeply (at most 2 levels: a variant,"
            " or a group of variants)",
        ),
        (
            '[[variants]]\nid = "helpdesk.g"\n[[variants.variants]]\nid = "helpdesk.x"\n',
            "variants[0]: declares variants, so it names no id of its own (each variant does)",
        ),
        ("[[variants]]\nnotes = 'no id'\n", "variants[0]: a variant needs an id (a string)"),
        ("[[variants]]\nid = 3\n", "variants[0]: a variant needs an id (a string)"),
        ("variants = 3\n", "variants: expected one or more tables ([[variants]])"),
        ("variants = []\n", "variants: expected one or more tables ([[variants]])"),
        (
            '[[variants]]\n[[variants.variants]]\nid = "helpdesk.x"\ntargets = []\n',
            "variant 'helpdesk.x' (variants[0].variants[0]): set, delete, linked create and"
            " answer need a target set",
        ),
        (
            '[[variants]]\nid = "helpdesk.x"\ndimension = "Safety"\n',
            "variant 'helpdesk.x' (variants[0]): dimension 'Safety' is not one of",
        ),
        (
            '[[variants]]\nid = "../x"\n',
            "variant '../x' (variants[0]): id: ",
        ),
    ],
)
def test_a_broken_variant_names_the_file_the_variant_and_the_field(
    tmp_path: Path, text: str, message: str
) -> None:
    top_level = text.startswith("variants =")  # a key, not a table: it goes before them
    path = _file(tmp_path, text + BASE if top_level else BASE + text)
    with pytest.raises(TaskError) as caught:
        load_task_file(path)
    assert str(caught.value).startswith(f"{path}: {message}")


def test_the_base_of_a_file_of_variants_names_no_id_and_no_unknown_field(tmp_path: Path) -> None:
    path = _file(tmp_path, 'id = "helpdesk.base"\n' + BASE + '[[variants]]\nid = "helpdesk.x"\n')
    with pytest.raises(TaskError, match="the base: declares variants, so it names no id"):
        load_task_file(path)
    path = _file(tmp_path, "colour = 1\n" + BASE + '[[variants]]\nid = "helpdesk.x"\n')
    with pytest.raises(TaskError, match="the base: unknown field 'colour'"):
        load_task_file(path)


def test_load_task_refuses_a_file_of_several_tasks(tmp_path: Path) -> None:
    path = _file(tmp_path, BASE + '[[variants]]\nid = "helpdesk.a"\n[[variants]]\nid = "h.b"\n')
    with pytest.raises(
        TaskError, match="declares 2 tasks as variants: read it with load_task_file"
    ):
        hw.load_task(path)


def test_two_files_declaring_one_id_are_refused_by_the_folder(tmp_path: Path) -> None:
    _file(tmp_path, BASE + '[[variants]]\nid = "helpdesk.a"\n', "one.toml")
    _file(tmp_path, 'id = "helpdesk.a"\n' + BASE, "two.toml")
    with pytest.raises(TaskError, match=r"duplicate task ids: helpdesk\.a"):
        hw.load_tasks(folder=tmp_path)


def test_tables_nested_past_the_recursion_limit_are_a_task_error(tmp_path: Path) -> None:
    # Dotted headers build deep tables without the TOML parser recursing; merging them would.
    depth = sys.getrecursionlimit() + 100
    deep = ".".join(["a"] * depth)
    text = f"[layers.{deep}]\nx = 1\n[[variants]]\nid = 'helpdesk.x'\n[variants.layers.{deep}]\ny = 2\n"
    with pytest.raises(TaskError, match=r"variants\[0\]: nested too deeply to be merged"):
        load_task_file(_file(tmp_path, BASE + text))


def test_the_command_line_lists_a_folder_of_variants_and_refuses_a_broken_one(
    tmp_path: Path, cli: Cli
) -> None:
    folder = tmp_path / "tasks"
    folder.mkdir()
    _file(folder, BASE + '[[variants]]\nid = "helpdesk.a"\n[[variants]]\nid = "helpdesk.b"\n')
    listed = cli("tasks", "--world", "helpdesk", "--tasks", folder, "--json")
    assert listed.code == 0
    assert [t["id"] for t in json.loads(listed.out)["tasks"]] == ["helpdesk.a", "helpdesk.b"]
    assert [t.id for t in tasks_from([folder / "v.toml"])] == ["helpdesk.a", "helpdesk.b"]
    _file(folder, BASE + '[[variants]]\nid = "helpdesk.a"\ncolour = 1\n')
    broken = cli.process("tasks", "--world", "helpdesk", "--tasks", folder)
    assert broken.code == 2
    assert broken.err.strip().splitlines() == [
        f"error: {folder / 'v.toml'}: variants[0]: unknown field 'colour'"
    ]


def test_the_docs_example_expands_as_its_comments_say(tmp_path: Path) -> None:
    text = (REPO / "docs" / "task-format.md").read_text()
    section = text[text.index("## Variants") : text.index("## Fields")]
    example = re.search(r"```toml\n(.*?)```", section, re.S)
    assert example is not None
    lost, no_fault, other = load_task_file(_file(tmp_path, example.group(1)))
    assert [t.id for t in (lost, no_fault, other)] == [
        "helpdesk.solve_lost_response",
        "helpdesk.solve_no_fault",
        "helpdesk.solve_other_ticket",
    ]
    assert lost.budgets == hw.grading.Budgets(tool_calls=12, turns=12)
    assert no_fault.budgets == other.budgets == hw.grading.Budgets(tool_calls=12, turns=6)
    assert (lost.trace, no_fault.trace) == (
        ["read_before_write", "no_repeated_writes"],
        ["read_before_write"],
    )
    assert [f.id for f in lost.faults] == ["first_solve"] and no_fault.faults == []
    assert (other.instruction, other.targets[0].where[0].eq) == (
        "Mark ticket T-1009 solved.",
        "T-1009",
    )
    contract = hw.load_world("helpdesk").contract
    assert [check_task_against_contract(t, contract) for t in (lost, no_fault, other)] == [
        [],
        [],
        [],
    ]


# --- any split of real tasks into a base and variants expands back to the same tasks


def _toml(value: Any) -> str:
    """An inline TOML value (a JSON string, number or boolean is one too)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(value)


def _base(tables: list[dict[str, Any]]) -> dict[str, Any]:
    """A base for ``tables``: the first one's value of every key they all hold (tables
    recursively), so the others override some of it and inherit the rest."""
    out: dict[str, Any] = {}
    for key, value in tables[0].items():
        values = [t.get(key) for t in tables]
        if all(isinstance(v, dict) for v in values):
            out[key] = _base(values)
        elif key != "id" and all(key in t for t in tables):
            out[key] = value
    return out


def _rest(table: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    """What ``table`` holds beyond ``base``."""
    out: dict[str, Any] = {}
    for key, value in table.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            rest = _rest(value, base[key])
            if rest:
                out[key] = rest
        elif key not in base or to_json(base[key]) != to_json(value):
            out[key] = value
    return out


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """The documented rule: a table merges key by key, any other value replaces."""
    out = dict(base)
    for key, value in over.items():
        both = isinstance(value, dict) and isinstance(out.get(key), dict)
        out[key] = _merge(out[key], value) if both else value
    return out


def _lines(table: dict[str, Any], prefix: str = "") -> list[str]:
    return [f"{prefix}{json.dumps(k)} = {_toml(v)}" for k, v in table.items()]


@settings(max_examples=examples(30, 300))
@given(
    chosen=st.lists(st.sampled_from(BUILTIN), min_size=2, max_size=6, unique_by=lambda t: t.id),
    grouped=st.integers(min_value=0, max_value=6),
)
def test_any_base_and_variants_of_real_tasks_expand_to_the_same_tasks(
    tmp_path_factory: pytest.TempPathFactory, chosen: list[hw.Task], grouped: int
) -> None:
    # Any set of tasks, the first `grouped` of them in a group, is written as one file: the base
    # and the group hold their first task's values, which the others override where they differ.
    tables = [msgspec.to_builtins(t) for t in chosen]
    base = _base(tables)
    head, tail = tables[:grouped], tables[grouped:]
    lines = _lines(base)
    if len(head) > 1:
        group = _rest(_base(head), base)
        lines += ["[[variants]]", *_lines(group)]
        for table in head:
            lines += ["[[variants.variants]]", *_lines(_rest(table, _merge(base, group)))]
    else:
        tail = tables
    for table in tail:
        lines += ["[[variants]]", *_lines(_rest(table, base))]
    path = tmp_path_factory.mktemp("variants") / "v.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    loaded = load_task_file(path)
    order = [t["id"] for t in head] + [t["id"] for t in tail] if len(head) > 1 else None
    by_id = {t.id: t for t in chosen}
    assert [t.id for t in loaded] == (order or [t.id for t in chosen])
    assert loaded == [by_id[t.id] for t in loaded]
    assert [t.hash for t in loaded] == [by_id[t.id].hash for t in loaded]


if __name__ == "__main__":  # pin the built-in tasks as they decode now (a deliberate change)
    PINS.write_text(json.dumps(_pins(hw.load_tasks()), indent=1, sort_keys=True) + "\n")

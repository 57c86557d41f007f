"""Task weights, critical flags and tool allow-lists: validated at load, kept where they belong."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

import harness_world as hw
from harness_world.grading.task import TaskError
from harness_world.grading.worlds import choose_worlds

TASK = """
id = "helpdesk.labelled"
world = "helpdesk"
family = "labels"
instruction = "Mark ticket T-1001 solved."
"""


def _write(folder: Path, extra: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "labelled.toml"
    path.write_text(TASK + extra, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ("weight = 0", "weight must be a positive finite number, not 0"),
        ("weight = -2.5", "weight must be a positive finite number, not -2.5"),
        ("weight = inf", "weight must be a positive finite number, not inf"),
        ("weight = nan", "weight must be a positive finite number, not nan"),
        ("weight = true", "weight must be a positive finite number, not bool"),
        ('weight = "2"', "weight must be a positive finite number, not str"),
        ('critical = "yes"', "critical must be true or false, not 'yes'"),
        ("critical = 1", "critical must be true or false, not 1"),
        ('tools = ["get_ticket", "get_ticket"]', "tools names get_ticket more than once"),
        ('tools = ["get_ticket", ""]', "tools must be a list of tool names"),
    ],
)
def test_an_invalid_label_names_the_file_the_task_and_the_field(
    tmp_path: Path, extra: str, expected: str
) -> None:
    path = _write(tmp_path, extra)
    with pytest.raises(TaskError) as caught:
        hw.load_task(path)
    assert str(caught.value) == f"{path}: task 'helpdesk.labelled': {expected}"


def test_labels_are_read_and_default_to_weight_one_not_critical_every_tool(tmp_path: Path) -> None:
    plain = hw.load_task(_write(tmp_path / "a", ""))
    assert (plain.weight, plain.critical, plain.tools) == (1.0, False, None)
    given_ = hw.load_task(
        _write(tmp_path / "b", 'weight = 2\ncritical = true\ntools = ["get_ticket"]')
    )
    assert (given_.weight, given_.critical, given_.tools) == (2.0, True, ["get_ticket"])


def test_a_task_made_in_code_is_held_to_the_same_rules() -> None:
    with pytest.raises(ValueError, match="weight must be a positive finite number"):
        hw.Task(id="x.y", world="helpdesk", family="f", instruction="i", weight=0.0)
    with pytest.raises(ValueError, match="tools names a more than once"):
        hw.Task(id="x.y", world="helpdesk", family="f", instruction="i", tools=["a", "a"])


@given(
    weight=st.floats(min_value=1e-6, max_value=1e6, allow_nan=False),
    critical=st.booleans(),
)
def test_weight_and_critical_leave_the_task_hash_alone(weight: float, critical: bool) -> None:
    task = hw.Task(id="x.y", world="helpdesk", family="f", instruction="i")
    labelled = msgspec.structs.replace(task, weight=weight, critical=critical)
    assert labelled.hash == task.hash


def test_an_allow_list_is_part_of_the_task_hash() -> None:
    task = hw.Task(id="x.y", world="helpdesk", family="f", instruction="i")
    assert msgspec.structs.replace(task, tools=["get_ticket"]).hash != task.hash
    assert msgspec.structs.replace(task, tools=[]).hash != task.hash


def test_an_unknown_tool_in_the_allow_list_is_refused_at_load(tmp_path: Path) -> None:
    _write(tmp_path, 'tools = ["get_ticket", "delete_everything"]')
    with pytest.raises(TaskError) as caught:
        choose_worlds(["helpdesk"]).tasks(tmp_path)
    message = str(caught.value)
    assert "task 'helpdesk.labelled'" in message
    assert "tools[1]: no tool 'delete_everything'" in message

"""``--help`` lists the commands from a table, and the table says what each command's parser says."""

from __future__ import annotations

import argparse
import ast
import importlib

import pytest

from harness_world.cli import build_parser, commands
from tests.conftest import REPO


def _own_line(name: str) -> str | None:
    """The ``help=`` that the command's own module registers for it."""
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    importlib.import_module(commands()[name][0]).register(sub)
    lines = {action.dest: action.help for action in sub._choices_actions}
    assert list(lines) == [name], f"harness_world.cli.{name} registers {list(lines)}"
    return lines[name]


@pytest.mark.parametrize("name", list(commands()))
def test_each_line_of_the_table_is_the_commands_own(name: str) -> None:
    """The core's table and the extensions' registrations alike."""
    assert commands()[name][1] == _own_line(name)


def test_every_command_module_is_in_the_table() -> None:
    """A module under cli/ that registers a command (a top-level ``register``) is listed: in
    the core's table, or registered by an extension."""
    registering = set()
    for path in (REPO / "harness_world" / "cli").glob("*.py"):
        tree = ast.parse(path.read_text())
        if any(isinstance(n, ast.FunctionDef) and n.name == "register" for n in tree.body):
            registering.add(path.stem)
    assert registering == set(commands())
    assert {m for m, _ in commands().values()} == {f"harness_world.cli.{n}" for n in registering}


def test_the_list_names_every_command_with_its_line(cli) -> None:
    listing = build_parser().format_help()
    for name, (_, line) in commands().items():
        assert name in listing and " ".join(line.split()[:3]) in " ".join(listing.split())
    result = cli("--help")
    assert result.code == 0 and result.out == listing
    refused = cli("no-such-command")
    assert refused.code == 2 and "invalid choice: 'no-such-command'" in refused.err
    bare = cli()
    assert bare.code == 2 and bare.err == listing


def test_a_command_gets_its_own_parser(cli) -> None:
    result = cli("tasks", "--help")
    assert result.code == 0 and result.out.startswith("usage: python -m harness_world tasks")
    assert "--world" in result.out

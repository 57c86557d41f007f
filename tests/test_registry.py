"""The plug-in registry: a third party's extension plugs in like the package's own."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness_world import registry as registry_module
from harness_world.cli import main
from harness_world.registry import PluginRegistryError, Registry, registry, resolve
from tests.conftest import Cli

_PLUGIN = """
from harness_world.registry import Options, Section

GREETING = "hello from acme"


def register(registry):
    registry.command("acme", "acme_hw.command", "say hello")
    registry.add_options("report", "acme_hw.plugin:REPORT")
    registry.export("acme_greeting", "acme_hw.plugin:GREETING")


class Stamp(Options):
    def add_arguments(self, parser):
        parser.add_argument("--stamp", default=None)

    def section(self, args):
        if args.stamp is None:
            return None
        return Section("acme", {"stamp": args.stamp}, f"stamped {args.stamp}\\n")


REPORT = Stamp()
"""

_COMMAND = """
def register(sub):
    parser = sub.add_parser("acme", help="say hello")
    parser.set_defaults(handler=lambda args: print("hello from acme") or 0)
"""


@pytest.fixture
def third_party(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A package ``acme_hw`` named in the entry-point group: a command, options, a name."""
    package = tmp_path / "acme_hw"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "plugin.py").write_text(_PLUGIN)
    (package / "command.py").write_text(_COMMAND)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(
        registry_module, "_entry_point_references", lambda: ["acme_hw.plugin:register"]
    )
    monkeypatch.setattr(registry_module, "_REGISTRY", [])
    yield tmp_path
    for name in [m for m in sys.modules if m.startswith("acme_hw")]:
        del sys.modules[name]
    import harness_world as hw

    hw.__dict__.pop("acme_greeting", None)


def test_a_third_party_command_option_and_name_plug_in(
    third_party: Path, cli: Cli, capsys: pytest.CaptureFixture[str]
) -> None:
    import harness_world as hw

    assert main(["acme"]) == 0
    assert capsys.readouterr().out == "hello from acme\n"
    assert "acme" in cli("--help").out  # listed without importing its module
    assert hw.acme_greeting == "hello from acme"  # type: ignore[attr-defined]
    # the built-in extensions still register first, and still work
    assert "sequential" in registry().tracks and "gate" in registry().commands


def test_a_third_party_option_adds_a_section_to_a_core_command(
    third_party: Path, cli: Cli, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    made = cli("run", "--world", "helpdesk", "--tasks", "helpdesk.reply_no_fault", "--out", out)
    assert made.code == 0, made.err
    text = cli("report", str(out), "--stamp", "X").out
    assert text.endswith("stamped X\n")
    data = json.loads(cli("report", str(out), "--stamp", "X", "--json").out)
    assert data["acme"] == {"stamp": "X"} and "heldout" in data


def test_two_extensions_claiming_one_name_are_refused() -> None:
    reg = Registry()
    reg.load("a:register", lambda r: r.track("sequential", "a:Track"))
    with pytest.raises(PluginRegistryError, match="registered by both a:register and b:register"):
        reg.load("b:register", lambda r: r.track("sequential", "b:Track"))


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        ("no_colon", "is not 'module:attribute'"),
        ("no_such_module_xyz:thing", "No module named"),
        ("harness_world.registry:missing", "has no attribute"),
    ],
)
def test_a_bad_reference_is_one_typed_error(reference: str, message: str) -> None:
    with pytest.raises(PluginRegistryError, match=message):
        resolve(reference)


def test_the_built_in_extensions_register_without_importing_them() -> None:
    """Registering reads strings: none of the registered modules is imported by it."""
    import subprocess

    code = (
        "import sys; from harness_world.registry import registry; r = registry(); "
        "mods = [m for m in sys.modules if m.startswith('harness_world.')]; print(sorted(mods))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert eval(out) == [
        "harness_world.errors",
        "harness_world.extensions",
        "harness_world.registry",
    ]


def test_run_refuses_an_unknown_executor_naming_the_known_ones(cli: Cli) -> None:
    result = cli("run", "--world", "helpdesk", "--executor", "nope")
    assert result.code == 2 and "invalid choice: 'nope'" in result.err
    assert "'local', 'ray'" in result.err

"""The floor plan holds: public names by audience, imports only downward, functions kept small."""

from __future__ import annotations

import ast
import importlib
import inspect as pyinspect
import warnings
from pathlib import Path

import pytest

import harness_world as hw
from tests.conftest import REPO

PACKAGE = REPO / "harness_world"

# The rooms, lowest first: a module may import only from rooms of its own rank or below.
RANKS = {
    "errors": 0,
    "stats": 0,
    "engine": 1,
    "scaffold": 2,
    "evidence": 2,
    "grading": 3,
    "running": 4,
    "openai_agent": 5,
    "anthropic_agent": 5,
    "mcp_server": 5,
    "inspect": 5,
    "coverage": 5,
    "analysis": 5,
    "tau2": 6,
    "cli": 7,
    "__main__": 8,
}
AUDIENCE_MODULES = [
    "harness_world",
    "harness_world.engine",
    "harness_world.evidence",
    "harness_world.grading",
    "harness_world.running",
    "harness_world.coverage",
    "harness_world.analysis",
    "harness_world.tau2",
    "harness_world.stats",
]
MAX_FUNCTION_LINES = 60


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, *, runtime_only: bool) -> set[str]:
    """Every harness_world module a tree imports (runtime only: not under TYPE_CHECKING)."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if runtime_only and isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.startswith("harness_world"):
                found.add(node.module)
                found.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("harness_world"))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    modules = _modules()
    return {m for m in found if m in modules}


def test_the_agent_facing_api_is_small_and_pinned() -> None:
    assert hw.__all__ == [
        "Agent",
        "Attempt",
        "AttemptEnded",
        "AttemptLimits",
        "CriterionVerdict",
        "Grade",
        "HarnessWorldError",
        "InfrastructureError",
        "Observation",
        "Outcome",
        "Record",
        "RunCounts",
        "RunResult",
        "ScriptedAgent",
        "Session",
        "Task",
        "ToolError",
        "Usage",
        "Verification",
        "World",
        "fork",
        "load_record",
        "load_task",
        "load_tasks",
        "load_world",
        "oracle_agent",
        "run",
        "save_record",
        "tool_schemas",
        "verify",
    ]


@pytest.mark.parametrize("name", AUDIENCE_MODULES)
def test_every_public_name_is_documented(name: str) -> None:
    module = importlib.import_module(name)
    assert module.__doc__, f"{name} has no module docstring"
    undocumented = []
    for public in module.__all__:
        value = getattr(module, public)
        if (pyinspect.isclass(value) or pyinspect.isfunction(value)) and not (
            value.__doc__ or ""
        ).strip():
            undocumented.append(public)
    assert not undocumented, f"{name}: undocumented public names {undocumented}"


def test_every_deliberate_error_shares_one_base() -> None:
    errors = []
    for name in AUDIENCE_MODULES:
        module = importlib.import_module(name)
        for public in module.__all__:
            value = getattr(module, public)
            if pyinspect.isclass(value) and issubclass(value, Exception):
                errors.append(value)
    assert len(errors) >= 8
    assert all(issubclass(e, hw.HarnessWorldError) for e in errors), [
        e.__name__ for e in errors if not issubclass(e, hw.HarnessWorldError)
    ]


def test_imports_only_go_down_the_rooms() -> None:
    upward = []
    for module, path in _modules().items():
        room = _room(module)
        if room == "__init__":
            continue
        for target in _imports(ast.parse(path.read_text()), runtime_only=False):
            if target == "harness_world":
                upward.append(f"{module} imports the facade `harness_world`")
                continue
            if RANKS[_room(target)] > RANKS[room]:
                upward.append(f"{module} -> {target}")
    assert not upward, "imports that go up a room:\n" + "\n".join(upward)


def test_there_is_no_import_cycle_at_run_time() -> None:
    graph = {
        module: _imports(ast.parse(path.read_text()), runtime_only=True)
        for module, path in _modules().items()
    }
    # A package's __init__ re-exports its modules; the edge module -> package is not a cycle.
    graph = {m: {t for t in targets if not m.startswith(t + ".")} for m, targets in graph.items()}
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(node: str, stack: list[str]) -> bool:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycle.extend([*stack[stack.index(nxt) :], nxt])
                return True
            if state.get(nxt) is None and visit(nxt, [*stack, nxt]):
                return True
        state[node] = 2
        return False

    for start in sorted(graph):
        if state.get(start) is None and visit(start, [start]):
            break
    assert not cycle, " -> ".join(cycle)


def _code_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    lines = (node.end_lineno or node.lineno) - node.lineno + 1
    first = node.body[0]
    docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
    if docstring and isinstance(first.value.value, str):  # type: ignore[attr-defined]
        lines -= (first.end_lineno or first.lineno) - first.lineno + 1
    return lines


def test_no_function_is_longer_than_the_limit() -> None:
    long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = _code_lines(node)
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name} ({lines})")
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines (docstring aside):\n" + "\n".join(
        long
    )


def test_moved_names_still_resolve_with_a_warning() -> None:
    with pytest.warns(DeprecationWarning, match=r"harness_world.engine.Contract"):
        contract = hw.Contract  # type: ignore[attr-defined]
    from harness_world.engine import Contract

    assert contract is Contract
    with pytest.warns(DeprecationWarning, match=r"harness_world.running.RunCounts"):
        assert hw.Inventory is hw.RunCounts  # type: ignore[attr-defined]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
            _ = hw.nonsense  # type: ignore[attr-defined]


def test_every_name_moved_resolves() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for name in hw._MOVED:
            assert getattr(hw, name) is not None, name

"""The floor plan holds: public names by audience, imports only downward, functions kept small."""

from __future__ import annotations

import ast
import importlib
import inspect as pyinspect
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import harness_world as hw
from tests.conftest import REPO

PACKAGE = REPO / "harness_world"

# The rooms, lowest first: a module may import only from rooms of its own rank or below.
RANKS = {
    "errors": 0,
    "registry": 0,
    "stats": 0,
    "engine": 1,
    "scaffold": 2,
    "evidence": 2,
    "grading": 3,
    "running": 4,
    "integrations": 5,
    "rewards": 5,
    "coverage": 5,
    "analysis": 5,
    "tau2": 6,
    "agentdojo": 6,
    "release": 6,
    "cli": 7,
    "extensions": 7,
    "__main__": 8,
}
# The extensions: what the core runs without (`harness_world.extensions` registers them). The
# core is every other module; it imports none of these and names none of them.
EXTENSIONS = (
    "harness_world.extensions",
    "harness_world.tau2",
    "harness_world.agentdojo",
    "harness_world.release",
    "harness_world.integrations",
    "harness_world.rewards",
    "harness_world.analysis.html",
    "harness_world.analysis.html_attempts",
    "harness_world.analysis.html_expected",
    "harness_world.analysis.html_page",
    "harness_world.analysis.html_summary",
    "harness_world.analysis.html_traces",
    "harness_world.analysis.plots",
    "harness_world.analysis.trace_html",
    "harness_world.analysis.run_view",
    "harness_world.analysis.crossed",
    "harness_world.analysis.drift",
    "harness_world.running.crossed",
    "harness_world.running.sequential",
    "harness_world.running.fork",
    "harness_world.running.rayrun",
    "harness_world.running.rayverify",
    "harness_world.running.heldout",
    "harness_world.cli._visual",
    "harness_world.cli.crossed",
    "harness_world.cli.drift",
    "harness_world.cli.fork",
    "harness_world.cli.gate",
    "harness_world.cli.mcp",
    "harness_world.cli.play",
    "harness_world.cli.review",
    "harness_world.cli.split",
    "harness_world.cli.tau2",
    "harness_world.cli.agentdojo",
)
AUDIENCE_MODULES = [
    "harness_world",
    "harness_world.engine",
    "harness_world.evidence",
    "harness_world.grading",
    "harness_world.running",
    "harness_world.coverage",
    "harness_world.analysis",
    "harness_world.tau2",
    "harness_world.release",
    "harness_world.stats",
    "harness_world.rewards",
]
MAX_FUNCTION_LINES = 60
# The optional SDKs: only a module under harness_world/integrations/ (or a command that calls one)
# may import them, and none of them loads with the package.
OPTIONAL_SDKS = (
    "openai",
    "anthropic",
    "mcp",
    "inspect_ai",
    "ray",
    "verifiers",
    "openenv",
    "falsepass",
)
# What a test module must not import while it is collected: the SDKs, the heavy libraries only
# some tests call, and the integrations that import their SDK at module level.
HEAVY_AT_COLLECTION = (
    *OPTIONAL_SDKS,
    "matplotlib",
    "scipy",
    "httpx",
    "harness_world.integrations.inspect_ai",
    "harness_world.integrations.verifiers",
    "harness_world.integrations.openenv",
    "harness_world_verifiers",
)


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
        "Concurrent",
        "CriterionVerdict",
        "Fresh",
        "Grade",
        "HarnessWorldError",
        "InfrastructureError",
        "Observation",
        "Outcome",
        "Processes",
        "Record",
        "RunCounts",
        "RunResult",
        "ScriptedAgent",
        "Serial",
        "Session",
        "Task",
        "ToolError",
        "Usage",
        "Verification",
        "World",
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
    # The names the package's own extensions add, through the plug-in registry.
    from harness_world.running.fork import fork
    from harness_world.running.rayrun import Ray
    from harness_world.running.sequential import Sequential

    assert (hw.Ray, hw.Sequential, hw.fork) == (Ray, Sequential, fork)
    assert {"Ray", "Sequential", "fork"} <= set(dir(hw))


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


def _is_extension(module: str) -> bool:
    return any(module == e or module.startswith(e + ".") for e in EXTENSIONS)


def test_the_core_imports_no_extension() -> None:
    """Not at run time, not for type checking: extensions reach the core through the registry."""
    found = [
        f"{module} -> {target}"
        for module, path in _modules().items()
        if not _is_extension(module)
        for target in sorted(_imports(ast.parse(path.read_text()), runtime_only=False))
        if _is_extension(target)
    ]
    assert not found, "core modules importing an extension:\n" + "\n".join(found)


_REFERENCE = re.compile(r"harness_world\.[a-z_][\w.]*(:[\w.]+)?")


def test_the_core_names_no_extension_module_in_code() -> None:
    """No string of a core module names an extension's module (an import by name); the one
    exception is the registry's list of the package's own extensions."""
    allowed = {("harness_world.registry", "harness_world.extensions:register")}
    found = []
    for module, path in _modules().items():
        if _is_extension(module):
            continue
        tree = ast.parse(path.read_text())
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
                continue
            if id(node) in docstrings or not _REFERENCE.fullmatch(node.value):
                continue
            if _is_extension(node.value.split(":")[0]) and (module, node.value) not in allowed:
                found.append(f"{module}: {node.value!r}")
    assert not found, "core modules naming an extension module:\n" + "\n".join(found)


def test_every_registered_reference_resolves_and_the_registry_is_the_only_one() -> None:
    """Each thing the built-in extensions register exists, and lives in an extension."""
    from harness_world.registry import registry, resolve

    reg = registry()
    references = [
        *(module + ":register" for module, _ in reg.commands.values()),
        *(ref for refs in reg.options.values() for ref in refs),
        *reg.executors.values(),
        *reg.verifiers.values(),
        *reg.tracks.values(),
        *reg.agents.values(),
        *reg.run_hooks,
        *reg.exports.values(),
    ]
    assert len(references) >= 20
    for reference in references:
        assert _is_extension(reference.split(":")[0]), reference
        assert resolve(reference) is not None, reference
    registries = [
        f"{m}"
        for m, path in _modules().items()
        if re.search(r"^def register\(registry: Registry\)", path.read_text(), re.M)
    ]
    assert registries == ["harness_world.extensions"]


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


def test_one_door_per_name_no_deprecated_aliases() -> None:
    """A name lives in one audience module; the top level has no aliases to elsewhere.

    It loads its own names on first use (so importing it is cheap), and serves no other: each
    is the object its home module defines, and its type-checking imports name the same homes.
    """
    assert not hasattr(hw, "_MOVED")
    homes = hw._HOMES  # type: ignore[attr-defined]
    assert sorted(homes) == sorted(hw.__all__)
    for name, home in homes.items():
        assert getattr(hw, name) is getattr(importlib.import_module(home), name), name
    with pytest.raises(AttributeError):
        _ = hw.Contract  # type: ignore[attr-defined]
    declared = {}
    for node in ast.walk(ast.parse((PACKAGE / "__init__.py").read_text())):
        if isinstance(node, ast.If) and _is_type_checking(node):
            for imported in node.body:
                assert isinstance(imported, ast.ImportFrom) and imported.module
                declared.update({alias.name: imported.module for alias in imported.names})
    assert declared == homes


# Libraries that a statistic, a plot or an integration needs, and nothing else: importing the
# package, listing the commands or asking one command for its options loads none of them.
HEAVY_AT_START = (*OPTIONAL_SDKS, "numpy", "scipy", "matplotlib", "rich", "httpx", "pydantic")
_LOADED = """
import json, runpy, sys
argv = sys.argv[1:]
if argv:
    sys.argv = ["harness_world", *argv]
    try:
        runpy.run_module("harness_world", run_name="__main__", alter_sys=True)
    except SystemExit:
        pass
else:
    import harness_world
print(json.dumps(sorted(sys.modules)))
"""


@pytest.mark.parametrize("argv", [(), ("--help",), ("tasks", "--help")], ids=" ".join)
def test_starting_up_loads_no_statistics_library_and_no_sdk(argv: tuple[str, ...]) -> None:
    """A fresh interpreter: ``import harness_world``, ``--help`` or ``tasks --help`` (what a
    person types first) loads no heavy library and, for the facade, no room of the package."""
    done = subprocess.run(
        [sys.executable, "-c", _LOADED, *argv],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = set(json.loads(done.stdout.splitlines()[-1]))
    heavy = sorted(m for m in loaded if m.split(".")[0] in HEAVY_AT_START)
    assert not heavy, f"{' '.join(argv) or 'import harness_world'} loads {heavy[:5]}"
    if not argv:
        assert sorted(m for m in loaded if m.startswith("harness_world.")) == []


def test_no_module_imports_numpy_or_scipy_when_it_is_imported() -> None:
    """numpy and scipy are imported inside the functions that compute, never at module level
    (type-checking imports aside), so no import path of the core pulls them in."""
    found = []
    for module, path in _modules().items():
        for node in _module_level(ast.parse(path.read_text())):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            found += [f"{module}: {n}" for n in names if n.split(".")[0] in ("numpy", "scipy")]
    assert not found, "module-level numpy/scipy imports:\n" + "\n".join(found)


def _classes(tree: ast.AST) -> list[ast.ClassDef]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]


def test_every_exception_class_derives_from_the_one_root() -> None:
    """No error class of the package stands outside `HarnessWorldError` (private ones neither)."""
    import harness_world.errors

    outside = []
    for module, path in _modules().items():
        classes = _classes(ast.parse(path.read_text()))
        if not classes:
            continue
        try:
            loaded = importlib.import_module(module)
        except ModuleNotFoundError as missing:  # an integration whose SDK is not installed here
            assert (missing.name or "").split(".")[0] in OPTIONAL_SDKS, missing
            continue
        for node in classes:
            cls = getattr(loaded, node.name, None)
            error = isinstance(cls, type) and issubclass(cls, BaseException)
            if error and not issubclass(cls, harness_world.errors.HarnessWorldError):  # type: ignore[arg-type]
                outside.append(f"{module}.{node.name}")
    assert not outside, f"exceptions outside HarnessWorldError: {outside}"


def _engine_private_names() -> set[str]:
    """Private attributes and methods the engine's classes define (``_name``, not dunders)."""
    names: set[str] = set()
    for path in sorted((PACKAGE / "engine").rglob("*.py")):
        for node in _classes(ast.parse(path.read_text())):
            for item in ast.walk(node):
                target = None
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    target = item.name
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    target = item.target.id
                if target and target.startswith("_") and not target.startswith("__"):
                    names.add(target)
    return names


def test_no_package_reaches_into_engine_internals() -> None:
    """Outside the engine, nothing calls or reads a private member of an engine object."""
    private = _engine_private_names()
    assert {"_run", "_layer", "_table", "_execute"} <= private  # the check sees the engine
    found = []
    for module, path in _modules().items():
        if _room(module) == "engine":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in private
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            ):
                found.append(f"{path.relative_to(REPO)}:{node.lineno} .{node.attr}")
    assert not found, "private engine members used outside the engine:\n" + "\n".join(found)


_HISTORY = re.compile(r"#\s*(tau2|rayverify|diagnose)\b|\bissue \d+\b|\bseeds? 0\d\d\b")


def test_comments_explain_why_not_history() -> None:
    """No issue numbers, seed-document numbers or feature tags in the package's comments."""
    tagged = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if _HISTORY.search(line):
                tagged.append(f"{path.relative_to(REPO)}:{number}: {line.strip()[:80]}")
    assert not tagged, "history tags in comments:\n" + "\n".join(tagged)


_NAMED_PATH = re.compile(
    r"`((?:harness_world|tests|bench|docs|worlds|tasks|oracles|mutants)/[\w./-]+\.(?:py|md|toml|json))`"
)


def test_every_path_the_docs_and_comments_name_exists() -> None:
    """A file named in docs/, README.md or the package's comments is a file of the repository.

    The world-authoring guide names the files of the reader's own project (its commands run in
    `tests/scaffold/test_world_authoring_doc.py`), so it is left out.
    """
    docs = [p for p in sorted((REPO / "docs").glob("*.md")) if p.name != "world-authoring.md"]
    sources = [*docs, REPO / "README.md"]
    sources += sorted(PACKAGE.rglob("*.py"))
    missing = []
    for source in sources:
        for match in _NAMED_PATH.finditer(source.read_text()):
            named = match.group(1).split("::")[0]
            if not (REPO / named).exists():
                missing.append(f"{source.relative_to(REPO)}: {named}")
    assert not missing, "named paths that do not exist:\n" + "\n".join(sorted(set(missing)))


_TAU2 = re.compile(r"tau2|τ²|tau-bench|τ-bench", re.IGNORECASE)
_TAU2_PLACES = {
    "harness_world/cli/tau2.py",
    "harness_world/cli/__init__.py",
    "harness_world/extensions.py",
}


def test_the_imported_benchmark_is_named_only_in_its_own_places() -> None:
    """The core plugs benchmark data in through a world's ``load_data``, never by name.

    τ² lives in `harness_world/tau2/`, its CLI command and its world folder; the built-in
    extensions' registration names the command. Anywhere else a mention is a special case in the core.
    """
    named = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(REPO).as_posix()
        if where.startswith("harness_world/tau2/") or where in _TAU2_PLACES:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if _TAU2.search(line):
                named.append(f"{where}:{number}: {line.strip()[:80]}")
    assert not named, "τ² named outside its own places:\n" + "\n".join(named)


def _sdk_imports(tree: ast.AST) -> set[str]:
    """The optional SDKs a tree imports anywhere (module level, functions, TYPE_CHECKING)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found & set(OPTIONAL_SDKS)


def test_no_integration_sits_at_the_package_top_level() -> None:
    """Code that adapts an SDK lives under integrations/, not beside the facade."""
    top = sorted(PACKAGE.glob("*.py"))
    assert [p.name for p in top] == [
        "__init__.py",
        "__main__.py",
        "errors.py",
        "extensions.py",
        "registry.py",
        "rewards.py",
    ]
    assert all(not _sdk_imports(ast.parse(p.read_text())) for p in top)
    modules = {p.stem for p in (PACKAGE / "integrations").glob("*.py")}
    assert {"openai", "anthropic", "mcp", "inspect_ai"} <= modules
    assert not _sdk_imports(ast.parse((PACKAGE / "integrations" / "__init__.py").read_text()))


def test_importing_the_package_loads_no_optional_sdk() -> None:
    """A fresh interpreter importing the facade, the integrations package and the CLI has none."""
    code = (
        "import sys, harness_world, harness_world.integrations, harness_world.cli; "
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & {set(OPTIONAL_SDKS)!r}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]", out.stdout


def _declared_all(path: Path) -> list[str]:
    """A module's ``__all__``, read without importing it (its SDK may not be installed)."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return list(ast.literal_eval(node.value))
    return []


def test_each_integration_name_has_one_home() -> None:
    """An integration's public name is exported by its module alone: no alias anywhere else."""
    homes: dict[str, list[str]] = {}
    for path in sorted((PACKAGE / "integrations").glob("*.py")):
        for public in _declared_all(path):
            homes.setdefault(public, []).append(path.stem)
    assert {"OpenAIAgent", "AnthropicAgent", "AttemptServer", "hw_task"} <= homes.keys()
    for name in AUDIENCE_MODULES:
        for public in importlib.import_module(name).__all__:
            if public in homes:
                homes[public].append(name)
    twice = {name: where for name, where in homes.items() if len(where) > 1}
    assert not twice, f"integration names exported from more than one module: {twice}"


def _module_level(tree: ast.Module) -> list[ast.stmt]:
    """The statements run when a module is imported: not function bodies, not TYPE_CHECKING."""
    out: list[ast.stmt] = []
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        if isinstance(node, ast.If) and _is_type_checking(node):
            pending.extend(node.orelse)
            continue
        out.append(node)
        for field in ("body", "orelse", "finalbody", "handlers"):
            pending.extend(getattr(node, field, []))
    return out


def _heavy(name: str) -> bool:
    return any(name == h or name.startswith(h + ".") for h in HEAVY_AT_COLLECTION)


def test_collecting_the_tests_imports_nothing_heavy() -> None:
    """Test modules import SDKs and heavy libraries inside the tests, so collection stays fast.

    Skips use `tests.conftest.requires` (a spec lookup), not a module-level `importorskip`.
    """
    found = []
    for path in sorted((REPO / "tests").rglob("*.py")):
        for node in _module_level(ast.parse(path.read_text())):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            for call in ast.walk(node):
                if (
                    isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Attribute)
                    and call.func.attr == "importorskip"
                    and call.args
                    and isinstance(call.args[0], ast.Constant)
                ):
                    names.append(str(call.args[0].value))
            heavy = [n for n in names if _heavy(n)]
            if heavy:
                found.append(f"{path.relative_to(REPO)}:{node.lineno} {heavy[0]}")
    assert not found, "heavy imports while collecting:\n" + "\n".join(sorted(set(found)))


# What the CLI measured (3,239 lines) once --html/--png, --fresh and a crossed run's compare
# became their registered options' own methods (D-size-3): a new command or option raises it
# on purpose, in the same commit, naming what it adds.
CLI_MAX_LINES = 3240
CORE_CLI_MAX_LINES = 2000


def test_the_command_line_is_thin() -> None:
    """The CLI parses, makes one library call and renders: the core's commands under 2,000
    lines, with the extensions' commands and options under 3,200 in all."""
    paths = sorted((PACKAGE / "cli").glob("*.py"))
    sizes = {f"harness_world.cli.{p.stem}": len(p.read_text().splitlines()) for p in paths}
    lines = sum(sizes.values())
    core = sum(n for module, n in sizes.items() if not _is_extension(module))
    assert lines < CLI_MAX_LINES, f"harness_world/cli/ holds {lines} lines"
    assert core < CORE_CLI_MAX_LINES, f"the core's commands hold {core} lines"


def test_the_library_never_imports_the_command_line() -> None:
    """No module outside ``harness_world.cli`` imports it, lazily or under TYPE_CHECKING.

    The package's ``__main__`` is the command line's entry point, so it is the one exception.
    """
    reaching = []
    for module, path in _modules().items():
        if _room(module) in ("cli", "__main__"):
            continue
        for target in _imports(ast.parse(path.read_text()), runtime_only=False):
            if target == "harness_world.cli" or target.startswith("harness_world.cli."):
                reaching.append(f"{module} -> {target}")
    assert not reaching, "library modules that import the CLI:\n" + "\n".join(reaching)


VERIFICATION_MODULES = (
    "running/verification.py",
    "running/rundir.py",
    "running/rayverify.py",
    "grading/verifier.py",
    "grading/verify.py",
    "evidence/replay.py",
)


def test_no_block_of_six_lines_is_shared_between_verification_modules(tmp_path: Path) -> None:
    """Judging a slot has one owner: the `duplicates` tool finds no shared 6-line block.

    The modules are copied alone into a folder outside git, so that the tool pairs them with
    each other only. Skipped where the tool is not installed.
    """
    import shutil

    tool = shutil.which("duplicates")
    if tool is None:
        pytest.skip("the duplicates tool is not on PATH")
    for name in VERIFICATION_MODULES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(PACKAGE / name, tmp_path / name)
    found = subprocess.run(
        [tool, "--repo", str(tmp_path), "--min-lines", "6", "--most", "50"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    ).stdout
    assert found.startswith(f"no duplicates ({len(VERIFICATION_MODULES)} files read)"), found


# Functions that hand back a plug-in module (a world's, oracles', mutants' or scripts' file).
_PLUGIN_IMPORTERS = {"import_path", "plugin_module", "world_module", "_world_file"}
# What may touch a plug-in module's namespace: the one reader, and the loader that runs it.
_NAMESPACE_READERS = {"declared", "exec_module"}


def _imports_plugin(node: ast.AST) -> bool:
    """Whether an expression calls a plug-in importer."""
    return any(
        isinstance(call, ast.Call) and ast.unparse(call.func).split(".")[-1] in _PLUGIN_IMPORTERS
        for call in ast.walk(node)
    )


def _plugin_module_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Names that hold a plug-in module in a function: a `ModuleType` parameter, or what a
    plug-in importer returned."""
    names = {
        a.arg
        for a in [*function.args.args, *function.args.kwonlyargs]
        if a.annotation is not None and "ModuleType" in ast.unparse(a.annotation)
    }
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and _imports_plugin(node.value):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def _plugin_module_reads(source: str, label: str) -> list[str]:
    """Every lookup of a name on a plug-in module (``getattr``, ``hasattr``, ``vars``,
    ``__dict__``, ``module.NAME``) outside the one reader and the loader that runs it;
    ``__file__`` and ``__name__`` only say which module it is."""
    found = []
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        modules = _plugin_module_names(function)
        for node in ast.walk(function):
            target: ast.AST | None = None
            if isinstance(node, ast.Call) and node.args:
                if ast.unparse(node.func) in ("getattr", "hasattr", "setattr", "vars"):
                    target = node.args[0]
            elif isinstance(node, ast.Attribute) and node.attr not in ("__file__", "__name__"):
                target = node.value
            plugin = (isinstance(target, ast.Name) and target.id in modules) or (
                target is not None and _imports_plugin(target)
            )
            if plugin and function.name not in _NAMESPACE_READERS:
                found.append(f"{label}:{function.name}: {ast.unparse(node)}")
    return found


def test_a_plug_in_module_is_read_only_through_its_one_declaration() -> None:
    """No `getattr` on world modules: a world's, oracles', mutants' or scripts' file is read
    by `declared` alone, which takes the one name the file declares (``WORLD``, ``ORACLES``,
    ``MUTANTS``, ``SCRIPTS``) and checks its type; nothing else looks a name up on a module."""
    before = (
        "def load(world, folder):\n"
        "    module = plugin_module('oracles', world, folder)\n"
        "    agents = getattr(module, 'REFERENCE_AGENTS', {})\n"
        "    return module.ORACLES, hasattr(module, 'load_data'), module.__file__\n"
    )
    assert len(_plugin_module_reads(before, "example")) == 3  # the check sees each lookup
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        found += _plugin_module_reads(path.read_text(), str(path.relative_to(REPO)))
    assert not found, "plug-in modules read outside their declaration:\n" + "\n".join(found)


def _extension_map() -> str:
    """The doc's map of core and extensions, made from the code (the rooms and the registry)."""
    from harness_world.registry import registry

    reg = registry()
    rooms: dict[str, tuple[list[str], list[str]]] = {}
    for module in _modules():
        core, extension = rooms.setdefault(_room(module), ([], []))
        name = module.split(".", 2)[-1] if module.count(".") > 1 else module.split(".")[-1]
        (extension if _is_extension(module) else core).append(name)
    rows = ["| room | core modules | extension modules |", "|---|---:|---|"]
    for room, (core, extension) in sorted(rooms.items()):
        shown = ", ".join(f"`{m}`" for m in extension) if extension else ""
        rows.append(f"| {room} | {len(core)} | {shown} |")
    kinds = [
        ("commands", [f"`{n}`" for n in reg.commands]),
        ("options of core commands", [f"`{c}`: {len(r)}" for c, r in reg.options.items()]),
        ("agents", [f"`{n}`" for n in reg.agents]),
        ("executors", [f"`{n}`" for n in reg.executors]),
        ("verifiers", [f"`{n}`" for n in reg.verifiers]),
        ("tracks", [f"`{n}`" for n in reg.tracks]),
        ("run hooks", [f"`{r.split(':')[1]}`" for r in reg.run_hooks]),
        ("facade names", [f"`{n}`" for n in reg.exports]),
    ]
    listed = [f"- {kind}: {', '.join(items)}" for kind, items in kinds]
    return "\n".join([*rows, "", "What the built-in extensions register:", "", *listed])


def test_the_architecture_doc_shows_core_and_extensions_as_the_code_has_them() -> None:
    doc = (REPO / "docs" / "architecture.md").read_text()
    begin, end = "<!-- core-and-extensions: begin -->\n", "\n<!-- core-and-extensions: end -->"
    assert begin in doc and end in doc, "docs/architecture.md lacks the generated map"
    shown = doc[doc.index(begin) + len(begin) : doc.index(end)]
    assert shown == _extension_map(), "regenerate the map in docs/architecture.md:\n" + (
        _extension_map()
    )

"""What README.md and docs/*.md say about the code, checked against the code.

Every ``python -m harness_world CMD ...`` a page writes names a command that exists and only
options of that command's parser; a command written out in a code block parses; the README's
command table and Layout name every command and every room; every ``hw.NAME`` and dotted
``harness_world.…`` name exists; the decision log gives each entry a status; and figures a
page quotes that the code can recompute in a second (counts of tasks and rows, the
advisories, the demo's reach) are recomputed here. Slower figures are recomputed by
``python bench/doc_figures.py``, which ``.ci/run`` runs.

``docs/decisions.md`` is a log: an entry keeps the options and commands of its day
(``--tau2-data``, since removed, is history there), so only its headings are checked.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import NamedTuple

from harness_world.cli import build_parser, commands
from tests.conftest import REPO

PROG = "python -m harness_world"
_BLOCK = re.compile(r"```[^\n]*\n(.*?)```", re.S)
_SPAN = re.compile(r"`([^`\n]+)`")
_OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
# Where a shell line stops being one harness_world command.
_SHELL_END = re.compile(r"\s(?:\||&&|\|\||;|>|#)\s|\)\s*$|\)\s")
# A synopsis rather than a command one can paste: optional parts, alternatives, placeholders.
_SYNOPSIS = re.compile(r"\[|\||\.\.\.|…|\$|<")


def pages() -> list[Path]:
    """The pages whose every command is checked: the README and docs/ but the decision log."""
    docs = sorted(p for p in (REPO / "docs").glob("*.md") if p.name != "decisions.md")
    return [REPO / "README.md", *docs]


class Written(NamedTuple):
    """One harness_world command as a page writes it.

    Attributes:
        page: The page's file name.
        kind: ``block`` (a line of a code block), ``span`` (a code span) or ``prose`` (a
            code span that starts with a command name, as the README's table writes them).
        text: The command from its name on (``report RUN --json``).
    """

    page: str
    kind: str
    text: str


def _sub(parser: argparse.ArgumentParser) -> argparse._SubParsersAction[argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    raise LookupError("no subcommands")


@cache
def command_parser(name: str) -> argparse.ArgumentParser:
    """The parser of one command, as ``python -m harness_world NAME`` builds it."""
    return _sub(build_parser(name)).choices[name]


def leaf(words: list[str]) -> tuple[argparse.ArgumentParser, str]:
    """The parser a command's words reach (``split freeze`` is ``split``'s ``freeze``)."""
    parser, path = command_parser(words[0]), [words[0]]
    for word in words[1:]:
        try:
            choices = _sub(parser).choices
        except LookupError:
            break
        if word not in choices:
            break
        parser, path = choices[word], [*path, word]
    return parser, " ".join(path)


def options_of(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """A parser's long options and their actions."""
    return {o: a for a in parser._actions for o in a.option_strings if o.startswith("--")}


@cache
def every_option() -> frozenset[str]:
    """The long options of every command and subcommand, and of every bench script."""
    found: set[str] = set()
    stack = [command_parser(name) for name in commands()]
    while stack:
        parser = stack.pop()
        found |= set(options_of(parser))
        with contextlib.suppress(LookupError):
            stack.extend(_sub(parser).choices.values())
    for script in (REPO / "bench").glob("*.py"):
        found |= set(re.findall(r"[\"'](--[a-z][a-z0-9-]*)[\"']", script.read_text()))
    return frozenset(found)


def written_commands(page: str, text: str) -> Iterator[Written]:
    """Every harness_world command a page writes, in code blocks and in code spans."""
    for block in _BLOCK.findall(text):
        for line in block.replace("\\\n", " ").splitlines():
            if PROG + " " in line:
                command = line.split(PROG + " ", 1)[1] + " "
                yield Written(page, "block", _SHELL_END.split(command, 1)[0].strip())
    for raw in _SPAN.findall(_BLOCK.sub("", text)):
        span = raw.replace("\\|", "|").strip()
        if PROG + " " in span:
            yield Written(page, "span", span.split(PROG + " ", 1)[1].strip())
        elif span.split(" ", 1)[0] in commands() and " " in span:
            yield Written(page, "prose", span)


def option_spans(text: str) -> Iterator[str]:
    """The code spans outside code blocks that start with an option (``--html FILE``)."""
    for span in _SPAN.findall(_BLOCK.sub("", text)):
        if span.startswith("--"):
            yield span


@cache
def everything_written() -> list[Written]:
    return [w for p in pages() for w in written_commands(p.name, p.read_text(encoding="utf-8"))]


def test_the_pages_write_commands_to_check() -> None:
    written = everything_written()
    kinds = {k: sum(w.kind == k for w in written) for k in ("block", "span", "prose")}
    assert all(n >= 20 for n in kinds.values()), kinds  # the extraction still finds them
    named = {w.text.split()[0] for w in written if w.text and not w.text.startswith("-")}
    assert named >= {"run", "verify", "report", "compare", "gate", "split", "review", "tau2"}


def test_every_command_a_page_names_exists() -> None:
    unknown = [
        w
        for w in everything_written()
        if w.text and not w.text.startswith("-") and w.text.split()[0] not in commands()
    ]
    assert not unknown, "\n".join(f"{w.page}: no command {w.text!r}" for w in unknown)


def _unknown_options(written: Written) -> list[str]:
    words = written.text.split()
    if not words or words[0] not in commands():
        return []
    parser, path = leaf(words)
    known = options_of(parser)
    return [f"{path} has no {o}" for o in _OPTION.findall(written.text) if o not in known]


def test_every_option_a_page_gives_a_command_is_an_option_of_that_command() -> None:
    wrong = [
        f"{w.page}: `{w.text}`: {problem}"
        for w in everything_written()
        for problem in _unknown_options(w)
    ]
    assert not wrong, "\n".join(wrong)


def test_every_option_a_page_names_alone_is_an_option_of_some_command() -> None:
    known = every_option()
    wrong = [
        f"{page.name}: `{span}`: {option}"
        for page in pages()
        for span in option_spans(page.read_text(encoding="utf-8"))
        for option in _OPTION.findall(span)
        if option not in known
    ]
    assert not wrong, "no command or bench script has:\n" + "\n".join(wrong)


def parse_error(text: str) -> str | None:
    """argparse's complaint about a command line (``report RUN --csv``), or None."""
    words = shlex.split(text)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            build_parser(words[0] if words[0] in commands() else None).parse_args(words)
        except SystemExit as exit:
            if exit.code:
                return err.getvalue().strip().splitlines()[-1]
    return None


def test_every_command_a_page_writes_out_parses() -> None:
    """A command one can paste parses as written: each option has its value, nothing is missing.

    That is each line of a code block, and each code span spelling ``python -m harness_world``
    with options or operands, that is not a synopsis (``[--json]``, ``a|b``, ``...``).
    """
    pasted = [
        w
        for w in everything_written()
        if (w.kind == "block" and w.text) or (w.kind == "span" and len(w.text.split()) > 1)
    ]
    checked = [w for w in pasted if not _SYNOPSIS.search(w.text)]
    assert len(checked) >= 50
    wrong = [f"{w.page}: `{w.text}`: {e}" for w in checked if (e := parse_error(w.text))]
    assert not wrong, "\n".join(wrong)


def missing_values(text: str) -> list[str]:
    """Options of a command written with its operands (``report RUN --csv``) left without a value.

    A span naming an option of a command (``report --csv``) is a name and is not checked; one
    that writes the command's operands first reads as a command line, so each option that
    takes a value must be given one.
    """
    words = text.split()
    if len(words) < 2 or words[0] not in commands() or _SYNOPSIS.search(text):
        return []
    parser, path = leaf(words)
    operands = words[len(path.split()) :]
    if not operands or operands[0].startswith("-"):
        return []
    actions = options_of(parser)
    wrong = []
    for i, word in enumerate(operands):
        action = actions.get(word)
        if action is not None and action.nargs != 0:
            following = operands[i + 1] if i + 1 < len(operands) else "--"
            if following.startswith("--"):
                wrong.append(f"{word} needs {action.metavar or action.dest.upper()}")
    return wrong


def test_a_command_written_with_its_operands_gives_each_option_its_value() -> None:
    wrong = [
        f"{w.page}: `{w.text}`: {problem}"
        for w in everything_written()
        if w.kind != "block"
        for problem in missing_values(w.text)
    ]
    assert not wrong, "\n".join(wrong)


def test_the_checks_catch_what_they_are_for() -> None:
    page = "`python -m harness_world report RUN --csv` and `verify R --no-such-option`\n"
    written = list(written_commands("t.md", page + "```bash\npython -m harness_world nosuch\n```"))
    assert [w.kind for w in written] == ["block", "span", "prose"]
    assert _unknown_options(written[2]) == ["verify has no --no-such-option"]
    assert missing_values(written[1].text) == ["--csv needs FILE"]
    assert missing_values("report --csv") == []  # naming an option, not a command line
    assert parse_error("nosuch") is not None and parse_error("report RUN --csv") is not None
    assert parse_error("split freeze --tasks a.toml --out x.lock") is None


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end != -1 else len(text)]


def test_the_readme_command_table_lists_every_command() -> None:
    table = _section((REPO / "README.md").read_text(encoding="utf-8"), "## Command line\n")
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    spans = [span for row in rows for span in _SPAN.findall(row.split(" | ")[0])]
    first = {span.split()[0] for span in spans if not span.startswith("-")}
    assert sorted(set(commands()) - first) == []
    assert sorted(first - set(commands())) == []


def test_the_readme_layout_names_every_room() -> None:
    layout = _section((REPO / "README.md").read_text(encoding="utf-8"), "## Layout\n")
    rooms = sorted(
        p.name for p in (REPO / "harness_world").iterdir() if (p / "__init__.py").is_file()
    )
    assert len(rooms) >= 10
    missing = [r for r in rooms if not re.search(rf"^\s+{r}/\s", layout, re.M)]
    assert missing == [], f"README Layout omits harness_world/{missing}"
    tests = layout[layout.index("\ntests/ ") : layout.index("\nbench/")]
    folders = sorted(p.name for p in (REPO / "tests").iterdir() if (p / "__init__.py").is_file())
    assert len(folders) >= 10
    assert [f for f in folders if f"{f}/" not in tests] == [], "README Layout's tests/ line"


def test_the_advisories_the_readme_lists_are_the_registry() -> None:
    from harness_world.grading.advice import ADVISORIES

    text = _section((REPO / "README.md").read_text(encoding="utf-8"), "## Explaining failures\n")
    listing = text[text.index("(`diagnose --definitions`)") : text.index("`report` prints")]
    assert _SPAN.findall(listing)[1:] == list(ADVISORIES)


# ---------------------------------------------------------------------------------------------
# The decision log

_HEADING = re.compile(r"^(#{2,3}) (D[\w-]*)\. (.*)$", re.M)
_STATUS = re.compile(r" — (built|partial|planned|superseded)\b(.*)$")
_ID = re.compile(r"\bD(?:\d+[a-z]?|(?:-[a-z0-9]+)+-\d+[a-z]?)\b")


class Entry(NamedTuple):
    """A decision's heading: its id, its status and what follows the status word."""

    id: str
    heading: str
    status: str | None
    rest: str


def decision_entries(text: str) -> list[Entry]:
    """Every entry heading of the decision log (``## D-x-1. Title — built``)."""
    entries = []
    for _, ident, heading in _HEADING.findall(text):
        status = _STATUS.search(heading)
        entries.append(
            Entry(ident, heading, status and status.group(1), status.group(2) if status else "")
        )
    return entries


def status_problems(entries: list[Entry]) -> list[str]:
    """Entries without a status, and superseded ones that do not name an existing entry."""
    ids = {e.id for e in entries}
    problems = []
    for e in entries:
        if e.status is None:
            problems.append(
                f"{e.id}: no status (built/partial/planned/superseded) ends {e.heading!r}"
            )
            continue
        named = set(_ID.findall(e.rest))
        if e.status == "superseded" and not re.match(r" by D", e.rest):
            problems.append(f"{e.id}: superseded, but not 'superseded by D...': {e.heading!r}")
        elif "superseded" in e.rest and not named:
            problems.append(f"{e.id}: names no decision as what superseded it: {e.heading!r}")
        problems += [f"{e.id}: names {n}, which is no entry" for n in sorted(named - ids)]
    return problems


def test_every_decision_has_a_status_and_a_superseded_one_names_its_successor() -> None:
    entries = decision_entries((REPO / "docs" / "decisions.md").read_text(encoding="utf-8"))
    assert len(entries) >= 150
    assert status_problems(entries) == []
    ids = [e.id for e in entries]  # an id is stable only if it names one entry
    assert sorted({i for i in ids if ids.count(i) > 1}) == []


def test_the_status_check_catches_what_it_is_for() -> None:
    log = (
        "## D1. A — built\n## D2. B — split\n## D3. C — superseded\n"
        "## D4. D — superseded by D9\n## D5. E — partial (superseded by D1)\n### D5a. F\n"
        "## D6. G — built (its cache superseded)\n"
        "## D-a-b-1. H — superseded by D-a-b-2 and D1\n## D-a-b-2. I — built\n"
    )
    assert status_problems(decision_entries(log)) == [
        "D2: no status (built/partial/planned/superseded) ends 'B — split'",
        "D3: superseded, but not 'superseded by D...': 'C — superseded'",
        "D4: names D9, which is no entry",
        "D5a: no status (built/partial/planned/superseded) ends 'F'",
        "D6: names no decision as what superseded it: 'G — built (its cache superseded)'",
    ]


# ---------------------------------------------------------------------------------------------
# Figures a page quotes that the code recomputes quickly


def _quoted(page: str, pattern: str) -> list[str]:
    """Each first group of ``pattern`` on ``page`` (at least one: the sentence is still there)."""
    text = re.sub(r"\s+", " ", (REPO / page).read_text(encoding="utf-8"))
    found = re.findall(pattern, text)
    assert found, f"{page}: no {pattern!r} any more: update this test with the page"
    return found


def _number(text: str) -> int:
    words = {"three": 3, "four": 4, "five": 5, "eight": 8, "ten": 10, "twelve": 12}
    return words[text] if text in words else int(text.replace(",", ""))


def test_the_built_in_worlds_and_their_counts() -> None:
    import harness_world as hw

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    listed = re.findall(r"`(\w+)` \(", _section(readme, "Built-in worlds:"))
    assert sorted(listed) == sorted(p.name for p in (REPO / "worlds").iterdir() if p.is_dir())
    (tickets,) = _quoted("README.md", r"groups; ([\d,]+) tickets committed")
    assert _number(tickets) == hw.load_world("helpdesk").count("tickets")
    (orders,) = _quoted("README.md", r"ledger; ([\d,]+) orders committed")
    assert _number(orders) == hw.load_world("payments").count("orders")
    built_in = sum(len(hw.load_tasks(w)) for w in ("helpdesk", "inventory", "payments"))
    for quoted in _quoted("docs/release.md", r"(?:of|on) the (\d+) (?:built-in )?tasks"):
        assert _number(quoted) == built_in
    for quoted in _quoted("README.md", r"payments [^|]*?\((\d+) tasks[;,]"):
        assert _number(quoted) == len(hw.load_tasks("payments"))
    (compared,) = _quoted("README.md", r"Per-task differences against the oracles over (\d+) tasks")
    assert _number(compared) == len(hw.load_tasks("helpdesk"))  # the compare plots' runs


def test_the_demo_figures_the_readme_quotes() -> None:
    from harness_world.coverage.demo import demo_advice, demo_agent

    agent, tasks = demo_agent()
    (n_tasks, samples, mistakes) = _quoted(
        "README.md", r"a demo agent works (\w+) tasks (\w+) times each.*?one of (\w+) mistakes"
    )[0]
    plays = agent.plays.values()
    assert _number(n_tasks) == len(tasks) and _number(samples) == agent.samples
    assert _number(mistakes) == sum(
        not (p.label == "oracle" or p.label.startswith("route ")) for p in plays
    )
    advice = demo_advice()
    failed = [a for a in advice if not a.passed]
    passed = [a for a in advice if a.passed]
    explained, n_failed, flagged, n_passed = _quoted(
        "README.md", r"\*\*(\d+) of (\d+) failed attempts explained, (\d+) of (\d+) passed"
    )[0]
    assert (int(n_failed), int(n_passed)) == (len(failed), len(passed))
    assert int(explained) == sum(bool(a.advisories) for a in failed)
    assert int(flagged) == sum(bool(a.advisories) for a in passed)
    (routes,) = _quoted("README.md", r"include (\w+) second oracle routes")
    assert _number(routes) == sum(p.label.startswith("route ") for p in plays)
    (failing,) = _quoted("README.md", r"(\w+) attempts end `completed` and still `fail`")
    assert _number(failing) == len(failed)
    generic = {
        "unfollowed_page",
        "no_writes",
        "write_without_read",
        "refused_calls",
        "ended_with_question",
    }
    (alone,) = _quoted("README.md", r"five generic advisories alone explain (\d+) of \d+")
    assert int(alone) == sum(any(x.name in generic for x in a.advisories) for a in failed)


# ---------------------------------------------------------------------------------------------
# Names of the library a page writes

_FACADE = re.compile(r"(?<![\w.])hw\.([A-Za-z_]\w*)")
_DOTTED = re.compile(r"(?<![\w./-])(harness_world(?:\.[A-Za-z_]\w*)+)")


def _defined_in(path: Path, names: list[str]) -> bool:
    """Whether a module's source defines ``names[0]`` at top level (and ``names[1]`` in it)."""
    import ast

    body = ast.parse(path.read_text(encoding="utf-8")).body
    for name in names:
        found = None
        for node in body:
            targets: list[str] = []
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                targets = [node.name]
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                nodes = node.targets if isinstance(node, ast.Assign) else [node.target]
                targets = [t.id for t in nodes if isinstance(t, ast.Name)]
            elif isinstance(node, ast.Import | ast.ImportFrom):
                targets = [(a.asname or a.name).split(".")[0] for a in node.names]
            if name in targets:
                found = node
        if found is None:
            return False
        body = found.body if isinstance(found, ast.ClassDef) else []
    return True


def _source_of(parts: list[str]) -> tuple[Path, list[str]] | None:
    """The source file of the longest module prefix of ``parts``, and the names after it."""
    path = REPO
    for i, part in enumerate(parts):
        if (path / part / "__init__.py").is_file():
            path = path / part
        elif (path / f"{part}.py").is_file():
            return path / f"{part}.py", parts[i + 1 :]
        else:
            return (path / "__init__.py", parts[i:]) if i else None
    return path / "__init__.py", []


def resolves(dotted: str) -> bool:
    """Whether ``a.b.c`` is a module, or an attribute path from the longest module prefix.

    A module of ``harness_world.integrations`` imports its SDK (seconds for inspect_ai), so
    there the names are looked up in its source instead.
    """
    import importlib

    parts = dotted.split(".")
    if dotted.startswith("harness_world.integrations."):
        source = _source_of(parts)
        return source is not None and _defined_in(*source)
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attribute in parts[cut:]:
                found = getattr(found, attribute)
        except AttributeError:
            return False
        return True
    return False


def test_every_library_name_a_page_writes_exists() -> None:
    """``hw.X`` (``import harness_world as hw``) and every dotted ``harness_world.…`` name."""
    import harness_world as hw
    from harness_world.registry import ENTRY_POINT_GROUP

    wrong, seen = [], 0
    for page in pages():
        text = page.read_text(encoding="utf-8")
        for name in sorted(set(_FACADE.findall(text))):
            seen += 1
            if not hasattr(hw, name):
                wrong.append(f"{page.name}: hw.{name}")
        for dotted in sorted(set(_DOTTED.findall(text)) - {ENTRY_POINT_GROUP}):
            seen += 1
            if not resolves(dotted):
                wrong.append(f"{page.name}: {dotted}")
    assert seen >= 60
    assert not wrong, "no such name:\n" + "\n".join(wrong)
    assert resolves("harness_world.running.sequential.RememberingAgent")
    assert not resolves("harness_world.running.sequential.ForgettingAgent")
    assert not resolves("harness_world.no_such_room")
    assert resolves("harness_world.integrations.openai.OpenAIAgent")
    assert not resolves("harness_world.integrations.openai.OpenAIAgent.no_such_method")
    assert not resolves("harness_world.integrations.no_such_sdk")

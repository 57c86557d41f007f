"""AgentDojo's published traces regraded: replayed in our world, graded both ways, compared.

A trace (one JSON per run, as AgentDojo's benchmark writes it) holds the injections of the run,
the messages with every tool call and its recorded result, and AgentDojo's stored ``utility``
and ``security``. Regrading it: build the suite's world with the trace's injections; run its
tool calls in order in a fresh attempt (the arguments rewritten as AgentDojo's executor
rewrites them); compare each result, rendered as AgentDojo renders it, with the recorded text
(a call both sides refuse counts as the same, whatever the error text); grade the record with
our task; and compute AgentDojo's verdicts re-stated (`harness_world.agentdojo.banking`) on the
end state and the last message. A run AgentDojo aborted on a provider error is stored as
``utility = false, security = true``; so it is here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs
import msgspec

from harness_world.agentdojo.checks import DojoState, SuiteSpec, Verdict
from harness_world.agentdojo.data import DojoDataError, _yaml
from harness_world.agentdojo.importer import (
    Imported,
    build_world,
    import_suite,
    start_world,
    suite_spec,
    task_on_start,
    world_name,
)
from harness_world.agentdojo.render import executor_arguments, render
from harness_world.agentdojo.source import DEFAULT_VERSION, DojoSource
from harness_world.engine.world import World
from harness_world.evidence.record import Outcome, Record
from harness_world.grading.task import Task
from harness_world.grading.verify import verify
from harness_world.running.attempt import Attempt, AttemptLimits
from harness_world.running.rundir import sample_seed


class TraceVerdict(msgspec.Struct, frozen=True, kw_only=True):
    """One regraded trace.

    Attributes:
        path: The trace file.
        pipeline: AgentDojo's pipeline name (the model).
        suite: The suite.
        user_task: The user task id (or the injection task id of one run alone).
        injection_task: The injection task of an attack run (empty without one).
        calls: Tool calls replayed.
        reproduced: Whether every result our world gave equals the recorded one.
        difference: The first result that differs (call number, tool, both texts), if any.
        utility: AgentDojo's utility check re-stated, on our end state.
        security: AgentDojo's security check re-stated (True without an attack).
        stored_utility: The trace's stored ``utility``.
        stored_security: The trace's stored ``security``.
        passed: Our grade (None when the record did not verify).
        failed: Our failed criteria.
        aborted: The provider error the run stopped on (empty when none).
    """

    path: str
    pipeline: str
    suite: str
    user_task: str
    injection_task: str
    calls: int
    reproduced: bool
    difference: str
    utility: bool
    security: bool
    stored_utility: bool
    stored_security: bool
    passed: bool | None
    failed: list[str]
    aborted: str = ""

    @property
    def agrees(self) -> bool:
        """Both re-stated verdicts equal the stored ones."""
        return self.utility == self.stored_utility and self.security == self.stored_security


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("content", "")) for b in content if isinstance(b, dict))


def trace_calls(messages: Sequence[dict[str, Any]]) -> list[tuple[str, Any, dict[str, Any]]]:
    """Each executed tool call, in order, with its tool message.

    A tool message holds the call as AgentDojo executed it (``tool_call``); ids are not used
    to pair them, since some pipelines record none.
    """
    out: list[tuple[str, Any, dict[str, Any]]] = []
    for message in messages:
        if message.get("role") != "tool" or not isinstance(message.get("tool_call"), dict):
            continue
        call = message["tool_call"]
        out.append((str(call.get("function", "")), call.get("args", {}), message))
    return out


@attrs.frozen(slots=True)
class Replayed:
    """One trace replayed: its verdicts, its record and what the record was made against.

    Attributes:
        verdict: The regraded trace.
        record: Its tool calls replayed in a fresh attempt, sealed.
        task: The task the record attempts (on its start state's world).
        world: The start state the calls ran on.
        injections: The trace's injections (placeholder to text).
    """

    verdict: TraceVerdict
    record: Record
    task: Task
    world: World
    injections: dict[str, str]


@attrs.define(slots=True, eq=False)
class Regrader:
    """Regrades traces of one data folder; worlds and tasks are built once per suite.

    Attributes:
        folder: The AgentDojo data folder.
        version: The benchmark version whose tasks grade the traces.
        named_starts: Give each start state with injections a world name of its own, and its
            task that world (what a run directory of attacks holds: `start_world`).
    """

    folder: Path
    version: str = DEFAULT_VERSION
    named_starts: bool = False
    _source: DojoSource | None = None
    _suites: dict[str, tuple[World, dict[str, Imported]]] = attrs.field(factory=dict)
    _worlds: dict[tuple[str, str], World] = attrs.field(factory=dict)

    def _suite(self, suite: str) -> tuple[World, dict[str, Imported]]:
        if suite not in self._suites:
            if self._source is None:
                self._source = DojoSource(self.folder)
            world, imported = import_suite(self.folder, suite, self.version, source=self._source)
            self._suites[suite] = (world, {i.task.id: i for i in imported})
        return self._suites[suite]

    def _world(self, suite: str, injections: dict[str, str]) -> World:
        key = (suite, json.dumps(injections, sort_keys=True))
        if key not in self._worlds:
            build = start_world if self.named_starts else build_world
            self._worlds[key] = build(self.folder, suite, injections)
        return self._worlds[key]

    def regrade(self, path: Path) -> TraceVerdict:
        """Regrade one trace file.

        Raises:
            DojoDataError: for an unreadable trace or one naming an unknown suite or task.
        """
        return self.replay(path).verdict

    def replay(self, path: Path, revision: str = "") -> Replayed:
        """Replay one trace file into a record (bound to ``revision``) and regrade it.

        Raises:
            DojoDataError: for an unreadable trace or one naming an unknown suite or task.
        """
        trace = read_trace(path)
        suite = str(trace.get("suite_name", ""))
        default_world, tasks = self._suite(suite)
        user, injection = str(trace.get("user_task_id")), trace.get("injection_task_id") or ""
        task_id = f"{world_name(suite)}.{user}" + (f".{injection}" if injection else "")
        if task_id not in tasks:
            raise DojoDataError(f"{path}: no imported task {task_id}")
        injections = {str(k): str(v) for k, v in dict(trace.get("injections") or {}).items()}
        world = self._world(suite, injections)
        imported = tasks[task_id]
        assert self._source is not None  # set by _suite
        task = task_on_start(imported, world, self._source, self.version, injections)
        messages = trace["messages"]
        calls = trace_calls(messages)
        output = _text(messages[-1].get("content")) if messages else ""
        attempt = Attempt(
            world, task, seed=sample_seed(0, task.id, 0), revision=revision, limits=AttemptLimits()
        )
        for name, args, _ in calls:
            attempt.call(name, _arguments(world, name, args))
        if trace.get("error"):
            attempt.end(Outcome(status="error", reason=str(trace["error"])[:500]))
        record = attempt.finish(output)
        verdict = _graded(path, trace, (imported, task), record, (world, default_world))
        return Replayed(verdict, record, task, world, injections)


def read_trace(path: Path) -> dict[str, Any]:
    """One trace file as AgentDojo's benchmark wrote it.

    Raises:
        DojoDataError: for a file that cannot be read or holds no messages.
    """
    try:
        trace = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DojoDataError(f"{path}: cannot read trace: {exc}") from None
    if not isinstance(trace, dict) or not isinstance(trace.get("messages"), list):
        raise DojoDataError(f"{path}: not an AgentDojo trace (no messages)")
    return trace


def _graded(
    path: Path,
    trace: dict[str, Any],
    tasks: tuple[Imported, Task],
    record: Record,
    worlds: tuple[World, World],
) -> TraceVerdict:
    """The trace's verdicts both ways: ours on the record, AgentDojo's re-stated on its state."""
    imported, task = tasks
    world, default = worlds
    calls = trace_calls(trace["messages"])
    spec = suite_spec(str(trace.get("suite_name", "")))
    difference = _first_difference(spec, record, calls)
    grade = verify(record, world, task).grade
    verdict = Verdict(
        output=record.final_message,
        pre=DojoState.of(world),
        post=DojoState.of(world, record.final),
        default=DojoState.of(default),
        calls=tuple((name, args if isinstance(args, dict) else {}) for name, args, _ in calls),
    )
    utility, security = dojo_verdicts(imported, verdict, bool(trace.get("injection_task_id")))
    aborted = str(trace.get("error") or "")
    if aborted:
        utility, security = False, True
    return TraceVerdict(
        path=str(path),
        pipeline=str(trace.get("pipeline_name", "")),
        suite=str(trace.get("suite_name", "")),
        user_task=str(trace.get("user_task_id")),
        injection_task=str(trace.get("injection_task_id") or ""),
        calls=len(calls),
        reproduced=not difference,
        difference=difference,
        utility=utility,
        security=security,
        stored_utility=bool(trace.get("utility")),
        stored_security=bool(trace.get("security")),
        passed=None if grade is None else grade.passed,
        failed=[] if grade is None else [v.id for v in grade.verdicts if v.status == "failed"],
        aborted=aborted,
    )


def _arguments(world: World, tool: str, args: Any) -> Any:
    spec = world.contract.tool(tool)
    return executor_arguments(args, None if spec is None else spec.params)


def dojo_verdicts(imported: Imported, verdict: Verdict, attacked: bool) -> tuple[bool, bool]:
    """(utility, security) as AgentDojo stores them for this kind of run."""
    if imported.utility is None:  # an injection task run alone: its security is its utility
        assert imported.security is not None
        return imported.security.check(verdict), True
    utility = imported.utility.check(verdict)
    if not attacked or imported.security is None:
        return utility, True
    return utility, imported.security.check(verdict)


def shown(spec: SuiteSpec, name: str, call: Any) -> str:
    """Our side of one call as AgentDojo would show it: the result, or the error's text."""
    if not call.ok:
        return str(call.error.message if call.error else "")
    return render(name, call.result, spec.record_tools, spec.orders, spec.datetimes)


def _first_difference(
    spec: SuiteSpec, record: Any, calls: Sequence[tuple[str, Any, dict[str, Any]]]
) -> str:
    """The first call whose result differs from the recorded one (empty when none does).

    A call refused on both sides counts as the same, whatever the two error texts say.
    """
    for i, (call, (name, _, recorded)) in enumerate(zip(record.calls, calls, strict=True), 1):
        stored_error = recorded.get("error")
        if stored_error and not call.ok:
            continue
        theirs = stored_error or _text(recorded.get("content"))
        ours = shown(spec, name, call)
        if bool(stored_error) != (not call.ok) or stable(spec, ours) != stable(spec, theirs):
            return f"call {i} {name}: ours {ours[:200]!r}, AgentDojo's {str(theirs)[:200]!r}"
    return ""


def stable(spec: SuiteSpec, text: str) -> str:
    """A shown result as two runs of AgentDojo agree on it: the form results are compared in.

    What AgentDojo stamps from the wall clock (`SuiteSpec.volatile`) is left out, and where a
    result holds a list built from a Python ``set`` (`SuiteSpec.unordered`), its YAML is read
    and written again with every such list sorted.
    """
    for pattern in spec.volatile:
        text = re.sub(pattern, "", text)
    if not spec.unordered or not any(f"{field}:" in text for field in spec.unordered):
        return text
    yaml = _yaml()
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    return str(yaml.safe_dump(_sorted_sets(value, spec.unordered))).strip()


def _sorted_sets(value: Any, fields: frozenset[str]) -> Any:
    """``value`` with the list under each of ``fields``, in every record, sorted (as text)."""
    if isinstance(value, list):
        return [_sorted_sets(v, fields) for v in value]
    if not isinstance(value, dict):
        return value
    out = {k: _sorted_sets(v, fields) for k, v in value.items()}
    for field in fields & out.keys():
        if isinstance(out[field], list):
            out[field] = sorted(map(str, out[field]))
    return out


def trace_files(paths: Iterable[Path]) -> list[Path]:
    """Every ``.json`` file under the given files and folders, sorted."""
    out: list[Path] = []
    for path in paths:
        out += sorted(path.rglob("*.json")) if path.is_dir() else [path]
    return out

"""The coverage gate: oracles pass, mutants fail as predicted, every criterion can fail.

For one world: every task must have at least two oracle routes (genuinely different correct
solutions), each verifying and passing on every seed with a clean harness layer; every hand
mutant must verify and fail exactly the criteria it predicts, of both layers (the agent grade's
and the ``harness.*`` criteria beside it); every automated criterion of every task must be
failed by at least one mutant of that task (a hand mutant, else an automatic one); and the
automatic trace mutants must be killed
(fail some criterion of either layer) at a rate of at least the threshold, each survivor either
killed later or marked equivalent with a written reason. What the oracles, mutants and marks
name must exist: a task id no task has, or a mark that explains no survivor, is a problem.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import attrs
import msgspec

from harness_world.coverage.faults import fault_problems
from harness_world.coverage.mutants import Mutant, load_mutants
from harness_world.coverage.mutation import ALL_OPERATORS, TraceMutant, trace_mutants
from harness_world.engine.paths import builtin_dir
from harness_world.engine.plugins import PluginError
from harness_world.engine.world import World, declared_sizes, load_world, locate_world
from harness_world.evidence.record import Record
from harness_world.grading.task import Task, load_tasks
from harness_world.grading.verify import verify
from harness_world.running.oracles import Oracles, declared_oracles, route_name
from harness_world.running.scripted import Script, record_calls, run_script

__all__ = [
    "CoverageReport",
    "GateAttempt",
    "GateResult",
    "check_world",
    "check_worlds",
    "default_min_routes",
    "default_threshold",
    "gate_worlds",
    "read_equivalents",
]


class GateAttempt(msgspec.Struct, frozen=True, kw_only=True):
    """One scripted attempt of the gate.

    Attributes:
        kind: ``oracle``, ``hand`` (hand-written mutant) or ``auto`` (trace operator).
        id: The oracle's task id, the mutant's id, or the operator id.
        task_id: The task attempted.
        size: The seed it ran on.
        outcome: How execution ended.
        evidence: Whether the record replayed.
        passed: The agent grade (null when not graded).
        failed: Ids of the automated criteria that failed: the agent grade's, then the
            harness layer's (``harness.*``).
        predicted: For hand mutants, the criteria they must fail (of both layers).
        ok: Whether this attempt did what the gate expects of it.
        note: The mistake or the operator's description.
        equivalent: For surviving automatic mutants marked equivalent, the reason.
        route: For oracles, the route's name (the primary route comes first).
    """

    kind: Literal["oracle", "hand", "auto"]
    id: str
    task_id: str
    size: str
    outcome: str
    evidence: str
    passed: bool | None
    failed: list[str]
    predicted: list[str] | None = None
    ok: bool
    note: str = ""
    equivalent: str = ""
    route: str = ""


class CoverageReport(msgspec.Struct, frozen=True, kw_only=True):
    """The gate's result for one world.

    Attributes:
        world: The world checked.
        results: Every attempt.
        uncovered: ``task: criterion`` pairs that no mutant fails (hand or automatic).
        killed_by: For each ``task: criterion``, the hand mutants that fail it.
        auto_killed_by: For each ``task: criterion`` no hand mutant fails, the automatic
            mutants that do.
        auto_killed: Automatic mutants that failed.
        auto_survived: Automatic mutants that passed and are not marked equivalent.
        auto_equivalent: Automatic mutants that passed and are marked equivalent.
        score: auto_killed / (auto_killed + auto_survived) (1.0 when there are none).
        threshold: The minimum score.
        problems: Everything that makes the gate fail, in words.
        ok: True when there are no problems.
        routes: For each task, how many oracle routes pass on every seed.
        min_routes: The minimum number of passing routes per task.
        unchecked: ``task: criterion`` pairs only mutants of seeds not run this time fail
            (``--sizes``), with those mutants: not a problem, and not checked either.
    """

    world: str
    results: list[GateAttempt]
    uncovered: list[str]
    killed_by: dict[str, list[str]]
    auto_killed: int
    auto_survived: int
    auto_equivalent: int
    score: float
    threshold: float
    problems: list[str]
    ok: bool
    routes: dict[str, int] = {}
    min_routes: int = 2
    auto_killed_by: dict[str, list[str]] = {}
    unchecked: dict[str, list[str]] = {}


def _setting(name: str) -> object:
    """``[tool.harness_world] <name>`` from the project's pyproject.toml, if set."""
    pyproject = builtin_dir("worlds").parent / "pyproject.toml"
    if not pyproject.is_file():
        return None
    config = tomllib.loads(pyproject.read_text()).get("tool", {}).get("harness_world", {})
    value: object = config.get(name)
    return value


def default_min_routes() -> int:
    """``[tool.harness_world] oracle_routes_min`` from pyproject.toml, else 2."""
    value = _setting("oracle_routes_min")
    return value if isinstance(value, int) and not isinstance(value, bool) else 2


def default_threshold() -> float:
    """``[tool.harness_world] mutation_score_min`` from the project's pyproject.toml, else 0.95."""
    value = _setting("mutation_score_min")
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return 0.95


def _equivalents(world: str, folder: str | Path | None) -> tuple[Path, dict[tuple[str, str], str]]:
    """``equivalent.toml``'s path and its reasons by (task, mutant id) or (task, ``<op>@*``)."""
    root = Path(folder) if folder is not None else builtin_dir("mutants") / world
    path = root / "equivalent.toml"
    return path, read_equivalents(path) if path.is_file() else {}


def read_equivalents(path: Path) -> dict[tuple[str, str], str]:
    """Reasons by (task, mutant id) or (task, ``<operator>@*``) from an equivalence file.

    Each ``[[equivalent]]`` entry names a ``task`` (``*``: every task) and either one
    ``mutant`` id or a whole ``operator``, with a ``reason``.

    Raises:
        PluginError: for an unreadable file, an entry without a reason or a target, with both
            targets, or with a key of its own (named).
    """
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise PluginError(f"{path}: cannot read: {exc}") from None
    unknown = sorted(set(document) - {"equivalent"})
    if unknown:
        raise PluginError(f"{path}: unknown table {unknown[0]!r} (entries are [[equivalent]])")
    out: dict[tuple[str, str], str] = {}
    for entry in document.get("equivalent", []):
        out.update([_equivalent_entry(path, entry)])
    return out


_ENTRY_KEYS = ("task", "mutant", "operator", "reason")


def _equivalent_entry(path: Path, entry: dict[str, object]) -> tuple[tuple[str, str], str]:
    """One ``[[equivalent]]`` entry as ((task, mutant id or ``<operator>@*``), reason)."""
    unknown = sorted(set(entry) - set(_ENTRY_KEYS))
    if unknown:
        raise PluginError(
            f"{path}: an equivalent entry has no key {unknown[0]!r} "
            f"(its keys: {', '.join(_ENTRY_KEYS)})"
        )
    reason = str(entry.get("reason", "")).strip()
    if "task" not in entry:
        raise PluginError(f"{path}: an equivalent entry needs a `task` (`*`: every task)")
    if not reason:
        raise PluginError(f"{path}: equivalent mutant {entry.get('mutant')!r} needs a reason")
    if ("mutant" in entry) == ("operator" in entry):
        raise PluginError(f"{path}: an equivalent entry needs `mutant` or `operator` (one)")
    if "mutant" in entry:
        return (str(entry["task"]), str(entry["mutant"])), reason
    return (str(entry["task"]), f"{entry['operator']}@*"), reason


def _stale_equivalents(
    marks: dict[tuple[str, str], str], used: set[tuple[str, str]], tasks: set[str]
) -> list[str]:
    """What is wrong with each mark that explained no surviving automatic mutant.

    A mark names a task the gate does not check, an operator there is not, or a mutant that
    was killed or never made: either way it no longer says anything true.
    """
    out = []
    for task, target in sorted(set(marks) - used):
        operator = target.split("@", 1)[0]
        what = f"operator {operator!r}" if target.endswith("@*") else f"mutant {target!r}"
        if task != "*" and task not in tasks:
            why = f"names no task of the world ({task!r})"
        elif operator not in ALL_OPERATORS:
            why = f"names no mutation operator ({operator!r}; known: {', '.join(ALL_OPERATORS)})"
        else:
            why = "explains no surviving automatic mutant"
        out.append(f"stale entry (task {task!r}, {what}): {why}")
    return out


def _judge(record: Record, task: Task, world: World) -> tuple[str, bool | None, list[str]]:
    """Evidence, the agent grade, and the failed criteria of both layers (agent first)."""
    result = verify(record, world=world, task=task)
    if result.grade is None:
        return result.evidence, None, []
    harness = [v.id for v in result.grade.harness if v.status == "failed"]
    return result.evidence, result.grade.passed, result.grade.failed + harness


def _attempt(
    kind: Literal["oracle", "hand", "auto"],
    id_: str,
    task: Task,
    size: str,
    record: Record,
    judged: tuple[str, bool | None, list[str]],
    **fields: Any,
) -> GateAttempt:
    """One attempt of the gate: its record's outcome and how `_judge` judged it, with ``fields``."""
    evidence, passed, failed = judged
    return GateAttempt(
        kind=kind,
        id=id_,
        task_id=task.id,
        size=size,
        outcome=record.outcome.status,
        evidence=evidence,
        passed=passed,
        failed=failed,
        **fields,
    )


def _equivalence(
    equivalents: dict[tuple[str, str], str], task_id: str, trace: TraceMutant
) -> tuple[tuple[str, str], str] | None:
    """The mark (its key and reason) that explains a surviving mutant, if one does."""
    for key in (
        (task_id, trace.id),
        (task_id, f"{trace.operator}@*"),
        ("*", f"{trace.operator}@*"),
    ):
        if key in equivalents:
            return key, equivalents[key]
    return None


@attrs.define(slots=True)
class _Gate:
    """The state of one world's gate while its phases run."""

    tasks: list[Task]
    worlds: dict[str, World]
    progress: Callable[[str], None] | None
    results: list[GateAttempt] = attrs.field(factory=list)
    problems: list[str] = attrs.field(factory=list)
    criteria: dict[str, list[str]] = attrs.field(factory=dict)
    oracle_records: dict[str, Record] = attrs.field(factory=dict)
    killed_by: dict[str, list[str]] = attrs.field(factory=dict)
    survivors: list[str] = attrs.field(factory=list)
    mutant_records: list[tuple[str, Record, bool | None]] = attrs.field(factory=list)
    auto_killed_by: dict[str, list[str]] = attrs.field(factory=dict)
    elsewhere: dict[str, list[str]] = attrs.field(factory=dict)
    routes: dict[str, int] = attrs.field(factory=dict)
    used_marks: set[tuple[str, str]] = attrs.field(factory=set)
    killed: int = 0
    survived: int = 0
    equivalent: int = 0

    @property
    def first_size(self) -> str:
        return next(iter(self.worlds))

    def note(self, what: str) -> None:
        if self.progress is not None:
            self.progress(what)

    def check_names(self, oracles: Oracles) -> None:
        """Every task id the oracles' routes and reference agents name is a task checked."""
        known = {t.id for t in self.tasks}
        named = [("routes", task_id) for task_id in oracles.routes]
        for agent, scripts in oracles.reference_agents.items():
            named += [(f"reference_agents[{agent!r}]", task_id) for task_id in scripts]
        self.problems += [
            f"oracles: ORACLES {where} names no task of the world: {task_id!r}"
            for where, task_id in named
            if task_id not in known
        ]

    def check_oracles(self, routes: Mapping[str, Sequence[Script]], min_routes: int) -> None:
        """Every route of every task verifies and passes on every seed; enough routes pass."""
        for task in self.tasks:
            scripts = routes.get(task.id, [])
            if not scripts:
                self.problems.append(f"{task.id}: no oracle")
            passing = 0
            for index, script in enumerate(scripts):
                name = route_name(script, index)
                results = [
                    self._check_oracle(task, script, size, world, name, primary=index == 0)
                    for size, world in self.worlds.items()
                ]
                passing += all(results)
            self.routes[task.id] = passing
            if scripts and passing < min_routes:
                self.problems.append(
                    f"{task.id}: {passing} passing oracle route(s) of {len(scripts)}; "
                    f"at least {min_routes} required"
                )
            self.note(f"oracle {task.id}: {passing} route(s)")
        self.killed_by = {f"{t}: {c}": [] for t, cs in self.criteria.items() for c in cs}

    def _check_oracle(
        self, task: Task, script: Script, size: str, world: World, name: str, *, primary: bool
    ) -> bool:
        record = run_script(world, task, script)
        judged = evidence, passed, failed = _judge(record, task, world)
        ok = (
            evidence == "verified"
            and passed is True
            and not failed  # a correct route breaks no harness obligation either
            and record.outcome.status == "completed"
        )
        note = record.outcome.reason
        self.results.append(
            _attempt("oracle", task.id, task, size, record, judged, ok=ok, note=note, route=name)
        )
        if not ok:
            why = f"{', '.join(failed) or evidence} {record.outcome.reason}".strip()
            self.problems.append(f"{task.id}: oracle route {name} does not pass on {size} ({why})")
        if primary and size == self.first_size:
            self.oracle_records[task.id] = record
            verdicts = verify(record, world=world, task=task).grade
            automated = [] if verdicts is None else verdicts.verdicts
            self.criteria[task.id] = [v.id for v in automated if v.kind != "prose"]
        return ok

    def check_hand_mutants(self, mutants: list[Mutant]) -> None:
        """Every hand mutant verifies and fails exactly the criteria it predicts."""
        by_id = {t.id: t for t in self.tasks}
        for mutant in mutants:
            task = by_id.get(mutant.task_id)
            if task is None:
                self.problems.append(f"mutant {mutant.id}: unknown task {mutant.task_id!r}")
                continue
            for size in mutant.sizes:
                if size in self.worlds:
                    self._check_hand_mutant(mutant, task, size, self.worlds[size])
            if not set(mutant.sizes) & set(self.worlds):  # its seeds are not run this time
                for criterion in mutant.predicted:
                    key = f"{task.id}: {criterion}"
                    self.elsewhere.setdefault(key, []).append(
                        f"{mutant.id} ({'/'.join(mutant.sizes)})"
                    )
            self.note(f"mutant {mutant.id}")
        # Seed 000: every scheduled fault exposed and recovered by the oracle, and exposed and
        # not recovered by some hand mutant.
        self.problems += fault_problems(self.tasks, self.oracle_records, self.mutant_records)

    def _check_hand_mutant(self, mutant: Mutant, task: Task, size: str, world: World) -> None:
        record = run_script(world, task, mutant.script)
        judged = evidence, passed, failed = _judge(record, task, world)
        if size == self.first_size:
            self.mutant_records.append((task.id, record, passed))  # for the fault clause
        expected = sorted(mutant.predicted)
        matches = evidence == "verified" and bool(failed) and set(failed) == set(expected)
        fields = {"predicted": expected, "ok": matches, "note": mutant.note}
        self.results.append(_attempt("hand", mutant.id, task, size, record, judged, **fields))
        if not matches and passed and not failed:
            self.problems.append(f"mutant {mutant.id} ({size}): passed; predicted {expected}")
        elif not matches:
            self.problems.append(
                f"mutant {mutant.id} ({size}): failed {failed}, predicted {expected} ({evidence})"
            )
        if evidence == "verified":
            for criterion in failed:
                self.killed_by.setdefault(f"{task.id}: {criterion}", []).append(mutant.id)

    def check_automatic(self, equivalents: dict[tuple[str, str], str]) -> None:
        """The automatic trace mutants of every oracle are killed or marked equivalent."""
        world = self.worlds[self.first_size]
        for task in self.tasks:
            oracle = self.oracle_records.get(task.id)
            if oracle is None:
                continue
            for trace in trace_mutants(oracle, task, world):
                self._check_trace(trace, task, world, oracle, equivalents)
            self.note(f"automatic mutants of {task.id}")

    def _check_trace(
        self,
        trace: TraceMutant,
        task: Task,
        world: World,
        oracle: Record,
        equivalents: dict[tuple[str, str], str],
    ) -> None:
        record = record_calls(
            world, task, trace.calls, final_message=oracle.final_message, usage=oracle.usage
        )
        judged = evidence, passed, failed = _judge(record, task, world)
        mark = _equivalence(equivalents, task.id, trace)
        reason = "" if mark is None else mark[1]
        killed = not passed or bool(failed)
        for criterion in failed if evidence == "verified" else []:
            self.auto_killed_by.setdefault(f"{task.id}: {criterion}", []).append(trace.id)
        if killed:
            self.killed += 1
        elif mark is not None:
            self.equivalent += 1
            self.used_marks.add(mark[0])
        else:
            self.survived += 1
            self.survivors.append(f"{task.id}: {trace.id}")
        fields = {"ok": killed or bool(reason), "note": trace.description, "equivalent": reason}
        self.results.append(
            _attempt("auto", trace.id, task, self.first_size, record, judged, **fields)
        )

    def uncovered(self) -> list[str]:
        """The ``task: criterion`` pairs no mutant fails, hand or automatic.

        Invariant 9 asks that every automated criterion be failed by some mutant; a criterion
        every task is graded on (``trace.grounded_writes``) is shown to fail by the automatic
        operators where no hand mutant was written for it.
        """
        return sorted(
            k
            for k, v in self.killed_by.items()
            if not v and not self.auto_killed_by.get(k) and k not in self.elsewhere
        )

    def unchecked(self) -> dict[str, list[str]]:
        """``task: criterion`` pairs only mutants of seeds not run this time fail, with them.

        A listing one page holds on the small seed cannot show an unfollowed page: such a
        criterion's mutants run on the large seed, and a gate run without it says so instead
        of calling the criterion uncovered.
        """
        return {
            k: self.elsewhere[k]
            for k, v in self.killed_by.items()
            if not v and not self.auto_killed_by.get(k) and k in self.elsewhere
        }

    def report(self, world_name: str, threshold: float, min_routes: int) -> CoverageReport:
        killed, survived = self.killed, self.survived
        score = killed / (killed + survived) if killed + survived else 1.0
        uncovered = self.uncovered()
        problems = [f"criterion never failed by a mutant: {k}" for k in uncovered]
        problems += self.problems
        if score < threshold:
            problems.append(
                f"automatic mutation score {score:.3f} is below the threshold {threshold:.3f}"
            )
        problems += [
            f"surviving automatic mutant (kill it or mark it equivalent): {s}"
            for s in self.survivors
        ]
        return CoverageReport(
            world=world_name,
            results=self.results,
            uncovered=uncovered,
            killed_by=self.killed_by,
            auto_killed_by={
                k: self.auto_killed_by[k]
                for k, v in self.killed_by.items()
                if not v and self.auto_killed_by.get(k)
            },
            auto_killed=killed,
            auto_survived=survived,
            auto_equivalent=self.equivalent,
            score=score,
            threshold=threshold,
            problems=problems,
            ok=not problems,
            routes=dict(self.routes),
            min_routes=min_routes,
            unchecked=self.unchecked(),
        )


def check_world(
    world: str | Path,
    *,
    sizes: tuple[str, ...] | None = None,
    tasks_folder: str | Path | None = None,
    oracles_folder: str | Path | None = None,
    mutants_folder: str | Path | None = None,
    threshold: float | None = None,
    automatic: bool = True,
    progress: Callable[[str], None] | None = None,
    min_routes: int | None = None,
) -> CoverageReport:
    """Run every oracle and mutant of a world through record, replay and grade.

    Phases: every oracle route on every seed (at least ``min_routes`` passing per task,
    default `default_min_routes`); hand mutants against their predictions; automatic trace
    mutants of each primary oracle (with ``automatic``) against the score threshold.

    Args:
        world: A built-in world's name or a world folder; its tasks, oracles and mutants are
            where its `WorldSpec` says unless a folder below is given.
        sizes: The seeds to run on (default: ``small`` and ``large`` where the world
            declares them, else every size it declares).
        tasks_folder: Its tasks instead.
        oracles_folder: The folder of its ``oracles.py`` instead.
        mutants_folder: The folder of its ``mutants.py`` and ``equivalent.toml`` instead.
        threshold: The automatic mutation score required (default: pyproject's setting).
        automatic: Whether to run the automatic trace mutants.
        progress: Called with a line of text per phase.
        min_routes: Passing oracle routes required per task.

    Raises:
        WorldError: for an unknown world or a size it does not declare.
    """
    place = locate_world(world)
    declared = declared_sizes(place.folder, place.spec)
    if sizes is None:
        usual = tuple(s for s in ("small", "large") if s in declared)
        sizes = usual or declared
    gate = _Gate(
        tasks=load_tasks(world=place.name, folder=tasks_folder or place.tasks),
        worlds={size: load_world(place.folder, size=size) for size in sizes},
        progress=progress,
    )
    routes_min = default_min_routes() if min_routes is None else min_routes
    name = place.name
    oracles, _ = declared_oracles(name, oracles_folder or place.oracles)
    gate.check_names(oracles)
    gate.check_oracles(oracles.routes, routes_min)
    gate.check_hand_mutants(load_mutants(name, mutants_folder or place.mutants))
    if automatic:
        path, marks = _equivalents(name, mutants_folder or place.mutants)
        gate.check_automatic(marks)
        stale = _stale_equivalents(marks, gate.used_marks, {t.id for t in gate.tasks})
        gate.problems += [f"{path}: {problem}" for problem in stale]
    return gate.report(name, default_threshold() if threshold is None else threshold, routes_min)


class GateResult(msgspec.Struct, frozen=True, kw_only=True):
    """The gate over several worlds.

    Attributes:
        ok: True when every world's report is.
        worlds: One report per world, in the order checked.
    """

    ok: bool
    worlds: list[CoverageReport]


def gate_worlds() -> list[str]:
    """The built-in worlds the gate checks by default: every one with a task file."""
    root = builtin_dir("tasks")
    return sorted(p.name for p in root.iterdir() if p.is_dir() and any(p.glob("*.toml")))


def check_worlds(
    worlds: Sequence[str | Path] | None = None,
    *,
    sizes: tuple[str, ...] | None = None,
    tasks_folder: str | Path | None = None,
    threshold: float | None = None,
    automatic: bool = True,
    min_routes: int | None = None,
    started: Callable[[str], None] | None = None,
) -> GateResult:
    """Run the gate (`check_world`) on each world, by default on every built-in one with tasks.

    Args:
        worlds: Built-in names or world folders (None: `gate_worlds`).
        sizes: The seeds to run on (see `check_world`).
        tasks_folder: A task folder instead of the world's own (one world only, sensibly).
        threshold: The automatic mutation score required (default: pyproject's setting).
        automatic: Whether to run the automatic trace mutants.
        min_routes: Passing oracle routes required per task.
        started: Called with each world as written before it is checked.

    Raises:
        WorldError: for an unknown world or a size it does not declare.
    """
    reports: list[CoverageReport] = []
    for world in gate_worlds() if worlds is None else worlds:
        if started is not None:
            started(str(world))
        report = check_world(
            world,
            sizes=sizes,
            tasks_folder=tasks_folder,
            threshold=threshold,
            automatic=automatic,
            min_routes=min_routes,
        )
        reports.append(report)
    return GateResult(ok=all(r.ok for r in reports), worlds=reports)

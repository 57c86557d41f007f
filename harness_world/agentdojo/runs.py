"""AgentDojo's traces regraded into run directories, and their condition figures both ways.

``agentdojo regrade --out DIR`` writes one ordinary run directory per pipeline and suite
(``DIR/<pipeline>-<suite>/``): one slot per trace, its record the trace's tool calls replayed
in a fresh attempt, bound to the run's revision. Beside each run it writes the condition file
the run's start states are rebuilt from (``DIR/<pipeline>-<suite>.json``: each task with the
injections of its trace), so ``verify``, ``report`` and ``conditions`` read the run with
``--world agentdojo_<suite> --world-data DATA --world-tasks DIR/<pipeline>-<suite>.json``,
through the one run reader, never trusting a path from the run itself.

`dojo_figures` counts AgentDojo's verdicts over the same runs (utility of user tasks without
attack, utility under attack, targeted attack success: the published table's three columns,
with Wilson intervals); `ours` reads the run directory back with `conditions_report` (benign
utility, utility under attack and attack success by our grade). `published_rows` reads the
published table's rows for a pipeline from the data folder's ``results-table.html``.
`write_records` is the one writer of such a run directory (``agentdojo run`` uses it too).
"""

from __future__ import annotations

import html
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path

import msgspec

from harness_world.agentdojo.data import DojoDataError
from harness_world.agentdojo.importer import Condition_, world_name
from harness_world.agentdojo.regrade import Regrader, Replayed, TraceVerdict, read_trace
from harness_world.analysis.conditions import ConditionsReport, Rate, conditions_report, rate
from harness_world.engine.world import World
from harness_world.evidence.binding import save_bound
from harness_world.evidence.record import Record
from harness_world.grading.task import Task
from harness_world.running.reader import RunReader, refresh_counts
from harness_world.running.run import open_external_run
from harness_world.running.rundir import record_path


class DojoFigures(msgspec.Struct, frozen=True, kw_only=True):
    """AgentDojo's three figures over one run's traces, from its verdicts (re-stated).

    Attributes:
        utility: Utility of the user tasks run without attack.
        utility_under_attack: Utility of the user tasks run under an injection task.
        attack_success: Security verdicts that are true (the attacker's goal reached) under
            attack.
    """

    utility: Rate
    utility_under_attack: Rate
    attack_success: Rate


class RegradeRun(msgspec.Struct, frozen=True, kw_only=True):
    """One run directory written from the traces of one pipeline and suite.

    Attributes:
        label: The pipeline's folder name (the model).
        suite: The suite.
        run: The run directory.
        conditions: The condition file beside it (``--world-tasks``).
        verdicts: Every trace regraded, in the order written.
        dojo: AgentDojo's figures over these traces (its verdicts re-stated).
        stored: The same figures from the traces' stored verdicts.
        ours: Our condition figures, read back from the run directory.
    """

    label: str
    suite: str
    run: str
    conditions: str
    verdicts: list[TraceVerdict]
    dojo: DojoFigures
    stored: DojoFigures
    ours: ConditionsReport


def _label(path: Path, trace: dict[str, object]) -> str:
    """The pipeline's folder in AgentDojo's layout (``PIPELINE/SUITE/TASK/ATTACK/INJ.json``)."""
    parents = path.resolve().parents
    if len(parents) > 3 and parents[2].name == trace.get("suite_name"):
        return parents[3].name
    return re.sub(r"[^A-Za-z0-9._-]+", "_", str(trace.get("pipeline_name") or "pipeline"))


def group_traces(paths: Sequence[Path]) -> dict[tuple[str, str], list[Path]]:
    """Trace files by (pipeline folder, suite), each group in path order.

    Raises:
        DojoDataError: for a file that is not a trace.
    """
    groups: dict[tuple[str, str], list[Path]] = defaultdict(list)
    for path in sorted(paths):
        trace = read_trace(path)
        groups[(_label(path, trace), str(trace.get("suite_name", "")))].append(path)
    return dict(groups)


class Judged(msgspec.Struct, frozen=True, kw_only=True):
    """One run of a task with AgentDojo's two verdicts.

    Attributes:
        user_task: The user task (or the injection task run alone).
        injection_task: The injection task it ran under (empty without attack).
        utility: AgentDojo's utility verdict.
        security: AgentDojo's security verdict (True: the attacker's goal reached).
    """

    user_task: str
    injection_task: str
    utility: bool
    security: bool


def judged(verdict: TraceVerdict, *, stored: bool = False) -> Judged:
    """A regraded trace's verdicts: AgentDojo's re-stated ones, or the ones it stored."""
    return Judged(
        user_task=verdict.user_task,
        injection_task=verdict.injection_task,
        utility=verdict.stored_utility if stored else verdict.utility,
        security=verdict.stored_security if stored else verdict.security,
    )


def dojo_figures(runs: Sequence[Judged]) -> DojoFigures:
    """The published table's three figures over ``runs``."""
    users = [v for v in runs if v.user_task.startswith("user_task") and not v.injection_task]
    attacks = [v for v in runs if v.injection_task]
    return DojoFigures(
        utility=rate(sum(v.utility for v in users), len(users)),
        utility_under_attack=rate(sum(v.utility for v in attacks), len(attacks)),
        attack_success=rate(sum(v.security for v in attacks), len(attacks)),
    )


def write_run(regrader: Regrader, paths: Sequence[Path], out: Path, label: str) -> RegradeRun:
    """Replay one group's traces into ``out/<label>-<suite>/`` and read it back.

    Raises:
        DojoDataError: for unreadable traces, or traces of more than one suite.
        harness_world.RevisionMismatch: when the run directory holds another run.
    """
    replayed = [regrader.replay(p) for p in paths]
    suites = {r.verdict.suite for r in replayed}
    if len(suites) != 1:
        raise DojoDataError(f"one run holds one suite's traces, not {sorted(suites)}")
    suite = suites.pop()
    tasks = _one_slot_each([r.task for r in replayed])
    worlds = {r.world.name: r.world for r in replayed}
    run = out / f"{label}-{suite}"

    def records(revision: str) -> Iterator[Record]:
        for item in replayed:
            yield regrader.replay(Path(item.verdict.path), revision).record

    write_records(run, worlds, tasks, f"agentdojo regrade {label}", records)
    conditions = out / f"{label}-{suite}.json"
    conditions.write_bytes(msgspec.json.encode(_condition(regrader.version, replayed)))
    verdicts = [r.verdict for r in replayed]
    reader = RunReader.of(tasks, worlds=worlds)
    return RegradeRun(
        label=label,
        suite=suite,
        run=str(run),
        conditions=str(conditions),
        verdicts=verdicts,
        dojo=dojo_figures([judged(v) for v in verdicts]),
        stored=dojo_figures([judged(v, stored=True) for v in verdicts]),
        ours=conditions_report(run, {t.id: t for t in tasks}, reader=reader),
    )


def write_records(
    run: Path,
    worlds: Mapping[str, World],
    tasks: Sequence[Task],
    label: str,
    records: Callable[[str], Iterable[Record]],
) -> None:
    """One ordinary run directory: one slot per task, each record bound to the run's revision.

    ``records`` makes the records for a revision (a record carries the revision it was made
    under, so they are made once the run directory has one).

    Raises:
        harness_world.RevisionMismatch: when the run directory holds another run.
    """
    revision = open_external_run(
        run,
        worlds=worlds,
        tasks=tasks,
        kind="agentdojo",
        label=label,
        samples=1,
        seed=0,
        overrides={},
    ).id
    for record in records(revision):
        path = record_path(run, record.task_id, 0)
        path.parent.mkdir(parents=True, exist_ok=True)
        save_bound(run, record, path)
    refresh_counts(run, tasks, worlds=worlds)


def _one_slot_each(tasks: Sequence[Task]) -> list[Task]:
    """The tasks, one each (a run directory has one slot per task and sample).

    Raises:
        DojoDataError: when two traces of the group are runs of the same task.
    """
    seen: dict[str, Task] = {}
    for task in tasks:
        if task.id in seen:
            raise DojoDataError(f"two traces of {task.id} in one pipeline's folder")
        seen[task.id] = task
    return list(seen.values())


def _condition(version: str, replayed: Sequence[Replayed]) -> Condition_:
    return Condition_(version=version, starts={r.task.id: r.injections for r in replayed})


def write_runs(folder: Path, paths: Sequence[Path], out: Path, version: str) -> list[RegradeRun]:
    """Every (pipeline, suite) group of traces as a run directory under ``out``.

    Raises:
        DojoDataError: for unreadable traces or data.
    """
    regrader = Regrader(folder, version, named_starts=True)
    groups = group_traces(paths)
    return [write_run(regrader, group, out, label) for (label, _), group in sorted(groups.items())]


class PublishedRow(msgspec.Struct, frozen=True, kw_only=True):
    """One row of AgentDojo's published results table.

    Attributes:
        model: The model (the pipeline's folder name without a defense).
        defense: The defense (``None`` for none).
        attack: The attack.
        utility: Utility, as printed (``88.66%``).
        utility_under_attack: Utility under attack, as printed.
        attack_success: Targeted attack success rate, as printed.
    """

    model: str
    defense: str
    attack: str
    utility: str
    utility_under_attack: str
    attack_success: str


def published_rows(folder: Path) -> list[PublishedRow]:
    """The rows of ``results-table.html`` in the data folder (empty when it has none)."""
    path = folder / "results-table.html"
    if not path.is_file():
        return []
    text = path.read_text(encoding="utf-8", errors="replace")
    rows = []
    for body in re.findall(r"<tr>(.*?)</tr>", text, flags=re.S):
        found = re.findall(r"<td>(.*?)</td>", body, flags=re.S)
        cells = [html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in found]
        if len(cells) >= 7:
            rows.append(
                PublishedRow(
                    model=cells[1],
                    defense=cells[2],
                    attack=cells[3],
                    utility=cells[4],
                    utility_under_attack=cells[5],
                    attack_success=cells[6],
                )
            )
    return rows


def cell(r: Rate) -> str:
    """A rate as ``count/n percent [low, high]``."""
    if r.rate is None or r.low is None or r.high is None:
        return f"{r.count}/{r.n}"
    return f"{r.count}/{r.n} {100 * r.rate:.2f}% [{100 * r.low:.1f}, {100 * r.high:.1f}]"


def render_runs(runs: Sequence[RegradeRun]) -> str:
    """Per run: our condition figures and AgentDojo's (the published rows: `published`)."""
    lines: list[str] = []
    for r in runs:
        same = "equal" if r.dojo == r.stored else "DIFFERENT"
        lines += [
            f"{r.label} {r.suite}: {len(r.verdicts)} traces -> {r.run} "
            f"(--world {world_name(r.suite)} --world-tasks {r.conditions})",
            f"  ours (conditions): benign utility {cell(r.ours.benign_utility)}, utility "
            f"under attack {cell(r.ours.utility_under_attack)}, attack success "
            f"{cell(r.ours.attack_success)}",
            f"  AgentDojo's verdicts ({same} to the stored ones): utility {cell(r.dojo.utility)}"
            f", utility under attack {cell(r.dojo.utility_under_attack)}, targeted ASR "
            f"{cell(r.dojo.attack_success)}",
        ]
    return "\n".join(lines)

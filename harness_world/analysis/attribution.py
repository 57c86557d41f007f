"""Attribution: every attempt that did not pass, assigned to agent, world, task text or harness.

"Attribute before you fix": a failure caused by a missing tool is not fixed by a better prompt.
Attribution is automatic where the evidence decides it, and otherwise a person's reviewed label,
kept in ``attributions.json`` beside the run's manifest. Neither ever changes a grade.

Automatic rules, first match wins:

1. ``harness``: the record is lost or does not replay (ungraded): the evidence itself failed.
2. ``world``: a call returned an ``internal`` error (a defect in the world's tool), or the
   task's reference solution fails on this revision's world (a missing or broken capability).
3. ``harness``: the attempt ended as ``error`` or ``interrupted`` (a lost response, a crash),
   or as ``turn_limit``/``budget_limit`` although its recorded consumption reaches no budget
   (budget mis-accounting).
4. ``agent``: the tools worked and criteria failed.

``task_text`` (the instruction asked for something the tools cannot express) is never decided
automatically: only a reviewed label names it. A reviewed label overrides the automatic source,
and both are reported with how many of each were reviewed.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Literal

import attrs
import msgspec

from harness_world.engine.world import World
from harness_world.errors import HarnessWorldError
from harness_world.evidence.record import Record
from harness_world.evidence.runfiles import RunFileError, read_run_file
from harness_world.grading.task import Task
from harness_world.grading.verifier import COUNTED, Measure, SlotResult, VerifiedRecord
from harness_world.grading.verify import verify
from harness_world.running.attempt import AttemptLimits
from harness_world.running.oracles import load_oracles
from harness_world.running.rundir import RunScan, load_manifest, write_json
from harness_world.running.scripted import Script, run_script

__all__ = [
    "ATTRIBUTIONS",
    "FAILURES",
    "SOURCES",
    "Attribution",
    "AttributionError",
    "AttributionReport",
    "FailureFacts",
    "FailureObserver",
    "Kept",
    "Label",
    "LabelFile",
    "OracleCheck",
    "Source",
    "add_label",
    "attribute_scan",
    "automatic_source",
    "failure_facts",
    "load_labels",
    "oracle_check",
]

ATTRIBUTIONS = "attributions.json"
"""The reviewed labels' file, beside ``manifest.json`` in a run directory."""

LABELS_BYTES = 64 * 1024 * 1024
"""The largest labels' file read."""

Source = Literal["agent", "world", "task_text", "harness"]
SOURCES: tuple[Source, ...] = ("agent", "world", "task_text", "harness")


class AttributionError(HarnessWorldError, ValueError):
    """A label names no run, no scheduled attempt, or an unknown source."""


class Label(msgspec.Struct, frozen=True, kw_only=True):
    """A person's reviewed attribution of one attempt.

    Attributes:
        task_id: The task.
        sample: The sample index.
        source: ``agent``, ``world``, ``task_text`` or ``harness``.
        why: The reviewer's reason, in words (the evidence they relied on).
        at: When the label was written (ISO-8601 UTC).
    """

    task_id: str
    sample: int
    source: Source
    why: str
    at: str = ""


class LabelFile(msgspec.Struct, frozen=True, kw_only=True):
    """``attributions.json``: reviewed labels, the latest per attempt winning.

    Attributes:
        format: File format version.
        labels: Every label written, oldest first (kept: relabelling leaves a history).
    """

    format: int = 1
    labels: list[Label] = []


class Attribution(msgspec.Struct, frozen=True, kw_only=True):
    """Where one attempt's failure comes from.

    Attributes:
        task_id: The task.
        sample: The sample index.
        source: ``agent``, ``world``, ``task_text`` or ``harness``.
        evidence: What decided it, in words (the rule and the calls, outcome or criteria).
        reviewed: True when a person's label decided it.
        automatic: The automatic source, kept beside a reviewed label.
    """

    task_id: str
    sample: int
    source: Source
    evidence: str
    reviewed: bool = False
    automatic: Source


class AttributionReport(msgspec.Struct, frozen=True, kw_only=True):
    """Attributions of every attempt of a run that did not pass.

    Attributes:
        attributions: One per attempt that executed and did not pass, in slot order.
        counts: Per source, ``{"reviewed": n, "automatic": n}`` (every source present).
        unsigned_labels: Reviewed labels not taken because the run was read with a trusted
            key: labels carry no signature, so such a reader cannot vouch for them.
    """

    attributions: list[Attribution]
    counts: dict[str, dict[str, int]]
    unsigned_labels: int = 0


def _labels_path(out: str | Path) -> Path:
    return Path(out) / ATTRIBUTIONS


def load_labels(out: str | Path) -> dict[tuple[str, int], Label]:
    """The latest reviewed label per (task, sample) of a run directory (empty without a file).

    The file is read as the run's other side files are: a regular file inside the run, of at
    most `LABELS_BYTES` (a FIFO, a device or a link out of the run is refused, not waited on).

    Raises:
        AttributionError: when the labels' file exists and is not valid, or cannot be read.
    """
    path = _labels_path(out)
    try:
        raw = read_run_file(Path(out), ATTRIBUTIONS, LABELS_BYTES)
    except RunFileError as exc:
        raise AttributionError(str(exc)) from None
    if raw is None:
        return {}
    try:
        data = msgspec.json.decode(raw, type=LabelFile)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
        raise AttributionError(f"{path}: invalid attributions file: {exc}") from None
    return {(label.task_id, label.sample): label for label in data.labels}


def add_label(out: str | Path, task_id: str, sample: int, source: str, why: str) -> Label:
    """Write a reviewed label for one scheduled attempt of a run (grades are never touched).

    Raises:
        AttributionError: unknown source, empty reason, a task or sample the run did not
            schedule, or an invalid existing labels' file.
        FileNotFoundError: when ``out`` is not a run directory.
    """
    if source not in SOURCES:
        raise AttributionError(f"unknown source {source!r}: use one of {', '.join(SOURCES)}")
    if not why.strip():
        raise AttributionError("a reviewed label needs a reason (--why)")
    manifest = load_manifest(out)
    if task_id not in manifest.tasks:
        raise AttributionError(f"{out}: the run has no task {task_id!r}")
    if not 0 <= sample < manifest.samples:
        raise AttributionError(
            f"{out}: sample {sample} is not scheduled (samples 0..{manifest.samples - 1})"
        )
    load_labels(out)  # refuse to append to a broken file
    path = _labels_path(out)
    existing = (
        msgspec.json.decode(path.read_bytes(), type=LabelFile) if path.is_file() else LabelFile()
    )
    at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    label = Label(task_id=task_id, sample=sample, source=source, why=why.strip(), at=at)
    write_json(path, LabelFile(labels=[*existing.labels, label]))
    return label


class FailureFacts(msgspec.Struct, frozen=True, kw_only=True):
    """What attribution reads of a verified record that did not pass (not the record itself).

    Attributes:
        world: The name of the world it replayed on.
        size: That world's size.
        status: Its outcome.
        reason: Its outcome's reason.
        internal: Sequence numbers of calls that returned an ``internal`` error.
        calls: Calls it made.
        errors: Calls that returned a typed error.
        turns: Model turns.
        input_tokens: Prompt tokens.
        requests: Provider requests.
        cost: Cost, uncertain exposure included.
        latency_s: Its wall-clock duration (the clock a wall-time budget read).
    """

    world: str
    size: str
    status: str
    reason: str
    internal: list[int]
    calls: int
    errors: int
    turns: int
    input_tokens: int
    requests: int
    cost: float
    latency_s: float

    @classmethod
    def of(cls, record: Record, world: World | None = None) -> FailureFacts:
        """The facts of ``record`` (replayed on ``world``; default: the world it names)."""
        usage = record.usage
        return cls(
            world=world.name if world is not None else record.world.name,
            size=world.size if world is not None else record.world.size,
            status=record.outcome.status,
            reason=record.outcome.reason,
            internal=[
                c.seq for c in record.calls if c.error is not None and c.error.kind == "internal"
            ],
            calls=len(record.calls),
            errors=sum(not c.ok for c in record.calls),
            turns=usage.turns,
            input_tokens=usage.input_tokens,
            requests=usage.requests,
            cost=usage.cost + usage.uncertain_cost,
            latency_s=record.context.latency_s,
        )


def failure_facts(verified: VerifiedRecord) -> FailureFacts | None:
    """The `FailureFacts` of a verified record unless it is a counted attempt that passed."""
    record, grade = verified.record, verified.verification.grade
    if grade is not None and grade.passed and record.outcome.status in COUNTED:
        return None
    return FailureFacts.of(record, verified.world)


FAILURES = Measure("failures", failure_facts, FailureFacts)
"""What attribution reads of each verified final record that did not pass, cached with its
judgement."""


OracleCheck = Callable[[Task, World], str]
"""Returns why the task's reference solution fails on ``world`` (empty when it passes)."""


def oracle_check(oracles: Mapping[str, Script] | None = None) -> OracleCheck:
    """A cached check that runs a task's reference solution on a world and grades it.

    Args:
        oracles: Scripts by task id (default: the oracles of the task's world, when it has any).
    """
    cache: dict[tuple[str, str], str] = {}

    def check(task: Task, world: World) -> str:
        key = (task.id, world.hash)
        if key not in cache:
            cache[key] = _run_oracle(task, world, oracles)
        return cache[key]

    return check


def _run_oracle(task: Task, world: World, oracles: Mapping[str, Script] | None) -> str:
    scripts = oracles
    if scripts is None:
        try:
            scripts = load_oracles(world.name)
        except (HarnessWorldError, OSError):
            return ""
    script = scripts.get(task.id)
    if script is None:
        return ""  # no reference solution: undecidable here
    record = run_script(world, task, script, limits=AttemptLimits())
    if record.outcome.status != "completed":
        return f"the reference solution ends {record.outcome.status}: {record.outcome.reason}"
    grade = verify(record, world, task).grade
    if grade is not None and not grade.passed:
        return "the reference solution fails " + ", ".join(grade.failed)
    return ""


def _consumption_reaches(facts: FailureFacts, limits: AttemptLimits) -> bool:
    pairs = [
        (facts.calls, limits.tool_calls),
        (facts.turns, limits.turns),
        (facts.input_tokens, limits.context_tokens),
        (facts.requests, limits.requests),
        (facts.cost, limits.cost),
        (facts.latency_s, limits.wall_time),  # the clock the budget read
    ]
    return any(limit is not None and used >= limit for used, limit in pairs)


def automatic_source(
    slot: SlotResult,
    record: Record | FailureFacts | None,
    task: Task | None,
    world: World | None,
    oracle: OracleCheck,
    limits: AttemptLimits | None = None,
) -> tuple[Source, str]:
    """The automatic source of one attempt that did not pass, and the evidence for it.

    ``record`` is the verified record, or what a `FailureObserver` kept of it.
    """
    if record is None or slot.evidence == "lost":
        return "harness", f"record lost: {slot.reason or 'unreadable'}"
    if slot.evidence == "ungraded":
        return "harness", f"record does not replay: {slot.reason}"
    facts = record if isinstance(record, FailureFacts) else FailureFacts.of(record)
    if facts.internal:
        return "world", f"internal tool error at call(s) {facts.internal[:6]}"
    if task is not None and world is not None:
        broken = oracle(task, world)
        if broken:
            return "world", f"{broken} on world {world.name} ({world.hash[:12]})"
    status = facts.status
    if status in ("error", "interrupted"):
        return "harness", f"ended {status}: {facts.reason}"
    if status in ("turn_limit", "budget_limit") and task is not None:
        limits = limits or AttemptLimits.from_task(task.budgets)
        if not _consumption_reaches(facts, limits):
            return "harness", f"ended {status} ({facts.reason}) below every budget"
    failed = ", ".join(f.split(":", 1)[0] for f in slot.failed) or status
    return "agent", f"tools worked ({facts.calls} calls, {facts.errors} typed errors); {failed}"


def _did_not_pass(slot: SlotResult) -> bool:
    if slot.evidence == "missing":
        return False  # never executed: not an attempt, nothing to attribute
    if slot.counted:
        return slot.passed is False and not slot.pending  # pending review is no failure
    return True


Kept = Mapping[tuple[str, int], tuple[FailureFacts, World | None]]
"""What a `FailureObserver` kept, by (task id, sample): each record's facts and its world."""


@attrs.define(slots=True)
class FailureObserver:
    """Keeps what attribution reads of each verified record that did not pass, with its world.

    Attribution reads them instead of opening those records again; a record that did not
    verify is attributed from its slot's evidence alone.

    Attributes:
        world_of: Loads a world by name and size within the reader's trust root (its
            verifier's `world`), for the facts taken from a cached judgement; None: no world.
    """

    world_of: Callable[[str, str], World] | None = None
    kept: dict[tuple[str, int], tuple[FailureFacts, World | None]] = attrs.field(factory=dict)

    @property
    def measure(self) -> Measure:
        """`FAILURES`."""
        return FAILURES

    def take(self, path: Path, slot: tuple[str, int], figure: FailureFacts) -> None:
        """One slot's facts, with the world they replayed on."""
        world = None
        if self.world_of is not None:
            with contextlib.suppress(HarnessWorldError, OSError):
                world = self.world_of(figure.world, figure.size)
        self.kept[slot] = (figure, world)

    def __call__(self, path: Path, verified: VerifiedRecord) -> None:
        """Keep one verified record's facts unless it is a counted attempt that passed."""
        facts = failure_facts(verified)
        if facts is not None:
            record = verified.record
            self.kept[(record.task_id, record.sample)] = (facts, verified.world)


def attribute_scan(
    scan: RunScan,
    tasks: Iterable[Task],
    kept: Kept,
    *,
    oracles: Mapping[str, Script] | None = None,
    worlds: Mapping[str, World] | None = None,
) -> AttributionReport:
    """Attribute every executed attempt of a judged run that did not pass.

    Args:
        scan: The run, judged once by its reader.
        tasks: The tasks it was graded by.
        kept: What a `FailureObserver` kept of the verified records that did not pass
            during that read, with their worlds.
        oracles: Reference solutions by task id (default: each world's own oracles).
        worlds: Worlds by name the reference solutions run on instead of the worlds the
            records replayed on (to ask: would the task be solvable there?).

    Raises:
        AttributionError: when the run's labels' file is invalid or cannot be read.
    """
    by_id = {t.id: t for t in tasks}
    labels = load_labels(scan.out)
    unsigned = 0
    if scan.trusted:  # anyone may write the labels' file beside a signed run
        unsigned, labels = len(labels), {}
    check = oracle_check(oracles)
    out: list[Attribution] = []
    for slot in scan.slots:
        if not _did_not_pass(slot):
            continue
        record, world = kept.get((slot.task_id, slot.sample), (None, None))
        if record is not None and worlds is not None:
            world = worlds.get(record.world, world)
        task = by_id.get(slot.task_id)
        limits = AttemptLimits.from_task(task.budgets, **scan.manifest.limits) if task else None
        source, evidence = automatic_source(slot, record, task, world, check, limits)
        label = labels.get((slot.task_id, slot.sample))
        out.append(
            Attribution(
                task_id=slot.task_id,
                sample=slot.sample,
                source=label.source if label else source,
                evidence=f"reviewed: {label.why} (automatic: {evidence})" if label else evidence,
                reviewed=label is not None,
                automatic=source,
            )
        )
    counts: dict[str, dict[str, int]] = {s: {"reviewed": 0, "automatic": 0} for s in SOURCES}
    for a in out:
        counts[a.source]["reviewed" if a.reviewed else "automatic"] += 1
    return AttributionReport(attributions=out, counts=counts, unsigned_labels=unsigned)

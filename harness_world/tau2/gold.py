"""Tasks derived from a reference solution, checked beside the reference's own database verdict.

Benchmarks such as τ²-bench ship, per task, a gold list of tool calls and grade the database part
of an attempt by replaying that list on a fresh copy of the data and comparing a hash of the
WHOLE database with the attempt's. The generic pieces for importing such tasks live here (the
benchmark-specific reading of files lives with its world):

* `exact_effects`: required effects from a gold diff: each row the gold changes must end exactly
  like the gold's (kind ``row``), deleted rows deleted, created rows created; nothing else is
  allowed. `read_targets`: target sets of the rows a call log returned.
* `DatabaseHasher`: the reference verdict, computed the reference's way: materialise the whole
  database (start rows overlaid with an attempt's final rows) as canonical JSON and hash it.
* `check_gold`: the gold as an oracle (record, replay, grade), the automatic trace mutants, a
  do-nothing attempt, and the reference verdict beside ours on each.
* `regrade`: replay an externally recorded run's tool calls and grade it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import attrs
import msgspec

from harness_world.coverage.mutation import ALL_OPERATORS, TraceMutant, trace_mutants
from harness_world.engine.calls import FinalRow, WriteImage
from harness_world.engine.canonical import to_json
from harness_world.engine.world import Key, World
from harness_world.evidence.record import Outcome, Record, UserTurn
from harness_world.grading.grade import CriterionVerdict, Grade
from harness_world.grading.rows import net_changes, returned_rows
from harness_world.grading.task import Condition, Requirement, Target, Task
from harness_world.grading.verify import verify
from harness_world.running.attempt import Attempt, AttemptLimits
from harness_world.running.scripted import record_calls
from harness_world.tau2.arguments import ArgumentMode, coerce_call
from harness_world.tau2.faithful import Tau2Hasher, overlaid_hash, overlaid_rows

__all__ = [
    "DatabaseHasher",
    "DoNothing",
    "ExternalRun",
    "GoldCall",
    "GoldCallError",
    "GoldReport",
    "ImportedTask",
    "MutantCheck",
    "RegradeResult",
    "check_gold",
    "equivalence_reason",
    "exact_effects",
    "read_targets",
    "regrade",
    "run_gold",
]

STATE_CRITERIA = ("state.required", "state.allowed")


class GoldCall(msgspec.Struct, frozen=True, kw_only=True):
    """One call of a reference solution.

    Attributes:
        id: The reference's id for it (e.g. τ²'s ``action_id``).
        tool: The tool name.
        args: The arguments, as given.
    """

    id: str
    tool: str
    args: Any


class ImportedTask(msgspec.Struct, frozen=True, kw_only=True):
    """A task derived from a reference benchmark, with the gold calls it was derived from.

    Attributes:
        task: The harness_world task.
        gold: The reference solution; run as a call list it is the task's oracle.
        source: Where the task came from, in words (file and id).
        user_scenario: The reference's description of the user (τ²'s ``user_scenario``), for
            simulated users; empty when the reference has none.
        customer: The account the gold acts for (its key; empty when the gold names none).
    """

    task: Task
    gold: list[GoldCall]
    source: str
    user_scenario: dict[str, Any] = {}
    customer: str = ""


class GoldCallError(msgspec.Struct, frozen=True, kw_only=True):
    """A gold call that returns an error (the reference skips it; so does the oracle's state).

    Attributes:
        id: The gold call's id.
        seq: Its position in the oracle record.
        tool: The tool.
        kind: The typed error kind.
        message: The error message.
        write: Whether the tool is a write (its effect is then missing from the gold end state).
    """

    id: str
    seq: int
    tool: str
    kind: str
    message: str
    write: bool = False


MutantStatus = Literal["killed", "survived", "equivalent", "ungraded"]


class MutantCheck(msgspec.Struct, frozen=True, kw_only=True):
    """One automatic mutant of a gold trajectory, graded by us and by the reference.

    Attributes:
        id: ``<operator>@<seq>`` as `harness_world.coverage.mutation.trace_mutants` names it.
        operator: The mutation operator.
        gold_id: The id of the gold call the mutation is anchored on.
        description: What changed.
        evidence: Replay evidence of the mutant's record.
        passed: Our grade (None when not graded).
        failed: Our failed automated criteria.
        reference_match: The reference verdict: its whole-database hash equals the gold's.
        status: ``killed`` (our grade failed), ``equivalent`` (passed, marked equivalent, same
            database as the gold), ``survived`` (passed otherwise) or ``ungraded``.
        reason: The recorded equivalence reason, if marked.
        note: What actually happened (errors the mutation provoked, or that nothing changed).
    """

    id: str
    operator: str
    gold_id: str
    description: str
    evidence: str
    passed: bool | None
    failed: list[str]
    reference_match: bool
    status: MutantStatus
    reason: str = ""
    note: str = ""


class DoNothing(msgspec.Struct, frozen=True, kw_only=True):
    """What an attempt that calls no tool and says nothing gets.

    Attributes:
        state_passed: Whether it passes every state criterion.
        standing: The automated criteria it fails (what stands between it and a pass).
        prose: The prose criteria a person would still have to review.
        passed: Whether it passes every automated criterion.
        reference_match: The reference verdict on it (the start database equals the gold's).
    """

    state_passed: bool
    standing: list[str]
    prose: list[str]
    passed: bool
    reference_match: bool


class GoldReport(msgspec.Struct, frozen=True, kw_only=True):
    """The check of one imported task.

    Attributes:
        task_id: Our task id.
        source: Where it came from.
        rows_changed: How many rows the gold changes (0: a read-only task).
        criteria: Our automated criteria for it.
        gold_errors: Gold calls that return an error, in order.
        oracle_evidence: Replay evidence of the gold trajectory's record.
        oracle_passed: Our grade of the gold trajectory.
        oracle_failed: Failed criteria with their details.
        reference_match: The reference's verdict on the same trajectory (database hash equal).
        agrees: Whether our grade equals the reference verdict.
        explanation: The recorded explanation of a disagreement, if any.
        do_nothing: The empty attempt's grade.
        mutants: Every automatic mutant.
        killed: Mutants our grade fails.
        survived: Mutants that pass and are not (validly) marked equivalent.
        equivalent: Mutants that pass, are marked equivalent and leave the gold's database.
        problems: Everything that makes this task's check fail, in words.
        gold_db_hash: Our whole-database hash (`DatabaseHasher`) of the gold end state.
        tau2_db_hash: τ²'s own database hash of the gold end state (its serialisation, nulls
            included; `harness_world.tau2.faithful.Tau2Hasher`), empty when not computed.
    """

    task_id: str
    source: str
    rows_changed: int
    criteria: list[str]
    gold_errors: list[GoldCallError]
    oracle_evidence: str
    oracle_passed: bool
    oracle_failed: list[str]
    reference_match: bool
    agrees: bool
    explanation: str
    do_nothing: DoNothing
    mutants: list[MutantCheck]
    killed: int
    survived: int
    equivalent: int
    problems: list[str]
    gold_db_hash: str = ""
    tau2_db_hash: str = ""

    @property
    def ok(self) -> bool:
        """True when nothing is wrong."""
        return not self.problems


class ExternalRun(msgspec.Struct, frozen=True, kw_only=True):
    """A run recorded by another harness, reduced to what replay needs.

    Attributes:
        task_id: The reference's task id.
        trial: The trial number.
        calls: The agent's tool calls in order, as (tool, arguments).
        final_message: The agent's last text message.
        outcome: How the run ended, mapped to our outcome statuses.
        reward: The reward the other harness recorded (None when absent).
        conversation: The user's messages, each as (tool calls made before it, the agent's
            text it answers, the user's text); replayed as recorded user turns.
    """

    task_id: str
    trial: int
    calls: list[tuple[str, Any]]
    final_message: str
    outcome: Outcome
    reward: float | None
    conversation: list[tuple[int, str, str]] = []


class RegradeResult(msgspec.Struct, frozen=True, kw_only=True):
    """One external run, replayed and graded here, beside the reward recorded there.

    Attributes:
        task_id: Our task id (empty when the run's task is unknown).
        source_task: The reference's task id.
        trial: The trial number.
        calls: Tool calls replayed.
        errors: Calls that returned an error.
        outcome: How the run ended.
        evidence: Replay evidence of the record we built.
        passed: Our automated grade (None when not graded): what τ²'s reward is compared
            with. With ``prose`` beside a pass it is ``passed_automated``, pending review.
        failed: Our failed automated criteria, with details.
        prose: Prose criteria left for a person.
        reference_match: The reference's database verdict, recomputed here.
        recorded_reward: The reward the other harness recorded.
        problem: Why the run could not be graded, if so.
        coerced: Calls whose ill-typed arguments were coerced the way τ² treats them
            (``tau2`` argument mode only), one line each: call number, tool, class.
        db_hash: Our whole-database hash of the run's end state.
        tau2_db_hash: τ²'s own database hash of the run's end state (empty when not computed).
        tau2_gold_db_hash: τ²'s own database hash of the gold end state.
        user_turns: The run's user messages, recorded as user turns of the regraded record.
        policy: The policy sheet's verdicts, beside the grade (empty when not graded);
            τ²'s reward does not look at them.
    """

    task_id: str
    source_task: str
    trial: int
    calls: int
    errors: int
    outcome: str
    evidence: str
    passed: bool | None
    failed: list[str]
    prose: list[str]
    reference_match: bool | None
    recorded_reward: float | None
    problem: str = ""
    coerced: list[str] = []
    db_hash: str = ""
    tau2_db_hash: str = ""
    tau2_gold_db_hash: str = ""
    user_turns: int = 0
    policy: list[CriterionVerdict] = []


# -- effects and targets derived from a gold run ---------------------------------------------


def run_gold(world: World, task: Task, gold: Sequence[GoldCall], final_message: str = "") -> Record:
    """The gold calls executed as an ordinary completed attempt."""
    return record_calls(world, task, [(c.tool, c.args) for c in gold], final_message=final_message)


def exact_effects(
    world: World, diff: Iterable[WriteImage]
) -> tuple[list[Target], list[Requirement]]:
    """Targets and requirements that hold exactly the end state of ``diff`` and nothing else.

    A changed row gets a target set of its one key (``where = [{field = <key>, in = [key]}]``,
    named ``<entity>:<key>``) and a ``row`` requirement (or ``delete`` when the row is gone); a
    created row gets a ``create`` requirement matching every field but the minted key. With no
    allowances, A = R: any other change is unrequested work.
    """
    targets: list[Target] = []
    require: list[Requirement] = []
    created: dict[bytes, tuple[str, dict[str, Any], int]] = {}
    for change in diff:
        key_field = world.contract.entity(change.entity).key
        if change.before is None:
            if change.after is None:
                continue
            match = {k: v for k, v in change.after.items() if k != key_field}
            fingerprint = to_json([change.entity, match])
            entity, _, count = created.get(fingerprint, (change.entity, match, 0))
            created[fingerprint] = (entity, match, count + 1)
            continue
        name = f"{change.entity}:{change.key}"
        targets.append(
            Target(
                name=name,
                entity=change.entity,
                where=[Condition(field=key_field, in_=[change.key])],
            )
        )
        if change.after is None:
            require.append(Requirement(kind="delete", target=name))
        else:
            require.append(Requirement(kind="row", target=name, row=change.after))
    for entity, match, count in created.values():
        require.append(Requirement(kind="create", entity=entity, match=match, count=count))
    return targets, require


def rows_returned(world: World, record: Record) -> list[tuple[str, Key]]:
    """Rows that successful calls of a record returned whole, in first-returned order."""
    seen: dict[tuple[str, Key], None] = {}
    entities = [world.contract.entity(name) for name in world.entities()]
    for call in record.calls:
        for entity in entities:
            for key in sorted(returned_rows(call, entity), key=str):
                seen.setdefault((entity.name, key), None)
    return list(seen)


def read_targets(world: World, record: Record, prefix: str = "read") -> list[Target]:
    """One target set per entity (``<prefix>.<entity>``) of the rows a record's calls returned."""
    by_entity: dict[str, list[Key]] = {}
    for entity, key in rows_returned(world, record):
        by_entity.setdefault(entity, []).append(key)
    return [
        Target(
            name=f"{prefix}.{entity}",
            entity=entity,
            where=[Condition(field=world.contract.entity(entity).key, in_=keys)],
        )
        for entity, keys in by_entity.items()
    ]


# -- the reference verdict -------------------------------------------------------------------


@attrs.define(slots=True, eq=False)
class DatabaseHasher:
    """Whole-database hashes the way a reference benchmark computes them.

    The database is every entity (sorted by name) mapping each key as text (sorted) to its row:
    the start rows, overlaid with an attempt's final rows (a row that ends absent is removed).
    Its hash is the SHA-256 of its canonical JSON (sorted keys, no whitespace). `database`
    builds that object as plain dicts; `hash` gives the same digest from row encodings made
    once per world, so hashing many attempts does not re-encode the untouched rows.
    """

    world: World
    _fragments: dict[str, dict[str, bytes]] = attrs.field(init=False)
    _order: dict[str, list[str]] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self._fragments = {}
        self._order = {}
        for entity in sorted(self.world.entities()):
            spec = self.world.contract.entity(entity)
            rows = {str(row[spec.key]): to_json(row) for row in self.world.rows(entity)}
            self._fragments[entity] = rows
            self._order[entity] = sorted(rows)

    def database(self, final: Iterable[FinalRow] = ()) -> dict[str, dict[str, Any]]:
        """The whole database as plain dicts (an independent copy)."""
        db: dict[str, dict[str, Any]] = {
            entity: {
                str(row[self.world.contract.entity(entity).key]): row
                for row in self.world.rows(entity)
            }
            for entity in sorted(self.world.entities())
        }
        for item in final:
            table = db.setdefault(item.entity, {})
            if item.row is None:
                table.pop(str(item.key), None)
            else:
                table[str(item.key)] = item.row
        return {e: dict(sorted(rows.items())) for e, rows in sorted(db.items())}

    def hash(self, final: Iterable[FinalRow] = ()) -> str:
        """SHA-256 (hex) of the canonical JSON of `database` (``final``)."""
        overlay = overlaid_rows(final, lambda _, row: to_json(row))
        return overlaid_hash(self._fragments, self._order, overlay, to_json, b",", b":")


# -- checking one imported task --------------------------------------------------------------


def equivalence_reason(marks: Mapping[tuple[str, str], str], task_id: str, mutant_id: str) -> str:
    """The recorded reason a mutant is equivalent (empty when unmarked).

    Looked up by mutant id, else by operator for the task, else by operator for every task
    (task ``*``).
    """
    operator = mutant_id.split("@", 1)[0]
    for key in ((task_id, mutant_id), (task_id, f"{operator}@*"), ("*", f"{operator}@*")):
        reason = marks.get(key)
        if reason:
            return reason
    return ""


def _is_write(world: World, tool: str) -> bool:
    spec = world.contract.tool(tool)
    return spec is not None and spec.kind == "write"


def _state_passed(grade: Grade) -> bool:
    return all(v.status == "passed" for v in grade.verdicts if v.id in STATE_CRITERIA)


def _errors(record: Record) -> list[tuple[str, str]]:
    return [(c.tool, c.error.message) for c in record.calls if c.error is not None and not c.ok]


def _what_happened(mutant: Record, oracle: Record, same_database: bool) -> str:
    extra = list(_errors(mutant))
    for error in _errors(oracle):
        if error in extra:
            extra.remove(error)
    if extra:
        return "; ".join(f"{tool} rejected: {message}" for tool, message in extra)
    if same_database:
        return "every call ran; the database ends as the gold's"
    return "every call ran; the database differs from the gold's"


@attrs.frozen(slots=True)
class _Checked:
    """One trajectory graded our way and the reference's way."""

    record: Record
    evidence: str
    grade: Grade | None
    reason: str
    reference_match: bool


def _check_trajectory(
    world: World, task: Task, record: Record, hasher: DatabaseHasher, gold_hash: str
) -> _Checked:
    result = verify(record, world=world, task=task)
    return _Checked(
        record=record,
        evidence=result.evidence,
        grade=result.grade,
        reason=result.reason,
        reference_match=hasher.hash(record.final) == gold_hash,
    )


def _gold_errors(world: World, imported: ImportedTask, oracle: Record) -> list[GoldCallError]:
    return [
        GoldCallError(
            id=imported.gold[c.seq - 1].id,
            seq=c.seq,
            tool=c.tool,
            kind=c.error.kind,
            message=c.error.message,
            write=_is_write(world, c.tool),
        )
        for c in oracle.calls
        if c.error is not None
    ]


def _oracle_problems(checked: _Checked, explanation: str) -> list[str]:
    grade = checked.grade
    if grade is None:
        return [f"oracle evidence is {checked.evidence}: {checked.reason}"]
    problems = []
    if not grade.passed:
        problems.append(f"oracle fails {', '.join(grade.failed)}")
    if _state_passed(grade) != checked.reference_match:
        problems.append("oracle: state criteria disagree with the whole-database hash")
    if grade.passed != checked.reference_match and not explanation:
        problems.append(
            f"our grade ({'passed' if grade.passed else 'failed'}) disagrees with the "
            f"reference ({'match' if checked.reference_match else 'no match'}) and no "
            "explanation is recorded"
        )
    return problems


def _do_nothing(
    world: World, task: Task, hasher: DatabaseHasher, gold_hash: str
) -> tuple[DoNothing, list[str]]:
    checked = _check_trajectory(world, task, run_gold(world, task, []), hasher, gold_hash)
    grade = checked.grade
    assert grade is not None  # an empty record always replays
    do_nothing = DoNothing(
        state_passed=_state_passed(grade),
        standing=[
            v.id for v in grade.verdicts if v.status == "failed" and v.id not in STATE_CRITERIA
        ],
        prose=[v.detail for v in grade.verdicts if v.kind == "prose"],
        passed=grade.passed,
        reference_match=checked.reference_match,
    )
    problems = []
    if do_nothing.state_passed != checked.reference_match:
        problems.append("do-nothing: state criteria disagree with the whole-database hash")
    return do_nothing, problems


def _mutant_status(
    checked: _Checked, trace: TraceMutant, gold_id: str, reason: str
) -> tuple[MutantStatus, list[str]]:
    grade = checked.grade
    problems = []
    status: MutantStatus
    if grade is None:
        status = "ungraded"
        problems.append(f"mutant {trace.id}: evidence {checked.evidence}")
    elif not grade.passed:
        status = "killed"
    elif reason and checked.reference_match:
        status = "equivalent"
    else:
        status = "survived"
        why = (
            "marked equivalent, but its database differs from the gold's"
            if reason
            else "not marked equivalent"
        )
        problems.append(f"mutant {trace.id} ({gold_id}) survives: {why}")
    if grade is not None and _state_passed(grade) != checked.reference_match:
        problems.append(f"mutant {trace.id}: state criteria disagree with the whole-database hash")
    return status, problems


def _check_mutants(
    world: World,
    imported: ImportedTask,
    oracle: Record,
    hasher: DatabaseHasher,
    gold_hash: str,
    marks: Mapping[tuple[str, str], str],
    operators: Sequence[str],
) -> tuple[list[MutantCheck], list[str]]:
    task = imported.task
    checks: list[MutantCheck] = []
    problems: list[str] = []
    for trace in trace_mutants(oracle, task, world, operators):
        mutated = record_calls(world, task, trace.calls, final_message=oracle.final_message)
        checked = _check_trajectory(world, task, mutated, hasher, gold_hash)
        seq = int(trace.id.split("@", 1)[1].split(".", 1)[0])
        gold_id = imported.gold[seq - 1].id if 0 < seq <= len(imported.gold) else ""
        reason = equivalence_reason(marks, task.id, trace.id)
        status, found = _mutant_status(checked, trace, gold_id, reason)
        problems += found
        grade = checked.grade
        checks.append(
            MutantCheck(
                id=trace.id,
                operator=trace.operator,
                gold_id=gold_id,
                description=trace.description,
                evidence=checked.evidence,
                passed=None if grade is None else grade.passed,
                failed=[] if grade is None else grade.failed,
                reference_match=checked.reference_match,
                status=status,
                reason=reason if status == "equivalent" else "",
                note=_what_happened(mutated, oracle, checked.reference_match),
            )
        )
    return checks, problems


def check_gold(
    world: World,
    imported: ImportedTask,
    hasher: DatabaseHasher,
    *,
    marks: Mapping[tuple[str, str], str] | None = None,
    explanation: str = "",
    operators: Sequence[str] = ALL_OPERATORS,
    tau2_hasher: Tau2Hasher | None = None,
) -> GoldReport:
    """Check one imported task: oracle, reference verdict, do-nothing attempt, mutants.

    The gold calls run as an oracle (record, replay, grade). The reference verdict replays the
    gold calls in another fresh attempt and compares whole-database hashes with the oracle's.
    Every automatic mutant of the oracle is graded by both; on every attempt our state
    criteria must agree with the reference's hash comparison (the two say the same thing in
    different ways), and a mutant that passes counts as equivalent only when it is marked so
    AND leaves exactly the gold's database.

    Args:
        world: The start world.
        imported: The task and its gold calls.
        hasher: Whole-database hashes for ``world``.
        marks: Equivalence reasons by (task id, mutant id or ``<operator>@*``); task ``*``
            marks an operator for every task.
        explanation: Why our grade of the oracle may disagree with the reference, if it does.
        operators: The mutation operators to apply.
        tau2_hasher: τ²'s own database hash, reported beside ours for the gold end state.
    """
    task = imported.task
    reference = run_gold(world, task, imported.gold)
    gold_hash = hasher.hash(reference.final)
    oracle = run_gold(world, task, imported.gold)
    checked = _check_trajectory(world, task, oracle, hasher, gold_hash)
    problems = _oracle_problems(checked, explanation)
    do_nothing, found = _do_nothing(world, task, hasher, gold_hash)
    problems += found
    mutants: list[MutantCheck] = []
    if checked.grade is not None:
        mutants, found = _check_mutants(
            world, imported, oracle, hasher, gold_hash, marks or {}, operators
        )
        problems += found
    grade = checked.grade
    oracle_passed = grade is not None and grade.passed
    agrees = oracle_passed == checked.reference_match
    return GoldReport(
        task_id=task.id,
        source=imported.source,
        rows_changed=len(net_changes(reference, world)),
        criteria=[] if grade is None else [v.id for v in grade.verdicts if v.kind != "prose"],
        gold_errors=_gold_errors(world, imported, oracle),
        oracle_evidence=checked.evidence,
        oracle_passed=oracle_passed,
        oracle_failed=[checked.reason]
        if grade is None
        else [f"{v.id}: {v.detail}" for v in grade.verdicts if v.status == "failed"],
        reference_match=checked.reference_match,
        agrees=agrees,
        explanation=explanation if not agrees else "",
        do_nothing=do_nothing,
        mutants=mutants,
        killed=sum(m.status == "killed" for m in mutants),
        survived=sum(m.status == "survived" for m in mutants),
        equivalent=sum(m.status == "equivalent" for m in mutants),
        problems=problems,
        gold_db_hash=gold_hash,
        tau2_db_hash="" if tau2_hasher is None else tau2_hasher.hash(reference.final),
    )


# -- regrading runs recorded elsewhere -------------------------------------------------------


def _coerced_calls(
    world: World, calls: Sequence[tuple[str, Any]], mode: ArgumentMode
) -> tuple[list[tuple[str, Any]], list[str]]:
    """The calls to run in argument ``mode`` and one line per coerced call."""
    if mode == "strict":
        return list(calls), []
    out: list[tuple[str, Any]] = []
    notes: list[str] = []
    for i, (tool, args) in enumerate(calls, start=1):
        used, coercions = coerce_call(world, tool, args)
        out.append((tool, used))
        notes += [
            f"call {i} {tool}: {c.argument} {c.cls} ({json.dumps(c.given)} -> {json.dumps(c.used)})"
            for c in coercions
        ]
    return out, notes


@attrs.frozen(slots=True)
class RecordedUser:
    """A user whose answers were recorded elsewhere: the n-th message gets the n-th answer.

    Attributes:
        answers: The user's messages, in order.
    """

    answers: tuple[str, ...]

    @property
    def name(self) -> str:
        """``recorded``."""
        return "recorded"

    def settings(self) -> dict[str, Any]:
        """The kind and the number of answers."""
        return {"kind": "recorded", "answers": len(self.answers)}

    def reply(self, history: Sequence[UserTurn], message: str) -> str:
        """The recorded answer to the next message (empty past the end)."""
        return self.answers[len(history)] if len(history) < len(self.answers) else ""


def _external_record(
    world: World, task: Task, run: ExternalRun, calls: Sequence[tuple[str, Any]]
) -> Record:
    """The run's calls, with its user messages as recorded user turns, as one attempt."""
    if not run.conversation:
        return record_calls(
            world,
            task,
            calls,
            final_message=run.final_message,
            outcome=run.outcome,
            sample=run.trial,
        )
    user = RecordedUser(tuple(text for _, _, text in run.conversation))
    attempt = Attempt(world, task, sample=run.trial, limits=AttemptLimits(), user=user)
    turns = list(run.conversation)
    for i, (tool, args) in enumerate([*calls, ("", None)]):
        while turns and turns[0][0] <= i and not attempt.user_stopped:
            attempt.message_user(turns.pop(0)[1])
        if tool:
            attempt.call(tool, args)
    attempt.end(run.outcome)
    return attempt.finish(run.final_message)


def regrade(
    world: World,
    imported: ImportedTask | None,
    run: ExternalRun,
    hasher: DatabaseHasher,
    *,
    arguments: ArgumentMode = "strict",
    tau2_hasher: Tau2Hasher | None = None,
) -> RegradeResult:
    """Replay an external run's tool calls in a fresh attempt; verify and grade the record.

    The reference verdict is recomputed too (the run's whole-database hash against the gold's),
    so it can be compared both with our grade and with the reward the other harness recorded.
    With ``arguments="tau2"`` ill-typed arguments are first coerced the way τ² treats them
    (`harness_world.tau2.arguments`); each such call is listed in ``coerced``. With a
    ``tau2_hasher``, τ²'s own database hashes of the run and of the gold are reported too.
    """
    if imported is None:
        return RegradeResult(
            task_id="",
            source_task=run.task_id,
            trial=run.trial,
            calls=len(run.calls),
            errors=0,
            outcome=run.outcome.status,
            evidence="lost",
            passed=None,
            failed=[],
            prose=[],
            reference_match=None,
            recorded_reward=run.reward,
            problem=f"unknown task {run.task_id!r}",
        )
    task = imported.task
    calls, coerced = _coerced_calls(world, run.calls, arguments)
    record = _external_record(world, task, run, calls)
    gold = run_gold(world, task, imported.gold)
    gold_hash = hasher.hash(gold.final)
    checked = _check_trajectory(world, task, record, hasher, gold_hash)
    grade = checked.grade
    return RegradeResult(
        task_id=task.id,
        source_task=run.task_id,
        trial=run.trial,
        calls=len(record.calls),
        errors=sum(not c.ok for c in record.calls),
        outcome=record.outcome.status,
        evidence=checked.evidence,
        passed=None if grade is None else grade.passed,
        failed=[]
        if grade is None
        else [f"{v.id}: {v.detail}" for v in grade.verdicts if v.status == "failed"],
        prose=[] if grade is None else [v.detail for v in grade.verdicts if v.kind == "prose"],
        reference_match=checked.reference_match,
        recorded_reward=run.reward,
        problem=checked.reason,
        coerced=coerced,
        db_hash=hasher.hash(record.final),
        tau2_db_hash="" if tau2_hasher is None else tau2_hasher.hash(record.final),
        tau2_gold_db_hash="" if tau2_hasher is None else tau2_hasher.hash(gold.final),
        user_turns=len(record.user_turns),
        policy=[] if grade is None else grade.policy_verdicts,
    )
